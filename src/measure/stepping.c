/* The isolated stepping benchmark's worker (`profile --isolated`,
 * stepping_internal.h): the tape and every model batch are built once;
 * then a reference pass, the warm-ups and the samples each reset every
 * slot to its initial state and step exactly `frames` frames of the tape.
 *
 * Slots and groups: slot b steps stream b mod W (W tape streams); the
 * slots of one wiring form lockstep groups of at most 8 (BL_GROUP_CAP),
 * as the runner's groups (docs/running.md), each its own model batch
 * created from the one initial state (so the batch shares the wiring's
 * fixed arrays and may step it in lanes); when there are fewer groups than
 * threads the widest is split until every thread has one. OpenMP threads
 * take whole groups.
 *
 * The timed span of a sample holds only the stepping: per frame and group,
 * each slot's tape rows are copied into the step's input and noise
 * matrices (the runner copies its noise row the same way), then
 * bl_model_step; threads join before the clock stops. Resets, state
 * digests, activity counting and the comparison with a record's activity
 * are outside it (the reference pass counts and compares, and is reported
 * apart from the statistics). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "brainlesslab/alloc.h"
#include "brainlesslab/run.h"
#include "brainlesslab/sha256.h"
#include "brainlesslab/task.h"
#include "brainlesslab/version.h"
#include "measure_internal.h"
#include "stepping_internal.h"
/* The lane policy, the instruction set and the Falandays batch's size are
 * the model module's own; the benchmark reports which it ran. */
#include "models/batch_common.h"
#include "models/falandays_internal.h"
#include "models/isa.h"

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory for the stepping benchmark");
}

/* ---- the command line ---------------------------------------------------------- */

bl_status bl_stepping_validate(const bl_profile_args *a, bl_error *err)
{
    if (a->inapplicable)
        return bl_fail(err, BL_EUSAGE, a->isolated ? "argument %s: not allowed with argument --isolated"
                                                   : "argument %s: requires --isolated",
                       a->inapplicable);
    if (!a->isolated)
        return BL_OK;
    if (a->tape_record && a->tape_inputs)
        return bl_fail(err, BL_EUSAGE,
                       "argument --tape-inputs: not allowed with argument --tape-record");
    if (!a->tape_record && !a->tape_inputs)
        return bl_fail(err, BL_EUSAGE,
                       "--isolated needs a tape: --tape-record RECORD or --tape-inputs DIST");
    if (!a->has_frames)
        return bl_fail(err, BL_EUSAGE, "the following arguments are required: --frames");
    if (a->frames < 1)
        return bl_fail(err, BL_EUSAGE, "--frames must be >= 1");
    if (a->tape_record) {
        if (a->tape_seed_given)
            return bl_fail(err, BL_EUSAGE,
                           "argument --tape-seed: not allowed with argument --tape-record");
        if (a->task_given)
            return bl_fail(err, BL_EUSAGE,
                           "argument --task: not allowed with argument --tape-record (the "
                           "record's plan decides the model)");
        if (a->seed_given)
            return bl_fail(err, BL_EUSAGE,
                           "argument --seed: not allowed with argument --tape-record (the "
                           "trials' seeds decide the model and the noise)");
        return BL_OK;
    }
    if (a->tape_trials)
        return bl_fail(err, BL_EUSAGE,
                       "argument --tape-trials: not allowed with argument --tape-inputs");
    if (!a->tape_seed_given)
        return bl_fail(err, BL_EUSAGE, "--tape-inputs needs --tape-seed");
    if (a->tape_seed < 0)
        return bl_fail(err, BL_EUSAGE, "--tape-seed must be >= 0");
    if (!bl_step_dist_valid(a->tape_inputs))
        return bl_fail(err, BL_EUSAGE,
                       "argument --tape-inputs: invalid value: '%s' (choose uniform, "
                       "bernoulli:P with 0 <= P <= 1 or normal:SD with SD >= 0)",
                       a->tape_inputs);
    return BL_OK;
}

/* ---- digests ----------------------------------------------------------------------- */

static void le64(uint64_t v, unsigned char out[8])
{
    for (int i = 0; i < 8; i++)
        out[i] = (unsigned char)(v >> (8 * i));
}

