#!/usr/bin/python3
"""Differential test of `brainlesslab decode` against Debian's NumPy
(spec/platform.md §6, DESIGN.md rule 7).

    /usr/bin/python3 tests/test_decode_numpy.py PATH/TO/brainlesslab

ctest passes the built program. The test runs tests/plans/decode-small.toml
with --recording probe_events into a fresh temporary root, decodes the record
with the program, and decodes it again here from the record's files with
NumPy: the split and permutation generators from seed_for (platform.md §4.2)
and numpy.random.Generator(Philox), centre/scale/intercept with NumPy's
reductions, the ridge systems with numpy.linalg.solve. It reads the program's
behaviour only from the spec; nothing here is the program's code.
"""
import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PLAN = os.path.join(HERE, "plans", "decode-small.toml")
BINARY = None  # from argv[1]
SPLITS = (32, 16, 16)
LAMBDAS = (1e-4, 1e-2, 1.0, 100.0)
POINTS = ("cue_end", "delay_end", "response")
EPS = np.finfo(np.float64).eps


def generator(root, partition, stream):
    """generator(root, partition, stream) of platform.md §4.2, no keys."""
    payload = json.dumps(["philox-host-v1", root, partition, stream, []],
                         separators=(",", ":"), ensure_ascii=True)
    seed = int.from_bytes(hashlib.sha256(payload.encode()).digest(), "little")
    return np.random.Generator(np.random.Philox(seed))


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def weight_tolerance(system, a, f):
    """Relative (2-norm) tolerance of the weights of one ridge system.

    The program sums S^T S and S^T r in ascending index order; NumPy hands
    them to BLAS, which orders (and may fuse) its additions differently. Each
    Gram entry is a sum of `a` products, so the two differ by at most about
    a*eps relative to the sum of |products| (Higham, Accuracy and Stability,
    §3.1), and the right-hand side likewise; the f-term covers the scores'
    dot products and LU's own backward error (gamma_f, Higham §9.3). A
    perturbation of relative size d in A or b moves the solution by at most
    cond(A)*d relative (normwise, to first order). At lambda = 1e-4 these
    systems reach condition numbers of several 1e6 here (near 5e7 for larger
    reservoirs), where two correct orders of arithmetic differ by up to ~1e-7:
    a bound of 4*cond*(a + f)*eps (about 4e-7 at cond 7e6 with a = f = 32)
    covers that with room (the worst-case a*eps is far above the typical
    sqrt(a)*eps), while a real mistake (a wrong row, a wrong standardisation,
    a wrong lambda) moves the weights by O(1) relative and fails it.
    """
    return 4.0 * np.linalg.cond(system) * (a + f) * EPS


def fit_numpy(S, labels, fit, val, grid):
    t = np.where(labels[fit] == 1, 1.0, -1.0)
    intercept = t.mean()
    Sf = S[fit]
    gram = Sf.T @ Sf
    rhs = Sf.T @ (t - intercept)
    best = None
    for lam in grid:
        system = gram + lam * np.eye(S.shape[1])
        w = np.linalg.solve(system, rhs)
        scores = S @ w + intercept
        pred = np.where(scores >= 0, 1, 2)
        acc = np.mean(pred[val] == labels[val])
        if best is None or acc > best["validation_accuracy"]:
            best = {"regularisation": lam, "weights": w, "intercept": intercept,
                    "predictions": pred, "validation_accuracy": acc, "scores": scores,
                    "system": system}
    return best


