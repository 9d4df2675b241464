"""Pairwise ranking loss on graded labels in O(n log n) per query (layered training rloss).

Never enumerates pairs: per query, items are visited in decreasing score, a Fenwick tree over
the query's (compressed) label levels counts how many items of a lower level already sit
strictly above, and tied blocks contribute their cross-level pairs in closed form.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import serial_and_parallel, use_parallel


@njit(cache=True, inline="always")
def _tree_add(tree: np.ndarray, off: int, k: int, i: int, v: float) -> None:
    """Fenwick tree over levels ``0..k-1`` stored in ``tree[off + 1 .. off + k]``."""
    i += 1
    while i <= k:
        tree[off + i] += v
        i += i & (-i)


@njit(cache=True, inline="always")
def _tree_prefix(tree: np.ndarray, off: int, i: int) -> float:
    """Sum of levels ``0..i-1``."""
    s = 0.0
    while i > 0:
        s += tree[off + i]
        i -= i & (-i)
    return s


@njit(cache=True)
def _tie_block_start(H: np.ndarray, order: np.ndarray, lo: int, e: int) -> int:
    """The first row of the tie block that ends at ``e`` (rows ``order[lo:]`` in increasing H)."""
    s = e - 1
    h0 = H[order[s]]
    while s > lo and H[order[s - 1]] == h0:
        s -= 1
    return s


@njit(cache=True)
def _ties_as_errors_in_order(
    H: np.ndarray, level: np.ndarray, order: np.ndarray, lo: int, hi: int, k: int,
    scratch: np.ndarray, off: int,
) -> float:  # fmt: skip
    """``_errors_in_order`` with ``tie_weight = 1`` (the training rloss of the theorem).

    Each tie block is added to the tree first, so every row then counts the lower-level rows
    above it or tied with it.
    NOTE: kept apart from the general loop, which compiles ~20% slower even when its tie
    weight is 1; this one runs every round after ``layered_binary_update`` for queries with
    more than ``_COUNTER_MAX_LEVELS`` levels (``_finish_count``).
    """
    if hi - lo < 2 or k < 2:
        return 0.0
    for c in range(k + 1):
        scratch[off + c] = 0.0
    errors = 0.0
    e = hi
    while e > lo:
        s = _tie_block_start(H, order, lo, e)
        for t in range(s, e):
            _tree_add(scratch, off, k, level[order[t]], 1.0)
        for t in range(s, e):
            errors += _tree_prefix(scratch, off, level[order[t]])
        e = s
    return errors


@njit(cache=True)
def _errors_in_order(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    H: np.ndarray, level: np.ndarray, order: np.ndarray, lo: int, hi: int, k: int,
    tie_weight: float, scratch: np.ndarray, off: int,
) -> float:  # fmt: skip
    """Misordered crucial pairs among the rows ``order[lo:hi]``, which are in increasing H.

    Visited from the top, a Fenwick tree over the ``k`` levels counts the lower-level rows
    strictly above; a tie block adds ``tie_weight`` per cross-level pair inside it.
    ``scratch[off : off + 2k + 1]`` holds the tree and the block's level counts.
    """
    if tie_weight == 1.0:
        return _ties_as_errors_in_order(H, level, order, lo, hi, k, scratch, off)
    if hi - lo < 2 or k < 2:
        return 0.0
    for c in range(2 * k + 1):
        scratch[off + c] = 0.0
    counts = off + k + 1
    errors = 0.0
    e = hi
    while e > lo:
        s = _tie_block_start(H, order, lo, e)
        for t in range(s, e):  # x1 here, x0 of a lower level strictly above
            errors += _tree_prefix(scratch, off, level[order[t]])
        if e - s > 1:  # tied cross-level pairs: (g^2 - sum_l g_l^2) / 2
            for t in range(s, e):
                scratch[counts + level[order[t]]] += 1.0
            g = float(e - s)
            sq = 0.0
            for t in range(s, e):
                lv = counts + level[order[t]]
                if scratch[lv] > 0.0:
                    sq += scratch[lv] * scratch[lv]
                    scratch[lv] = 0.0
            errors += tie_weight * 0.5 * (g * g - sq)
        for t in range(s, e):
            _tree_add(scratch, off, k, level[order[t]], 1.0)
        e = s
    return errors


@njit(cache=True)
def _query_errors(sc: np.ndarray, level: np.ndarray, k: int, tie_weight: float) -> float:
    """Misordered crucial pairs of one query with local levels ``0..k-1`` (sorts it)."""
    m = sc.shape[0]
    ascending = np.argsort(sc, kind="mergesort")
    return _errors_in_order(sc, level, ascending, 0, m, k, tie_weight, np.empty(2 * k + 1), 0)


@njit(cache=True)
def _level_query(
    scores: np.ndarray, level: np.ndarray, qstart: np.ndarray, lstart: np.ndarray,
    tie_weight: float, q: int, out_errors: np.ndarray,
) -> None:  # fmt: skip
    lo = qstart[q]
    hi = qstart[q + 1]
    k = lstart[q + 1] - lstart[q]
    if hi - lo < 2 or k < 2:
        out_errors[q] = 0.0
    else:
        out_errors[q] = _query_errors(scores[lo:hi], level[lo:hi], k, tie_weight)


def _level_pair_errors(
    scores: np.ndarray, level: np.ndarray, qstart: np.ndarray, lstart: np.ndarray,
    tie_weight: float, out_errors: np.ndarray,
) -> None:  # fmt: skip
    for q in prange(qstart.shape[0] - 1):
        _level_query(scores, level, qstart, lstart, tie_weight, np.int64(q), out_errors)


_level_pair_errors_serial, _level_pair_errors_parallel = serial_and_parallel(_level_pair_errors)


@njit(cache=True)
def _graded_query(
    scores: np.ndarray,
    labels: np.ndarray,
    order: np.ndarray,
    starts: np.ndarray,
    tie_weight: float,
    q: int,
    out_errors: np.ndarray,
    out_pairs: np.ndarray,
) -> None:
    """Per query: misordered crucial pairs and the number of crucial pairs.

    A crucial pair is (x0, x1) in one query with ``labels[x1] > labels[x0]``; it is misordered
    when ``scores[x1] < scores[x0]`` and counts ``tie_weight`` when the scores are equal.

    Parameters
    ----------
    scores, labels : float64 arrays of shape (n,)
    order : int64 array, rows grouped by query (see ``_validation.group_by_qid``)
    starts : int64 array of shape (n_queries + 1,), offsets into ``order``
    tie_weight : 1.0 counts ties as errors (the training rloss of the theorem),
        0.5 is the expectation under random tie-breaking, 0.0 is optimistic.
    out_errors, out_pairs : float64 arrays of shape (n_queries,), written.
    """
    lo = starts[q]
    hi = starts[q + 1]
    m = hi - lo
    out_errors[q] = 0.0
    out_pairs[q] = 0.0
    if m < 2:
        return
    rows = order[lo:hi]
    lab = np.empty(m, dtype=np.float64)
    sc = np.empty(m, dtype=np.float64)
    for j in range(m):
        lab[j] = labels[rows[j]]
        sc[j] = scores[rows[j]]
    # compress labels to local levels 0..k-1
    lorder = np.argsort(lab, kind="mergesort")
    level = np.empty(m, dtype=np.int64)
    k = 0
    for j in range(m):
        if j > 0 and lab[lorder[j]] != lab[lorder[j - 1]]:
            k += 1
        level[lorder[j]] = k
    k += 1
    if k < 2:
        return
    counts = np.zeros(k, dtype=np.float64)
    for j in range(m):
        counts[level[j]] += 1.0
    # total crucial pairs: sum over l of n_l * (# items of lower level)
    below = 0.0
    total = 0.0
    for lv in range(k):
        total += counts[lv] * below
        below += counts[lv]
    out_pairs[q] = total
    out_errors[q] = _query_errors(sc, level, k, tie_weight)


def _graded_pair_errors(
    scores: np.ndarray,
    labels: np.ndarray,
    order: np.ndarray,
    starts: np.ndarray,
    tie_weight: float,
    out_errors: np.ndarray,
    out_pairs: np.ndarray,
) -> None:
    for q in prange(starts.shape[0] - 1):
        _graded_query(scores, labels, order, starts, tie_weight, np.int64(q), out_errors, out_pairs)


_graded_pair_errors_serial, _graded_pair_errors_parallel = serial_and_parallel(_graded_pair_errors)


def graded_pair_errors(
    scores: np.ndarray,
    labels: np.ndarray,
    order: np.ndarray,
    starts: np.ndarray,
    tie_weight: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(errors, pairs)`` per query; see ``_graded_query``."""
    n_queries = starts.shape[0] - 1
    errors = np.empty(n_queries, dtype=np.float64)
    pairs = np.empty(n_queries, dtype=np.float64)
    kernel = (
        _graded_pair_errors_parallel if use_parallel(order.shape[0]) else _graded_pair_errors_serial
    )
    kernel(
        np.ascontiguousarray(scores, dtype=np.float64),
        np.ascontiguousarray(labels, dtype=np.float64),
        np.ascontiguousarray(order, dtype=np.int64),
        np.ascontiguousarray(starts, dtype=np.int64),
        float(tie_weight),
        errors,
        pairs,
    )
    return errors, pairs


