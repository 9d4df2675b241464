"""EASE's penalty search on Dask: ``ease_lambda="auto"`` of the Dask recommender.

:func:`choose_ease_lambda` is :func:`rankboost.recommend._base.choose_ease_lambda` on the
blocks of whole users (:mod:`rankboost.dask._ratings`), made of the same pieces
(:mod:`rankboost.recommend._penalty`), and chooses the **same penalty bit for bit**, with the
same mean NDCG@10 of every penalty evaluated: every number is computed in the one-machine
order.

* **the validation split**: each block draws its slice of the one-machine stream of
  :func:`~rankboost.recommend._base.validation_split` (seed stream ``"rating_folds"``, PCG64
  ``advance``: :func:`rankboost.dask._rectasks.block_folds`), so its held-out ratings are
  the one-machine ones; the liked held-out items (at or above the user's mean rating) are
  per user (:func:`~rankboost.recommend._base.split_ratings`, in the user's block);
* **the users**: the blocks send their users with a liked held-out item (a few integers);
  the client takes the one-machine seeded sample of at most ``MAX_QUERIES`` of them
  (:func:`~rankboost.recommend._scale.user_sample`), and each block keeps the rows of its
  sampled users (their remaining history and held-out liked items) for the whole search;
* **the Gram matrix** of the ratings outside the split is summed on the workers in float32
  stripes (exact counts, :func:`rankboost.dask._itemstats.summed_stripes`), **once**: the
  lower-triangle stripes are kept across penalties;
* **per penalty**: one task inverts EASE's matrix from those stripes in place
  (:func:`~rankboost.dask._itemstats.ease_of_stripes`: the one-machine precision and
  weights); each block scores its sampled users with those weights and returns their DCG@10
  (:func:`~rankboost.recommend._penalty.users_dcg`; a user's value does not depend on the
  users scored with it); the client concatenates the DCGs in user order and takes the mean
  NDCG with the one-machine function (:func:`~rankboost.recommend._penalty.mean_ndcg`);
* **the search** over the penalties is the one-machine local search (or grid),
  :func:`~rankboost.recommend._penalty.search_penalty`, on the client.

One-machine ``keep`` (the chosen weights reused by the pooled fit's last cross-fitting fold)
only saves that fold's inverse: the weights are the ones the fold computes from the same
ratings. Here the fold computes them again (one more inverse) rather than holding a second
items x items array on a worker during the search.

Memory per worker, ``n`` items: the lower-triangle stripes, ``2 n^2`` bytes (float32, up to
``4 n^2`` while the full stripes of :data:`~rankboost.dask._itemstats.STRIPE_BYTES` are
cut), on the workers that summed them and, copied, on the one that inverts; the inverse,
``4 n^2`` (float32, when well conditioned) or ``8 n^2`` bytes (float64), on that worker
and, copied, on each worker scoring users; per block, the sampled users' rows and a chunk
of about 4M scores (32 MB, :func:`~rankboost.recommend._base.users_per_block`). At 20,000
items: 0.8 GB of stripes + 3.2 GB of float64 weights = 4.0 GB on the inverting worker, the
bound of the final fit's EASE (:mod:`rankboost.dask._itemstats`); the stripes and weights
are released before the cross-fitting starts. Time: one inverse per penalty evaluated
(3-4 with the local search), as one machine.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..recommend._base import (
    EASE_LAMBDAS,
    EASE_START,
    VALIDATION_FOLDS,
    split_ratings,
    users_per_block,
)
from ..recommend._penalty import check_search, mean_ndcg, search_penalty, users_dcg
from ..recommend._scale import user_sample
from ._itemstats import ease_of_stripes, lower_part, row_sum_max, summed_stripes
from ._ratings import UserBlocks
from ._rectasks import block_folds

__all__ = ["choose_ease_lambda"]

Queries = tuple[sp.csr_matrix, sp.csr_matrix]


def block_split(
    R: sp.csr_matrix, fold: NDArray[np.int64], last: int
) -> tuple[int, NDArray[np.int64]]:
    """The block's ratings outside the split (a count) and its users with a liked held-out item."""
    B, rel = split_ratings(R, fold == last)
    return B.nnz, np.flatnonzero(np.diff(rel.indptr))


