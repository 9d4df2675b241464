"""Bad input raises ValueError/TypeError with a message naming the argument (STYLE rule 2)."""

from __future__ import annotations

import numpy as np
import pytest

import rankboost as rb

X = np.arange(12.0).reshape(6, 2)
Y = np.array([0, 1, 0, 1, 2, 0])
FB = rb.LayeredFeedback(Y)


# --------------------------------------------------------------------------- feedback


@pytest.mark.parametrize(
    ("y", "qid", "error", "match"),
    [
        ([0, 1, np.nan], None, ValueError, r"y contains NaN or infinity \(first at row 2\)"),
        ([0, np.inf, 1], None, ValueError, r"y contains NaN or infinity \(first at row 1\)"),
        ([[0, 1], [1, 0]], None, ValueError, r"y must be 1-D of shape \(n_samples,\)"),
        (["a", "b"], None, TypeError, r"y must be a 1-D array of numbers"),
        ([0, 1, 1], [1, 1], ValueError, r"qid has 2 entries but there are 3 rows"),
        ([0, 1, 1], [[1, 1, 1]] * 2, ValueError, r"qid must be 1-D of shape \(n_samples,\)"),
        ([0, 1], [1.0, np.nan], ValueError, r"qid contains NaN"),
        ([1, 1, 1], None, ValueError, r"y has no crucial pair"),
        ([0, 1, 0, 1], [1, 2, 3, 4], ValueError, r"y has no crucial pair"),
    ],
)
def test_layered_feedback_bad_labels(y, qid, error, match):
    with pytest.raises(error, match=match):
        rb.LayeredFeedback(y, qid)


def test_layered_feedback_bad_normalize():
    with pytest.raises(ValueError, match=r"normalize must be 'pair' or 'query'; got 'queries'"):
        rb.LayeredFeedback([0, 1], normalize="queries")


def test_bipartite_feedback_non_binary():
    with pytest.raises(ValueError, match=r"y must contain only 0 and 1 for BipartiteFeedback"):
        rb.BipartiteFeedback([0, 1, 2])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"pairs": [[0, 1, 2]]}, ValueError, r"pairs must be an integer array of shape"),
        ({"pairs": [0, 1]}, ValueError, r"pairs must be an integer array of shape"),
        ({"pairs": [[0.5, 1.0]]}, ValueError, r"pairs must be an integer array of shape"),
        ({"pairs": np.empty((0, 2), dtype=int)}, ValueError, r"pairs is empty"),
        ({"pairs": [[0, 5]], "n_samples": 3}, ValueError, r"pairs\[0\] = \[0, 5\] is out of range"),
        ({"pairs": [[0, 1], [-1, 1]]}, ValueError, r"pairs\[1\] = \[-1, 1\] is out of range"),
        ({"pairs": [[0, 1], [2, 2]]}, ValueError, r"pairs\[1\] compares row 2 with itself"),
        ({"pairs": [[0, 1]], "weights": [1, 2]}, ValueError, r"weights has 2 entries but pairs"),
        ({"pairs": [[0, 1]], "weights": [np.nan]}, ValueError, r"weights contains NaN or inf"),
        ({"pairs": [[0, 1]], "weights": [np.inf]}, ValueError, r"weights contains NaN or inf"),
        ({"pairs": [[0, 1], [1, 2]], "weights": [1, 0]}, ValueError, r"weights must be positive"),
        ({"pairs": [[0, 1]], "weights": [-2.0]}, ValueError, r"weights\[0\] = .*-2\.0"),
        ({"pairs": [[0, 1]], "n_samples": 2.0}, TypeError, r"n_samples must be an int"),
    ],
)
def test_pair_feedback_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        rb.PairFeedback(**kwargs)


# --------------------------------------------------------------------------- train: X


@pytest.mark.parametrize(
    ("X_bad", "error", "match"),
    [
        (
            np.arange(6.0),
            ValueError,
            r"X must be 2-D of shape \(n_samples, n_features\); got a 1-D",
        ),
        (np.zeros((6, 2, 1)), ValueError, r"X must be 2-D of shape \(n_samples, n_features\)"),
        (np.zeros((6, 0)), ValueError, r"X must have at least one row and one column"),
        (np.array([["a", "b"]] * 6), TypeError, r"X must hold numbers"),
        (np.where(np.eye(6, 2) > 0, np.inf, 0.0), ValueError, r"X contains infinity"),
        (np.zeros((5, 2)), ValueError, r"feedback covers 6 rows but X has 5"),
        ([[1, 2], [3]], TypeError, r"X must be a 2-D array-like of numbers"),
    ],
)
def test_train_bad_X(X_bad, error, match):
    with pytest.raises(error, match=match):
        rb.train(X_bad, FB, 3)


def test_train_bad_feedback_type():
    with pytest.raises(TypeError, match=r"feedback must be a rankboost PairFeedback"):
        rb.train(X, Y, 3)


def test_pair_feedback_wrong_size():
    fb = rb.PairFeedback([[0, 1]], n_samples=2)
    with pytest.raises(ValueError, match=r"feedback covers 2 rows but X has 6"):
        rb.train(X, fb, 3)


