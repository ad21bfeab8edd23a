"""The Python reference's rates for the operations bench_rng measures, so
`make bench` can show both side by side: seed_for as the reference computes it
(json.dumps + hashlib.sha256 + int.from_bytes, spec/platform.md §4.2) and
NumPy's Generator(Philox).standard_normal / random in blocks of 4096."""
import hashlib
import json
import time

import numpy as np


def seed_for(root, partition, stream, *keys):
    payload = ["philox-host-v1", root, partition, stream,
               [[type(k).__name__, k] for k in keys]]
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest(), "little")


def rate(label, per_iter, fn):
    iters = 10
    while True:
        t0 = time.perf_counter()
        for i in range(iters):
            fn(i)
        dt = time.perf_counter() - t0
        if dt >= 0.5:
            break
        iters *= 2
    print(f"{label:<28s} {iters * per_iter / dt:14.4g} /s")


def main():
    print("reference (Python %s, NumPy %s, single thread)"
          % (".".join(map(str, __import__("sys").version_info[:3])), np.__version__))
    rate("seed_for (4 keys)", 1,
         lambda i: seed_for(11001, "development", "world", "paired-worlds", "delayed_cue",
                            i & 1023, i >> 10))
    rate("generator init (seedseq)", 1,
         lambda i: np.random.Generator(np.random.Philox(i)))
    g = np.random.Generator(np.random.Philox(7))
    rate("standard_normal", 4096, lambda i: g.standard_normal(4096))
    rate("random (double)", 4096, lambda i: g.random(4096))


if __name__ == "__main__":
    main()
