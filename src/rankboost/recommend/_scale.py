"""What keeps the pooled recommender's memory growing with the ratings, not users x items.

At MovieLens 10M's shape (70,000 users x 10,000 items x 10M ratings) a dense users x items
float64 array is 5.6 GB, so the base recommenders never build one (neither the item
similarities' transpose nor ``user_knn``'s neighbour matrix is dense). Here:

* :func:`gram_rows` / :func:`top_k_similar`: item-item similarities from a numba kernel over
  the sparse ratings, a block of items at a time (``O(block x items)`` memory; the same
  numbers as the dense product they replace, bit for bit);
* :func:`neighbour_pool`: ``user_knn``'s neighbours, at most :data:`USER_KNN_POOL` of the
  ``feature_users`` (a fixed seeded sample above that; MovieLens 100K's 943 users are all
  kept), so scoring a user costs the pool's ratings, not all ratings;
* :func:`user_sample`: the users whose rows train the pooled model (and those that
  choose EASE's penalty), at most :data:`MAX_QUERIES` (a seeded sample): one shared model
  of six features does not need 70,000 queries, and every target is still recommended for;
* :func:`check_dense_memory`: a clear error before allocating a dense array larger than the
  machine's available memory (EASE's items x items matrices), naming the sizes and what to do.
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .._kernels import gram, use_parallel

__all__ = [
    "MAX_QUERIES",
    "USER_KNN_POOL",
    "available_memory",
    "check_dense_memory",
    "check_ease_memory",
    "cross_gram",
    "gram_rows",
    "neighbour_pool",
    "row_normalised",
    "top_k_similar",
    "user_sample",
]

#: most neighbours ``user_knn`` weighs per user (a seeded sample of the pool above this)
USER_KNN_POOL = 2_000
#: most target users whose rows train the pooled model (a seeded sample above this)
MAX_QUERIES = 10_000
#: cells of a block of similarity rows held at once
_BLOCK_CELLS = 1 << 22


def gram_rows(V: sp.csr_matrix, VT: sp.csr_matrix, lo: int, hi: int) -> NDArray[np.float64]:
    """Rows ``[lo, hi)`` of ``V @ V.T`` as a dense array (``VT`` = ``V.T`` in CSR)."""
    n = V.shape[0]
    out = np.zeros((hi - lo, n))
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


def row_normalised(M: sp.csr_matrix) -> sp.csr_matrix:
    """``M`` with every row scaled to unit Euclidean norm (an empty row stays empty)."""
    norms = np.sqrt(np.asarray(M.multiply(M).sum(axis=1)).ravel())
    inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    return sp.csr_matrix(sp.diags(inv) @ M)


def top_k_similar(V: sp.csr_matrix, k: int) -> sp.csr_matrix:
    """Cosine similarity of the rows of ``V``, each row pruned to its ``k`` largest entries.

    A block of rows at a time (:func:`gram_rows`), so memory stays ``O(block x n_rows)``
    plus ``V``; the diagonal is dropped.
    """
    Vn = row_normalised(sp.csr_matrix(V, dtype=np.float64))
    VT = sp.csr_matrix(Vn.T)  # Vn's own index order kept: the sums' order (gram_rows)
    n = V.shape[0]
    kk = min(k, n - 1)
    step = max(1, _BLOCK_CELLS // max(n, 1))
    rows, cols, vals = [], [], []
    for s in range(0, n, step):
        S = gram_rows(Vn, VT, s, min(n, s + step))
        S[np.arange(S.shape[0]), np.arange(s, s + S.shape[0])] = 0.0
        top = (
            np.argpartition(-S, kk - 1, axis=1)[:, :kk]
            if kk > 0
            else np.empty((S.shape[0], 0), int)
        )
        rows.append(np.repeat(np.arange(s, s + S.shape[0]), top.shape[1]))
        cols.append(top.ravel())
        vals.append(np.take_along_axis(S, top, axis=1).ravel())
    out = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
    )
    out.eliminate_zeros()
    return out


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
