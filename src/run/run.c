/* The evaluation runner (spec/platform.md §4, spec/tasks.md §1.4): job
 * enumeration, seeds, preflight, cohorts, batches and trial-major
 * execution.
 *
 * A batch (a cohort slice of at most the admitted capacity) is prepared
 * first: every slot's seeds and world, then every distinct wiring of the
 * batch, constructed once. Then each slot runs its whole trial on one
 * thread, with a model batch and a world cohort of its own, so its weights
 * stay in cache from its first frame to its last. Nothing a slot computes
 * depends on its neighbours: every stream is keyed by the job's scientific
 * identity, the noise a slot receives is row k of its own tape for its k-th
 * executed frame, and the null's uniforms are its own control stream. So
 * batch size, thread count and tile size change no bit of any row; the tile
 * size only decides how many noise frames are drawn ahead. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/model.h"
#include "brainlesslab/rng.h"
#include "brainlesslab/run.h"
#include "brainlesslab/task.h"

/* ---- targets ------------------------------------------------------------ */

typedef enum verb { V_FREEZE_WEIGHTS, V_FREEZE_PLASTICITY, V_BLIND, V_SHUFFLE } verb;

typedef struct intervention {
    int64_t tick;
    verb verb;
} intervention;

typedef struct target {
    const char *id;
    const char *pairing_key, *mechanism_key;
    bool reservoir;
    bl_policy policy;            /* direct controllers */
    bl_model_kind node;
    const char *node_name;
    int64_t count, n_inputs, n_effectors, frames, horizon, excitatory;
    double input_gain;
    const char *outcome_key;
    bl_task_options options;
    bl_falandays_config fcfg;    /* input_link_p points to input_link_p below */
    double *input_link_p;        /* owned (bl_resolved_model_config), or NULL */
    bl_sorn_config scfg;
    intervention *ivs;
    size_t nivs;
    bool shuffle;                /* has a shuffle_input intervention */
    size_t cohort;
} target;

typedef struct cohort {
    size_t first_target;         /* the key's representative */
    int64_t horizon;             /* longest horizon of its targets */
    int64_t trial_bytes;
    int64_t capacity;
    size_t *jobs;
    size_t njobs;
} cohort;

typedef struct run_ctx {
    const bl_resolved_plan *plan;
    const bl_execution *x;
    const bl_run_hooks *hooks;
    int64_t root_seed, blocks, trials, warmup;
    const char *partition;
    bl_dtype dtype;
    size_t ntargets;
    target *targets;
    size_t njobs;
    size_t ncohorts;
    cohort *cohorts;
    int64_t recording_bytes;
    /* The wirings the last batch constructed (struct wiring, below), kept
     * for the next batch: consecutive batches usually share a block's
     * wiring, and construction at large N costs more than a short trial. */
    struct wiring *carry;
    size_t ncarry;
} run_ctx;

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory for an evaluation");
}

static double number(const bl_json *v)
{
    return bl_json_kindof(v) == BL_JSON_INT ? (double)bl_json_get_int(v) : bl_json_get_real(v);
}

static bool is_episodic(bl_task_kind k)
{
    return k != BL_TASK_TRACKING && k != BL_TASK_PONG && k != BL_TASK_CARTPOLE_PLANK_EASY;
}

static bool is_decodable(bl_task_kind k)
{
    return is_episodic(k) && k != BL_TASK_REVERSAL_ADAPTATION;
}

static int iv_cmp(const void *a, const void *b)
{
    const intervention *x = a, *y = b;
    if (x->tick != y->tick)
        return x->tick < y->tick ? -1 : 1;
    return (int)x->verb - (int)y->verb;
}

static bl_status load_target(const bl_resolved_plan *plan, size_t i, target *t, bl_error *err)
{
    const bl_json *rt = bl_resolved_target(plan, i);
    const bl_json *tg = bl_plan_member(rt, "target");
    const bl_json *comp = bl_plan_member(tg, "composition");
    const bl_json *node = bl_plan_member(comp, "node");
    const bl_json *task = bl_plan_member(comp, "task");
    t->id = bl_plan_string(tg, "id");
    t->pairing_key = bl_plan_string(tg, "pairing_key");
    t->mechanism_key = bl_plan_string(tg, "mechanism_key");
    const char *controller = bl_plan_string(tg, "controller");
    t->reservoir = strcmp(controller, "reservoir") == 0;
    bl_status st = BL_OK;
    if (!t->reservoir && (st = bl_policy_from_name(controller, &t->policy, err)) != BL_OK)
        return st;
    t->node_name = bl_plan_string(node, "kind");
    t->count = bl_plan_int(comp, "count");
    t->input_gain = number(bl_plan_member(comp, "input_gain"));
    t->n_inputs = bl_plan_int(rt, "n_inputs");
    t->n_effectors = bl_plan_int(rt, "n_effectors");
    t->frames = bl_plan_int(rt, "neural_frames");
    t->horizon = bl_plan_int(rt, "horizon");
    bl_task_kind kind;
    if ((st = bl_task_from_name(bl_plan_string(task, "kind"), &kind, err)) != BL_OK ||
        (st = bl_task_options_resolve(kind, bl_plan_member(rt, "task_options"), &t->options, err)) !=
            BL_OK)
        return st;
    bl_task_definition def;
    bl_task_define(&t->options, &def);
    t->outcome_key = def.outcome_key;
    if ((st = bl_resolved_model_config(plan, i, &t->node, &t->fcfg, &t->scfg,
                                       &t->input_link_p, err)) != BL_OK)
        return st;
    t->excitatory = t->node == BL_MODEL_SORN
                        ? (int64_t)bl_sorn_excitatory_count(t->scfg.inhibitory_fraction,
                                                            (size_t)t->count)
                        : t->count;

    const bl_json *ivs = bl_plan_member(tg, "interventions");
    t->nivs = bl_json_size(ivs);
    if (t->nivs) {
        t->ivs = bl_mallocarray(t->nivs, sizeof *t->ivs);
        if (!t->ivs)
            return nomem(err);
    }
    for (size_t k = 0; k < t->nivs; k++) {
        const bl_json *iv = bl_json_at(ivs, k);
        const char *v = bl_plan_string(iv, "verb");
        t->ivs[k].tick = bl_plan_int(iv, "tick");
        t->ivs[k].verb = strcmp(v, "freeze_weights") == 0      ? V_FREEZE_WEIGHTS
                         : strcmp(v, "freeze_plasticity") == 0 ? V_FREEZE_PLASTICITY
                         : strcmp(v, "blind_input") == 0       ? V_BLIND
                                                               : V_SHUFFLE;
        if (t->ivs[k].verb == V_SHUFFLE)
            t->shuffle = true;
    }
    if (t->nivs)
        qsort(t->ivs, t->nivs, sizeof *t->ivs, iv_cmp);
    return BL_OK;
}

static void free_targets(run_ctx *c)
{
    for (size_t i = 0; c->targets && i < c->ntargets; i++) {
        bl_task_options_clear(&c->targets[i].options);
        bl_free(c->targets[i].input_link_p);
        bl_free(c->targets[i].ivs);
    }
    bl_free(c->targets);
    for (size_t k = 0; c->cohorts && k < c->ncohorts; k++)
        bl_free(c->cohorts[k].jobs);
    bl_free(c->cohorts);
}

/* §4.7 cohort key. */
static bool same_cohort(const target *a, const target *b)
{
    return a->options.kind == b->options.kind && a->reservoir == b->reservoir &&
           (a->reservoir || a->policy == b->policy) && strcmp(a->node_name, b->node_name) == 0 &&
           a->count == b->count && a->n_inputs == b->n_inputs &&
           a->n_effectors == b->n_effectors && a->frames == b->frames &&
           a->excitatory == b->excitatory;
}

