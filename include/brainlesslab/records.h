/* Records: portable, checksummed bundles of one evaluation
 * (spec/platform.md §7).
 *
 * A record is reserved first (exclusive directory creation, a .RESERVED
 * token), then written file by file in exclusive-create mode, then
 * inventoried in a SHA-256 manifest (record.toml), re-inspected, and only
 * then marked DONE (every trial completed) or FAILED. Any error while
 * writing leaves a FAILED marker beside whatever was written, and the
 * .RESERVED token stays, so such a directory can never look complete.
 * Inspection is read-only and never executes anything. */
#ifndef BRAINLESSLAB_RECORDS_H
#define BRAINLESSLAB_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/buf.h"
#include "brainlesslab/evaluation.h"
#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/run.h"
#include "brainlesslab/status.h"

/* ---- file formats (§7.3) -------------------------------------------------- */

/* Record JSON: keys sorted, compact separators, non-ASCII kept raw, one
 * trailing newline. Any non-finite number → BL_EVALUE "records require
 * finite numbers or explicit missing values". */
bl_status bl_record_json_text(const bl_json *v, bl_buf *out, bl_error *err);

/* CSV in Python's "excel" dialect: CRLF line ends, minimal quoting (fields
 * holding ',', '"', CR or LF are quoted, quotes doubled). rows is an array
 * of objects; the header is the sorted union of their keys; null → empty
 * field, reals in shortest round-trip form, arrays/objects as compact JSON
 * (non-ASCII raw), strings as they are, bools as True/False. */
bl_status bl_csv_text(const bl_json *rows, bl_buf *out, bl_error *err);

/* The same CSV written row by row, for files whose rows all have the same
 * keys (trials.csv, seeds.csv), so that a writer never holds every row as
 * JSON at once: the header is the first row's keys, sorted; a later row
 * with other keys is BL_EVALUE "CSV row <i> does not have the first row's
 * columns". For such rows the bytes are bl_csv_text's. Rows are appended
 * to `out`; finish writes the empty header of a file without rows. */
typedef struct bl_csv_stream {
    bl_buf *out;
    struct bl_csv_key *keys;
    const char *text;   /* the header keys' bytes */
    size_t nkeys, rows;
    size_t *where;      /* each key's position in the previous row */
    bl_buf cell;
} bl_csv_stream;

void bl_csv_stream_init(bl_csv_stream *s, bl_buf *out);
bl_status bl_csv_stream_row(bl_csv_stream *s, const bl_json *row, bl_error *err);
bl_status bl_csv_stream_finish(bl_csv_stream *s, bl_error *err);
void bl_csv_stream_clear(bl_csv_stream *s);

/* Reading such a file back (the decoder's data/probe_*.csv): a header row
 * of distinct column names, then rows of exactly as many fields. Quoted
 * fields as the writer makes them ('"' doubled inside); LF or CR LF line
 * ends; blank lines skipped. A NUL byte, a stray quote, an unterminated
 * quoted field, a repeated column or a row of the wrong width is BL_EVALUE
 * "<what>:<line>: <problem>". Cells are heap strings, header first, row by
 * row; the table owns them (bl_csv_table_clear). */
typedef struct bl_csv_table {
    size_t ncols, nrows; /* nrows does not count the header */
    char **cells;
} bl_csv_table;

bl_status bl_csv_parse(const char *text, size_t len, const char *what, bl_csv_table *out,
                       bl_error *err);
/* The index of the column called `name`, or -1. */
long bl_csv_column(const bl_csv_table *t, const char *name);
/* The cell of data row `row` (0 is the first row after the header). */
const char *bl_csv_cell(const bl_csv_table *t, size_t row, size_t col);
void bl_csv_table_clear(bl_csv_table *t);

/* ---- reservation (§7.1) ----------------------------------------------------- */

typedef struct bl_reservation {
    char *path;        /* the record directory (heap) */
    char token[65];    /* 64 lowercase hex digits, the content of .RESERVED */
} bl_reservation;

/* "<root>/<plan id>-<YYYYmmddTHHMMSSZ>-<8 random lowercase hex>" (UTC now). */
bl_status bl_record_name(const char *root, const char *plan_id, char **out, bl_error *err);
/* Creates the parents of `dest`, then `dest` exclusively (existing →
 * BL_EEXIST), then writes .RESERVED with a fresh random token. */
