/* The inside of a world cohort (bl_worlds), shared by worlds.c and the
 * controllers (controllers.c: direct policies and the fused run_control).
 *
 * Layout is structure-of-arrays over the B worlds of the cohort, as in
 * spec/tasks.md §1.2. Arrays marked "real" hold values of the cohort dtype
 * (double for BL_FLOAT64, float for BL_FLOAT32) behind a void pointer; the
 * BL_WORLDS_R64/R32 macros give typed access. Arrays marked "i32" are
 * int32_t. Every array lies in the cohort's one block (`arena`) and lives
 * until bl_worlds_destroy; readers must not resize or free anything.
 *
 * Per-world operations below skip every argument check (the public
 * bl_worlds_encode/accumulate/advance do those once per call), so a fused
 * loop can drive one world at a time with exactly the semantics of the
 * batched calls: calling them for b = 0..B-1 in turn is what the public
 * functions do. Tests may poke state here (e.g. an infinite gain) to reach
 * failure paths that creation would reject. */
#ifndef BL_WORLDS_INTERNAL_H
#define BL_WORLDS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/task.h"

/* Pong geometry (§3.1) and CartPole constants (§4.1) also reported in
 * snapshots. */
#define BL_PONG_WIDTH 1000.0
#define BL_PONG_HEIGHT 500.0
#define BL_PONG_PADDLE_X 100.0
#define BL_PONG_PADDLE_H 100.0
#define BL_PONG_PADDLE_MIN_Y 50.0
#define BL_PONG_PADDLE_MAX_Y 450.0
#define BL_PONG_BALL_R 15.0
#define BL_CARTPOLE_MAX_X 2.4
#define BL_CARTPOLE_POLE_LENGTH 0.5
#define BL_CARTPOLE_MISSION 15000

struct bl_worlds {
    bl_task_kind kind;
    bl_dtype dtype;
    size_t n;           /* B worlds */
    size_t width;       /* R receptors (n_inputs) */
    int32_t frames;     /* F neural frames per tick: 24 CartPole, else 1 */
    int32_t warmup;     /* ticks not scored (Tracking, Pong only) */
    size_t max_rounds;  /* M = max(1, max rounds in the cohort) */
    size_t max_length;  /* L_max >= 1: rows of the padded stimulus tables */
    size_t max_draws;   /* rows of the padded draw tables (>= 1): the most
                         * any world has drawn up front */
    size_t snap_draws;  /* K_max >= 1: the most rows any world has in all,
                         * drawn or not (the snapshots' table) */
    void *arena;        /* the one allocation every array below lies in */

    /* ---- mutable state (§1.2) ---- */
    void *physical;       /* real [B][8] */
    void *inputs;         /* real [B][R]: receptor vectors written by encode */
    void *votes;          /* real [B][2]: CartPole per-tick effector sums */
    void *last;           /* real [B][2]: last accumulated effectors (non-CartPole) */
    void *evidence;       /* real [B][2]: probe response-window sums */
    void *outcome;        /* real [B]: 0 (physical) / NaN (probes) initially */
    void *total;          /* real [B]: Tracking running sum of cos */
    int32_t *ticks;       /* i32 [B] completed world ticks */
    int32_t *round;       /* i32 [B] completed probe decisions */
    int32_t *done;        /* i32 [B] */
    int32_t *finite;      /* i32 [B] 1 until a failure, then 0 forever */
    int32_t *scored;      /* i32 [B] */
    int32_t *hits, *misses, *rally, *longest_rally; /* i32 [B] Pong */
    int32_t *decisions;   /* i32 [B][M] probe decision per round (1/2), 0 before */
    int32_t *ties;        /* i32 [B][M] 1 when that round's evidence tied */

    /* ---- fixed per world (cast to the dtype at creation) ---- */
    void *params;          /* real [B][4] (§1.2): tracking gain, speed, amp, 0;
                            * pong gain; cartpole encoder scales */
    void *angles;          /* real [B][R] receptor angles in degrees (tracking,
                            * pong), zeros otherwise */
    void *draws;           /* real [B][max_draws][2] Pong reset rows drawn up
                            * front, zero padded */
    int32_t *draws_ready;  /* i32 [B] rows of world b in `draws`; the rows
                            * from there to draw_lengths come from
                            * draw_gens[b], in order (bl_world_prepare_lazy) */
    bl_gen *draw_gens;     /* [B] Pong only: at the next undrawn row */
    bl_gen *draw_gens0;    /* [B] Pong only: at row draws_ready (snapshots) */
    void *stimuli;         /* real [B][L_max][R] probe stimulus table, zero padded */
    int32_t *lengths;      /* i32 [B] the world's own L (1 for non-probes) */
    int32_t *draw_lengths; /* i32 [B] the world's own K (1 unless Pong) */
    int32_t *rounds;       /* i32 [B] number of labels (0 for non-probes) */
    int32_t *response_start, *response_end, *cue_ends, *labels; /* i32 [B][M] */
    int32_t *round_bounds; /* i32 [B][M][2] */
    int32_t *reversal;     /* i32 [B] one-based reversal round, 0 if none */
    int32_t *feedback;     /* i32 [B] 1 iff feedback_mode == visible */
    int64_t *horizons;     /* [B] as given to bl_worlds_create */
};

#define BL_WORLDS_R64(ptr) ((double *)(ptr))
#define BL_WORLDS_R32(ptr) ((float *)(ptr))

/* Value i of a real array as a double (exact for float32). */
static inline double bl_worlds_real(const bl_worlds *w, const void *arr, size_t i)
{
    return w->dtype == BL_FLOAT32 ? (double)((const float *)arr)[i] : ((const double *)arr)[i];
}

/* §1.3 for world b alone. `enabled` is the caller's activity flag for b;
 * encode always rewrites b's receptor vector (zeros unless it observes).
 * `effectors` points at the two values (dtype) of world b. */
void bl_worlds_encode_world(bl_worlds *w, size_t b, int32_t frame, bool enabled);
void bl_worlds_accumulate_world(bl_worlds *w, size_t b, const void *effectors, int32_t frame,
                                bool enabled);
void bl_worlds_advance_world(bl_worlds *w, size_t b, const void *effectors, bool enabled);

#endif
