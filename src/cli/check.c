/* `brainlesslab check PLAN` (spec/platform.md §3.2): read and resolve a plan
 * without initialising any execution backend, and print plain(ResolvedPlan)
 * as Python's json.dumps(..., sort_keys=True, ensure_ascii=False) would,
 * plus a newline. The JSON is built completely in memory and written only
 * when everything succeeded, so a failure leaves stdout empty. */
#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "cli.h"

static const char usage[] =
    "usage: brainlesslab check [-h] plan\n";

static const char help[] =
    "\n"
    "Validate and resolve a plan without initialising a backend; print the resolved\n"
    "plan as JSON.\n"
    "\n"
    "positional arguments:\n"
    "  plan        path of a v4 TOML plan\n"
    "\n"
    "options:\n"
    "  -h, --help  show this help message and exit\n";

static int check_main(const bl_cli_args *args)
{
    /* check owns no files, so a stop signal can end it on the spot. */
    bl_cli_exit_on_interrupt();
    bl_error err = {0};
    bl_plan *plan = NULL;
    bl_resolved_plan *resolved = NULL;
    int rc;
    if (bl_plan_read(args->positional, &plan, &err) != BL_OK ||
        bl_plan_resolve(plan, &resolved, &err) != BL_OK)
        rc = bl_cli_report(&err);
    else
        rc = bl_cli_print_json(bl_resolved_plain(resolved), BL_JSON_SORT_KEYS | BL_JSON_SPACED);
    bl_resolved_plan_destroy(resolved);
    bl_plan_destroy(plan);
    return rc;
}

const bl_cli_command bl_cli_check = {
    .name = "check", .positional = "plan",
    .usage = usage, .help = help, .main = check_main,
};
