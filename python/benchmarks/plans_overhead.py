"""The cost of check and of a small run from Python against the CLI
process (the note of issue 22): each repetition times the in-process call
and the program in a subprocess back to back, so the two see the same
machine load; the medians are printed, wall and CPU time (the CPU of the
in-process call is this process's, its worker thread included; the CLI's
is the child's user + system time).

    BRAINLESSLAB_LIBRARY=build/libbrainlesslab.so \\
        /usr/bin/python3 python/benchmarks/plans_overhead.py build/brainlesslab [REPS]
"""

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

t0 = time.perf_counter()
import brainlesslab  # noqa: E402 - timed

IMPORT_S = time.perf_counter() - t0


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def in_process(call):
    w, c = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - w, time.process_time() - c


def as_process(argv):
    w, c = time.perf_counter(), children_cpu()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - w, children_cpu() - c


def med(samples, k):
    """Median of field k of the samples, in ms."""
    return statistics.median(s[k] for s in samples) * 1e3


def main():
    cli = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 21
    plan = str(REPO / "plans" / "quick-start.toml")
    root = tempfile.mkdtemp(prefix="plans-overhead-")
    cases = {
        "check": (lambda: brainlesslab.check(plan), [cli, "check", plan]),
        "run quick-start": (lambda: brainlesslab.run(plan, root), [cli, "run", plan, "--root", root]),
    }
    for name, (call, argv) in cases.items():
        call()  # the first call maps pages and warms caches on both sides
        as_process(argv)
        py, sub = [], []
        for _ in range(reps):
            py.append(in_process(call))
            sub.append(as_process(argv))
        print(f"{name:16s} python wall {med(py, 0):8.2f} ms cpu {med(py, 1):8.2f} ms | "
              f"cli process wall {med(sub, 0):8.2f} ms cpu {med(sub, 1):8.2f} ms  ({reps} reps)")
    print(f"import brainlesslab (numpy, cffi, dlopen): {IMPORT_S * 1e3:.1f} ms, once")
    subprocess.run(["rm", "-rf", root], check=True)


if __name__ == "__main__":
    main()
