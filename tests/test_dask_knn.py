"""Issue 49: ``user_knn``, ``item_knn`` and ``feature_users=`` on Dask (``rankboost.dask._knn``).

On a real ``distributed.LocalCluster`` of 2 worker processes: the statistics the blocks
take (``user_knn``'s pool rows, ``item_knn``'s pruned neighbours) have the one-machine
bits, on all the ratings and on a cross-fitting fold, with one and with several norm and
Gram stripes; ``DaskRankBoostRecommender`` with every base recommender (and
``feature_users``) gives the one-machine model (rankers equal, alphas to 1e-12) and the
same top 10 of every user (MovieLens 100K, skipped when absent; ``make_ratings`` in
halves with a sampled neighbour pool); a worker killed in the Gram chain; bad input.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import warnings
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import rankboost as rb
from conftest import ML100K, two_worker_client
from conftest import ratings_frame as _frame
from rankboost.datasets import make_ratings
from rankboost.recommend import RankBoostRecommender
from rankboost.recommend._base import BASE_RECOMMENDERS, BaseScores
from rankboost.recommend._scale import ItemTotals, neighbour_pool
from test_dask_recommend import assert_same_fit as same_fit

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


def _same_csr(got, want):
    got, want = sp.csr_matrix(got), sp.csr_matrix(want)
    assert got.shape == want.shape
    for a, b in ((got.indptr, want.indptr), (got.indices, want.indices), (got.data, want.data)):
        np.testing.assert_array_equal(a, b)  # bit for bit: == of every float


def assert_same_fit(one, dist, k=10):
    """test_dask_recommend's comparison, and ``to_local()``'s top ``k`` of every user."""
    same_fit(one, dist, k)
    users, items, scores = one.recommend_all(k)
    local = dist.to_local()
    assert type(local) is RankBoostRecommender
    np.testing.assert_array_equal(local.recommend_all(k)[1], items)
    np.testing.assert_allclose(local.recommend_all(k)[2], scores, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("stripes", ["one", "several"])
def test_issue49_knn_statistics_have_the_one_machine_bits(client, monkeypatch, stripes):
    """The pool's rows and item_knn's neighbours of the blocks, on all the ratings and on a
    fold's, equal those of ``BaseScores.fit`` on the whole matrix bit for bit (several
    stripes: norm stripes of ~300 ratings, Gram stripes of 7 rows, at most 2 in flight)."""
    from rankboost.dask import _knn
    from rankboost.dask._ratings import user_blocks
    from rankboost.dask._rectasks import block_folds, keep_ratings

    if stripes == "several":
        monkeypatch.setattr(_knn, "NORM_CELLS", 300)
        monkeypatch.setattr(_knn, "STRIPE_BYTES", 8 * 60 * 7)
    R0 = make_ratings(150, 60, 2600, scale="half", random_state=4)
    ub = user_blocks(
        client, dd.from_pandas(_frame(R0, 4), npartitions=4), ("user", "item", "rating")
    )
    R = sp.csr_matrix(sp.vstack(client.gather(ub.blocks), format="csr"))
    folds = [
        client.submit(block_folds, b, 3, 8, int(ub.nnz_before[j]), pure=False)
        for j, b in enumerate(ub.blocks)
    ]
    fold = np.concatenate(client.gather(folds))
    feats = np.arange(1, 150, 2)
    pool = neighbour_pool(feats, R.shape[0])
    names = ("user_knn", "item_knn")
    for k, given in ((0, None), (1, folds)):
        Rk = R if given is None else keep_ratings(R, fold != k)
        counts = np.bincount(Rk.indices, minlength=R.shape[1]).astype(np.float64)
        pool_f, near_f = _knn.knn_stats(client, ub, given, k, names, pool, counts)
        one = BaseScores(names, pool=feats).fit(Rk)
        rows, near = pool_f.result(), near_f.result()
        np.testing.assert_array_equal(rows.users, one._pool)
        _same_csr(sp.csr_matrix(rows.normalised.T), one._un_pool_csr)
        _same_csr(sp.csc_matrix(rows.centred).tocsr(), one._uc_pool_csc.tocsr())
        _same_csr(near.T.tocsr(), one._item_sim)
        assert near.nnz > 0


@pytest.mark.skipif(not ML100K.exists(), reason="MovieLens 100K is not in ../shared/data")
def test_issue49_movielens_100k_every_base_recommender_top10_of_every_user(client):
    ds = rb.datasets.load_movielens(ML100K)
    df = pd.DataFrame({"user": ds.user, "item": ds.item, "rating": ds.rating})
    df = df.sample(frac=1.0, random_state=49).reset_index(drop=True)  # users straddle
    dist = rbd.DaskRankBoostRecommender(
        client=client, base_recommenders=BASE_RECOMMENDERS, n_estimators=12, random_state=3,
        n_folds=3, feature_users=np.unique(ds.user)[::2],
    )  # fmt: skip
    dist.fit(dd.from_pandas(df, npartitions=4))
    one = RankBoostRecommender(**dist.params).fit(df)
    assert_same_fit(one, dist)


def test_issue49_make_ratings_halves_sampled_pool_and_stripes(client, monkeypatch):
    """Ratings in halves, string labels, a neighbour pool sampled from the feature users
    (USER_KNN_POOL lowered to 30), several norm and Gram stripes."""
    from rankboost.dask import _knn
    from rankboost.recommend import _scale

    monkeypatch.setattr(_scale, "USER_KNN_POOL", 30)
    monkeypatch.setattr(_knn, "NORM_CELLS", 700)
    monkeypatch.setattr(_knn, "STRIPE_BYTES", 8 * 60 * 11)
    R = make_ratings(160, 60, 3000, scale="half", random_state=7)
    users = np.array([f"u{k:03d}" for k in range(160)], dtype=object)
    df = _frame(R, 7, users=users)
    names = ("user_knn", "item_knn", "ease", "popularity")
    dist = rbd.DaskRankBoostRecommender(
        client=client, base_recommenders=names, n_estimators=12, random_state=11, n_folds=3,
        feature_users=users[5:120],
    )  # fmt: skip
    dist.fit(dd.from_pandas(df, npartitions=3))
    one = RankBoostRecommender(**dist.params).fit(df)
    assert_same_fit(one, dist, k=5)


# --------------------------------------------------------------------------- bad input


def test_issue49_knn_bad_input(client):
    df = _frame(make_ratings(40, 20, 400, scale="whole", random_state=1), 1)
    ddf = dd.from_pandas(df, npartitions=2)
    for users, match in (
        ([1, 2, 99], "feature_users contains unknown user 99: not among the 40"),
        ([3, 3], "feature_users lists user 3 more than once"),
    ):
        est = rbd.DaskRankBoostRecommender(client=client, n_estimators=3, feature_users=users)
        with pytest.raises(ValueError, match=match):
            est.fit(ddf)
    R = make_ratings(30, 12, 200, scale="whole", random_state=2)
    totals = ItemTotals.of(R)
    for name, arg in (("user_knn", "pool_rows="), ("item_knn", "item_neighbours=")):
        with pytest.raises(ValueError, match=f"{name!r} needs the other users' rows: pass {arg}"):
            BaseScores((name, "popularity")).fit(R[:10], items=totals)


# --------------------------------------------------------------------------- faults


def test_issue49_worker_killed_in_the_item_knn_chain(client, monkeypatch, tmp_path):
    """The first link of a Gram stripe kills its own worker (SIGKILL, once): Dask recomputes
    the stripe's chain from the blocks (a link never changes its input), and the model and
    top 10 are the one-machine ones (alphas to 1e-12: the boosting's sums per worker follow
    the blocks, which the lost worker moved)."""
    from rankboost.dask import _knn

    df = _frame(make_ratings(120, 40, 2000, scale="whole", random_state=5), 5)
    params = {"base_recommenders": ("item_knn", "popularity"), "n_estimators": 8, "prior": None}
    marker = str(tmp_path / "killed")
    link = _knn.gram_link

    def link_and_kill(*a: Any, **kw: Any) -> Any:  # pickled by value: runs on the worker
        if not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        return link(*a, **kw)

    monkeypatch.setattr(_knn, "gram_link", link_and_kill)
    client.wait_for_workers(2, timeout=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        survived = rbd.DaskRankBoostRecommender(client=client, **params)
        survived.fit(dd.from_pandas(df, 4))
    assert os.path.exists(marker)
    client.wait_for_workers(2, timeout=60)
    assert_same_fit(RankBoostRecommender(**survived.params).fit(df), survived)
