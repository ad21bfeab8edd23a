/* Lockstep lanes for SORN (src/models/ only): the slots of a batch that
 * share one wiring step together, one slot per SIMD lane (DESIGN.md,
 * Performance model). sorn_batch.c groups the slots and owns the groups;
 * sorn_lanes.c holds the lane frame, compiled from one source
 * (sorn_lanes_kernel.h) for SSE2 and AVX2 and for both dtypes.
 *
 * A wiring's compressed rows (the synapses of the initial E->E mask,
 * source-major, destinations ascending, no pads) are shared read-only by
 * the groups of its slots, with its fixed weights and lists; a group owns only what changes, interleaved by lane:
 * weights and their mask bits [synapse][lane], states, thresholds, drives
 * and row flags [unit][lane]. Pad lanes (a wiring's slot count that is not
 * a multiple of the lane count) hold zeros and are never active. */
#ifndef BL_SORN_LANES_H
#define BL_SORN_LANES_H

#include <stddef.h>
#include <stdint.h>

#include "models/isa.h"

/* Where a slot's E->E weights live (sorn_fast.h, sorn_batch.c). */
enum { SORN_LAYOUT_CANON, SORN_LAYOUT_SPARSE, SORN_LAYOUT_LANES };

/* The widest lane count (AVX2 float32: 8; room for AVX-512). */
#define SORN_LMAX 16
/* A pad lane's slot. */
#define SORN_LNONE SIZE_MAX

/* A group's wiring (its shared rows and fixed weights) is one of the
 * batch's wirings (sorn_batch.c), each built once at creation. */
typedef struct sorn_lgroup {
    size_t wiring;          /* the batch's wiring its slots share */
    size_t slot[SORN_LMAX]; /* slot of each lane, SORN_LNONE for a pad */
    void *cw;               /* [nnz][L] weights (reals) */
    void *cm;               /* [nnz][L] mask bits as lane masks (dtype-width integers) */
    void *x, *px, *te;      /* [N_E][L] */
    void *af;               /* [N_E][L] adaptation_finite as lane masks */
    void *y, *py;           /* [N_I][L] */
    void *drive;            /* [N][L] */
} sorn_lgroup;

/* Frame scratch shared by the groups of a batch. */
typedef struct sorn_lscratch {
    void *exc, *inp, *tot, *flag, *scale; /* [N_E+1][L]; entry N_E takes input pads */
    void *inh, *idr;                      /* [L][ne_pad], [L][ni_pad]: per lane */
    void *u;                              /* [R][L] */
    uint32_t *actx, *acty;                /* [L][N_E], [L][N_I]: each lane's fired sources */
    uint32_t *vis;                        /* [N_E] sources fired in some active lane */
} sorn_lscratch;

/* What one group's frame reads and writes (filled by sorn_batch.c). */
typedef struct sorn_lframe {
    size_t ne, ni, nr, nout, ne_pad, ni_pad;
    const size_t *ptr;
    const uint32_t *dst;
    /* The fixed E<->I weights transposed, rows padded with +0 to whole
     * vectors (N_E and N_I rounded up to SORN_LMAX: ne_pad, ni_pad). */
    const void *wei_p, *wie_p; /* [N_I][ne_pad], [N_E][ni_pad] */
    const void *weu_t;         /* the wiring's transposed input weights */
    const void *c_e, *t_i;     /* the wiring's */
    const size_t *in_ptr;      /* the wiring's [R+1] input lists */
    const uint32_t *in_unit;
    const void *in_w;
    const size_t *ro_ptr; /* the wiring's [E+1] readout lists */
    const uint32_t *ro_unit;
    sorn_lgroup *g;
    sorn_lscratch *s;
    /* Slot-major batch arrays. */
    const void *inputs; /* [B][R] */
    const int32_t *active;
    const uint8_t *layout;
    const int32_t *plasticity;
    const void *params; /* [B][3]: eta_stdp, eta_ip, H_ip */
    uint8_t *cleared, *wild;
    void *activity, *effectors;
    int32_t *finite;
    /* Path counters (bl_sorn_paths). */
    uint64_t *lanes, *lanes_all, *lanes_dense_inputs;
} sorn_lframe;

typedef void (*sorn_lstep_fn)(const sorn_lframe *f);

/* The lane frame of an instruction set and dtype (dsize 4 or 8), and its
 * lane count. */
sorn_lstep_fn sorn_lanes_kernel(bl_isa isa, size_t dsize);
size_t sorn_lanes_width(bl_isa isa, size_t dsize);

#endif