class DecodeAgainstNumPy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="decode-numpy-")
        root = os.path.join(cls.tmp, "records")
        run = subprocess.run([BINARY, "run", PLAN, "--root", root, "--recording",
                              "probe_events"], capture_output=True, text=True, check=False)
        if run.returncode != 0:
            raise AssertionError("run failed: " + run.stderr)
        cls.record = json.loads(run.stdout)["record"]
        args = [BINARY, "decode", cls.record, "--fit", str(SPLITS[0]), "--validation",
                str(SPLITS[1]), "--evaluation", str(SPLITS[2]), "--lambdas"]
        args += [repr(x) for x in LAMBDAS]
        dec = subprocess.run(args, capture_output=True, text=True, check=False)
        if dec.returncode != 0:
            raise AssertionError("decode failed: " + dec.stderr)
        cls.results = json.loads(dec.stdout)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def reference(self):
        data = os.path.join(self.record, "data")
        events = read_csv(os.path.join(data, "probe_events.csv"))
        trials = read_csv(os.path.join(data, "probe_trials.csv"))
        with np.load(os.path.join(data, "probe_features.npz"), allow_pickle=False) as z:
            features = {name: z[name] for name in z.files}
        groups = {}
        for t in trials:
            key = (t["target_id"], t["task"], int(t["block_id"]))
            groups.setdefault(key, []).append(t)
        obs = {}
        for e in events:
            key = (e["target_id"], e["task"], int(e["block_id"]), int(e["trial_id"]), e["point"])
            obs[key] = (e, features[e["feature_array"]])
        a, b, c = SPLITS
        grid = sorted(set(LAMBDAS))
        out = []
        for key in sorted(groups):
            members = sorted(groups[key], key=lambda t: int(t["trial_id"]))
            m = len(members)
            self.assertEqual(m, a + b + c)
            order = generator(701, "analysis", "probe-split").permutation(m)
            fit, val, ev = order[:a], order[a:a + b], order[a + b:]
            ids = np.array([int(t["trial_id"]) for t in members])
            native = np.array([float(t["native_score"]) for t in members])
            for point in POINTS:
                rows = [obs[key + (int(t["trial_id"]), point)] for t in members]
                X = np.array([r[1] for r in rows])
                labels = np.array([int(r[0]["label"]) for r in rows])
                centre = X[fit].mean(axis=0)
                scale = X[fit].std(axis=0)
                scale[scale == 0] = 1.0
                S = (X - centre) / scale
                fitted = fit_numpy(S, labels, fit, val, grid)
                rng = generator(702, "analysis", "probe-label-permutation")
                permuted = labels.copy()
                permuted[fit] = rng.permutation(labels[fit])
                permuted[val] = rng.permutation(labels[val])
                null = fit_numpy(S, permuted, fit, val, grid)
                constant = 1 if np.mean(labels[fit] == 1) >= 0.5 else 2
                out.append({
                    "key": key, "point": point, "ids": ids, "fit": ids[fit], "val": ids[val],
                    "eval": ids[ev], "ev_idx": ev, "labels": labels, "permuted": permuted,
                    "native": native, "centre": centre, "scale": scale, "S": S,
                    "fitted": fitted, "null": null, "constant": constant,
                    "native_accuracy": native[ev].mean(),
                    "constant_accuracy": np.mean(labels[ev] == constant),
                })
        return out

    def assert_close(self, got, want, rtol, what):
        got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
        self.assertEqual(got.shape, want.shape, what)
        bad = np.abs(got - want) > rtol * np.maximum(np.abs(want), 1e-300)
        self.assertFalse(bad.any(), "%s: %s vs %s" % (what, got[bad][:4], want[bad][:4]))

    def check_fit(self, got, want, S, a, what):
        f = S.shape[1]
        self.assertEqual(got["regularisation"], want["regularisation"], what + " lambda")
        self.assert_close(got["intercept"], want["intercept"], 1e-9, what + " intercept")
        tol = weight_tolerance(want["system"], a, f)
        w_got, w_want = np.array(got["weights"]), want["weights"]
        err = np.linalg.norm(w_got - w_want) / max(np.linalg.norm(w_want), 1e-300)
        self.assertLessEqual(err, tol, "%s weights: relative error %g > %g" % (what, err, tol))
        # A trial may be predicted differently only where its score is within
        # what the weights' tolerance can move it: |S·w + b| <= tol·(|S|·|w| + |b|).
        margin = tol * (np.abs(S) @ np.abs(w_want) + abs(want["intercept"]))
        differ = np.array(got["predictions"]) != want["predictions"]
        self.assertTrue(np.all(np.abs(want["scores"][differ]) <= margin[differ]),
                        what + " predictions differ away from the decision boundary")
        return differ

    def test_results_match_numpy(self):
        ref = self.reference()
        self.assertEqual(len(self.results), len(ref))
        a, b, c = SPLITS
        flips = 0
        for got, want in zip(self.results, ref):
            what = "%s/%s/%d %s" % (want["key"] + (want["point"],))
            self.assertEqual((got["target_id"], got["task"], got["block_id"]), want["key"])
            self.assertEqual(got["point"], want["point"])
            self.assertEqual(got["trial_ids"], want["ids"].tolist(), what)
            self.assertEqual(got["fit_trial_ids"], want["fit"].tolist(), what)
            self.assertEqual(got["validation_trial_ids"], want["val"].tolist(), what)
            self.assertEqual(got["evaluation_trial_ids"], want["eval"].tolist(), what)
            self.assertEqual(got["labels"], want["labels"].tolist(), what)
            self.assertEqual(got["permutation_labels"], want["permuted"].tolist(), what)
            self.assertEqual(got["native_scores"], want["native"].tolist(), what)
            for fit in ("fitted", "permutation"):
                self.assert_close(got[fit]["centre"], want["centre"], 1e-9, what + " centre")
                self.assert_close(got[fit]["scale"], want["scale"], 1e-9, what + " scale")
            d_fit = self.check_fit(got["fitted"], want["fitted"], want["S"], a, what + " fitted")
            d_null = self.check_fit(got["permutation"], want["null"], want["S"], a,
                                    what + " null")
            flips += int(d_fit.sum() + d_null.sum())
            ev = want["ev_idx"]
            labels = want["labels"]
            # Accuracies follow from the predictions: equal whenever they are.
            if not d_fit.any():
                self.assertEqual(got["accuracy"],
                                 np.mean(want["fitted"]["predictions"][ev] == labels[ev]))
                self.assertEqual(got["fitted"]["validation_accuracy"],
                                 want["fitted"]["validation_accuracy"])
            if not d_null.any():
                self.assertEqual(got["permutation_accuracy"],
                                 np.mean(want["null"]["predictions"][ev] == labels[ev]))
                self.assertEqual(got["permutation"]["validation_accuracy"],
                                 want["null"]["validation_accuracy"])
            self.assertEqual(got["native_accuracy"], want["native_accuracy"], what)
            self.assertEqual(got["constant_prediction"], want["constant"], what)
            self.assertEqual(got["constant_accuracy"], want["constant_accuracy"], what)
            self.assertEqual(got["chance_accuracy"], 0.5)
            self.assertEqual(got["independent_blocks"], 1)
            self.assertEqual(got["channel"], "emitted_activity")
        print("decode vs numpy: %d results, %d boundary prediction flips" % (len(ref), flips))

    def test_systems_are_ill_conditioned(self):
        # The comparison above is only a test of the tolerance if the record
        # gives systems where orders of arithmetic matter.
        conds = [np.linalg.cond(r["fitted"]["system"]) for r in self.reference()]
        self.assertGreater(max(conds), 1e6)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_decode_numpy.py PATH/TO/brainlesslab")
    BINARY = os.path.abspath(sys.argv.pop(1))
    unittest.main()
