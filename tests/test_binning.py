"""Candidate thresholds and bin codes (SPEC 4.1; rankboost.binning).

The candidate sets are checked against ``tests/reference.py`` (every distinct support value
but the largest; the documented quantile rule written out with loops).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankboost as rb
import reference as ref
from rankboost.binning import BinMapper, check_thresholds
from rankboost.weak_rankers import ThresholdRanker


def test_all_candidates_are_distinct_values_but_the_largest():
    X = np.array([[3.0, np.nan], [1.0, 2.0], [3.0, 2.0], [np.nan, 2.0], [-1.0, np.nan]])
    bm = BinMapper("all").fit(X)
    np.testing.assert_array_equal(bm.cuts_[0], [-1.0, 1.0])
    np.testing.assert_array_equal(bm.cuts_[1], np.empty(0))  # constant where defined
    assert bm.n_bins_.tolist() == [3, 1]
    assert bm.threshold_value(0, 0) == -np.inf
    assert bm.threshold_value(0, 2) == 1.0


def test_all_nan_feature_has_no_bin():
    X = np.array([[np.nan, 1.0], [np.nan, 2.0]])
    bm = BinMapper("all").fit(X)
    assert bm.n_bins_.tolist() == [0, 2]
    np.testing.assert_array_equal(bm.transform(X)[0], [0, 0])


def test_codes_follow_the_convention():
    """code 0 = NaN, code k >= 1 = 1 + #{cuts < x}, so [x > cuts[t-1]] iff code > t."""
    rng = np.random.default_rng(0)
    X = rng.choice([0.0, 1.0, 2.5, 4.0, np.nan], size=(50, 3))
    bm = BinMapper("all").fit(X)
    codes = bm.transform(X)
    for i in range(3):
        cuts = bm.cuts_[i]
        for j in range(50):
            x = X[j, i]
            expected = 0 if math.isnan(x) else 1 + int(np.sum(cuts < x))
            assert codes[i, j] == expected
        for t in range(cuts.size + 1):
            theta = bm.threshold_value(i, t)
            h = ThresholdRanker(i, theta, 0.0).predict(X)
            ranked = codes[i] > 0
            np.testing.assert_array_equal(h[ranked], (codes[i][ranked] > t).astype(float))


def test_fit_on_rows_subset():
    X = np.array([[0.0], [5.0], [1.0], [2.0]])
    bm = BinMapper("all").fit(X, rows=np.array([0, 2, 3]))
    np.testing.assert_array_equal(bm.cuts_[0], [0.0, 1.0])
    np.testing.assert_array_equal(bm.transform(X, rows=np.array([1, 0]))[0], [3, 1])


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(
        st.one_of(st.integers(-30, 30).map(float), st.just(math.nan)), min_size=1, max_size=300
    ),
    n_bins=st.integers(2, 40),
)
def test_candidates_match_reference(values, n_bins):
    X = np.array(values)[:, None]
    rows = np.arange(X.shape[0])
    for thresholds in ("all", n_bins):
        bm = BinMapper(thresholds).fit(X)
        defined = [v for v in values if not math.isnan(v)]
        if thresholds == "all":
            expected = sorted(set(defined))[:-1]
        else:
            expected = ref.quantile_cuts(defined, n_bins) if defined else []
        np.testing.assert_array_equal(bm.cuts_[0], np.array(expected, dtype=float))
        assert bm.cuts_[0].size <= (math.inf if thresholds == "all" else n_bins - 1)
        # the reference's candidate list is the same set, largest first, then -inf
        cands = ref.candidates(X, rows, "threshold", thresholds)
        thetas = [c.threshold for c in cands if c.default == 0.0]
        if defined:
            assert thetas == [*sorted(expected, reverse=True), -math.inf]
        else:
            assert thetas == []


def test_quantile_cuts_example():
    # 10 rows, values 0..9; B = 4: targets 2.5, 5, 7.5 -> values 2, 4, 7
    X = np.arange(10.0)[:, None]
    np.testing.assert_array_equal(BinMapper(4).fit(X).cuts_[0], [2.0, 4.0, 7.0])
    # heavy tie: half the rows at 0 -> the quantile cuts collapse and stay training values
    X = np.r_[np.zeros(50), np.arange(1.0, 51.0)][:, None]
    cuts = BinMapper(4).fit(X).cuts_[0]
    np.testing.assert_array_equal(cuts, [0.0, 25.0])