/* ---- sizes (§4.5, §4.6) --------------------------------------------------- */

/* Saturating arithmetic on non-negative estimates: one that does not fit
 * is simply too big, and INT64_MAX is then a true "at least". */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/* "<v>", or "more than <v>" when v saturated, for a message. */
static const char *bytes_text(int64_t v, char buf[48])
{
    snprintf(buf, 48, "%s%lld", v == INT64_MAX ? "more than " : "", (long long)v);
    return buf;
}

static int64_t target_bytes(const target *t, int64_t horizon, int64_t tile)
{
    const int64_t n = t->count, p = t->n_inputs;
    int64_t model = 0, world = 0, noise = 0;
    if (t->reservoir)
        model = sat_mul(64, sat_add(sat_add(sat_mul(n, n), sat_mul(n, p)), sat_mul(12, n)));
    if (t->options.kind == BL_TASK_PONG)
        world = sat_mul(sat_add(horizon, 1), 64);
    else if (is_episodic(t->options.kind))
        world = sat_mul(sat_add(horizon, 1), sat_mul(24, p));
    if (t->reservoir && t->node == BL_MODEL_FALANDAYS)
        noise = sat_mul(sat_mul(24, tile), n);
    return sat_add(sat_add(sat_add(model, world), sat_add(noise, sat_mul(128, p))), 65536);
}

/* What the whole run keeps per job, besides the batches of §4.6: the
 * result row, its place in the processing order and in its cohort's job
 * list, the probe capture when recording probe events (its feature values;
 * a replay's frames are what §4.5 charges to the recording budget), and
 * the rows of trials.csv and seeds.csv, which the record writer builds in
 * memory before it writes them. The last two constants are measured, not
 * derived: peak heap (valgrind massif) of `run` over 10 000 two-tick
 * trials, less the run's fixed heap, was 3209, 4310, 4933 and 6029 bytes
 * per trial with 1, 2, 2 and 3 seed streams (the oracle, the reference
 * null, SORN and Falandays; a wiring id adds its 64 hex digits to every
 * row); the constants bound each with a little to spare. docs/running.md
 * lists the figures. */
enum { RECORD_TRIAL_ROW_BYTES = 1536, RECORD_SEED_ROW_BYTES = 1408 };

static int64_t job_bytes(bool reservoir, bool falandays, bool null, bool shuffle, int64_t count,
                         const bl_execution *x)
{
    /* The seed streams of §4.9: world, then construction and drive, or
     * control, then input_shuffle. */
    const int64_t seeds = 1 + (reservoir ? 1 + falandays : null) + shuffle;
    int64_t b = (int64_t)(sizeof(bl_trial_result) + 2 * sizeof(size_t)) +
                RECORD_TRIAL_ROW_BYTES + seeds * RECORD_SEED_ROW_BYTES;
    if (x->recording == BL_RECORDING_PROBE_EVENTS)
        b = sat_add(b, sat_add((int64_t)sizeof(bl_probe_capture),
                               sat_mul(sat_mul(3, count), (int64_t)sizeof(double))));
    else if (x->recording == BL_RECORDING_REPLAY)
        b += (int64_t)sizeof(bl_json *);
    return b;
}

static int64_t target_job_bytes(const target *t, const bl_execution *x)
{
    return job_bytes(t->reservoir, t->node == BL_MODEL_FALANDAYS,
                     !t->reservoir && t->policy == BL_POLICY_REFERENCE_NULL, t->shuffle, t->count,
                     x);
}

int64_t bl_run_job_bytes(const bl_resolved_plan *plan, size_t i, const bl_execution *x)
{
    const bl_json *rt = bl_resolved_target(plan, i);
    const bl_json *tg = bl_plan_member(rt, "target");
    const bl_json *comp = bl_plan_member(tg, "composition");
    const char *controller = bl_plan_string(tg, "controller");
    const bool reservoir = strcmp(controller, "reservoir") == 0;
    bl_policy policy = BL_POLICY_ORACLE;
    if (!reservoir && bl_policy_from_name(controller, &policy, NULL) != BL_OK)
        return INT64_MAX;
    const bl_json *ivs = bl_plan_member(tg, "interventions");
    bool shuffle = false;
    for (size_t k = 0; k < bl_json_size(ivs); k++)
        shuffle = shuffle ||
                  strcmp(bl_plan_string(bl_json_at(ivs, k), "verb"), "shuffle_input") == 0;
    return job_bytes(reservoir,
                     strcmp(bl_plan_string(bl_plan_member(comp, "node"), "kind"), "falandays") == 0,
                     policy == BL_POLICY_REFERENCE_NULL, shuffle, bl_plan_int(comp, "count"), x);
}

/* The bytes every job keeps until the record is written must fit the
 * memory budget on their own. They are not deducted from the §4.6
 * allocation budget, so admitted batch capacities stay the reference's. */
static bl_status admit_jobs(const run_ctx *c, int64_t per_target, bl_error *err)
{
    int64_t total = 0, most = 0;
    for (size_t i = 0; i < c->ntargets; i++) {
        const int64_t b = target_job_bytes(&c->targets[i], c->x);
        most = b > most ? b : most;
        total = sat_add(total, sat_mul(b, per_target));
    }
    if (total <= c->x->memory_budget_bytes)
        return BL_OK;
    char need[48];
    return bl_fail(err, BL_ENOMEM,
                   "the %zu trial%s of this plan need%s an estimated %s bytes for results "
                   "until the record is written (%s%lld bytes per trial); memory budget is %lld "
                   "bytes; raise --memory-budget-mib or run fewer trials",
                   c->njobs, c->njobs == 1 ? "" : "s", c->njobs == 1 ? "s" : "",
                   bytes_text(total, need), c->ntargets > 1 ? "up to " : "",
                   (long long)most, (long long)c->x->memory_budget_bytes);
}

int64_t bl_trial_bytes(const bl_resolved_plan *plan, size_t i, int64_t horizon,
                       int64_t noise_tile_frames)
{
    target t;
    memset(&t, 0, sizeof t);
    const bl_json *rt = bl_resolved_target(plan, i);
    const bl_json *tg = bl_plan_member(rt, "target");
    const bl_json *comp = bl_plan_member(tg, "composition");
    t.reservoir = strcmp(bl_plan_string(tg, "controller"), "reservoir") == 0;
    t.node = strcmp(bl_plan_string(bl_plan_member(comp, "node"), "kind"), "falandays") == 0 ? BL_MODEL_FALANDAYS
                                                                         : BL_MODEL_SORN;
    t.count = bl_plan_int(comp, "count");
    t.n_inputs = bl_plan_int(rt, "n_inputs");
    if (bl_task_from_name(bl_plan_string(bl_plan_member(comp, "task"), "kind"), &t.options.kind, NULL) != BL_OK)
        return INT64_MAX;
    return target_bytes(&t, horizon, noise_tile_frames);
}

/* ---- preflight (§4.4 steps 2–6) ------------------------------------------ */

_Static_assert(SIZE_MAX >= INT64_MAX, "a job index is a size_t");

/* Steps 2–6; `jobs` also builds the cohorts' job lists, which only
 * execution needs (a refused plan may have more jobs than fit in memory). */
