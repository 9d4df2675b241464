"""``criterion="exact_z"``: WeakLearn minimising the exact ``Z = W_0 + 2 sqrt(W_- W_+)``.

* the split sums (``W_-``, ``W_+`` of every candidate, :mod:`rankboost._kernels.split_sums`)
  against the dense oracle ``tests/reference.py`` on random pair, bipartite and layered
  problems (up to 6 grades, NaNs, random scores H so D_t is not D_1);
* whole training runs, round by round, against ``reference.train_exact_z`` with every alpha
  rule, WeakLearn.cum, a fixed default and shrinkage; rloss <= prod Z_t every round;
* k blocks == 1 block; the bad input.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rankboost as rb
import reference as ref
from rankboost._blocks import start_blocks
from rankboost.binning import BinMapper
from rankboost.params import ParameterError
from test_engine_reference import (
    SETTINGS,
    TOL,
    graded_problems,
    pair_problems,
    same_ranker,
)

N_ROUNDS = 8


def _problem(kind, data, normalize):
    if kind == "pairs":
        X, pairs, weights = data
        return (
            X,
            rb.PairFeedback(pairs, weights, n_samples=X.shape[0]),
            ref.pair_matrix(X.shape[0], pairs, weights),
        )
    X, y, qid = data
    if kind == "bipartite":
        y = (y >= 1).astype(float)
        return (
            X,
            rb.BipartiteFeedback(y, qid, normalize=normalize),
            ref.layered_matrix(y, qid, normalize),
        )
    return X, rb.LayeredFeedback(y, qid, normalize=normalize), ref.layered_matrix(y, qid, normalize)


problems = st.one_of(
    pair_problems().map(lambda p: ("pairs", p)),
    graded_problems(binary=True).map(lambda p: ("bipartite", p)),
    graded_problems(binary=False, top=5).map(lambda p: ("layered", p)),
)


@SETTINGS
@given(problem=problems, normalize=st.sampled_from(["pair", "query"]), seed=st.integers(0, 99))
def test_split_sums_match_dense_oracle(problem, normalize, seed):
    """Every candidate's W_-, W_0, W_+ from the kernels == the dense sums, at random H."""
    kind, data = problem
    X, fb, D1 = _problem(kind, data, normalize)
    blocks = fb._blocks(1)
    b = blocks[0]
    binner = BinMapper("all").fit(X, b.rows)
    b.codes = binner.transform(X, b.rows)
    start_blocks(blocks)
    rng = np.random.default_rng(seed)
    H_rows = np.round(rng.normal(size=b.n) * 3, 1)  # rounded: ties in H too
    b.set_log_total(b.update(H_rows, 1.0))
    H = np.zeros(X.shape[0])
    H[b.rows] = H_rows
    Dt = ref.distribution_from_scores(D1 / D1.sum(), H)
    n_t = binner.n_codes - 1
    sums = np.empty((4, X.shape[1], n_t))
    b.split_sums(sums)
    for i in range(X.shape[1]):
        for t in range(min(n_t, int(binner.n_bins_[i]))):  # the valid thresholds
            theta = binner.threshold_value(i, t)
            for q in (0, 1):
                h = ref.Ranker("threshold", i, theta, float(q)).predict(X)
                w_minus, w_zero, w_plus = ref.binary_stats(Dt, h)
                got_m, got_p = sums[2 * q, i, t], sums[2 * q + 1, i, t]
                assert got_m == pytest.approx(w_minus, abs=1e-13), (i, t, q)
                assert got_p == pytest.approx(w_plus, abs=1e-13), (i, t, q)
                assert 1.0 - got_m - got_p == pytest.approx(w_zero, abs=1e-12)


