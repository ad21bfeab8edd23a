#!/usr/bin/python3
"""What the Python binding costs (docs/performance.md, "Python binding").

Two questions, for one Falandays slot (float64, R = 8, E = 2, default
parameters) at N = 64 and 256:

1. the cost of one ModelBatch.step call from Python against the C step
   itself: CPU time per frame of a Python loop over `batch.step` and of a
   Python loop over the bare cffi call of bl_model_step (same batch kind,
   same inputs), as the median of interleaved repetitions. The difference
   is the binding's own work (argument checks, buffer handles);
2. frames per second of that Python loop against the NumPy peer: the
   straightforward NumPy way of writing the same Falandays frame (written
   here from spec/models.md §2.5, one slot), with the mean activity (spike
   rate) of each run beside its rate, because a rate means nothing without
   the work it did.

Usage: /usr/bin/python3 bench/python_binding.py [--reps K] [--frames F] [N ...]
The package is the source tree's (python/), its library the build tree's
unless BRAINLESSLAB_LIBRARY says otherwise. It prints; it asserts nothing.

`--loop binding|raw F N` runs only one loop of F frames (for callgrind:
valgrind --tool=callgrind /usr/bin/python3 bench/python_binding.py --loop
binding 2000 64), so that instruction counts of the loop and of
bl_model_step inside it can be read apart.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import brainlesslab as bl  # noqa: E402
from brainlesslab._models import ffi, lib  # noqa: E402

R, E = 8, 2


def make_state(n):
    seed = bl.seed_for(0, "development", "construction", "bench-python", "falandays", n, R, E)
    return bl.construct(bl.FalandaysConfig(), n, R, E, seed)


def make_inputs(frames):
    return np.random.default_rng(20260628).random((frames, 1, R))


class NumpyFalandays:
    """One Falandays slot as a NumPy user would write it (spec/models.md
    §2.5): whole-vector operations per phase. Sums are NumPy's (pairwise or
    BLAS), so the trajectory is close to, not bit-equal with, the engine's."""

    def __init__(self, state):
        c = state.config
        self.leak, self.mu, self.tmin = c.leak, c.threshold_mult, c.targ_min
        self.lr_w, self.lr_t = c.lrate_wmat, c.lrate_targ
        self.rectify, self.dale = c.rectify, c.axis == "dale"
        self.oosawa, self.nu0, self.gain = c.drive == "oosawa", c.membrane_noise, c.noise_gain
        self.learning = self.weight_learning = c.learn_on
        self.w = state.weights.copy()
        self.mask = state.recurrent_mask != 0
        self.w_in = state.input_weights.copy()
        self.out = state.output_mask.copy()
        self.out_sum = self.out.sum(axis=0)
        self.sign = state.signs.astype(np.float64)
        self.acts = state.acts.copy()
        self.targets = state.targets.copy()
        self.spikes = state.spikes.copy()
        self.effectors = np.zeros(self.out.shape[1])

    def step(self, u, noise):
        prev = self.spikes
        a = self.acts * (1.0 - self.leak) + self.w_in @ u + self.w @ (prev * self.sign)
        theta = self.targets * self.mu
        if self.oosawa:
            a = a + noise * (self.nu0 + self.gain * np.maximum(0.0, theta - a))
        if self.rectify:
            a = np.maximum(a, 0.0)
        fired = a >= theta
        a = np.where(fired, a - theta, a)
        errors = a - self.targets
        eligible = self.mask & (prev != 0.0)
        counts = eligible.sum(axis=1)
        if self.learning:
            if self.weight_learning and counts.any():
                delta = np.where(counts > 0, errors / np.maximum(counts, 1) * self.lr_w, 0.0)
                change = delta[:, None] * (self.sign if self.dale else 1.0)
                self.w -= np.where(eligible, change, 0.0)
                if self.dale:
                    np.maximum(self.w, 0.0, out=self.w)
                    self.w[~self.mask] = 0.0
            self.targets = np.maximum(self.tmin, self.targets + errors * self.lr_t)
        self.acts = a
        self.spikes = fired.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.effectors = np.where(self.out_sum > 0, (self.spikes @ self.out) / self.out_sum,
                                      0.0)


