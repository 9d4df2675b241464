"""The P-Norm Push's per-lower-item losses in O(n) per round (Rudin, JMLR 10, 2009).

For scores ``G = H + alpha h`` and each lower item ``k`` (an item some crucial pair puts
below another), its loss is ``L_k = sum_{i above k} D(i, k) exp(G(k) - G(i))`` and the
objective ``R_p = sum_k L_k^p`` (SPEC 7.3; Rudin's equation (2.2) with ``g = exp``). The
kernels return, per row, ``lp = p log L_k`` and the first two derivatives of ``p log L_k``
in ``alpha``:

    s_k = p (h(k) - E_k[h]),   v_k = p Var_k[h],

where ``E_k`` and ``Var_k`` are over the items above ``k`` weighted by
``D(i, k) exp(-G(i))``. :func:`push_combine` turns them into ``log R_p`` and the derivatives
of ``log R_p`` (convex in ``alpha``), which the line search of :mod:`rankboost.push` reads.

**Layered (and bipartite) feedback** (SPEC 3.3): ``D(i, k) = c_q`` for ``l(k) < l(i)`` in
query q, so ``L_k = c_q exp(G(k)) S_{l(k)}`` with the suffix sums over levels
``S_l = sum_{l' > l} B_l'``, ``B_l = sum_{l(x) = l} exp(-G(x))``: O(n + K) per query. Every
level sum is kept with its own shift (its largest exponent) and the suffix merges them in
log space, so nothing overflows. Arrays as :mod:`rankboost._kernels.layered`:

``layout = (level, qstart, lstart, log_c)``: the layered layout (that module's docstring).
``out = (lp, s, v)``: float64 (n,) each, written for every row (``lp = -inf`` and
    ``s = v = 0`` for a row with nothing above it).
``lvl``: float64 (L, 4), work space; after :func:`layered_push_eval` column 0 holds
    ``log S_l`` (``-inf`` for each query's top level).

The evaluation at ``alpha = 0`` that a round starts from (``lp``, ``log S_l`` and
``log R_p``) and the step are :mod:`rankboost._kernels.push_step`'s; a threshold ranker's
line search, O(K) per evaluation, is :mod:`rankboost._kernels.push_split`'s.

**Explicit pairs** (SPEC 3.1): ``pairs = (i0, i1, log_w)``: int64, int64, float64 (P,),
pair ``j`` puts row ``i1[j]`` above row ``i0[j]`` with ``log D``. ``L_k`` is a log-sum-exp
scattered over the pairs (two passes: the largest exponent per row, then the shifted sums):
O(P). ``rows``: float64 (n, 4) work space; after :func:`pair_push_eval` column 0 holds
``log S_k = log sum_{i above k} D(i, k) exp(-G(i))``.

The potential of the round's normalised weights
``D_t(i, k) = (L_k^p / R_p) D(i, k) exp(-H(i)) / S_k`` (the gradient of ``R_p``, SPEC 7.3)
is ``pi(x) = sum_k D_t(x, k) - sum_i D_t(i, x)``: :func:`layered_push_potential` (prefix
sums over levels, O(n + K)) and :func:`pair_push_potential` (O(P)), from the ``lp`` and
``log S`` of an evaluation at ``alpha = 0``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import serial_and_parallel, use_parallel

#: ``(level, qstart, lstart, log_c)``.
Layout = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
#: ``(lp, s, v)``.
Out = tuple[np.ndarray, np.ndarray, np.ndarray]
#: ``(i0, i1, log_w)``.
Pairs = tuple[np.ndarray, np.ndarray, np.ndarray]


@njit(cache=True, inline="always")
def log_add(a: float, b: float) -> float:
    """``log(exp(a) + exp(b))`` without overflow; one of them may be ``-inf``, not both.

    ``hi + log(exp(a - hi) + exp(b - hi))`` with ``hi = max(a, b)``; the larger term is
    ``exp(0) = 1`` exactly, so it is written ``1.0`` (the same bits, one ``exp`` fewer), and
    the smaller is ``exp(-inf) = 0`` exactly when it is ``-inf`` (``hi + 0.0``: no ``exp``
    or ``log`` at all).
    """
    if a >= b:
        if b == -np.inf:  # log(1.0 + exp(-inf)) = log(1.0) = 0.0 exactly: no exp, no log
            return a + 0.0
        return a + np.log(1.0 + np.exp(b - a))
    if a == -np.inf:
        return b + 0.0
    return b + np.log(np.exp(a - b) + 1.0)


@njit(cache=True)
def _eval_query(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    q: np.int64,
    level: np.ndarray,
    qstart: np.ndarray,
    lstart: np.ndarray,
    log_c: np.ndarray,
    H: np.ndarray,
    h: np.ndarray,
    alpha: float,
    p: float,
    lp: np.ndarray,
    s: np.ndarray,
    v: np.ndarray,
    lvl: np.ndarray,
) -> None:
    r0, r1 = qstart[q], qstart[q + 1]
    base = lstart[q]
    k_q = lstart[q + 1] - base
    for ll in range(k_q):
        lvl[base + ll, 0] = -np.inf
        lvl[base + ll, 1] = 0.0
        lvl[base + ll, 2] = 0.0
        lvl[base + ll, 3] = 0.0
    for j in range(r0, r1):  # each level's largest exponent -G
        g = -H[j] - alpha * h[j]
        e = base + level[j]
        if g > lvl[e, 0]:
            lvl[e, 0] = g
    for j in range(r0, r1):  # the shifted level sums of w, w h, w h^2 (w = exp(-G))
        e = base + level[j]
        w = np.exp(-H[j] - alpha * h[j] - lvl[e, 0])
        lvl[e, 1] += w
        lvl[e, 2] += w * h[j]
        lvl[e, 3] += w * h[j] * h[j]
    # suffix over the levels above: (shift, s0, s1, s2); level l gets the levels > l
    shift = -np.inf
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    for ll in range(k_q - 1, -1, -1):
        e = base + ll
        m, t0, t1, t2 = lvl[e, 0], lvl[e, 1], lvl[e, 2], lvl[e, 3]
        if s0 > 0.0:
            mean = s1 / s0
            lvl[e, 0] = shift + np.log(s0)
            lvl[e, 1] = mean
            lvl[e, 2] = max(s2 / s0 - mean * mean, 0.0)
        else:
            lvl[e, 0] = -np.inf
            lvl[e, 1] = 0.0
            lvl[e, 2] = 0.0
        if t0 > 0.0:
            top = max(shift, m)
            f_old = np.exp(shift - top) if s0 > 0.0 else 0.0
            f_new = np.exp(m - top)
            s0 = s0 * f_old + t0 * f_new
            s1 = s1 * f_old + t1 * f_new
            s2 = s2 * f_old + t2 * f_new
            shift = top
    for j in range(r0, r1):
        e = base + level[j]
        log_s = lvl[e, 0]
        if log_s == -np.inf:
            lp[j] = -np.inf
            s[j] = 0.0
            v[j] = 0.0
        else:
            lp[j] = p * (log_c[q] + H[j] + alpha * h[j] + log_s)
            s[j] = p * (h[j] - lvl[e, 1])
            v[j] = p * lvl[e, 2]


def _eval(  # noqa: PLR0917  numba driver: the unpacked state tuples
    level: np.ndarray,
    qstart: np.ndarray,
    lstart: np.ndarray,
    log_c: np.ndarray,
    H: np.ndarray,
    h: np.ndarray,
    alpha: float,
    p: float,
    lp: np.ndarray,
    s: np.ndarray,
    v: np.ndarray,
    lvl: np.ndarray,
) -> None:
    for q in prange(qstart.shape[0] - 1):
        _eval_query(np.int64(q), level, qstart, lstart, log_c, H, h, alpha, p, lp, s, v, lvl)


_eval_serial, _eval_parallel = serial_and_parallel(_eval)


def layered_push_eval(  # noqa: PLR0917  wrapper of the layered kernel: its state, unpacked
    layout: Layout,
    H: np.ndarray,
    h: np.ndarray,
    alpha: float,
    p: float,
    out: Out,
    lvl: np.ndarray,
) -> None:
    """Per row: ``p log L_k`` and its two derivatives in ``alpha`` at ``G = H + alpha h``."""
    level, qstart, lstart, log_c = layout
    lp, s, v = out
    driver = _eval_parallel if use_parallel(8 * H.shape[0]) else _eval_serial
    driver(level, qstart, lstart, log_c, H, h, float(alpha), float(p), lp, s, v, lvl)


@njit(cache=True)
def _potential_query(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    q: np.int64,
    level: np.ndarray,
    qstart: np.ndarray,
    lstart: np.ndarray,
    H: np.ndarray,
    lp: np.ndarray,
    log_r: float,
    lvl: np.ndarray,
    pi: np.ndarray,
) -> None:
    r0, r1 = qstart[q], qstart[q + 1]
    base = lstart[q]
    k_q = lstart[q + 1] - base
    for ll in range(k_q):
        lvl[base + ll, 3] = 0.0  # W_l = sum of the lower items' weights w_k = L_k^p / R_p
    for j in range(r0, r1):
        if lp[j] == -np.inf:  # nothing above j: w = exp(-inf) = 0.0, and W_l + 0.0 = W_l
            pi[j] = -0.0
            continue
        w = np.exp(lp[j] - log_r)
        pi[j] = -w  # the pairs above j, as a lower item, carry w_j in all
        lvl[base + level[j], 3] += w
    # log U_l = log sum_{l' < l} W_l' / S_l' (prefix, log space): the weight per exp(-H)
    log_u = -np.inf
    for ll in range(k_q):
        e = base + ll
        w_l = lvl[e, 3]
        lvl[e, 3] = log_u
        if w_l > 0.0:
            c = np.log(w_l) - lvl[e, 0]
            log_u = log_add(log_u, c)
    for j in range(r0, r1):
        log_u_j = lvl[base + level[j], 3]
        if log_u_j > -np.inf:
            pi[j] += np.exp(log_u_j - H[j])


def _potential(  # noqa: PLR0917  numba driver: the unpacked state tuples
    level: np.ndarray,
    qstart: np.ndarray,
    lstart: np.ndarray,
    H: np.ndarray,
    lp: np.ndarray,
    log_r: float,
    lvl: np.ndarray,
    pi: np.ndarray,
) -> None:
    for q in prange(qstart.shape[0] - 1):
        _potential_query(np.int64(q), level, qstart, lstart, H, lp, log_r, lvl, pi)


_potential_serial, _potential_parallel = serial_and_parallel(_potential)


def layered_push_potential(  # noqa: PLR0917  wrapper of the layered kernel: its state, unpacked
    layout: Layout,
    H: np.ndarray,
    lp: np.ndarray,
    log_r: float,
    lvl: np.ndarray,
    pi: np.ndarray,
) -> None:
    """The potential of the push weights into ``pi``, from an evaluation at ``alpha = 0``.

    ``lvl`` column 0 must hold that evaluation's ``log S_l``; column 3 is overwritten.
    """
    level, qstart, lstart, _ = layout
    driver = _potential_parallel if use_parallel(4 * H.shape[0]) else _potential_serial
    driver(level, qstart, lstart, H, lp, float(log_r), lvl, pi)


@njit(cache=True)
def pair_push_eval(  # noqa: PLR0917  numba kernel: the unpacked pair state
    i0: np.ndarray,
    i1: np.ndarray,
    log_w: np.ndarray,
    H: np.ndarray,
    h: np.ndarray,
    alpha: float,
    p: float,
    lp: np.ndarray,
    s: np.ndarray,
    v: np.ndarray,
    rows: np.ndarray,
) -> None:
    """Per row: ``p log L_k`` and its derivatives, the losses scattered over the pairs."""
    n = H.shape[0]
    for k in range(n):
        rows[k, 0] = -np.inf
        rows[k, 1] = 0.0
        rows[k, 2] = 0.0
        rows[k, 3] = 0.0
    for j in range(i0.shape[0]):
        g = log_w[j] - H[i1[j]] - alpha * h[i1[j]]
        if g > rows[i0[j], 0]:
            rows[i0[j], 0] = g
    for j in range(i0.shape[0]):
        k = i0[j]
        i = i1[j]
        w = np.exp(log_w[j] - H[i] - alpha * h[i] - rows[k, 0])
        rows[k, 1] += w
        rows[k, 2] += w * h[i]
        rows[k, 3] += w * h[i] * h[i]
    for k in range(n):
        t0 = rows[k, 1]
        if t0 > 0.0:
            log_s = rows[k, 0] + np.log(t0)
            mean = rows[k, 2] / t0
            lp[k] = p * (H[k] + alpha * h[k] + log_s)
            s[k] = p * (h[k] - mean)
            v[k] = p * max(rows[k, 3] / t0 - mean * mean, 0.0)
            rows[k, 0] = log_s
        else:
            lp[k] = -np.inf
            s[k] = 0.0
            v[k] = 0.0


@njit(cache=True)
def pair_push_potential(  # noqa: PLR0917  numba kernel: the unpacked pair state
    i0: np.ndarray,
    i1: np.ndarray,
    log_w: np.ndarray,
    H: np.ndarray,
    lp: np.ndarray,
    log_r: float,
    rows: np.ndarray,
    pi: np.ndarray,
) -> None:
    """The potential of the push weights, from an evaluation at ``alpha = 0`` (``rows``)."""
    for k in range(H.shape[0]):
        pi[k] = 0.0
    for j in range(i0.shape[0]):
        k = i0[j]
        d = np.exp(lp[k] - log_r + log_w[j] - H[i1[j]] - rows[k, 0])
        pi[i1[j]] += d
        pi[k] -= d


@njit(cache=True)
def push_combine(lp: np.ndarray, s: np.ndarray, v: np.ndarray) -> tuple[float, float, float]:
    """``(log R_p, d log R_p / d alpha, d^2 log R_p / d alpha^2)`` from the per-row parts.

    ``log R_p = logsumexp(lp)``; with ``w = exp(lp - log R_p)``, the slope is
    ``sum w s`` and the curvature ``sum w (v + s^2) - (sum w s)^2`` (>= 0: convex).
    """
    top = -np.inf
    for j in range(lp.shape[0]):
        if lp[j] > top:
            top = lp[j]
    if top == -np.inf:
        return -np.inf, 0.0, 0.0
    total = 0.0
    d1 = 0.0
    d2 = 0.0
    for j in range(lp.shape[0]):
        if lp[j] > -np.inf:
            w = np.exp(lp[j] - top)
            total += w
            d1 += w * s[j]
            d2 += w * (v[j] + s[j] * s[j])
    d1 /= total
    d2 = d2 / total - d1 * d1
    return top + np.log(total), d1, max(d2, 0.0)


@njit(cache=True)
def push_log_sum(lp: np.ndarray) -> float:
    """``log R_p = logsumexp(lp)``: :func:`push_combine`'s first value, the same bits."""
    top = -np.inf
    for j in range(lp.shape[0]):
        if lp[j] > top:
            top = lp[j]
    if top == -np.inf:
        return -np.inf
    total = 0.0
    for j in range(lp.shape[0]):
        if lp[j] > -np.inf:
            total += np.exp(lp[j] - top)
    return top + np.log(total)
