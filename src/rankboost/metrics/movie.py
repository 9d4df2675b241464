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
from ._docs import fill_doc

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
    %(y_true_good)s
    %(y_score)s
    %(qid_user)s
    %(ties_good)s
    %(relevance_threshold_good)s
    %(empty_good)s
    %(per_query)s

    Returns
    -------
    %(returns_good)s

    References
    ----------
    %(freund_2003)s

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
    %(y_true_good)s
    %(y_score)s
    %(qid_user)s
    %(ties_good)s
    %(relevance_threshold_good)s
    %(empty_good)s
    %(per_query)s

    Returns
    -------
    %(returns_good)s

    References
    ----------
    %(freund_2003)s

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
    %(y_true_good)s
    %(y_score)s
    %(qid_user)s
    %(ties_good)s
    %(relevance_threshold_good)s
    %(empty_good)s
    %(per_query)s

    Returns
    -------
    %(returns_good)s

    References
    ----------
    %(freund_2003)s

    Examples
    --------
    >>> from rankboost.metrics import expected_coverage
    >>> expected_coverage([1, 0, 1], [0.9, 0.8, 0.7])  # 2 / 3
    0.6666666666666666
    """
    args = (y_true, y_score, qid, None, ties, relevance_threshold, empty, per_query)
    return good_rank_metric(2, "expected_coverage", *args)


# the %(name)s lines of the docstrings above: the shared entries of metrics/_docs.py
fill_doc(expected_average_precision, expected_prot, expected_coverage)
