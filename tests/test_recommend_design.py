"""Tests of the recommender's configurations (unrated fill, pair weights, crowd and VSIM
columns, feature caps), recommend_all, sparse input at scale and the bad inputs of issue 14.

Each configuration is checked against a slow reference written straight from its
definition with Python loops: the recommender's model must be the model ``rankboost.train``
learns from the reference problem.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import rankboost as rb
from rankboost import TrainingStoppedWarning
from rankboost.recommend import RankBoostRecommender
from rankboost.recommend._per_user import Design, _design_matrix


def _ratings(seed: int = 0, n_users: int = 24, n_items: int = 40, density: float = 0.45):
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=n_items) + rng.normal(size=(n_users, 1))
    r = np.clip(np.round(3 + latent + 0.8 * rng.normal(size=(n_users, n_items))), 1, 5)
    r[rng.random((n_users, n_items)) > density] = np.nan
    rows, cols = np.nonzero(~np.isnan(r))
    return sp.csr_matrix((r[rows, cols], (rows, cols)), shape=r.shape), r


def _fit(R, targets, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        return RankBoostRecommender(mode="per_user", **kw).fit(R, target_users=targets)


def _train(X, fb, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        return rb.train(X, fb, thresholds="all", **kw)


def _assert_same_model(a, b):
    """Same rounds: features, kinds, defaults exactly; thresholds, cuts and alphas to 1e-12.

    (A column computed as a sum over raters differs from its reference's by an ulp, so
    cut values are compared with a tolerance; every discrete choice must be identical.)
    """
    ra, rb_ = a.rounds, b.rounds
    for k in ("feature", "kind", "cut_offsets", "default"):
        np.testing.assert_array_equal(getattr(ra, k), getattr(rb_, k), err_msg=k)
    for k in ("threshold", "alpha", "cuts"):
        np.testing.assert_allclose(getattr(ra, k), getattr(rb_, k), rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------- references


def _ref_columns(dense, user, feats, items, extra, unrated, train_items=None):
    """The model's columns for ``items``, from the definitions, one cell at a time."""
    means = {f: np.nanmean(dense[f]) for f in feats}
    rows = []
    for j in items:
        raw = [dense[f, j] for f in feats]
        row = [
            means[f] if np.isnan(v) and unrated == "user_mean" else v
            for f, v in zip(feats, raw, strict=True)
        ]
        raters = [f for f, v in zip(feats, raw, strict=True) if not np.isnan(v)]
        for name in extra:
            if name == "count":
                row.append(float(len(raters)))
            elif name == "mean":
                row.append(np.mean([dense[f, j] for f in raters]) if raters else np.nan)
            elif name == "centred_mean":
                dev = [dense[f, j] - means[f] for f in raters]
                row.append(np.mean(dev) if raters else np.nan)
            else:
                raise AssertionError(name)
        rows.append(row)
    return np.array(rows, dtype=float)


def _ref_vsim(dense, user, feats, score_items, weight_items):
    """VSIM (Breese et al. 1998) of ``score_items``, cosine weights from ``weight_items``."""
    means = {f: np.nanmean(dense[f]) for f in feats}
    w = {}
    for f in feats:
        co = [j for j in weight_items if not np.isnan(dense[f, j])]
        num = sum(dense[user, j] * dense[f, j] for j in co)
        den = np.sqrt(sum(dense[user, j] ** 2 for j in co) * sum(dense[f, j] ** 2 for j in co))
        w[f] = num / den if den > 0 else 0.0
    out = []
    for j in score_items:
        raters = [f for f in feats if not np.isnan(dense[f, j])]
        norm = sum(abs(w[f]) for f in raters)
        num = sum(w[f] * (dense[f, j] - means[f]) for f in raters)
        out.append(num / norm if norm > 0 else np.nan)
    return np.array(out)


# ----------------------------------------------------------------------------- configurations


