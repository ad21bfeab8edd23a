/* The tapes of the isolated stepping benchmark (stepping_internal.h).
 *
 * A record tape is rebuilt from what a closed-loop run recorded: each
 * chosen trial's replay holds, per tick, the task's raw observations (before
 * gain, permutation and blinding, spec/platform.md §4.12) and the model's
 * activity. The runner's transform is applied here, once, exactly as
 * src/run/trial.c applies it per frame (in the dtype's arithmetic); the
 * drive noise is regenerated from the trial's drive seed (a tape's row k
 * does not depend on its tiling, spec/models.md §6.4); the wiring is
 * constructed from the trial's construction seed with the record's
 * resolved plan. Stepping the tape through that model gives the recorded
 * activity bit for bit (the worker checks it on its reference pass; the
 * tests check it on their own). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/records.h"
#include "brainlesslab/rng.h"
#include "brainlesslab/task.h"
#include "measure_internal.h"
#include "profile_internal.h"
#include "stepping_internal.h"

/* A record's request.toml is small; the cap only refuses a damaged one. */
#define PLAN_FILE_MAX ((size_t)16 << 20)

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory for the stepping tape");
}

/* p resized to n items of `size` bytes (NULL on overflow or failure, p
 * then untouched). */
static void *resize(void *p, size_t n, size_t size)
{
    size_t bytes;
    return bl_size_mul(n, size, &bytes) ? bl_realloc(p, bytes) : NULL;
}

void bl_step_tape_clear(bl_step_tape *t)
{
    for (size_t k = 0; k < t->nwirings; k++) {
        if (t->fal)
            bl_falandays_init_destroy(t->fal[k]);
        if (t->sorn)
            bl_sorn_init_destroy(t->sorn[k]);
    }
    for (size_t s = 0; t->streams && s < t->nstreams; s++) {
        bl_free(t->streams[s].inputs);
        bl_free(t->streams[s].noise);
        bl_free(t->streams[s].activity);
    }
    bl_free(t->fal);
    bl_free(t->sorn);
    bl_free(t->streams);
    bl_json_destroy(t->describe);
    memset(t, 0, sizeof *t);
}

/* Room for one more wiring (its initial state is filled in by the caller). */
static bl_status add_wiring(bl_step_tape *t, bl_error *err)
{
    const size_t k = t->nwirings;
    if (t->kind == BL_MODEL_FALANDAYS) {
        bl_falandays_init **p = resize(t->fal, k + 1, sizeof *p);
        if (!p)
            return nomem(err);
        p[k] = NULL;
        t->fal = p;
    } else {
        bl_sorn_init **p = resize(t->sorn, k + 1, sizeof *p);
        if (!p)
            return nomem(err);
        p[k] = NULL;
        t->sorn = p;
    }
    t->nwirings++;
    return BL_OK;
}

/* Wiring k constructed from `seed` with target spec `spec` (src/run/batch.c
 * constructs the same way). */
static bl_status construct(bl_step_tape *t, size_t k, const bl_target_spec *spec,
                           const bl_seed *seed, bl_error *err)
{
    bl_gen g;
    bl_gen_init(&g, seed);
    if (t->kind == BL_MODEL_FALANDAYS)
        return bl_falandays_construct(&spec->falandays, t->n, t->r, t->e, &g, &t->fal[k], err);
    return bl_sorn_construct(&spec->sorn, t->n, t->r, t->e, &g, &t->sorn[k], err);
}

static bl_step_stream *add_stream(bl_step_tape *t, bl_error *err)
{
    bl_step_stream *p = resize(t->streams, t->nstreams + 1, sizeof *p);
    if (!p) {
        nomem(err);
        return NULL;
    }
    t->streams = p;
    memset(&p[t->nstreams], 0, sizeof *p);
    return &p[t->nstreams++];
}

/* The tape's shape from a target spec. */
static void shape_from(bl_step_tape *t, const bl_target_spec *spec, bl_dtype dtype)
{
    t->kind = spec->model;
    t->node = spec->model == BL_MODEL_FALANDAYS ? "falandays" : "sorn";
    t->dtype = dtype;
    t->n = (size_t)spec->nodes;
    t->r = (size_t)spec->n_inputs;
    t->e = (size_t)spec->n_effectors;
}

/* ---- the synthetic tape ------------------------------------------------------ */

