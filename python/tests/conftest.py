"""Shared fixtures of the Python package's tests (python/tests).

Run by ctest (CMakeLists.txt, test "python") with BRAINLESSLAB_LIBRARY and
BRAINLESSLAB_CLI naming this build's library and program; run by hand from
the source tree after `make`, the package and the program default to the
build tree. Skips are never silent: a test that needs ../shared says what is
missing and is skipped on a developer's machine, and fails when CI is set,
as the C tests do (tests/support.c, bl_test_missing). Only pandas and
matplotlib, the optional extras, are skipped with a reason everywhere.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# The package under test is the source tree's, whatever else is installed.
sys.path.insert(0, str(REPO / "python"))


def _under_ci():
    ci = os.environ.get("CI", "")
    return ci not in ("", "false", "0")


def require(have, what):
    """Skip (fail under CI) saying `what` is missing, unless `have`."""
    if not have:
        if _under_ci():
            pytest.fail(f"required for this test under CI but missing: {what}")
        pytest.skip(f"missing {what}")


def _shared_dir():
    env = os.environ.get("BL_SHARED_DIR")
    if env:
        return Path(env) if Path(env).is_dir() else None
    default = Path(os.environ.get("BL_DEFAULT_SHARED_DIR", REPO.parent / "shared"))
    return default if default.is_dir() else None


@pytest.fixture(scope="session")
def shared_dir():
    """The shared spec/fixtures folder: BL_SHARED_DIR, else the one beside
    the project (the C tests' rule)."""
    path = _shared_dir()
    require(path is not None, "the shared fixtures folder (set BL_SHARED_DIR)")
    return path


@pytest.fixture(scope="session")
def cli():
    """The command-line program of the same build, for comparisons."""
    path = Path(os.environ.get("BRAINLESSLAB_CLI", REPO / "build" / "brainlesslab"))
    assert path.is_file(), f"no CLI program at {path}: build with `make` or set BRAINLESSLAB_CLI"
    return str(path)


@pytest.fixture(scope="session")
def repo():
    """The source tree (plans/, docs/)."""
    return REPO


class CliRun:
    """What one run of the CLI program printed: exit code, stdout, stderr,
    and its error as (kind, message): the kind of its last
    "brainlesslab: <Kind>: <message>" line, or "usage" with the parser's
    "error: <message>" for exit code 2."""

    def __init__(self, proc):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.error = None
        lines = proc.stderr.decode("utf-8", "replace").splitlines()
        if proc.returncode == 2:
            for line in reversed(lines):
                m = re.match(r"^brainlesslab(?: \S+)?: error: (.*)$", line)
                if m:
                    self.error = ("usage", m.group(1))
                    return
        for line in reversed(lines):
            m = re.match(r"^brainlesslab: (\w+): (.*)$", line)
            if m:
                self.error = m.groups()
                return


@pytest.fixture(scope="session")
def run_cli(cli):
    """run_cli(*args, cwd=None) -> CliRun of `brainlesslab args...`."""
    def run(*args, cwd=None):
        proc = subprocess.run([cli, *map(str, args)], capture_output=True, cwd=cwd,
                              stdin=subprocess.DEVNULL)
        return CliRun(proc)
    return run


# The exception class a CLI error kind stands for ("usage": the parser's
# refusals, exit code 2, raised as ValueError).
EXCEPTIONS = {
    "usage": ValueError, "ValueError": ValueError, "TypeError": TypeError,
    "KeyError": KeyError, "MemoryError": MemoryError, "FileExistsError": FileExistsError,
    "FileNotFoundError": FileNotFoundError, "IsADirectoryError": IsADirectoryError,
    "OSError": OSError, "RuntimeError": RuntimeError,
}


def assert_same_error(cli_run, call):
    """`call()` raises exactly the CLI's error: the kind's class, the message."""
    assert cli_run.error is not None, f"the CLI did not fail: {cli_run.stderr!r}"
    kind, message = cli_run.error
    with pytest.raises(Exception) as info:
        call()
    assert type(info.value) is EXCEPTIONS[kind], (kind, repr(info.value))
    assert info.value.args == (message,)
