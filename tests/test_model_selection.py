"""The model-selection floor (issue 45): folds, held-out curves, rules, grids, seed streams.

The references below are the selection code of the wings before the floor existed
(``fusion/cv.py``, ``fusion/prior.py``, ``fusion/_select.py``, ``recommend/_rounds.py``),
copied as they were: the floor must give their folds, curves and choices.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankboost as rb
from rankboost.engine import TrainingStoppedWarning
from rankboost.metrics import ndcg_score
from rankboost.model_selection import (
    SEED_PURPOSES,
    cross_fitted_choice,
    cross_validate,
    first_best,
    first_best_grid,
    group_folds,
    held_out_curve,
    query_folds,
    round_curves,
    seed_stream,
    staged_scores,
    standard_error_rule,
)


# ------------------------------------------------------------------ references ----------
def _query_folds_reference(y, qcode, k, seed=0):
    """fusion/cv.py's query_folds as it was."""
    n_q = int(qcode.max()) + 1
    first = np.full(n_q, qcode.shape[0], dtype=np.int64)
    np.minimum.at(first, qcode, np.arange(qcode.shape[0]))
    lo = np.full(n_q, np.iinfo(np.int64).max)
    hi = np.full(n_q, np.iinfo(np.int64).min)
    np.minimum.at(lo, qcode, y)
    np.maximum.at(hi, qcode, y)
    order = np.argsort(first, kind="stable")
    usable = order[(lo < hi)[order]]
    perm = np.random.default_rng(seed).permutation(usable.shape[0])
    fold_q = np.full(n_q, -1, dtype=np.int64)
    fold_q[usable[perm]] = np.arange(usable.shape[0]) % k
    return fold_q[qcode]


def _inner_groups_reference(qid, k, rng):
    """recommend/_rounds.py's _inner_groups as it was."""
    users = np.unique(qid)
    group = rng.permutation(users.shape[0]) % k
    g_of = np.zeros(int(users.max()) + 1, dtype=np.int64)
    g_of[users] = group
    return g_of[qid]


def _problem(seed, n_q=12, per=7):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_q), per)
    y = rng.integers(0, 3, n_q * per)
    X = np.column_stack([y + rng.normal(size=y.shape[0]), rng.normal(size=y.shape[0])])
    return X, y, qid


# ------------------------------------------------------------------ folds ---------------
@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 4))
def test_query_folds_are_the_fusion_folds(seed, k):
    rng = np.random.default_rng(seed)
    qcode = rng.permutation(np.repeat(np.arange(9), 3))
    y = rng.integers(0, 2, qcode.shape[0])
    usable = sum(len(set(y[qcode == q])) > 1 for q in range(9))
    if usable < k:
        with pytest.raises(ValueError, match="needs at least"):
            query_folds(y, qcode, k, seed=seed)
        return
    np.testing.assert_array_equal(
        query_folds(y, qcode, k, seed=seed), _query_folds_reference(y, qcode, k, seed)
    )


def test_query_folds_refuses_a_bad_fold_count():
    with pytest.raises(ValueError, match="cv_folds must be an int >= 2"):
        query_folds(np.array([0, 1]), np.array([0, 0]), 1)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 4))
def test_group_folds_are_the_recommender_folds(seed, k):
    users = np.sort(np.random.default_rng(seed).integers(0, 30, 40))
    a = group_folds(users, k, np.random.default_rng([seed, 1]))
    b = _inner_groups_reference(users, k, np.random.default_rng([seed, 1]))
    np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------ curves --------------
@pytest.mark.parametrize("with_prior", [False, True])
def test_curves_are_ndcg_score_round_by_round(with_prior):
    """Each round's held-out NDCG@10 is rankboost.metrics.ndcg_score's (1e-12)."""
    X, y, qid = _problem(0)
    rng = np.random.default_rng(1)
    order = rng.permutation(y.shape[0])  # queries in any row order
    X, y, qid = X[order], y[order], qid[order]
    train = qid % 3 != 0
    prior = rng.normal(size=y.shape[0]) if with_prior else None
    model = rb.train(
        X[train],
        rb.LayeredFeedback(y[train], qid[train]),
        n_rounds=15,
        init_score=None if prior is None else prior[train],
    )
    va = ~train
    start = 0 if with_prior else 1
    HT = staged_scores(model, X[va], 15, base=None if prior is None else prior[va], start=start)
    assert HT.shape == (16 - start, int(va.sum()))
    got = round_curves(HT, y[va], qid[va])
    base = np.zeros(int(va.sum())) if prior is None else prior[va]
    want = [ndcg_score(y[va], base, qid[va], k=10, per_query=True)] if with_prior else []
    want += [
        ndcg_score(y[va], base + h, qid[va], k=10, per_query=True)
        for h in model.staged_decision_function(X[va])
    ]
    np.testing.assert_allclose(got, np.array(want).T, rtol=0, atol=1e-12)


