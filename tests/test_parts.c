/* Parts of a run (include/brainlesslab/run.h "parts of a run",
 * evaluation.h): the partition covers every job once and never splits a
 * wiring; parts evaluated apart, sent as bytes and combined in any order
 * give the single process's evaluation bit for bit (rows, summaries,
 * contrasts, probe events, replay frames) on mixed plans of both models,
 * probe and physical tasks, construction scopes block and trial; the bytes
 * round-trip exactly, and truncated or damaged bytes are refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/buf.h"
#include "brainlesslab/evaluation.h"
#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "support.h"

static bl_resolved_plan *plan_file(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/plans/%s", bl_test_tests_dir(), name);
    size_t len = 0;
    char *text = bl_test_read(path, &len);
    bl_resolved_plan *r = bl_test_resolve_text(text);
    free(text);
    return r;
}

static bl_execution execution(bl_recording rec, int64_t batch)
{
    bl_execution x;
    bl_execution_default(&x);
    x.recording = rec;
    x.batch_size = batch;
    x.cpu_threads = 2;
    x.recording_budget_bytes = 64 << 20; /* the replays of the mixed plans */
    return x;
}

static size_t njobs(const bl_resolved_plan *r)
{
    const bl_evaluation_spec *ev = bl_resolved_evaluation(r);
    return bl_resolved_target_count(r) * (size_t)(ev->blocks * ev->trials_per_block);
}

/* ---- the partition ---------------------------------------------------------- */

static void check_partition(const bl_resolved_plan *r)
{
    const size_t nt = bl_resolved_target_count(r), nj = njobs(r);
    /* Every job's wiring id, from a whole run. */
    bl_execution x = execution(BL_RECORDING_SUMMARY, 32);
    bl_run_result *whole = NULL;
    OK_E(bl_run_execute(r, &x, NULL, &whole, &e_));
    assert_int_equal(whole->ntrials, nj);
    assert_null(whole->jobs);
    size_t *first = calloc(nt, sizeof *first), *count = calloc(nt, sizeof *count);
    int64_t *owner = calloc(nj, sizeof *owner);
    for (int64_t n = 1; n <= 7; n++) {
        for (size_t j = 0; j < nj; j++)
            owner[j] = 0;
        for (int64_t k = 1; k <= n; k++) {
            OK_E(bl_run_part_jobs(r, k, n, first, count, &e_));
            for (size_t i = 0; i < nt; i++)
                for (size_t q = 0; q < count[i]; q++) {
                    const size_t j = first[i] + q;
                    assert_true(j < nj);
                    if (owner[j])
                        fail_msg("N=%lld: job %zu in parts %lld and %lld", (long long)n, j,
                                 (long long)owner[j], (long long)k);
                    owner[j] = k;
                }
        }
        for (size_t j = 0; j < nj; j++)
            if (!owner[j])
                fail_msg("N=%lld: job %zu in no part", (long long)n, j);
        /* No wiring spans parts. */
        for (size_t a = 0; a < nj; a++)
            for (size_t b = a + 1; b < nj; b++)
                if (strcmp(whole->trials[a].wiring_id, "none") != 0 &&
                    strcmp(whole->trials[a].wiring_id, whole->trials[b].wiring_id) == 0 &&
                    owner[a] != owner[b])
                    fail_msg("N=%lld: wiring of jobs %zu and %zu split", (long long)n, a, b);
        /* The partition is the same when asked again. */
        for (int64_t k = 1; k <= n; k++) {
            OK_E(bl_run_part_jobs(r, k, n, first, count, &e_));
            for (size_t i = 0; i < nt; i++)
                for (size_t q = 0; q < count[i]; q++)
                    assert_int_equal(owner[first[i] + q], k);
        }
    }
    free(first);
    free(count);
    free(owner);
    bl_run_result_destroy(whole);
}

static void test_partition(void **state)
{
    (void)state;
    const char *names[] = {"shards-block.toml", "shards-trial.toml"};
    for (int p = 0; p < 2; p++) {
        bl_resolved_plan *r = plan_file(names[p]);
        check_partition(r);
        bl_resolved_plan_destroy(r);
    }
    bl_resolved_plan *r = plan_file("shards-probes.toml");
    check_partition(r);
    bl_resolved_plan_destroy(r);
}

/* The two targets of shards-block that share their wirings make one unit
 * per block, so the shared wiring really is in the plan (the test above
 * would pass vacuously otherwise), and parts beyond the units are empty. */