@pytest.mark.parametrize(
    ("unrated", "extra"),
    [("user_mean", ()), ("abstain", ("mean", "centred_mean", "count")), ("user_mean", ("count",))],
)
def test_columns_match_the_reference(unrated, extra):
    R, dense = _ratings(1)
    feats = list(range(8, 24))
    rec = _fit(R, [0, 3], feature_users=feats, n_estimators=12, unrated=unrated,
               extra_features=extra, positive_cumulative=True)  # fmt: skip
    for u in (0, 3):
        f = [int(x) for x in rec.feature_users_[u]]
        rated = np.flatnonzero(~np.isnan(dense[u]))
        X = _ref_columns(dense, u, f, rated, extra, unrated)
        ref = _train(X, rb.LayeredFeedback(dense[u, rated]), n_rounds=12,
                     positive_cumulative=True)  # fmt: skip
        _assert_same_model(rec.models_[u], ref)
        every = np.arange(dense.shape[1])
        np.testing.assert_allclose(
            rec.predict(u), ref.decision_function(_ref_columns(dense, u, f, every, extra, unrated)),
            rtol=0, atol=1e-12,
        )  # fmt: skip


def test_gap_pair_weights_match_the_reference():
    R, dense = _ratings(2)
    rec = _fit(R, [1], feature_users=list(range(6, 24)), n_estimators=10, pair_weight="gap")
    u = 1
    rated = np.flatnonzero(~np.isnan(dense[u]))
    y = dense[u, rated]
    pairs, weights = [], []
    for a in range(len(y)):
        for b in range(len(y)):
            if y[b] > y[a]:
                pairs.append((a, b))
                weights.append(y[b] - y[a])
    f = [int(x) for x in rec.feature_users_[u]]
    X = _ref_columns(dense, u, f, rated, (), "abstain")
    ref = _train(X, rb.PairFeedback(pairs, weights, n_samples=len(y)), n_rounds=10)
    assert rec.models_[u] == ref
    equal = _fit(R, [1], feature_users=list(range(6, 24)), n_estimators=10)
    assert equal.models_[u] != rec.models_[u]  # the weights change what is learned


def test_vsim_column_is_cross_fitted_on_training_and_full_fit_for_scoring():
    R, dense = _ratings(3, n_items=60)
    u, feats = 0, list(range(5, 24))
    rated = np.flatnonzero(~np.isnan(dense[u]))
    X = _ref_columns(dense, u, feats, rated, (), "abstain")
    means = np.array([np.nanmean(dense[f]) for f in feats])
    design = Design("abstain", "equal", ("vsim",))
    D, w = _design_matrix(X, means, design, y=dense[u, rated])
    folds = np.arange(rated.shape[0]) % 5
    expected = np.empty(rated.shape[0])
    for k in range(5):
        rows = rated[folds == k]
        expected[folds == k] = _ref_vsim(dense, u, feats, rows, rated[folds != k])
    np.testing.assert_allclose(D[:, -1], expected, rtol=1e-12, equal_nan=True)
    # scoring: weights from every training item
    other = np.flatnonzero(np.isnan(dense[u]))
    Xo = _ref_columns(dense, u, feats, other, (), "abstain")
    Do, _ = _design_matrix(Xo, means, design, w=w)
    np.testing.assert_allclose(
        Do[:, -1], _ref_vsim(dense, u, feats, other, rated), rtol=1e-12, equal_nan=True
    )


def test_vsim_training_value_never_sees_its_own_rating():
    R, dense = _ratings(4, n_items=50)
    u, feats = 2, list(range(6, 24))
    rated = np.flatnonzero(~np.isnan(dense[u]))
    X = _ref_columns(dense, u, feats, rated, (), "abstain")
    means = np.array([np.nanmean(dense[f]) for f in feats])
    design = Design("abstain", "equal", ("vsim",))
    y = dense[u, rated].copy()
    D, _ = _design_matrix(X, means, design, y=y)
    for i in (0, 3, 7):
        y2 = y.copy()
        y2[i] = 6.0 - y2[i] if y2[i] != 3 else 5.0  # change the target's own rating
        D2, _ = _design_matrix(X, means, design, y=y2)
        assert D2[i, -1] == D[i, -1] or (np.isnan(D2[i, -1]) and np.isnan(D[i, -1]))
        assert not np.allclose(D2[:, -1], D[:, -1], equal_nan=True)  # others do change


