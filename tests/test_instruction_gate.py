#!/usr/bin/python3
"""Tests of scripts/instruction-gate (docs/performance.md, the instruction-count gate).

    /usr/bin/python3 tests/test_instruction_gate.py PATH/TO/gate_workloads

ctest passes the gate_workloads of its own build. The gate measures one small
workload of it under callgrind (twice: the counts must be identical), then
checks it against baselines derived from that measurement: equal, tampered
upwards and downwards, with another digest, another compiler, a missing
workload. The workload's counts in this build are not compared with the
committed baseline (that is the gate's own job, from its own gcc Release
build); only the script's logic is under test here.

Needs valgrind on x86-64. Without it the test reports itself skipped (exit 77,
which ctest shows as skipped) with the reason, or fails when CI is set, so
CI never skips it silently. Standard library only.
"""
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "scripts", "instruction-gate")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
WORKLOAD = "falandays-float32-n128-b1"
BINARY = None  # argv[1]
MEASURED = None  # the measurement document, taken once in setUpModule


def gate(*args):
    r = subprocess.run([PYTHON, SCRIPT, *args, "--binary", BINARY, "--only", WORKLOAD],
                       capture_output=True, text=True, check=False)
    return r.returncode, r.stdout, r.stderr


def setUpModule():
    global MEASURED
    rc, out, err = gate("measure")
    assert rc == 0, out + err
    MEASURED = json.loads(out)


class InstructionGate(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="test-instruction-gate-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def check_against(self, edit):
        doc = json.loads(json.dumps(MEASURED))
        edit(doc)
        path = os.path.join(self.tmp, "baseline.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        return gate("check", "--baseline", path)

    def fail_lines(self, out):
        return [l for l in out.splitlines() if l.startswith("instruction-gate: FAIL")]

    def test_measurement_is_exactly_reproducible(self):
        rc, out, err = gate("measure")
        self.assertEqual(rc, 0, out + err)
        again = json.loads(out)["workloads"][WORKLOAD]
        first = MEASURED["workloads"][WORKLOAD]
        self.assertEqual(again["instructions"], first["instructions"])
        self.assertEqual(again["digest"], first["digest"])
        self.assertGreater(first["instructions"], 0)
        self.assertEqual(first["unit"], "slot-frame")
        self.assertEqual(first["work"]["slot_frames"], 64)

    def test_equal_baseline_passes(self):
        rc, out, _ = self.check_against(lambda d: None)
        self.assertEqual(rc, 0, out)
        self.assertIn("pass:", out)
        self.assertEqual(self.fail_lines(out), [])

    def test_count_over_the_margin_fails_with_one_line(self):
        def lower(d):
            w = d["workloads"][WORKLOAD]
            w["instructions"] = int(w["instructions"] / 1.05)
        rc, out, _ = self.check_against(lower)
        self.assertEqual(rc, 1, out)
        lines = self.fail_lines(out)
        self.assertEqual(len(lines), 1, out)
        self.assertIn(WORKLOAD, lines[0])
        self.assertIn("over the baseline", lines[0])
        self.assertIn("margin 3%", lines[0])

    def test_count_within_the_margin_passes(self):
        def lower(d):
            w = d["workloads"][WORKLOAD]
            w["instructions"] = int(w["instructions"] / 1.02)
        rc, out, _ = self.check_against(lower)
        self.assertEqual(rc, 0, out)

    def test_improvement_passes_and_asks_for_an_update(self):
        def raise_(d):
            w = d["workloads"][WORKLOAD]
            w["instructions"] = int(w["instructions"] * 1.05)
        rc, out, _ = self.check_against(raise_)
        self.assertEqual(rc, 0, out)
        self.assertIn("improved", out)
        self.assertIn("instruction-gate update", out)

    def test_other_final_state_fails(self):
        def tamper(d):
            d["workloads"][WORKLOAD]["digest"] = "0" * 64
        rc, out, _ = self.check_against(tamper)
        self.assertEqual(rc, 1, out)
        lines = self.fail_lines(out)
        self.assertEqual(len(lines), 1, out)
        self.assertIn("different state", lines[0])

    def test_other_compiler_is_noted_not_failed(self):
        def tamper(d):
            d["environment"]["compiler"] = "gcc (Debian 99.0.0-1) 99.0.0"
        rc, out, _ = self.check_against(tamper)
        self.assertEqual(rc, 0, out)
        self.assertIn("note: compiler differs", out)

    def test_workload_missing_from_the_baseline_fails(self):
        rc, out, _ = self.check_against(lambda d: d["workloads"].clear())
        self.assertEqual(rc, 1, out)
        self.assertIn("not in the baseline", out)

    def test_bad_baseline_is_an_error(self):
        path = os.path.join(self.tmp, "baseline.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write("{}")
        rc, out, _ = gate("check", "--baseline", path)
        self.assertEqual(rc, 2, out)
        self.assertIn("error:", out)

    def test_update_writes_a_baseline_that_checks(self):
        path = os.path.join(self.tmp, "new.json")
        rc, out, _ = gate("update", "--baseline", path)
        self.assertEqual(rc, 0, out)
        rc, out, _ = gate("check", "--baseline", path)
        self.assertEqual(rc, 0, out)


def missing_requirement():
    if platform.machine() not in ("x86_64", "AMD64"):
        return f"the gate runs on x86-64 only (this is {platform.machine()})"
    if shutil.which("valgrind") is None:
        return "valgrind is not installed (scripts/install-deps installs it)"
    return None


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_instruction_gate.py PATH/TO/gate_workloads")
    BINARY = os.path.abspath(sys.argv.pop(1))
    reason = missing_requirement()
    if reason:
        if os.environ.get("CI"):
            print(f"test_instruction_gate: required under CI but missing: {reason}")
            sys.exit(1)
        print(f"test_instruction_gate: SKIPPED: {reason}")
        sys.exit(77)
    unittest.main(verbosity=2)
