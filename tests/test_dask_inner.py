"""Issue 49: the Dask recommender's inner CV (``inner_folds``, ``refit``, ``prior_scale=None``).

On a real ``distributed.LocalCluster`` with 2 worker processes, ``DaskRankBoostRecommender``
with ``inner_folds`` chooses, with the same ``random_state``, the rounds and the prior's
multiplier of the one-machine ``RankBoostRecommender(**est.params)`` fitted on the same
rows: the same held-out curves (``rounds_curve_``, ``rating_rounds_curve_``), the same
``report_``, the same models (rankers equal, alphas to 1e-12) and top 10 of every user.
``refit`` False and True, ``prior_scale`` None and a number, MovieLens 100K (skipped when
absent) and ``make_ratings`` problems; a worker killed in an inner-CV run; bad input.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest

import rankboost as rb
from conftest import ratings_frame as _frame
from conftest import two_worker_client
from rankboost.datasets import make_ratings
from rankboost.recommend import RankBoostRecommender
from test_dask_recommend import (
    ML100K,
    assert_same_after_a_lost_worker,
    assert_same_fit,
    fit_with_a_worker_lost,
)

if any(importlib.util.find_spec(m) is None for m in ("dask", "distributed", "pandas")):
    pytest.skip("dask, distributed and pandas are needed", allow_module_level=True)
dd: Any = None
pd: Any = None
rbd: Any = None

pytestmark = pytest.mark.xdist_group("dask")


def _items(n):
    """Item labels that are not their positions."""
    return np.arange(n) * 3 + 1


@pytest.fixture(scope="module")
def client():
    global dd, pd, rbd  # noqa: PLW0603  the module's imports, made when it runs
    import dask.dataframe as dd
    import pandas as pd

    import rankboost.dask as rbd

    with two_worker_client() as c:
        yield c


def assert_same_choice(one, dist):
    """The inner CV's choice and curves, then the models and every user's top 10."""
    assert dist.report_["n_rounds"] == one.report_["n_rounds"]
    assert dist.report_["n_rounds_rating_model"] == one.report_["n_rounds_rating_model"]
    assert dist.prior_scale_ == one.prior_scale_
    for a, b in ((one.rounds_curve_, dist.rounds_curve_),
                 (one.rating_rounds_curve_, dist.rating_rounds_curve_)):  # fmt: skip
        assert (a is None) == (b is None)
        if a is not None:  # NDCG reads the order of a user's items only: equal bits
            np.testing.assert_array_equal(b, a)
    assert_same_fit(one, dist)


def _fit_both(df, n_partitions=3, **params):
    dist = rbd.DaskRankBoostRecommender(client=_fit_both.client, **params)
    dist.fit(dd.from_pandas(df, npartitions=n_partitions))
    one = RankBoostRecommender(**dist.params).fit(df)
    return one, dist


@pytest.mark.parametrize(
    "params",
    [
        {"inner_folds": 2, "refit": False, "prior_scale": None},
        {"inner_folds": 2, "refit": True, "prior_scale": None},
        {"inner_folds": 3, "refit": True, "feedback": "both", "prior_scale": 0.5},
        {"inner_folds": 2, "feedback": "ratings", "base_recommenders": ("ease", "item_mean")},
        {"inner_folds": 2, "refit": False, "feedback": "rated", "prior": None},
    ],
)
def test_issue49_inner_cv_chooses_as_one_machine(client, params):
    _fit_both.client = client
    df = _frame(make_ratings(120, 50, 2400, scale="half", random_state=4), 4, items=_items(50))
    one, dist = _fit_both(df, n_estimators=10, random_state=5, **params)
    assert one.rounds_curve_ is not None
    assert_same_choice(one, dist)


@pytest.mark.skipif(not ML100K.exists(), reason="MovieLens 100K is not in ../shared/data")
def test_issue49_inner_cv_movielens_100k(client):
    """The defaults of the inner CV (inner_folds=2, refit=False) and prior_scale=None."""
    _fit_both.client = client
    ds = rb.datasets.load_movielens(ML100K)
    df = pd.DataFrame({"user": ds.user, "item": ds.item, "rating": ds.rating})
    df = df.sample(frac=1.0, random_state=49).reset_index(drop=True)  # users straddle
    one, dist = _fit_both(df, 4, n_estimators=15, random_state=2, prior_scale=None,
                          inner_folds=2, refit=False)  # fmt: skip
    assert 0 <= dist.report_["n_rounds"] <= 15
    assert_same_choice(one, dist)
    local = dist.to_local()  # the curves and the rounds travel with the fit
    np.testing.assert_array_equal(local.rounds_curve_, one.rounds_curve_)
    assert local.report_ == one.report_


def test_issue49_inner_cv_killed_worker(client, monkeypatch):
    """kill -9 a worker in round 3 of the first inner-CV run (the model kept, refit=False):
    the runs' rows and splits are recomputed from the ratings, and the choice, curve, model
    and top 10 are the uninterrupted fit's (``assert_same_after_a_lost_worker``)."""
    df = _frame(make_ratings(120, 40, 2000, scale="whole", random_state=6), 6, items=_items(40))
    params = {"n_estimators": 8, "inner_folds": 2, "prior_scale": None}
    whole, survived = fit_with_a_worker_lost(client, monkeypatch, df, params, at=2)
    assert survived.prior_scale_ == whole.prior_scale_
    np.testing.assert_array_equal(survived.rounds_curve_, whole.rounds_curve_)
    assert_same_after_a_lost_worker(whole, survived)


def test_issue49_inner_cv_few_users_and_no_usable_group(client):
    """Fewer targets than inner folds: n_estimators rounds, no curve, as one machine."""
    _fit_both.client = client
    R = make_ratings(3, 20, 40, scale="whole", random_state=1)
    df = _frame(R, 1, items=_items(R.shape[1]))
    one, dist = _fit_both(df, 2, n_estimators=4, inner_folds=5, prior_scale=None)
    assert one.rounds_curve_ is None
    assert_same_choice(one, dist)


# --------------------------------------------------------------------------- bad input


def test_issue49_inner_cv_bad_input(client):
    df = _frame(make_ratings(40, 20, 400, scale="whole", random_state=1), 1, items=_items(20))
    ddf = dd.from_pandas(df, npartitions=2)
    for params, match in (
        ({"inner_folds": 1}, "inner_folds"),
        ({"inner_folds": "two"}, "inner_folds"),
        ({"inner_folds": 2, "refit": "yes"}, "refit"),
        ({"prior_scale": -1.0}, "prior_scale"),
    ):
        with pytest.raises(ValueError, match=match):
            rbd.DaskRankBoostRecommender(client=client, n_estimators=3, **params).fit(ddf)
