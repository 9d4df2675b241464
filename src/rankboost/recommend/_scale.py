"""What keeps the pooled recommender's memory growing with the ratings, not users x items.

At MovieLens 10M's shape (70,000 users x 10,000 items x 10M ratings) a dense users x items
float64 array is 5.6 GB, so the base recommenders never build one (neither the item
similarities' transpose nor ``user_knn``'s neighbour matrix is dense). Here:

* :func:`gram_rows` / :func:`top_k_similar` / :func:`top_k_cosine`: item-item similarities
  from numba kernels over the sparse ratings, a block of items at a time (``O(block x
  items)`` memory; the same numbers as the dense product they replace, bit for bit), each
  row pruned to its ``k`` largest by a heap (ties to the lower column);
* :func:`neighbour_pool`: ``user_knn``'s neighbours, at most :data:`USER_KNN_POOL` of the
  ``feature_users`` (a fixed seeded sample above that; MovieLens 100K's 943 users are all
  kept), so scoring a user costs the pool's ratings, not all ratings;
* :func:`user_sample`: the users whose rows train the pooled model (and those that
  choose EASE's penalty), at most :data:`MAX_QUERIES` (a seeded sample): one shared model
  of six features does not need 70,000 queries, and every target is still recommended for;
* :func:`cross_gram` / :func:`csr_triple` / :func:`check_cells`: what ``BaseScores.cells``
  needs to score the cross-fitting's held-out cells without a users x items array;
* :class:`ItemTotals` / :class:`PoolRows` / :func:`check_block_fit`: what a fit on a block
  of users needs of the other users (per-item sums, the Gram matrix, EASE's weights,
  ``user_knn``'s pool rows, ``item_knn``'s neighbours), so that blocks of users add theirs
  up and score their own users (``rankboost.dask``'s recommender);
* :func:`check_dense_memory`: a clear error before allocating a dense array larger than the
  machine's available memory (EASE's items x items matrices), naming the sizes and what to do.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from .._kernels import gram, use_parallel

__all__ = [
    "MAX_QUERIES",
    "USER_KNN_POOL",
    "ItemTotals",
    "PoolRows",
    "adjusted_cosines",
    "available_memory",
    "centred",
    "check_block_fit",
    "check_cells",
    "check_dense_memory",
    "check_ease_memory",
    "cross_gram",
    "csr_triple",
    "gram_rows",
    "neighbour_pool",
    "row_normalised",
    "row_norms",
    "scaled_rows",
    "top_k_cosine",
    "top_k_cosine_rows",
    "top_k_similar",
    "top_k_similar_rows",
    "user_sample",
]

#: most neighbours ``user_knn`` weighs per user (a seeded sample of the pool above this)
USER_KNN_POOL = 2_000
#: most target users whose rows train the pooled model (a seeded sample above this)
MAX_QUERIES = 10_000
#: cells of a block of similarity rows held at once
_BLOCK_CELLS = 1 << 22


def gram_rows(
    V: sp.csr_matrix,
    VT: sp.csr_matrix,
    lo: int,
    hi: int,
    out: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Rows ``[lo, hi)`` of ``V @ V.T`` as a dense array (``VT`` = ``V.T`` in CSR).

    ``out``: rows ``[lo, hi)`` to add the terms to, each cell's in the order of ``V``'s row
    (``V`` and ``VT`` a block of ``V``'s columns: the sum over every column, continued block
    after block, has the bits of one call on all of them; ``rankboost.dask``'s ``item_knn``).
    """
    n = VT.shape[1]
    out = np.zeros((hi - lo, n)) if out is None else out
    work = int(V.indptr[hi] - V.indptr[lo]) * max(1, VT.nnz // max(1, VT.shape[0]))
    gram.gram_rows(lo, hi, V.indptr.astype(np.int64), V.indices, V.data,
                   VT.indptr.astype(np.int64), VT.indices, VT.data, out,
                   use_parallel(work))  # fmt: skip
    return out


def cross_gram(U: sp.csr_matrix, VT: sp.csr_matrix) -> NDArray[np.float64]:
    """``U @ VT`` as a dense array, summed over the stored entries of ``U``'s rows only.

    ``VT`` (CSR, ``U.shape[1]`` rows) is the transpose of ``V``: each cell is ``U``'s row
    times ``V``'s, the terms added in the order of ``U``'s row, so the result has the bits
    of scipy's ``U @ VT.toarray()`` at ``nnz(U) x (ratings per item of V)`` work instead of
    ``nnz(U) x V.shape[0]`` (:mod:`rankboost._kernels.gram`).
    """
    out = np.zeros((U.shape[0], VT.shape[1]))
    work = int(U.nnz) * max(1, VT.nnz // max(1, VT.shape[0]))
    gram.gram_rows(0, U.shape[0], U.indptr.astype(np.int64), U.indices,
                   np.asarray(U.data, dtype=np.float64), VT.indptr.astype(np.int64),
                   VT.indices, np.asarray(VT.data, dtype=np.float64), out,
                   use_parallel(work))  # fmt: skip
    return out


def csr_triple(M: sp.csr_matrix | sp.csc_matrix) -> tuple[NDArray[np.int64], NDArray, NDArray]:
    """A compressed matrix as the kernels take it: ``(indptr int64, indices, data float64)``."""
    return M.indptr.astype(np.int64), M.indices, np.asarray(M.data, dtype=np.float64)


def check_cells(
    users: ArrayLike, items: ArrayLike, shape: tuple[int, int]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``users`` and ``items`` of ``BaseScores.cells`` as int64, checked against ``shape``."""
    out = []
    for what, a, n in (("users", users, shape[0]), ("items", items, shape[1])):
        arr = np.asarray(a)
        if arr.ndim != 1 or not (arr.size == 0 or np.issubdtype(arr.dtype, np.integer)):
            raise ValueError(
                f"{what} must be a 1-D array of integer indices; got shape {arr.shape} "
                f"of dtype {arr.dtype}."
            )
        bad = np.flatnonzero((arr < 0) | (arr >= n))
        if bad.size:
            raise ValueError(
                f"{what}[{bad[0]}] = {arr[bad[0]]} is outside the fitted matrix's "
                f"{n} {what} (0 to {n - 1}); pass indices of the matrix given to fit."
            )
        out.append(arr.astype(np.int64))
    if out[0].shape != out[1].shape:
        raise ValueError(
            f"users and items must have one entry per cell; got {out[0].shape[0]} users "
            f"and {out[1].shape[0]} items."
        )
    return out[0], out[1]


def row_normalised(M: sp.csr_matrix) -> sp.csr_matrix:
    """``M`` with every row scaled to unit Euclidean norm (an empty row stays empty)."""
    return scaled_rows(M, row_norms(M))


def row_norms(M: sp.csr_matrix) -> NDArray[np.float64]:
    """The Euclidean norm of every row of ``M`` (a row's: its own entries only)."""
    return np.sqrt(np.asarray(M.multiply(M).sum(axis=1)).ravel())


def scaled_rows(M: sp.csr_matrix, norms: NDArray[np.float64]) -> sp.csr_matrix:
    """Row ``i`` of ``M`` divided by ``norms[i]`` (emptied where it is 0).

    A row's entries come out in scipy's product order (reversed), which is the order the
    Gram kernel then sums them in (:func:`top_k_similar`).
    """
    inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    return sp.csr_matrix(sp.diags(inv) @ M)


def centred(R: sp.csr_matrix, means: NDArray[np.float64]) -> sp.csr_matrix:
    """``R``'s ratings minus their user's mean (``means``, one per row), structure kept."""
    rows = np.repeat(np.arange(R.shape[0]), np.diff(R.indptr))
    return sp.csr_matrix((R.data - means[rows], R.indices, R.indptr), shape=R.shape)


class PoolRows(NamedTuple):
    """``user_knn``'s rows of its neighbour pool (:func:`neighbour_pool`).

    ``users``: the pool (rows of the ratings, increasing); ``normalised``: their rows of
    :func:`row_normalised` ratings; ``centred``: their :func:`centred` ratings (both CSR,
    pool x items). Every entry is a function of its user's own ratings, so blocks of users
    contribute theirs and the stacked rows are those of all the ratings.
    """

    users: NDArray[np.int64]
    normalised: sp.csr_matrix
    centred: sp.csr_matrix

    @classmethod
    def of(
        cls,
        R: sp.csr_matrix,
        means: NDArray[np.float64],
        normalised: sp.csr_matrix,
        users: NDArray[np.int64],
    ) -> PoolRows:
        """The rows ``users`` of ``R`` (user ``means``, ``normalised = row_normalised(R)``)."""
        return cls(users, normalised[users], centred(R[users], means[users]))


def top_k_similar(V: sp.csr_matrix, k: int) -> sp.csr_matrix:
    """Cosine similarity of the rows of ``V``, each row pruned to its ``k`` largest entries.

    A block of rows at a time (:func:`gram_rows`), so memory stays ``O(block x n_rows)``
    plus ``V``; the diagonal counts as 0 and zeros are dropped; ties go to the lower column
    (:func:`rankboost._kernels.gram.top_k_rows`). Rows hold their columns in increasing order.
    """
    Vn = row_normalised(sp.csr_matrix(V, dtype=np.float64))
    VT = sp.csr_matrix(Vn.T)  # Vn's own index order kept: the sums' order (gram_rows)
    return _pruned(V.shape[0], k, lambda lo, hi: gram_rows(Vn, VT, lo, hi), np.empty(0))


def adjusted_cosines(R: sp.csr_matrix, means: NDArray[np.float64], k: int) -> sp.csr_matrix:
    """``item_knn``'s neighbours: :func:`top_k_similar` of the columns of :func:`centred` ``R``.

    The adjusted cosine of Sarwar et al. (2001): items' columns of user-centred ratings.
    """
    return top_k_similar(sp.csr_matrix(centred(R, means).T), k)


def top_k_similar_rows(G: NDArray[np.float64], lo: int, k: int) -> sp.csr_matrix:
    """Rows ``[lo, lo + len(G))`` of :func:`top_k_similar`, from those rows ``G`` of its Gram.

    As :func:`top_k_cosine_rows`: a row's neighbours depend on its own row only.
    """
    return _pruned(G.shape[1], k, lambda a, b: G[a - lo : b - lo], np.empty(0), lo, lo + G.shape[0])


def top_k_cosine(
    B: sp.csr_matrix,
    k: int,
    gram_matrix: NDArray[np.float64] | None = None,
    counts: NDArray[np.float64] | None = None,
) -> sp.csr_matrix:
    """The cosine of the columns of the binary ``B``, each row pruned as :func:`top_k_similar`.

    From the exact co-occurrence counts ``G = B^T B`` and ``n_i`` ratings of item ``i``:
    ``G_ij * a_i * a_j``, ``a = 1 / sqrt(n)`` (0 for an item nobody rated), so EASE's Gram
    matrix serves when given (``gram_matrix``), else blocks of rows of ``G``
    (:func:`gram_rows`; the same integers). The same values as :func:`top_k_similar` of
    ``B.T`` up to the last bits (it summed ``a_i a_j`` once per common user). ``counts``:
    the ``n_i`` of larger ratings than ``B`` (whose Gram matrix ``gram_matrix`` is).
    """
    n = B.shape[1]
    if counts is None:
        counts = np.bincount(B.indices, minlength=n).astype(np.float64)
    scale = _cosine_scale(counts)
    if gram_matrix is not None:
        return _pruned(n, k, lambda lo, hi: gram_matrix[lo:hi], scale)
    BT, Bc = sp.csr_matrix(B.T), sp.csr_matrix(B)
    return _pruned(n, k, lambda lo, hi: gram_rows(BT, Bc, lo, hi), scale)


def top_k_cosine_rows(
    G: NDArray[np.floating], lo: int, k: int, counts: NDArray[np.float64]
) -> sp.csr_matrix:
    """Rows ``[lo, lo + len(G))`` of :func:`top_k_cosine`, from those rows ``G`` of the Gram matrix.

    A row's neighbours depend on its own Gram row only: stacked in order, the stripes'
    results are :func:`top_k_cosine`'s matrix (``rankboost.dask``'s recommender, whose
    Gram matrix is summed in stripes of rows). ``G`` may be float32 holding the exact
    counts; it is read as float64.
    """
    hi = lo + G.shape[0]
    return _pruned(
        counts.shape[0], k, lambda a, b: G[a - lo : b - lo], _cosine_scale(counts), lo, hi
    )


def _cosine_scale(counts: NDArray[np.float64]) -> NDArray[np.float64]:
    """``1 / sqrt(n_i)``, 0 for an item nobody rated."""
    return np.divide(1.0, np.sqrt(counts), out=np.zeros(counts.shape[0]), where=counts > 0)


def _pruned(  # noqa: PLR0917  the rows and their range
    n: int,
    k: int,
    rows: Callable[[int, int], NDArray[np.floating]],
    scale: NDArray[np.float64],
    lo: int = 0,
    hi: int | None = None,
) -> sp.csr_matrix:
    """Rows ``[lo, hi)`` (all by default) of the ``n x n`` matrix of blocks ``rows(a, b)``.

    Each row pruned to its top ``k``.
    """
    hi = n if hi is None else hi
    kk = max(0, min(k, n - 1))
    step = max(1, _BLOCK_CELLS // max(n, 1))
    idx = np.empty((hi - lo, kk), dtype=np.int64)
    val = np.empty((hi - lo, kk))
    cnt = np.empty(hi - lo, dtype=np.int64)
    for s in range(lo, hi, step):
        e = min(hi, s + step)
        S = np.ascontiguousarray(rows(s, e), dtype=np.float64)
        gram.top_k_rows(s, S, scale, kk, idx[s - lo : e - lo], val[s - lo : e - lo],
                        cnt[s - lo : e - lo], use_parallel(S.size))  # fmt: skip
    keep = np.arange(kk)[None, :] < cnt[:, None]
    indptr = np.concatenate([[0], np.cumsum(cnt)])
    return sp.csr_matrix((val[keep], idx[keep], indptr), shape=(hi - lo, n))


def neighbour_pool(pool: NDArray[np.int64] | None, n_users: int) -> NDArray[np.int64]:
    """``user_knn``'s neighbours: the pool (None = every user), at most :data:`USER_KNN_POOL`.

    Above the cap, a seeded sample of the pool (the same for every fit of one matrix), in
    increasing order.
    """
    users = np.arange(n_users, dtype=np.int64) if pool is None else np.unique(pool)
    if users.shape[0] <= USER_KNN_POOL:
        return users
    return np.sort(np.random.default_rng(0).choice(users, USER_KNN_POOL, replace=False))


def user_sample(users: NDArray[np.int64], seed: int) -> NDArray[np.int64]:
    """All ``users``, or a seeded sample of :data:`MAX_QUERIES` of them (in increasing order).

    The users whose rows train the pooled model, and those that score EASE's penalties.
    """
    if users.shape[0] <= MAX_QUERIES:
        return users
    rng = np.random.default_rng([seed, 35])
    return np.sort(rng.choice(users, MAX_QUERIES, replace=False))


def available_memory() -> int:
    """Bytes of memory available to this process (Linux ``MemAvailable``; else physical)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 1 << 62


def check_dense_memory(what: str, shape: tuple[int, int], copies: int, fix: str) -> None:
    """Raise MemoryError before ``copies`` dense float64 arrays of ``shape`` overflow memory."""
    need = 8 * shape[0] * shape[1] * copies
    have = available_memory()
    if need > have:
        raise MemoryError(
            f"{what} needs {copies} dense {shape[0]:,} x {shape[1]:,} float64 arrays "
            f"({need / 2**30:.1f} GiB) but only {have / 2**30:.1f} GiB of memory is "
            f"available; {fix}"
        )


def check_ease_memory(n_items: int) -> None:
    """EASE's two dense items x items arrays (the Gram matrix, then the inverse in place)."""
    check_dense_memory(
        "EASE (base recommender 'ease', and the prior)", (n_items, n_items), 2,
        "drop 'ease' from base_recommenders and pass prior=None, or keep fewer items "
        "(e.g. those with the most ratings).",
    )  # fmt: skip


class ItemTotals(NamedTuple):
    """Per-item counts ``n_i`` and sums ``s_i`` of the ratings, and their number and sum.

    What :meth:`BaseScores.fit` needs of the users it does not score (``item_mean``,
    ``popularity``, the cosines of ``cooccurrence``): sums over users, so blocks of users
    add theirs up (:meth:`add`; ``rankboost.dask``'s recommender, one block per partition).
    """

    counts: NDArray[np.float64]
    sums: NDArray[np.float64]
    n: int
    total: float

    @classmethod
    def of(cls, R: sp.csr_matrix) -> ItemTotals:
        """The totals of the ratings ``R`` (a block of users x every item)."""
        n_items = R.shape[1]
        counts: NDArray[np.float64] = np.bincount(R.indices, minlength=n_items).astype(np.float64)
        sums = np.asarray(np.bincount(R.indices, weights=R.data, minlength=n_items), np.float64)
        return cls(counts, sums, int(R.nnz), float(np.sum(R.data)))

    def add(self, other: ItemTotals) -> ItemTotals:
        """The totals of two blocks of users together."""
        return ItemTotals(
            self.counts + other.counts, self.sums + other.sums, self.n + other.n,
            self.total + other.total,
        )  # fmt: skip


def check_block_fit(
    names: tuple[str, ...],
    items: ItemTotals,
    gram: NDArray[np.float64] | None,
    ease_weights: NDArray[np.floating] | None,
    n_items: int,
    neighbours: sp.csr_matrix | None = None,
    knn: tuple[PoolRows | None, sp.csr_matrix | None] = (None, None),
) -> None:
    """A block fit's inputs: the totals of every item, and the item x item matrices named.

    ``knn``: ``user_knn``'s pool rows and ``item_knn``'s neighbours of all the ratings.
    """
    for name, given in zip(("user_knn", "item_knn"), knn, strict=True):
        if name in names and given is None:
            what = "pool_rows= (PoolRows of" if name == "user_knn" else "item_neighbours= (of"
            raise ValueError(
                f"BaseScores.fit(items=...) fits a block of users, and {name!r} needs the "
                f"other users' rows: pass {what} all the ratings)."
            )
    if items.counts.shape != (n_items,):
        raise ValueError(
            f"BaseScores.fit: items holds totals of {items.counts.shape[0]} items, and the "
            f"ratings have {n_items}."
        )
    if gram is None and "cooccurrence" in names and neighbours is None:
        raise ValueError(
            "BaseScores.fit(items=...) needs gram= (the Gram matrix of all users) or "
            "neighbours= (cooccurrence's, top_k_cosine of it)."
        )
    if ease_weights is None and "ease" in names:
        raise ValueError("BaseScores.fit(items=...) needs ease_weights= (computed once).")