def _compare(X, fb, D, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
        model = rb.train(X, fb, N_ROUNDS, tol=TOL, criterion="exact_z", **params)
    expected = ref.train_exact_z(X, D, N_ROUNDS, tol=TOL, **params)
    upto = len(expected.rounds)
    if expected.ambiguous_from is not None:
        upto = min(upto, expected.ambiguous_from)
        assert model.n_rounds >= upto
    else:
        assert model.n_rounds == len(expected.rounds), (model.history, expected.stop)
    hist = model.history
    for t in range(upto):
        e = expected.rounds[t]
        assert same_ranker(model, t, e.ranker), (t, model.rankers[t], e.ranker)
        np.testing.assert_allclose(hist["alpha"][t], e.alpha, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(hist["r"][t], e.r, rtol=0, atol=1e-10)
        np.testing.assert_allclose(hist["z"][t], e.z, rtol=1e-10, atol=0)
        np.testing.assert_allclose(hist["bound"][t], e.bound, rtol=1e-10, atol=0)
        if not e.rloss_ambiguous:
            np.testing.assert_allclose(hist["rloss"][t], e.rloss, rtol=0, atol=1e-12)
        # the chosen ranker's Z is the smallest exact Z of the round (up to the tie window)
        assert e.z <= 1.0 + 1e-12 or params.get("learning_rate", 1.0) != 1.0
    assert np.all(hist["rloss"] <= hist["bound"] * (1 + 1e-12))
    return model


@SETTINGS
@given(
    problem=problems,
    normalize=st.sampled_from(["pair", "query"]),
    alpha=st.sampled_from(["r", "exact", "line_search"]),
    cum=st.booleans(),
    options=st.sampled_from([{}, {"learning_rate": 0.5}, {"default": 0}, {"default": 1}]),
)
def test_training_matches_reference(problem, normalize, alpha, cum, options):
    kind, data = problem
    X, fb, D = _problem(kind, data, normalize)
    _compare(X, fb, D, alpha=alpha, positive_cumulative=cum, **options)


def test_exact_z_picks_the_smallest_z():
    """A case where max |r| and min Z disagree: exact_z takes the lower-Z ranker."""
    # feature 0 orders 6 of 10 pairs right and 4 wrong (r = 0.2, Z = 2 sqrt(.24) = 0.98);
    # feature 1 orders 1 pair right and ties 9 (r = 0.1, Z = 0.9)
    n_pairs = 10
    X = np.zeros((2 * n_pairs, 2))
    pairs = np.arange(2 * n_pairs).reshape(n_pairs, 2)
    X[pairs[:6, 1], 0] = 1.0
    X[pairs[6:, 0], 0] = 1.0
    X[pairs[0, 1], 1] = 1.0
    fb = rb.PairFeedback(pairs)
    by_r = rb.train(X, fb, 1, alpha="exact")
    by_z = rb.train(X, fb, 1, alpha="exact", criterion="exact_z")
    assert by_r.rankers[0].feature == 0
    assert by_z.rankers[0].feature == 1
    assert by_z.history["z"][0] == pytest.approx(0.9, abs=1e-5)  # alpha guarded: W_+ = 0
    assert by_r.history["z"][0] == pytest.approx(2 * math.sqrt(0.24), abs=1e-12)


@pytest.mark.parametrize("kind", ["pairs", "layered"])
def test_blocks_equal_one_block(kind):
    rng = np.random.default_rng(3)
    n = 300
    X = np.round(rng.normal(size=(n, 5)), 1)
    X[rng.random((n, 5)) < 0.1] = np.nan
    if kind == "pairs":
        p = rng.integers(0, 30, size=(900, 2)) + 30 * rng.integers(0, 10, size=(900, 1))
        fb = rb.PairFeedback(p[p[:, 0] != p[:, 1]], n_samples=n)  # 10 components
    else:
        y = rng.integers(0, 5, size=n)
        fb = rb.LayeredFeedback(y, rng.integers(0, 30, size=n))
    params = {"criterion": "exact_z", "alpha": "exact", "thresholds": 16}
    one = rb.Booster(X, fb, params)
    many = rb.Booster(X, fb, params, n_blocks=4)
    assert many.n_blocks > 1
    for _ in range(15):
        a, b = one.update(), many.update()
        assert a.ranker == b.ranker
        assert a.alpha == pytest.approx(b.alpha, rel=1e-12, abs=1e-12)
        assert a.z == pytest.approx(b.z, rel=1e-12)
        assert a.rloss <= a.bound * (1 + 1e-12)


def test_bad_input():
    X = np.arange(6.0).reshape(3, 2)
    fb = rb.LayeredFeedback([0, 1, 2])
    with pytest.raises(ParameterError, match="exact_z.*binary weak rankers"):
        rb.train(X, fb, 2, criterion="exact_z", weak_ranker="both")
    with pytest.raises(ParameterError, match="criterion"):
        rb.train(X, fb, 2, criterion="min_z")


@pytest.mark.parametrize("kind", ["layered", "pairs"])
def test_dask_equals_one_machine(kind):
    """The workers return their summed split sums: the Dask model is the one-machine one."""
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("dask.array")
    import rankboost.dask as rbd
    from conftest import letor_like
    from test_dask import _dask, _quiet, _sorted, assert_same_model

    X, y, qid = _sorted(*letor_like(n_queries=20, seed=4))
    cfg = {"criterion": "exact_z", "alpha": "exact", "thresholds": 32}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        )
    with cluster, distributed.Client(cluster) as client:
        if kind == "layered":
            one = _quiet(rb.train, X, rb.LayeredFeedback(y, qid), n_rounds=12, **cfg)
            dist = _quiet(rbd.train, client, *_dask(X, y, qid), n_rounds=12, **cfg)
        else:
            fb = rb.LayeredFeedback(y, qid).with_sample_weight(1.0 + (y > 1))
            one = _quiet(rb.train, X, fb, n_rounds=12, **cfg)
            Xd, yd, qd = _dask(X, y, qid)
            w = pytest.importorskip("dask.array").from_array(1.0 + (y > 1), chunks=yd.chunks)
            dist = _quiet(rbd.train, client, Xd, yd, qd, sample_weight=w, n_rounds=12, **cfg)
    assert_same_model(one, dist, X)