bl_status bl_step_state_digest(const bl_model *m, size_t slot, char hex[65], bl_error *err)
{
    bl_snapshot *snap = NULL;
    bl_sha256_ctx *ctx = NULL;
    unsigned char *bytes = NULL;
    bl_status st = bl_model_snapshot(m, slot, &snap, err);
    if (st == BL_OK)
        st = bl_sha256_create(&ctx, err);
    for (size_t i = 0; st == BL_OK && i < snap->count; i++) {
        const bl_snapshot_array *x = &snap->arrays[i];
        const size_t count = x->ndim == 0 ? 1 : x->ndim == 1 ? x->shape[0]
                                                            : x->shape[0] * x->shape[1];
        unsigned char head[17];
        le64((uint64_t)x->ndim, head);
        st = bl_sha256_update(ctx, x->name, strlen(x->name) + 1, err);
        if (st == BL_OK)
            st = bl_sha256_update(ctx, head, 8, err);
        le64(x->ndim >= 1 ? x->shape[0] : 0, head);
        le64(x->ndim == 2 ? x->shape[1] : 0, head + 8);
        head[16] = x->integer ? 1 : 0;
        if (st == BL_OK)
            st = bl_sha256_update(ctx, head, sizeof head, err);
        bl_free(bytes);
        bytes = count ? bl_mallocarray(count, 8) : NULL;
        if (st == BL_OK && count && !bytes)
            st = nomem(err);
        for (size_t k = 0; st == BL_OK && k < count; k++) {
            uint64_t u;
            memcpy(&u, &x->data[k], sizeof u);
            le64(u, bytes + 8 * k);
        }
        if (st == BL_OK && count)
            st = bl_sha256_update(ctx, bytes, 8 * count, err);
    }
    uint8_t digest[BL_SHA256_BYTES];
    if (st == BL_OK) {
        st = bl_sha256_finish(ctx, digest, err); /* which frees ctx */
        ctx = NULL;
    }
    if (st == BL_OK)
        bl_hex(digest, sizeof digest, hex);
    bl_free(bytes);
    bl_sha256_destroy(ctx);
    bl_snapshot_destroy(snap);
    return st;
}

/* ---- groups ------------------------------------------------------------------------ */

typedef struct group {
    size_t first, g;        /* its slots: order[first .. first + g) */
    bl_model *m;
    int32_t *act;           /* all 1 */
    void *x, *noise;        /* [g][r], [g][n] of the dtype */
    size_t *cursor;         /* each slot's next tape row */
    bl_error err;
    bl_status st;
} group;

typedef struct bench {
    const bl_step_tape *t;
    size_t nslots;
    size_t *order;          /* slots grouped by wiring: slot ids */
    size_t ngroups;
    group *groups;
    int64_t frames;
    volatile sig_atomic_t *interrupt;
} bench;

static const bl_step_stream *stream_of(const bench *b, size_t slot)
{
    return &b->t->streams[slot % b->t->nstreams];
}

/* The groups: each wiring's slots in slot order, cut into runs of at most
 * the runner's group width (bl_run_group_width: BL_GROUP_CAP applies here
 * too), the widest split in two while there are fewer groups than
 * threads. */
static bl_status plan_groups(bench *b, size_t threads, bl_error *err)
{
    const bl_step_tape *t = b->t;
    size_t n = 0, cap = b->nslots, width;
    const bl_status st = bl_run_group_width(&width, err);
    if (st != BL_OK)
        return st;
    b->order = bl_mallocarray(b->nslots, sizeof *b->order);
    b->groups = bl_calloc(cap, sizeof *b->groups);
    if (!b->order || !b->groups)
        return nomem(err);
    for (size_t w = 0; w < t->nwirings; w++) {
        size_t start = n;
        for (size_t s = 0; s < b->nslots; s++)
            if (stream_of(b, s)->wiring == w)
                b->order[n++] = s;
        for (size_t i = start; i < n; i += width) {
            group *gr = &b->groups[b->ngroups++];
            gr->first = i;
            gr->g = n - i < width ? n - i : width;
        }
    }
    while (b->ngroups < threads) {
        size_t widest = 0;
        for (size_t k = 1; k < b->ngroups; k++)
            if (b->groups[k].g > b->groups[widest].g)
                widest = k;
        group *gw = &b->groups[widest];
        if (gw->g < 2)
            break;
        group *gn = &b->groups[b->ngroups++];
        gn->g = gw->g / 2;
        gw->g -= gn->g;
        gn->first = gw->first + gw->g;
    }
    return BL_OK;
}

