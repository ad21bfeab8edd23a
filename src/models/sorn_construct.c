/* SORN construction (spec/models.md §3.3, §3.4).
 *
 * The generator's consumption order is the contract: a seed must give the
 * reference's wiring, weights and thresholds bit for bit, so every draw
 * follows NumPy's shape-driven order (whole rows x cols matrices in C order,
 * even for links the diagonal rule later removes). Masks are built in place
 * in the arrays that end up holding the weights, so construction needs no
 * scratch beyond one permutation and one row of uniforms. Draws are taken
 * in bulk (the bulk fills give exactly the one-at-a-time values in the same
 * order). Everything is allocated before the first draw: a failed
 * construction leaves the generator where it was. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/model.h"
#include "models/model_internal.h"
#include "brainlesslab/npstat.h"

enum { SORN_INIT_ARRAYS = 11 };

/* The arrays of an initial state, for init_create and init_destroy. An
 * empty I population has no arrays at all (the header's contract), rather
 * than zero-byte allocations whose pointers differ by platform. */
static void init_arrays(bl_sorn_init *s, bl_init_array out[SORN_INIT_ARRAYS])
{
    const size_t ne = s->n_e, ni = s->n - s->n_e;
    const bl_init_array arrays[SORN_INIT_ARRAYS] = {
        {&s->w_ee, NULL, ne * ne},     {&s->ee_mask, NULL, ne * ne},
        {&s->c_e, NULL, ne},           {&s->w_ei, NULL, ne * ni},
        {&s->w_ie, NULL, ni * ne},     {&s->w_eu, NULL, ne * s->r},
        {&s->output_mask, NULL, s->e * ne}, {&s->t_e, NULL, ne},
        {&s->t_i, NULL, ni},           {&s->x, NULL, ne},
        {&s->y, NULL, ni},
    };
    memcpy(out, arrays, sizeof arrays);
}

/* The checks that construction and a blank state share, in the
 * reference's order. */
static bl_status check_args(const bl_sorn_config *c, size_t n, size_t r, size_t e, bl_error *err)
{
    const bl_status st = bl_sorn_config_validate(c, err);
    return st != BL_OK ? st : bl_model_check_ports(n, r, e, err);
}

void bl_sorn_init_destroy(bl_sorn_init *init)
{
    if (!init)
        return;
    bl_init_array arrays[SORN_INIT_ARRAYS];
    init_arrays(init, arrays);
    bl_init_arrays_destroy(arrays, SORN_INIT_ARRAYS);
    bl_free(init);
}

bl_status bl_sorn_init_create(const bl_sorn_config *c, size_t n, size_t r, size_t e,
                              bl_sorn_init **out, bl_error *err)
{
    BL_ASSERT(c && out);
    *out = NULL;
    bl_status st = check_args(c, n, r, e, err);
    if (st != BL_OK)
        return st;
    size_t n_e = bl_sorn_excitatory_count(c->inhibitory_fraction, n);
    size_t n_i = n - n_e;
    if (!bl_doubles_fit(n_e, n_e) || !bl_doubles_fit(n_e, r) || !bl_doubles_fit(n_e, e) || !bl_doubles_fit(n_e, n_i))
        return bl_fail(err, BL_ENOMEM,
                       "a SORN initial state of N = %zu, R = %zu, E = %zu is too large", n, r, e);

    bl_sorn_init *init = bl_calloc(1, sizeof *init);
    if (!init)
        goto fail;
    init->config = *c;
    init->n = n;
    init->r = r;
    init->e = e;
    init->n_e = n_e;
    bl_init_array arrays[SORN_INIT_ARRAYS];
    init_arrays(init, arrays);
    if (!bl_init_arrays_create(arrays, SORN_INIT_ARRAYS))
        goto fail;
    *out = init;
    return BL_OK;

fail:
    bl_sorn_init_destroy(init);
    return bl_fail(err, BL_ENOMEM,
                   "out of memory for a SORN initial state (N = %zu, R = %zu, E = %zu)", n, r, e);
}

/* mask(rows, cols, p, no_self) into m (rows*cols, as 0/1 doubles). */
static void draw_mask(bl_gen *rng, double *m, size_t rows, size_t cols, double p, bool no_self)
{
    bl_gen_bernoulli_fill(rng, m, rows * cols, p);
    if (no_self)
        for (size_t i = 0; i < rows && i < cols; i++)
            m[i * cols + i] = 0.0;
    if (cols == 0)
        return;
    for (size_t i = 0; i < rows; i++) {
        double *row = m + i * cols;
        bool any = false;
        for (size_t j = 0; j < cols && !any; j++)
            any = row[j] != 0.0;
        if (any)
            continue;
        /* The candidates are 0..cols-1 in ascending order, less the row's own
         * index under no_self; the k-th is computed rather than listed. */
        bool self_listed = no_self && i < cols;
        size_t ncand = cols - (self_listed ? 1 : 0);
        if (ncand == 0)
            continue;
        size_t k = bl_gen_choice_index(rng, ncand);
        row[self_listed && k >= i ? k + 1 : k] = 1.0;
    }
}