static bl_status prepare_ctx(run_ctx *c, const bl_resolved_plan *plan, const bl_execution *x,
                             bool jobs, bl_error *err)
{
    memset(c, 0, sizeof *c);
    c->plan = plan;
    c->x = x;
    bl_status st = bl_execution_validate(x, err);
    if (st != BL_OK)
        return st;
    const bl_json *request = bl_plan_member(bl_resolved_plain(plan), "request");
    const bl_json *eval = bl_plan_member(request, "evaluation");
    c->root_seed = bl_plan_int(eval, "root_seed");
    c->partition = bl_plan_string(eval, "seed_partition");
    c->blocks = bl_plan_int(eval, "blocks");
    c->trials = bl_plan_int(eval, "trials_per_block");
    c->warmup = bl_plan_int(eval, "warmup");
    c->dtype = strcmp(bl_plan_string(bl_plan_member(request, "numerics"), "dtype"), "float32") == 0 ? BL_FLOAT32
                                                                                 : BL_FLOAT64;
    c->ntargets = bl_resolved_target_count(plan);
    /* Resolution refuses plans whose trial count does not fit (§4.1). */
    int64_t per_target, njobs;
    if (__builtin_mul_overflow(c->blocks, c->trials, &per_target) ||
        __builtin_mul_overflow(per_target, (int64_t)c->ntargets, &njobs) || per_target <= 0)
        return bl_fail(err, BL_EVALUE, "an evaluation of %zu targets x %lld blocks x %lld trials "
                       "is too large", c->ntargets, (long long)c->blocks, (long long)c->trials);
    c->njobs = (size_t)njobs;
    c->targets = bl_calloc(c->ntargets, sizeof *c->targets);
    c->cohorts = bl_calloc(c->ntargets, sizeof *c->cohorts); /* at most one per target */
    if (!c->targets || !c->cohorts)
        return nomem(err);
    for (size_t i = 0; i < c->ntargets; i++)
        if ((st = load_target(plan, i, &c->targets[i], err)) != BL_OK)
            return st;

    /* Step 4: recording admission, summed over all jobs. */
    int64_t rec = 0;
    for (size_t i = 0; i < c->ntargets; i++) {
        const target *t = &c->targets[i];
        int64_t per = 0;
        if (x->recording == BL_RECORDING_PROBE_EVENTS) {
            if (!t->reservoir || !is_decodable(t->options.kind))
                return bl_fail(err, BL_EVALUE,
                               "probe_events requires a reservoir and a single binary probe "
                               "episode");
            per = sat_mul(3, sat_add(sat_mul(t->count, 16), 1024));
        } else if (x->recording == BL_RECORDING_REPLAY) {
            per = sat_mul(t->horizon,
                          sat_add(sat_add(sat_mul(t->count, 32), sat_mul(t->n_inputs, 32)), 4096));
        }
        rec = sat_add(rec, sat_mul(per, per_target));
    }
    char need[48];
    if (rec > x->recording_budget_bytes)
        return bl_fail(err, BL_ENOMEM,
                       "recording needs an estimated %s bytes; recording budget is %lld; reduce "
                       "trials or recording",
                       bytes_text(rec, need), (long long)x->recording_budget_bytes);
    c->recording_bytes = rec;

    /* Step 5: one complete neural cycle per tile. */
    for (size_t i = 0; i < c->ntargets; i++)
        if (c->targets[i].frames > x->noise_tile_frames)
            return bl_fail(err, BL_EVALUE,
                           "noise_tile_frames must hold at least one complete neural cycle");

    /* Step 6: cohorts in order of first appearance, then admission. */
    for (size_t i = 0; i < c->ntargets; i++) {
        target *t = &c->targets[i];
        size_t k = 0;
        while (k < c->ncohorts && !same_cohort(&c->targets[c->cohorts[k].first_target], t))
            k++;
        if (k == c->ncohorts)
            c->cohorts[c->ncohorts++].first_target = i;
        t->cohort = k;
        cohort *h = &c->cohorts[k];
        if (t->horizon > h->horizon)
            h->horizon = t->horizon;
        h->njobs += (size_t)per_target;
    }
    for (size_t k = 0; k < c->ncohorts; k++) {
        cohort *h = &c->cohorts[k];
        for (size_t i = 0; i < c->ntargets; i++) {
            if (c->targets[i].cohort != k)
                continue;
            const int64_t b = target_bytes(&c->targets[i], h->horizon, x->noise_tile_frames);
            if (b > h->trial_bytes)
                h->trial_bytes = b;
        }
        if ((st = bl_admit_batch(x, h->trial_bytes, c->recording_bytes, &h->capacity, err)) !=
            BL_OK)
            return st;
    }
    /* Ours, after every check of the spec, and before anything per job
     * exists. */
    if ((st = admit_jobs(c, per_target, err)) != BL_OK || !jobs)
        return st;
    for (size_t k = 0; k < c->ncohorts; k++) {
        cohort *h = &c->cohorts[k];
        h->jobs = bl_mallocarray(h->njobs, sizeof *h->jobs);
        if (!h->jobs)
            return nomem(err);
        h->njobs = 0;
    }
    for (size_t j = 0; j < c->njobs; j++) {
        cohort *h = &c->cohorts[c->targets[j / (size_t)per_target].cohort];
        h->jobs[h->njobs++] = j;
    }
    return BL_OK;
}

bl_status bl_run_preflight(const bl_resolved_plan *plan, const bl_execution *x, bl_error *err)
{
    run_ctx c;
    bl_status st = prepare_ctx(&c, plan, x, false, err);
    free_targets(&c);
    return st;
}

/* ---- one batch --------------------------------------------------------------- */

typedef struct wiring {
    char id[65];
    size_t target;
    int64_t block, trial;
    bl_falandays_init *fal;
    bl_sorn_init *sorn;
} wiring;

typedef struct slot {
    size_t job;
    const target *t;
    int64_t block, trial;
    bl_seed world_seed, drive_seed, control_seed, shuffle_seed;
    char wiring_id[65];
    size_t wiring;               /* index into the batch's wirings */
    bl_world_init *world;
    int64_t *perm;               /* [n_inputs] when the target shuffles */
    bl_error err;
    bl_status st;
} slot;

typedef struct batch {
    slot *slots;
    size_t n;
    wiring *wirings;
    size_t nwirings;
    size_t max_rounds;           /* K of spec/tasks.md §7.3 */
} batch;

static bl_status seed_of(const run_ctx *c, const char *stream, const char *key, const char *kind,
                         int64_t block, int64_t trial, bl_seed *out, bl_error *err)
{
    const bl_key keys[4] = {BL_KEY_S(key), BL_KEY_S(kind), BL_KEY_I(block), BL_KEY_I(trial)};
    return bl_seed_for(c->root_seed, c->partition, stream, keys, 4, out, err);
}

/* Seeds, world and shuffle permutation of one slot (thread-safe). */
static bl_status setup_slot(const run_ctx *c, slot *s, bl_error *err)
{
    const target *t = s->t;
    const char *task = bl_task_name(t->options.kind);
    bl_status st = seed_of(c, "world", t->pairing_key, task, s->block, s->trial, &s->world_seed,
                           err);
    if (st == BL_OK && t->reservoir)
        st = bl_plan_wiring_id(c->plan, (size_t)(t - c->targets), s->block, s->trial,
                               s->wiring_id, err);
    else
        strcpy(s->wiring_id, "none");
    if (st == BL_OK && t->reservoir && t->node == BL_MODEL_FALANDAYS)
        st = seed_of(c, "drive", t->mechanism_key, t->node_name, s->block, s->trial,
                     &s->drive_seed, err);
    if (st == BL_OK && !t->reservoir && t->policy == BL_POLICY_REFERENCE_NULL)
        st = seed_of(c, "control", t->mechanism_key, task, s->block, s->trial, &s->control_seed,
                     err);
    if (st == BL_OK && t->shuffle) {
        st = seed_of(c, "input-shuffle", t->mechanism_key, t->node_name, s->block, s->trial,
                     &s->shuffle_seed, err);
        if (st == BL_OK) {
            s->perm = bl_mallocarray((size_t)t->n_inputs, sizeof *s->perm);
            if (!s->perm)
                return nomem(err);
            bl_gen g;
            bl_gen_init(&g, &s->shuffle_seed);
            bl_gen_permutation(&g, s->perm, (size_t)t->n_inputs);
        }
    }
    if (st == BL_OK) {
        bl_gen g;
        bl_gen_init(&g, &s->world_seed);
        st = bl_world_prepare(&t->options, &g, t->horizon, &s->world, err);
    }
    return st;
}