bl_status bl_record_reserve(const char *dest, bl_reservation *out, bl_error *err);
/* fail_record: checks the token is still ours ("record reservation is no
 * longer owned"), then, unless FAILED exists, writes FAILED as record JSON
 * {"error_type": <kind of cause>, "message": <cause message with the record
 * path replaced by "<record>">, "status": "failed"}. .RESERVED stays. */
bl_status bl_record_fail(const bl_reservation *r, const bl_error *cause, bl_error *err);
void bl_reservation_clear(bl_reservation *r);

/* ---- new directories and files -------------------------------------------------- */

/* "<dir>/<name>" (one separator) as a heap string, NULL without memory. */
char *bl_record_path_join(const char *dir, const char *name);

/* mkdir -p of the parents of `dest`, then `dest` itself exclusively: an
 * existing dest is BL_EEXIST "<dest>: File exists", a component in the way
 * that is not a directory BL_EEXIST "<path>: exists and is not a
 * directory". On failure the directories this call created are removed
 * again. On success *created_from (when not NULL) is the length of the
 * shortest prefix of dest that the call created, for bl_dir_remove_created. */
bl_status bl_dir_create_exclusive(const char *dest, size_t *created_from, bl_error *err);
/* Undoes a successful bl_dir_create_exclusive whose directories are empty
 * again: removes dest, then its parents down to the first it created. */
void bl_dir_remove_created(const char *dest, size_t created_from);
/* Creates `path` exclusively (never through a symbolic link), writes
 * `data`, syncs the file and its directory. On failure the partial file is
 * removed: nothing half-written stays. Existing → BL_EEXIST. */
bl_status bl_file_write_new(const char *path, const void *data, size_t len, bl_error *err);

/* ---- writing (§7.2–§7.5) ---------------------------------------------------- */

typedef struct bl_record_input {
    const bl_plan *plan;                /* request.toml */
    const bl_resolved_plan *resolved;   /* resolved.toml, contract hash */
    const bl_execution *execution;      /* metadata.execution */
    const bl_evaluation *evaluation;    /* trials, seeds, summaries, contrasts, calibrations */
    /* Optional recording channels (NULL / 0 when absent). */
    /* probe_nevents ProbeEvents, each made when the writer wants it:
     * probe_event(probe_ctx, i, ...) gives event i without its features
     * (the writer's to destroy) and its n features, which must stay valid
     * until the record is written (bl_recordings_event's form). */
    size_t probe_nevents;
    bl_status (*probe_event)(const void *ctx, size_t i, bl_json **row,
                             const double **features, size_t *n, bl_error *err);
    const void *probe_ctx;
    const bl_json *probe_trials;        /* array of ProbeTrial objects */
    const bl_json *replays;             /* object: trial key → replay document */
    /* How the run was spread over processes, or NULL for one process (no
     * key then): metadata "distribution", e.g. {"kind": "mpi", "ranks": 3,
     * "cpu_threads": 2} or {"kind": "shards", "shards": 3}. */
    const bl_json *distribution;
    /* Optional: asked before each file of the record is created, with the
     * file's path in the record; the completion marker (DONE, or FAILED for
     * failed trials) is asked last, after the manifest was verified. A
     * non-OK status (with its message in err) stops the write there and
     * fails the reservation with that error, so a writer that was asked to
     * stop (Ctrl-C, SIGTERM) never completes the record. Not asked for the
     * FAILED marker of an error. */
    bl_status (*before_file)(void *ctx, const char *rel, bl_error *err);
    void *hook_ctx;
} bl_record_input;

/* The result metadata of §4.13 (runtime description, rng scheme, source
 * hashes, execution, batch capacities, reset, evidence, diagnostic,
 * recording estimate) for summary/summary.json and environment.json. */
bl_status bl_record_metadata(const bl_record_input *in, bl_json **out, bl_error *err);

/* write_record into a reservation: every file of §7.2 in exclusive-create
 * mode, the manifest, a re-inspection ("new record inventory failed
 * checksum verification"), then DONE (every trial completed) or FAILED
 * {"reason": "one or more trials failed or remained incomplete", ...};
 * finally .RESERVED is removed. On any error (a before_file refusal
 * included) the reservation is failed (bl_record_fail) and the error
 * returned; partial files stay. A file that cannot be created or written
 * for lack of space or inodes (ENOSPC, EDQUOT), a directory included, is
 * BL_EOS "<path>: cannot write: <system message>". *status gets
 * "complete" or "failed". */
