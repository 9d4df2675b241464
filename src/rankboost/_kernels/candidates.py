"""The threshold columns of a round's candidate table (``weak_rankers.candidate_table``).

Arrays (one row per feature ``i``; ``T = n_codes - 1`` threshold indices):

* ``hist`` float64 (d, n_codes): the potential histogram (``histogram.potential_histograms``).
* ``n_bins`` int64 (d,): the number of bins of each feature (its codes are 1 .. n_bins[i];
  code 0 is "abstain").
* ``r`` float64 (d, width >= 2T), written in columns ``0 .. 2T-1``: column ``2k`` holds the
  tail sum ``L = sum_{b > t} hist[i, b]`` with ``t = T - 1 - k`` (``q_def = 0``), column
  ``2k + 1`` holds ``L - R`` with ``R = sum_{b >= 1} hist[i, b]`` (``q_def = 1``).
* ``valid`` bool (d, width), written in the same columns: threshold ``t`` exists when
  ``1 <= n_bins[i]`` and ``t <= n_bins[i] - 1``.

One body per feature; the tail sums run from the top code down, as ``numpy.cumsum`` of the
reversed row does, so ``r`` has the bits of the numpy version it replaces.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import serial_and_parallel, use_parallel


@njit(cache=True)
def _feature_candidates(
    hist: np.ndarray, n_bins: np.ndarray, i: np.int64, r: np.ndarray, valid: np.ndarray
) -> None:
    n_t = hist.shape[1] - 1
    nb = n_bins[i]
    acc = hist[i, n_t]  # the first partial sum is the top code itself, as in np.cumsum
    for t in range(n_t - 1, -1, -1):  # tail[t] = sum_{b >= t + 1}, t = T-1 .. 0
        if t < n_t - 1:
            acc += hist[i, t + 1]
        k = n_t - 1 - t
        r[i, 2 * k] = acc
        ok = nb >= 1 and t <= nb - 1
        valid[i, 2 * k] = ok
        valid[i, 2 * k + 1] = ok
    ranked = acc  # R = tail[0]
    for k in range(n_t):
        r[i, 2 * k + 1] = r[i, 2 * k] - ranked


def _threshold_candidates(
    hist: np.ndarray, n_bins: np.ndarray, r: np.ndarray, valid: np.ndarray
) -> None:
    for i in prange(hist.shape[0]):
        _feature_candidates(hist, n_bins, np.int64(i), r, valid)


_threshold_candidates_serial, _threshold_candidates_parallel = serial_and_parallel(
    _threshold_candidates
)


def threshold_candidates(
    hist: np.ndarray, n_bins: np.ndarray, r: np.ndarray, valid: np.ndarray
) -> None:
    """Fill the threshold columns ``0 .. 2T-1`` of ``r`` and ``valid`` (module docstring).

    ``hist`` has at least 2 codes; every array is C-contiguous.
    """
    if use_parallel(hist.size):
        _threshold_candidates_parallel(hist, n_bins, r, valid)
    else:
        _threshold_candidates_serial(hist, n_bins, r, valid)
