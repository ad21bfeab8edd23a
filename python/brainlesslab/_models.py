"""Models from Python: configurations, construction and batches of slots.

This module owns its own cffi FFI (the convention of _native.py) over the
part of include/brainlesslab/model.h and rng.h that it wraps. Every check
the C library makes is left to the C library, so that a bad value raises
the same message as the engine; Python checks only what C cannot see (the
type, rank, memory layout and element type of an array).

Lifetimes: an InitialState owns its C state; its arrays are read-only
NumPy views of that state which keep it alive. A ModelBatch copies what it
is given (the C batch keeps nothing of its initial states). Everything a
batch hands back (snapshot arrays, effectors, activity, finite) is a copy
that owns its memory, because the C views of a batch are valid only until
its next operation.
"""

import dataclasses
import math
import numbers
import threading

import numpy as np

from . import _native

__all__ = ["FalandaysConfig", "SornConfig", "Generator", "seed_for", "InitialState", "construct",
           "ModelBatch"]

_CDEF = """
typedef enum bl_status {
    BL_OK = 0, BL_EVALUE, BL_ETYPE, BL_EKEY, BL_ENOMEM, BL_EEXIST, BL_ENOENT, BL_EISDIR,
    BL_EOS, BL_ERUNTIME, BL_EUSAGE, BL_EINTERRUPT, BL_ETERMINATED, BL_STATUS_COUNT
} bl_status;
typedef struct bl_error { bl_status status; char msg[1024]; } bl_error;

typedef struct bl_seed { uint64_t limb[4]; } bl_seed;
typedef enum bl_key_type { BL_KEY_INT, BL_KEY_STR, BL_KEY_BOOL } bl_key_type;
typedef struct bl_key { bl_key_type type; int64_t i; const char *s; } bl_key;
typedef struct bl_philox {
    uint64_t ctr[4]; uint64_t key[2]; uint64_t buffer[4];
    int buffer_pos; int has_uint32; uint32_t uinteger;
} bl_philox;
typedef struct bl_gen { bl_philox bits; } bl_gen;
bl_status bl_seed_for(int64_t root_seed, const char *partition, const char *stream,
                      const bl_key *keys, size_t nkeys, bl_seed *out, bl_error *err);
void bl_gen_init(bl_gen *g, const bl_seed *seed);
void bl_gen_random_fill(bl_gen *g, double *out, size_t n);
void bl_gen_standard_normal_fill(bl_gen *g, double *out, size_t n);

typedef enum bl_dtype { BL_FLOAT64, BL_FLOAT32 } bl_dtype;
typedef struct bl_matrix { bl_dtype dtype; size_t rows, cols; const void *data; } bl_matrix;

typedef struct bl_falandays_config {
    double leak; double lrate_wmat; double lrate_targ; double threshold_mult;
    double targ_min; double input_weight; double weight_init_std; bool learn_on;
    double link_p; const double *input_link_p; size_t input_link_p_len;
    int weight_init_mode; double recurrent_init_scale; bool rectify; bool repair_masks;
    int axis; double inhibitory_frac; int drive; double membrane_noise; double noise_gain;
} bl_falandays_config;
void bl_falandays_config_default(bl_falandays_config *c);
bl_status bl_falandays_config_validate(const bl_falandays_config *c, bl_error *err);
typedef struct bl_falandays_init {
    bl_falandays_config config;
    size_t n, r, e;
    double *weights; double *recurrent_mask; double *input_weights; double *output_mask;
    int32_t *signs; double *acts; double *targets; double *spikes;
} bl_falandays_init;
bl_status bl_falandays_construct(const bl_falandays_config *c, size_t n, size_t r, size_t e,
                                 bl_gen *rng, bl_falandays_init **out, bl_error *err);
bl_status bl_falandays_init_create(const bl_falandays_config *c, size_t n, size_t r, size_t e,
                                   bl_falandays_init **out, bl_error *err);
void bl_falandays_init_destroy(bl_falandays_init *init);

typedef struct bl_sorn_config {
    double inhibitory_fraction; double p_ee; double p_ei; double p_ie; double p_input;
    double p_output; double ee_row_sum; double ei_row_sum; double ie_row_sum;
    double input_row_sum; double T_E_max; double T_I_max; double eta_stdp; double eta_ip;
    double H_ip; bool learn_on;
} bl_sorn_config;
void bl_sorn_config_default(bl_sorn_config *c);
bl_status bl_sorn_config_validate(const bl_sorn_config *c, bl_error *err);
size_t bl_sorn_excitatory_count(double inhibitory_fraction, size_t n);
typedef struct bl_sorn_init {
    bl_sorn_config config;
    size_t n, r, e, n_e;
    double *w_ee; double *ee_mask; double *c_e; double *w_ei; double *w_ie; double *w_eu;
    double *output_mask; double *t_e; double *t_i; double *x; double *y;
} bl_sorn_init;
bl_status bl_sorn_construct(const bl_sorn_config *c, size_t n, size_t r, size_t e, bl_gen *rng,
                            bl_sorn_init **out, bl_error *err);
bl_status bl_sorn_init_create(const bl_sorn_config *c, size_t n, size_t r, size_t e,
                              bl_sorn_init **out, bl_error *err);
void bl_sorn_init_destroy(bl_sorn_init *init);

typedef struct bl_model bl_model;
bl_status bl_model_create_falandays(const bl_falandays_init *const *initials, size_t nslots,
                                    bl_dtype dtype, bl_model **out, bl_error *err);
bl_status bl_model_create_sorn(const bl_sorn_init *const *initials, size_t nslots,
                               bl_dtype dtype, bl_model **out, bl_error *err);
void bl_model_destroy(bl_model *m);
size_t bl_model_slots(const bl_model *m);
size_t bl_model_nodes(const bl_model *m);
size_t bl_model_receptors(const bl_model *m);
size_t bl_model_effectors(const bl_model *m);
bl_status bl_model_step(bl_model *m, const bl_matrix *inputs, const bl_matrix *noise,
                        const int32_t *active, size_t nactive, bl_error *err);
bl_status bl_model_reset(bl_model *m, const int32_t *active, size_t nactive, bl_error *err);
bl_status bl_model_freeze_weights(bl_model *m, const int32_t *active, size_t nactive,
                                  bl_error *err);
bl_status bl_model_freeze_plasticity(bl_model *m, const int32_t *active, size_t nactive,
                                     bl_error *err);
const void *bl_model_effector_data(const bl_model *m);
const void *bl_model_activity_data(const bl_model *m);
const int32_t *bl_model_finite(const bl_model *m);

typedef struct bl_snapshot_array {
    const char *name; int ndim; size_t shape[2]; bool integer; double *data;
} bl_snapshot_array;
typedef struct bl_snapshot { size_t count; bl_snapshot_array *arrays; } bl_snapshot;
bl_status bl_model_snapshot(const bl_model *m, size_t slot, bl_snapshot **out, bl_error *err);
void bl_snapshot_destroy(bl_snapshot *s);
"""