static void test_shared_wirings_and_empty_parts(void **state)
{
    (void)state;
    bl_resolved_plan *r = plan_file("shards-block.toml");
    bl_execution x = execution(BL_RECORDING_SUMMARY, 32);
    bl_run_result *whole = NULL;
    OK_E(bl_run_execute(r, &x, NULL, &whole, &e_));
    /* cue (target 0) and cue_frozen (target 1) share block 0's wiring. */
    assert_string_equal(whole->trials[0].wiring_id, whole->trials[9].wiring_id);
    assert_string_not_equal(whole->trials[0].wiring_id, whole->trials[3].wiring_id);
    bl_run_result_destroy(whole);

    const size_t nt = bl_resolved_target_count(r);
    size_t first[16], count[16];
    assert_true(nt <= 16);
    /* 3 + 3 + 3 + 3 units (two classes' blocks, a null's and pong's
     * blocks): 1000 parts leave most of them empty. */
    size_t empty = 0, total = 0;
    for (int64_t k = 1; k <= 1000; k++) {
        OK_E(bl_run_part_jobs(r, k, 1000, first, count, &e_));
        size_t n = 0;
        for (size_t i = 0; i < nt; i++)
            n += count[i];
        empty += n == 0;
        total += n;
    }
    assert_int_equal(total, njobs(r));
    assert_true(empty >= 1000 - 12);
    /* An empty part runs, yields no row and combines like any part. */
    int64_t k_empty = 0;
    for (int64_t k = 1; k <= 1000 && !k_empty; k++) {
        OK_E(bl_run_part_jobs(r, k, 1000, first, count, &e_));
        size_t n = 0;
        for (size_t i = 0; i < nt; i++)
            n += count[i];
        if (n == 0)
            k_empty = k;
    }
    bl_evaluation_prepared *p = NULL;
    bl_run_result *part = NULL;
    OK_E(bl_evaluation_prepare_part(r, &x, NULL, 0, k_empty, 1000, &p, &e_));
    OK_E(bl_evaluate_part(p, NULL, &part, &e_));
    assert_int_equal(part->ntrials, 0);
    assert_int_equal(part->part, k_empty);
    assert_int_equal(part->nparts, 1000);
    bl_run_result_destroy(part);
    bl_evaluation_prepared_destroy(p);

    /* Bad part numbers: one line each, nothing prepared. */
    const int64_t bad[][2] = {{0, 3}, {4, 3}, {1, 0}, {-1, 2}, {1, 1000001}};
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        bl_error err = {0};
        p = NULL;
        assert_int_equal(bl_evaluation_prepare_part(r, &x, NULL, 0, bad[b][0], bad[b][1], &p,
                                                    &err),
                         BL_EVALUE);
        assert_null(p);
        assert_non_null(strstr(err.msg, "a part must be K of N"));
        assert_null(strchr(err.msg, '\n'));
        assert_int_equal(bl_run_part_jobs(r, bad[b][0], bad[b][1], first, count, &err),
                         BL_EVALUE);
    }
    bl_resolved_plan_destroy(r);
}

/* ---- parts combined equal the whole --------------------------------------- */

static char *json_text(const bl_json *v)
{
    bl_buf b;
    bl_buf_init(&b);
    OK_E(bl_json_write(v, 0, &b, &e_));
    bl_buf_putc(&b, '\0');
    char *text = strdup(b.data);
    bl_buf_clear(&b);
    return text;
}

static void assert_same_json(const bl_json *a, const bl_json *b, const char *what)
{
    if (!a && !b)
        return;
    if (!a || !b)
        fail_msg("%s: one side is missing", what);
    char *ta = json_text(a), *tb = json_text(b);
    if (strcmp(ta, tb) != 0)
        fail_msg("%s differs:\n%.300s\n%.300s", what, ta, tb);
    free(ta);
    free(tb);
}

