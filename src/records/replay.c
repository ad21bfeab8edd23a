/* Development replay documents (spec/platform.md §7.8): one trial's frames
 * with the provenance a viewer needs to say what it shows. Replays are
 * bounded diagnostics for the website, never evidence. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/file.h"
#include "brainlesslab/records.h"
#include "brainlesslab/version.h"
#include "records_internal.h"

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory for a replay");
}

/* bl_json_put (json.h), in this file's words when `v` is NULL. */
static void put(bl_status *st, bl_json *o, const char *key, bl_json *v, bl_error *err)
{
    if (*st == BL_OK && !v)
        *st = nomem(err);
    bl_json_put(st, o, key, v, err);
}

/* The evaluation's trial with this key, or NULL. */
static const bl_trial_result *trial_of(const bl_evaluation *e, const char *key)
{
    for (size_t j = 0; j < e->run->ntrials; j++) {
        const bl_trial_result *t = &e->run->trials[j];
        char k[512];
        snprintf(k, sizeof k, "%s/%lld/%lld", t->target_id, (long long)t->block,
                 (long long)t->trial);
        if (strcmp(k, key) == 0)
            return t;
    }
    return NULL;
}

bl_status bl_replay_document(const bl_record_input *in, const char *trial_key,
                             const bl_json *frames, bl_json **out, bl_error *err)
{
    *out = NULL;
    const bl_trial_result *t = trial_of(in->evaluation, trial_key);
    if (!t)
        return bl_fail(err, BL_EKEY, "unknown replay trial_key");
    if (!frames || bl_json_size(frames) == 0)
        return bl_fail(err, BL_EVALUE, "a replay must contain recorded frames");
    const bl_target_spec *spec = bl_resolved_target_spec(in->resolved, t->target);
    const bl_json *rt = spec->plain;
    const bl_json *comp = bl_json_get(spec->target, "composition");
    const bl_json *request = bl_json_get(bl_resolved_plain(in->resolved), "request");
    const bl_json *eval = bl_json_get(request, "evaluation");
    const bl_json *numerics = bl_json_get(request, "numerics");

    bl_json *doc = bl_json_object(), *prov = bl_json_object(), *resolved = bl_json_object();
    bl_json *trial = NULL, *meta = NULL;
    bl_status st = !doc || !prov || !resolved ? nomem(err) : BL_OK;
    put(&st, resolved, "composition", bl_json_copy(comp), err);
    put(&st, resolved, "model_parameters", bl_json_copy(bl_json_get(rt, "model_config")), err);
    put(&st, resolved, "task_options", bl_json_copy(bl_json_get(rt, "task_options")), err);
    put(&st, resolved, "horizon", bl_json_copy(bl_json_get(rt, "horizon")), err);
    put(&st, resolved, "diagnostic", bl_json_copy(bl_json_get(request, "diagnostic")), err);
    if (st == BL_OK)
        st = bl_trial_result_json(t, &trial, err);
    if (st == BL_OK)
        st = bl_record_metadata(in, &meta, err);
    /* The reference names its runtime's version; ours is this engine's. */
    put(&st, prov, "engine_version", bl_json_string(bl_version()), err);
    put(&st, prov, "backend", bl_json_string(bl_backend_name(in->execution->backend)), err);
    put(&st, prov, "dtype", bl_json_copy(bl_json_get(numerics, "dtype")), err);
    put(&st, prov, "seed_partition", bl_json_copy(bl_json_get(eval, "seed_partition")), err);
    put(&st, prov, "resolved", resolved, err);
    put(&st, prov, "evidence", bl_json_copy(bl_json_get(request, "evidence")), err);
    put(&st, prov, "contract_hash", bl_json_string(bl_resolved_contract_hash(in->resolved)), err);
    put(&st, prov, "composition", bl_json_copy(comp), err);
    put(&st, prov, "evaluation", bl_json_copy(eval), err);
    put(&st, prov, "numerics", bl_json_copy(numerics), err);
    put(&st, prov, "trial", trial, err);
    put(&st, prov, "environment", meta, err);
    put(&st, doc, "format", bl_json_string("brainlesslab-replay"), err);
    put(&st, doc, "version", bl_json_int(1), err);
    put(&st, doc, "trial_key", bl_json_string(trial_key), err);
    put(&st, doc, "task", bl_json_string(bl_task_name(t->task)), err);
    put(&st, doc, "node", bl_json_copy(bl_json_get(bl_json_get(comp, "node"), "kind")), err);
    put(&st, doc, "provenance", prov, err);
    put(&st, doc, "frames", bl_json_copy(frames), err);
    return bl_json_hand_over(st, doc, out);
}