/* fanout's f = min(rows, max(1, round(fraction * rows))). */
static size_t fanout_size(size_t rows, double fraction)
{
    /* Python's round() is half-to-even on the double product: rint. The
     * product is at most rows (fraction <= 1), so the cast cannot overflow. */
    double q = rint(fraction * (double)rows);
    size_t f = q < 1.0 ? 1 : (size_t)q;
    return f < rows ? f : rows;
}

/* fanout(rows, cols, fraction) into m, which is already zero: m[i * rs +
 * c * cs] is entry [i][c], so the same draws can fill a transposed matrix.
 * `perm` holds `rows` values of scratch. */
static void draw_fanout(bl_gen *rng, double *m, size_t rs, size_t cs, size_t rows, size_t cols,
                        double fraction, int64_t *perm)
{
    size_t f = fanout_size(rows, fraction);
    for (size_t c = 0; c < cols; c++) {
        bl_gen_permutation(rng, perm, rows);
        for (size_t k = 0; k < f; k++)
            m[(size_t)perm[k] * rs + c * cs] = 1.0;
    }
}

/* Two doubles per vector: the x86-64 baseline's width, in plain GNU C
 * (each lane does the scalar IEEE operation, so the bits are the scalar
 * loop's). */
typedef double sorn_v2d __attribute__((vector_size(16)));
typedef int64_t sorn_v2i __attribute__((vector_size(16)));