/* Everything a record takes from an evaluation, compared exactly. */
static void assert_same_evaluation(const bl_resolved_plan *r, const bl_evaluation *a,
                                   const bl_evaluation *b)
{
    char *ta = bl_test_trials_text(a->run), *tb = bl_test_trials_text(b->run);
    assert_string_equal(ta, tb);
    bl_free(ta);
    bl_free(tb);
    assert_int_equal(a->run->ntrials, b->run->ntrials);
    for (size_t j = 0; j < a->run->ntrials; j++) {
        BL_ASSERT_SAME_BITS(b->run->trials[j].raw, a->run->trials[j].raw);
        BL_ASSERT_SAME_BITS(b->run->trials[j].normalised, a->run->trials[j].normalised);
        assert_int_equal(b->run->trials[j].spikes, a->run->trials[j].spikes);
    }
    assert_int_equal(a->run->nprocessed, b->run->nprocessed);
    for (size_t k = 0; k < a->run->nprocessed; k++)
        assert_int_equal(a->run->processing_order[k], b->run->processing_order[k]);
    assert_int_equal(a->run->world_ticks, b->run->world_ticks);
    assert_int_equal(a->run->neural_frames, b->run->neural_frames);
    assert_int_equal(a->run->reservoir_frames, b->run->reservoir_frames);
    assert_int_equal(a->run->ncohorts, b->run->ncohorts);
    for (size_t k = 0; k < a->run->ncohorts; k++)
        assert_int_equal(a->run->batch_capacities[k], b->run->batch_capacities[k]);
    assert_int_equal(a->ntargets, b->ntargets);
    for (size_t i = 0; i < a->ntargets; i++) {
        bl_json *sa = NULL, *sb = NULL;
        OK_E(bl_target_summary_json(&a->summaries[i], &sa, &e_));
        OK_E(bl_target_summary_json(&b->summaries[i], &sb, &e_));
        assert_same_json(sa, sb, "summary");
        bl_json_destroy(sa);
        bl_json_destroy(sb);
    }
    assert_int_equal(a->ncontrasts, b->ncontrasts);
    for (size_t i = 0; i < a->ncontrasts; i++) {
        bl_json *ca = NULL, *cb = NULL;
        OK_E(bl_contrast_json(&a->contrasts[i], &ca, &e_));
        OK_E(bl_contrast_json(&b->contrasts[i], &cb, &e_));
        assert_same_json(ca, cb, "contrast");
        bl_json_destroy(ca);
        bl_json_destroy(cb);
    }
    assert_int_equal(a->ncalibrations, b->ncalibrations);
    for (size_t i = 0; i < a->ncalibrations; i++)
        assert_string_equal(a->calibrations[i]->id, b->calibrations[i]->id);
    bl_recordings ra, rb;
    OK_E(bl_evaluation_recordings(r, a, &ra, &e_));
    OK_E(bl_evaluation_recordings(r, b, &rb, &e_));
    assert_same_json(ra.probe_trials, rb.probe_trials, "probe trials");
    assert_same_json(ra.replay_frames, rb.replay_frames, "replay frames");
    assert_int_equal(ra.nevents, rb.nevents);
    for (size_t k = 0; k < ra.nevents; k++) {
        bl_json *ea = NULL, *eb = NULL;
        const double *fa, *fb;
        size_t na, nb;
        OK_E(bl_recordings_event(&ra, k, &ea, &fa, &na, &e_));
        OK_E(bl_recordings_event(&rb, k, &eb, &fb, &nb, &e_));
        assert_same_json(ea, eb, "probe event");
        assert_int_equal(na, nb);
        for (size_t i = 0; i < na; i++)
            BL_ASSERT_SAME_BITS(fb[i], fa[i]);
        bl_json_destroy(ea);
        bl_json_destroy(eb);
    }
    bl_recordings_clear(&ra);
    bl_recordings_clear(&rb);
}

/* A part's bytes decode into a result that encodes to the same bytes. */
static bl_run_result *round_trip(const bl_evaluation_prepared *p, const bl_run_result *part)
{
    bl_buf a, b;
    bl_buf_init(&a);
    bl_buf_init(&b);
    OK_E(bl_run_part_encode(part, &a, &e_));
    bl_run_result *back = NULL;
    OK_E(bl_run_part_decode(p, a.data, a.len, &back, &e_));
    OK_E(bl_run_part_encode(back, &b, &e_));
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    assert_int_equal(back->ntrials, part->ntrials);
    for (size_t k = 0; k < part->ntrials; k++) {
        assert_int_equal(back->jobs[k], part->jobs[k]);
        assert_ptr_equal(back->trials[k].target_id, part->trials[k].target_id);
    }
    bl_buf_clear(&a);
    bl_buf_clear(&b);
    return back;
}

static unsigned next_random(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0x7fff;
}

