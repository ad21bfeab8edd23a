/* FalandaysConfig: defaults and validation (spec/models.md §2.1). */
#include <math.h>

#include "brainlesslab/model.h"

void bl_falandays_config_default(bl_falandays_config *c)
{
    *c = (bl_falandays_config){
        .leak = 0.25,
        .lrate_wmat = 1.0,
        .lrate_targ = 0.01,
        .threshold_mult = 2.0,
        .targ_min = 1.0,
        .input_weight = 1.875,
        .weight_init_std = 1.0,
        .learn_on = true,
        .link_p = 0.1,
        .input_link_p = NULL,
        .input_link_p_len = 0,
        .weight_init_mode = BL_WINIT_EXCITATORY,
        .recurrent_init_scale = 1.0,
        .rectify = false,
        .repair_masks = false,
        .axis = BL_AXIS_UNSIGNED,
        .inhibitory_frac = 0.25,
        .drive = BL_DRIVE_NONE,
        .membrane_noise = 0.0,
        .noise_gain = 0.0,
    };
}

typedef struct field {
    const char *name;
    double value;
} field;

bl_status bl_falandays_config_validate(const bl_falandays_config *c, bl_error *err)
{
    /* Field order is the config's declaration order, so the first failure
     * reported is the reference's. */
    const field numeric[] = {
        {"leak", c->leak},
        {"lrate_wmat", c->lrate_wmat},
        {"lrate_targ", c->lrate_targ},
        {"threshold_mult", c->threshold_mult},
        {"targ_min", c->targ_min},
        {"input_weight", c->input_weight},
        {"weight_init_std", c->weight_init_std},
        {"link_p", c->link_p},
        {"recurrent_init_scale", c->recurrent_init_scale},
        {"inhibitory_frac", c->inhibitory_frac},
        {"membrane_noise", c->membrane_noise},
        {"noise_gain", c->noise_gain},
    };
    for (size_t i = 0; i < sizeof numeric / sizeof *numeric; i++)
        if (!isfinite(numeric[i].value))
            return bl_fail(err, BL_EVALUE, "FalandaysConfig.%s must be finite", numeric[i].name);

    const field unit[] = {
        {"link_p", c->link_p},
        {"inhibitory_frac", c->inhibitory_frac},
        {"leak", c->leak},
    };
    for (size_t i = 0; i < sizeof unit / sizeof *unit; i++)
        if (!(unit[i].value >= 0.0 && unit[i].value <= 1.0))
            return bl_fail(err, BL_EVALUE, "FalandaysConfig.%s must be in [0, 1]", unit[i].name);

    const field nonneg[] = {
        {"lrate_wmat", c->lrate_wmat},
        {"lrate_targ", c->lrate_targ},
        {"input_weight", c->input_weight},
        {"weight_init_std", c->weight_init_std},
        {"recurrent_init_scale", c->recurrent_init_scale},
        {"membrane_noise", c->membrane_noise},
        {"noise_gain", c->noise_gain},
    };
    for (size_t i = 0; i < sizeof nonneg / sizeof *nonneg; i++)
        if (!(nonneg[i].value >= 0.0))
            return bl_fail(err, BL_EVALUE, "FalandaysConfig.%s must be non-negative",
                           nonneg[i].name);

    if (!(c->threshold_mult > 0.0))
        return bl_fail(err, BL_EVALUE, "FalandaysConfig.threshold_mult must be positive");
    if (!(c->targ_min > 0.0))
        return bl_fail(err, BL_EVALUE, "FalandaysConfig.targ_min must be positive");

    if (c->weight_init_mode != BL_WINIT_EXCITATORY && c->weight_init_mode != BL_WINIT_PONG_MIXED &&
        c->weight_init_mode != BL_WINIT_LEGACY_NORMAL)
        return bl_fail(err, BL_EVALUE,
                       "FalandaysConfig.weight_init_mode must be one of excitatory, pong_mixed, "
                       "legacy_normal");
    if (c->axis != BL_AXIS_UNSIGNED && c->axis != BL_AXIS_DALE)
        return bl_fail(err, BL_EVALUE, "FalandaysConfig.axis must be unsigned or dale");
    if (c->drive != BL_DRIVE_NONE && c->drive != BL_DRIVE_OOSAWA)
        return bl_fail(err, BL_EVALUE, "FalandaysConfig.drive must be none or oosawa");

    if (c->input_link_p) {
        if (c->input_link_p_len == 0)
            return bl_fail(err, BL_EVALUE,
                           "FalandaysConfig.input_link_p must hold one probability per receptor");
        for (size_t r = 0; r < c->input_link_p_len; r++) {
            double p = c->input_link_p[r];
            if (!(isfinite(p) && p >= 0.0 && p <= 1.0))
                return bl_fail(err, BL_EVALUE,
                               "FalandaysConfig.input_link_p[%zu] must be a finite probability "
                               "in [0, 1]",
                               r);
        }
    }
    return BL_OK;
}
