"""Where the C library is and how a module of this package talks to it.

The package reaches the engine through cffi in ABI mode: ``ffi.dlopen`` on
the shared library ``libbrainlesslab.so``, with the declarations given as a
cdef string, so importing the package needs no compiler and no build step of
its own.

Convention: each sub-module owns its own FFI object, made once at import by
:func:`open_library` from the declarations that module needs (``_plans.py``
the in-process command entry, ``_models.py`` the model API, ...). cdata of
one module's FFI are never handed to another module's functions; what
crosses modules are Python and NumPy values. The dynamic loader maps the
library once however many FFIs open it.

Which library (:func:`library_path`), first match wins:

1. the environment variable ``BRAINLESSLAB_LIBRARY`` (a path to the .so);
2. the build tree, when the package is imported from the source tree
   (``<repo>/python/brainlesslab``) after ``make``: ``<repo>/build/libbrainlesslab.so``;
3. beside the package, where ``cmake --install`` puts it
   (``<site>/brainlesslab/libbrainlesslab.so``);
4. ``ctypes.util.find_library("brainlesslab")``: the loader's search path.
"""

import ctypes.util
import os
from pathlib import Path

from cffi import FFI

LIBRARY_ENV = "BRAINLESSLAB_LIBRARY"
LIBRARY_NAME = "libbrainlesslab.so"

_HERE = Path(__file__).resolve().parent


def library_path():
    """The shared library this package loads (see the module's docstring for
    the order): a path, or for the loader's search path the name dlopen
    finds. Raises OSError naming every place tried when there is none; a
    BRAINLESSLAB_LIBRARY that names no file is an error, not a reason to
    look elsewhere."""
    env = os.environ.get(LIBRARY_ENV)
    if env:
        if Path(env).is_file():
            return env
        raise OSError(f"{LIBRARY_ENV}={env!r} is not a file")
    tried = []
    root = _HERE.parent.parent
    if _HERE.parent.name == "python" and (root / "CMakeLists.txt").is_file():
        tried.append(root / "build" / LIBRARY_NAME)
    tried.append(_HERE / LIBRARY_NAME)
    for path in tried:
        if path.is_file():
            return str(path)
    found = ctypes.util.find_library("brainlesslab")
    if found:
        return found
    raise OSError(f"cannot find {LIBRARY_NAME}: not in " + ", ".join(map(str, tried)) +
                  f" nor on the loader's search path; build it with `make` or set {LIBRARY_ENV}")


def open_library(cdef):
    """A new FFI with `cdef`'s declarations and the library opened over it:
    (ffi, lib). Each calling module keeps its own pair (the convention above).

    The library is never unloaded (RTLD_NODELETE): cffi closes a handle when
    its lib object goes away, and at the interpreter's exit the last close
    would unmap the library and its OpenMP runtime while the runtime's
    worker threads still run destructors in it (a crash at exit, seen with
    clang's libomp)."""
    ffi = FFI()
    ffi.cdef(cdef)
    return ffi, ffi.dlopen(library_path(), ffi.RTLD_NOW | ffi.RTLD_NODELETE)
