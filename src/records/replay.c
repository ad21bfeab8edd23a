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
        bl_json_put(&st, *replays, key, doc, err);
    }
    in->replays = *replays;
    return st;
}
