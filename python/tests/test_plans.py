"""check, run, inspect and decode from Python against the CLI program:
same results, same refusals (exception class of the error kind, the
line's message)."""

import csv
import inspect
import json
import math
import re
from pathlib import Path

import pytest

import brainlesslab
from conftest import assert_same_error



def only_record(root):
    entries = list(Path(root).iterdir())
    assert len(entries) == 1, entries
    return entries[0]


# ---- check ------------------------------------------------------------------

def test_check_is_the_cli_check(repo, run_cli):
    for plan in sorted((repo / "plans").glob("*.toml")):
        cli = run_cli("check", plan)
        assert cli.returncode == 0, cli.stderr
        assert brainlesslab.check(plan) == json.loads(cli.stdout), plan.name
        assert brainlesslab.check(str(plan)) == brainlesslab.check(plan)


def test_check_refuses_every_bad_plan_as_the_cli_does(repo, run_cli):
    bad = sorted((repo / "tests" / "plans" / "bad").glob("*.toml"))
    assert len(bad) > 50
    kinds = set()
    for plan in bad:
        cli = run_cli("check", plan)
        assert cli.returncode == 1, plan.name
        assert_same_error(cli, lambda: brainlesslab.check(plan))
        kinds.add(cli.error[0])
    assert {"ValueError", "TypeError"} <= kinds, kinds


def test_check_of_a_missing_or_odd_path(tmp_path, run_cli):
    for path in [tmp_path / "missing.toml", tmp_path, "-starts-with-a-dash.toml"]:
        assert_same_error(run_cli("check", "--", path), lambda: brainlesslab.check(path))


# ---- run --------------------------------------------------------------------

def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def assert_table_equals_csv(table, rows):
    """A structured array field by field against the CLI's CSV text:
    integers and reals exactly (NaN for an empty real), text as is."""
    assert list(table.dtype.names) == list(rows[0].keys())
    assert len(table) == len(rows)
    for got, want in zip(table, rows):
        for name in table.dtype.names:
            kind = table.dtype[name].kind
            text = want[name]
            if kind == "i":
                assert int(got[name]) == int(text), name
            elif kind == "f":
                if text == "":
                    assert math.isnan(got[name]), name
                else:
                    assert float(got[name]) == float(text), name
            else:
                assert str(got[name]) == text, name


def test_run_trials_equal_the_cli_trials(repo, tmp_path, run_cli):
    plan = repo / "plans" / "quick-start.toml"
    cli = run_cli("run", plan, "--root", tmp_path / "cli", "--batch-size", 8)
    assert cli.returncode == 0, cli.stderr
    cli_record = only_record(tmp_path / "cli")
    record = brainlesslab.run(plan, tmp_path / "py", batch_size=8)
    assert record.path == only_record(tmp_path / "py")
    assert record.status == "complete"
    assert (record.path / "DONE").is_file()
    trials = read_csv(cli_record / "trials.csv")
    assert_table_equals_csv(record.trials, trials)
    assert_table_equals_csv(record.seeds, read_csv(cli_record / "seeds.csv"))
    # The dtypes a user computes with.
    assert record.trials.dtype["raw"].kind == "f"
    assert record.trials.dtype["trial_id"].kind == "i"
    assert record.trials.dtype["target_id"].kind == "U"
    cli_summary = json.loads((cli_record / "summary" / "summary.json").read_text())
    assert record.summary["summaries"] == cli_summary["summaries"]
    assert record.summary["contrasts"] == cli_summary["contrasts"]


def test_shards_merged_from_python_equal_the_cli_run(repo, tmp_path, run_cli):
    plan = repo / "tests" / "plans" / "shards-block.toml"
    cli = run_cli("run", plan, "--root", tmp_path / "cli")
    assert cli.returncode == 0, cli.stderr
    cli_record = only_record(tmp_path / "cli")
    shards = [brainlesslab.run(plan, tmp_path / f"shard{k}", shard=f"{k}/2") for k in (1, 2)]
    assert [inspect_kind(s.path) for s in shards] == ["shard", "shard"]
    record = brainlesslab.merge([s.path for s in reversed(shards)], tmp_path / "merged")
    assert record.status == "complete"
    for name in ("trials.csv", "seeds.csv"):
        assert (record.path / name).read_bytes() == (cli_record / name).read_bytes(), name
    cli_summary = json.loads((cli_record / "summary" / "summary.json").read_text())
    assert record.summary["summaries"] == cli_summary["summaries"]
    assert record.summary["contrasts"] == cli_summary["contrasts"]
    # One part missing: the CLI's error, and nothing written.
    cli = run_cli("merge", shards[0].path, "--root", tmp_path / "bad-cli")
    assert cli.returncode == 1
    with pytest.raises(ValueError) as caught:
        brainlesslab.merge(shards[0].path, tmp_path / "bad")
    assert (type(caught.value).__name__, str(caught.value)) == cli.error
    assert not (tmp_path / "bad").exists()


