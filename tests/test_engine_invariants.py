"""Invariants of the engine (SPEC sections 2, 4, 5 and 8; paper Knowl 1, 2, 4, 5, 6).

Every check recomputes its quantity independently from explicitly enumerated crucial pairs
and the model's staged scores ``H_t`` (``D_t`` proportional to ``D exp(H_t(x0) - H_t(x1))``),
never from the engine's internal state, except where a test says so.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.special import logsumexp

import rankboost as rb
import reference as ref
from conftest import MQ2008_FOLD1_TRAIN, letor_like, step, train_quiet
from rankboost.alpha_rules import MAX_ALPHA, alpha_exact, alpha_from_r

FEEDBACKS = ["pairs", "bipartite", "layered_pair", "layered_query"]
RULES = [("r", "threshold"), ("exact", "threshold"), ("line_search", "threshold"),
         ("r", "both"), ("line_search", "feature")]  # fmt: skip


# --------------------------------------------------------------------------- helpers


def graded_pairs(y, qid, normalize="pair"):
    """Crucial pairs (same query, y[x1] > y[x0]) and their initial weights D(x0, x1)."""
    i0s, i1s, per_q = [], [], []
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        a, b = np.nonzero(y[rows][None, :] > y[rows][:, None])
        if a.size:
            i0s.append(rows[a])
            i1s.append(rows[b])
            per_q.append(a.size)
    i0, i1 = np.concatenate(i0s), np.concatenate(i1s)
    if normalize == "pair":
        w = np.full(i0.size, 1.0 / i0.size)
    else:
        w = np.concatenate([np.full(k, 1.0 / (len(per_q) * k)) for k in per_q])
    return i0, i1, w


def make_problem(kind, seed=0, **kw):
    """(X, feedback, (i0, i1, D)) for one of FEEDBACKS on LETOR-like data."""
    X, y, qid = letor_like(seed=seed, **kw)
    if kind == "pairs":
        rng = np.random.default_rng(seed)
        i0, i1, _ = graded_pairs(y, qid)
        keep = rng.random(i0.size) < 0.5
        i0, i1 = i0[keep], i1[keep]
        w = rng.uniform(0.2, 3.0, i0.size)
        fb = rb.PairFeedback(np.c_[i0, i1], w, n_samples=X.shape[0])
        return X, fb, (i0, i1, w / w.sum())
    if kind == "bipartite":
        yb = (y >= 1).astype(float)
        return X, rb.BipartiteFeedback(yb, qid, normalize="pair"), graded_pairs(yb, qid)
    normalize = kind.split("_")[1]
    fb = rb.LayeredFeedback(y, qid, normalize=normalize)
    return X, fb, graded_pairs(y, qid, normalize)


def pair_distribution(pairs, H):
    """D_t over the explicit pairs for scores H (normalised in log space)."""
    i0, i1, w = pairs
    logits = np.log(w) + H[i0] - H[i1]
    return np.exp(logits - logsumexp(logits))


def staged(model, X):
    """H_0 = 0, H_1, ..., H_T on the rows of X."""
    return [np.zeros(X.shape[0]), *model.staged_decision_function(X)]


# --------------------------------------------------------------------------- Knowl 2: bound


@pytest.mark.parametrize("kind", FEEDBACKS)
@pytest.mark.parametrize(("alpha", "weak_ranker"), RULES)
def test_rloss_below_bound_and_prod_z_identity(kind, alpha, weak_ranker):
    """rloss_D(H_t) <= prod_{s<=t} Z_s (ties as errors), and prod Z_s equals
    sum D exp(H_t(x0) - H_t(x1)) to 1e-9 relative, every round (SPEC 2)."""
    X, fb, pairs = make_problem(kind, seed=1)
    model = train_quiet(X, fb, 40, alpha=alpha, weak_ranker=weak_ranker)
    assert model.n_rounds == 40
    i0, i1, w = pairs
    hist = model.history
    np.testing.assert_allclose(hist["bound"], np.cumprod(hist["z"]), rtol=1e-12)
    for t, H in enumerate(staged(model, X)[1:]):
        rloss = float(np.sum(w * (H[i1] <= H[i0])))
        assert hist["rloss"][t] == pytest.approx(rloss, abs=1e-12)
        assert rloss <= hist["bound"][t]
        mass = float(np.sum(w * np.exp(H[i0] - H[i1])))
        assert hist["bound"][t] == pytest.approx(mass, rel=1e-9)
    assert hist["bound"][-1] < 0.9  # the run did learn something


def test_rloss_below_bound_many_rounds_letor_like():
    X, y, qid = letor_like(n_queries=60, n_features=8, seed=3)
    fb = rb.LayeredFeedback(y, qid)
    model = rb.train(X, fb, 400, thresholds=32)
    hist = model.history
    assert model.n_rounds == 400
    assert np.all(hist["rloss"] <= hist["bound"])
    assert np.all(np.diff(hist["bound"]) <= 0)
    assert np.all((hist["z"] > 0) & (hist["z"] <= 1 + 1e-12))
    # the recorded rloss is that of the model's own scores
    H = model.decision_function(X)
    assert hist["rloss"][-1] == pytest.approx(fb.rloss(H), abs=1e-12)


# --------------------------------------------------------------------------- Knowl 5: r


@pytest.mark.parametrize("kind", FEEDBACKS)
@pytest.mark.parametrize(("alpha", "weak_ranker"), [("r", "both"), ("exact", "threshold")])
def test_reported_r_is_pair_sum(kind, alpha, weak_ranker):
    """history r == sum D_t (h(x1) - h(x0)) from the pairs, and W_0, W_-, W_+ agree with
    r = W_- - W_+ for binary rankers."""
    X, fb, pairs = make_problem(kind, seed=2)
    model = train_quiet(X, fb, 25, alpha=alpha, weak_ranker=weak_ranker)
    i0, i1, _ = pairs
    for t, H in enumerate(staged(model, X)[:-1]):
        Dt = pair_distribution(pairs, H)
        h = model.rankers[t].predict(X)
        r = float(np.sum(Dt * (h[i1] - h[i0])))
        assert model.history["r"][t] == pytest.approx(r, abs=1e-12)
        if alpha == "exact":
            w_minus = Dt[h[i0] < h[i1]].sum()
            w_plus = Dt[h[i0] > h[i1]].sum()
            assert model.history["alpha"][t] == pytest.approx(
                0.5 * math.log(max(w_minus, 1e-10) / max(w_plus, 1e-10)), rel=1e-10, abs=1e-12
            )
            z = (
                Dt[h[i0] == h[i1]].sum()
                + w_minus * math.exp(-model.alphas[t])
                + w_plus * math.exp(model.alphas[t])
            )
            assert model.history["z"][t] == pytest.approx(z, rel=1e-10)


# --------------------------------------------------------------------------- Knowl 4: alphas


def test_alpha_exact_equals_alpha_r_without_ties_functions():
    """With W_0 = 0: r = W_- - W_+ and (1 + r)/(1 - r) = W_-/W_+ (SPEC 8)."""
    for w in np.linspace(0.01, 0.99, 37):
        assert alpha_exact(w, 1 - w) == pytest.approx(alpha_from_r(w - (1 - w)), rel=1e-12)


def complementary_problem(seed, n_base=12, d=3):
    """Rows come in complementary binary patterns and every crucial pair joins a row with
    its complement, so every threshold ranker splits every crucial pair: W_0 = 0."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2, size=(n_base, d)).astype(float)
    X = np.vstack([base, 1.0 - base])
    pairs = []
    for k in range(n_base):
        pairs.append((k, k + n_base) if rng.random() < 0.6 else (k + n_base, k))
    w = rng.uniform(0.2, 2.0, len(pairs))
    return X, rb.PairFeedback(pairs, w, n_samples=2 * n_base), (np.array(pairs), w / w.sum())


