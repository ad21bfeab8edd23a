/* `profile` (spec/measurement.md §1, the tests of §5): receipt structure,
 * timing boundaries with a synthetic clock, failure handling, the parent's
 * preflight and verdicts with fake telemetry and fake workers, and work
 * counts identical across batch partitions with the real engine. No test
 * asserts a wall-clock time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support.h"

#include "brainlesslab/alloc.h"
#include "brainlesslab/json.h"
#include "brainlesslab/measure.h"
#include "brainlesslab/provenance.h"
#include "brainlesslab/sha256.h"
#include "measure/measure_internal.h"
#include "measure/profile_internal.h"

/* ---- helpers ------------------------------------------------------------------ */

static bl_profile_args small_args(const char *dest)
{
    bl_profile_args a;
    bl_profile_args_default(&a);
    a.destination = dest;
    a.dtype = "float32";
    a.count = 12;
    a.trials = 4;
    a.blocks = 2;
    a.batch_size = 4;
    a.samples = 2;
    a.warmups = 1;
    a.worker_backend = "cpu";
    a.process_phase = "cold_cache_new_process";
    a.activity_interval = 0.05;
    return a;
}

static double num(const bl_json *o, const char *key)
{
    const bl_json *v = bl_test_get(o, key);
    if (bl_json_kindof(v) == BL_JSON_INT)
        return (double)bl_json_get_int(v);
    if (bl_json_kindof(v) != BL_JSON_REAL)
        fail_msg("%s is not a number", key);
    return bl_json_get_real(v);
}

static bool is_null(const bl_json *o, const char *key)
{
    return bl_json_kindof(bl_test_get(o, key)) == BL_JSON_NULL;
}

/* A synthetic clock: returns the scripted times in order and counts reads. */
typedef struct script_clock {
    const double *times;
    size_t n, next;
} script_clock;

static double scripted(void *ctx)
{
    script_clock *c = ctx;
    if (c->next >= c->n)
        fail_msg("the worker read the clock more often than scripted (%zu)", c->n);
    return c->times[c->next++];
}

/* A fake trial table for sample rows. */
static void fake_trials(bl_trial_result *t, size_t n)
{
    memset(t, 0, n * sizeof *t);
    for (size_t i = 0; i < n; i++) {
        t[i].target_id = "baseline";
        t[i].block = (int64_t)(i / 2);
        t[i].trial = (int64_t)(i % 2);
        t[i].raw = 0.5 * (double)i;
        t[i].status = BL_TRIAL_COMPLETED;
        t[i].completed_ticks = 10 + (int64_t)i;
        t[i].neural_frames = 10 + (int64_t)i;
        t[i].spikes = 3;
        snprintf(t[i].world_seed, sizeof t[i].world_seed, "%064zu", i);
        strcpy(t[i].wiring_id, "w");
    }
}

static bl_json *row_of(const bl_profile_sample *s)
{
    bl_json *row = NULL;
    OK_E(bl_profile_sample_row(s, &row, &e_));
    /* Every row must serialise: no NaN or infinity may reach JSON. */
    bl_buf b;
    bl_buf_init(&b);
    OK_E(bl_json_write(row, 0, &b, &e_));
    bl_buf_clear(&b);
    return row;
}

/* ---- §1.7 statistics ------------------------------------------------------------- */

static void test_statistics(void **state)
{
    (void)state;
    const double v[] = {4, 1, 3, 2};
    bl_json *s = NULL;
    OK_E(bl_sample_stats_json(v, 4, &s, &e_));
    assert_int_equal((int)num(s, "count"), 4);
    assert_true(num(s, "median") == 2.5);
    assert_true(num(s, "p25") == 1.75);
    assert_true(num(s, "p75") == 3.25);
    assert_true(num(s, "mean") == 2.5);
    assert_true(fabs(num(s, "standard_deviation") - sqrt(1.25)) < 1e-15);
    assert_true(num(s, "minimum") == 1 && num(s, "maximum") == 4);
    bl_json_destroy(s);
    const double one = 7.0;
    OK_E(bl_sample_stats_json(&one, 1, &s, &e_));
    assert_true(num(s, "standard_deviation") == 0.0);
    assert_true(num(s, "median") == 7.0);
    bl_json_destroy(s);
    OK_E(bl_sample_stats_json(NULL, 0, &s, &e_));
    assert_int_equal(bl_json_size(s), 1);
    assert_int_equal((int)num(s, "count"), 0);
    bl_json_destroy(s);
    const double bad[] = {1, NAN};
    assert_int_equal(bl_sample_stats_json(bad, 2, &s, NULL), BL_EVALUE);
}

/* ---- §1.5 sample rows ------------------------------------------------------------- */

static bl_profile_sample base_sample(const bl_trial_result *t, size_t n)
{
    static const int64_t caps[] = {4};
    bl_profile_sample s = {
        .phase = "warm_process",
        .index = 0,
        .trials = t,
        .ntrials = n,
        .requested_trials = 4,
        .resolved_horizon = 12,
        .node_count = 8,
        .capacities = caps,
        .ncapacities = 1,
        .execute_seconds = 2.0,
        .timings = {0.5, 1.0, 2.0},
        .record_seconds = NAN,
    };
    return s;
}

static void test_rates_and_boundaries(void **state)
{
    (void)state;
    bl_trial_result t[4];
    fake_trials(t, 4);
    bl_profile_sample s = base_sample(t, 4);
    s.recorded = true;
    s.record_seconds = 3.0;
    s.record_path = "records/cpu/x/warm_process_0000";
    bl_json *row = row_of(&s);
    assert_string_equal(bl_test_str(row, "status"), "complete");
    assert_true(is_null(row, "error"));
    /* 10+11+12+13 ticks and frames over 2 s. */
    assert_int_equal((int)num(row, "completed_world_ticks"), 46);
    assert_true(num(row, "world_ticks_per_second") == 23.0);
    assert_true(num(row, "neural_frames_per_second") == 23.0);
    assert_true(num(row, "execute_wall_seconds") == 2.0);
    assert_true(num(row, "record_wall_seconds") == 3.0);
    assert_true(num(row, "combined_wall_seconds") == 5.0);
    assert_true(num(row, "mean_spike_rate") == 12.0 / (46.0 * 8.0));
    assert_false(bl_json_get_bool(bl_test_get(row, "isolated_kernel_time")));
    assert_non_null(strstr(bl_test_str(row, "timing_boundary"), "construction"));
    assert_non_null(strstr(bl_test_str(row, "record_timing_boundary"), "record"));
    assert_int_equal(bl_json_get_int(bl_json_at(bl_test_get(row, "admitted_batch_capacities"), 0)), 4);
    /* Horizon 12: trials of 10 and 11 ticks ended early. */
    assert_int_equal((int)num(row, "early_ending_trials"), 2);
    assert_int_equal(bl_json_size(bl_test_get(row, "trial_work")), 4);
    bl_json_destroy(row);
}

