"""Click-log kernels over sessions (numba): grouping, checks, and the sums training needs.

``rankboost.clicks`` groups a log's rows by session (``session_runs``, ``count_runs``,
``runs_in_order``), checks the sessions (``first_irregular_run``, ``first_duplicate``), and sums
them for training (``add_sessions``); the streamed reader finds a chunk's sessions as runs of
rows (``run_breaks``). The per-session pair extraction itself is in
``clicks.py`` (``_session_pairs``); ``add_sessions`` enumerates the same pairs.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .clicks import compared_rows, last_click, mixed_slot


@njit(cache=True)
def session_runs(qcode: np.ndarray, scode: np.ndarray, pos: np.ndarray, first: np.ndarray) -> int:
    """Runs of equal ``(qcode, scode)``: their starts in ``first``; -1 unless positions rise.

    Returns the number of runs, or -1 when some run's positions do not strictly increase
    (then the caller sorts every entry).
    """
    n = qcode.shape[0]
    k = 0
    for i in range(n):
        if i == 0 or qcode[i] != qcode[i - 1] or scode[i] != scode[i - 1]:
            first[k] = i
            k += 1
        elif pos[i] <= pos[i - 1]:
            return -1
    return k


@njit(cache=True)
def count_runs(qcode: np.ndarray, scode: np.ndarray) -> int:
    """The number of runs of equal ``(qcode, scode)`` (``session_runs`` fills their starts)."""
    k = 0
    for i in range(qcode.shape[0]):
        if i == 0 or qcode[i] != qcode[i - 1] or scode[i] != scode[i - 1]:
            k += 1
    return k


@njit(cache=True)
def runs_in_order(first: np.ndarray, run_order: np.ndarray, n: int, out: np.ndarray) -> None:
    """``out`` = the entries of the runs in the order ``run_order``, one after the other.

    Run ``r`` is ``[first[r], first[r + 1])``; the last one ends at ``n``.
    """
    k = 0
    n_runs = first.shape[0]
    for j in range(n_runs):
        r = run_order[j]
        hi = first[r + 1] if r + 1 < n_runs else n
        for i in range(first[r], hi):
            out[k] = i
            k += 1


@njit(cache=True)
def first_duplicate(starts: np.ndarray, codes: np.ndarray, out: np.ndarray) -> None:
    """The first session showing one code twice: ``out = (a, b)``, else ``(-1, -1)``.

    ``a < b`` are the first two entries of the session's smallest repeated code (what a
    stable sort of ``(session, code)`` finds first).
    """
    out[0] = -1
    out[1] = -1
    for s in range(starts.shape[0] - 1):
        lo = starts[s]
        hi = starts[s + 1]
        if hi - lo < 2:
            continue
        best = -1
        if hi - lo <= 32:  # short lists: compare every pair, no allocation
            for i in range(lo, hi):
                for j in range(i + 1, hi):
                    if codes[i] == codes[j] and (best < 0 or codes[i] < codes[best]):
                        best = i
                        out[0] = i
                        out[1] = j
                        break
        else:
            order = np.argsort(codes[lo:hi], kind="mergesort")
            for i in range(1, hi - lo):
                if codes[lo + order[i]] == codes[lo + order[i - 1]]:
                    best = i
                    out[0] = lo + order[i - 1]
                    out[1] = lo + order[i]
                    break
        if best >= 0:
            return


@njit(cache=True)
def remap(codes: np.ndarray, table: np.ndarray) -> None:
    """``codes[i] = table[codes[i]]``, in place."""
    for i in range(codes.shape[0]):
        codes[i] = table[codes[i]]


# --------------------------------------------------------------------------- aggregation
#
# Training needs the sessions only through two sums (``rankboost.clicks._counts``): per pair
# ``(lower row, upper row, position of the clicked one)`` the summed session counts, and per
# ``(row, position)`` the impressions and clicks. ``add_sessions`` adds whole sessions into
# two open-addressing tables keyed by three int64 (``keys[:, :3]``), so the memory grows with
# the distinct pairs and cells, not with the sessions; a log streamed in chunks and the same
# log in memory add the same counts (exactly, for integral counts: sums of integers).


@njit(cache=True)
def _key_slot(a: int, b: int, c: int, mask: np.uint64) -> int:
    """Table slot of the key ``(a, b, c)``: the three mixed into one word, then hashed."""
    x = np.uint64(a) * np.uint64(0x9E3779B97F4A7C15)
    x ^= np.uint64(b) * np.uint64(0xC2B2AE3D27D4EB4F)
    x ^= np.uint64(c) * np.uint64(0x165667B19E3779F9)
    return mixed_slot(x, mask)


@njit(cache=True)
def _table_add(  # noqa: PLR0917  numba helper: the table's arrays and one key and its values
    slots: np.ndarray,
    keys: np.ndarray,
    values: np.ndarray,
    n_keys: int,
    a: int,
    b: int,
    c: int,
    v0: float,
    v1: float,
) -> int:
    """Add ``(v0, v1)`` at key ``(a, b, c)``; returns the number of keys after."""
    mask = np.uint64(slots.shape[0] - 1)
    j = _key_slot(a, b, c, mask)
    while True:
        k = slots[j]
        if k < 0:
            slots[j] = n_keys
            keys[n_keys, 0] = a
            keys[n_keys, 1] = b
            keys[n_keys, 2] = c
            values[n_keys, 0] = v0
            values[n_keys, 1] = v1
            return n_keys + 1
        if keys[k, 0] == a and keys[k, 1] == b and keys[k, 2] == c:
            values[k, 0] += v0
            values[k, 1] += v1
            return n_keys
        j = (j + 1) & np.int64(mask)


@njit(cache=True)
def table_rehash(keys: np.ndarray, n_keys: int, slots: np.ndarray) -> None:
    """Fill the empty table ``slots`` (-1) with the keys ``0..n_keys-1``."""
    mask = np.uint64(slots.shape[0] - 1)
    for k in range(n_keys):
        j = _key_slot(keys[k, 0], keys[k, 1], keys[k, 2], mask)
        while slots[j] >= 0:
            j = (j + 1) & np.int64(mask)
        slots[j] = k


@njit(cache=True)
def add_sessions(  # noqa: PLR0917  numba kernel: the sessions, the mode and both tables
    starts: np.ndarray,
    rows: np.ndarray,
    position: np.ndarray,
    clicked: np.ndarray,
    count: np.ndarray,
    mode: int,
    first: int,
    pair_slots: np.ndarray,
    pair_keys: np.ndarray,
    pair_values: np.ndarray,
    cell_slots: np.ndarray,
    cell_keys: np.ndarray,
    cell_values: np.ndarray,
    state: np.ndarray,
) -> None:
    """Add sessions ``first, first + 1, ...`` (``[starts[s], starts[s + 1])``, by position).

    Pairs: ``(rows[lower], rows[upper], position[upper]) += count[upper]`` for every pair
    of the extraction ``mode`` (as ``_session_pairs``); cells: ``(rows[e], position[e], 0)
    += (count[e], count[e] * clicked[e])``. ``state = (pair keys, cell keys, next
    session)`` in and out: the kernel stops before a session that could fill a table past
    half its slots (the caller grows it and calls again from ``state[2]``).
    """
    n_pairs = state[0]
    n_cells = state[1]
    pair_room = pair_slots.shape[0] // 2
    cell_room = cell_slots.shape[0] // 2
    for s in range(first, starts.shape[0] - 1):
        lo = starts[s]
        hi = starts[s + 1]
        m = hi - lo
        if n_pairs + m * m > pair_room or n_cells + m > cell_room:
            state[0] = n_pairs
            state[1] = n_cells
            state[2] = s
            return
        for e in range(lo, hi):
            n_cells = _table_add(
                cell_slots,
                cell_keys,
                cell_values,
                n_cells,
                rows[e],
                position[e],
                0,
                count[e],
                count[e] * clicked[e],
            )
        last = last_click(mode, clicked, lo, hi)
        for c in range(lo, hi):
            if not clicked[c] or (mode == 2 and c != last):
                continue
            a, stop = compared_rows(mode, c, lo, hi)
            for o in range(a, stop):
                if o == c or (clicked[o] and mode != 4):
                    continue
                n_pairs = _table_add(
                    pair_slots,
                    pair_keys,
                    pair_values,
                    n_pairs,
                    rows[o],
                    rows[c],
                    position[c],
                    count[c],
                    0.0,
                )
    state[0] = n_pairs
    state[1] = n_cells
    state[2] = starts.shape[0] - 1


# --------------------------------------------------------------------------- streamed runs


@njit(cache=True)
def run_breaks(  # noqa: PLR0917  numba kernel: the chunk, the session spans, the run before
    buf: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    qcode: np.ndarray,
    prev: np.ndarray,
    prev_q: int,
    new: np.ndarray,
) -> None:
    """``new[r] = 1`` where row ``r`` starts a run: its qid or its session bytes differ.

    Row 0 is compared with the last row of the chunk before (qid code ``prev_q``, session
    bytes ``prev``; ``prev_q = -1``: none). Bytes are compared, not hashes.
    """
    for r in range(start.shape[0]):
        if r == 0:
            same = prev_q == qcode[0] and end[0] - start[0] == prev.shape[0]
            if same:
                for i in range(prev.shape[0]):
                    if buf[start[0] + i] != prev[i]:
                        same = False
                        break
        else:
            a = start[r]
            b = start[r - 1]
            m = end[r] - a
            same = qcode[r] == qcode[r - 1] and m == end[r - 1] - b
            if same:
                for i in range(m):
                    if buf[a + i] != buf[b + i]:
                        same = False
                        break
        new[r] = 0 if same else 1


@njit(cache=True)
def first_irregular_run(starts: np.ndarray, position: np.ndarray, count: np.ndarray) -> int:
    """The first run whose positions are not ``1, 2, ..., m`` or whose count varies, else -1."""
    for s in range(starts.shape[0] - 1):
        lo = starts[s]
        for e in range(lo, starts[s + 1]):
            if position[e] != e - lo + 1 or count[e] != count[lo]:
                return s
    return -1


@njit(cache=True)
def set_add(table: np.ndarray, n: int, h: np.ndarray) -> int:
    """Add the 64-bit hashes ``h`` to the open-addressing set ``table`` (0 = empty slot).

    ``n`` = hashes in the set before; the caller keeps the table under 3/4 full. Returns the
    hashes in the set after, or -1 at the first hash already there (or given twice).
    """
    mask = np.uint64(table.shape[0] - 1)
    for i in range(h.shape[0]):
        x = h[i] | np.uint64(1)  # never 0 (the empty mark); the low bit is given up
        j = (x * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32) & mask
        while True:
            y = table[j]
            if y == 0:
                table[j] = x
                n += 1
                break
            if y == x:
                return -1
            j = (j + np.uint64(1)) & mask
    return n


@njit(cache=True)
def set_rehash(old: np.ndarray, table: np.ndarray) -> None:
    """Put the hashes of the set ``old`` into the empty (zeroed), larger ``table``."""
    mask = np.uint64(table.shape[0] - 1)
    for i in range(old.shape[0]):
        x = old[i]
        if x == 0:
            continue
        j = (x * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32) & mask
        while table[j] != 0:
            j = (j + np.uint64(1)) & mask
        table[j] = x