/* Whole run against N = 1..5 parts, each through bytes, combined in a
 * shuffled order; the parts run with another batch size and one thread. */
static void check_parts_equal_whole(const bl_resolved_plan *r, bl_recording rec)
{
    bl_execution x = execution(rec, 32), xp = execution(rec, 3);
    xp.cpu_threads = 1;
    bl_evaluation_prepared *whole_p = NULL;
    bl_evaluation *whole = NULL;
    OK_E(bl_evaluation_prepare(r, &x, NULL, 0, &whole_p, &e_));
    OK_E(bl_evaluate_prepared(whole_p, NULL, &whole, &e_));
    unsigned seed = 12345;
    for (int64_t n = 1; n <= 5; n++) {
        bl_run_result *parts[5] = {0};
        for (int64_t k = 1; k <= n; k++) {
            bl_evaluation_prepared *pp = NULL;
            bl_run_result *part = NULL;
            OK_E(bl_evaluation_prepare_part(r, &xp, NULL, 0, k, n, &pp, &e_));
            OK_E(bl_evaluate_part(pp, NULL, &part, &e_));
            assert_non_null(part->jobs);
            assert_int_equal(part->part, k);
            assert_int_equal(part->nparts, n);
            for (size_t q = 1; q < part->ntrials; q++)
                assert_true(part->jobs[q - 1] < part->jobs[q]); /* job order */
            /* Decoded against a preparation of another part: the plan is
             * what binds, not the part. */
            parts[k - 1] = round_trip(n > 1 && k == 1 ? whole_p : pp, part);
            bl_run_result_destroy(part);
            bl_evaluation_prepared_destroy(pp);
        }
        for (int64_t k = n - 1; k > 0; k--) {
            const int64_t m = (int64_t)(next_random(&seed) % (unsigned)(k + 1));
            bl_run_result *t = parts[k];
            parts[k] = parts[m];
            parts[m] = t;
        }
        bl_evaluation *e = NULL;
        OK_E(bl_evaluate_parts(whole_p, parts, (size_t)n, &e, &e_));
        for (int64_t k = 0; k < n; k++)
            assert_null(parts[k]);
        assert_null(e->run->jobs);
        assert_same_evaluation(r, whole, e);
        bl_evaluation_destroy(e);
    }
    bl_evaluation_destroy(whole);
    bl_evaluation_prepared_destroy(whole_p);
}

static void test_parts_equal_whole_block(void **state)
{
    (void)state;
    bl_resolved_plan *r = plan_file("shards-block.toml");
    check_parts_equal_whole(r, BL_RECORDING_SUMMARY);
    check_parts_equal_whole(r, BL_RECORDING_REPLAY);
    bl_resolved_plan_destroy(r);
}

static void test_parts_equal_whole_trial(void **state)
{
    (void)state;
    bl_resolved_plan *r = plan_file("shards-trial.toml");
    check_parts_equal_whole(r, BL_RECORDING_SUMMARY);
    check_parts_equal_whole(r, BL_RECORDING_REPLAY);
    bl_resolved_plan_destroy(r);
}

static void test_parts_equal_whole_probes(void **state)
{
    (void)state;
    bl_resolved_plan *r = plan_file("shards-probes.toml");
    check_parts_equal_whole(r, BL_RECORDING_PROBE_EVENTS);
    bl_resolved_plan_destroy(r);
}

/* bl_evaluate_prepared of a part preparation: N = 1 is the whole run, a
 * part of N > 1 does not cover the plan. */
static void test_evaluate_prepared_of_part(void **state)
{
    (void)state;
    bl_resolved_plan *r = plan_file("shards-trial.toml");
    bl_execution x = execution(BL_RECORDING_SUMMARY, 32);
    bl_evaluation *whole = NULL, *one = NULL, *none = NULL;
    bl_evaluation_prepared *p = NULL;
    OK_E(bl_evaluate(r, &x, NULL, 0, NULL, &whole, &e_));
    OK_E(bl_evaluation_prepare_part(r, &x, NULL, 0, 1, 1, &p, &e_));
    OK_E(bl_evaluate_prepared(p, NULL, &one, &e_));
    assert_same_evaluation(r, whole, one);
    bl_evaluation_prepared_destroy(p);
    OK_E(bl_evaluation_prepare_part(r, &x, NULL, 0, 2, 3, &p, &e_));
    bl_error err = {0};
    assert_int_equal(bl_evaluate_prepared(p, NULL, &none, &err), BL_EVALUE);
    assert_null(none);
    assert_non_null(strstr(err.msg, "parts do not cover the plan"));
    bl_evaluation_prepared_destroy(p);
    bl_evaluation_destroy(whole);
    bl_evaluation_destroy(one);
    bl_resolved_plan_destroy(r);
}

