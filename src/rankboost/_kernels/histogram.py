"""Potential histograms: ``hist[i, b] = sum of pi(x) over rows with code_i(x) = b``.

This is the O(d n) part of a round (SPEC 4.1). One body per feature; the parallel driver
splits features across threads and each feature's sum runs serially in row order, so the
result is bit-identical whatever the thread count.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import use_parallel


@njit(cache=True)
def _feature_histogram(codes: np.ndarray, pi: np.ndarray, i: int, out: np.ndarray) -> None:
    row = codes[i]
    acc = np.zeros(out.shape[1])
    for j in range(row.shape[0]):
        acc[row[j]] += pi[j]
    out[i, :] = acc


@njit(cache=True)
def _four_histograms(codes: np.ndarray, pi: np.ndarray, i: int, out: np.ndarray) -> None:
    """Histograms of features ``i .. i+3`` in one sweep over the rows.

    Each ``pi[j]`` is loaded once for four independent scatter-adds (instruction-level
    parallelism); each feature still sums in row order, so results are unchanged.
    """
    n_codes = out.shape[1]
    r0 = codes[i]
    r1 = codes[i + 1]
    r2 = codes[i + 2]
    r3 = codes[i + 3]
    a0 = np.zeros(n_codes)
    a1 = np.zeros(n_codes)
    a2 = np.zeros(n_codes)
    a3 = np.zeros(n_codes)
    for j in range(r0.shape[0]):
        p = pi[j]
        a0[r0[j]] += p
        a1[r1[j]] += p
        a2[r2[j]] += p
        a3[r3[j]] += p
    out[i, :] = a0
    out[i + 1, :] = a1
    out[i + 2, :] = a2
    out[i + 3, :] = a3


@njit(cache=True)
def _histogram_unit(codes: np.ndarray, pi: np.ndarray, g: int, out: np.ndarray) -> None:
    """Unit ``g``: features ``4g .. 4g+3``, then single features past the last group of 4."""
    n_quads = codes.shape[0] // 4
    if g < n_quads:
        _four_histograms(codes, pi, 4 * g, out)
    else:
        _feature_histogram(codes, pi, 4 * n_quads + (g - n_quads), out)


@njit(cache=True)
def _histograms_serial(codes: np.ndarray, pi: np.ndarray, out: np.ndarray) -> None:
    d = codes.shape[0]
    for g in range(d // 4 + d % 4):
        _histogram_unit(codes, pi, g, out)


@njit(cache=True, parallel=True)
def _histograms_parallel(codes: np.ndarray, pi: np.ndarray, out: np.ndarray) -> None:
    d = codes.shape[0]
    for g in prange(d // 4 + d % 4):
        _histogram_unit(codes, pi, g, out)


def potential_histograms(codes: np.ndarray, pi: np.ndarray, out: np.ndarray) -> None:
    """``out[i, b] = sum_{j: codes[i, j] = b} pi[j]``; ``out`` has shape (d, n_codes)."""
    if use_parallel(codes.shape[0] * codes.shape[1]):
        _histograms_parallel(codes, pi, out)
    else:
        _histograms_serial(codes, pi, out)


@njit(cache=True)
def _threshold_values(codes: np.ndarray, feature: int, t: int, default: float) -> np.ndarray:
    """Values of h on every row: ``[code > t]``, and ``default`` where the code is 0."""
    n = codes.shape[1]
    out = np.empty(n)
    row = codes[feature]
    for j in range(n):
        c = row[j]
        if c == 0:
            out[j] = default
        elif c > t:
            out[j] = 1.0
        else:
            out[j] = 0.0
    return out


@njit(cache=True)
def _table_values(codes: np.ndarray, feature: int, table: np.ndarray) -> np.ndarray:
    """Values of h on every row as ``table[code]`` (real-valued rankers; ``table[0]`` = default)."""
    n = codes.shape[1]
    out = np.empty(n)
    row = codes[feature]
    for j in range(n):
        out[j] = table[row[j]]
    return out
