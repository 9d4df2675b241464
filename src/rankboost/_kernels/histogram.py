"""Potential histograms: ``hist[i, b] = sum of pi(x) over rows with code_i(x) = b``.

This is the O(d n) part of a round (SPEC 4.1). Parallel over features; each feature's sum
runs serially in row order, so the result is bit-identical whatever the thread count.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def _potential_histograms(codes: np.ndarray, pi: np.ndarray, out: np.ndarray) -> None:
    """``out[i, b] = sum_{j: codes[i, j] = b} pi[j]``; ``out`` has shape (d, n_codes)."""
    d, n = codes.shape
    n_codes = out.shape[1]
    for i in prange(d):
        row = codes[i]
        acc = np.zeros(n_codes)
        for j in range(n):
            acc[row[j]] += pi[j]
        for b in range(n_codes):
            out[i, b] = acc[b]


@njit(cache=True, parallel=True)
def _threshold_values(codes: np.ndarray, feature: int, t: int, default: float) -> np.ndarray:
    """H on every row for the threshold ranker ``[code > t]``, ``default`` where code 0."""
    n = codes.shape[1]
    out = np.empty(n)
    row = codes[feature]
    for j in prange(n):
        c = row[j]
        if c == 0:
            out[j] = default
        elif c > t:
            out[j] = 1.0
        else:
            out[j] = 0.0
    return out


@njit(cache=True, parallel=True)
def _table_values(codes: np.ndarray, feature: int, table: np.ndarray) -> np.ndarray:
    """H on every row as ``table[code]`` (real-valued rankers; ``table[0]`` = default)."""
    n = codes.shape[1]
    out = np.empty(n)
    row = codes[feature]
    for j in prange(n):
        out[j] = table[row[j]]
    return out
