"""NDCG@k of every round at once, from the per-round scores of held-out queries (numba).

The pooled model's rounds are chosen on held-out users (:func:`._pooled.select_rounds`):
one boosting run per inner fold, then the held-out rows' score after every round
(``H_t = sum_{s <= t} alpha_s h_s``) and NDCG@k of each ``H_t`` in one kernel call, instead
of a metric call after every round. The value is the one :func:`rankboost.metrics.ndcg_score`
gives with its defaults (``gain="exp2"``, ``discount="log2"``, ``ties="expected"``,
``empty="zero"``): within a run of equal scores every position holds the run's mean gain in
expectation, so expected DCG@k sums ``mean gain x discount`` over the run's positions
before ``k``.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

__all__ = ["ndcg_per_round"]


@njit(cache=True)
def _ndcg_rounds(HT: np.ndarray, gain: np.ndarray, starts: np.ndarray, k: int) -> np.ndarray:
    n_rounds = HT.shape[0]
    n_q = starts.shape[0] - 1
    out = np.zeros((n_q, n_rounds))
    for q in range(n_q):
        a, b = starts[q], starts[q + 1]
        m = b - a
        kk = min(k, m)
        g = gain[a:b]
        ideal = -np.sort(-g)
        idcg = 0.0
        for p in range(kk):
            idcg += ideal[p] / np.log2(p + 2.0)
        if idcg <= 0.0:
            continue  # empty="zero"
        for t in range(n_rounds):
            s = HT[t, a:b]
            order = np.argsort(-s, kind="mergesort")
            dcg = 0.0
            i = 0
            while i < kk:
                j = i + 1
                total = g[order[i]]
                while j < m and s[order[j]] == s[order[i]]:
                    total += g[order[j]]
                    j += 1
                mean = total / (j - i)
                for p in range(i, min(j, kk)):
                    dcg += mean / np.log2(p + 2.0)
                i = j
            out[q, t] = dcg / idcg
    return out


def ndcg_per_round(
    H: NDArray[np.float64], labels: NDArray[np.float64], qid: NDArray[np.int64], k: int = 10
) -> NDArray[np.float64]:
    """Mean NDCG@k over queries of every column of ``H`` (rows grouped by ``qid``).

    ``H`` has shape ``(n_rows, n_rounds)``; ``labels`` are graded relevance (gain
    ``2**label - 1``); rows of one query must be contiguous. Returns shape ``(n_rounds,)``.
    """
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True]).astype(np.int64)
    gain = np.exp2(np.asarray(labels, dtype=np.float64)) - 1.0
    HT = np.ascontiguousarray(np.asarray(H, dtype=np.float64).T)
    return _ndcg_rounds(HT, gain, starts, int(k)).mean(axis=0)
