/* A part result as bytes and back (include/brainlesslab/run.h): what one
 * process of a distributed run hands to the one that combines the parts
 * (an MPI message, a shard record's shard/part.bin).
 *
 * Layout, every integer little-endian whatever the host:
 *   "BLPART" u16 version (1)
 *   i64 part, nparts; u8 recording
 *   i64 requested batch size, cpu threads, world ticks, neural frames,
 *       reservoir frames, peak RSS; f64 seconds preflight, seconds execute
 *   u64 rows; per row: u64 job, f64 raw, f64 normalised, u8 normalisation,
 *       u8 status, u8 failed, i64 scoring window, completed ticks, neural
 *       frames, spikes, str calibration id, 64 world seed hex digits, str
 *       wiring id, u8 seeds, per seed u8 stream and 64 hex digits
 *   u64 processed; u64 job each
 *   probe_events: per row u8 present; i64 ticks[3], i32 counts[3],
 *       i32 label, u64 n, f64 features[3n]
 *   replay: per row u8 present, then the frames as a tree: u8 tag (null,
 *       false, true, int i64, real f64, string, array u64 n items, object
 *       u64 n (string key, item), bigint u8 sign u64 n limbs)
 * where str is u64 length then bytes and f64 is the IEEE bits as u64, so
 * every double comes back bit for bit. Decoding bounds every count by
 * the bytes left, so no length can ask for more memory than the input
 * implies, and a tree deeper than 64 is refused. */
#include <string.h>

#include "brainlesslab/alloc.h"

#include "run_internal.h"

#define MAGIC "BLPART"
#define VERSION 1
#define MAX_DEPTH 64

static const char *const streams[] = {"world", "construction", "drive", "control",
                                      "input_shuffle"};
enum { NSTREAMS = 5 };

enum { T_NULL, T_FALSE, T_TRUE, T_INT, T_REAL, T_STRING, T_ARRAY, T_OBJECT, T_BIGINT };

/* ---- writing ------------------------------------------------------------------- */

static void put_u64(bl_buf *b, uint64_t v)
{
    unsigned char o[8];
    for (int k = 0; k < 8; k++)
        o[k] = (unsigned char)(v >> (8 * k));
    bl_buf_append(b, o, 8);
}

static void put_u8(bl_buf *b, unsigned v)
{
    const unsigned char o = (unsigned char)v;
    bl_buf_append(b, &o, 1);
}

static void put_f64(bl_buf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    put_u64(b, u);
}

static void put_str(bl_buf *b, const char *s, size_t n)
{
    put_u64(b, n);
    bl_buf_append(b, s, n);
}

static void put_tree(bl_buf *b, const bl_json *v)
{
    switch (bl_json_kindof(v)) {
    case BL_JSON_NULL:
        put_u8(b, T_NULL);
        return;
    case BL_JSON_BOOL:
        put_u8(b, bl_json_get_bool(v) ? T_TRUE : T_FALSE);
        return;
    case BL_JSON_INT:
        put_u8(b, T_INT);
        put_u64(b, (uint64_t)bl_json_get_int(v));
        return;
    case BL_JSON_REAL:
        put_u8(b, T_REAL);
        put_f64(b, bl_json_get_real(v));
        return;
    case BL_JSON_STRING: {
        size_t n;
        const char *s = bl_json_get_string(v, &n);
        put_u8(b, T_STRING);
        put_str(b, s, n);
        return;
    }
    case BL_JSON_ARRAY:
        put_u8(b, T_ARRAY);
        put_u64(b, bl_json_size(v));
        for (size_t i = 0; i < bl_json_size(v); i++)
            put_tree(b, bl_json_at(v, i));
        return;
    case BL_JSON_OBJECT:
        put_u8(b, T_OBJECT);
        put_u64(b, bl_json_size(v));
        for (size_t i = 0; i < bl_json_size(v); i++) {
            size_t n;
            const char *k = bl_json_key_at(v, i, &n);
            put_str(b, k, n);
            put_tree(b, bl_json_value_at(v, i));
        }
        return;
    case BL_JSON_BIGINT: {
        uint64_t limbs[8];
        bool neg = false;
        size_t n = bl_json_get_bigint(v, &neg, limbs, 8);
        n = n < 8 ? n : 8; /* 512 bits: far beyond a seed's 256 */
        put_u8(b, T_BIGINT);
        put_u8(b, neg);
        put_u64(b, n);
        for (size_t i = 0; i < n; i++)
            put_u64(b, limbs[i]);
        return;
    }
    }
}

