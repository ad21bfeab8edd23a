"""Ctrl-C during run() and the GIL: a run from Python stops on Ctrl-C with
KeyboardInterrupt and a FAILED record, and other Python threads go on while
it is inside C."""

import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import brainlesslab

REPO = Path(__file__).resolve().parents[2]


def long_plan(repo, dest, blocks, count):
    """quick-start.toml made longer: more blocks, a bigger reservoir."""
    text = (repo / "plans" / "quick-start.toml").read_text()
    text = re.sub(r"(?m)^blocks = 4\b", f"blocks = {blocks}", text)
    text = re.sub(r"(?m)^count = 64\b", f"count = {count}", text)
    assert f"blocks = {blocks}" in text and f"count = {count}" in text
    dest.write_text(text)
    return dest


def wait_for(predicate, what, limit_s=300):
    """Polls until predicate() (a deadline against a hang, not a timing)."""
    deadline = time.monotonic() + limit_s
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def reserved(root):
    return [d for d in Path(root).glob("*") if (d / ".RESERVED").exists()]


SCRIPT = """
import sys
sys.path.insert(0, {python!r})
import brainlesslab
brainlesslab.run({plan!r}, {root!r})
print("finished")
"""

CAUGHT = """
import signal, sys
sys.path.insert(0, {python!r})
import brainlesslab
try:
    brainlesslab.run({plan!r}, {root!r})
except KeyboardInterrupt:
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    print(sorted(brainlesslab.check({small!r})))
    print("caught")
"""


def interrupted_run(tmp_path, script, **fmt):
    root = tmp_path / "records"
    plan = long_plan(REPO, tmp_path / "long.toml", blocks=256, count=256)
    code = script.format(python=str(REPO / "python"), plan=str(plan), root=str(root), **fmt)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: reserved(root) or proc.poll() is not None, "the run's reservation")
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    records = list(root.iterdir())
    assert len(records) == 1, records
    return proc.returncode, out, err, records[0]


def assert_failed_by_ctrl_c(record):
    assert (record / "FAILED").is_file() and not (record / "DONE").exists()
    failed = json.loads((record / "FAILED").read_text())
    assert failed["error_type"] == "KeyboardInterrupt" and failed["message"] == "interrupted"
    # Stopped before its manifest: inspection says so, as the CLI does.
    with pytest.raises(FileNotFoundError, match="failed before its manifest was written: "
                                                "KeyboardInterrupt: interrupted"):
        brainlesslab.inspect(record)


def test_ctrl_c_raises_keyboard_interrupt_and_leaves_a_failed_record(tmp_path):
    rc, out, err, record = interrupted_run(tmp_path, SCRIPT)
    # Python's exit for an uncaught KeyboardInterrupt: death by SIGINT.
    assert rc == -signal.SIGINT, (rc, err)
    assert "finished" not in out
    assert err.rstrip().splitlines()[-1] == "KeyboardInterrupt", err
    assert "Traceback" in err
    assert_failed_by_ctrl_c(record)


def test_after_ctrl_c_python_keeps_its_handler_and_the_library_works(tmp_path):
    small = REPO / "plans" / "quick-start.toml"
    rc, out, err, record = interrupted_run(tmp_path, CAUGHT, small=str(small))
    assert rc == 0, err
    assert out.splitlines() == ["['contract_hash', 'request', 'targets']", "caught"]
    assert_failed_by_ctrl_c(record)


def test_other_threads_run_while_run_is_inside_c(tmp_path):
    # The other thread counts only while the run's reservation exists, that
    # is while the run is inside C: with the GIL held there it could not.
    root = tmp_path / "records"
    plan = long_plan(REPO, tmp_path / "long.toml", blocks=32, count=128)
    counted = [0]
    done = threading.Event()

    def count():
        while not done.is_set():
            if reserved(root):
                counted[0] += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        record = brainlesslab.run(plan, root)
        during = counted[0]
    finally:
        done.set()
        counter.join()
    assert record.status == "complete"
    assert during > 0


def test_commands_from_several_threads_take_turns(repo, tmp_path):
    # Each command has the process's streams to itself (embed.c's lock):
    # results from concurrent threads are each their own.
    plans = sorted((repo / "plans").glob("*.toml"))
    want = {p: brainlesslab.check(p) for p in plans}
    got, errors = {}, []

    def work(p):
        try:
            for _ in range(3):
                got[p] = brainlesslab.check(p)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(p,)) for p in plans]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and got == want