def test_target_in_feature_users_never_enters_its_crowd_columns():
    R, dense = _ratings(5)
    a = _fit(R, [0], feature_users=list(range(0, 24)), n_estimators=8,
             extra_features=("mean", "count", "vsim"), unrated="user_mean")  # fmt: skip
    b = _fit(R, [0], feature_users=list(range(1, 24)), n_estimators=8,
             extra_features=("mean", "count", "vsim"), unrated="user_mean")  # fmt: skip
    assert 0 not in a.feature_users_[0]
    assert a.models_[0] == b.models_[0]
    np.testing.assert_array_equal(a.predict(0), b.predict(0))


def test_user_features_false_keeps_only_the_extra_columns():
    R, dense = _ratings(6)
    rec = _fit(R, [0], feature_users=list(range(4, 24)), n_estimators=6, user_features=False,
               extra_features=("centred_mean", "count"), weak_ranker="feature")  # fmt: skip
    u = 0
    f = [int(x) for x in rec.feature_users_[u]]
    rated = np.flatnonzero(~np.isnan(dense[u]))
    X = _ref_columns(dense, u, f, rated, ("centred_mean", "count"), "abstain")[:, len(f) :]
    ref = _train(X, rb.LayeredFeedback(dense[u, rated]), n_rounds=6, weak_ranker="feature")
    _assert_same_model(rec.models_[u], ref)
    every = np.arange(dense.shape[1])
    Xall = _ref_columns(dense, u, f, every, ("centred_mean", "count"), "abstain")[:, len(f) :]
    np.testing.assert_allclose(rec.predict(u), ref.decision_function(Xall), rtol=0, atol=1e-12)


def test_max_feature_users_keeps_the_most_overlapping_lowest_first():
    R, dense = _ratings(7, n_users=30)
    u = 0
    rated = ~np.isnan(dense[u])
    overlap = {f: int(np.sum(rated & ~np.isnan(dense[f]))) for f in range(1, 30)}
    ranked = sorted(overlap, key=lambda f: (-overlap[f], f))
    rec = _fit(R, [u], n_estimators=4, max_feature_users=7)
    assert sorted(rec.feature_users_[u].tolist()) == sorted(ranked[:7])
    assert rec.feature_users_[u].tolist() == sorted(ranked[:7])  # in feature_users order


def test_parallel_equals_serial_with_every_option():
    R, _ = _ratings(8, n_users=30)
    kw = {"feature_users": np.arange(10, 30), "n_estimators": 8, "unrated": "user_mean",
          "pair_weight": "gap", "extra_features": ("centred_mean", "count", "vsim")}  # fmt: skip
    s = _fit(R, np.arange(8), n_jobs=1, **kw)
    p = _fit(R, np.arange(8), n_jobs=2, **kw)
    for u in range(8):
        assert s.models_[u] == p.models_[u]
    np.testing.assert_array_equal(s.recommend_all(5)[1], p.recommend_all(5)[1])


# ----------------------------------------------------------------------------- recommend_all


def test_recommend_all_equals_recommend_per_user_and_pads():
    R, dense = _ratings(9)
    rec = _fit(R, [0, 2, 5], feature_users=list(range(8, 24)), n_estimators=10,
               extra_features=("vsim",))  # fmt: skip
    users, items, scores = rec.recommend_all(k=4)
    assert users.tolist() == [0, 2, 5]
    for row, u in enumerate(users):
        it, sc = rec.recommend(int(u), k=4)
        np.testing.assert_array_equal(items[row], it)
        np.testing.assert_array_equal(scores[row], sc)
    big = dense.shape[1]
    users, items, scores = rec.recommend_all(k=big)
    n_unrated = int(np.isnan(dense[0]).sum())
    assert (items[0, n_unrated:] == -1).all()
    assert np.isnan(scores[0, n_unrated:]).all()
    assert (items[0, :n_unrated] >= 0).all()
    _, all_items, _ = rec.recommend_all(k=big, exclude_rated=False)
    assert (all_items >= 0).all()
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        rec.recommend_all(k=0)
    with pytest.raises(ValueError, match="not fitted yet"):
        RankBoostRecommender(mode="per_user").recommend_all()


