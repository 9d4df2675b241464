"""``user_knn`` and ``item_knn`` of :class:`rankboost.dask.DaskRankBoostRecommender`.

Both need the other users' rows. Each is computed from the blocks of users with the
one-machine functions of :mod:`rankboost.recommend._scale`, in the one-machine float
order, so a block's fit (``BaseScores.fit(..., pool_rows=, item_neighbours=)``) scores its
users **bit for bit** as a fit on all the ratings (a cross-fitting fold's, or all of them):

* ``user_knn``: the neighbour pool (:func:`~rankboost.recommend._scale.neighbour_pool`:
  at most ``USER_KNN_POOL`` users, drawn on the client from every user or the
  ``feature_users``) needs its users' normalised and centred rows, and each is a function
  of its own user's ratings (:class:`~rankboost.recommend._scale.PoolRows`): the block of
  each pool user computes its rows, one task stacks them in user order, and every block
  takes them (the block's own users among them are found by their global rows).
* ``item_knn``: the adjusted cosine of two items sums over **every** user, and the pruning
  to ``k`` neighbours keeps exact ties, so the sums are done in the one-machine order:
  the centred ratings' columns ``V`` (items x users) are normalised by their norms, which
  scipy sums pairwise (``np.add.reduceat``) over a whole column: one task per stripe of
  items (at most :data:`NORM_CELLS` ratings) stacks the blocks' parts of those columns in
  user order and calls the one-machine :func:`~rankboost.recommend._scale.row_norms`.
  The Gram matrix ``Vn Vn^T`` (:func:`~rankboost.recommend._scale.gram_rows`) adds each
  cell's terms in the order of ``Vn``'s row, which scipy's scaling reverses (users in
  decreasing order): a dense accumulator of a stripe of rows (``STRIPE_BYTES``, as
  :mod:`rankboost.dask._itemstats`) is passed from block to block in that order, each
  block continuing the sums with the same kernel, so every cell gets the one-machine
  bits; stripes run at once on different workers (at most one per worker thread), then
  each is pruned to its rows' top ``k`` (:func:`~rankboost.recommend._scale.top_k_similar_rows`),
  and the blocks take the pruned neighbours (sparse, ``n_items x k``), never the matrix.

Memory per worker, ``p`` the pool's ratings, ``n`` items, ``t`` threads per worker, ``b``
the largest block's ratings: ``user_knn`` ``24 p`` bytes (both row sets, on every worker
that fits a block; ``p <= USER_KNN_POOL x n``); ``item_knn`` ``3 x 12 b`` (a block's ``V``,
``Vn`` and ``Vn^T``), a norm stripe's ``~40 x NORM_CELLS`` bytes (the stacked columns and
their squares, 0.3 GB), ``2 t x STRIPE_BYTES`` for the stripes in flight (a link copies
its input: tasks never change their arguments, so a stripe recomputed after a lost worker
is the same), ``12 n k`` for the neighbours; the blocks' ``(Vn, Vn^T)`` are copied to the
workers of the stripes. At 20,000 items and one thread: about 0.6 GB besides the blocks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .._compat import require
from ..recommend._base import BaseScores, user_means
from ..recommend._labels import label_positions
from ..recommend._scale import (
    PoolRows,
    centred,
    gram_rows,
    row_normalised,
    row_norms,
    scaled_rows,
    top_k_similar_rows,
)
from ._itemstats import STRIPE_BYTES, stack_rows
from ._ratings import UserBlocks
from ._rectasks import keep_ratings

__all__ = ["NORM_CELLS", "knn_pool", "knn_stats"]

#: most ratings whose item norms one task sums (a stripe of items, all its users)
NORM_CELLS = 1 << 23


def knn_pool(ub: UserBlocks, feature_users: Any) -> NDArray[np.int64]:
    """The rows of the ``feature_users`` (labels, as one machine's fit reads them; None: all)."""
    if feature_users is None:
        return np.arange(ub.users.shape[0], dtype=np.int64)
    labels = ub.users.tolist()
    index = {u: j for j, u in enumerate(labels)}
    return label_positions(feature_users, index, labels, "feature_users")


def _ratings(R: sp.csr_matrix, fold: NDArray[np.int64] | None, k: int) -> sp.csr_matrix:
    return R if fold is None else keep_ratings(R, fold != k)


def pool_part(
    R: sp.csr_matrix, fold: NDArray[np.int64] | None, k: int, local: NDArray[np.int64]
) -> PoolRows:
    """The block's pool users' rows (``local``: rows of the block), of fold ``k``'s ratings."""
    Rk = _ratings(R, fold, k)
    return PoolRows.of(Rk, user_means(Rk), row_normalised(Rk), local)


def stack_pool(pool: NDArray[np.int64], n_items: int, *parts: PoolRows) -> PoolRows:
    """The pool's rows from its blocks' parts (in block order: the users' order)."""
    if not parts:
        empty = sp.csr_matrix((0, n_items))
        return PoolRows(pool, empty, empty)
    stack = [sp.csr_matrix(sp.vstack([getattr(p, w) for p in parts], format="csr"))
             for w in ("normalised", "centred")]  # fmt: skip
    return PoolRows(pool, stack[0], stack[1])


def centred_columns(R: sp.csr_matrix, fold: NDArray[np.int64] | None, k: int) -> sp.csr_matrix:
    """The block's columns of one machine's ``V``: centred ratings, items x its users."""
    Rk = _ratings(R, fold, k)  # as adjusted_cosines
    return sp.csr_matrix(centred(Rk, user_means(Rk)).T)


def column_stripes(V: sp.csr_matrix, cuts: NDArray[np.int64]) -> list[sp.csr_matrix]:
    return [V[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True)]


def part_of(parts: list[sp.csr_matrix], s: int) -> sp.csr_matrix:
    return parts[s]


def stripe_norms(*parts: sp.csr_matrix) -> NDArray[np.float64]:
    """The norms of a stripe of items' columns from its blocks' parts (in user order)."""
    return row_norms(sp.csr_matrix(sp.hstack(parts, format="csr")))


def normalised_columns(
    V: sp.csr_matrix, norms: NDArray[np.float64]
) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """The block's ``Vn`` (items x its users, rows in scipy's order) and ``Vn^T``."""
    Vn = scaled_rows(V, norms)
    return Vn, sp.csr_matrix(Vn.T)


def gram_link(
    acc: NDArray[np.float64] | None,
    lo: int,
    hi: int,
    block: tuple[sp.csr_matrix, sp.csr_matrix],
    after: Any = None,
) -> NDArray[np.float64]:
    """Rows ``[lo, hi)`` of the Gram matrix, ``acc`` continued with the block's users.

    ``after``: ignored (a stripe this one waits for, so that few are held at once).
    """
    Vn, VT = block
    out = np.zeros((hi - lo, VT.shape[1])) if acc is None else acc.copy()
    return gram_rows(Vn, VT, lo, hi, out)


def _decreasing() -> bool:
    """Whether scipy's row scaling reverses a row's entries (the order of the sums)."""
    return bool(scaled_rows(sp.csr_matrix(np.ones((1, 2))), np.ones(1)).indices[0] == 1)


def _cuts(counts: NDArray[np.float64], cells: int) -> NDArray[np.int64]:
    """Stripes of items of about ``cells`` ratings each (their first items, and the end)."""
    ends = np.cumsum(counts)
    total = float(ends[-1]) if ends.shape[0] else 0.0
    inner = np.searchsorted(ends, np.arange(cells, total, cells), side="left") + 1
    n = counts.shape[0]
    return np.unique(np.concatenate([[0], np.minimum(inner, n), [n]])).astype(np.int64)


def knn_stats(  # noqa: PLR0917  the fit's state
    client: Any,
    ub: UserBlocks,
    folds: list[Any] | None,
    k: int,
    names: tuple[str, ...],
    pool: NDArray[np.int64],
    counts: NDArray[np.float64],
) -> tuple[Any, Any]:
    """Futures of ``user_knn``'s :class:`PoolRows` and ``item_knn``'s neighbours (or None).

    The ratings are ``ub``'s blocks' (outside fold ``k`` of ``folds`` when given);
    ``pool``: the neighbour pool (global rows, increasing); ``counts``: ratings per item.
    The futures are finished when it returns (their memory released before EASE's).
    """
    blocks, starts = ub.blocks, ub.starts
    fold = [None if folds is None else folds[j] for j in range(len(blocks))]
    pool_f = near_f = None
    if "user_knn" in names:
        parts = []
        for j, b in enumerate(blocks):
            mine = pool[(pool >= starts[j]) & (pool < starts[j + 1])] - starts[j]
            if mine.shape[0]:
                parts.append(client.submit(pool_part, b, fold[j], k, mine, pure=False))
        pool_f = client.submit(stack_pool, pool, counts.shape[0], *parts, pure=False)
    if "item_knn" in names:
        near_f = _item_neighbours(client, ub, fold, k, counts)
    require("distributed", "DaskRankBoostRecommender").wait(
        [f for f in (pool_f, near_f) if f is not None]
    )
    return pool_f, near_f


def _item_neighbours(
    client: Any, ub: UserBlocks, fold: list[Any], k: int, counts: NDArray[np.float64]
) -> Any:
    """``item_knn``'s pruned neighbours (module docstring): norms, then Gram stripes."""
    n = counts.shape[0]
    V = [
        client.submit(centred_columns, b, f, k, pure=False)
        for b, f in zip(ub.blocks, fold, strict=True)
    ]
    cuts = _cuts(counts, NORM_CELLS)
    if cuts.shape[0] == 2:
        norms_f = [client.submit(stripe_norms, *V, pure=False)]
    else:
        split = [client.submit(column_stripes, v, cuts, pure=False) for v in V]
        norms_f = [
            client.submit(stripe_norms, *[client.submit(part_of, p, s, pure=False) for p in split],
                          pure=False)
            for s in range(cuts.shape[0] - 1)
        ]  # fmt: skip
    norms = np.concatenate(client.gather(norms_f)) if n else np.zeros(0)
    Vn = [client.submit(normalised_columns, v, norms, pure=False) for v in V]
    del V, norms_f
    order = list(range(len(Vn)))[:: -1 if _decreasing() else 1]
    threads = client.nthreads()
    workers = sorted(threads)
    width = max(1, sum(threads.values()))  # stripes in flight
    nn = BaseScores(("item_knn",)).k
    rows = max(1, STRIPE_BYTES // (8 * max(n, 1)))
    pruned: list[Any] = []
    for s, lo in enumerate(range(0, n, rows)):
        hi = min(n, lo + rows)
        where = {"workers": [workers[s % len(workers)]], "allow_other_workers": True}
        acc = None
        after = pruned[s - width] if s >= width else None
        for j in order:
            acc = client.submit(gram_link, acc, lo, hi, Vn[j], after, pure=False, **where)
            after = None
        pruned.append(client.submit(top_k_similar_rows, acc, lo, nn, pure=False, **where))
    return client.submit(stack_rows, *pruned, pure=False)
