"""The click fit's pieces: the log on the runs' rows, the pair potential, the families' fits.

What :func:`rankboost.fusion.clicks.fit_clicks` does, family by family (the module
docstring of :mod:`rankboost.fusion.clicks` says what and why).
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..model_selection import (
    FUSION_PRIOR_SCALES,
    LINEAR_PRIOR_SCALES,
    cross_validate,
    first_best_grid,
    held_out_curve,
    query_folds,
    staged_scores,
)
from .features import FusionWarning, RunsLike, as_run_list

__all__ = [
    "ClickTargets",
    "PairPotential",
    "boost_model",
    "click_folds",
    "click_targets",
    "fit_boost",
    "fit_linear",
    "linear_weights",
    "sub_pairs",
]

SHOW = 5  # how many offending items a message lists
#: What the inner folds of a click fit rank (:func:`click_targets`' ``held_out``).
HELD_OUT = ("all", "shown")


class ClickTargets(NamedTuple):
    """The click feedback on the rows of the runs (:func:`click_targets`).

    Rows are those of :func:`rankboost.fusion.linear.linear_features` (and of
    :func:`rankboost.fusion.fusion_features`, the same order).
    """

    #: ``(n_pairs, 2)`` rows ``(lower, upper)``: the clicked row should rank above the other
    pairs: NDArray[np.int64]
    #: ``(n_pairs,)`` summed inverse-propensity weights
    weights: NDArray[np.float64]
    #: ``(n_rows,)`` debiased click-through rate (0 where never shown): the held-out gain
    gain: NDArray[np.float64]
    #: ``(n_rows,)`` query code of every row, ``0..n_queries-1``
    qcode: NDArray[np.int64]
    qid: NDArray[np.str_]
    docid: NDArray[np.str_]
    #: the propensity the weights divide by (:class:`rankboost.clicks.Propensity`)
    propensity: Any
    n_sessions: int
    n_clicks: float
    #: which declared logging fusion served each session (:class:`Served`), None undeclared
    served: Any = None
    #: ``(n_rows,)`` the rows the inner folds rank (``held_out="shown"``: the documents the
    #: log showed), None for every row
    scored: Any = None

    def held(self, rows: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """The rows of ``rows`` that the held-out NDCG@10 ranks."""
        return rows if self.scored is None else rows & self.scored

    @property
    def labels(self) -> NDArray[np.float64]:
        """``log2(1 + gain)``: labels whose NDCG gain ``2**label - 1`` is ``gain``."""
        return np.log2(1.0 + self.gain)


class PairPotential:
    """RankBoost's potential of weighted pairs, for :func:`rankboost.fusion.linear.boost_path`.

    ``potential(F)[x]`` = the mass of ``D(x0, x1) ∝ w exp(F(x0) - F(x1))`` on the pairs with
    ``x`` above, minus the mass on those with ``x`` below (sums to 0); so ``r = h . pi``
    is the paper's ``r`` (Freund et al. 2003, section 3.2) for the pair feedback.
    """

    def __init__(self, pairs: NDArray[np.int64], weights: NDArray[np.float64], n_rows: int):
        self.lo, self.up = pairs[:, 0], pairs[:, 1]
        self.w, self.n = weights, int(n_rows)

    def potential(self, F: NDArray[np.float64]) -> NDArray[np.float64]:
        """``pi`` of every row under the scores ``F`` (shape ``(n_rows,)``)."""
        z = F[self.lo] - F[self.up]
        d = self.w * np.exp(z - z.max())
        d /= d.sum()
        pi = np.bincount(self.up, d, self.n) - np.bincount(self.lo, d, self.n)
        return np.asarray(pi, dtype=np.float64)


# ------------------------------------------------------------------ the log -> targets ---
def _read_log(clicks: Any) -> Any:
    from ..clicks._counts import ClickCounts
    from ..clicks._log import ClickLog
    from ..clicks._read import read_click_log

    if isinstance(clicks, ClickLog):
        return clicks
    if isinstance(clicks, ClickCounts):
        raise TypeError(
            "fit_clicks: clicks= must be a ClickLog (read_click_log) or a path; click counts "
            "are matched to feature rows already, not to the documents of the runs."
        )
    if isinstance(clicks, str) or hasattr(clicks, "__fspath__"):
        return read_click_log(clicks)
    raise TypeError(
        "fit_clicks: clicks= must be a rankboost.clicks.ClickLog or the path of a click log; "
        f"got {type(clicks).__name__}."
    )


def _auto_propensity(log: Any, N: NDArray[np.float64], served: Any = None, owner: str = "") -> Any:
    """``"auto"``: intervention harvesting when documents moved, else regression-EM on ``N``.

    With several logging fusions declared (``served``), harvesting is what they are for: when
    it cannot compare every position, a :class:`FusionWarning` says so before regression-EM.
    """
    from ..clicks._propensity import estimate_propensity

    assert log.row is not None  # matched by click_targets
    if served is not None and len(served.labels) > 1:
        try:
            return estimate_propensity(log, method="intervention_harvesting")
        except ValueError as exc:
            shares = ", ".join(
                f"{lab} {n:,.0f}" for lab, n in zip(served.labels, served.n_sessions, strict=True)
            )
            warnings.warn(
                f"{owner}: {len(served.labels)} logging fusions are declared (sessions served: "
                f"{shares}), but their lists give no intervention to harvest: {exc} The "
                "propensities are estimated by regression-EM on the runs' scores instead.",
                FusionWarning,
                stacklevel=4,
            )
            return estimate_propensity(log, N, method="regression_em")
    k = int(log.position.max())
    cells = np.unique(log.row * k + (log.position - 1))
    if np.unique(cells // k).size < cells.size:  # a document shown at two positions
        try:
            return estimate_propensity(log, method="intervention_harvesting")
        except ValueError:  # positions not linked to position 1: the features decide
            pass
    return estimate_propensity(log, N, method="regression_em")


def click_targets(
    runs: RunsLike,
    clicks: Any,
    *,
    propensity: Any = "auto",
    pairs: str = "all_shown",
    max_weight: float | None = 100.0,
    logged_by: Any = None,
    held_out: str = "all",
    owner: str = "fit_clicks",
) -> ClickTargets:
    """The click pairs and held-out gains of a log on the rows of ``runs``.

    Parameters
    ----------
    runs : list of Run or dict of str to Run
    clicks : ClickLog or path
        The log (:func:`rankboost.clicks.read_click_log`); every document it shows must be
        one the runs return for its query.
    propensity : "auto", "none", path, array-like or Propensity, default="auto"
        See the module docstring.
    pairs : str, default="all_shown"
        Pair extraction (:func:`rankboost.clicks.click_pairs`).
    max_weight : float, default=100.0
        Clip of the inverse propensities, also of the held-out gains.
    logged_by : str, path, fusion or list of them, default=None
        The fusion(s) that served the log (:mod:`rankboost.fusion._click_logged`): the log
        is checked against their lists on ``runs``; several (served A/B) make
        ``propensity="auto"`` harvest their interventions. None: not checked.
    held_out : {"all", "shown"}, default="all"
        What the inner folds rank by NDCG@10 when they choose the rounds, the prior's scale
        or the family: every document of the held-out queries, a document never shown
        counting as one with no click (``"all"``), or only the documents the log showed
        them, whose click-through rates are measured (``"shown"``: a document never shown
        is of unknown relevance, and left out).
    owner : str, default="fit_clicks"
        Named by the messages.

    Raises
    ------
    ValueError
        A document of the log that no run returns for its query (how many, which), a log
        without a click, no pair, a log the declared fusions did not serve.
    """
    from ..clicks._pairs import click_pairs, resolve_propensity
    from .linear import linear_features

    if held_out not in HELD_OUT:
        raise ValueError(f"{owner}: held_out must be 'all' or 'shown'; got {held_out!r}.")
    items = as_run_list(runs, owner)
    log = _read_log(clicks)
    N, qid, docid = linear_features(items, "minmax")
    try:
        log = log.match(qid, docid, what="the runs")
    except ValueError as exc:
        raise ValueError(
            f"{owner}: {exc} A fusion learns from the documents its runs return: pass the "
            "runs the logged fusion fused, as deep as the lists it showed."
        ) from None
    clicked_q = np.bincount(log.qid_code, weights=log.click * log.count)
    if not clicked_q.any():
        raise ValueError(
            f"{owner}: {log.source} has no click ({log.n_sessions} sessions); a fusion cannot "
            "be learned from it. Check the click column."
        )
    silent = np.flatnonzero(clicked_q == 0)
    if silent.size:
        names = ", ".join(map(str, log.qid_names[silent[:SHOW]]))
        more = f" and {silent.size - SHOW} more" if silent.size > SHOW else ""
        warnings.warn(
            f"{owner}: {silent.size} of the {clicked_q.size} queries of {log.source} have no "
            f"click ({names}{more}); they give no pair and are left out of training.",
            FusionWarning,
            stacklevel=3,
        )
    served = None
    if logged_by is not None:
        from ._click_logged import check_logged

        served = check_logged(log, logged_by, items, owner)
    if isinstance(propensity, str) and propensity == "auto":
        prop = _auto_propensity(log, N, served, owner)
    else:
        prop = resolve_propensity(log, propensity, N)
    p, w = click_pairs(log, prop, pairs=pairs, max_weight=max_weight)
    if p.shape[0] == 0:
        raise ValueError(
            f"{owner}: {log.source} yields no {pairs} pair (a click and another shown "
            "document of one session); the fusion needs at least one."
        )
    assert log.row is not None
    n = qid.shape[0]
    click_w = np.zeros(log.n_entries)
    on = log.click == 1
    click_w[on] = log.count[on] * prop.weights(log.position[on], max_weight)
    shown = np.bincount(log.row, weights=log.count, minlength=n)
    clicked = np.asarray(np.bincount(log.row, weights=click_w, minlength=n), dtype=np.float64)
    gain = np.divide(clicked, shown, out=np.zeros(n), where=shown > 0)
    qcode = np.unique(qid, return_inverse=True)[1].reshape(-1).astype(np.int64)
    scored = shown > 0 if held_out == "shown" else None
    return ClickTargets(
        p, w, gain, qcode, qid, docid, prop, log.n_sessions, log.n_clicks, served, scored
    )


# ------------------------------------------------------------------ rows and folds -------
def sub_pairs(t: ClickTargets, mask: NDArray[np.bool_]) -> tuple[NDArray[np.int64], Any]:
    """The pairs inside the rows of ``mask``, renumbered to them, and their weights."""
    keep = mask[t.pairs[:, 0]] & mask[t.pairs[:, 1]]
    new = np.cumsum(mask) - 1
    return new[t.pairs[keep]], t.weights[keep]


def click_folds(
    t: ClickTargets,
    rows: NDArray[np.bool_],
    cv_folds: int,
    owner: str,
    chosen: str = "the rounds and the prior's scale are",
) -> NDArray[np.int64]:
    """Inner folds of the clicked queries among ``rows`` (a click and a row without), else -1."""
    clicked = (t.gain[rows] > 0).astype(np.int64)
    try:
        sub = query_folds(clicked, t.qcode[rows], int(cv_folds), pair_labels=clicked)
    except ValueError:
        q = t.qcode[rows]
        n_click = np.bincount(q, weights=clicked)
        n_rows = np.bincount(q)
        usable = int(np.sum((n_click > 0) & (n_click < n_rows)))
        full = int(np.sum((n_click > 0) & (n_click == n_rows)))
        why = (
            f" ({full} other clicked queries have a click on every document the runs return, "
            "which leaves nothing to rank below it)"
            if full
            else ""
        )
        raise ValueError(
            f"{owner}: {chosen} chosen by {cv_folds}-fold cross-validation over the queries "
            f"with a click and a document without, which needs at least {cv_folds} of them; "
            f"the log has {usable}{why}. Pass an int number of rounds and a prior scale (or "
            "choose the family), or fewer folds (cv_folds, --cv-folds)."
        ) from None
    out = np.full(rows.shape[0], -1, dtype=np.int64)
    out[rows] = sub
    return out


# ------------------------------------------------------------------ linear ---------------
def linear_weights(
    lin: Any, H: NDArray[np.float64], t: ClickTargets, rows: NDArray[np.bool_], verbose: bool
) -> tuple[NDArray[np.float64], float, int]:
    """``(weights, prior scale, rounds)`` of ``lin`` (a LinearFusion) on the pairs of ``rows``.

    ``H`` = its unit scores of every row. The scale and rounds are chosen as
    :meth:`LinearFusion.fit` chooses them (:func:`rankboost.model_selection.first_best_grid`
    over held-out NDCG@10), the held-out gain being the click-through rates.
    """
    from .. import _compat
    from .linear import boost_path

    auto_scale = lin.prior_scale == "auto"
    scales = LINEAR_PRIOR_SCALES if auto_scale else (float(lin.prior_scale),)
    T = int(lin.max_rounds) if lin.n_rounds == "auto" else int(lin.n_rounds)
    lr, scale = float(lin.learning_rate), scales[0]
    labels = t.labels
    if lin.n_rounds == "auto" or auto_scale:
        fold = click_folds(t, rows, lin.cv_folds, "LinearFusion fit_clicks")
        memo: dict[str, Any] = {}

        def curve(train: NDArray[np.bool_], valid: NDArray[np.bool_], c: float) -> Any:
            valid = t.held(valid)
            if memo.get("train") is not train:  # one potential per fold, for every scale
                p, w = sub_pairs(t, train)
                memo.update(train=train, fb=PairPotential(p, w, int(train.sum())))
            W = boost_path(H[train], memo["fb"], c, T, lr)
            return held_out_curve((H[valid] @ W.T).T, labels[valid], t.qcode[valid])

        bar = _compat.progress_bar(
            total=int(lin.cv_folds), disable=not verbose, desc="inner CV folds", stacklevel=3
        )
        try:
            curves = cross_validate(fold, int(lin.cv_folds), scales, curve, progress=bar)
        finally:
            bar.close()
        s_best, T = first_best_grid(curves.mean(axis=0))
        scale = scales[s_best]
    p, w = sub_pairs(t, rows)
    W = boost_path(H[rows], PairPotential(p, w, int(rows.sum())), scale, T, lr)
    weights = W[-1]
    if not np.any(weights > 0):  # as LinearFusion.fit: no list helps, every list counts
        weights = np.ones_like(weights)
    return weights, float(scale), int(T)


def fit_linear(lin: Any, items: list[Any], t: ClickTargets, verbose: bool = False) -> Any:
    """A LinearFusion with ``lin``'s parameters, fitted on the click pairs."""
    from .linear import (
        FORMAT_NAME,
        FORMAT_VERSION,
        LinearFusion,
        check_same_queries,
        linear_features,
    )

    lin._check()
    check_same_queries(items, "LinearFusion fit_clicks")
    N = linear_features(items, lin.normalizer, lin.rank_constant)[0]
    rows = np.ones(N.shape[0], dtype=bool)
    weights, scale, T = linear_weights(lin, lin._unit(N), t, rows, verbose)
    return LinearFusion.from_dict(
        {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "params": lin.get_params(),
            "list_names": [r.name for r in items],
            "weights": weights.astype(np.float32).astype(np.float64).tolist(),
            "prior_scale": scale,
            "n_rounds": T,
        }
    )