@pytest.mark.parametrize("seed", range(5))
def test_alpha_exact_equals_alpha_r_when_no_tied_pairs(seed):
    X, fb, (pairs, w) = complementary_problem(seed)
    m_r = train_quiet(X, fb, 15, alpha="r", thresholds="all")
    m_exact = train_quiet(X, fb, 15, alpha="exact", thresholds="all")
    assert m_r.n_rounds >= 2
    assert m_r.n_rounds == m_exact.n_rounds
    np.testing.assert_array_equal(m_r.history["feature"], m_exact.history["feature"])
    np.testing.assert_array_equal(m_r.history["threshold"], m_exact.history["threshold"])
    np.testing.assert_allclose(m_r.alphas, m_exact.alphas, rtol=1e-10, atol=1e-12)
    for t, H in enumerate(staged(m_r, X)[:-1]):
        h = m_r.rankers[t].predict(X)
        tied = pair_distribution((pairs[:, 0], pairs[:, 1], w), H)[h[pairs[:, 0]] == h[pairs[:, 1]]]
        assert tied.sum() == 0.0  # W_0 = 0 indeed


@pytest.mark.parametrize("kind", FEEDBACKS)
def test_line_search_equals_exact_on_binary_rankers(kind):
    """For h in {0, 1}, Z(alpha) = W_- e^-a + W_0 + W_+ e^a has its minimum at
    1/2 ln(W_-/W_+): line search must find it whenever W_-, W_+ > 1e-6."""
    X, fb, pairs = make_problem(kind, seed=4)
    m_ls = train_quiet(X, fb, 30, alpha="line_search")
    m_ex = train_quiet(X, fb, 30, alpha="exact")
    i0, i1, _ = pairs
    checked = 0
    same_path = True
    for t, H in enumerate(staged(m_ls, X)[:-1]):
        Dt = pair_distribution(pairs, H)
        h = m_ls.rankers[t].predict(X)
        w_minus = Dt[h[i0] < h[i1]].sum()
        w_plus = Dt[h[i0] > h[i1]].sum()
        if min(w_minus, w_plus) <= 1e-6:
            same_path = False
            continue
        checked += 1
        assert m_ls.alphas[t] == pytest.approx(0.5 * math.log(w_minus / w_plus), rel=1e-9)
        if same_path:
            assert m_ls.rankers[t] == m_ex.rankers[t]
            assert m_ls.alphas[t] == pytest.approx(m_ex.alphas[t], rel=1e-9)
    assert checked >= 20


