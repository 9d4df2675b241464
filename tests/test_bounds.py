"""rankboost.bounds.bipartite_generalization_bound against arithmetic written out by hand.

Formula (Freund et al. 2003, bipartite generalization theorem; seed-paper Knowl 7):
eps = 2 sqrt((d'(ln(2m/d') + 1) + ln(18/delta)) / m) + (same with n),
d' = 2 (d + 1) (T + 1) log2(e (T + 1)).
"""

from __future__ import annotations

import pytest

from rankboost.bounds import bipartite_generalization_bound as bound


def test_symmetric_case_by_hand():
    # m = n = 10**6, d = 2, T = 10, delta = 0.05
    # log2(e * 11) = log2(29.9011...) = 1.442695 + 3.459432 = 4.902127
    # d' = 2 * 3 * 11 * 4.902127 = 66 * 4.902127 = 323.5404
    # ln(18 / 0.05) = ln(360) = 5.886104
    # ln(2e6 / 323.5404) = ln(6181.609) = 8.729334
    # inner = 323.5404 * (8.729334 + 1) + 5.886104 = 3147.832 + 5.886 = 3153.718
    # one term = 2 * sqrt(3153.718 / 1e6) = 2 * 0.0561580 = 0.1123160
    # eps = 2 * 0.1123160 = 0.2246319
    assert bound(10**6, 10**6, vc_dim=2, n_rounds=10, delta=0.05) == pytest.approx(
        0.2246319, abs=1e-7
    )


def test_asymmetric_case_by_hand():
    # m = 50000, n = 2000, d = 3, T = 1, delta = 0.1
    # log2(2e) = 1 + log2(e) = 2.442695;  d' = 2 * 4 * 2 * 2.442695 = 39.08312
    # ln(18 / 0.1) = ln(180) = 5.192957
    # m: ln(1e5 / 39.08312) = ln(2558.65) = 7.847235; inner = 39.08312 * 8.847235 + 5.192957
    #    = 345.7776 + 5.1930 = 350.9705; term = 2 sqrt(350.9705 / 50000) = 0.1675638
    # n: ln(4000 / 39.08312) = ln(102.346) = 4.628359; inner = 39.08312 * 5.628359 + 5.192957
    #    = 219.9738 + 5.1930 = 225.1668; term = 2 sqrt(225.1668 / 2000) = 0.6710690
    # eps = 0.1675638 + 0.6710690 = 0.8386328
    assert bound(50000, 2000, vc_dim=3, n_rounds=1, delta=0.1) == pytest.approx(0.8386328, abs=1e-7)
    assert bound(2000, 50000, vc_dim=3, n_rounds=1, delta=0.1) == bound(
        50000, 2000, vc_dim=3, n_rounds=1, delta=0.1
    )


def test_monotone_in_each_argument():
    base = bound(10**5, 10**5, vc_dim=2, n_rounds=5, delta=0.05)
    assert bound(10**6, 10**5, vc_dim=2, n_rounds=5, delta=0.05) < base
    assert bound(10**5, 10**5, vc_dim=3, n_rounds=5, delta=0.05) > base
    assert bound(10**5, 10**5, vc_dim=2, n_rounds=6, delta=0.05) > base
    assert bound(10**5, 10**5, vc_dim=2, n_rounds=5, delta=0.01) > base


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"vc_dim": 1}, ValueError, r"'vc_dim' parameter .* must be >= 2; got 1"),
        ({"n_rounds": 0}, ValueError, r"'n_rounds' parameter .* must be >= 1; got 0"),
        ({"m": 0}, ValueError, r"'m' parameter .* must be >= 1; got 0"),
        ({"m": 10.0}, TypeError, r"'m' parameter .* must be an int >= 1; got 10.0"),
        ({"delta": 0.0}, ValueError, r"'delta' parameter .* must be in \(0, 1\); got 0.0"),
        ({"delta": 1}, ValueError, r"'delta' parameter .* must be in \(0, 1\); got 1"),
        ({"delta": "0.1"}, TypeError, r"'delta' parameter .* got '0.1'"),
        ({"n": 30}, ValueError, r"needs n >= d' = .* = 323.54 .*got n=30"),
    ],
)
def test_invalid_inputs(kwargs, error, match):
    args = {"m": 10**6, "n": 10**6, "vc_dim": 2, "n_rounds": 10, "delta": 0.05, **kwargs}
    with pytest.raises(error, match=match):
        bound(**args)


# ------------------------------------------------------------------ a trained model's bound
# model_bound / bipartite_error_curve / threshold_vc_dim / min_sample_size / plot_bound
# (issue 13 item 5), each against a count or a search written out in plain Python.

import itertools  # noqa: E402
import math  # noqa: E402

import numpy as np  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import rankboost as rb  # noqa: E402
from rankboost.bounds import (  # noqa: E402
    bipartite_error_curve,
    min_sample_size,
    model_bound,
    threshold_vc_dim,
)