def test_predict_on_repeated_and_unordered_items_in_blocks(monkeypatch):
    """Scoring in blocks (forced small) and with repeated items gives the per-item scores."""
    import rankboost.recommend._per_user as mod

    R, _ = _ratings(11)
    rec = _fit(R, [0], feature_users=list(range(8, 24)), n_estimators=10)
    whole = rec.predict(0)
    items = np.array([5, 3, 5, 39, 0, 3])
    monkeypatch.setattr(mod, "_SCORE_CELLS", 16)  # one item per block for 16 features
    np.testing.assert_array_equal(rec.predict(0, items), whole[items])
    np.testing.assert_array_equal(rec.predict(0), whole)


def test_recommend_all_with_labels_pads_with_none():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {"user": ["a", "a", "b", "b", "b", "c", "c", "c"],
         "item": ["x", "y", "x", "y", "z", "x", "y", "z"],
         "rating": [5, 1, 4, 2, 5, 5, 1, 2]}
    )  # fmt: skip
    rec = _fit(frame, ["a"], feature_users=["b", "c"], n_estimators=3)
    users, items, scores = rec.recommend_all(k=2)
    assert users.tolist() == ["a"]
    assert items.tolist() == [["z", None]]
    assert np.isnan(scores[0, 1])


# ----------------------------------------------------------------------------- sparse at scale


def test_huge_sparse_catalogue_is_never_densified():
    """300,000 users x 200,000 items (480 GB dense): fit and recommend_all from CSR slices."""
    rng = np.random.default_rng(0)
    n_users, n_items = 300_000, 200_000
    users = np.repeat(np.arange(40), 30)
    items = np.concatenate([rng.choice(60, 30, replace=False) for _ in range(40)])
    vals = rng.integers(1, 6, users.shape[0]).astype(float)
    R = sp.csr_matrix((vals, (users, items)), shape=(n_users, n_items))
    rec = _fit(R, [0, 1, 2], n_estimators=5, max_feature_users=20, n_jobs=1,
               extra_features=("centred_mean",), unrated="user_mean")  # fmt: skip
    _, top, _ = rec.recommend_all(k=3)
    assert top.shape == (3, 3)
    assert (top >= 0).all()
    assert all(len(rec.feature_users_[u]) == 20 for u in (0, 1, 2))


# ----------------------------------------------------------------------------- bad input


def test_bad_input_of_issue_14():
    R, _ = _ratings(10, n_users=6, n_items=10)
    with pytest.raises(ValueError, match="non-empty 2-D user x item matrix"):
        RankBoostRecommender(mode="per_user").fit(sp.csr_matrix((0, 0)))
    with pytest.raises(ValueError, match="non-empty 2-D user x item matrix"):
        RankBoostRecommender(mode="per_user").fit(np.empty((0, 4)))
    empty_row = R.tolil()
    empty_row[0, :] = 0
    empty_row = sp.csr_matrix(empty_row)
    empty_row.eliminate_zeros()
    with pytest.raises(ValueError, match=r"user 0 has 0 rating\(s\) with fewer than two"):
        RankBoostRecommender(mode="per_user").fit(empty_row, target_users=[0])
    bad = [
        ({"unrated": "zero"}, "unrated must be one of"),
        ({"pair_weight": "square"}, "pair_weight must be one of"),
        ({"extra_features": ("knn",)}, "extra_features must be distinct names"),
        ({"extra_features": ("vsim", "vsim")}, "extra_features must be distinct names"),
        ({"user_features": False}, "leaves no column"),
        ({"user_features": "no", "extra_features": ("count",)}, "must be True or False"),
        ({"max_feature_users": 0}, "max_feature_users must be None or an int >= 1"),
        ({"weak_ranker": "stump"}, "'weak_ranker' parameter of RankBoostRecommender"),
    ]
    for kw, msg in bad:
        with pytest.raises(ValueError, match=msg):
            RankBoostRecommender(mode="per_user", **kw).fit(R, [1])
