"""Tests of rankboost.recommend: per-user ranking problems and the RankBoost recommender."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from rankboost import TrainingStoppedWarning
from rankboost.metrics import disagreement
from rankboost.recommend import RankBoostRecommender, check_ratings, user_ranking_problem


def _ratings(seed: int = 0, n_users: int = 30, n_items: int = 60, density: float = 0.5):
    """Random 1..5 ratings with a latent taste, as a CSR matrix (absent = unrated)."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=n_items)
    bias = rng.normal(size=(n_users, 1))
    latent = quality + bias + 0.8 * rng.normal(size=(n_users, n_items))
    r = np.clip(np.round(3 + latent), 1, 5)
    r[rng.random((n_users, n_items)) > density] = np.nan
    rows, cols = np.nonzero(~np.isnan(r))
    return sp.csr_matrix((r[rows, cols], (rows, cols)), shape=r.shape)


def _fit(R, targets, columns=None, **kw):
    extra = {} if columns is None else {"columns": columns}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        return RankBoostRecommender(mode="per_user", **kw).fit(R, target_users=targets, **extra)


# ----------------------------------------------------------------------------- problems


def test_problem_features_are_nan_where_unrated_exact():
    R = np.array(
        [
            [5.0, np.nan, 3.0, 1.0],
            [4.0, 2.0, np.nan, np.nan],
            [np.nan, np.nan, 1.0, 5.0],
            [2.0, 2.0, 2.0, np.nan],
        ]
    )
    X, y = user_ranking_problem(sp.csr_matrix(np.nan_to_num(R)), 0, [3, 1, 2])
    expected = np.array([[2.0, 4.0, np.nan], [2.0, np.nan, 1.0], [np.nan, np.nan, 5.0]])
    np.testing.assert_array_equal(X, expected)  # NaN positions compared too
    np.testing.assert_array_equal(y, [5.0, 3.0, 1.0])


def test_problem_on_given_items_marks_unrated_target_with_nan():
    R = np.array([[5.0, np.nan, 3.0], [1.0, 4.0, np.nan]])
    X, y = user_ranking_problem(R, 0, [1], items=[2, 1, 0])
    np.testing.assert_array_equal(X, [[np.nan], [4.0], [1.0]])
    np.testing.assert_array_equal(y, [3.0, np.nan, 5.0])


def test_stored_zero_is_a_rating_and_dense_nan_is_unrated():
    R = sp.csr_matrix((np.array([0.0, 2.0]), (np.array([0, 1]), np.array([0, 0]))), shape=(2, 2))
    assert check_ratings(R).nnz == 2
    X, _ = user_ranking_problem(R, 1, [0])
    np.testing.assert_array_equal(X, [[0.0]])


def test_problem_matches_the_recommender_features():
    R = _ratings(1)
    rec = _fit(R, [0, 1], feature_users=np.arange(10, 30), n_estimators=5)
    X, y = user_ranking_problem(R, 0, rec.feature_users_[0])
    rated = R[0].indices
    np.testing.assert_array_equal(rec.predict(0, rated), rec.models_[0].decision_function(X))


# ----------------------------------------------------------------------------- learning


def test_recovers_a_feature_users_taste():
    """Target = feature user 3's taste on its training items; the other features are noise."""
    rng = np.random.default_rng(3)
    n_items = 80
    taste = rng.integers(1, 6, size=n_items).astype(float)
    noise = rng.integers(1, 6, size=(6, n_items)).astype(float)
    noise[rng.random(noise.shape) < 0.3] = np.nan
    R = np.vstack([taste, noise[:3], taste, noise[3:]])
    R[0, 50:] = np.nan  # held-out items
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        rec = RankBoostRecommender(
            mode="per_user", feature_users=np.arange(1, 8), n_estimators=30
        ).fit(R, target_users=[0])
    test = np.arange(50, n_items)
    assert disagreement(taste[test], rec.predict(0, test)) == 0.0
    imp = rec.models_[0].feature_importances_
    assert int(np.argmax(imp)) == list(rec.feature_users_[0]).index(4)