def level_pair_errors(
    scores: np.ndarray,
    level: np.ndarray,
    qstart: np.ndarray,
    lstart: np.ndarray,
    tie_weight: float,
) -> np.ndarray:
    """Misordered crucial pairs per query for pre-grouped rows; see ``_level_query``."""
    out = np.empty(qstart.shape[0] - 1, dtype=np.float64)
    if use_parallel(scores.shape[0]):
        _level_pair_errors_parallel(scores, level, qstart, lstart, float(tie_weight), out)
    else:
        _level_pair_errors_serial(scores, level, qstart, lstart, float(tie_weight), out)
    return out


# --------------------------------------------------------------------------- kept order


# A query's kept order lists its rows by increasing H and, among equal H, by decreasing level
# ("the kept order"). Walked from the top, each tie block then shows its lower levels first,
# so a row's misordered-or-tied lower-level rows are exactly the lower-level rows walked
# before it: one counter per level, no tie bookkeeping.

#: Most levels a query may have for the counting merge's per-level counters (O(K) per row);
#: queries with more levels merge first and count with the Fenwick tree (O(log K) per row).
_COUNTER_MAX_LEVELS = 16


@njit(cache=True, inline="always")
def _split_by_h(
    h: np.ndarray, order: np.ndarray, tmp: np.ndarray, lo: int, hi: int
) -> tuple[int, int]:
    """Split ``order[lo:hi]`` by ``h`` into ``tmp`` without a branch per row.

    Rows with h = 0 go forward to ``tmp[lo:n0]``, rows with h = 1 backward to
    ``tmp[n1 + 1:hi]`` (so ``tmp[n1 + 1]`` is the last of them in ``order``); returns
    ``(n0, n1)``. Each row is written to both ends and only the right cursor moves.
    """
    n0 = lo
    n1 = hi - 1
    for t in range(lo, hi):
        r = order[t]
        o = np.int64(h[r])  # int(), without compiling its overload (cold start)
        tmp[n0] = r
        tmp[n1] = r
        n0 += 1 - o
        n1 -= o
    return n0, n1


