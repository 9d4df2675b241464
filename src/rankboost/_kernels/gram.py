"""The Gram matrix of a sparse matrix's rows, a block of rows at a time (numba).

For ``V`` of shape ``(n, m)`` (items x users in the recommenders), rows ``[lo, hi)`` of
``G = V V^T`` as a dense ``(hi - lo, n)`` array, without densifying ``V``. ``V`` enters
twice, as CSR arrays (the rows of the block) and as the CSR arrays of ``V^T`` (the rows of
every ``u``):

* ``indptr`` (int64, ``n + 1``), ``indices`` (int32 or int64, ``nnz``), ``data`` (float64,
  ``nnz``): ``V`` (indices in any order within a row);
* ``t_indptr`` (int64, ``m + 1``), ``t_indices``, ``t_data``: ``V^T`` the same way;
* ``out`` (float64, ``(hi - lo, n)``, zeros): row ``i - lo`` receives
  ``sum_u V[i, u] * V[j, u]`` for every ``j``.

The sum runs over ``u`` in the order of row ``i``'s indices, each term ``V[i, u] * V[j, u]``
added in turn: the order of scipy's sparse x dense product ``V[lo:hi] @ V.T.toarray()``, so
the two agree bit for bit. Work: ``sum over u of (ratings of u in the block) x (ratings of u)``.

:func:`top_k_rows` prunes a block of such rows to each row's ``k`` largest entries (the
item-item similarities the base recommenders keep). Arrays:

* ``S`` float64 ``(n_block, n)``: rows ``lo .. lo + n_block - 1`` of a square matrix;
* ``scale`` float64: empty, or ``(n,)``: then the value of ``(i, j)`` is
  ``S[i, j] * scale[i] * scale[j]`` (the cosine when ``S`` is a Gram matrix and ``scale``
  ``1 / sqrt`` of its diagonal, 0 where that is 0), else ``S[i, j]`` itself;
* ``out_idx`` int64, ``out_val`` float64 ``(n_block, k)``, ``out_n`` int64 ``(n_block,)``:
  row ``r`` receives its ``out_n[r]`` kept columns in increasing order and their values.

The diagonal counts as 0. A row keeps the ``k`` largest values, ties going to the lower
column, then drops those equal to 0 (a row with fewer than ``k`` non-zero values keeps its
zeros before any negative value, then drops them).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import serial_and_parallel


@njit(cache=True)
def _gram_row(  # noqa: PLR0917  numba helper over one unit: its arrays, unpacked by the driver
    i: int,
    lo: int,
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    t_indptr: np.ndarray,
    t_indices: np.ndarray,
    t_data: np.ndarray,
    out: np.ndarray,
) -> None:
    """Row ``i`` of ``V V^T`` into ``out[i - lo]``."""
    row = out[i - lo]
    for p in range(indptr[i], indptr[i + 1]):
        u = indices[p]
        a = data[p]
        for q in range(t_indptr[u], t_indptr[u + 1]):
            row[t_indices[q]] += a * t_data[q]


def _gram_rows(  # noqa: PLR0917  kernel driver: its arrays
    lo: int,
    hi: int,
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    t_indptr: np.ndarray,
    t_indices: np.ndarray,
    t_data: np.ndarray,
    out: np.ndarray,
) -> None:
    for i in prange(hi - lo):
        _gram_row(np.int64(i + lo), lo, indptr, indices, data, t_indptr, t_indices, t_data, out)


_gram_rows_serial, _gram_rows_parallel = serial_and_parallel(_gram_rows)


def gram_rows(  # noqa: PLR0917  the kernel's arrays
    lo: int,
    hi: int,
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    t_indptr: np.ndarray,
    t_indices: np.ndarray,
    t_data: np.ndarray,
    out: np.ndarray,
    parallel: bool,
) -> None:
    """Rows ``[lo, hi)`` of ``V V^T`` into ``out`` (arrays as the module docstring lists)."""
    driver = _gram_rows_parallel if parallel else _gram_rows_serial
    driver(lo, hi, indptr, indices, data, t_indptr, t_indices, t_data, out)


@njit(cache=True)
def _heap_push(hv: np.ndarray, hj: np.ndarray, size: int, v: float, j: int) -> None:
    """Add ``(v, j)`` to the heap ``hv[:size], hj[:size]`` (root: the worst kept)."""
    c = size
    while c > 0:  # worse = smaller, or equal and a higher column
        p = (c - 1) // 2
        if hv[p] < v or (hv[p] == v and hj[p] > j):
            break
        hv[c], hj[c] = hv[p], hj[p]
        c = p
    hv[c], hj[c] = v, j


@njit(cache=True)
def _heap_replace(hv: np.ndarray, hj: np.ndarray, v: float, j: int) -> None:
    """Put ``(v, j)`` in place of the heap's root (the worst kept) and sift it down."""
    k = hv.shape[0]
    c = 0
    while True:
        a = 2 * c + 1
        if a >= k:
            break
        b = a + 1
        if b < k and (hv[b] < hv[a] or (hv[b] == hv[a] and hj[b] > hj[a])):
            a = b
        if v < hv[a] or (v == hv[a] and j > hj[a]):
            break
        hv[c], hj[c] = hv[a], hj[a]
        c = a
    hv[c], hj[c] = v, j


