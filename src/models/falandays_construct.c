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

/* A new state; `drawn` says that construction will write every element of
 * the two N x N arrays, so those skip calloc's zero fill (a megabyte at
 * N = 256, written again straight after). Every other array starts as the
 * blank state has it. */
static bl_status init_new(const bl_falandays_config *c, size_t n, size_t r, size_t e, bool drawn,
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
    if (drawn && n > 0) {
        /* Left out of the zeroed list (count 0 keeps them NULL there). */
        arrays[0].count = arrays[1].count = 0;
        if (!(init->weights = bl_mallocarray(n * n, sizeof *init->weights)) ||
            !(init->recurrent_mask = bl_mallocarray(n * n, sizeof *init->recurrent_mask)))
            goto fail;
    }
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

bl_status bl_falandays_init_create(const bl_falandays_config *c, size_t n, size_t r, size_t e,
                                   bl_falandays_init **out, bl_error *err)
{
    return init_new(c, n, r, e, false, out, err);
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

/* Draws in bulk go through this many values of stack scratch at a time. */
enum { FAL_CHUNK = 256 };

/* Step 6's distributions of the recurrent weights. */
typedef enum weight_law {
    LAW_DALE,
    LAW_EXCITATORY,
    LAW_PONG_MIXED,
    LAW_LEGACY_NORMAL
} weight_law;

/* Steps 6 and 7: the recurrent weights, drawn in full, then W*M and the
 * scale, each element through exactly the reference's operations in the
 * reference's order (the fused loops change no rounding: every operation
 * is its own IEEE operation, no contraction). W*M is a product, not a
 * select: masked entries become zeros carrying W's sign, which snapshots
 * show. Then the scale, as its own product. w and mask hold nn values;
 * `pick` is scratch of nn bytes, needed only by pong_mixed, whose three
 * draws are separate full matrices. */
static void draw_weights(const bl_falandays_config *c, size_t nn, double *w, const double *mask,
                         unsigned char *pick, bl_gen *rng)
{
    /* The Dale axis overrides the init mode. */
    const weight_law law = c->axis == BL_AXIS_DALE                       ? LAW_DALE
                           : c->weight_init_mode == BL_WINIT_PONG_MIXED    ? LAW_PONG_MIXED
                           : c->weight_init_mode == BL_WINIT_LEGACY_NORMAL ? LAW_LEGACY_NORMAL
                                                                           : LAW_EXCITATORY;
    if (law == LAW_PONG_MIXED) {
        /* U2 passes through w on its way to pick; np.where evaluates both
         * branches in full, so every Z1 and Z2 is drawn: Z1 lands in w
         * whole here, and the Z2 entries replace the ones Z2 owns below. */
        bl_gen_random_fill(rng, w, nn);
        for (size_t k = 0; k < nn; k++)
            pick[k] = w[k] < 0.25;
        bl_gen_standard_normal_fill(rng, w, nn);
        for (size_t k = 0; k < nn; k++)
            w[k] = -1.0 + 0.1 * w[k];
    }
    /* The last (or only) normal matrix is drawn a chunk at a time into stack
     * scratch, so the big matrix is written once, not drawn into and then
     * rewritten. */
    const double scale = c->recurrent_init_scale, mean = c->input_weight,
                 sd = c->weight_init_std;
    double z[FAL_CHUNK];
    for (size_t k0 = 0; k0 < nn; k0 += FAL_CHUNK) {
        const size_t m = nn - k0 < FAL_CHUNK ? nn - k0 : FAL_CHUNK;
        double *wk = w + k0;
        const double *mk = mask + k0;
        bl_gen_standard_normal_fill(rng, z, m);
        switch (law) {
        case LAW_EXCITATORY:
            for (size_t k = 0; k < m; k++)
                wk[k] = (mean + 0.1 * z[k]) * mk[k] * scale;
            break;
        case LAW_PONG_MIXED:
            for (size_t k = 0; k < m; k++)
                wk[k] = (pick[k0 + k] ? wk[k] : 0.2 * z[k]) * mk[k] * scale;
            break;
        case LAW_LEGACY_NORMAL:
            for (size_t k = 0; k < m; k++)
                wk[k] = sd * z[k] * mk[k] * scale;
            break;
        case LAW_DALE:
            for (size_t k = 0; k < m; k++)
                wk[k] = maximum0(1.0 + 0.2 * z[k]) * mk[k] * scale;
            break;
        }
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
    if ((st = init_new(c, n, r, e, true, &s, err)) != BL_OK)
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

    if (c->axis == BL_AXIS_DALE) {
        double u[FAL_CHUNK];
        for (size_t i0 = 0; i0 < n; i0 += FAL_CHUNK) {
            const size_t m = n - i0 < FAL_CHUNK ? n - i0 : FAL_CHUNK;
            bl_gen_random_fill(rng, u, m);
            for (size_t i = 0; i < m; i++)
                s->signs[i0 + i] = u[i] < c->inhibitory_frac ? -1 : 1;
        }
    }

    bl_gen_bernoulli_fill(rng, s->recurrent_mask, nn, c->link_p);
    for (size_t i = 0; i < n; i++)
        s->recurrent_mask[i * n + i] = 0.0;

    /* Input and output links are kept as 0/1 in place until the end. */
    if (c->input_link_p) {
        /* Per-receptor probabilities: the uniforms land in the array, then
         * each column meets its own threshold. */
        bl_gen_random_fill(rng, s->input_weights, n * r);
        for (size_t i = 0; i < n; i++)
            for (size_t q = 0; q < r; q++)
                s->input_weights[i * r + q] =
                    s->input_weights[i * r + q] < c->input_link_p[q] ? 1.0 : 0.0;
    } else {
        bl_gen_bernoulli_fill(rng, s->input_weights, n * r, c->link_p);
    }
    bl_gen_bernoulli_fill(rng, s->output_mask, n * e, c->link_p);

    if (c->repair_masks)
        repair(c, s, rng);

    draw_weights(c, nn, s->weights, s->recurrent_mask, pick, rng);
    bl_free(pick);

    /* mask_as_float * input_weight, zeros included (0.0 * -0.0 is -0.0). */
    for (size_t k = 0; k < n * r; k++)
        s->input_weights[k] = s->input_weights[k] * c->input_weight;

    *out = s;
    return BL_OK;
}