@njit(cache=True)
def _merge_by_h(
    H: np.ndarray, h: np.ndarray, level: np.ndarray, order: np.ndarray, tmp: np.ndarray,
    lo: int, hi: int,
) -> None:  # fmt: skip
    """Restore the kept order of ``order[lo:hi]`` after ``H += alpha h`` with h in {0, 1}.

    The rows with equal ``h`` moved together, so each group is still in order: split them
    into ``tmp[lo:hi]`` (h = 0 forward, h = 1 backward) and merge, branch-free, in
    O(hi - lo). On equal H the higher level goes first, then the h = 0 row.
    """
    n0, n1 = _split_by_h(h, order, tmp, lo, hi)
    i = lo
    j = hi - 1
    t = lo
    while i < n0 and j > n1:
        ri = tmp[i]
        rj = tmp[j]
        hi_ = H[ri]
        hj_ = H[rj]
        take = (hj_ < hi_) | ((hj_ == hi_) & (level[rj] > level[ri]))
        order[t] = rj if take else ri
        j -= np.int64(take)
        i += 1 - np.int64(take)
        t += 1
    while i < n0:
        order[t] = tmp[i]
        i += 1
        t += 1
    while j > n1:
        order[t] = tmp[j]
        j -= 1
        t += 1


@njit(cache=True)
def _fix_tie_order(H: np.ndarray, level: np.ndarray, order: np.ndarray, lo: int, hi: int) -> None:
    """Insertion sort of ``order[lo:hi]`` into the kept order.

    Increasing H, then decreasing level; O(n) on rows already in increasing H but for a few
    tie blocks.
    """
    for t in range(lo + 1, hi):
        r = order[t]
        v = H[r]
        lv = level[r]
        u = t - 1
        while u >= lo and (H[order[u]] > v or (H[order[u]] == v and level[order[u]] < lv)):
            order[u + 1] = order[u]
            u -= 1
        order[u + 1] = r