static void test_invalid_trials_cannot_be_fast_success(void **state)
{
    (void)state;
    for (int c = 0; c < 6; c++) {
        bl_trial_result t[4];
        fake_trials(t, 4);
        size_t n = 4;
        if (c == 0)
            t[1].status = BL_TRIAL_FAILED;
        else if (c == 1)
            t[2].status = BL_TRIAL_INCOMPLETE;
        else if (c == 2)
            n = 3; /* too few trials */
        else if (c == 3)
            t[0].raw = NAN; /* no outcome */
        else if (c == 4)
            t[3].raw = INFINITY;
        else
            t[3] = t[2]; /* a duplicate identity */
        bl_profile_sample s = base_sample(t, n);
        bl_json *row = row_of(&s);
        assert_string_equal(bl_test_str(row, "status"), "failed");
        assert_string_equal(bl_test_str(row, "error"),
                            "failed, incomplete, missing, duplicate or non-finite trials");
        assert_true(is_null(row, "world_ticks_per_second"));
        assert_true(is_null(row, "neural_frames_per_second"));
        if (c == 4)
            assert_string_equal(bl_test_str(bl_test_get(row, "nonfinite_raw_outcomes"), "3"), "inf");
        if (c >= 3 && c <= 4)
            assert_true(is_null(row, "outcome_signature"));
        bl_json_destroy(row);
    }
    /* A duration that is not positive fails too. */
    bl_trial_result t[4];
    fake_trials(t, 4);
    bl_profile_sample s = base_sample(t, 4);
    s.execute_seconds = 0.0;
    bl_json *row = row_of(&s);
    assert_string_equal(bl_test_str(row, "error"), "invalid measured duration");
    bl_json_destroy(row);
    /* A record-writer error fails the row and keeps the raw outcomes. */
    s = base_sample(t, 4);
    s.recorded = true;
    s.record_seconds = 1.0;
    s.error = "record writing: OSError: disk full";
    row = row_of(&s);
    assert_string_equal(bl_test_str(row, "status"), "failed");
    assert_string_equal(bl_test_str(row, "error"), "record writing: OSError: disk full");
    assert_true(num(row, "completed_world_ticks") == 46);
    assert_true(bl_json_get_real(bl_json_at(bl_test_get(row, "raw_outcomes"), 3)) == 1.5);
    assert_true(is_null(row, "world_ticks_per_second"));
    bl_json_destroy(row);
}

static void test_identity_is_separate_from_early_ending_work(void **state)
{
    (void)state;
    bl_trial_result t[4];
    fake_trials(t, 4);
    bl_profile_sample s = base_sample(t, 4);
    bl_json *a = row_of(&s);
    t[2].completed_ticks = 5;
    bl_json *b = row_of(&s);
    assert_string_equal(bl_test_str(a, "identity_signature"), bl_test_str(b, "identity_signature"));
    assert_string_not_equal(bl_test_str(a, "work_signature"), bl_test_str(b, "work_signature"));
    assert_string_equal(bl_test_str(a, "outcome_signature"), bl_test_str(b, "outcome_signature"));
    assert_int_equal((int)num(b, "early_ending_trials"), 3);
    /* Evaluation order does not change the signatures (they sort). */
    bl_trial_result r[4] = {t[3], t[2], t[1], t[0]};
    bl_profile_sample s2 = base_sample(r, 4);
    bl_json *c = row_of(&s2);
    assert_string_equal(bl_test_str(b, "identity_signature"), bl_test_str(c, "identity_signature"));
    assert_string_equal(bl_test_str(b, "work_signature"), bl_test_str(c, "work_signature"));
    bl_json_destroy(a);
    bl_json_destroy(b);
    bl_json_destroy(c);
}

/* ---- §1.2 and §1.3: the command line and the workload ------------------------------ */

static void test_batch_capacity_preserves_scientific_protocol(void **state)
{
    (void)state;
    char first[65] = "";
    const int64_t sizes[] = {1, 4, 32, 256};
    for (size_t i = 0; i < 4; i++) {
        bl_profile_args a = small_args("/nonexistent/x");
        a.trials = 128;
        a.blocks = 4;
        a.batch_size = sizes[i];
        bl_profile_workload w;
        bl_json *protocol = NULL;
        char sig[65];
        OK_E(bl_profile_workload_build(&a, &w, &e_));
        OK_E(bl_profile_protocol(&a, &w, &protocol, sig, &e_));
        assert_int_equal((int)num(protocol, "blocks") * (int)num(protocol, "trials_per_block"),
                         128);
        if (i == 0)
            strcpy(first, sig);
        assert_string_equal(sig, first);
        bl_json_destroy(protocol);
        bl_profile_workload_destroy(&w);
    }
}

static void test_short_physical_horizon_requires_diagnostic(void **state)
{
    (void)state;
    bl_profile_args a = small_args("/nonexistent/y");
    a.task = "tracking";
    a.has_horizon = true;
    a.horizon = 50;
    bl_error err = {0};
    assert_int_equal(bl_profile_validate(&a, &err), BL_EUSAGE);
    a.diagnostic = true;
    OK_E(bl_profile_validate(&a, &e_));
    bl_profile_workload w;
    bl_json *protocol = NULL;
    char sig[65];
    OK_E(bl_profile_workload_build(&a, &w, &e_));
    OK_E(bl_profile_protocol(&a, &w, &protocol, sig, &e_));
    assert_int_equal((int)num(protocol, "resolved_horizon"), 50);
    assert_true(bl_json_get_bool(bl_test_get(protocol, "diagnostic")));
    bl_json_destroy(protocol);
    bl_profile_workload_destroy(&w);
}

