"""Ranking metrics with explicit tie policies (docs/metrics.md).

Every metric takes flat arrays ``y_true``, ``y_score`` and an optional per-row ``qid`` (any
order), and returns the mean over queries (``per_query=True`` gives one value per query in
sorted query-id order). ``ties`` chooses how equal scores are ordered: ``"expected"`` (default:
the exact expectation under uniformly random tie-breaking, Freund et al. 2003, Appendix A),
``"pessimistic"``, ``"optimistic"`` or ``"stable"`` (input order). See ``docs/metrics.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach
from ._registry import CONVENTIONS, METRICS, MetricInfo, conventions, evaluate, parse_metric
from .average_precision import average_precision, mean_average_precision, reciprocal_rank
from .metasearch import average_rank, topk_counts
from .movie import expected_average_precision, expected_coverage, expected_prot
from .ndcg import dcg_score, ndcg_score
from .pairwise import disagreement, rloss
from .precision import precision_at_k

if TYPE_CHECKING:
    from ._scorer import RankingScorer, make_scorer


__all__ = [
    "CONVENTIONS",
    "METRICS",
    "MetricInfo",
    "RankingScorer",
    "average_precision",
    "average_rank",
    "conventions",
    "dcg_score",
    "disagreement",
    "evaluate",
    "expected_average_precision",
    "expected_coverage",
    "expected_prot",
    "make_scorer",
    "mean_average_precision",
    "ndcg_score",
    "parse_metric",
    "precision_at_k",
    "reciprocal_rank",
    "rloss",
    "topk_counts",
]

# the scikit-learn scorers are imported on first use (``rankboost evaluate`` needs no sklearn)
__getattr__, __dir__ = attach(__name__, __all__)
