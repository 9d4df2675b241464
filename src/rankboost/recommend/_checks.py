"""Validation of the recommender's parameters (the error names the parameter)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..params import TRAIN_PARAMS, TrainParams, make_params
from ._base import BASE_RECOMMENDERS
from ._per_user import EXTRA, PAIR_WEIGHTS, UNRATED, Design
from ._pooled import FEEDBACK

_INVALID = ("raise", "skip")
_MODES = ("pooled", "per_user")


def _is_int(v: Any, low: int) -> bool:
    return bool(not isinstance(v, bool) and isinstance(v, (int, np.integer)) and v >= low)


def _is_positive(v: Any) -> bool:
    """A finite number > 0 (not a bool)."""
    return bool(
        not isinstance(v, bool)
        and isinstance(v, (int, float, np.number))
        and np.isfinite(v)
        and v > 0
    )


def _check_pooled(rec: Any) -> None:
    """Validate the pooled model's own parameters (the error names the parameter)."""
    names = rec.base_recommenders
    names = (names,) if isinstance(names, str) else tuple(names)
    if not names or len(set(names)) != len(names) or any(n not in BASE_RECOMMENDERS for n in names):
        raise ValueError(
            "RankBoostRecommender.base_recommenders must be distinct names among "
            f"{BASE_RECOMMENDERS}; got {rec.base_recommenders!r}."
        )
    checks = (
        ("prior", rec.prior in (None, "ease"), '"ease" or None'),
        (
            "prior_scale",
            rec.prior_scale is None or _is_positive(rec.prior_scale),
            "None or a number > 0",
        ),
        (
            "ease_lambda",
            isinstance(rec.ease_lambda, str)
            and rec.ease_lambda == "auto"
            or _is_positive(rec.ease_lambda),
            '"auto" or a number > 0',
        ),
        ("feedback", rec.feedback in FEEDBACK, f"one of {FEEDBACK}"),
        ("n_folds", _is_int(rec.n_folds, 2), "an int >= 2"),
        (
            "inner_folds",
            rec.inner_folds is None or _is_int(rec.inner_folds, 2),
            "None or an int >= 2",
        ),
        ("refit", isinstance(rec.refit, (bool, np.bool_)), "True or False"),
        ("random_state", _is_int(rec.random_state, 0), "an int >= 0"),
        ("negatives", _is_positive(rec.negatives), "a number > 0"),
    )
    for name, ok, allowed in checks:
        if not ok:
            raise ValueError(
                f"RankBoostRecommender.{name} must be {allowed}; got {getattr(rec, name)!r}."
            )
    if rec.prior == "ease" and "ease" not in names and rec.feedback != "ratings":
        raise ValueError(
            'RankBoostRecommender.prior="ease" boosts from the EASE score, but "ease" is not '
            f"in base_recommenders={rec.base_recommenders!r}: add it, or pass prior=None."
        )


def check_params(rec: Any) -> TrainParams:
    """Validate the parameters; return the training ones (:mod:`rankboost.params`)."""
    aliases = {"n_rounds": "n_estimators"}
    values = {
        q.name: getattr(rec, aliases.get(q.name, q.name))
        for q in TRAIN_PARAMS
        if hasattr(rec, aliases.get(q.name, q.name))
    }
    if values["thresholds"] is None:
        values["thresholds"] = "all" if rec.mode == "per_user" else 255
    params = make_params("RankBoostRecommender", aliases, **values)
    if rec.mode not in _MODES:
        raise ValueError(f"RankBoostRecommender.mode must be one of {_MODES}; got {rec.mode!r}.")
    if rec.mode == "pooled":
        _check_pooled(rec)
    if rec.invalid_targets not in _INVALID:
        raise ValueError(
            f"RankBoostRecommender.invalid_targets must be one of {_INVALID}; got "
            f"{rec.invalid_targets!r}."
        )
    m = rec.min_overlap
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"RankBoostRecommender.min_overlap must be an int >= 1; got {m!r}.")
    c = rec.max_feature_users
    if c is not None and (isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1):
        raise ValueError(
            f"RankBoostRecommender.max_feature_users must be None or an int >= 1; got {c!r}."
        )
    j = rec.n_jobs
    if j is not None and (not _is_int(j, -(1 << 30)) or j == 0):
        raise ValueError(
            "RankBoostRecommender.n_jobs must be None, an int >= 1, or a negative int "
            f"(joblib's -1 = all cores); got {j!r}."
        )
    design_of(rec)
    return params


def design_of(rec: Any) -> Design:
    for name, allowed in (("unrated", UNRATED), ("pair_weight", PAIR_WEIGHTS)):
        value = getattr(rec, name)
        if not isinstance(value, str) or value not in allowed:
            raise ValueError(
                f"RankBoostRecommender.{name} must be one of {allowed}; got {value!r}."
            )
    extra = rec.extra_features
    if isinstance(extra, str):
        extra = (extra,)
    extra = tuple(extra)
    if not isinstance(rec.user_features, (bool, np.bool_)):
        raise ValueError(
            f"RankBoostRecommender.user_features must be True or False; got {rec.user_features!r}."
        )
    if not rec.user_features and not extra:
        raise ValueError(
            "RankBoostRecommender.user_features=False leaves no column: name at least "
            "one extra_features column."
        )
    bad = [e for e in extra if not isinstance(e, str) or e not in EXTRA]
    if bad or len(set(extra)) != len(extra):
        raise ValueError(
            "RankBoostRecommender.extra_features must be distinct names among "
            f"{EXTRA}; got {rec.extra_features!r}."
        )
    return Design(rec.unrated, rec.pair_weight, extra, bool(rec.user_features))
