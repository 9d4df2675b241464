"""Shared plumbing of ``rankboost.metrics``: argument checks, grouping, aggregation.

Every public metric validates its input here, groups rows by query once (one ``lexsort`` by
query code, then decreasing score, then the tie policy's key) and hands contiguous sorted
arrays to the numba kernels of ``rankboost._kernels.ranking_metrics``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from .._conventions import EMPTY, TIES
from .._kernels.ranking_metrics import good_rank_metrics_kernel, rank_within_queries
from .._validation import check_labels, check_qid, check_scores

__all__ = [
    "EMPTY",
    "TIES",
    "Ranked",
    "aggregate",
    "check_choice",
    "check_ranking_inputs",
    "check_k",
    "check_optional_k",
    "check_threshold",
    "good_rank_metric",
    "good_rank_metrics",
    "log_factorials",
    "rank_queries",
]


def check_choice(value: Any, *, name: str, allowed: tuple[str, ...], owner: str) -> str:
    """Return ``value`` if it is one of ``allowed``; otherwise raise a ``ValueError``."""
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(
            f"The {name!r} parameter of {owner} must be one of {list(allowed)}; got {value!r} "
            "instead."
        )
    return value


def check_k(k: Any, *, owner: str, name: str = "k") -> int:
    """Return ``k`` as an int ``>= 1``."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise TypeError(
            f"The {name!r} parameter of {owner} must be an int >= 1; got {k!r} instead."
        )
    if k < 1:
        raise ValueError(f"The {name!r} parameter of {owner} must be >= 1; got {k!r} instead.")
    return int(k)


def check_optional_k(k: Any, *, owner: str, name: str = "k") -> int | None:
    """Return ``k`` as an int ``>= 1``, or ``None`` (no cut-off)."""
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise TypeError(
            f"The {name!r} parameter of {owner} must be an int >= 1 or None; got {k!r} instead."
        )
    return check_k(k, owner=owner, name=name)


def check_threshold(value: Any, *, owner: str) -> float:
    """Return ``relevance_threshold`` as a finite float."""
    try:
        out = float(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"The 'relevance_threshold' parameter of {owner} must be a number; got {value!r} "
            "instead."
        ) from exc
    if not np.isfinite(out):
        raise ValueError(
            f"The 'relevance_threshold' parameter of {owner} must be finite; got {value!r} instead."
        )
    return out


@dataclass(frozen=True)
class Ranked:
    """Rows grouped by query and sorted by decreasing score within each query.

    Attributes
    ----------
    labels, scores : ndarray of shape (n_samples,)
        Labels and scores in sorted order.
    starts : ndarray of shape (n_queries + 1,)
        Offsets of the queries (sorted by query id) into the sorted arrays.
    expected : bool
        ``True`` when equal scores must be treated as random tie blocks; ``False`` when the
        sorted order already breaks every tie (pessimistic, optimistic, stable).
    """

    labels: NDArray[np.float64]
    scores: NDArray[np.float64]
    starts: NDArray[np.int64]
    expected: bool

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return int(self.starts.shape[0] - 1)

    @property
    def max_query_size(self) -> int:
        """Size of the largest query."""
        return int(np.diff(self.starts).max())