def test_recommend_excludes_rated_items_and_respects_candidates():
    R = _ratings(2)
    rec = _fit(R, [0, 3], feature_users=np.arange(15, 30), n_estimators=10)
    rated = set(R[3].indices.tolist())
    items, scores = rec.recommend(3, k=1000)
    assert rated.isdisjoint(items.tolist())
    assert len(items) == R.shape[1] - len(rated)
    assert np.all(np.diff(scores) <= 0)
    cand = np.array(sorted(rated)[:3] + [i for i in range(R.shape[1]) if i not in rated][:4])
    items, _ = rec.recommend(3, k=5, candidates=cand)
    assert set(items.tolist()) <= set(cand.tolist()) - rated
    items, _ = rec.recommend(3, k=5, candidates=cand, exclude_rated=False)
    assert len(items) == 5
    assert set(items.tolist()) <= set(cand.tolist())
    np.testing.assert_array_equal(
        rec.rank(3, cand), cand[np.argsort(-rec.predict(3, cand), kind="stable")]
    )


def test_target_never_uses_itself_and_no_overlap_features_are_dropped():
    R = _ratings(4).toarray()
    R[29, :] = 0.0
    R[29, 59] = 3.0  # user 29 rated a single item ...
    R[0, 59] = 0.0  # ... that user 0 did not rate: no overlap with user 0
    R = sp.csr_matrix(R)
    rec = _fit(R, [0, 1], n_estimators=5)
    assert 0 not in rec.feature_users_[0]
    assert 29 not in rec.feature_users_[0]
    assert rec.report_["n_features_dropped"] >= 1
    assert rec.report_["n_fitted"] == 2


def test_fit_is_deterministic():
    R = _ratings(5)
    kw = {"feature_users": np.arange(10, 30), "n_estimators": 15}
    a = _fit(R, np.arange(5), **kw)
    b = _fit(R, np.arange(5), **kw)
    for u in range(5):
        assert a.models_[u] == b.models_[u]


def test_parallel_equals_serial():
    R = _ratings(6, n_users=40)
    kw = {"feature_users": np.arange(20, 40), "n_estimators": 15, "positive_cumulative": True}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        serial = RankBoostRecommender(mode="per_user", **kw, n_jobs=1).fit(
            R, target_users=np.arange(12)
        )
        par = RankBoostRecommender(mode="per_user", **kw, n_jobs=2).fit(
            R, target_users=np.arange(12)
        )
    assert list(serial.models_) == list(par.models_)
    for u in serial.models_:
        assert serial.models_[u] == par.models_[u]
        np.testing.assert_array_equal(serial.predict(u), par.predict(u))


def test_params_only_init_and_clone():
    rec = RankBoostRecommender(mode="per_user", n_estimators=7, n_jobs=2)
    assert rec.get_params()["n_estimators"] == 7
    assert clone(rec).get_params() == rec.get_params()
    assert not hasattr(rec, "models_")


def test_early_stops_are_counted_and_summarised():
    # a two-level target and a feature user whose threshold orders it perfectly: |r| = 1
    R = np.array([[1.0, 1.0, 5.0], [2.0, 2.0, 4.0], [1.0, 3.0, 2.0]])
    with pytest.warns(TrainingStoppedWarning, match="1 of 1 per-user models stopped"):
        rec = RankBoostRecommender(mode="per_user", feature_users=[1, 2], n_estimators=10).fit(
            R, [0]
        )
    assert rec.report_["n_stopped_early"] == 1


# ----------------------------------------------------------------------------- bad input


def test_rating_out_of_range_names_user_and_item():
    R = np.array([[1.0, 5.0], [7.0, 2.0]])
    with pytest.raises(ValueError, match=r"rating 7.0 for user 1, item 0.*rating_range=\(1, 5\)"):
        RankBoostRecommender(mode="per_user", rating_range=(1, 5)).fit(R)


def test_non_finite_rating_and_duplicates_are_rejected():
    R = sp.csr_matrix(np.array([[1.0, 2.0], [3.0, 4.0]]))
    R.data[2] = np.inf
    with pytest.raises(ValueError, match=r"rating inf for user 1, item 0; ratings must be finite"):
        check_ratings(R)
    dup = sp.coo_matrix((np.array([1.0, 2.0]), (np.array([0, 0]), np.array([1, 1]))), (1, 2))
    with pytest.raises(ValueError, match="stores user 0, item 1 more than once"):
        check_ratings(dup)
    with pytest.raises(ValueError, match="rating_range must have low <= high"):
        check_ratings(np.ones((2, 2)), rating_range=(5, 1))
    with pytest.raises(ValueError, match="must be 2-D"):
        check_ratings(np.ones(3))


