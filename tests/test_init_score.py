"""Boosting from a prior ranking function F0 (``init_score``; SPEC 7.2, first bullet).

The boosted loss is ``sum D exp((F0 + H)(x0) - (F0 + H)(x1))``, so round 1 runs on
``D_1`` proportional to ``D(x0, x1) exp(F0(x0) - F0(x1))``. Checked here: a constant F0 trains
exactly as none (bit for bit); F0 = a model's ``H_T`` makes the next round round ``T + 1`` of
continued training (1e-9); the rounds equal the slow oracle's (``tests/reference.py``) run on
the prior-weighted pair distribution, for pair, bipartite and layered feedback (hypothesis);
``rloss(F0 + H_t) <= prior_loss * prod Z_t`` every round; large |F0| is stable; bad
``init_score`` gets a clear error; 0 rounds is the prior's ranking.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankboost as rb
import reference as ref
from test_engine_reference import SETTINGS, graded_problems, pair_problems

N_ROUNDS = 6
TOL = 1e-10
PRIOR_SETTINGS = settings(SETTINGS, max_examples=min(SETTINGS.max_examples, 30))


def _train(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
        return rb.train(*args, **kwargs)


def _letor(seed=0, n=240):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    X[rng.random(X.shape) < 0.1] = np.nan
    qid = rng.integers(0, 12, n)
    y = np.clip(np.round(np.nan_to_num(X[:, 0]) + rng.normal(size=n)), 0, 3)
    return X, y, qid


def _feedbacks(y, qid):
    pairs = rb.LayeredFeedback(y, qid)._weighted_pairs(np.ones(y.shape[0]))
    return {
        "layered": rb.LayeredFeedback(y, qid),
        "bipartite": rb.BipartiteFeedback((y >= 2).astype(int), qid),
        "pairs": pairs,
    }


# --------------------------------------------------------------------------- exact identities


@pytest.mark.parametrize("kind", ["layered", "bipartite", "pairs"])
@pytest.mark.parametrize("alpha", ["r", "exact", "line_search"])
def test_constant_prior_is_no_prior(kind, alpha):
    X, y, qid = _letor()
    fb = _feedbacks(y, qid)[kind]
    m0 = _train(X, fb, 12, alpha=alpha)
    m1 = _train(X, fb, 12, alpha=alpha, init_score=np.full(X.shape[0], -3.7e5))
    for key in ("feature", "threshold", "default", "alpha", "r", "z", "rloss", "bound"):
        np.testing.assert_array_equal(m1.history[key], m0.history[key], err_msg=key)


def test_per_query_constant_prior_is_no_prior_for_query_feedback():
    X, y, qid = _letor(1)
    fb = rb.LayeredFeedback(y, qid)
    m0 = _train(X, fb, 10)
    m1 = _train(X, fb, 10, init_score=1e4 * qid.astype(float) - 77.0)
    for key in ("feature", "threshold", "alpha", "r", "z", "rloss", "bound"):
        np.testing.assert_array_equal(m1.history[key], m0.history[key], err_msg=key)


def test_rbplus_constant_prior_is_no_prior():
    X, y, qid = _letor()
    fb = _feedbacks(y, qid)["pairs"]
    m0 = _train(X, fb, 8, alpha="rbplus")
    m1 = _train(X, fb, 8, alpha="rbplus", init_score=np.full(X.shape[0], 12.5))
    for key in ("feature", "threshold", "default", "alpha", "r", "z", "rloss", "bound"):
        np.testing.assert_array_equal(m1.history[key], m0.history[key], err_msg=key)
    # a real prior: the bound relative to the prior's loss (RankBoost+ starts from D_1 too)
    f0 = np.random.default_rng(3).normal(size=X.shape[0])
    bst = rb.Booster(X, fb, {"alpha": "rbplus"}, init_score=f0)
    for _ in range(6):
        rec = bst.update()
        assert rec is not None
        assert rec.rloss <= bst.prior_loss * rec.bound * (1 + 1e-12)


@pytest.mark.parametrize("kind", ["layered", "bipartite", "pairs"])
@pytest.mark.parametrize("alpha", ["r", "exact", "line_search"])
def test_prior_from_a_model_continues_its_training(kind, alpha):
    """RankBoost+ is left out: its loss carries every ranker's eta, which F0 does not."""
    X, y, qid = _letor(2)
    fb = _feedbacks(y, qid)[kind]
    T = 7
    full = _train(X, fb, T + 1, alpha=alpha, weak_ranker="threshold")
    assert full.n_rounds == T + 1
    first = _train(X, fb, T, alpha=alpha)
    f0 = first.decision_function(X)
    bst = rb.Booster(X, fb, {"alpha": alpha}, init_score=f0)
    # the prior's loss is the loss after T rounds: prod_{t <= T} Z_t
    np.testing.assert_allclose(bst.prior_loss, full.history["bound"][T - 1], rtol=1e-9)
    rec = bst.update()
    assert rec is not None
    h = full.history
    assert rec.ranker.feature == h["feature"][T]
    assert rec.ranker.threshold == h["threshold"][T]
    assert rec.ranker.default == h["default"][T]
    np.testing.assert_allclose(rec.alpha, h["alpha"][T], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(rec.r, h["r"][T], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(rec.z, h["z"][T], rtol=1e-9)
    np.testing.assert_allclose(rec.rloss, h["rloss"][T], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(bst.prior_loss * rec.bound, h["bound"][T], rtol=1e-9)


def test_zero_rounds_is_the_prior():
    X, y, qid = _letor(3)
    f0 = np.random.default_rng(0).normal(size=X.shape[0])
    fb = rb.LayeredFeedback(y, qid)
    bst = rb.Booster(X, fb, init_score=f0)
    model = bst.model()
    assert model.n_rounds == 0
    np.testing.assert_array_equal(model.decision_function(X), np.zeros(X.shape[0]))
    D = ref.layered_matrix(y, qid, normalize="query")
    expected = np.sum(D * np.exp(f0[:, None] - f0[None, :]))
    np.testing.assert_allclose(bst.prior_loss, expected, rtol=1e-12)


def test_large_prior_is_stable():
    X, y, qid = _letor(4)
    rng = np.random.default_rng(1)
    f0 = rng.normal(size=X.shape[0])
    for fb in _feedbacks(y, qid).values():
        small = _train(X, fb, 8, init_score=f0)
        # a huge common offset: the same distribution, in log space without overflow
        big = _train(X, fb, 8, init_score=f0 + 1e5)
        for key in ("feature", "threshold", "default"):
            np.testing.assert_array_equal(big.history[key], small.history[key])
        for key in ("alpha", "r", "z", "rloss", "bound"):
            np.testing.assert_allclose(big.history[key], small.history[key], rtol=1e-9)
        # a steep prior (exp(F0) overflows float64 by far): finite rounds, the bound holds
        bst = rb.Booster(X, fb, init_score=3000.0 * f0)
        assert np.isfinite(bst.log_prior_loss)
        for _ in range(5):
            rec = bst.update()
            if rec is None:
                break
            assert np.isfinite([rec.alpha, rec.r, rec.z, rec.rloss, rec.bound]).all()
            assert np.log(rec.rloss) <= bst.log_prior_loss + np.log(rec.bound) + 1e-9


def test_sklearn_fit_takes_init_score_and_predicts_h_only():
    X, y, qid = _letor(5)
    f0 = np.random.default_rng(2).normal(size=X.shape[0])
    est = rb.RankBoostRanker(n_estimators=9).fit(X, y, qid=qid, init_score=f0)
    model = _train(X, rb.LayeredFeedback(y, qid), 9, init_score=f0)
    np.testing.assert_array_equal(est.predict(X), model.decision_function(X))
    plain = rb.RankBoostRanker(n_estimators=9).fit(X, y, qid=qid)
    assert not np.array_equal(est.predict(X), plain.predict(X))
    with pytest.raises(ValueError, match="init_score= with eval_set="):
        rb.RankBoostRanker(n_estimators=2).fit(
            X, y, qid=qid, init_score=f0, eval_set=[(X, y)], eval_qid=[qid]
        )


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        (np.zeros(5), r"shape \(240,\)"),
        (np.zeros((240, 2)), r"shape \(240,\)"),
        (np.r_[np.zeros(239), np.nan], r"init_score\[239\] = nan"),
        (np.r_[np.inf, np.zeros(239)], r"init_score\[0\] = inf"),
        (["a"] * 240, "array of numbers"),
    ],
)
def test_bad_init_score(bad, match):
    X, y, qid = _letor()
    fb = rb.LayeredFeedback(y, qid)
    with pytest.raises(ValueError, match=match):
        rb.train(X, fb, 2, init_score=bad)
    with pytest.raises(ValueError, match=match):
        rb.Booster(X, fb, init_score=bad)
    with pytest.raises(ValueError, match=match):
        rb.RankBoostRanker(n_estimators=2).fit(X, y, qid=qid, init_score=bad)


# --------------------------------------------------------------------------- the oracle


priors = st.lists(st.floats(-3.0, 3.0, allow_nan=False), min_size=40, max_size=40)
rules = st.sampled_from([("r", "threshold"), ("r", "both"), ("exact", "threshold")])


def assert_matches_prior_reference(X, fb, D, f0, alpha, weak_ranker):
    """The engine from F0 against the oracle on D_1 = D exp(F0(x0) - F0(x1)), normalised."""
    D1 = D / D.sum()
    Dp = ref.distribution_from_scores(D1, f0)
    bst = rb.Booster(X, fb, {"alpha": alpha, "weak_ranker": weak_ranker, "thresholds": "all"},
                     init_score=f0)  # fmt: skip
    # the first round's distribution, through every row's potential
    pi = np.zeros(X.shape[0])
    for b in bst._blocks:
        pi[b.rows] = b.potential()
    np.testing.assert_allclose(pi, ref.potential(Dp), rtol=0, atol=1e-12)
    np.testing.assert_allclose(bst.prior_loss, np.sum(D1 * np.exp(f0[:, None] - f0[None, :])),
                               rtol=1e-12)  # fmt: skip
    model = _train(X, fb, N_ROUNDS, tol=TOL, alpha=alpha, weak_ranker=weak_ranker,
                   thresholds="all", init_score=f0)  # fmt: skip
    expected = ref.train(X, Dp, N_ROUNDS, tol=TOL, alpha=alpha, weak_ranker=weak_ranker)
    upto = len(expected.rounds)
    if expected.ambiguous_from is not None:
        upto = min(upto, expected.ambiguous_from)
    assert model.n_rounds >= upto
    hist = model.history
    staged = list(model.staged_decision_function(X))
    lower, upper = np.nonzero(D1)
    for t in range(upto):
        e = expected.rounds[t]
        got = model.rankers[t]
        assert (got.kind, got.feature, got.default) == (
            e.ranker.kind, e.ranker.feature, e.ranker.default
        )  # fmt: skip
        np.testing.assert_allclose(hist["alpha"][t], e.alpha, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(hist["r"][t], e.r, rtol=0, atol=1e-10)
        np.testing.assert_allclose(hist["z"][t], e.z, rtol=1e-10, atol=0)
        np.testing.assert_allclose(hist["bound"][t], e.bound, rtol=1e-10, atol=0)
        # rloss of F0 + H_t under the original D, unless a crucial pair is a near-tie: within
        # 1e-9, rounding decides the order, and the engine sums F0 (shifted per query) and H_t
        # in another order than here. A gap of 0 is a near-tie too unless F0 and H_t tie
        # apart (F0 = [0, 1.5e-16] and H_t = [a, a] sum to a tie here, not in the engine).
        total = f0 + staged[t]
        gap = np.abs(total[upper] - total[lower])
        true_tie = (f0[upper] == f0[lower]) & (staged[t][upper] == staged[t][lower])
        if not ((gap < 1e-9) & ~true_tie).any():
            np.testing.assert_allclose(hist["rloss"][t], ref.rloss(D1, total), atol=1e-12)
        # the loss relative to the prior's is bounded by prod Z_t
        assert hist["rloss"][t] <= bst.prior_loss * hist["bound"][t] * (1 + 1e-12)


@PRIOR_SETTINGS
@given(problem=pair_problems(), rule=rules, f0=priors)
def test_pair_prior_matches_reference(problem, rule, f0):
    X, pairs, weights = problem
    f0 = np.array(f0[: X.shape[0]])
    fb = rb.PairFeedback(pairs, weights, n_samples=X.shape[0])
    D = ref.pair_matrix(X.shape[0], pairs, weights)
    assert_matches_prior_reference(X, fb, D, f0, *rule)


@PRIOR_SETTINGS
@given(
    problem=graded_problems(binary=True),
    normalize=st.sampled_from(["pair", "query"]),
    rule=rules,
    f0=priors,
)
def test_bipartite_prior_matches_reference(problem, normalize, rule, f0):
    X, y, qid = problem
    f0 = np.array(f0[: X.shape[0]])
    fb = rb.BipartiteFeedback(y, qid, normalize=normalize)
    D = ref.layered_matrix(y, qid, normalize=normalize)
    assert_matches_prior_reference(X, fb, D, f0, *rule)


@PRIOR_SETTINGS
@given(
    problem=graded_problems(binary=False),
    normalize=st.sampled_from(["pair", "query"]),
    rule=rules,
    f0=priors,
)
def test_layered_prior_matches_reference(problem, normalize, rule, f0):
    X, y, qid = problem
    f0 = np.array(f0[: X.shape[0]])
    fb = rb.LayeredFeedback(y, qid, normalize=normalize)
    D = ref.layered_matrix(y, qid, normalize=normalize)
    assert_matches_prior_reference(X, fb, D, f0, *rule)
