"""Tests for the scikit-learn adapter ``rankboost.sklearn.RankBoostRanker``.

Contracts (``parametrize_with_checks``), invariances (row order, qid/group/DataFrame forms,
sample weights as multiplicities) and early stopping.
"""

from __future__ import annotations

import logging
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_val_score
from sklearn.utils.estimator_checks import parametrize_with_checks

import rankboost as rb
from rankboost.binning import BinMapper
from rankboost.callback import (
    EvaluationMonitor,
    early_stopping,
    log_evaluation,
    record_evaluation,
)
from rankboost.metrics import ndcg_score
from rankboost.sklearn import RankBoostRanker


def _expected_failed_checks(estimator: RankBoostRanker) -> dict[str, str]:
    # Every scikit-learn check passes: NaN is accepted (a feature abstains), sparse input is
    # densified, and sample_weight means row multiplicity, so the sample-weight equivalence
    # checks hold exactly. Nothing to list.
    return {}


# Some checks fit a handful of rows that one weak ranker orders perfectly: the engine then
# stops early and says so with a TrainingStoppedWarning, which is expected here. The checks
# call fit(X, y) without query ids (one query), which fit flags with a OneQueryWarning.
@pytest.mark.filterwarnings("ignore::rankboost.TrainingStoppedWarning")
@pytest.mark.filterwarnings("ignore::rankboost.OneQueryWarning")
@parametrize_with_checks(
    [RankBoostRanker(n_estimators=20)], expected_failed_checks=_expected_failed_checks
)
def test_sklearn_contract(estimator, check):
    check(estimator)


def _ranking_data(seed=0, n_queries=20, per_query=12, n_features=4, noise=0.5):
    rng = np.random.default_rng(seed)
    n = n_queries * per_query
    X = rng.normal(size=(n, n_features))
    latent = X[:, 0] + 0.5 * X[:, 1] + noise * rng.normal(size=n)
    y = np.digitize(latent, [-0.5, 0.7]).astype(float)  # grades 0, 1, 2
    qid = np.repeat(np.arange(n_queries), per_query)
    return X, y, qid


@pytest.fixture
def data():
    return _ranking_data()


# ---------------------------------------------------------------------- basics


def test_fit_matches_functional_engine(data):
    X, y, qid = data
    est = RankBoostRanker(n_estimators=30, normalize="query").fit(X, y, qid=qid)
    model = rb.train(X, rb.LayeredFeedback(y, qid, normalize="query"), 30)
    np.testing.assert_array_equal(est.predict(X), model.decision_function(X))
    assert est.n_features_in_ == 4
    assert est.n_estimators_ == 30
    assert est.best_iteration_ is None
    assert est.evals_result_ == {}
    assert set(est.history_) >= {"alpha", "z", "rloss", "bound"}
    np.testing.assert_allclose(est.feature_importances_.sum(), 1.0)


def test_score_is_ndcg_at_10(data):
    X, y, qid = data
    est = RankBoostRanker(n_estimators=20).fit(X, y, qid=qid)
    assert est.score(X, y, qid=qid) == pytest.approx(ndcg_score(y, est.predict(X), qid, k=10))


def test_bipartite_feedback_and_params_are_passed():
    X, y, qid = _ranking_data(seed=1)
    yb = (y > 0).astype(int)
    est = RankBoostRanker(
        n_estimators=15, feedback="bipartite", alpha="exact", thresholds="all"
    ).fit(X, yb, qid=qid)
    model = rb.train(X, rb.BipartiteFeedback(yb, qid), 15, alpha="exact", thresholds="all")
    np.testing.assert_array_equal(est.predict(X), model.decision_function(X))
    assert "BipartiteFeedback" in est.model_.params["feedback"]


def test_pickle_round_trip(data):
    X, y, qid = data
    est = RankBoostRanker(n_estimators=10).fit(X, y, qid=qid)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    assert again.get_params() == est.get_params()


# ---------------------------------------------------------------------- queries