bl_status bl_replay_export(const bl_record_input *in, const bl_json *replay_frames,
                           const char *path, const char *trial_key, bl_error *err)
{
    const size_t n = replay_frames ? bl_json_size(replay_frames) : 0;
    if (!trial_key) {
        if (n != 1)
            return bl_fail(err, BL_EVALUE, "select one trial_key when exporting multiple replays");
        trial_key = bl_json_key_at(replay_frames, 0, NULL);
    }
    const bl_json *frames = n ? bl_json_get(replay_frames, trial_key) : NULL;
    if (!frames)
        return bl_fail(err, BL_EKEY, "unknown replay trial_key");
    bl_json *doc = NULL;
    bl_buf text;
    bl_buf_init(&text);
    bl_status st = bl_replay_document(in, trial_key, frames, &doc, err);
    if (st == BL_OK)
        st = bl_record_json_text(doc, &text, err);
    bl_json_destroy(doc);
    if (st != BL_OK) {
        bl_buf_clear(&text);
        return st;
    }
    /* Exclusive create: an export never replaces anything. */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        const int e = errno;
        bl_buf_clear(&text);
        return bl_fail(err, e == EEXIST ? BL_EEXIST : e == ENOENT ? BL_ENOENT : BL_EOS,
                       "%s: %s", path, strerror(e));
    }
    size_t done = 0;
    while (done < text.len) {
        ssize_t w = write(fd, text.data + done, text.len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            st = bl_fail(err, BL_EOS, "%s: %s", path, strerror(errno));
            break;
        }
        done += (size_t)w;
    }
    if (close(fd) != 0 && st == BL_OK)
        st = bl_fail(err, BL_EOS, "%s: %s", path, strerror(errno));
    bl_buf_clear(&text);
    return st;
}

/* ---- export from a written record ------------------------------------------ */

/* A replay document is as large as its recording budget allowed (32 MiB of
 * frames by default, more on request), and its JSON text several times
 * that: the cap only keeps a damaged record from exhausting memory. */
#define REPLAY_FILE_MAX ((size_t)1 << 30)

/* Whether a manifest artifact is one of the record's replay documents
 * (replays/trial_%08d.json, record.c). */
static bool replay_artifact(const char *rel)
{
    static const char prefix[] = "replays/trial_", suffix[] = ".json";
    const size_t n = strlen(rel), np = sizeof prefix - 1, ns = sizeof suffix - 1;
    return n > np + ns && strncmp(rel, prefix, np) == 0 && strcmp(rel + n - ns, suffix) == 0;
}

/* One replay artifact: its bytes, checked against the manifest's checksum
 * once more, and its document. */
static bl_status read_replay(const char *record, const char *rel, const char *sha256,
                             char **text, size_t *len, bl_json **doc, bl_error *err)
{
    *text = NULL;
    *doc = NULL;
    bl_status st =
        bl_record_artifact_read(record, rel, sha256, REPLAY_FILE_MAX, "replay", text, len, err);
    if (st == BL_OK)
        st = bl_json_parse(*text, *len, rel, doc, err);
    if (st == BL_OK) {
        const char *format = bl_json_string_field(*doc, "format");
        const bl_json *version = bl_json_if(bl_json_field(*doc, "version"), BL_JSON_INT);
        if (!format || strcmp(format, "brainlesslab-replay") != 0 || !version ||
            bl_json_get_int(version) != 1 || !bl_json_string_field(*doc, "trial_key"))
            st = bl_fail(err, BL_EVALUE, "%s: unsupported replay format", rel);
    }
    if (st != BL_OK) {
        bl_free(*text);
        *text = NULL;
        bl_json_destroy(*doc);
        *doc = NULL;
    }
    return st;
}

/* The chosen document's own checks (§7.8): its provenance names the same
 * trial as its key, and it holds frames. */
static bl_status check_replay(const bl_json *doc, bl_error *err)
{
    const bl_json *trial = bl_json_field(bl_json_field(doc, "provenance"), "trial");
    const char *target = bl_json_string_field(trial, "target_id");
    const bl_json *block = bl_json_if(bl_json_field(trial, "block_id"), BL_JSON_INT);
    const bl_json *id = bl_json_if(bl_json_field(trial, "trial_id"), BL_JSON_INT);
    char own[1024] = "";
    if (target && block && id)
        snprintf(own, sizeof own, "%s/%lld/%lld", target, (long long)bl_json_get_int(block),
                 (long long)bl_json_get_int(id));
    if (strcmp(own, bl_json_string_field(doc, "trial_key")) != 0)
        return bl_fail(err, BL_EVALUE, "replay identity does not match one recorded trial");
    const bl_json *frames = bl_json_if(bl_json_field(doc, "frames"), BL_JSON_ARRAY);
    if (!frames || bl_json_size(frames) == 0)
        return bl_fail(err, BL_EVALUE, "a replay must contain recorded frames");
    return BL_OK;
}