def _pooled_errors_by_pairs(model, X, pos):
    """Per round: fraction of every (negative, positive) pair with H(neg) >= H(pos)."""
    out = []
    for t in range(1, model.n_rounds + 1):
        h = model.decision_function(X, n_rounds=t)
        negs, poss = np.flatnonzero(~pos), np.flatnonzero(pos)
        bad = sum(1 for i in negs for j in poss if h[i] >= h[j])
        out.append(bad / (len(negs) * len(poss)))
    return np.array(out)


def _query_errors_by_pairs(model, X, pos, qid):
    """Per round: fraction of the within-query (negative, positive) pairs misordered."""
    out = []
    for t in range(1, model.n_rounds + 1):
        h = model.decision_function(X, n_rounds=t)
        bad = total = 0
        for i, j in itertools.product(range(len(pos)), repeat=2):
            if qid[i] == qid[j] and not pos[i] and pos[j]:
                total += 1
                bad += h[i] >= h[j]
        out.append(bad / total)
    return np.array(out)


def _problem(seed, n_rows=40, n_features=3, n_queries=4):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(n_rows, n_features)).astype(float)  # ties on purpose
    X[rng.random(X.shape) < 0.15] = np.nan  # abstentions
    y = rng.integers(0, 3, size=n_rows)  # graded 0/1/2: positive = y >= 1
    y[:2] = [0, 2]  # both classes present
    qid = rng.integers(0, n_queries, size=n_rows)
    return X, y, qid


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(["r", "exact"]), st.booleans())
def test_error_curve_matches_pair_count(seed, alpha, cumulative):
    X, y, qid = _problem(seed)
    pos = y >= 1
    model = rb.train(
        X, rb.BipartiteFeedback(pos.astype(int), qid), n_rounds=6, alpha=alpha,
        positive_cumulative=cumulative,
    )  # fmt: skip
    pooled, within = bipartite_error_curve(model, X, y, qid)
    assert pooled.shape == (model.n_rounds,)
    np.testing.assert_allclose(pooled, _pooled_errors_by_pairs(model, X, pos), rtol=0, atol=1e-15)
    np.testing.assert_allclose(
        within, _query_errors_by_pairs(model, X, pos, qid), rtol=0, atol=1e-12
    )


def test_error_curve_threshold_and_all_tied():
    # relevance_threshold=2: only grade 2 is positive; an all-tied H misorders every pair
    X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0]])
    y = np.array([0, 1, 2, 1, 2])
    model = rb.train(X, rb.BipartiteFeedback((y >= 2).astype(int)), n_rounds=2)
    pooled, within = bipartite_error_curve(model, X, y, relevance_threshold=2)
    assert within is None
    np.testing.assert_array_equal(pooled, _pooled_errors_by_pairs(model, X, y >= 2))
    same = np.ones((5, 1))  # every row gets the same H: every pair is tied, an error
    assert bipartite_error_curve(model, same, [0, 1, 1, 0, 1])[0].tolist() == [1.0, 1.0]


def test_model_bound_against_the_formula():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 2))
    y = (X[:, 0] + rng.normal(size=3000) > 0.5).astype(int)
    model = rb.train(X, rb.BipartiteFeedback(y), n_rounds=25)
    b = model_bound(model, X, y, delta=0.1)
    m, n = int(np.sum(y == 0)), int(np.sum(y == 1))
    assert (b.n_negatives, b.n_positives, b.vc_dim, b.delta) == (m, n, 4, 0.1)
    assert b.vc_dim == threshold_vc_dim(2)
    np.testing.assert_array_equal(b.rounds, np.arange(1, 26))
    np.testing.assert_array_equal(b.error, bipartite_error_curve(model, X, y)[0])
    defined = 0
    for t in range(1, 26):
        d_prime = 2 * 5 * (t + 1) * math.log2(math.e * (t + 1))
        if min(m, n) >= d_prime:
            defined += 1
            assert b.epsilon[t - 1] == bound(m, n, vc_dim=4, n_rounds=t, delta=0.1)
            assert b.upper[t - 1] == b.error[t - 1] + b.epsilon[t - 1]
        else:
            assert np.isnan(b.epsilon[t - 1])
    assert 0 < defined < 25  # the sample is small enough for the bound to run out
    assert np.all(b.epsilon[:defined] > 1.0)  # vacuous at this size (the docs say so)
    # a given vc_dim is used as is
    assert model_bound(model, X, y, vc_dim=2, delta=0.1).epsilon[0] == bound(m, n, 2, 1, 0.1)


def test_threshold_vc_dim_is_the_growth_function_bound():
    for f in (1, 2, 3, 10, 46, 1000):
        d = threshold_vc_dim(f)
        assert 2**d <= 2 * f * (d + 1) < 2 ** (d + 1) or d == 2
        assert 2 ** (d + 1) > 2 * f * (d + 2)  # d + 1 points cannot be shattered
    assert threshold_vc_dim(46) == 9


