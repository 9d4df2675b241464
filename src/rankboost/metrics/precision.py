"""Precision at a rank cut-off: ``precision_at_k``.

``P@k = (number of relevant rows among the first k) / k`` (trec_eval ``P_k``, ranx
``precision@k``, LETOR ``P@k``): the denominator is always ``k``, also for a query with fewer
than ``k`` rows. Under ``ties="expected"`` the value is the exact expectation by linearity
(docs/metrics.md): a relevant row of a tie block at ranks ``R+1..R+Q`` is within the first ``k``
with probability ``(min(R+Q, k) - R) / Q``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._kernels.ranking_metrics import dcg_at_k
from ._common import EMPTY, aggregate, check_choice, check_k, check_threshold, rank_queries
from ._docs import fill_doc

__all__ = ["precision_at_k"]


def precision_at_k(
    y_true: ArrayLike,
    y_score: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    k: int = 10,
    ties: str = "expected",
    relevance_threshold: float = 1,
    empty: str = "zero",
    per_query: bool = False,
) -> float | NDArray[np.float64]:
    """Fraction of relevant rows among the ``k`` best-scored rows, averaged over queries.

    Parameters
    ----------
    %(y_true)s
    %(y_score)s
    %(qid)s
    k : int, default=10
        Rank cut-off; the denominator is ``k`` even for queries shorter than ``k``.
    ties : {"expected", "pessimistic", "optimistic", "stable"}, default="expected"
        Equal scores: exact expectation under uniformly random tie-breaking, relevant rows
        last or first in their tie block, or input order (earlier row first).
    relevance_threshold : float, default=1
        Labels ``>=`` this value are relevant (trec_eval ``relevance_level``).
    empty : {"zero", "one", "skip"}, default="zero"
        Value of a query without any relevant row: 0 (its natural value; trec_eval, ranx and
        the LETOR 4.0 script average it in), 1, or left out of the mean (NaN per query).
    %(per_query)s

    Returns
    -------
    float or ndarray of shape (n_queries,)
        Mean P@k over queries, or the per-query values.

    Examples
    --------
    >>> from rankboost.metrics import precision_at_k
    >>> precision_at_k([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.6], k=2)
    0.5
    >>> precision_at_k([1, 0], [0.5, 0.5], k=1)  # tie: the relevant row is first half the time
    0.5
    """
    owner = "precision_at_k"
    k_int = check_k(k, owner=owner)
    check_choice(empty, name="empty", allowed=EMPTY, owner=owner)
    threshold = check_threshold(relevance_threshold, owner=owner)
    ranked = rank_queries(y_true, y_score, qid, ties=ties, owner=owner)
    good = (ranked.labels >= threshold).astype(np.float64)
    hits = np.empty(ranked.n_queries, dtype=np.float64)
    ones = np.ones(min(k_int, ranked.max_query_size), dtype=np.float64)
    dcg_at_k(good, ranked.scores, ranked.starts, ones, ranked.expected, hits)
    defined = np.add.reduceat(good, ranked.starts[:-1]) > 0
    return aggregate(hits / k_int, defined, empty=empty, per_query=per_query)


# the %(name)s lines of the docstrings above: the shared entries of metrics/_docs.py
fill_doc(precision_at_k)