bl_status bl_replay_record_text(const char *record, const char *trial_key, bl_buf *out,
                                bl_error *err)
{
    bl_json *map = NULL, *chosen = NULL;
    char *chosen_text = NULL;
    size_t chosen_len = 0, matches = 0;
    bl_status st = bl_record_inspect(record, &map, err);
    if (st != BL_OK)
        return st;
    if (!bl_json_get_bool(bl_json_get(map, "complete"))) {
        st = bl_fail(err, BL_EVALUE, "replay record is not complete (status: %s)",
                     bl_json_get_string(bl_json_get(map, "status"), NULL));
        goto done;
    }
    /* A complete record's inventory equals its checksum table (§7.6). */
    const bl_json *hashes = bl_json_if(bl_json_field(bl_json_field(map, "manifest"), "artifact_sha256"),
                                    BL_JSON_OBJECT);
    const size_t nartifacts = hashes ? bl_json_size(hashes) : 0;
    size_t nreplays = 0;
    for (size_t i = 0; i < nartifacts; i++)
        nreplays += replay_artifact(bl_json_key_at(hashes, i, NULL));
    if (nreplays == 0) {
        st = bl_fail(err, BL_EVALUE, "record holds no replays (record it with --recording replay)");
        goto done;
    }
    if (!trial_key && nreplays != 1) {
        st = bl_fail(err, BL_EVALUE, "select one trial_key when exporting multiple replays");
        goto done;
    }
    /* Every document is read: a key must name exactly one of them. */
    for (size_t i = 0; i < nartifacts && st == BL_OK; i++) {
        const char *rel = bl_json_key_at(hashes, i, NULL);
        if (!replay_artifact(rel))
            continue;
        char *text = NULL;
        size_t len = 0;
        bl_json *doc = NULL;
        const bl_json *sum = bl_json_if(bl_json_value_at(hashes, i), BL_JSON_STRING);
        st = read_replay(record, rel, sum ? bl_json_get_string(sum, NULL) : NULL, &text, &len,
                         &doc, err);
        if (st != BL_OK)
            break;
        if (!trial_key || strcmp(bl_json_string_field(doc, "trial_key"), trial_key) == 0) {
            if (matches++ == 0) {
                chosen = doc;
                chosen_text = text;
                chosen_len = len;
                continue;
            }
        }
        bl_json_destroy(doc);
        bl_free(text);
    }
    if (st == BL_OK && matches == 0)
        st = bl_fail(err, BL_EKEY, "unknown replay trial_key");
    if (st == BL_OK && matches > 1)
        st = bl_fail(err, BL_EVALUE, "replay identity does not match one recorded trial");
    if (st == BL_OK)
        st = check_replay(chosen, err);
    if (st == BL_OK && !bl_buf_append(out, chosen_text, chosen_len))
        st = nomem(err);
done:
    bl_json_destroy(chosen);
    bl_free(chosen_text);
    bl_json_destroy(map);
    return st;
}

bl_status bl_replay_export_record(const char *record, const char *path, const char *trial_key,
                                  bl_error *err)
{
    bl_buf text;
    bl_buf_init(&text);
    bl_status st = bl_replay_record_text(record, trial_key, &text, err);
    if (st == BL_OK)
        st = bl_file_write_new(path, text.data, text.len, err);
    bl_buf_clear(&text);
    return st;
}

static bl_status probe_event(const void *recs, size_t i, bl_json **row,
                             const double **features, size_t *n, bl_error *err)
{
    return bl_recordings_event(recs, i, row, features, n, err);
}

/* The probe_events and replay channels in record form (§4.11, §4.12, §7.8):
 * ProbeEvents with their features and ProbeTrials as the runner captured
 * them, and one replay document per trial that recorded frames (a trial
 * that failed on its first frame has none, and gets no replay file). */
bl_status bl_record_channels(bl_record_input *in, bl_recordings *recs, bl_json **replays,
                             bl_error *err)
{
    if (in->execution->recording == BL_RECORDING_SUMMARY)
        return BL_OK;
    bl_status st = bl_evaluation_recordings(in->resolved, in->evaluation, recs, err);
    if (st != BL_OK)
        return st;
    in->probe_nevents = recs->nevents;
    in->probe_event = probe_event;
    in->probe_ctx = recs;
    in->probe_trials = recs->probe_trials;
    const bl_json *frames = recs->replay_frames;
    if (!frames)
        return BL_OK;
    if (!(*replays = bl_json_object()))
        return bl_fail(err, BL_ENOMEM, "out of memory for replays");
    for (size_t i = 0; i < bl_json_size(frames) && st == BL_OK; i++) {
        const char *key = bl_json_key_at(frames, i, NULL);
        bl_json *doc = NULL;
        if (bl_json_size(bl_json_value_at(frames, i)) == 0)
            continue;
        st = bl_replay_document(in, key, bl_json_value_at(frames, i), &doc, err);
        bl_json_put(&st, *replays, key, doc, err);
    }
    in->replays = *replays;
    return st;
}
