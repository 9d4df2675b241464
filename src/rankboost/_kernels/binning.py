"""Binning kernels: per-feature sorted values and feature-major bin codes.

Code convention (shared with ``rankboost.binning``): code 0 = NaN (the feature abstains);
code ``k >= 1`` = ``1 + #{cuts < float32(x)}``, so ``float32(x) > cuts[t-1]`` iff
``code > t``: every value is rounded to float32 (to nearest, ties to even, as numpy's
``astype``) before it is compared (the package's numeric domain, ``rankboost.binning``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import serial_and_parallel, use_parallel

#: Elements (rows x features) below which ``gather_columns`` and ``bin_rows`` run numpy
#: (``np.searchsorted`` per feature: the same codes) instead of their kernels: compiling
#: ``build_guides``, ``_bin_rows`` and ``_gather_columns`` costs about 1.5 s of a cold first
#: training; binning 10k x 46 took 71 ms with numpy against 28 ms with the warm kernels (one
#: run on the shared 2-core VM), so a transform below the limit costs at most ~0.1 s more.
NUMPY_MAX_WORK = 500_000


@njit(cache=True)
def _gather_column(X: np.ndarray, rows: np.ndarray, first: int, k: int, out: np.ndarray) -> None:
    for j in range(rows.shape[0]):
        out[k, j] = X[rows[j], first + k]  # a float32 ``out`` rounds to nearest


def _gather_columns(X: np.ndarray, rows: np.ndarray, first: int, out: np.ndarray) -> None:
    for k in prange(out.shape[0]):
        _gather_column(X, rows, first, np.int64(k), out)  # int64: see serial_and_parallel


_gather_columns_serial, _gather_columns_parallel = serial_and_parallel(_gather_columns)


def gather_columns(X: np.ndarray, rows: np.ndarray, first: int, out: np.ndarray) -> None:
    """``out[k, :]`` = ``X[rows, first + k]`` (columns of a row-major X, feature-major)."""
    if out.shape[0] * rows.shape[0] < NUMPY_MAX_WORK:
        out[...] = X[rows, first : first + out.shape[0]].T
    elif use_parallel(out.shape[0] * rows.shape[0]):
        _gather_columns_parallel(X, rows, first, out)
    else:
        _gather_columns_serial(X, rows, first, out)


_CHUNK = 512
#: Buckets of the per-feature guide that starts the search for a value's code.
_GUIDE_BUCKETS = 1024


@njit(cache=True)
def build_guides(
    cuts: np.ndarray, cut_starts: np.ndarray, n_buckets: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature starting points for ``_count_below``.

    The range from a feature's first to its last cut is split into ``n_buckets`` equal
    buckets (``scale[i]`` buckets per unit); ``guide[i, b]`` = #cuts below bucket ``b``'s
    lower edge. ``scale[i] = 0`` where that range is empty or not finite.
    """
    d = cut_starts.shape[0] - 1
    guide = np.zeros((d, n_buckets), dtype=np.int64)
    scale = np.zeros(d)
    for i in range(d):
        a = cut_starts[i]
        m = cut_starts[i + 1] - a
        if m < 2:
            continue
        first = cuts[a]
        s = n_buckets / (cuts[a + m - 1] - first)
        if not (np.isfinite(s) and s > 0.0):
            continue
        scale[i] = s
        k = 0
        for b in range(n_buckets):
            edge = first + b / s
            while k < m and cuts[a + k] < edge:
                k += 1
            guide[i, b] = k
    return guide, scale


@njit(cache=True, inline="always")
def _count_below(
    x: float, cuts: np.ndarray, a: int, m: int, guide: np.ndarray, scale: np.ndarray, i: int
) -> int:
    """#{cuts[a:a+m] < x} (``searchsorted(side='left')``) for a non-NaN ``x``.

    The guide's bucket of ``x`` gives a starting count, within a cut or two of the answer
    for most values; the two walks then make it exact whatever the guess. Against a binary
    search, the transform at 1M x 136 went from 3.5 s to 1.2 s ("Setup pieces" of
    ``benchmarks/bench_engine.py``).
    """
    if m == 0 or x <= cuts[a]:
        return 0
    if x > cuts[a + m - 1]:
        return m
    s = scale[i]
    if s == 0.0:
        lo = a
        hi = a + m
        while lo < hi:
            mid = (lo + hi) >> 1
            if cuts[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        return lo - a
    n_buckets = guide.shape[1]
    t = (x - cuts[a]) * s
    k = guide[i, int(t) if t < n_buckets else n_buckets - 1]
    while k < m and cuts[a + k] < x:
        k += 1
    while k > 0 and cuts[a + k - 1] >= x:
        k -= 1
    return k


@njit(cache=True)
def _bin_chunk(
    X: np.ndarray,
    rows: np.ndarray,
    cuts: np.ndarray,
    cut_starts: np.ndarray,
    guide: np.ndarray,
    scale: np.ndarray,
    c: int,
    out: np.ndarray,
) -> None:
    """Codes of rows ``c*_CHUNK .. (c+1)*_CHUNK``, one feature at a time.

    The chunk of X stays in cache while each feature's cuts and guide are used for all its
    rows; writes stay feature-contiguous.
    """
    d = X.shape[1]
    lo = c * _CHUNK
    hi = min(rows.shape[0], lo + _CHUNK)
    for i in range(d):
        a = cut_starts[i]
        m = cut_starts[i + 1] - a
        for j in range(lo, hi):
            x = np.float64(np.float32(X[rows[j], i]))  # the float32 domain
            if np.isnan(x):
                out[i, j] = 0
            else:
                out[i, j] = _count_below(x, cuts, a, m, guide, scale, i) + 1


def _bin_rows(
    X: np.ndarray, rows: np.ndarray, cuts: np.ndarray, cut_starts: np.ndarray,
    guide: np.ndarray, scale: np.ndarray, out: np.ndarray,
) -> None:  # fmt: skip
    for c in prange((rows.shape[0] + _CHUNK - 1) // _CHUNK):
        _bin_chunk(X, rows, cuts, cut_starts, guide, scale, np.int64(c), out)


_bin_rows_serial, _bin_rows_parallel = serial_and_parallel(_bin_rows)


def bin_rows(
    X: np.ndarray, rows: np.ndarray, cuts: np.ndarray, cut_starts: np.ndarray, out: np.ndarray
) -> None:
    """Write ``out[i, j]`` = code of ``float32(X[rows[j], i])`` (feature-major).

    Below ``NUMPY_MAX_WORK`` elements, ``np.searchsorted(side="left")`` per feature, which
    counts the cuts below each value as ``_count_below`` does.
    """
    if rows.shape[0] * X.shape[1] < NUMPY_MAX_WORK:
        for i in range(X.shape[1]):  # a loop over features; numpy does the rows
            with np.errstate(over="ignore"):
                x = X[rows, i].astype(np.float32)
            codes = np.searchsorted(cuts[cut_starts[i] : cut_starts[i + 1]], x, side="left") + 1
            codes[np.isnan(x)] = 0
            out[i] = codes
        return
    guide, scale = build_guides(cuts, cut_starts, _GUIDE_BUCKETS)
    if use_parallel(rows.shape[0] * X.shape[1]):
        _bin_rows_parallel(X, rows, cuts, cut_starts, guide, scale, out)
    else:
        _bin_rows_serial(X, rows, cuts, cut_starts, guide, scale, out)
