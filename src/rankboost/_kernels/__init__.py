"""Numba kernels: private, array-in/array-out, no Python objects (STYLE rules 5 and 6).

Each parallel kernel is written once as a body over one independent unit (a feature, a
query, a chunk of rows) and driven by a serial and a ``prange`` loop. The drivers give the
same result bit for bit (units never share an accumulator); :func:`use_parallel` picks the
parallel one only when the work is large enough to pay for the thread fork.
"""

from __future__ import annotations

import numba

#: Work (elements touched) below which the serial driver is used. Measured with
#: ``benchmarks/bench_parallel.py`` (histogram kernel, both drivers side by side, OpenMP layer,
#: 2 cores): idle, the parallel driver takes 0.5-0.7x the serial time at every size from
#: 322k elements; with the other core busy it takes 7x at 322k, 2x at 6.8M and breaks even
#: only near 27M. 2M keeps small problems (LETOR-size fits, per-user models) serial, where a
#: busy machine would otherwise multiply their time, and large ones parallel.
PARALLEL_MIN_WORK = 2_000_000


def use_parallel(work: int) -> bool:
    """Whether a kernel touching ``work`` elements should run its parallel driver."""
    return work >= PARALLEL_MIN_WORK and numba.get_num_threads() > 1