typedef enum dist_kind { DIST_UNIFORM, DIST_BERNOULLI, DIST_NORMAL } dist_kind;

/* "uniform", "bernoulli:P" (0 <= P <= 1) or "normal:SD" (SD >= 0, finite). */
static bool parse_dist(const char *text, dist_kind *kind, double *param)
{
    *param = 0;
    if (strcmp(text, "uniform") == 0) {
        *kind = DIST_UNIFORM;
        return true;
    }
    const char *colon = strchr(text, ':');
    if (!colon || !colon[1])
        return false;
    char *end;
    *param = strtod(colon + 1, &end);
    if (*end || !isfinite(*param))
        return false;
    if ((size_t)(colon - text) == 9 && strncmp(text, "bernoulli", 9) == 0) {
        *kind = DIST_BERNOULLI;
        return *param >= 0 && *param <= 1;
    }
    if ((size_t)(colon - text) == 6 && strncmp(text, "normal", 6) == 0) {
        *kind = DIST_NORMAL;
        return *param >= 0;
    }
    return false;
}

bool bl_step_dist_valid(const char *text)
{
    dist_kind k;
    double p;
    return parse_dist(text, &k, &p);
}

/* Row-major values of `count` doubles cast to the dtype into dst. */
static void store(bl_dtype dtype, const double *src, size_t count, void *dst)
{
    if (dtype == BL_FLOAT32)
        for (size_t i = 0; i < count; i++)
            ((float *)dst)[i] = (float)src[i];
    else
        memcpy(dst, src, count * sizeof *src);
}

/* The runner's input transform of one frame (src/run/trial.c TRANSFORM):
 * x[r] = (shuffled ? in[perm[r]] : in[r]) · (blind ? 0 : 1) · gain, in the
 * dtype's arithmetic. `in` holds the raw observations already in the dtype. */
#define TRANSFORM(real_t)                                                      \
    do {                                                                       \
        const real_t *in_ = in;                                                \
        real_t *x_ = out;                                                      \
        const real_t gain_ = (real_t)gain;                                     \
        for (size_t r_ = 0; r_ < nr; r_++) {                                   \
            real_t v_ = perm ? in_[perm[r_]] : in_[r_];                        \
            if (blind)                                                         \
                v_ = v_ * (real_t)0;                                           \
            x_[r_] = v_ * gain_;                                               \
        }                                                                      \
    } while (0)

static void transform(bl_dtype dtype, const void *in, size_t nr, const int64_t *perm, bool blind,
                      double gain, void *out)
{
    if (dtype == BL_FLOAT32)
        TRANSFORM(float);
    else
        TRANSFORM(double);
}

/* --tape-inputs from --tape-seed: Generator(Philox(SeedSequence(seed)))
 * draws frames × R values row by row (uniform: random(); bernoulli:P:
 * random() < P as 0/1; normal:SD: SD · standard_normal()); the model is the
 * workload's block-0 wiring (its construction seed follows --seed, as in
 * `profile`), and every slot steps this one stream. */
