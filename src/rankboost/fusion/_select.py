"""How :class:`rankboost.fusion.auto.AutoFusion` scores its candidates on the inner folds.

A learned candidate (``linear``, ``boost``, ``boost_combsum``) is fitted once per inner fold
and prior scale with ``max_rounds`` rounds; the held-out NDCG@10 of every round count is read
off its staged scores (:func:`held_out_curves`), and :func:`read_curves` turns the folds' curves
into held-out values per query and the configuration of the refit. :func:`choose_family` applies
the standard-error rule. ``tests/test_fusion_auto_family.py`` checks the curves against
every configuration fitted anew.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .features import grades_for
from .run import Qrels, Run


def rows(qid: NDArray[Any], docid: NDArray[Any]) -> Any:
    from .features import FusionFeatures

    return FusionFeatures(np.empty((qid.shape[0], 0)), qid, docid, [])


def cut_runs(items: list[Run], queries: set[str]) -> list[Run]:
    keep = np.asarray(sorted(queries))
    out = []
    for r in items:
        m = np.isin(r.qid, keep)
        out.append(Run(r.qid[m], r.docid[m], r.rank[m], r.score[m], name=r.name))
    return out


#: The learned candidates: each has a grid of (prior scale, rounds) its own inner CV would
#: choose from; the family choice reads them off one fit per inner fold and prior scale.
LEARNED = ("linear", "boost", "boost_combsum")


def candidate_configs(name: str, max_rounds: int) -> list[tuple[float, int]]:
    """The ``(prior scale, rounds)`` a learned family chooses among, in its own tie order.

    ``linear``: :data:`rankboost.fusion.linear.PRIOR_SCALES` x 0..T (0 rounds: the prior
    alone); ``boost``: no prior, 1..T (as :func:`rankboost.fusion.cv_rounds`);
    ``boost_combsum``: :data:`rankboost.fusion.prior.PRIOR_SCALES` x 0..T. The first best
    wins, scale-major, as in :class:`LinearFusion` and :func:`rankboost.fusion.prior.cv_prior`.
    """
    from .linear import PRIOR_SCALES as LINEAR_SCALES
    from .prior import PRIOR_SCALES as BOOST_SCALES

    T = int(max_rounds)
    if name == "boost":
        return [(0.0, t) for t in range(1, T + 1)]
    scales = LINEAR_SCALES if name == "linear" else BOOST_SCALES
    return [(float(c), t) for c in scales for t in range(T + 1)]


def fit_config(  # noqa: PLR0917  (private; the configuration's pieces)
    name: str,
    items: list[Run],
    qrels: Qrels,
    scale: float,
    rounds: int,
    cv_folds: int,
    max_rounds: int,
) -> Any:
    """Candidate ``name`` fitted with a fixed prior scale and number of rounds (no inner CV).

    ``cv_folds`` and ``max_rounds`` are recorded in the model's parameters only.
    """
    import warnings

    from ..engine import TrainingStoppedWarning
    from .features import FusionWarning
    from .learned import RankFusion
    from .linear import LinearFusion

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FusionWarning)
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        if name == "linear":
            lin = LinearFusion(
                n_rounds=rounds, prior_scale=scale, cv_folds=cv_folds, max_rounds=max_rounds
            )
            return lin.fit(items, qrels)
        if name == "boost":
            return RankFusion(n_rounds=rounds, cv_folds=cv_folds, max_rounds=max_rounds).fit(
                items, qrels
            )
        # NOTE: 0 rounds (the prior alone) is trained as 1 round and used as 0, exactly as
        # RankFusion's own inner CV does when it chooses 0 (rankboost.fusion.prior.fit_prior)
        fusion = RankFusion(
            prior="combsum",
            n_rounds=max(rounds, 1),
            prior_scale=scale,
            cv_folds=cv_folds,
            max_rounds=max_rounds,
        ).fit(items, qrels)
        fusion.n_rounds_ = min(int(rounds), fusion.n_rounds_)
        return fusion


def staged_scores(
    name: str, tr_items: list[Run], va_items: list[Run], qrels: Qrels, scale: float, T: int
) -> tuple[Any, NDArray[np.float64]]:
    """``(rows, S)``: ``S[:, t]`` = the held-out scores after ``t`` rounds, ``t = 0..T``.

    One fit of ``T`` rounds on ``tr_items``; column ``t`` scores ``va_items`` as the family
    fitted with ``t`` rounds (:func:`fit_config`) would: boosting is greedy, so its first
    ``t`` rounds are that model, and a model that stopped early keeps its last rounds.
    """
    from .linear import LinearFusion, linear_features, weight_path
    from .prior import prior_scores

    if name == "linear":
        N, qid, docid = linear_features(tr_items, "minmax")
        y = grades_for(rows(qid, docid), qrels)
        qcode = np.unique(qid, return_inverse=True)[1].reshape(-1).astype(np.int64)
        lr = float(LinearFusion().learning_rate)  # the family at its defaults
        W = weight_path(N, y, qcode, scale, T, lr)
        W[~np.any(W > 0, axis=1)] = 1.0  # LinearFusion.fit: no weight > 0 -> equal weights
        W = W.astype(np.float32).astype(np.float64)  # as LinearFusion.weights_
        Nv, qv, dv = linear_features(va_items, "minmax")
        return rows(qv, dv), Nv @ W.T
    fusion = fit_config(name, tr_items, qrels, scale, T, 2, T)
    feats = fusion.features(va_items)
    S = np.zeros((feats.X.shape[0], T + 1))
    if name == "boost_combsum":
        S += scale * prior_scores(va_items, feats, "combsum")[:, None]
    n = int(fusion.n_rounds_)
    if n > 0:
        for t, h in enumerate(fusion.model_.staged_decision_function(feats.X), start=1):
            S[:, t] += h
            if t == n:
                break
    S[:, n + 1 :] = S[:, [n]]
    return feats, S


def held_out_curves(
    name: str, tr_items: list[Run], va_items: list[Run], qrels: Qrels, max_rounds: int
) -> tuple[list[str], NDArray[np.float64]]:
    """``(queries, P)``: ``P[k, j]`` = held-out NDCG@10 of query ``j``, configuration ``k``."""
    from ..metrics import ndcg_score

    configs = candidate_configs(name, max_rounds)
    rows: list[NDArray[np.float64]] = []
    qs: list[str] = []
    for scale in dict.fromkeys(c for c, _ in configs):
        feats, S = staged_scores(name, tr_items, va_items, qrels, scale, int(max_rounds))
        gain = np.maximum(grades_for(feats, qrels), 0)
        qs = np.unique(feats.qid).tolist()
        for c, t in configs:
            if c == scale:
                rows.append(np.asarray(ndcg_score(gain, S[:, t], feats.qid, k=10, per_query=True)))
    return qs, np.vstack(rows)


def read_curves(
    curves: list[tuple[list[str], NDArray[np.float64]]],
    configs: list[tuple[float, int]],
    per_q: dict[str, float],
) -> dict[str, Any]:
    """Fill ``per_q`` from one learned candidate's curves; its ``(scale, rounds)`` for the refit.

    Inner fold ``f`` is scored with the configuration the *other* folds' mean held-out
    NDCG@10 prefers (the first best), so none of its queries is evaluated in choosing it;
    the refit takes the first best of the mean over every fold (as the family's own inner
    CV would over these folds).
    """
    M = np.array([P.mean(axis=1) for _, P in curves])  # (fold, config) means
    for f, (qs_f, P) in enumerate(curves):
        k = int(np.argmax(np.delete(M, f, axis=0).mean(axis=0)))
        per_q.update(zip(qs_f, P[k].tolist(), strict=True))
    k = int(np.argmax(M.mean(axis=0)))
    return {"prior_scale": configs[k][0], "n_rounds": configs[k][1]}


def choose_family(
    per_q: dict[str, dict[str, float]], cands: list[str], fallback: str, threshold_se: float
) -> tuple[dict[str, dict[str, float]], str]:
    """The selection table (mean, difference to the fallback, its SE) and the chosen family."""
    qs = sorted(per_q[fallback])
    base = np.array([per_q[fallback][q] for q in qs])
    table: dict[str, dict[str, float]] = {}
    for c in cands:
        v = np.array([per_q[c][q] for q in qs])
        d = v - base
        se = float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else 0.0
        table[c] = {"mean": float(v.mean()), "diff": float(d.mean()), "se": se}
    best = max(cands, key=lambda c: (table[c]["mean"], -cands.index(c)))
    if best != fallback and table[best]["diff"] > threshold_se * table[best]["se"]:
        return table, best
    return table, fallback
