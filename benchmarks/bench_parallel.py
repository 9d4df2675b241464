"""Serial vs parallel driver of the histogram kernel, side by side, at several sizes.

Backs ``rankboost._kernels.PARALLEL_MIN_WORK`` (the work, in elements, from which the
engine uses its parallel kernels). Each size times both drivers alternately in one process
(medians of 15), so the ratio is measured under the same load.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_parallel.py
"""

from __future__ import annotations

import argparse
import os
import time

import numba
import numpy as np

from rankboost._kernels import PARALLEL_MIN_WORK
from rankboost._kernels.histogram import _histograms_parallel, _histograms_serial

SIZES = [(46, 7_000), (136, 10_000), (136, 50_000), (136, 200_000), (136, 1_000_000)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--smoke", action="store_true", help="the smallest size, 2 repeats (tests)")
    args = p.parse_args()
    sizes, repeats = (SIZES[:1], 2) if args.smoke else (SIZES, 15)
    rng = np.random.default_rng(0)
    print(
        f"numba {numba.__version__}, threading layer {numba.config.THREADING_LAYER!r}, "
        f"{numba.get_num_threads()} threads, load average {os.getloadavg()[0]:.2f}; "
        f"PARALLEL_MIN_WORK = {PARALLEL_MIN_WORK:,}"
    )
    print("| features x rows | elements | serial ms | parallel ms | parallel / serial |")
    print("|---|---|---|---|---|")
    for d, n in sizes:
        codes = rng.integers(0, 256, (d, n)).astype(np.uint8)
        pi = rng.normal(size=n)
        out = np.empty((d, 256))
        _histograms_serial(codes, pi, 1.0, out)
        _histograms_parallel(codes, pi, 1.0, out)
        times: dict[str, list[float]] = {"serial": [], "parallel": []}
        for _ in range(repeats):
            for name, kernel in (
                ("serial", _histograms_serial),
                ("parallel", _histograms_parallel),
            ):
                t = time.perf_counter()
                kernel(codes, pi, 1.0, out)
                times[name].append(time.perf_counter() - t)
        s = float(np.median(times["serial"])) * 1e3
        p = float(np.median(times["parallel"])) * 1e3
        print(f"| {d} x {n:,} | {d * n:,} | {s:.3f} | {p:.3f} | {p / s:.2f} |")
    print(f"(threading layer used: {numba.threading_layer()})")


if __name__ == "__main__":
    main()
