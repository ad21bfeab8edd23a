/* Shared helpers of the model test executables (test_falandays*.c,
 * test_sorn*.c): checked allocation, hand-made initial states, dtype
 * buffers, model calls that fail the test on error, snapshot access,
 * bit-exact comparisons and generator draws; the properties both families
 * share, written once over a table of family operations (bl_test_family:
 * batch contracts, allocation failures, resets, snapshot layouts,
 * construction checks, the NumPy differential driver); and the
 * differential batches that step a model and one oracle per slot
 * (bl_test_obatch). Every helper fails the running cmocka test rather
 * than return an error. */
#ifndef BL_TEST_MODEL_SUPPORT_H
#define BL_TEST_MODEL_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/model.h"
#include "brainlesslab/npy.h"
#include "brainlesslab/rng.h"

/* Sanitizer builds (CI) run a third of the frames of the long differential
 * runs: the point there is memory safety, and the full differential run is
 * the Release one. */
#if defined(__SANITIZE_ADDRESS__)
#define BL_TEST_FRAME_DIV 3
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BL_TEST_FRAME_DIV 3
#endif
#endif
#ifndef BL_TEST_FRAME_DIV
#define BL_TEST_FRAME_DIV 1
#endif

/* Defines the cmocka tests name_float64 and name_float32, which call
 * run(BL_FLOAT64) and run(BL_FLOAT32). */
#define BL_TEST_PER_DTYPE(name, run)                                                          \
    static void name##_float64(void **state)                                                   \
    {                                                                                          \
        (void)state;                                                                           \
        run(BL_FLOAT64);                                                                       \
    }                                                                                          \
    static void name##_float32(void **state)                                                   \
    {                                                                                          \
        (void)state;                                                                           \
        run(BL_FLOAT32);                                                                       \
    }

/* calloc that fails the test on exhaustion (count 0 allocates one). */
void *bl_test_xcalloc(size_t count, size_t size);

/* ---- model calls -------------------------------------------------------- */

/* One frame; u [B][R] and xi [B][N] may be NULL (zeros), active NULL (all). */
void bl_test_step(bl_model *m, const double *u, const double *xi, const int32_t *active);
void bl_test_reset(bl_model *m, const int32_t *active);
/* Freezes plasticity when all, else the weights only. */
void bl_test_freeze(bl_model *m, const int32_t *active, bool all);
bl_snapshot *bl_test_snap(const bl_model *m, size_t slot);
/* The data of a snapshot key, which must exist. */
const double *bl_test_sget(const bl_snapshot *s, const char *name);
size_t bl_test_values_of(const bl_snapshot_array *a);
/* Bit-for-bit equality of every key (signed zeros and NaN payloads too). */
void bl_test_assert_snap_identical(const bl_snapshot *a, const bl_snapshot *b, const char *what);
void bl_test_assert_bits(double got, double want, const char *what);


/* ---- the two families: shared property checks ---------------------------- */

/* What the family-neutral checks below need of a model family. */
typedef struct bl_test_family {
    bl_model_kind kind;
    /* bl_model_create_<family> on `inits`, an array of nslots pointers to
     * that family's initial states (NULL passes through). */
    bl_status (*create)(const void *inits, size_t nslots, bl_dtype dtype, bl_model **out,
                        bl_error *err);
    /* One frame; u [B][R] may be NULL (zeros), active NULL (all). Falandays
     * gets zero noise; SORN gets junk, which it must ignore. */
    void (*step)(bl_model *m, const double *u, const int32_t *active);
    /* bl_<family>_construct of that family's config; *out as the call
     * leaves it. */
    bl_status (*construct)(const void *config, size_t n, size_t r, size_t e, bl_gen *g,
                           void **out, bl_error *err);
    void (*init_destroy)(void *init); /* bl_<family>_init_destroy */
    void (*hand_destroy)(void *init); /* of the hand-made states below */
} bl_test_family;

extern const bl_test_family bl_test_falandays_family;
extern const bl_test_family bl_test_sorn_family;

/* A batch that must be created (else the test fails with the message). */
bl_model *bl_test_family_create(const bl_test_family *f, const void *inits, size_t nslots,
                                bl_dtype dtype);
/* A creation that must fail with ValueError naming needle, leaving the
 * model pointer NULL. */
void bl_test_family_create_fails(const bl_test_family *f, const void *inits, size_t nslots,
                                 bl_dtype dtype, const char *needle);
/* Every allocation of creating a 2-slot batch from inits, and of a
 * snapshot of it, fails in turn: BL_ENOMEM, nothing returned. */
void bl_test_expect_allocation_failures(const bl_test_family *f, const void *inits,
                                        bl_dtype dtype);
/* §7.3 #4: step, freeze everything, step, reset gives the creation
 * snapshot; `moved` is a key the frames must change. */