def test_target_without_crucial_pair_raises_or_is_skipped():
    R = np.array([[4.0, 4.0, 4.0], [1.0, 2.0, 3.0], [3.0, 1.0, 2.0]])
    with pytest.raises(ValueError, match=r"user 0 has 3 rating\(s\) with fewer than two distinct"):
        RankBoostRecommender(mode="per_user", feature_users=[1, 2]).fit(R, target_users=[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        rec = RankBoostRecommender(
            mode="per_user", feature_users=[1, 2], invalid_targets="skip"
        ).fit(R, target_users=[0, 1])
    assert rec.report_["n_skipped"] == 1
    assert list(rec.models_) == [1]
    with pytest.raises(ValueError, match="user 0 has no model: it was skipped in fit"):
        rec.recommend(0)


def test_target_whose_feature_users_have_no_overlap():
    R = np.array([[1.0, 2.0, np.nan, np.nan], [np.nan, np.nan, 3.0, 4.0]])
    with pytest.raises(ValueError, match="user 0: no feature user rated at least min_overlap=1"):
        RankBoostRecommender(mode="per_user", feature_users=[1]).fit(R, target_users=[0])
    rec = RankBoostRecommender(mode="per_user", feature_users=[1], invalid_targets="skip").fit(
        R, [0]
    )
    assert rec.report_ == {
        "n_targets": 1,
        "n_fitted": 0,
        "n_skipped": 1,
        "n_features_dropped": 1,
        "n_stopped_early": 0,
    }


def test_unknown_users_and_items():
    R = _ratings(7, n_users=10, n_items=20)
    with pytest.raises(ValueError, match=r"target_users contains unknown user 10: .* 10 users"):
        RankBoostRecommender(mode="per_user").fit(R, target_users=[0, 10])
    with pytest.raises(ValueError, match="feature_users contains unknown user -1"):
        RankBoostRecommender(mode="per_user", feature_users=[-1, 2]).fit(R, target_users=[0])
    with pytest.raises(ValueError, match="feature_users lists user 2 more than once"):
        RankBoostRecommender(mode="per_user", feature_users=[2, 2]).fit(R, target_users=[0])
    with pytest.raises(ValueError, match="not fitted yet"):
        RankBoostRecommender(mode="per_user").predict(0)
    rec = _fit(R, [0], feature_users=np.arange(5, 10), n_estimators=5)
    with pytest.raises(ValueError, match="user 3 has no model: it was not among the fitted"):
        rec.predict(3)
    with pytest.raises(ValueError, match="user must be an int user index"):
        rec.predict("0")
    with pytest.raises(ValueError, match="items contains unknown item 20"):
        rec.predict(0, [1, 20])
    with pytest.raises(ValueError, match="candidates contains unknown item -2"):
        rec.recommend(0, candidates=[-2])
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        rec.recommend(0, k=0)


def test_bad_parameters():
    R = _ratings(8, n_users=6, n_items=10)
    with pytest.raises(ValueError, match="invalid_targets must be one of"):
        RankBoostRecommender(mode="per_user", invalid_targets="ignore").fit(R)
    with pytest.raises(ValueError, match="min_overlap must be an int >= 1"):
        RankBoostRecommender(mode="per_user", min_overlap=0).fit(R)
    with pytest.raises(
        ValueError, match="'n_estimators' parameter of RankBoostRecommender must be an int >= 1"
    ):
        RankBoostRecommender(mode="per_user", n_estimators=0, invalid_targets="skip").fit(R, [0])


# ----------------------------------------------------------------------------- labels


def _frame(R):
    """The (user, item, rating) rows of a CSR matrix, with string labels."""
    pd = pytest.importorskip("pandas")
    coo = R.tocoo()
    return pd.DataFrame(
        {
            "user": [f"u{r:02d}" for r in coo.row],
            "item": [f"m{c:03d}" for c in coo.col],
            "rating": coo.data,
        }
    )


def test_labels_round_trip_string_ids_match_matrix_input():
    R = _ratings(3)
    df = _frame(R).sample(frac=1.0, random_state=0)  # row order does not matter
    by_pos = _fit(R, [0, 5], n_estimators=15, feature_users=list(range(10, 30)))
    by_label = _fit(
        df, ["u00", "u05"], n_estimators=15, feature_users=[f"u{k:02d}" for k in range(10, 30)]
    )
    assert list(by_label.users_) == [f"u{k:02d}" for k in range(30)]
    assert list(by_label.items_) == [f"m{k:03d}" for k in range(60)]
    assert sorted(by_label.models_) == ["u00", "u05"]
    assert list(by_label.feature_users_["u05"][:2]) == ["u10", "u11"]
    items, scores = by_label.recommend("u05", k=7)
    pos_items, pos_scores = by_pos.recommend(5, k=7)
    assert list(items) == [f"m{k:03d}" for k in pos_items]
    np.testing.assert_array_equal(scores, pos_scores)
    ranked = by_label.rank("u00", items=["m003", "m001", "m050"])
    assert list(ranked) == [f"m{k:03d}" for k in by_pos.rank(0, items=[3, 1, 50])]
    np.testing.assert_array_equal(
        by_label.predict("u00", ["m003", "m001"]), by_pos.predict(0, [3, 1])
    )


def test_wide_frame_index_users_columns_items():
    pd = pytest.importorskip("pandas")
    R = _ratings(4, n_users=12, n_items=20)
    dense = R.toarray()
    dense[dense == 0] = np.nan
    wide = pd.DataFrame(
        dense, index=[100 + k for k in range(12)], columns=list("abcdefghijklmnopqrst")
    )
    rec = _fit(wide, [100], n_estimators=10)
    ref = _fit(R, [0], n_estimators=10)
    items, _ = rec.recommend(100, k=5)
    assert list(items) == [wide.columns[k] for k in ref.recommend(0, k=5)[0]]
    assert set(items).isdisjoint(set(wide.columns[~np.isnan(dense[0])]))  # unrated only


def test_frame_with_custom_column_names_and_int_ids():
    pd = pytest.importorskip("pandas")
    df = _frame(_ratings(5, n_users=10, n_items=25)).rename(
        columns={"user": "userId", "item": "movieId", "rating": "stars"}
    )
    df["movieId"] = df["movieId"].str[1:].astype(int) + 1000  # MovieLens-like int ids
    rec = _fit(df, ["u01"], n_estimators=5, columns=("userId", "movieId", "stars"))
    items, _ = rec.recommend("u01", k=3)
    assert items.dtype.kind == "i"
    assert all(i >= 1000 for i in items)
    with pytest.raises(ValueError, match="user, item, rating"):
        RankBoostRecommender(mode="per_user").fit(df, columns=("userId", "movieId"))
    del pd


def test_long_frame_without_columns_is_refused_with_the_columns_to_pass():
    """Issue 40: MovieLens' (userId, movieId, rating, timestamp) rows without columns= were
    read as a 100,000-user matrix (a 74.5 GiB user-user table, or an All-NaN error)."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame(
        {
            "userId": rng.integers(1, 60, n),
            "movieId": rng.integers(1, 200, n),
            "rating": rng.integers(1, 6, n).astype(float),
            "timestamp": rng.integers(8 * 10**8, 9 * 10**8, n),
        }
    ).drop_duplicates(["userId", "movieId"])
    rec = RankBoostRecommender(mode="per_user", rating_range=(1, 5))
    needle = r"name its columns with columns=\('userId', 'movieId', 'rating'\)"
    with pytest.raises(ValueError, match=needle):
        rec.fit(df)
    with pytest.raises(ValueError, match="looks like a table of \\(user, item, rating\\) rows"):
        rec.fit(df[["userId", "movieId", "rating"]])
    # named, it is read as rows; a wide matrix of whole ratings is still a matrix
    rec.fit(df, columns=("userId", "movieId", "rating"), target_users=[int(df.userId.iloc[0])])
    wide = pd.DataFrame(rng.integers(1, 6, (60, 4)).astype(float), columns=list("abcd"))
    RankBoostRecommender(mode="per_user", rating_range=(1, 5), n_estimators=3).fit(
        wide, target_users=[0]
    )


def test_unknown_labels_are_named():
    df = _frame(_ratings(6, n_users=10, n_items=25))
    rec = _fit(df, ["u01"], n_estimators=5)
    with pytest.raises(ValueError, match="unknown user 'nobody'"):
        rec.recommend("nobody")
    with pytest.raises(ValueError, match="unknown item 'm999'"):
        rec.predict("u01", ["m001", "m999"])
    with pytest.raises(ValueError, match="candidates contains unknown item 'zz'"):
        rec.recommend("u01", candidates=["zz"])
    with pytest.raises(ValueError, match="user 'u02' has no model"):
        rec.rank("u02")
    with pytest.raises(ValueError, match="target_users contains unknown user 'u99'"):
        RankBoostRecommender(mode="per_user").fit(df, target_users=["u99"])
    with pytest.raises(ValueError, match="feature_users contains unknown user 7"):
        RankBoostRecommender(mode="per_user", feature_users=[7]).fit(df, target_users=["u01"])
    u, i = df.iloc[3][["user", "item"]]
    with pytest.raises(ValueError, match=f"user '{u}', item '{i}' more than once"):
        RankBoostRecommender(mode="per_user").fit(pd_concat(df, df.iloc[[3]]))
    bad = df.copy()
    bad.loc[bad.index[0], "rating"] = 9.0
    with pytest.raises(ValueError, match=r"for user 'u\d\d', item 'm\d\d\d'"):
        RankBoostRecommender(mode="per_user", rating_range=(1, 5)).fit(bad)


def pd_concat(*frames):
    import pandas as pd

    return pd.concat(frames, ignore_index=True)


def test_matrix_input_keeps_int_positions():
    R = _ratings(7, n_users=10, n_items=25)
    rec = _fit(R, [1, 2], n_estimators=5)
    np.testing.assert_array_equal(rec.users_, np.arange(10))
    np.testing.assert_array_equal(rec.items_, np.arange(25))
    assert sorted(rec.models_) == [1, 2]
    assert all(type(u) is int for u in rec.models_)
    items, _ = rec.recommend(np.int64(1), k=4)
    assert items.dtype == np.int64
    assert rec.rank(2, items=[3, 4]).dtype == np.int64
    with pytest.raises(ValueError, match="user must be an int"):
        rec.recommend("1")
    with pytest.raises(ValueError, match="unknown item 25"):
        rec.predict(1, [25])


# ----------------------------------------------------------------------------- progress


def _bar_lines(err: str) -> list[str]:
    """The states a tqdm bar printed (carriage returns end them)."""
    return [s.strip() for s in err.replace("\r", "\n").splitlines() if s.strip()]


@pytest.mark.parametrize("refit", [False, True])
def test_issue38_verbose_fit_shows_its_stages(capsys, refit):
    """Pooled ``fit(verbose=1)``: a tqdm bar naming each stage, full at the end (issue 38:
    30-60 s on MovieLens 100K were silent); ``verbose=0`` prints nothing."""
    pytest.importorskip("tqdm")
    R = _ratings(8, n_users=30)
    kw = {"n_estimators": 5, "rating_range": (1, 5), "n_folds": 2, "inner_folds": 2}
    RankBoostRecommender(**kw, refit=refit).fit(R)
    assert capsys.readouterr().err == ""
    RankBoostRecommender(**kw, refit=refit, verbose=1).fit(R)
    lines = _bar_lines(capsys.readouterr().err)
    text = "\n".join(lines)
    if refit:
        models = (
            "choosing the rounds (ratings), inner fold 2/2",
            "training the pooled model (ratings,",
            "training the pooled model (liked,",
        )
    else:
        models = tuple(
            f"training the pooled model ({kind}) and choosing its rounds on held-out users"
            for kind in ("ratings", "liked")
        )
    for stage in (
        "choosing ease_lambda 1/5",
        "cross-fitting the base recommenders 2/2",
        *models,
        "the base recommenders on all the ratings",
    ):
        assert f"RankBoostRecommender.fit: {stage}" in text, text
    # 5 penalties + 2 folds + 2 models x (2 inner folds + 1, or 1 run) + all ratings = 14
    # (10) steps, the last one starting after 13 (9) (the bar, leave=False, is cleared when
    # it closes)
    last = [s for s in lines if "the base recommenders on all the ratings" in s]
    assert ("13/14" if refit else "9/10") in last[0], text


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_issue38_verbose_per_user_fit_counts_the_targets(capsys, n_jobs):
    pytest.importorskip("tqdm")
    R = _ratings(6, n_users=40)
    kw = {"feature_users": np.arange(20, 40), "n_estimators": 5, "n_jobs": n_jobs}
    _fit(R, np.arange(12), verbose=1, **kw)
    lines = _bar_lines(capsys.readouterr().err)
    bar = [s for s in lines if s.startswith("RankBoostRecommender.fit")]  # not joblib's
    assert "0/12" in bar[0], lines
    assert "RankBoostRecommender.fit: one model per target user (12)" in bar[-1], lines