ffi, lib = _native.open_library(_CDEF)

# The spec's exception for each status a model call can return.
_EXCEPTIONS = {
    lib.BL_EVALUE: ValueError,
    lib.BL_ETYPE: TypeError,
    lib.BL_EKEY: KeyError,
    lib.BL_ENOMEM: MemoryError,
}


def _raise(status, err):
    """Raises the exception of a failed C call with its one-line message."""
    raise _EXCEPTIONS.get(status, RuntimeError)(ffi.string(err.msg).decode("utf-8", "replace"))


def _call(fn, *args):
    """Calls a fallible C function (its last argument is the bl_error)."""
    err = ffi.new("bl_error *")
    status = fn(*args, err)
    if status != lib.BL_OK:
        _raise(status, err)


# ---- configurations --------------------------------------------------------

# A field's kind says how a Python value becomes the C field: "num" (a real),
# "flag" (a bool), "enum" (a name of _ENUMS, in C order) or "link_p" (None or
# one probability per receptor). The order is the C struct's and the spec's.
_ENUMS = {
    "weight_init_mode": ("excitatory", "pong_mixed", "legacy_normal"),
    "axis": ("unsigned", "dale"),
    "drive": ("none", "oosawa"),
}
# An unknown enum name becomes this out-of-range code, so that the C
# validation reports it with its own message (as plan resolution does).
_UNKNOWN_ENUM = 99