static bl_status construct(const run_ctx *c, wiring *w, bl_error *err)
{
    const target *t = &c->targets[w->target];
    bl_seed seed;
    bl_status st = bl_plan_construction_seed(c->plan, w->target, w->block, w->trial, &seed, err);
    if (st != BL_OK)
        return st;
    bl_gen g;
    bl_gen_init(&g, &seed);
    if (t->node == BL_MODEL_FALANDAYS)
        return bl_falandays_construct(&t->fcfg, (size_t)t->count, (size_t)t->n_inputs,
                                      (size_t)t->n_effectors, &g, &w->fal, err);
    return bl_sorn_construct(&t->scfg, (size_t)t->count, (size_t)t->n_inputs,
                             (size_t)t->n_effectors, &g, &w->sorn, err);
}

static void free_batch(batch *b)
{
    for (size_t i = 0; b->slots && i < b->n; i++) {
        bl_world_init_free(b->slots[i].world);
        bl_free(b->slots[i].perm);
    }
    for (size_t k = 0; b->wirings && k < b->nwirings; k++) {
        bl_falandays_init_free(b->wirings[k].fal);
        bl_sorn_init_free(b->wirings[k].sorn);
    }
    bl_free(b->slots);
    bl_free(b->wirings);
    memset(b, 0, sizeof *b);
}

static void release_carry(run_ctx *c)
{
    batch old = {.wirings = c->carry, .nwirings = c->ncarry};
    free_batch(&old);
    c->carry = NULL;
    c->ncarry = 0;
}

/* Wirings of the last batch that this one needs again are taken over
 * (construction is deterministic, so this changes no bit of any result);
 * the others are released before anything new is built, so no more
 * wirings exist at once than one batch needs. */
static void take_carried(run_ctx *c, batch *b)
{
    for (size_t k = 0; k < b->nwirings; k++)
        for (size_t j = 0; j < c->ncarry; j++) {
            wiring *old = &c->carry[j];
            if ((old->fal || old->sorn) && strcmp(old->id, b->wirings[k].id) == 0) {
                b->wirings[k].fal = old->fal;
                b->wirings[k].sorn = old->sorn;
                old->fal = NULL;
                old->sorn = NULL;
                break;
            }
        }
    release_carry(c);
}

static bool interrupted(const run_ctx *c)
{
    return c->hooks && c->hooks->interrupt && *c->hooks->interrupt;
}

static bl_status interrupt_status(bl_error *err)
{
    return bl_fail(err, BL_EINTERRUPT, "interrupted");
}

/* What a finished slot reports, read from its world and model. */
typedef struct slot_end {
    bl_trial_status status;
    double raw;
    int64_t ticks, frames;
    int64_t spikes; /* active units summed over the executed frames */
    bool failed;
} slot_end;

static void finish(const run_ctx *c, const bl_worlds *w, bool model_finite, int64_t frames,
                   slot_end *e)
{
    e->status = bl_worlds_status(w, 0, model_finite);
    e->failed = e->status == BL_TRIAL_FAILED;
    e->ticks = bl_worlds_ticks(w)[0];
    e->frames = frames;
    e->raw = e->status == BL_TRIAL_COMPLETED ? bl_worlds_outcome(w, 0) : NAN;
    (void)c;
}

/* How many of the n activity values (0 or 1, in the dtype) are 1: the
 * spike count profile reports as a mean rate, because the sparse kernels'
 * cost follows it. It runs every frame, so eight independent integer lanes
 * let the compiler count a whole vector at a time. */
#define COUNT_ACTIVE(real_t)                                                   \
    do {                                                                       \
        const real_t *a_ = activity;                                           \
        uint32_t lane_[8] = {0};                                               \
        size_t i_ = 0;                                                         \
        for (; i_ + 8 <= n; i_ += 8)                                           \
            for (size_t l_ = 0; l_ < 8; l_++)                                  \
                lane_[l_] += a_[i_ + l_] != 0;                                 \
        for (; i_ < n; i_++)                                                   \
            lane_[0] += a_[i_] != 0;                                           \
        for (size_t l_ = 0; l_ < 8; l_++)                                      \
            k += lane_[l_];                                                    \
    } while (0)

static int64_t count_active(const void *activity, bl_dtype dtype, size_t n)
{
    int64_t k = 0;
    if (dtype == BL_FLOAT32)
        COUNT_ACTIVE(float);
    else
        COUNT_ACTIVE(double);
    return k;
}

/* Writes x = (shuffle ? in[perm[r]] : in[r]) · (blind ? 0 : 1) · gain in
 * the dtype (spec/models.md §4 item 3). */
#define TRANSFORM(real_t)                                                      \
    do {                                                                       \
        const real_t *in_ = inputs;                                            \
        real_t *x_ = xbuf;                                                     \
        const real_t gain_ = (real_t)t->input_gain;                            \
        for (size_t r_ = 0; r_ < nr; r_++) {                                   \
            real_t v_ = shuffled ? in_[s->perm[r_]] : in_[r_];                 \
            if (blind)                                                         \
                v_ = v_ * (real_t)0;                                           \
            x_[r_] = v_ * gain_;                                               \
        }                                                                      \
    } while (0)

/* ---- recording channels (§4.11, §4.12) ------------------------------------ */

/* Where a slot's recordings go (NULL members when not recording). */
typedef struct capture {
    bl_probe_capture *probe;
    bl_json *frames;
} capture;