/* ---- the worker ------------------------------------------------------------------------ */

static bl_json *run_worker(const bl_profile_args *a, const bl_profile_hooks *h, int *code)
{
    bl_json *receipt = NULL;
    bl_error err = {0};
    *code = bl_profile_worker(a, h, &receipt, &err);
    if (!receipt)
        fail_msg("the worker returned no receipt: %s", err.msg);
    return receipt;
}

static void test_worker_excludes_first_and_warmups_from_statistics(void **state)
{
    (void)state;
    bl_profile_args a = small_args("/nonexistent/z");
    a.samples = 3;
    a.warmups = 2;
    int code;
    bl_json *r = run_worker(&a, NULL, &code);
    assert_int_equal(code, 0);
    assert_string_equal(bl_test_str(r, "status"), "complete");
    const bl_json *samples = bl_test_get(r, "samples"), *warmups = bl_test_get(r, "warmups");
    assert_int_equal(bl_json_size(samples), 4);
    assert_int_equal(bl_json_size(warmups), 2);
    assert_string_equal(bl_test_str(bl_json_at(samples, 0), "phase"), "first_run");
    assert_string_equal(bl_test_str(bl_json_at(samples, 3), "phase"), "warm_process");
    assert_int_equal((int)num(bl_json_at(samples, 3), "sample_index"), 2);
    assert_string_equal(bl_test_str(bl_json_at(warmups, 1), "phase"), "warmup");
    const bl_json *stats = bl_test_get(r, "statistics");
    assert_int_equal((int)num(bl_test_get(stats, "execute_wall_seconds"), "count"), 3);
    assert_int_equal((int)num(bl_test_get(stats, "neural_frames_per_second"), "count"), 3);
    assert_int_equal((int)num(bl_test_get(stats, "record_wall_seconds"), "count"), 0);
    assert_string_equal(bl_test_str(r, "typed_bundle_compiled_counts"), "not_applicable");
    assert_string_equal(bl_test_str(bl_test_get(r, "runtime"), "cache_enabled"), "not_applicable");
    /* The entry-to-first-result span contains the first evaluation. */
    assert_true(num(r, "worker_entry_to_first_result_seconds") >=
                num(bl_json_at(samples, 0), "execute_wall_seconds"));
    const bl_json *rss = bl_test_get(r, "peak_rss");
    assert_string_equal(bl_test_str(rss, "units"), "KiB");
    assert_true(num(rss, "bytes") == num(rss, "value") * 1024);
    assert_non_null(strstr(bl_test_str(rss, "scope"), "all stages"));
    assert_non_null(strstr(bl_test_str(rss, "scope"), "not VRAM"));
    /* Source metadata: the build lock's and the source bundle's hashes. */
    const bl_json *src = bl_test_get(r, "source");
    bl_buf lock;
    bl_buf_init(&lock);
    OK_E(bl_build_lock(&lock, &e_));
    uint8_t d[BL_SHA256_BYTES];
    char hex[65];
    OK_E(bl_sha256(lock.data, lock.len, d, &e_));
    bl_hex(d, sizeof d, hex);
    bl_buf_clear(&lock);
    assert_string_equal(bl_test_str(src, "build_lock_sha256"), hex);
    assert_string_equal(bl_test_str(src, "package_source_sha256"), bl_source_bundle_sha256());
    assert_true(bl_json_size(bl_test_get(src, "package_source_files")) > 100);
    /* The runtime block was replaced by the evaluation metadata. */
    const bl_json *runtime = bl_test_get(r, "runtime");
    assert_non_null(bl_json_get(runtime, "batch_capacities"));
    /* It names the executable twice over: by its build id (read at
     * preparation) and by the SHA-256 of its file (after the evaluations). */
    char id[129];
    assert_true(bl_measure_build_id(id, sizeof id));
    assert_string_equal(bl_test_str(runtime, "executable_build_id"), id);
    OK_E(bl_sha256_file("/proc/self/exe", d, &e_));
    bl_hex(d, sizeof d, hex);
    assert_string_equal(bl_test_str(runtime, "executable_sha256"), hex);
    bl_json_destroy(r);
}

/* The build id is there (CMakeLists.txt links with --build-id=sha1), is a
 * SHA-1 in hex, reads the same every time, and is the one the linker wrote
 * into the file (readelf's reading of it, where binutils is installed). */
static void test_build_id_present_and_stable(void **state)
{
    (void)state;
    char id[129], again[129];
    assert_true(bl_measure_build_id(id, sizeof id));
    assert_int_equal(strlen(id), 40);
    assert_int_equal(strspn(id, "0123456789abcdef"), 40);
    assert_true(bl_measure_build_id(again, sizeof again));
    assert_string_equal(id, again);
    /* Too small a buffer is no answer, never a cut one. */
    char small[40];
    assert_false(bl_measure_build_id(small, sizeof small));
    char cmd[128];
    snprintf(cmd, sizeof cmd, "readelf -n /proc/%ld/exe 2>/dev/null", (long)getpid());
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    char line[512], want[160];
    snprintf(want, sizeof want, "Build ID: %s", id);
    int seen = 0, ran = 0;
    while (fgets(line, sizeof line, p)) {
        ran = 1;
        seen = seen || strstr(line, want) != NULL;
    }
    pclose(p);
    if (ran)
        assert_true(seen);
}