def check_ranking_inputs(
    y_true: ArrayLike, y_score: ArrayLike, qid: ArrayLike | None, *, ties: str, owner: str
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """Validated ``(labels, scores, query codes)`` of a metric's arguments."""
    check_choice(ties, name="ties", allowed=TIES, owner=owner)
    labels = check_labels(y_true, name="y_true")
    n = labels.shape[0]
    if n == 0:
        raise ValueError(f"{owner} needs at least one row; got empty y_true.")
    scores = check_scores(y_score, name="y_score", n_samples=n)
    return labels, scores, check_qid(qid, n)


def rank_queries(
    y_true: ArrayLike, y_score: ArrayLike, qid: ArrayLike | None, *, ties: str, owner: str
) -> Ranked:
    """Validate inputs and sort rows by (query, decreasing score, tie policy)."""
    labels, scores, codes = check_ranking_inputs(y_true, y_score, qid, ties=ties, owner=owner)
    n = labels.shape[0]
    n_queries = int(codes.max()) + 1
    order = np.empty(n, dtype=np.int64)
    starts = np.empty(n_queries + 1, dtype=np.int64)
    # Secondary key inside a tie block: worst labels first ("pessimistic"), best labels
    # first ("optimistic"); otherwise input order ("stable"; irrelevant for "expected").
    secondary = -labels if ties == "optimistic" else labels
    # NOTE: a read-only array (pandas' copy-on-write columns, np.frombuffer) is another numba
    # type: the kernel (and _sort_rows, _before) would be compiled again for it, about 4 s.
    scores, secondary = (np.require(a, requirements="W") for a in (scores, secondary))
    rank_within_queries(
        codes, scores, secondary, ties in ("pessimistic", "optimistic"), n_queries, order, starts
    )
    sorted_scores = scores[order]
    if ties != "expected":
        # Every row becomes its own block: a strictly decreasing surrogate score.
        sorted_scores = -np.arange(n, dtype=np.float64)
    return Ranked(labels[order], sorted_scores, starts, ties == "expected")


def log_factorials(n: int) -> NDArray[np.float64]:
    """Return ``log(i!)`` for ``i = 0..n``."""
    return np.ascontiguousarray(gammaln(np.arange(n + 1, dtype=np.float64) + 1.0))


def good_rank_metrics(
    ranked: Ranked, relevance_threshold: float, cutoff: int | None
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """Per-query ``(AP, RR, coverage, number of good items)``; see the kernel's docstring."""
    good = ranked.labels >= relevance_threshold
    nq = ranked.n_queries
    ap = np.empty(nq, dtype=np.float64)
    rr = np.empty(nq, dtype=np.float64)
    cov = np.empty(nq, dtype=np.float64)
    n_good = np.empty(nq, dtype=np.int64)
    log_fact = log_factorials(ranked.max_query_size if ranked.expected else 1)
    good_rank_metrics_kernel(
        good,
        ranked.scores,
        ranked.starts,
        log_fact,
        np.iinfo(np.int64).max if cutoff is None else cutoff,
        ranked.expected,
        ap,
        rr,
        cov,
        n_good,
    )
    return ap, rr, cov, n_good


def good_rank_metric(  # noqa: PLR0913, PLR0917  the metric's own arguments, after which and whose
    which: int,
    owner: str,
    y_true: ArrayLike,
    y_score: ArrayLike,
    qid: ArrayLike | None,
    k: int | None,
    ties: str,
    relevance_threshold: float,
    empty: str,
    per_query: bool,
) -> float | NDArray[np.float64]:
    """AP (``which=0``), RR (1) or coverage (2) of :func:`good_rank_metrics`, averaged.

    The arguments checked, the metric computed and averaged: the body of
    ``average_precision``, ``reciprocal_rank`` and the paper's movie metrics (``owner``
    names the metric in errors).
    """
    cutoff = check_optional_k(k, owner=owner)
    check_choice(empty, name="empty", allowed=EMPTY, owner=owner)
    threshold = check_threshold(relevance_threshold, owner=owner)
    ranked = rank_queries(y_true, y_score, qid, ties=ties, owner=owner)
    *values, n_good = good_rank_metrics(ranked, threshold, cutoff)
    return aggregate(values[which], n_good > 0, empty=empty, per_query=per_query)


def aggregate(
    values: NDArray[np.float64], defined: NDArray[np.bool_], *, empty: str, per_query: bool
) -> float | NDArray[np.float64]:
    """Apply the ``empty`` policy to queries where ``defined`` is false, then average.

    ``"zero"``/``"one"`` give such queries the value 0/1; ``"skip"`` leaves them out of the
    mean and marks them NaN in the per-query array. When every query is skipped the mean is
    0.0 (documented in each metric).
    """
    out = np.array(values, dtype=np.float64, copy=True)
    undefined = ~defined
    if empty == "zero":
        out[undefined] = 0.0
    elif empty == "one":
        out[undefined] = 1.0
    else:
        out[undefined] = np.nan
    if per_query:
        return out
    if empty == "skip":
        kept = out[defined]
        return float(kept.mean()) if kept.size else 0.0
    return float(out.mean())