@pytest.mark.parametrize(
    "g",
    [np.exp, lambda x: x**3, lambda x: 2.0 * x - 7.0, np.arctan],
    ids=["exp", "cube", "affine", "arctan"],
)
@pytest.mark.parametrize("thresholds", ["all", 2, 7, 32])
def test_quantile_cuts_invariant_to_increasing_transforms(g, thresholds):
    """In the float32 domain: the cuts of g(X) are float32(g(cut)) for the cuts of X."""
    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(400, 3)), 2)
    X[rng.random(X.shape) < 0.1] = np.nan
    Xg = g(X)
    a = BinMapper(thresholds).fit(X)
    b = BinMapper(thresholds).fit(Xg)
    for i in range(3):
        x32 = a.cuts_[i].astype(np.float32).astype(np.float64)
        np.testing.assert_array_equal(x32, a.cuts_[i])  # every cut is a float32 number
        expected = g(np.round(x32, 2)).astype(np.float32).astype(np.float64)
        np.testing.assert_array_equal(expected, b.cuts_[i])
    np.testing.assert_array_equal(a.transform(X), b.transform(Xg))


@pytest.mark.parametrize(
    ("n_distinct", "dtype"), [(2, np.uint8), (255, np.uint8), (256, np.uint16), (70000, np.uint32)]
)
def test_code_dtype_switch(n_distinct, dtype):
    """n_bins distinct values -> codes 0..n_bins: uint8 up to 255 bins, then uint16."""
    X = np.arange(float(n_distinct))[:, None]
    bm = BinMapper("all").fit(X)
    assert bm.n_bins_[0] == n_distinct
    codes = bm.transform(X)
    assert codes.dtype == dtype
    np.testing.assert_array_equal(codes[0], np.arange(1, n_distinct + 1))


def test_default_255_thresholds_stay_uint8():
    X = np.random.default_rng(2).normal(size=(5000, 2))
    bm = BinMapper(255).fit(X)
    assert bm.code_dtype is np.uint8
    assert all(c.size <= 254 for c in bm.cuts_)


def test_engine_with_many_bins_uses_uint16_and_still_matches_all():
    """A feature with 300 distinct values: thresholds="all" (uint16 codes) and
    thresholds=300 give the same model."""
    rng = np.random.default_rng(3)
    n = 600
    X = np.column_stack(
        [rng.permutation(np.repeat(np.arange(300.0), 2)), np.round(rng.normal(size=n), 1)]
    )
    y = (X[:, 0] + 60 * rng.normal(size=n) > 150).astype(float)
    fb = rb.BipartiteFeedback(y)
    a = rb.train(X, fb, 20, thresholds="all")
    b = rb.train(X, fb, 20, thresholds=300)
    da, db = a.to_dict(), b.to_dict()
    assert da["params"]["thresholds"] != db["params"]["thresholds"]
    assert da["rounds"] == db["rounds"]
    assert da["history"] == db["history"]
    c = rb.train(X, fb, 20, thresholds=16).to_dict()
    assert c["rounds"] != da["rounds"]


@pytest.mark.parametrize("bad", ["some", "ALL", 1, 0, -5])
def test_check_thresholds_value_errors(bad):
    with pytest.raises(ValueError, match=r"thresholds must be 'all' or an int number of bins"):
        check_thresholds(bad)


@pytest.mark.parametrize("bad", [2.5, None, True, [4]])
def test_check_thresholds_type_errors(bad):
    with pytest.raises(TypeError, match=r"thresholds must be 'all' or an int number of bins"):
        check_thresholds(bad)


# --------------------------------------------------------------------------- histograms


@settings(max_examples=100, deadline=None)
@given(
    data=st.data(),
    d=st.integers(1, 9),
    n=st.integers(0, 50),
    dtype=st.sampled_from([np.uint8, np.uint16]),
    scale=st.sampled_from([1.0, 0.37]),
)
def test_potential_histograms_match_definition(data, d, n, dtype, scale):
    """Every path of the histogram kernel (uint8 codes eight at a time plus the tail rows,
    groups of four features plus the rest, wider codes byte by byte) sums, per feature and
    in row order, exactly what the definition sums."""
    from rankboost._kernels.histogram import (
        _histograms_parallel,
        _histograms_serial,
        potential_histograms,
    )

    n_codes = data.draw(st.integers(1, 300 if dtype == np.uint16 else 256))
    codes = np.array(
        data.draw(st.lists(st.integers(0, n_codes - 1), min_size=d * n, max_size=d * n)),
        dtype=dtype,
    ).reshape(d, n)
    pi = np.array(data.draw(st.lists(st.floats(-1, 1), min_size=n, max_size=n)))
    expected = np.zeros((d, n_codes))
    for i in range(d):
        for j in range(n):  # row order, as the kernel adds
            expected[i, codes[i, j]] += pi[j]
    expected *= scale
    for kernel in (_histograms_serial, _histograms_parallel):
        out = np.full((d, n_codes), np.nan)
        kernel(codes, pi, scale, out)
        np.testing.assert_array_equal(out, expected)
    out = np.full((d, n_codes), np.nan)
    potential_histograms(codes, pi, out, scale)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("thresholds", ["all", 2])
