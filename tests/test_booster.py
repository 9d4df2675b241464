"""``rb.Booster``: one round per ``update()``, query blocks, and ``train`` as a loop of it.

* ``train`` == a hand-written ``Booster.update()`` loop, bit for bit;
* the rows split into k blocks of whole queries (connected rows for explicit pairs) give the
  same model as one block, up to the order of floating-point sums: same rankers, alphas,
  Z and rloss to 1e-12;
* the booster's API: records, ``model()`` so far, stopping, errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankboost as rb
from conftest import letor_like
from rankboost.params import TrainParams

CONFIGS = [
    {},
    {"alpha": "exact", "positive_cumulative": True},
    {"alpha": "line_search", "weak_ranker": "both", "thresholds": 16},
    {"weak_ranker": "feature", "learning_rate": 0.3},
    {"alpha": "r", "positive_cumulative": True, "learning_rate": 0.5, "thresholds": "all"},
]


def _feedback(kind: str, y, qid, normalize="query"):
    if kind == "bipartite":
        return rb.BipartiteFeedback((y >= 1).astype(int), qid, normalize=normalize)
    if kind == "layered":
        return rb.LayeredFeedback(y, qid, normalize=normalize)
    # explicit pairs: every (lower, higher) pair of each query, weighted by the grade gap
    i0, i1 = np.nonzero((qid[:, None] == qid[None, :]) & (y[:, None] < y[None, :]))
    return rb.PairFeedback(np.column_stack([i0, i1]), y[i1] - y[i0], n_samples=y.shape[0])


def _loop(X, fb, params: TrainParams, n_blocks=1) -> rb.RankBoostModel:
    bst = rb.Booster(X, fb, params, n_blocks=n_blocks)
    for _ in range(params.n_rounds):
        rec = bst.update()
        if rec is None or rec.perfect:
            break
    return bst.model()


@pytest.mark.parametrize("kind", ["layered", "bipartite", "pairs"])
@pytest.mark.parametrize("cfg", CONFIGS)
def test_train_equals_update_loop_bit_for_bit(kind, cfg):
    X, y, qid = letor_like(n_queries=25, seed=3)
    fb = _feedback(kind, y, qid)
    params = TrainParams(n_rounds=30, **cfg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
        a = rb.train(X, fb, params=params)
    b = _loop(X, fb, params)
    assert a.n_rounds == b.n_rounds > 0
    for k in a.history:
        np.testing.assert_array_equal(a.history[k], b.history[k], err_msg=k)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def _assert_same_up_to_sums(one: rb.RankBoostModel, many: rb.RankBoostModel) -> None:
    assert one.n_rounds == many.n_rounds
    h1, hk = one.history, many.history
    np.testing.assert_array_equal(h1["feature"], hk["feature"])
    np.testing.assert_array_equal(h1["threshold"], hk["threshold"])
    np.testing.assert_array_equal(h1["default"], hk["default"])
    for k in ("alpha", "r", "z", "rloss", "bound"):
        np.testing.assert_allclose(hk[k], h1[k], rtol=1e-12, atol=1e-12, err_msg=k)


@pytest.mark.parametrize("kind", ["layered", "bipartite", "pairs"])
@pytest.mark.parametrize("normalize", ["query", "pair"])
@pytest.mark.parametrize("cfg", CONFIGS)
def test_k_blocks_equal_one_block(kind, normalize, cfg):
    X, y, qid = letor_like(n_queries=30, seed=11)
    fb = _feedback(kind, y, qid, normalize)
    params = TrainParams(n_rounds=25, **cfg)
    one = _loop(X, fb, params)
    for k in (2, 3, 7):
        bst = rb.Booster(X, fb, params, n_blocks=k)
        assert bst.n_blocks == k  # 30 queries (or their pair components) fill every block
        _assert_same_up_to_sums(one, _loop(X, fb, params, n_blocks=k))


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_blocks=st.integers(2, 9),
    kind=st.sampled_from(["layered", "bipartite", "pairs"]),
    cfg=st.sampled_from(CONFIGS),
)
def test_k_blocks_equal_one_block_random(seed, n_blocks, kind, cfg):
    X, y, qid = letor_like(n_queries=12, docs_per_query=(3, 12), n_grades=4, seed=seed)
    try:
        fb = _feedback(kind, y, qid)
    except ValueError:  # no crucial pair in this draw
        return
    params = TrainParams(n_rounds=12, **cfg)
    _assert_same_up_to_sums(_loop(X, fb, params), _loop(X, fb, params, n_blocks=n_blocks))


def test_blocks_hold_whole_queries():
    X, y, qid = letor_like(n_queries=20, seed=5)
    fb = rb.LayeredFeedback(y, qid)
    bst = rb.Booster(X, fb, n_blocks=4)
    seen = [set(qid[b.rows]) for b in bst._blocks]
    assert sum(len(s) for s in seen) == len(set().union(*seen)) == 20  # no query in two
    assert sum(b.rows.shape[0] for b in bst._blocks) == fb.n_samples
    # pairs: no pair crosses two blocks
    pf = _feedback("pairs", y, qid)
    pb = rb.Booster(X, pf, n_blocks=4)
    owner = np.full(X.shape[0], -1)
    for k, b in enumerate(pb._blocks):
        owner[b.rows] = k
    assert np.all(owner[pf.pairs[:, 0]] == owner[pf.pairs[:, 1]])
    assert pb.n_blocks == 4


def test_update_records_and_model_so_far():
    X, y, qid = letor_like(n_queries=15, seed=2)
    bst = rb.Booster(X, rb.LayeredFeedback(y, qid), {"learning_rate": 0.5, "n_rounds": 7})
    records = [bst.update() for _ in range(5)]
    assert [r.iteration for r in records] == [0, 1, 2, 3, 4]
    model = bst.model()
    assert model.n_rounds == bst.n_rounds == 5
    np.testing.assert_array_equal(model.history["alpha"], [r.alpha for r in records])
    np.testing.assert_array_equal(model.history["z"], [r.z for r in records])
    assert all(r.rloss <= r.bound for r in records)
    assert np.prod([r.z for r in records]) == pytest.approx(records[-1].bound, rel=1e-14)
    assert model.params["learning_rate"] == 0.5
    assert model.params["n_rounds"] == 7
    # the model so far scores as the rounds it holds; more rounds extend it
    bst.update()
    assert bst.model().n_rounds == 6
    assert model.n_rounds == 5
    assert "n_rounds=6" in repr(bst)


def test_update_returns_none_when_no_ranker_helps():
    X = np.array([[1.0], [1.0], [1.0], [1.0]])  # one value: no threshold separates anything
    bst = rb.Booster(X, rb.BipartiteFeedback([0, 1, 0, 1]))
    assert bst.update() is None
    assert "no weak ranker has |r| > tol" in bst.stop_reason
    assert bst.model().n_rounds == 0


def test_perfect_ranker_is_flagged():
    X = np.array([[0.0], [1.0], [0.0], [1.0]])
    bst = rb.Booster(X, rb.BipartiteFeedback([0, 1, 0, 1]))
    rec = bst.update()
    assert rec.perfect
    assert rec.r == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"params": {"alpha": "best"}}, ValueError, r"'alpha' parameter of Booster must be one"),
        ({"params": {"rounds": 3}}, TypeError, r"Booster got unknown training parameter"),
        ({"params": 3}, TypeError, r"params must be a rankboost.params.TrainParams, a dict"),
        ({"n_blocks": 0}, ValueError, r"n_blocks must be an int >= 1; got 0"),
        ({"n_blocks": 2.0}, TypeError, r"n_blocks must be an int >= 1; got 2.0"),
    ],
)
def test_booster_bad_arguments(kwargs, error, match):
    X, y, qid = letor_like(n_queries=4, seed=1)
    with pytest.raises(error, match=match):
        rb.Booster(X, rb.LayeredFeedback(y, qid), **kwargs)


def test_train_params_given_twice():
    X, y, qid = letor_like(n_queries=4, seed=1)
    with pytest.raises(ValueError, match=r"got params= and also \['alpha'\]"):
        rb.train(X, rb.LayeredFeedback(y, qid), alpha="exact", params=TrainParams())
