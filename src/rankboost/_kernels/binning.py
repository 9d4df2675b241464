"""Binning kernels: per-feature sorted values and feature-major bin codes.

Code convention (shared with ``rankboost.binning``): code 0 = NaN (the feature abstains);
code ``k >= 1`` = ``1 + #{cuts < x}``, so ``x > cuts[t-1]`` iff ``code > t``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def _sorted_columns(X: np.ndarray, rows: np.ndarray, first: int, out: np.ndarray) -> None:
    """``out[k, :]`` = sorted ``X[rows, first + k]`` with NaN last (numpy sort order)."""
    m = rows.shape[0]
    for k in prange(out.shape[0]):
        col = np.empty(m, dtype=np.float64)
        for j in range(m):
            col[j] = X[rows[j], first + k]
        out[k, :] = np.sort(col)


@njit(cache=True, parallel=True)
def _bin_rows(
    X: np.ndarray,
    rows: np.ndarray,
    cuts: np.ndarray,
    cut_starts: np.ndarray,
    out: np.ndarray,
) -> None:
    """Write ``out[i, j]`` = code of ``X[rows[j], i]`` (feature-major).

    Rows are processed in chunks so reads stay row-contiguous and writes stay
    feature-contiguous inside a chunk.
    """
    d = X.shape[1]
    m = rows.shape[0]
    chunk = 512
    n_chunks = (m + chunk - 1) // chunk
    for c in prange(n_chunks):
        lo = c * chunk
        hi = min(m, lo + chunk)
        for j in range(lo, hi):
            r = rows[j]
            for i in range(d):
                x = X[r, i]
                if np.isnan(x):
                    out[i, j] = 0
                    continue
                a = cut_starts[i]
                b = cut_starts[i + 1]
                # number of cuts strictly below x (searchsorted side='left')
                lo_ = a
                hi_ = b
                while lo_ < hi_:
                    mid = (lo_ + hi_) >> 1
                    if cuts[mid] < x:
                        lo_ = mid + 1
                    else:
                        hi_ = mid
                out[i, j] = lo_ - a + 1