def test_signed_zero_cut_is_stored_as_zero(thresholds):
    """-0.0 == 0.0 sort in either order; the stored cut is 0.0 whichever came last, so the
    model file does not depend on the sort algorithm."""
    from rankboost.binning import _cuts_from_sorted

    for zeros in ([0.0, -0.0], [-0.0, 0.0]):
        cuts = _cuts_from_sorted(np.array([-1.0, *zeros, 1.0, 2.0]), thresholds)
        zero = cuts[cuts == 0.0]
        assert zero.size == 1
        assert not np.signbit(zero[0])


VALUES = st.one_of(  # within the float32 range: fit refuses values beyond it (issue 22)
    st.floats(-3e38, 3e38, allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1e-310, -1e-310, 5e-324, 1.0, 1.0 + 2**-52, 3.0, math.nan]),
)


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 80),
    thresholds=st.sampled_from([2, 7, 255, "all"]),
)
def test_transform_matches_searchsorted(data, n, thresholds):
    """Codes are 0 for NaN and 1 + #{cuts < float32(x)} otherwise, for any finite or infinite x:
    values on a cut, between two adjacent floats, subnormal, and spread over 600 orders of
    magnitude (all cuts in a few of the guide's buckets)."""
    X = np.array(data.draw(st.lists(VALUES, min_size=3 * n, max_size=3 * n))).reshape(n, 3)
    new = data.draw(st.lists(st.one_of(VALUES, st.sampled_from([math.inf, -math.inf])),
                             min_size=3 * 20, max_size=3 * 20))  # fmt: skip
    X_new = np.array(new).reshape(20, 3)
    bm = BinMapper(thresholds).fit(X)
    codes = bm.transform(X_new)
    for i in range(3):
        with np.errstate(over="ignore"):
            col = X_new[:, i].astype(np.float32)  # the float32 domain
        expected = np.where(np.isnan(col), 0, 1 + np.searchsorted(bm.cuts_[i], col, "left"))
        np.testing.assert_array_equal(codes[i], expected)


@settings(max_examples=100, deadline=None)
@given(data=st.data(), m=st.integers(2, 40))
def test_guided_count_is_exact_whatever_the_guide(data, m):
    """The guide only starts the walk: with any guess in every bucket the count is
    searchsorted's, so rounding in the bucket arithmetic cannot change a code."""
    from rankboost._kernels.binning import _count_below

    cuts = np.unique(np.array(data.draw(st.lists(st.integers(-50, 50), min_size=m,
                                                 max_size=m)), dtype=float))  # fmt: skip
    m = cuts.shape[0]
    guide = np.array([data.draw(st.lists(st.integers(0, m), min_size=8, max_size=8))])
    scale = np.array([8.0 / (cuts[-1] - cuts[0])]) if m > 1 else np.zeros(1)
    for x in np.linspace(-60, 60, 97).tolist() + cuts.tolist():
        got = _count_below.py_func(x, cuts, 0, m, guide, scale, 0)
        assert got == np.searchsorted(cuts, x, "left")


@pytest.mark.parametrize("thresholds", ["all", 2, 7, 32, 255])
def test_issue16_integer_sample_weight_bins_equal_repeated_rows(thresholds):
    """BinMapper.fit(X, rows, sample_weight=w) = BinMapper.fit(X[rows repeated w times])."""
    rng = np.random.default_rng(4)
    X = np.round(rng.normal(size=(600, 4)), 2)  # ties and many distinct values
    X[rng.random(X.shape) < 0.1] = np.nan
    X[:, 3] = np.nan  # a feature without a value: no bin either way
    w = rng.integers(0, 5, size=600).astype(float)
    rows = np.flatnonzero(rng.random(600) < 0.8)
    rep = np.repeat(rows, w[rows].astype(int))
    a = BinMapper(thresholds).fit(X, rows, sample_weight=w)
    b = BinMapper(thresholds).fit(X, rep)
    for i in range(4):
        np.testing.assert_array_equal(a.cuts_[i], b.cuts_[i])
    np.testing.assert_array_equal(a.n_bins_, b.n_bins_)
    assert a.n_bins_[3] == 0
    # constant weights change nothing
    c = BinMapper(thresholds).fit(X, rows, sample_weight=np.full(600, 3.0))
    d = BinMapper(thresholds).fit(X, rows)
    for i in range(4):
        np.testing.assert_array_equal(c.cuts_[i], d.cuts_[i])


def test_issue16_bad_sample_weight_for_bins():
    X = np.zeros((3, 1))
    with pytest.raises(ValueError, match="one weight per row of X"):
        BinMapper().fit(X, sample_weight=np.ones(2))
    with pytest.raises(ValueError, match="finite non-negative"):
        BinMapper().fit(X, sample_weight=np.array([1.0, -1.0, 1.0]))