static bl_status synthetic(const bl_profile_args *a, bl_step_tape *t, bl_error *err)
{
    dist_kind kind;
    double param;
    if (!parse_dist(a->tape_inputs, &kind, &param))
        return bl_fail(err, BL_EUSAGE, "argument --tape-inputs: invalid value: '%s'",
                       a->tape_inputs);
    bl_profile_workload w = {0};
    bl_status st = bl_profile_workload_build(a, &w, err);
    if (st != BL_OK)
        return st;
    const bl_target_spec *spec = bl_resolved_target_spec(w.resolved, 0);
    shape_from(t, spec, bl_resolved_evaluation(w.resolved)->dtype);
    bl_seed cseed;
    st = bl_plan_construction_seed(w.resolved, 0, 0, 0, &cseed, err);
    if (st == BL_OK)
        st = add_wiring(t, err);
    if (st == BL_OK)
        st = construct(t, 0, spec, &cseed, err);
    bl_step_stream *s = st == BL_OK ? add_stream(t, err) : NULL;
    const size_t frames = (size_t)a->frames, vsize = bl_dtype_size(t->dtype);
    double *row = s ? bl_mallocarray(t->r, sizeof *row) : NULL;
    void *raw = s ? bl_malloc(t->r * vsize) : NULL;
    if (s && !(s->inputs = bl_mallocarray(frames, t->r * vsize)))
        st = nomem(err);
    if (st == BL_OK && (!row || !raw))
        st = nomem(err);
    if (st == BL_OK) {
        snprintf(s->key, sizeof s->key, "synthetic");
        s->frames = frames;
        bl_gen g;
        const bl_seed seed = bl_seed_from_u64((uint64_t)a->tape_seed);
        bl_gen_init(&g, &seed);
        for (size_t f = 0; f < frames; f++) {
            for (size_t r = 0; r < t->r; r++) {
                const double u = kind == DIST_NORMAL ? bl_gen_standard_normal(&g)
                                                     : bl_gen_random(&g);
                row[r] = kind == DIST_UNIFORM ? u
                         : kind == DIST_BERNOULLI ? (u < param ? 1.0 : 0.0)
                                                  : param * u;
            }
            store(t->dtype, row, t->r, raw);
            transform(t->dtype, raw, t->r, NULL, false, spec->input_gain,
                      (char *)s->inputs + f * t->r * vsize);
        }
    }
    bl_json *d = bl_json_object();
    bl_json_put(&st, d, "source", bl_json_string("synthetic"), err);
    bl_json_put(&st, d, "seed", bl_json_int(a->tape_seed), err);
    bl_json_put(&st, d, "inputs", bl_json_string(a->tape_inputs), err);
    bl_json_put(&st, d, "generator",
                bl_json_string("Generator(Philox(SeedSequence(seed))): frames x receptors "
                               "values, row by row"),
                err);
    bl_json_put(&st, d, "model_root_seed", bl_json_int(a->seed), err);
    bl_json_put(&st, d, "task_ports", bl_json_string(a->task), err);
    bl_json_put(&st, d, "input_gain", bl_json_real(spec->input_gain), err);
    bl_json_put(&st, d, "noise", bl_json_string("none: the model does not read noise"), err);
    bl_json_put(&st, d, "frames", bl_json_int((int64_t)frames), err);
    st = bl_json_hand_over(st, d, &t->describe);
    bl_free(row);
    bl_free(raw);
    bl_profile_workload_destroy(&w);
    return st;
}

/* ---- the record tape ------------------------------------------------------------ */

/* A JSON number as a double (replay arrays hold reals; an integer is read
 * as its value). */
static bool number(const bl_json *v, double *out)
{
    if (v && bl_json_kindof(v) == BL_JSON_REAL) {
        *out = bl_json_get_real(v);
        return true;
    }
    if (v && bl_json_kindof(v) == BL_JSON_INT) {
        *out = (double)bl_json_get_int(v);
        return true;
    }
    return false;
}

/* An array of exactly `count` numbers into out[]. */
static bool numbers(const bl_json *v, size_t count, double *out)
{
    if (!bl_json_if(v, BL_JSON_ARRAY) || bl_json_size(v) != count)
        return false;
    for (size_t i = 0; i < count; i++)
        if (!number(bl_json_at(v, i), &out[i]))
            return false;
    return true;
}

/* What a record tape reads once: the record's inventory and its plan. */
typedef struct record_ctx {
    const bl_profile_args *a;
    const char *path;
    bl_json *map;                  /* bl_record_inspect */
    bl_plan *plan;
    bl_resolved_plan *resolved;
    size_t target;                 /* the chosen trials' target */
    bool have_target;
    bl_seed *wiring_seeds;         /* [t->nwirings] */
} record_ctx;

/* err's message behind "--tape-record <path>: ", keeping its status. */
static bl_status about_record(const record_ctx *c, bl_error *err)
{
    char msg[BL_ERROR_MAX];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return bl_fail(err, err->status, "--tape-record %s: %s", c->path, msg);
}

/* The record must be complete; its plan is read (checksum verified once
 * more) and resolved. */
