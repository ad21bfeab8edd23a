"""The model API from Python: configurations, construction, initial states
and batches (spec/models.md), checked against the spec's known answers and
the shared Falandays fixtures, bit for bit in float64."""

import dataclasses
import gc
import hashlib
import math

import numpy as np
import pytest

import brainlesslab as bl


# ---- configurations -----------------------------------------------------------------

def test_falandays_defaults_are_the_specs():
    c = bl.FalandaysConfig()
    assert dataclasses.asdict(c) == {
        "leak": 0.25, "lrate_wmat": 1.0, "lrate_targ": 0.01, "threshold_mult": 2.0,
        "targ_min": 1.0, "input_weight": 1.875, "weight_init_std": 1.0, "learn_on": True,
        "link_p": 0.1, "input_link_p": None, "weight_init_mode": "excitatory",
        "recurrent_init_scale": 1.0, "rectify": False, "repair_masks": False,
        "axis": "unsigned", "inhibitory_frac": 0.25, "drive": "none",
        "membrane_noise": 0.0, "noise_gain": 0.0}


def test_sorn_defaults_are_the_specs():
    c = bl.SornConfig()
    assert dataclasses.asdict(c) == {
        "inhibitory_fraction": 0.2, "p_ee": 10 / 166, "p_ei": 1.0, "p_ie": 1.0,
        "p_input": 0.05, "p_output": 0.05, "ee_row_sum": 1.0, "ei_row_sum": 1.0,
        "ie_row_sum": 1.0, "input_row_sum": 1.0, "T_E_max": 0.5, "T_I_max": 1.0,
        "eta_stdp": 0.001, "eta_ip": 0.001, "H_ip": 0.1, "learn_on": True}


def test_configs_are_keyword_only_frozen_and_convert_values():
    with pytest.raises(TypeError):
        bl.FalandaysConfig(0.5)
    c = bl.FalandaysConfig(leak=1, axis="dale", input_link_p=[0, 0.5], learn_on=0)
    assert c.leak == 1.0 and type(c.leak) is float
    assert c.input_link_p == (0.0, 0.5) and c.learn_on is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.leak = 0.5
    d = dataclasses.replace(c, leak=0.125)
    assert d.leak == 0.125 and d.axis == "dale" and c.leak == 1.0
    assert c == bl.FalandaysConfig(leak=1.0, axis="dale", input_link_p=(0.0, 0.5),
                                   learn_on=False)


@pytest.mark.parametrize("kwargs, message", [
    ({"leak": math.nan}, "FalandaysConfig.leak must be finite"),
    ({"noise_gain": math.inf}, "FalandaysConfig.noise_gain must be finite"),
    ({"leak": 1.5}, "FalandaysConfig.leak must be in [0, 1]"),
    ({"lrate_targ": -0.1}, "FalandaysConfig.lrate_targ must be non-negative"),
    ({"threshold_mult": 0}, "FalandaysConfig.threshold_mult must be positive"),
    ({"axis": "dal"}, "FalandaysConfig.axis must be unsigned or dale"),
    ({"drive": "Oosawa"}, "FalandaysConfig.drive must be none or oosawa"),
    ({"weight_init_mode": 1},
     "FalandaysConfig.weight_init_mode must be one of excitatory, pong_mixed, legacy_normal"),
    ({"input_link_p": ()}, "FalandaysConfig.input_link_p must hold one probability per receptor"),
    ({"input_link_p": (0.5, 2.0)},
     "FalandaysConfig.input_link_p[1] must be a finite probability in [0, 1]"),
])
def test_falandays_config_rejections_carry_the_engines_message(kwargs, message):
    with pytest.raises(ValueError) as info:
        bl.FalandaysConfig(**kwargs)
    assert str(info.value) == message


@pytest.mark.parametrize("kwargs, exc, message", [
    ({"p_ee": math.nan}, ValueError, "SORNConfig.p_ee must be finite and non-negative"),
    ({"eta_ip": -1}, ValueError, "SORNConfig.eta_ip must be finite and non-negative"),
    ({"H_ip": 1.5}, ValueError, "SORNConfig.H_ip must be in [0, 1]"),
    ({"learn_on": 1}, TypeError, "learn_on must be a bool"),
    ({"T_E_max": "0.5"}, TypeError, "SORNConfig.T_E_max must be a number"),
])
def test_sorn_config_rejections(kwargs, exc, message):
    with pytest.raises(exc) as info:
        bl.SornConfig(**kwargs)
    assert str(info.value) == message