/* ---- refusals ------------------------------------------------------------------ */

static bl_run_result *part_of(const bl_resolved_plan *r, const bl_execution *x, int64_t k,
                              int64_t n)
{
    bl_evaluation_prepared *p = NULL;
    bl_run_result *part = NULL;
    OK_E(bl_evaluation_prepare_part(r, x, NULL, 0, k, n, &p, &e_));
    OK_E(bl_evaluate_part(p, NULL, &part, &e_));
    bl_evaluation_prepared_destroy(p);
    return part;
}

static void combine_fails(const bl_evaluation_prepared *p, bl_run_result **parts, size_t n,
                          const char *fragment)
{
    bl_evaluation *e = NULL;
    bl_error err = {0};
    assert_int_equal(bl_evaluate_parts(p, parts, n, &e, &err), BL_EVALUE);
    assert_null(e);
    for (size_t k = 0; k < n; k++)
        assert_null(parts[k]); /* taken over on failure too */
    if (!strstr(err.msg, fragment))
        fail_msg("'%s' does not contain '%s'", err.msg, fragment);
}

static void test_combine_refuses(void **state)
{
    (void)state;
    bl_resolved_plan *r = plan_file("shards-block.toml");
    bl_execution x = execution(BL_RECORDING_SUMMARY, 32),
                 xr = execution(BL_RECORDING_REPLAY, 32);
    bl_evaluation_prepared *p = NULL;
    OK_E(bl_evaluation_prepare(r, &x, NULL, 0, &p, &e_));
    bl_run_result *parts[3];
    parts[0] = part_of(r, &x, 1, 2);
    combine_fails(p, parts, 1, "parts do not cover the plan: job");
    parts[0] = part_of(r, &x, 1, 2);
    parts[1] = part_of(r, &x, 2, 2);
    parts[2] = part_of(r, &x, 2, 2);
    combine_fails(p, parts, 3, "parts overlap: job");
    /* Overlap across two partitions (1 of 2 and 1 of 3 share job 0). */
    parts[0] = part_of(r, &x, 1, 2);
    parts[1] = part_of(r, &x, 1, 3);
    combine_fails(p, parts, 2, "parts overlap");
    parts[0] = part_of(r, &x, 1, 2);
    parts[1] = part_of(r, &xr, 2, 2);
    combine_fails(p, parts, 2, "another recording channel");
    parts[0] = part_of(r, &x, 1, 2);
    parts[1] = NULL;
    combine_fails(p, parts, 2, "a part is missing");

    /* Bytes of a part recorded otherwise are refused on decoding. */
    bl_run_result *q = part_of(r, &xr, 1, 2), *back = NULL;
    bl_buf b;
    bl_buf_init(&b);
    OK_E(bl_run_part_encode(q, &b, &e_));
    bl_error err = {0};
    assert_int_equal(bl_run_part_decode(p, b.data, b.len, &back, &err), BL_EVALUE);
    assert_non_null(strstr(err.msg, "recorded with replay, expected summary"));
    bl_buf_clear(&b);
    bl_run_result_destroy(q);
    bl_evaluation_prepared_destroy(p);
    bl_resolved_plan_destroy(r);
}

/* Every truncation of a part's bytes, and damage at known places, is one
 * BL_EVALUE line; a flip anywhere never crashes (the sanitizer build
 * checks what a crash would not show). */
