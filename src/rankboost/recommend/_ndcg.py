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
def _top_rows(s: np.ndarray, kk: int, buf: np.ndarray) -> None:
    """The ``kk`` best rows of ``s`` into ``buf``, best first (ties: the earlier row)."""
    n = 0
    for r in range(s.shape[0]):
        v = s[r]
        if n == kk and v <= s[buf[kk - 1]]:
            continue
        p = n if n < kk else kk - 1
        while p > 0 and s[buf[p - 1]] < v:
            buf[p] = buf[p - 1]
            p -= 1
        buf[p] = r
        if n < kk:
            n += 1


@njit(cache=True)
def _expected_dcg(s: np.ndarray, g: np.ndarray, buf: np.ndarray, kk: int) -> float:
    """DCG@kk of the order in ``buf``, expected over ties.

    Each run of equal scores gives its positions its mean gain; the run at the cut (the
    ``kk``-th row's score) is completed over all of ``s``.
    """
    v = s[buf[kk - 1]]
    dcg = 0.0
    i = 0
    while s[buf[i]] != v:  # the runs above the cut lie inside buf
        j = i + 1
        total = g[buf[i]]
        while s[buf[j]] == s[buf[i]]:
            total += g[buf[j]]
            j += 1
        for p in range(i, j):
            dcg += total / (j - i) / np.log2(p + 2.0)
        i = j
    n_eq = 0
    g_eq = 0.0
    for r in range(s.shape[0]):
        if s[r] == v:
            n_eq += 1
            g_eq += g[r]
    for p in range(i, kk):
        dcg += g_eq / n_eq / np.log2(p + 2.0)
    return dcg


@njit(cache=True)
def _ndcg_rounds(HT: np.ndarray, gain: np.ndarray, starts: np.ndarray, k: int) -> np.ndarray:
    """NDCG@k of every query (rows ``starts[q]:starts[q+1]``) under every round's scores."""
    n_q = starts.shape[0] - 1
    out = np.zeros((n_q, HT.shape[0]))
    buf = np.empty(k, dtype=np.int64)
    for q in range(n_q):
        a, b = starts[q], starts[q + 1]
        kk = min(k, b - a)
        g = gain[a:b]
        ideal = -np.sort(-g)
        idcg = 0.0
        for p in range(kk):
            idcg += ideal[p] / np.log2(p + 2.0)
        if idcg <= 0.0:
            continue  # empty="zero"
        for t in range(HT.shape[0]):
            s = HT[t, a:b]
            _top_rows(s, kk, buf)
            out[q, t] = _expected_dcg(s, g, buf, kk) / idcg
    return out


def ndcg_per_round(
    HT: NDArray[np.float64], labels: NDArray[np.float64], qid: NDArray[np.int64], k: int = 10
) -> NDArray[np.float64]:
    """Mean NDCG@k over queries of every row of ``HT`` (one round's scores per row).

    ``HT`` has shape ``(n_rounds, n_rows)``; ``labels`` are graded relevance (gain
    ``2**label - 1``); rows of one query must be contiguous. Returns shape ``(n_rounds,)``.
    """
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True]).astype(np.int64)
    gain = np.exp2(np.asarray(labels, dtype=np.float64)) - 1.0
    HT = np.ascontiguousarray(HT, dtype=np.float64)
    return _ndcg_rounds(HT, gain, starts, int(k)).mean(axis=0)