void bl_test_expect_full_reset(const bl_test_family *f, bl_model *m, const double *u,
                               const char *moved);
/* The argument contract of a 2-slot batch of `nodes` nodes, 2 receptors
 * and 2 effectors: its kind, dtype and dimensions, then every malformed step, reset, freeze
 * and snapshot call is a ValueError that changes nothing. */
void bl_test_expect_call_contracts(const bl_test_family *f, bl_model *m, bl_dtype dt,
                                   size_t nodes);
/* Slot b of a batch equals the 1-slot batch `single` (every key, and both
 * finite); returns the batch's snapshot for further looks. */
bl_snapshot *bl_test_expect_as_single(const bl_model *m, size_t b, const bl_model *single);
/* Slot b is still the snapshot `before` (which this destroys), and finite. */
void bl_test_expect_slot_kept(const bl_model *m, size_t b, bl_snapshot *before,
                              const char *what);

/* ---- construction --------------------------------------------------------- */

/* The initial state of a construction that must succeed. */
void *bl_test_construct_ok(const bl_test_family *f, const void *config, size_t n, size_t r,
                           size_t e, bl_gen *g);
/* A construction that must be rejected with status want and needle in the
 * message, returning no state and drawing nothing from g (which may be
 * NULL). */
void bl_test_expect_construct_rejected(const bl_test_family *f, const void *config, size_t n,
                                       size_t r, size_t e, bl_gen *g, bl_status want,
                                       const char *needle);
/* The dimension checks of construction (config must be valid): N, R and E
 * of 0, a missing generator, their order, and a network too large to
 * address. */
void bl_test_expect_construct_shapes(const bl_test_family *f, const void *config);
/* Every allocation of constructing config (N 7 or 9, R 2, E 3, generator
 * "alloc") fails in turn: BL_ENOMEM, no state, nothing drawn; the first
 * count that reaches no failure gives a state that same() finds equal to
 * a clean construction's, and the generator where the clean one left it.
 * Returns the number of allocations. */
long bl_test_construct_allocations(const bl_test_family *f, const void *config, size_t n,
                                   void (*same)(const void *got, const void *want));

/* A configuration fault: one or two double fields of a configuration,
 * given by offset, set to bad values; needle names the field reported. */
typedef struct bl_test_fault {
    size_t count;
    size_t at[2];
    double v[2];
    const char *needle;
} bl_test_fault;

/* Sets the fault's fields of config. */
void bl_test_apply_fault(void *config, const bl_test_fault *fault);

/* One array of a construction as NumPy's record lists it. */
typedef struct bl_test_part {
    const char *name;
    size_t len;
    const double *data;
} bl_test_part;

/* The differential test of a construction against NumPy's
 * (tests/oracle/numpy_ref.py): `count` cases of `size` bytes each, made by
 * make() from a generator seeded with `root` and sent as one request of
 * format()'s lines; check() compares each case with its answer record. */
typedef struct bl_test_numpy_run {
    size_t count, size;
    uint64_t root;
    void (*make)(bl_gen *g, size_t idx, void *c);
    size_t (*format)(char *buf, size_t cap, const void *c);
    void (*check)(size_t idx, const void *c, const unsigned char *rec, size_t nbytes,
                  void *ctx);
} bl_test_numpy_run;

/* Runs the cases; returns them (free them) for the caller's coverage
 * counts. */
void *bl_test_numpy_differential(const bl_test_numpy_run *run, void *ctx);
/* The parts of case idx (dimensions n, r, e) against the record's values
 * from double `off` on; returns the offset after them. */
size_t bl_test_expect_parts(size_t idx, size_t n, size_t r, size_t e, const bl_test_part *parts,
                            size_t count, const unsigned char *rec, size_t off);
/* g ends where NumPy's generator did: the record's next two values are its
 * integers(0, 1000) (the 32-bit cache) and random(). */
void bl_test_expect_gen_position(size_t idx, bl_gen *g, const unsigned char *rec, size_t off);

/* One snapshot key's expected layout. */
typedef struct bl_test_layout {
    const char *name;
    int ndim;
    size_t d0, d1;
    bool integer;
} bl_test_layout;

/* The snapshot holds exactly these keys, in this order. */
void bl_test_expect_layout(const bl_snapshot *s, const bl_test_layout *keys, size_t count);
/* Both snapshots hold key name with equal shapes and bits. */
bool bl_test_same_key(const bl_snapshot *a, const bl_snapshot *b, const char *name);
/* The first count values of snapshot key `key` have the bits of want. */
void bl_test_expect_key(const bl_snapshot *s, const char *key, const double *want, size_t count,
                        const char *what);
/* got[k] has the bits of want[k] for every k < count. */
void bl_test_expect_values(const double *got, const double *want, size_t count,
                           const char *what);