static bl_status open_record(record_ctx *c, bl_error *err)
{
    bl_status st = bl_record_inspect(c->path, &c->map, err);
    if (st != BL_OK)
        return st;
    if (!bl_json_get_bool(bl_json_get(c->map, "complete")))
        return bl_fail(err, BL_EVALUE, "the record is not complete (status: %s)",
                       bl_json_get_string(bl_json_get(c->map, "status"), NULL));
    const bl_json *hashes = bl_json_field(bl_json_field(c->map, "manifest"), "artifact_sha256");
    const char *want = bl_json_string_field(hashes, "request.toml");
    if (!want)
        return bl_fail(err, BL_EVALUE, "the record holds no request.toml");
    char *text = NULL;
    size_t len = 0;
    bl_json *doc = NULL;
    st = bl_record_artifact_read(c->path, "request.toml", want, PLAN_FILE_MAX, "plan", &text,
                                 &len, err);
    if (st == BL_OK)
        st = bl_toml_parse(text, len, "request.toml", &doc, err);
    if (st == BL_OK)
        st = bl_plan_from_document(doc, &c->plan, err);
    if (st == BL_OK)
        st = bl_plan_resolve(c->plan, &c->resolved, err);
    bl_json_destroy(doc);
    bl_free(text);
    return st;
}

/* Whether the record lists any replay document (record.c names them
 * replays/trial_<n>.json). */
static size_t count_replays(const record_ctx *c)
{
    const bl_json *hashes = bl_json_if(bl_json_field(bl_json_field(c->map, "manifest"), "artifact_sha256"),
                                    BL_JSON_OBJECT);
    size_t n = 0;
    for (size_t i = 0; hashes && i < bl_json_size(hashes); i++)
        n += strncmp(bl_json_key_at(hashes, i, NULL), "replays/", 8) == 0;
    return n;
}

static size_t target_index(const bl_resolved_plan *r, const char *id)
{
    for (size_t i = 0; id && i < bl_resolved_target_count(r); i++)
        if (strcmp(bl_resolved_target_spec(r, i)->id, id) == 0)
            return i;
    return (size_t)-1;
}

/* The recorded seed of `stream` ("construction", "drive", "input_shuffle"). */
static bl_status recorded_seed(const bl_json *trial, const char *stream, const char *key,
                               bl_seed *out, bl_error *err)
{
    const char *hex = bl_json_string_field(bl_json_field(trial, "seeds"), stream);
    if (!hex)
        return bl_fail(err, BL_EVALUE, "trial %s: the replay records no %s seed", key, stream);
    return bl_seed_from_hex(hex, out, err);
}

/* The target's checks: the tape can replay what the runner did only for a
 * reservoir, one neural frame per tick (a replay holds one input vector a
 * tick; CartPole encodes 24 different frames), and interventions that touch
 * the inputs alone (a freeze changes the model mid-trial, and the benchmark
 * cycles its tape from one state). */
static bl_status check_target(const bl_target_spec *spec, const char *key, bl_error *err)
{
    if (!spec->reservoir)
        return bl_fail(err, BL_EVALUE, "trial %s has no reservoir (controller %s)", key,
                       spec->controller);
    if (spec->neural_frames != 1)
        return bl_fail(err, BL_EVALUE,
                       "trial %s: its task steps %lld neural frames a tick and a replay holds "
                       "one input vector a tick, so its frames cannot be rebuilt",
                       key, (long long)spec->neural_frames);
    for (size_t i = 0; i < spec->ninterventions; i++) {
        const bl_intervention_verb v = spec->interventions[i].verb;
        if (v != BL_BLIND_INPUT && v != BL_SHUFFLE_INPUT)
            return bl_fail(err, BL_EVALUE,
                           "trial %s: its target freezes plasticity at tick %lld; the isolated "
                           "benchmark replays trials whose interventions touch only the inputs",
                           key, (long long)spec->interventions[i].tick);
    }
    return BL_OK;
}

/* Whether an intervention of `verb` has taken effect by (one-based) tick. */
static bool intervened(const bl_target_spec *spec, bl_intervention_verb verb, int64_t tick)
{
    for (size_t i = 0; i < spec->ninterventions; i++)
        if (spec->interventions[i].verb == verb && spec->interventions[i].tick >= 1 &&
            spec->interventions[i].tick <= tick)
            return true;
    return false;
}

/* The flags that the record's plan decides must agree with the command
 * line when given. */
