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
