"""Binning kernels: per-feature sorted values and feature-major bin codes.

Code convention (shared with ``rankboost.binning``): code 0 = NaN (the feature abstains);
code ``k >= 1`` = ``1 + #{cuts < x}``, so ``x > cuts[t-1]`` iff ``code > t``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import use_parallel


@njit(cache=True)
def _gather_column(X: np.ndarray, rows: np.ndarray, first: int, k: int, out: np.ndarray) -> None:
    for j in range(rows.shape[0]):
        out[k, j] = X[rows[j], first + k]


@njit(cache=True)
def _gather_columns_serial(X: np.ndarray, rows: np.ndarray, first: int, out: np.ndarray) -> None:
    for k in range(out.shape[0]):
        _gather_column(X, rows, first, k, out)


@njit(cache=True, parallel=True)
def _gather_columns_parallel(X: np.ndarray, rows: np.ndarray, first: int, out: np.ndarray) -> None:
    for k in prange(out.shape[0]):
        _gather_column(X, rows, first, k, out)


def gather_columns(X: np.ndarray, rows: np.ndarray, first: int, out: np.ndarray) -> None:
    """``out[k, :]`` = ``X[rows, first + k]`` (columns of a row-major X, feature-major)."""
    if use_parallel(out.shape[0] * rows.shape[0]):
        _gather_columns_parallel(X, rows, first, out)
    else:
        _gather_columns_serial(X, rows, first, out)


_CHUNK = 512


@njit(cache=True)
def _bin_chunk(
    X: np.ndarray,
    rows: np.ndarray,
    cuts: np.ndarray,
    cut_starts: np.ndarray,
    c: int,
    out: np.ndarray,
) -> None:
    """Codes of rows ``c*_CHUNK .. (c+1)*_CHUNK``.

    Reads stay row-contiguous and writes stay feature-contiguous inside the chunk.
    """
    d = X.shape[1]
    lo = c * _CHUNK
    hi = min(rows.shape[0], lo + _CHUNK)
    for j in range(lo, hi):
        r = rows[j]
        for i in range(d):
            x = X[r, i]
            if np.isnan(x):
                out[i, j] = 0
                continue
            a = cut_starts[i]
            # number of cuts strictly below x (searchsorted side='left')
            lo_ = a
            hi_ = cut_starts[i + 1]
            while lo_ < hi_:
                mid = (lo_ + hi_) >> 1
                if cuts[mid] < x:
                    lo_ = mid + 1
                else:
                    hi_ = mid
            out[i, j] = lo_ - a + 1


@njit(cache=True)
def _bin_rows_serial(
    X: np.ndarray, rows: np.ndarray, cuts: np.ndarray, cut_starts: np.ndarray, out: np.ndarray
) -> None:
    for c in range((rows.shape[0] + _CHUNK - 1) // _CHUNK):
        _bin_chunk(X, rows, cuts, cut_starts, c, out)


@njit(cache=True, parallel=True)
def _bin_rows_parallel(
    X: np.ndarray, rows: np.ndarray, cuts: np.ndarray, cut_starts: np.ndarray, out: np.ndarray
) -> None:
    for c in prange((rows.shape[0] + _CHUNK - 1) // _CHUNK):
        _bin_chunk(X, rows, cuts, cut_starts, c, out)


def bin_rows(
    X: np.ndarray, rows: np.ndarray, cuts: np.ndarray, cut_starts: np.ndarray, out: np.ndarray
) -> None:
    """Write ``out[i, j]`` = code of ``X[rows[j], i]`` (feature-major)."""
    if use_parallel(rows.shape[0] * X.shape[1]):
        _bin_rows_parallel(X, rows, cuts, cut_starts, out)
    else:
        _bin_rows_serial(X, rows, cuts, cut_starts, out)
