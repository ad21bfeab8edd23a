/* libFuzzer harness (`make fuzz`): arbitrary bytes through the whole plan
 * boundary, bl_toml_parse → bl_plan_from_document → bl_plan_resolve, plus
 * the writer's promise that written TOML reads back as an equal tree. Any
 * crash, leak, sanitizer report or broken round trip is a finding; errors
 * returned as statuses are the expected outcome for most inputs. */
#include <stdint.h>
#include <stdlib.h>

#include "brainlesslab/buf.h"
#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bl_json *doc = NULL;
    bl_error err = {0};
    if (bl_toml_parse((const char *)data, size, "fuzz.toml", &doc, &err) != BL_OK)
        return 0;

    bl_buf text;
    bl_buf_init(&text);
    if (bl_toml_write(doc, &text, &err) == BL_OK) {
        bl_json *back = NULL;
        if (bl_toml_parse(text.data, text.len, "written.toml", &back, &err) != BL_OK ||
            !bl_json_equal(doc, back))
            abort(); /* the writer produced text that does not read back */
        bl_json_destroy(back);
    }
    bl_buf_clear(&text);

    bl_plan *plan = NULL;
    if (bl_plan_from_document(doc, &plan, &err) == BL_OK) {
        bl_resolved_plan *resolved = NULL;
        if (bl_plan_resolve(plan, &resolved, &err) == BL_OK)
            bl_resolved_plan_destroy(resolved);
        bl_plan_destroy(plan);
    }
    bl_json_destroy(doc);
    return 0;
}
