"""Tie policies of rankboost.metrics against brute force and Monte Carlo (SPEC section 6).

Oracles:
* brute force: for one query of at most 6 rows, every permutation of the rows is fed to a
  pure-Python evaluation of the sorted list (ties broken by the permuted input order). Each
  tie order arises equally often, so the average over all n! permutations is the exact
  expectation under uniformly random tie-breaking; the min/max over them are the
  pessimistic/optimistic values.
* Monte Carlo: on larger tied cases, the mean of ``ties="stable"`` over seeded random row
  permutations must lie within 4 standard errors of ``ties="expected"``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankboost import metrics as M

# ---------------------------------------------------------------------------------------------
# pure-Python reference on one ranked list (labels in rank order)
# ---------------------------------------------------------------------------------------------


def ref_dcg(ranked, k, gain="exp2"):
    g = (lambda v: 2.0**v - 1.0) if gain == "exp2" else float
    return sum(g(v) / math.log2(i + 2) for i, v in enumerate(ranked[:k]))


def ref_ndcg(ranked, k, gain="exp2"):
    best = ref_dcg(sorted(ranked, reverse=True), k, gain)
    return ref_dcg(ranked, k, gain) / best if best > 0 else 0.0


def ref_precision(ranked, k):
    return sum(v >= 1 for v in ranked[:k]) / k


def ref_ap(ranked):
    hits, total = 0, 0.0
    for i, v in enumerate(ranked):
        if v >= 1:
            hits += 1
            total += hits / (i + 1)
    return total / hits if hits else 0.0


def ref_rr(ranked):
    return next((1.0 / (i + 1) for i, v in enumerate(ranked) if v >= 1), 0.0)


def ref_coverage(ranked):
    pos = [i + 1 for i, v in enumerate(ranked) if v >= 1]
    return len(pos) / pos[-1] if pos else 0.0


def ref_first_rank(ranked, cap=31):
    return min(next((i + 1 for i, v in enumerate(ranked) if v >= 1), cap), cap)


def ref_disagreement(ranked):
    bad = pairs = 0
    for i, j in itertools.combinations(range(len(ranked)), 2):
        if ranked[i] != ranked[j]:
            pairs += 1
            bad += ranked[i] < ranked[j]
    return bad / pairs if pairs else None


# name -> (our call with a tie policy, reference on a ranked list, higher is better)
CASES = {
    "ndcg@3": (lambda y, s, t: M.ndcg_score(y, s, k=3, ties=t), lambda r: ref_ndcg(r, 3), True),
    "ndcg_lin": (
        lambda y, s, t: M.ndcg_score(y, s, k=None, ties=t, gain="linear"),
        lambda r: ref_ndcg(r, len(r), "linear"),
        True,
    ),
    "dcg@2": (lambda y, s, t: M.dcg_score(y, s, k=2, ties=t), lambda r: ref_dcg(r, 2), True),
    "p@2": (
        lambda y, s, t: M.precision_at_k(y, s, k=2, ties=t),
        lambda r: ref_precision(r, 2),
        True,
    ),
    "ap": (lambda y, s, t: M.average_precision(y, s, ties=t), ref_ap, True),
    "rr": (lambda y, s, t: M.reciprocal_rank(y, s, ties=t), ref_rr, True),
    "expected_ap": (lambda y, s, t: M.expected_average_precision(y, s, ties=t), ref_ap, True),
    "prot": (lambda y, s, t: M.expected_prot(y, s, ties=t), ref_rr, True),
    "coverage": (lambda y, s, t: M.expected_coverage(y, s, ties=t), ref_coverage, True),
    "average_rank": (
        lambda y, s, t: M.average_rank(y, s, cap=4, ties=t),
        lambda r: ref_first_rank(r, cap=4),
        False,
    ),
    "top2": (
        lambda y, s, t: M.topk_counts(y, s, ks=(2,), ties=t)[2],
        lambda r: float(ref_first_rank(r) <= 2),
        True,
    ),
    "disagreement": (lambda y, s, t: M.disagreement(y, s, ties=t), ref_disagreement, False),
}


def brute_force(ref, y, s):
    values = []
    for perm in itertools.permutations(range(len(y))):
        rank_of = {row: pos for pos, row in enumerate(perm)}
        order = sorted(range(len(y)), key=lambda r: (-s[r], rank_of[r]))
        values.append(ref([y[r] for r in order]))
    return values


def check_against_brute_force(y, s):
    for name, (ours, ref, higher) in CASES.items():
        values = brute_force(ref, y, s)
        if values[0] is None:  # no crucial pair: disagreement is 0.0 by convention
            assert ours(y, s, "expected") == 0.0, name
            continue
        mean = sum(values) / len(values)
        worst, best = (min(values), max(values)) if higher else (max(values), min(values))
        assert ours(y, s, "expected") == pytest.approx(mean, rel=1e-12, abs=1e-12), name
        assert ours(y, s, "pessimistic") == pytest.approx(worst, rel=1e-12, abs=1e-12), name
        assert ours(y, s, "optimistic") == pytest.approx(best, rel=1e-12, abs=1e-12), name
        # "stable" = the identity permutation (input order inside tie blocks)
        assert ours(y, s, "stable") == pytest.approx(values[0], rel=1e-12, abs=1e-12), name


@pytest.mark.parametrize(
    ("y", "s"),
    [
        ([1, 0, 1, 0, 2, 0], [1, 1, 1, 1, 1, 1]),  # one block holding everything
        ([0, 1, 0, 1, 0, 0], [3, 2, 2, 2, 1, 1]),
        ([2, 0, 1, 0, 0, 1], [5, 5, 4, 3, 3, 3]),
        ([1, 1, 1, 0, 0], [0, 0, 1, 1, 2]),
        ([0], [0.5]),
        ([1], [0.5]),
    ],
)
def test_expected_equals_brute_force_on_fixed_cases(y, s):
    check_against_brute_force(y, s)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=6))
def test_expected_equals_brute_force_property(rows):
    y = [float(a) for a, _ in rows]
    s = [float(b) for _, b in rows]
    check_against_brute_force(y, s)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_no_ties_every_policy_equals_the_plain_metric(data):
    n = data.draw(st.integers(1, 12))
    y = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    s = data.draw(st.permutations(list(range(n))))
    ranked = [y[r] for r in sorted(range(n), key=lambda r: -s[r])]
    for name, (ours, ref, _) in CASES.items():
        want = ref(ranked)
        if want is None:
            want = 0.0
        for ties in ("expected", "pessimistic", "optimistic", "stable"):
            assert ours(y, s, ties) == pytest.approx(want, rel=1e-12, abs=1e-12), (name, ties)


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_pessimistic_le_expected_le_optimistic(data):
    n = data.draw(st.integers(2, 40))
    n_queries = data.draw(st.integers(1, 4))
    y = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=float)
    s = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=float)
    qid = np.array(data.draw(st.lists(st.integers(0, n_queries - 1), min_size=n, max_size=n)))
    funcs = {
        "ndcg": lambda t: M.ndcg_score(y, s, qid, k=5, ties=t),
        "p@3": lambda t: M.precision_at_k(y, s, qid, k=3, ties=t),
        "map": lambda t: M.mean_average_precision(y, s, qid, ties=t),
        "mrr": lambda t: M.reciprocal_rank(y, s, qid, ties=t),
        "coverage": lambda t: M.expected_coverage(y, s, qid, ties=t),
        "-average_rank": lambda t: -M.average_rank(y, s, qid, ties=t),
        "-disagreement": lambda t: -M.disagreement(y, s, qid, ties=t),
    }
    for name, f in funcs.items():
        lo, mid, hi = f("pessimistic"), f("expected"), f("optimistic")
        assert lo <= mid + 1e-12, name
        assert mid <= hi + 1e-12, name


def test_expected_matches_monte_carlo_on_larger_tied_queries():
    """Seeded Monte Carlo: random row order + ties="stable" samples a random tie-break."""
    rng = np.random.default_rng(12345)
    n = 150
    qid = rng.integers(0, 3, n)
    y = rng.integers(0, 3, n).astype(float)
    s = rng.integers(0, 5, n).astype(float)  # about 10 tied rows per (query, score) block
    funcs = {
        "ndcg@10": lambda a, b, c, t: M.ndcg_score(a, b, c, k=10, ties=t),
        "p@5": lambda a, b, c, t: M.precision_at_k(a, b, c, k=5, ties=t),
        "map": lambda a, b, c, t: M.mean_average_precision(a, b, c, ties=t, relevance_threshold=2),
        "mrr": lambda a, b, c, t: M.reciprocal_rank(a, b, c, ties=t, relevance_threshold=2),
        "coverage": lambda a, b, c, t: M.expected_coverage(a, b, c, ties=t),
        "average_rank": lambda a, b, c, t: M.average_rank(
            a, b, c, ties=t, relevance_threshold=2, cap=8
        ),
        "disagreement": lambda a, b, c, t: M.disagreement(a, b, c, ties=t),
    }
    n_draws = 1500
    samples = {name: np.empty(n_draws) for name in funcs}
    for d in range(n_draws):
        perm = rng.permutation(n)
        for name, f in funcs.items():
            samples[name][d] = f(y[perm], s[perm], qid[perm], "stable")
    for name, f in funcs.items():
        exact = f(y, s, qid, "expected")
        se = samples[name].std(ddof=1) / math.sqrt(n_draws)
        assert se > 0, name  # the case really has ties that matter
        assert abs(samples[name].mean() - exact) <= 4 * se, (name, exact, samples[name].mean())


def test_large_tie_block_against_exact_rational_negative_hypergeometric():
    """One block of N=300 rows with K=23 good, after 5 strictly higher rows (2 good).

    Exact oracle with Python integers and fractions (math.comb, paper Appendix A):
    Pr[rank(t_k) = i] = C(i-R-1, k-r-1) C(Q-i+R, q-k+r) / C(Q, q), here R=5, r=2, Q=300,
    q=23, K=25. Checks that the lgamma-based kernel keeps ~1e-12 accuracy on big blocks.
    """
    from fractions import Fraction

    big_r, small_r, big_q, small_q = 5, 2, 300, 23
    n_good = small_r + small_q
    y = np.r_[[1, 0, 1, 0, 0], np.ones(small_q), np.zeros(big_q - small_q)]
    s = np.r_[[9, 8, 7, 6, 5], np.zeros(big_q)]
    total = math.comb(big_q, small_q)

    def pr(k, i):
        return Fraction(
            math.comb(i - big_r - 1, k - small_r - 1)
            * math.comb(big_q - i + big_r, small_q - k + small_r),
            total,
        )

    ranks = range(big_r + 1, big_r + big_q + 1)
    ap = Fraction(1, 1) / 1 + Fraction(2, 3)  # t_1 at rank 1, t_2 at rank 3
    for k in range(small_r + 1, n_good + 1):
        ap += sum(k * pr(k, i) / i for i in ranks)
    ap /= n_good
    coverage = sum(n_good * pr(n_good, i) / i for i in ranks)
    assert M.average_precision(y, s) == pytest.approx(float(ap), rel=1e-12)
    assert M.expected_coverage(y, s) == pytest.approx(float(coverage), rel=1e-12)
    assert M.expected_prot(y, s) == 1.0
