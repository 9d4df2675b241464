"""Issue 49: ``ease_lambda="auto"`` on Dask (``rankboost.dask._ease_auto``).

On a real ``distributed.LocalCluster`` of 2 worker processes, EASE's penalty search of the
Dask recommender chooses the one-machine penalty with the same seed, and gives the same
mean NDCG@10 of every penalty evaluated, bit for bit (local search and grid, float32 and
float64 inverses, a sample of the users); ``DaskRankBoostRecommender(ease_lambda="auto")``
then gives the one-machine model and top 10 (MovieLens 100K, skipped when absent, and
``datasets.make_ratings`` problems); a worker killed mid-search; bad input.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import rankboost as rb
from conftest import ML100K, two_worker_client
from conftest import ratings_frame as _frame
from rankboost.datasets import make_ratings
from rankboost.recommend import RankBoostRecommender
from rankboost.recommend._base import choose_ease_lambda, validation_split

if any(importlib.util.find_spec(m) is None for m in ("dask", "distributed", "pandas")):
    pytest.skip("dask, distributed and pandas are needed", allow_module_level=True)
dd: Any = None
pd: Any = None
rbd: Any = None

pytestmark = pytest.mark.xdist_group("dask")
BASE = ("cooccurrence", "ease", "item_mean", "popularity")


@pytest.fixture(scope="module")
def client():
    global dd, pd, rbd  # noqa: PLW0603  the module's imports, made when it runs
    import dask.dataframe as dd
    import pandas as pd

    import rankboost.dask as rbd

    with two_worker_client() as c:
        yield c


def _matrix(df):
    """The one-machine ratings matrix of the rows: sorted user and item labels."""
    users, u = np.unique(df["user"].to_numpy(), return_inverse=True)
    items, i = np.unique(df["item"].to_numpy(), return_inverse=True)
    R = sp.csr_matrix(
        (df["rating"].to_numpy(dtype=np.float64), (u, i)), shape=(users.size, items.size)
    )
    R.sort_indices()
    return R


def _blocks(client, df, n):
    from rankboost.dask._ratings import user_blocks

    return user_blocks(client, dd.from_pandas(df, npartitions=n), ("user", "item", "rating"))


def _assert_same_fit(one, dist, k=10):
    from test_dask_recommend import assert_same_fit

    assert_same_fit(one, dist, k)


# --------------------------------------------------------------------------- the choice


@pytest.mark.parametrize(
    ("search", "float32", "n_folds"), [("local", True, 5), ("grid", False, 5), ("grid", True, 4)]
)
def test_the_choice_and_every_value_are_the_one_machine_ones(client, search, float32, n_folds):
    from rankboost.dask._ease_auto import choose_ease_lambda as dask_choice

    df = _frame(make_ratings(220, 70, 5000, scale="whole", random_state=4), 4)
    ub = _blocks(client, df, 3)
    assert len(ub.blocks) == 3
    R = _matrix(df)
    kw = {"search": search, "float32": float32, "n_folds": n_folds}
    lams = (100.0, 300.0, 1000.0, 3000.0, 10000.0)  # a peak inside the grid here
    want = choose_ease_lambda(R, 9, lams, **kw)
    got = dask_choice(client, ub, 9, lams, **kw)
    assert got == want  # the chosen penalty and every mean NDCG, bit for bit
    if search == "local":
        assert want[0] == 3000.0  # it climbed from 1000 (the middle) ...
        assert len(want[1]) == 4  # ... past 3000
    assert dask_choice(client, ub, 9, **kw) == choose_ease_lambda(R, 9, **kw)  # EASE_LAMBDAS


def test_the_blocks_draw_the_one_machine_validation_split(client):
    from rankboost.dask._rectasks import block_folds

    df = _frame(make_ratings(90, 30, 1500, scale="whole", random_state=3), 3)
    ub = _blocks(client, df, 4)
    folds = [
        client.submit(block_folds, b, 5, 21, int(ub.nnz_before[j]), pure=False).result()
        for j, b in enumerate(ub.blocks)
    ]
    np.testing.assert_array_equal(np.concatenate(folds) == 4, validation_split(_matrix(df), 21))


def test_a_sample_of_the_users_scores_the_penalties(client, monkeypatch):
    """At most MAX_QUERIES users (the one-machine seeded sample, taken on the client)."""
    from rankboost.dask._ease_auto import choose_ease_lambda as dask_choice
    from rankboost.recommend import _scale

    df = _frame(make_ratings(150, 40, 3000, scale="whole", random_state=6), 6)
    ub, R = _blocks(client, df, 3), _matrix(df)
    everyone = choose_ease_lambda(R, 2, search="grid")
    monkeypatch.setattr(_scale, "MAX_QUERIES", 25)
    want = choose_ease_lambda(R, 2, search="grid")
    assert want[1] != everyone[1]
    assert dask_choice(client, ub, 2, search="grid") == want


def test_no_liked_held_out_item_takes_the_first_penalty(client):
    from rankboost.dask._ease_auto import choose_ease_lambda as dask_choice

    df = pd.DataFrame({"user": [0, 0, 1, 1], "item": [0, 1, 1, 2], "rating": [4.0, 4, 3, 3]})
    ub = _blocks(client, df, 2)
    assert dask_choice(client, ub, 0, (7.0, 1.0)) == choose_ease_lambda(_matrix(df), 0, (7.0, 1.0))
    assert dask_choice(client, ub, 0, (7.0, 1.0)) == (7.0, {})


# --------------------------------------------------------------------------- the fit


@pytest.mark.skipif(not ML100K.exists(), reason="MovieLens 100K is not in ../shared/data")
def test_movielens_100k_auto_penalty_model_and_top10(client):
    ds = rb.datasets.load_movielens(ML100K)
    df = pd.DataFrame({"user": ds.user, "item": ds.item, "rating": ds.rating})
    df = df.sample(frac=1.0, random_state=49).reset_index(drop=True)  # users straddle
    dist = rbd.DaskRankBoostRecommender(
        client=client, base_recommenders=BASE, ease_lambda="auto", inner_folds=None,
        n_estimators=15, random_state=2,
    )  # fmt: skip
    dist.fit(dd.from_pandas(df, npartitions=4))
    one = RankBoostRecommender(**dist.params).fit(df)
    assert one.ease_lambda_ == 250.0  # the search moved down from 500 (seed 2)
    _assert_same_fit(one, dist)


@pytest.mark.parametrize(
    "params",
    [
        {"feedback": "liked"},
        {"feedback": "auto", "n_folds": 3, "base_recommenders": ("ease", "popularity")},
    ],
)
def test_make_ratings_auto_penalty_model_and_top10(client, params):
    df = _frame(make_ratings(180, 60, 3600, scale="whole", random_state=8), 8)
    dist = rbd.DaskRankBoostRecommender(
        client=client, **{"base_recommenders": BASE, **params}, ease_lambda="auto",
        inner_folds=None, n_estimators=10, random_state=5,
    )  # fmt: skip
    dist.fit(dd.from_pandas(df, npartitions=3))
    one = RankBoostRecommender(**dist.params).fit(df)
    assert isinstance(dist.ease_lambda_, float)
    _assert_same_fit(one, dist, k=10)


def test_a_worker_killed_mid_search_gives_the_same_choice(client, monkeypatch):
    """SIGKILL a worker after the first penalty: the kept stripes and users' rows are
    recomputed from the ratings, and the choice and values are the uninterrupted ones."""
    from rankboost.dask import _ease_auto

    df = _frame(make_ratings(160, 50, 3000, scale="whole", random_state=12), 12)
    client.wait_for_workers(2, timeout=60)
    ub, R = _blocks(client, df, 4), _matrix(df)
    search = _ease_auto.search_penalty
    killed: list[Any] = []

    def killing_search(value, *args):
        def first_then_kill(lam):
            out = value(lam)
            if not killed:
                nanny = next(iter(client.cluster.workers.values()))
                nanny.process.process.kill()  # SIGKILL
                killed.append(nanny)
            return out

        return search(first_then_kill, *args)

    monkeypatch.setattr(_ease_auto, "search_penalty", killing_search)
    got = _ease_auto.choose_ease_lambda(client, ub, 1, search="grid")
    assert killed
    assert got == choose_ease_lambda(R, 1, search="grid")
    client.wait_for_workers(2, timeout=60)


# --------------------------------------------------------------------------- bad input


def test_bad_input(client):
    from rankboost.dask._ease_auto import choose_ease_lambda as dask_choice

    df = _frame(make_ratings(40, 20, 400, scale="whole", random_state=1), 1)
    ub = _blocks(client, df, 2)
    with pytest.raises(ValueError, match="search must be 'local' or 'grid'; got 'all'"):
        dask_choice(client, ub, 0, search="all")
    with pytest.raises(ValueError, match="lambdas must hold at least one EASE penalty"):
        dask_choice(client, ub, 0, ())
    ddf = dd.from_pandas(df, npartitions=2)
    for value in ("best", -1.0):
        est = rbd.DaskRankBoostRecommender(client=client, base_recommenders=BASE)
        est.params["ease_lambda"] = value
        with pytest.raises(ValueError, match="ease_lambda"):
            est.fit(ddf)
        with pytest.raises(ValueError, match="ease_lambda"):  # the one-machine message
            RankBoostRecommender(**est.params).fit(df)
