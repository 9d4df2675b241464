"""The tasks of :class:`rankboost.dask.DaskRankBoostRecommender` on a block of users.

Each function runs on the worker that holds a block (a user x item CSR matrix of whole
users, :mod:`rankboost.dask._ratings`) and calls the one-machine code of
:mod:`rankboost.recommend` on it: its part of the item totals and of the Gram matrix, its
slice of the one-machine random draws (folds of the ratings, sampled unrated items), its
cross-fitted cells, its arrays of the pooled problem, its users' top items.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..model_selection import seed_stream
from ..recommend._base import BaseScores, entry_folds, user_means
from ..recommend._labels import labelled_top
from ..recommend._pooled import (
    PooledFit,
    PooledProblem,
    block_size,
    has_pair,
    sample_unrated,
    top_of_block,
)
from ..recommend._scale import ItemTotals, PoolRows

__all__ = [
    "block_features",
    "block_folds",
    "block_problem",
    "block_rows",
    "block_totals",
    "cross_fit_block",
    "keep_ratings",
    "kind_part",
    "knn_inputs",
    "labelled_block",
    "stacked",
    "top_of_users",
    "totals_without",
]


def block_totals(R: sp.csr_matrix, mask: NDArray[np.bool_] | None) -> tuple[ItemTotals, float]:
    """A block's item totals (of its ratings where ``mask``) and its lowest rating."""
    if mask is not None:
        R = keep_ratings(R, mask)
    low = float(R.data.min()) if R.nnz else np.inf
    return ItemTotals.of(R), low


def keep_ratings(R: sp.csr_matrix, mask: NDArray[np.bool_]) -> sp.csr_matrix:
    """The ratings of ``R`` where ``mask`` (over its stored entries), as the pooled fit cuts."""
    rows = np.repeat(np.arange(R.shape[0]), np.diff(R.indptr))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows[mask], minlength=R.shape[0]))])
    return sp.csr_matrix((R.data[mask], R.indices[mask], indptr), shape=R.shape)


def block_folds(
    R: sp.csr_matrix, n_folds: int, random_state: int, before: int
) -> NDArray[np.int64]:
    """The fold of each of the block's ratings: its slice of the one-machine draw."""
    return entry_folds(R, n_folds, _stream(random_state, "rating_folds", before))


def _stream(seed: int, purpose: str, skip: int) -> np.random.Generator:
    """The one-machine random stream of ``purpose``, after its first ``skip`` 64-bit draws.

    A double of ``Generator.random`` is one draw of the PCG64 bit generator, which jumps
    ahead in O(log skip) (``advance``): a block draws exactly its slice of the stream.
    """
    rng = seed_stream(seed, purpose)
    bits: Any = rng.bit_generator
    bits.advance(skip)
    return rng


def block_rows(  # noqa: PLR0917  the block's inputs
    R: sp.csr_matrix,
    fold: NDArray[np.int64],
    start: int,
    sampled: NDArray[np.int64],
    neg: tuple[int, int, int, int, int, int],
    sample_negatives: bool,
    ratio: float,
    low: float,
    held: int = 0,
) -> dict[str, NDArray[Any]]:
    """The block's rows of the pooled problem (``pooled_problem``'s, in their order).

    ``sampled``: the block's users of the training sample (local rows); ``neg``: the seed,
    the number of folds, the doubles drawn before the block's users and by all the sampled
    users, the unrated rows (held ones included) before the block's and in all; ``held``:
    the unrated rows per user sampled for the inner CV only (flagged ``"held"``).
    """
    seed, n_folds, before, n_draws, neg_before, n_neg = neg
    n_u = np.diff(R.indptr)
    rows = np.repeat(np.arange(R.shape[0]), n_u)
    is_target = np.zeros(R.shape[0], dtype=bool)
    is_target[sampled] = True
    keep = is_target[rows]
    u = [rows[keep]]
    it = [R.indices[keep].astype(np.int64)]
    y = [1.0 + R.data[keep] - low]
    f = [fold[keep]]
    h = [np.zeros(u[0].shape[0], dtype=bool)]
    if sample_negatives:
        nu, ni, nh = sample_unrated(R, sampled, ratio, _stream(seed, "negatives", before), held)
        rng = _stream(seed, "negatives", n_draws)  # the folds of every unrated row, then ours
        nf = rng.integers(0, n_folds, size=n_neg)[neg_before : neg_before + nu.shape[0]]
        u.append(nu)
        it.append(ni)
        y.append(np.zeros(nu.shape[0]))
        f.append(nf)
        h.append(nh)
    uu, ii, yy, ff, hh = (np.concatenate(a) for a in (u, it, y, f, h))
    liked = (yy > 0) & (yy >= 1.0 + user_means(R)[uu] - low - 1e-9)
    order = np.lexsort((ii, uu))
    return {
        "u": uu[order], "qid": uu[order] + start, "item": ii[order], "y": yy[order],
        "fold": ff[order], "liked": liked[order], "held": hh[order],
    }  # fmt: skip