bl_status bl_record_write(const bl_record_input *in, const bl_reservation *r,
                          const char **status, bl_error *err);

/* The recording channels of in->evaluation in record form (§4.11, §4.12,
 * §7.8): fills in's probe members from *recs and, for replay, one replay
 * document per trial that recorded frames into *replays (an object the
 * caller frees), which in->replays then points to. Nothing for summary.
 * The caller clears *recs (bl_recordings_clear) and frees *replays after
 * the record is written. */
bl_status bl_record_channels(bl_record_input *in, bl_recordings *recs, bl_json **replays,
                             bl_error *err);

/* ---- shard records (docs/records.md "Shard records") ---------------------- *
 *
 * One part of a run (`run --shard K/N`), written as a record is (the same
 * reservation, exclusive files, manifest, re-inspection, DONE or FAILED)
 * but holding what `merge` needs rather than results: request.toml,
 * resolved.toml, shard/part.bin (bl_run_part_encode) and, when the run
 * applied calibrations, shard/calibrations.json. Its manifest's kind is
 * "shard" and its table "shard" describes it (bl_shard_description). */

#define BL_SHARD_PART "shard/part.bin"
#define BL_SHARD_CALIBRATIONS "shard/calibrations.json"

typedef struct bl_shard_input {
    const bl_plan *plan;
    const bl_resolved_plan *resolved;
    const bl_execution *execution;
    const bl_run_result *part;          /* bl_evaluate_part's result */
    /* The calibrations supplied to the run (--calibration), which merge
     * supplies again. */
    const bl_calibration *const *calibrations;
    size_t ncalibrations;
    /* As bl_record_input's. */
    bl_status (*before_file)(void *ctx, const char *rel, bl_error *err);
    void *hook_ctx;
} bl_shard_input;

/* The manifest's "shard" table: {"part", "parts", "plan_id",
 * "engine_version", "runtime_fingerprint", "source_sha256" (the build's
 * identity), "recording", "jobs" (count), "job_ranges" ([first, end) of
 * consecutive jobs), "calibrations" (ids supplied), "execution"}. */
bl_status bl_shard_description(const bl_shard_input *in, bl_json **out, bl_error *err);
/* Writes a shard record into a reservation; on any error the reservation
 * is failed (bl_record_fail) and the error returned. A whole shard is
 * DONE even when trials failed: merge carries their statuses over. */
bl_status bl_shard_write(const bl_shard_input *in, const bl_reservation *r, bl_error *err);

/* A shard record read back for merging: inspected complete with valid
 * checksums, its description, its part's bytes (checked against the
 * manifest's digest once more) and its calibrations. */
typedef struct bl_shard {
    bl_json *manifest;
    const bl_json *description;   /* manifest "shard" */
    int64_t part, parts;
    char *bytes;                  /* shard/part.bin */
    size_t len;
    bl_calibration **calibrations;
    size_t ncalibrations;
} bl_shard;

/* BL_EVALUE "<path>: <why>" for a path that is not a record, a record that
 * is not a shard ("not a shard record"), an incomplete one ("shard is not
 * complete (status: <status>)"), a tampered one ("shard artifacts do not
 * match their checksums"), or a description that does not hold together. */
bl_status bl_shard_read(const char *path, bl_shard *out, bl_error *err);
void bl_shard_clear(bl_shard *s);

/* ---- development replays (§7.8) -------------------------------------------- */

/* The replay document of one trial: {"format": "brainlesslab-replay",
 * "version": 1, "trial_key", "task", "node", "provenance": {...}, "frames"}.
 * `frames` is the trial's frame array (copied); the trial must be one of
 * the evaluation's ("unknown replay trial_key") and frames non-empty ("a
 * replay must contain recorded frames"). */
bl_status bl_replay_document(const bl_record_input *in, const char *trial_key,
                             const bl_json *frames, bl_json **out, bl_error *err);

/* export_replay(result, path, trial_key), the library's export of an
 * evaluation in memory (`replays` uses it; `export-replay` exports from a
 * record, below): `replay_frames` is the object
 * trial key → frames (bl_recordings.replay_frames). With trial_key NULL
 * there must be exactly one replay ("select one trial_key when exporting
 * multiple replays"); an unknown key is BL_EKEY "unknown replay trial_key";
 * the document goes to `path` as record JSON, created exclusively (an
 * existing path is BL_EEXIST and stays untouched). */