#: ``counting_merge``'s answers for a query it leaves to ``_finish_count``: more levels than
#: its counters (nothing done yet), or a tie the merge left out of the kept order.
_NEEDS_MERGE = -1.0
_NEEDS_TIE_FIX = -2.0


@njit(cache=True)
def counting_merge(
    H: np.ndarray, h: np.ndarray, level: np.ndarray, order: np.ndarray, tmp: np.ndarray,
    lo: int, hi: int, k: int,
) -> float:  # fmt: skip
    """``_merge_by_h`` and the count of ``_ties_as_errors_in_order`` in one sweep, or a flag.

    The merge places rows from the top, in the kept order, and each row adds the rows of
    lower level placed before it: crucial pairs (x0 of a lower level than x1) with
    ``H(x0) >= H(x1)``. The per-level counters are updated for every level at once (K + 1
    adds, no branch), so a query with more than ``_COUNTER_MAX_LEVELS`` levels is left
    as it is and ``_NEEDS_MERGE`` returned.

    Adding ``alpha`` to two different H values can round them to one: a new tie whose
    levels are not in the kept order. The sweep notices (a level lower than the last one
    on the same H) and returns ``_NEEDS_TIE_FIX`` (the rows are merged). ``_finish_count``
    then does the rest: kept apart so that the rare routes are compiled only where they are
    called (``_merge_counting_errors``, ``finish_counts``), not into every binary update
    (about 1.8 s of a cold first training).
    """
    if k > _COUNTER_MAX_LEVELS:
        return _NEEDS_MERGE
    n0, n1 = _split_by_h(h, order, tmp, lo, hi)
    cum = np.empty(k + 1)  # rows placed so far with level < c
    for c in range(k + 1):  # np.zeros compiles more than np.empty and this loop (cold start)
        cum[c] = 0.0
    errors = 0.0
    i = n0 - 1  # h = 0 rows: tmp[lo:n0], largest H last
    j = n1 + 1  # h = 1 rows: tmp[n1 + 1:hi], largest H first
    prev = np.nan
    prev_level = 0
    broken = False
    for t in range(hi - 1, lo - 1, -1):
        if i >= lo and j < hi:
            ri = tmp[i]
            rj = tmp[j]
            hi_ = H[ri]
            hj_ = H[rj]
            # from the top: larger H first; on equal H the lower level, then the h = 1 row
            take = (hj_ > hi_) | ((hj_ == hi_) & (level[rj] <= level[ri]))
            r = rj if take else ri
            j += np.int64(take)
            i -= 1 - np.int64(take)
        elif i >= lo:
            r = tmp[i]
            i -= 1
        else:
            r = tmp[j]
            j += 1
        order[t] = r
        v = H[r]
        lv = level[r]
        broken |= (v == prev) & (lv < prev_level)
        prev = v
        prev_level = lv
        errors += cum[lv]
        for c in range(k + 1):
            cum[c] += 1.0 if c > lv else 0.0
    if broken:
        return _NEEDS_TIE_FIX
    return errors


