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