static bl_status open_groups(bench *b, bl_error *err)
{
    const bl_step_tape *t = b->t;
    const size_t vsize = bl_dtype_size(t->dtype);
    bl_status st = BL_OK;
    for (size_t k = 0; k < b->ngroups && st == BL_OK; k++) {
        group *gr = &b->groups[k];
        const size_t w = stream_of(b, b->order[gr->first])->wiring;
        const void **inits = bl_mallocarray(gr->g, sizeof *inits);
        gr->act = bl_mallocarray(gr->g, sizeof *gr->act);
        gr->x = bl_calloc(gr->g * t->r, vsize);
        gr->noise = bl_calloc(gr->g * t->n, vsize);
        gr->cursor = bl_calloc(gr->g, sizeof *gr->cursor);
        if (!inits || !gr->act || !gr->x || !gr->noise || !gr->cursor)
            st = nomem(err);
        for (size_t i = 0; st == BL_OK && i < gr->g; i++) {
            gr->act[i] = 1;
            /* One pointer per wiring, as the runner gives its groups. */
            inits[i] = t->fal ? (const void *)t->fal[w] : (const void *)t->sorn[w];
        }
        if (st == BL_OK)
            st = t->fal ? bl_model_create_falandays((const bl_falandays_init *const *)inits,
                                                    gr->g, t->dtype, &gr->m, err)
                        : bl_model_create_sorn((const bl_sorn_init *const *)inits, gr->g,
                                               t->dtype, &gr->m, err);
        bl_free(inits);
    }
    return st;
}

static void close_bench(bench *b)
{
    for (size_t k = 0; b->groups && k < b->ngroups; k++) {
        group *gr = &b->groups[k];
        bl_model_destroy(gr->m);
        bl_free(gr->act);
        bl_free(gr->x);
        bl_free(gr->noise);
        bl_free(gr->cursor);
    }
    bl_free(b->groups);
    bl_free(b->order);
}

/* ---- one run ------------------------------------------------------------------------- */

/* What the reference pass adds to a run: spike counting and the record's
 * activity, compared over each stream's first pass. */
typedef struct observe {
    int64_t spikes;
    int64_t compared;             /* slot-frames compared with a record */
    char mismatch[BL_ERROR_MAX];  /* the first difference, or "" */
} observe;

/* Slot i of the group's rows for this frame, then its cursor moves on. */
static inline void feed(const bench *b, group *gr, size_t i, size_t vsize)
{
    const bl_step_tape *t = b->t;
    const bl_step_stream *s = stream_of(b, b->order[gr->first + i]);
    const size_t row = gr->cursor[i];
    memcpy((char *)gr->x + i * t->r * vsize, (const char *)s->inputs + row * t->r * vsize,
           t->r * vsize);
    if (s->noise)
        memcpy((char *)gr->noise + i * t->n * vsize, (const char *)s->noise + row * t->n * vsize,
               t->n * vsize);
    gr->cursor[i] = row + 1 == s->frames ? 0 : row + 1;
}

static void check_frame(const bench *b, const group *gr, int64_t f, observe *o)
{
    const bl_step_tape *t = b->t;
    const void *activity = bl_model_activity_data(gr->m);
    for (size_t i = 0; i < gr->g; i++) {
        const bl_step_stream *s = stream_of(b, b->order[gr->first + i]);
        for (size_t u = 0; u < t->n; u++) {
            const double v = t->dtype == BL_FLOAT32 ? (double)((const float *)activity)[i * t->n + u]
                                                    : ((const double *)activity)[i * t->n + u];
            o->spikes += v != 0;
            if (s->activity && (size_t)f < s->frames && !o->mismatch[0] &&
                memcmp(&v, &s->activity[(size_t)f * t->n + u], sizeof v) != 0)
                snprintf(o->mismatch, sizeof o->mismatch,
                         "the tape does not reproduce trial %s: activity of unit %zu differs "
                         "at frame %lld (tick %lld)",
                         s->key, u, (long long)f, (long long)f + 1);
        }
        if (s->activity && (size_t)f < s->frames)
            o->compared++;
    }
}

