/* SORNConfig: defaults, validation and population sizes (spec/models.md
 * §3.1–3.2). */
#include <math.h>
#include <stdint.h>

#include "brainlesslab/model.h"

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

bl_status bl_sorn_config_validate(const bl_sorn_config *c, bl_error *err)
{
    /* Declaration order, so the first failure reported is the reference's. */
    const struct {
        const char *name;
        double value;
        bool probability;
    } fields[] = {
        {"inhibitory_fraction", c->inhibitory_fraction, true},
        {"p_ee", c->p_ee, true},
        {"p_ei", c->p_ei, true},
        {"p_ie", c->p_ie, true},
        {"p_input", c->p_input, true},
        {"p_output", c->p_output, true},
        {"ee_row_sum", c->ee_row_sum, false},
        {"ei_row_sum", c->ei_row_sum, false},
        {"ie_row_sum", c->ie_row_sum, false},
        {"input_row_sum", c->input_row_sum, false},
        {"T_E_max", c->T_E_max, false},
        {"T_I_max", c->T_I_max, false},
        {"eta_stdp", c->eta_stdp, false},
        {"eta_ip", c->eta_ip, false},
        {"H_ip", c->H_ip, true},
    };
    /* §3.1 states the checks in two rounds: every field finite and >= 0, then
     * the probabilities <= 1. */
    size_t n = sizeof fields / sizeof *fields;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(fields[i].value) || !(fields[i].value >= 0.0))
            return bl_fail(err, BL_EVALUE, "SORNConfig.%s must be finite and non-negative",
                           fields[i].name);
    for (size_t i = 0; i < n; i++)
        if (fields[i].probability && !(fields[i].value <= 1.0))
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