/* For each array k of count (named names[k]): element `at` set to `even`
 * (k even) or `odd` (k odd) makes creating a 1-slot batch of inits (the
 * address of one initial state's pointer) in dtype a ValueError whose
 * message holds names[k] formatted into `format` (one %s); when
 * `f64_accepts`, a float64 batch of it is still created. The element is
 * restored after each. */
void bl_test_expect_values_rejected(const bl_test_family *f, const void *inits, bl_dtype dtype,
                                    double *const *arrays, const char *const *names,
                                    size_t count, size_t at, double even, double odd,
                                    const char *format, bool f64_accepts);

/* A small deterministic xorshift generator for hand-made states. */
typedef struct bl_test_trng {
    uint64_t s;
} bl_test_trng;

/* Uniform in [0, 1). */
double bl_test_urand(bl_test_trng *g);

/* ---- generator draws and dtype buffers ---------------------------------- */

double bl_test_uni(bl_gen *g);
size_t bl_test_pick(bl_gen *g, size_t k);
double bl_test_normal(bl_gen *g);
void bl_test_gen_seeded(bl_gen *g, uint64_t seed);
/* The development-phase construction generator keyed by key. */
bl_gen bl_test_gen_for(const char *key);
size_t bl_test_dtype_size(bl_dtype dt);
void bl_test_put(void *buf, bl_dtype dt, size_t k, double v);
/* Same bits, or (when nan_equiv) both NaN: NaN payloads depend on operand
 * order inside commutative operations and are no contract of the spec. */
bool bl_test_same(double a, double b, bool nan_equiv);

/* ---- differential tests against an oracle ------------------------------- */

/* The operations a differential test applies to random slots. */
typedef enum bl_test_op {
    BL_TEST_RESET,
    BL_TEST_FREEZE_WEIGHTS,
    BL_TEST_FREEZE_PLASTICITY,
} bl_test_op;

/* "reset", "freeze_weights" or "freeze_plasticity". */
const char *bl_test_op_name(bl_test_op which);
/* Applies `which` to the slots in active of m (what names the caller in a
 * failure). */
void bl_test_apply_op(bl_model *m, bl_test_op which, const int32_t *active, size_t nslots,
                      const char *what);

/* ---- the Falandays fixtures of spec/models.md §8 --------------------------- */

/* fixtures/<dir>/<name>.npy of the shared folder (BL_REQUIRE_SHARED first). */
bl_npy *bl_test_fixture(const char *dir, const char *name);
/* The initial state of fixture dir, a hand-made one (see below): its
 * parameters on the Dale axis or the unsigned one, and its arrays, which
 * the files hold [source][destination]. */
bl_falandays_init *bl_test_fixture_init(const char *dir, bool dale);

/* ---- differential batches: a model and an oracle per slot ----------------- */

/* An oracle of tests/oracle/ of either family, in either dtype. */
typedef struct bl_test_oracle_ops {
    const char *const *keys; /* the family's snapshot keys, in model.h's order */
    const size_t *nkeys;
    const char *activity;    /* the key of the activity view */
    void (*destroy)(void *o);
    /* inputs [r] and noise [n] in the oracle's dtype. */
    void (*step)(void *o, const void *inputs, const void *noise);
    void (*op[3])(void *o);  /* by bl_test_op */
    /* The named array widened to double into out, and its layout (ndim -1
     * where the oracle knows only the value count, d0); false for a key
     * it does not know. */
    bool (*get)(const void *o, const char *key, double *out, bl_test_layout *layout);
    int32_t (*finite)(const void *o);
} bl_test_oracle_ops;

extern const bl_test_oracle_ops bl_test_falandays_oracle;
extern const bl_test_oracle_ops bl_test_sorn_oracle;

/* One slot of a differential batch. */
typedef struct bl_test_oslot {
    void *init;  /* its initial state, of the batch's family */
    bool hand;   /* hand-made (released by hand_destroy), else constructed */
    void *orc;   /* its oracle */
    bool failed; /* reported non-finite; the runtime latches */
} bl_test_oslot;

/* A batch under test: the model and the oracles of its slots, stepped and
 * compared together. */
typedef struct bl_test_obatch {
    const bl_test_family *family;
    const bl_test_oracle_ops *ops;
    /* One line about a slot, for failure messages. */
    void (*describe)(const bl_test_oslot *sl, char *buf, size_t size);
    bl_dtype dtype;
    size_t nslots, n, r, e;
    size_t n_e;               /* SORN: the excitatory units */
    bl_test_oslot *slots;
    bl_model *model;
    double *scratch;          /* room for any state array */
    void *inputs, *noise;     /* [B][R], [B][N] in dtype */
    int32_t *active;
    const char *what;         /* scenario label for messages */
    size_t frame;
    bool dyadic;              /* dyadic hand-made slots and inputs */
    bool unmasked;            /* SORN: hand-made slots may hold weights outside the mask */
} bl_test_obatch;

