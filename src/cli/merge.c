/* `brainlesslab merge SHARD... --root DIR` (docs/running.md "Shards and
 * merge"): the shard records of one plan (`run --shard K/N`) combined
 * into the record a single run of the plan writes, with the same trials,
 * seeds, recordings, summaries and contrasts, byte for byte.
 *
 * Every shard is read through inspection (complete, checksums valid) and
 * checked against the first: the same plan (contract hash), the same
 * build (engine version, runtime fingerprint, source bundle digest, which
 * must also be this program's: the record names this build as its
 * provenance), the same recording, calibrations and number of parts; the
 * parts must be 1 to N, each once; each part's rows must be the jobs the
 * partition gives it. All of that happens before anything is created, so
 * a refused merge leaves nothing behind: one line on stderr, exit 1. From
 * the reservation on, it behaves as `run` does: an error or a stop signal
 * leaves a FAILED record, never one that could pass for complete. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/evaluation.h"
#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/provenance.h"
#include "brainlesslab/records.h"
#include "brainlesslab/run.h"
#include "brainlesslab/task.h"
#include "brainlesslab/version.h"
#include "cli.h"

static const char usage[] =
    "usage: brainlesslab merge [-h] [--root ROOT] shard [shard ...]\n";

static const char help[] =
    "\n"
    "Check that the shard records come from one plan and build and hold every part\n"
    "once, then write the record a single run of the plan writes under ROOT; print\n"
    "{\"record\": PATH, \"status\": STATUS} on stdout. Exit 0 iff the record is\n"
    "complete.\n"
    "\n"
    "positional arguments:\n"
    "  shard        shard record directory (run --shard K/N), one per part\n"
    "\n"
    "options:\n"
    "  -h, --help   show this help message and exit\n"
    "  --root ROOT  parent directory for the new record (default: records)\n";

enum { OPT_ROOT };

static const bl_cli_option options[] = {
    [OPT_ROOT] = {.name = "--root", .kind = BL_CLI_STRING, .fallback = "records"},
};

/* ---- the shards agree ------------------------------------------------------ */

static const char *text_of(const bl_json *o, const char *key)
{
    const bl_json *v = bl_json_get(o, key);
    return v && bl_json_kindof(v) == BL_JSON_STRING ? bl_json_get_string(v, NULL) : "";
}

/* The fields of a shard's description that make its build. */
static const char *const build_keys[] = {"engine_version", "runtime_fingerprint",
                                         "source_sha256"};

/* Shard `s` (at `path`) against the first shard `f` and this program. */
static bl_status same_origin(const bl_shard *f, const bl_shard *s, const char *path,
                             const char *fingerprint, bl_error *err)
{
    const bl_json *d = s->description, *fd = f->description;
    const char *hash = text_of(s->manifest, "contract_hash");
    if (strcmp(hash, text_of(f->manifest, "contract_hash")) != 0 ||
        strcmp(text_of(d, "plan_id"), text_of(fd, "plan_id")) != 0)
        return bl_fail(err, BL_EVALUE,
                       "%s: shard of another plan (%s, contract hash %.12s; the first shard's: "
                       "%s, %.12s)",
                       path, text_of(d, "plan_id"), hash, text_of(fd, "plan_id"),
                       text_of(f->manifest, "contract_hash"));
    const char *ours[] = {bl_version(), fingerprint, bl_source_bundle_sha256()};
    for (size_t k = 0; k < sizeof build_keys / sizeof *build_keys; k++) {
        const char *v = text_of(d, build_keys[k]);
        if (strcmp(v, text_of(fd, build_keys[k])) != 0)
            return bl_fail(err, BL_EVALUE, "%s: shard of another build (%s %.12s; the first "
                           "shard's %.12s)", path, build_keys[k], v, text_of(fd, build_keys[k]));
        if (strcmp(v, ours[k]) != 0)
            return bl_fail(err, BL_EVALUE, "%s: shard of another build (%s %.12s; this "
                           "program's %.12s); merge with the build that ran the shards",
                           path, build_keys[k], v, ours[k]);
    }
    if (strcmp(text_of(d, "recording"), text_of(fd, "recording")) != 0)
        return bl_fail(err, BL_EVALUE, "%s: shard recorded with %s, the first shard with %s",
                       path, text_of(d, "recording"), text_of(fd, "recording"));
    if (!bl_json_equal(bl_json_get(d, "calibrations"), bl_json_get(fd, "calibrations")))
        return bl_fail(err, BL_EVALUE, "%s: shard applied other calibrations than the first "
                       "shard", path);
    if (s->parts != f->parts)
        return bl_fail(err, BL_EVALUE, "%s: shard %lld of %lld, the first shard is one of %lld",
                       path, (long long)s->part, (long long)s->parts, (long long)f->parts);
    return BL_OK;
}

