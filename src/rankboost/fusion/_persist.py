"""A RankFusion model file (format ``rankboost-fusion``, versions 1 and 2): its format and parsing.

:func:`read_fusion_dict` checks a file's content and returns it (:class:`FusionFile`);
:meth:`rankboost.fusion.RankFusion.from_dict` builds the fitted estimator from it.
"""

from __future__ import annotations

import reprlib
from typing import Any, NamedTuple

import numpy as np

from ..model import RankBoostModel
from .features import RANK_FEATURES, n_features_of

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "FUSION_PARAMS", "FusionFile", "read_fusion_dict"]

FORMAT_NAME = "rankboost-fusion"
FORMAT_VERSION = 2

#: RankFusion's constructor parameters, in order (``get_params``, ``repr`` and the file)
FUSION_PARAMS = (
    "n_rounds",
    "max_rounds",
    "cv_folds",
    "positive_cumulative",
    "rank_feature",
    "score_features",
    "missing_features",
    "feedback",
    "normalize",
    "alpha",
    "learning_rate",
    "thresholds",
    "criterion",
    "default",
    "weak_ranker",
    "prior",
    "prior_scale",
)


class FusionFile(NamedTuple):
    """A RankFusion file's content, checked: :meth:`RankFusion.from_dict` assigns it."""

    #: the constructor parameters (checked)
    params: dict[str, Any]
    model: RankBoostModel
    list_names: list[str]
    feature_names: list[str]
    #: the rounds of ``model`` the fusion uses
    n_rounds: int
    #: ``c`` of the prior ``c F_0`` (0.0 without a prior)
    prior_scale: float


def read_fusion_dict(cls: Any, data: Any) -> FusionFile:
    """Check a ``to_dict`` output of ``cls`` (:class:`RankFusion`) and return its content."""
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise ValueError(
            f'not a rankboost fusion model: the JSON has no "format": "{FORMAT_NAME}" field.'
        )
    version = data.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(
            f"malformed fusion model: version is {reprlib.repr(version)}, not an int >= 1."
        )
    if version > FORMAT_VERSION:
        raise ValueError(
            f"fusion model format version {version!r} is not one this rankboost reads "
            f"(<= {FORMAT_VERSION}); upgrade rankboost."
        )
    try:
        params = {k: v for k, v in data["params"].items() if k in FUSION_PARAMS}
        # NOTE: files of earlier releases have no such fields: their values then
        params.setdefault("missing_features", False)
        params.setdefault("feedback", "layered")
        params.setdefault("prior", None)
        if isinstance(params.get("thresholds"), list):  # ("uniform", B) in JSON
            params["thresholds"] = tuple(params["thresholds"])
        fusion = cls(**params)  # to check the parameters
        if fusion.rank_feature not in RANK_FEATURES or not isinstance(
            fusion.score_features, (bool, str)
        ):
            raise ValueError(
                f"malformed fusion model: rank_feature {reprlib.repr(fusion.rank_feature)} "
                f"or score_features {reprlib.repr(fusion.score_features)} is not allowed."
            )
        try:
            fusion._params()
            fusion._check_fusion_params()
        except ValueError as exc:
            raise ValueError(f"malformed fusion model: {exc}") from None
        model = RankBoostModel.from_dict(data["model"])
        for key in ("list_names", "feature_names"):
            names = data[key]
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise ValueError(f"malformed fusion model: {key} is not a list of strings.")
        list_names, feature_names = list(data["list_names"]), list(data["feature_names"])
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"malformed fusion model: missing or bad field {exc}.") from None
    except (RecursionError, OverflowError):
        raise ValueError(
            "malformed fusion model: a field holds lists nested too deeply or a number too large."
        ) from None
    n_rounds, prior_scale = int(model.n_rounds), 0.0
    if fusion.prior is not None:
        try:
            prior_scale = float(data["prior_scale"])
            n_rounds = min(int(data["n_rounds"]), n_rounds)
        except (KeyError, TypeError, ValueError):
            raise ValueError(
                "malformed fusion model: a model with a prior needs a number prior_scale "
                "and an int n_rounds."
            ) from None
        if not np.isfinite(prior_scale) or prior_scale < 0:
            raise ValueError("malformed fusion model: prior_scale must be finite and >= 0.")
    n_lists = len(list_names)
    n_expected = n_features_of(n_lists, fusion.score_features, bool(fusion.missing_features))
    if model.n_features != n_expected:
        raise ValueError(
            f"malformed fusion model: {n_lists} lists need {n_expected} features "
            f"but the model has {model.n_features}."
        )
    return FusionFile(params, model, list_names, feature_names, n_rounds, prior_scale)