def test_a_model_that_stopped_early_keeps_its_last_scores():
    X = np.arange(8, dtype=np.float64)[:, None]
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        model = rb.train(X, rb.BipartiteFeedback(y), n_rounds=10)
    assert 0 < model.n_rounds < 10
    HT = staged_scores(model, X, 10)
    last = model.decision_function(X)
    for row in HT[model.n_rounds - 1 :]:
        np.testing.assert_array_equal(row, last)
    HT0 = staged_scores(model, X, 10, base=np.ones(8), start=0)
    np.testing.assert_array_equal(HT0[0], np.ones(8))
    np.testing.assert_array_equal(HT0[-1], 1.0 + last)


def test_cross_validate_leaves_an_unusable_fold_out():
    fold = np.array([0, 0, 1, 1, 2, 2])

    def curve(train, valid, scale):
        if valid[2]:
            return None  # fold 1 cannot be used
        return np.array([scale, scale + 1.0])

    per_fold = cross_validate(fold, 3, (0.0, 2.0), curve)
    assert per_fold.shape == (3, 2, 2)
    assert np.isnan(per_fold[1]).all()
    mean = np.nanmean(per_fold, axis=0)
    np.testing.assert_array_equal(mean, [[0.0, 1.0], [2.0, 3.0]])
    assert first_best_grid(mean) == (1, 1)


# ------------------------------------------------------------------ rules ---------------
def test_first_best_takes_the_first_of_equal_values():
    assert first_best(np.array([0.1, 0.4, 0.4, np.nan])) == 1
    assert first_best_grid(np.array([[0.4, 0.4], [0.1, 0.4]])) == (0, 0)


def _read_curves_reference(curves, configs, per_q):
    """fusion/_select.py's read_curves as it was."""
    M = np.array([P.mean(axis=1) for _, P in curves])
    for f, (qs_f, P) in enumerate(curves):
        k = int(np.argmax(np.delete(M, f, axis=0).mean(axis=0)))
        per_q.update(zip(qs_f, P[k].tolist(), strict=True))
    k = int(np.argmax(M.mean(axis=0)))
    return configs[k]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_cross_fitted_choice_is_the_family_choice_of_auto_fusion(seed):
    rng = np.random.default_rng(seed)
    configs = [(c, t) for c in (0.0, 1.0) for t in range(4)]
    curves = [
        ([f"q{f}_{j}" for j in range(5)], np.round(rng.random((len(configs), 5)), 1))
        for f in range(3)
    ]
    want_q: dict[str, float] = {}
    want = _read_curves_reference(curves, configs, want_q)
    got_q, k = cross_fitted_choice(curves)
    assert got_q == want_q
    assert configs[k] == want


def test_standard_error_rule_needs_more_than_threshold_standard_errors():
    per_q = {
        "convex": {"a": 0.5, "b": 0.6, "c": 0.7},
        "linear": {"a": 0.6, "b": 0.7, "c": 0.8},
        "rrf": {"a": 0.9, "b": 0.1, "c": 0.9},
    }
    table, chosen = standard_error_rule(per_q, ["convex", "linear", "rrf"], "convex", 2.0)
    assert chosen == "linear"  # +0.1 on every query: SE 0
    assert table["linear"]["diff"] == pytest.approx(0.1)
    assert table["rrf"]["se"] > 0
    _, chosen = standard_error_rule(per_q, ["convex", "rrf"], "convex", 2.0)
    assert chosen == "convex"  # rrf wins on the mean, within noise


# ------------------------------------------------------------------ seeds ---------------
def test_every_purpose_has_its_own_stream():
    words = [w for w in SEED_PURPOSES.values() if w is not None]
    assert len(words) == len(set(words))
    np.testing.assert_array_equal(
        seed_stream(3, "rating_folds").random(4), np.random.default_rng([3, 2]).random(4)
    )
    np.testing.assert_array_equal(
        seed_stream(3, "negatives").random(4), np.random.default_rng(3).random(4)
    )
    with pytest.raises(ValueError, match="purpose must be one of"):
        seed_stream(0, "folds")


# ------------------------------------------------------------------ the last bit --------
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 100_000), st.sampled_from([1, 3, 10, 40]))
def test_curves_are_ndcg_score_to_the_last_bit(seed, k):
    """The round kernel sums as ndcg_score (its discount table, its tie-block sums), so a
    choice among curves never differs from one among ndcg_score calls (issue 45: the fusion
    wing's pins are byte-identical); held_out_curve averages as ndcg_score averages."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 30, rng.integers(1, 12))
    qid = rng.permutation(np.repeat(np.arange(sizes.shape[0]), sizes))
    y = rng.integers(0, 4, qid.shape[0])
    HT = np.round(rng.normal(size=(5, qid.shape[0])), int(rng.integers(0, 3)))  # ties
    per_query = round_curves(HT, y, qid, k)
    mean = held_out_curve(HT, y, qid, k)
    for t in range(HT.shape[0]):
        np.testing.assert_array_equal(
            per_query[:, t], ndcg_score(y, HT[t], qid, k=k, per_query=True)
        )
        assert mean[t] == ndcg_score(y, HT[t], qid, k=k)