def block_queries(
    R: sp.csr_matrix, fold: NDArray[np.int64], last: int, users: NDArray[np.int64]
) -> Queries:
    """The remaining history and the liked held-out items of the block's sampled ``users``."""
    B, rel = split_ratings(R, fold == last)
    return B[users], rel[users]


def relevant_counts(queries: Queries) -> NDArray[np.int64]:
    """The number of liked held-out items of each sampled user."""
    return np.diff(queries[1].indptr)


def block_dcg(queries: Queries, W: NDArray[np.floating], k: int) -> NDArray[np.float64]:
    """The DCG@``k`` of the block's sampled users under EASE's weights ``W``."""
    Bu, rel = queries
    return users_dcg(Bu, rel, W, k, users_per_block(Bu.shape[1]))


def choose_ease_lambda(  # noqa: PLR0917  the one-machine function's parameters
    client: Any,
    ub: UserBlocks,
    seed: int,
    lambdas: tuple[float, ...] = EASE_LAMBDAS,
    n_folds: int = VALIDATION_FOLDS,
    k: int = 10,
    search: str = "local",
    float32: bool = True,
    *,
    folds: list[Any] | None = None,
) -> tuple[float, dict[float, float]]:
    """EASE's penalty with the best NDCG@k on a validation split of ``ub``'s ratings.

    :func:`rankboost.recommend._base.choose_ease_lambda` of the ratings the blocks hold, with
    the same arguments (``steps`` and ``keep`` aside): the same chosen ``lambda`` and the
    same mean NDCG@k of each one evaluated, in grid order (module docstring).

    Parameters
    ----------
    client : distributed.Client
    ub : UserBlocks
        The ratings, in blocks of whole users on the workers.
    seed, lambdas, n_folds, k, search, float32
        As the one-machine function's.
    folds : list of futures, optional
        Per block, the fold of each rating in ``n_folds`` folds of the seed stream
        ``"rating_folds"`` (the pooled fit's, when it has ``n_folds`` folds); drawn here
        when None.

    Returns
    -------
    lambda : float
    values : dict of float to float
    """
    check_search(search)
    if len(lambdas) == 0:
        raise ValueError("lambdas must hold at least one EASE penalty; got none.")
    last, n_items = n_folds - 1, ub.items.shape[0]
    if folds is None:
        folds = [
            client.submit(block_folds, b, n_folds, seed, int(ub.nnz_before[j]), pure=False)
            for j, b in enumerate(ub.blocks)
        ]
    split = client.gather(
        [
            client.submit(block_split, b, f, last, pure=False)
            for b, f in zip(ub.blocks, folds, strict=True)
        ]
    )
    liked = [users + ub.starts[j] for j, (_, users) in enumerate(split)]
    users = user_sample(np.concatenate(liked).astype(np.int64), seed)  # at most MAX_QUERIES
    if users.shape[0] == 0 or sum(n for n, _ in split) == 0:
        return float(lambdas[0]), {}
    in_block = np.searchsorted(ub.starts, users, side="right") - 1
    queries = [
        client.submit(
            block_queries,
            ub.blocks[j],
            folds[j],
            last,
            users[in_block == j] - ub.starts[j],
            pure=False,
        )  # fmt: skip
        for j in np.unique(in_block)  # in user order
    ]
    n_rel = np.concatenate(
        client.gather([client.submit(relevant_counts, q, pure=False) for q in queries])
    )
    stripes, row_sums = [], []
    for lo, G in summed_stripes(client, ub, folds, last, n_items):  # the full stripes: freed
        stripes.append(client.submit(lower_part, G, lo, pure=False))
        row_sums.append(client.submit(row_sum_max, G, pure=False))

    def value(lam: float) -> float:
        W = client.submit(ease_of_stripes, lam, float32, row_sums, None, *stripes, pure=False)
        dcg = client.gather([client.submit(block_dcg, q, W, k, pure=False) for q in queries])
        return mean_ndcg(np.concatenate(dcg), n_rel, k, n_items)  # W is released here

    return search_penalty(value, lambdas, search, EASE_START)