/* An empty batch of family f in dtype. */
void bl_test_obatch_init(bl_test_obatch *bt, const bl_test_family *f,
                         const bl_test_oracle_ops *ops,
                         void (*describe)(const bl_test_oslot *sl, char *buf, size_t size),
                         bl_dtype dtype);
/* The oracles of the slots, from their initial states. */
void bl_test_obatch_oracles(bl_test_obatch *bt);
/* The scratch (`scratch` values) and the frame buffers. */
void bl_test_obatch_buffers(bl_test_obatch *bt, size_t scratch);
/* Releases everything the batch holds and clears it. */
void bl_test_obatch_clear(bl_test_obatch *bt);
/* Every snapshot key of every slot against its oracle (names, layouts and
 * bits; NaNs alike when nan_equiv), then the live views. */
void bl_test_obatch_compare(bl_test_obatch *bt, bool nan_equiv, const char *after);
/* The random differential run of a batch: compares the creation state,
 * then for each of `frames` frames draws the operations (odds as
 * bl_test_obatch_random_ops), which slots run (all every fifth frame,
 * else each with chance 0.8; a slot that reported non-finite never runs
 * again, as the runtime latches it) and, by fill(), the inputs, steps and
 * compares (tally as bl_test_obatch_step). Returns the slot failures. */
size_t bl_test_obatch_random_frames(bl_test_obatch *bt, bl_gen *g, size_t frames,
                                    const size_t odds[3], size_t ops[3],
                                    void (*fill)(bl_test_obatch *bt, bl_gen *g),
                                    void (*tally)(const bl_test_obatch *bt, size_t b, void *ctx),
                                    void *ctx);
/* Starts frame t of the non-finite runs: each slot that has not failed
 * runs with chance p, and fill() draws the inputs. */
void bl_test_obatch_frame(bl_test_obatch *bt, bl_gen *g, size_t t, double p,
                          void (*fill)(bl_test_obatch *bt, bl_gen *g));
/* Steps the model and the oracles of the active slots with the batch's
 * inputs and noise, calls tally(bt, b, ctx) for each after its oracle's
 * frame, then compares every slot; returns how many slots failed in this
 * frame (marked failed). */
size_t bl_test_obatch_step(bl_test_obatch *bt, bool nan_equiv,
                           void (*tally)(const bl_test_obatch *bt, size_t b, void *ctx),
                           void *ctx);
/* Each slot that failed and was active in this frame is reset, on both
 * sides, with chance 1/2 (else it stays latched); a reset slot must be
 * finite and agree again. Returns how many were reset. */
size_t bl_test_obatch_reset_failed(bl_test_obatch *bt, bl_gen *g);

/* ---- hand-made initial states --------------------------------------------- */

/* Initial states allocated by the tests (each array with calloc), not by
 * construction: every array zero, c's config. Falandays signs are +1 and
 * targets at targ_min, the adapter's defaults; SORN's arrays of an empty
 * inhibitory population are NULL, as model.h allows. The _destroy
 * functions release them (NULL is a no-op). */
bl_falandays_init *bl_test_falandays_init_create(size_t n, size_t r, size_t e,
                                              const bl_falandays_config *c);
void bl_test_falandays_init_destroy(bl_falandays_init *in);
/* The last draws of a random Falandays configuration: initial-weight mode
 * and scale, mask repair, inhibitory fraction and the gains; the four
 * switches of the frame equations (axis, drive, rectify, learn_on) come
 * from the bits of `combo`, so consecutive slots can walk through all 16
 * combinations. */
void bl_test_falandays_random_flags(bl_gen *g, unsigned combo, bl_falandays_config *c);
/* The tiny configuration of the worked examples (spec/models.md §2.7). */
bl_falandays_config bl_test_tiny_config(void);
/* A hand-made state of the worked examples: N = R = E = 2, identity input
 * weights and readout. */
bl_falandays_init *bl_test_tiny_init(const bl_falandays_config *c);
bl_sorn_init *bl_test_sorn_init_create(size_t n, size_t r, size_t e, size_t n_e,
                                    const bl_sorn_config *c);
void bl_test_sorn_init_destroy(bl_sorn_init *in);

/* ---- construction comparisons ------------------------------------------- */

/* Element i of what: c must have the bits of ref. */
void bl_test_expect_bits(const char *what, size_t i, double c, double ref);
void bl_test_expect_table(const char *what, const double *a, const double *want, size_t count);
/* A little-endian double from 8 bytes. */
double bl_test_le_double(const unsigned char *b);

#endif
