"""Fits return, estimators assign (issue 45): fusion's fit objects and its classmethods.

``fit_prior`` returns a :class:`PriorFit` that :class:`RankFusion` assigns; the file reader
returns a :class:`FusionFile` that :meth:`RankFusion.from_dict` assigns;
:meth:`LinearFusion.from_weights` builds a fitted model from weights (``AutoFusion``'s
``convex`` and ``rrf``); ``RankFusion(n_rounds=0)`` with a prior is the prior's ranking
(SPEC 7.2), which ``AutoFusion``'s refit of ``boost_combsum`` with 0 rounds uses.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from rankboost.engine import TrainingStoppedWarning
from rankboost.fusion import RankFusion
from rankboost.fusion._persist import FusionFile, read_fusion_dict
from rankboost.fusion.linear import LinearFusion, linear_features
from rankboost.fusion.prior import PriorFit, fit_prior, prior_scores
from rankboost.params import ParameterError
from test_fusion_linear import _toy


# ------------------------------------------------------------------ PriorFit ------------
def test_fit_prior_returns_what_rank_fusion_assigns() -> None:
    runs, qrels = _toy(n_q=15, seed=3)
    fusion = RankFusion(prior="combsum", max_rounds=8, cv_folds=3)
    fusion.fit(runs, qrels)
    # the same pieces RankFusion.fit hands over, on a fresh estimator that stays unfitted
    probe = RankFusion(prior="combsum", max_rounds=8, cv_folds=3)
    feats = probe.features(runs)
    from rankboost.fusion.features import grades_for

    y = grades_for(feats, qrels)
    judged = np.isin(feats.qid, np.asarray(qrels.queries))
    fit = fit_prior(
        probe, runs, feats, judged, feats.X[judged], y[judged], feats.qid[judged],
        probe._params(), {},
    )  # fmt: skip
    assert isinstance(fit, PriorFit)
    assert not hasattr(probe, "model_")  # the helper writes nothing of the estimator
    assert fit.n_rounds == fusion.n_rounds_
    assert fit.prior_scale == fusion.prior_scale_
    assert fit.cv_results is not None
    assert fusion.cv_results_ is not None
    np.testing.assert_array_equal(fit.cv_results["mean"], fusion.cv_results_["mean"])
    assert fit.model.to_dict() == fusion.model_.to_dict()


# ------------------------------------------------------------------ 0 rounds: the prior -
@pytest.mark.parametrize("prior", ["combsum", "rrf"])
def test_zero_rounds_with_a_prior_is_the_prior_ranking(prior: str, tmp_path: Path) -> None:
    runs, qrels = _toy(n_q=10, seed=1)
    alone = RankFusion(prior=prior, n_rounds=0, prior_scale=2.0).fit(runs, qrels)
    assert alone.n_rounds_ == 0
    assert alone.model_.n_rounds == 0
    assert alone.prior_scale_ == 2.0
    feats, F = alone.decision_function(runs)
    np.testing.assert_array_equal(F, 2.0 * prior_scores(runs, feats, prior))
    # the form it replaces: one round trained and none used; the same fused lists
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        one = RankFusion(prior=prior, n_rounds=1, prior_scale=2.0).fit(runs, qrels)
    _, F1 = one.decision_function(runs, n_rounds=0)
    np.testing.assert_array_equal(F, F1)
    assert alone.fuse(runs).docid.tolist() == one.fuse(runs, n_rounds=0).docid.tolist()
    # saved and read back
    alone.save(tmp_path / "m.json")
    again = RankFusion.load(tmp_path / "m.json")
    assert again.n_rounds == 0
    assert again.n_rounds_ == 0
    np.testing.assert_array_equal(again.decision_function(runs)[1], F)


def test_zero_rounds_needs_a_prior_and_a_float_scale() -> None:
    runs, qrels = _toy(n_q=6)
    with pytest.raises(ParameterError, match="n_rounds"):
        RankFusion(n_rounds=0).fit(runs, qrels)
    with pytest.raises(ParameterError, match="prior_scale='auto' is chosen by the inner"):
        RankFusion(prior="combsum", n_rounds=0).fit(runs, qrels)
    with pytest.raises(ParameterError, match="n_rounds"):
        RankFusion(prior="combsum", n_rounds=False, prior_scale=1.0).fit(runs, qrels)


def test_auto_fusion_refit_of_the_prior_alone_is_honest() -> None:
    """AutoFusion refits boost_combsum with 0 rounds as RankFusion(n_rounds=0): it used to
    train one round and overwrite n_rounds_ from outside the class."""
    from rankboost.fusion._select import fit_config

    runs, qrels = _toy(n_q=10, seed=4)
    fus = fit_config("boost_combsum", runs, qrels, 4.0, 0, 5, 100)
    assert fus.n_rounds == 0
    assert fus.n_rounds_ == 0
    assert fus.prior_scale_ == 4.0
    feats, F = fus.decision_function(runs)
    np.testing.assert_array_equal(F, 4.0 * prior_scores(runs, feats, "combsum"))


# ------------------------------------------------------------------ FusionFile ----------
def test_read_fusion_dict_returns_the_file_content() -> None:
    runs, qrels = _toy(n_q=8, seed=2)
    fusion = RankFusion(prior="combsum", n_rounds=3, prior_scale=1.0).fit(runs, qrels)
    data = json.loads(json.dumps(fusion.to_dict()))
    read = read_fusion_dict(RankFusion, data)
    assert isinstance(read, FusionFile)
    assert read.params == fusion.get_params()
    assert read.list_names == ["a", "b"]
    assert read.feature_names == fusion.feature_names_
    assert (read.n_rounds, read.prior_scale) == (fusion.n_rounds_, 1.0)
    assert read.model.to_dict() == fusion.model_.to_dict()
    again = RankFusion.from_dict(data)
    assert again.to_dict() == fusion.to_dict()
    assert again.cv_results_ is None
    assert again.n_lists_ == 2


# ------------------------------------------------------------------ from_weights --------
def test_from_weights_is_a_fitted_linear_fusion(tmp_path: Path) -> None:
    runs, _ = _toy(n_q=5)
    lin = LinearFusion.from_weights(["a", "b"], [0.3, 0.7])
    assert lin.weights_.tolist() == np.float32([0.3, 0.7]).astype(np.float64).tolist()
    assert (lin.n_rounds_, lin.prior_scale_, lin.cv_results_) == (0, 1.0, None)
    assert lin.get_params()["n_rounds"] == 0
    assert lin.get_params()["prior_scale"] == 1.0
    N, _, _ = linear_features(runs, "minmax")
    np.testing.assert_array_equal(lin.decision_function(runs)[2], N @ lin.weights_)
    lin.save(tmp_path / "lin.json")
    assert LinearFusion.load(tmp_path / "lin.json").to_dict() == lin.to_dict()
    rrf = LinearFusion.from_weights(["a", "b"], np.ones(2), normalizer="rrf")
    assert rrf.normalizer == "rrf"
    assert rrf.weights_.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    ("names", "weights", "match"),
    [
        (["a", "b"], [1.0], r"one finite value >= 0 per list \(2"),
        (["a", "b"], [1.0, -0.5], "one finite value >= 0"),
        (["a", "b"], [1.0, np.nan], "one finite value >= 0"),
        (["a", "b"], [[1.0, 2.0]], "one finite value >= 0"),
    ],
)
def test_from_weights_bad_input(names, weights, match) -> None:
    with pytest.raises(ValueError, match=match):
        LinearFusion.from_weights(names, weights)
    with pytest.raises(ParameterError, match="normalizer"):
        LinearFusion.from_weights(["a"], [1.0], normalizer="zscore")