def inspect_kind(path):
    return brainlesslab.inspect(path)["manifest"].get("kind")


def test_run_options_reach_the_record(repo, tmp_path):
    plan = repo / "plans" / "quick-start.toml"
    record = brainlesslab.run(plan, tmp_path, cpu_threads=2, batch_size=4,
                              memory_budget_mib=64, recording="summary")
    execution = record.summary["metadata"]["execution"]
    text = json.dumps(record.summary["metadata"])
    assert record.summary["metadata"]["cpu_threads"] == 2, text
    assert record.summary["metadata"]["requested_batch_size"] == 4, text
    assert execution is not None


@pytest.mark.parametrize("options,argv", [
    (dict(batch_size=0), ["--batch-size", "0"]),
    (dict(batch_size="x"), ["--batch-size", "x"]),
    (dict(batch_size=2.5), ["--batch-size", "2.5"]),
    (dict(cpu_threads=0), ["--cpu-threads", "0"]),
    (dict(memory_budget_mib=-1), ["--memory-budget-mib=-1"]),
    (dict(recording="bogus"), ["--recording", "bogus"]),
    (dict(backend="gpu"), ["--backend", "gpu"]),
    (dict(recording_budget_mib=-1), ["--recording-budget-mib=-1"]),
    (dict(recording="replay"), ["--recording", "replay"]),
    (dict(calibration="/nonexistent/calibration.json"),
     ["--calibration", "/nonexistent/calibration.json"]),
])
def test_run_refuses_bad_options_as_the_cli_does(repo, tmp_path, run_cli, options, argv):
    plan = repo / "plans" / "quick-start.toml"
    cli = run_cli("run", plan, "--root", tmp_path / "cli", *argv)
    assert cli.returncode in (1, 2)
    assert_same_error(cli, lambda: brainlesslab.run(plan, tmp_path / "py", **options))
    # Refused before the reservation: nothing left behind.
    assert not (tmp_path / "py").exists() or not any((tmp_path / "py").iterdir())


def test_run_raises_memory_error_for_a_recording_over_budget(repo, tmp_path):
    with pytest.raises(MemoryError, match="recording budget is 33554432"):
        brainlesslab.run(repo / "plans" / "quick-start.toml", tmp_path, recording="replay")


def test_run_root_that_cannot_be_created(repo, tmp_path, run_cli):
    plan = repo / "plans" / "quick-start.toml"
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert_same_error(run_cli("run", plan, "--root", blocker / "records"),
                      lambda: brainlesslab.run(plan, blocker / "records"))


def test_run_with_calibration_from_a_record(repo, tmp_path, run_cli):
    plan = repo / "plans" / "quick-start.toml"
    first = brainlesslab.run(plan, tmp_path / "a")
    cal = brainlesslab.run(plan, tmp_path / "b", calibration=[first.path])
    cli = run_cli("run", plan, "--root", tmp_path / "c", "--calibration", first.path)
    assert cli.returncode == 0, cli.stderr
    assert_table_equals_csv(cal.trials, read_csv(only_record(tmp_path / "c") / "trials.csv"))


# ---- inspect ----------------------------------------------------------------

def test_inspect_is_the_cli_inspect(repo, tmp_path, run_cli):
    record = brainlesslab.run(repo / "plans" / "quick-start.toml", tmp_path)
    cli = run_cli("inspect", record.path)
    assert cli.returncode == 0
    assert brainlesslab.inspect(record.path) == json.loads(cli.stdout)
    # A changed artifact: the map says so (the CLI exits 1 but prints it).
    with open(record.path / "trials.csv", "ab") as f:
        f.write(b"\r\n")
    cli = run_cli("inspect", record.path)
    assert cli.returncode == 1
    changed = brainlesslab.inspect(record.path)
    assert changed == json.loads(cli.stdout)
    assert changed["status"] == "incomplete" and "trials.csv" in changed["invalid_artifacts"]