def test_falandays_config_type_errors():
    with pytest.raises(TypeError, match="FalandaysConfig.leak must be a number"):
        bl.FalandaysConfig(leak="0.2")
    with pytest.raises(TypeError, match="FalandaysConfig.input_link_p must be an array"):
        bl.FalandaysConfig(input_link_p=0.5)
    with pytest.raises(TypeError, match="FalandaysConfig.input_link_p must be an array"):
        bl.FalandaysConfig(input_link_p=["a"])
    with pytest.raises(TypeError):
        bl.FalandaysConfig(lek=0.2)


# ---- seeds and generators (spec/models.md appendix A.1, A.2) --------------------------

def test_seed_for_and_generator_known_answers():
    assert bl.seed_for(1, "development", "drive", "trial") == int(
        "f3eb1da8b788b4ca41531cf9d84fc5bdf5646a1b1e1a89decdad1935a2c53180", 16)
    assert bl.seed_for(1, "development", "world", "pair", 1) != bl.seed_for(
        1, "development", "world", "pair", "1")
    assert bl.seed_for(12001, "development", "construction", "paired-construction",
                       "falandays", 64, 3, 2, 0) == int(
        "d55386b281c32ae309c0ce50038a639c7511f8a10cda6c42da6638d52d84fd60", 16)
    g = bl.Generator.for_stream(1, "development", "drive", "trial")
    assert g.random(4).tolist() == [0.04785111338346992, 0.6255000651279045,
                                    0.25443610350839074, 0.774622651502237]
    normals = bl.Generator.for_stream(1, "development", "drive", "trial").standard_normal((2, 3))
    assert normals.tolist() == [[0.8013643686741515, -0.007850994764264565, -0.03502714492764279],
                                [-0.506051717186213, 1.0213569024911926, 0.04840617901350069]]


def test_generator_seed_checks():
    for bad in (-1, 1 << 256):
        with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\*\*256\)"):
            bl.Generator(bad)
    for bad in (1.0, "1", True):
        with pytest.raises(TypeError):
            bl.Generator(bad)
    with pytest.raises(TypeError):
        bl.seed_for(1, "development", "drive", 1.5)


# ---- construction (spec/models.md §2.3, §3.4, appendix A.3-A.5) -----------------------

def kat_generator(key):
    return bl.Generator.for_stream(0, "development", "construction", key)


def test_falandays_construction_known_answer():
    config = bl.FalandaysConfig(link_p=0.4, repair_masks=True, input_link_p=(0, 0.5, 1.0))
    s = bl.construct(config, 6, 3, 2, kat_generator("kat"))
    assert (s.kind, s.n, s.r, s.e) == ("falandays", 6, 3, 2)
    assert s.config is config
    assert s.recurrent_mask.tolist() == [[0, 0, 1, 0, 1, 1], [1, 0, 0, 0, 1, 0],
                                         [0, 0, 0, 1, 1, 1], [0, 1, 1, 0, 1, 1],
                                         [1, 1, 0, 0, 0, 1], [1, 0, 0, 1, 1, 0]]
    assert s.input_weights.tolist() == [[0, 0, 1.875]] * 2 + [[0, 1.875, 1.875]] * 4
    assert s.output_mask.tolist() == [[0, 1], [1, 0], [1, 1], [0, 0], [0, 0], [1, 1]]
    assert s.signs.dtype == np.int32 and s.signs.tolist() == [1] * 6
    nonzero = {(int(i), int(j)): s.weights[i, j] for i, j in zip(*np.nonzero(s.weights))}
    assert len(nonzero) == 18
    assert nonzero[(0, 2)] == 2.032780768513767
    assert nonzero[(3, 5)] == 2.0016157787457325
    assert nonzero[(5, 4)] == 1.9952681867984998
    assert s.acts.tolist() == [0.0] * 6 and s.targets.tolist() == [1.0] * 6


def test_dale_construction_known_answer():
    s = bl.construct(bl.FalandaysConfig(axis="dale", link_p=0.5), 5, 2, 2,
                     kat_generator("kat-dale"))
    assert s.recurrent_mask.tolist() == [[0, 0, 0, 1, 1], [1, 0, 0, 0, 0], [1, 1, 0, 1, 1],
                                         [0, 1, 0, 0, 1], [0, 0, 0, 0, 0]]
    assert s.weights[2, 4] == 1.2145158277153683 and s.weights[3, 1] == 1.5604775917235947


