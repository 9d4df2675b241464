"""The paper's movie-recommendation metrics with exact expectations under random ties.

Freund et al. (2003), section 6.3 and Appendix A: with the good items ``t_1..t_K`` of a query
(``y_true >= relevance_threshold``) among ``N`` items,

* average precision ``AP = (1/K) sum_k k / rank(t_k)``,
* predicted rank of top ``PROT = 1 / rank(t_1)``,
* coverage ``K / rank(t_K)``.

When the predicted scores tie, the paper breaks ties uniformly at random and reports the exact
expectation, using the negative hypergeometric law (docs/metrics.md): for the ``k``-th good item
with ``R`` items and ``r`` good items strictly above it, in a tie block of ``Q`` items of which
``q`` are good, ``Pr[rank(t_k) = i] = C(i-R-1, k-r-1) C(Q-i+R, q-k+r) / C(Q, q)`` for
``i = R+1..R+Q``. Binomials are evaluated as ``exp`` of differences of ``log(n!)`` (from
``scipy.special.gammaln``); cost O(sum over tie blocks of ``Q * q``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._common import good_rank_metric

__all__ = ["expected_average_precision", "expected_coverage", "expected_prot"]


def expected_average_precision(
    y_true: ArrayLike,
    y_score: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    ties: str = "expected",
    relevance_threshold: float = 1,
    empty: str = "zero",
    per_query: bool = False,
) -> float | NDArray[np.float64]:
    """Compute the expected average precision ``E[(1/K) sum_k k / rank(t_k)]`` (paper Appendix A).

    Equal to :func:`average_precision` with the same arguments; this name follows the paper.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Ratings or relevance labels; an item is good when ``y_true >= relevance_threshold``.
    y_score : array-like of shape (n_samples,)
        Predicted scores; higher ranks first.
    qid : array-like of shape (n_samples,), default=None
        Query (user) id of each row, in any order. ``None`` means one query.
    ties : {"expected", "pessimistic", "optimistic", "stable"}, default="expected"
        ``"expected"`` is the paper's exact expectation under uniformly random tie-breaking;
        the others put good items last or first in their tie block, or keep input order.
    relevance_threshold : float, default=1
        Labels ``>=`` this value are good. For the paper's "top rating" choice pass the
        user's highest rating (per query, e.g. via a transformed ``y_true``).
    empty : {"zero", "one", "skip"}, default="zero"
        Value of a query without any good item: 0, 1, or left out of the mean (NaN per
        query; the mean is 0.0 if every query is left out).
    per_query : bool, default=False
        Return one value per query (sorted by query id) instead of the mean.

    Returns
    -------
    float or ndarray of shape (n_queries,)
        The mean over queries, or the per-query values.

    References
    ----------
    .. [1] Y. Freund, R. Iyer, R. E. Schapire and Y. Singer, "An efficient boosting algorithm
       for combining preferences", JMLR 4, 2003, section 6.3 and Appendix A.

    Examples
    --------
    >>> from rankboost.metrics import expected_average_precision
    >>> expected_average_precision([1, 0, 1], [0.9, 0.9, 0.1])  # (3/4 + 2/3) / 2
    0.7083333333333333
    """
    args = (y_true, y_score, qid, None, ties, relevance_threshold, empty, per_query)
    return good_rank_metric(0, "expected_average_precision", *args)


def expected_prot(
    y_true: ArrayLike,
    y_score: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    ties: str = "expected",
    relevance_threshold: float = 1,
    empty: str = "zero",
    per_query: bool = False,
) -> float | NDArray[np.float64]:
    """Compute the expected predicted rank of top, ``E[1 / rank(t_1)]`` (paper Appendix A).

    Equal to :func:`reciprocal_rank` without cut-off; this name follows the paper.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Ratings or relevance labels; an item is good when ``y_true >= relevance_threshold``.
    y_score : array-like of shape (n_samples,)
        Predicted scores; higher ranks first.
    qid : array-like of shape (n_samples,), default=None
        Query (user) id of each row, in any order. ``None`` means one query.
    ties : {"expected", "pessimistic", "optimistic", "stable"}, default="expected"
        ``"expected"`` is the paper's exact expectation under uniformly random tie-breaking;
        the others put good items last or first in their tie block, or keep input order.
    relevance_threshold : float, default=1
        Labels ``>=`` this value are good. For the paper's "top rating" choice pass the
        user's highest rating (per query, e.g. via a transformed ``y_true``).
    empty : {"zero", "one", "skip"}, default="zero"
        Value of a query without any good item: 0, 1, or left out of the mean (NaN per
        query; the mean is 0.0 if every query is left out).
    per_query : bool, default=False
        Return one value per query (sorted by query id) instead of the mean.

    Returns
    -------
    float or ndarray of shape (n_queries,)
        The mean over queries, or the per-query values.

    References
    ----------
    .. [1] Y. Freund, R. Iyer, R. E. Schapire and Y. Singer, "An efficient boosting algorithm
       for combining preferences", JMLR 4, 2003, section 6.3 and Appendix A.

    Examples
    --------
    >>> from rankboost.metrics import expected_prot
    >>> expected_prot([0, 1, 0, 1], [0.5, 0.5, 0.5, 0.5])  # 1/2 * 1 + 1/3 * 1/2 + 1/6 * 1/3
    0.7222222222222222
    """
    args = (y_true, y_score, qid, None, ties, relevance_threshold, empty, per_query)
    return good_rank_metric(1, "expected_prot", *args)


def expected_coverage(
    y_true: ArrayLike,
    y_score: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    ties: str = "expected",
    relevance_threshold: float = 1,
    empty: str = "zero",
    per_query: bool = False,
) -> float | NDArray[np.float64]:
    """Compute the expected coverage ``E[K / rank(t_K)]`` of the last good item (Appendix A).

    Coverage is 1 when the ``K`` good items fill the first ``K`` ranks.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Ratings or relevance labels; an item is good when ``y_true >= relevance_threshold``.
    y_score : array-like of shape (n_samples,)
        Predicted scores; higher ranks first.
    qid : array-like of shape (n_samples,), default=None
        Query (user) id of each row, in any order. ``None`` means one query.
    ties : {"expected", "pessimistic", "optimistic", "stable"}, default="expected"
        ``"expected"`` is the paper's exact expectation under uniformly random tie-breaking;
        the others put good items last or first in their tie block, or keep input order.
    relevance_threshold : float, default=1
        Labels ``>=`` this value are good. For the paper's "top rating" choice pass the
        user's highest rating (per query, e.g. via a transformed ``y_true``).
    empty : {"zero", "one", "skip"}, default="zero"
        Value of a query without any good item: 0, 1, or left out of the mean (NaN per
        query; the mean is 0.0 if every query is left out).
    per_query : bool, default=False
        Return one value per query (sorted by query id) instead of the mean.

    Returns
    -------
    float or ndarray of shape (n_queries,)
        The mean over queries, or the per-query values.

    References
    ----------
    .. [1] Y. Freund, R. Iyer, R. E. Schapire and Y. Singer, "An efficient boosting algorithm
       for combining preferences", JMLR 4, 2003, section 6.3 and Appendix A.

    Examples
    --------
    >>> from rankboost.metrics import expected_coverage
    >>> expected_coverage([1, 0, 1], [0.9, 0.8, 0.7])  # 2 / 3
    0.6666666666666666
    """
    args = (y_true, y_score, qid, None, ties, relevance_threshold, empty, per_query)
    return good_rank_metric(2, "expected_coverage", *args)
