"""The P-Norm Push's line search for a threshold ranker on layered feedback: O(K) each.

For a binary ``h`` (0/1, a threshold ranker's values), one O(n) pass per round splits each
level's sums by ``h`` (:func:`layered_push_split`); each evaluation of ``log R_p`` and its
two derivatives in ``alpha`` along ``h`` then reads only the levels
(:func:`binary_push_eval`). The notation is :mod:`rankboost._kernels.push`'s; the split
reuses what :func:`rankboost._kernels.push_step.layered_push_refresh` kept at the same
``H`` (each row's ``w = exp(-H - m_l)`` and each level's shift ``m_l``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import serial_and_parallel, use_parallel
from .push import Layout, log_add


@njit(cache=True)
def _split_query(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    q: np.int64,
    level: np.ndarray,
    qstart: np.ndarray,
    lstart: np.ndarray,
    log_c: np.ndarray,
    H: np.ndarray,
    h: np.ndarray,
    p: float,
    split: np.ndarray,
    w_row: np.ndarray,
    m_lvl: np.ndarray,
) -> None:
    r0, r1 = qstart[q], qstart[q + 1]
    base = lstart[q]
    k_q = lstart[q + 1] - base
    for ll in range(k_q):  # columns: -, sum B^0, sum B^1, max pH, sum C^0, sum C^1
        for c in range(6):
            split[base + ll, c] = -np.inf if c in (0, 3) else 0.0
    # B on the levels above the lowest (the refresh's w = exp(-H - m_l), m_l its max -H;
    # B_0 is above no level), C below the top (its rows have nothing above: no lower item).
    # A query's rows come grouped by level: each level's sums run over its rows in order
    top = k_q - 1
    j = r0
    while j < r1:
        lv = level[j]
        k = j + 1
        while k < r1 and level[k] == lv:
            k += 1
        e = base + lv
        if lv > 0:
            b0 = 0.0
            b1 = 0.0
            for i in range(j, k):
                if h[i] == 1:
                    b1 += w_row[i]
                else:
                    b0 += w_row[i]
            split[e, 1] = b0
            split[e, 2] = b1
        if lv < top:
            mc = -np.inf
            for i in range(j, k):
                mc = max(mc, p * H[i])
            c0 = 0.0
            c1 = 0.0
            for i in range(j, k):
                x = np.exp(p * H[i] - mc)
                if h[i] == 1:
                    c1 += x
                else:
                    c0 += x
            split[e, 3] = mc
            split[e, 4] = c0
            split[e, 5] = c1
        j = k
    # per level: log P^b = log sum_{l' > l} B^b_l' (suffix) and log C^b = p log c_q + log C^b
    log_p0 = -np.inf
    log_p1 = -np.inf
    for ll in range(k_q - 1, -1, -1):
        e = base + ll
        m, b0, b1 = m_lvl[e], split[e, 1], split[e, 2]
        mc, c0, c1 = split[e, 3], split[e, 4], split[e, 5]
        split[e, 0] = log_p0
        split[e, 1] = log_p1
        split[e, 2] = p * log_c[q] + mc + np.log(c0) if c0 > 0.0 else -np.inf
        split[e, 3] = p * log_c[q] + mc + np.log(c1) if c1 > 0.0 else -np.inf
        if b0 > 0.0:
            x = m + np.log(b0)
            log_p0 = log_add(log_p0, x)
        if b1 > 0.0:
            x = m + np.log(b1)
            log_p1 = log_add(log_p1, x)


def _split(  # noqa: PLR0917  numba driver: the unpacked state tuples
    level: np.ndarray,
    qstart: np.ndarray,
    lstart: np.ndarray,
    log_c: np.ndarray,
    H: np.ndarray,
    h: np.ndarray,
    p: float,
    split: np.ndarray,
    w_row: np.ndarray,
    m_lvl: np.ndarray,
) -> None:
    for q in prange(qstart.shape[0] - 1):
        _split_query(np.int64(q), level, qstart, lstart, log_c, H, h, p, split, w_row, m_lvl)


_split_serial, _split_parallel = serial_and_parallel(_split)


def layered_push_split(  # noqa: PLR0917  wrapper of the layered kernel: its state, unpacked
    layout: Layout,
    H: np.ndarray,
    h: np.ndarray,
    p: float,
    split: np.ndarray,
    w_row: np.ndarray,
    m_lvl: np.ndarray,
) -> None:
    """The per-level sums of a binary ``h`` (0/1) from which :func:`binary_push_eval` works.

    ``w_row`` and ``m_lvl`` are :func:`layered_push_refresh`'s at the same ``H`` (the level
    sums of ``exp(-H)`` split by ``h`` add its ``w``: one ``exp`` per row fewer). Each
    query's rows must come grouped by level, as :class:`rankboost.LayeredFeedback` orders
    them (:class:`rankboost.push.PushBlock` checks it).

    ``split`` (L, 6): columns 0-1 ``log P^b_l = log sum_{l' > l, h = b} exp(-H)`` (the
    suffix above level ``l``, split by ``h``), columns 2-3
    ``log C^b_l = log sum_{l(k) = l, h(k) = b} c_q^p exp(p H(k))`` over the lower items
    (``-inf`` on each query's top level, whose rows have nothing above them); 4-5 are work
    space.
    At ``H + alpha h``, ``S_l = P^0_l + exp(-alpha) P^1_l`` and the level's part of ``R_p``
    is ``sum_b C^b_l exp(p alpha b) S_l^p``: O(L) per evaluation.
    """
    level, qstart, lstart, log_c = layout
    driver = _split_parallel if use_parallel(4 * H.shape[0]) else _split_serial
    driver(level, qstart, lstart, log_c, H, h, float(p), split, w_row, m_lvl)


@njit(cache=True)
def binary_push_eval(split: np.ndarray, alpha: float, p: float) -> tuple[float, float, float]:
    """``(log R_p, slope, curvature)`` of ``log R_p`` at ``H + alpha h`` from the split sums.

    For rows with ``h = b`` below level ``l``: ``p log L = log C^b_l + p alpha b
    + p log S_l``, its slope ``p (b - E_l)`` and curvature ``p E_l (1 - E_l)``, with
    ``E_l = exp(-alpha) P^1_l / S_l`` (the mean of ``h`` over the items above).
    """
    top = -np.inf
    total = 0.0
    d1 = 0.0
    d2 = 0.0
    for e in range(split.shape[0]):
        lp0, lp1 = split[e, 0], split[e, 1] - alpha
        if lp0 == -np.inf and lp1 == -np.inf:
            continue
        log_s = log_add(lp0, lp1)
        d = lp1 - log_s  # -inf: nothing above with h = 1; 0: nothing with h = 0
        mean = 0.0 if d == -np.inf else (1.0 if d == 0.0 else np.exp(d))
        v = p * mean * (1.0 - mean)
        for b in range(2):
            log_cb = split[e, 2 + b]
            if log_cb == -np.inf:
                continue
            lp = log_cb + p * alpha * b + p * log_s
            s = p * (b - mean)
            if lp > top:  # online log-sum-exp: rescale what was summed
                scale = 0.0 if top == -np.inf else np.exp(top - lp)
                total *= scale
                d1 *= scale
                d2 *= scale
                top = lp
                w = 1.0  # exp(lp - top) = exp(0), exactly
            else:
                w = np.exp(lp - top)
            total += w
            d1 += w * s
            d2 += w * (v + s * s)
    if total == 0.0:
        return -np.inf, 0.0, 0.0
    d1 /= total
    return top + np.log(total), d1, max(d2 / total - d1 * d1, 0.0)


@njit(cache=True)
def binary_newton(  # noqa: PLR0917  numba kernel: the search's settings, unpacked
    split: np.ndarray,
    p: float,
    r: float,
    a0: float,
    max_alpha: float,
    max_newton: int,
    newton_steps: int,
) -> tuple[float, int]:
    """:func:`rankboost.push.newton_alpha` on :func:`binary_push_eval`'s line, in one call.

    The same steps on the same floats, so the same ``alpha`` to the bit: ``a0`` is Rb-c's
    ``alpha_from_r(r)``, ``max_alpha``, ``max_newton`` and ``newton_steps`` the Python
    search's constants. Returns ``(alpha, evaluations of R_p)``.
    """
    if r == 0.0:
        return 0.0, 0
    if r > 0:
        lo, hi = 0.0, max_alpha
    else:
        lo, hi = -max_alpha, 0.0
    a = lo if lo > a0 else a0  # min(max(a0, lo), hi) as Python's: the first of equal values
    a = hi if hi < a else a
    evaluations = 0
    for it in range(max_newton):
        if it == newton_steps:  # slow: is the minimiser beyond the bracket?
            edge = hi if r > 0 else lo
            slope_at_edge = binary_push_eval(split, edge, p)[1]
            evaluations += 1
            if (slope_at_edge <= 0.0) if r > 0 else (slope_at_edge >= 0.0):
                return edge, evaluations
        d1, d2 = binary_push_eval(split, a, p)[1:]
        evaluations += 1
        if d1 == 0.0:
            return a, evaluations
        if d1 < 0.0:
            lo = a
        else:
            hi = a
        step = a - d1 / d2 if d2 > 0.0 and it < newton_steps else np.nan
        if not lo < step < hi:  # outside the bracket, no curvature, or slow: bisect
            step = 0.5 * (lo + hi)
        if abs(step - a) <= 1e-12 * (abs(a) if abs(a) > 1.0 else 1.0):
            return step, evaluations
        a = step
    return a, evaluations
