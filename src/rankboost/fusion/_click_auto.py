""":class:`~rankboost.fusion.AutoFusion` on a click log: the family chosen on held-out clicks.

The candidates of :data:`rankboost.fusion.auto.CANDIDATES` are scored on inner folds of the
clicked queries (:func:`rankboost.fusion.clicks.click_folds`): each is fitted on the other
folds' click pairs (a learned family with its own inner cross-validation, as when fitted
alone: a nested cross-validation, since the click pairs are few per query) and scores the
held-out queries by NDCG@10 with the debiased click-through rates as gains. The choice is
:func:`rankboost.model_selection.standard_error_rule`'s, as for qrels; the chosen family is
refitted on every click pair. Runs that do not cover the same queries leave the weighted
sums out (:data:`rankboost.fusion.auto.SAME_QUERIES`), with a :class:`FusionWarning`.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..model_selection import round_curves, standard_error_rule
from ._click_fit import (
    ClickTargets,
    boost_model,
    click_folds,
    fit_boost,
    fit_linear,
    linear_weights,
)
from .features import FusionWarning

__all__ = ["fit_auto"]


class _Candidates:
    """Every candidate's scores on held-out rows after a fit on training rows."""

    def __init__(self, auto: Any, items: list[Any], t: ClickTargets) -> None:
        from .learned import RankFusion
        from .linear import LinearFusion, linear_features
        from .prior import prior_scores

        self.t, self.items = t, items
        self.N = linear_features(items, "minmax")[0]
        self.Nrrf = linear_features(items, "rrf")[0]
        k, T = int(auto.cv_folds), int(auto.max_rounds)
        self.lin = LinearFusion(max_rounds=T, cv_folds=k)
        self.rf = RankFusion(max_rounds=T, cv_folds=k)
        self.rf_prior = RankFusion(prior="combsum", max_rounds=T, cv_folds=k)
        feats = self.rf.features(items)
        self.X, self.F0 = feats.X, prior_scores(items, feats, "combsum")

    def scores(self, name: str, tr: NDArray[np.bool_], va: NDArray[np.bool_]) -> Any:
        from .auto import convex_weights

        t = self.t
        labels: Any = t.labels  # gains as labels (convex_weights reads them as grades)
        if name == "rrf":
            return self.Nrrf[va].sum(axis=1)
        if name == "convex":
            on = tr & (self._clicked())
            w: Any = convex_weights(self.N[on], labels[on], t.qid[on])[0]
            return self.N[va] @ w
        if name == "linear":
            w = linear_weights(self.lin, self.N, t, tr, False)[0]
            return self.N[va] @ w.astype(np.float32).astype(np.float64)
        prior = name == "boost_combsum"
        rf = self.rf_prior if prior else self.rf
        model, rounds, scale = boost_model(rf, self.X, self.F0 if prior else None, t, tr)
        H = model.decision_function(self.X[va], n_rounds=rounds) if rounds > 0 else 0.0
        return (scale * self.F0[va] if prior else 0.0) + H

    def _clicked(self) -> NDArray[np.bool_]:
        """Rows of the queries with a click (the convex weights are tuned on those)."""
        q = np.zeros(int(self.t.qcode.max()) + 1, dtype=bool)
        q[self.t.qcode[self.t.gain > 0]] = True
        return q[self.t.qcode]

    def refit(self, name: str) -> Any:
        from .auto import convex_weights
        from .linear import LinearFusion

        names = [r.name for r in self.items]
        if name == "rrf":
            return LinearFusion.from_weights(names, np.ones(len(names)), normalizer="rrf")
        if name == "convex":
            on = self._clicked()
            labels: Any = self.t.labels
            w = convex_weights(self.N[on], labels[on], self.t.qid[on])[0]
            return LinearFusion.from_weights(names, w)
        if name == "linear":
            return fit_linear(self.lin, self.items, self.t)
        return fit_boost(self.rf_prior if name == "boost_combsum" else self.rf, self.items, self.t)


def fit_auto(auto: Any, items: list[Any], t: ClickTargets, verbose: bool = False) -> Any:
    """An AutoFusion with ``auto``'s parameters, its family chosen and fitted on clicks."""
    from .. import _compat
    from .auto import SAME_QUERIES, AutoFusion

    owner = "AutoFusion fit_clicks"
    cands = auto._check()
    fallback, left_out = auto.fallback, []
    covered = [set(r.queries) for r in items]
    if not all(qs == covered[0] for qs in covered[1:]):
        left_out = [c for c in cands if c in SAME_QUERIES]
        cands = [c for c in cands if c not in SAME_QUERIES]
        if not cands:
            raise ValueError(
                f"{owner}: the runs cover different queries, and the candidates {left_out} are "
                "weighted sums that need runs of the same queries; add 'boost' or "
                "'boost_combsum', or cut the runs to the queries every one covers."
            )
        if fallback in left_out:
            fallback = "boost" if "boost" in cands else cands[0]
        warnings.warn(
            f"the runs cover different queries: {', '.join(left_out)} are left out of the "
            f"family choice and the fallback is {fallback}.",
            FusionWarning,
            stacklevel=3,
        )
    rows = np.ones(t.qcode.shape[0], dtype=bool)
    k = int(auto.cv_folds)
    fold = click_folds(t, rows, k, owner, "the family is")
    box = _Candidates(auto, items, t)
    labels = t.labels
    uq = np.unique(t.qid)
    per_q: dict[str, dict[str, float]] = {c: {} for c in cands}
    steps = _compat.Steps(k * len(cands) + 1, disable=not verbose, desc="family choice")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FusionWarning)
        for f in range(k):
            tr, va = (fold >= 0) & (fold != f), t.held(fold == f)
            qs = uq[np.unique(t.qcode[va])]
            for c in cands:
                steps.start(f"fold {f + 1}/{k}, {c}")
                s = np.asarray(box.scores(c, tr, va), dtype=np.float64)
                vals = round_curves(s[None, :], labels[va], t.qcode[va])[:, 0]
                per_q[c].update(zip(qs.tolist(), vals.tolist(), strict=True))
                steps.done()
        table, family = standard_error_rule(per_q, cands, fallback, float(auto.threshold_se))
        steps.start(f"refit {family} on all queries")
        model = box.refit(family)
        steps.close()
    selection = {
        "family": family,
        "rule": f"{auto.threshold_se} standard errors over the fallback",
        "fallback": fallback,
        "left_out": left_out,
        "cv_folds": k,
        "n_queries": len(per_q[fallback]),
        "candidates": table,
        "configs": {},
        "feedback": "clicks: held-out NDCG@10 with the debiased click-through rates as gains",
        "params": {
            name: (list(v) if isinstance(v, tuple) else v) for name, v in auto.get_params().items()
        },
    }
    return AutoFusion.from_dict({**model.to_dict(), "selection": selection})