def test_line_search_accurate_when_most_pairs_are_tied():
    """Non-regression of engine-tests.md bug #2 (fixed in 22a2f06).

    Pairs (1, 2) and (3, 2) are tied by [f > 0.5] and carry almost all the mass; the
    minimiser of Z is still exactly 1/2 ln(W_-/W_+) (computed by hand here)."""
    X = np.array([[0.0], [1.0], [1.0], [1.0]])
    w = [0.7783008342022799, 0.8509678590883607, 2.331298322064609e-09, 8.376640472073493e-09]
    fb = rb.PairFeedback([[1, 2], [3, 2], [0, 1], [1, 0]], weights=w, n_samples=4)
    model = rb.train(X, fb, 1, alpha="line_search", thresholds="all")
    expected = 0.5 * math.log(w[2] / w[3])  # W_- = D(0, 1), W_+ = D(1, 0)
    assert model.rankers[0] == rb.train(X, fb, 1, alpha="exact", thresholds="all").rankers[0]
    assert model.alphas[0] == pytest.approx(expected, rel=1e-10)


# --------------------------------------------------------------------------- Knowl 6: .cum


def non_monotone_problem(seed=0):
    """Relevance peaks in the middle of feature 0: unconstrained boosting learns a
    non-monotone H_0 (negative alphas), WeakLearn.cum must not."""
    rng = np.random.default_rng(seed)
    n = 400
    X = rng.normal(size=(n, 3))
    X[rng.random((n, 3)) < 0.1] = np.nan
    y = ((np.abs(np.nan_to_num(X[:, 0])) < 0.6) | (X[:, 1] > 1.0)).astype(float)
    qid = rng.integers(0, 8, n)
    return X, rb.BipartiteFeedback(y, qid)


