"""The meta-search measures of the paper's table (section 6.2): top-k counts, average rank.

Each query has (at most) one correct item, or more generally a set of relevant rows; both
measures look at the rank of the first relevant row ``rank(t_1)``. The paper counts the queries
whose correct URL is in the top ``k`` for ``k`` in 1, 2, 5, 10, 20, 30 and reports the average
rank with unretrieved URLs set to rank 31 and ranks capped at 31. Under ``ties="expected"``
both are exact expectations under uniformly random tie-breaking (negative hypergeometric law
with ``k = 1``: ``Pr[rank(t_1) = R + p] = C(Q - p, q - 1) / C(Q, q)``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._kernels.ranking_metrics import first_good_rank
from ._common import check_k, check_threshold, log_factorials, rank_queries
from ._docs import fill_doc

__all__ = ["average_rank", "topk_counts"]


def _first_rank(
    owner: str,
    y_true: ArrayLike,
    y_score: ArrayLike,
    qid: ArrayLike | None,
    ks: NDArray[np.int64],
    cap: int,
    ties: str,
    relevance_threshold: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    threshold = check_threshold(relevance_threshold, owner=owner)
    ranked = rank_queries(y_true, y_score, qid, ties=ties, owner=owner)
    hits = np.empty((ranked.n_queries, ks.shape[0]), dtype=np.float64)
    rank = np.empty(ranked.n_queries, dtype=np.float64)
    log_fact = log_factorials(ranked.max_query_size if ranked.expected else 1)
    good = ranked.labels >= threshold
    first_good_rank(
        good, ranked.scores, ranked.starts, log_fact, ks, cap, ranked.expected, hits, rank
    )
    return hits, rank


def topk_counts(
    y_true: ArrayLike,
    y_score: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    ks: Sequence[int] = (1, 2, 5, 10, 20, 30),
    ties: str = "expected",
    relevance_threshold: float = 1,
) -> dict[int, float]:
    """Count the queries whose first relevant row is within the top ``k``, for each ``k``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels; a row is relevant (the "correct homepage") when ``y_true >=
        relevance_threshold``. A query without a relevant row never counts (unretrieved).
    %(y_score)s
    %(qid)s
    ks : sequence of int, default=(1, 2, 5, 10, 20, 30)
        The cut-offs of the paper's table.
    ties : {"expected", "pessimistic", "optimistic", "stable"}, default="expected"
        ``"expected"`` gives the expected count under uniformly random tie-breaking (a float);
        the others give integer counts (relevant rows last/first in their tie block, or input
        order).
    %(relevance_threshold)s

    Returns
    -------
    dict of int to float
        ``{k: count}`` in the order of ``ks``.

    References
    ----------
    .. [1] Y. Freund, R. Iyer, R. E. Schapire and Y. Singer, "An efficient boosting algorithm
       for combining preferences", JMLR 4, 2003, section 6.2 (meta-search table).

    Examples
    --------
    >>> from rankboost.metrics import topk_counts
    >>> y, s, qid = [1, 0, 0, 1, 0, 0], [0.9, 0.5, 0.1, 0.2, 0.8, 0.7], [1, 1, 1, 2, 2, 2]
    >>> topk_counts(y, s, qid, ks=(1, 2, 3))
    {1: 1.0, 2: 1.0, 3: 2.0}
    """
    owner = "topk_counts"
    try:
        k_list = [check_k(k, owner=owner, name="ks") for k in ks]
    except TypeError as exc:
        if isinstance(ks, Sequence | np.ndarray):
            raise
        raise TypeError(
            f"The 'ks' parameter of {owner} must be a sequence of ints >= 1; got {ks!r} instead."
        ) from exc
    if not k_list:
        raise ValueError(f"The 'ks' parameter of {owner} must not be empty; got {ks!r}.")
    karr = np.asarray(k_list, dtype=np.int64)
    hits, _ = _first_rank(owner, y_true, y_score, qid, karr, 1, ties, relevance_threshold)
    totals = hits.sum(axis=0)
    return {k: float(totals[c]) for c, k in enumerate(k_list)}


def average_rank(
    y_true: ArrayLike,
    y_score: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    cap: int = 31,
    ties: str = "expected",
    relevance_threshold: float = 1,
    per_query: bool = False,
) -> float | NDArray[np.float64]:
    """Mean rank of the first relevant row, capped at ``cap`` (lower is better).

    The per-query value is ``min(rank(t_1), cap)``, and ``cap`` for a query without a
    relevant row (the paper sets unretrieved URLs to rank 31 and caps RankBoost's ranks at 31,
    section 6.2, because the search templates return 30 URLs).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels; a row is relevant when ``y_true >= relevance_threshold``.
    %(y_score)s
    %(qid)s
    cap : int, default=31
        Rank given to an absent relevant row and upper limit on every rank.
    ties : {"expected", "pessimistic", "optimistic", "stable"}, default="expected"
        ``"expected"`` gives ``E[min(rank(t_1), cap)]`` under uniformly random tie-breaking;
        the others put relevant rows last/first in their tie block, or keep input order.
    %(relevance_threshold)s
    %(per_query)s

    Returns
    -------
    float or ndarray of shape (n_queries,)
        The average (capped) rank, or the per-query ranks.

    Examples
    --------
    >>> from rankboost.metrics import average_rank
    >>> y, s, qid = [1, 0, 0, 1, 0, 0], [0.9, 0.5, 0.1, 0.2, 0.8, 0.7], [1, 1, 1, 2, 2, 2]
    >>> average_rank(y, s, qid)  # ranks 1 and 3
    2.0
    >>> average_rank([0, 0], [0.5, 0.1])  # no relevant row: the cap
    31.0
    """
    owner = "average_rank"
    cap_int = check_k(cap, owner=owner, name="cap")
    karr = np.ones(1, dtype=np.int64)
    _, rank = _first_rank(owner, y_true, y_score, qid, karr, cap_int, ties, relevance_threshold)
    return rank if per_query else float(rank.mean())


# the %(name)s lines of the docstrings above: the shared entries of metrics/_docs.py
fill_doc(topk_counts, average_rank)