static size_t stream_index(const char *name)
{
    for (size_t k = 0; k < NSTREAMS; k++)
        if (strcmp(streams[k], name) == 0)
            return k;
    return NSTREAMS;
}

bl_status bl_run_part_encode(const bl_run_result *r, bl_buf *out, bl_error *err)
{
    bl_buf_append(out, MAGIC, 6);
    put_u8(out, VERSION & 0xff);
    put_u8(out, VERSION >> 8);
    put_u64(out, (uint64_t)r->part);
    put_u64(out, (uint64_t)r->nparts);
    put_u8(out, r->probes ? BL_RECORDING_PROBE_EVENTS
                : r->replays ? BL_RECORDING_REPLAY
                             : BL_RECORDING_SUMMARY);
    const int64_t ints[6] = {r->requested_batch_size, r->cpu_threads, r->world_ticks,
                             r->neural_frames, r->reservoir_frames, r->peak_rss_bytes};
    for (int k = 0; k < 6; k++)
        put_u64(out, (uint64_t)ints[k]);
    put_f64(out, r->seconds_preflight);
    put_f64(out, r->seconds_execute);
    put_u64(out, r->ntrials);
    for (size_t k = 0; k < r->ntrials; k++) {
        const bl_trial_result *t = &r->trials[k];
        put_u64(out, r->jobs ? r->jobs[k] : k);
        put_f64(out, t->raw);
        put_f64(out, t->normalised);
        put_u8(out, t->normalisation);
        put_u8(out, t->status);
        put_u8(out, t->failed);
        const int64_t v[4] = {t->scoring_window, t->completed_ticks, t->neural_frames, t->spikes};
        for (int i = 0; i < 4; i++)
            put_u64(out, (uint64_t)v[i]);
        put_str(out, t->calibration_id, strlen(t->calibration_id));
        bl_buf_append(out, t->world_seed, 64);
        put_str(out, t->wiring_id, strlen(t->wiring_id));
        put_u8(out, (unsigned)t->nseeds);
        for (size_t s = 0; s < t->nseeds; s++) {
            put_u8(out, (unsigned)stream_index(t->seeds[s].stream));
            bl_buf_append(out, t->seeds[s].hex, 64);
        }
    }
    put_u64(out, r->nprocessed);
    for (size_t k = 0; k < r->nprocessed; k++)
        put_u64(out, r->processing_order[k]);
    for (size_t k = 0; r->probes && k < r->ntrials; k++) {
        const bl_probe_capture *pc = &r->probes[k];
        put_u8(out, pc->features != NULL);
        if (!pc->features)
            continue;
        for (int i = 0; i < 3; i++)
            put_u64(out, (uint64_t)pc->ticks[i]);
        for (int i = 0; i < 3; i++)
            put_u64(out, (uint64_t)(int64_t)pc->counts[i]);
        put_u64(out, (uint64_t)(int64_t)pc->label);
        put_u64(out, pc->n);
        for (size_t i = 0; i < 3 * pc->n; i++)
            put_f64(out, pc->features[i]);
    }
    for (size_t k = 0; r->replays && k < r->ntrials; k++) {
        put_u8(out, r->replays[k] != NULL);
        if (r->replays[k])
            put_tree(out, r->replays[k]);
    }
    return out->failed ? bl_fail(err, BL_ENOMEM, "out of memory for a part result") : BL_OK;
}

/* ---- reading ------------------------------------------------------------------- */

typedef struct reader {
    const unsigned char *p;
    size_t left;
    bool bad;
} reader;

static bool take(reader *r, void *dst, size_t n)
{
    if (r->bad || r->left < n) {
        r->bad = true;
        if (dst)
            memset(dst, 0, n);
        return false;
    }
    if (dst)
        memcpy(dst, r->p, n);
    r->p += n;
    r->left -= n;
    return true;
}

static uint64_t get_u64(reader *r)
{
    unsigned char b[8];
    uint64_t v = 0;
    if (take(r, b, 8))
        for (int k = 0; k < 8; k++)
            v |= (uint64_t)b[k] << (8 * k);
    return v;
}

