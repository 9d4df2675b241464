"""Issue 49 item 2: the pooled recommender on Dask (``DaskRankBoostRecommender``).

On a real ``distributed.LocalCluster`` with 2 worker processes, a dask DataFrame of
``(user, item, rating)`` rows in shuffled partitions (users straddle them) gives, with the
same ``random_state``, the one-machine ``RankBoostRecommender(**est.params)`` fitted on the
same rows: the same models (rankers equal, alphas to 1e-12, as tests/test_dask.py), the same
top 10 of every user (``recommend_all``, ``recommend``, ``to_local``). MovieLens 100K
(../shared/data, skipped when absent) and ``datasets.make_ratings`` problems with other
labels, ratings in halves and every kind of feedback; a worker killed mid-boosting; bad
input.
"""

from __future__ import annotations

import importlib.util
import warnings
from typing import Any

import numpy as np
import pytest

import rankboost as rb
from conftest import ML100K, kill_a_worker_at, two_worker_client
from conftest import ratings_frame as _frame
from rankboost.datasets import make_ratings
from rankboost.recommend import RankBoostRecommender

if any(importlib.util.find_spec(m) is None for m in ("dask", "distributed", "pandas")):
    pytest.skip("dask, distributed and pandas are needed", allow_module_level=True)
dd: Any = None
pd: Any = None
rbd: Any = None

pytestmark = pytest.mark.xdist_group("dask")


@pytest.fixture(scope="module")
def client():
    global dd, pd, rbd  # noqa: PLW0603  the module's imports, made when it runs
    import dask.dataframe as dd
    import pandas as pd

    import rankboost.dask as rbd

    with two_worker_client() as c:
        yield c