# --------------------------------------------------------------------------- train: params


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"n_rounds": 0},
            ValueError,
            r"'n_rounds' parameter of rankboost.train must be an int >= 1; got 0",
        ),
        (
            {"n_rounds": -3},
            ValueError,
            r"'n_rounds' parameter of rankboost.train must be an int >= 1; got -3",
        ),
        (
            {"n_rounds": 2.5},
            TypeError,
            r"'n_rounds' parameter of rankboost.train must be an int >= 1; got 2\.5",
        ),
        (
            {"n_rounds": True},
            TypeError,
            r"'n_rounds' parameter of rankboost.train must be an int >= 1; got True",
        ),
        (
            {"alpha": "newton"},
            ValueError,
            r"'alpha' parameter of rankboost.train must be one of .*; got 'newton'",
        ),
        (
            {"alpha": None},
            ValueError,
            r"'alpha' parameter of rankboost.train must be one of .*; got None",
        ),
        (
            {"weak_ranker": "stump"},
            ValueError,
            r"'weak_ranker' parameter of rankboost.train must be one of .*; got 'stump'",
        ),
        (
            {"alpha": "exact", "weak_ranker": "feature"},
            ValueError,
            r"alpha='exact' needs binary weak rankers .*weak_ranker='feature'",
        ),
        (
            {"alpha": "exact", "weak_ranker": "both"},
            ValueError,
            r"alpha='exact' needs binary weak rankers .*weak_ranker='both'",
        ),
        (
            {"thresholds": 1},
            ValueError,
            r"'thresholds' parameter of rankboost.train must be 'all' or an int number of bins",
        ),
        (
            {"thresholds": "every"},
            ValueError,
            r"'thresholds' parameter of rankboost.train must be 'all' or an int",
        ),
        (
            {"thresholds": 3.0},
            TypeError,
            r"'thresholds' parameter of rankboost.train must be 'all' or an int .*got 3\.0",
        ),
        (
            {"tol": -1.0},
            ValueError,
            r"'tol' parameter of rankboost.train must be a number >= 0; got -1\.0",
        ),
        (
            {"tol": float("nan")},
            ValueError,
            r"'tol' parameter of rankboost.train must be a number >= 0; got nan",
        ),
        (
            {"tol": "small"},
            ValueError,
            r"'tol' parameter of rankboost.train must be a number >= 0; got 'small'",
        ),
        (
            {"positive_cumulative": "yes"},
            TypeError,
            r"'positive_cumulative' parameter of rankboost.train must be True or False",
        ),
        ({"feature_names": ["a"]}, ValueError, r"feature_names has 1 names but X has 2 columns"),
    ],
)
def test_train_bad_params(kwargs, error, match):
    params = {"n_rounds": 3, **kwargs}
    with pytest.raises(error, match=match):
        rb.train(X, FB, **params)


# --------------------------------------------------------------------------- model use


@pytest.fixture(scope="module")
def model():
    return rb.train(np.random.default_rng(0).normal(size=(6, 2)), FB, 3)


def test_predict_wrong_number_of_features(model):
    with pytest.raises(ValueError, match=r"X has 3 features but the model was trained on 2"):
        model.decision_function(np.zeros((4, 3)))


def test_predict_with_infinity(model):
    with pytest.raises(ValueError, match=r"X contains infinity \(first at row 1, column 0\)"):
        model.predict(np.array([[0.0, 1.0], [-np.inf, 0.0]]))


@pytest.mark.parametrize(
    ("n_rounds", "error", "match"),
    [
        (4, ValueError, r"n_rounds must be between 0 and 3"),
        (-1, ValueError, r"n_rounds must be between 0 and 3"),
        (1.0, TypeError, r"n_rounds must be an int or None"),
    ],
)
def test_predict_bad_n_rounds(model, n_rounds, error, match):
    with pytest.raises(error, match=match):
        model.decision_function(np.zeros((2, 2)), n_rounds=n_rounds)


def test_bad_importance_type(model):
    with pytest.raises(ValueError, match=r"importance_type must be 'gain', 'split' or 'alpha'"):
        model.feature_importances("weight")


def test_rloss_bad_scores():
    with pytest.raises(ValueError, match=r"scores must be 1-D with 6 entries"):
        FB.rloss(np.zeros(5))
    with pytest.raises(ValueError, match=r"scores contains NaN \(first at row 0\)"):
        FB.rloss(np.full(6, np.nan))


# --------------------------------------------------------------------------- legal oddities


def test_all_nan_and_constant_features_are_legal_and_never_chosen():
    rng = np.random.default_rng(1)
    n = 40
    y = (rng.random(n) < 0.4).astype(float)
    good = y + rng.normal(scale=0.8, size=n)
    Xo = np.column_stack([np.full(n, np.nan), np.full(n, 2.0), good])
    model = rb.train(Xo, rb.BipartiteFeedback(y), 10, weak_ranker="both")
    assert model.n_rounds == 10
    assert set(model.history["feature"].tolist()) == {2}