def test_sorn_construction_known_answer():
    s = bl.construct(bl.SornConfig(p_ee=0.4, p_input=0.4, p_output=0.4), 6, 2, 2,
                     kat_generator("kat-sorn"))
    assert (s.kind, s.n_e) == ("sorn", 5)
    assert s.ee_mask.tolist() == [[0, 0, 1, 1, 1], [0, 0, 1, 0, 1], [0, 0, 0, 1, 0],
                                  [0, 1, 1, 0, 1], [1, 0, 1, 1, 0]]
    assert s.c_e.tolist() == [1.0, 1.0, 1.0, 0.9999999999999998, 0.9999999999999999]
    assert s.w_ei.shape == (5, 1) and s.w_ei.tolist() == [[1.0]] * 5
    assert s.w_ie.shape == (1, 5) and s.w_ie[0, 1] == 0.44374051474988985
    assert s.output_mask.tolist() == [[1, 0, 0, 0, 1], [0, 0, 1, 1, 0]]
    assert s.t_i.tolist() == [0.6553740702898639]
    assert s.t_e[0] == 0.05521415482600617


def test_an_int_seed_is_a_fresh_generator_and_a_generator_continues():
    config = bl.FalandaysConfig(link_p=0.3)
    seed = bl.seed_for(0, "development", "construction", "kat")
    by_int = bl.construct(config, 7, 2, 2, seed)
    g = bl.Generator(seed)
    first = bl.construct(config, 7, 2, 2, g)
    second = bl.construct(config, 7, 2, 2, g)
    assert np.array_equal(by_int.weights, first.weights)
    assert not np.array_equal(first.weights, second.weights)


@pytest.mark.parametrize("n, r, e, exc, message", [
    (0, 2, 2, ValueError, "N must be an integer >= 1"),
    (-4, 2, 2, ValueError, "N must be an integer >= 1"),
    (4, 0, 2, ValueError, "R must be an integer >= 1"),
    (4, 2, -1, ValueError, "E must be an integer >= 1"),
    (True, 2, 2, TypeError, "N must be an integer >= 1"),
    (4, 2.0, 2, TypeError, "R must be an integer >= 1"),
])
def test_construct_rejects_bad_sizes(n, r, e, exc, message):
    for config in (bl.FalandaysConfig(), bl.SornConfig()):
        with pytest.raises(exc) as info:
            bl.construct(config, n, r, e, 1)
        assert str(info.value) == message


def test_construct_rejects_other_bad_arguments():
    with pytest.raises(ValueError, match=r"input_link_p must have one probability per "
                                         r"receptor \(2 given, R = 3\)"):
        bl.construct(bl.FalandaysConfig(input_link_p=(0.1, 0.2)), 4, 3, 2, 1)
    with pytest.raises(TypeError, match="rng must be a generator"):
        bl.construct(bl.FalandaysConfig(), 4, 3, 2, "seed")
    with pytest.raises(TypeError, match="FalandaysConfig or a SornConfig"):
        bl.construct({"leak": 0.2}, 4, 3, 2, 1)


# ---- initial states: views and lifetimes ----------------------------------------------

def test_initial_state_arrays_are_read_only_views_that_keep_the_state_alive():
    s = bl.construct(bl.FalandaysConfig(link_p=0.5), 9, 3, 2, 5)
    w = s.weights
    want = w.copy()
    assert not w.flags.writeable and not w.flags.owndata
    with pytest.raises(ValueError):
        w[0, 0] = 1.0
    assert set(s.arrays()) == {"weights", "recurrent_mask", "input_weights", "output_mask",
                               "signs", "acts", "targets", "spikes"}
    del s
    gc.collect()
    # The state is gone from Python but the view still holds it: allocate
    # over any freed memory, then read.
    junk = [bl.construct(bl.FalandaysConfig(link_p=0.9), 9, 3, 2, k) for k in range(20)]
    assert np.array_equal(w, want)
    del junk