def assert_same_fit(one, dist, k=10):
    for a, b in ((one.model_, dist.model_), (one.rating_model_, dist.rating_model_)):
        assert a.n_rounds == b.n_rounds
        for key in ("feature", "threshold", "default"):
            np.testing.assert_array_equal(a.history[key], b.history[key], err_msg=key)
        for key in ("alpha", "z", "rloss"):
            np.testing.assert_allclose(b.history[key], a.history[key], rtol=1e-12, atol=1e-12)
    assert dist.prior_scale_ == one.prior_scale_
    assert dist.ease_lambda_ == one.ease_lambda_
    assert {k_: v for k_, v in dist.report_.items() if k_ != "n_blocks"} == one.report_
    users, items, scores = one.recommend_all(k)
    d_users, d_items, d_scores = dist.recommend_all(k)
    np.testing.assert_array_equal(d_users, users)
    np.testing.assert_array_equal(d_items.compute(), items)  # every user's top k
    np.testing.assert_allclose(d_scores.compute(), scores, rtol=1e-9, atol=1e-9)
    for user in users[:: max(1, len(users) // 5)]:
        got, want = dist.recommend(user, k), one.recommend(user, k)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_allclose(got[1], want[1], rtol=1e-9, atol=1e-9)


@pytest.mark.skipif(not ML100K.exists(), reason="MovieLens 100K is not in ../shared/data")
def test_issue49_movielens_100k_top10_of_every_user(client):
    ds = rb.datasets.load_movielens(ML100K)
    df = pd.DataFrame({"user": ds.user, "item": ds.item, "rating": ds.rating})
    df = df.sample(frac=1.0, random_state=49).reset_index(drop=True)  # users straddle
    dist = rbd.DaskRankBoostRecommender(client=client, n_estimators=25, random_state=3)
    dist.fit(dd.from_pandas(df, npartitions=4))
    one = RankBoostRecommender(**dist.params).fit(df)
    assert dist.report_["n_blocks"] == 4
    assert_same_fit(one, dist)
    local = dist.to_local()
    assert type(local) is RankBoostRecommender
    np.testing.assert_array_equal(local.recommend_all(10)[1], one.recommend_all(10)[1])
    np.testing.assert_allclose(local.predict(1), one.predict(1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("params", "scale"),
    [
        ({"feedback": "rated", "prior": None}, "half"),
        ({"feedback": "both", "base_recommenders": ("ease", "popularity")}, "whole"),
        ({"feedback": "ratings", "base_recommenders": ("item_mean", "cooccurrence")}, "half"),
        ({"feedback": "liked", "prior_scale": 0.5, "negatives": 1.0, "n_folds": 3}, "whole"),
    ],
)
def test_issue49_make_ratings_labels_and_feedback(client, params, scale):
    R = make_ratings(160, 60, 3000, scale=scale, random_state=7)
    users = np.array([f"u{k:03d}" for k in range(160)], dtype=object)
    df = _frame(R, 7, users=users, items=np.arange(60) * 10 + 5)
    dist = rbd.DaskRankBoostRecommender(client=client, n_estimators=12, random_state=11, **params)
    dist.fit(dd.from_pandas(df, npartitions=3))
    one = RankBoostRecommender(**dist.params).fit(df)
    assert_same_fit(one, dist, k=5)


def test_issue49_partitioning_does_not_change_the_fit(client):
    """One partition or five, sorted or shuffled rows: the same model and top 10."""
    df = _frame(make_ratings(120, 40, 2000, scale="whole", random_state=2), 2)
    fits = []
    for n, frame in ((1, df), (5, df), (2, df.sort_values(["user", "item"]))):
        est = rbd.DaskRankBoostRecommender(client=client, n_estimators=8)
        fits.append(est.fit(dd.from_pandas(frame, npartitions=n)))
    for other in fits[1:]:  # the sums run in another order: rankers equal, alphas to 1e-12
        h0, h1 = fits[0].model_.history, other.model_.history
        np.testing.assert_array_equal(h1["threshold"], h0["threshold"])
        np.testing.assert_allclose(h1["alpha"], h0["alpha"], rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(
            other.recommend_all(10)[1].compute(), fits[0].recommend_all(10)[1].compute()
        )


def fit_with_a_worker_lost(client, monkeypatch, df, params, at):
    """The uninterrupted Dask fit of ``df`` and one whose worker is killed (kill -9) at round
    ``at`` of its first training run, as ``(whole, survived)``."""
    import dask.dataframe as dd  # here: another test module calls it (not this one's globals)

    import rankboost.dask as rbd
    from rankboost.dask import _train

    client.wait_for_workers(2, timeout=60)
    whole = rbd.DaskRankBoostRecommender(client=client, **params)
    whole.fit(dd.from_pandas(df, npartitions=4))
    client.wait_for_workers(2, timeout=60)
    kill, killed = kill_a_worker_at(client, at)
    train = _train.train

    def train_and_kill(*a, **kw):
        return train(*a, callbacks=[kill], **kw)

    monkeypatch.setattr(_train, "train", train_and_kill)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        survived = rbd.DaskRankBoostRecommender(client=client, **params)
        survived.fit(dd.from_pandas(df, npartitions=4))
    assert killed
    client.wait_for_workers(2, timeout=60)
    return whole, survived


def assert_same_after_a_lost_worker(whole, survived):
    """Rankers and alphas equal, the top 10 of every user equal. The lost worker's blocks,
    rebuilt on the other worker, have their sums grouped otherwise, so the recorded ``r``,
    ``z`` and ``rloss`` may differ in the last bits (docs/distributed.md): to 1e-12."""
    for a, b in ((whole.model_, survived.model_), (whole.rating_model_, survived.rating_model_)):
        for key in ("feature", "threshold", "default", "alpha"):
            np.testing.assert_array_equal(b.history[key], a.history[key], err_msg=key)
        for key in ("r", "z", "rloss"):
            np.testing.assert_allclose(b.history[key], a.history[key], rtol=1e-12, atol=1e-12)
    assert survived.report_ == whole.report_
    np.testing.assert_array_equal(
        survived.recommend_all(10)[1].compute(), whole.recommend_all(10)[1].compute()
    )


def test_issue49_killed_worker_mid_boosting(client, monkeypatch):
    """kill -9 a worker in round 4 of the pooled model's training: the booster rebuilds its
    blocks from the rows, which Dask recomputes from the ratings, and the model and top 10
    are the uninterrupted fit's (``assert_same_after_a_lost_worker``)."""
    df = _frame(make_ratings(150, 50, 2500, scale="whole", random_state=5), 5)
    params = {"n_estimators": 10, "feedback": "liked"}
    whole, survived = fit_with_a_worker_lost(client, monkeypatch, df, params, at=3)
    assert_same_after_a_lost_worker(whole, survived)


# --------------------------------------------------------------------------- bad input


def test_issue49_bad_recommender_input(client):
    df = _frame(make_ratings(40, 20, 400, scale="whole", random_state=1), 1)
    ddf = dd.from_pandas(df, npartitions=2)
    est = rbd.DaskRankBoostRecommender(client=client, n_estimators=3)
    with pytest.raises(TypeError, match="ratings must be a dask DataFrame"):
        est.fit(df)
    with pytest.raises(ValueError, match=r"ratings must hold the columns \('u', 'i', 'r'\)"):
        est.fit(ddf, columns=("u", "i", "r"))
    for params, match in (
        ({"mode": "per_user"}, "mode='per_user'"),
        ({"n_estimators": 0}, "n_estimators"),
    ):
        with pytest.raises(ValueError, match=match):
            rbd.DaskRankBoostRecommender(client=client, **params).fit(ddf)
    with pytest.raises(TypeError, match="DaskRankBoostRecommender: .*'colour'"):
        rbd.DaskRankBoostRecommender(client=client, colour=1).fit(ddf)
    dup = pd.concat([df, df.iloc[[0]]], ignore_index=True)
    u0, i0 = df["user"].iloc[0], df["item"].iloc[0]
    with pytest.raises(ValueError, match=rf"user {u0}, item {i0} more than once"):
        est.fit(dd.from_pandas(dup, npartitions=3))
    bad = df.copy()
    bad.loc[5, "rating"] = np.nan
    with pytest.raises(ValueError, match=rf"nan for user {bad.loc[5, 'user']}, item"):
        est.fit(dd.from_pandas(bad, npartitions=2))
    out = rbd.DaskRankBoostRecommender(client=client, n_estimators=3, rating_range=(1, 4))
    with pytest.raises(ValueError, match=r"every rating must be in \(1, 4\)"):
        out.fit(ddf)
    text = df.astype({"rating": object})
    text.loc[3, "rating"] = "five"
    with pytest.raises(ValueError, match="ratings column 'rating' must be numeric.*'five'"):
        est.fit(dd.from_pandas(text, npartitions=2))
    missing = df.astype({"user": float})
    missing.loc[2, "user"] = np.nan
    with pytest.raises(ValueError, match="ratings column 'user' is missing 1 labels"):
        est.fit(dd.from_pandas(missing, npartitions=2))
    with pytest.raises(ValueError, match="is not fitted yet; call fit"):
        rbd.DaskRankBoostRecommender(client=client).recommend(0)
    est.fit(ddf)
    with pytest.raises(ValueError, match="unknown user 'nobody'"):
        est.recommend("nobody")
    with pytest.raises(ValueError, match="k must be"):
        est.recommend(int(df.iloc[0]["user"]), k=0)