static void test_decode_rejects_bad_bytes(void **state)
{
    (void)state;
    bl_resolved_plan *r = plan_file("shards-probes.toml");
    bl_execution x = execution(BL_RECORDING_PROBE_EVENTS, 32);
    bl_evaluation_prepared *p = NULL;
    OK_E(bl_evaluation_prepare(r, &x, NULL, 0, &p, &e_));
    bl_run_result *part = part_of(r, &x, 2, 3), *back = NULL;
    assert_true(part->ntrials > 0);
    bl_buf b;
    bl_buf_init(&b);
    OK_E(bl_run_part_encode(part, &b, &e_));
    for (size_t len = 0; len < b.len; len++) {
        bl_error err = {0};
        assert_int_equal(bl_run_part_decode(p, b.data, len, &back, &err), BL_EVALUE);
        assert_null(back);
        assert_non_null(strstr(err.msg, "part result: "));
        assert_null(strchr(err.msg, '\n'));
    }
    /* One byte more. */
    char *longer = malloc(b.len + 1);
    memcpy(longer, b.data, b.len);
    longer[b.len] = 0;
    bl_error err = {0};
    assert_int_equal(bl_run_part_decode(p, longer, b.len + 1, &back, &err), BL_EVALUE);
    assert_non_null(strstr(err.msg, "bytes follow its end"));
    /* Known places: magic, version, part number, recording, the first
     * row's job, its status. */
    const struct {
        size_t at;
        unsigned char to;
        const char *says;
    } damage[] = {
        {0, 'X', "not a part result"},
        {6, 2, "format version 2"},
        {8, 9, "its part number"},
        {24, 0, "recorded with summary"},
        {24 + 1 + 8 * 8 + 8, 0xff, "not the job the partition gives it"},
        {24 + 1 + 8 * 8 + 8 + 8 + 16 + 1, 7, "a value its fields cannot take"},
    };
    for (size_t d = 0; d < sizeof damage / sizeof *damage; d++) {
        memcpy(longer, b.data, b.len);
        longer[damage[d].at] = (char)damage[d].to;
        err = (bl_error){0};
        assert_int_equal(bl_run_part_decode(p, longer, b.len, &back, &err), BL_EVALUE);
        if (!strstr(err.msg, damage[d].says))
            fail_msg("damage %zu: '%s' does not contain '%s'", d, err.msg, damage[d].says);
    }
    /* Any single byte flipped: decoded or refused, never more. */
    for (size_t at = 0; at < b.len; at++) {
        memcpy(longer, b.data, b.len);
        longer[at] ^= 0x5a;
        back = NULL;
        const bl_status st = bl_run_part_decode(p, longer, b.len, &back, &err);
        assert_true(st == BL_OK || st == BL_EVALUE);
        assert_true((st == BL_OK) == (back != NULL));
        bl_run_result_destroy(back);
    }
    free(longer);
    bl_buf_clear(&b);
    bl_run_result_destroy(part);
    bl_evaluation_prepared_destroy(p);
    bl_resolved_plan_destroy(r);
}

/* A replay tree: every byte string of the tree section truncated, and a
 * tree nested beyond the limit, are refused. */
static void test_decode_rejects_deep_trees(void **state)
{
    (void)state;
    bl_resolved_plan *r = plan_file("shards-block.toml");
    bl_execution x = execution(BL_RECORDING_REPLAY, 32);
    bl_evaluation_prepared *p = NULL;
    OK_E(bl_evaluation_prepare(r, &x, NULL, 0, &p, &e_));
    bl_run_result *part = part_of(r, &x, 3, 3);
    /* Replace the last row's frames by arrays nested 100 deep. */
    bl_json *deep = bl_json_null();
    for (int d = 0; d < 100; d++) {
        bl_json *a = bl_json_array();
        OK_E(bl_json_array_append(a, deep, &e_));
        deep = a;
    }
    bl_json_destroy(part->replays[part->ntrials - 1]);
    part->replays[part->ntrials - 1] = deep;
    bl_buf b;
    bl_buf_init(&b);
    OK_E(bl_run_part_encode(part, &b, &e_));
    bl_run_result *back = NULL;
    bl_error err = {0};
    assert_int_equal(bl_run_part_decode(p, b.data, b.len, &back, &err), BL_EVALUE);
    assert_null(back);
    assert_non_null(strstr(err.msg, "part result: "));
    bl_buf_clear(&b);
    bl_run_result_destroy(part);
    bl_evaluation_prepared_destroy(p);
    bl_resolved_plan_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_partition),
        cmocka_unit_test(test_shared_wirings_and_empty_parts),
        cmocka_unit_test(test_parts_equal_whole_block),
        cmocka_unit_test(test_parts_equal_whole_trial),
        cmocka_unit_test(test_parts_equal_whole_probes),
        cmocka_unit_test(test_evaluate_prepared_of_part),
        cmocka_unit_test(test_combine_refuses),
        cmocka_unit_test(test_decode_rejects_bad_bytes),
        cmocka_unit_test(test_decode_rejects_deep_trees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
