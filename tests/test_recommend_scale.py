"""The recommender at MovieLens-10M scale (issue 35, item 2): the ratings generator, the
item-similarity kernel, the capped neighbour pool and query sample, memory limits, and the
bad input of the scale path (too many ratings, users with nothing left, float32 and strings)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from rankboost.datasets import make_ratings
from rankboost.recommend import RankBoostRecommender, _scale
from rankboost.recommend._base import BaseScores, choose_ease_lambda
from rankboost.recommend._problem import check_ratings
from test_recommend_pooled import _ratings, _ref_scores

SMALL = {"n_estimators": 5, "inner_folds": None, "n_folds": 2, "ease_lambda": 10.0}

# ------------------------------------------------------------------ the generator


def test_make_ratings_shape_counts_scale_and_seed():
    R = make_ratings(500, 300, 20_000, random_state=3)
    assert R.shape == (500, 300)
    assert R.nnz == 20_000
    assert R.has_canonical_format
    assert set(np.unique(R.data)) <= set(np.arange(1, 11) / 2)  # 0.5 .. 5 in halves
    assert R.getnnz(axis=1).min() == 20  # MovieLens's least active user
    assert abs(R.data.mean() - 3.5) < 0.05
    again = make_ratings(500, 300, 20_000, random_state=3)
    assert (R != again).nnz == 0  # seeded
    assert (R != make_ratings(500, 300, 20_000, random_state=4)).nnz > 0
    whole = make_ratings(50, 30, 500, scale="whole")
    assert set(np.unique(whole.data)) <= {1.0, 2.0, 3.0, 4.0, 5.0}


def test_make_ratings_is_skewed_like_movielens():
    R = make_ratings(2000, 1000, 100_000, random_state=0)
    n_i = np.sort(R.getnnz(axis=0))[::-1]
    n_u = np.sort(R.getnnz(axis=1))[::-1]
    assert n_i[:100].sum() > 0.3 * R.nnz  # the top 10% of items hold over 30% of ratings
    assert n_u[:200].sum() > 0.25 * R.nnz  # the top 10% of users give over 25%
    assert n_u.max() > 5 * np.median(n_u)


def test_make_ratings_fills_users_who_rate_almost_everything():
    R = make_ratings(6, 40, 220, random_state=1)  # 37 of 40 items per user on average
    assert R.nnz == 220
    assert R.getnnz(axis=1).max() <= 40
    full = make_ratings(5, 8, 40)  # every cell
    assert (full.getnnz(axis=1) == 8).all()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n_users": 10, "n_items": 5, "n_ratings": 51}, ValueError,
         r"n_ratings=51 is more than the 10 x 5 = 50 cells .* at most that many"),
        ({"n_users": 10, "n_items": 5, "n_ratings": 9}, ValueError,
         r"n_ratings=9 is fewer than n_users=10; every user rates at least one item"),
        ({"n_users": 0}, ValueError, r"n_users must be >= 1, got 0"),
        ({"n_items": 2.5}, TypeError, r"n_items must be an int, got 2.5"),
        ({"scale": "stars"}, ValueError, r"scale must be one of \('half', 'whole'\), got 'stars'"),
    ],
)  # fmt: skip
def test_make_ratings_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        make_ratings(**{"n_users": 10, "n_items": 5, "n_ratings": 20, **kwargs})


# ------------------------------------------------------------------ kernels and caps


@pytest.mark.parametrize("parallel", [False, True])
def test_gram_rows_equals_scipys_dense_product_bit_for_bit(parallel):
    from rankboost._kernels.gram import gram_rows

    rng = np.random.default_rng(0)
    V = sp.random(40, 70, density=0.2, format="csr", random_state=rng)
    VT = sp.csr_matrix(V.T)
    out = np.zeros((15, 40))
    gram_rows(10, 25, V.indptr.astype(np.int64), V.indices, V.data,
              VT.indptr.astype(np.int64), VT.indices, VT.data, out, parallel)  # fmt: skip
    np.testing.assert_array_equal(out, V[10:25] @ V.T.toarray())


def test_item_similarities_need_no_dense_users_x_items_array():
    """Issue 35: the item similarities were built from ``V.T.toarray()``, users x items."""
    R = _ratings(1, n_users=30, n_items=12)
    got = BaseScores(("item_knn", "cooccurrence"), k=3).fit(R).scores(np.arange(30))
    want = np.stack([_ref_scores(R, n, k=3) for n in ("item_knn", "cooccurrence")], axis=2)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_user_knn_pool_is_capped_to_a_seeded_sample(monkeypatch):
    monkeypatch.setattr(_scale, "USER_KNN_POOL", 6)
    R = _ratings(2, n_users=20, n_items=15)
    pool = _scale.neighbour_pool(None, 20)
    assert pool.shape == (6,)
    assert (np.diff(pool) > 0).all()
    np.testing.assert_array_equal(pool, _scale.neighbour_pool(np.arange(20), 20))
    got = BaseScores(("user_knn",)).fit(R).scores(np.arange(20))[..., 0]
    np.testing.assert_allclose(got, _ref_scores(R, "user_knn", pool=pool), rtol=1e-9)
    small = _scale.neighbour_pool(np.array([4, 2, 9]), 20)  # under the cap: kept whole
    np.testing.assert_array_equal(small, [2, 4, 9])


def test_training_queries_are_capped_and_every_user_is_recommended_for(monkeypatch):
    R = _ratings(4, n_users=40, n_items=25)
    full = RankBoostRecommender(**SMALL).fit(R)
    monkeypatch.setattr(_scale, "MAX_QUERIES", 12)
    capped = RankBoostRecommender(**SMALL).fit(R)
    assert capped.report_["n_rows"] < 0.5 * full.report_["n_rows"]  # 12 of 40 queries
    assert capped.report_["n_fitted"] == 40
    users, items, _ = capped.recommend_all(k=3)
    assert users.tolist() == list(range(40))
    assert (items >= 0).all()


def test_choose_ease_lambda_scores_at_most_max_queries_users(monkeypatch):
    R = _ratings(5, n_users=40, n_items=25)
    _, value_all = choose_ease_lambda(R, 0, lambdas=(1.0, 30.0))
    monkeypatch.setattr(_scale, "MAX_QUERIES", 10)
    _, value = choose_ease_lambda(R, 0, lambdas=(1.0, 30.0))
    assert value != value_all  # the mean is over a sample of 10 users now


# ------------------------------------------------------------------ bad input of the scale path


def test_ease_too_large_for_memory_is_a_clear_error_before_allocating():
    R = sp.csr_matrix((np.array([4.0, 5.0]), ([0, 1], [0, 400_000])), shape=(2, 400_001))
    match = (
        r"EASE .* 2 dense 400,001 x 400,001 float64 arrays \(2384\.2 GiB\) but only .* GiB "
        r"of memory is available; drop 'ease'"
    )
    with pytest.raises(MemoryError, match=match):
        RankBoostRecommender().fit(R)


def test_a_user_with_every_item_rated_gets_an_empty_list():
    R = _ratings(6, n_users=12, n_items=10).tolil()
    R[0, :] = 3.0
    R[0, 4] = 5.0
    R = sp.csr_matrix(R)
    rec = RankBoostRecommender(**SMALL).fit(R)
    items, scores = rec.recommend(0, k=5)
    assert items.shape == (0,)
    assert scores.shape == (0,)
    users, top, vals = rec.recommend_all(k=5)
    assert (top[0] == -1).all()
    assert np.isnan(vals[0]).all()


def test_k_larger_than_the_unrated_items_pads_the_rows():
    R = _ratings(7, n_users=12, n_items=10)
    rec = RankBoostRecommender(**SMALL).fit(R)
    n_free = 10 - R.getnnz(axis=1)
    users, top, vals = rec.recommend_all(k=50)
    assert top.shape == (12, 10)  # never wider than the catalogue
    for u in range(12):
        assert (top[u, : n_free[u]] >= 0).all()
        assert (top[u, n_free[u] :] == -1).all()
        assert np.isnan(vals[u, n_free[u] :]).all()
        assert rec.recommend(u, k=50)[0].shape == (n_free[u],)


def test_float32_ratings_give_the_same_recommendations_as_float64():
    R = make_ratings(40, 30, 600, random_state=2)
    R32 = sp.csr_matrix(R, dtype=np.float32)
    a = RankBoostRecommender(**SMALL).fit(R).recommend_all(k=5)
    b = RankBoostRecommender(**SMALL).fit(R32).recommend_all(k=5)
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[2], b[2])


def test_ratings_as_strings():
    np.testing.assert_array_equal(  # strings that spell numbers are read as numpy reads them
        check_ratings([["4.5", "3"], ["nan", "1"]]).toarray(), [[4.5, 3.0], [0.0, 1.0]]
    )
    with pytest.raises(ValueError, match=r"ratings has 'good' for user 1, item 0; ratings must "
                       r"be numbers \(NaN where not rated\)\. Convert them first"):  # fmt: skip
        check_ratings(np.array([["5", "3"], ["good", "1"]]))
    with pytest.raises(ValueError, match=r"ratings has 'x' for user 0, item 1"):
        RankBoostRecommender().fit(np.array([[5, "x"], [1, 2]], dtype=object))
    frame = pd.DataFrame({"user": [1, 1, 2], "item": ["a", "b", "a"], "rating": ["4", "x", "3"]})
    with pytest.raises(ValueError, match=r"ratings column 'rating' must be numeric; user 1, item "
                       r"'b' has 'x'\. Convert the column first"):  # fmt: skip
        RankBoostRecommender().fit(frame)
