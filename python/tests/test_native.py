"""Finding and opening the shared library (brainlesslab/_native.py)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import brainlesslab
from brainlesslab import _native


def test_library_path_is_the_environment_variable_when_set():
    env = os.environ.get(_native.LIBRARY_ENV)
    path = brainlesslab.library_path()
    if env:
        assert path == env
    assert Path(path).is_file()


def test_library_path_refuses_a_missing_file(monkeypatch, tmp_path):
    monkeypatch.setenv(_native.LIBRARY_ENV, str(tmp_path / "nothing.so"))
    with pytest.raises(OSError, match="is not a file"):
        brainlesslab.library_path()


def test_library_path_falls_back_to_the_build_tree(monkeypatch, repo):
    # Imported from the source tree with no variable set, the package takes
    # the build tree's library; only checkable where that build exists.
    monkeypatch.delenv(_native.LIBRARY_ENV, raising=False)
    built = repo / "build" / _native.LIBRARY_NAME
    if built.is_file():
        assert brainlesslab.library_path() == str(built)
    else:
        with pytest.raises(OSError, match="cannot find libbrainlesslab.so"):
            brainlesslab.library_path()


def test_open_library_calls_into_the_engine():
    ffi, lib = _native.open_library("const char *bl_status_kind(int status);"
                                    "const char *bl_version(void);")
    assert ffi.string(lib.bl_status_kind(0)) == b"OK"
    assert ffi.string(lib.bl_status_kind(1)) == b"ValueError"
    assert ffi.string(lib.bl_version()).decode() == brainlesslab.__version__


def test_import_needs_no_compiler(tmp_path):
    # ABI mode: importing and calling works with no C compiler on PATH.
    env = dict(os.environ, PATH=str(tmp_path), PYTHONPATH=str(Path(_native.__file__).parents[1]))
    code = ("import brainlesslab, brainlesslab._native as n;"
            "ffi, lib = n.open_library('const char *bl_version(void);');"
            "print(ffi.string(lib.bl_version()).decode())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == brainlesslab.__version__


def test_the_interpreter_exits_cleanly_after_threads_ran(repo, tmp_path):
    # OpenMP worker threads outlive a run; handles opened and dropped (cffi
    # closes them) must not unload the library under them at exit. Without
    # RTLD_NODELETE this died by SIGSEGV at exit with clang's libomp.
    code = f"""
import gc, sys
sys.path.insert(0, {str(repo / 'python')!r})
import brainlesslab
from brainlesslab import _native
brainlesslab.run({str(repo / 'plans' / 'quick-start.toml')!r}, {str(tmp_path)!r}, cpu_threads=2)
for _ in range(3):
    ffi, lib = _native.open_library("const char *bl_version(void);")
    del ffi, lib
    gc.collect()
print("done")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, (out.returncode, out.stderr)
    assert out.stdout == "done\n"


def test_star_import_gives_every_public_name():
    # __all__ is what `from brainlesslab import *` gives: every public name
    # the package imports from its modules, and nothing it does not have.
    public = {name for name, value in vars(brainlesslab).items()
              if not name.startswith("_") and getattr(value, "__module__", "").startswith("brainlesslab.")}
    assert public <= set(brainlesslab.__all__)
    assert all(hasattr(brainlesslab, name) for name in brainlesslab.__all__)
