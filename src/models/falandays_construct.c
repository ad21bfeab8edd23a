/* Falandays construction (spec/models.md §2.2, §2.3).
 *
 * The generator's consumption order is part of the contract: a seed must give
 * the reference's wiring and weights bit for bit, so every draw below follows
 * NumPy's shape-driven order (full matrices, C order) even where a value is
 * thrown away. Arithmetic mirrors the reference's array expressions operation
 * by operation, because signed zeros of masked weights are observable in
 * snapshots. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/model.h"
#include "models/model_internal.h"

enum { FAL_INIT_ARRAYS = 8 };

/* The arrays of an initial state, for init_create and init_destroy. */
static void init_arrays(bl_falandays_init *s, bl_init_array out[FAL_INIT_ARRAYS])
{
    const size_t n = s->n;
    const bl_init_array arrays[FAL_INIT_ARRAYS] = {
        {&s->weights, NULL, n * n},          {&s->recurrent_mask, NULL, n * n},
        {&s->input_weights, NULL, n * s->r}, {&s->output_mask, NULL, n * s->e},
        {NULL, &s->signs, n},                {&s->acts, NULL, n},
        {&s->targets, NULL, n},              {&s->spikes, NULL, n},
    };
    memcpy(out, arrays, sizeof arrays);
}

/* The checks that construction and a blank state share, in the
 * reference's order. */
static bl_status check_args(const bl_falandays_config *c, size_t n, size_t r, size_t e,
                            bl_error *err)
{
    const bl_status st = bl_falandays_config_validate(c, err);
    return st != BL_OK ? st : bl_model_check_ports(n, r, e, err);
}

void bl_falandays_init_destroy(bl_falandays_init *init)
{
    if (!init)
        return;
    bl_init_array arrays[FAL_INIT_ARRAYS];
    init_arrays(init, arrays);
    bl_init_arrays_destroy(arrays, FAL_INIT_ARRAYS);
    bl_free(init);
}

bl_status bl_falandays_init_create(const bl_falandays_config *c, size_t n, size_t r, size_t e,
                                   bl_falandays_init **out, bl_error *err)
{
    BL_ASSERT(c && out);
    *out = NULL;
    bl_status st = check_args(c, n, r, e, err);
    if (st != BL_OK)
        return st;
    if (!bl_doubles_fit(n, n) || !bl_doubles_fit(n, r) || !bl_doubles_fit(n, e))
        return bl_fail(err, BL_ENOMEM,
                       "a Falandays initial state of N = %zu, R = %zu, E = %zu is too large", n,
                       r, e);

    bl_falandays_init *init = bl_calloc(1, sizeof *init);
    if (!init)
        goto fail;
    init->config = *c;
    /* The caller's array may not outlive this state, and batches never read
     * it, so the copy keeps no pointer to it. */
    init->config.input_link_p = NULL;
    init->config.input_link_p_len = 0;
    init->n = n;
    init->r = r;
    init->e = e;
    bl_init_array arrays[FAL_INIT_ARRAYS];
    init_arrays(init, arrays);
    if (!bl_init_arrays_create(arrays, FAL_INIT_ARRAYS))
        goto fail;
    for (size_t i = 0; i < n; i++) {
        init->signs[i] = 1;
        init->targets[i] = c->targ_min;
    }
    *out = init;
    return BL_OK;

fail:
    bl_falandays_init_destroy(init);
    return bl_fail(err, BL_ENOMEM,
                   "out of memory for a Falandays initial state (N = %zu, R = %zu, E = %zu)", n, r,
                   e);
}

/* Receptor q's link probability (§2.3 step 3). */
static double receptor_p(const bl_falandays_config *c, size_t q)
{
    return c->input_link_p ? c->input_link_p[q] : c->link_p;
}

/* np.maximum(0.0, v): NaN propagates and a tie returns the second operand
 * (NumPy 1.24 gives maximum(0, -0.0) == -0.0). 1 + 0.2*z can be neither NaN
 * nor -0.0 (an exact zero sum rounds to +0.0), so the tie rule is moot, but
 * this keeps NumPy's semantics rather than fmax's, which hides NaN. */
static double maximum0(double v)
{
    return 0.0 > v ? 0.0 : v;
}

/* Step 5: mask repair. Consumes draws only for nodes/effectors that need it,
 * in ascending order. */
static void repair(const bl_falandays_config *c, bl_falandays_init *s, bl_gen *rng)
{
    size_t n = s->n, r = s->r, e = s->e;
    size_t eligible = 0;
    for (size_t q = 0; q < r; q++)
        eligible += receptor_p(c, q) > 0.0;

    if (c->axis == BL_AXIS_UNSIGNED && eligible > 0) {
        for (size_t i = 0; i < n; i++) {
            bool linked = false;
            for (size_t j = 0; j < n && !linked; j++)
                linked = s->recurrent_mask[i * n + j] != 0.0;
            for (size_t q = 0; q < r && !linked; q++)
                linked = s->input_weights[i * r + q] != 0.0;
            if (linked)
                continue;
            /* choice(eligible): the k-th eligible receptor in ascending order. */
            size_t k = bl_gen_choice_index(rng, eligible);
            for (size_t q = 0; q < r; q++) {
                if (!(receptor_p(c, q) > 0.0))
                    continue;
                if (k-- == 0) {
                    s->input_weights[i * r + q] = 1.0;
                    break;
                }
            }
        }
    }

    for (size_t k = 0; k < e; k++) {
        bool any = false;
        for (size_t i = 0; i < n && !any; i++)
            any = s->output_mask[i * e + k] != 0.0;
        if (!any)
            s->output_mask[(size_t)bl_gen_integers(rng, 0, (int64_t)n) * e + k] = 1.0;
    }
}