def _number(cls, name, value):
    """Python float(x) for the numbers a configuration takes (bools count as
    ints, as in the reference); anything else is a TypeError."""
    if isinstance(value, (numbers.Real, np.bool_)):
        return float(value)
    raise TypeError(f"{cls}.{name} must be a number")


def _make_config(cls_name, spec_name, c_type, default_fn, validate_fn, doc, strict_bools):
    """A frozen dataclass over one C configuration struct: its fields, in the
    struct's order, default to the C library's defaults; construction converts
    every value (enums stay strings) and validates through the C library.
    Messages name the class as the spec (and the engine) does: spec_name."""
    defaults = ffi.new(c_type + " *")
    default_fn(defaults)
    # The struct's fields but the length of input_link_p, which its tuple
    # carries.
    fields, kinds, spec = [], {}, []
    for name, cfield in ffi.typeof(c_type).fields:
        if name == "input_link_p_len":
            continue
        fields.append(name)
        if name in _ENUMS:
            kinds[name] = "enum"
            default = _ENUMS[name][getattr(defaults, name)]
        elif name == "input_link_p":
            kinds[name] = "link_p"
            default = None
        elif cfield.type.cname == "_Bool":
            kinds[name] = "flag"
            default = bool(getattr(defaults, name))
        else:
            kinds[name] = "num"
            default = float(getattr(defaults, name))
        spec.append((name, object, dataclasses.field(default=default)))

    def __post_init__(self):
        for name in fields:
            value = getattr(self, name)
            kind = kinds[name]
            if kind == "num":
                value = _number(spec_name, name, value)
            elif kind == "flag":
                if isinstance(value, (bool, np.bool_)):
                    value = bool(value)
                elif strict_bools:
                    raise TypeError(f"{name} must be a bool")
                else:
                    # The reference keeps any number and uses its truth.
                    value = _number(spec_name, name, value) != 0.0
            elif kind == "link_p" and value is not None:
                message = f"{spec_name}.input_link_p must be an array of numbers"
                if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
                    raise TypeError(message)
                try:
                    value = tuple(_number(spec_name, name, v) for v in value)
                except TypeError:
                    raise TypeError(message) from None
            object.__setattr__(self, name, value)
        struct, _keep = self._to_c()
        _call(validate_fn, struct)

    def _to_c(self):
        """The C struct of this configuration and what must stay alive while
        C reads it (an input_link_p array)."""
        struct = ffi.new(c_type + " *")
        keep = None
        for name in fields:
            value = getattr(self, name)
            kind = kinds[name]
            if kind == "enum":
                names = _ENUMS[name]
                known = isinstance(value, str) and value in names
                value = names.index(value) if known else _UNKNOWN_ENUM
            elif kind == "link_p":
                if value is not None:
                    # An empty tuple is still "given" (C rejects it).
                    keep = ffi.new("double[]", max(len(value), 1))
                    for k, v in enumerate(value):
                        keep[k] = v
                    struct.input_link_p = keep
                    struct.input_link_p_len = len(value)
                continue
            setattr(struct, name, value)
        return struct, keep

    cls = dataclasses.make_dataclass(
        cls_name, spec, frozen=True, kw_only=True,
        namespace={"__post_init__": __post_init__, "_to_c": _to_c, "__doc__": doc})
    cls.__module__ = "brainlesslab"
    return cls


