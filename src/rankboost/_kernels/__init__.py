"""Numba kernels: private, array-in/array-out, no Python objects (STYLE rules 5 and 6).

Each parallel kernel is written once as a body over one independent unit (a feature, a
query, a chunk of rows) and driven by a serial and a ``prange`` loop. The drivers give the
same result bit for bit (units never share an accumulator); :func:`use_parallel` picks the
parallel one only when the work is large enough to pay for the thread fork.
"""

from __future__ import annotations

import numba

#: Work (elements touched) below which the serial driver is used. A parallel launch costs
#: little on an idle machine but ~8 ms when the other core is busy (histogram kernel, serial vs
#: parallel driver side by side, OpenMP layer, 2 cores: 46 x 7,000 codes took 0.14 ms serial
#: and 8 ms parallel). Below 2M elements the serial driver is never much slower.
PARALLEL_MIN_WORK = 2_000_000


def use_parallel(work: int) -> bool:
    """Whether a kernel touching ``work`` elements should run its parallel driver."""
    return work >= PARALLEL_MIN_WORK and numba.get_num_threads() > 1
