/* The recording channels of an evaluation as the record writes them
 * (spec/platform.md §4.11, §4.12, §7.3): ProbeEvents and ProbeTrials built
 * from the runner's probe captures, and replay frames keyed by trial. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/evaluation.h"

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory for recordings");
}

void bl_recordings_clear(bl_recordings *r)
{
    bl_json_destroy(r->probe_trials);
    bl_json_destroy(r->replay_frames);
    bl_free(r->probe_jobs);
    memset(r, 0, sizeof *r);
}

/* The identity fields every probe row starts with (sticky, as bl_json_put). */
static void identity(bl_status *st, bl_json *o, const bl_trial_result *t, bl_error *err)
{
    bl_json_put(st, o, "target_id", bl_json_string(t->target_id), err);
    bl_json_put(st, o, "task", bl_json_string(bl_task_name(t->task)), err);
    bl_json_put(st, o, "block_id", bl_json_int(t->block), err);
    bl_json_put(st, o, "trial_id", bl_json_int(t->trial), err);
}

/* digest({"a": a, "b": b, "c": c}) with c optional. */
static bl_status digest3(const char *ka, bl_json *a, const char *kb, bl_json *b, const char *kc,
                         bl_json *c, char hex[65], bl_error *err)
{
    bl_status st = BL_OK;
    bl_json *o = bl_json_object();
    bl_json_put(&st, o, ka, a, err);
    bl_json_put(&st, o, kb, b, err);
    if (kc)
        bl_json_put(&st, o, kc, c, err);
    if (st == BL_OK)
        st = bl_json_digest(o, hex, err);
    bl_json_destroy(o);
    return st;
}

/* The ProbeTrial row of one trial. Its signatures hash the target's
 * resolved JSON, as the contract holds it. */
static bl_status probe_trial(const bl_resolved_plan *plan, const bl_trial_result *t,
                             bl_json *trials, bl_error *err)
{
    const bl_target_spec *spec = bl_resolved_target_spec(plan, t->target);
    const bl_json *comp = bl_json_get(spec->target, "composition");
    const bl_json *eval =
        bl_json_get(bl_json_get(bl_resolved_plain(plan), "request"), "evaluation");
    char node_sig[65], iface_sig[65];
    bl_status st = digest3("node", bl_json_copy(bl_json_get(comp, "node")), "config",
                           bl_json_copy(bl_json_get(spec->plain, "model_config")), NULL, NULL,
                           node_sig, err);
    if (st == BL_OK)
        st = digest3("task", bl_json_copy(bl_json_get(comp, "task")), "ports",
                     bl_json_copy(bl_json_get(spec->plain, "n_inputs")), "gain",
                     bl_json_copy(bl_json_get(comp, "input_gain")), iface_sig, err);
    if (st != BL_OK)
        return st;
    bl_json *o = bl_json_object();
    identity(&st, o, t, err);
    bl_json_put(&st, o, "native_score", bl_json_real(t->raw), err);
    bl_json_put(&st, o, "wiring_id", bl_json_string(t->wiring_id), err);
    bl_json_put(&st, o, "world_seed", bl_json_string(t->world_seed), err);
    bl_json_put(&st, o, "node_signature", bl_json_string(node_sig), err);
    bl_json_put(&st, o, "interface_signature", bl_json_string(iface_sig), err);
    bl_json_put(&st, o, "construction_scope",
                bl_json_copy(bl_json_get(eval, "construction_scope")), err);
    bl_json_put(&st, o, "reset", bl_json_string("full"), err);
    bl_json_push(&st, trials, o, err);
    return st;
}

static const char *const point_names[3] = {"cue_end", "delay_end", "response"};

bl_status bl_recordings_event(const bl_recordings *r, size_t i, bl_json **row,
                              const double **features, size_t *n, bl_error *err)
{
    BL_ASSERT(i < r->nevents);
    const size_t j = r->probe_jobs[i / 3];
    const int k = (int)(i % 3);
    const bl_trial_result *t = &r->run->trials[j];
    const bl_probe_capture *pc = &r->run->probes[j];
    bl_status st = BL_OK;
    bl_json *o = bl_json_object(), *ids = bl_json_array();
    for (size_t u = 0; u < pc->n; u++) {
        char id[32];
        snprintf(id, sizeof id, "neuron/%zu", u);
        bl_json_push(&st, ids, bl_json_string(id), err);
    }
    identity(&st, o, t, err);
    bl_json_put(&st, o, "entity_id", bl_json_string("reservoir"), err);
    bl_json_put(&st, o, "feature_ids", ids, err);
    bl_json_put(&st, o, "point", bl_json_string(point_names[k]), err);
    bl_json_put(&st, o, "tick", bl_json_int(pc->ticks[k]), err);
    bl_json_put(&st, o, "round", bl_json_int(1), err);
    bl_json_put(&st, o, "label", bl_json_int(pc->label), err);
    bl_json_put(&st, o, "channel", bl_json_string("emitted_activity"), err);
    if (st != BL_OK) {
        bl_json_destroy(o);
        return st;
    }
    *row = o;
    *features = pc->features + (size_t)k * pc->n;
    *n = pc->n;
    return BL_OK;
}

bl_status bl_evaluation_recordings(const bl_resolved_plan *plan, const bl_evaluation *e,
                                   bl_recordings *out, bl_error *err)
{
    memset(out, 0, sizeof *out);
    const bl_run_result *r = e->run;
    bl_status st = BL_OK;
    if (r->probes) {
        /* Failed and incomplete trials emit nothing (§4.11). */
        size_t emitting = 0;
        for (size_t j = 0; j < r->ntrials; j++)
            emitting += r->trials[j].status == BL_TRIAL_COMPLETED && !isnan(r->trials[j].raw);
        out->run = r;
        out->probe_trials = bl_json_array();
        out->probe_jobs = bl_calloc(emitting + 1, sizeof *out->probe_jobs);
        if (!out->probe_trials || !out->probe_jobs)
            st = nomem(err);
        /* Batch-processing order: cohort order, then slot order. */
        for (size_t k = 0; k < r->nprocessed && st == BL_OK; k++) {
            const size_t j = r->processing_order[k];
            const bl_trial_result *t = &r->trials[j];
            if (t->status != BL_TRIAL_COMPLETED || isnan(t->raw))
                continue;
            out->probe_jobs[out->nevents / 3] = j;
            out->nevents += 3;
            st = probe_trial(plan, t, out->probe_trials, err);
        }
    }
    if (r->replays && st == BL_OK) {
        out->replay_frames = bl_json_object();
        st = out->replay_frames ? BL_OK : nomem(err);
        for (size_t j = 0; j < r->ntrials && st == BL_OK; j++) {
            const bl_trial_result *t = &r->trials[j];
            char key[512];
            snprintf(key, sizeof key, "%s/%lld/%lld", t->target_id, (long long)t->block,
                     (long long)t->trial);
            bl_json_put(&st, out->replay_frames, key, bl_json_copy(r->replays[j]), err);
        }
    }
    if (st != BL_OK)
        bl_recordings_clear(out);
    return st;
}