static void test_sync_boundaries_with_a_synthetic_clock(void **state)
{
    const char *dest = bl_test_path(state, "dest");
    bl_profile_args a = small_args(dest);
    a.samples = 1;
    a.warmups = 0;
    a.recording = "summary";
    /* entry, preparation start and end; then per evaluation: start, end,
     * record start, record end. */
    const double times[] = {0.0, 1.0, 1.5, 6.0, 8.0, 8.5, 11.5, 20.0, 22.0, 30.0, 33.0};
    script_clock c = {times, sizeof times / sizeof *times, 0};
    bl_profile_hooks h = {.ctx = &c, .clock = scripted};
    int code;
    bl_json *r = run_worker(&a, &h, &code);
    assert_int_equal(code, 0);
    assert_int_equal(c.next, c.n); /* every boundary read the clock once */
    assert_true(num(r, "runtime_preparation_seconds") == 0.5);
    assert_true(num(r, "worker_entry_to_first_result_seconds") == 8.0);
    const bl_json *first = bl_json_at(bl_test_get(r, "samples"), 0);
    assert_true(num(first, "execute_wall_seconds") == 2.0);
    assert_true(num(first, "record_wall_seconds") == 3.0);
    assert_true(num(first, "combined_wall_seconds") == 5.0);
    assert_true(num(first, "world_ticks_per_second") == num(first, "completed_world_ticks") / 2.0);
    assert_true(num(first, "neural_frames_per_second") ==
                num(first, "completed_neural_frames") / 2.0);
    assert_string_equal(bl_test_str(first, "record_path"),
                        "records/cpu/cold_cache_new_process/first_run_0000");
    const bl_json *second = bl_json_at(bl_test_get(r, "samples"), 1);
    assert_true(num(second, "record_wall_seconds") == 3.0);
    assert_string_equal(bl_test_str(second, "record_path"),
                        "records/cpu/cold_cache_new_process/warm_process_0000");
    /* The records are complete. */
    char path[4400];
    snprintf(path, sizeof path, "%s/records/cpu/cold_cache_new_process/first_run_0000/DONE", dest);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal((int)num(bl_test_get(bl_test_get(r, "statistics"), "record_wall_seconds"), "count"), 1);
    bl_json_destroy(r);
}

static void test_record_failure_retains_raws_and_fails(void **state)
{
    const char *dir = bl_test_dir(state);
    char dest[4200];
    /* A file where the records directory must go: every record fails. */
    snprintf(dest, sizeof dest, "%s/dest", dir);
    assert_int_equal(mkdir(dest, 0777), 0);
    const char *blocker = bl_test_path(state, "dest/records");
    FILE *f = fopen(blocker, "w");
    assert_non_null(f);
    fclose(f);
    bl_profile_args a = small_args(dest);
    a.recording = "summary";
    int code;
    bl_json *r = run_worker(&a, NULL, &code);
    assert_int_equal(code, 1);
    assert_string_equal(bl_test_str(r, "status"), "failed");
    const bl_json *first = bl_json_at(bl_test_get(r, "samples"), 0);
    assert_string_equal(bl_test_str(first, "status"), "failed");
    assert_non_null(strstr(bl_test_str(first, "error"), "record writing: "));
    assert_int_equal(bl_json_size(bl_test_get(first, "raw_outcomes")), 4);
    assert_false(bl_json_kindof(bl_json_at(bl_test_get(first, "raw_outcomes"), 0)) == BL_JSON_NULL);
    assert_true(is_null(first, "neural_frames_per_second"));
    /* The worker stops at the first failed evaluation. */
    assert_int_equal(bl_json_size(bl_test_get(r, "samples")), 1);
    bl_json_destroy(r);
}

static void test_work_counts_identical_across_batch_partitions(void **state)
{
    (void)state;
    const int64_t sizes[] = {1, 3, 8};
    const int64_t threads[] = {1, 2, 2};
    char identity[65] = "", work[65] = "", outcome[65] = "", protocol[65] = "";
    for (size_t i = 0; i < 3; i++) {
        bl_profile_args a = small_args("/nonexistent/w");
        a.node = i == 2 ? "falandays" : "falandays";
        a.trials = 8;
        a.blocks = 2;
        a.samples = 1;
        a.warmups = 0;
        a.batch_size = sizes[i];
        a.cpu_threads = threads[i];
        int code;
        bl_json *r = run_worker(&a, NULL, &code);
        assert_int_equal(code, 0);
        const bl_json *s = bl_json_at(bl_test_get(r, "samples"), 1);
        if (i == 0) {
            strcpy(identity, bl_test_str(s, "identity_signature"));
            strcpy(work, bl_test_str(s, "work_signature"));
            strcpy(outcome, bl_test_str(s, "outcome_signature"));
            strcpy(protocol, bl_test_str(r, "protocol_signature"));
        }
        assert_string_equal(bl_test_str(s, "identity_signature"), identity);
        assert_string_equal(bl_test_str(s, "work_signature"), work);
        assert_string_equal(bl_test_str(s, "outcome_signature"), outcome);
        assert_string_equal(bl_test_str(r, "protocol_signature"), protocol);
        /* Placement is what changed: the admitted capacity follows the request. */
        assert_int_equal(bl_json_get_int(bl_json_at(bl_test_get(s, "admitted_batch_capacities"), 0)),
                         sizes[i]);
        bl_json_destroy(r);
    }
}

/* Allocation failures anywhere in a worker: it either reports a receipt
 * (an evaluation that hit the failure is a failed row, never a complete
 * one) or returns none with a MemoryError; ASan checks for leaks. Every
 * allocation of the first 64 fails once, then a spread over the rest. */
static void test_worker_allocation_failures(void **state)
{
    (void)state;
    bl_profile_args a = small_args("/nonexistent/m");
    a.count = 4;
    a.trials = 2;
    a.blocks = 1;
    a.batch_size = 2;
    a.samples = 1;
    a.warmups = 0;
    bl_json *r = NULL;
    bl_error err = {0};
    bl_alloc_fail_at(0);
    assert_int_equal(bl_profile_worker(&a, NULL, &r, &err), 0);
    long total = bl_alloc_count();
    bl_json_destroy(r);
    for (long k = 1; k <= total; k += k < 64 ? 1 : 97) {
        r = NULL;
        bl_error e = {0};
        bl_alloc_fail_at(k);
        int code = bl_profile_worker(&a, NULL, &r, &e);
        bl_alloc_fail_at(0);
        if (!r) {
            if (e.status != BL_ENOMEM || code != 1)
                fail_msg("allocation %ld: no receipt, %s: %s", k, bl_status_kind(e.status), e.msg);
            continue;
        }
        if (code == 0)
            assert_string_equal(bl_test_str(r, "status"), "complete");
        else
            assert_string_equal(bl_test_str(r, "status"), "failed");
        bl_json_destroy(r);
    }
}

/* ---- the parent with fakes ------------------------------------------------------------- */

typedef struct fakes {
    int telemetry_calls;
    const char *telemetry_status;  /* "available" or "unavailable" */
    bool busy;                     /* report one busy process */
    int spawns;
    char phases[4][64];
    char argv_text[4][2048];
    /* What the workers return: a real receipt, edited per case. */
    const bl_json *receipt;
    int returncode;
    bool fail_first_sample;
    bool change_warm_outcome;
} fakes;