def test_row_and_query_permutation_invariance():
    """Shuffling rows (qid in any order) never changes the model."""
    X, y, qid = _ranking_data(seed=2)
    labels = np.array([f"q{q:03d}" for q in qid])  # string query ids
    est = RankBoostRanker(n_estimators=40).fit(X, y, qid=labels)
    rng = np.random.default_rng(7)
    X_test = rng.normal(size=(50, X.shape[1]))
    for seed in range(3):
        perm = np.random.default_rng(seed).permutation(X.shape[0])
        shuffled = RankBoostRanker(n_estimators=40).fit(X[perm], y[perm], qid=labels[perm])
        np.testing.assert_allclose(shuffled.predict(X_test), est.predict(X_test), atol=1e-10)
        np.testing.assert_allclose(shuffled.history_["alpha"], est.history_["alpha"], atol=1e-10)


def test_group_sizes_equal_qid(data):
    X, y, qid = data
    by_qid = RankBoostRanker(n_estimators=15).fit(X, y, qid=qid)
    by_group = RankBoostRanker(n_estimators=15).fit(X, y, group=np.bincount(qid))
    np.testing.assert_array_equal(by_group.predict(X), by_qid.predict(X))
    assert by_group.score(X, y, group=np.bincount(qid)) == by_qid.score(X, y, qid=qid)


def test_dataframe_qid_column_and_feature_names(data):
    pd = pytest.importorskip("pandas")
    X, y, qid = data
    df = pd.DataFrame(X, columns=["bm25", "pagerank", "tf", "idf"]).assign(qid=qid)
    est = RankBoostRanker(n_estimators=15).fit(df, y)
    ref = RankBoostRanker(n_estimators=15).fit(X, y, qid=qid)
    np.testing.assert_array_equal(est.predict(df), ref.predict(X))
    np.testing.assert_array_equal(est.predict(df.drop(columns="qid")), ref.predict(X))
    assert list(est.feature_names_in_) == ["bm25", "pagerank", "tf", "idf"]
    assert est.model_.feature_names == ["bm25", "pagerank", "tf", "idf"]
    assert est.score(df, y) == ref.score(X, y, qid=qid)


def test_issue16_fit_without_qid_warns_one_query(data):
    """No qid/group/column: one query, said by a OneQueryWarning on every call (issue 16)."""
    X, y, _ = data
    with pytest.warns(rb.OneQueryWarning, match=r"np\.zeros\(240\)") as record:
        est = RankBoostRanker(n_estimators=5).fit(X, y)
    with pytest.warns(rb.OneQueryWarning, match="ONE query"):  # every call, not once
        RankBoostRanker(n_estimators=5).fit(X, y)
    silence = "filterwarnings('ignore', category=rankboost.OneQueryWarning)"
    assert silence in str(record[0].message)
    assert record[0].filename == __file__  # points at the caller's fit line
    with warnings.catch_warnings():
        warnings.simplefilter("error", rb.OneQueryWarning)
        # one query on purpose: the same model, silently; so is the engine's LayeredFeedback(y)
        one = RankBoostRanker(n_estimators=5).fit(X, y, qid=np.zeros(len(y)))
        model = rb.train(X, rb.LayeredFeedback(y), 5)
    np.testing.assert_array_equal(est.predict(X), one.predict(X))
    np.testing.assert_array_equal(model.decision_function(X), one.predict(X))


def test_issue16_eval_set_without_eval_qid_warns_one_query(data):
    X, y, qid = data
    est = RankBoostRanker(n_estimators=5)
    with pytest.warns(rb.OneQueryWarning, match=r"eval_set\[1\] has no query ids") as record:
        est.fit(X, y, qid=qid, eval_set=[(X, y), (X[:50], y[:50])], eval_qid=[qid, None])
    assert record[0].filename == __file__  # the caller's fit line (it was in sklearn.py)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rb.OneQueryWarning)
        est.fit(X, y, qid=qid, eval_set=[(X[:50], y[:50])], eval_qid=[np.zeros(50)])
        est.fit(X, y, group=np.bincount(qid), eval_set=[(X, y)], eval_qid=[qid])


