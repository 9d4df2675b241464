"""``push="auto"``: the P-Norm Push's ``p`` chosen on held-out queries.

:class:`rankboost.RankBoostRanker` (``push="auto"``) and ``rankboost train --push auto``
call :func:`choose_push` from :func:`rankboost._fit.fit_ranker`, before the final fit:

* **candidates**: :data:`rankboost.model_selection.PUSH_EXPONENTS` (1, 2, 4, 8, 16), every
  other parameter as given;
* **held-out queries**: the fit's validation set when it has one (the last ``eval_set``,
  the one early stopping follows; ``--valid``), each candidate trained on all the training
  rows; else :data:`~rankboost.model_selection.PUSH_CV_FOLDS` inner folds of whole training
  queries (:func:`rankboost.model_selection.query_folds`, seed 0), each candidate trained on
  the other folds and every usable query held out once;
* **score**: each held-out query's NDCG@10 (:func:`rankboost.model_selection.round_curves`:
  ``ndcg_score``'s defaults) at the round count the fit uses: ``n_rounds``, or with early
  stopping each candidate's first best round on the validation set;
* **rule**: :func:`rankboost.model_selection.standard_error_rule` with ``p = 1`` (RankBoost)
  as the fallback: a ``p > 1`` replaces it only when its mean per-query gain exceeds
  :data:`~rankboost.model_selection.PUSH_THRESHOLD_SE` standard errors of the paired
  differences (AutoFusion's rule), since on the LETOR collections no ``p > 1`` was better
  (docs/variants.md, "The P-Norm Push").

The choice is returned as a :class:`PushChoice`; the fit stores it in the model's
``params["push_auto"]`` (saved with the model, shown by ``rankboost info``) and the
estimator in ``push_`` and ``push_selection_``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._compat import Steps
from ._validation import check_qid
from .engine import TrainingStoppedWarning, train_checked
from .model_selection import (
    PUSH_CV_FOLDS,
    PUSH_EXPONENTS,
    PUSH_THRESHOLD_SE,
    first_best,
    held_out_curve,
    query_folds,
    round_curves,
    staged_scores,
    standard_error_rule,
)
from .params import ParameterError, TrainParams

__all__ = ["PushChoice", "choose_push", "is_auto"]

#: ``make_feedback(rows)``: the fit's feedback on the training rows selected by ``rows``
MakeFeedback = Callable[[NDArray[np.bool_]], Any]


def is_auto(value: Any) -> bool:
    """Whether ``value`` is ``"auto"`` (a parameter the adapter chooses on held-out data)."""
    return isinstance(value, str) and value == "auto"


def _name(p: float) -> str:
    return f"{p:g}"


@dataclass
class PushChoice:
    """What :func:`choose_push` chose, and on what.

    Attributes
    ----------
    push : float
        The chosen ``p``.
    held_out : str
        ``"validation set"`` or ``"K inner folds"``.
    n_queries : int
        The held-out queries the candidates were compared on.
    table : dict
        Per candidate (``"1"``, ``"2"``, ...): its mean held-out NDCG@10 (``"mean"``), its
        mean difference to ``p = 1`` over the same queries (``"diff"``) and that
        difference's standard error (``"se"``).
    rounds : dict
        Per candidate: the round count its score was read at.
    """

    push: float
    held_out: str
    n_queries: int
    table: dict[str, dict[str, float]]
    rounds: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the model's ``params["push_auto"]``, the estimator's ``push_selection_``)."""
        return {
            "chosen": float(self.push),
            "grid": [float(p) for p in PUSH_EXPONENTS],
            "held_out": self.held_out,
            "n_queries": int(self.n_queries),
            "rule": f"p = 1 unless another p beats it by more than {PUSH_THRESHOLD_SE:g} "
            "standard errors of the per-query NDCG@10 differences",
            "ndcg@10": {k: round(v["mean"], 6) for k, v in self.table.items()},
            "diff": {k: round(v["diff"], 6) for k, v in self.table.items()},
            "se": {k: round(v["se"], 6) for k, v in self.table.items()},
            "rounds": dict(self.rounds),
        }

    def summary(self) -> str:
        """One line: the choice, the held-out means and the rule."""
        means = ", ".join(f"p={k} {v['mean']:.4f}" for k, v in self.table.items())
        return (
            f"push auto chose p = {self.push:g} by held-out NDCG@10 on the {self.held_out} "
            f"({self.n_queries} queries: {means}); p = 1 is kept unless another p beats it by "
            f"more than {PUSH_THRESHOLD_SE:g} standard errors"
        )


def _check(params: TrainParams, owner: str) -> None:
    """The parameters every candidate ``p > 1`` needs (alpha and criterion for ``R_p``)."""
    if params.alpha in ("exact", "rbplus") or params.criterion == "exact_z":
        raise ParameterError(
            f"{owner}: push='auto' tries p in {', '.join(map(_name, PUSH_EXPONENTS))}, and a "
            f"p > 1 minimises R_p; alpha={params.alpha!r} with criterion="
            f"{params.criterion!r} is for RankBoost's Z only. Use alpha='r' or 'line_search' "
            "and criterion='abs_r' or 'r', or a float push."
        )


