/* libFuzzer harness: arbitrary bytes as a part result
 * (bl_run_part_decode, include/brainlesslab/evaluation.h), the bytes an MPI
 * rank sends and a shard record keeps. They are decoded against a small
 * plan (below) prepared with each recording channel, the one the input's
 * recording byte names (summary otherwise), so rows, probe captures and
 * replay trees are all reached. The corpus holds the parts of `run --shard`
 * of that plan with each recording.
 *
 * The promises checked: bad bytes are a BL_EVALUE (or BL_ENOMEM) status,
 * never a crash; a part that decodes encodes to bytes that decode again
 * and encode to the very same bytes. */
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/buf.h"
#include "brainlesslab/evaluation.h"
#include "brainlesslab/plan.h"
#include "fuzz.h"

/* The corpus's plan: a 4-node Falandays reservoir on a short delayed cue,
 * 2 blocks of 2 trials (every recording channel admits it). */
static const char plan_text[] =
    "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"fuzz-part\"\n"
    "[evaluation]\nblocks = 2\ntrials_per_block = 2\nroot_seed = 3\n"
    "[[targets]]\nid = \"cue\"\n[targets.composition]\ncount = 4\n"
    "[targets.composition.node]\nkind = \"falandays\"\n"
    "[targets.composition.task]\nkind = \"delayed_cue\"\n"
    "[targets.composition.task.options]\ncue_ticks = 2\ndelays = [1]\nresponse_ticks = 2\n";

static bl_resolved_plan *resolved;
static bl_evaluation_prepared *prepared[3]; /* by bl_recording */

static void setup(void)
{
    bl_json *doc = NULL;
    bl_plan *plan = NULL;
    bl_error err = {0};
    if (bl_toml_parse(plan_text, strlen(plan_text), "plan", &doc, &err) != BL_OK ||
        bl_plan_from_document(doc, &plan, &err) != BL_OK ||
        bl_plan_resolve(plan, &resolved, &err) != BL_OK)
        abort();
    for (int r = 0; r < 3; r++) {
        bl_execution x;
        bl_execution_default(&x);
        x.recording = (bl_recording)r;
        if (bl_evaluation_prepare(resolved, &x, NULL, 0, &prepared[r], &err) != BL_OK)
            abort();
    }
    bl_plan_destroy(plan);
    bl_json_destroy(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!resolved)
        setup();
    /* The recording byte follows the magic, version, part and parts. */
    const unsigned rec = size > 24 && data[24] <= BL_RECORDING_REPLAY ? data[24] : 0;
    const bl_evaluation_prepared *p = prepared[rec];
    bl_run_result *part = NULL, *again = NULL;
    bl_error err = {0};
    const bl_status st = bl_run_part_decode(p, data, size, &part, &err);
    if (st != BL_OK) {
        if ((st != BL_EVALUE && st != BL_ENOMEM) || part)
            abort();
        return 0;
    }
    bl_buf a, b;
    bl_buf_init(&a);
    bl_buf_init(&b);
    if (bl_run_part_encode(part, &a, &err) == BL_OK) {
        if (bl_run_part_decode(p, a.data, a.len, &again, &err) != BL_OK ||
            bl_run_part_encode(again, &b, &err) != BL_OK || a.len != b.len ||
            memcmp(a.data, b.data, a.len) != 0)
            abort();
    }
    bl_buf_clear(&a);
    bl_buf_clear(&b);
    bl_run_result_destroy(again);
    bl_run_result_destroy(part);
    return 0;
}