def test_group_kfold_cross_validation_with_dataframe(data):
    pd = pytest.importorskip("pandas")
    X, y, qid = data
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(4)]).assign(qid=qid)
    cv = GroupKFold(n_splits=4)
    scores = cross_val_score(RankBoostRanker(n_estimators=15), df, y, groups=qid, cv=cv)
    expected = []
    for train, test in cv.split(X, y, groups=qid):
        est = RankBoostRanker(n_estimators=15).fit(X[train], y[train], qid=qid[train])
        expected.append(est.score(X[test], y[test], qid=qid[test]))
    np.testing.assert_allclose(scores, expected)
    assert ((scores > 0.5) & (scores <= 1.0)).all()


def test_grid_search_with_dataframe_qid(data):
    pd = pytest.importorskip("pandas")
    X, y, qid = data
    df = pd.DataFrame(X).rename(columns=str).assign(qid=qid)
    search = GridSearchCV(
        RankBoostRanker(),
        {"n_estimators": [1, 25], "normalize": ["pair", "query"]},
        cv=GroupKFold(n_splits=3),
    )
    search.fit(df, y, groups=qid)
    assert search.best_params_["n_estimators"] == 25
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()


# ---------------------------------------------------------------------- sample weights


def test_integer_sample_weight_equals_repeated_rows(data):
    X, y, qid = data
    w = np.random.default_rng(3).integers(0, 4, size=X.shape[0])
    w[:3] = [1, 2, 3]
    weighted = RankBoostRanker(n_estimators=20).fit(X, y, qid=qid, sample_weight=w)
    rep = np.repeat(np.arange(X.shape[0]), w)
    repeated = RankBoostRanker(n_estimators=20).fit(X[rep], y[rep], qid=qid[rep])
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), atol=1e-10)


def test_issue16_integer_sample_weight_equals_repeated_rows_at_default_thresholds():
    """The quantile bins (thresholds=255) weigh the rows too, so w = repetition holds with
    more distinct values than bins (issue 16; it held only with thresholds="all")."""
    X, y, qid = _ranking_data(seed=5, n_queries=60, per_query=12)
    w = np.random.default_rng(5).integers(0, 4, size=X.shape[0])
    rep = np.repeat(np.arange(X.shape[0]), w)
    bins = BinMapper(255)
    assert len(np.unique(X[:, 0])) > 255  # quantile bins, not every distinct value
    assert not np.array_equal(bins.fit(X).cuts_[0], bins.fit(X[rep]).cuts_[0])
    weighted = RankBoostRanker(n_estimators=25).fit(X, y, qid=qid, sample_weight=w)
    repeated = RankBoostRanker(n_estimators=25).fit(X[rep], y[rep], qid=qid[rep])
    assert "PairFeedback" in weighted.model_.params["feedback"]
    np.testing.assert_array_equal(weighted.history_["feature"], repeated.history_["feature"])
    np.testing.assert_array_equal(weighted.history_["threshold"], repeated.history_["threshold"])
    np.testing.assert_allclose(weighted.history_["alpha"], repeated.history_["alpha"], atol=1e-12)
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), rtol=0, atol=1e-12)


def test_constant_sample_weight_uses_the_layered_engine(data):
    X, y, qid = data
    est = RankBoostRanker(n_estimators=10).fit(X, y, qid=qid, sample_weight=np.full(len(y), 3.0))
    assert "LayeredFeedback" in est.model_.params["feedback"]


def test_query_normalized_weights_equal_repeated_rows(data):
    X, y, qid = data
    w = np.random.default_rng(4).integers(1, 3, size=X.shape[0])
    est = RankBoostRanker(n_estimators=10, normalize="query")
    weighted = clone(est).fit(X, y, qid=qid, sample_weight=w)
    rep = np.repeat(np.arange(X.shape[0]), w)
    repeated = clone(est).fit(X[rep], y[rep], qid=qid[rep])
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), atol=1e-10)


# ---------------------------------------------------------------------- early stopping


