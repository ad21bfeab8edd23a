/* FalandaysConfig: defaults and validation (spec/models.md §2.1). */
#include <math.h>
#include <string.h>

#include "brainlesslab/model.h"
#include "models/model_internal.h"

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

void bl_falandays_config_fields(const bl_falandays_config *c,
                                bl_named_values out[BL_FALANDAYS_NUMERIC_FIELDS])
{
    const bl_named_values fields[BL_FALANDAYS_NUMERIC_FIELDS] = {
        {"leak", &c->leak, 1},
        {"lrate_wmat", &c->lrate_wmat, 1},
        {"lrate_targ", &c->lrate_targ, 1},
        {"threshold_mult", &c->threshold_mult, 1},
        {"targ_min", &c->targ_min, 1},
        {"input_weight", &c->input_weight, 1},
        {"weight_init_std", &c->weight_init_std, 1},
        {"link_p", &c->link_p, 1},
        {"recurrent_init_scale", &c->recurrent_init_scale, 1},
        {"inhibitory_frac", &c->inhibitory_frac, 1},
        {"membrane_noise", &c->membrane_noise, 1},
        {"noise_gain", &c->noise_gain, 1},
    };
    memcpy(out, fields, sizeof fields);
}

typedef struct field {
    const char *name;
    double value;
} field;

bl_status bl_falandays_config_validate(const bl_falandays_config *c, bl_error *err)
{
    bl_named_values numeric[BL_FALANDAYS_NUMERIC_FIELDS];
    bl_falandays_config_fields(c, numeric);
    for (size_t i = 0; i < BL_FALANDAYS_NUMERIC_FIELDS; i++)
        if (!isfinite(*numeric[i].p))
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
