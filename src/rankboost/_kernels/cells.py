"""The base recommenders' formulas, at given (user, item) cells (``BaseScores``).

Each formula of :mod:`rankboost.recommend._base` is written here once, as a per-user body;
``BaseScores.cells`` passes the cross-fitting's cells (about 1 in 10 of a user's items),
``BaseScores.scores`` every item of every user of a block. One unit is one user of a block:
its cells are ``items[starts[r]:starts[r + 1]]`` (row ``r`` of the block), and every kernel
writes the values of those cells only, so units share no accumulator and a cell's value
does not depend on the other cells asked. Arrays (a CSR or CSC matrix is a triple
``(indptr int64, indices int32/int64, data float64)``):

* ``cells = (starts, items)``: ``starts`` int64 ``(n_block + 1,)`` from 0, ``items`` int64
  ``(n_cells,)``, each user's items in any order;
* ``hist``: the block users' history, CSR ``n_block x n_items`` (row ``r`` = user ``r``;
  ``item_knn`` reads the data, the item deviations ``r_uj - m_j``; the others the pattern);
* ``user_knn``: ``sim`` float64 ``(n_block, n_pool)`` (the cosine to each pool user, own
  entry zeroed), ``cent`` the pool's centred ratings as CSC ``n_pool x n_items`` (column
  ``i``: the pool users who rated ``i``), ``mean`` float64 ``(n_block,)`` the users' means;
* ``item_knn``: ``back`` CSR ``n_items x n_items``, row ``j`` = the items ``i`` that keep
  ``j`` among their ``k`` neighbours, with ``s_ij``; ``item_mean`` float64 ``(n_items,)``;
* ``cooccurrence``: ``back`` the same for its cosines;
* ``ease``: ``W`` float32 or float64 ``(n_items, n_items)``;
* ``out`` float64 ``(n_cells,)``: written at every cell (``ease_rows``: ``(n_block,
  n_items)``, EASE's raw rows, for its penalty search).

Every sum runs in the order scipy's sparse products ran it before these kernels replaced
them (the history's order, or the pool users' in increasing order), and ``cooccurrence`` /
``ease`` are standardised with numpy's own pairwise summation (:func:`_pairwise_sum`) over
the full row, with zeros at the history, as numpy summed it: the scores kept their bits
(``tests/test_base_cells.py``, ``experiments/movies_topn.py``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import serial_and_parallel


@njit(cache=True)
def _pairwise_leaf(a: np.ndarray, lo: int, n: int) -> float:
    """A leaf of :func:`_pairwise_sum`: at most 128 terms, as numpy sums them."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r = a[lo : lo + 8].copy()
    i = 8
    while i < n - n % 8:
        for j in range(8):
            r[j] += a[lo + i + j]
        i += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True)
def _pairwise_sum(a: np.ndarray, lo: int, n: int) -> float:
    """``a[lo:lo + n].sum()`` as numpy sums a contiguous float64 axis (pairwise, 8 lanes).

    numpy's ``pairwise_sum``: below 8 terms a plain loop, up to 128 eight partial sums
    combined as ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))`` and the remainder
    added in turn, above that the two halves (the first a multiple of 8 long) summed apart
    and added. The recursion runs on an explicit stack (a recursive kernel does not load
    from numba's on-disk cache).
    """
    starts = np.empty(64, dtype=np.int64)  # the open nodes: start, length, stage, left sum
    sizes = np.empty(64, dtype=np.int64)
    stage = np.zeros(64, dtype=np.int64)
    left = np.zeros(64)
    top = 0
    starts[0], sizes[0], stage[0] = lo, n, 0
    ret = 0.0  # the value of the node closed last
    while top >= 0:
        m = sizes[top]
        if m <= 128:
            ret = _pairwise_leaf(a, starts[top], m)
            top -= 1
            continue
        half = m // 2
        half -= half % 8
        if stage[top] == 2:  # both halves done: ret is the second
            ret = left[top] + ret
            top -= 1
            continue
        if stage[top] == 1:  # the first half done
            left[top] = ret
            nxt, size = starts[top] + half, m - half
        else:
            nxt, size = starts[top], half
        stage[top] += 1
        top += 1
        starts[top], sizes[top], stage[top] = nxt, size, 0
    return ret