/* The frames of one group (reset before, by the caller). */
static void step_group(const bench *b, group *gr, observe *o)
{
    const bl_step_tape *t = b->t;
    const size_t vsize = bl_dtype_size(t->dtype);
    const bl_matrix xin = {t->dtype, gr->g, t->r, gr->x};
    const bl_matrix nz = {t->dtype, gr->g, t->n, gr->noise};
    for (int64_t f = 0; f < b->frames; f++) {
        if (b->interrupt && *b->interrupt) {
            gr->st = bl_fail(&gr->err, BL_EINTERRUPT, "interrupted");
            return;
        }
        for (size_t i = 0; i < gr->g; i++)
            feed(b, gr, i, vsize);
        gr->st = bl_model_step(gr->m, &xin, &nz, gr->act, gr->g, &gr->err);
        if (gr->st != BL_OK)
            return;
        if (o)
            check_frame(b, gr, f, o);
    }
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The reset before a run: every slot at its initial state, every cursor
 * at row 0. */
static bl_status reset_all(bench *b, bl_error *err)
{
    for (size_t k = 0; k < b->ngroups; k++) {
        group *gr = &b->groups[k];
        memset(gr->cursor, 0, gr->g * sizeof *gr->cursor);
        bl_status st = bl_model_reset(gr->m, gr->act, gr->g, err);
        if (st != BL_OK)
            return st;
    }
    return BL_OK;
}

/* Where slot `slot` is: its group and position. */
static void locate(const bench *b, size_t slot, const group **gr, size_t *pos)
{
    for (size_t k = 0; k < b->ngroups; k++)
        for (size_t i = 0; i < b->groups[k].g; i++)
            if (b->order[b->groups[k].first + i] == slot) {
                *gr = &b->groups[k];
                *pos = i;
                return;
            }
}

/* The final state's digest: SHA-256 (hex) of the canonical JSON list of
 * each stream's slot digest, stream by stream. Every slot of a stream must
 * have its stream's digest (*why says which did not), and every slot must
 * be finite. */
static bl_status final_digest(const bench *b, char hex[65], bl_json **streams, char *why,
                              size_t whysize, bl_error *err)
{
    const size_t W = b->t->nstreams;
    char(*first)[65] = bl_calloc(W, sizeof *first);
    bl_json *list = bl_json_array();
    bl_status st = first && list ? BL_OK : nomem(err);
    why[0] = 0;
    for (size_t slot = 0; slot < b->nslots && st == BL_OK; slot++) {
        const group *gr = NULL;
        size_t pos = 0;
        char d[65];
        locate(b, slot, &gr, &pos);
        if (!bl_model_finite(gr->m)[pos] && !why[0])
            snprintf(why, whysize, "slot %zu is not finite after the run", slot);
        st = bl_step_state_digest(gr->m, pos, d, err);
        const size_t w = slot % W;
        if (st == BL_OK && slot < W)
            memcpy(first[w], d, sizeof d);
        else if (st == BL_OK && strcmp(first[w], d) != 0 && !why[0])
            snprintf(why, whysize,
                     "slot %zu's final state differs from slot %zu's on the same stream", slot, w);
    }
    for (size_t w = 0; w < W && st == BL_OK; w++)
        bl_json_push(&st, list, bl_json_string(first[w]), err);
    if (st == BL_OK)
        st = bl_json_digest(list, hex, err);
    bl_free(first);
    return bl_json_hand_over(st, list, streams);
}

typedef struct run_result {
    double wall, cpu;
    char digest[65];
    bl_json *streams;
    char why[BL_ERROR_MAX];
} run_result;

/* One run: reset, the timed stepping (threads joined before each clock
 * read), the final digest. With `o`, the reference pass: serial, counting
 * and comparing every frame. */
static bl_status run_once(bench *b, int threads, double (*clock)(void *), void *ctx,
                          observe *o, run_result *r, bl_error *err)
{
    memset(r, 0, sizeof *r);
    bl_status st = reset_all(b, err);
    if (st != BL_OK)
        return st;
    const double c0 = cpu_now();
    const double t0 = clock ? clock(ctx) : bl_measure_monotonic();
    if (o) {
        for (size_t k = 0; k < b->ngroups; k++)
            step_group(b, &b->groups[k], o);
    } else {
        const long ng = (long)b->ngroups;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
        for (long k = 0; k < ng; k++)
            step_group(b, &b->groups[k], NULL);
    }
    const double t1 = clock ? clock(ctx) : bl_measure_monotonic();
    const double c1 = cpu_now();
    (void)threads;
    r->wall = t1 - t0;
    r->cpu = c1 - c0;
    for (size_t k = 0; k < b->ngroups; k++)
        if (b->groups[k].st != BL_OK) {
            *err = b->groups[k].err;
            return b->groups[k].st;
        }
    return final_digest(b, r->digest, &r->streams, r->why, sizeof r->why, err);
}

/* ---- the receipt ------------------------------------------------------------------- */

const char bl_stepping_boundary[] =
    "stepping span: every slot reset to its initial state before the clock starts (not "
    "timed); inside, per frame and group, the copy of each slot's tape rows into the step's "
    "input and noise matrices and bl_model_step, every worker thread joined before the clock "
    "stops; no worlds, recording, summaries, activity counting or digests";

static const char reference_boundary[] =
    "reference pass: the same frames, serial, counting activity and comparing it with the "
    "record's after every step; excluded from the statistics";

/* A run's row. */
static bl_json *row_of(const char *phase, int64_t index, const run_result *r, int64_t frames,
                       const char *error, bl_error *err)
{
    bl_status st = BL_OK;
    bl_json *o = bl_json_object();
    bl_json_put(&st, o, "phase", bl_json_string(phase), err);
    bl_json_put(&st, o, "sample_index", bl_json_int(index), err);
    bl_json_put(&st, o, "status", bl_json_string(error ? "failed" : "complete"), err);
    bl_json_put(&st, o, "error", error ? bl_json_string(error) : bl_json_null(), err);
    bl_json_put(&st, o, "neural_frames", bl_json_int(frames), err);
    bl_json_put(&st, o, "wall_seconds", bl_measure_real_or_null(r->wall), err);
    bl_json_put(&st, o, "cpu_seconds", bl_measure_real_or_null(r->cpu), err);
    bl_json_put(&st, o, "neural_frames_per_second",
                !error && r->wall > 0 ? bl_json_real((double)frames / r->wall) : bl_json_null(),
                err);
    bl_json_put(&st, o, "final_state_sha256", bl_json_string(r->digest), err);
    return bl_measure_built(st, o);
}

/* Statistics (§1.7) of the sample rows' fields. */
static bl_status statistics(const bl_json *samples, bl_json **out, bl_error *err)
{
    static const char *const fields[] = {"wall_seconds", "cpu_seconds",
                                         "neural_frames_per_second"};
    const size_t n = bl_json_size(samples);
    double *v = bl_mallocarray(n ? n : 1, sizeof *v);
    bl_json *o = bl_json_object();
    bl_status st = v && o ? BL_OK : nomem(err);
    for (size_t f = 0; f < sizeof fields / sizeof *fields && st == BL_OK; f++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            const bl_json *x = bl_json_get(bl_json_at(samples, i), fields[f]);
            if (x && bl_json_kindof(x) == BL_JSON_REAL)
                v[k++] = bl_json_get_real(x);
        }
        bl_json *s = NULL;
        st = bl_sample_stats_json(v, k, &s, err);
        bl_json_put(&st, o, fields[f], s, err);
    }
    bl_json_put(&st, o, "scope", bl_json_string("samples only; the reference pass and the "
                                                "warm-ups excluded"),
                err);
    bl_free(v);
    return bl_json_hand_over(st, o, out);
}