static double value_at(bl_dtype dtype, const void *p, size_t i)
{
    return dtype == BL_FLOAT32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static bl_status probe_begin(const slot *s, size_t n, bl_probe_capture *pc, bl_error *err)
{
    const bl_world_init *wi = s->world;
    /* Admission let only the decodable probes through; each has a round 1. */
    BL_ASSERT(wi->rounds >= 1);
    pc->ticks[0] = wi->cue_ends[0];
    pc->ticks[1] = wi->response_start[0];
    pc->ticks[2] = wi->response_end[0];
    pc->label = wi->labels[0];
    pc->n = n;
    pc->features = bl_calloc(3 * n, sizeof *pc->features);
    return pc->features ? BL_OK : nomem(err);
}

/* After a tick's advance: the activity at the cue's end (point 0), at the
 * response's start (point 1), and its mean over the response (point 2). */
static void probe_tick(bl_probe_capture *pc, int64_t tick, bl_dtype dtype, const void *activity)
{
    const int64_t rs = pc->ticks[1], re = pc->ticks[2];
    for (int k = 0; k < 3; k++)
        pc->counts[k] += tick == pc->ticks[k];
    for (size_t i = 0; i < pc->n; i++) {
        const double a = value_at(dtype, activity, i);
        if (tick == pc->ticks[0])
            pc->features[i] = a;
        if (tick == rs)
            pc->features[pc->n + i] = a;
        if (rs < tick && tick <= re)
            pc->features[2 * pc->n + i] += a / (double)(re - rs);
    }
}

static bl_json *real_array(bl_dtype dtype, const void *v, size_t n)
{
    bl_json *a = bl_json_array();
    for (size_t i = 0; a && i < n; i++)
        if (bl_json_array_append(a, bl_json_real(value_at(dtype, v, i)), NULL) != BL_OK) {
            bl_json_free(a);
            return NULL;
        }
    return a;
}

/* The display keys of a replay frame's "world" (§4.12). */
static const char *const display_keys[] = {
    "theta",   "phi",     "direction",    "ball_x",       "ball_y", "paddle_y",
    "vx",      "vy",      "width",        "height",       "paddle_x", "paddle_h",
    "paddle_min_y", "paddle_max_y", "ball_r", "x", "x_dot", "theta_dot", "max_x",
    "pole_length", "done", "round",
};

/* One replay frame after a tick: the post-advance world, the effectors that
 * advance used, the receptor vector encoded for it (before gain,
 * permutation or blinding) and the reservoir's activity (empty for direct
 * controllers). */
static bl_status replay_tick(bl_json *frames, const bl_worlds *w, int64_t tick,
                             const void *activity, size_t nact, const void *effectors,
                             size_t neff, bl_error *err)
{
    const bl_dtype dt = bl_worlds_dtype(w);
    bl_snapshot *snap = NULL;
    bl_json *f = bl_json_object(), *world = bl_json_object();
    bl_status st = !f || !world ? nomem(err) : BL_OK;
    if (st == BL_OK)
        st = bl_worlds_snapshot(w, 0, &snap, err);
    for (size_t k = 0; st == BL_OK && k < sizeof display_keys / sizeof *display_keys; k++) {
        const bl_snapshot_array *a = bl_snapshot_get(snap, display_keys[k]);
        if (!a || a->ndim != 0)
            continue;
        st = bl_json_object_set(world, display_keys[k],
                                a->integer ? bl_json_int((int64_t)a->data[0])
                                           : bl_json_real(a->data[0]),
                                err);
    }
    if (st == BL_OK)
        st = bl_json_object_set(f, "tick", bl_json_int(tick), err);
    if (st == BL_OK)
        st = bl_json_object_set(f, "activity", real_array(dt, activity, nact), err);
    if (st == BL_OK)
        st = bl_json_object_set(f, "effectors", real_array(dt, effectors, neff), err);
    if (st == BL_OK)
        st = bl_json_object_set(f, "inputs",
                                real_array(dt, bl_worlds_inputs(w), bl_worlds_inputs_width(w)),
                                err);
    if (st == BL_OK) {
        st = bl_json_object_set(f, "world", world, err);
        world = NULL;
    }
    if (st == BL_OK) {
        st = bl_json_array_append(frames, f, err);
        f = NULL;
    }
    bl_snapshot_free(snap);
    bl_json_free(world);
    bl_json_free(f);
    return st;
}

static bl_status run_reservoir(const run_ctx *c, const batch *b, slot *s, const capture *rec,
                               slot_end *e, bl_error *err)
{
    const target *t = s->t;
    const wiring *wr = &b->wirings[s->wiring];
    const size_t nr = (size_t)t->n_inputs, n = (size_t)t->count;
    const int32_t frames = (int32_t)t->frames;
    const size_t vsize = c->dtype == BL_FLOAT32 ? sizeof(float) : sizeof(double);
    const bool noisy = t->node == BL_MODEL_FALANDAYS && t->fcfg.drive == BL_DRIVE_OOSAWA;
    /* T / F ticks per tile, so a tile holds whole ticks of noise frames. */
    const int64_t tile_ticks = c->x->noise_tile_frames / t->frames;
    const size_t tile_frames = (size_t)(tile_ticks * t->frames);

    bl_worlds *w = NULL;
    bl_model *m = NULL;
    bl_tape *tape = NULL;
    void *xbuf = bl_calloc(nr, vsize), *noise = bl_calloc(n, vsize);
    bl_status st = !xbuf || !noise ? nomem(err) : BL_OK;
    if (st == BL_OK)
        st = bl_worlds_create((const bl_world_init *const *)&s->world, 1, &t->horizon, c->warmup,
                              c->dtype, &w, err);
    if (st == BL_OK)
        st = t->node == BL_MODEL_FALANDAYS
                 ? bl_model_create_falandays((const bl_falandays_init *const *)&wr->fal, 1,
                                             c->dtype, &m, err)
                 : bl_model_create_sorn((const bl_sorn_init *const *)&wr->sorn, 1, c->dtype, &m,
                                        err);
    /* Without the Oosawa drive the model never reads its noise (models.md
     * §2.5 step 5), so the tape need not be drawn: the rows are the same
     * whether or not anyone computes them. */
    if (st == BL_OK && noisy)
        st = bl_tape_create(&tape, &s->drive_seed, n, tile_frames, BL_TAPE_NORMAL, err);
    if (st == BL_OK && rec->probe)
        st = probe_begin(s, n, rec->probe, err);
    if (st != BL_OK)
        goto done;

    const int32_t *ticks = bl_worlds_ticks(w), *done = bl_worlds_done(w),
                  *tfin = bl_worlds_finite(w), *mfin = bl_model_finite(m);
    const bl_matrix xin = {c->dtype, 1, nr, xbuf};
    bl_matrix nz = {c->dtype, 1, n, noise};
    const bl_matrix eff = {c->dtype, 1, (size_t)t->n_effectors, bl_model_effector_data(m)};
    int32_t act = 1;
    int64_t cursor = 0, spikes = 0;
    bool blind = false, shuffled = false;
    size_t next_iv = 0;
    while (act) {
        if (interrupted(c)) {
            st = interrupt_status(err);
            goto done;
        }
        const int64_t tile_start = cursor;
        const double *rows = NULL;
        if (tape && (st = bl_tape_preview(tape, tile_frames, &rows, err)) != BL_OK)
            goto done;
        for (int64_t o = 0; o < tile_ticks && act; o++) {
            act = !done[0] && mfin[0] && tfin[0] && ticks[0] < t->horizon;
            if (!act)
                break;
            /* Interventions take effect before the frames of tick number
             * ticks + 1 (one-based). */
            while (next_iv < t->nivs && t->ivs[next_iv].tick <= ticks[0] + 1) {
                const intervention *iv = &t->ivs[next_iv++];
                if (iv->tick != ticks[0] + 1)
                    continue;
                if (iv->verb == V_BLIND)
                    blind = true;
                else if (iv->verb == V_SHUFFLE)
                    shuffled = true;
                else if (iv->verb == V_FREEZE_WEIGHTS)
                    st = bl_model_freeze_weights(m, &act, 1, err);
                else
                    st = bl_model_freeze_plasticity(m, &act, 1, err);
                if (st != BL_OK)
                    goto done;
            }
            for (int32_t f = 1; f <= frames && act; f++) {
                if ((st = bl_worlds_encode(w, f, &act, 1, err)) != BL_OK)
                    goto done;
                if (!tfin[0]) {
                    act = 0;
                    break;
                }
                const void *inputs = bl_worlds_inputs(w);
                if (c->dtype == BL_FLOAT32)
                    TRANSFORM(float);
                else
                    TRANSFORM(double);
                if (rows) {
                    const double *row = rows + (size_t)(cursor - tile_start) * n;
                    if (c->dtype == BL_FLOAT32) {
                        float *nf = noise;
                        for (size_t i = 0; i < n; i++)
                            nf[i] = (float)row[i];
                    } else {
                        nz.data = row;
                    }
                }
                cursor++;
                if ((st = bl_model_step(m, &xin, &nz, &act, 1, err)) != BL_OK)
                    goto done;
                spikes += count_active(bl_model_activity_data(m), c->dtype, n);
                if (!mfin[0]) {
                    act = 0;
                    break;
                }
                if ((st = bl_worlds_accumulate(w, &eff, f, &act, 1, err)) != BL_OK)
                    goto done;
                if (!tfin[0])
                    act = 0;
            }
            if (!act)
                break;
            if ((st = bl_worlds_advance(w, &eff, &act, 1, err)) != BL_OK)
                goto done;
            act = tfin[0];
            if (!act)
                break; /* the tick was not counted: nothing advanced */
            if (rec->probe)
                probe_tick(rec->probe, ticks[0], c->dtype, bl_model_activity_data(m));
            if (rec->frames &&
                (st = replay_tick(rec->frames, w, ticks[0], bl_model_activity_data(m), n,
                                  eff.data, eff.cols, err)) != BL_OK)
                goto done;
        }
        if (tape && (st = bl_tape_consume(tape, (size_t)(cursor - tile_start), err)) != BL_OK)
            goto done;
    }
    finish(c, w, mfin[0] != 0, cursor, e);
    e->spikes = spikes;
done:
    bl_tape_destroy(tape);
    bl_model_destroy(m);
    bl_worlds_destroy(w);
    bl_free(xbuf);
    bl_free(noise);
    return st;
}

/* A direct controller frame by frame (the unfused loop of spec/tasks.md
 * §1.4), for recordings that need every tick; bit-identical to the fused
 * path, which the tests check. */
static bl_status run_direct_frames(const run_ctx *c, const batch *b, slot *s,
                                   const capture *rec, slot_end *e, bl_error *err)
{
    const target *t = s->t;
    const bool null = t->policy == BL_POLICY_REFERENCE_NULL;
    const bool probe = is_episodic(t->options.kind);
    const size_t k_rounds = b->max_rounds ? b->max_rounds : 1;
    const size_t vsize = c->dtype == BL_FLOAT32 ? sizeof(float) : sizeof(double);
    bl_worlds *w = NULL;
    bl_controllers *ctl = NULL;
    double *table = probe && null ? bl_mallocarray(k_rounds, sizeof *table) : NULL;
    void *eff = bl_calloc((size_t)t->n_effectors, vsize), *u = bl_calloc(1, vsize);
    bl_status st = !eff || !u || (probe && null && !table) ? nomem(err) : BL_OK;
    if (st == BL_OK)
        st = bl_worlds_create((const bl_world_init *const *)&s->world, 1, &t->horizon, c->warmup,
                              c->dtype, &w, err);
    if (st == BL_OK)
        st = bl_controllers_create(t->policy, w, &ctl, err);
    if (st != BL_OK)
        goto done;
    bl_gen g;
    if (null) {
        bl_gen_init(&g, &s->control_seed);
        if (probe)
            bl_gen_random_fill(&g, table, k_rounds);
    }
    const int32_t *ticks = bl_worlds_ticks(w), *done = bl_worlds_done(w),
                  *tfin = bl_worlds_finite(w), *round = bl_worlds_rounds_done(w);
    const bl_matrix em = {c->dtype, 1, (size_t)t->n_effectors, eff};
    int32_t act = 1, cursor = 0;
    for (;;) {
        act = !done[0] && tfin[0] && ticks[0] < t->horizon;
        if (!act)
            break;
        if (interrupted(c)) {
            st = interrupt_status(err);
            goto done;
        }
        if (null) {
            /* Tick t: the t-th uniform; a probe's round k: u[min(k, K-1)]. */
            const size_t r = (size_t)round[0] < k_rounds ? (size_t)round[0] : k_rounds - 1;
            const double x = probe ? table[r] : bl_gen_random(&g);
            if (c->dtype == BL_FLOAT32)
                *(float *)u = (float)x;
            else
                *(double *)u = x;
        }
        for (int32_t f = 1; f <= (int32_t)t->frames && act; f++) {
            if ((st = bl_worlds_encode(w, f, &act, 1, err)) != BL_OK)
                goto done;
            if (!tfin[0]) {
                act = 0;
                break;
            }
            if ((st = bl_controllers_act(ctl, w, u, f, eff, err)) != BL_OK)
                goto done;
            cursor++;
            if ((st = bl_worlds_accumulate(w, &em, f, &act, 1, err)) != BL_OK)
                goto done;
            act = tfin[0];
        }
        if (!act)
            break;
        if ((st = bl_worlds_advance(w, &em, &act, 1, err)) != BL_OK)
            goto done;
        if (!tfin[0])
            break;
        if (rec->frames &&
            (st = replay_tick(rec->frames, w, ticks[0], NULL, 0, eff, em.cols, err)) != BL_OK)
            goto done;
    }
    finish(c, w, true, cursor, e);
done:
    bl_controllers_destroy(ctl);
    bl_worlds_destroy(w);
    bl_free(table);
    bl_free(eff);
    bl_free(u);
    return st;
}

static bl_status run_direct(const run_ctx *c, const batch *b, slot *s, slot_end *e,
                            bl_error *err)
{
    const target *t = s->t;
    const size_t vsize = c->dtype == BL_FLOAT32 ? sizeof(float) : sizeof(double);
    const bool null = t->policy == BL_POLICY_REFERENCE_NULL;
    const bool probe = is_episodic(t->options.kind);
    const int64_t tile_ticks = c->x->noise_tile_frames / t->frames;
    /* Physical families read row o for tick o of a tile; probes read row
     * min(round, K - 1) of one table drawn up front (spec/tasks.md §7.3). */
    const size_t rows = probe ? (b->max_rounds ? b->max_rounds : 1) : (size_t)tile_ticks;
    bl_worlds *w = NULL;
    bl_controllers *ctl = NULL;
    void *tile = bl_calloc(rows, vsize);
    double *draws = null ? bl_mallocarray(rows, sizeof *draws) : NULL;
    bl_status st = !tile || (null && !draws) ? nomem(err) : BL_OK;
    if (st == BL_OK)
        st = bl_worlds_create((const bl_world_init *const *)&s->world, 1, &t->horizon, c->warmup,
                              c->dtype, &w, err);
    if (st == BL_OK)
        st = bl_controllers_create(t->policy, w, &ctl, err);
    if (st != BL_OK)
        goto done;
    bl_gen g;
    if (null)
        bl_gen_init(&g, &s->control_seed);
    const bl_matrix um = {c->dtype, rows, 1, tile};
    int32_t guard = 1, cursor = 0;
    for (int64_t start = 0; start < t->horizon && guard; start += tile_ticks) {
        if (interrupted(c)) {
            st = interrupt_status(err);
            goto done;
        }
        /* A physical null's tick t uses the t-th double of its control
         * stream: each tile simply takes the next rows. */
        if (null && (!probe || start == 0)) {
            bl_gen_random_fill(&g, draws, rows);
            for (size_t r = 0; r < rows; r++) {
                if (c->dtype == BL_FLOAT32)
                    ((float *)tile)[r] = (float)draws[r];
                else
                    ((double *)tile)[r] = draws[r];
            }
        }
        if ((st = bl_worlds_run_control(w, ctl, &um, (int32_t)tile_ticks, &guard, &cursor,
                                        err)) != BL_OK)
            goto done;
    }
    finish(c, w, true, cursor, e);
done:
    bl_controllers_destroy(ctl);
    bl_worlds_destroy(w);
    bl_free(tile);
    bl_free(draws);
    return st;
}

static void fill_row(const run_ctx *c, const slot *s, const slot_end *e, bl_trial_result *row)
{
    const target *t = s->t;
    memset(row, 0, sizeof *row);
    row->target = (size_t)(t - c->targets);
    row->target_id = t->id;
    row->task = t->options.kind;
    row->block = s->block;
    row->trial = s->trial;
    row->outcome_key = t->outcome_key;
    row->raw = e->raw;
    row->normalised = NAN;
    row->normalisation = isnan(e->raw) ? BL_ADJUST_NO_OUTCOME : BL_ADJUST_UNAVAILABLE;
    row->scoring_window = e->ticks > c->warmup ? e->ticks - c->warmup : 0;
    row->status = e->status;
    row->completed_ticks = e->ticks;
    row->neural_frames = e->frames;
    row->spikes = e->spikes;
    row->failed = e->failed;
    bl_seed_hex(&s->world_seed, row->world_seed);
    strcpy(row->wiring_id, s->wiring_id);
    /* §4.9 insertion order. */
    row->seeds[row->nseeds].stream = "world";
    bl_seed_hex(&s->world_seed, row->seeds[row->nseeds++].hex);
    if (t->reservoir) {
        bl_seed cs;
        /* Cannot fail: the same call succeeded for the wiring id. */
        bl_status st = bl_plan_construction_seed(c->plan, row->target, s->block, s->trial, &cs,
                                                 NULL);
        BL_ASSERT(st == BL_OK);
        row->seeds[row->nseeds].stream = "construction";
        bl_seed_hex(&cs, row->seeds[row->nseeds++].hex);
        if (t->node == BL_MODEL_FALANDAYS) {
            row->seeds[row->nseeds].stream = "drive";
            bl_seed_hex(&s->drive_seed, row->seeds[row->nseeds++].hex);
        }
    } else if (t->policy == BL_POLICY_REFERENCE_NULL) {
        row->seeds[row->nseeds].stream = "control";
        bl_seed_hex(&s->control_seed, row->seeds[row->nseeds++].hex);
    }
    if (t->shuffle) {
        row->seeds[row->nseeds].stream = "input_shuffle";
        bl_seed_hex(&s->shuffle_seed, row->seeds[row->nseeds++].hex);
    }
}

/* The first failure in slot order, so the error reported never depends on
 * thread scheduling. */
static bl_status first_failure(const batch *b, bl_error *err)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->slots[i].st != BL_OK) {
            if (err)
                *err = b->slots[i].err;
            return b->slots[i].st;
        }
    return BL_OK;
}