@njit(cache=True)
def _standardised_cells(  # noqa: PLR0917  numba helper: one user's row and cells
    row: np.ndarray, free: np.ndarray, lo: int, hi: int, items: np.ndarray, out: np.ndarray
) -> None:
    """``out[c] = (row[items[c]] - mean) / std`` for ``c`` in ``[lo, hi)``, 0 where std is 0.

    Mean and (population) std over the ``free`` items (those outside the history).
    """
    n = row.shape[0]
    tmp = np.zeros(n)
    n_free = 0
    for i in range(n):
        if free[i]:
            tmp[i] = row[i]
            n_free += 1
    n_free = max(n_free, 1)
    mean = _pairwise_sum(tmp, 0, n) / n_free
    for i in range(n):
        if free[i]:
            d = row[i] - mean
            tmp[i] = d * d
    var = _pairwise_sum(tmp, 0, n) / n_free
    sd = np.sqrt(var)
    for c in range(lo, hi):
        out[c] = (row[items[c]] - mean) / sd if sd > 0 else 0.0


@njit(cache=True)
def _user_knn_user(
    r: np.int64, cells: tuple, sim: np.ndarray, cent: tuple, mean: np.ndarray, out: np.ndarray
) -> None:
    """User ``r``'s ``mu_u + sum_v s_uv c_vi / sum_v |s_uv|`` at its cells.

    ``v`` runs over the pool users who rated ``i`` (column ``i`` of ``cent``, in increasing
    order), ``c_vi`` their centred rating; NaN where that sum of ``|s_uv|`` is 0 (no pool user
    rated ``i``, or none is similar): the paper's abstention.
    """
    starts, items = cells
    c_ptr, c_idx, c_val = cent
    s = sim[r]
    for c in range(starts[r], starts[r + 1]):
        i = items[c]
        num = 0.0
        den = 0.0
        for p in range(c_ptr[i], c_ptr[i + 1]):
            w = s[c_idx[p]]
            num += c_val[p] * w
            den += abs(w)
        out[c] = num / den + mean[r] if den > 0 else np.nan


def _user_knn_cells(
    cells: tuple, sim: np.ndarray, cent: tuple, mean: np.ndarray, out: np.ndarray
) -> None:
    for r in prange(cells[0].shape[0] - 1):
        _user_knn_user(np.int64(r), cells, sim, cent, mean, out)


@njit(cache=True)
def _item_knn_user(
    r: np.int64, cells: tuple, hist: tuple, back: tuple, item_mean: np.ndarray, out: np.ndarray
) -> None:
    """User ``r``'s ``m_i + sum_j s_ij dev_uj / sum_j |s_ij|`` at its cells.

    ``j`` runs over the items the user rated that keep ``i`` among their neighbours (row
    ``j`` of ``back``), in the history's order; NaN where there is none.
    """
    starts, items = cells
    h_ptr, h_idx, h_val = hist
    t_ptr, t_idx, t_val = back
    n = item_mean.shape[0]
    num = np.zeros(n)
    den = np.zeros(n)
    for p in range(h_ptr[r], h_ptr[r + 1]):
        j = h_idx[p]
        dev = h_val[p]
        for q in range(t_ptr[j], t_ptr[j + 1]):
            i = t_idx[q]
            num[i] += dev * t_val[q]
            den[i] += abs(t_val[q])
    for c in range(starts[r], starts[r + 1]):
        i = items[c]
        out[c] = num[i] / den[i] + item_mean[i] if den[i] > 0 else np.nan


def _item_knn_cells(
    cells: tuple, hist: tuple, back: tuple, item_mean: np.ndarray, out: np.ndarray
) -> None:
    for r in prange(cells[0].shape[0] - 1):
        _item_knn_user(np.int64(r), cells, hist, back, item_mean, out)


@njit(cache=True)
def _cooccurrence_user(
    r: np.int64, cells: tuple, hist: tuple, back: tuple, n_items: int, out: np.ndarray
) -> None:
    """User ``r``'s row ``sum_{j in history} s_ij``, standardised, at its cells."""
    starts, items = cells
    h_ptr, h_idx, _ = hist
    t_ptr, t_idx, t_val = back
    row = np.zeros(n_items)
    free = np.ones(n_items, dtype=np.bool_)
    for p in range(h_ptr[r], h_ptr[r + 1]):
        j = h_idx[p]
        free[j] = False
        for q in range(t_ptr[j], t_ptr[j + 1]):
            row[t_idx[q]] += t_val[q]
    _standardised_cells(row, free, starts[r], starts[r + 1], items, out)


