"""The round's kernels on the edge cases of issue 36, against slow references.

Issue 36 asks every kernel of a round to be checked, beside random data, on empty blocks, one
query, a feature constant everywhere and a feature NaN in every row (code 0: the feature
abstains). Two oracles:

* the potential histogram (every driver: serial, parallel, and both with the uint8 codes read
  as uint64 words) against a plain Python loop that adds ``pi[j]`` to its bin row by row,
  bit for bit (the engine's sums are sequential per bin, in row order, so the same bits);
* whole rounds of ``rb.train`` against the dense-matrix transcription of the paper
  (``tests/reference.py``, via ``test_engine_reference.assert_matches_reference``) on
  problems that always hold one query, a constant feature and an all-NaN feature, with the
  default 255 quantile thresholds and with every distinct value;

and an empty block (no row, no query) through the kernels of a round: zero histograms and
masses, nothing written out of range.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rankboost as rb
import reference as ref
from rankboost._kernels import histogram as kh
from rankboost._kernels import layered as kl
from rankboost._kernels.candidates import threshold_candidates
from test_engine_reference import SETTINGS, VALUE_POOL, assert_matches_reference

HISTOGRAM_DRIVERS = {
    "serial": kh._histograms_serial,
    "parallel": kh._histograms_parallel,
    "words_serial": kh._histograms_words_serial,
    "words_parallel": kh._histograms_words_parallel,
}


def slow_histograms(codes: np.ndarray, pi: np.ndarray, scale: float, n_codes: int) -> np.ndarray:
    """``out[i, b] = scale * (((0 + pi[j1]) + pi[j2]) + ...)`` over the rows with code b, in
    row order: the definition, one Python addition at a time."""
    d, n = codes.shape
    out = np.zeros((d, n_codes))
    for i in range(d):
        acc = [0.0] * n_codes
        for j in range(n):
            acc[int(codes[i, j])] += float(pi[j])
        out[i] = [a * scale for a in acc]
    return out


@st.composite
def code_matrices(draw):
    """(d, n) codes with empty blocks (n = 0), rows not a multiple of 8, features not a
    multiple of 4; each feature random, constant everywhere (one bin) or 0 everywhere (NaN
    in every row)."""
    n_codes = draw(st.sampled_from([2, 3, 17, 256]))
    n = draw(st.sampled_from([0, 1, 7, 8, 9, 23, 40]))
    d = draw(st.integers(1, 9))
    rows = []
    for _ in range(d):
        kind = draw(st.sampled_from(["random", "random", "constant", "nan"]))
        if kind == "random":
            rows.append(draw(st.lists(st.integers(0, n_codes - 1), min_size=n, max_size=n)))
        elif kind == "constant":
            rows.append([draw(st.integers(1, n_codes - 1))] * n)
        else:
            rows.append([0] * n)
    codes = np.array(rows, dtype=np.uint8).reshape(d, n)
    finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
    pi = np.array(draw(st.lists(finite, min_size=n, max_size=n)), dtype=np.float64)
    scale = draw(st.sampled_from([1.0, 0.5, 1.0 / 3.0]))
    return codes, pi, scale, n_codes


@SETTINGS
@given(case=code_matrices())
def test_issue36_histogram_drivers_equal_the_slow_loop_bit_for_bit(case):
    codes, pi, scale, n_codes = case
    expected = slow_histograms(codes, pi, scale, n_codes)
    for name, driver in HISTOGRAM_DRIVERS.items():
        out = np.full((codes.shape[0], n_codes), np.nan)
        driver(codes, pi, scale, out)
        np.testing.assert_array_equal(out, expected, err_msg=name)
    out = np.full((codes.shape[0], n_codes), np.nan)
    kh.potential_histograms(codes, pi, out, scale)
    np.testing.assert_array_equal(out, expected)


@st.composite
def one_query_problems(draw, top):
    """One query; feature 0 constant everywhere, feature 1 NaN in every row, the others drawn
    from a small pool (ties) with NaNs; at least one crucial pair."""
    n = draw(st.integers(2, 30))
    extra = draw(st.integers(1, 3))
    cols = [[draw(st.sampled_from([0.0, 7.0]))] * n, [math.nan] * n]
    for _ in range(extra):
        cols.append(draw(st.lists(st.sampled_from(VALUE_POOL), min_size=n, max_size=n)))
    order = draw(st.permutations(range(len(cols))))  # the edge features at any position
    X = np.array([cols[k] for k in order], dtype=float).T.copy()
    y = draw(st.lists(st.integers(0, top), min_size=n, max_size=n))
    i, j = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
    y[i], y[j] = 0, top
    return X, np.array(y, dtype=float), np.zeros(n, dtype=np.int64)


@SETTINGS
@given(
    problem=one_query_problems(top=3),
    normalize=st.sampled_from(["pair", "query"]),
    thresholds=st.sampled_from(["all", 255]),
    rule=st.sampled_from([("r", "threshold"), ("exact", "threshold"), ("r", "both")]),
)
def test_issue36_one_query_constant_and_all_nan_features_match_reference(
    problem, normalize, thresholds, rule
):
    X, y, qid = problem
    fb = rb.LayeredFeedback(y, qid, normalize=normalize)
    D = ref.layered_matrix(y, qid, normalize)
    model, _ = assert_matches_reference(
        X, fb, D, alpha=rule[0], weak_ranker=rule[1], positive_cumulative=False,
        thresholds=thresholds,
    )  # fmt: skip
    constant = [i for i in range(X.shape[1]) if np.all(X[:, i] == X[0, i])]
    all_nan = [i for i in range(X.shape[1]) if np.all(np.isnan(X[:, i]))]
    # a feature that is constant (or abstains) on every row orders no pair: never chosen
    assert not set(model.history["feature"]) & set(constant + all_nan)


def test_issue36_empty_block_through_a_rounds_kernels():
    """A block without rows or queries (a Dask partition left empty): histograms, the
    candidate table, the binary update and the potential run and write zeros."""
    d, n_codes = 5, 256
    codes = np.empty((d, 0), dtype=np.uint8)
    pi = np.empty(0)
    for name, driver in HISTOGRAM_DRIVERS.items():
        hist = np.full((d, n_codes), np.nan)
        driver(codes, pi, 1.0, hist)
        np.testing.assert_array_equal(hist, 0.0, err_msg=name)
    r = np.full((d, 2 * (n_codes - 1)), np.nan)
    valid = np.ones_like(r, dtype=np.bool_)
    threshold_candidates(np.zeros((d, n_codes)), np.full(d, 4, dtype=np.int64), r, valid)
    np.testing.assert_array_equal(r, 0.0)
    assert valid[:, 2 * (n_codes - 1 - 4) :].all()
    assert not valid[:, : 2 * (n_codes - 1 - 4)].any()
    i64 = np.zeros(0, dtype=np.int64)
    layout = (i64, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(0))
    rows = (np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int32))
    levels = tuple(np.zeros(0) for _ in range(4))
    factors = (np.zeros(0), np.zeros(0))
    scratch = (np.zeros((0, 6)), np.zeros(0, dtype=np.int32), np.zeros(0))
    out = (np.zeros(0), np.zeros(0), np.zeros(0))
    kl.layered_refresh(np.zeros(0), 0.0, layout, rows, levels, out[0])
    kl.layered_binary_update(
        np.zeros(0, dtype=np.uint8), 0.5, 0.0, layout, rows, levels, factors, scratch, out
    )
    kl.layered_potential(0.0, layout, rows, levels, factors, out[1])
    assert all(a.size == 0 for a in (*rows, *levels, *out))


@pytest.mark.parametrize("thresholds", ["all", 255])
def test_issue36_constant_and_all_nan_features_alone_stop_at_once(thresholds):
    """Only a constant and an all-NaN feature: no candidate orders a pair (r = 0 for every
    threshold), so the first round stops with the reason, as the reference does."""
    n = 12
    X = np.column_stack([np.full(n, 3.0), np.full(n, np.nan)])
    y = np.arange(n) % 3
    fb = rb.LayeredFeedback(y, np.zeros(n, dtype=np.int64))
    bst = rb.Booster(X, fb, {"thresholds": thresholds})
    assert bst.update() is None
    assert "no weak ranker has |r| > tol" in bst.stop_reason
    expected = ref.train(X, ref.layered_matrix(y, np.zeros(n), "query"), 1, thresholds=thresholds)
    assert expected.rounds == []
    assert expected.stop == "no_ranker"