static bl_status run_batch(run_ctx *c, const cohort *h, size_t first, size_t n,
                           bl_trial_result *rows, bl_run_result *res, bl_error *err)
{
    batch b = {0};
    /* Threads beyond the batch's slots would only idle (and an absurd
     * request must not reach the OpenMP runtime). */
    const int threads = (int)(c->x->cpu_threads < (int64_t)n ? c->x->cpu_threads : (int64_t)n);
    const size_t per_target = (size_t)(c->blocks * c->trials);
    b.slots = bl_calloc(n, sizeof *b.slots);
    b.wirings = bl_calloc(n, sizeof *b.wirings);
    bl_status st = !b.slots || !b.wirings ? nomem(err) : BL_OK;
    if (st != BL_OK)
        goto done;
    b.n = n;
    for (size_t i = 0; i < n; i++) {
        slot *s = &b.slots[i];
        s->job = h->jobs[first + i];
        s->t = &c->targets[s->job / per_target];
        const size_t within = s->job % per_target;
        s->block = (int64_t)(within / (size_t)c->trials);
        s->trial = (int64_t)(within % (size_t)c->trials);
    }

#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (ptrdiff_t i = 0; i < (ptrdiff_t)n; i++)
        b.slots[i].st = setup_slot(c, &b.slots[i], &b.slots[i].err);
    if ((st = first_failure(&b, err)) != BL_OK)
        goto done;

    /* Jobs with the same wiring identity share one construction. */
    for (size_t i = 0; i < n; i++) {
        slot *s = &b.slots[i];
        if (!s->t->reservoir)
            continue;
        size_t k = 0;
        while (k < b.nwirings && strcmp(b.wirings[k].id, s->wiring_id) != 0)
            k++;
        if (k == b.nwirings) {
            wiring *wr = &b.wirings[b.nwirings++];
            strcpy(wr->id, s->wiring_id);
            wr->target = (size_t)(s->t - c->targets);
            wr->block = s->block;
            wr->trial = s->trial;
        }
        s->wiring = k;
    }
    for (size_t i = 0; i < n; i++)
        if (b.slots[i].world->rounds > b.max_rounds)
            b.max_rounds = b.slots[i].world->rounds;
    take_carried(c, &b);
    {
        bl_status *wst = bl_calloc(b.nwirings ? b.nwirings : 1, sizeof *wst);
        bl_error *werr = bl_calloc(b.nwirings ? b.nwirings : 1, sizeof *werr);
        if (!wst || !werr) {
            bl_free(wst);
            bl_free(werr);
            st = nomem(err);
            goto done;
        }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
        for (ptrdiff_t k = 0; k < (ptrdiff_t)b.nwirings; k++)
            wst[k] = b.wirings[k].fal || b.wirings[k].sorn
                         ? BL_OK
                         : construct(c, &b.wirings[k], &werr[k]);
        for (size_t k = 0; k < b.nwirings && st == BL_OK; k++)
            if (wst[k] != BL_OK) {
                st = wst[k];
                if (err)
                    *err = werr[k];
            }
        bl_free(wst);
        bl_free(werr);
        if (st != BL_OK)
            goto done;
    }

    int64_t ticks = 0, frames = 0, rframes = 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) \
    reduction(+ : ticks, frames, rframes)
    for (ptrdiff_t i = 0; i < (ptrdiff_t)n; i++) {
        slot *s = &b.slots[i];
        slot_end e = {0};
        capture rec = {res->probes ? &res->probes[s->job] : NULL, NULL};
        if (res->replays && !(rec.frames = res->replays[s->job] = bl_json_array())) {
            s->st = nomem(&s->err);
            continue;
        }
        if (s->t->reservoir)
            s->st = run_reservoir(c, &b, s, &rec, &e, &s->err);
        else if (rec.frames)
            s->st = run_direct_frames(c, &b, s, &rec, &e, &s->err);
        else
            s->st = run_direct(c, &b, s, &e, &s->err);
        /* §4.11: a completed trial's schedule is hit exactly once per point. */
        if (s->st == BL_OK && rec.probe && e.status == BL_TRIAL_COMPLETED && !isnan(e.raw) &&
            (rec.probe->counts[0] != 1 || rec.probe->counts[1] != 1 || rec.probe->counts[2] != 1))
            s->st = bl_fail(&s->err, BL_ERUNTIME,
                            "probe event schedule did not emit exactly one event per point");
        if (s->st == BL_OK) {
            fill_row(c, s, &e, &rows[s->job]);
            ticks += e.ticks;
            frames += e.frames;
            if (s->t->reservoir)
                rframes += e.frames;
        }
    }
    res->world_ticks += ticks;
    res->neural_frames += frames;
    res->reservoir_frames += rframes;
    for (size_t i = 0; i < n; i++)
        res->processing_order[res->nprocessed++] = b.slots[i].job;
    st = first_failure(&b, err);
    if (st == BL_OK) {
        c->carry = b.wirings; /* the next batch may need them */
        c->ncarry = b.nwirings;
        b.wirings = NULL;
        b.nwirings = 0;
    }
