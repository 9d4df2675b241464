"""RankBoost+ (``alpha="rbplus"``) against a slow pair-based reference written from SPEC 5.4.

The reference below is plain numpy on the list of pairs (it imports nothing from
``rankboost``; the candidate list comes from ``tests/reference.py``): per round, every
candidate's ``W_-, W_0, W_+`` from the pairs, the score ``|W_- - W_+ - W_0 tanh(eta)|``, the
alpha *formula* of SPEC 5.4 (not the engine's ``rho`` form), the cosh update of tied pairs,
``Z`` as the normaliser, the rloss from ``H``. Compared round by round (ranker, alpha, r, Z,
rloss, bound to 1e-10); plus the eta = 0 equivalence with Rb-c / Rb-d, layered expansion ==
explicit pairs, and the errors.
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
from rankboost.params import ParameterError
from test_engine_reference import SETTINGS, TOL, graded_problems, pair_problems, same_ranker

N_ROUNDS = 10
EPS = 1e-10  # the alpha guard, as Rb-c's


def rbplus_reference(X, pairs, weights, n_rounds, *, tol=TOL, learning_rate=1.0, default="learned"):
    """RankBoost+ per SPEC 5.4 on explicit pairs ``(i0, i1)`` = "i1 above i0"."""
    i0, i1 = pairs[:, 0], pairs[:, 1]
    w = np.ones(len(pairs)) if weights is None else np.asarray(weights, dtype=float)
    d1 = w / w.sum()
    rows = np.unique(pairs)
    cands = ref.candidates(X, rows, "threshold", "all")
    values = [c.predict(X) for c in cands]
    keys = [tuple(v[rows]) for v in values]  # a distinct ranker = distinct values on rows
    margins = [v[i1] - v[i0] for v in values]
    eta: dict = {}
    first: dict = {}
    loss = d1.copy()  # unnormalised pair weights: D_1 prod_j f_j
    H = np.zeros(X.shape[0])
    same_history = np.ones(len(pairs), dtype=bool)
    bound = 1.0
    out = []
    ambiguous_from = None
    for t in range(n_rounds):
        Dt = loss / loss.sum()
        scores, rhos, stats = [], [], []
        for k, m in enumerate(margins):
            wm, w0, wp = Dt[m > 0].sum(), Dt[m == 0].sum(), Dt[m < 0].sum()
            e = eta.get(keys[k], 0.0)
            rho = wm - wp - w0 * math.tanh(e)
            ok = default == "learned" or cands[k].default == float(default)
            scores.append(abs(rho) if ok else -1.0)
            rhos.append(rho)
            stats.append((wm, w0, wp, e))
        if not scores:
            break
        top = max(scores)
        k = next(j for j, s in enumerate(scores) if s >= top - ref.TIE_TOLERANCE)
        edge = [j for j, s in enumerate(scores) if abs(s - (top - ref.TIE_TOLERANCE)) < 1e-12]
        if any(keys[j] != keys[k] for j in edge) or abs(top - tol) < 1e-12:
            ambiguous_from = t if ambiguous_from is None else ambiguous_from
        if top <= tol:
            break
        wm, w0, wp, e = stats[k]
        num = wm + w0 * math.exp(-e) / (2 * math.cosh(e))
        den = wp + w0 * math.exp(e) / (2 * math.cosh(e))
        rc = (num - den) / (num + den)
        if abs(rc) > 1 - EPS:  # the guard: |alpha| <= 1/2 ln((2 - eps) / eps), as Rb-c
            rc = math.copysign(1 - EPS, rc)
            alpha = 0.5 * math.log((1 + rc) / (1 - rc))
        else:
            alpha = 0.5 * math.log(num / den)
        alpha *= learning_rate
        first.setdefault(keys[k], cands[k])
        m = margins[k]
        factor = np.where(m != 0, np.exp(-alpha * m), math.cosh(e + alpha) / math.cosh(e))
        z = float(np.sum(Dt * factor))
        loss = loss * factor
        eta[keys[k]] = e + alpha
        H = H + alpha * values[k]
        bound *= z
        same_history &= values[k][i0] == values[k][i1]
        dH = H[i1] - H[i0]
        rloss_ambiguous = bool(np.any((np.abs(dH) < 1e-9) & ~same_history))
        r = wm - wp
        out.append(
            (first[keys[k]], alpha, r, z, float(np.sum(d1 * (dH <= 0))), bound, rloss_ambiguous)
        )
        if abs(abs(r) - ref.PERFECT) < 1e-12 and ambiguous_from is None:
            ambiguous_from = t + 1
        if abs(r) >= ref.PERFECT:
            break
    return out, ambiguous_from


def _train(X, fb, n_rounds=N_ROUNDS, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
        return rb.train(X, fb, n_rounds, alpha="rbplus", tol=TOL, thresholds="all", **params)


def _compare(X, fb, pairs, weights, **params):
    model = _train(X, fb, **params)
    expected, ambiguous_from = rbplus_reference(X, pairs, weights, N_ROUNDS, **params)
    upto = len(expected) if ambiguous_from is None else min(len(expected), ambiguous_from)
    if ambiguous_from is None:
        assert model.n_rounds == len(expected), (model.history, len(expected))
    else:
        assert model.n_rounds >= upto
    h = model.history
    for t in range(upto):
        ranker, alpha, r, z, rloss, bound, rloss_ambiguous = expected[t]
        assert same_ranker(model, t, ranker), (t, model.rankers[t], ranker)
        np.testing.assert_allclose(h["alpha"][t], alpha, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(h["r"][t], r, rtol=0, atol=1e-10)
        np.testing.assert_allclose(h["z"][t], z, rtol=1e-10, atol=0)
        np.testing.assert_allclose(h["bound"][t], bound, rtol=1e-10, atol=0)
        if not rloss_ambiguous:
            np.testing.assert_allclose(h["rloss"][t], rloss, rtol=0, atol=1e-12)
    assert np.all(h["rloss"] <= h["bound"] * (1 + 1e-12))  # rloss <= prod Z_t, every round
    return model, [not e[6] for e in expected[:upto]]


@SETTINGS
@given(
    problem=pair_problems(),
    options=st.sampled_from([{}, {"learning_rate": 0.5}, {"default": 0}, {"default": 1}]),
)
def test_pair_feedback_matches_reference(problem, options):
    X, pairs, weights = problem
    fb = rb.PairFeedback(pairs, weights, n_samples=X.shape[0])
    _compare(X, fb, pairs, weights, **options)


@SETTINGS
@given(
    problem=graded_problems(binary=False, top=5),
    binary=st.booleans(),
    normalize=st.sampled_from(["pair", "query"]),
)
def test_layered_expansion_equals_explicit_pairs(problem, binary, normalize):
    """Layered / bipartite feedback under rbplus == the same pairs given explicitly, and
    both == the reference."""
    X, y, qid = problem
    if binary:
        y = (y >= 1).astype(float)
    fb = (rb.BipartiteFeedback if binary else rb.LayeredFeedback)(y, qid, normalize=normalize)
    pairs, weights = ref.layered_pairs(y, qid, normalize)
    pairs = np.array(pairs, dtype=np.int64)
    explicit = rb.PairFeedback(pairs, weights, n_samples=X.shape[0])
    a, exact_rloss = _compare(X, fb, pairs, weights)
    b = _train(X, explicit)
    assert a.n_rounds == b.n_rounds
    assert [m.key() for m in a.rankers] == [m.key() for m in b.rankers]
    for k in ("alpha", "z", "bound"):
        np.testing.assert_allclose(a.history[k], b.history[k], rtol=1e-12, atol=1e-14)
    # the rloss where no pair's order by H hangs on float noise (ties of sums of alphas)
    t = np.flatnonzero(exact_rloss)
    np.testing.assert_allclose(a.history["rloss"][t], b.history["rloss"][t], atol=1e-14)


def test_eta_zero_is_rb_c_and_rb_d():
    """With every eta = 0 (a new ranker) RankBoost+'s alpha is Rb-c's, and Rb-d's when
    the ranker ties no pair (W_0 = 0)."""
    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(80, 2)))  # few thresholds: rankers come back
    y = rng.integers(0, 3, size=80)
    fb = rb.LayeredFeedback(y, rng.integers(0, 6, size=80))
    plus = _train(X, fb, 1)
    rbc = rb.train(X, fb, 1, alpha="r", thresholds="all")
    assert plus.rankers[0] == rbc.rankers[0]
    assert plus.history["alpha"][0] == pytest.approx(rbc.history["alpha"][0], rel=1e-12)
    # (Z differs: RankBoost+ multiplies the tied pairs by cosh(alpha), Rb-c by 1)
    assert plus.history["z"][0] > rbc.history["z"][0]
    # every round that introduces a new ranker (eta = 0) has Rb-c's alpha at its r
    model = _train(X, fb, 25)
    seen = set()
    for t, h in enumerate(model.rankers):
        if h.key() not in seen:
            expected = 0.5 * math.log((1 + model.history["r"][t]) / (1 - model.history["r"][t]))
            assert model.history["alpha"][t] == pytest.approx(expected, rel=1e-9)
        seen.add(h.key())
    assert len(seen) < model.n_rounds  # some rankers were re-weighted (eta != 0)
    # W_0 = 0: one feature that splits both pairs, 0.7 right and 0.3 wrong
    X2 = np.array([[0.0], [1.0], [1.0], [0.0]])
    pf = rb.PairFeedback([[0, 1], [2, 3]], weights=[0.7, 0.3])
    a_plus = _train(X2, pf, 1).history["alpha"][0]
    a_exact = rb.train(X2, pf, 1, alpha="exact").history["alpha"][0]
    assert a_plus == pytest.approx(a_exact, rel=1e-12)
    assert a_plus == pytest.approx(0.5 * math.log(0.7 / 0.3), rel=1e-12)


def test_bad_input(monkeypatch):
    import rankboost.rbplus as rbplus

    X = np.arange(6.0).reshape(3, 2)
    fb = rb.LayeredFeedback([0, 1, 2])
    for bad, match in (
        ({"weak_ranker": "feature"}, "rbplus.*binary weak rankers"),
        ({"weak_ranker": "both"}, "rbplus.*binary weak rankers"),
        ({"positive_cumulative": True}, "rbplus.*positive_cumulative"),
        ({"criterion": "exact_z"}, "rbplus.*criterion"),
    ):
        with pytest.raises(ParameterError, match=match):
            rb.train(X, fb, 2, alpha="rbplus", **bad)
    monkeypatch.setattr(rbplus, "RBPLUS_MAX_PAIRS", 2)
    with pytest.raises(ParameterError, match=r"3 crucial pairs.*RBPLUS_MAX_PAIRS=2.*alpha='r'"):
        rb.train(X, fb, 2, alpha="rbplus")
    rb.train(X, rb.PairFeedback([[0, 1], [1, 2], [0, 2]]), 2, alpha="rbplus")  # given pairs


def test_blocks_equal_one_block():
    rng = np.random.default_rng(7)
    n = 240
    X = np.round(rng.normal(size=(n, 4)), 1)
    X[rng.random((n, 4)) < 0.1] = np.nan
    fb = rb.LayeredFeedback(rng.integers(0, 3, size=n), rng.integers(0, 24, size=n))
    one = rb.Booster(X, fb, {"alpha": "rbplus", "thresholds": 16})
    many = rb.Booster(X, fb, {"alpha": "rbplus", "thresholds": 16}, n_blocks=3)
    assert many.n_blocks == 3
    for _ in range(20):
        a, b = one.update(), many.update()
        assert a.ranker == b.ranker
        assert a.alpha == pytest.approx(b.alpha, rel=1e-12, abs=1e-12)
        assert a.z == pytest.approx(b.z, rel=1e-12)
        assert a.rloss <= a.bound * (1 + 1e-12)


def test_dask_refuses_clearly():
    pytest.importorskip("dask")
    from rankboost.dask._booster import DaskBooster
    from rankboost.params import TrainParams

    with pytest.raises(ParameterError, match=r"alpha='rbplus' is not supported on Dask"):
        DaskBooster(
            None, [], TrainParams(alpha="rbplus"), n_features=1, kind="layered",
            normalize="query",
        )  # fmt: skip