@njit(cache=True)
def _finish_count(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    H: np.ndarray, h: np.ndarray, level: np.ndarray, order: np.ndarray, tmp: np.ndarray,
    lo: int, hi: int, k: int, scratch: np.ndarray, off: int, flag: float,
) -> float:  # fmt: skip
    """Finish what ``counting_merge`` left (``flag``), then count.

    Merge (many levels) or re-sort the ties, then count with the Fenwick tree in
    ``scratch[off : off + 2K + 1]``.
    """
    if flag == _NEEDS_MERGE:
        _merge_by_h(H, h, level, order, tmp, lo, hi)
    else:
        _fix_tie_order(H, level, order, lo, hi)
    return _ties_as_errors_in_order(H, level, order, lo, hi, k, scratch, off)


@njit(cache=True)
def _merge_counting_errors(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    H: np.ndarray, h: np.ndarray, level: np.ndarray, order: np.ndarray, tmp: np.ndarray,
    lo: int, hi: int, k: int, scratch: np.ndarray, off: int,
) -> float:  # fmt: skip
    """``_merge_by_h`` and then the count of ``_ties_as_errors_in_order``, every route.

    ``counting_merge``, then ``_finish_count`` if it left the query.
    """
    errors = counting_merge(H, h, level, order, tmp, lo, hi, k)
    if errors < 0.0:
        return _finish_count(H, h, level, order, tmp, lo, hi, k, scratch, off, errors)
    return errors


def _finish_counts(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    H: np.ndarray, h: np.ndarray, level: np.ndarray, qstart: np.ndarray, lstart: np.ndarray,
    order: np.ndarray, tmp: np.ndarray, scratch: np.ndarray, errors: np.ndarray,
    queries: np.ndarray,
) -> None:  # fmt: skip
    for u in prange(queries.shape[0]):
        q = queries[u]
        base = lstart[q]
        errors[q] = _finish_count(
            H, h, level, order, tmp, qstart[q], qstart[q + 1], lstart[q + 1] - base,
            scratch, 2 * base + q, errors[q],
        )  # fmt: skip


_finish_counts_serial, _finish_counts_parallel = serial_and_parallel(_finish_counts)


def finish_counts(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    H: np.ndarray, h: np.ndarray, level: np.ndarray, qstart: np.ndarray, lstart: np.ndarray,
    order: np.ndarray, tmp: np.ndarray, scratch: np.ndarray, errors: np.ndarray,
) -> None:  # fmt: skip
    """Finish the queries ``counting_merge`` left (``errors < 0``), in place.

    Query ``q``'s tree is ``scratch[2 lstart[q] + q:]`` (the binary update's layout).
    """
    queries = np.flatnonzero(errors < 0.0)
    if queries.shape[0] == 0:
        return
    rows = int(np.sum(qstart[queries + 1] - qstart[queries]))
    driver = _finish_counts_parallel if use_parallel(8 * rows) else _finish_counts_serial
    driver(H, h, level, qstart, lstart, order, tmp, scratch, errors, queries)


@njit(cache=True)
def _reorder_query(
    H: np.ndarray, h: np.ndarray, level: np.ndarray, binary: bool, order: np.ndarray,
    tmp: np.ndarray, lo: int, hi: int,
) -> None:  # fmt: skip
    """Restore the kept order of ``order[lo:hi]``: a merge for binary ``h``, else a sort."""
    if binary:
        _merge_by_h(H, h, level, order, tmp, lo, hi)
        return
    seg = order[lo:hi].copy()
    vals = np.empty(hi - lo)
    for t in range(hi - lo):
        vals[t] = H[seg[t]]
    idx = np.argsort(vals, kind="mergesort")
    for t in range(hi - lo):
        order[lo + t] = seg[idx[t]]
    _fix_tie_order(H, level, order, lo, hi)


def _reorder(
    H: np.ndarray, h: np.ndarray, level: np.ndarray, binary: bool, qstart: np.ndarray,
    order: np.ndarray, tmp: np.ndarray,
) -> None:  # fmt: skip
    for q in prange(qstart.shape[0] - 1):
        _reorder_query(H, h, level, binary, order, tmp, qstart[q], qstart[q + 1])