def test_from_arrays_copies_in_and_checks_shapes():
    rng = np.random.default_rng(3)
    config = bl.FalandaysConfig(axis="dale")
    arrays = {"weights": rng.random((4, 4)), "recurrent_mask": np.ones((4, 4), bool),
              "input_weights": rng.random((4, 3)), "output_mask": np.eye(4, 2),
              "signs": [1, -1, 1, 1]}
    s = bl.InitialState.from_arrays(config, **arrays)
    assert (s.n, s.r, s.e) == (4, 3, 2)
    assert np.array_equal(s.weights, arrays["weights"])
    assert s.recurrent_mask.sum() == 16 and s.signs.tolist() == [1, -1, 1, 1]
    assert s.targets.tolist() == [config.targ_min] * 4
    arrays["weights"][0, 0] = 99.0
    assert s.weights[0, 0] != 99.0
    with pytest.raises(ValueError, match=r"input_weights must have shape \(4, 3\), got \(5, 3\)"):
        bl.InitialState.from_arrays(config, **dict(arrays, input_weights=np.ones((5, 3))))
    with pytest.raises(ValueError, match="signs must be exactly"):
        bl.InitialState.from_arrays(config, **dict(arrays, signs=[1, -1, 0.5, 1]))
    with pytest.raises(TypeError, match="unknown arrays: bogus"):
        bl.InitialState.from_arrays(config, bogus=1, **arrays)
    with pytest.raises(TypeError, match="needs recurrent_mask"):
        bl.InitialState.from_arrays(config, **{k: v for k, v in arrays.items()
                                                if k != "recurrent_mask"})
    # Values are the batch's to validate, with the engine's message.
    bad = bl.InitialState.from_arrays(config, **dict(arrays, recurrent_mask=np.full((4, 4), 0.1)))
    with pytest.raises(ValueError, match=r"initials\[0\]: recurrent_mask must be binary before "
                                         r"integer conversion \(entry \[0\]\[0\] is 0.1"):
        bl.ModelBatch([bad])


def test_sorn_from_arrays_round_trip():
    s = bl.construct(bl.SornConfig(), 12, 3, 2, 7)
    copy = bl.InitialState.from_arrays(s.config, **s.arrays())
    a, b = bl.ModelBatch([s]), bl.ModelBatch([copy])
    u = np.random.default_rng(1).random((1, 3))
    z = np.zeros((1, 12))
    for _ in range(5):
        a.step(u, z)
        b.step(u, z)
    assert_snapshots_equal(a.snapshot(0), b.snapshot(0))


# ---- the Falandays fixtures (spec/models.md §8), bit for bit --------------------------

FIXTURE_SHA256 = {
    "falandays": "2e9ab4482e97ae190d82c28989799480f0e750c31b86833a9cdfdbd9fd643108",
    "falandays_dale": "1650b9c3627e626af4d6bbb504b21f3de0deeec76aa981d3d268378f946143ca",
}


def load_fixture(shared_dir, name):
    path = shared_dir / "fixtures" / f"{name}.npz"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == FIXTURE_SHA256[name]
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def fixture_state(fx, dale):
    """The archival adapter of §2.2: the files hold [source][destination]."""
    scalars = ("leak", "lrate_wmat", "lrate_targ", "threshold_mult", "targ_min",
               "input_weight", "weight_init_std", "membrane_noise", "noise_gain")
    config = bl.FalandaysConfig(
        **{k: float(fx[k]) for k in scalars}, learn_on=bool(fx["learn_on"]),
        rectify=bool(fx["rectify"]), axis="dale" if dale else "unsigned")
    return bl.InitialState.from_arrays(
        config, weights=fx["wmat0"].T, recurrent_mask=fx["recurrent_mask"].T,
        input_weights=fx["input_wmat"].T, output_mask=fx["output_mask"], signs=fx["sign"])


def replay(fx, dale, dtype, frames):
    """Steps the fixture's inputs and noise; yields (frame, snapshot, batch)."""
    batch = bl.ModelBatch([fixture_state(fx, dale)], dtype=dtype)
    for t in range(frames):
        batch.step(fx["inputs"][t:t + 1].astype(dtype), fx["noise_draws"][t:t + 1].astype(dtype))
        yield t, batch.snapshot(0), batch