def test_inspect_refuses_what_the_cli_refuses(tmp_path, run_cli):
    for path in [tmp_path / "missing", tmp_path]:
        assert_same_error(run_cli("inspect", path), lambda: brainlesslab.inspect(path))


# ---- decode -----------------------------------------------------------------

DECODE_SPLITS = dict(fit=32, validation=16, evaluation=16)


@pytest.fixture(scope="module")
def probe_record(repo, tmp_path_factory):
    root = tmp_path_factory.mktemp("decode")
    return brainlesslab.run(repo / "tests" / "plans" / "decode-small.toml", root,
                            recording="probe_events")


def test_decode_is_the_cli_decode(probe_record, run_cli, tmp_path):
    cli = run_cli("decode", probe_record.path, "--fit", 32, "--validation", 16,
                  "--evaluation", 16, "--lambdas", "0.1", "1", "--points", "cue_end")
    assert cli.returncode == 0, cli.stderr
    got = brainlesslab.decode(probe_record, lambdas=[0.1, 1], points=["cue_end"], **DECODE_SPLITS)
    assert got == json.loads(cli.stdout)
    assert len(got) > 0 and all(r["point"] == "cue_end" for r in got if "point" in r)
    # The path form and --out (written exclusively, as the CLI does).
    out = tmp_path / "decoded.json"
    again = brainlesslab.decode(str(probe_record.path), out=out, **DECODE_SPLITS)
    assert json.loads(out.read_text()) == again
    with pytest.raises(FileExistsError):
        brainlesslab.decode(probe_record, out=out, **DECODE_SPLITS)


def test_decode_refuses_what_the_cli_refuses(probe_record, repo, tmp_path, run_cli):
    summary_only = brainlesslab.run(repo / "plans" / "quick-start.toml", tmp_path)
    cases = [
        (["--fit", 0], dict(fit=0)),
        (["--points", "nowhere"], dict(points=["nowhere"])),
        ([], dict()),  # the default splits need 640 trials per block
    ]
    for argv, options in cases:
        cli = run_cli("decode", probe_record.path, *argv)
        assert cli.returncode in (1, 2), argv
        assert_same_error(cli, lambda: brainlesslab.decode(probe_record, **options))
    assert_same_error(run_cli("decode", summary_only.path, *sum(
        ([f"--{k}", v] for k, v in DECODE_SPLITS.items()), [])),
        lambda: brainlesslab.decode(summary_only, **DECODE_SPLITS))
    with pytest.raises(TypeError):
        brainlesslab.decode(probe_record, no_such_option=1)


def test_nothing_reaches_the_terminal_and_the_streams_come_back(repo):
    # Commands, failing ones included, print nothing on the process's
    # stdout and stderr; afterwards C's stdout is the process's again.
    import subprocess
    import sys
    code = f"""
import ctypes, sys
sys.path.insert(0, {str(repo / 'python')!r})
import brainlesslab
brainlesslab.check({str(repo / 'plans' / 'quick-start.toml')!r})
try:
    brainlesslab.check("missing.toml")
except FileNotFoundError:
    pass
libc = ctypes.CDLL(None)
libc.puts(b"after")
libc.fflush(None)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"after\n" and proc.stderr == b""


def cli_options(run_cli, command):
    """The long options of `brainlesslab COMMAND --help`, as Python names."""
    cli = run_cli(command, "--help")
    assert cli.returncode == 0
    names = set(re.findall(r"(?m)^  (--[a-z-]+)", cli.stdout.decode()))
    return {n[2:].replace("-", "_") for n in names} - {"help"}


def test_run_and_decode_take_every_option_of_the_cli(run_cli):
    run_params = set(inspect.signature(brainlesslab.run).parameters) - {"path"}
    assert run_params == cli_options(run_cli, "run")
    decode_params = set(inspect.signature(brainlesslab._commands.decode_argv).parameters)
    assert decode_params - {"record"} == cli_options(run_cli, "decode")
