"""Discounted cumulative gain: ``dcg_score`` and ``ndcg_score`` (Järvelin & Kekäläinen, 2002).

Gain ``2**rel - 1`` (``gain="exp2"``, LETOR / Burges) or ``rel`` (``gain="linear"``,
trec_eval), discount ``1 / log2(1 + i)`` for rank ``i`` (``discount="log2"``) or the
LETOR 4.0 ``Eval-Score-4.0.pl`` discount (``discount="letor"``: 1 for ranks 1 and 2, then
``1 / log2(i)``). Under ``ties="expected"`` the value is the exact expectation over uniformly
random tie-breaking, by linearity (docs/metrics.md): an item of a tie block that occupies ranks
``R+1..R+Q`` sits at each of them with probability ``1/Q``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._conventions import DISCOUNTS, GAINS
from .._kernels.ranking_metrics import dcg_at_k, ideal_dcg_at_k, log2_discount
from ._common import EMPTY, Ranked, aggregate, check_choice, check_optional_k, rank_queries

__all__ = ["dcg_score", "ndcg_score"]

#: The largest label of the ``exp2`` gain (as LightGBM's default ``label_gain`` and XGBoost's
#: exponential NDCG gain): ``2**31 - 1`` is exact, and sums of such gains stay finite; beyond
#: it ``2**rel`` soon overflows float64 (``2**1024``) and NDCG would be NaN.
MAX_EXP2_LABEL = 31


def _discount(k: int, discount: str) -> NDArray[np.float64]:
    if discount == "log2":
        return log2_discount(k)
    ranks = np.arange(1, k + 1, dtype=np.float64)
    # Eval-Score-4.0.pl, sub DCG: position index iPos = rank - 1 < 2 gets discount 1,
    # later ones log(2) / log(iPos + 1) = 1 / log2(rank).
    out = np.ones(k, dtype=np.float64)
    out[2:] = 1.0 / np.log2(ranks[2:])
    return out


def _gains(labels: NDArray[np.float64], gain: str, owner: str) -> NDArray[np.float64]:
    if labels.size and labels.min() < 0:
        raise ValueError(
            f"{owner} needs non-negative relevance labels y_true (gains of negative labels are "
            f"undefined); got a minimum of {float(labels.min())!r}."
        )
    if gain == "exp2":
        if labels.size and labels.max() > MAX_EXP2_LABEL:
            raise ValueError(
                f"{owner} with gain='exp2' needs relevance labels y_true <= {MAX_EXP2_LABEL} "
                f"(gain 2**rel - 1, as LightGBM and XGBoost); got a maximum of "
                f"{float(labels.max())!r}. Pass gain='linear' for larger labels."
            )
        return np.exp2(labels) - 1.0
    return labels


def _dcg_parts(
    ranked: Ranked, k: int | None, gain: str, discount: str, owner: str, *, ideal: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per-query DCG@k and, if ``ideal``, IDCG@k (else an empty array)."""
    gains = _gains(ranked.labels, gain, owner)
    kk = ranked.max_query_size if k is None else min(k, ranked.max_query_size)
    disc = _discount(kk, discount)
    dcg = np.empty(ranked.n_queries, dtype=np.float64)
    dcg_at_k(gains, ranked.scores, ranked.starts, disc, ranked.expected, dcg)
    best = np.empty(ranked.n_queries if ideal else 0, dtype=np.float64)
    if ideal:
        ideal_dcg_at_k(gains, ranked.starts, disc, best)
    return dcg, best


def dcg_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    k: int | None = 10,
    ties: str = "expected",
    gain: str = "exp2",
    discount: str = "log2",
    per_query: bool = False,
) -> float | NDArray[np.float64]:
    """Discounted cumulative gain at rank ``k``, averaged over queries.

    ``DCG@k = sum_{i=1}^{k} gain(rel_i) * disc(i)`` with ``gain = 2**rel - 1`` (or ``rel``)
    and ``disc(i) = 1 / log2(1 + i)``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Non-negative graded relevance labels.
    y_score : array-like of shape (n_samples,)
        Predicted scores; higher ranks first.
    qid : array-like of shape (n_samples,), default=None
        Query id of each row, in any order. ``None`` means one query.
    k : int or None, default=10
        Rank cut-off; ``None`` uses the whole list.
    ties : {"expected", "pessimistic", "optimistic", "stable"}, default="expected"
        Equal scores: exact expectation under uniformly random tie-breaking, the worst or best
        order of the tied labels, or input order (earlier row first).
    gain : {"exp2", "linear"}, default="exp2"
        ``2**rel - 1`` (LETOR, LightGBM, XGBoost; labels up to ``MAX_EXP2_LABEL = 31``, a
        ``ValueError`` beyond) or ``rel`` (trec_eval, ranx ``ndcg``; any label).
    discount : {"log2", "letor"}, default="log2"
        ``1 / log2(1 + i)``, or LETOR 4.0's ``Eval-Score-4.0.pl`` (1 for ranks 1 and 2, then
        ``1 / log2(i)``).
    per_query : bool, default=False
        Return one value per query (sorted by query id) instead of the mean.

    Returns
    -------
    float or ndarray of shape (n_queries,)
        Mean DCG@k over queries, or the per-query values.

    References
    ----------
    .. [1] K. Järvelin and J. Kekäläinen, "Cumulated gain-based evaluation of IR techniques",
       ACM TOIS 20(4), 2002.

    Examples
    --------
    >>> from rankboost.metrics import dcg_score
    >>> round(dcg_score([2, 0, 1], [3.0, 2.0, 1.0]), 6)  # 3/1 + 0/log2(3) + 1/log2(4)
    3.5
    >>> round(dcg_score([1, 0], [1.0, 1.0], gain="linear"), 6)  # tie: (1 + 1/log2(3)) / 2
    0.815465
    """
    owner = "dcg_score"
    check_optional_k(k, owner=owner)
    check_choice(gain, name="gain", allowed=GAINS, owner=owner)
    check_choice(discount, name="discount", allowed=DISCOUNTS, owner=owner)
    ranked = rank_queries(y_true, y_score, qid, ties=ties, owner=owner)
    dcg, _ = _dcg_parts(ranked, k, gain, discount, owner, ideal=False)
    return dcg if per_query else float(dcg.mean())