@pytest.mark.parametrize("name, dale", [("falandays", False), ("falandays_dale", True)])
def test_fixture_replay_float64_is_bit_exact(shared_dir, name, dale):
    fx = load_fixture(shared_dir, name)
    assert fx["inputs"].shape == (40, 8) and fx["wmat0"].shape == (24, 24)
    spikes_checked = 0
    for t, snap, batch in replay(fx, dale, "float64", 40):
        assert batch.finite.tolist() == [True]
        assert snap["acts"].tobytes() == fx["acts_T"][t].tobytes(), f"acts, frame {t}"
        assert snap["targets"].tobytes() == fx["targets_T"][t].tobytes(), f"targets, frame {t}"
        certain = np.abs(fx["margin_T"][t]) > 1e-6
        assert np.array_equal(snap["spikes"][certain], fx["spikes_T"][t][certain])
        spikes_checked += int(certain.sum())
        # The views agree with the snapshot, and the readout is spikes.O / sum O.
        assert np.array_equal(batch.activity[0], snap["spikes"])
        om = snap["output_mask"]
        readout = (snap["spikes"] @ om) / om.sum(axis=0)
        assert np.array_equal(batch.effectors[0], snap["effectors"])
        assert np.allclose(snap["effectors"], readout, rtol=0, atol=1e-15)
    assert spikes_checked > 0.95 * fx["margin_T"].size


def test_fixture_replay_float32_tracks_for_a_few_frames(shared_dir):
    for name, dale in (("falandays", False), ("falandays_dale", True)):
        fx = load_fixture(shared_dir, name)
        for t, snap, batch in replay(fx, dale, "float32", 12):
            assert batch.effectors.dtype == np.float32
            assert np.max(np.abs(snap["acts"] - fx["acts_T"][t])) <= 2e-6
            assert np.max(np.abs(snap["targets"] - fx["targets_T"][t])) <= 2e-6


# ---- batches ---------------------------------------------------------------------------

def assert_snapshots_equal(a, b):
    assert list(a) == list(b)
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].tobytes() == b[k].tobytes(), k


def small_batch(slots=3, n=10, dtype="float64", kind="falandays", seed=11):
    config = bl.FalandaysConfig(link_p=0.4) if kind == "falandays" else bl.SornConfig()
    g = bl.Generator(seed)
    return bl.ModelBatch([bl.construct(config, n, 3, 2, g) for _ in range(slots)], dtype=dtype)


def frames(batch, count, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.random((batch.slots, batch.r)).astype(batch.dtype) * 3,
             np.zeros((batch.slots, batch.n), batch.dtype)) for _ in range(count)]


def test_batch_attributes_and_snapshot_layout():
    b = small_batch()
    assert (b.kind, b.slots, b.n, b.r, b.e, b.dtype) == ("falandays", 3, 10, 3, 2,
                                                          np.dtype("float64"))
    s = b.snapshot(2)
    assert list(s) == ["acts", "targets", "spikes", "previous", "errors", "counts", "weights",
                       "effectors", "finite", "learning", "weight_learning", "raw_finite",
                       "recurrent_mask", "input_weights", "output_mask", "signs"]
    assert s["weights"].shape == (10, 10) and s["input_weights"].shape == (10, 3)
    assert s["recurrent_mask"].dtype == np.int32 and s["finite"].shape == ()
    assert s["weights"].flags.owndata or s["weights"].base.flags.owndata
    assert b.finite.tolist() == [True] * 3
    sorn = small_batch(kind="sorn", n=12)
    assert sorn.kind == "sorn" and "w_ee" in sorn.snapshot(0)


def test_snapshot_weights_are_destination_source():
    b = small_batch(slots=1)
    s0 = b.snapshot(0)
    state = bl.construct(bl.FalandaysConfig(link_p=0.4), 10, 3, 2, bl.Generator(11))
    assert np.array_equal(s0["weights"], state.weights)
    assert np.array_equal(s0["recurrent_mask"], state.recurrent_mask.astype(np.int32))


def test_step_moves_state_and_inactive_slots_are_untouched():
    b = small_batch()
    before = [b.snapshot(k) for k in range(3)]
    for u, z in frames(b, 20):
        b.step(u, z, active=[True, False, True])
    assert_snapshots_equal(b.snapshot(1), before[1])
    assert not np.array_equal(b.snapshot(0)["acts"], before[0]["acts"])
    # int masks work too
    b.step(*frames(b, 1)[0], active=np.array([0, 0, 1], dtype=np.int64))
    assert_snapshots_equal(b.snapshot(1), before[1])


