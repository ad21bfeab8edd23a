#!/usr/bin/python3
"""Tests of scripts/batch-scaling (spec/measurement.md §7).

    /usr/bin/python3 tests/test_batch_scaling.py [PATH/TO/brainlesslab]

ctest passes the built program. The tests render synthetic receipts
(--from-receipts), refuse an existing destination, drive the runner with a
fake `brainlesslab` (this file, invoked as `--fake-brainlesslab`), and run a
tiny real matrix end to end with the real program. Standard library only.
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
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCRIPT = os.path.join(ROOT, "scripts", "batch-scaling")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
BINARY = None  # set from argv[1] in __main__
SVG = "{http://www.w3.org/2000/svg}"


def sha(*parts):
    return hashlib.sha256(repr(parts).encode()).hexdigest()


# ---- synthetic receipts --------------------------------------------------------

def make_sample(phase, index, protocol, admitted, seconds, work_sig=None, status="complete"):
    ticks = frames = 576
    return {
        "phase": phase, "sample_index": index, "status": status,
        "error": None if status == "complete" else "failed trials",
        "requested_trials": protocol["trials"], "completed_trials": protocol["trials"],
        "admitted_batch_capacities": [admitted],
        "completed_world_ticks": ticks, "completed_neural_frames": frames,
        "identity_signature": sha("identity", protocol["key"]),
        "work_signature": work_sig or sha("work", protocol["key"]),
        "outcome_signature": sha("outcome", protocol["key"]),
        "execute_wall_seconds": seconds, "wall_seconds": seconds,
        "neural_frames_per_second": frames / seconds if status == "complete" else None,
        "world_ticks_per_second": ticks / seconds if status == "complete" else None,
        "record_wall_seconds": None, "isolated_kernel_time": False,
    }


def make_receipt(node="falandays", count=64, task="delayed_cue", dtype="float32", batch=8,
                 threads=1, trials=8, blocks=2, seed=49001, samples=3, admission=None,
                 bad_work=False, failed=False, recording="none", argv=None):
    """A receipt in the §1.10 schema with the C additions (host, host_after).
    Work depends only on the scientific protocol; time falls with capacity and
    threads so a plot has something to show."""
    admitted = min(batch, admission) if admission else batch
    protocol = {"trials": trials,
                "key": (node, count, task, dtype, trials, blocks, seed)}
    base = 0.1 * (count / 64) / (admitted ** 0.5) / (threads ** 0.5)
    rows = []
    for p, phase in enumerate(("cold_cache_new_process", "warm_cache_new_process")):
        smp = [make_sample("first_run", 0, protocol, admitted, base * (3.0 - p))]
        for i in range(samples):
            sig = None
            if bad_work and p == 1 and i == samples - 1:
                sig = "0" * 64
            smp.append(make_sample("warm_process", i, protocol, admitted,
                                   base * (1 + 0.02 * i + 0.01 * p), work_sig=sig,
                                   status="failed" if failed and p == 1 else "complete"))
        row_ok = all(s["status"] == "complete" for s in smp)
        rows.append({
            "backend": "cpu", "phase": phase, "status": "complete" if row_ok else "failed",
            "error": None if row_ok else "a sample failed",
            "returncode": 0 if row_ok else 1, "process_wall_seconds": base * 20,
            "cache_files_before": [], "dtype": dtype, "fast_math": False, "node": node,
            "count": count, "batch_size": batch, "cpu_threads": threads,
            "requested_trials": trials, "recording": recording,
            "protocol": {"task": task, "resolved_horizon": 144, "requested_horizon": None,
                         "diagnostic": False, "controller": "reservoir", "scoring_warmup": 0,
                         "blocks": blocks, "trials_per_block": trials // blocks,
                         "root_seed": seed, "seed_partition": "development",
                         "construction_scope": "block", "reset": "full"},
            "samples": smp, "warmups": [],
            "statistics": {"scope": "warmed evaluation samples only"},
            "peak_rss": {"status": "available", "value": 20480 + p, "units": "KiB",
                         "bytes": (20480 + p) * 1024},
        })
    host = {"machine": "x86_64", "os": "Debian GNU/Linux 12 (bookworm)",
            "kernel": {"release": "6.1.0", "version": "#1 SMP"},
            "cpu": {"model": "Test CPU <9000> & Co", "logical_cpus": 2, "online": "0-1",
                    "smt": None, "governors": ["performance"]},
            "memory": {"total_bytes": 8 * 2**30, "available_bytes": 6 * 2**30},
            "load_average": [0.1, 0.2, 0.3], "compiler": {"id": "gcc", "version": "12.2"}}
    doc = {"format": "brainlesslab-backend-profile", "version": 1,
           "host": host, "host_after": dict(host, load_average=[0.9, 0.5, 0.4]),
           "background_activity": [], "background_activity_allowed": True,
           "activity_telemetry": {"status": "available", "processes": [
               {"pid": 7, "executable": "busy", "cpu_percent": 12.5}]},
           "activity_after": {"status": "available", "processes": []},
           "measurements": rows, "timing_boundary": "sync, execute, sync",
           "cache_scope": "not applicable", "interpretation": "software latency"}
    if argv is not None:
        doc["argv"] = argv
    return doc


def write_cell(root, cid, receipt):
    d = os.path.join(root, "cells", cid)
    os.makedirs(d)
    with open(os.path.join(d, "receipt.json"), "w") as f:
        json.dump(receipt, f, indent=2)


def synthetic_set(root, bad_cell=None, failed_cell=None):
    """falandays and sorn, n64 delayed_cue, requested 1 and 8 (sorn admits at
    most 6), 1 and 2 threads: 8 cells, 4 series."""
    ids = []
    for node in ("falandays", "sorn"):
        for cap in (1, 8):
            for th in (1, 2):
                cid = f"{node}-n64-delayed_cue-b{cap}-t{th}"
                write_cell(root, cid, make_receipt(
                    node=node, batch=cap, threads=th,
                    admission=6 if node == "sorn" else None,
                    bad_work=(cid == bad_cell), failed=(cid == failed_cell)))
                ids.append(cid)
    return ids


def run_script(*args, env=None):
    r = subprocess.run([PYTHON, SCRIPT] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, timeout=1800)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


# ---- (a) rendering synthetic receipts ---------------------------------------------

class RenderTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="bl-scaling-")
        self.src = os.path.join(self.tmp, "run")
        self.dest = os.path.join(self.tmp, "out")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def render(self, expected_rc, **defects):
        """Renders the synthetic set with `defects` (see synthetic_set), checks
        the exit code and returns the cell ids and the script's stdout."""
        ids = synthetic_set(self.src, **defects)
        rc, out, err = run_script(self.dest, "--from-receipts", self.src)
        self.assertEqual(rc, expected_rc, err)
        return ids, out

    def output(self, name):
        return os.path.join(self.dest, name)

    def test_clean_set_renders_and_passes(self):
        ids, out = self.render(0)
        self.assertEqual(json.loads(out)["status"], "passed")
        for name in ("scaling.csv", "scaling.md", "scaling.svg", "scaling.json"):
            self.assertTrue(os.path.isfile(self.output(name)), name)

        rows = {r["cell"]: r for r in read_csv(self.output("scaling.csv"))}
        self.assertEqual(sorted(rows), sorted(ids))
        r = rows["sorn-n64-delayed_cue-b8-t2"]
        self.assertEqual((r["node"], r["count"], r["task"], r["dtype"], r["threads"]),
                         ("sorn", "64", "delayed_cue", "float32", "2"))
        self.assertEqual(r["requested_capacity"], "8")
        self.assertEqual(r["admitted_capacities"], "6")      # admitted, not requested
        self.assertEqual((r["trials"], r["completed_world_ticks"],
                          r["completed_neural_frames"]), ("8", "576", "576"))
        self.assertEqual(r["status"], "complete")
        self.assertEqual(r["peak_rss_bytes"], str(20481 * 1024))
        self.assertEqual(r["receipt"],
                         os.path.abspath(os.path.join(self.src, "cells",
                                                      "sorn-n64-delayed_cue-b8-t2",
                                                      "receipt.json")))
        # Statistics pool the warmed samples of both processes (§1.7 quantiles).
        receipt = make_receipt(node="sorn", batch=8, threads=2, admission=6)
        warm = sorted(s["execute_wall_seconds"] for row in receipt["measurements"]
                      for s in row["samples"] if s["phase"] == "warm_process")
        n = len(warm)
        med = (warm[n // 2 - 1] + warm[n // 2]) / 2
        self.assertAlmostEqual(float(r["execute_seconds_median"]), med, places=12)
        self.assertAlmostEqual(float(r["execute_seconds_p25"]),
                               warm[1] + (warm[2] - warm[1]) * 0.25, places=12)
        rates = sorted(576 / s for s in warm)
        self.assertAlmostEqual(float(r["neural_frames_per_second_median"]),
                               (rates[n // 2 - 1] + rates[n // 2]) / 2, places=6)
        first = {row["phase"]: row["samples"][0]["execute_wall_seconds"]
                 for row in receipt["measurements"]}
        self.assertAlmostEqual(float(r["first_run_seconds_cold"]),
                               first["cold_cache_new_process"])
        self.assertAlmostEqual(float(r["first_run_seconds_warm"]),
                               first["warm_cache_new_process"])

        # The plot: valid XML, one polyline per (composition, threads) series,
        # dashed exactly for the multi-thread ones, one marker per cell.
        tree = ET.parse(self.output("scaling.svg"))
        lines = tree.getroot().findall(f".//{SVG}polyline")
        self.assertEqual(len(lines), 4)
        groups = [gr for gr in tree.getroot().iter(f"{SVG}g") if gr.get("class") == "series"]
        labels = sorted(gr.get("data-series") for gr in groups)
        self.assertEqual(labels, sorted([
            "falandays n64 delayed_cue, 1 thread", "falandays n64 delayed_cue, 2 threads",
            "sorn n64 delayed_cue, 1 thread", "sorn n64 delayed_cue, 2 threads"]))
        for gr in groups:
            line = gr.find(f"{SVG}polyline")
            self.assertEqual(len(line.get("points").split()), 2)
            dashed = line.get("stroke-dasharray") is not None
            self.assertEqual(dashed, gr.get("data-series").endswith("2 threads"))
        self.assertEqual(sum(len(gr.findall(f"{SVG}circle")) for gr in groups), 8)
        panels = [gr.get("data-task") for gr in tree.getroot().iter(f"{SVG}g")
                  if gr.get("class") == "panel"]
        self.assertEqual(panels, ["delayed_cue"])  # one panel per task
        text = "".join(tree.getroot().itertext())
        self.assertIn("float32", text)
        self.assertIn("Test CPU <9000> & Co", text)

        doc = load_json(self.output("scaling.json"))
        self.assertEqual(doc["format"], "brainlesslab-batch-scaling")
        self.assertEqual(doc["checks"]["status"], "passed")
        self.assertEqual(len(doc["checks"]["groups"]), 2)  # one per composition
        self.assertTrue(all(gr["samples_compared"] == 4 * 8 for gr in doc["checks"]["groups"]))
        md = read_text(self.output("scaling.md"))
        self.assertIn("## Checks", md)
        self.assertIn("Test CPU &lt;9000&gt; &amp; Co", md)  # escaped for Markdown
        self.assertIn("sorn-n64-delayed_cue-b8-t2", md)

    def test_mismatched_work_signature_fails_and_is_reported(self):
        bad = "falandays-n64-delayed_cue-b8-t2"
        self.render(1, bad_cell=bad)
        doc = load_json(self.output("scaling.json"))
        self.assertEqual(doc["status"], "failed")
        self.assertEqual(doc["failed_cells"], [])          # every cell itself completed
        mism = doc["checks"]["mismatches"]
        self.assertEqual(len(mism), 1)
        self.assertEqual((mism[0]["cell"], mism[0]["field"], mism[0]["found"]),
                         (bad, "work_signature", "0" * 64))
        self.assertEqual(mism[0]["process_phase"], "warm_cache_new_process")
        status = {gr["group"].split(" ")[0]: gr["status"] for gr in doc["checks"]["groups"]}
        self.assertEqual(status, {"falandays": "failed", "sorn": "passed"})
        md = read_text(self.output("scaling.md"))
        self.assertIn("### Mismatches", md)
        self.assertIn(f"| {bad} | warm_cache_new_process", md)
        self.assertIn("work_signature", md)

    def test_failed_cell_fails_the_run(self):
        bad = "sorn-n64-delayed_cue-b1-t1"
        self.render(1, failed_cell=bad)
        doc = load_json(self.output("scaling.json"))
        self.assertEqual(doc["failed_cells"], [bad])
        rows = {r["cell"]: r for r in read_csv(self.output("scaling.csv"))}
        self.assertEqual(rows[bad]["status"], "failed")
        self.assertIn("## Failed cells", read_text(self.output("scaling.md")))
        lines = ET.parse(self.output("scaling.svg")).getroot().findall(f".//{SVG}polyline")
        self.assertEqual(len(lines), 4)  # the failed cell is left out, its series stays


# ---- (b) refusals ------------------------------------------------------------------

class RefusalTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="bl-scaling-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def snapshot(self, path):
        out = {}
        for d, _, files in os.walk(path):
            for f in files:
                p = os.path.join(d, f)
                with open(p, "rb") as fh:
                    out[os.path.relpath(p, path)] = fh.read()
        return out

    def test_existing_destination_is_refused_and_untouched(self):
        dest = os.path.join(self.tmp, "dest")
        os.makedirs(os.path.join(dest, "cells"))
        with open(os.path.join(dest, "keep.txt"), "w") as f:
            f.write("mine\n")
        before = self.snapshot(dest)
        src = os.path.join(self.tmp, "run")
        synthetic_set(src)
        fake = fake_binary(self.tmp)
        for args in ([dest, "--from-receipts", src],
                     [dest, "--brainlesslab", fake, "--stage", "1"]):
            rc, out, err = run_script(*args)
            self.assertEqual(rc, 2, err)
            self.assertIn("exists", err)
            self.assertEqual(out, "")
            self.assertEqual(self.snapshot(dest), before)
            self.assertEqual(sorted(os.listdir(dest)), ["cells", "keep.txt"])

    def test_usage_errors_create_nothing(self):
        dest = os.path.join(self.tmp, "dest")
        fake = fake_binary(self.tmp)
        for args in (["--stage", "1", "--trials", "9", "--blocks", "2"],
                     ["--stage", "1", "--capacities", "0,8"],
                     ["--stage", "1", "--nodes", "hopfield"],
                     ["--stage", "1", "--activity-interval", "0"],
                     ["--stage", "6"],
                     ["--from-receipts", os.path.join(self.tmp, "nowhere")]):
            rc, out, err = run_script(dest, "--brainlesslab", fake, *args)
            self.assertEqual(rc, 2, (args, err))
            self.assertFalse(os.path.exists(dest), args)
        # A program without the profile flags is refused before anything exists.
        old = os.path.join(self.tmp, "old-brainlesslab")
        with open(old, "w") as f:
            f.write("#!/bin/sh\necho 'usage: brainlesslab profile [-h] destination'\n")
        os.chmod(old, 0o755)
        rc, out, err = run_script(dest, "--brainlesslab", old, "--stage", "1")
        self.assertEqual(rc, 2, err)
        self.assertIn("--dtype", err)
        self.assertFalse(os.path.exists(dest))


# ---- the runner, with a fake brainlesslab -----------------------------------------------

def fake_binary(tmp):
    path = os.path.join(tmp, "fake-brainlesslab")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(f'#!/bin/sh\nexec {PYTHON} {os.path.abspath(__file__)} '
                    f'--fake-brainlesslab "$@"\n')
        os.chmod(path, 0o755)
    return path


def fake_main(argv):
    """`brainlesslab profile` as far as batch-scaling needs it. FAKE_FAIL names
    a cell (its destination's basename) to refuse with exit 2 and nothing
    created, as profile does for a usage error."""
    if argv[:2] == ["profile", "--help"]:
        print("usage: brainlesslab profile [-h] --dtype {float32,float64} "
              "[--activity-interval SECONDS] destination")
        return 0
    assert argv[0] == "profile", argv
    dest, flags = argv[1], argv[2:]
    if os.path.exists(dest):
        print("brainlesslab: FileExistsError: destination exists", file=sys.stderr)
        return 2
    if os.path.basename(dest) == os.environ.get("FAKE_FAIL"):
        print("brainlesslab: ValueError: background activity observed", file=sys.stderr)
        return 2
    opts, i = {}, 0
    while i < len(flags):
        name = flags[i][2:]
        if i + 1 < len(flags) and not flags[i + 1].startswith("--"):
            opts[name] = flags[i + 1]
            i += 2
        else:
            opts[name] = True
            i += 1
    # The admission estimate caps the fake at 5 worlds unless the budget is raised.
    admission = 5 if int(opts["memory-budget-mib"]) == 256 else None
    receipt = make_receipt(node=opts["node"], count=int(opts["count"]), task=opts["task"],
                           dtype=opts["dtype"], batch=int(opts["batch-size"]),
                           threads=int(opts["cpu-threads"]), trials=int(opts["trials"]),
                           blocks=int(opts["blocks"]), seed=int(opts["seed"]),
                           samples=int(opts["samples"]), admission=admission,
                           recording=opts["recording"], argv=argv)
    os.makedirs(dest)
    with open(os.path.join(dest, "receipt.json"), "w") as f:
        json.dump(receipt, f, indent=2)
    print(os.path.join(dest, "receipt.json"))
    return 0


class RunnerTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="bl-scaling-")
        self.fake = fake_binary(self.tmp)
        self.dest = os.path.join(self.tmp, "dest")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def argv_of(self, cid):
        doc = load_json(os.path.join(self.dest, "cells", cid, "receipt.json"))
        return doc["argv"]

    def test_matrix_runs_every_cell_with_the_right_flags(self):
        rc, out, err = run_script(
            self.dest, "--brainlesslab", self.fake, "--stage", "1", "--counts", "16",
            "--capacities", "1,8", "--trials", "4", "--blocks", "2", "--samples", "2",
            "--warmups", "0", "--threads", "1,2", "--allow-background-activity",
            "--activity-interval", "0.1")
        self.assertEqual(rc, 0, err)
        rows = read_csv(os.path.join(self.dest, "scaling.csv"))
        self.assertEqual([r["cell"] for r in rows], [
            f"{n}-n16-delayed_cue-b{b}-t{t}" for n in ("falandays", "sorn")
            for b in (1, 8) for t in (1, 2)])
        self.assertEqual({r["status"] for r in rows}, {"complete"})
        self.assertEqual({r["receipt"] for r in rows},
                         {f"cells/{r['cell']}/receipt.json" for r in rows})
        adm = {r["cell"]: r["admitted_capacities"] for r in rows}
        self.assertEqual(adm["sorn-n16-delayed_cue-b8-t2"], "5")
        argv = self.argv_of("sorn-n16-delayed_cue-b8-t2")
        self.assertEqual(argv[:2], ["profile", os.path.join(self.dest, "cells",
                                                            "sorn-n16-delayed_cue-b8-t2")])
        text = " ".join(argv[2:])
        for part in ("--backends cpu", "--dtype float32", "--node sorn",
                     "--task delayed_cue", "--count 16", "--batch-size 8", "--trials 4",
                     "--blocks 2", "--samples 2", "--warmups 0", "--cpu-threads 2",
                     "--memory-budget-mib 256", "--recording-budget-mib 32",
                     "--seed 49001", "--recording none", "--activity-interval 0.1",
                     "--allow-background-activity"):
            self.assertIn(part, text)
        self.assertNotIn("--horizon", text)
        self.assertNotIn("--diagnostic", text)
        for name in ("scaling.md", "scaling.svg", "scaling.json", "matrix.json"):
            self.assertTrue(os.path.isfile(os.path.join(self.dest, name)))
        self.assertTrue(os.path.isfile(os.path.join(
            self.dest, "logs", "sorn-n16-delayed_cue-b8-t2.stdout.txt")))
        self.assertEqual(json.loads(out)["status"], "passed")

    def test_failed_cell_is_remembered_and_the_rest_still_run(self):
        env = dict(os.environ, FAKE_FAIL="falandays-n16-delayed_cue-b1-t2")
        rc, out, err = run_script(
            self.dest, "--brainlesslab", self.fake, "--stage", "1", "--counts", "16",
            "--trials", "4", "--blocks", "2", "--samples", "1", "--warmups", "0",
            "--threads", "1,2", env=env)
        self.assertEqual(rc, 1, err)
        doc = load_json(os.path.join(self.dest, "scaling.json"))
        self.assertEqual(doc["failed_cells"], ["falandays-n16-delayed_cue-b1-t2"])
        self.assertEqual(len(doc["cells"]), 8)
        failed = [c for c in doc["cells"] if c["status"] != "complete"][0]
        self.assertEqual(failed["returncode"], 2)
        self.assertIn("background activity observed", " ".join(failed["errors"]))
        self.assertEqual(doc["checks"]["status"], "passed")
        # Re-rendering the run gives the same verdict without running anything.
        again = os.path.join(self.tmp, "again")
        rc2, _, err2 = run_script(again, "--from-receipts", self.dest)
        self.assertEqual(rc2, 1, err2)
        doc2 = load_json(os.path.join(again, "scaling.json"))
        self.assertEqual(doc2["failed_cells"], doc["failed_cells"])
        self.assertFalse(os.path.exists(os.path.join(again, "cells")))

    def test_stage_3_raises_the_memory_budget_from_the_admission_formula(self):
        rc, out, err = run_script(
            self.dest, "--brainlesslab", self.fake, "--stage", "3", "--nodes", "falandays",
            "--capacities", "8", "--threads", "1", "--samples", "1", "--warmups", "0")
        self.assertEqual(rc, 0, err)
        # 8 Falandays delayed-cue worlds at 1,024 nodes need >= 710 MiB (§4.4).
        argv = self.argv_of("falandays-n1024-delayed_cue-b8-t1")
        self.assertEqual(argv[argv.index("--memory-budget-mib") + 1], "710")
        self.assertEqual(argv[argv.index("--trials") + 1], "128")
        self.assertIn("--memory-budget-mib raised to 710", err)
        self.assertIn("raised to 710", read_text(os.path.join(self.dest, "scaling.md")))

    def test_stage_5_recordings_and_budget(self):
        rc, out, err = run_script(
            self.dest, "--brainlesslab", self.fake, "--stage", "5", "--threads", "1",
            "--samples", "1", "--warmups", "0")
        self.assertEqual(rc, 0, err)
        ids = [r["cell"] for r in read_csv(os.path.join(self.dest, "scaling.csv"))]
        self.assertEqual(ids, ["falandays-n64-delayed_cue-b8-t1",
                               "falandays-n64-delayed_cue-b8-t1-summary",
                               "falandays-n64-delayed_cue-b8-t1-probe_events",
                               "falandays-n64-delayed_cue-b8-t1-replay"])
        # Replay of 128 delayed-cue trials at 64 nodes: 115,015,680 bytes -> 110 MiB.
        argv = self.argv_of("falandays-n64-delayed_cue-b8-t1-replay")
        self.assertEqual(argv[argv.index("--recording") + 1], "replay")
        self.assertEqual(argv[argv.index("--recording-budget-mib") + 1], "110")
        doc = load_json(os.path.join(self.dest, "scaling.json"))
        self.assertEqual(len(doc["checks"]["groups"]), 1)  # recording changes no trial

    def test_explicit_horizon_is_passed_and_reported(self):
        rc, out, err = run_script(
            self.dest, "--brainlesslab", self.fake, "--stage", "4", "--nodes", "sorn",
            "--counts", "64", "--tasks", "pong", "--capacities", "8", "--threads", "1",
            "--trials", "4", "--blocks", "2", "--samples", "1", "--warmups", "0",
            "--diagnostic", "--horizon", "50")
        self.assertEqual(rc, 0, err)
        argv = self.argv_of("sorn-n64-pong-b8-t1")
        self.assertEqual(argv[argv.index("--horizon") + 1], "50")
        self.assertIn("--diagnostic", argv)
        self.assertIn("--horizon 50 with --diagnostic",
                      read_text(os.path.join(self.dest, "scaling.md")))


# ---- (c) end to end with the real program ------------------------------------------

def profile_supported(binary):
    try:
        r = subprocess.run([binary, "profile", "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=60)
    except OSError:
        return False
    return r.returncode == 0 and b"--dtype" in r.stdout


class EndToEndTests(unittest.TestCase):
    def test_tiny_real_matrix(self):
        if not BINARY or not os.path.exists(BINARY):
            self.skipTest("no brainlesslab binary given")
        if not profile_supported(BINARY):
            self.skipTest("this brainlesslab's profile --help does not list --dtype "
                          "(profile not implemented in this build yet)")
        tmp = tempfile.mkdtemp(prefix="bl-scaling-")
        try:
            dest = os.path.join(tmp, "dest")
            rc, out, err = run_script(
                dest, "--brainlesslab", BINARY, "--stage", "1", "--counts", "16",
                "--capacities", "1,4", "--trials", "4", "--blocks", "2", "--samples", "1",
                "--warmups", "0", "--threads", "1,2", "--allow-background-activity",
                "--activity-interval", "0.1")
            logs = ""
            if rc != 0 and os.path.isdir(os.path.join(dest, "logs")):
                for f in sorted(os.listdir(os.path.join(dest, "logs"))):
                    if f.endswith(".stderr.txt"):
                        logs += f + ": " + read_text(os.path.join(dest, "logs", f))[-2000:]
            self.assertEqual(rc, 0, err + logs)
            doc = load_json(os.path.join(dest, "scaling.json"))
            self.assertEqual(len(doc["cells"]), 8)
            self.assertEqual(doc["failed_cells"], [])
            self.assertEqual({c["status"] for c in doc["cells"]}, {"complete"})
            self.assertEqual(doc["checks"]["status"], "passed")
            self.assertEqual(len(doc["checks"]["groups"]), 2)  # falandays, sorn
            rows = read_csv(os.path.join(dest, "scaling.csv"))
            for node in ("falandays", "sorn"):
                mine = [r for r in rows if r["node"] == node]
                self.assertEqual(len(mine), 4)
                # Same trials in every cell of a composition: same work.
                self.assertEqual(len({r["completed_world_ticks"] for r in mine}), 1)
                self.assertEqual(len({r["completed_neural_frames"] for r in mine}), 1)
                for r in mine:
                    self.assertEqual(r["trials"], "4")
                    self.assertGreater(int(r["completed_world_ticks"]), 0)
                    self.assertGreater(float(r["neural_frames_per_second_median"]), 0)
                    caps = [int(x) for x in r["admitted_capacities"].split()]
                    self.assertTrue(caps and max(caps) <= int(r["requested_capacity"]))
            sigs = {}
            for c in doc["cells"]:
                receipt = load_json(os.path.join(dest, c["receipt"]))
                for row in receipt["measurements"]:
                    self.assertEqual(row["status"], "complete")
                    for s in row["samples"]:
                        key = (c["node"],)
                        got = tuple(s[k] for k in ("identity_signature", "work_signature",
                                                   "outcome_signature"))
                        self.assertTrue(all(got))
                        sigs.setdefault(key, set()).add(got)
            self.assertEqual({k: len(v) for k, v in sigs.items()},
                             {("falandays",): 1, ("sorn",): 1})
            root = ET.parse(os.path.join(dest, "scaling.svg")).getroot()
            self.assertEqual(len(root.findall(f".//{SVG}polyline")), 4)
        finally:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--fake-brainlesslab":
        sys.exit(fake_main(sys.argv[2:]))
    args = sys.argv[1:]
    if args and not args[0].startswith("-"):
        BINARY = os.path.abspath(args.pop(0))
    else:
        default = os.path.join(ROOT, "build", "brainlesslab")
        BINARY = os.environ.get("BL_CLI") or (default if os.path.exists(default) else None)
    unittest.main(argv=[sys.argv[0]] + args, verbosity=2)