/* Bytes of one slot's canonical state in the dtype (every snapshot array;
 * integer arrays at 4 bytes, as the batch stores them), and what the
 * Falandays batches hold per slot (their struct, per-slot and per-wiring
 * arrays, fast-kernel and lane arrays: bl_falandays_bytes). */
static bl_status model_block(const bench *b, bl_json **out, bl_error *err)
{
    const bl_step_tape *t = b->t;
    bl_snapshot *snap = NULL;
    bl_status st = bl_model_snapshot(b->groups[0].m, 0, &snap, err);
    size_t bytes = 0;
    for (size_t i = 0; st == BL_OK && i < snap->count; i++) {
        const bl_snapshot_array *x = &snap->arrays[i];
        const size_t count = x->ndim == 0 ? 1 : x->ndim == 1 ? x->shape[0]
                                                            : x->shape[0] * x->shape[1];
        bytes += count * (x->integer ? 4 : bl_dtype_size(t->dtype));
    }
    bl_snapshot_destroy(snap);
    size_t batch = 0;
    for (size_t k = 0; t->kind == BL_MODEL_FALANDAYS && k < b->ngroups; k++)
        batch += bl_falandays_bytes(b->groups[k].m);
    bl_json *o = bl_json_object();
    bl_json_put(&st, o, "node", bl_json_string(t->node), err);
    bl_json_put(&st, o, "nodes", bl_json_int((int64_t)t->n), err);
    bl_json_put(&st, o, "receptors", bl_json_int((int64_t)t->r), err);
    bl_json_put(&st, o, "effectors", bl_json_int((int64_t)t->e), err);
    bl_json_put(&st, o, "wirings", bl_json_int((int64_t)t->nwirings), err);
    bl_json_put(&st, o, "state_bytes_per_slot", bl_json_int((int64_t)bytes), err);
    bl_json_put(&st, o, "batch_bytes_per_slot",
                t->kind == BL_MODEL_FALANDAYS ? bl_json_int((int64_t)(batch / b->nslots))
                                              : bl_json_null(),
                err);
    bl_json_put(&st, o, "bytes_scope",
                bl_json_string("state_bytes_per_slot: one slot's canonical state (every "
                               "snapshot array) in the dtype; batch_bytes_per_slot: what the "
                               "Falandays batches hold (shared wiring arrays, kernel and lane "
                               "arrays included) over the slots; SORN batches have no such "
                               "count"),
                err);
    return bl_json_hand_over(st, o, out);
}

