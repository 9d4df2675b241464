"""The P-Norm Push's refresh at ``F``, and its step on layered feedback in one sweep per query.

The refresh (:func:`layered_push_refresh`) is :func:`rankboost._kernels.push.layered_push_eval`
at ``alpha = 0`` without the derivatives: each lower item's ``lp = p log L_k``, each level's
``log S_l`` (``lvl`` column 0, read by the potential) and ``log R_p``, the log-sum of ``lp``
(:func:`rankboost._kernels.push.push_log_sum`'s bits, its largest ``lp`` taken from each
query's). It also keeps what the split of a threshold ranker
(:mod:`rankboost._kernels.push_split`) reads at the same ``F``: each row's
``w = exp(-F - m_l)`` and each level's shift ``m_l``.

The step (:func:`layered_push_step`): after ``F += alpha h`` with a threshold ranker's ``h``
(uint8 0/1), each query's rows are merged back into increasing ``F`` (then decreasing level)
and its misordered crucial pairs counted in the same sweep, as RankBoost's binary update does
(:func:`rankboost._kernels.pairwise.counting_merge`): the push (:mod:`rankboost.push`) keeps
its own scores and order, so it runs that sweep on them, and the query's refresh with it.

``refresh = (lp, lvl, w_row, m_lvl, q_top)``: float64 (n,), (L, 4), (n,), (L,) and (Q,) work
arrays, written by both (``q_top``: each query's largest ``lp``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import serial_and_parallel, use_parallel
from .pairwise import counting_merge, finish_counts
from .push import Layout

#: ``(lp, lvl, w_row, m_lvl, q_top)``.
Refresh = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@njit(cache=True)
def _refresh_query(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    q: np.int64,
    level: np.ndarray,
    qstart: np.ndarray,
    lstart: np.ndarray,
    log_c: np.ndarray,
    H: np.ndarray,
    p: float,
    lp: np.ndarray,
    lvl: np.ndarray,
    w_row: np.ndarray,
    m_lvl: np.ndarray,
    q_top: np.ndarray,
) -> None:
    # _eval_query at alpha = 0 (h = 0: alpha h = 0.0, kept as "- 0.0" / "+ 0.0", the same
    # bits) without the derivatives; keeps each row's w and each level's shift for the split.
    # Level 0's sum B_0 is in no S_l (the levels above l only): its rows are skipped
    r0, r1 = qstart[q], qstart[q + 1]
    base = lstart[q]
    k_q = lstart[q + 1] - base
    for ll in range(k_q):
        lvl[base + ll, 0] = -np.inf
        lvl[base + ll, 1] = 0.0
    for j in range(r0, r1):
        if level[j] > 0:
            g = -H[j] - 0.0
            e = base + level[j]
            if g > lvl[e, 0]:
                lvl[e, 0] = g
    for j in range(r0, r1):
        if level[j] > 0:
            e = base + level[j]
            w = np.exp(-H[j] - 0.0 - lvl[e, 0])
            w_row[j] = w
            lvl[e, 1] += w
    shift = -np.inf
    s0 = 0.0
    for ll in range(k_q - 1, -1, -1):
        e = base + ll
        m, t0 = lvl[e, 0], lvl[e, 1]
        m_lvl[e] = m
        lvl[e, 0] = shift + np.log(s0) if s0 > 0.0 else -np.inf
        if t0 > 0.0:
            top = max(shift, m)
            # exp(0) = 1 exactly: the larger of the two shifts needs no exp
            f_old = (1.0 if shift == top else np.exp(shift - top)) if s0 > 0.0 else 0.0
            f_new = 1.0 if m == top else np.exp(m - top)
            s0 = s0 * f_old + t0 * f_new
            shift = top
    top_q = -np.inf
    for j in range(r0, r1):
        log_s = lvl[base + level[j], 0]
        x = -np.inf if log_s == -np.inf else p * (log_c[q] + H[j] + 0.0 + log_s)
        lp[j] = x
        if x > top_q:
            top_q = x
    q_top[q] = top_q


@njit(cache=True)
def _log_sum(lp: np.ndarray, q_top: np.ndarray) -> float:
    """``push_log_sum(lp)``, its largest ``lp`` taken from the queries' (``q_top``).

    The first of equal values wins in both, and the sum runs in row order: the same bits.
    """
    top = -np.inf
    for q in range(q_top.shape[0]):
        if q_top[q] > top:
            top = q_top[q]
    if top == -np.inf:
        return -np.inf
    total = 0.0
    for j in range(lp.shape[0]):
        if lp[j] > -np.inf:
            total += np.exp(lp[j] - top)
    return top + np.log(total)


def _refresh(  # noqa: PLR0917  numba driver: the unpacked state tuples
    level: np.ndarray,
    qstart: np.ndarray,
    lstart: np.ndarray,
    log_c: np.ndarray,
    H: np.ndarray,
    p: float,
    lp: np.ndarray,
    lvl: np.ndarray,
    w_row: np.ndarray,
    m_lvl: np.ndarray,
    q_top: np.ndarray,
) -> float:
    for q in prange(qstart.shape[0] - 1):
        _refresh_query(
            np.int64(q), level, qstart, lstart, log_c, H, p, lp, lvl, w_row, m_lvl, q_top
        )
    return _log_sum(lp, q_top)


_refresh_serial, _refresh_parallel = serial_and_parallel(_refresh)


def layered_push_refresh(layout: Layout, H: np.ndarray, p: float, refresh: Refresh) -> float:
    """Each lower item's ``p log L_k`` at ``H`` into ``lp``; return ``log R_p``.

    The same bits as ``layered_push_eval`` at ``alpha = 0`` (``lp``, and ``log S_l`` in
    ``lvl`` column 0) and ``push_log_sum(lp)``, without the derivatives (zero there). Keeps,
    for ``layered_push_split`` at the same ``H``, each row's ``w = exp(-H - m_l)``
    (``w_row``) and each level's shift ``m_l = max -H`` (``m_lvl``), both on the levels
    above each query's lowest (its rows' ``w`` are left as they were and its ``m_l`` is
    ``-inf``: no ``S_l`` reads them).
    """
    level, qstart, lstart, log_c = layout
    driver = _refresh_parallel if use_parallel(6 * H.shape[0]) else _refresh_serial
    return float(driver(level, qstart, lstart, log_c, H, float(p), *refresh))


def _step(  # noqa: PLR0917  numba driver: the unpacked state tuples
    F: np.ndarray,
    h: np.ndarray,
    alpha: float,
    level: np.ndarray,
    qstart: np.ndarray,
    lstart: np.ndarray,
    log_c: np.ndarray,
    p: float,
    order: np.ndarray,
    tmp: np.ndarray,
    errors: np.ndarray,
    lp: np.ndarray,
    lvl: np.ndarray,
    w_row: np.ndarray,
    m_lvl: np.ndarray,
    q_top: np.ndarray,
) -> float:
    for q in prange(qstart.shape[0] - 1):
        lo, hi = qstart[q], qstart[q + 1]
        for j in range(lo, hi):  # F += alpha h as numpy's F += alpha * float64(h): same bits
            F[j] += alpha * h[j]
        errors[q] = counting_merge(F, h, level, order, tmp, lo, hi, lstart[q + 1] - lstart[q])
        _refresh_query(
            np.int64(q), level, qstart, lstart, log_c, F, p, lp, lvl, w_row, m_lvl, q_top
        )
    return _log_sum(lp, q_top)


_step_serial, _step_parallel = serial_and_parallel(_step)


def layered_push_step(  # noqa: PLR0917  wrapper of the layered kernel: its state, unpacked
    layout: Layout,
    F: np.ndarray,
    h: np.ndarray,
    alpha: float,
    p: float,
    kept: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    refresh: Refresh,
) -> float:
    """``F += alpha h`` (``h`` uint8 0/1), its kept order and rloss, and its refresh.

    ``kept = (order, tmp, scratch, errors)``: each query's rows by increasing ``F`` (then
    decreasing level; int32 or int64 (n,), restored by a merge), its work space (same), the
    count's scratch (float64 (2 L + Q,)) and the misordered crucial pairs per query
    (float64 (Q,), ties count 1): ``reorder`` and then ``sorted_level_errors`` of
    :mod:`rankboost._kernels.pairwise` in one sweep per query, as RankBoost's binary update
    does (``counting_merge``, then ``finish_counts`` for the queries it leaves). Returns
    :func:`layered_push_refresh`'s ``log R_p`` at the new ``F``, the same bits.
    """
    level, qstart, lstart, log_c = layout
    order, tmp, scratch, errors = kept
    driver = _step_parallel if use_parallel(14 * F.shape[0]) else _step_serial
    log_r = driver(
        F, h, float(alpha), level, qstart, lstart, log_c, float(p), order, tmp, errors,
        *refresh,
    )  # fmt: skip
    finish_counts(F, h, level, qstart, lstart, order, tmp, scratch, errors)
    return float(log_r)