static bl_status check_flags(const record_ctx *c, const bl_target_spec *spec, bl_dtype dtype,
                             bl_error *err)
{
    const bl_profile_args *a = c->a;
    if (a->node_given && strcmp(a->node, spec->node) != 0)
        return bl_fail(err, BL_EVALUE,
                       "--node %s conflicts with the record's model (%s): the record's plan "
                       "decides it",
                       a->node, spec->node);
    if (a->count_given && a->count != spec->nodes)
        return bl_fail(err, BL_EVALUE,
                       "--count %lld conflicts with the record's model (%lld nodes): the "
                       "record's plan decides it",
                       (long long)a->count, (long long)spec->nodes);
    if (a->dtype && strcmp(a->dtype, bl_dtype_name(dtype)) != 0)
        return bl_fail(err, BL_EVALUE,
                       "--dtype %s conflicts with the record's numerics (%s): the record's "
                       "plan decides it",
                       a->dtype, bl_dtype_name(dtype));
    return BL_OK;
}

/* The wiring of (target, construction seed), constructed on first use. */
static bl_status wiring_of(record_ctx *c, bl_step_tape *t, const bl_target_spec *spec,
                           const bl_seed *seed, size_t *out, bl_error *err)
{
    for (size_t k = 0; k < t->nwirings; k++)
        if (memcmp(&c->wiring_seeds[k], seed, sizeof *seed) == 0) {
            *out = k;
            return BL_OK;
        }
    bl_seed *p = resize(c->wiring_seeds, t->nwirings + 1, sizeof *p);
    if (!p)
        return nomem(err);
    c->wiring_seeds = p;
    p[t->nwirings] = *seed;
    bl_status st = add_wiring(t, err);
    if (st == BL_OK)
        st = construct(t, t->nwirings - 1, spec, seed, err);
    *out = t->nwirings - 1;
    return st;
}

/* The rows of one replayed trial: transformed inputs, regenerated noise,
 * recorded activity. */
static bl_status fill_stream(const bl_step_tape *t, const bl_target_spec *spec,
                             const bl_json *trial, const bl_json *frames, bl_step_stream *s,
                             bl_error *err)
{
    const size_t L = bl_json_size(frames), vsize = bl_dtype_size(t->dtype);
    const bool noisy = t->kind == BL_MODEL_FALANDAYS && spec->falandays.drive == BL_DRIVE_OOSAWA;
    s->frames = L;
    s->inputs = bl_mallocarray(L, t->r * vsize);
    s->activity = bl_mallocarray(L, t->n * sizeof *s->activity);
    s->noise = noisy ? bl_mallocarray(L, t->n * vsize) : NULL;
    double *raw = bl_mallocarray(t->r, sizeof *raw);
    void *in = bl_malloc(t->r * vsize);
    int64_t *perm = spec->shuffle ? bl_mallocarray(t->r, sizeof *perm) : NULL;
    bl_tape *tape = NULL;
    bl_status st = !s->inputs || !s->activity || (noisy && !s->noise) || !raw || !in ||
                           (spec->shuffle && !perm)
                       ? nomem(err)
                       : BL_OK;
    if (st == BL_OK && spec->shuffle) {
        bl_seed seed;
        st = recorded_seed(trial, "input_shuffle", s->key, &seed, err);
        if (st == BL_OK) {
            bl_gen g;
            bl_gen_init(&g, &seed);
            bl_gen_permutation(&g, perm, t->r);
        }
    }
    for (size_t j = 0; j < L && st == BL_OK; j++) {
        const bl_json *f = bl_json_at(frames, j);
        const bl_json *tick = bl_json_if(bl_json_field(f, "tick"), BL_JSON_INT);
        if (!tick || bl_json_get_int(tick) != (int64_t)j + 1)
            st = bl_fail(err, BL_EVALUE,
                         "trial %s: replay frame %zu is not tick %zu (the frames must be the "
                         "trial's ticks from the first)",
                         s->key, j, j + 1);
        else if (!numbers(bl_json_field(f, "inputs"), t->r, raw) ||
                 !numbers(bl_json_field(f, "activity"), t->n, s->activity + j * t->n))
            st = bl_fail(err, BL_EVALUE,
                         "trial %s: replay frame %zu does not hold %zu inputs and %zu activity "
                         "values",
                         s->key, j, t->r, t->n);
        if (st != BL_OK)
            break;
        store(t->dtype, raw, t->r, in);
        const int64_t tk = (int64_t)j + 1;
        transform(t->dtype, in, t->r, intervened(spec, BL_SHUFFLE_INPUT, tk) ? perm : NULL,
                  intervened(spec, BL_BLIND_INPUT, tk), spec->input_gain,
                  (char *)s->inputs + j * t->r * vsize);
    }
    if (st == BL_OK && noisy) {
        bl_seed seed;
        const double *rows = NULL;
        st = recorded_seed(trial, "drive", s->key, &seed, err);
        if (st == BL_OK)
            st = bl_tape_create(&tape, &seed, t->n, L, BL_TAPE_NORMAL, err);
        if (st == BL_OK)
            st = bl_tape_preview(tape, L, &rows, err);
        if (st == BL_OK)
            store(t->dtype, rows, L * t->n, s->noise);
    }
    bl_tape_destroy(tape);
    bl_free(raw);
    bl_free(in);
    bl_free(perm);
    return st;
}

