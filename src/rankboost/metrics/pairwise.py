"""Pairwise metrics: ``disagreement`` (labels) and ``rloss`` (a feedback object).

A crucial pair is two rows of one query with different labels; it is misordered when the row
with the smaller label gets the larger score. Both metrics count tied crucial pairs with a
weight set by the tie policy: 1/2 under ``"expected"`` (a random tie-break misorders a tied
pair with probability 1/2), 1 under ``"pessimistic"`` (the training ranking loss of the paper's
theorems), 0 under ``"optimistic"``. Counting is O(n log n) per query by the shared kernel
``rankboost._kernels.pairwise``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._kernels.pairwise import graded_pair_errors
from .._validation import group_by_qid
from ._common import aggregate, check_choice, check_ranking_inputs

__all__ = ["disagreement", "rloss"]

TIE_WEIGHTS = {"expected": 0.5, "pessimistic": 1.0, "optimistic": 0.0}


def disagreement(
    y_true: ArrayLike,
    y_score: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    ties: str = "expected",
    per_query: bool = False,
) -> float | NDArray[np.float64]:
    """Fraction of crucial pairs misordered, averaged over queries that have a crucial pair.

    Per query: ``#{(x0, x1): y[x0] < y[x1], s[x0] > s[x1]} + w * #{... s[x0] == s[x1]}``
    divided by ``#{(x0, x1): y[x0] < y[x1]}``, with the tie weight ``w`` given by ``ties``.
    This is the paper's *disagreement* for the movie task (section 6.3), lower is better.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Graded labels (ratings); only their order within a query matters.
    y_score : array-like of shape (n_samples,)
        Predicted scores; higher ranks first.
    qid : array-like of shape (n_samples,), default=None
        Query id of each row, in any order. ``None`` means one query.
    ties : {"expected", "pessimistic", "optimistic", "stable"}, default="expected"
        Weight of a tied crucial pair: 1/2 (its expectation under random tie-breaking), 1, 0;
        ``"stable"`` breaks the tie by input order (the earlier row ranks higher).
    per_query : bool, default=False
        Return one value per query (sorted by query id) instead of the mean; a query without
        crucial pairs (e.g. a single row, or equal labels) is NaN there.

    Returns
    -------
    float or ndarray of shape (n_queries,)
        Mean disagreement over the queries with at least one crucial pair; 0.0 when no query
        has one (nothing can be misordered).

    References
    ----------
    .. [1] Y. Freund, R. Iyer, R. E. Schapire and Y. Singer, "An efficient boosting algorithm
       for combining preferences", JMLR 4, 2003, sections 2 and 6.3.

    Examples
    --------
    >>> from rankboost.metrics import disagreement
    >>> disagreement([2, 1, 0], [0.1, 0.5, 0.9])  # every one of the 3 pairs is misordered
    1.0
    >>> disagreement([1, 0], [0.5, 0.5])  # a tied pair counts 1/2
    0.5
    >>> disagreement([1, 0], [0.5, 0.5], ties="stable")  # the first row ranks higher
    0.0
    """
    labels, scores, codes = check_ranking_inputs(
        y_true, y_score, qid, ties=ties, owner="disagreement"
    )
    n = labels.shape[0]
    if ties == "stable":
        # Strictly decreasing surrogate scores along a stable sort: ties keep input order.
        rank_scores = np.empty(n, dtype=np.float64)
        rank_scores[np.argsort(-scores, kind="stable")] = -np.arange(n, dtype=np.float64)
        scores, weight = rank_scores, 0.0
    else:
        weight = TIE_WEIGHTS[ties]
    order, starts = group_by_qid(codes)
    errors, pairs = graded_pair_errors(scores, labels, order, starts, weight)
    defined = pairs > 0
    values = np.divide(errors, pairs, out=np.zeros_like(errors), where=defined)
    return aggregate(values, defined, empty="skip", per_query=per_query)


def rloss(scores: ArrayLike, feedback: Any, *, ties: str = "pessimistic") -> float:
    """D-weighted fraction of crucial pairs misordered by ``scores`` (the paper's rloss).

    ``rloss_D(H) = sum_{x0, x1} D(x0, x1) [[H(x1) <= H(x0)]]`` (Freund et al. 2003, eq. (1)),
    where ``D`` is the feedback's initial distribution over crucial pairs (``x1`` should rank
    above ``x0``). A thin wrapper over ``feedback.rloss(scores, tie_weight=...)``.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Predicted scores of the feedback's rows.
    feedback : PairFeedback, BipartiteFeedback or LayeredFeedback
        A feedback object of :mod:`rankboost.feedback` (anything with an
        ``rloss(scores, tie_weight=...)`` method).
    ties : {"pessimistic", "expected", "optimistic"}, default="pessimistic"
        Weight of a tied crucial pair: 1 (the paper's ``[[H(x1) <= H(x0)]]``, the loss the
        training bound controls), 1/2, or 0. ``"stable"`` is not defined for a feedback object
        (its pairs carry no row order) and raises a ``ValueError``.

    Returns
    -------
    float
        The weighted ranking loss, in ``[0, 1]``.

    References
    ----------
    .. [1] Y. Freund, R. Iyer, R. E. Schapire and Y. Singer, "An efficient boosting algorithm
       for combining preferences", JMLR 4, 2003, section 3, eq. (1).
    """
    if ties == "stable":
        raise ValueError(
            "The 'ties' parameter of rloss must be one of ['pessimistic', 'expected', "
            "'optimistic']; got 'stable' instead: a feedback object's crucial pairs carry no "
            "row order to break ties by. Use disagreement(..., ties='stable') on labels."
        )
    check_choice(ties, name="ties", allowed=tuple(TIE_WEIGHTS), owner="rloss")
    method = getattr(feedback, "rloss", None)
    if not callable(method):
        raise TypeError(
            "The 'feedback' parameter of rloss must be a rankboost.feedback object with an "
            f"rloss(scores, tie_weight=...) method; got {type(feedback).__name__} instead."
        )
    return float(method(scores, tie_weight=TIE_WEIGHTS[ties]))