def _early_stopping_case():
    """Training labels follow feature 0; validation labels follow feature 0 for a few
    rounds' worth of signal, then the model keeps fitting training noise (features 1-5)."""
    rng = np.random.default_rng(11)
    n_q, per_q, d = 30, 10, 6
    X = rng.normal(size=(2 * n_q * per_q, d))
    y = (X[:, 0] + 1.5 * rng.normal(size=X.shape[0]) > 0).astype(float)
    qid = np.repeat(np.arange(2 * n_q), per_q)
    tr = qid < n_q
    return (X[tr], y[tr], qid[tr]), (X[~tr], y[~tr], qid[~tr])


def test_early_stopping_picks_the_best_round():
    (X, y, qid), (Xv, yv, qv) = _early_stopping_case()
    est = RankBoostRanker(n_estimators=300).fit(
        X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv], early_stopping_rounds=10
    )
    curve = np.asarray(est.evals_result_["valid_0"]["ndcg@10"])
    assert curve.shape == (est.n_estimators_,)
    assert est.n_estimators_ < 300  # it did stop early
    assert est.best_iteration_ == int(np.argmax(curve)) + 1
    assert est.n_estimators_ == est.best_iteration_ + 10
    np.testing.assert_array_equal(
        est.predict(Xv), est.model_.decision_function(Xv, n_rounds=est.best_iteration_)
    )
    assert est.score(Xv, yv, qid=qv) == pytest.approx(curve.max())
    assert est.model_.best_iteration == est.best_iteration_


def test_validation_curve_matches_staged_scores():
    """The O(n_valid) incremental scores equal H_t evaluated from scratch."""
    (X, y, qid), (Xv, yv, qv) = _early_stopping_case()
    est = RankBoostRanker(n_estimators=25).fit(
        X,
        y,
        qid=qid,
        eval_set=[(Xv, yv), (X, y)],
        eval_qid=[qv, qid],
        eval_metric=["map", "ndcg@5"],
    )
    assert set(est.evals_result_) == {"valid_0", "valid_1"}
    staged = list(est.model_.staged_decision_function(Xv))
    for t in (0, 9, 24):
        expected = rb.metrics.evaluate(yv, staged[t], qv, metrics=["map", "ndcg@5"])
        assert est.evals_result_["valid_0"]["map"][t] == pytest.approx(expected["map"], abs=1e-12)
        assert est.evals_result_["valid_0"]["ndcg@5"][t] == pytest.approx(
            expected["ndcg@5"], abs=1e-12
        )
    assert est.best_iteration_ is None  # no early stopping asked: predict uses every round


def test_early_stopping_at_the_last_round_still_records_the_best():
    (X, y, qid), (Xv, yv, qv) = _early_stopping_case()
    est = RankBoostRanker(n_estimators=12).fit(
        X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv], early_stopping_rounds=100
    )
    curve = est.evals_result_["valid_0"]["ndcg@10"]
    assert est.n_estimators_ == 12
    assert est.best_iteration_ == int(np.argmax(curve)) + 1


def test_callable_metric_and_user_callbacks(data):
    X, y, qid = data
    seen = []

    def spread(y_true, y_score, qid):
        return float(np.ptp(y_score))

    est = RankBoostRanker(n_estimators=8).fit(
        X, y, qid=qid, eval_set=[(X, y)], eval_qid=[qid], eval_metric=spread,
        callbacks=[lambda env: seen.append(env.iteration)],
    )  # fmt: skip
    assert seen == list(range(8))
    assert len(est.evals_result_["valid_0"]["spread"]) == 8


def test_verbose_shows_a_progress_bar(data, capsys):
    pytest.importorskip("tqdm")
    X, y, qid = data
    RankBoostRanker(n_estimators=5, verbose=True).fit(X, y, qid=qid)
    assert "rankboost" in capsys.readouterr().err
    RankBoostRanker(n_estimators=5).fit(X, y, qid=qid)
    assert capsys.readouterr().err == ""