@njit(cache=True)
def _chunk_bound(vals: np.ndarray, hv: np.ndarray, hj: np.ndarray) -> float:
    """The ``k``-th largest of the maxima of ``2k`` chunks of ``vals`` (``k = len(hv)``).

    ``k`` distinct entries are at least that large: a lower bound of ``vals``' ``k``-th
    largest. The heap ``hv, hj`` is scratch.
    """
    n, k = vals.shape[0], hv.shape[0]
    n_chunks = 2 * k
    for c in range(n_chunks):
        mx = vals[c * n // n_chunks]
        for j in range(c * n // n_chunks + 1, (c + 1) * n // n_chunks):
            mx = max(mx, vals[j])
        if c < k:
            _heap_push(hv, hj, c, mx, c)
        elif mx > hv[0]:
            _heap_replace(hv, hj, mx, c)
    return hv[0]


@njit(cache=True)
def _top_k_row(  # noqa: PLR0917  numba helper over one unit: its arrays, unpacked by the driver
    r: np.int64,
    lo: int,
    S: np.ndarray,
    scale: np.ndarray,
    k: int,
    out_idx: np.ndarray,
    out_val: np.ndarray,
    out_n: np.ndarray,
) -> None:
    """Row ``r`` of the block: its ``k`` largest values (a heap whose root is the worst kept).

    First a lower bound ``t`` of the ``k``-th largest value: the ``k``-th largest of the
    maxima of ``2k`` chunks of the row (``k`` distinct entries are at least that large), so
    a value below ``t`` cannot be kept and only the others reach the heap, in column order.
    The heap keeps the ``k`` best under one total order (larger value, then lower column):
    a later column replaces the worst kept only when strictly larger.
    """
    i = lo + r
    n = S.shape[1]
    row = S[r]
    if k == 0:
        out_n[r] = 0
        return
    vals = np.empty(n)
    if scale.shape[0] > 0:
        si = scale[i]
        for j in range(n):
            vals[j] = row[j] * si * scale[j]
    else:
        for j in range(n):
            vals[j] = row[j]
    if i < n:
        vals[i] = 0.0  # the diagonal counts as 0
    hv = np.empty(k)
    hj = np.empty(k, dtype=np.int64)
    t = _chunk_bound(vals, hv, hj) if n >= 4 * k else -np.inf
    m = 0
    for j in range(n):
        v = vals[j]
        if v >= t:
            if m < k:
                _heap_push(hv, hj, m, v, j)
                m += 1
            elif v > hv[0]:
                _heap_replace(hv, hj, v, j)
    kept = np.zeros(n, dtype=np.bool_)
    for q in range(m):
        kept[hj[q]] = True
    c = 0
    for j in range(n):  # in column order, zeros dropped
        if kept[j] and vals[j] != 0.0:
            out_idx[r, c] = j
            out_val[r, c] = vals[j]
            c += 1
    out_n[r] = c


def _top_k_rows(  # noqa: PLR0917  kernel driver: its arrays
    lo: int,
    S: np.ndarray,
    scale: np.ndarray,
    k: int,
    out_idx: np.ndarray,
    out_val: np.ndarray,
    out_n: np.ndarray,
) -> None:
    for r in prange(S.shape[0]):
        _top_k_row(np.int64(r), lo, S, scale, k, out_idx, out_val, out_n)


_top_k_rows_serial, _top_k_rows_parallel = serial_and_parallel(_top_k_rows)


def top_k_rows(  # noqa: PLR0917  the kernel's arrays
    lo: int,
    S: np.ndarray,
    scale: np.ndarray,
    k: int,
    out_idx: np.ndarray,
    out_val: np.ndarray,
    out_n: np.ndarray,
    parallel: bool,
) -> None:
    """Each row's ``k`` largest entries of the block ``S`` (module docstring)."""
    driver = _top_k_rows_parallel if parallel else _top_k_rows_serial
    driver(lo, S, scale, k, out_idx, out_val, out_n)