FalandaysConfig = _make_config(
    "FalandaysConfig", "FalandaysConfig", "bl_falandays_config", lib.bl_falandays_config_default,
    lib.bl_falandays_config_validate,
    """Falandays parameters (spec/models.md §2.1), keyword construction with the
    engine's defaults; enums are strings ("excitatory", "pong_mixed",
    "legacy_normal"; "unsigned", "dale"; "none", "oosawa"). Frozen: derive a
    variant with dataclasses.replace(config, leak=0.1). A bad value raises
    ValueError (TypeError for a value of the wrong kind) with the engine's
    message.""", strict_bools=False)

SornConfig = _make_config(
    "SornConfig", "SORNConfig", "bl_sorn_config", lib.bl_sorn_config_default, lib.bl_sorn_config_validate,
    """SORN parameters (spec/models.md §3.1), keyword construction with the
    engine's defaults; learn_on must be a real bool (TypeError otherwise).
    Frozen: derive a variant with dataclasses.replace.""", strict_bools=True)


# ---- seeds and generators -----------------------------------------------------

def _seed_struct(value):
    """A bl_seed from a Python int in [0, 2**256)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError("seed must be an integer in [0, 2**256) or a Generator")
    value = int(value)
    if not 0 <= value < 1 << 256:
        raise ValueError("seed must be an integer in [0, 2**256)")
    seed = ffi.new("bl_seed *")
    for k in range(4):
        seed.limb[k] = (value >> (64 * k)) & 0xFFFFFFFFFFFFFFFF
    return seed


def seed_for(root_seed, partition, stream, *keys):
    """The engine's seed identity (spec/models.md §6.1) as a 256-bit int:
    seed_for(root_seed, partition, stream, *keys) with int, str or bool keys
    (the type is part of the identity)."""
    if isinstance(root_seed, bool) or not isinstance(root_seed, numbers.Integral):
        raise TypeError("root_seed must be an integer")
    if not -(1 << 63) <= root_seed < 1 << 63:
        raise ValueError("root_seed must fit in a signed 64-bit integer")
    if not isinstance(partition, str) or not isinstance(stream, str):
        raise TypeError("partition and stream must be strings")
    keep = []
    ckeys = ffi.new("bl_key[]", max(len(keys), 1))
    for k, key in enumerate(keys):
        if isinstance(key, bool):
            ckeys[k].type, ckeys[k].i = lib.BL_KEY_BOOL, int(key)
        elif isinstance(key, numbers.Integral):
            ckeys[k].type, ckeys[k].i = lib.BL_KEY_INT, int(key)
        elif isinstance(key, str):
            keep.append(ffi.new("char[]", key.encode("utf-8")))
            ckeys[k].type, ckeys[k].s = lib.BL_KEY_STR, keep[-1]
        else:
            raise TypeError(f"seed key {key!r} must be an int, str or bool")
    out = ffi.new("bl_seed *")
    _call(lib.bl_seed_for, int(root_seed), partition.encode("utf-8"), stream.encode("utf-8"),
          ckeys, len(keys), out)
    return sum(out.limb[k] << (64 * k) for k in range(4))


class Generator:
    """NumPy's Generator(Philox(seed)) as the engine reproduces it, bit for
    bit (spec/models.md §6.3): construct() draws from it in the normative
    order, so one generator passed to several constructions continues where
    the last left off. Not safe to share between threads."""

    def __init__(self, seed):
        self._gen = ffi.new("bl_gen *")
        lib.bl_gen_init(self._gen, _seed_struct(seed))

    @classmethod
    def for_stream(cls, root_seed, partition, stream, *keys):
        """The generator of seed_for(root_seed, partition, stream, *keys)."""
        return cls(seed_for(root_seed, partition, stream, *keys))

    def _fill(self, fill, size):
        out = np.empty(() if size is None else size, dtype=np.float64)
        fill(self._gen, ffi.cast("double *", out.ctypes.data), out.size)
        return float(out) if size is None else out

    def random(self, size=None):
        """Uniforms in [0, 1) as NumPy's Generator.random(size): a float
        without size, else an array of that shape."""
        return self._fill(lib.bl_gen_random_fill, size)

    def standard_normal(self, size=None):
        """Normals as NumPy's Generator.standard_normal(size)."""
        return self._fill(lib.bl_gen_standard_normal_fill, size)