def ndcg_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    k: int | None = 10,
    ties: str = "expected",
    gain: str = "exp2",
    discount: str = "log2",
    empty: str = "zero",
    per_query: bool = False,
) -> float | NDArray[np.float64]:
    """Normalised DCG at rank ``k``, averaged over queries.

    ``NDCG@k = DCG@k / IDCG@k`` where ``IDCG@k`` is the DCG@k of the labels sorted
    decreasingly. Under ``ties="expected"`` this is ``E[DCG@k] / IDCG@k``, the exact
    expectation (IDCG does not depend on the order). A query shorter than ``k`` uses all its
    rows in both DCG and IDCG.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Non-negative graded relevance labels.
    y_score : array-like of shape (n_samples,)
        Predicted scores; higher ranks first.
    qid : array-like of shape (n_samples,), default=None
        Query id of each row, in any order. ``None`` means one query.
    k : int or None, default=10
        Rank cut-off; ``None`` uses the whole list.
    ties : {"expected", "pessimistic", "optimistic", "stable"}, default="expected"
        Equal scores: exact expectation under uniformly random tie-breaking, the worst or best
        order of the tied labels, or input order (earlier row first).
    gain : {"exp2", "linear"}, default="exp2"
        ``2**rel - 1`` (LETOR, LightGBM, XGBoost; labels up to ``MAX_EXP2_LABEL = 31``, a
        ``ValueError`` beyond) or ``rel`` (trec_eval ``ndcg_cut``, ranx ``ndcg``; any
        label).
    discount : {"log2", "letor"}, default="log2"
        ``1 / log2(1 + i)``, or LETOR 4.0's ``Eval-Score-4.0.pl`` (1 for ranks 1 and 2, then
        ``1 / log2(i)``).
    empty : {"zero", "one", "skip"}, default="zero"
        Value of a query without any relevant row (IDCG = 0): 0 (LETOR 4.0 script, trec_eval,
        ranx, XGBoost ``ndcg@k-``), 1 (LightGBM ``ndcg``, XGBoost ``ndcg@k``), or left out of
        the mean (NaN in the per-query output; the mean is 0.0 if every query is left out).
    per_query : bool, default=False
        Return one value per query (sorted by query id) instead of the mean.

    Returns
    -------
    float or ndarray of shape (n_queries,)
        Mean NDCG@k over queries, or the per-query values. A one-row query scores 1 if its
        label is positive and ``empty`` otherwise.

    References
    ----------
    .. [1] K. Järvelin and J. Kekäläinen, "Cumulated gain-based evaluation of IR techniques",
       ACM TOIS 20(4), 2002.

    Examples
    --------
    >>> from rankboost.metrics import ndcg_score
    >>> y, s, qid = [2, 0, 1, 0, 0], [0.9, 0.8, 0.1, 0.5, 0.4], [1, 1, 1, 2, 2]
    >>> ndcg_score(y, s, qid, k=3, per_query=True).round(4)  # (3 + 1/2) / (3 + 1/log2(3))
    array([0.9639, 0.    ])
    >>> round(ndcg_score(y, s, qid, k=3, empty="one"), 4)
    0.982
    """
    owner = "ndcg_score"
    check_optional_k(k, owner=owner)
    check_choice(gain, name="gain", allowed=GAINS, owner=owner)
    check_choice(discount, name="discount", allowed=DISCOUNTS, owner=owner)
    check_choice(empty, name="empty", allowed=EMPTY, owner=owner)
    ranked = rank_queries(y_true, y_score, qid, ties=ties, owner=owner)
    dcg, best = _dcg_parts(ranked, k, gain, discount, owner, ideal=True)
    defined = best > 0.0
    values = np.divide(dcg, best, out=np.zeros_like(dcg), where=defined)
    return aggregate(values, defined, empty=empty, per_query=per_query)
