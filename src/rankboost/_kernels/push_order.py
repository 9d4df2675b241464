"""The P-Norm Push's step on layered feedback: the kept order and the rloss in one sweep.

After ``F += alpha h`` with a threshold ranker's ``h`` (uint8 0/1), each query's rows are
merged back into increasing ``F`` (then decreasing level) and its misordered crucial pairs
counted in the same sweep, as RankBoost's binary update does
(:func:`rankboost._kernels.pairwise.counting_merge`): the push (:mod:`rankboost.push`)
keeps its own scores and order, so it runs that sweep on them.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from . import serial_and_parallel, use_parallel
from .pairwise import counting_merge, finish_counts


def _merge_count(  # noqa: PLR0917  numba driver: the unpacked state tuples
    H: np.ndarray,
    h: np.ndarray,
    level: np.ndarray,
    qstart: np.ndarray,
    lstart: np.ndarray,
    order: np.ndarray,
    tmp: np.ndarray,
    errors: np.ndarray,
) -> None:
    for q in prange(qstart.shape[0] - 1):
        lo, hi = qstart[q], qstart[q + 1]
        errors[q] = counting_merge(H, h, level, order, tmp, lo, hi, lstart[q + 1] - lstart[q])


_merge_count_serial, _merge_count_parallel = serial_and_parallel(_merge_count)


def merge_errors(  # noqa: PLR0917  wrapper of the layered kernel: its state, unpacked
    H: np.ndarray,
    h: np.ndarray,
    level: np.ndarray,
    qstart: np.ndarray,
    lstart: np.ndarray,
    order: np.ndarray,
    tmp: np.ndarray,
    scratch: np.ndarray,
    errors: np.ndarray,
) -> None:
    """After ``H += alpha h`` (``h`` uint8 0/1): the kept order and the misordered pairs.

    ``reorder`` and then ``sorted_level_errors`` (ties count 1) of
    :mod:`rankboost._kernels.pairwise` in one sweep per query, as RankBoost's binary update
    does (``counting_merge``, then ``finish_counts`` for the queries it leaves): the same
    counts (whole numbers), one pass fewer. ``scratch``: float64 (2 L + Q,).
    """
    driver = _merge_count_parallel if use_parallel(8 * H.shape[0]) else _merge_count_serial
    driver(H, h, level, qstart, lstart, order, tmp, errors)
    finish_counts(H, h, level, qstart, lstart, order, tmp, scratch, errors)
