"""Layered (graded) feedback in O(n + K) per query and round (SPEC section 3.3), in log space.

For a query q with levels l (local, 0..K_q-1) and crucial pairs (x0, x1) with
l(x0) < l(x1), the distribution after scores ``G`` is

    D(x0, x1) = c_q exp(G(x0) - G(x1)) / M,   M = sum_q c_q sum_{l0 < l1} A_l0 B_l1,

with level sums ``A_l = sum_{l(x)=l} exp(G(x))`` and ``B_l = sum_{l(x)=l} exp(-G(x))``.
Every sum is kept as a logarithm with a per-level shift (the level's largest term after an
exact refresh, its sum after a binary update), so no weight ever overflows or underflows to
a wrong value, whatever the number of rounds. The stored ``a = exp(H - shift_a)`` and
``b = exp(-H - shift_b)`` are therefore at most 1.

Arrays: rows of the support grouped by query (``qstart``), per-row local level ``level``,
per-query level blocks ``lstart`` (level ``l`` of query ``q`` sits at ``lstart[q] + l``),
``log_c`` per query (log of the initial pair weight).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import use_parallel
from .pairwise import _merge_counting_errors

_NEG_INF = -np.inf
#: Levels whose score spread (max H - min H) is below this get b = exp(-spread) / a (no
#: underflow: a >= exp(-spread) > 1e-260); wider levels use a second exp.
_SAFE_SPREAD = 600.0
#: Work weight of a row in the exp-heavy kernels, relative to one histogram add.
_EXP_WORK = 16


@njit(cache=True, inline="always")
def _lse2(a: float, b: float) -> float:
    """log(exp(a) + exp(b)) without overflow."""
    if a == _NEG_INF:
        return b
    if b == _NEG_INF:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


@njit(cache=True)
def _level_log_sums(
    G: np.ndarray,
    wa: np.ndarray,
    wb: np.ndarray,
    level: np.ndarray,
    lo: int,
    hi: int,
    base: int,
    k: int,
    log_a: np.ndarray,
    log_b: np.ndarray,
) -> None:
    """Per level of rows ``lo..hi``: ``log sum exp(G + wa)`` and ``log sum exp(-G + wb)``.

    ``wa``/``wb`` are per-row log weights (0 = weight 1, -inf = row left out), which give
    the h-split sums of the binary statistics and the h-weighted sums of dZ/dalpha.
    """
    for lv in range(k):
        log_a[base + lv] = _NEG_INF
        log_b[base + lv] = _NEG_INF
    for j in range(lo, hi):  # shifts: per-level maxima
        lv = base + level[j]
        ga = G[j] + wa[j]
        gb = wb[j] - G[j]
        if ga > log_a[lv]:
            log_a[lv] = ga
        if gb > log_b[lv]:
            log_b[lv] = gb
    sa = np.zeros(k)
    sb = np.zeros(k)
    for j in range(lo, hi):
        lv = level[j]
        ga = G[j] + wa[j]
        gb = wb[j] - G[j]
        if ga != _NEG_INF:
            sa[lv] += np.exp(ga - log_a[base + lv])
        if gb != _NEG_INF:
            sb[lv] += np.exp(gb - log_b[base + lv])
    for lv in range(k):
        if sa[lv] > 0.0:
            log_a[base + lv] += np.log(sa[lv])
        if sb[lv] > 0.0:
            log_b[base + lv] += np.log(sb[lv])


@njit(cache=True)
def _cross_log_mass(log_a: np.ndarray, log_b: np.ndarray, base: int, k: int) -> float:
    """Log sum_{l0 < l1} A_l0 B_l1 for one query."""
    prefix = _NEG_INF
    total = _NEG_INF
    for lv in range(k):
        if prefix != _NEG_INF and log_b[base + lv] != _NEG_INF:
            total = _lse2(total, prefix + log_b[base + lv])
        prefix = _lse2(prefix, log_a[base + lv])
    return total


@njit(cache=True)
def _layered_log_mass(
    G: np.ndarray,
    wa: np.ndarray,
    wb: np.ndarray,
    level: np.ndarray,
    qstart: np.ndarray,
    lstart: np.ndarray,
    log_c: np.ndarray,
    log_a: np.ndarray,
    log_b: np.ndarray,
    out_log_mass: np.ndarray,
) -> None:
    """Per query: ``log(c_q sum_{l0<l1} A_l0 B_l1)`` for scores ``G``.

    ``wa`` and ``wb`` are row log weights of the lower member x0 and the upper member x1.
    Used for Z at a candidate alpha (line search) and the binary statistics; the round itself
    runs ``layered_binary_update`` (binary rankers) or ``layered_refresh`` (real-valued ones,
    and every ``_EXACT_EVERY`` rounds).
    """
    n_queries = qstart.shape[0] - 1
    for q in range(n_queries):
        lo = qstart[q]
        hi = qstart[q + 1]
        base = lstart[q]
        k = lstart[q + 1] - base
        _level_log_sums(G, wa, wb, level, lo, hi, base, k, log_a, log_b)
        out_log_mass[q] = log_c[q] + _cross_log_mass(log_a, log_b, base, k)


@njit(cache=True)
def _refresh_query(
    H: np.ndarray,
    h: np.ndarray,
    alpha: float,
    level: np.ndarray,
    qstart: np.ndarray,
    lstart: np.ndarray,
    log_c: np.ndarray,
    shift_a: np.ndarray,
    shift_b: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    log_a: np.ndarray,
    log_b: np.ndarray,
    out_log_mass: np.ndarray,
    q: int,
) -> None:
    lo = qstart[q]
    hi = qstart[q + 1]
    base = lstart[q]
    k = lstart[q + 1] - base
    for lv in range(base, base + k):
        shift_a[lv] = _NEG_INF
        shift_b[lv] = _NEG_INF
    for j in range(lo, hi):
        if alpha != 0.0:
            H[j] += alpha * h[j]
        lv = base + level[j]
        g = H[j]
        if g > shift_a[lv]:
            shift_a[lv] = g
        if -g > shift_b[lv]:
            shift_b[lv] = -g
    for lv in range(base, base + k):
        log_a[lv] = 0.0
        log_b[lv] = 0.0
    for j in range(lo, hi):
        lv = base + level[j]
        g = H[j]
        aj = np.exp(g - shift_a[lv])
        spread = shift_a[lv] + shift_b[lv]  # max H - min H on the level, >= 0
        if spread < _SAFE_SPREAD:
            # a b = exp(-spread) on a level: one division instead of a second exp
            bj = np.exp(-spread) / aj
        else:
            bj = np.exp(-g - shift_b[lv])
        a[j] = aj
        b[j] = bj
        log_a[lv] += aj
        log_b[lv] += bj
    for lv in range(base, base + k):
        log_a[lv] = shift_a[lv] + np.log(log_a[lv])
        log_b[lv] = shift_b[lv] + np.log(log_b[lv])
    out_log_mass[q] = log_c[q] + _cross_log_mass(log_a, log_b, base, k)


@njit(cache=True)
def _layered_refresh_serial(
    H: np.ndarray, h: np.ndarray, alpha: float, level: np.ndarray, qstart: np.ndarray,
    lstart: np.ndarray, log_c: np.ndarray, shift_a: np.ndarray, shift_b: np.ndarray,
    a: np.ndarray, b: np.ndarray, log_a: np.ndarray, log_b: np.ndarray,
    out_log_mass: np.ndarray,
) -> None:  # fmt: skip
    for q in range(qstart.shape[0] - 1):
        _refresh_query(
            H, h, alpha, level, qstart, lstart, log_c, shift_a, shift_b, a, b, log_a, log_b,
            out_log_mass, q,
        )  # fmt: skip


@njit(cache=True, parallel=True)
def _layered_refresh_parallel(
    H: np.ndarray, h: np.ndarray, alpha: float, level: np.ndarray, qstart: np.ndarray,
    lstart: np.ndarray, log_c: np.ndarray, shift_a: np.ndarray, shift_b: np.ndarray,
    a: np.ndarray, b: np.ndarray, log_a: np.ndarray, log_b: np.ndarray,
    out_log_mass: np.ndarray,
) -> None:  # fmt: skip
    for q in prange(qstart.shape[0] - 1):
        _refresh_query(
            H, h, alpha, level, qstart, lstart, log_c, shift_a, shift_b, a, b, log_a, log_b,
            out_log_mass, q,
        )  # fmt: skip


def layered_refresh(
    H: np.ndarray, h: np.ndarray, alpha: float, level: np.ndarray, qstart: np.ndarray,
    lstart: np.ndarray, log_c: np.ndarray, shift_a: np.ndarray, shift_b: np.ndarray,
    a: np.ndarray, b: np.ndarray, log_a: np.ndarray, log_b: np.ndarray,
    out_log_mass: np.ndarray,
) -> None:  # fmt: skip
    """One round's update and per-query statistics, in two passes over the rows.

    Pass 1 applies ``H += alpha h`` (skipped when ``alpha == 0``) and finds the per-level
    shifts ``shift_a = max H`` and ``shift_b = max -H``; pass 2 stores
    ``a = exp(H - shift_a)`` and ``b = exp(-H - shift_b)`` (both in (0, 1]) and their level
    sums; then ``log_a``, ``log_b`` and each query's ``log(c_q sum_{l0<l1} A_l0 B_l1)``.
    Queries are independent, so both drivers give the same bits.
    """
    kernel = (
        _layered_refresh_parallel
        if use_parallel(_EXP_WORK * H.shape[0])
        else _layered_refresh_serial
    )
    kernel(
        H, h, alpha, level, qstart, lstart, log_c, shift_a, shift_b, a, b, log_a, log_b,
        out_log_mass,
    )  # fmt: skip


@njit(cache=True, inline="always")
def _level_potential_factors(
    log_a: np.ndarray, log_b: np.ndarray, shift_a: np.ndarray, shift_b: np.ndarray,
    shift: float, base: int, k: int, up: np.ndarray, down: np.ndarray,
) -> None:  # fmt: skip
    """Per-level potential factors of one query, so that ``pi = up_l b - down_l a``.

    ``up_l = e^shift sum_{l' < l} A_l' e^shift_b[l]``,
    ``down_l = e^shift sum_{l' > l} B_l' e^shift_a[l]``.
    """
    acc = _NEG_INF
    for lv in range(base, base + k):  # log sum_{l' < l} A_l'
        up[lv] = 0.0 if acc == _NEG_INF else np.exp(shift + acc + shift_b[lv])
        acc = _lse2(acc, log_a[lv])
    acc = _NEG_INF
    for lv in range(base + k - 1, base - 1, -1):  # log sum_{l' > l} B_l'
        down[lv] = 0.0 if acc == _NEG_INF else np.exp(shift + acc + shift_a[lv])
        acc = _lse2(acc, log_b[lv])


#: Largest spread (in log units) of a query's level sums for which its mass and potential
#: factors are computed in linear space (products of two relative sums stay >= e^-600,
#: far from underflow); wider queries take the log-space route.
_LINEAR_SPAN = 300.0


@njit(cache=True, inline="always")
def _query_mass_and_factors(
    log_a: np.ndarray, log_b: np.ndarray, log_c_q: float, log_total: float, base: int,
    k: int, rel: np.ndarray, up: np.ndarray, down: np.ndarray, out_log_mass: np.ndarray,
    q: int,
) -> None:  # fmt: skip
    """One query's ``log(c_q sum_{l0<l1} A_l0 B_l1)`` and its ``up``, ``down`` factors.

    For level sums normalised to 1 (``shift_a = log_a``, ``shift_b = log_b``, as after a
    binary update). In linear space relative to the query's largest ``A_l`` and ``B_l`` when
    every level sum is within ``_LINEAR_SPAN`` of them: 2K + 2 exp/log per query instead of
    about 12K in log space, the same values to rounding. ``rel`` (K x 2 scratch) holds the
    relative sums.
    """
    top_a = log_a[base]
    low_a = log_a[base]
    top_b = log_b[base]
    low_b = log_b[base]
    for lv in range(base + 1, base + k):
        top_a = max(top_a, log_a[lv])
        low_a = min(low_a, log_a[lv])
        top_b = max(top_b, log_b[lv])
        low_b = min(low_b, log_b[lv])
    if top_a - low_a > _LINEAR_SPAN or top_b - low_b > _LINEAR_SPAN:
        out_log_mass[q] = log_c_q + _cross_log_mass(log_a, log_b, base, k)
        _level_potential_factors(log_a, log_b, log_a, log_b, log_c_q - log_total, base, k, up, down)
        return
    cross = 0.0
    prefix = 0.0
    for lv in range(base, base + k):
        rel[lv, 0] = np.exp(log_a[lv] - top_a)  # A_l / max A
        rel[lv, 1] = np.exp(log_b[lv] - top_b)  # B_l / max B
        cross += prefix * rel[lv, 1]
        prefix += rel[lv, 0]
    out_log_mass[q] = log_c_q + top_a + top_b + np.log(cross)  # cross >= e^-600
    # c_q e^(top_a + top_b) / M = (M_q / M) / cross <= e^600 / Z: no overflow
    scale = np.exp(log_c_q - log_total + top_a + top_b)
    prefix = 0.0
    for lv in range(base, base + k):  # up_l = c_q / M sum_{l' < l} A_l' B_l
        up[lv] = scale * prefix * rel[lv, 1]
        prefix += rel[lv, 0]
    suffix = 0.0
    for lv in range(base + k - 1, base - 1, -1):  # down_l = c_q / M sum_{l' > l} B_l' A_l
        down[lv] = scale * suffix * rel[lv, 0]
        suffix += rel[lv, 1]


@njit(cache=True)
def _binary_update_query(
    H: np.ndarray, h: np.ndarray, alpha: float, level: np.ndarray, qstart: np.ndarray,
    lstart: np.ndarray, log_c: np.ndarray, shift_a: np.ndarray, shift_b: np.ndarray,
    a: np.ndarray, b: np.ndarray, log_a: np.ndarray, log_b: np.ndarray, fac: np.ndarray,
    out_log_mass: np.ndarray, log_total: float, up: np.ndarray, down: np.ndarray,
    out_pi: np.ndarray, order: np.ndarray, tmp: np.ndarray, scratch: np.ndarray,
    out_errors: np.ndarray, q: int,
) -> None:  # fmt: skip
    lo = qstart[q]
    hi = qstart[q + 1]
    base = lstart[q]
    k = lstart[q + 1] - base
    # 1. H += alpha h, and the level sums of a and b split by h
    for lv in range(base, base + k):
        for c in range(4):
            fac[lv, c] = 0.0
    for j in range(lo, hi):
        lv = base + level[j]
        hj = h[j]  # exactly 0 or 1 (uint8 or float): branch-free arithmetic below
        H[j] += alpha * hj
        o = int(hj)
        fac[lv, o] += a[j]
        fac[lv, 2 + o] += b[j]
    # 2. A_l = A_l^0 + e^alpha A_l^1 (B_l with e^-alpha); the shifts move to the new level
    # sums, so a and b sum to 1 on each level, and fac turns into the factors that take
    # them there: (h = 0, h = 1) for a, then for b
    ea = np.exp(alpha)
    eb = np.exp(-alpha)
    for lv in range(base, base + k):
        sa = fac[lv, 0] + fac[lv, 1] * ea
        sb = fac[lv, 2] + fac[lv, 3] * eb
        log_a[lv] = shift_a[lv] + np.log(sa)
        log_b[lv] = shift_b[lv] + np.log(sb)
        shift_a[lv] = log_a[lv]
        shift_b[lv] = log_b[lv]
        fac[lv, 0] = 1.0 / sa
        fac[lv, 1] = ea / sa
        fac[lv, 2] = 1.0 / sb
        fac[lv, 3] = eb / sb
    # 3. the query's log mass and the potential factors (relative to the old total mass)
    _query_mass_and_factors(
        log_a, log_b, log_c[q], log_total, base, k, fac[:, 4:], up, down, out_log_mass, q
    )
    # 4. a, b at the new shifts, and the next potential
    for j in range(lo, hi):
        lv = base + level[j]
        o = int(h[j])
        aj = a[j] * fac[lv, o]
        bj = b[j] * fac[lv, 2 + o]
        a[j] = aj
        b[j] = bj
        out_pi[j] = up[lv] * bj - down[lv] * aj
    # 5. the rows in increasing H again (one merge) and the training errors (ties count)
    out_errors[q] = _merge_counting_errors(
        H, h, level, order, tmp, lo, hi, k, scratch, 2 * base + q
    )


@njit(cache=True)
def _binary_update_serial(
    H: np.ndarray, h: np.ndarray, alpha: float, level: np.ndarray, qstart: np.ndarray,
    lstart: np.ndarray, log_c: np.ndarray, shift_a: np.ndarray, shift_b: np.ndarray,
    a: np.ndarray, b: np.ndarray, log_a: np.ndarray, log_b: np.ndarray, fac: np.ndarray,
    out_log_mass: np.ndarray, log_total: float, up: np.ndarray, down: np.ndarray,
    out_pi: np.ndarray, order: np.ndarray, tmp: np.ndarray, scratch: np.ndarray,
    out_errors: np.ndarray,
) -> None:  # fmt: skip
    for q in range(qstart.shape[0] - 1):
        _binary_update_query(
            H, h, alpha, level, qstart, lstart, log_c, shift_a, shift_b, a, b, log_a, log_b,
            fac, out_log_mass, log_total, up, down, out_pi, order, tmp, scratch, out_errors,
            q,
        )  # fmt: skip


@njit(cache=True, parallel=True)
def _binary_update_parallel(
    H: np.ndarray, h: np.ndarray, alpha: float, level: np.ndarray, qstart: np.ndarray,
    lstart: np.ndarray, log_c: np.ndarray, shift_a: np.ndarray, shift_b: np.ndarray,
    a: np.ndarray, b: np.ndarray, log_a: np.ndarray, log_b: np.ndarray, fac: np.ndarray,
    out_log_mass: np.ndarray, log_total: float, up: np.ndarray, down: np.ndarray,
    out_pi: np.ndarray, order: np.ndarray, tmp: np.ndarray, scratch: np.ndarray,
    out_errors: np.ndarray,
) -> None:  # fmt: skip
    for q in prange(qstart.shape[0] - 1):
        _binary_update_query(
            H, h, alpha, level, qstart, lstart, log_c, shift_a, shift_b, a, b, log_a, log_b,
            fac, out_log_mass, log_total, up, down, out_pi, order, tmp, scratch, out_errors,
            q,
        )  # fmt: skip


def layered_binary_update(
    H: np.ndarray, h: np.ndarray, alpha: float, level: np.ndarray, qstart: np.ndarray,
    lstart: np.ndarray, log_c: np.ndarray, shift_a: np.ndarray, shift_b: np.ndarray,
    a: np.ndarray, b: np.ndarray, log_a: np.ndarray, log_b: np.ndarray, fac: np.ndarray,
    out_log_mass: np.ndarray, log_total: float, up: np.ndarray, down: np.ndarray,
    out_pi: np.ndarray, order: np.ndarray, tmp: np.ndarray, scratch: np.ndarray,
    out_errors: np.ndarray,
) -> None:  # fmt: skip
    """The whole state change of a round with a binary ``h``, one sweep per query, no exp per row.

    1. ``H += alpha h``. 2. The new level sums follow from the old ``a``, ``b`` split by ``h``
    (``A_l = A_l^0 + e^alpha A_l^1``, ``B_l = B_l^0 + e^-alpha B_l^1``), and each query's log
    mass from them; the shifts move to the new level sums (``a``, ``b`` then sum to 1 on every
    level: each <= 1, and no row that matters underflows). 3. ``a``, ``b`` are rescaled to the
    new shifts and the next round's potential is written to ``out_pi``, **relative to the
    total mass before the update** (``log_total``): the true potential is ``out_pi / Z``,
    which the caller applies to the histogram (a scalar per round instead of a pass over the
    rows). 4. ``order`` (the query's rows in increasing H) is restored by one merge, which
    also counts the misordered-or-tied crucial pairs into ``out_errors``.
    ``fac`` (K x 6), ``up``, ``down`` (K), ``tmp`` (n) and ``scratch`` (2K + n_queries) are
    scratch: query ``q`` owns its levels' rows, ``tmp[lo:hi]`` and
    ``scratch[2 lstart[q] + q:][:2 K_q + 1]``.
    """
    kernel = _binary_update_parallel if use_parallel(4 * H.shape[0]) else _binary_update_serial
    kernel(
        H, h, alpha, level, qstart, lstart, log_c, shift_a, shift_b, a, b, log_a, log_b, fac,
        out_log_mass, log_total, up, down, out_pi, order, tmp, scratch, out_errors,
    )  # fmt: skip


@njit(cache=True)
def _potential_query(
    a: np.ndarray, b: np.ndarray, level: np.ndarray, qstart: np.ndarray, lstart: np.ndarray,
    log_c: np.ndarray, shift_a: np.ndarray, shift_b: np.ndarray, log_a: np.ndarray,
    log_b: np.ndarray, log_total: float, up: np.ndarray, down: np.ndarray,
    out_pi: np.ndarray, q: int,
) -> None:  # fmt: skip
    lo = qstart[q]
    hi = qstart[q + 1]
    base = lstart[q]
    k = lstart[q + 1] - base
    _level_potential_factors(
        log_a, log_b, shift_a, shift_b, log_c[q] - log_total, base, k, up, down
    )
    for j in range(lo, hi):
        lv = base + level[j]
        out_pi[j] = up[lv] * b[j] - down[lv] * a[j]


@njit(cache=True)
def _potential_serial(
    a: np.ndarray, b: np.ndarray, level: np.ndarray, qstart: np.ndarray, lstart: np.ndarray,
    log_c: np.ndarray, shift_a: np.ndarray, shift_b: np.ndarray, log_a: np.ndarray,
    log_b: np.ndarray, log_total: float, up: np.ndarray, down: np.ndarray,
    out_pi: np.ndarray,
) -> None:  # fmt: skip
    for q in range(qstart.shape[0] - 1):
        _potential_query(
            a, b, level, qstart, lstart, log_c, shift_a, shift_b, log_a, log_b, log_total,
            up, down, out_pi, q,
        )  # fmt: skip


@njit(cache=True, parallel=True)
def _potential_parallel(
    a: np.ndarray, b: np.ndarray, level: np.ndarray, qstart: np.ndarray, lstart: np.ndarray,
    log_c: np.ndarray, shift_a: np.ndarray, shift_b: np.ndarray, log_a: np.ndarray,
    log_b: np.ndarray, log_total: float, up: np.ndarray, down: np.ndarray,
    out_pi: np.ndarray,
) -> None:  # fmt: skip
    for q in prange(qstart.shape[0] - 1):
        _potential_query(
            a, b, level, qstart, lstart, log_c, shift_a, shift_b, log_a, log_b, log_total,
            up, down, out_pi, q,
        )  # fmt: skip


def layered_potential(
    a: np.ndarray, b: np.ndarray, level: np.ndarray, qstart: np.ndarray, lstart: np.ndarray,
    log_c: np.ndarray, shift_a: np.ndarray, shift_b: np.ndarray, log_a: np.ndarray,
    log_b: np.ndarray, log_total: float, up: np.ndarray, down: np.ndarray,
    out_pi: np.ndarray,
) -> None:  # fmt: skip
    """pi(x) = sum_x' D(x', x) - D(x, x') from the stored ``a``, ``b``.

    pi(x) = c_q / M [exp(-H(x)) sum_{l' < l(x)} A_l' - exp(H(x)) sum_{l' > l(x)} B_l'], i.e.
    ``up_l b(x) - down_l a(x)`` with per-level factors ``up_l``, ``down_l``: the potential
    terms of the level's extreme rows, each a sum of pair weights, so at most 1 (no overflow).
    After a binary update the potential comes out of ``layered_binary_update`` instead.
    """
    kernel = _potential_parallel if use_parallel(4 * a.shape[0]) else _potential_serial
    kernel(
        a, b, level, qstart, lstart, log_c, shift_a, shift_b, log_a, log_b, log_total, up,
        down, out_pi,
    )  # fmt: skip