/* One chosen trial: its replay document (read and checked by
 * bl_replay_record_text), its target, seeds, wiring and rows. */
static bl_status add_trial(record_ctx *c, bl_step_tape *t, const char *key, bl_error *err)
{
    bl_buf text;
    bl_buf_init(&text);
    bl_json *doc = NULL;
    bl_status st = bl_replay_record_text(c->path, key, &text, err);
    if (st == BL_OK)
        st = bl_json_parse(text.data, text.len, "replay", &doc, err);
    bl_buf_clear(&text);
    const bl_json *prov = bl_json_field(doc, "provenance");
    const bl_json *trial = bl_json_field(prov, "trial");
    const char *own = bl_json_string_field(doc, "trial_key");
    const size_t i = st == BL_OK ? target_index(c->resolved, bl_json_string_field(trial, "target_id"))
                                 : (size_t)-1;
    if (st == BL_OK && i == (size_t)-1)
        st = bl_fail(err, BL_EVALUE, "trial %s: its target is not in the record's plan", own);
    if (st == BL_OK && !bl_measure_equal(bl_json_string_field(prov, "contract_hash"),
                                         bl_resolved_contract_hash(c->resolved)))
        st = bl_fail(err, BL_EVALUE,
                     "trial %s: the replay's contract hash is not the record's plan's", own);
    const bl_target_spec *spec = st == BL_OK ? bl_resolved_target_spec(c->resolved, i) : NULL;
    if (st == BL_OK)
        st = check_target(spec, own, err);
    if (st == BL_OK && c->have_target && i != c->target)
        st = bl_fail(err, BL_EVALUE,
                     "--tape-trials: every trial must belong to one target (%s is of %s, the "
                     "first of %s)",
                     own, spec->id, bl_resolved_target_spec(c->resolved, c->target)->id);
    if (st == BL_OK && !c->have_target) {
        const bl_dtype dtype = bl_resolved_evaluation(c->resolved)->dtype;
        if ((st = check_flags(c, spec, dtype, err)) != BL_OK)
            goto done;
        shape_from(t, spec, dtype);
        c->target = i;
        c->have_target = true;
    }
    /* The construction seed the plan gives this trial must be the one the
     * record says it used: otherwise the record is not this plan's run. */
    const bl_json *block = bl_json_if(bl_json_field(trial, "block_id"), BL_JSON_INT);
    const bl_json *tid = bl_json_if(bl_json_field(trial, "trial_id"), BL_JSON_INT);
    bl_seed planned, recorded;
    if (st == BL_OK && !(block && tid))
        st = bl_fail(err, BL_EVALUE, "trial %s: the replay names no block and trial", own);
    if (st == BL_OK)
        st = bl_plan_construction_seed(c->resolved, i, bl_json_get_int(block),
                                       bl_json_get_int(tid), &planned, err);
    if (st == BL_OK)
        st = recorded_seed(trial, "construction", own, &recorded, err);
    if (st == BL_OK && memcmp(&planned, &recorded, sizeof planned) != 0)
        st = bl_fail(err, BL_EVALUE,
                     "trial %s: its recorded construction seed is not the plan's", own);
    bl_step_stream *s = st == BL_OK ? add_stream(t, err) : NULL;
    if (s) {
        snprintf(s->key, sizeof s->key, "%s", own);
        st = wiring_of(c, t, spec, &planned, &s->wiring, err);
        if (st == BL_OK)
            st = fill_stream(t, spec, trial, bl_json_field(doc, "frames"), s, err);
    } else if (st == BL_OK) {
        st = BL_ENOMEM;
    }
done:
    bl_json_destroy(doc);
    return st;
}