# ------------------------------------------------------------------ boost ----------------
def boost_model(
    rf: Any,
    X: NDArray[np.float64],
    F0: NDArray[np.float64] | None,
    t: ClickTargets,
    rows: NDArray[np.bool_],
    verbose: bool = False,
) -> tuple[Any, int, float]:
    """``(RankBoostModel, rounds, prior scale)`` of ``rf`` (a RankFusion) on the pairs of ``rows``.

    ``F0``: the prior's scores of every row (None without a prior). The rounds (and scale)
    are chosen as :meth:`RankFusion.fit` chooses them, on held-out click-through rates.
    """
    from ..engine import TrainingStoppedWarning, train_checked
    from ..feedback import PairFeedback
    from ..params import ParameterError

    params = rf._params()
    T = int(params.n_rounds)
    labels = t.labels

    def train(mask: NDArray[np.bool_], c: float, p: Any) -> Any:
        pairs, w = sub_pairs(t, mask)
        return train_checked(
            np.ascontiguousarray(X[mask]),
            PairFeedback(pairs, w, n_samples=int(mask.sum())),
            p,
            feature_names=None,
            init_score=None if F0 is None else c * F0[mask],
            verbose=False,
        )

    if F0 is None:
        scales: tuple[float, ...] = (0.0,)
    elif rf.prior_scale == "auto":
        if rf.n_rounds != "auto":
            raise ParameterError(
                "prior_scale='auto' is chosen by the inner cross-validation of "
                "n_rounds='auto'; with an int n_rounds pass a float prior_scale."
            )
        scales = FUSION_PRIOR_SCALES
    else:
        scales = (float(rf.prior_scale),)
    scale, rounds = scales[0], T if rf.n_rounds == "auto" else int(rf.n_rounds)
    if rf.n_rounds == "auto":
        fold = click_folds(t, rows, rf.cv_folds, "RankFusion fit_clicks")

        def curve(tr: NDArray[np.bool_], va: NDArray[np.bool_], c: float) -> Any:
            va = t.held(va)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TrainingStoppedWarning)
                model = train(tr, c, params)
            base = None if F0 is None else c * F0[va]
            HT = staged_scores(model, X[va], T, base=base, start=1 if F0 is None else 0)
            return held_out_curve(HT, labels[va], t.qcode[va])

        curves = cross_validate(fold, int(rf.cv_folds), scales, curve).mean(axis=0)
        s_best, t_best = first_best_grid(curves)
        scale, rounds = scales[s_best], t_best + (1 if F0 is None else 0)
    if rounds == 0 and F0 is not None:  # the prior alone: the booster before its round 1
        from ..booster import Booster

        pairs, w = sub_pairs(t, rows)
        fb = PairFeedback(pairs, w, n_samples=int(rows.sum()))
        bst = Booster.from_checked(
            X[rows], fb, params.replace(n_rounds=1), None, init_score=scale * F0[rows]
        )
        return bst.model(), 0, float(scale)
    model = train(rows, scale, params.replace(n_rounds=int(rounds)))
    return model, min(int(rounds), int(model.n_rounds)), float(scale)


def fit_boost(rf: Any, items: list[Any], t: ClickTargets, verbose: bool = False) -> Any:
    """A RankFusion with ``rf``'s parameters, fitted on the click pairs."""
    from ._persist import FORMAT_NAME, FORMAT_VERSION
    from .learned import RankFusion
    from .prior import prior_scores

    rf._check_fusion_params()
    feats = rf.features(items)
    F0 = None if rf.prior is None else prior_scores(items, feats, rf.prior)
    rows = np.ones(feats.X.shape[0], dtype=bool)
    model, rounds, scale = boost_model(rf, feats.X, F0, t, rows, verbose)
    out = {
        "format": FORMAT_NAME,
        "version": 1 if rf.prior is None else FORMAT_VERSION,
        "params": rf.get_params(),
        "list_names": [r.name for r in items],
        "feature_names": list(feats.feature_names),
        "model": model.to_dict(),
    }
    if rf.prior is not None:
        out["prior_scale"], out["n_rounds"] = scale, rounds
    return RankFusion.from_dict(out)