def is_monotone(model, X):
    for i in range(model.n_features):
        _, values, _ = model.feature_function(i)
        if np.any(np.diff(values) < 0):
            return False
    # and on data: move one feature over the grid of its values, others fixed
    for i in range(model.n_features):
        grid = np.unique(X[:, i][~np.isnan(X[:, i])])
        for row in X[:5]:
            Z = np.repeat(row[None, :], grid.size, axis=0)
            Z[:, i] = grid
            if np.any(np.diff(model.decision_function(Z)) < 0):
                return False
    return True


@pytest.mark.parametrize(("alpha", "weak_ranker"), RULES)
def test_positive_cumulative_gives_monotone_h(alpha, weak_ranker):
    X, fb = non_monotone_problem()
    free = train_quiet(X, fb, 60, alpha=alpha, weak_ranker=weak_ranker)
    assert not is_monotone(free, X)  # the check can fail
    model = train_quiet(X, fb, 60, alpha=alpha, weak_ranker=weak_ranker, positive_cumulative=True)
    assert model.n_rounds > 5
    assert is_monotone(model, X)
    # every distinct weak ranker keeps a positive cumulative weight
    cum = {}
    for h, a in zip(model.rankers, model.alphas, strict=True):
        key = (h.kind, h.feature, h.threshold, h.default)
        cum[key] = cum.get(key, 0.0) + a
        assert cum[key] > 0


# --------------------------------------------------------------------------- invariances


def dense_rank(col):
    out = np.full(col.shape, np.nan)
    ok = ~np.isnan(col)
    out[ok] = np.unique(col[ok], return_inverse=True)[1].ravel()
    return out