def test_reset_and_freezes():
    b = small_batch()
    start, start1 = b.snapshot(0), b.snapshot(1)
    fs = frames(b, 30)
    for u, z in fs:
        b.step(u, z)
    moved, moved1 = b.snapshot(0), b.snapshot(1)
    assert not np.array_equal(moved["weights"], start["weights"])
    b.reset(active=[1, 0, 0])
    assert_snapshots_equal(b.snapshot(0), start)
    assert_snapshots_equal(b.snapshot(1), moved1)  # not reset
    assert not np.array_equal(moved1["weights"], start1["weights"])
    b.freeze_weights()
    w, t = b.snapshot(1)["weights"], b.snapshot(1)["targets"]
    for u, z in fs[:10]:
        b.step(u, z)
    assert np.array_equal(b.snapshot(1)["weights"], w)
    assert not np.array_equal(b.snapshot(1)["targets"], t)
    assert b.snapshot(1)["weight_learning"] == 0 and b.snapshot(1)["learning"] == 1
    b.freeze_plasticity(active=[0, 1, 0])
    t = b.snapshot(1)["targets"]
    for u, z in fs[:10]:
        b.step(u, z)
    assert np.array_equal(b.snapshot(1)["targets"], t)
    b.reset()
    assert b.snapshot(1)["learning"] == 1


def test_effectors_activity_finite_are_copies():
    b = small_batch()
    for u, z in frames(b, 5):
        b.step(u, z)
    eff, act, fin = b.effectors, b.activity, b.finite
    assert eff.shape == (3, 2) and act.shape == (3, 10) and fin.shape == (3,)
    assert eff.flags.writeable and eff.dtype == np.float64
    keep = eff.copy(), act.copy()
    eff[:] = 7.0
    assert np.array_equal(b.effectors, keep[0])
    for u, z in frames(b, 5, seed=1):
        b.step(u, z)
    assert np.array_equal(act, keep[1])  # not a live view
    del b
    gc.collect()
    assert eff.sum() == 7.0 * 6


def test_float32_batches():
    b = small_batch(dtype="float32")
    assert b.dtype == np.float32
    u, z = frames(b, 1)[0]
    b.step(u, z)
    assert b.effectors.dtype == np.float32 and b.activity.dtype == np.float32
    with pytest.raises(ValueError, match="inputs must match the model dtype float32, got float64"):
        b.step(u.astype(np.float64), z)


