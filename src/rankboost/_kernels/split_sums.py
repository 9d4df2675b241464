"""Split sums: ``W_-`` and ``W_+`` of every threshold candidate at once.

For a binary weak ranker ``h`` and the current distribution ``D_t``, ``W_-`` is the mass of
the crucial pairs ``h`` orders correctly (``h(x0) = 0, h(x1) = 1``) and ``W_+`` the mass it
misorders (``h(x0) = 1, h(x1) = 0``); ``W_0 = 1 - W_- - W_+`` (SPEC 3.2-3.3, 5). The
exact-Z criterion (``Z = W_0 + 2 sqrt(W_- W_+)``) and RankBoost+ need both for every
candidate ``(feature i, threshold index t, q_def)``, where ``h(x) = [code_i(x) > t]`` and
``q_def`` on code 0 (the feature abstains). ``q_def = 0`` is the same as treating code 0 as
the lowest code, ``q_def = 1`` as treating it as a code above every other (``n_codes``).

Outputs have shape (4, d, n_codes - 1): ``[W_-(q=0), W_+(q=0), W_-(q=1), W_+(q=1)]`` for
``t = 0 .. n_codes - 2``, each a block's part (the blocks' parts add up).

**Explicit pairs** (``pair_split_sums``), O(|Phi|) per feature: with ``k0, k1`` the (remapped)
codes of ``x0, x1``, a pair is ordered correctly for exactly the thresholds
``k0 <= t < k1``, and misordered for ``k1 <= t < k0``. So ``+D`` at ``k0`` and ``-D`` at
``k1`` of a difference array, and a prefix sum over ``t``, give ``W_-(t)`` (likewise ``W_+``;
pair counts in integers set the empty sums to exactly 0, as for the layered sweep below).

**Layered feedback** (``layered_split_sums``), O(n K_q) per feature and round without listing a
pair. In query ``q`` (levels ``l = 0 .. K-1``), ``D_t(x0, x1) = E[l0, l1] a(x0) b(x1)`` with
``a = exp(H - s_a[l])``, ``b = exp(-H - s_b[l])`` (``s_a[l]``, ``s_b[l]`` the level's largest
``H`` and ``-H``, so ``a, b <= 1``) and ``E[l0, l1] = c_q exp(s_a[l0] + s_b[l1]) / M_t``. Since
the level sums ``A_l0, B_l1`` are at least 1, ``E[l0, l1] <= E A_l0 B_l1 <= 1``: no factor
overflows whatever the spread of ``H`` (a common scale per query, which a Fenwick tree over
levels would need, can overflow when a level's scores spread over more than ~700). With
``A^<=_l, B^>_l`` the sums over the rows of level ``l`` with ``code <= t`` and ``code > t``,

    W_-(t) = sum_{l0 < l1} E[l0, l1] A^<=_l0 B^>_l1,
    W_+(t) = sum_{l0 < l1} E[l0, l1] A^>_l0 B^<=_l1.

Sweeping ``t`` from the top down, each row ``x`` (level ``l``) moves from the ``<=`` side to the
``>`` side once, at ``t = code(x) - 1``, changing them by

    dW_- = b(x) sum_{l0 < l} E[l0, l] A^<=_l0 - a(x) sum_{l1 > l} E[l, l1] B^>_l1,
    dW_+ = a(x) sum_{l1 > l} E[l, l1] B^<=_l1 - b(x) sum_{l0 < l} E[l0, l] A^>_l0

(its own level takes no part in either sum, so the order of rows within a code does not
matter). The same sweep over integer row counts gives the *number* of pairs in ``W_-`` and
``W_+``: where it is 0 the sum is set to exactly 0 (a difference of sums would leave a
rounding residue of ~1e-17, whose square root, ~3e-9, would decide the exact-Z criterion's
ties between rankers that misorder no pair); negative residues are clipped to 0.

The changes go to a per-feature difference array at index ``code - 1``; a suffix
sum over ``t`` gives ``W(t)``. For ``q_def = 1`` the rows with code 0 move first, at index
``n_codes - 1`` (before every threshold). The sweep needs each query's rows ordered by
decreasing code per feature, computed once (:func:`code_order`, 4 bytes per code). Each row
costs O(K_q) (the sums over levels), for K_q = 2 .. 6 grades as cheap as a Fenwick
tree's O(log K_q) would be, and exact in the sense above.

Features are independent units (``prange``), each summing in a fixed order: serial and
parallel drivers give the same bits.

**State tuples** (CONTRIBUTING.md: named tuples of arrays; ``n`` rows of the block, ``d``
features, ``Q`` queries, ``L`` levels over all queries, ``P`` pairs):

* ``codes`` (d, n) uint8/uint16: the rows' bin codes (0 = the feature abstains);
* ``pairs = (i0, i1, w)``: pair ``p`` is rows ``(i0[p], i1[p])`` ("``i1`` above ``i0``"),
  int64 (P,), and its weight ``w[p] = D_t(x0, x1)``, float64 (P,);
* ``layout = (level, qstart, lstart, log_c)``, as :mod:`rankboost._kernels.layered`'s:
  each row's level within its query, int64 (n,); query ``q``'s rows
  ``qstart[q]:qstart[q + 1]``, int64 (Q + 1,); its levels ``lstart[q]:lstart[q + 1]``,
  int64 (Q + 1,); ``log c_q``, float64 (Q,);
* ``factors = (a, b, A, B, E, estart)``, written by :func:`layered_factors`: per row
  ``a = exp(H - s_a[l])``, ``b = exp(-H - s_b[l])``, float64 (n,); per level their sums
  ``A, B``, float64 (L,); per query the K x K table ``E`` (row-major, at ``estart[q]``),
  float64 (sum K_q^2,), and ``estart``, int64 (Q + 1,);
* ``order`` (d, n) int32/int64: :func:`code_order`'s rows by decreasing code per query;
* ``out`` (4, d, n_codes - 1) float64: the split sums (above).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import serial_and_parallel, use_parallel

# --------------------------------------------------------------------------- explicit pairs


Pairs = tuple[np.ndarray, np.ndarray, np.ndarray]  # (i0, i1, w)
Layout = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # (level, qstart, lstart, log_c)
# (a, b, A, B, E, estart)
Factors = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@njit(cache=True)
def _add_pair(  # noqa: PLR0917  numba helper: the two difference arrays, then the pair
    diff: np.ndarray, count: np.ndarray, d: int, k0: int, k1: int, wp: float
) -> None:
    """Add a pair's weight ``wp`` over the codes between its two (a difference array).

    Row ``d`` when ``k0 < k1`` (``x0`` below ``x1``), else row ``d + 1``: ``+wp`` from the
    lower code, ``-wp`` from the higher; the pair counted the same way in ``count``.
    """
    lo, hi, r = (k0, k1, d) if k0 < k1 else (k1, k0, d + 1)
    diff[r, lo] += wp
    diff[r, hi] -= wp
    count[r, lo] += 1
    count[r, hi] -= 1


@njit(cache=True)
def _pair_feature(codes: np.ndarray, pairs: Pairs, i: int, out: np.ndarray) -> None:
    """The four split sums of feature ``i`` (a difference array over ``t``, then a prefix sum)."""
    i0, i1, w = pairs
    n_codes = out.shape[2] + 1
    diff = np.zeros((4, n_codes + 1))
    count = np.zeros((4, n_codes + 1), dtype=np.int64)  # the same for the pair counts
    row = codes[i]
    for p in range(i0.shape[0]):
        c0 = np.int64(row[i0[p]])
        c1 = np.int64(row[i1[p]])
        if c0 == c1:
            continue
        wp = w[p]
        _add_pair(diff, count, 0, c0, c1, wp)  # q_def = 0: code 0 is the lowest code
        k0 = c0 if c0 != 0 else n_codes  # q_def = 1: code 0 is above every other
        k1 = c1 if c1 != 0 else n_codes
        _add_pair(diff, count, 2, k0, k1, wp)
    for k in range(4):
        acc = 0.0
        n_acc = 0
        for t in range(n_codes - 1):
            acc += diff[k, t]
            n_acc += count[k, t]
            out[k, i, t] = max(acc, 0.0) if n_acc > 0 else 0.0


def _pair_sums(codes: np.ndarray, pairs: Pairs, out: np.ndarray) -> None:
    for i in prange(codes.shape[0]):
        _pair_feature(codes, pairs, np.int64(i), out)


_pair_sums_serial, _pair_sums_parallel = serial_and_parallel(_pair_sums)


def pair_split_sums(codes: np.ndarray, pairs: Pairs, out: np.ndarray) -> None:
    """``out[:, i, t]``: the four split sums of every feature ``i`` from explicit pairs.

    ``codes``, ``pairs = (i0, i1, w)`` and ``out``: the module docstring's state tuples.
    """
    if use_parallel(codes.shape[0] * pairs[0].shape[0]):
        _pair_sums_parallel(codes, pairs, out)
    else:
        _pair_sums_serial(codes, pairs, out)


# --------------------------------------------------------------------------- layered


@njit(cache=True)
def layered_factors(H: np.ndarray, log_total: float, layout: Layout, factors: Factors) -> None:
    """Write ``factors``: per row ``a, b`` (<= 1), per level ``A, B``, per query ``E``.

    ``H`` (n,) float64 are the block's scores and ``log_total`` the global log mass
    ``log M_t``; ``layout`` as the module docstring's; ``factors``' ``estart`` is read (where
    query ``q``'s ``E`` starts in the flat ``E``, row-major, K_q^2), the rest written.
    """
    level, qstart, lstart, log_c = layout
    a, b, A, B, E, estart = factors
    for q in range(qstart.shape[0] - 1):
        l0 = lstart[q]
        k = lstart[q + 1] - l0
        sa = np.full(k, -np.inf)
        sb = np.full(k, -np.inf)
        for j in range(qstart[q], qstart[q + 1]):
            lv = level[j]
            if H[j] > sa[lv]:
                sa[lv] = H[j]
            if -H[j] > sb[lv]:
                sb[lv] = -H[j]
        for lv in range(k):
            A[l0 + lv] = 0.0
            B[l0 + lv] = 0.0
        for j in range(qstart[q], qstart[q + 1]):
            lv = level[j]
            a[j] = np.exp(H[j] - sa[lv])
            b[j] = np.exp(-H[j] - sb[lv])
            A[l0 + lv] += a[j]
            B[l0 + lv] += b[j]
        base = log_c[q] - log_total
        e0 = estart[q]
        for u in range(k):
            for v in range(k):
                E[e0 + u * k + v] = np.exp(base + sa[u] + sb[v]) if u < v else 0.0


@njit(cache=True)
def _layered_feature(  # noqa: C901, PLR0915  numba kernel: one sweep per feature over every query (speed)
    codes: np.ndarray, order: np.ndarray, layout: Layout, factors: Factors, i: int,
    out: np.ndarray,
) -> None:  # fmt: skip
    """The four split sums of feature ``i``: the top-down sweep of the module docstring."""
    level, qstart, lstart = layout[0], layout[1], layout[2]
    a, b, A, B, E, estart = factors
    n_codes = out.shape[2] + 1
    diff = np.zeros((4, n_codes))
    count = np.zeros((4, n_codes), dtype=np.int64)
    row = codes[i]
    ordi = order[i]
    k_max = 0
    for q in range(qstart.shape[0] - 1):
        k_max = max(k_max, lstart[q + 1] - lstart[q])
    ag = np.empty(k_max)  # A^> per level
    bg = np.empty(k_max)  # B^> per level
    ng = np.empty(k_max, dtype=np.int64)  # rows on the > side per level
    nl = np.empty(k_max, dtype=np.int64)  # rows per level
    for q in range(qstart.shape[0] - 1):
        l0 = lstart[q]
        k = lstart[q + 1] - l0
        e0 = estart[q]
        s, e = qstart[q], qstart[q + 1]
        # rows with code 0 sit at the end of the query's order
        first_nan = e
        while first_nan > s and row[ordi[first_nan - 1]] == 0:
            first_nan -= 1
        for lv in range(k):
            nl[lv] = 0
        for j in range(s, e):
            nl[level[j]] += 1
        no_nan = first_nan == e  # then q_def = 1 is q_def = 0: one sweep writes both
        for qd in range(2):
            if qd == 1 and no_nan:
                break
            for lv in range(k):
                ag[lv] = 0.0
                bg[lv] = 0.0
                ng[lv] = 0
            m = first_nan - s if qd == 0 else e - s
            for step in range(m):
                if qd == 1:  # the NaN rows first, then the coded rows
                    pos = first_nan + step if step < e - first_nan else s + step - (e - first_nan)
                else:
                    pos = s + step
                j = ordi[pos]
                c = np.int64(row[j])
                idx = c - 1 if c != 0 else n_codes - 1
                lv = level[j]
                aj = a[j]
                bj = b[j]
                up_le = 0.0  # sum_{l0 < l} E[l0, l] A^<=_l0
                up_gt = 0.0  # sum_{l0 < l} E[l0, l] A^>_l0
                n_up_le = 0  # and the same counts of rows
                n_up_gt = 0
                for u in range(lv):
                    f = E[e0 + u * k + lv]
                    up_le += f * (A[l0 + u] - ag[u])
                    up_gt += f * ag[u]
                    n_up_le += nl[u] - ng[u]
                    n_up_gt += ng[u]
                dn_le = 0.0  # sum_{l1 > l} E[l, l1] B^<=_l1
                dn_gt = 0.0  # sum_{l1 > l} E[l, l1] B^>_l1
                n_dn_le = 0
                n_dn_gt = 0
                for v in range(lv + 1, k):
                    f = E[e0 + lv * k + v]
                    dn_le += f * (B[l0 + v] - bg[v])
                    dn_gt += f * bg[v]
                    n_dn_le += nl[v] - ng[v]
                    n_dn_gt += ng[v]
                diff[2 * qd, idx] += bj * up_le - aj * dn_gt
                diff[2 * qd + 1, idx] += aj * dn_le - bj * up_gt
                count[2 * qd, idx] += n_up_le - n_dn_gt
                count[2 * qd + 1, idx] += n_dn_le - n_up_gt
                if no_nan:
                    diff[2, idx] += bj * up_le - aj * dn_gt
                    diff[3, idx] += aj * dn_le - bj * up_gt
                    count[2, idx] += n_up_le - n_dn_gt
                    count[3, idx] += n_dn_le - n_up_gt
                ag[lv] += aj
                bg[lv] += bj
                ng[lv] += 1
    for kk in range(4):
        acc = diff[kk, n_codes - 1]
        n_acc = count[kk, n_codes - 1]
        for t in range(n_codes - 2, -1, -1):
            acc += diff[kk, t]
            n_acc += count[kk, t]
            out[kk, i, t] = max(acc, 0.0) if n_acc > 0 else 0.0


def _layered_sums(
    codes: np.ndarray, order: np.ndarray, layout: Layout, factors: Factors, out: np.ndarray
) -> None:
    for i in prange(codes.shape[0]):
        _layered_feature(codes, order, layout, factors, np.int64(i), out)


_layered_sums_serial, _layered_sums_parallel = serial_and_parallel(_layered_sums)


def layered_split_sums(
    codes: np.ndarray, order: np.ndarray, layout: Layout, factors: Factors, out: np.ndarray
) -> None:
    """The four split sums of every feature of a layered block (module docstring).

    ``order`` is :func:`code_order`'s, ``factors`` from :func:`layered_factors` for the
    current scores; the tuples and ``out`` as the module docstring's.
    """
    if use_parallel(codes.shape[0] * codes.shape[1] * 2):
        _layered_sums_parallel(codes, order, layout, factors, out)
    else:
        _layered_sums_serial(codes, order, layout, factors, out)


def code_order(codes: np.ndarray, qstart: np.ndarray) -> np.ndarray:
    """Per feature, each query's rows (local indices) by decreasing code, code 0 last.

    Shape (d, n), int32 (int64 beyond 2**31 rows); O(d n log n) once.
    """
    d, n = codes.shape
    index = np.int32 if n < 2**31 else np.int64
    of_row = np.repeat(np.arange(qstart.shape[0] - 1), np.diff(qstart))
    out = np.empty((d, n), dtype=index)
    for i in range(d):  # one numpy sort per feature
        key = codes[i].astype(np.int64)
        key[key == 0] = -1  # code 0 after every other code
        out[i] = np.lexsort((-key, of_row))
    return out


# --------------------------------------------------------------------------- ranker identity


@njit(cache=True)
def code_hashes(codes: np.ndarray, weights: np.ndarray, out: np.ndarray) -> None:
    """``out[i, c] += sum of weights[j] over rows j with codes[i, j] = c``, in uint64.

    Integer additions wrap modulo 2**64, so the sum of a set of rows' random weights does
    not depend on the order of the additions: equal sums identify equal sets of rows (up to
    a 2**-64 chance), whichever feature and threshold the set came from.
    """
    for i in range(codes.shape[0]):
        row = codes[i]
        for j in range(row.shape[0]):
            out[i, row[j]] += weights[j]