static bl_status paths_block(const bench *b, int threads, bl_json **out, bl_error *err)
{
    bl_isa isa;
    bl_lanes_mode lanes;
    bl_status st = bl_isa_select(&isa, err);
    if (st == BL_OK)
        st = bl_lanes_mode_select(&lanes, err);
    if (st != BL_OK)
        return st;
    static const char *const lane_names[] = {"auto", "always", "never"};
    bl_json *o = bl_json_object(), *sizes = bl_json_array();
    bl_json_put(&st, o, "instruction_set", bl_json_string(bl_isa_name(isa)), err);
    bl_json_put(&st, o, "lane_policy", bl_json_string(lane_names[lanes]), err);
    bl_json_put(&st, o, "cpu_threads", bl_json_int(threads), err);
    for (size_t k = 0; k < b->ngroups; k++)
        bl_json_push(&st, sizes, bl_json_int((int64_t)b->groups[k].g), err);
    bl_json_put(&st, o, "group_sizes", sizes, err);
    bl_json_put(&st, o, "grouping",
                bl_json_string("slot b steps stream b mod W; each wiring's slots in lockstep "
                               "groups of at most 8 (one model batch each), the widest split "
                               "while there are fewer groups than threads"),
                err);
    return bl_json_hand_over(st, o, out);
}

static void put_request(bl_status *st, bl_json *r, const bl_profile_args *a,
                        const bl_step_tape *t, bl_error *err)
{
    bl_json_put(st, r, "backend", bl_json_string(a->worker_backend ? a->worker_backend : "cpu"),
                err);
    bl_json_put(st, r, "dtype", t ? bl_json_string(bl_dtype_name(t->dtype))
                                  : a->dtype ? bl_json_string(a->dtype) : bl_json_null(),
                err);
    bl_json_put(st, r, "node", bl_json_string(t ? t->node : a->node), err);
    bl_json_put(st, r, "count", bl_json_int(t ? (int64_t)t->n : a->count), err);
    bl_json_put(st, r, "batch_size", bl_json_int(a->batch_size), err);
    bl_json_put(st, r, "cpu_threads", bl_json_int(a->cpu_threads), err);
    bl_json_put(st, r, "frames_per_slot", bl_json_int(a->frames), err);
    bl_json_put(st, r, "neural_frames_per_sample", bl_json_int(a->frames * a->batch_size), err);
    bl_json_put(st, r, "requested_samples", bl_json_int(a->samples), err);
    bl_json_put(st, r, "requested_warmups", bl_json_int(a->warmups), err);
}

/* The runs: the reference pass, the warm-ups, the samples; each digest
 * must be the reference pass's. *failure names the first failure. */
typedef struct outcome {
    bl_json *reference, *warmups, *samples, *streams;
    char digest[65];
    observe seen;
    char failure[BL_ERROR_MAX + 64];
    bool interrupted;
} outcome;