# ---- initial states -------------------------------------------------------------

class _View:
    """Exposes C memory to NumPy and keeps its owner alive: the array made
    from it has this object as its base."""

    def __init__(self, owner, address, shape, typestr):
        self._owner = owner
        self.__array_interface__ = {
            "shape": shape, "typestr": typestr, "data": (address, True), "version": 3}


def _view(owner, pointer, shape, dtype):
    dtype = np.dtype(dtype)
    if math.prod(shape) == 0 or pointer == ffi.NULL:
        # Nothing to point at (a SORN state without inhibitory units).
        empty = np.zeros(shape, dtype=dtype)
        empty.flags.writeable = False
        return empty
    address = int(ffi.cast("uintptr_t", pointer))
    return np.asarray(_View(owner, address, shape, dtype.str))


# Each family's arrays: name and shape (from the state's sizes), in the C
# struct's order; signs are int32, everything else float64.
def _falandays_shapes(n, r, e, n_e):
    return {"weights": (n, n), "recurrent_mask": (n, n), "input_weights": (n, r),
            "output_mask": (n, e), "signs": (n,), "acts": (n,), "targets": (n,),
            "spikes": (n,)}


def _sorn_shapes(n, r, e, n_e):
    n_i = n - n_e
    return {"w_ee": (n_e, n_e), "ee_mask": (n_e, n_e), "c_e": (n_e,), "w_ei": (n_e, n_i),
            "w_ie": (n_i, n_e), "w_eu": (n_e, r), "output_mask": (e, n_e), "t_e": (n_e,),
            "t_i": (n_i,), "x": (n_e,), "y": (n_i,)}


class _Family:
    """A model family's C entry points and the shapes of its state arrays."""

    def __init__(self, name, construct, create, destroy, batch, shapes):
        self.name = name
        self.construct, self.create, self.destroy = construct, create, destroy
        self.batch, self.shapes = batch, shapes


_FAMILIES = {
    FalandaysConfig: _Family("falandays", lib.bl_falandays_construct,
                             lib.bl_falandays_init_create, lib.bl_falandays_init_destroy,
                             lib.bl_model_create_falandays, _falandays_shapes),
    SornConfig: _Family("sorn", lib.bl_sorn_construct, lib.bl_sorn_init_create,
                        lib.bl_sorn_init_destroy, lib.bl_model_create_sorn, _sorn_shapes),
}


def _family_of(config):
    family = _FAMILIES.get(type(config))
    if family is None:
        raise TypeError("config must be a FalandaysConfig or a SornConfig")
    return family