/* The receipt's description of a record tape. */
static bl_status describe_record(const record_ctx *c, bl_step_tape *t, bl_error *err)
{
    bl_status st = BL_OK;
    const bl_target_spec *spec = bl_resolved_target_spec(c->resolved, c->target);
    bl_json *d = bl_json_object(), *trials = bl_json_array();
    bl_json_put(&st, d, "source", bl_json_string("record"), err);
    bl_json_put(&st, d, "record", bl_json_string(c->path), err);
    bl_json_put(&st, d, "contract_hash",
                bl_json_string(bl_resolved_contract_hash(c->resolved)), err);
    bl_json_put(&st, d, "target_id", bl_json_string(spec->id), err);
    bl_json_put(&st, d, "task", bl_json_string(bl_task_name(spec->task_options.kind)), err);
    bl_json_put(&st, d, "input_gain", bl_json_real(spec->input_gain), err);
    bl_json_put(&st, d, "noise",
                bl_json_string(t->streams[0].noise
                                   ? "the trials' drive tapes (standard normals), regenerated "
                                     "from their drive seeds"
                                   : "none: the model does not read noise"),
                err);
    for (size_t s = 0; s < t->nstreams; s++) {
        bl_json *o = bl_json_object();
        bl_json_put(&st, o, "trial_key", bl_json_string(t->streams[s].key), err);
        bl_json_put(&st, o, "frames", bl_json_int((int64_t)t->streams[s].frames), err);
        bl_json_put(&st, o, "wiring", bl_json_int((int64_t)t->streams[s].wiring), err);
        bl_json_push(&st, trials, o, err);
    }
    bl_json_put(&st, d, "trials", trials, err);
    bl_json_put(&st, d, "cycled",
                bl_json_string("each slot steps its trial's frames again from the first once "
                               "they run out; the recorded activity is compared over the "
                               "first pass"),
                err);
    return bl_json_hand_over(st, d, &t->describe);
}

static bl_status record_tape(const bl_profile_args *a, bl_step_tape *t, bl_error *err)
{
    record_ctx c = {.a = a, .path = a->tape_record};
    bl_status st = open_record(&c, err);
    if (st == BL_OK && count_replays(&c) == 0)
        st = bl_fail(err, BL_EVALUE, "the record holds no replays (record it with --recording "
                                     "replay)");
    const size_t nreplays = st == BL_OK ? count_replays(&c) : 0;
    if (st == BL_OK && !a->tape_trials && nreplays > 1)
        st = bl_fail(err, BL_EVALUE,
                     "the record holds %zu replays: choose the trials with --tape-trials "
                     "KEY[,KEY...]",
                     nreplays);
    if (st == BL_OK && !a->tape_trials)
        st = add_trial(&c, t, NULL, err);
    /* The keys, comma-separated; a key itself holds no comma (target ids
     * are plain names). */
    for (const char *p = a->tape_trials; p && st == BL_OK;) {
        const char *comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char key[256];
        if (len == 0 || len >= sizeof key) {
            st = bl_fail(err, BL_EKEY, "unknown replay trial_key");
            break;
        }
        memcpy(key, p, len);
        key[len] = 0;
        for (size_t s = 0; s < t->nstreams && st == BL_OK; s++)
            if (strcmp(t->streams[s].key, key) == 0)
                st = bl_fail(err, BL_EVALUE, "--tape-trials names %s twice", key);
        if (st == BL_OK)
            st = add_trial(&c, t, key, err);
        p = comma ? comma + 1 : NULL;
    }
    if (st == BL_OK)
        st = describe_record(&c, t, err);
    if (st != BL_OK && st != BL_EUSAGE && st != BL_ENOMEM)
        st = about_record(&c, err);
    bl_free(c.wiring_seeds);
    bl_resolved_plan_destroy(c.resolved);
    bl_plan_destroy(c.plan);
    bl_json_destroy(c.map);
    return st;
}

bl_status bl_step_tape_build(const bl_profile_args *a, bl_step_tape *t, bl_error *err)
{
    memset(t, 0, sizeof *t);
    bl_status st = a->tape_record ? record_tape(a, t, err) : synthetic(a, t, err);
    if (st != BL_OK)
        bl_step_tape_clear(t);
    return st;
}
