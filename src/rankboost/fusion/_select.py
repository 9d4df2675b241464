"""How :class:`rankboost.fusion.auto.AutoFusion` scores its candidates on the inner folds.

The weighted sums (``convex``, ``linear``, ``rrf``) read one table of rows built once for
all folds (:func:`sum_rows`: the runs coded as integers once, their normalised scores one
column per run); an inner fold is a slice of its rows by query, so no fold rebuilds the
rows from the runs' strings, and their cost grows linearly with the runs.

A learned candidate (``linear``, ``boost``, ``boost_combsum``) is fitted once per inner fold
and prior scale with ``max_rounds`` rounds (:func:`fold_scores`: the family's own method);
the held-out NDCG@10 of every query and round count is read off its staged scores
(:func:`held_out_curves`, with :func:`rankboost.model_selection.round_curves`). The folds'
curves become held-out values per query and the configuration of the refit by
:func:`rankboost.model_selection.cross_fitted_choice`, and the family is chosen by
:func:`rankboost.model_selection.standard_error_rule`. ``tests/test_fusion_auto_family.py``
checks the curves against every configuration fitted anew.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..model_selection import FUSION_PRIOR_SCALES, LINEAR_PRIOR_SCALES, round_curves, staged_scores
from .features import grades_for
from .run import Qrels, Run


def rows(qid: NDArray[Any], docid: NDArray[Any]) -> Any:
    from .features import FusionFeatures

    return FusionFeatures(np.empty((qid.shape[0], 0)), qid, docid, [])


def cut_runs(items: list[Run], queries: set[str]) -> list[Run]:
    """``items`` cut to ``queries`` (a run that keeps every entry is not copied)."""
    keep = np.asarray(sorted(queries))
    out = []
    for r in items:
        m = np.isin(r.qid, keep)
        out.append(r if m.all() else Run(r.qid[m], r.docid[m], r.rank[m], r.score[m], name=r.name))
    return out


class SumRows(NamedTuple):
    """The rows of the weighted-sum candidates, built once for every inner fold.

    The rows of :func:`rankboost.fusion.linear.linear_features` (one per (query, document)
    the runs return) with their grades; per normaliser asked for (``"minmax"``) the matrix
    ``N[d, i]`` of run ``i``'s normalised score (0 where it did not return the row), and
    ``rrf``, RRF's score of every row (``N @ 1`` of the ``"rrf"`` values; the matrix is not
    kept), when ``"rrf"`` is asked for.
    """

    qid: NDArray[np.str_]
    docid: NDArray[np.str_]
    y: NDArray[np.int64]
    N: dict[str, NDArray[np.float64]]
    rrf: NDArray[np.float64] | None


def sum_rows(items: list[Run], qrels: Qrels, norms: tuple[str, ...]) -> SumRows:
    """:class:`SumRows` of ``items``: the rows once, then one matrix per normaliser."""
    from .features import RRF_K, layout, normalise_scores

    lay = layout(items)

    def matrix(norm: str) -> NDArray[np.float64]:  # as linear_features(items, norm)
        N = np.zeros((lay.qid.shape[0], len(items)))
        for i, (r, idx) in enumerate(zip(items, lay.rows, strict=True)):
            N[idx, i] = normalise_scores(r, norm, k=RRF_K)
        return N

    # RRF's matrix first, reduced to its scores (from_weights' 1.0) before the next is built
    rrf = matrix("rrf") @ np.ones(len(items)) if "rrf" in norms else None
    out = {norm: matrix(norm) for norm in norms if norm != "rrf"}
    return SumRows(lay.qid, lay.docid, grades_for(rows(lay.qid, lay.docid), qrels), out, rrf)


def per_query_ndcg(
    qid: NDArray[np.str_], docid: NDArray[np.str_], F: NDArray[np.float64], qrels: Qrels
) -> dict[str, float]:
    """NDCG@10 of each query of the rows ``(qid, docid)`` fused by the scores ``F``.

    Over the returned documents, in the order of the fused run (``LinearFusion.fuse``).
    """
    from ..metrics import ndcg_score
    from .features import fused_run

    fused = fused_run(qid, docid, F, None)
    y = grades_for(rows(fused.qid, fused.docid), qrels)
    qs = np.unique(fused.qid)
    vals = ndcg_score(np.maximum(y, 0), fused.score, fused.qid, k=10, per_query=True)
    return dict(zip(qs.tolist(), np.asarray(vals).tolist(), strict=True))


def weight_paths(
    H: NDArray[np.float64],
    y: NDArray[np.int64],
    qcode: NDArray[np.int64],
    priors: tuple[float, ...],
    n_rounds: int,
    learning_rate: float,
) -> NDArray[np.float64]:
    """``weight_path`` of every prior at once: ``out[s]`` is the path of ``priors[s]``.

    The same rounds (the largest ``r``, its alpha, the stop when no ``r > 0`` is left), with
    the scores of every prior in one product per round (``H @ W.T`` and ``H.T @ Pi``: one
    pass over ``H`` instead of one per prior), so the sums may differ from
    those of :func:`rankboost.fusion.linear.weight_path` in the last bits: :func:`linear_curves`
    reads it past :data:`~rankboost.model_selection.CONVEX_GRID_MAX_RUNS` runs only.
    """
    from .linear import layered

    fb = layered(y, qcode)
    n_s, m = len(priors), H.shape[1]
    W = np.repeat(np.asarray(priors, dtype=np.float64)[:, None], m, axis=1)
    out = np.empty((n_s, n_rounds + 1, m))
    out[:, 0] = W
    live = np.ones(n_s, dtype=bool)
    for t in range(1, n_rounds + 1):
        F = H @ W.T  # (rows, priors)
        Pi = np.column_stack([fb.potential(F[:, s]) for s in range(n_s)])
        R = H.T @ Pi  # (lists, priors)
        for s in np.flatnonzero(live).tolist():
            i = int(np.argmax(R[:, s]))
            if not R[i, s] > 1e-12:  # no list orders the remaining mass better than at random
                out[s, t:] = W[s]
                live[s] = False
                continue
            ri = min(float(R[i, s]), 1.0 - 1e-12)
            W[s, i] += learning_rate * 0.5 * np.log((1.0 + ri) / (1.0 - ri))
            out[s, t] = W[s]
        if not live.any():
            break
    return out


def linear_curves(
    S: SumRows, train: NDArray[np.bool_], valid: NDArray[np.bool_], max_rounds: int
) -> tuple[list[str], NDArray[np.float64]]:
    """:func:`held_out_curves` of ``linear`` on the rows ``train`` and ``valid`` of ``S``.

    One weight path per prior scale on the training rows (:func:`rankboost.fusion.linear.
    weight_path`; past ``CONVEX_GRID_MAX_RUNS`` runs every scale's at once, ``weight_paths``);
    ``HT[t]`` scores the held-out rows as ``LinearFusion`` fitted with ``t``
    rounds would (its "no weight > 0" rule and float32 weights).
    """
    from ..model_selection import CONVEX_GRID_MAX_RUNS
    from .linear import LinearFusion, weight_path

    T = int(max_rounds)
    configs = candidate_configs("linear", T)
    N, y = S.N["minmax"][train], S.y[train]
    qcode = np.unique(S.qid[train], return_inverse=True)[1].reshape(-1).astype(np.int64)
    Nv, yv = S.N["minmax"][valid], S.y[valid]
    uq, qv = np.unique(S.qid[valid], return_inverse=True)
    lr = float(LinearFusion().learning_rate)  # the family at its defaults
    scales = tuple(dict.fromkeys(c for c, _ in configs))
    if N.shape[1] > CONVEX_GRID_MAX_RUNS:  # wide: every scale's path in one pass over N
        paths = list(weight_paths(N, y, qcode, scales, T, lr))
    else:
        paths = [weight_path(N, y, qcode, scale, T, lr) for scale in scales]
    blocks = []
    for scale, W in zip(scales, paths, strict=True):
        W[~np.any(W > 0, axis=1)] = 1.0  # LinearFusion.fit: no weight > 0 -> equal weights
        W = W.astype(np.float32).astype(np.float64)  # as LinearFusion.weights_
        per_query = round_curves((Nv @ W.T).T, yv, qv.reshape(-1))
        blocks.append(per_query[:, [t for c, t in configs if c == scale]].T)
    return uq.tolist(), np.vstack(blocks)


#: The learned candidates: each has a grid of (prior scale, rounds) its own inner CV would
#: choose from; the family choice reads them off one fit per inner fold and prior scale.
LEARNED = ("linear", "boost", "boost_combsum")


def candidate_configs(name: str, max_rounds: int) -> list[tuple[float, int]]:
    """The ``(prior scale, rounds)`` a learned family chooses among, in its own tie order.

    ``linear``: :data:`rankboost.model_selection.LINEAR_PRIOR_SCALES` x 0..T (0 rounds: the
    prior alone); ``boost``: no prior, 1..T (as :func:`rankboost.fusion.cv_rounds`);
    ``boost_combsum``: :data:`rankboost.model_selection.FUSION_PRIOR_SCALES` x 0..T. The
    first best wins, scale-major (:func:`rankboost.model_selection.first_best_grid`), as in
    :class:`LinearFusion` and :func:`rankboost.fusion.prior.cv_prior`.
    """
    T = int(max_rounds)
    if name == "boost":
        return [(0.0, t) for t in range(1, T + 1)]
    scales = LINEAR_PRIOR_SCALES if name == "linear" else FUSION_PRIOR_SCALES
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

    0 rounds of ``boost_combsum`` is the prior alone (``RankFusion(n_rounds=0)``, SPEC 7.2).
    ``cv_folds`` and ``max_rounds`` are recorded in the model's parameters only.
    """
    import warnings

    from ..engine import TrainingStoppedWarning
    from .features import FusionWarning
    from .learned import RankFusion
    from .linear import LinearFusion

    model: Any
    if name == "linear":
        model = LinearFusion(
            n_rounds=rounds, prior_scale=scale, cv_folds=cv_folds, max_rounds=max_rounds
        )
    elif name == "boost":
        model = RankFusion(n_rounds=rounds, cv_folds=cv_folds, max_rounds=max_rounds)
    else:
        model = RankFusion(
            prior="combsum",
            n_rounds=rounds,
            prior_scale=scale,
            cv_folds=cv_folds,
            max_rounds=max_rounds,
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FusionWarning)
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        return model.fit(items, qrels)


def fold_scores(
    name: str, tr_items: list[Run], va_items: list[Run], qrels: Qrels, scale: float, T: int
) -> tuple[Any, NDArray[np.float64]]:
    """``(rows, HT)``: ``HT[t]`` = the held-out scores after ``t`` rounds, ``t = 0..T``.

    ``name`` is a boosted candidate (``linear`` reads :func:`linear_curves`). One fit of
    ``T`` rounds on ``tr_items``; row ``t`` scores ``va_items`` as the family fitted with
    ``t`` rounds (:func:`fit_config`) would: boosting is greedy, so its first ``t`` rounds
    are that model, and a model that stopped early keeps its last rounds.
    """
    from .prior import prior_scores

    fusion = fit_config(name, tr_items, qrels, scale, T, 2, T)
    feats = fusion.features(va_items)
    base = scale * prior_scores(va_items, feats, "combsum") if name == "boost_combsum" else None
    return feats, staged_scores(fusion.model_, feats.X, T, base=base, start=0)


def held_out_curves(
    name: str, tr_items: list[Run], va_items: list[Run], qrels: Qrels, max_rounds: int
) -> tuple[list[str], NDArray[np.float64]]:
    """``(queries, P)``: ``P[k, j]`` = held-out NDCG@10 of query ``j``, configuration ``k``.

    ``name`` is a boosted candidate (``linear``: :func:`linear_curves`).
    """
    configs = candidate_configs(name, max_rounds)
    blocks: list[NDArray[np.float64]] = []
    qs: list[str] = []
    for scale in dict.fromkeys(c for c, _ in configs):
        feats, HT = fold_scores(name, tr_items, va_items, qrels, scale, int(max_rounds))
        uq, qcode = np.unique(feats.qid, return_inverse=True)
        per_query = round_curves(HT, grades_for(feats, qrels), qcode.reshape(-1))
        qs = uq.tolist()
        blocks.append(per_query[:, [t for c, t in configs if c == scale]].T)
    return qs, np.vstack(blocks)