def _fit(
    X: NDArray[np.float64],
    feedback: Any,
    params: TrainParams,
    p: float,
    init_score: NDArray[np.float64] | None,
) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        return train_checked(
            np.ascontiguousarray(X), feedback, params.replace(push=p), init_score=init_score
        )


def _values(
    model: Any,
    X: NDArray[np.float64],
    y: NDArray[np.float64],
    qcode: NDArray[np.int64],
    T: int,
    best_round: bool,
    base: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], int]:
    """Per-query NDCG@10 of the held-out rows at round ``T`` (or the first best round)."""
    if not best_round:
        HT = model.decision_function(X)[None, :]
        if base is not None:
            HT = HT + base
        return round_curves(HT, y, qcode)[:, 0], T
    HT = staged_scores(model, X, T)
    t = first_best(held_out_curve(HT, y, qcode))
    return round_curves(HT[t : t + 1], y, qcode)[:, 0], t + 1


def choose_push(
    X: NDArray[np.float64],
    y: NDArray[np.float64],
    qid: Any,
    params: TrainParams,
    make_feedback: MakeFeedback,
    *,
    valid: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]] | None = None,
    early_stopping: bool = False,
    init_score: NDArray[np.float64] | None = None,
    pair_labels: NDArray[Any] | None = None,
    verbose: bool = False,
    owner: str = "RankBoostRanker",
) -> PushChoice:
    """Choose the P-Norm Push's ``p`` on held-out queries (module docstring).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The checked training features.
    y : ndarray of shape (n_samples,)
        Grades (the held-out NDCG@10's gains ``2**y - 1``).
    qid : array-like of shape (n_samples,) or None
        Query of each training row.
    params : TrainParams
        The fit's parameters (``push`` is replaced by each candidate).
    make_feedback : callable
        ``make_feedback(rows)``: the fit's feedback on the training rows ``rows`` (a mask).
    valid : (X, y, qcode), default=None
        The validation set (checked, query codes); None: inner folds of the training queries.
    early_stopping : bool, default=False
        Score each candidate at its first best validation round instead of ``n_rounds``.
    init_score : ndarray of shape (n_samples,), default=None
        The prior ``F0`` of the training rows (inner folds only).
    pair_labels : ndarray of shape (n_samples,), default=None
        The labels the feedback orders (``query_folds``'); None = ``y``.
    verbose : bool, default=False
        Show a progress bar over the candidate fits.
    owner : str, default="RankBoostRanker"
        Named in error messages.

    Returns
    -------
    PushChoice
    """
    _check(params, owner)
    T = int(params.n_rounds)
    names = [_name(p) for p in PUSH_EXPONENTS]
    per_q: dict[str, dict[str, float]] = {n: {} for n in names}
    rounds: dict[str, int] = {}
    if valid is not None:
        steps = Steps(len(names), disable=not verbose, desc="push='auto'")
        Xv, yv, qv = valid
        everything = np.ones(X.shape[0], dtype=bool)
        feedback = make_feedback(everything)
        for p, n in zip(PUSH_EXPONENTS, names, strict=True):
            steps.start(f"p={n} on the validation set")
            model = _fit(X, feedback, params, p, init_score)
            values, rounds[n] = _values(model, Xv, yv, qv, T, early_stopping)
            per_q[n] = {str(q): v for q, v in enumerate(values.tolist())}
            steps.done()
        held_out = "validation set"
    else:
        qcode = check_qid(qid, X.shape[0])
        labels = np.unique(y if pair_labels is None else pair_labels, return_inverse=True)[1]
        fold = query_folds(
            labels.reshape(-1),
            qcode,
            PUSH_CV_FOLDS,
            owner="push='auto'",
            chooses="p",
            instead="a float push (push=1.0, --push 1)",
        )
        steps = Steps(PUSH_CV_FOLDS * len(names), disable=not verbose, desc="push='auto'")
        for f in range(PUSH_CV_FOLDS):
            train, held = (fold >= 0) & (fold != f), fold == f
            feedback = make_feedback(train)
            prior = None if init_score is None else init_score[train]
            base = None if init_score is None else init_score[held]
            uq = np.unique(qcode[held])
            for p, n in zip(PUSH_EXPONENTS, names, strict=True):
                steps.start(f"fold {f + 1}/{PUSH_CV_FOLDS}, p={n}")
                model = _fit(X[train], feedback, params, p, prior)
                values, rounds[n] = _values(model, X[held], y[held], qcode[held], T, False, base)
                per_q[n].update(zip(map(str, uq.tolist()), values.tolist(), strict=True))
                steps.done()
        held_out = f"{PUSH_CV_FOLDS} inner folds"
    steps.close()
    table, best = standard_error_rule(per_q, names, names[0], PUSH_THRESHOLD_SE)
    push = PUSH_EXPONENTS[names.index(best)]
    return PushChoice(push, held_out, len(per_q[names[0]]), table, rounds)
