/* The Falandays batch's storage (src/models/ only), shared by
 * falandays_batch.c, whose comment describes it, and the lockstep-lane
 * kernels (falandays_lanes.h), which are compiled once per instruction set
 * in files of their own. */
#ifndef BL_FALANDAYS_BATCH_H
#define BL_FALANDAYS_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/falandays_internal.h"
#include "models/isa.h"
#include "models/model_internal.h"

struct fal_batch;

/* The lockstep-lane kernels of one instruction set (falandays_lanes.h). */
typedef struct fal_lane_ops {
    size_t bytes; /* of one vector: lanes = bytes / sizeof(real) */
    void (*step_f64)(struct fal_batch *fb, size_t g, const double *u, const double *xi,
                     const int32_t *active);
    void (*step_f32)(struct fal_batch *fb, size_t g, const float *u, const float *xi,
                     const int32_t *active);
    /* Slot b's state into its lane (in) or back (out). */
    void (*sync_f64)(struct fal_batch *fb, size_t b, bool in);
    void (*sync_f32)(struct fal_batch *fb, size_t b, bool in);
} fal_lane_ops;

extern const fal_lane_ops bl_fal_lanes_sse2;
extern const fal_lane_ops bl_fal_lanes_avx2;

/* Parameter vector of §2.4, cast to the dtype. */
enum {
    FAL_P_LEAK,
    FAL_P_LRATE_WMAT,
    FAL_P_LRATE_TARG,
    FAL_P_THRESHOLD_MULT,
    FAL_P_TARG_MIN,
    FAL_P_MEMBRANE_NOISE,
    FAL_P_NOISE_GAIN,
    FAL_NPARAM
};
/* Flag vector of §2.4. */
enum { FAL_F_RECTIFY, FAL_F_DALE, FAL_F_OOSAWA, FAL_F_LEARN_ON, FAL_NFLAG };

/* How a slot's weights are held (falandays_fast.h). CANON is what calloc
 * gives and what the reference kernel runs on. */
enum {
    FAL_LAYOUT_CANON,  /* dense[b] is [destination][source] */
    FAL_LAYOUT_DENSE,  /* dense[b] is [source][destination] */
    FAL_LAYOUT_SPARSE, /* masked weights in pad_w; dense[b] stale or NULL */
};