static bl_status run_all(bench *b, const bl_profile_args *a, const bl_profile_hooks *h,
                         outcome *o, bl_error *err)
{
    const int threads = (int)a->cpu_threads;
    const int64_t frames = a->frames * (int64_t)b->nslots;
    double (*clock)(void *) = h ? h->clock : NULL;
    void *ctx = h ? h->ctx : NULL;
    o->warmups = bl_json_array();
    o->samples = bl_json_array();
    if (!o->warmups || !o->samples)
        return nomem(err);
    for (int64_t i = 0; i <= a->warmups + a->samples && !o->failure[0]; i++) {
        run_result r;
        bl_error rerr = {0};
        bl_status rst = run_once(b, threads, clock, ctx, i == 0 ? &o->seen : NULL, &r, &rerr);
        if (rst == BL_ENOMEM) {
            *err = rerr;
            bl_json_destroy(r.streams);
            return rst;
        }
        if (rst == BL_EINTERRUPT)
            o->interrupted = true;
        const char *error = NULL;
        if (rst != BL_OK) {
            snprintf(o->failure, sizeof o->failure, "%s: %s", bl_status_kind(rerr.status),
                     rerr.msg);
            error = o->failure;
        } else if (r.why[0]) {
            snprintf(o->failure, sizeof o->failure, "%s", r.why);
            error = o->failure;
        } else if (i == 0 && o->seen.mismatch[0]) {
            snprintf(o->failure, sizeof o->failure, "%s", o->seen.mismatch);
            error = o->failure;
        } else if (i > 0 && strcmp(r.digest, o->digest) != 0) {
            snprintf(o->failure, sizeof o->failure,
                     "the final state of %s %lld differs from the reference pass's (%.12s... "
                     "against %.12s...)",
                     i <= a->warmups ? "warm-up" : "sample",
                     (long long)(i <= a->warmups ? i - 1 : i - 1 - a->warmups), r.digest,
                     o->digest);
            error = o->failure;
        }
        if (i == 0) {
            memcpy(o->digest, r.digest, sizeof o->digest);
            o->streams = r.streams;
            r.streams = NULL;
        }
        bl_json_destroy(r.streams);
        const char *phase = i == 0 ? "reference" : i <= a->warmups ? "warmup" : "sample";
        const int64_t index = i == 0 ? 0 : i <= a->warmups ? i - 1 : i - 1 - a->warmups;
        bl_json *row = row_of(phase, index, &r, frames, error, err);
        bl_status st = row ? BL_OK : nomem(err);
        if (i == 0)
            o->reference = row;
        else
            bl_json_push(&st, i <= a->warmups ? o->warmups : o->samples, row, err);
        if (st != BL_OK)
            return st;
    }
    return BL_OK;
}

/* The reference pass's block: its row, activity and the record check. */
static bl_status reference_block(const bench *b, const bl_profile_args *a, outcome *o,
                                 bl_json **out, bl_error *err)
{
    bl_status st = BL_OK;
    bl_json *r = o->reference ? o->reference : bl_json_object();
    o->reference = NULL;
    const double denom = (double)a->frames * (double)b->nslots * (double)b->t->n;
    bool record = b->t->streams[0].activity != NULL;
    bl_json_put(&st, r, "timing_boundary", bl_json_string(reference_boundary), err);
    bl_json_put(&st, r, "active_units", bl_json_int(o->seen.spikes), err);
    bl_json_put(&st, r, "mean_activity", bl_json_real((double)o->seen.spikes / denom), err);
    bl_json_put(&st, r, "record_frames_compared",
                record ? bl_json_int(o->seen.compared) : bl_json_null(), err);
    bl_json_put(&st, r, "record_activity_reproduced",
                record ? bl_json_bool(!o->seen.mismatch[0] && o->seen.compared > 0)
                       : bl_json_null(),
                err);
    return bl_json_hand_over(st, r, out);
}