/* Parts 1 to N, each exactly once (by[k - 1] the index of part k's shard). */
static bl_status parts_cover(const bl_shard *shards, size_t n, const char *const *paths,
                             size_t **by, bl_error *err)
{
    const int64_t parts = shards[0].parts;
    if (parts < 1 || parts > BL_RUN_MAX_PARTS)
        return bl_fail(err, BL_EVALUE, "%s: shard of %lld parts", paths[0], (long long)parts);
    *by = bl_mallocarray((size_t)parts, sizeof **by);
    if (!*by)
        return bl_fail(err, BL_ENOMEM, "out of memory for shards");
    for (int64_t k = 0; k < parts; k++)
        (*by)[k] = n;
    for (size_t i = 0; i < n; i++) {
        const int64_t k = shards[i].part;
        if (k < 1 || k > parts)
            return bl_fail(err, BL_EVALUE, "%s: shard %lld of %lld is no part", paths[i],
                           (long long)k, (long long)parts);
        if ((*by)[k - 1] != n)
            return bl_fail(err, BL_EVALUE, "%s: part %lld of %lld is given twice (also %s)",
                           paths[i], (long long)k, (long long)parts, paths[(*by)[k - 1]]);
        (*by)[k - 1] = i;
    }
    for (int64_t k = 0; k < parts; k++)
        if ((*by)[k] == n)
            return bl_fail(err, BL_EVALUE, "shard %lld of %lld is missing", (long long)k + 1,
                           (long long)parts);
    return BL_OK;
}

/* The first shard's execution policy (its description's "execution"),
 * checked as run checks its options. */
static bl_status execution_of(const bl_shard *s, bl_execution *x, bl_error *err)
{
    const bl_json *e = bl_json_get(s->description, "execution");
    bl_execution_default(x);
    const struct {
        const char *key;
        int64_t *v;
    } ints[] = {{"batch_size", &x->batch_size},
                {"memory_budget_bytes", &x->memory_budget_bytes},
                {"noise_tile_frames", &x->noise_tile_frames},
                {"recording_budget_bytes", &x->recording_budget_bytes},
                {"cpu_threads", &x->cpu_threads}};
    bool ok = true;
    for (size_t k = 0; k < sizeof ints / sizeof *ints; k++) {
        const bl_json *v = bl_json_get(e, ints[k].key);
        ok = ok && v && bl_json_kindof(v) == BL_JSON_INT;
        if (ok)
            *ints[k].v = bl_json_get_int(v);
    }
    const bl_json *rf = bl_json_get(e, "reserve_fraction"), *cache = bl_json_get(e, "cache");
    ok = ok && rf && bl_json_kindof(rf) == BL_JSON_REAL && cache &&
         bl_json_kindof(cache) == BL_JSON_BOOL && strcmp(text_of(e, "backend"), "cpu") == 0;
    const char *rec = text_of(e, "recording");
    x->recording = strcmp(rec, "probe_events") == 0 ? BL_RECORDING_PROBE_EVENTS
                   : strcmp(rec, "replay") == 0     ? BL_RECORDING_REPLAY
                                                    : BL_RECORDING_SUMMARY;
    ok = ok && strcmp(rec, bl_recording_name(x->recording)) == 0 &&
         strcmp(rec, text_of(s->description, "recording")) == 0;
    if (!ok)
        return bl_fail(err, BL_EVALUE, "shard manifest holds no valid execution policy");
    x->reserve_fraction = bl_json_get_real(rf);
    x->cache = bl_json_get_bool(cache);
    return bl_execution_validate(x, err);
}

/* ---- the command ------------------------------------------------------------- */

typedef struct merge_state {
    const char *const *paths;
    size_t n;
    bl_shard *shards;
    size_t *by;                  /* shard of part k + 1 */
    bl_plan *plan;
    bl_resolved_plan *resolved;
    bl_execution x;
    bl_evaluation_prepared *prepared;
    bl_run_result **parts;
    bl_evaluation *result;
} merge_state;

static void merge_state_clear(merge_state *m)
{
    for (size_t i = 0; m->parts && i < m->n; i++)
        bl_run_result_destroy(m->parts[i]);
    bl_free(m->parts);
    bl_evaluation_destroy(m->result);
    bl_evaluation_prepared_destroy(m->prepared);
    bl_resolved_plan_destroy(m->resolved);
    bl_plan_destroy(m->plan);
    for (size_t i = 0; m->shards && i < m->n; i++)
        bl_shard_clear(&m->shards[i]);
    bl_free(m->shards);
    bl_free(m->by);
}

