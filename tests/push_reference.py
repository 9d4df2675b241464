"""The P-Norm Push by brute force: every crucial pair, every round (issue 48).

Written straight from the objective (Rudin, "The P-Norm Push", JMLR 10 (2009), eq. (2.2)
with ``g = exp``; SPEC 7.3), with no factorisation (sums in log space, pair by pair, as
``L_k^p`` underflows):

    L_k(F) = sum_{(i, k): i above k} D(i, k) exp(F(k) - F(i)),   R_p(F) = sum_k L_k(F)^p.

The round's weights are the normalised gradient ``D_t(i, k) = L_k^{p-1} D(i, k)
exp(F(k) - F(i)) / R_p``; the potential ``pi(x) = sum D_t(x, .) - sum D_t(., x)`` (x as
the upper item minus x as the lower item); alpha is ``argmin R_p(F + alpha h)``, found by
bisection on the slope ``dR_p / dalpha`` (convex in alpha). Only for tiny problems.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from rankboost.alpha_rules import MAX_ALPHA


def layered_pairs(y, qid, normalize="query"):
    """``(upper, lower, D)`` of every crucial pair of graded labels, as LayeredFeedback's D."""
    y = np.asarray(y, dtype=float)
    qid = np.asarray(qid)
    up, lo, q_of = [], [], []
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        for i in rows:
            for k in rows:
                if y[i] > y[k]:
                    up.append(i)
                    lo.append(k)
                    q_of.append(q)
    q_of = np.asarray(q_of)
    if normalize == "pair":
        d = np.full(len(up), 1.0 / len(up))
    else:
        queries, counts = np.unique(q_of, return_counts=True)
        per = dict(zip(queries.tolist(), counts.tolist(), strict=True))
        d = np.array([1.0 / (len(queries) * per[q]) for q in q_of.tolist()])
    return np.asarray(up), np.asarray(lo), d


def log_losses(F, up, lo, d, n):
    """``log L_k`` of every row (-inf for a row that is no lower item), pair by pair."""
    terms = [[] for _ in range(n)]
    for i, k, w in zip(up, lo, d, strict=True):
        terms[k].append(np.log(w) + F[k] - F[i])
    return np.array([logsumexp(t) if t else -np.inf for t in terms])


def log_objective(F, up, lo, d, p):
    """``log R_p(F)``."""
    log_l = log_losses(F, up, lo, d, F.shape[0])
    return float(logsumexp(p * log_l[log_l > -np.inf]))


def objective(F, up, lo, d, p):
    """``R_p(F)`` (may underflow to 0: compare ``log_objective``)."""
    return float(np.exp(log_objective(F, up, lo, d, p)))


def _pair_weights(F, up, lo, d, p):
    """``D_t`` of every pair: ``L_k^{p-1} D(i, k) exp(F(k) - F(i)) / R_p``."""
    log_l = log_losses(F, up, lo, d, F.shape[0])
    log_r = logsumexp(p * log_l[log_l > -np.inf])
    return [
        np.exp((p - 1) * log_l[k] + np.log(w) + F[k] - F[i] - log_r)
        for i, k, w in zip(up, lo, d, strict=True)
    ]


def potential(F, up, lo, d, p):
    """The potential of the round's normalised push weights, pair by pair."""
    pi = np.zeros(F.shape[0])
    for i, k, dt in zip(up, lo, _pair_weights(F, up, lo, d, p), strict=True):
        pi[i] += dt
        pi[k] -= dt
    return pi


def slope(F, h, alpha, up, lo, d, p):
    """``dR_p(F + alpha h) / dalpha`` over ``R_p`` (the slope of ``log R_p``), pair by pair."""
    G = F + alpha * h
    weights = _pair_weights(G, up, lo, d, p)
    return sum(p * dt * (h[k] - h[i]) for i, k, dt in zip(up, lo, weights, strict=True))


def best_alpha(F, h, up, lo, d, p):
    """``argmin_alpha R_p(F + alpha h)`` in ``[-MAX_ALPHA, MAX_ALPHA]`` by bisection."""
    s0 = slope(F, h, 0.0, up, lo, d, p)
    if s0 == 0.0:
        return 0.0
    lo_a, hi_a = (0.0, MAX_ALPHA) if s0 < 0 else (-MAX_ALPHA, 0.0)
    for _ in range(200):
        mid = 0.5 * (lo_a + hi_a)
        if slope(F, h, mid, up, lo, d, p) < 0:
            lo_a = mid
        else:
            hi_a = mid
        if hi_a - lo_a < 1e-14:
            break
    return 0.5 * (lo_a + hi_a)
