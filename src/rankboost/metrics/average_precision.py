"""Average precision and reciprocal rank (AP, MAP, MRR).

With the relevant rows ``t_1..t_K`` of a query in rank order,
``AP = (1/K) sum_k k / rank(t_k)`` (the mean of the precisions at the ranks of the relevant
rows; trec_eval ``map``, ranx ``map``, LETOR ``MAP``) and ``RR = 1 / rank(t_1)`` (trec_eval
``recip_rank``, ranx ``mrr``; the paper's PROT). Under ``ties="expected"`` both are exact
expectations over uniformly random tie-breaking, computed with the negative hypergeometric law
of Freund et al. (2003), Appendix A (docs/metrics.md).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._common import good_rank_metric

__all__ = ["average_precision", "mean_average_precision", "reciprocal_rank"]


def average_precision(
    y_true: ArrayLike,
    y_score: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    k: int | None = None,
    ties: str = "expected",
    relevance_threshold: float = 1,
    empty: str = "zero",
    per_query: bool = False,
) -> float | NDArray[np.float64]:
    """Average precision of each query, averaged over queries (= MAP).

    ``AP@k = (1/K) sum_{k' : rank(t_k') <= k} k' / rank(t_k')`` where ``K`` is the number of
    relevant rows of the query (trec_eval ``map`` / ``map_cut_k`` convention: the denominator
    counts every relevant row, also those ranked below ``k``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance labels; a row is relevant when ``y_true >= relevance_threshold``.
    y_score : array-like of shape (n_samples,)
        Predicted scores; higher ranks first.
    qid : array-like of shape (n_samples,), default=None
        Query id of each row, in any order. ``None`` means one query.
    k : int or None, default=None
        Rank cut-off; ``None`` uses the whole list.
    ties : {"expected", "pessimistic", "optimistic", "stable"}, default="expected"
        Equal scores: exact expectation under uniformly random tie-breaking (negative
        hypergeometric law, paper Appendix A), relevant rows last or first in their tie block,
        or input order (earlier row first).
    relevance_threshold : float, default=1
        Labels ``>=`` this value are relevant.
    empty : {"zero", "one", "skip"}, default="zero"
        Value of a query without any relevant row: 0 (trec_eval, ranx, LETOR 4.0 script,
        XGBoost ``map-``), 1 (XGBoost ``map``), or left out of the mean (NaN per query; the
        mean is 0.0 if every query is left out).
    per_query : bool, default=False
        Return one value per query (sorted by query id) instead of the mean.

    Returns
    -------
    float or ndarray of shape (n_queries,)
        MAP, or the per-query AP. A one-row query scores 1 if it is relevant and ``empty``
        otherwise.

    See Also
    --------
    expected_average_precision : The same quantity under the paper's name.

    References
    ----------
    .. [1] Y. Freund, R. Iyer, R. E. Schapire and Y. Singer, "An efficient boosting algorithm
       for combining preferences", JMLR 4, 2003, section 6.3 and Appendix A.

    Examples
    --------
    >>> from rankboost.metrics import average_precision
    >>> round(average_precision([1, 0, 1], [0.9, 0.8, 0.7]), 6)  # (1/1 + 2/3) / 2
    0.833333
    >>> average_precision([0, 1], [0.5, 0.5])  # tie: (1/1 + 1/2) / 2
    0.75
    """
    args = (y_true, y_score, qid, k, ties, relevance_threshold, empty, per_query)
    return good_rank_metric(0, "average_precision", *args)


def mean_average_precision(
    y_true: ArrayLike,
    y_score: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    k: int | None = None,
    ties: str = "expected",
    relevance_threshold: float = 1,
    empty: str = "zero",
    per_query: bool = False,
) -> float | NDArray[np.float64]:
    """Mean over queries of the average precision (MAP); same as :func:`average_precision`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance labels; a row is relevant when ``y_true >= relevance_threshold``.
    y_score : array-like of shape (n_samples,)
        Predicted scores; higher ranks first.
    qid : array-like of shape (n_samples,), default=None
        Query id of each row, in any order. ``None`` means one query.
    k : int or None, default=None
        Rank cut-off; ``None`` uses the whole list.
    ties : {"expected", "pessimistic", "optimistic", "stable"}, default="expected"
        Tie policy, see :func:`average_precision`.
    relevance_threshold : float, default=1
        Labels ``>=`` this value are relevant.
    empty : {"zero", "one", "skip"}, default="zero"
        Value of a query without any relevant row, see :func:`average_precision`.
    per_query : bool, default=False
        Return one value per query (sorted by query id) instead of the mean.

    Returns
    -------
    float or ndarray of shape (n_queries,)
        MAP, or the per-query AP.

    Examples
    --------
    >>> from rankboost.metrics import mean_average_precision
    >>> mean_average_precision([1, 0, 0, 1], [0.9, 0.8, 0.7, 0.6], qid=[1, 1, 2, 2])  # (1 + 1/2)/2
    0.75
    """
    return average_precision(
        y_true,
        y_score,
        qid,
        k=k,
        ties=ties,
        relevance_threshold=relevance_threshold,
        empty=empty,
        per_query=per_query,
    )


def reciprocal_rank(
    y_true: ArrayLike,
    y_score: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    k: int | None = None,
    ties: str = "expected",
    relevance_threshold: float = 1,
    empty: str = "zero",
    per_query: bool = False,
) -> float | NDArray[np.float64]:
    """Reciprocal rank of the first relevant row, averaged over queries (= MRR).

    ``RR@k = 1 / rank(t_1)`` if ``rank(t_1) <= k`` and 0 otherwise. This is the paper's PROT
    (predicted rank of top), see :func:`expected_prot`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance labels; a row is relevant when ``y_true >= relevance_threshold``.
    y_score : array-like of shape (n_samples,)
        Predicted scores; higher ranks first.
    qid : array-like of shape (n_samples,), default=None
        Query id of each row, in any order. ``None`` means one query.
    k : int or None, default=None
        Rank cut-off; ``None`` uses the whole list.
    ties : {"expected", "pessimistic", "optimistic", "stable"}, default="expected"
        Equal scores: exact expectation ``E[1/rank(t_1)]`` under uniformly random
        tie-breaking, relevant rows last or first in their tie block, or input order.
    relevance_threshold : float, default=1
        Labels ``>=`` this value are relevant.
    empty : {"zero", "one", "skip"}, default="zero"
        Value of a query without any relevant row: 0 (trec_eval ``recip_rank``, ranx
        ``mrr``), 1, or left out of the mean (NaN per query).
    per_query : bool, default=False
        Return one value per query (sorted by query id) instead of the mean.

    Returns
    -------
    float or ndarray of shape (n_queries,)
        MRR, or the per-query reciprocal ranks.

    Examples
    --------
    >>> from rankboost.metrics import reciprocal_rank
    >>> reciprocal_rank([0, 1, 0, 0], [0.9, 0.8, 0.7, 0.6])
    0.5
    >>> round(reciprocal_rank([0, 1, 0], [0.5, 0.5, 0.5]), 6)  # (1 + 1/2 + 1/3) / 3
    0.611111
    """
    args = (y_true, y_score, qid, k, ties, relevance_threshold, empty, per_query)
    return good_rank_metric(1, "reciprocal_rank", *args)