def _size(name, value):
    """A node/port count for C: an int (bools rejected); below 1 it is passed
    as 0 so that the engine reports it with its own message."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= 1")
    return max(int(value), 0)


class InitialState:
    """One slot's initial state (spec/models.md §2.2, §3.3), canonical
    orientation ([destination][source] matrices), float64 (signs int32).

    Made by construct() or InitialState.from_arrays(); its arrays are
    attributes named as in model.h (Falandays: weights, recurrent_mask,
    input_weights, output_mask, signs, acts, targets, spikes; SORN: w_ee,
    ee_mask, c_e, w_ei, w_ie, w_eu, output_mask, t_e, t_i, x, y): read-only
    NumPy views of the engine's copy, which they keep alive."""

    def __init__(self, family, config, ptr):
        self._family = family
        self._ptr = ffi.gc(ptr, family.destroy)
        self.config = config
        self.kind = family.name
        self.n, self.r, self.e = int(ptr.n), int(ptr.r), int(ptr.e)
        self.n_e = int(ptr.n_e) if family.name == "sorn" else None
        self._shapes = family.shapes(self.n, self.r, self.e, self.n_e)

    def __getattr__(self, name):
        shapes = self.__dict__.get("_shapes", {})
        if name not in shapes:
            raise AttributeError(name)
        dtype = np.int32 if name == "signs" else np.float64
        return _view(self, getattr(self._ptr, name), shapes[name], dtype)

    def arrays(self):
        """Every array of the state by name, in model.h's order."""
        return {name: getattr(self, name) for name in self._shapes}

    def __repr__(self):
        extra = f", n_e={self.n_e}" if self.n_e is not None else ""
        return f"<InitialState {self.kind} n={self.n}, r={self.r}, e={self.e}{extra}>"

    @classmethod
    def from_arrays(cls, config, **arrays):
        """A hand-made initial state: config and the family's arrays by name,
        copied in. Falandays needs weights, recurrent_mask, input_weights and
        output_mask (signs default to +1, acts and spikes to 0, targets to
        targ_min); SORN needs every array (N_E follows the config's ratio).
        Values are validated by ModelBatch, as the engine does."""
        family = _family_of(config)
        needed = (("weights", "recurrent_mask", "input_weights", "output_mask")
                  if family.name == "falandays" else tuple(_sorn_shapes(0, 0, 0, 0)))
        for name in needed:
            if name not in arrays:
                raise TypeError(f"from_arrays() needs {name}")
        unknown = set(arrays) - set(family.shapes(0, 0, 0, 0))
        if unknown:
            raise TypeError(f"from_arrays() got unknown arrays: {', '.join(sorted(unknown))}")

        def dim(name, axis):
            """Axis of a matrix argument (0 when it is no matrix: the shape
            check below reports it)."""
            shape = np.shape(arrays[name])
            return shape[axis] if len(shape) == 2 else 0

        if family.name == "falandays":
            n, r, e = dim("weights", 0), dim("input_weights", 1), dim("output_mask", 1)
            n_e = None
        else:
            n_e = np.size(arrays["t_e"])
            n, r, e = n_e + np.size(arrays["t_i"]), dim("w_eu", 1), dim("output_mask", 0)
        struct, _keep = config._to_c()
        out = ffi.new(f"bl_{family.name}_init **")
        _call(family.create, struct, n, r, e, out)
        state = cls(family, config, out[0])
        if n_e is not None and state.n_e != n_e:
            raise ValueError(f"the arrays hold {n_e} excitatory units, but "
                             f"SORNConfig.inhibitory_fraction {config.inhibitory_fraction} "
                             f"gives N_E = {state.n_e} for N = {n}")
        for name, value in arrays.items():
            shape = state._shapes[name]
            value = np.asarray(value)
            if value.shape != shape:
                raise ValueError(f"{name} must have shape {shape}, got {value.shape}")
            if name == "signs":
                converted = value.astype(np.int32)
                if not np.array_equal(converted, value):
                    raise ValueError("signs must be exactly +1 or -1")
            else:
                converted = np.ascontiguousarray(value, dtype=np.float64)
            if converted.size:
                ffi.memmove(getattr(state._ptr, name), ffi.from_buffer(converted),
                            converted.nbytes)
        return state


def construct(config, n, r, e, seed):
    """The engine's construction (spec/models.md §2.3, §3.4) of an initial
    state of n nodes, r receptors and e effectors. seed is what the C API
    takes: a Generator (drawn from in place), or an int in [0, 2**256), the
    seed of a fresh Generator (e.g. seed_for(...) of the runtime's
    construction stream)."""
    family = _family_of(config)
    sizes = [_size(name, v) for name, v in (("N", n), ("R", r), ("E", e))]
    if isinstance(seed, Generator):
        gen = seed
    elif isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        gen = Generator(seed)
    else:
        raise TypeError("rng must be a generator (a Generator, or an int seed of one)")
    struct, _keep = config._to_c()
    out = ffi.new(f"bl_{family.name}_init **")
    _call(family.construct, struct, *sizes, gen._gen, out)
    return InitialState(family, config, out[0])