def test_step_argument_checks_carry_the_engines_messages():
    b = small_batch()
    u, z = frames(b, 1)[0]
    before = b.snapshot(0)
    cases = [
        ((u[:2], z), "inputs must have shape [3][3] ([B][R]), got [2][3]"),
        ((u, np.zeros((3, 4))), "noise must have shape [3][10] ([B][N]), got [3][4]"),
        ((u.astype(np.float32), z), "inputs must match the model dtype float64, got float32"),
        ((u, z.astype(np.float32)), "noise must match the model dtype float64, got float32"),
        ((u.astype(np.int64), z), "inputs must match the model dtype float64, got int64"),
        ((u[0], z), "inputs must be a 2-D [slots][...] array, got 1-D"),
        ((u.tolist(), z), "inputs must be a NumPy array, got list"),
        ((np.asfortranarray(np.ones((3, 3))), z), "inputs must be C-contiguous"),
        ((u, z[:, ::2]), "noise must be C-contiguous"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError) as info:
            b.step(*args)
        assert str(info.value) == message
    for active, message in ([[1, 1], "active must have length 3 (the batch size), got 2"],
                            [[[1, 1, 1]], "active must be an int32 array of length 3"],
                            [[0.5, 1, 1], "active must be an int32 array of length 3"]):
        for call in (lambda: b.step(u, z, active=active), lambda: b.reset(active),
                     lambda: b.freeze_weights(active), lambda: b.freeze_plasticity(active)):
            with pytest.raises(ValueError) as info:
                call()
            assert str(info.value) == message
    assert_snapshots_equal(b.snapshot(0), before)
    with pytest.raises(ValueError, match="snapshot slot 3 is out of range for a batch of 3"):
        b.snapshot(3)
    with pytest.raises(ValueError, match="snapshot slot -1 is out of range"):
        b.snapshot(-1)


def test_batch_creation_checks():
    f = bl.construct(bl.FalandaysConfig(), 5, 2, 2, 1)
    g = bl.construct(bl.FalandaysConfig(), 6, 2, 2, 1)
    s = bl.construct(bl.SornConfig(), 6, 2, 2, 1)
    with pytest.raises(ValueError, match="a model batch needs at least one initial state"):
        bl.ModelBatch([])
    for dtype in ("float16", "int32", "nonsense", np.complex128):
        with pytest.raises(ValueError, match="model dtype must be float64 or float32"):
            bl.ModelBatch([f], dtype=dtype)
    with pytest.raises(ValueError, match="every slot of a batch needs the same dimensions"):
        bl.ModelBatch([f, g])
    with pytest.raises(ValueError, match="one model family"):
        bl.ModelBatch([f, s])
    with pytest.raises(TypeError):
        bl.ModelBatch([f, "state"])
    tiny = bl.construct(bl.FalandaysConfig(targ_min=1e-300), 5, 2, 2, 1)
    with pytest.raises(ValueError, match="initials.0.: config.targ_min is not finite after "
                                         "casting|targ_min must remain positive"):
        bl.ModelBatch([tiny], dtype="float32")
    assert bl.ModelBatch([tiny]).slots == 1


# ---- threads and memory --------------------------------------------------------------

def test_two_threads_stepping_two_batches_match_serial_runs():
    import threading

    def run(batch, fs, out, key):
        for u, z in fs:
            batch.step(u, z)
        out[key] = batch.snapshot(0), batch.effectors

    fs = frames(small_batch(slots=2, n=64), 400)
    serial = {}
    run(small_batch(slots=2, n=64, seed=1), fs, serial, "a")
    run(small_batch(slots=2, n=64, seed=2), fs, serial, "b")
    threaded = {}
    threads = [threading.Thread(target=run, args=(small_batch(slots=2, n=64, seed=k), fs,
                                                  threaded, key))
               for k, key in ((1, "a"), (2, "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for key in ("a", "b"):
        assert_snapshots_equal(threaded[key][0], serial[key][0])
        assert np.array_equal(threaded[key][1], serial[key][1])
    assert not np.array_equal(serial["a"][0]["weights"], serial["b"][0]["weights"])


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_a_million_steps_do_not_leak():
    """Every call's temporaries (the error buffer, matrix structs, buffer
    handles) must be released: a leak of even 8 bytes a step would show as
    8 MB here."""
    b = small_batch(slots=1, n=4)
    u, z = frames(b, 1)[0]
    active = np.ones(1, np.int32)
    for _ in range(20000):
        b.step(u, z)
        b.step(u, z, active)
    gc.collect()
    before = resident_bytes()
    step = b.step
    for _ in range(500000):
        step(u, z)
        step(u, z, active)
    gc.collect()
    grown = resident_bytes() - before
    assert grown < 2 * 1024 * 1024, f"resident memory grew by {grown} bytes over 1e6 steps"
    assert b.finite.tolist() == [True]


def test_sorn_from_arrays_checks_the_excitatory_count():
    s = bl.construct(bl.SornConfig(), 12, 3, 2, 7)
    other = bl.SornConfig(inhibitory_fraction=0.5)
    with pytest.raises(ValueError, match=r"the arrays hold 10 excitatory units, but "
                                         r"SORNConfig.inhibitory_fraction 0.5 gives N_E = 8"):
        bl.InitialState.from_arrays(other, **s.arrays())
    with pytest.raises(TypeError, match="needs t_i"):
        bl.InitialState.from_arrays(s.config, **{k: v for k, v in s.arrays().items()
                                                 if k != "t_i"})


def test_generator_draws_continue():
    g = bl.Generator(5)
    first = g.random()
    assert isinstance(first, float)
    rest = g.random(3)
    again = bl.Generator(5).random(4)
    assert [first] + rest.tolist() == again.tolist()


def test_a_batch_busy_in_another_thread_refuses_calls():
    b = small_batch()
    u, z = frames(b, 1)[0]
    b._lock.acquire()  # as a step running in another thread holds it
    try:
        for call in (lambda: b.step(u, z), b.reset, b.freeze_weights, lambda: b.snapshot(0),
                     lambda: b.effectors):
            with pytest.raises(RuntimeError, match="in use by another thread"):
                call()
    finally:
        b._lock.release()
    b.step(u, z)