static bl_status fake_telemetry(void *ctx, const bl_activity_options *o, bl_json **out,
                                bl_error *err)
{
    fakes *f = ctx;
    f->telemetry_calls++;
    bl_json *t = bl_json_object(), *procs = bl_json_array();
    bl_status st = bl_json_object_set(t, "status", bl_json_string(f->telemetry_status), err);
    if (strcmp(f->telemetry_status, "available") != 0)
        st = bl_json_object_set(t, "diagnostic", bl_json_string("cannot read /proc"), err);
    if (f->busy) {
        bl_json *p = bl_json_object();
        bl_json_object_set(p, "pid", bl_json_int(4242), err);
        bl_json_object_set(p, "executable", bl_json_string("busybody"), err);
        bl_json_object_set(p, "cpu_percent", bl_json_real(85.0), err);
        bl_json_array_append(procs, p, err);
    }
    if (st == BL_OK)
        st = bl_json_object_set(t, "cpu_threshold_percent",
                                bl_json_real(o->cpu_threshold_percent), err);
    if (st == BL_OK)
        st = bl_json_object_set(t, "processes", procs, err);
    *out = t;
    return st;
}

static bl_status fake_spawn(void *ctx, const char *const *argv, const char *stdout_path,
                            const char *stderr_path, int *returncode, char **stdout_text,
                            bl_error *err)
{
    fakes *f = ctx;
    (void)stderr_path;
    size_t k = (size_t)f->spawns++;
    assert_true(k < 4);
    size_t used = 0;
    for (size_t i = 0; argv[i]; i++) {
        used += (size_t)snprintf(f->argv_text[k] + used, sizeof f->argv_text[k] - used, "%s ",
                                 argv[i]);
        if (strcmp(argv[i], "--process-phase") == 0)
            snprintf(f->phases[k], sizeof f->phases[k], "%s", argv[i + 1]);
    }
    bl_json *r = bl_json_copy(f->receipt);
    bl_json *first = bl_json_at(bl_json_get(r, "samples"), 0);
    if (f->fail_first_sample)
        bl_json_object_set(first, "status", bl_json_string("failed"), err);
    if (f->change_warm_outcome && k == 1)
        bl_json_object_set(first, "outcome_signature", bl_json_string("0000"), err);
    bl_buf b;
    bl_buf_init(&b);
    bl_buf_puts(&b, "log line\nPROFILE_RECEIPT=");
    bl_json_write(r, BL_JSON_SORT_KEYS, &b, err);
    bl_buf_putc(&b, '\n');
    bl_json_destroy(r);
    FILE *out = fopen(stdout_path, "w");
    assert_non_null(out);
    fwrite(b.data, 1, b.len, out);
    fclose(out);
    *stdout_text = bl_buf_take(&b, NULL);
    *returncode = f->returncode;
    return BL_OK;
}

/* A real worker receipt for the fakes to return. */
static bl_json *real_receipt(void)
{
    bl_profile_args a = small_args("/nonexistent/r");
    a.samples = 1;
    a.warmups = 0;
    int code;
    bl_json *r = run_worker(&a, NULL, &code);
    assert_int_equal(code, 0);
    return r;
}

static bl_json *read_receipt(const char *path)
{
    bl_json *r = NULL;
    OK_E(bl_json_read_file(path, &r, &e_));
    return r;
}

static void test_invalid_preflight_creates_nothing(void **state)
{
    const char *dest = bl_test_path(state, "dest");
    for (int c = 0; c < 12; c++) {
        bl_profile_args a = small_args(dest);
        a.worker_backend = NULL;
        a.process_phase = NULL;
        a.samples = 1;
        a.warmups = 0;
        switch (c) {
        case 0: a.dtype = NULL; break;
        case 1: a.count = 0; break;
        case 2: a.batch_size = 0; break;
        case 3: a.trials = 3; a.blocks = 2; break;
        case 4: a.samples = 0; break;
        case 5: a.warmups = -1; break;
        case 6: a.cpu_threads = 0; break;
        case 7: a.has_horizon = true; a.horizon = 0; break;
        case 8: a.backends[1] = "cpu"; a.nbackends = 2; break; /* not distinct */
        case 9: a.activity_cpu_threshold = NAN; break;
        case 10: a.recording = "probe_events"; a.task = "pong"; break;
        default: a.memory_budget_mib = 1; a.count = 512; break; /* admission */
        }
        fakes f = {.telemetry_status = "available"};
        bl_profile_hooks h = {.ctx = &f, .telemetry = fake_telemetry, .spawn = fake_spawn};
        char *path = NULL;
        bl_error err = {0};
        int code = bl_profile_parent(&a, "/bin/false", &h, &path, &err);
        if (code != 2)
            fail_msg("case %d: exit %d (%s)", c, code, err.msg);
        assert_null(path);
        assert_int_equal(f.telemetry_calls, 0);
        assert_int_equal(f.spawns, 0);
        struct stat sb;
        assert_int_not_equal(stat(dest, &sb), 0);
    }
    /* An existing destination is refused and left as it was. */
    assert_int_equal(mkdir(dest, 0777), 0);
    bl_profile_args a = small_args(dest);
    a.worker_backend = NULL;
    fakes f = {.telemetry_status = "available"};
    bl_profile_hooks h = {.ctx = &f, .telemetry = fake_telemetry, .spawn = fake_spawn};
    char *path = NULL;
    bl_error err = {0};
    assert_int_equal(bl_profile_parent(&a, "/bin/false", &h, &path, &err), 1);
    assert_int_equal(err.status, BL_EEXIST);
    assert_non_null(strstr(err.msg, "File exists"));
    assert_int_equal(f.telemetry_calls, 0);
    assert_int_equal(rmdir(dest), 0); /* still empty */
}

static int parent_run(fakes *f, const char *dest, bool allow, char **path, bl_error *err)
{
    bl_profile_args a = small_args(dest);
    a.worker_backend = NULL;
    a.process_phase = NULL;
    a.samples = 1;
    a.warmups = 0;
    a.allow_background_activity = allow;
    bl_profile_hooks h = {.ctx = f, .telemetry = fake_telemetry, .spawn = fake_spawn};
    return bl_profile_parent(&a, "/path/to/brainlesslab", &h, path, err);
}