TRANSFORMS = {
    "exp": np.exp,
    "cube": lambda x: x**3,
    "rank": dense_rank,
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
@pytest.mark.parametrize("thresholds", ["all", 16])
@pytest.mark.parametrize("weak_ranker", ["threshold", "both"])
def test_invariant_to_increasing_transforms(name, thresholds, weak_ranker):
    X, y, qid = letor_like(n_queries=25, seed=5)
    X = np.round(np.log(np.abs(X) + 0.1), 2)  # moderate range: exp and cube stay injective
    g = TRANSFORMS[name]
    Xg = np.column_stack([g(X[:, i]) for i in range(X.shape[1])])
    fb = rb.LayeredFeedback(y, qid)
    kw = {"thresholds": thresholds, "weak_ranker": weak_ranker}
    m = train_quiet(X, fb, 40, **kw)
    mg = train_quiet(Xg, fb, 40, **kw)
    assert m.n_rounds == mg.n_rounds == 40
    for key in ("feature", "default", "alpha", "r", "z", "rloss"):
        np.testing.assert_array_equal(m.history[key], mg.history[key], err_msg=key)
    for h, hg in zip(m.rankers, mg.rankers, strict=True):
        assert h.kind == hg.kind
        if h.kind == "threshold":
            if np.isinf(h.threshold):
                assert hg.threshold == -np.inf
            else:  # the same training value, seen through g
                # seen as float32 (issue 22: thresholds are float32 training values)
                col = np.flatnonzero(X[:, h.feature].astype(np.float32) == h.threshold)[0]
                assert hg.threshold == float(np.float32(Xg[col, h.feature]))
    np.testing.assert_array_equal(m.decision_function(X), mg.decision_function(Xg))


@pytest.mark.parametrize("kind", FEEDBACKS)
def test_invariant_to_row_order(kind):
    X, fb, pairs = make_problem(kind, seed=6)
    perm = np.random.default_rng(6).permutation(X.shape[0])
    inv = np.argsort(perm)  # new row k is old row perm[k]; old row j is new row inv[j]
    if kind == "pairs":
        i0, i1, w = pairs
        order = np.random.default_rng(7).permutation(i0.size)
        fb_p = rb.PairFeedback(
            np.c_[inv[i0[order]], inv[i1[order]]], fb.weights[order], n_samples=X.shape[0]
        )
    else:
        cls = type(fb)
        fb_p = cls(fb.y[perm], np.asarray(fb.qid)[perm], normalize=fb.normalize)
    m = train_quiet(X, fb, 40, alpha="r", weak_ranker="both")
    mp = train_quiet(X[perm], fb_p, 40, alpha="r", weak_ranker="both")
    assert m.n_rounds == mp.n_rounds == 40
    for h, hp in zip(m.rankers, mp.rankers, strict=True):
        assert (h.kind, h.feature, h.default) == (hp.kind, hp.feature, hp.default)
        assert h.threshold == hp.threshold or (np.isnan(h.threshold) and np.isnan(hp.threshold))
    for key in ("alpha", "r", "z", "bound", "rloss"):
        np.testing.assert_allclose(m.history[key], mp.history[key], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        m.decision_function(X)[perm], mp.decision_function(X[perm]), rtol=1e-10, atol=1e-10
    )


DETERMINISM_SCRIPT = """
import json, sys
import numpy as np
sys.path.insert(0, {tests!r})
from conftest import letor_like
import numba, rankboost as rb
X, y, qid = letor_like(n_queries=80, n_features=20, docs_per_query=(20, 60), seed=8)
m = rb.train(X, rb.LayeredFeedback(y, qid), 30, weak_ranker="both")
print(numba.get_num_threads())
print(json.dumps(m.to_dict()))
"""


def test_same_model_bit_for_bit_with_1_and_2_threads(tmp_path):
    """Subprocesses with NUMBA_NUM_THREADS=1 and 2 give the same JSON model."""
    tests = str(Path(__file__).resolve().parent)
    src = str(Path(__file__).resolve().parents[1] / "src")
    outs = {}
    for n in (1, 2):
        env = {**os.environ, "NUMBA_NUM_THREADS": str(n)}
        env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
        proc = subprocess.run(
            [sys.executable, "-c", DETERMINISM_SCRIPT.format(tests=tests)],
            capture_output=True, text=True, env=env, check=True, timeout=300,
        )  # fmt: skip
        threads, model = proc.stdout.strip().splitlines()
        assert int(threads) == n
        outs[n] = json.loads(model)
    assert outs[1]["rounds"]
    assert outs[1] == outs[2]


# --------------------------------------------------------------------------- q_def (Knowl 5)


@pytest.mark.parametrize("kind", ["bipartite", "pairs", "layered"])
def test_best_ranker_needs_default_one(kind):
    """Relevant rows abstain on feature 0 (NaN) or have high values; irrelevant rows have
    low values. [f_0 > 1] with q_def = 1 orders every (irrelevant, relevant) pair; with
    q_def = 0 it misorders the NaN ones."""
    rng = np.random.default_rng(9)
    n = 60
    rel = np.arange(n) % 3 == 0
    f0 = np.where(rel, 2.0, rng.choice([0.0, 1.0], n))
    f0[rel & (rng.random(n) < 0.6)] = np.nan
    f1 = rng.normal(size=n)  # noise
    X = np.column_stack([f0, f1])
    y = rel.astype(float)
    if kind == "layered":
        # grades 0 < 1 < 2 < 3: relevant rows take 2 and 3 (their mutual pairs stay tied),
        # irrelevant ones 0 and 1 (f_0 in {0, 1} orders those pairs at random)
        y = 2.0 * rel + (np.arange(n) % 2)
        model = train_quiet(X, rb.LayeredFeedback(y), 5, thresholds="all")
    else:
        if kind == "bipartite":
            fb = rb.BipartiteFeedback(y)
        else:
            i0, i1, _ = graded_pairs(y, np.zeros(n))
            fb = rb.PairFeedback(np.c_[i0, i1], n_samples=n)
        with pytest.warns(rb.TrainingStoppedWarning, match="orders every crucial pair"):
            model = rb.train(X, fb, 5, thresholds="all")
        assert model.history["r"][0] == pytest.approx(1.0, abs=1e-12)
    h = model.rankers[0]
    assert (h.feature, h.threshold, h.default) == (0, 1.0, 1.0)
    scores = model.decision_function(X)
    assert np.all(scores[rel] > scores[~rel].max())  # the NaN rows included


def test_default_one_chosen_when_not_perfect():
    """Same idea with label noise: the best ranker still needs q_def = 1."""
    rng = np.random.default_rng(10)
    n = 300
    rel = rng.random(n) < 0.3
    f0 = np.where(rel, rng.uniform(0.5, 1.0, n), rng.uniform(0.0, 0.6, n))
    f0[rel & (rng.random(n) < 0.5)] = np.nan
    f0[~rel & (rng.random(n) < 0.05)] = np.nan
    X = np.column_stack([rng.normal(size=n), f0])
    model = train_quiet(X, rb.BipartiteFeedback(rel.astype(float)), 3, thresholds="all")
    h = model.rankers[0]
    assert h.feature == 1
    assert h.default == 1.0
    # and it is the arg max of |r| over every candidate, q_def = 0 included
    D = ref.layered_matrix(rel.astype(float))
    best = max(
        (abs(ref.r_from_pairs(D, c.predict(X))), c.key())
        for c in ref.candidates(X, np.arange(n), "threshold")
    )
    assert best[1] == h.key()
    assert best[0] == pytest.approx(abs(model.history["r"][0]), abs=1e-12)


# --------------------------------------------------------------------------- stopping


@pytest.mark.parametrize("alpha", ["r", "exact", "line_search"])
def test_perfect_weak_ranker_stops_cleanly(alpha):
    rng = np.random.default_rng(11)
    n = 50
    y = (np.arange(n) % 4 == 0).astype(float)
    X = np.column_stack([rng.normal(size=n), y * 3 + rng.uniform(0, 1, n)])
    with pytest.warns(rb.TrainingStoppedWarning, match=r"after 1 rounds.*\|r\| = 1"):
        model = rb.train(X, rb.BipartiteFeedback(y), 50, alpha=alpha)
    assert model.n_rounds == 1
    assert "orders every crucial pair correctly" in model.stop_reason
    hist = model.history
    for key in ("alpha", "r", "z", "rloss", "bound"):
        assert np.all(np.isfinite(hist[key])), key
    assert 0 < hist["alpha"][0] <= MAX_ALPHA
    assert 0 < hist["z"][0] < 1e-4
    assert hist["rloss"][0] == 0.0 <= hist["bound"][0]
    scores = model.decision_function(X)
    assert np.all(np.isfinite(scores))
    assert scores[y == 1].min() > scores[y == 0].max()


def test_no_ranker_better_than_chance_stops():
    X = np.column_stack([np.full(20, 3.0), np.zeros(20)])
    y = np.arange(20) % 2
    with pytest.warns(rb.TrainingStoppedWarning, match=r"after 0 rounds: no weak ranker"):
        model = rb.train(X, rb.BipartiteFeedback(y), 10)
    assert model.n_rounds == 0
    assert "better than chance" in model.stop_reason
    np.testing.assert_array_equal(model.decision_function(X), np.zeros(20))


def test_symmetric_pairs_give_r_zero_and_stop():
    """pairs (0, 1) and (1, 0) with equal weight: pi = 0, every r = 0."""
    X = np.array([[0.0, 5.0], [1.0, np.nan], [2.0, 1.0]])
    fb = rb.PairFeedback([[0, 1], [1, 0], [2, 0], [0, 2]], n_samples=3)
    with pytest.warns(rb.TrainingStoppedWarning, match="no weak ranker"):
        model = rb.train(X, fb, 10, thresholds="all")
    assert model.n_rounds == 0


def test_constant_and_all_nan_features_never_chosen():
    X, y, qid = letor_like(n_queries=20, n_features=4, seed=12)
    X = np.column_stack([np.full(len(y), np.nan), X[:, :2], np.full(len(y), 1.5), X[:, 2:]])
    model = train_quiet(X, rb.LayeredFeedback(y, qid), 60, weak_ranker="both")
    assert model.n_rounds == 60
    assert not np.isin(model.history["feature"], [0, 3]).any()
    assert model.feature_importances_[[0, 3]].tolist() == [0.0, 0.0]


def test_all_features_nan_on_support_stops_cleanly():
    X = np.array([[np.nan], [np.nan], [1.0]])  # only a non-support row has a value
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = rb.train(X, rb.PairFeedback([[0, 1]], n_samples=3), 5)
    assert model.n_rounds == 0
    assert "no weak ranker" in model.stop_reason
    assert any(issubclass(w.category, rb.TrainingStoppedWarning) for w in caught)


# --------------------------------------------------------------------------- long runs


def load_letor_train():
    try:
        from rankboost.datasets import load_mq2008
    except ImportError:
        load_mq2008 = None
    if load_mq2008 is not None:
        train = load_mq2008(1)[0]
        return train.X, train.y, train.qid
    if not MQ2008_FOLD1_TRAIN.is_file():
        pytest.skip("MQ2008 not bundled and ../shared/data absent")
    from sklearn.datasets import load_svmlight_file

    X, y, qid = load_svmlight_file(str(MQ2008_FOLD1_TRAIN), query_id=True)
    return X.toarray(), y, qid


@pytest.mark.slow
@pytest.mark.parametrize(
    ("n_queries", "thresholds"), [(60, 32), (None, 255)], ids=["60_queries", "whole_fold"]
)
def test_ten_thousand_rounds_on_mq2008_stay_finite(n_queries, thresholds):
    """10,000 rounds on MQ2008 fold 1 train (the first ``n_queries`` queries, or all 471
    with the default 255 bins): no overflow, NaN or negative weight. The whole fold takes
    about 15 s here."""
    X, y, qid = load_letor_train()
    if n_queries is not None:
        keep = np.isin(qid, np.unique(qid)[:n_queries])
        X, y, qid = X[keep], y[keep], qid[keep]
    fb = rb.LayeredFeedback(y, qid)
    model = train_quiet(X, fb, 10_000, thresholds=thresholds)
    hist = model.history
    assert model.n_rounds == 10_000, model.stop_reason
    for key in ("alpha", "r", "z", "rloss", "bound"):
        assert np.all(np.isfinite(hist[key])), key
    assert np.all((hist["z"] > 0) & (hist["z"] <= 1 + 1e-12))
    assert np.all(np.abs(hist["alpha"]) <= MAX_ALPHA)
    assert np.all(hist["rloss"] <= hist["bound"])
    # the final distribution: rebuild the engine's state at H_T (the one internal access)
    H = model.decision_function(X)
    assert np.all(np.isfinite(H))
    state = fb._make_state()
    state.H[:] = H[state.rows]
    step(state, np.zeros(state.n), 0.0)
    pi = state.potential()
    assert np.all(np.isfinite(pi))
    assert abs(pi.sum()) < 1e-9
    assert np.abs(pi).max() <= 1.0
    assert hist["rloss"][-1] == pytest.approx(fb.rloss(H), abs=1e-12)