done:
    free_batch(&b);
    return st;
}

/* ---- results ---------------------------------------------------------------- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void bl_run_result_free(bl_run_result *r)
{
    if (!r)
        return;
    for (size_t j = 0; r->probes && j < r->ntrials; j++)
        bl_free(r->probes[j].features);
    for (size_t j = 0; r->replays && j < r->ntrials; j++)
        bl_json_free(r->replays[j]);
    bl_free(r->probes);
    bl_free(r->replays);
    bl_free(r->processing_order);
    bl_free(r->trials);
    bl_free(r->batch_capacities);
    bl_free(r->trial_bytes);
    bl_free(r);
}

bl_status bl_run_execute(const bl_resolved_plan *plan, const bl_execution *x,
                         const bl_run_hooks *hooks, bl_run_result **out, bl_error *err)
{
    *out = NULL;
    const double t0 = now();
    run_ctx c;
    bl_run_result *res = NULL;
    bl_status st = prepare_ctx(&c, plan, x, true, err);
    c.hooks = hooks;
    if (st != BL_OK)
        goto done;
    res = bl_calloc(1, sizeof *res);
    if (!res || !(res->trials = bl_calloc(c.njobs, sizeof *res->trials)) ||
        !(res->batch_capacities = bl_calloc(c.ncohorts, sizeof *res->batch_capacities)) ||
        !(res->trial_bytes = bl_calloc(c.ncohorts, sizeof *res->trial_bytes)) ||
        !(res->processing_order = bl_calloc(c.njobs, sizeof *res->processing_order)) ||
        (x->recording == BL_RECORDING_PROBE_EVENTS &&
         !(res->probes = bl_calloc(c.njobs, sizeof *res->probes))) ||
        (x->recording == BL_RECORDING_REPLAY &&
         !(res->replays = bl_calloc(c.njobs, sizeof *res->replays)))) {
        st = nomem(err);
        goto done;
    }
    res->ntrials = c.njobs;
    res->ncohorts = c.ncohorts;
    res->requested_batch_size = x->batch_size;
    res->recording_estimate_bytes = c.recording_bytes;
    res->allocation_budget = bl_execution_allocation_budget(x);
    res->cpu_threads = x->cpu_threads;
    for (size_t k = 0; k < c.ncohorts; k++) {
        res->batch_capacities[k] = c.cohorts[k].capacity;
        res->trial_bytes[k] = c.cohorts[k].trial_bytes;
    }
    const double t1 = now();
    res->seconds_preflight = t1 - t0;

    size_t done_jobs = 0;
    for (size_t k = 0; k < c.ncohorts && st == BL_OK; k++) {
        const cohort *h = &c.cohorts[k];
        for (size_t first = 0; first < h->njobs && st == BL_OK;) {
            const size_t cap = (size_t)h->capacity;
            const size_t n = h->njobs - first < cap ? h->njobs - first : cap;
            st = run_batch(&c, h, first, n, res->trials, res, err);
            first += n;
            done_jobs += n;
            if (st == BL_OK && hooks && hooks->progress)
                hooks->progress(hooks->ctx, done_jobs, c.njobs);
        }
    }
    if (st != BL_OK)
        goto done;
    /* Every job exactly once: the scheduler's own invariant. */
    for (size_t j = 0; j < c.njobs; j++)
        if (!res->trials[j].target_id) {
            st = bl_fail(err, BL_ERUNTIME, "internal scheduler omitted a trial");
            goto done;
        }
    res->seconds_execute = now() - t1;
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        res->peak_rss_bytes = (int64_t)ru.ru_maxrss * 1024; /* Linux reports KiB */
    *out = res;
    res = NULL;