static void test_background_activity_and_unknown_telemetry_need_opt_in(void **state)
{
    const char *dest = bl_test_path(state, "dest");
    bl_json *receipt = real_receipt();
    struct stat sb;
    for (int c = 0; c < 2; c++) {
        fakes f = {.telemetry_status = c ? "unavailable" : "available", .busy = !c,
                   .receipt = receipt};
        char *path = NULL;
        bl_error err = {0};
        assert_int_equal(parent_run(&f, dest, false, &path, &err), 2);
        assert_non_null(strstr(err.msg, "--allow-background-activity"));
        if (!c)
            assert_non_null(strstr(err.msg, "busybody"));
        assert_int_equal(f.spawns, 0);
        assert_int_not_equal(stat(dest, &sb), 0);
        /* With the opt-in the run proceeds and the receipt says so. */
        assert_int_equal(parent_run(&f, dest, true, &path, &err), 0);
        bl_json *r = read_receipt(path);
        assert_true(bl_json_get_bool(bl_test_get(r, "background_activity_allowed")));
        assert_int_equal(bl_json_size(bl_test_get(r, "background_activity")), c ? 0 : 1);
        assert_string_equal(bl_test_str(bl_test_get(r, "activity_telemetry"), "status"),
                            c ? "unavailable" : "available");
        bl_json_destroy(r);
        bl_free(path);
        bl_test_rmtree(dest);
    }
    bl_json_destroy(receipt);
}

static void test_parent_serial_phases_and_receipt_structure(void **state)
{
    const char *dest = bl_test_path(state, "dest");
    bl_json *receipt = real_receipt();
    fakes f = {.telemetry_status = "available", .receipt = receipt};
    char *path = NULL;
    bl_error err = {0};
    assert_int_equal(parent_run(&f, dest, false, &path, &err), 0);
    assert_int_equal(f.spawns, 2);
    assert_string_equal(f.phases[0], "cold_cache_new_process");
    assert_string_equal(f.phases[1], "warm_cache_new_process");
    assert_int_equal(f.telemetry_calls, 2); /* before and after */
    /* Every workload flag is forwarded explicitly. */
    assert_non_null(strstr(f.argv_text[0], "--trials 4 "));
    assert_non_null(strstr(f.argv_text[0], "--batch-size 4 "));
    assert_non_null(strstr(f.argv_text[0], "--dtype float32 "));
    assert_non_null(strstr(f.argv_text[0], "--worker-backend cpu "));
    bl_json *r = read_receipt(path);
    assert_string_equal(bl_test_str(r, "format"), "brainlesslab-backend-profile");
    assert_int_equal((int)num(r, "version"), 1);
    assert_non_null(strstr(bl_test_str(r, "cache_scope"), "not_applicable"));
    assert_non_null(strstr(bl_test_str(r, "cache_scope"), "uncontrolled"));
    assert_non_null(bl_json_get(bl_test_get(r, "host"), "cpu"));
    assert_non_null(bl_json_get(bl_test_get(r, "host_after"), "load_average"));
    assert_non_null(strstr(bl_test_str(r, "timing_boundary"), "construction"));
    const bl_json *rows = bl_test_get(r, "measurements");
    assert_int_equal(bl_json_size(rows), 2);
    for (size_t i = 0; i < 2; i++) {
        const bl_json *row = bl_json_at(rows, i);
        assert_string_equal(bl_test_str(row, "status"), "complete");
        assert_string_equal(bl_test_str(row, "backend"), "cpu");
        assert_string_equal(bl_test_str(row, "cache_files_before"), "not_applicable");
        assert_non_null(strstr(bl_test_str(row, "process_timing_boundary"), "full worker"));
        assert_int_equal((int)num(row, "returncode"), 0);
    }
    /* Logs beside the receipt. */
    char log[4400];
    snprintf(log, sizeof log, "%s/cpu-warm_cache_new_process.stdout.txt", dest);
    struct stat sb;
    assert_int_equal(stat(log, &sb), 0);
    bl_json_destroy(r);
    bl_free(path);
    bl_json_destroy(receipt);
}

static void test_parent_rejects_failed_samples_and_changed_work(void **state)
{
    const char *dest = bl_test_path(state, "dest");
    bl_json *receipt = real_receipt();
    for (int c = 0; c < 3; c++) {
        fakes f = {.telemetry_status = "available", .receipt = receipt};
        if (c == 0)
            f.fail_first_sample = true; /* the worker exits 0 but reports a failure */
        else if (c == 1)
            f.change_warm_outcome = true;
        else
            f.returncode = 1;
        char *path = NULL;
        bl_error err = {0};
        assert_int_equal(parent_run(&f, dest, false, &path, &err), 1);
        bl_json *r = read_receipt(path);
        const bl_json *rows = bl_test_get(r, "measurements");
        const bl_json *bad = bl_json_at(rows, bl_json_size(rows) - 1);
        assert_string_equal(bl_test_str(bad, "status"), "failed");
        /* Besides the receipt, one error line names the failed phase. */
        char line[BL_ERROR_MAX + 4400];
        snprintf(line, sizeof line, "profile failed: cpu %s: %s; see %s", bl_test_str(bad, "phase"),
                 bl_test_str(bad, "error"), path);
        assert_int_equal(err.status, BL_ERUNTIME);
        assert_string_equal(err.msg, line);
        if (c == 1) {
            assert_int_equal(bl_json_size(rows), 2);
            assert_string_equal(bl_test_str(bad, "error"),
                                "scientific work/outcomes changed between processes");
        } else {
            /* The backend's phases stop at the first failed row. */
            assert_int_equal(bl_json_size(rows), 1);
            assert_int_equal(f.spawns, 1);
        }
        bl_json_destroy(r);
        bl_free(path);
        bl_test_rmtree(dest);
    }
    bl_json_destroy(receipt);
}

