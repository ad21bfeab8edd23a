#!/usr/bin/python3
"""`brainlesslab run` under MPI against the single process (docs/cluster.md).

    /usr/bin/python3 tests/test_mpi.py PATH/TO/brainlesslab PATH/TO/mpirun

ctest passes the built program and Open MPI's mpirun (registered only in a
build with MPI). Every mpirun runs in a session of its own under a time
limit: a job that does not end fails the test (its processes are killed),
it never hangs it, and no process of a finished job may be left.

  * tests/plans/mpi-block.toml and mpi-trial.toml (both models, a probe task
    and the physical tasks, construction scope block and trial) with 1, 2
    and 3 ranks give the single process's trials.csv, seeds.csv and
    summary.json summaries and contrasts, with summary and replay recording
    (replay artifacts too); tests/plans/mpi-probes.toml likewise with
    probe_events (the data/ artifacts); only rank 0 prints, one record is
    written, and its metadata names the ranks and threads;
  * a plan error is reported once and writes nothing; a rank that cannot
    read the plan is named in the one line; --shard under several ranks is
    refused with one line;
  * a rank stopped by SIGTERM mid-run: the record is FAILED with that
    rank's message, every rank exits non-zero;
  * a rank killed by SIGKILL mid-run: mpirun ends the job non-zero, the
    record is never complete;
  * SIGTERM to every rank mid-run (scancel): the record is FAILED, the job
    ends non-zero;
  * a plain run and check never load libmpi; a launch of two tasks that
    MPI sees as one rank each is refused.

Leak reports from inside Open MPI under AddressSanitizer are suppressed by
tests/lsan-mpi.supp (Open MPI's libraries only).
"""
import csv
import glob
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PLANS = os.path.join(HERE, "plans")
BINARY = None  # argv[1]
MPIRUN = None  # argv[2]
LIMIT = 900  # seconds for one job, far above any run here, even sanitized

LONG_PLAN = os.path.join(PLANS, "mpi-long.toml")  # a rank is still running when stopped


def environment():
    env = dict(os.environ)
    # Open MPI refuses root without both, and more ranks than cores
    # without oversubscription (CI runs as root on two cores).
    env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    env["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
    # Under AddressSanitizer, leak reports must name Open MPI's libraries
    # for tests/lsan-mpi.supp to match them: its components (and PMIx's)
    # stay loaded after MPI_Finalize, and stacks are unwound fully (the
    # fast unwinder stops at the first frame inside Open MPI).
    env["OMPI_MCA_mca_base_component_disable_dlclose"] = "1"
    env["PMIX_MCA_mca_base_component_disable_dlclose"] = "1"
    supp = "suppressions=%s:fast_unwind_on_malloc=0" % os.path.join(HERE, "lsan-mpi.supp")
    env["LSAN_OPTIONS"] = (env["LSAN_OPTIONS"] + ":" + supp) if env.get("LSAN_OPTIONS") else supp
    return env


def session_alive(sid):
    """Pids of processes still in session `sid`."""
    out = subprocess.run(["ps", "-e", "-o", "pid=,sid="], capture_output=True, text=True).stdout
    return [int(p) for p, s in (line.split() for line in out.splitlines()) if int(s) == sid]


def launch(argv, env=None, cwd=None):
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env or environment(), cwd=cwd, start_new_session=True)


def finish(test, proc):
    """Waits for a job under the time limit; kills its session on expiry
    (and fails). No process of the session may outlive the job."""
    try:
        out, err = proc.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        test.fail("the MPI job did not end within %d s" % LIMIT)
    for _ in range(100):
        left = session_alive(proc.pid)
        if not left:
            break
        time.sleep(0.1)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        test.fail("processes %s of the job outlived mpirun" % left)
    return proc.returncode, out, err


def mpirun(ranks, *args):
    return [MPIRUN, "-np", str(ranks), "--bind-to", "none"] + list(args)


def error_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("brainlesslab: ")]