def loop_binding(n, inputs, activity=True):
    batch = bl.ModelBatch([make_state(n)])
    noise = np.zeros((1, n))
    step = batch.step
    spikes = 0.0
    start = time.process_time()
    for u in inputs:
        step(u, noise)
    cpu = time.process_time() - start
    if not activity:
        return cpu, None
    # Activity from a second, unmeasured pass (reading it would be timed).
    batch.reset()
    for u in inputs:
        step(u, noise)
        spikes += batch.activity.sum()
    return cpu, spikes / (len(inputs) * n)


def loop_raw(n, inputs):
    """The bare cffi call: what any binding must pay at least."""
    batch = bl.ModelBatch([make_state(n)])
    noise = np.zeros((1, n))
    m, err, active = batch._m, ffi.new("bl_error *"), ffi.new("int32_t[]", [1])
    mu, mz = ffi.new("bl_matrix *"), ffi.new("bl_matrix *")
    mu.dtype, mu.rows, mu.cols = lib.BL_FLOAT64, 1, R
    mz.dtype, mz.rows, mz.cols, mz.data = lib.BL_FLOAT64, 1, n, ffi.from_buffer(noise)
    buffers = [ffi.from_buffer(u) for u in inputs]
    step = lib.bl_model_step
    start = time.process_time()
    for buf in buffers:
        mu.data = buf
        step(m, mu, mz, active, 1, err)
    return time.process_time() - start, None


def loop_numpy(n, inputs):
    model = NumpyFalandays(make_state(n))
    noise = np.zeros(n)
    rows = [u[0] for u in inputs]
    spikes = 0.0
    start = time.process_time()
    for u in rows:
        model.step(u, noise)
    cpu = time.process_time() - start
    model = NumpyFalandays(make_state(n))
    for u in rows:
        model.step(u, noise)
        spikes += model.spikes.sum()
    return cpu, spikes / (len(inputs) * n)


def agreement(n, inputs):
    """How far the NumPy peer's activations drift from the engine's (the
    peer must do the same work for its rate to compare)."""
    batch = bl.ModelBatch([make_state(n)])
    model = NumpyFalandays(make_state(n))
    noise = np.zeros((1, n))
    worst, same_spikes = 0.0, 0
    for u in inputs:
        batch.step(u, noise)
        model.step(u[0], noise[0])
        snap = batch.snapshot(0)
        worst = max(worst, float(np.max(np.abs(snap["acts"] - model.acts))))
        same_spikes += int(np.array_equal(snap["spikes"], model.spikes))
    return worst, same_spikes


LOOPS = {"binding": loop_binding, "raw": loop_raw, "numpy": loop_numpy}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--frames", type=int, default=20000)
    ap.add_argument("--loop", nargs=3, metavar=("KIND", "FRAMES", "N"))
    ap.add_argument("nodes", nargs="*", type=int, default=[64, 256])
    args = ap.parse_args()
    if args.loop:
        kind, frames, n = args.loop[0], int(args.loop[1]), int(args.loop[2])
        if kind == "binding":
            loop_binding(n, make_inputs(frames), activity=False)
        else:
            LOOPS[kind](n, make_inputs(frames))
        return
    print(f"Falandays, 1 slot, float64, R={R} E={E}, {args.frames} frames per loop, "
          f"median of {args.reps} interleaved repetitions (CPU time)")
    print(f"{'N':>5} {'loop':>8} {'us/frame':>9} {'frames/s':>10} {'mean activity':>14}")
    inputs = make_inputs(args.frames)
    for n in args.nodes:
        times = {k: [] for k in LOOPS}
        activity = {}
        for _ in range(args.reps):
            for kind, fn in LOOPS.items():
                cpu, act = fn(n, inputs)
                times[kind].append(cpu / args.frames)
                activity[kind] = act
        med = {k: statistics.median(v) for k, v in times.items()}
        for kind in LOOPS:
            act = "-" if activity[kind] is None else f"{activity[kind]:.4f}"
            print(f"{n:>5} {kind:>8} {med[kind] * 1e6:>9.2f} {1 / med[kind]:>10.0f} {act:>14}")
        print(f"{n:>5} overhead of the binding per call: "
              f"{(med['binding'] - med['raw']) * 1e6:.2f} us; numpy/binding time ratio "
              f"{med['numpy'] / med['binding']:.1f}")
        check = min(args.frames, 500)
        worst, same = agreement(n, inputs[:check])
        print(f"{n:>5} numpy peer vs engine over {check} frames: identical spikes in {same}, "
              f"max |acts difference| {worst:.3g}")


if __name__ == "__main__":
    main()