_reorder_serial, _reorder_parallel = serial_and_parallel(_reorder)


def _merge_queries(
    H: np.ndarray, h: np.ndarray, level: np.ndarray, qstart: np.ndarray, order: np.ndarray,
    tmp: np.ndarray,
) -> None:  # fmt: skip
    for q in prange(qstart.shape[0] - 1):
        _merge_by_h(H, h, level, order, tmp, qstart[q], qstart[q + 1])


_merge_queries_serial, _merge_queries_parallel = serial_and_parallel(_merge_queries)


def reorder(
    H: np.ndarray, h: np.ndarray, level: np.ndarray, binary: bool, qstart: np.ndarray,
    order: np.ndarray, tmp: np.ndarray,
) -> None:  # fmt: skip
    """Keep ``order`` valid after an update.

    Each query's rows in the kept order: increasing ``H``, then decreasing level. A binary
    ``h`` (exactly 0 or 1) takes the merge alone (``_merge_queries``), as uint8: the
    specialisation the binary update already compiled, and neither the sort of real-valued
    rankers nor a float copy of the merge is compiled (about 1.5 s of a cold first training).
    """
    parallel = use_parallel(8 * H.shape[0])
    if binary:
        h8 = h if h.dtype == np.uint8 else h.astype(np.uint8)
        merge = _merge_queries_parallel if parallel else _merge_queries_serial
        merge(H, h8, level, qstart, order, tmp)
    elif parallel:
        _reorder_parallel(H, h, level, binary, qstart, order, tmp)
    else:
        _reorder_serial(H, h, level, binary, qstart, order, tmp)


def _sorted_errors(
    H: np.ndarray, level: np.ndarray, order: np.ndarray, qstart: np.ndarray,
    lstart: np.ndarray, tie_weight: float, scratch: np.ndarray, out_errors: np.ndarray,
) -> None:  # fmt: skip
    for q in prange(qstart.shape[0] - 1):
        out_errors[q] = _errors_in_order(
            H, level, order, qstart[q], qstart[q + 1], lstart[q + 1] - lstart[q],
            tie_weight, scratch, 2 * lstart[q] + q,
        )  # fmt: skip


_sorted_errors_serial, _sorted_errors_parallel = serial_and_parallel(_sorted_errors)


def _sorted_tie_errors(
    H: np.ndarray, level: np.ndarray, order: np.ndarray, qstart: np.ndarray,
    lstart: np.ndarray, scratch: np.ndarray, out_errors: np.ndarray,
) -> None:  # fmt: skip
    for q in prange(qstart.shape[0] - 1):
        out_errors[q] = _ties_as_errors_in_order(
            H, level, order, qstart[q], qstart[q + 1], lstart[q + 1] - lstart[q],
            scratch, 2 * lstart[q] + q,
        )  # fmt: skip


_sorted_tie_errors_serial, _sorted_tie_errors_parallel = serial_and_parallel(_sorted_tie_errors)


def sorted_level_errors(
    H: np.ndarray, level: np.ndarray, order: np.ndarray, qstart: np.ndarray,
    lstart: np.ndarray, tie_weight: float,
) -> np.ndarray:  # fmt: skip
    """Misordered crucial pairs per query, given each query's rows in increasing ``H``.

    Query ``q`` uses ``scratch[2 lstart[q] + q:][:2 K_q + 1]`` (see ``_errors_in_order``).
    ``tie_weight = 1`` (the training rloss) calls ``_ties_as_errors_in_order`` directly,
    which ``_errors_in_order`` would return, so the general loop is compiled only when used.
    """
    out = np.empty(qstart.shape[0] - 1)
    scratch = np.empty(2 * int(lstart[-1]) + qstart.shape[0])
    parallel = use_parallel(8 * H.shape[0])
    if tie_weight == 1.0:
        ties = _sorted_tie_errors_parallel if parallel else _sorted_tie_errors_serial
        ties(H, level, order, qstart, lstart, scratch, out)
        return out
    kernel = _sorted_errors_parallel if parallel else _sorted_errors_serial
    kernel(H, level, order, qstart, lstart, float(tie_weight), scratch, out)
    return out
