"""Per-query ranking-metric kernels (numba), used by ``rankboost.metrics``.

Every kernel receives rows already grouped by query and sorted by decreasing score inside
each query (``starts`` holds the ``n_queries + 1`` offsets). When ``expected`` is true, runs of
equal scores are *tie blocks* and the kernel returns the exact expectation under uniformly
random tie-breaking (docs/metrics.md; Freund et al. 2003, Appendix A); when it is false every
row is its own block, which gives the plain metric of the given order.

All kernels are private, pure (array in, array out) and compiled with ``cache=True``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _block_end(scores: np.ndarray, j: int, hi: int, expected: bool) -> int:
    """One past the last row of the tie block that starts at row ``j``."""
    e = j + 1
    if expected:
        s0 = scores[j]
        while e < hi and scores[e] == s0:
            e += 1
    return e


@njit(cache=True)
def _log_comb(log_fact: np.ndarray, a: int, b: int) -> float:
    """``log C(a, b)`` from a table of ``log(i!)``; ``-inf`` outside ``0 <= b <= a``."""
    if b < 0 or b > a:
        return -np.inf
    return log_fact[a] - log_fact[b] - log_fact[a - b]


@njit(cache=True)
def _rank_prob(
    log_fact: np.ndarray, p: int, j: int, size: int, n_good: int, log_total: float
) -> float:
    """Negative hypergeometric law (docs/metrics.md; paper Appendix A).

    Probability that the ``j``-th good item (1-based) of a tie block of ``size`` items with
    ``n_good`` good ones lands at position ``p`` (1-based) of the block:
    ``C(p-1, j-1) C(size-p, n_good-j) / C(size, n_good)``; with ``i = R + p`` and ``j = k - r``
    this is the paper's ``Pr[rank(t_k) = i]``.
    """
    return np.exp(
        _log_comb(log_fact, p - 1, j - 1) + _log_comb(log_fact, size - p, n_good - j) - log_total
    )


# ---------------------------------------------------------------------------------------------
# position-linear metrics: DCG@k, P@k (exact expectation by linearity)
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def dcg_at_k(
    gains: np.ndarray,
    scores: np.ndarray,
    starts: np.ndarray,
    discount: np.ndarray,
    expected: bool,
    out: np.ndarray,
) -> None:
    """``out[q] = sum_x gain(x) E[disc(rank(x))]`` over the first ``k = len(discount)`` ranks.

    A tie block at positions ``R+1..R+Q`` spreads each of its items uniformly over those
    positions, so its contribution is ``(sum of gains) / Q * sum_{i=R+1}^{min(R+Q, k)} disc(i)``
    (docs/metrics.md). ``discount[i - 1]`` is the discount of rank ``i``.
    """
    k = discount.shape[0]
    for q in range(starts.shape[0] - 1):
        lo = starts[q]
        hi = starts[q + 1]
        total = 0.0
        j = lo
        while j < hi and j - lo < k:
            e = _block_end(scores, j, hi, expected)
            r_above = j - lo
            size = e - j
            if size == 1:
                total += gains[j] * discount[r_above]
            else:
                g = 0.0
                for t in range(j, e):
                    g += gains[t]
                if g != 0.0:
                    d = 0.0
                    for i in range(r_above, min(r_above + size, k)):
                        d += discount[i]
                    total += g * d / size
            j = e
        out[q] = total


@njit(cache=True)
def ideal_dcg_at_k(
    gains: np.ndarray, starts: np.ndarray, discount: np.ndarray, out: np.ndarray
) -> None:
    """DCG@k of the best order (gains sorted decreasingly) of each query."""
    k = discount.shape[0]
    n = gains.shape[0]
    rows = np.empty(n, dtype=np.int64)
    tmp = np.empty(n, dtype=np.int64)
    for j in range(n):
        rows[j] = j
    # False, as a runtime bool: a literal False would compile a second _sort_rows
    no_secondary = n < 0
    for q in range(starts.shape[0] - 1):
        lo = starts[q]
        hi = starts[q + 1]
        _sort_rows(rows, tmp, lo, hi, gains, gains, no_secondary)  # decreasing gain
        total = 0.0
        for i in range(min(hi - lo, k)):
            total += gains[rows[lo + i]] * discount[i]
        out[q] = total


# ---------------------------------------------------------------------------------------------
# rank-of-good-item metrics: AP, RR (= PROT), coverage, via the negative hypergeometric law
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def good_rank_metrics_kernel(  # noqa: C901, PLR0917  numba kernel: one pass computes every metric of a query (speed)
    good: np.ndarray,
    scores: np.ndarray,
    starts: np.ndarray,
    log_fact: np.ndarray,
    cutoff: int,
    expected: bool,
    out_ap: np.ndarray,
    out_rr: np.ndarray,
    out_coverage: np.ndarray,
    out_n_good: np.ndarray,
) -> None:
    """Per query ``E[AP@cutoff]``, ``E[RR@cutoff]``, ``E[coverage]`` and the number of good items.

    With good items ``t_1..t_K`` (docs/metrics.md, paper Appendix A):
    ``AP = (1/K) sum_k k / rank(t_k)`` (only ranks ``<= cutoff`` count, denominator stays K),
    ``RR = PROT = 1 / rank(t_1)`` (0 if ``rank(t_1) > cutoff``), ``coverage = K / rank(t_K)``.
    Queries without a good item get 0 everywhere (the caller applies its ``empty`` policy).
    Cost O(sum over tie blocks of Q * q).
    """
    for q in range(starts.shape[0] - 1):
        lo = starts[q]
        hi = starts[q + 1]
        n_good = 0
        for t in range(lo, hi):
            if good[t]:
                n_good += 1
        out_n_good[q] = n_good
        ap = 0.0
        rr = 0.0
        cov = 0.0
        if n_good > 0:
            r_good = 0  # good items strictly above the current block
            j = lo
            while j < hi and r_good < n_good:
                e = _block_end(scores, j, hi, expected)
                r_above = j - lo
                size = e - j
                g_block = np.int64(0)  # not a literal 0: that would compile _rank_prob twice
                for t in range(j, e):
                    if good[t]:
                        g_block += 1
                if g_block > 0:
                    if size == 1:
                        rank = r_above + 1
                        kk = r_good + 1
                        if rank <= cutoff:
                            ap += kk / rank
                            if kk == 1:
                                rr = 1.0 / rank
                        if kk == n_good:
                            cov = n_good / rank
                    else:
                        log_total = _log_comb(log_fact, size, g_block)
                        for jj in range(1, g_block + 1):
                            kk = r_good + jj
                            # position p in the block ranges over jj..size-g_block+jj
                            for p in range(jj, size - g_block + jj + 1):
                                rank = r_above + p
                                pr = _rank_prob(log_fact, p, jj, size, g_block, log_total)
                                if rank <= cutoff:
                                    ap += kk * pr / rank
                                    if kk == 1:
                                        rr += pr / rank
                                if kk == n_good:
                                    cov += n_good * pr / rank
                    r_good += g_block
                j = e
            ap /= n_good
        out_ap[q] = ap
        out_rr[q] = rr
        out_coverage[q] = cov


@njit(cache=True)
def first_good_rank(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    good: np.ndarray,
    scores: np.ndarray,
    starts: np.ndarray,
    log_fact: np.ndarray,
    ks: np.ndarray,
    cap: int,
    expected: bool,
    out_hits: np.ndarray,
    out_rank: np.ndarray,
) -> None:
    """Per query ``Pr[rank(t_1) <= k]`` for each ``k`` in ``ks`` and ``E[min(rank(t_1), cap)]``.

    A query without a good item never hits and has rank ``cap`` (the paper's meta-search table
    sets unretrieved URLs to rank 31, section 6.2). ``out_hits`` has shape
    ``(n_queries, len(ks))``.
    """
    for q in range(starts.shape[0] - 1):
        lo = starts[q]
        hi = starts[q + 1]
        for c in range(ks.shape[0]):
            out_hits[q, c] = 0.0
        out_rank[q] = cap
        j = lo
        while j < hi:
            e = _block_end(scores, j, hi, expected)
            g_block = 0
            for t in range(j, e):
                if good[t]:
                    g_block += 1
            if g_block > 0:
                r_above = j - lo
                size = e - j
                log_total = _log_comb(log_fact, size, g_block)
                mean_rank = 0.0
                for p in range(1, size - g_block + 2):
                    rank = r_above + p
                    pr = 1.0 if size == 1 else _rank_prob(log_fact, p, 1, size, g_block, log_total)
                    mean_rank += pr * min(rank, cap)
                    for c in range(ks.shape[0]):
                        if rank <= ks[c]:
                            out_hits[q, c] += pr
                out_rank[q] = mean_rank
                break
            j = e


# ---------------------------------------------------------------------------------------------
# grouping: rows by query (counting sort), then by decreasing score inside each query
# ---------------------------------------------------------------------------------------------


#: Rows sorted by insertion before the merges of ``_sort_rows``.
_RUN = 16


@njit(cache=True)
def _before(scores: np.ndarray, secondary: np.ndarray, use_secondary: bool, a: int, b: int) -> bool:
    """Whether row ``a`` goes strictly before row ``b``: higher score, then lower secondary."""
    sa = scores[a]
    sb = scores[b]
    if sa != sb:
        return sa > sb
    return use_secondary and secondary[a] < secondary[b]


@njit(cache=True)
def _sort_rows(
    rows: np.ndarray, tmp: np.ndarray, lo: int, hi: int, scores: np.ndarray,
    secondary: np.ndarray, use_secondary: bool,
) -> None:  # fmt: skip
    """Stable sort of ``rows[lo:hi]`` by decreasing score, then increasing ``secondary``.

    Insertion sort of runs of ``_RUN`` rows, then bottom-up merges through ``tmp[lo:hi]``;
    a row moves ahead of another only when it goes strictly before it, so equal rows keep
    their order: the order of ``np.lexsort((secondary, -scores))`` on the rows (scores hold
    no NaN). Written out instead of ``np.argsort(kind="mergesort")`` and fancy indexing,
    which compile for about 4 s in a cold first training with ``eval_set``.
    """
    for s in range(lo, hi, _RUN):
        e = min(s + _RUN, hi)
        for t in range(s + 1, e):
            r = rows[t]
            u = t - 1
            while u >= s and _before(scores, secondary, use_secondary, r, rows[u]):
                rows[u + 1] = rows[u]
                u -= 1
            rows[u + 1] = r
    src = rows
    dst = tmp
    width = _RUN
    in_tmp = False
    while width < hi - lo:
        for s in range(lo, hi, 2 * width):
            m = min(s + width, hi)
            e = min(s + 2 * width, hi)
            i = s
            j = m
            t = s
            while i < m and j < e:
                if _before(scores, secondary, use_secondary, src[j], src[i]):
                    dst[t] = src[j]
                    j += 1
                else:
                    dst[t] = src[i]
                    i += 1
                t += 1
            while i < m:
                dst[t] = src[i]
                i += 1
                t += 1
            while j < e:
                dst[t] = src[j]
                j += 1
                t += 1
        src, dst = dst, src
        in_tmp = not in_tmp
        width *= 2
    if in_tmp:
        for t in range(lo, hi):
            rows[t] = tmp[t]


@njit(cache=True)
def rank_within_queries(
    codes: np.ndarray,
    scores: np.ndarray,
    secondary: np.ndarray,
    use_secondary: bool,
    n_queries: int,
    out_order: np.ndarray,
    out_starts: np.ndarray,
) -> None:
    """Row order grouped by query code, by decreasing score within a query.

    Equal scores are ordered by increasing ``secondary`` when ``use_secondary`` is true, and
    by input row order otherwise (every sort here is stable). ``codes`` are dense in
    ``0..n_queries-1``; ``out_starts`` (length ``n_queries + 1``) receives the offsets. The
    same order as ``np.lexsort((secondary, -scores, codes))``, in O(n) for the grouping plus
    one small sort per query (``_sort_rows``).
    """
    n = codes.shape[0]
    for q in range(n_queries + 1):
        out_starts[q] = 0
    for i in range(n):
        out_starts[codes[i] + 1] += 1
    for q in range(n_queries):
        out_starts[q + 1] += out_starts[q]
    fill = np.empty(n_queries, dtype=np.int64)
    for q in range(n_queries):
        fill[q] = out_starts[q]
    for i in range(n):
        c = codes[i]
        out_order[fill[c]] = i
        fill[c] += 1
    tmp = np.empty(n, dtype=np.int64)
    for q in range(n_queries):
        _sort_rows(
            out_order, tmp, out_starts[q], out_starts[q + 1], scores, secondary, use_secondary
        )


# ------------------------------------------- NDCG@k of every boosting round (recommend)


@njit(cache=True)
def top_rows(s: np.ndarray, kk: int, buf: np.ndarray) -> None:
    """The ``kk`` best rows of ``s`` into ``buf``, best first (ties: the earlier row)."""
    n = 0
    for r in range(s.shape[0]):
        v = s[r]
        if n == kk and v <= s[buf[kk - 1]]:
            continue
        p = n if n < kk else kk - 1
        while p > 0 and s[buf[p - 1]] < v:
            buf[p] = buf[p - 1]
            p -= 1
        buf[p] = r
        if n < kk:
            n += 1


@njit(cache=True)
def expected_dcg_of_top(
    s: np.ndarray, g: np.ndarray, buf: np.ndarray, kk: int, discount: np.ndarray
) -> float:
    """DCG@kk of the order in ``buf``, expected over ties, in :func:`dcg_at_k`'s arithmetic.

    A run of equal scores at positions ``i..j-1`` adds ``(sum of its gains) x (sum of
    their discounts) / (j - i)`` (a single row: gain x discount); the run at the cut (the
    ``kk``-th row's score) is completed over all of ``s``. The sums run in the order
    :func:`dcg_at_k` takes them (``buf`` keeps equal scores in row order), so the value is
    ``ndcg_score``'s to the last bit.
    """
    v = s[buf[kk - 1]]
    dcg = 0.0
    i = 0
    while s[buf[i]] != v:  # the runs above the cut lie inside buf
        j = i + 1
        while s[buf[j]] == s[buf[i]]:
            j += 1
        if j - i == 1:
            dcg += g[buf[i]] * discount[i]
        else:
            total = 0.0
            for p in range(i, j):
                total += g[buf[p]]
            if total != 0.0:
                d = 0.0
                for p in range(i, j):
                    d += discount[p]
                dcg += total * d / (j - i)
        i = j
    n_eq = 0
    g_eq = 0.0
    for r in range(s.shape[0]):
        if s[r] == v:
            n_eq += 1
            g_eq += g[r]
    if n_eq == 1:
        dcg += g_eq * discount[i]
    elif g_eq != 0.0:
        d = 0.0
        for p in range(i, kk):
            d += discount[p]
        dcg += g_eq * d / n_eq
    return dcg


def log2_discount(k: int) -> np.ndarray:
    """``1 / log2(1 + i)`` for ranks ``i = 1..k``: the one table of ``discount="log2"``.

    Computed by numpy, never inside a kernel: numba's ``log2`` differs from numpy's in the
    last bit at some ranks, and every NDCG path (``ndcg_score``, :func:`ndcg_rounds`) must
    give the same value to the last bit.
    """
    return 1.0 / np.log2(1.0 + np.arange(1, k + 1, dtype=np.float64))


def ndcg_rounds(HT: np.ndarray, gain: np.ndarray, starts: np.ndarray, k: int) -> np.ndarray:
    """NDCG@k of every query (rows ``starts[q]:starts[q+1]``) under every round's scores.

    ``HT[t]`` holds round ``t``'s scores, ``gain`` the rows' gains; returns ``(n_queries,
    n_rounds)``. Each value is ``ndcg_score``'s with its defaults to the last bit: the same
    discount table (:func:`log2_discount`), IDCG and DCG summed as :func:`ideal_dcg_at_k`
    and :func:`dcg_at_k` sum them.
    """
    return _ndcg_rounds(HT, gain, starts, log2_discount(int(k)))


@njit(cache=True)
def _ndcg_rounds(
    HT: np.ndarray, gain: np.ndarray, starts: np.ndarray, discount: np.ndarray
) -> np.ndarray:
    """:func:`ndcg_rounds` with the discount table (``k = len(discount)``)."""
    k = discount.shape[0]
    n_q = starts.shape[0] - 1
    out = np.zeros((n_q, HT.shape[0]))
    buf = np.empty(k, dtype=np.int64)
    for q in range(n_q):
        a, b = starts[q], starts[q + 1]
        kk = min(k, b - a)
        g = gain[a:b]
        ideal = -np.sort(-g)
        idcg = 0.0
        for p in range(kk):
            idcg += ideal[p] * discount[p]
        if idcg <= 0.0:
            continue  # empty="zero"
        for t in range(HT.shape[0]):
            s = HT[t, a:b]
            top_rows(s, kk, buf)
            out[q, t] = expected_dcg_of_top(s, g, buf, kk, discount) / idcg
    return out