# --------------------------------------------------------------------------- issue 13


def test_issue13_midpoints_are_exactly_halfway():
    X = np.array([[3.0], [1.0], [np.nan], [3.0], [-1.0], [1.0]])
    bm = BinMapper("midpoints").fit(X)
    np.testing.assert_array_equal(bm.cuts_[0], [0.0, 2.0])  # (-1 + 1) / 2, (1 + 3) / 2
    # the same split of the training rows as "all": same codes
    np.testing.assert_array_equal(bm.transform(X), BinMapper("all").fit(X).transform(X))
    # a new value goes to the nearer training value's side
    h = ThresholdRanker(0, float(bm.cuts_[0][1]), 0.0).predict(np.array([[1.9], [2.1]]))
    np.testing.assert_array_equal(h, [0.0, 1.0])


def test_issue13_midpoints_of_adjacent_and_huge_floats():
    """The cuts are float32 numbers (the float32 domain) between float32 training values."""
    a = 1.0
    b = float(np.nextafter(np.float32(a), np.float32(2.0)))  # adjacent float32 values
    big = float(np.finfo(np.float32).max)
    cuts = rb.binning.midpoint_cuts(np.array([-big, a, b, big]))
    # (a + b) / 2 rounds to a or b; it must stay a (so [x > cut] still splits a from b)
    assert cuts[1] == a
    assert cuts[0] == float(np.float32(-big / 2 + a / 2))  # no overflow to -inf
    assert cuts[2] == float(np.float32(b / 2 + big / 2))
    assert np.isfinite(cuts).all()
    np.testing.assert_array_equal(cuts.astype(np.float32), cuts)


@pytest.mark.parametrize("n_bins", [2, 3, 10])
def test_issue13_uniform_edges(n_bins):
    col = np.array([2.0, 7.0, np.nan, 2.5, 12.0, 3.0])
    bm = BinMapper(("uniform", n_bins)).fit(col[:, None])
    k = np.arange(1, n_bins)
    # each edge rounded down to float32 (the float32 domain: the same split of float32 values)
    np.testing.assert_array_equal(bm.cuts_[0], rb.binning.floor32(2.0 + k * 10.0 / n_bins))
    assert bm.n_bins_[0] == n_bins
    # the edges are between min and max, whatever the values in between
    assert bm.cuts_[0][0] > 2.0
    assert bm.cuts_[0][-1] < 12.0


def test_issue13_uniform_constant_and_huge_range():
    assert BinMapper(("uniform", 10)).fit(np.full((4, 1), 3.0)).cuts_[0].shape == (0,)
    big = float(np.finfo(np.float32).max)
    cuts = rb.binning.uniform_cuts(-big, big, 4)
    np.testing.assert_array_equal(cuts, rb.binning.floor32(np.array([-big / 2, 0.0, big / 2])))
    assert np.isfinite(cuts).all()


@pytest.mark.parametrize("thresholds", ["midpoints", ("uniform", 4)])
def test_issue13_cuts_from_counts_equals_fit(thresholds):
    """The Dask merge (cuts_from_counts) gives the single-machine cuts for the new rules."""
    rng = np.random.default_rng(3)
    col = rng.integers(0, 9, size=50).astype(float)
    distinct, counts = np.unique(col, return_counts=True)
    np.testing.assert_array_equal(
        rb.binning.cuts_from_counts(distinct, np.cumsum(counts), thresholds),
        BinMapper(thresholds).fit(col[:, None]).cuts_[0],
    )


@pytest.mark.parametrize(
    ("bad", "exc"),
    [(("uniform", 1), ValueError), (("uniform", 2.5), ValueError), (("quantile", 4), TypeError),
     ("uniform", ValueError), ("midpoint", ValueError)],
)  # fmt: skip
def test_issue13_bad_threshold_rules(bad, exc):
    with pytest.raises(exc, match=r"thresholds"):
        check_thresholds(bad)


def test_fit_refuses_values_beyond_the_float32_range():
    """Issue 22: features are compared as float32; 1e39 would be +inf there."""
    with pytest.raises(ValueError, match=r"X\[1, 0\] is 1e\+39, beyond the float32 range"):
        BinMapper().fit(np.array([[0.0], [1e39]]))
    BinMapper().fit(np.array([[0.0], [3.4e38]]))  # rounds to the largest float32: accepted
    model = rb.train(np.array([[0.0], [1.0]]), rb.BipartiteFeedback([0, 1]), 1)
    with pytest.raises(ValueError, match=r"X\[0, 0\] is -1e\+39, beyond the float32 range"):
        model.predict(np.array([[-1e39]]))