done:
    release_carry(&c);
    bl_run_result_free(res);
    free_targets(&c);
    return st;
}

/* ---- TrialResult as JSON ------------------------------------------------------ */

static bl_json *real_or_null(double v)
{
    return isnan(v) ? bl_json_null() : bl_json_real(v);
}

bl_status bl_task_outcome_json(const char *key, double raw, double normalised,
                               bl_adjust_status status, const char *calibration_id,
                               int64_t scoring_window, bl_json **out, bl_error *err)
{
    *out = NULL;
    bl_json *oc = bl_json_object();
    bl_status st = !oc ? nomem(err) : BL_OK;
    if (st == BL_OK)
        st = bl_json_object_set(oc, "key", bl_json_string(key), err);
    if (st == BL_OK)
        st = bl_json_object_set(oc, "raw", real_or_null(raw), err);
    if (st == BL_OK)
        st = bl_json_object_set(oc, "normalised", real_or_null(normalised), err);
    if (st == BL_OK)
        st = bl_json_object_set(oc, "normalisation_status",
                                bl_json_string(bl_adjust_status_name(status)), err);
    if (st == BL_OK)
        st = bl_json_object_set(oc, "calibration_id",
                                calibration_id[0] ? bl_json_string(calibration_id)
                                                  : bl_json_null(),
                                err);
    if (st == BL_OK)
        st = bl_json_object_set(oc, "scoring_window", bl_json_int(scoring_window), err);
    if (st != BL_OK) {
        bl_json_free(oc);
        return st;
    }
    *out = oc;
    return BL_OK;
}

bl_status bl_trial_result_json(const bl_trial_result *t, bl_json **out, bl_error *err)
{
    *out = NULL;
    bl_json *o = bl_json_object(), *oc = NULL, *seeds = bl_json_object();
    bl_status st = !o || !seeds ? nomem(err) : BL_OK;
    if (st == BL_OK)
        st = bl_task_outcome_json(t->outcome_key, t->raw, t->normalised, t->normalisation,
                                  t->calibration_id, t->scoring_window, &oc, err);
    for (size_t k = 0; k < t->nseeds && st == BL_OK; k++)
        st = bl_json_object_set(seeds, t->seeds[k].stream, bl_json_string(t->seeds[k].hex), err);

    if (st == BL_OK)
        st = bl_json_object_set(o, "target_id", bl_json_string(t->target_id), err);
    if (st == BL_OK)
        st = bl_json_object_set(o, "task", bl_json_string(bl_task_name(t->task)), err);
    if (st == BL_OK)
        st = bl_json_object_set(o, "block_id", bl_json_int(t->block), err);
    if (st == BL_OK)
        st = bl_json_object_set(o, "trial_id", bl_json_int(t->trial), err);
    if (st == BL_OK) {
        st = bl_json_object_set(o, "outcome", oc, err);
        oc = NULL;
    }
    if (st == BL_OK)
        st = bl_json_object_set(o, "status", bl_json_string(bl_trial_status_name(t->status)),
                                err);
    if (st == BL_OK)
        st = bl_json_object_set(o, "completed_ticks", bl_json_int(t->completed_ticks), err);
    if (st == BL_OK)
        st = bl_json_object_set(o, "neural_frames", bl_json_int(t->neural_frames), err);
    if (st == BL_OK)
        st = bl_json_object_set(o, "world_seed", bl_json_string(t->world_seed), err);
    if (st == BL_OK)
        st = bl_json_object_set(o, "wiring_id", bl_json_string(t->wiring_id), err);
    if (st == BL_OK) {
        st = bl_json_object_set(o, "seeds", seeds, err);
        seeds = NULL;
    }
    if (st == BL_OK)
        st = bl_json_object_set(o, "error",
                                t->failed ? bl_json_string("non-finite trajectory")
                                          : bl_json_null(),
                                err);
    bl_json_free(oc);
    bl_json_free(seeds);
    if (st != BL_OK) {
        bl_json_free(o);
        return st;
    }
    *out = o;
    return BL_OK;
}
