"""Boosting from a prior ranking function (SPEC 7.2): round 0 *is* an unsupervised fusion.

The final function is ``c F_0 + sum_t alpha_t h_t`` with ``F_0`` a fixed fusion of the input
lists (``"combsum"``: CombSUM of min-max normalised scores, a list that did not return the
document adding 0; ``"rrf"``: ``sum_i (k + 1) / (k + rank_i)``, RRF with k = 60 rescaled so
that a first place is worth 1). Boosting minimises ``sum D(x0, x1) exp((cF_0 + H)(x0) -
(cF_0 + H)(x1))``, so round 1 starts from ``D_1(x0, x1) ∝ D(x0, x1) exp(c F_0(x0) - c F_0(x1))``
(SPEC 7.2). The scale ``c`` matters (``exp(c F_0)``) and is chosen with the number of rounds
by inner cross-validation over the training queries (:func:`cv_prior`, on
:mod:`rankboost.model_selection`), 0 rounds allowed (the prior's ranking), ``c = 0`` being
boosting from scratch. :func:`fit_prior` returns what it learned (:class:`PriorFit`);
:class:`~rankboost.fusion.RankFusion` assigns it.

The engine starts from the prior itself (``init_score = c F_0``, :func:`rankboost.train`),
so the layered feedback keeps its O(n) form; :func:`prior_feedback` writes the same first
distribution as explicit weighted pairs, the reference the tests compare it with.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..model_selection import FUSION_PRIOR_SCALES, cross_validate, first_best_grid, query_folds
from .features import RRF_K, FusionFeatures

__all__ = ["PRIORS", "PriorFit", "cv_prior", "fit_prior", "prior_feedback", "prior_scores"]

PRIORS = ("combsum", "rrf")


def prior_scores(runs: list[Any], feats: FusionFeatures, prior: str) -> NDArray[np.float64]:
    """``F_0`` of every row of ``feats`` (the rows of :func:`fusion_features` of ``runs``)."""
    from .features import layout, normalise_scores

    if prior not in PRIORS:
        raise ValueError(f"prior must be None or one of {PRIORS}; got {prior!r}.")
    F0 = np.zeros(feats.X.shape[0])
    for r, idx in zip(runs, layout(runs).rows, strict=True):  # the rows of feats
        if prior == "combsum":
            v = normalise_scores(r, "minmax")
        else:
            v = normalise_scores(r, "rrf") * (RRF_K + 1.0)
        np.add.at(F0, idx, v)
    return F0


def prior_feedback(
    y: NDArray[np.int64], qcode: NDArray[np.int64], F0: NDArray[np.float64], scale: float
) -> Any:
    """The crucial pairs (lower, upper) with weights ``c_q exp(scale (F0(lower) - F0(upper)))``."""
    from ..feedback import PairFeedback

    order = np.lexsort((y, qcode))
    starts = np.flatnonzero(np.r_[True, qcode[order][1:] != qcode[order][:-1]])
    ends = np.r_[starts[1:], order.shape[0]]
    lows: list[NDArray[np.int64]] = []
    ups: list[NDArray[np.int64]] = []
    mass: list[NDArray[np.float64]] = []
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):  # one step per query
        rows = order[a:b]
        g = y[rows]
        lo, up = np.nonzero(g[:, None] < g[None, :])
        if lo.shape[0] == 0:
            continue
        lows.append(rows[lo])
        ups.append(rows[up])
        mass.append(np.full(lo.shape[0], 1.0 / lo.shape[0]))
    if not lows:
        raise ValueError("no judged query has two different grades among the returned documents")
    lo_all, up_all, w = np.concatenate(lows), np.concatenate(ups), np.concatenate(mass)
    z = scale * (F0[lo_all] - F0[up_all])
    w = w * np.exp(z - z.max())  # the engine normalises D: a common factor does not matter
    return PairFeedback(np.column_stack([lo_all, up_all]), w, n_samples=y.shape[0])


def cv_prior(
    X: NDArray[np.float64],
    y: NDArray[np.int64],
    qid: NDArray[Any],
    F0: NDArray[np.float64],
    params: Any,
    scales: tuple[float, ...],
    make_feedback: Any,
    *,
    cv_folds: int = 5,
    seed: int = 0,
    progress: Any = None,
) -> dict[str, Any]:
    """Choose the prior's scale and the rounds (0 allowed) by inner CV over queries (NDCG@10).

    The folds, the curves and the first-best rule (scale-major: on equal values the first
    scale, then the fewest rounds) are :mod:`rankboost.model_selection`'s; each fold and
    scale trains one model (:func:`rankboost.fusion.cv.boosted_curve`). Returns ``{"scale",
    "n_rounds", "best_score", "mean", "scales"}``: ``mean[s, t]`` is the mean held-out
    NDCG@10 of ``scales[s] F_0 + H_t`` (``t = 0`` the prior alone).
    """
    from .cv import boosted_curve

    _, qcode = np.unique(np.asarray(qid), return_inverse=True)
    qcode = qcode.reshape(-1).astype(np.int64)
    fold = query_folds(y, qcode, cv_folds, seed=seed)
    curve = boosted_curve(X, y, qcode, params, make_feedback, F0)
    curves = cross_validate(fold, cv_folds, scales, curve, progress=progress).mean(axis=0)
    s_best, t_best = first_best_grid(curves)
    return {
        "scale": float(scales[s_best]),
        "n_rounds": int(t_best),
        "best_score": float(curves[s_best, t_best]),
        "mean": curves,
        "scales": list(scales),
    }


class PriorFit(NamedTuple):
    """What :func:`fit_prior` learned; :class:`~rankboost.fusion.RankFusion` assigns it."""

    #: ``H``, trained from ``init_score = prior_scale F_0`` (no round when ``n_rounds`` is 0)
    model: Any
    #: the rounds of ``model`` the fusion uses (0: the prior alone)
    n_rounds: int
    #: ``c`` of ``c F_0``
    prior_scale: float
    #: :func:`cv_prior`'s result (``n_rounds="auto"``), else None
    cv_results: dict[str, Any] | None


def fit_prior(  # type: ignore[no-untyped-def]  # noqa: PLR0917  private, one caller (RankFusion.fit): its validated pieces
    fusion: Any, items, feats, judged, X, yj, qj, params, train_kwargs, progress=None
) -> PriorFit:
    """Fit ``c F_0 + H``: the scale and rounds by inner CV, then the model on all rows.

    Reads ``fusion``'s parameters, writes nothing of it. 0 rounds (chosen, or
    ``n_rounds=0``) is the prior's ranking (SPEC 7.2): the model has no round.
    """
    from ..engine import train_checked
    from ..params import ParameterError

    F0 = prior_scores(items, feats, str(fusion.prior))[judged]
    cv_results = None
    if fusion.n_rounds == "auto":
        auto = fusion.prior_scale == "auto"
        scales = FUSION_PRIOR_SCALES if auto else (float(fusion.prior_scale),)
        cv_results = cv_prior(
            X,
            yj,
            qj,
            F0,
            params,
            scales,
            fusion._feedback,
            cv_folds=int(fusion.cv_folds),
            progress=progress,
        )
        scale, rounds = cv_results["scale"], cv_results["n_rounds"]
    else:
        if fusion.prior_scale == "auto":
            raise ParameterError(
                "prior_scale='auto' is chosen by the inner cross-validation of "
                "n_rounds='auto'; with an int n_rounds pass a float prior_scale."
            )
        scale, rounds = float(fusion.prior_scale), int(fusion.n_rounds)
    feedback = fusion._feedback(yj, qj)
    if rounds == 0:  # the prior alone: the booster before its first round
        from ..booster import Booster

        one = params.replace(n_rounds=1)  # the model's params as a 1-round fit records them
        bst = Booster.from_checked(X, feedback, one, feats.feature_names, init_score=scale * F0)
        model = bst.model()
    else:
        model = train_checked(
            X,
            feedback,
            params.replace(n_rounds=rounds),
            callbacks=train_kwargs.get("callbacks"),
            feature_names=feats.feature_names,
            verbose=bool(train_kwargs.get("verbose", False)),
            stacklevel=5,
            init_score=scale * F0,
        )
    return PriorFit(model, min(int(rounds), int(model.n_rounds)), float(scale), cv_results)