static void test_worker_output_parsing(void **state)
{
    (void)state;
    bl_json *r = NULL;
    bl_error err = {0};
    assert_int_equal(bl_profile_parse_worker_output("nothing\n", &r, &err), BL_EVALUE);
    assert_non_null(strstr(err.msg, "invalid worker receipt"));
    assert_int_equal(bl_profile_parse_worker_output("PROFILE_RECEIPT={}\nPROFILE_RECEIPT={}\n",
                                                    &r, &err),
                     BL_EVALUE);
    assert_int_equal(bl_profile_parse_worker_output("PROFILE_RECEIPT={bad\n", &r, &err),
                     BL_EVALUE);
    assert_int_equal(bl_profile_parse_worker_output("PROFILE_RECEIPT=[1]\n", &r, &err), BL_EVALUE);
    OK_E(bl_profile_parse_worker_output("x\nPROFILE_RECEIPT={\"a\": 1}\ny", &r, &e_));
    assert_int_equal((int)num(r, "a"), 1);
    bl_json_destroy(r);
}

/* ---- the command, end to end ---------------------------------------------------------- */

static void test_cli_end_to_end(void **state)
{
    const char *dir = bl_test_dir(state);
    char args[8192], *out = NULL, *err = NULL;
    snprintf(args, sizeof args,
             "profile '%s/p' --dtype float64 --node sorn --count 12 --trials 4 --blocks 2 "
             "--batch-size 2 --samples 2 --warmups 1 --recording summary "
             "--allow-background-activity --activity-interval 0.05",
             dir);
    int rc = bl_test_run_cli(args, &out, &err);
    if (rc != 0)
        fail_msg("exit %d: %s%s", rc, out, err);
    bl_json *line = NULL;
    OK_E(bl_json_parse(out, strlen(out), "stdout", &line, &e_));
    assert_string_equal(bl_test_str(line, "status"), "complete");
    bl_json *r = read_receipt(bl_test_str(line, "receipt"));
    const bl_json *rows = bl_test_get(r, "measurements");
    assert_int_equal(bl_json_size(rows), 2);
    for (size_t i = 0; i < 2; i++) {
        const bl_json *row = bl_json_at(rows, i);
        assert_string_equal(bl_test_str(row, "status"), "complete");
        assert_string_equal(bl_test_str(row, "node"), "sorn");
        assert_int_equal(bl_json_size(bl_test_get(row, "samples")), 3);
        assert_true(num(row, "process_wall_seconds") > 0);
        const bl_json *s = bl_json_at(bl_test_get(row, "samples"), 1);
        assert_true(num(s, "mean_spike_rate") >= 0 && num(s, "mean_spike_rate") <= 1);
    }
    /* The records of both processes are complete. */
    snprintf(args, sizeof args,
             "inspect '%s/p/records/cpu/warm_cache_new_process/warm_process_0001'", dir);
    free(out);
    free(err);
    assert_int_equal(bl_test_run_cli(args, &out, &err), 0);
    free(out);
    free(err);
    /* A second run into the same destination is refused (FileExistsError,
     * exit 1) and the first one's receipt is untouched. */
    snprintf(args, sizeof args, "profile '%s/p' --dtype float64", dir);
    assert_int_equal(bl_test_run_cli(args, &out, &err), 1);
    assert_non_null(strstr(err, "brainlesslab: FileExistsError: "));
    assert_non_null(strstr(err, "/p: File exists"));
    assert_string_equal(out, "");
    free(out);
    free(err);
    /* Usage errors of the parser: exit 2, nothing created. */
    const char *bad[] = {
        "--count 8",                          /* --dtype missing */
        "--dtype float16",                    /* bad choice */
        "--dtype float32 --backends metal",   /* not in this build */
        "--dtype float32 --backends",         /* nargs + without values */
        "--dtype float32 --activity-cpu-threshold x",
        "--dtype float32 --activity-cpu-threshold -1",
        "--dtype float32 --trials 3",
        "--dtype float32 --diagnostic=1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(args, sizeof args, "profile '%s/q' %s", dir, bad[i]);
        int code = bl_test_run_cli(args, &out, &err);
        if (code != 2)
            fail_msg("%s: exit %d: %s", bad[i], code, err);
        assert_non_null(strstr(err, "usage: brainlesslab profile"));
        struct stat sb;
        snprintf(args, sizeof args, "%s/q", dir);
        assert_int_not_equal(stat(args, &sb), 0);
        free(out);
        free(err);
    }
    bl_json_destroy(r);
    bl_json_destroy(line);
}

static void pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Ctrl-C at a terminal reaches the parent and its worker (one process
 * group): the worker stops its evaluation and reports it, the parent writes
 * the receipt of what ran (never complete) and exits 130. */
static void test_ctrl_c_writes_an_honest_receipt(void **state)
{
    char dest[4200], log[4400];
    snprintf(dest, sizeof dest, "%s/dest", bl_test_dir(state));
    snprintf(log, sizeof log, "%s/cpu-cold_cache_new_process.stdout.txt", dest);
    char *const argv[] = {"brainlesslab", "profile", dest, "--dtype", "float64", "--task",
                          "tracking", "--count", "128", "--trials", "8", "--blocks", "2",
                          "--samples", "50", "--allow-background-activity",
                          "--activity-interval", "0.05", NULL};
    pid_t pid =
        bl_test_start_cli(argv, bl_test_path(state, "stdout"), bl_test_path(state, "stderr"));
    struct stat sb;
    for (int i = 0; i < 600 && stat(log, &sb) != 0; i++)
        pause_ms(50);
    assert_int_equal(stat(log, &sb), 0); /* the worker runs */
    pause_ms(300);
    assert_int_equal(kill(-pid, SIGINT), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 130);
    char receipt_path[4400];
    snprintf(receipt_path, sizeof receipt_path, "%s/receipt.json", dest);
    bl_json *r = read_receipt(receipt_path);
    const bl_json *rows = bl_test_get(r, "measurements");
    assert_int_equal(bl_json_size(rows), 1); /* no warm phase after Ctrl-C */
    const bl_json *row = bl_json_at(rows, 0);
    assert_string_equal(bl_test_str(row, "status"), "failed");
    assert_int_equal((int)num(row, "returncode"), 130);
    assert_non_null(strstr(bl_test_str(row, "error"), "KeyboardInterrupt"));
    bl_json_destroy(r);
}

/* A refusal that is not a flag's syntax keeps its own kind: the resolver's
 * for the workload, RuntimeError for the machine, with a line that says
 * what was seen and which option overrides it. */
