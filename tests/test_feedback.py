"""Feedback objects: crucial pairs, initial distribution D, potentials (SPEC 1, 3; Knowl 8).

The engine never enumerates layered pairs; these tests compare its statistics (through the
internal ``_make_state()``: potential, Z for a candidate, binary statistics) with the dense
pair matrix of ``tests/reference.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankboost as rb
import reference as ref
from conftest import step


def random_graded(seed, n=30, grades=4, queries=(5, 1, 9)):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, grades, n).astype(float)
    qid = rng.choice(queries, n)
    return y, qid


# --------------------------------------------------------------------------- counts


def test_layered_counts_pairs_per_query():
    y = [0, 1, 2, 0, 0, 3, 3, 1]
    qid = ["b", "b", "b", "a", "a", "c", "c", "c"]
    fb = rb.LayeredFeedback(y, qid)
    # query a: one grade -> no pair; b: 3 pairs; c: (1 < 3) twice
    assert fb.n_pairs == 5
    assert fb.n_queries == 3
    assert fb.n_queries_with_pairs == 2
    pairs, _ = ref.layered_pairs(y, qid)
    assert len(pairs) == fb.n_pairs


@pytest.mark.parametrize("seed", range(4))
def test_layered_pair_count_matches_enumeration(seed):
    y, qid = random_graded(seed)
    fb = rb.LayeredFeedback(y, qid)
    pairs, _ = ref.layered_pairs(y, qid)
    assert fb.n_pairs == len(pairs)
    assert fb.pairs_per_query.sum() == len(pairs)


def test_bipartite_is_layered_with_two_grades():
    y, qid = random_graded(3, grades=2)
    a = rb.BipartiteFeedback(y, qid)
    b = rb.LayeredFeedback(y, qid)
    assert a.n_pairs == b.n_pairs
    sa, sb = a._make_state(), b._make_state()
    np.testing.assert_array_equal(sa.potential(), sb.potential())


def test_bipartite_rejects_graded_labels():
    with pytest.raises(ValueError, match=r"y must contain only 0 and 1 for BipartiteFeedback"):
        rb.BipartiteFeedback([0, 1, 2])


def test_pair_feedback_duplicates_add():
    a = rb.PairFeedback([[0, 1], [0, 1], [2, 1]], n_samples=3)
    b = rb.PairFeedback([[0, 1], [2, 1]], weights=[2.0, 1.0], n_samples=3)
    np.testing.assert_allclose(a._make_state().potential(), b._make_state().potential())
    assert a.n_pairs == 3
    assert a.rloss([0.0, 1.0, 5.0]) == pytest.approx(1 / 3)
    assert b.rloss([0.0, 1.0, 5.0]) == pytest.approx(1 / 3)


def test_pair_feedback_n_samples_default():
    fb = rb.PairFeedback([[3, 1]])
    assert fb.n_samples == 4
    assert fb._make_state().rows.tolist() == [1, 3]


# --------------------------------------------------------------------------- D_1 and pi


def potential_on_all_rows(fb, n):
    state = fb._make_state()
    pi = np.zeros(n)
    pi[state.rows] = state.potential()
    return pi


@pytest.mark.parametrize("normalize", ["pair", "query"])
@pytest.mark.parametrize("seed", range(4))
def test_layered_potential_matches_dense_d(normalize, seed):
    y, qid = random_graded(seed)
    fb = rb.LayeredFeedback(y, qid, normalize=normalize)
    D = ref.layered_matrix(y, qid, normalize)
    np.testing.assert_allclose(potential_on_all_rows(fb, len(y)), ref.potential(D), atol=1e-15)


def test_query_normalisation_gives_equal_mass_per_query():
    y = [0, 1, 0, 1, 2, 3, 0, 0]
    qid = [1, 1, 2, 2, 2, 2, 3, 3]  # query 3 has one grade: skipped
    D = ref.layered_matrix(y, qid, "query")
    q = np.array(qid)
    assert D[np.ix_(q == 1, q == 1)].sum() == pytest.approx(0.5)
    assert D[np.ix_(q == 2, q == 2)].sum() == pytest.approx(0.5)
    fb = rb.LayeredFeedback(y, qid, normalize="query")
    np.testing.assert_allclose(potential_on_all_rows(fb, 8), ref.potential(D), atol=1e-15)
    fb_pair = rb.LayeredFeedback(y, qid, normalize="pair")
    assert not np.allclose(potential_on_all_rows(fb_pair, 8), ref.potential(D))


@pytest.mark.parametrize("seed", range(3))
def test_pair_potential_matches_dense_d(seed):
    rng = np.random.default_rng(seed)
    n = 12
    pairs = rng.integers(0, n, (25, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    w = rng.uniform(0.1, 2.0, len(pairs))
    fb = rb.PairFeedback(pairs, w, n_samples=n)
    D = ref.pair_matrix(n, pairs, w)
    np.testing.assert_allclose(potential_on_all_rows(fb, n), ref.potential(D), atol=1e-15)


@pytest.mark.parametrize("kind", ["pairs", "layered_pair", "layered_query"])
def test_state_statistics_after_an_update(kind):
    """After H <- H + alpha h: Z, pi, (W_-, W_0, W_+), Z(alpha') of another ranker, and the
    training rloss all match the dense reference."""
    rng = np.random.default_rng(5)
    n = 25
    y, qid = random_graded(5, n=n)
    if kind == "pairs":
        pairs, _ = ref.layered_pairs(y, qid)
        pairs = np.array(pairs)[rng.random(len(pairs)) < 0.6]
        w = rng.uniform(0.2, 3.0, len(pairs))
        fb = rb.PairFeedback(pairs, w, n_samples=n)
        D = ref.pair_matrix(n, pairs, w)
    else:
        normalize = kind.split("_")[1]
        fb = rb.LayeredFeedback(y, qid, normalize=normalize)
        D = ref.layered_matrix(y, qid, normalize)
    state = fb._make_state()
    rows = state.rows
    h_full = (rng.random(n) < 0.5).astype(float)
    g_full = (rng.random(n) < 0.4).astype(float)
    alpha = 0.7
    z = step(state, h_full[rows], alpha)
    assert z == pytest.approx(ref.z_value(D, h_full, alpha), rel=1e-12)
    D2 = D * np.exp(alpha * (h_full[:, None] - h_full[None, :]))
    D2 /= D2.sum()
    pi = np.zeros(n)
    pi[rows] = state.potential()
    np.testing.assert_allclose(pi, ref.potential(D2), atol=1e-14)
    np.testing.assert_allclose(
        state.binary_stats(g_full[rows]), ref.binary_stats(D2, g_full), atol=1e-14
    )
    log_z = state.log_total_at(g_full[rows], -0.3) - state.log_total
    assert np.exp(log_z) == pytest.approx(ref.z_value(D2, g_full, -0.3), rel=1e-12)
    H = alpha * h_full
    assert state.rloss(1.0) == pytest.approx(ref.rloss(D, H), abs=1e-14)
    assert fb.rloss(H) == pytest.approx(ref.rloss(D, H), abs=1e-14)


def test_rloss_tie_weight():
    fb = rb.LayeredFeedback([0, 1, 2])
    scores = [1.0, 1.0, 0.0]  # (0,1) tied, (0,2) and (1,2) misordered
    assert fb.rloss(scores) == pytest.approx(1.0)
    assert fb.rloss(scores, tie_weight=0.5) == pytest.approx(5 / 6)
    assert fb.rloss(scores, tie_weight=0.0) == pytest.approx(2 / 3)
    pf = rb.PairFeedback([[0, 1], [0, 2], [1, 2]])
    assert pf.rloss(scores, tie_weight=0.5) == pytest.approx(5 / 6)


def test_qid_order_does_not_matter():
    y, qid = random_graded(7)
    perm = np.random.default_rng(7).permutation(len(y))
    a = rb.LayeredFeedback(y, qid, normalize="query")
    b = rb.LayeredFeedback(y[perm], qid[perm], normalize="query")
    np.testing.assert_allclose(
        potential_on_all_rows(a, len(y))[perm], potential_on_all_rows(b, len(y)), atol=1e-15
    )
    assert a.n_pairs == b.n_pairs


def test_string_qid():
    y = [0, 1, 1, 0]
    a = rb.LayeredFeedback(y, ["x", "x", "y", "y"])
    b = rb.LayeredFeedback(y, [2, 2, 1, 1])
    assert a.n_pairs == b.n_pairs == 2


# --------------------------------------------------------------------------- kept order


def kept_order(H, level):
    """Rows by increasing H, then decreasing level (the layered state's kept order)."""
    return np.lexsort((-level, H)).astype(np.int32)


def is_kept_order(order, H, level):
    """A permutation in increasing H and, among equal H, decreasing level."""
    dh = np.diff(H[order])
    dl = np.diff(level[order])
    return sorted(order) == list(range(len(H))) and bool(np.all((dh > 0) | ((dh == 0) & (dl <= 0))))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), n=st.integers(1, 60), k=st.sampled_from([1, 2, 3, 5, 16, 17, 30]))