bl_status bl_replay_export(const bl_record_input *in, const bl_json *replay_frames,
                           const char *path, const char *trial_key, bl_error *err);

/* The replay document of one trial of a written record, for `export-replay`
 * (docs/records.md): the record must inspect complete ("replay record is not
 * complete (status: <status>)"); its replay artifacts (replays/trial_*.json)
 * are read, each checked against its manifest checksum again (it may have
 * changed since the inspection) and as a replay document ("unsupported
 * replay format"), and selected by trial key as bl_replay_export selects:
 * a record without replays is BL_EVALUE "record holds no replays (record it
 * with --recording replay)"; trial_key NULL with several replays is
 * "select one trial_key when exporting multiple replays"; an unknown key
 * BL_EKEY "unknown replay trial_key"; a key on several documents, or a
 * document whose trial is another, "replay identity does not match one
 * recorded trial"; no frames "a replay must contain recorded frames".
 * *out gets the artifact's bytes, which are the record JSON that
 * bl_replay_export writes for that trial. */
bl_status bl_replay_record_text(const char *record, const char *trial_key, bl_buf *out,
                                bl_error *err);
/* bl_replay_record_text, written to `path` with bl_file_write_new (an
 * existing path is BL_EEXIST and stays untouched; nothing half-written
 * stays). */
bl_status bl_replay_export_record(const char *record, const char *path, const char *trial_key,
                                  bl_error *err);

/* ---- inspection (§7.6) and calibrations (§7.7) ------------------------------- */

/* The inspection map {"checksums_valid", "complete", "invalid_artifacts",
 * "manifest", "status", "unlisted_artifacts"}; errors (not a real directory,
 * symlinks inside, unreadable or unsupported manifest, unsafe artifact
 * paths, ...) are BL_EVALUE with the spec's messages. Reads only. */
bl_status bl_record_inspect(const char *path, bl_json **out, bl_error *err);

/* read_calibration(path): a "brainlesslab-calibrations" file, or a complete
 * record directory's calibration.json ("calibration record is incomplete or
 * has invalid checksums"); symlinks refused. */
bl_status bl_calibrations_read(const char *path, bl_calibration ***out, size_t *n,
                               bl_error *err);


/* ---- artifacts read back ----------------------------------------------------- */

/* The bytes of artifact `rel` of `record` (at most `max`, never through a
 * symbolic link; *text is heap, NUL-terminated), checked once more against
 * the manifest's `sha256` (lowercase hex), since the record may have
 * changed since it was inspected: a missing sha256 or another digest is
 * BL_EVALUE "<rel>: <kind> artifact does not match its checksum". `kind`
 * also names the file in read errors ("<kind> file"). On failure *text is
 * NULL. */
bl_status bl_record_artifact_read(const char *record, const char *rel, const char *sha256,
                                  size_t max, const char *kind, char **text, size_t *len,
                                  bl_error *err);

/* ---- probe events read back (§4.11, §7.3) -------------------------------- */

/* The largest probe file (CSV or .npz) read whole: the site example's
 * features are about 1 MB; 1 GiB leaves room for large studies while
 * keeping a damaged record from exhausting memory. */
#define BL_RECORD_PROBE_FILE_MAX ((size_t)1 << 30)

/* A record's probe events in the form bl_record_input gives them to the
 * writer: `events` the rows of data/probe_events.csv as typed objects
 * (block_id, label, round, tick, trial_id integers; feature_ids a list;
 * the rest text, feature_array included), features[i] / feature_len[i]
 * event i's float64 vector from data/probe_features.npz (pointing into
 * npz), `trials` the rows of data/probe_trials.csv (native_score a real,
 * or null for an empty cell). */
typedef struct bl_record_probes {
    bl_json *events;
    const double **features;
    size_t *feature_len;
    bl_json *trials;
    struct bl_npz *npz;
} bl_record_probes;

/* Inspects the record (bl_record_inspect) and reads its three probe files.
 * A record that is not complete is BL_EVALUE "decoding requires a complete
 * record; this record is <status>", one without probe events BL_EVALUE
 * "the record holds no probe events (run its plan with --recording
 * probe_events)"; a damaged file is BL_EVALUE naming the file. */
bl_status bl_record_probes_read(const char *record, bl_record_probes *out, bl_error *err);
void bl_record_probes_clear(bl_record_probes *p);

#endif