def test_callbacks_are_order_independent_and_log(data, caplog):
    X, y, qid = data
    monitor = EvaluationMonitor([(X, y, qid)], metrics=["ndcg@10"])
    record = {}
    callbacks = [record_evaluation(monitor, record), log_evaluation(monitor, 5), monitor]
    with caplog.at_level(logging.INFO, logger="rankboost"):
        rb.train(X, rb.LayeredFeedback(y, qid), 10, callbacks=callbacks)
    assert record["valid_0"]["ndcg@10"] == monitor.results["valid_0"]["ndcg@10"]
    assert len(record["valid_0"]["ndcg@10"]) == 10
    assert [r.getMessage().split("\t")[0] for r in caplog.records] == ["[5]", "[10]"]


def test_early_stopping_for_a_loss_metric(data):
    X, y, qid = data
    monitor = EvaluationMonitor([(X, y, qid)], metrics="disagreement")
    model = rb.train(X, rb.LayeredFeedback(y, qid), 15, callbacks=[early_stopping(monitor, 3)])
    curve = monitor.results["valid_0"]["disagreement"]
    assert model.best_iteration == int(np.argmin(curve)) + 1


# ---------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"n_estimators": 0}, "'n_estimators' parameter of RankBoostRanker must be an int >= 1"),
        ({"n_estimators": 2.5}, "got 2.5 instead"),
        ({"feedback": "pairs"}, "'feedback' parameter of RankBoostRanker must be one of"),
        ({"alpha": "best"}, "'alpha' parameter of RankBoostRanker must be one of"),
        ({"normalize": "row"}, "'normalize' parameter of RankBoostRanker must be one of"),
        ({"learning_rate": 0.0}, "'learning_rate' parameter of RankBoostRanker must be a float"),
        ({"learning_rate": 1.5}, r"must be a float in \(0, 1\]; got 1.5 instead"),
    ],
)
def test_bad_parameters_raise_in_fit(data, params, match):
    X, y, qid = data
    est = RankBoostRanker(**params)  # the constructor never validates
    with pytest.raises(ValueError, match=match):
        est.fit(X, y, qid=qid)


def test_fit_argument_errors(data):
    X, y, qid = data
    est = RankBoostRanker(n_estimators=3)
    with pytest.raises(ValueError, match="got both qid= and group="):
        est.fit(X, y, qid=qid, group=np.bincount(qid))
    with pytest.raises(ValueError, match="early stopping needs a validation set"):
        est.fit(X, y, qid=qid, early_stopping_rounds=5)
    with pytest.raises(ValueError, match="eval_qid= without eval_set="):
        est.fit(X, y, qid=qid, eval_qid=[qid])
    with pytest.raises(ValueError, match="2 eval_set entries but 1 eval_qid"):
        est.fit(X, y, qid=qid, eval_set=[(X, y), (X, y)], eval_qid=[qid])
    with pytest.raises(ValueError, match="Unknown metric 'ndgc@10'"):
        est.fit(X, y, qid=qid, eval_set=[(X, y)], eval_qid=[qid], eval_metric="ndgc@10")
    with pytest.raises(ValueError, match="sample_weight must hold finite non-negative"):
        est.fit(X, y, qid=qid, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="one weight per row"):
        est.fit(X, y, qid=qid, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="y must contain only 0 and 1"):
        RankBoostRanker(feedback="bipartite").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="no crucial pair"):
        est.fit(X, np.zeros(len(y)), qid=qid)


def test_dataframe_qid_column_conflicts_with_qid(data):
    pd = pytest.importorskip("pandas")
    X, y, qid = data
    df = pd.DataFrame(X).rename(columns=str).assign(qid=qid)
    with pytest.raises(ValueError, match="has a 'qid' column and qid= was given too"):
        RankBoostRanker(n_estimators=3).fit(df, y, qid=qid)


def test_predict_checks_features(data):
    X, y, qid = data
    est = RankBoostRanker(n_estimators=3).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="X has 3 features, but RankBoostRanker is expecting 4"):
        est.predict(X[:, :3])
    with pytest.raises(ValueError, match="n_rounds must be between 0 and 3"):
        est.predict(X, n_rounds=4)