def test_counting_merge_matches_kept_order_and_brute_force(data, n, k):
    """The one-sweep merge + error count of a binary update (per-level counters up to 16
    levels, the Fenwick route above) leaves the rows in the kept order and counts exactly
    the misordered-or-tied crucial pairs; so does the plain merge. Values such as 1e-17 + 1
    round to 1, making ties the merge has to repair."""
    from rankboost._kernels.pairwise import _merge_by_h, _merge_counting_errors

    pool = st.sampled_from([0.0, 1e-17, 2e-17, 3e-17, 1.0, 2.0, 3.0])
    H = np.array(data.draw(st.lists(pool, min_size=n, max_size=n)))
    h = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), np.uint8)
    level = np.array(data.draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    order = kept_order(H, level)
    H += data.draw(st.sampled_from([0.5, 1.0, 2.0, -1.0])) * h
    merged = np.array(order)
    _merge_by_h(H, h, level, merged, np.empty(n, dtype=np.int32), 0, n)
    # the plain merge (the exact refresh's reorder) keeps H sorted; a tie made by rounding
    # may leave its levels out of kept order, which the next counting merge repairs
    assert np.all(np.diff(H[merged]) >= 0)
    got = np.array(order)
    scratch = np.full(2 * k + 1 + 3, np.nan)
    errors = _merge_counting_errors(H, h, level, got, np.empty(n, dtype=np.int32), 0, n, k,
                                    scratch, 3)  # fmt: skip
    if k <= 16:
        assert is_kept_order(got, H, level)
    else:
        assert np.all(np.diff(H[got]) >= 0)
    brute = np.sum((level[:, None] < level[None, :]) & (H[:, None] >= H[None, :]))
    assert errors == brute


def test_counting_merge_repairs_a_tie_made_by_rounding():
    """1e-17 + 1 == 2e-17 + 1 == 1: the levels of the new tie are out of kept order; the
    merge notices, re-sorts and still counts the tied crucial pair."""
    from rankboost._kernels.pairwise import _merge_counting_errors

    H = np.array([1e-17, 2e-17, 5.0])
    level = np.array([0, 2, 1])
    order = kept_order(H, level)  # [0, 1, 2]: no tie yet
    h = np.array([1, 1, 0], dtype=np.uint8)
    H += 1.0 * h  # rows 0 and 1 now tie at 1.0, level 0 below level 2
    errors = _merge_counting_errors(H, h, level, order, np.empty(3, np.int32), 0, 3, 3,
                                    np.zeros(7), 0)  # fmt: skip
    np.testing.assert_array_equal(order, [1, 0, 2])
    assert is_kept_order(order, H, level)
    assert errors == 2.0  # (x0 = row 0, x1 = row 1) tied; row 2 (level 1) above row 1


@pytest.mark.parametrize("normalize", ["pair", "query"])
def test_binary_updates_with_huge_score_spreads(normalize):
    """Binary updates with |alpha| up to 60 drive each query's level sums hundreds of log
    units apart (the log-space route of the binary update, beyond ``_LINEAR_SPAN``) and
    through an exact refresh: Z, the potential and the training rloss stay those of the
    pair weights computed in log space, round after round."""
    from scipy.special import logsumexp

    from rankboost._kernels.layered import _LINEAR_SPAN

    rng = np.random.default_rng(11)
    n = 60
    y = rng.integers(0, 4, n).astype(float)
    qid = rng.choice([3, 8, 5], n)
    fb = rb.LayeredFeedback(y, qid, normalize=normalize)
    pairs, weights = ref.layered_pairs(y, qid, normalize)
    i0, i1 = np.array(pairs).T
    log_w = np.log(weights)
    state = fb._make_state()
    rows = state.rows
    H = np.zeros(n)
    log_m = logsumexp(log_w)
    wide = 0
    for _ in range(80):  # crosses the exact refresh of every _EXACT_EVERY (64) rounds
        h = (rng.random(n) < 0.5).astype(np.uint8)
        alpha = float(rng.choice([-1, 1]) * rng.uniform(5.0, 60.0))
        z = step(state, h[rows], alpha, binary=True)
        H += alpha * h
        logits = log_w + H[i0] - H[i1]
        new_m = logsumexp(logits)
        assert np.log(z) == pytest.approx(new_m - log_m, rel=1e-12, abs=1e-9)
        log_m = new_m
        d = np.exp(logits - new_m)
        expected_pi = np.bincount(i1, d, n) - np.bincount(i0, d, n)
        pi = np.zeros(n)
        pi[rows] = state.potential()
        np.testing.assert_allclose(pi, expected_pi, rtol=0, atol=1e-12)
        assert state.rloss(1.0) == pytest.approx(np.sum(np.exp(log_w) * (H[i0] >= H[i1])))
        spans = [
            np.ptp(state._log_a[state.lstart[q] : state.lstart[q + 1]])
            for q in range(state.lstart.shape[0] - 1)
        ]
        wide += max(spans) > _LINEAR_SPAN
    assert wide > 10  # the log-space route did run