/* Step 6: unmasked recurrent weights into w (n*n values). `pick` is scratch
 * of n*n bytes, needed only by pong_mixed, whose three draws are separate
 * full matrices. */
static void draw_weights(const bl_falandays_config *c, size_t nn, double *w, unsigned char *pick,
                         bl_gen *rng)
{
    if (c->axis == BL_AXIS_DALE) {
        for (size_t k = 0; k < nn; k++)
            w[k] = maximum0(1.0 + 0.2 * bl_gen_standard_normal(rng));
        return;
    }
    switch (c->weight_init_mode) {
    case BL_WINIT_EXCITATORY:
        for (size_t k = 0; k < nn; k++)
            w[k] = c->input_weight + 0.1 * bl_gen_standard_normal(rng);
        break;
    case BL_WINIT_PONG_MIXED:
        for (size_t k = 0; k < nn; k++)
            pick[k] = bl_gen_random(rng) < 0.25;
        /* np.where evaluates both branches in full: every Z1 and Z2 is drawn. */
        for (size_t k = 0; k < nn; k++) {
            double z1 = bl_gen_standard_normal(rng);
            if (pick[k])
                w[k] = -1.0 + 0.1 * z1;
        }
        for (size_t k = 0; k < nn; k++) {
            double z2 = bl_gen_standard_normal(rng);
            if (!pick[k])
                w[k] = 0.2 * z2;
        }
        break;
    case BL_WINIT_LEGACY_NORMAL:
        for (size_t k = 0; k < nn; k++)
            w[k] = c->weight_init_std * bl_gen_standard_normal(rng);
        break;
    }
}

bl_status bl_falandays_construct(const bl_falandays_config *c, size_t n, size_t r, size_t e,
                                 bl_gen *rng, bl_falandays_init **out, bl_error *err)
{
    BL_ASSERT(c && out);
    *out = NULL;
    bl_status st = check_args(c, n, r, e, err);
    if (st != BL_OK)
        return st;
    if (!rng)
        return bl_fail(err, BL_ETYPE, "rng must be a generator");
    if (c->input_link_p && c->input_link_p_len != r)
        return bl_fail(err, BL_EVALUE,
                       "input_link_p must have one probability per receptor (%zu given, R = %zu)",
                       c->input_link_p_len, r);

    bl_falandays_init *s = NULL;
    if ((st = bl_falandays_init_create(c, n, r, e, &s, err)) != BL_OK)
        return st;
    const size_t nn = n * n;
    unsigned char *pick = NULL;
    /* Allocate before drawing: a failed construction leaves the generator
     * untouched, so a retry draws the same network. */
    if (c->axis != BL_AXIS_DALE && c->weight_init_mode == BL_WINIT_PONG_MIXED &&
        !(pick = bl_malloc(nn))) {
        bl_falandays_init_destroy(s);
        return bl_fail(err, BL_ENOMEM, "out of memory constructing a Falandays network (N = %zu)",
                       n);
    }

    if (c->axis == BL_AXIS_DALE)
        for (size_t i = 0; i < n; i++)
            s->signs[i] = bl_gen_random(rng) < c->inhibitory_frac ? -1 : 1;

    for (size_t k = 0; k < nn; k++)
        s->recurrent_mask[k] = bl_gen_random(rng) < c->link_p ? 1.0 : 0.0;
    for (size_t i = 0; i < n; i++)
        s->recurrent_mask[i * n + i] = 0.0;

    /* Input and output links are kept as 0/1 in place until the end. */
    for (size_t i = 0; i < n; i++)
        for (size_t q = 0; q < r; q++)
            s->input_weights[i * r + q] = bl_gen_random(rng) < receptor_p(c, q) ? 1.0 : 0.0;
    for (size_t k = 0; k < n * e; k++)
        s->output_mask[k] = bl_gen_random(rng) < c->link_p ? 1.0 : 0.0;

    if (c->repair_masks)
        repair(c, s, rng);

    draw_weights(c, nn, s->weights, pick, rng);
    bl_free(pick);

    /* W*M, not a select: masked entries become zeros carrying W's sign,
     * which snapshots show. Then the scale, as its own product. */
    for (size_t k = 0; k < nn; k++) {
        s->weights[k] = s->weights[k] * s->recurrent_mask[k];
        s->weights[k] = s->weights[k] * c->recurrent_init_scale;
    }
    /* mask_as_float * input_weight, zeros included (0.0 * -0.0 is -0.0). */
    for (size_t k = 0; k < n * r; k++)
        s->input_weights[k] = s->input_weights[k] * c->input_weight;

    *out = s;
    return BL_OK;
}
