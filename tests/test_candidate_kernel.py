"""The candidate table's numba kernel (issue 36) against the numpy code it replaced: the
same bits on random histograms, incl. empty blocks (a zero histogram), one query, a feature
constant everywhere (one bin) and a feature NaN in every row (no bin: every row abstains)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rankboost as rb
from rankboost.weak_rankers import CandidateTable, candidate_table


def numpy_candidate_table(hist, n_bins, weak_ranker):
    """``weak_rankers.candidate_table`` before issue 36 (numpy), verbatim: the oracle."""
    if hist.shape[1] < 2:  # every feature abstains on every row: no candidate is valid
        hist = np.concatenate([hist, np.zeros((hist.shape[0], 2 - hist.shape[1]))], axis=1)
    d, n_codes = hist.shape
    n_t = n_codes - 1  # threshold indices 0 .. n_codes - 2
    cols = []
    valid = []
    # L[i, t] = sum_{b > t} hist[i, b], t = 0 .. n_codes - 2
    tail = np.cumsum(hist[:, :0:-1], axis=1)[:, ::-1]  # tail[:, t] = sum_{b >= t+1}
    ranked = tail[:, 0]  # R
    t_idx = np.arange(n_t)
    t_ok = t_idx[None, :] <= (n_bins[:, None] - 1)  # t <= n_cuts
    t_ok &= n_bins[:, None] >= 1
    if weak_ranker in ("threshold", "both"):
        thr = np.empty((d, n_t, 2))
        thr[:, :, 0] = tail
        thr[:, :, 1] = tail - ranked[:, None]
        cols.append(thr[:, ::-1, :].reshape(d, 2 * n_t))
        valid.append(np.repeat(t_ok[:, ::-1], 2, axis=1))
    if weak_ranker in ("feature", "both"):
        denom = np.maximum(n_bins - 1, 1).astype(np.float64)
        vals = (np.arange(n_codes)[None, :] - 1) / denom[:, None]
        vals[:, 0] = 0.0
        in_range = np.arange(n_codes)[None, :] <= n_bins[:, None]
        base = np.sum(np.where(in_range, hist * vals, 0.0), axis=1)
        feat = np.stack([base, base + hist[:, 0]], axis=1)
        cols.append(feat)
        valid.append(np.repeat((n_bins >= 2)[:, None], 2, axis=1))
    return CandidateTable(
        r=np.ascontiguousarray(np.concatenate(cols, axis=1)),
        valid=np.ascontiguousarray(np.concatenate(valid, axis=1)),
        n_thresholds=n_t if weak_ranker in ("threshold", "both") else 0,
        has_feature_rankers=weak_ranker in ("feature", "both"),
    )


def assert_same(hist, n_bins, weak_ranker):
    got = candidate_table(hist, n_bins, weak_ranker)
    want = numpy_candidate_table(hist, n_bins, weak_ranker)
    assert got.r.shape == want.r.shape
    assert got.r.tobytes() == want.r.tobytes()  # the same bits, signed zeros included
    np.testing.assert_array_equal(got.valid, want.valid)
    assert got.valid.dtype == want.valid.dtype
    assert (got.n_thresholds, got.has_feature_rankers) == (
        want.n_thresholds,
        want.has_feature_rankers,
    )
    if want.r.size:  # best() of no candidate at all is an error in both
        assert got.best() == want.best()


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    d=st.integers(0, 6),
    n_codes=st.integers(1, 12),
    weak_ranker=st.sampled_from(["threshold", "feature", "both"]),
)
def test_kernel_table_is_the_numpy_table(data, d, n_codes, weak_ranker):
    values = st.floats(-1e3, 1e3, allow_nan=False, allow_subnormal=False) | st.just(-0.0)
    hist = data.draw(hnp.arrays(np.float64, (d, n_codes), elements=values))
    n_bins = data.draw(hnp.arrays(np.int64, (d,), elements=st.integers(0, n_codes - 1)))
    assert_same(hist, n_bins, weak_ranker)


@pytest.mark.parametrize("weak_ranker", ["threshold", "feature", "both"])
def test_kernel_table_on_a_training_histogram(weak_ranker):
    """Real histograms of a booster: one query, a constant feature, a feature NaN in every
    row; and an empty (all-zero) histogram."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(60, 5))
    X[:, 1] = 3.0  # constant everywhere: one bin
    X[:, 3] = np.nan  # NaN in every row: every row abstains, no bin
    y = rng.integers(0, 3, 60).astype(np.float64)
    bst = rb.Booster(X, rb.LayeredFeedback(y), {"weak_ranker": weak_ranker})  # one query
    for _ in range(3):
        hist = bst._histograms()
        assert_same(hist, bst.binner.n_bins_, weak_ranker)
        bst.update()
    assert_same(np.zeros_like(hist), bst.binner.n_bins_, weak_ranker)


def test_unknown_weak_ranker_is_refused():
    with pytest.raises(ValueError, match="weak_ranker must be 'threshold', 'feature' or 'both'"):
        candidate_table(np.zeros((2, 4)), np.array([1, 2]), "stump")
