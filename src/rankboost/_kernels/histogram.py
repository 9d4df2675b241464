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
    n_codes = out.shape[1]
    acc = np.zeros(n_codes)
    for j in range(row.shape[0]):
        acc[row[j]] += pi[j]
    for b in range(n_codes):
        out[i, b] = acc[b]


@njit(cache=True)
def _histograms_serial(codes: np.ndarray, pi: np.ndarray, out: np.ndarray) -> None:
    for i in range(codes.shape[0]):
        _feature_histogram(codes, pi, i, out)


@njit(cache=True, parallel=True)
def _histograms_parallel(codes: np.ndarray, pi: np.ndarray, out: np.ndarray) -> None:
    for i in prange(codes.shape[0]):
        _feature_histogram(codes, pi, i, out)


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


# NOTE: old name kept for benchmarks/bench_engine.py while it migrates; remove afterwards.
_potential_histograms = potential_histograms