def records(root):
    return sorted(glob.glob(os.path.join(root, "*")))


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def canonical(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def results(record):
    """Digests of what must not depend on the ranks (docs/cluster.md). A
    replay document's provenance carries the run's execution metadata (peak
    RSS, the ranks), which differs between any two runs: it is left out,
    and the rest of the document compared."""
    got = {}
    for name in ["trials.csv", "seeds.csv"]:
        got[name] = sha(os.path.join(record, name))
    for path in sorted(glob.glob(os.path.join(record, "data", "*"))):
        got[os.path.relpath(path, record)] = sha(path)
    for path in sorted(glob.glob(os.path.join(record, "replays", "*"))):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        del doc["provenance"]["environment"]
        got[os.path.relpath(path, record)] = canonical(doc)
    with open(os.path.join(record, "summary", "summary.json"), encoding="utf-8") as f:
        summary = json.load(f)
    for key in ["summaries", "contrasts"]:
        got[key] = canonical(summary[key])
    return got, summary["metadata"]


class MpiRun(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="bl-mpi-")
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def single(self, plan, *options):
        root = os.path.join(self.root, "single")
        p = subprocess.run([BINARY, "run", plan, "--root", root] + list(options),
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        return results(json.loads(p.stdout)["record"])

    def ranked(self, ranks, plan, *options):
        root = os.path.join(self.root, "ranks-%d-%d" % (ranks, len(records(self.root))))
        rc, out, err = finish(self, launch(mpirun(ranks, BINARY, "run", plan, "--root", root,
                                                  *options)))
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertEqual(len(lines), 1, "only rank 0 prints the record line: %r" % out)
        line = json.loads(lines[0])
        self.assertEqual(line["status"], "complete")
        self.assertEqual(records(root), [line["record"]], "one record per job")
        inspect = subprocess.run([BINARY, "inspect", line["record"]], capture_output=True)
        self.assertEqual(inspect.returncode, 0, inspect.stderr)
        return results(line["record"])

    def check_plan(self, name, options_list, ranks_list=(1, 2, 3)):
        plan = os.path.join(PLANS, name)
        for options in options_list:
            want, meta = self.single(plan, *options)
            self.assertNotIn("distribution", meta)
            if "replay" in options:
                self.assertTrue(any(k.startswith("replays/") for k in want))
            threads = "2" if "--cpu-threads" in options else "1"
            for ranks in ranks_list:
                with self.subTest(plan=name, ranks=ranks, options=options):
                    got, meta = self.ranked(ranks, plan, *options)
                    self.assertEqual(got, want)
                    if ranks == 1:  # one rank is a plain run
                        self.assertNotIn("distribution", meta)
                    else:
                        self.assertEqual(meta["distribution"], {
                            "kind": "mpi", "ranks": ranks, "cpu_threads": int(threads)})

    def test_block_scope_matches_single_process(self):
        self.check_plan("mpi-block.toml", [[], ["--cpu-threads", "2", "--batch-size", "3"]])
        self.check_plan("mpi-block.toml", [["--recording", "replay"]], (3,))

    def test_trial_scope_matches_single_process(self):
        self.check_plan("mpi-trial.toml", [[], ["--recording", "replay"]])

    def test_probe_events_match_single_process(self):
        want, _ = self.single(os.path.join(PLANS, "mpi-probes.toml"), "--recording",
                              "probe_events")
        self.assertTrue(any(k.startswith("data/") for k in want))
        self.check_plan("mpi-probes.toml", [["--recording", "probe_events"]], (2, 3))

    def test_plan_error_is_reported_once(self):
        bad = os.path.join(self.root, "bad.toml")
        with open(bad, "w") as f:
            f.write('format = "brainlesslab-plan"\nformat_version = 3\n')
        out_root = os.path.join(self.root, "out")
        rc, out, err = finish(self, launch(mpirun(3, BINARY, "run", bad, "--root", out_root)))
        self.assertNotEqual(rc, 0)
        self.assertEqual(out, "")
        self.assertEqual(len(error_lines(err)), 1, err)
        self.assertFalse(os.path.exists(out_root), "a refused run writes nothing")

    def test_rank_that_cannot_read_the_plan_is_named(self):
        # Rank 1 runs in another directory, where the relative plan path
        # names nothing (a node without the shared file system, say).
        elsewhere = os.path.join(self.root, "elsewhere")
        os.mkdir(elsewhere)
        out_root = os.path.join(self.root, "out")
        script = ('[ "$OMPI_COMM_WORLD_RANK" = 1 ] && cd "$0"; exec "$1" run mpi-block.toml '
                  '--root "$2"')
        rc, out, err = finish(self, launch(
            mpirun(2, "sh", "-c", script, elsewhere, BINARY, out_root), cwd=PLANS))
        self.assertNotEqual(rc, 0)
        lines = error_lines(err)
        self.assertEqual(len(lines), 1, err)
        self.assertIn("rank 1: ", lines[0])
        self.assertIn("mpi-block.toml", lines[0])
        self.assertFalse(os.path.exists(out_root))

    def test_shard_with_several_ranks_is_refused(self):
        out_root = os.path.join(self.root, "out")
        rc, out, err = finish(self, launch(mpirun(
            2, BINARY, "run", os.path.join(PLANS, "mpi-block.toml"), "--shard", "1/2",
            "--root", out_root)))
        self.assertNotEqual(rc, 0)
        lines = error_lines(err)
        self.assertEqual(len(lines), 1, err)
        self.assertIn("--shard cannot be combined with an MPI launch of 2 ranks", lines[0])
        self.assertFalse(os.path.exists(out_root))

    def test_launch_that_mpi_cannot_see_is_refused(self):
        # What srun without an MPI plugin looks like: the launcher names two
        # tasks, but MPI_Init makes each a world of one; each would write a
        # whole record.
        out_root = os.path.join(self.root, "out")
        env = dict(environment(), OMPI_COMM_WORLD_SIZE="2")
        rc, out, err = finish(self, launch([BINARY, "run", os.path.join(PLANS, "mpi-block.toml"),
                                            "--root", out_root], env=env))
        self.assertEqual(rc, 1)
        self.assertEqual(error_lines(err), [
            "brainlesslab: RuntimeError: the launcher started 2 tasks but MPI sees 1 rank "
            "(with srun, select the MPI plugin: srun --mpi=pmix)"], err)
        self.assertFalse(os.path.exists(out_root))

    def stopped_rank(self, sig):
        """Runs the long plan on 2 ranks and sends `sig` to rank 1 once the
        record is reserved (rank 1 then runs its part). Returns the job's
        exit code, stderr and the one record directory."""
        out_root = os.path.join(self.root, "out")
        # Rank 1's shell starts a watcher, then becomes brainlesslab ($$
        # stays its pid); the watcher signals it once .RESERVED exists.
        script = ('if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then '
                  '(while ! ls "$2"/*/.RESERVED >/dev/null 2>&1; do sleep 0.02; done; '
                  'kill -%s $$) & fi; exec "$0" run "$1" --root "$2"' % sig)
        rc, out, err = finish(self, launch(mpirun(2, "sh", "-c", script, BINARY, LONG_PLAN,
                                                  out_root)))
        found = records(out_root)
        self.assertEqual(len(found), 1, err)
        return rc, out, err, found[0]

    def test_stopped_job_fails_the_record(self):
        # SIGTERM to every rank, as Slurm's scancel sends it (and mpirun on
        # Ctrl-C, after a grace period in which it may also kill): rank 0
        # fails the record as run does and ends the job.
        out_root = os.path.join(self.root, "out")
        proc = launch(mpirun(2, BINARY, "run", LONG_PLAN, "--root", out_root))
        while not glob.glob(os.path.join(out_root, "*", ".RESERVED")):
            self.assertIsNone(proc.poll(), "the job ended before its record was reserved")
            time.sleep(0.02)
        out = subprocess.run(["ps", "-s", str(proc.pid), "-o", "pid=,comm="],
                             capture_output=True, text=True).stdout
        ranks = [int(line.split()[0]) for line in out.splitlines()
                 if line.split()[1] == "brainlesslab"]
        self.assertEqual(len(ranks), 2, out)
        for pid in ranks:
            os.kill(pid, signal.SIGTERM)
        rc, out, err = finish(self, proc)
        self.assertNotEqual(rc, 0)
        self.assertEqual(out, "")
        self.assertEqual(error_lines(err), ["brainlesslab: SystemExit: terminated by SIGTERM"],
                         err)
        (record,) = records(out_root)
        self.assertFalse(os.path.exists(os.path.join(record, "DONE")))
        with open(os.path.join(record, "FAILED"), encoding="utf-8") as f:
            self.assertEqual(json.load(f)["message"], "terminated by SIGTERM")

    def test_rank_stopped_by_sigterm_fails_the_record(self):
        rc, out, err, record = self.stopped_rank("TERM")
        self.assertNotEqual(rc, 0)
        self.assertEqual(out, "")
        lines = error_lines(err)
        self.assertEqual(lines, ["brainlesslab: SystemExit: rank 1: terminated by SIGTERM"], err)
        self.assertFalse(os.path.exists(os.path.join(record, "DONE")))
        with open(os.path.join(record, "FAILED"), encoding="utf-8") as f:
            failed = json.load(f)
        self.assertEqual(failed["message"], "rank 1: terminated by SIGTERM")
        self.assertEqual(failed["status"], "failed")
        inspect = subprocess.run([BINARY, "inspect", record], capture_output=True)
        self.assertNotEqual(inspect.returncode, 0)

    def test_rank_killed_ends_the_job_without_a_complete_record(self):
        rc, out, err, record = self.stopped_rank("KILL")
        self.assertNotEqual(rc, 0)
        self.assertEqual(out, "")
        self.assertFalse(os.path.exists(os.path.join(record, "DONE")))
        self.assertTrue(os.path.exists(os.path.join(record, "FAILED")) or
                        os.path.exists(os.path.join(record, ".RESERVED")))
        inspect = subprocess.run([BINARY, "inspect", record], capture_output=True)
        self.assertNotEqual(inspect.returncode, 0)

    def test_one_process_never_loads_mpi(self):
        plan = os.path.join(PLANS, "mpi-block.toml")
        env = dict(os.environ, LD_DEBUG="files")
        for argv in ([BINARY, "check", plan],
                     [BINARY, "run", plan, "--root", os.path.join(self.root, "plain")]):
            p = subprocess.run(argv, capture_output=True, text=True, env=env)
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            self.assertIn("calling init", p.stderr)  # LD_DEBUG did report
            self.assertNotIn("libmpi", p.stderr)
        # Under mpirun with two ranks the module is loaded, and MPI with it.
        p = finish(self, launch(mpirun(2, "env", "LD_DEBUG=files", BINARY, "run", plan,
                                       "--root", os.path.join(self.root, "ranks"))))
        self.assertEqual(p[0], 0, p[2][-2000:])
        self.assertIn("libbrainlesslab-mpi.so", p[2])
        self.assertIn("libmpi", p[2])


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: test_mpi.py BRAINLESSLAB MPIRUN")
    BINARY = os.path.abspath(sys.argv[1])
    MPIRUN = sys.argv[2]
    unittest.main(argv=sys.argv[:1] + sys.argv[3:], verbosity=2)