/* Everything before the record exists: read and check every shard, read
 * the plan, decode and combine the parts into m->result. */
static bl_status combine(merge_state *m, bl_error *err)
{
    char fingerprint[65];
    bl_status st = bl_runtime_fingerprint(fingerprint, err);
    m->shards = bl_calloc(m->n, sizeof *m->shards);
    m->parts = bl_calloc(m->n, sizeof *m->parts);
    if (st == BL_OK && (!m->shards || !m->parts))
        st = bl_fail(err, BL_ENOMEM, "out of memory for shards");
    for (size_t i = 0; i < m->n && st == BL_OK; i++)
        if ((st = bl_shard_read(m->paths[i], &m->shards[i], err)) == BL_OK)
            st = same_origin(&m->shards[0], &m->shards[i], m->paths[i], fingerprint, err);
    if (st == BL_OK)
        st = parts_cover(m->shards, m->n, m->paths, &m->by, err);
    if (st != BL_OK)
        return st;
    /* The plan as part 1's shard holds it; every shard's contract hash is
     * the same, so any would do. */
    const bl_shard *first = &m->shards[m->by[0]];
    const char *first_path = m->paths[m->by[0]];
    char *request = bl_record_path_join(first_path, "request.toml");
    st = request ? bl_plan_read(request, &m->plan, err)
                 : bl_fail(err, BL_ENOMEM, "out of memory for a path");
    bl_free(request);
    if (st == BL_OK)
        st = bl_plan_resolve(m->plan, &m->resolved, err);
    if (st == BL_OK &&
        strcmp(bl_resolved_contract_hash(m->resolved), text_of(first->manifest,
                                                               "contract_hash")) != 0)
        st = bl_fail(err, BL_EVALUE, "%s: shard plan does not resolve to its contract hash",
                     first_path);
    if (st == BL_OK)
        st = execution_of(first, &m->x, err);
    if (st == BL_OK)
        st = bl_evaluation_prepare(m->resolved, &m->x,
                                   (const bl_calibration *const *)first->calibrations,
                                   first->ncalibrations, &m->prepared, err);
    for (size_t i = 0; i < m->n && st == BL_OK; i++) {
        const bl_shard *s = &m->shards[i];
        bl_error why = {0};
        if ((st = bl_run_part_decode(m->prepared, s->bytes, s->len, &m->parts[i], &why)) != BL_OK)
            st = bl_fail(err, st, "%s: %s", m->paths[i], why.msg);
        else if (m->parts[i]->part != s->part || m->parts[i]->nparts != s->parts ||
                 (int64_t)m->parts[i]->ntrials !=
                     bl_json_get_int(bl_json_get(s->description, "jobs")))
            st = bl_fail(err, BL_EVALUE, "%s: shard part does not match its manifest",
                         m->paths[i]);
    }
    if (st == BL_OK)
        st = bl_evaluate_parts(m->prepared, m->parts, m->n, &m->result, err);
    return st;
}

static int merge_main(const bl_cli_args *args)
{
    bl_cli_exit_on_interrupt();
    bl_error err = {0};
    merge_state m = {.paths = args->positionals, .n = args->npositionals};
    bl_json *distribution = NULL;
    bl_reservation res = {0};
    char *dest = NULL;
    int rc;
    bl_status st = BL_OK;

    distribution = bl_json_object();
    bl_json_put(&st, distribution, "kind", bl_json_string("shards"), &err);
    if (st != BL_OK || combine(&m, &err) != BL_OK)
        goto report;
    bl_json_put(&st, distribution, "shards", bl_json_int(m.shards[0].parts), &err);
    if (st != BL_OK ||
        bl_record_name(args->value[OPT_ROOT], bl_plan_id(m.plan), &dest, &err) != BL_OK ||
        bl_cli_reserve_record(dest, &res, &err) != BL_OK)
        goto report;
    bl_record_input input = {
        .plan = m.plan,
        .resolved = m.resolved,
        .execution = &m.x,
        .evaluation = m.result,
        .distribution = distribution,
    };
    bool printed;
    rc = bl_cli_write_evaluation(&input, &res, &printed);
    if (printed)
        fprintf(stderr, "merged %zu shards: %zu trials\n", m.n, m.result->run->ntrials);
    goto done;

report:
    rc = bl_cli_report(&err);
done:
    bl_json_destroy(distribution);
    bl_reservation_clear(&res);
    bl_free(dest);
    merge_state_clear(&m);
    return rc;
}

const bl_cli_command bl_cli_merge = {
    .name = "merge", .positional = "shard", .positional_plus = true, BL_CLI_OPTIONS(options),
    .usage = usage, .help = help, .main = merge_main,
};
