/* SORNConfig: defaults, validation and population sizes (spec/models.md
 * §3.1–3.2). */
#include <math.h>
#include <string.h>
#include <stdint.h>

#include "brainlesslab/model.h"
#include "models/model_internal.h"

void bl_sorn_config_default(bl_sorn_config *c)
{
    *c = (bl_sorn_config){
        .inhibitory_fraction = 0.2,
        .p_ee = 10.0 / 166.0,
        .p_ei = 1.0,
        .p_ie = 1.0,
        .p_input = 0.05,
        .p_output = 0.05,
        .ee_row_sum = 1.0,
        .ei_row_sum = 1.0,
        .ie_row_sum = 1.0,
        .input_row_sum = 1.0,
        .T_E_max = 0.5,
        .T_I_max = 1.0,
        .eta_stdp = 0.001,
        .eta_ip = 0.001,
        .H_ip = 0.1,
        .learn_on = true,
    };
}

void bl_sorn_config_fields(const bl_sorn_config *c, bl_named_values out[BL_SORN_NUMERIC_FIELDS])
{
    const bl_named_values fields[BL_SORN_NUMERIC_FIELDS] = {
        {"inhibitory_fraction", &c->inhibitory_fraction, 1},
        {"p_ee", &c->p_ee, 1},
        {"p_ei", &c->p_ei, 1},
        {"p_ie", &c->p_ie, 1},
        {"p_input", &c->p_input, 1},
        {"p_output", &c->p_output, 1},
        {"ee_row_sum", &c->ee_row_sum, 1},
        {"ei_row_sum", &c->ei_row_sum, 1},
        {"ie_row_sum", &c->ie_row_sum, 1},
        {"input_row_sum", &c->input_row_sum, 1},
        {"T_E_max", &c->T_E_max, 1},
        {"T_I_max", &c->T_I_max, 1},
        {"eta_stdp", &c->eta_stdp, 1},
        {"eta_ip", &c->eta_ip, 1},
        {"H_ip", &c->H_ip, 1},
    };
    memcpy(out, fields, sizeof fields);
}

bl_status bl_sorn_config_validate(const bl_sorn_config *c, bl_error *err)
{
    /* Declaration order, so the first failure reported is the reference's;
     * the probabilities are the first six fields and H_ip, the last. */
    static const bool probability[BL_SORN_NUMERIC_FIELDS] = {
        true, true, true, true, true, true, false, false,
        false, false, false, false, false, false, true,
    };
    bl_named_values fields[BL_SORN_NUMERIC_FIELDS];
    bl_sorn_config_fields(c, fields);
    /* §3.1 states the checks in two rounds: every field finite and >= 0, then
     * the probabilities <= 1. */
    for (size_t i = 0; i < BL_SORN_NUMERIC_FIELDS; i++)
        if (!isfinite(*fields[i].p) || !(*fields[i].p >= 0.0))
            return bl_fail(err, BL_EVALUE, "SORNConfig.%s must be finite and non-negative",
                           fields[i].name);
    for (size_t i = 0; i < BL_SORN_NUMERIC_FIELDS; i++)
        if (probability[i] && !(*fields[i].p <= 1.0))
            return bl_fail(err, BL_EVALUE, "SORNConfig.%s must be in [0, 1]", fields[i].name);
    return BL_OK;
}

size_t bl_sorn_excitatory_count(double inhibitory_fraction, size_t n)
{
    /* Python's round() is half-to-even on the double quotient: rint in the
     * default rounding mode, never C's round(). */
    double q = rint((double)n / (1.0 + inhibitory_fraction));
    /* Near SIZE_MAX, (double)n rounds up past size_t (converting such a q
     * would be undefined); a q at or beyond SIZE_MAX is at least every n. */
    if (q >= (double)SIZE_MAX)
        return n;
    size_t n_e = q < 1.0 ? 1 : (size_t)q;
    return n_e < n ? n_e : n;
}