# ---- batches -----------------------------------------------------------------------

_DTYPES = {"float64": lib.BL_FLOAT64, "float32": lib.BL_FLOAT32}
_NDARRAY = np.ndarray
_step = lib.bl_model_step
_DTYPE_NUMS = {np.dtype(name).num: code for name, code in _DTYPES.items()}
# Not a dtype of the engine: handed to C, which rejects it with its message.
_BAD_DTYPE = 99


def _dtype_code(dtype):
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = None
    return _DTYPES.get(name, _BAD_DTYPE)


class ModelBatch:
    """A batch of slots of one model family (spec/models.md §1), created from
    InitialStates of equal dimensions in float64 (the reference, bit for bit)
    or float32.

    Calls may run concurrently on different batches from different threads
    (the GIL is released inside the engine); one batch serves one thread at
    a time (a second concurrent call raises RuntimeError)."""

    def __init__(self, initial_states, dtype="float64"):
        states = list(initial_states)
        for s in states:
            if not isinstance(s, InitialState):
                raise TypeError("initial_states must be InitialState objects")
        families = {s._family for s in states}
        if len(families) > 1:
            raise ValueError("initial states of one batch must be of one model family")
        family = families.pop() if families else _FAMILIES[FalandaysConfig]
        ptrs = ffi.new(f"const bl_{family.name}_init *[]", max(len(states), 1))
        for k, s in enumerate(states):
            ptrs[k] = s._ptr
        out = ffi.new("bl_model **")
        _call(family.batch, ptrs, len(states), _dtype_code(dtype), out)
        self._m = ffi.gc(out[0], lib.bl_model_destroy)
        self.kind = family.name
        self.dtype = np.dtype(dtype)
        self.slots = int(lib.bl_model_slots(self._m))
        self.n = int(lib.bl_model_nodes(self._m))
        self.r = int(lib.bl_model_receptors(self._m))
        self.e = int(lib.bl_model_effectors(self._m))
        # Preallocated call arguments: a step only fills in two pointers.
        self._inputs = ffi.new("bl_matrix *")
        self._noise = ffi.new("bl_matrix *")
        self._all = ffi.new("int32_t[]", [1] * self.slots)
        self._err = ffi.new("bl_error *")
        self._lock = threading.Lock()

    def __repr__(self):
        return (f"<ModelBatch {self.kind} {self.dtype.name} slots={self.slots} "
                f"n={self.n} r={self.r} e={self.e}>")

    def _matrix(self, what, array, matrix):
        """Fills a bl_matrix from an array; returns the cdata that keeps its
        buffer reachable during the call. Rank, element type and layout are
        checked here; shape and dtype are left to the engine's message."""
        if not isinstance(array, _NDARRAY):
            raise ValueError(f"{what} must be a NumPy array, got {type(array).__name__}")
        if array.ndim != 2:
            raise ValueError(f"{what} must be a 2-D [slots][...] array, got {array.ndim}-D")
        if not array.flags.c_contiguous:
            raise ValueError(f"{what} must be C-contiguous")
        dt = array.dtype
        # By type number (dtype.name costs microseconds); a byte-swapped
        # float is no engine dtype.
        code = _DTYPE_NUMS.get(dt.num) if dt.isnative else None
        if code is None:
            raise ValueError(f"{what} must match the model dtype {self.dtype.name}, "
                             f"got {array.dtype.name}")
        matrix.dtype = code
        matrix.rows, matrix.cols = array.shape
        buf = ffi.from_buffer(array)
        matrix.data = buf
        return buf

    def _active(self, active):
        if active is None:
            return self._all, self.slots
        a = np.asarray(active)
        if a.ndim != 1 or not (a.dtype == np.bool_ or np.issubdtype(a.dtype, np.integer)):
            raise ValueError(f"active must be an int32 array of length {self.slots}")
        a = np.ascontiguousarray(a, dtype=np.int32)
        return ffi.from_buffer("int32_t[]", a), len(a)

    def _run(self, fn, *args):
        if not self._lock.acquire(False):
            raise RuntimeError("this ModelBatch is in use by another thread")
        try:
            status = fn(self._m, *args, self._err)
        finally:
            self._lock.release()
        if status != lib.BL_OK:
            _raise(status, self._err)

    def step(self, inputs, noise, active=None):
        """One neural frame for every active slot: inputs [slots][R] and noise
        [slots][N], C-contiguous arrays of the model dtype; active (optional)
        a length-slots bool/int mask (0 leaves a slot untouched)."""
        # _run written out: this is the call a loop makes millions of times.
        keep_in = self._matrix("inputs", inputs, self._inputs)
        keep_noise = self._matrix("noise", noise, self._noise)
        act, count = (self._all, self.slots) if active is None else self._active(active)
        lock = self._lock
        if not lock.acquire(False):
            raise RuntimeError("this ModelBatch is in use by another thread")
        try:
            status = _step(self._m, self._inputs, self._noise, act, count, self._err)
        finally:
            lock.release()
        del keep_in, keep_noise
        if status:
            _raise(status, self._err)

    def reset(self, active=None):
        """Restores the construction-time state of the active slots."""
        self._run(lib.bl_model_reset, *self._active(active))

    def freeze_weights(self, active=None):
        """Stops weight plasticity of the active slots (targets keep adapting)."""
        self._run(lib.bl_model_freeze_weights, *self._active(active))

    def freeze_plasticity(self, active=None):
        """Stops every plasticity of the active slots."""
        self._run(lib.bl_model_freeze_plasticity, *self._active(active))

    def snapshot(self, slot):
        """Every state array of one slot by name (model.h's keys, in its
        order), canonical [destination][source] orientation, as NumPy arrays
        that own their memory: float64 values (exact for float32 batches),
        int32 for integer state (masks, signs, counts, flags); scalars are
        0-d arrays."""
        if isinstance(slot, (bool, np.bool_)) or not isinstance(slot, numbers.Integral):
            raise TypeError("slot must be an integer")
        if slot < 0:
            # size_t cannot carry it to the engine, which words the others.
            raise ValueError(f"snapshot slot {slot} is out of range for a batch of {self.slots}")
        out = ffi.new("bl_snapshot **")
        self._run(lib.bl_model_snapshot, int(slot), out)
        snap = ffi.gc(out[0], lib.bl_snapshot_destroy)
        result = {}
        for k in range(snap.count):
            a = snap.arrays[k]
            shape = tuple(int(a.shape[d]) for d in range(a.ndim))
            count = math.prod(shape)
            values = np.frombuffer(ffi.buffer(a.data, 8 * count), dtype=np.float64).copy()
            if a.integer:
                values = values.astype(np.int32)
            result[ffi.string(a.name).decode()] = values.reshape(shape)
        return result

    def _copy(self, pointer, shape, dtype):
        if self._lock.locked():
            raise RuntimeError("this ModelBatch is in use by another thread")
        size = math.prod(shape) * np.dtype(dtype).itemsize
        return np.frombuffer(ffi.buffer(pointer, size), dtype=dtype).reshape(shape).copy()

    @property
    def effectors(self):
        """Effector outputs [slots][E] in the model dtype (a copy)."""
        return self._copy(lib.bl_model_effector_data(self._m), (self.slots, self.e), self.dtype)

    @property
    def activity(self):
        """Per-node activity [slots][N] in the model dtype (Falandays: the
        spikes; SORN: x then y), a copy."""
        return self._copy(lib.bl_model_activity_data(self._m), (self.slots, self.n), self.dtype)

    @property
    def finite(self):
        """Per-slot finite flags [slots] (bool, a copy): False where the last
        frame produced a non-finite value. Never latched by the batch."""
        return self._copy(lib.bl_model_finite(self._m), (self.slots,), np.int32).astype(bool)