def cross_fit_block(  # noqa: PLR0917  the block's inputs
    R: sp.csr_matrix,
    fold: NDArray[np.int64],
    rows: dict[str, NDArray[Any]],
    k: int,
    weights: NDArray[np.floating] | None,
    neighbours: sp.csr_matrix | None,
    totals: ItemTotals,
    names: tuple[str, ...],
    lam: float,
    knn: tuple[PoolRows | None, sp.csr_matrix | None] = (None, None),
    start: int = 0,
) -> NDArray[np.float64]:
    """The block's rows of fold ``k``, scored by the base recommenders without fold ``k``.

    ``knn``: ``user_knn``'s pool rows and ``item_knn``'s neighbours (:mod:`._knn`) of those
    ratings; ``start``: the block's first user.
    """
    base = BaseScores(names, ease_lambda=lam, ease_float32=True)
    base.fit(keep_ratings(R, fold != k), ease_weights=weights, neighbours=neighbours,
             items=totals, **knn_inputs(knn, start))  # fmt: skip
    mine = rows["fold"] == k
    return base.cells(rows["u"][mine], rows["item"][mine])


def knn_inputs(knn: tuple[PoolRows | None, sp.csr_matrix | None], start: int) -> dict[str, Any]:
    """``BaseScores.fit``'s ``pool_rows`` (users as rows of the block) and ``item_neighbours``."""
    pool_rows, near = knn
    if pool_rows is not None:
        pool_rows = pool_rows._replace(users=pool_rows.users - start)
    return {"pool_rows": pool_rows, "item_neighbours": near}


def block_features(rows: dict[str, NDArray[Any]], parts: list[NDArray[np.float64]]) -> NDArray:
    """The block's feature matrix from its folds' cells."""
    X = np.empty((rows["u"].shape[0], parts[0].shape[1] if parts else 0))
    for k, cells in enumerate(parts):
        X[rows["fold"] == k] = cells
    return X


def block_problem(rows: dict[str, NDArray[Any]], X: NDArray[np.float64]) -> PooledProblem:
    return PooledProblem(X, rows["y"], rows["qid"], rows.get("held"), rows["liked"])


def kind_part(rows: dict[str, Any], X: NDArray, kind: str, subset: bool, what: str) -> Any:
    """One array of the block's problem for a kind of feedback (``subset``: rated rows)."""
    prob = block_problem(rows, X)
    if subset:
        prob = prob.subset(prob.y > 0)
    if prob.held.any():
        prob = prob.subset(~prob.held)  # the inner CV's evaluation rows: never trained on
    if what == "X":
        return prob.X
    if what == "y":
        return prob.labels(kind)
    if what == "qid":
        return prob.qid
    labels = prob.labels(kind)  # "check": distinct labels and whether a query has a pair
    pair = bool(labels.shape[0]) and has_pair(labels, prob.qid - prob.qid.min())
    return np.unique(labels), pair


def top_of_users(  # noqa: PLR0917  the block's inputs
    R: sp.csr_matrix,
    weights: NDArray[np.floating] | None,
    neighbours: sp.csr_matrix | None,
    totals: ItemTotals,
    names: tuple[str, ...],
    lam: float,
    knn: tuple[PoolRows | None, sp.csr_matrix | None],
    fit: PooledFit,
    k: int,
    exclude_rated: bool,
    users: NDArray[np.int64] | None,
    start: int = 0,
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Top-``k`` items of the block's users (or of ``users``, local rows) under ``fit``.

    Scored in chunks of users of about ``_BLOCK_CELLS`` cells, as one machine's
    ``recommend_all`` (a user's scores do not depend on the chunk). ``knn`` and ``start``:
    as :func:`cross_fit_block`'s.
    """
    base = BaseScores(names, ease_lambda=lam)
    base.fit(R, ease_weights=weights, neighbours=neighbours, items=totals,
             **knn_inputs(knn, start))  # fmt: skip
    users = np.arange(R.shape[0], dtype=np.int64) if users is None else users
    step = block_size(R.shape[1], len(names))
    parts = [
        top_of_block(base, fit, R, k, exclude_rated, users[s : s + step])
        for s in range(0, max(users.shape[0], 1), step)
    ]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def stacked(futures: list[Any], sizes: list[int], shape: tuple[int, ...], dtype: Any) -> Any:
    """One dask array of the blocks' arrays (futures), rows stacked in block order."""
    import dask
    import dask.array as da

    chunks = [
        da.from_delayed(dask.delayed(f), (n, *shape), dtype=dtype)
        for f, n in zip(futures, sizes, strict=True)
    ]
    return da.concatenate(chunks, axis=0)


def totals_without(R: sp.csr_matrix, fold: NDArray[np.int64], k: int) -> ItemTotals:
    return block_totals(R, fold != k)[0]


def labelled_block(  # noqa: PLR0917  the block's inputs
    R: sp.csr_matrix,
    stats: tuple[Any, Any, ItemTotals, tuple[str, ...], float, Any],
    fit: PooledFit,
    k: int,
    exclude_rated: bool,
    users: NDArray[np.int64] | None,
    user_labels: NDArray[Any],
    items: NDArray[Any],
    start: int = 0,
) -> tuple[NDArray[Any], NDArray[Any], NDArray[np.float64]]:
    """:func:`_top` in labels (``user_labels``: the block's; padding: None)."""
    pos, scores = top_of_users(R, *stats, fit, k, exclude_rated, users, start)
    rows = np.arange(user_labels.shape[0]) if users is None else users
    return labelled_top(user_labels, items, True, rows, pos, scores)