static inline sorn_v2d load2(const double *p)
{
    sorn_v2d v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Lanes of -1 where p[0..2) is a link (non-zero), else 0. */
static inline sorn_v2i links2(const double *p)
{
    const sorn_v2d zero = {0.0, 0.0};
    return (sorn_v2i)(load2(p) != zero);
}

/* The links (non-zero entries) among row[0..cols). */
static size_t count_links(const double *row, size_t cols)
{
    sorn_v2i acc = {0, 0};
    size_t j = 0;
    for (; j + 4 <= cols; j += 4)
        acc -= links2(row + j) + links2(row + j + 2);
    size_t links = (size_t)(acc[0] + acc[1]);
    for (; j < cols; j++)
        links += row[j] != 0.0;
    return links;
}

/* w[j] = the next of u[0..) where mask[j] is a link, +0.0 elsewhere (mask
 * may be w). Groups of four non-links, the common case of sparse masks,
 * are skipped whole: w already holds +0.0 there (the mask's own zeros, or
 * a zeroed array). Inside a group a select and a counter stand in for a
 * branch on a random outcome; u[t] may be read one past the row's links,
 * so u holds at least cols + 1 initialised values. */
static void place_links(double *w, const double *mask, size_t cols, const double *u)
{
    size_t t = 0, j = 0;
    for (; j < cols; j += 4) {
        const size_t end = cols - j < 4 ? cols : j + 4;
        if (end == j + 4) {
            const sorn_v2i any = links2(mask + j) | links2(mask + j + 2);
            if (!(any[0] | any[1]))
                continue;
        }
        for (size_t q = j; q < end; q++) {
            const bool link = mask[q] != 0.0;
            /* u[t] or +0.0 by masking its bits: compilers turn the
             * conditional expression into a branch. */
            uint64_t bits;
            memcpy(&bits, &u[t], sizeof bits);
            bits &= -(uint64_t)link;
            memcpy(&w[q], &bits, sizeof bits);
            t += link;
        }
    }
}

/* w = weights(mask, target): w is zero or is mask itself on entry. `u` is
 * scratch of cols + 1 initialised values. */
static void draw_weights(bl_gen *rng, double *w, const double *mask, size_t rows, size_t cols,
                         double target, double *u)
{
    if (target == 0.0) {
        /* Zeros without a single draw (-0.0 == 0 too, as in the reference). */
        for (size_t k = 0; k < rows * cols; k++)
            w[k] = 0.0;
        return;
    }
    for (size_t i = 0; i < rows; i++) {
        double *row = w + i * cols;
        const double *mrow = mask + i * cols;
        /* w[mask] = random(nnz): one uniform per link, row-major, so each
         * row takes the next count-of-its-links uniforms, drawn at once. */
        const size_t links = count_links(mrow, cols);
        bl_gen_random_fill(rng, u, links);
        place_links(row, mrow, cols, u);
        /* Python's sum over NumPy scalars: plain additions, left to right,
         * deliberately not the pairwise sum that c_e uses. The row's zeros
         * are +0.0 and leave a sum that starts at +0.0 and never falls
         * unchanged, so summing the links alone gives the same bits. */
        double tot = 0.0;
        for (size_t k = 0; k < links; k++)
            tot += u[k];
        if (tot > 0.0) {
            /* One division, then the whole row times that scalar: unlinked
             * zeros included, so an overflowing scale gives NumPy's NaNs. */
            const double scale = target / tot;
            const sorn_v2d vscale = {scale, scale};
            size_t k = 0;
            for (; k + 2 <= cols; k += 2) {
                const sorn_v2d v = load2(row + k) * vscale;
                memcpy(row + k, &v, sizeof v);
            }
            for (; k < cols; k++)
                row[k] = row[k] * scale;
        }
    }
}

bl_status bl_sorn_construct(const bl_sorn_config *c, size_t n, size_t r, size_t e, bl_gen *rng,
                            bl_sorn_init **out, bl_error *err)
{
    BL_ASSERT(c && out);
    *out = NULL;
    bl_status st = check_args(c, n, r, e, err);
    if (st != BL_OK)
        return st;
    if (!rng)
        return bl_fail(err, BL_ETYPE, "rng must be a generator");

    bl_sorn_init *s = NULL;
    if ((st = bl_sorn_init_create(c, n, r, e, &s, err)) != BL_OK)
        return st;
    const size_t n_e = s->n_e, n_i = n - n_e;
    int64_t *perm = bl_mallocarray(n_e, sizeof *perm);
    /* One row of uniforms for draw_weights (rows are at most N_E or R wide),
     * zeroed because place_links may read one value past those drawn. */
    double *u = bl_calloc((n_e > r ? n_e : r) + 1, sizeof *u);
    if (!perm || !u) {
        bl_free(perm);
        bl_free(u);
        bl_sorn_init_destroy(s);
        return bl_fail(err, BL_ENOMEM, "out of memory constructing a SORN network (N = %zu)", n);
    }

    /* Steps 1-3: the three masks. E->I and I->E live in their weight arrays
     * until step 8/9 turns them into weights. */
    draw_mask(rng, s->ee_mask, n_e, n_e, c->p_ee, true);
    if (n_i > 0) {
        draw_mask(rng, s->w_ei, n_e, n_i, c->p_ei, false);
        draw_mask(rng, s->w_ie, n_i, n_e, c->p_ie, false);
    }
    /* Steps 4-5: fixed fan-outs. The output fan-out is drawn as [N_E][E]
     * (one permutation per effector) and stored transposed. */
    draw_fanout(rng, s->w_eu, r, 1, n_e, r, c->p_input, perm);
    draw_fanout(rng, s->output_mask, 1, n_e, n_e, e, c->p_output, perm);
    bl_free(perm);

    /* Steps 6-10. w_ee starts zeroed; the other masks become their own
     * weights. */
    draw_weights(rng, s->w_ee, s->ee_mask, n_e, n_e, c->ee_row_sum, u);
    /* np.sum(w_ee, axis=1) on a contiguous matrix sums each row as np.sum
     * sums a vector (pairwise, in 8192-value buffers): not the sequential
     * total the normalisation used. */
    for (size_t i = 0; i < n_e; i++)
        s->c_e[i] = bl_np_sum(s->w_ee + i * n_e, n_e);
    if (n_i > 0) {
        draw_weights(rng, s->w_ei, s->w_ei, n_e, n_i, c->ei_row_sum, u);
        draw_weights(rng, s->w_ie, s->w_ie, n_i, n_e, c->ie_row_sum, u);
    }
    draw_weights(rng, s->w_eu, s->w_eu, n_e, r, c->input_row_sum, u);
    bl_free(u);

    /* Steps 11-12: T_max * random(count); x and y stay zero. */
    bl_gen_random_fill(rng, s->t_e, n_e);
    for (size_t i = 0; i < n_e; i++)
        s->t_e[i] = c->T_E_max * s->t_e[i];
    bl_gen_random_fill(rng, s->t_i, n_i);
    for (size_t i = 0; i < n_i; i++)
        s->t_i[i] = c->T_I_max * s->t_i[i];

    *out = s;
    return BL_OK;
}