typedef struct fal_batch {
    bl_model base;
    /* Per slot (what a trial changes). Reals of the dtype. */
    void *acts, *targets, *spikes, *previous, *errors, *counts; /* [B][N] */
    void *effectors;                                            /* [B][E] */
    /* int32. */
    int32_t *raw_finite; /* [B][N] */
    int32_t *finite, *learning, *weight_learning; /* [B] */

    /* Per wiring (base.wiring[b] is slot b's; shared read-only by its
     * slots): the fixed arrays and the initial state. Reals of the dtype. */
    void *input_w;                  /* [W][N][R] */
    void *out_mask;                 /* [W][N][E] */
    void *params;                   /* [W][FAL_NPARAM] */
    void *acts0, *targets0, *spikes0; /* [W][N] reset copies */
    int32_t *signs;                 /* [W][N] */
    int32_t *flags;                 /* [W][FAL_NFLAG] */
    /* The recurrent mask and the sign bits of the initial weights, one bit
     * per canonical entry k = i·N + j (bit k % 8 of byte k / 8), mask_bytes
     * per wiring: the mask is N²/8 bytes, not N² int32. */
    uint8_t *mask, *neg0;           /* [W][mask_bytes] */
    size_t mask_bytes;
    /* Every unmasked initial weight is +0 (plus0) / ±0 (zero0). A zero0
     * wiring's initial weights are its compressed rows' values (pad_w0) and
     * ±0 elsewhere (neg0); any other keeps them dense in w0_dense. */
    int32_t *plus0, *zero0;         /* [W] */
    void **w0_dense;                /* [W]: [N][N] canonical, or NULL */

    /* Fast kernel (falandays_fast.h). */
    bl_fal_kernel kernel;
    int32_t *layout;     /* [B] FAL_LAYOUT_* */
    int32_t *wild;       /* [B] some weight may be non-finite: visit silent sources */
    int32_t *cleared;    /* [B] every weight outside the mask is +0 */
    /* Dense weights of slot b ([N][N], in its layout), allocated only for a
     * slot whose layout is CANON or DENSE (the reference or dense kernels,
     * or a wiring with non-zero weights outside its mask); else NULL. */
    void **dense;        /* [B] */
    /* Compressed rows of each wiring's (fixed) mask, source-major: the
     * synapses of source j of wiring w are row_dst[k] (destinations,
     * ascending) for k in [row_ptr[w][j], row_ptr[w][j+1]), offsets
     * absolute over the batch's wirings. Dense slots count and learn
     * through them. */
    size_t *row_ptr;     /* [W][N+1] */
    uint32_t *row_dst;   /* [nnz of the wirings] */
    /* The same rows padded to whole vectors (FAL_VBYTES) for sparse slots;
     * pads have destination N (a scratch node) and weight +0. pad_w0 holds
     * each wiring's initial weights of those synapses. */
    size_t *pad_ptr;     /* [W][N+1] */
    uint32_t *pad_dst;   /* [padded nnz of the wirings] */
    void *pad_w0;        /* [padded nnz of the wirings] reals */
    /* The plastic weights: sparse slot b keeps the weight of its wiring's
     * padded synapse k at pad_w[pw_shift[b] + k] (fal_slot_pw). */
    void *pad_w;         /* [padded nnz of the slots] reals */
    size_t *pw_shift;    /* [B] */
    /* Fixed arrays in the fast frame's order (fal_fast_fixed), per wiring. */
    void *win_t;         /* [W][R][N] reals: input weights receptor-major */
    /* The non-zero input weights of each receptor, padded like the rows:
     * receptor r of wiring w reaches in_node[k] (ascending) with weight
     * in_w[k] for k in [in_ptr[w][r], in_ptr[w][r+1]). */
    size_t *in_ptr;      /* [W][R+1] */
    uint32_t *in_node;   /* [padded input links of the wirings] */
    void *in_w;          /* [padded input links of the wirings] reals */
    void *sgn;           /* [W][N] reals: the signs as reals (exactly ±1) */
    size_t *ro_ptr;      /* [W][E+1]: effector e's readout list, absolute */
    uint32_t *ro_node;   /* [non-zero readout weights]: nodes, ascending */
    void *ro_w;          /* [non-zero readout weights] reals */
    void *ro_cnt;        /* [W][E] reals: the readout denominators */
    /* Scratch of one slot's frame; entry N belongs to the pads. */
    void *rec;           /* [N] reals */
    void *inp;           /* [N+1] reals: input sums */
    void *delta;         /* [N+1] reals: δ of each destination, δ[N] = +0 */
    void *acc;           /* [N+1] pairs of reals */
    uint32_t *spk;       /* [N] */
    bl_fal_path_counts paths;

    /* Lockstep lanes (falandays_lanes.h): slots that share one wiring (the
     * same mask, signs, input and readout weights, parameters and flags)
     * are stepped together in groups of L = lops->bytes / sizeof(real),
     * one slot per vector lane. A slot's "home" is its lane; it is
     * "resident" while its state lives there (fast kernel, compressed rows,
     * finite weights); the per-slot arrays then hold only spikes, effectors
     * and finite (written every frame, for the views) and are brought up to
     * date by fal_lanes_sync_out before anything else reads them. A group
     * reads the fixed arrays (rows, input and readout lists, signs,
     * parameters) of the wiring of its representative slot `rep` (slots of
     * other wirings with the same bytes may share its lanes). */
    bl_isa isa;
    const fal_lane_ops *lops;
    size_t lanes;        /* L */
    size_t ngroups;
    size_t *group_slot;  /* [groups][L]: each lane's slot, FAL_NO_SLOT for a pad lane */
    size_t *group_rep;   /* [groups] */
    size_t *group_w;     /* [groups]: offset of the group's weights in lw, in reals */
    int32_t *home;       /* [B]: group * L + lane, or -1 */
    int32_t *resident;   /* [B] */
    /* Lane state, [groups][N][L] reals; lw is [synapse of rep][L] per group
     * in the order of rep's unpadded rows (row_dst). raw holds 1 or 0. */
    void *lw;
    void *lacts, *ltargets, *lspikes, *lprev, *lerrors, *lcounts, *lraw;
    /* Lane scratch: acc [N][2][L] (sum, count; zero between frames),
     * inp [N+1][L] (zero between frames; N takes the pads of the input
     * lists), delta [N][L], u [R][L]. */
    void *lacc, *linp, *ldelta, *lu;
    /* Bytes of the separately allocated arrays (fal_calloc), for
     * bl_falandays_bytes. */
    size_t more_bytes;
    /* The initial states, from fal_ports to fal_finish (creation only). */
    const void *initials;
} fal_batch;

#define FAL_NO_SLOT ((size_t)-1)

/* Slot b's wiring. */
#define FAL_W(fb, b) ((fb)->base.wiring[b])

/* Whether canonical entry k of bit array bits (a wiring's mask or neg0) is
 * set. */
static inline bool fal_bit(const fal_batch *fb, const uint8_t *bits, size_t w, size_t k)
{
    return (bits[w * fb->mask_bytes + k / 8] >> (k % 8)) & 1u;
}

/* Bytes of the fast kernel's vectors, and so the padding of its rows. */
#define FAL_VBYTES 16

#endif
