/* Development replay documents (spec/platform.md §7.8): one trial's frames
 * with the provenance a viewer needs to say what it shows. Replays are
 * bounded diagnostics for the website, never evidence. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "brainlesslab/records.h"
#include "brainlesslab/version.h"

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory for a replay");
}

static bl_status put(bl_json *o, const char *key, bl_json *v, bl_error *err)
{
    return v ? bl_json_object_set(o, key, v, err) : nomem(err);
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
    const bl_json *rt = bl_resolved_target(in->resolved, t->target);
    const bl_json *target = bl_json_get(rt, "target");
    const bl_json *comp = bl_json_get(target, "composition");
    const bl_json *request = bl_json_get(bl_resolved_plain(in->resolved), "request");
    const bl_json *eval = bl_json_get(request, "evaluation");
    const bl_json *numerics = bl_json_get(request, "numerics");

    bl_json *doc = bl_json_object(), *prov = bl_json_object(), *resolved = bl_json_object();
    bl_json *trial = NULL, *meta = NULL;
    bl_status st = !doc || !prov || !resolved ? nomem(err) : BL_OK;
    if (st == BL_OK)
        st = put(resolved, "composition", bl_json_copy(comp), err);
    if (st == BL_OK)
        st = put(resolved, "model_parameters", bl_json_copy(bl_json_get(rt, "model_config")),
                 err);
    if (st == BL_OK)
        st = put(resolved, "task_options", bl_json_copy(bl_json_get(rt, "task_options")), err);
    if (st == BL_OK)
        st = put(resolved, "horizon", bl_json_copy(bl_json_get(rt, "horizon")), err);
    if (st == BL_OK)
        st = put(resolved, "diagnostic", bl_json_copy(bl_json_get(request, "diagnostic")), err);
    if (st == BL_OK)
        st = bl_trial_result_json(t, &trial, err);
    if (st == BL_OK)
        st = bl_record_metadata(in, &meta, err);
    /* The reference names its runtime's version; ours is this engine's. */
    if (st == BL_OK)
        st = put(prov, "engine_version", bl_json_string(bl_version()), err);
    if (st == BL_OK)
        st = put(prov, "backend", bl_json_string(bl_backend_name(in->execution->backend)), err);
    if (st == BL_OK)
        st = put(prov, "dtype", bl_json_copy(bl_json_get(numerics, "dtype")), err);
    if (st == BL_OK)
        st = put(prov, "seed_partition", bl_json_copy(bl_json_get(eval, "seed_partition")), err);
    if (st == BL_OK) {
        st = put(prov, "resolved", resolved, err);
        resolved = NULL;
    }
    if (st == BL_OK)
        st = put(prov, "evidence", bl_json_copy(bl_json_get(request, "evidence")), err);
    if (st == BL_OK)
        st = put(prov, "contract_hash",
                 bl_json_string(bl_resolved_contract_hash(in->resolved)), err);
    if (st == BL_OK)
        st = put(prov, "composition", bl_json_copy(comp), err);
    if (st == BL_OK)
        st = put(prov, "evaluation", bl_json_copy(eval), err);
    if (st == BL_OK)
        st = put(prov, "numerics", bl_json_copy(numerics), err);
    if (st == BL_OK) {
        st = put(prov, "trial", trial, err);
        trial = NULL;
    }
    if (st == BL_OK) {
        st = put(prov, "environment", meta, err);
        meta = NULL;
    }
    if (st == BL_OK)
        st = put(doc, "format", bl_json_string("brainlesslab-replay"), err);
    if (st == BL_OK)
        st = put(doc, "version", bl_json_int(1), err);
    if (st == BL_OK)
        st = put(doc, "trial_key", bl_json_string(trial_key), err);
    if (st == BL_OK)
        st = put(doc, "task", bl_json_string(bl_task_name(t->task)), err);
    if (st == BL_OK)
        st = put(doc, "node", bl_json_copy(bl_json_get(bl_json_get(comp, "node"), "kind")), err);
    if (st == BL_OK) {
        st = put(doc, "provenance", prov, err);
        prov = NULL;
    }
    if (st == BL_OK)
        st = put(doc, "frames", bl_json_copy(frames), err);
    bl_json_free(resolved);
    bl_json_free(trial);
    bl_json_free(meta);
    bl_json_free(prov);
    if (st != BL_OK) {
        bl_json_free(doc);
        return st;
    }
    *out = doc;
    return BL_OK;
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
    bl_json_free(doc);
    if (st != BL_OK) {
        bl_buf_free(&text);
        return st;
    }
    /* Exclusive create: an export never replaces anything. */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        const int e = errno;
        bl_buf_free(&text);
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
    bl_buf_free(&text);
    return st;
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
    in->probe_events = recs->probe_events;
    in->probe_features = (const double *const *)recs->probe_features;
    in->probe_feature_len = recs->probe_feature_len;
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
        if (st == BL_OK)
            st = bl_json_object_set(*replays, key, doc, err);
    }
    in->replays = *replays;
    return st;
}