static unsigned get_u8(reader *r)
{
    unsigned char b = 0;
    take(r, &b, 1);
    return b;
}

static double get_f64(reader *r)
{
    const uint64_t u = get_u64(r);
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* A count of items of at least `each` bytes: never more than are left. */
static size_t get_count(reader *r, size_t each)
{
    const uint64_t n = get_u64(r);
    if (r->bad || n > r->left / (each ? each : 1)) {
        r->bad = true;
        return 0;
    }
    return (size_t)n;
}

static bl_status bad(bl_error *err, const char *what)
{
    return bl_fail(err, BL_EVALUE, "part result: %s", what);
}

static bool is_hex64(const char *s)
{
    for (int k = 0; k < 64; k++)
        if (!((s[k] >= '0' && s[k] <= '9') || (s[k] >= 'a' && s[k] <= 'f')))
            return false;
    return s[64] == '\0';
}

/* A string field of at most 64 bytes into dst[65]. */
static bool get_short(reader *r, char dst[65])
{
    const size_t n = get_count(r, 1);
    if (n > 64) {
        r->bad = true;
        return false;
    }
    take(r, dst, n);
    dst[n] = '\0';
    return !r->bad;
}

static bl_json *get_tree(reader *r, int depth)
{
    if (depth > MAX_DEPTH) {
        r->bad = true;
        return NULL;
    }
    const unsigned tag = get_u8(r);
    if (r->bad)
        return NULL;
    switch (tag) {
    case T_NULL:
        return bl_json_null();
    case T_FALSE:
    case T_TRUE:
        return bl_json_bool(tag == T_TRUE);
    case T_INT: {
        const uint64_t u = get_u64(r);
        return r->bad ? NULL : bl_json_int((int64_t)u);
    }
    case T_REAL: {
        const double v = get_f64(r);
        return r->bad ? NULL : bl_json_real(v);
    }
    case T_STRING: {
        const size_t n = get_count(r, 1);
        const char *s = (const char *)r->p;
        return take(r, NULL, n) ? bl_json_stringn(s, n) : NULL;
    }
    case T_ARRAY:
    case T_OBJECT: {
        const bool object = tag == T_OBJECT;
        const size_t n = get_count(r, object ? 9 : 1);
        bl_json *a = object ? bl_json_object() : bl_json_array();
        for (size_t i = 0; a && i < n && !r->bad; i++) {
            const char *key = NULL;
            size_t klen = 0;
            if (object) {
                klen = get_count(r, 1);
                key = (const char *)r->p;
                if (!take(r, NULL, klen))
                    break;
            }
            bl_json *item = get_tree(r, depth + 1);
            /* A repeated key is refused by the object, like any bad byte. */
            if (!item || (object ? bl_json_object_setn(a, key, klen, item, NULL)
                                 : bl_json_array_append(a, item, NULL)) != BL_OK)
                r->bad = true;
        }
        if (r->bad) {
            bl_json_destroy(a);
            return NULL;
        }
        return a;
    }
    case T_BIGINT: {
        const bool neg = get_u8(r) != 0;
        const size_t n = get_count(r, 8);
        uint64_t limbs[8];
        if (n == 0 || n > 8) {
            r->bad = true;
            return NULL;
        }
        for (size_t i = 0; i < n; i++)
            limbs[i] = get_u64(r);
        return r->bad ? NULL : bl_json_bigint(neg, limbs, n);
    }
    default:
        r->bad = true;
        return NULL;
    }
}

/* One row: its job must be `job`; the rest is bound to the plan's target. */
static bl_status get_row(const run_ctx *c, reader *r, size_t job, bl_trial_result *t,
                         bl_error *err)
{
    const size_t per = (size_t)(c->ev->blocks * c->ev->trials_per_block);
    if (get_u64(r) != job && !r->bad)
        return bad(err, "a row is not the job the partition gives it");
    const size_t i = job / per;
    const bl_target_spec *s = c->targets[i].spec;
    memset(t, 0, sizeof *t);
    t->target = i;
    t->target_id = s->id;
    t->task = s->task_options.kind;
    t->block = (int64_t)((job % per) / (size_t)c->ev->trials_per_block);
    t->trial = (int64_t)((job % per) % (size_t)c->ev->trials_per_block);
    t->outcome_key = s->outcome_key;
    t->raw = get_f64(r);
    t->normalised = get_f64(r);
    const unsigned norm = get_u8(r), status = get_u8(r), failed = get_u8(r);
    t->scoring_window = (int64_t)get_u64(r);
    t->completed_ticks = (int64_t)get_u64(r);
    t->neural_frames = (int64_t)get_u64(r);
    t->spikes = (int64_t)get_u64(r);
    char wid[65];
    get_short(r, t->calibration_id);
    take(r, t->world_seed, 64);
    get_short(r, wid);
    t->nseeds = get_u8(r);
    if (r->bad)
        return bad(err, "truncated");
    if (norm > BL_ADJUST_BAD_DENOMINATOR || status > BL_TRIAL_INCOMPLETE || failed > 1 ||
        t->nseeds < 1 || t->nseeds > NSTREAMS ||
        (t->calibration_id[0] && !is_hex64(t->calibration_id)) || !is_hex64(t->world_seed) ||
        (s->reservoir ? !is_hex64(wid) : strcmp(wid, "none") != 0))
        return bad(err, "a row holds a value its fields cannot take");
    t->normalisation = (bl_adjust_status)norm;
    t->status = (bl_trial_status)status;
    t->failed = failed;
    strcpy(t->wiring_id, wid);
    for (size_t k = 0; k < t->nseeds; k++) {
        const unsigned si = get_u8(r);
        take(r, t->seeds[k].hex, 64);
        if (r->bad)
            return bad(err, "truncated");
        if (si >= NSTREAMS || !is_hex64(t->seeds[k].hex))
            return bad(err, "a row holds an unknown seed stream");
        t->seeds[k].stream = streams[si];
    }
    /* The world seed is the first stream (§4.9). */
    if (strcmp(t->seeds[0].stream, "world") != 0 || strcmp(t->seeds[0].hex, t->world_seed) != 0)
        return bad(err, "a row's seeds do not start with its world seed");
    return BL_OK;
}

static bl_status get_probe(const run_ctx *c, reader *r, size_t i, bl_probe_capture *pc,
                           bl_error *err)
{
    if (get_u8(r) == 0)
        return r->bad ? bad(err, "truncated") : BL_OK;
    for (int k = 0; k < 3; k++)
        pc->ticks[k] = (int64_t)get_u64(r);
    int64_t small[4];
    for (int k = 0; k < 4; k++)
        small[k] = (int64_t)get_u64(r);
    const size_t n = get_count(r, 24);
    if (r->bad)
        return bad(err, "truncated");
    for (int k = 0; k < 4; k++)
        if (small[k] < INT32_MIN || small[k] > INT32_MAX)
            return bad(err, "a probe capture holds a value its fields cannot take");
    if ((int64_t)n != c->targets[i].spec->nodes)
        return bad(err, "a probe capture is not its target's size");
    for (int k = 0; k < 3; k++)
        pc->counts[k] = (int32_t)small[k];
    pc->label = (int32_t)small[3];
    pc->n = n;
    if (!(pc->features = bl_mallocarray(3 * n, sizeof *pc->features)))
        return nomem(err);
    for (size_t k = 0; k < 3 * n; k++)
        pc->features[k] = get_f64(r);
    return r->bad ? bad(err, "truncated") : BL_OK;
}

bl_status bl_run_part_decode_prepared(const bl_run_prepared *p, const void *data, size_t len,
                                      bl_run_result **out, bl_error *err)
{
    *out = NULL;
    const run_ctx *c = bl_run_prepared_ctx(p);
    reader r = {.p = data, .left = len};
    char magic[6];
    take(&r, magic, 6);
    const unsigned low = get_u8(&r), version = low | get_u8(&r) << 8;
    if (r.bad || memcmp(magic, MAGIC, 6) != 0)
        return bad(err, "not a part result (no BLPART header)");
    if (version != VERSION)
        return bl_fail(err, BL_EVALUE, "part result: format version %u is not supported (this "
                       "build reads version %d)", version, VERSION);
    const int64_t part = (int64_t)get_u64(&r), nparts = (int64_t)get_u64(&r);
    const unsigned recording = get_u8(&r);
    if (r.bad)
        return bad(err, "truncated");
    if (bl_run_part_check(part, nparts, NULL) != BL_OK)
        return bad(err, "its part number is not K of N");
    if (recording != (unsigned)c->x->recording)
        return bl_fail(err, BL_EVALUE, "part result: recorded with %s, expected %s",
                       recording <= BL_RECORDING_REPLAY ? bl_recording_name(recording) : "?",
                       bl_recording_name(c->x->recording));
    size_t *first = bl_calloc(c->ntargets, sizeof *first),
           *count = bl_calloc(c->ntargets, sizeof *count),
           *row_of = bl_calloc(c->ntargets, sizeof *row_of); /* target's first row */
    bl_run_result *res = NULL;
    bool *taken = NULL;
    bl_status st = !first || !count || !row_of ? nomem(err)
                                    : bl_run_part_jobs(c->plan, part, nparts, first, count, err);
    if (st != BL_OK)
        goto done;
    uint64_t ints[6];
    for (int k = 0; k < 6; k++)
        ints[k] = get_u64(&r);
    double seconds[2]; /* read in order: initialisers are not sequenced */
    seconds[0] = get_f64(&r);
    seconds[1] = get_f64(&r);
    const size_t rows = get_count(&r, 8 * 12); /* each row holds 12 numbers at least */
    size_t expected = 0;
    for (size_t i = 0; i < c->ntargets; i++) {
        row_of[i] = expected;
        expected += count[i];
    }
    if (r.bad) {
        st = bad(err, "truncated");
        goto done;
    }
    if (rows != expected) {
        st = bad(err, "its rows are not the jobs of its part");
        goto done;
    }
    if ((st = bl_run_new_result(c, rows, &res, err)) != BL_OK)
        goto done;
    res->part = part;
    res->nparts = nparts;
    int64_t *const fields[6] = {&res->requested_batch_size, &res->cpu_threads,
                                &res->world_ticks,          &res->neural_frames,
                                &res->reservoir_frames,     &res->peak_rss_bytes};
    for (int k = 0; k < 6; k++)
        *fields[k] = (int64_t)ints[k];
    res->seconds_preflight = seconds[0];
    res->seconds_execute = seconds[1];
    res->jobs = bl_calloc(rows, sizeof *res->jobs);
    taken = bl_calloc(rows, sizeof *taken);
    if (!res->jobs || !taken) {
        st = nomem(err);
        goto done;
    }
    for (size_t i = 0, k = 0; i < c->ntargets && st == BL_OK; i++)
        for (size_t q = 0; q < count[i] && st == BL_OK; q++, k++) {
            res->jobs[k] = first[i] + q;
            st = get_row(c, &r, res->jobs[k], &res->trials[k], err);
        }
    if (st != BL_OK)
        goto done;
    res->nprocessed = get_count(&r, 8);
    if (!r.bad && res->nprocessed != rows) {
        st = bad(err, "its processing order does not list its rows");
        goto done;
    }
    for (size_t k = 0; k < res->nprocessed && !r.bad; k++) {
        const size_t j = (size_t)get_u64(&r);
        /* A job of this part, once: find its row through its target. */
        const size_t per = (size_t)(c->ev->blocks * c->ev->trials_per_block);
        const size_t i = j / per;
        const size_t row = i < c->ntargets ? row_of[i] : 0;
        if (i >= c->ntargets || j < first[i] || j - first[i] >= count[i] ||
            taken[row + (j - first[i])]) {
            st = bad(err, "its processing order does not list its rows");
            goto done;
        }
        taken[row + (j - first[i])] = true;
        res->processing_order[k] = j;
    }
    for (size_t k = 0; res->probes && k < rows && st == BL_OK && !r.bad; k++)
        st = get_probe(c, &r, res->trials[k].target, &res->probes[k], err);
    for (size_t k = 0; res->replays && k < rows && st == BL_OK && !r.bad; k++) {
        const unsigned present = get_u8(&r);
        if (present > 1)
            r.bad = true;
        else if (present && !(res->replays[k] = get_tree(&r, 0)))
            r.bad = true;
    }
    if (st == BL_OK && r.bad)
        st = bad(err, "truncated or damaged");
    if (st == BL_OK && r.left)
        st = bad(err, "bytes follow its end");
    if (st == BL_OK) {
        *out = res;
        res = NULL;
    }
done:
    bl_run_result_destroy(res);
    bl_free(first);
    bl_free(count);
    bl_free(row_of);
    bl_free(taken);
    return st;
}
