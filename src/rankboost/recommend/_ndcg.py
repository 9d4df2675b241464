"""NDCG@k of every round at once, from the per-round scores of held-out queries.

The pooled model's rounds are chosen on held-out users (:func:`._rounds.select_rounds`):
one boosting run per inner fold, then the held-out rows' score after every round
(``H_t = sum_{s <= t} alpha_s h_s``) and NDCG@k of each ``H_t`` in one kernel call, instead
of a metric call after every round. The value is the one :func:`rankboost.metrics.ndcg_score`
gives with its defaults (``gain="exp2"``, ``discount="log2"``, ``ties="expected"``,
``empty="zero"``): within a run of equal scores every position holds the run's mean gain in
expectation, so expected DCG@k sums ``mean gain x discount`` over the run's positions
before ``k`` (the kernel: ``_kernels.ranking_metrics.ndcg_rounds``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .._kernels.ranking_metrics import ndcg_rounds

__all__ = ["ndcg_per_query_round", "ndcg_per_round"]


def ndcg_per_round(
    HT: NDArray[np.float64], labels: NDArray[np.float64], qid: NDArray[np.int64], k: int = 10
) -> NDArray[np.float64]:
    """Mean NDCG@k over queries of every row of ``HT`` (one round's scores per row).

    ``HT`` has shape ``(n_rounds, n_rows)``; ``labels`` are graded relevance (gain
    ``2**label - 1``); rows of one query must be contiguous. Returns shape ``(n_rounds,)``.
    """
    return ndcg_per_query_round(HT, labels, qid, k).mean(axis=0)


def ndcg_per_query_round(
    HT: NDArray[np.float64], labels: NDArray[np.float64], qid: NDArray[np.int64], k: int = 10
) -> NDArray[np.float64]:
    """NDCG@k of every query (row) after every round (column): shape ``(n_queries, n_rounds)``.

    As :func:`ndcg_per_round` before the mean, so blocks of whole queries can be scored one
    after another and their rows stacked.
    """
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True]).astype(np.int64)
    gain = np.exp2(np.asarray(labels, dtype=np.float64)) - 1.0
    HT = np.ascontiguousarray(HT, dtype=np.float64)
    return ndcg_rounds(HT, gain, starts, int(k))