static void test_refusal_kinds(void **state)
{
    const char *dest = bl_test_path(state, "dest");
    fakes f = {.telemetry_status = "available", .busy = true};
    char *path = NULL;
    bl_error err = {0};
    assert_int_equal(parent_run(&f, dest, false, &path, &err), 2);
    assert_int_equal(err.status, BL_ERUNTIME);
    assert_string_equal(err.msg,
                        "background activity observed: 1 process at or above 2% CPU: busybody "
                        "(pid 4242, 85.0% CPU); measure on a quiet machine or pass "
                        "--allow-background-activity to measure anyway (the receipt records "
                        "that)");
    f = (fakes){.telemetry_status = "unavailable"};
    assert_int_equal(parent_run(&f, dest, false, &path, &err), 2);
    assert_int_equal(err.status, BL_ERUNTIME);
    assert_string_equal(err.msg,
                        "background-activity telemetry is unavailable: cannot read /proc; pass "
                        "--allow-background-activity to measure without it (the receipt "
                        "records that)");
    /* The workload: the resolver's ValueError, the admission's MemoryError;
     * a flag value stays a usage error. */
    for (int c = 0; c < 3; c++) {
        bl_profile_args a = small_args(dest);
        a.worker_backend = NULL;
        a.process_phase = NULL;
        if (c == 0) {
            a.task = "tracking";
            a.has_horizon = true;
            a.horizon = 50;
        } else if (c == 1) {
            a.memory_budget_mib = 1;
            a.count = 512;
        } else {
            a.count = 0;
        }
        f = (fakes){.telemetry_status = "available"};
        bl_profile_hooks h = {.ctx = &f, .telemetry = fake_telemetry, .spawn = fake_spawn};
        assert_int_equal(bl_profile_parent(&a, "/bin/false", &h, &path, &err), 2);
        assert_int_equal(err.status, c == 0 ? BL_EVALUE : c == 1 ? BL_ENOMEM : BL_EUSAGE);
        if (c == 0)
            assert_string_equal(err.msg, "targets[0]: tracking requires 2000 scored ticks "
                                         "(found horizon 50 - warmup 0 = 50)");
        assert_null(path);
        assert_int_equal(f.telemetry_calls, 0);
    }
    struct stat sb;
    assert_int_not_equal(stat(dest, &sb), 0);
}

/* From the command line: a refused workload or a busy machine is exactly
 * one error line and exit 2, never the usage text; nothing is created. */
static void test_cli_refusals_are_one_line(void **state)
{
    const char *dir = bl_test_dir(state);
    char args[8192], dest[4200], *out = NULL, *err = NULL;
    snprintf(dest, sizeof dest, "%s/q", dir);
    static const struct {
        const char *flags, *start;
    } cases[] = {
        {"--task tracking --horizon 50", "brainlesslab: ValueError: targets[0]: tracking "
                                         "requires 2000 scored ticks (found horizon 50 - "
                                         "warmup 0 = 50)\n"},
        {"--count 512 --memory-budget-mib 1", "brainlesslab: MemoryError: "},
    };
    struct stat sb;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(args, sizeof args, "profile '%s' --dtype float32 %s", dest, cases[i].flags);
        int code = bl_test_run_cli(args, &out, &err);
        if (code != 2 || strncmp(err, cases[i].start, strlen(cases[i].start)) != 0)
            fail_msg("%s: exit %d: %s", cases[i].flags, code, err);
        assert_true(strchr(err, '\n') == err + strlen(err) - 1);
        assert_string_equal(out, "");
        assert_int_not_equal(stat(dest, &sb), 0);
        free(out);
        free(err);
    }
    /* A process of ours keeps a CPU busy through the activity interval. */
    pid_t busy = fork();
    assert_true(busy >= 0);
    if (busy == 0) {
        for (volatile unsigned long spin = 0;; spin++) {
        }
    }
    snprintf(args, sizeof args,
             "profile '%s' --dtype float32 --activity-interval 0.3 --activity-cpu-threshold 1",
             dest);
    int code = bl_test_run_cli(args, &out, &err);
    kill(busy, SIGKILL);
    waitpid(busy, NULL, 0);
    if (code != 2)
        fail_msg("exit %d: %s", code, err);
    assert_string_equal(out, "");
    assert_true(strchr(err, '\n') == err + strlen(err) - 1);
    /* Without /proc the telemetry is unavailable, which refuses too. */
    static const char seen[] = "brainlesslab: RuntimeError: background activity observed: ";
    static const char unknown[] = "brainlesslab: RuntimeError: background-activity telemetry is ";
    if (strncmp(err, seen, sizeof seen - 1) == 0)
        assert_non_null(strstr(err, "% CPU)"));
    else if (strncmp(err, unknown, sizeof unknown - 1) != 0)
        fail_msg("stderr: %s", err);
    assert_non_null(strstr(err, "pass --allow-background-activity to measure"));
    assert_int_not_equal(stat(dest, &sb), 0);
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_statistics),
        cmocka_unit_test(test_build_id_present_and_stable),
        cmocka_unit_test(test_rates_and_boundaries),
        cmocka_unit_test(test_invalid_trials_cannot_be_fast_success),
        cmocka_unit_test(test_identity_is_separate_from_early_ending_work),
        cmocka_unit_test(test_batch_capacity_preserves_scientific_protocol),
        cmocka_unit_test(test_short_physical_horizon_requires_diagnostic),
        cmocka_unit_test(test_worker_excludes_first_and_warmups_from_statistics),
        BL_TEST_IN_DIR(test_sync_boundaries_with_a_synthetic_clock),
        BL_TEST_IN_DIR(test_record_failure_retains_raws_and_fails),
        cmocka_unit_test(test_work_counts_identical_across_batch_partitions),
        cmocka_unit_test(test_worker_allocation_failures),
        BL_TEST_IN_DIR(test_invalid_preflight_creates_nothing),
        BL_TEST_IN_DIR(test_background_activity_and_unknown_telemetry_need_opt_in),
        BL_TEST_IN_DIR(test_parent_serial_phases_and_receipt_structure),
        BL_TEST_IN_DIR(test_parent_rejects_failed_samples_and_changed_work),
        cmocka_unit_test(test_worker_output_parsing),
        BL_TEST_IN_DIR(test_cli_end_to_end),
        BL_TEST_IN_DIR(test_ctrl_c_writes_an_honest_receipt),
        BL_TEST_IN_DIR(test_refusal_kinds),
        BL_TEST_IN_DIR(test_cli_refusals_are_one_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
