"""``rankboost.metrics.make_scorer``: ranking scorers with the query ids routed as ``qid``.

Issue 16, item 8: the scorers work in ``GridSearchCV``/``cross_validate`` with
``GroupKFold`` under scikit-learn's metadata routing, score each held-out fold with its own
query ids (checked against the metric computed by hand), and refuse to score without query
ids instead of taking every row as one query.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate

from conftest import letor_like
from rankboost import RankBoostRanker
from rankboost.metrics import (
    disagreement,
    make_scorer,
    mean_average_precision,
    ndcg_score,
    precision_at_k,
)


@pytest.fixture
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return letor_like(n_queries=30, seed=3)


def routing() -> sklearn.config_context:
    return sklearn.config_context(enable_metadata_routing=True)


# ------------------------------------------------------------------ direct calls
@pytest.mark.parametrize(
    ("name", "func", "kwargs", "sign"),
    [
        ("ndcg@5", ndcg_score, {"k": 5}, 1),
        ("NDCG", ndcg_score, {"k": None}, 1),
        ("map", mean_average_precision, {"k": None}, 1),
        ("p@3", precision_at_k, {"k": 3}, 1),
        ("disagreement", disagreement, {}, -1),
    ],
)
def test_scorer_equals_metric_by_hand(data, name, func, kwargs, sign):
    X, y, qid = data
    est = RankBoostRanker(n_estimators=5).fit(X, y, qid=qid)
    value = make_scorer(name)(est, X, y, qid=qid)
    assert value == pytest.approx(sign * func(y, est.predict(X), qid, **kwargs))


def test_metric_kwargs_are_passed(data):
    X, y, qid = data
    est = RankBoostRanker(n_estimators=5).fit(X, y, qid=qid)
    scorer = make_scorer("ndcg@10", ties="pessimistic", gain="linear")
    expected = ndcg_score(y, est.predict(X), qid, k=10, ties="pessimistic", gain="linear")
    assert scorer(est, X, y, qid=qid) == pytest.approx(expected)
    assert repr(scorer) == "make_scorer('ndcg@10', ties='pessimistic', gain='linear')"


def test_callable_metric(data):
    X, y, qid = data
    est = RankBoostRanker(n_estimators=5).fit(X, y, qid=qid)

    def top1(y_true, y_score, qid):
        return precision_at_k(y_true, y_score, qid, k=1)

    assert make_scorer(top1)(est, X, y, qid=qid) == pytest.approx(
        precision_at_k(y, est.predict(X), qid, k=1)
    )
    assert make_scorer(top1, greater_is_better=False)(est, X, y, qid=qid) <= 0


def test_bad_arguments():
    with pytest.raises(ValueError, match="Unknown metric 'ndgc@5'"):
        make_scorer("ndgc@5")
    with pytest.raises(TypeError, match="takes no keyword argument \\['gain'\\]"):
        make_scorer("map", gain="exp2")
    with pytest.raises(ValueError, match="per_query=True"):
        make_scorer("map", per_query=True)
    with pytest.raises(ValueError, match="needs a rank cut-off"):
        make_scorer("p")


def test_no_qid_is_refused(data):
    """No silent one-query score: the error says how to pass the query ids."""
    X, y, qid = data
    est = RankBoostRanker(n_estimators=5).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="got no query ids.*enable_metadata_routing=True"):
        make_scorer("ndcg@5")(est, X, y)
    with routing(), pytest.raises(ValueError, match="got no query ids.*requested by default"):
        make_scorer("ndcg@5")(est, X, y)


def test_pickles(data):
    X, y, qid = data
    est = RankBoostRanker(n_estimators=5).fit(X, y, qid=qid)
    scorer = pickle.loads(pickle.dumps(make_scorer("mrr@10")))
    assert scorer(est, X, y, qid=qid) == make_scorer("mrr@10")(est, X, y, qid=qid)


# ------------------------------------------------------------------ metadata routing
def test_requests():
    with routing():
        assert make_scorer("map").get_metadata_routing().score.requests["qid"] is True
        routing_ = RankBoostRanker().get_metadata_routing()
        assert routing_.fit.requests["qid"] is True
        assert routing_.score.requests["qid"] is True
        scorer = make_scorer("map").set_score_request(qid=False)
        assert scorer.get_metadata_routing().score.requests["qid"] is False


def test_grid_search_scores_each_fold_with_its_qid(data):
    X, y, qid = data
    cv = GroupKFold(n_splits=3)
    with routing():
        search = GridSearchCV(
            RankBoostRanker(),
            {"n_estimators": [5, 10]},
            cv=cv,
            scoring=make_scorer("ndcg@5"),
            error_score="raise",
        ).fit(X, y, qid=qid, groups=qid)
    for i, n in enumerate([5, 10]):
        for fold, (train, test) in enumerate(cv.split(X, y, groups=qid)):
            est = RankBoostRanker(n_estimators=n).fit(X[train], y[train], qid=qid[train])
            expected = ndcg_score(y[test], est.predict(X[test]), qid[test], k=5)
            assert search.cv_results_[f"split{fold}_test_score"][i] == pytest.approx(expected)
    assert search.best_params_["n_estimators"] in (5, 10)


def test_grid_search_set_score_request_explicitly(data):
    """The documented scikit-learn spelling works too (qid is requested by default)."""
    X, y, qid = data
    with routing():
        scorer = make_scorer("map").set_score_request(qid=True)
        est = RankBoostRanker().set_fit_request(qid=True)
        search = GridSearchCV(est, {"n_estimators": [5]}, cv=GroupKFold(3), scoring=scorer)
        search.fit(X, y, qid=qid, groups=qid)
    assert np.isfinite(search.best_score_)


def test_cross_validate_with_group_kfold(data):
    X, y, qid = data
    scoring = {"ndcg": make_scorer("ndcg@5"), "map": make_scorer("map")}
    with routing():
        res = cross_validate(
            RankBoostRanker(n_estimators=8),
            X,
            y,
            cv=GroupKFold(n_splits=3),
            scoring=scoring,
            params={"qid": qid, "groups": qid},
            return_estimator=True,
            return_indices=True,
            error_score="raise",
        )
    for fold, (est, test) in enumerate(zip(res["estimator"], res["indices"]["test"], strict=True)):
        assert not set(qid[test]) & set(qid[res["indices"]["train"][fold]])
        pred = est.predict(X[test])
        assert res["test_ndcg"][fold] == pytest.approx(ndcg_score(y[test], pred, qid[test], k=5))
        assert res["test_map"][fold] == pytest.approx(
            mean_average_precision(y[test], pred, qid[test])
        )


def test_grid_search_without_qid_raises(data):
    """Routing on, qid not passed to fit: the scorer refuses (the estimator only warns)."""
    X, y, qid = data
    with routing(), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # OneQueryWarning of fit
        search = GridSearchCV(
            RankBoostRanker(n_estimators=3),
            {"learning_rate": [1.0]},
            cv=GroupKFold(3),
            scoring=make_scorer("ndcg@5"),
            error_score="raise",
        )
        with pytest.raises(ValueError, match="got no query ids"):
            search.fit(X, y, groups=qid)


def test_without_routing_numpy_raises_with_hint(data):
    """Routing off and a numpy X: the scorer never sees qid and says to enable routing."""
    X, y, qid = data
    search = GridSearchCV(
        RankBoostRanker(n_estimators=3),
        {"learning_rate": [1.0]},
        cv=GroupKFold(3),
        scoring=make_scorer("ndcg@5"),
        error_score="raise",
    )
    with pytest.raises(ValueError, match="sklearn.set_config\\(enable_metadata_routing=True\\)"):
        search.fit(X, y, groups=qid, qid=qid)


def test_without_routing_dataframe_qid_column(data):
    """Routing off: a DataFrame's 'qid' column gives the queries to fit and to the scorer."""
    pd = pytest.importorskip("pandas")
    X, y, qid = data
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]).assign(qid=qid)
    cv = GroupKFold(n_splits=3)
    res = cross_validate(
        RankBoostRanker(n_estimators=5),
        df,
        y,
        groups=qid,
        cv=cv,
        scoring=make_scorer("ndcg@5"),
        error_score="raise",
    )
    for fold, (train, test) in enumerate(cv.split(X, y, groups=qid)):
        est = RankBoostRanker(n_estimators=5).fit(X[train], y[train], qid=qid[train])
        expected = ndcg_score(y[test], est.predict(X[test]), qid[test], k=5)
        assert res["test_score"][fold] == pytest.approx(expected)


def test_dataframe_column_and_qid_disagree(data):
    pd = pytest.importorskip("pandas")
    X, y, qid = data
    df = pd.DataFrame(X).assign(qid=qid)
    df.columns = df.columns.astype(str)
    est = RankBoostRanker(n_estimators=3).fit(df, y)
    scorer = make_scorer("map")
    assert scorer(est, df, y, qid=qid) == pytest.approx(scorer(est, df, y))
    with pytest.raises(ValueError, match="differ; pass the queries only once"):
        scorer(est, df, y, qid=np.zeros_like(qid))
