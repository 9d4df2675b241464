"""Layered (graded) feedback in O(n + K) per query and round, in log space.

The paper's section 3.3 factorises bipartite feedback; the same holds level by level.

For a query q with levels l (local, 0..K_q-1) and crucial pairs (x0, x1) with
l(x0) < l(x1), the distribution after scores ``H`` is

    D(x0, x1) = c_q exp(H(x0) - H(x1)) / M,   M = sum_q M_q,   M_q = c_q sum_{l0 < l1} A_l0 B_l1,

with level sums ``A_l = sum_{l(x)=l} exp(H(x))`` and ``B_l = sum_{l(x)=l} exp(-H(x))``, and
the potential ``pi(x) = sum_x' D(x', x) - D(x, x')``. Every sum is kept as a logarithm with
a per-level shift (the level's largest term after an exact refresh, its sum after a binary
update), so no weight ever overflows or underflows to a wrong value, whatever the number of
rounds. The stored ``a = exp(H - shift_a)`` and ``b = exp(-H - shift_b)`` are therefore at
most 1.

The state of a block of whole queries, as the kernels take it: ``n`` rows grouped by query
(each query's rows by increasing level), ``Q`` queries, ``L = sum_q K_q`` levels. Arrays are
float64 and C-contiguous unless stated.

``layout = (level, qstart, lstart, log_c)``: which rows and levels belong to which query.
    ``level``   int64 (n,)     the row's local level, 0..K_q-1.
    ``qstart``  int64 (Q + 1,) query q's rows are ``qstart[q]:qstart[q + 1]``.
    ``lstart``  int64 (Q + 1,) level l of query q is entry ``lstart[q] + l`` of a per-level
                array (``K_q = lstart[q + 1] - lstart[q]``).
    ``log_c``   (Q,)           log c_q, the initial weight of each of q's crucial pairs.
``rows = (H, a, b, order)``: per-row state.
    ``H``       (n,)           the scores.
    ``a``, ``b`` (n,)          ``exp(H - shift_a[level])``, ``exp(-H - shift_b[level])``.
    ``order``   int32 or int64 (n,) each query's rows in the kept order (increasing H, then
                decreasing level: ``_kernels.pairwise``).
``levels = (shift_a, shift_b, log_a, log_b)``: per-level state, (L,) each.
    ``shift_a``, ``shift_b``   the shifts of ``a`` and ``b``.
    ``log_a``, ``log_b``       ``log A_l`` and ``log B_l``.
``factors = (up, down)``: the per-level potential factors, (L,) each, so that
``pi(x) = up_l b(x) - down_l a(x)``; written by the kernels that write ``pi``.
``scratch = (fac, tmp, tree)``: the binary update's work space, undefined between calls.
    ``fac``     (L, 6)         the binary update's split level sums, then its factors (columns
                0-3) and the relative level sums (columns 4-5).
    ``tmp``     ``order``'s dtype (n,) the merge buffer.
    ``tree``    (2L + Q,)      query q's Fenwick tree and counters at ``2 lstart[q] + q``.
``out = (log_mass, pi, errors)``: results.
    ``log_mass`` (Q,)          ``log M_q``.
    ``pi``      (n,)           the potential (after a binary update: relative to the mass
                before it, see ``layered_binary_update``).
    ``errors``  (Q,)           misordered-or-tied crucial pairs of each query.

Query q only touches its own rows, levels and tree slice, so queries run in parallel. A
kernel takes only the tuples it uses: every array passed costs the per-query call its
fields (about 7% of the potential's time for three unused arrays).

Each kernel that loops over queries is a per-query body ``_x_query`` and a driver ``_x``
(a ``prange`` over the queries), compiled from that one source as ``_x_serial`` and
``_x_parallel`` (``serial_and_parallel``); the public wrapper picks one by the work.
Queries are independent, so both give the same bits.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import serial_and_parallel, use_parallel
from .pairwise import counting_merge, finish_counts

#: ``(level, qstart, lstart, log_c)``, see the module docstring.
Layout = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
#: ``(H, a, b, order)``.
Rows = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
#: ``(shift_a, shift_b, log_a, log_b)``.
Levels = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
#: ``(up, down)``.
Factors = tuple[np.ndarray, np.ndarray]
#: ``(fac, tmp, tree)``.
Scratch = tuple[np.ndarray, np.ndarray, np.ndarray]
#: ``(log_mass, pi, errors)``.
Out = tuple[np.ndarray, np.ndarray, np.ndarray]

_NEG_INF = -np.inf
#: Levels whose score spread (max H - min H) is below this get b = exp(-spread) / a (no
#: underflow: a >= exp(-spread) > 1e-260); wider levels use a second exp.
_SAFE_SPREAD = 600.0
#: Work weight of a row in the exp-heavy kernels, relative to one histogram add.
_EXP_WORK = 16


@njit(cache=True)  # not inline: see rankboost._kernels
def _lse2(a: float, b: float) -> float:
    """log(exp(a) + exp(b)) without overflow."""
    if a == _NEG_INF:
        return b
    if b == _NEG_INF:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


# --------------------------------------------------------------------------- Z and W at any G


@njit(cache=True)
def _level_log_sums(
    G: np.ndarray, wa: np.ndarray, wb: np.ndarray, layout: Layout, q: int,
    sums: tuple[np.ndarray, np.ndarray],
) -> None:  # fmt: skip
    """Query q's ``log A_l = log sum_{l(x)=l} exp(G + wa)`` and ``log B_l`` (with ``-G + wb``).

    ``wa``/``wb`` (n,) are per-row log weights (0 = weight 1, -inf = row left out), which
    give the h-split sums of the binary statistics (``A_l^0``, ``A_l^1``, ...) and the
    h-weighted sums of dZ/dalpha. Written to ``sums = (log_a, log_b)`` (L,) at q's levels;
    each level's largest term is its shift.
    """
    level, qstart, lstart = layout[0], layout[1], layout[2]
    log_a, log_b = sums
    lo = qstart[q]
    hi = qstart[q + 1]
    base = lstart[q]
    k = lstart[q + 1] - base
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
    """``log sum_{l0 < l1} A_l0 B_l1 = log sum_l P_l B_l`` with ``P_l = sum_{l' < l} A_l'``.

    For the ``k`` levels at ``base`` of the per-level ``log_a``, ``log_b``; O(K), in log space.
    """
    prefix = _NEG_INF
    total = _NEG_INF
    for lv in range(k):
        if prefix != _NEG_INF and log_b[base + lv] != _NEG_INF:
            total = _lse2(total, prefix + log_b[base + lv])
        prefix = _lse2(prefix, log_a[base + lv])
    return total


@njit(cache=True)
def layered_log_mass(
    G: np.ndarray, wa: np.ndarray, wb: np.ndarray, layout: Layout,
    sums: tuple[np.ndarray, np.ndarray], out_log_mass: np.ndarray,
) -> None:  # fmt: skip
    """Per query: ``log(c_q sum_{l0<l1} A_l0 B_l1)`` for scores ``G`` (Z and W).

    ``A_l = sum_{l(x0)=l} exp(G(x0) + wa(x0))``, ``B_l = sum_{l(x1)=l} exp(-G(x1) + wb(x1))``:
    ``wa`` and ``wb`` (n,) are row log weights of the lower member x0 and the upper member
    x1. With ``G = H + alpha h`` and no weights it is ``log M_q`` at a candidate alpha (the
    line search's Z); with ``wa``, ``wb`` = log h or log(1 - h) it is a binary statistic
    (``W_- = sum c_q A^0_l0 B^1_l1``, ...) or a slope of Z. ``sums = (log_a, log_b)`` (L,)
    are scratch; ``out_log_mass`` (Q,) is written. The round itself runs
    ``layered_binary_update`` (binary rankers) or ``layered_refresh`` (real-valued ones, and
    every ``_EXACT_EVERY`` rounds).
    """
    qstart, lstart, log_c = layout[1], layout[2], layout[3]
    log_a, log_b = sums
    for q in range(qstart.shape[0] - 1):
        _level_log_sums(G, wa, wb, layout, q, sums)
        base = lstart[q]
        out_log_mass[q] = log_c[q] + _cross_log_mass(log_a, log_b, base, lstart[q + 1] - base)


# --------------------------------------------------------------------------- exact refresh


@njit(cache=True)
def _refresh_query(
    h: np.ndarray, alpha: float, layout: Layout, rows: Rows, levels: Levels,
    out_log_mass: np.ndarray, q: int,
) -> None:  # fmt: skip
    """``layered_refresh`` for query q."""
    level, qstart, lstart, log_c = layout
    H, a, b = rows[0], rows[1], rows[2]
    shift_a, shift_b, log_a, log_b = levels
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


def _refresh(
    h: np.ndarray, alpha: float, layout: Layout, rows: Rows, levels: Levels,
    out_log_mass: np.ndarray,
) -> None:  # fmt: skip
    for q in prange(layout[1].shape[0] - 1):
        _refresh_query(h, alpha, layout, rows, levels, out_log_mass, np.int64(q))


_refresh_serial, _refresh_parallel = serial_and_parallel(_refresh)


def layered_refresh(
    h: np.ndarray, alpha: float, layout: Layout, rows: Rows, levels: Levels,
    out_log_mass: np.ndarray,
) -> None:  # fmt: skip
    """``H += alpha h`` and the exact per-query statistics, in two passes over the rows.

    Pass 1 applies ``H += alpha h`` to ``rows``' H (skipped when ``alpha == 0``; ``h`` (n,)
    float64) and finds the per-level shifts ``shift_a = max H`` and ``shift_b = max -H``;
    pass 2 stores ``a = exp(H - shift_a)`` and ``b = exp(-H - shift_b)`` (both in (0, 1]) and
    their level sums. Then ``levels``' ``log_a``, ``log_b`` (``log A_l``, ``log B_l``) and
    ``out_log_mass[q] = log(c_q sum_{l0<l1} A_l0 B_l1) = log M_q`` (the total mass).
    ``order`` is not touched. Shapes and dtypes: the module docstring.
    """
    driver = _refresh_parallel if use_parallel(_EXP_WORK * rows[0].shape[0]) else _refresh_serial
    driver(h, alpha, layout, rows, levels, out_log_mass)


# --------------------------------------------------------------------------- potential


@njit(cache=True)  # not inline: see rankboost._kernels
def _level_potential_factors(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    log_a: np.ndarray, log_b: np.ndarray, shift_a: np.ndarray, shift_b: np.ndarray,
    shift: float, base: int, k: int, up: np.ndarray, down: np.ndarray,
) -> None:  # fmt: skip
    """Per-level potential factors of one query, so that ``pi = up_l b - down_l a``.

    ``up_l = e^shift sum_{l' < l} A_l' e^shift_b[l]``,
    ``down_l = e^shift sum_{l' > l} B_l' e^shift_a[l]``, for the ``k`` levels at ``base``
    (``shift = log c_q - log M``), in log space.
    """
    acc = _NEG_INF
    for lv in range(base, base + k):  # log sum_{l' < l} A_l'
        up[lv] = 0.0 if acc == _NEG_INF else np.exp(shift + acc + shift_b[lv])
        acc = _lse2(acc, log_a[lv])
    acc = _NEG_INF
    for lv in range(base + k - 1, base - 1, -1):  # log sum_{l' > l} B_l'
        down[lv] = 0.0 if acc == _NEG_INF else np.exp(shift + acc + shift_a[lv])
        acc = _lse2(acc, log_b[lv])


@njit(cache=True)
def _potential_query(
    log_total: float, layout: Layout, rows: Rows, levels: Levels, factors: Factors,
    out_pi: np.ndarray, q: int,
) -> None:  # fmt: skip
    """``layered_potential`` for query q."""
    level, qstart, lstart, log_c = layout
    a, b = rows[1], rows[2]
    shift_a, shift_b, log_a, log_b = levels
    up, down = factors
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


def _potential(
    log_total: float, layout: Layout, rows: Rows, levels: Levels, factors: Factors,
    out_pi: np.ndarray,
) -> None:  # fmt: skip
    for q in prange(layout[1].shape[0] - 1):
        _potential_query(log_total, layout, rows, levels, factors, out_pi, np.int64(q))


_potential_serial, _potential_parallel = serial_and_parallel(_potential)


def layered_potential(
    log_total: float, layout: Layout, rows: Rows, levels: Levels, factors: Factors,
    out_pi: np.ndarray,
) -> None:  # fmt: skip
    """``out_pi = pi(x) = sum_x' D(x', x) - D(x, x')`` from the stored ``a``, ``b``.

    ``pi(x) = c_q / M [b(x) sum_{l' < l(x)} A_l' - a(x) sum_{l' > l(x)} B_l']``
    (with ``a``, ``b`` and the level sums at their shifts), i.e. ``up_l b(x) - down_l a(x)``
    with per-level factors ``up_l``, ``down_l`` (written to ``factors``): the
    potential terms of the level's extreme rows, each a sum of pair weights, so at most 1 (no
    overflow). ``log_total = log M``. After a binary update the potential comes out of
    ``layered_binary_update`` instead.
    """
    driver = _potential_parallel if use_parallel(4 * rows[1].shape[0]) else _potential_serial
    driver(log_total, layout, rows, levels, factors, out_pi)


# --------------------------------------------------------------------------- binary update

#: Largest spread (in log units) of a query's level sums for which its mass and potential
#: factors are computed in linear space (products of two relative sums stay >= e^-600,
#: far from underflow); wider queries take the log-space route.
_LINEAR_SPAN = 300.0


@njit(cache=True)  # not inline: see rankboost._kernels
def _query_mass_and_factors(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    log_a: np.ndarray, log_b: np.ndarray, base: int, k: int, log_c_q: float,
    log_total: float, rel: np.ndarray, up: np.ndarray, down: np.ndarray,
) -> float:  # fmt: skip
    """One query's ``log(c_q sum_{l0<l1} A_l0 B_l1)`` (returned) and its ``up``, ``down``.

    For level sums normalised to 1 (``shift_a = log_a``, ``shift_b = log_b``, as after a
    binary update), the ``k`` levels at ``base``: ``up_l = c_q / M sum_{l' < l} A_l' B_l``
    and ``down_l = c_q / M sum_{l' > l} B_l' A_l`` with ``M = exp(log_total)``. In linear
    space relative to the query's largest ``A_l`` and ``B_l`` when every level sum is within
    ``_LINEAR_SPAN`` of them: 2K + 2 exp/log per query instead of about 12K in log space, the
    same values to rounding. ``rel`` (L x 2 scratch) holds the relative sums.
    """
    top_a = log_a[base]
    low_a = log_a[base]
    top_b = log_b[base]
    low_b = log_b[base]
    for lv in range(base + 1, base + k):  # max() and min() as numba has them (v > acc: v)
        va = log_a[lv]
        vb = log_b[lv]
        top_a = va if va > top_a else top_a
        low_a = va if va < low_a else low_a
        top_b = vb if vb > top_b else top_b
        low_b = vb if vb < low_b else low_b
    if top_a - low_a > _LINEAR_SPAN or top_b - low_b > _LINEAR_SPAN:
        log_mass = log_c_q + _cross_log_mass(log_a, log_b, base, k)
        _level_potential_factors(log_a, log_b, log_a, log_b, log_c_q - log_total, base, k, up, down)
        return log_mass
    cross = 0.0
    prefix = 0.0
    for lv in range(base, base + k):
        rel[lv, 0] = np.exp(log_a[lv] - top_a)  # A_l / max A
        rel[lv, 1] = np.exp(log_b[lv] - top_b)  # B_l / max B
        cross += prefix * rel[lv, 1]
        prefix += rel[lv, 0]
    log_mass = log_c_q + top_a + top_b + np.log(cross)  # cross >= e^-600
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
    return log_mass


@njit(cache=True)
def _binary_update_query(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    h: np.ndarray, alpha: float, log_total: float, layout: Layout, rows: Rows,
    levels: Levels, factors: Factors, scratch: Scratch, out: Out, q: int,
) -> None:  # fmt: skip
    """``layered_binary_update`` for query q."""
    level, qstart, lstart, log_c = layout
    H, a, b, order = rows
    shift_a, shift_b, log_a, log_b = levels
    up, down = factors
    fac, tmp, tree = scratch
    out_log_mass, out_pi, out_errors = out
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
        o = np.int64(hj)  # int(), without compiling its overload
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
    out_log_mass[q] = _query_mass_and_factors(
        log_a, log_b, base, k, log_c[q], log_total, fac[:, 4:], up, down
    )
    # 4. a, b at the new shifts, and the next potential
    for j in range(lo, hi):
        lv = base + level[j]
        o = np.int64(h[j])
        aj = a[j] * fac[lv, o]
        bj = b[j] * fac[lv, 2 + o]
        a[j] = aj
        b[j] = bj
        out_pi[j] = up[lv] * bj - down[lv] * aj
    # 5. the rows in increasing H again (one merge) and the training errors (ties count);
    # a query with many levels or a rounding tie is flagged, for finish_counts
    out_errors[q] = counting_merge(H, h, level, order, tmp, lo, hi, k)


def _binary_update(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    h: np.ndarray, alpha: float, log_total: float, layout: Layout, rows: Rows,
    levels: Levels, factors: Factors, scratch: Scratch, out: Out,
) -> None:  # fmt: skip
    for q in prange(layout[1].shape[0] - 1):
        _binary_update_query(
            h, alpha, log_total, layout, rows, levels, factors, scratch, out, np.int64(q)
        )


_binary_update_serial, _binary_update_parallel = serial_and_parallel(_binary_update)


def layered_binary_update(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    h: np.ndarray, alpha: float, log_total: float, layout: Layout, rows: Rows,
    levels: Levels, factors: Factors, scratch: Scratch, out: Out,
) -> None:  # fmt: skip
    """The whole state change of a round with a binary ``h``, one sweep per query, no exp per row.

    The update and binary statistics, for ``h`` (n,) exactly 0 or 1 (uint8 or float64):

    1. ``H += alpha h``.
    2. The new level sums follow from the old ``a``, ``b`` split by ``h``:
       ``A_l = A_l^0 + e^alpha A_l^1`` and ``B_l = B_l^0 + e^-alpha B_l^1``; each query's
       ``log M_q = log(c_q sum_{l0<l1} A_l0 B_l1)`` from them (``out``'s ``log_mass``). The
       shifts move to the new level sums (``a``, ``b`` then sum to 1 on every level: each
       <= 1, and no row that matters underflows).
    3. ``a``, ``b`` are rescaled to the new shifts (``a <- a e^{alpha h} / A_l``) and the next
       round's potential ``up_l b(x) - down_l a(x)`` is written to ``out``'s ``pi``,
       **relative to the total mass before the update** (``log_total``): the true potential
       is ``pi / Z``, which the caller applies to the histogram (a scalar per round instead
       of a pass over the rows).
    4. ``order`` (each query's rows in the kept order) is restored by one merge, which also
       counts the misordered-or-tied crucial pairs into ``out``'s ``errors``; the queries
       with more than ``_COUNTER_MAX_LEVELS`` levels, or a tie made by rounding, are
       finished after the driver (``finish_counts``: a Fenwick count).

    ``factors`` ends up holding the potential factors; shapes and dtypes: the module
    docstring.
    """
    n = rows[0].shape[0]
    driver = _binary_update_parallel if use_parallel(4 * n) else _binary_update_serial
    driver(h, alpha, log_total, layout, rows, levels, factors, scratch, out)
    # the queries the merge left (more than _COUNTER_MAX_LEVELS levels, a rounding tie)
    finish_counts(rows[0], h, layout[0], layout[1], layout[2], rows[3], scratch[1], scratch[2],
                  out[2])  # fmt: skip