def _cooccurrence_cells(
    cells: tuple, hist: tuple, back: tuple, n_items: int, out: np.ndarray
) -> None:
    for r in prange(cells[0].shape[0] - 1):
        _cooccurrence_user(np.int64(r), cells, hist, back, n_items, out)


@njit(cache=True)
def _ease_row(r: np.int64, hist: tuple, W: np.ndarray, row: np.ndarray) -> None:
    """``row += X_u B``: EASE's score of every item for user ``r``, in float64.

    The sum of ``W``'s rows at the user's history, in the history's order.
    """
    h_ptr, h_idx, _ = hist
    n = W.shape[1]
    for p in range(h_ptr[r], h_ptr[r + 1]):
        w = W[h_idx[p]]
        for i in range(n):
            row[i] += w[i]


@njit(cache=True)
def _ease_user(r: np.int64, cells: tuple, hist: tuple, W: np.ndarray, out: np.ndarray) -> None:
    """User ``r``'s EASE row (:func:`_ease_row`), standardised, at its cells."""
    starts, items = cells
    h_ptr, h_idx, _ = hist
    n = W.shape[1]
    row = np.zeros(n)
    _ease_row(r, hist, W, row)
    free = np.ones(n, dtype=np.bool_)
    for p in range(h_ptr[r], h_ptr[r + 1]):
        free[h_idx[p]] = False
    _standardised_cells(row, free, starts[r], starts[r + 1], items, out)


def _ease_cells(cells: tuple, hist: tuple, W: np.ndarray, out: np.ndarray) -> None:
    for r in prange(cells[0].shape[0] - 1):
        _ease_user(np.int64(r), cells, hist, W, out)


def _ease_rows(hist: tuple, W: np.ndarray, out: np.ndarray) -> None:
    for r in prange(out.shape[0]):
        _ease_row(np.int64(r), hist, W, out[r])


_user_knn_cells_serial, _user_knn_cells_parallel = serial_and_parallel(_user_knn_cells)
_item_knn_cells_serial, _item_knn_cells_parallel = serial_and_parallel(_item_knn_cells)
_cooccurrence_cells_serial, _cooccurrence_cells_parallel = serial_and_parallel(_cooccurrence_cells)
_ease_cells_serial, _ease_cells_parallel = serial_and_parallel(_ease_cells)
_ease_rows_serial, _ease_rows_parallel = serial_and_parallel(_ease_rows)


def user_knn_cells(
    cells: tuple, sim: np.ndarray, cent: tuple, mean: np.ndarray, out: np.ndarray, parallel: bool
) -> None:
    """``user_knn``'s scores at the cells (module docstring)."""
    (_user_knn_cells_parallel if parallel else _user_knn_cells_serial)(cells, sim, cent, mean, out)


def item_knn_cells(
    cells: tuple, hist: tuple, back: tuple, item_mean: np.ndarray, out: np.ndarray, parallel: bool
) -> None:
    """``item_knn``'s scores at the cells (module docstring)."""
    (_item_knn_cells_parallel if parallel else _item_knn_cells_serial)(
        cells, hist, back, item_mean, out
    )


def cooccurrence_cells(
    cells: tuple, hist: tuple, back: tuple, n_items: int, out: np.ndarray, parallel: bool
) -> None:
    """``cooccurrence``'s standardised scores at the cells (module docstring)."""
    (_cooccurrence_cells_parallel if parallel else _cooccurrence_cells_serial)(
        cells, hist, back, n_items, out
    )


def ease_cells(cells: tuple, hist: tuple, W: np.ndarray, out: np.ndarray, parallel: bool) -> None:
    """``ease``'s standardised scores at the cells (module docstring)."""
    (_ease_cells_parallel if parallel else _ease_cells_serial)(cells, hist, W, out)


def ease_rows(hist: tuple, W: np.ndarray, out: np.ndarray, parallel: bool) -> None:
    """``out[r] += X_u B`` for each user ``r`` of ``hist``: EASE's raw scores (unstandardised)."""
    (_ease_rows_parallel if parallel else _ease_rows_serial)(hist, W, out)