def test_threshold_vc_dim_bounds_shattering_by_brute_force():
    # one feature with abstention: the class shatters 2 points (one defined, one NaN), never 3
    def labellings(points):
        out = set()
        defined = sorted({p for p in points if not math.isnan(p)})
        for theta in [-math.inf, *defined]:
            for q in (0, 1):
                out.add(tuple(q if math.isnan(p) else int(p > theta) for p in points))
        return out

    assert len(labellings([0.0, math.nan])) == 4
    for pts in itertools.product([0.0, 1.0, 2.0, math.nan], repeat=3):
        assert len(labellings(list(pts))) < 8
    assert threshold_vc_dim(1) >= 2


def test_min_sample_size_is_the_first_non_vacuous_size():
    for d, t, delta, ratio in ((2, 10, 0.05, 1.0), (9, 50, 0.05, 0.25), (3, 1, 0.1, 2.0)):
        m = min_sample_size(d, t, delta, ratio=ratio)
        assert bound(m, math.ceil(ratio * m), d, t, delta) < 1.0
        assert bound(m - 1, math.ceil(ratio * (m - 1)), d, t, delta) >= 1.0
    m = min_sample_size(2, 10, 0.05, epsilon=0.5)
    assert bound(m, m, 2, 10, 0.05) < 0.5 <= bound(m - 1, m - 1, 2, 10, 0.05)


def _small_model():
    X, y, qid = _problem(0, n_rows=60)
    return rb.train(X, rb.BipartiteFeedback((y >= 1).astype(int), qid), n_rounds=3), X, y


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda m, X, y: model_bound(m, X, np.zeros_like(y)), ValueError, r"0 positives"),
        (lambda m, X, y: model_bound(m, X, np.where(y > 0, np.nan, y)), ValueError, r"NaN"),
        (lambda m, X, y: model_bound(m, X[:5], y), ValueError, r"one row per label"),
        (lambda m, X, y: model_bound(m, X, y, delta=1.5), ValueError, r"'delta'.* \(0, 1\)"),
        (lambda m, X, y: model_bound(m, X, y, vc_dim=1), ValueError, r"'vc_dim' .*model_bound"),
        (lambda m, X, y: model_bound(m, X, y[:, None]), ValueError, r"y must be 1-D"),
        (lambda m, X, y: threshold_vc_dim(0), ValueError, r"'n_features' .* >= 1"),
        (lambda m, X, y: min_sample_size(2, 10, 0.05, ratio=0), ValueError, r"'ratio' .* > 0"),
        (lambda m, X, y: min_sample_size(2, 0, 0.05), ValueError, r"'n_rounds' .* >= 1"),
    ],
)
def test_model_bound_bad_input(call, error, match):
    model, X, y = _small_model()
    with pytest.raises(error, match=match):
        call(model, X, y)


def test_model_bound_rejects_real_valued_rankers():
    X, y, _ = _problem(1)
    X = np.nan_to_num(X)
    model = rb.train(X, rb.BipartiteFeedback((y >= 1).astype(int)), n_rounds=3,
                     weak_ranker="feature", alpha="line_search")  # fmt: skip
    with pytest.raises(ValueError, match=r"binary weak rankers.*weak_ranker='threshold'"):
        model_bound(model, X, y)


def test_plot_bound_draws_the_curves():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rankboost.plotting import plot_bound

    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 2))
    y = (X[:, 0] + rng.normal(size=3000) > 0.5).astype(int)
    qid = np.repeat(np.arange(300), 10)
    tr, te = slice(0, 2000), slice(2000, 3000)
    model = rb.train(X[tr], rb.BipartiteFeedback(y[tr], qid[tr]), n_rounds=20)
    ax = plot_bound(model, X[tr], y[tr], qid[tr], X_test=X[te], y_test=y[te], qid_test=qid[te])
    lines = {line.get_label(): line for line in ax.get_lines()}
    b = model_bound(model, X[tr], y[tr], qid[tr])
    test, test_q = bipartite_error_curve(model, X[te], y[te], qid[te])
    np.testing.assert_array_equal(lines["train error"].get_ydata(), b.error)
    np.testing.assert_array_equal(lines["test error"].get_ydata(), test)
    np.testing.assert_array_equal(lines["test error, in query"].get_ydata(), test_q)
    np.testing.assert_array_equal(lines["train error, in query"].get_ydata(), b.query_error)
    ok = ~np.isnan(b.epsilon)
    assert 0 < ok.sum() < 20
    np.testing.assert_array_equal(lines["bound (train + eps)"].get_xdata(), b.rounds[ok])
    np.testing.assert_array_equal(lines["bound (train + eps)"].get_ydata(), b.upper[ok])
    assert list(lines["trivial bound 1"].get_ydata()) == [1.0, 1.0]
    assert ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="both X_test and y_test"):
        plot_bound(model, X[tr], y[tr], X_test=X[te])
    plt.close("all")
