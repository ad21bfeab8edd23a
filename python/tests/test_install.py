"""The two ways of installing the package that README.md names, each into a
temporary place: `cmake --install` (the package with the library inside,
found with no environment variable) and `pip install --no-build-isolation
--no-deps ./python` (offline; the library through BRAINLESSLAB_LIBRARY)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from brainlesslab import _native

PROBE = """
import brainlesslab, sys
print(brainlesslab.__file__)
print(brainlesslab.library_path())
print(brainlesslab.check(sys.argv[1])["request"]["id"])
"""


def probe(site, cwd, plan, env_library=None):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", _native.LIBRARY_ENV)}
    env["PYTHONPATH"] = str(site)
    if env_library:
        env[_native.LIBRARY_ENV] = env_library
    out = subprocess.run([sys.executable, "-c", PROBE, str(plan)], capture_output=True,
                         text=True, cwd=cwd, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_cmake_install_puts_package_and_library_where_python_finds_them(repo, tmp_path):
    build = Path(os.environ.get("BL_BUILD_DIR", repo / "build"))
    assert (build / "cmake_install.cmake").is_file(), f"no build at {build} (BL_BUILD_DIR)"
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", str(build), "--prefix", str(prefix)], check=True,
                   capture_output=True)
    sites = list(prefix.glob("lib/python3*/dist-packages"))
    assert len(sites) == 1, sites
    version = "python%d.%d" % sys.version_info[:2]
    assert sites[0] == prefix / "lib" / version / "dist-packages"
    package = sites[0] / "brainlesslab"
    assert (package / _native.LIBRARY_NAME).is_file()
    module, library, plan_id = probe(sites[0], tmp_path, repo / "plans" / "quick-start.toml")
    assert Path(module).parent == package
    assert library == str(package / _native.LIBRARY_NAME)
    assert plan_id == "quick-start"


def test_pip_install_offline(repo, tmp_path):
    # From a copy: setuptools builds inside the source folder it is given.
    source = tmp_path / "source"
    shutil.copytree(repo / "python", source, ignore=shutil.ignore_patterns(
        "tests", "benchmarks", "build", "*.egg-info", "__pycache__"))
    target = tmp_path / "site"
    out = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation",
                          "--no-deps", "--no-index", "--quiet", "--target", str(target),
                          str(source)], capture_output=True, text=True,
                         env=dict(os.environ, PIP_NO_CACHE_DIR="1",
                                  PIP_ROOT_USER_ACTION="ignore",
                                  PIP_DISABLE_PIP_VERSION_CHECK="1"))
    assert out.returncode == 0, out.stderr
    library = _native.library_path()
    module, found, plan_id = probe(target, tmp_path, repo / "plans" / "quick-start.toml",
                                   env_library=library)
    assert Path(module).parent == target / "brainlesslab"
    assert found == library and plan_id == "quick-start"