int bl_stepping_worker(const bl_profile_args *a, const bl_profile_hooks *h, bl_json **receipt,
                       bl_error *err)
{
    *receipt = NULL;
    bl_step_tape tape = {0};
    bench b = {.nslots = (size_t)a->batch_size, .frames = a->frames,
               .interrupt = h ? h->interrupt : NULL};
    outcome o = {0};
    bl_json *r = bl_json_object(), *model = NULL, *paths = NULL, *stats = NULL, *ref = NULL;
    bl_status st = r ? BL_OK : nomem(err);
    if (st != BL_OK)
        return 1;

    /* Everything that can fail before the runs is a failed receipt. */
    bl_error werr = {0};
    const double p0 = bl_measure_monotonic();
    bl_status wst = bl_step_tape_build(a, &tape, &werr);
    if (wst == BL_OK && (size_t)a->batch_size < tape.nstreams)
        wst = bl_fail(&werr, BL_EUSAGE,
                      "--batch-size %lld is less than the %zu tape trials (each needs a slot)",
                      (long long)a->batch_size, tape.nstreams);
    b.t = &tape;
    if (wst == BL_OK)
        wst = plan_groups(&b, (size_t)a->cpu_threads, &werr);
    if (wst == BL_OK)
        wst = open_groups(&b, &werr);
    if (wst == BL_OK)
        wst = model_block(&b, &model, &werr);
    if (wst == BL_OK)
        wst = paths_block(&b, (int)a->cpu_threads, &paths, &werr);
    const double p1 = bl_measure_monotonic();
    if (wst == BL_ENOMEM) {
        *err = werr;
        goto fail;
    }
    if (wst != BL_OK)
        snprintf(o.failure, sizeof o.failure, "%s: %s", bl_status_kind(werr.status), werr.msg);
    else if ((st = run_all(&b, a, h, &o, err)) != BL_OK)
        goto fail;
    if (wst == BL_OK && (st = reference_block(&b, a, &o, &ref, err)) != BL_OK)
        goto fail;
    if (o.samples && (st = statistics(o.samples, &stats, err)) != BL_OK)
        goto fail;

    const bool complete = !o.failure[0] && !o.interrupted;
    char build_id[2 * 64 + 1], arch[65];
    const bool have_id = bl_measure_build_id(build_id, sizeof build_id);
    bl_architecture(arch);
    put_request(&st, r, a, wst == BL_OK ? &tape : NULL, err);
    bl_json_put(&st, r, "status", bl_json_string(complete ? "complete" : "failed"), err);
    bl_json_put(&st, r, "error",
                o.failure[0]           ? bl_json_string(o.failure)
                : o.interrupted        ? bl_json_string("KeyboardInterrupt: interrupted")
                                       : bl_json_null(),
                err);
    bl_json_put(&st, r, "engine_version", bl_json_string(bl_version()), err);
    bl_json_put(&st, r, "actual_arch", bl_json_string(arch), err);
    bl_json_put(&st, r, "executable_build_id",
                have_id ? bl_json_string(build_id) : bl_json_null(), err);
    bl_json_put(&st, r, "tape", tape.describe ? bl_json_copy(tape.describe) : bl_json_null(),
                err);
    bl_json_put(&st, r, "model", model ? model : bl_json_null(), err);
    model = NULL;
    bl_json_put(&st, r, "paths", paths ? paths : bl_json_null(), err);
    paths = NULL;
    bl_json_put(&st, r, "preparation_seconds", bl_measure_real_or_null(p1 - p0), err);
    bl_json_put(&st, r, "preparation_boundary",
                bl_json_string("tape (record read and checked, or drawn), constructions, model "
                               "batches and buffers, once per process; not timed again"),
                err);
    bl_json_put(&st, r, "timing_boundary", bl_json_string(bl_stepping_boundary), err);
    bl_json_put(&st, r, "isolated_kernel_time", bl_json_bool(true), err);
    bl_json_put(&st, r, "mean_activity",
                ref ? bl_json_copy(bl_json_get(ref, "mean_activity")) : bl_json_null(), err);
    bl_json_put(&st, r, "final_state_sha256",
                o.digest[0] ? bl_json_string(o.digest) : bl_json_null(), err);
    bl_json_put(&st, r, "stream_state_sha256", o.streams ? o.streams : bl_json_null(), err);
    o.streams = NULL;
    bl_json_put(&st, r, "digest_scope",
                bl_json_string("SHA-256 of the canonical JSON list of each tape stream's final "
                               "state digest (bl_model_snapshot in canonical orientation, every "
                               "value's float64 bits); every slot of a stream must match it and "
                               "every run the reference pass's; independent of batch size, "
                               "threads, lanes and instruction set"),
                err);
    bl_json_put(&st, r, "reference", ref ? ref : bl_json_null(), err);
    ref = NULL;
    bl_json_put(&st, r, "warmups", o.warmups ? o.warmups : bl_json_array(), err);
    bl_json_put(&st, r, "samples", o.samples ? o.samples : bl_json_array(), err);
    o.warmups = o.samples = NULL;
    bl_json_put(&st, r, "statistics", stats ? stats : bl_json_null(), err);
    stats = NULL;
    bl_json_put(&st, r, "peak_rss", bl_measure_peak_rss(), err);
    if (st != BL_OK)
        goto fail;
    close_bench(&b);
    bl_step_tape_clear(&tape);
    *receipt = r;
    return o.interrupted ? 130 : complete ? 0 : 1;

fail:
    close_bench(&b);
    bl_step_tape_clear(&tape);
    bl_json_destroy(r);
    bl_json_destroy(model);
    bl_json_destroy(paths);
    bl_json_destroy(stats);
    bl_json_destroy(ref);
    bl_json_destroy(o.reference);
    bl_json_destroy(o.warmups);
    bl_json_destroy(o.samples);
    bl_json_destroy(o.streams);
    return 1;
}
