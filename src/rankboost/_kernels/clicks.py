"""Click-log kernels (numba): preference pairs from shown lists, one session per unit.

A click log enters as contiguous arrays grouped by session, each session sorted by position
(``rankboost.clicks`` builds them):

* ``starts`` (int64, ``n_sessions + 1``): offsets of each session's entries;
* ``rows`` (int64, ``n_entries``): the feature row of each shown document;
* ``clicked`` (uint8, ``n_entries``): 1 where the document was clicked;
* ``entry_weight`` (float64, ``n_entries``): the weight a pair *inherits from its clicked
  document*, ``count / p_k`` clipped (or ``count`` without correction), computed outside.

Pair extractions (``mode``), each pair ``(lower, upper)`` = (non-clicked, clicked):

* 0 ``skip_above``: a clicked document above every non-clicked one shown above it
  (Joachims 2002, "Click > Skip Above");
* 1 ``skip_next``: a clicked document above the non-clicked one shown just below it
  (Joachims et al. 2005, "Click > No-Click Next");
* 2 ``last_click_skip_above``: skip-above from the last click of the session only
  (Joachims et al. 2005, "Last Click > Skip Above");
* 3 ``all_unclicked``: a clicked document above every non-clicked one of the list, above or
  below it (the pairs of Propensity SVM-Rank, Joachims, Swaminathan & Schnabel 2017, on the
  shown list);
* 4 ``all_shown``: a clicked document above every other document of the list, clicked or
  not (Propensity SVM-Rank's constraints exactly, on the shown list: with weights ``1/p_k``
  an unbiased estimate of the summed rank of the relevant documents under the
  position-based model, Joachims, Swaminathan & Schnabel 2017, eq. 12).

Every pair of a session weighs the clicked document's ``entry_weight``. The driver runs in two
passes over sessions (count, then fill at the counted offsets), each a ``prange``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import serial_and_parallel


@njit(cache=True)
def _session_pairs(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    lo: int,
    hi: int,
    rows: np.ndarray,
    clicked: np.ndarray,
    entry_weight: np.ndarray,
    mode: int,
    out_lower: np.ndarray,
    out_upper: np.ndarray,
    out_weight: np.ndarray,
    at: int,
    fill: bool,
) -> int:
    """Pairs of one session ``[lo, hi)`` (sorted by position); written at ``at`` when ``fill``.

    Returns the number of pairs of the session.
    """
    last = -1
    if mode == 2:
        for e in range(hi - 1, lo - 1, -1):
            if clicked[e]:
                last = e
                break
    n = 0
    for c in range(lo, hi):
        if not clicked[c]:
            continue
        if mode == 2 and c != last:
            continue
        if mode == 1:
            first = c + 1
            stop = min(c + 2, hi)
        elif mode >= 3:
            first = lo
            stop = hi
        else:
            first = lo
            stop = c
        for s in range(first, stop):
            if s == c or (clicked[s] and mode != 4):
                continue
            if fill:
                out_lower[at + n] = rows[s]
                out_upper[at + n] = rows[c]
                out_weight[at + n] = entry_weight[c]
            n += 1
    return n


def _count_pairs(
    starts: np.ndarray,
    rows: np.ndarray,
    clicked: np.ndarray,
    entry_weight: np.ndarray,
    mode: int,
    counts: np.ndarray,
) -> None:
    """``counts[s]`` = number of pairs of session ``s``."""
    dummy_i = np.empty(0, dtype=np.int64)
    dummy_w = np.empty(0, dtype=np.float64)
    for s in prange(starts.shape[0] - 1):
        counts[s] = _session_pairs(
            starts[s],
            starts[s + 1],
            rows,
            clicked,
            entry_weight,
            mode,
            dummy_i,
            dummy_i,
            dummy_w,
            0,
            False,
        )


def _fill_pairs(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    starts: np.ndarray,
    rows: np.ndarray,
    clicked: np.ndarray,
    entry_weight: np.ndarray,
    mode: int,
    offsets: np.ndarray,
    out_lower: np.ndarray,
    out_upper: np.ndarray,
    out_weight: np.ndarray,
) -> None:
    """Write the pairs of session ``s`` at ``offsets[s]`` (offsets from ``_count_pairs``)."""
    for s in prange(starts.shape[0] - 1):
        _session_pairs(
            starts[s],
            starts[s + 1],
            rows,
            clicked,
            entry_weight,
            mode,
            out_lower,
            out_upper,
            out_weight,
            offsets[s],
            True,
        )


_count_pairs_serial, _count_pairs_parallel = serial_and_parallel(_count_pairs)
_fill_pairs_serial, _fill_pairs_parallel = serial_and_parallel(_fill_pairs)


# --------------------------------------------------------------------------- log reading
#
# The reader (``rankboost.clicks._log``) hands a chunk of whole lines of a TSV/CSV file as a
# uint8 array. ``_tokenize`` splits it in one pass: per kept line (blank lines are skipped)
# its line index within the chunk, and per wanted field its stripped byte span; ``_hash_spans``
# turns the spans of an id column into 64-bit hashes, ``_parse_numbers`` the spans of
# a number column into float64 (exactly, for plain decimals; anything else is flagged for the
# Python parser), ``_same_bytes`` checks that equal hashes hold equal bytes.

_FNV_OFFSET = np.uint64(14695981039346656037)
_WORD_PRIME = np.uint64(0x9E3779B97F4A7C15)  # odd: multiplying by it is a bijection


@njit(cache=True)
def _is_space(b: int, sep: int) -> bool:
    return b != sep and (b == 32 or b == 9 or b == 13 or b == 11 or b == 12)


@njit(cache=True, nogil=True)  # the gzip thread decompresses meanwhile
def _tokenize(  # noqa: PLR0917  numba kernel: the chunk and its output arrays, unpacked by the reader
    buf: np.ndarray,
    sep: int,
    width: int,
    wanted: np.ndarray,
    out_line: np.ndarray,
    out_start: np.ndarray,
    out_end: np.ndarray,
    bad: np.ndarray,
) -> int:
    r"""Split ``buf`` (lines ending in ``\n``; the last one may not) into fields.

    ``wanted[j]`` = the output column of field ``j`` (-1: not kept). For the ``r``-th kept
    line: ``out_line[r]`` = its 0-based line index in the chunk, ``out_start/out_end[c, r]``
    the stripped span of its field for column ``c``. Returns the number of kept lines, or
    ``-1`` with ``bad = (line index, field count)`` of the first line whose field count is
    not ``width``.
    """
    n = buf.shape[0]
    i = 0
    line = 0
    r = 0
    while i < n:
        fields = 0
        nonblank = False
        while True:  # one field per iteration
            s = i
            while i < n and buf[i] != sep and buf[i] != 10:
                i += 1
            e = i
            while s < e and _is_space(buf[s], sep):
                s += 1
            while e > s and _is_space(buf[e - 1], sep):
                e -= 1
            if e > s:
                nonblank = True
            if fields < width and wanted[fields] >= 0 and r < out_line.shape[0]:
                out_start[wanted[fields], r] = s
                out_end[wanted[fields], r] = e
            fields += 1
            if i < n and buf[i] == sep:
                i += 1
                continue
            break
        i += 1  # past the newline
        if nonblank:
            if fields != width:
                bad[0] = line
                bad[1] = fields
                return -1
            out_line[r] = line
            r += 1
        line += 1
    return r


@njit(cache=True)
def _span_hash(buf: np.ndarray, a: int, b: int) -> np.uint64:
    """64-bit hash of ``buf[a:b]``, eight bytes at a time (FNV-1a's step over words, mixed)."""
    h = _FNV_OFFSET ^ np.uint64(b - a)
    i = a
    while i + 8 <= b:
        w = np.uint64(0)
        for k in range(8):  # little-endian word (the compiler makes it one load)
            w |= np.uint64(buf[i + k]) << np.uint64(8 * k)
        h = (h ^ w) * _WORD_PRIME
        h ^= h >> np.uint64(29)
        i += 8
    w = np.uint64(0)
    for k in range(b - i):
        w |= np.uint64(buf[i + k]) << np.uint64(8 * k)
    h = (h ^ w) * _WORD_PRIME
    return h ^ (h >> np.uint64(29))


@njit(cache=True)
def _hash_spans(buf: np.ndarray, start: np.ndarray, end: np.ndarray, out: np.ndarray) -> None:
    """``out[r]`` = the 64-bit hash (``_span_hash``) of ``buf[start[r]:end[r]]``."""
    for r in range(start.shape[0]):
        out[r] = _span_hash(buf, start[r], end[r])


@njit(cache=True)
def _slot(x: np.uint64, mask: np.uint64) -> int:
    """Table slot of hash ``x``: its bits mixed (splitmix64's finalizer), then masked."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    x = x ^ (x >> np.uint64(31))
    return np.int64(x & mask)


@njit(cache=True)
def _rehash(keys: np.ndarray, n_keys: int, slots: np.ndarray) -> None:
    """Fill the empty open-addressing table ``slots`` (-1) with codes ``0..n_keys-1``."""
    mask = np.uint64(slots.shape[0] - 1)
    for c in range(n_keys):
        j = _slot(keys[c], mask)
        while slots[j] >= 0:
            j = (j + 1) & np.int64(mask)
        slots[j] = c


@njit(cache=True)
def _intern(  # noqa: PLR0917  numba kernel: the hashes, the table and the outputs
    h: np.ndarray,
    slots: np.ndarray,
    keys: np.ndarray,
    n_keys: int,
    codes: np.ndarray,
    new_at: np.ndarray,
) -> int:
    """Code every hash: a known one its code, a new one ``n_keys``, ``n_keys + 1``, ...

    ``slots`` (a power of two, more than twice the codes after the call) is an
    open-addressing table of codes, ``keys[c]`` the hash of code ``c`` (room for the new
    ones). ``new_at`` receives the entries that introduced a new code. Returns how many.
    """
    mask = np.uint64(slots.shape[0] - 1)
    n_new = 0
    for r in range(h.shape[0]):
        x = h[r]
        j = _slot(x, mask)
        while True:
            c = slots[j]
            if c < 0:
                slots[j] = n_keys
                keys[n_keys] = x
                codes[r] = n_keys
                new_at[n_new] = r
                n_new += 1
                n_keys += 1
                break
            if keys[c] == x:
                codes[r] = c
                break
            j = (j + 1) & np.int64(mask)
    return n_new


@njit(cache=True)
def _same_bytes(  # noqa: PLR0917  numba kernel: the chunk, its spans, the known ids
    buf: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    codes: np.ndarray,
    names: np.ndarray,
    names_at: np.ndarray,
) -> int:
    """The first ``r`` whose span differs from the bytes of its code's id, else -1.

    ``names[names_at[c]:names_at[c + 1]]`` are the bytes of the id of code ``c``.
    """
    for r in range(start.shape[0]):
        a = start[r]
        c = codes[r]
        b = names_at[c]
        m = end[r] - a
        if m != names_at[c + 1] - b:
            return r
        for k in range(m):
            if buf[a + k] != names[b + k]:
                return r
    return -1


@njit(cache=True)
def _gather_spans(buf: np.ndarray, start: np.ndarray, end: np.ndarray, out: np.ndarray) -> None:
    """Concatenate the spans ``buf[start[r]:end[r]]`` into ``out``."""
    k = 0
    for r in range(start.shape[0]):
        for i in range(start[r], end[r]):
            out[k] = buf[i]
            k += 1


@njit(cache=True)
def _padded(blob: np.ndarray, at: np.ndarray, width: int, out: np.ndarray) -> None:
    """``out[c, :]`` = the bytes of id ``c`` (``blob[at[c]:at[c + 1]]``), zero-padded."""
    for c in range(at.shape[0] - 1):
        m = at[c + 1] - at[c]
        for i in range(m):
            out[c, i] = blob[at[c] + i]
        for i in range(m, width):
            out[c, i] = 0


@njit(cache=True)
def _session_runs(qcode: np.ndarray, scode: np.ndarray, pos: np.ndarray, first: np.ndarray) -> int:
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
def _first_duplicate(starts: np.ndarray, codes: np.ndarray, out: np.ndarray) -> None:
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
def _put_int(out: np.ndarray, k: int, v: int) -> int:
    """Write the decimal digits of ``v >= 0`` at ``out[k:]``; return the next offset."""
    if v == 0:
        out[k] = 48
        return k + 1
    m = 0
    t = v
    while t > 0:
        t //= 10
        m += 1
    for i in range(m - 1, -1, -1):
        out[k + i] = 48 + v % 10
        v //= 10
    return k + m


@njit(cache=True)
def _format_log(  # noqa: PLR0917  numba kernel: the shown lists of a chunk of sessions
    prefix: np.ndarray,
    prefix_at: np.ndarray,
    rows: np.ndarray,
    clicks: np.ndarray,
    session: np.ndarray,
    out: np.ndarray,
) -> int:
    r"""TSV lines ``qid docid position click session 1`` of a ``(sessions, shown)`` chunk.

    ``prefix[prefix_at[r]:prefix_at[r + 1]]`` = ``"qid\tdocid\t"`` of feature row ``r``;
    ``rows[i, j]`` the row shown at position ``j + 1`` of session number ``session[i]``
    (-1: none, the list is shorter). Returns the bytes written.
    """
    k = 0
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            r = rows[i, j]
            if r < 0:
                continue
            for b in range(prefix_at[r], prefix_at[r + 1]):
                out[k] = prefix[b]
                k += 1
            k = _put_int(out, k, j + 1)
            out[k] = 9
            out[k + 1] = 49 if clicks[i, j] else 48
            out[k + 2] = 9
            k = _put_int(out, k + 3, session[i])
            out[k] = 9
            out[k + 1] = 49
            out[k + 2] = 10
            k += 3
    return k


_POW10 = 10.0 ** np.arange(23)


@njit(cache=True, nogil=True)  # the gzip thread decompresses meanwhile
def _parse_numbers(
    buf: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    pow10: np.ndarray,
    out: np.ndarray,
    flag: np.ndarray,
) -> int:
    """Parse the spans as ``[-]digits[.digits]`` into ``out``; flag the others.

    Exact (one correctly rounded division of two exact doubles) for up to 15 significant
    digits and 22 decimals; anything else (exponents, ``inf``, long numbers, text) sets
    ``flag[r] = 1`` for the caller's parser. Returns the number of flagged spans.
    """
    n_flag = 0
    for r in range(start.shape[0]):
        s = start[r]
        e = end[r]
        neg = False
        if s < e and buf[s] == 45:  # '-'
            neg = True
            s += 1
        mant = 0
        digits = 0
        decimals = 0
        seen_dot = False
        ok = s < e
        for k in range(s, e):
            b = buf[k]
            if 48 <= b <= 57:
                if digits > 0 or b != 48:
                    digits += 1
                mant = mant * 10 + (b - 48)
                if seen_dot:
                    decimals += 1
            elif b == 46 and not seen_dot:
                seen_dot = True
            else:
                ok = False
                break
        if ok and (e - s == 1 and seen_dot):
            ok = False  # "." alone
        if not ok or digits > 15 or decimals > 22:
            flag[r] = 1
            out[r] = np.nan
            n_flag += 1
            continue
        v = float(mant)
        if decimals:
            v = v / pow10[decimals]
        out[r] = -v if neg else v
    return n_flag


# --------------------------------------------------------------------------- aggregation
#
# Training needs the sessions only through two sums (``rankboost.clicks._counts``): per pair
# ``(lower row, upper row, position of the clicked one)`` the summed session counts, and per
# ``(row, position)`` the impressions and clicks. ``_add_sessions`` adds whole sessions into
# two open-addressing tables keyed by three int64 (``keys[:, :3]``), so the memory grows with
# the distinct pairs and cells, not with the sessions; a log streamed in chunks and the same
# log in memory add the same counts (exactly, for integral counts: sums of integers).


@njit(cache=True)
def _key_slot(a: int, b: int, c: int, mask: np.uint64) -> int:
    x = np.uint64(a) * np.uint64(0x9E3779B97F4A7C15)
    x ^= np.uint64(b) * np.uint64(0xC2B2AE3D27D4EB4F)
    x ^= np.uint64(c) * np.uint64(0x165667B19E3779F9)
    return _slot(x, mask)


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
def _table_rehash(keys: np.ndarray, n_keys: int, slots: np.ndarray) -> None:
    """Fill the empty table ``slots`` (-1) with the keys ``0..n_keys-1``."""
    mask = np.uint64(slots.shape[0] - 1)
    for k in range(n_keys):
        j = _key_slot(keys[k, 0], keys[k, 1], keys[k, 2], mask)
        while slots[j] >= 0:
            j = (j + 1) & np.int64(mask)
        slots[j] = k


@njit(cache=True)
def _add_sessions(  # noqa: PLR0917  numba kernel: the sessions, the mode and both tables
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
        last = -1
        if mode == 2:
            for e in range(hi - 1, lo - 1, -1):
                if clicked[e]:
                    last = e
                    break
        for c in range(lo, hi):
            if not clicked[c] or (mode == 2 and c != last):
                continue
            if mode == 1:
                a = c + 1
                stop = min(c + 2, hi)
            elif mode >= 3:
                a = lo
                stop = hi
            else:
                a = lo
                stop = c
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


@njit(cache=True)
def _run_breaks(  # noqa: PLR0917  numba kernel: the chunk, the session spans, the run before
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
def _runs_ok(starts: np.ndarray, position: np.ndarray, count: np.ndarray) -> int:
    """The first run whose positions are not ``1, 2, ..., m`` or whose count varies, else -1."""
    for s in range(starts.shape[0] - 1):
        lo = starts[s]
        for e in range(lo, starts[s + 1]):
            if position[e] != e - lo + 1 or count[e] != count[lo]:
                return s
    return -1


@njit(cache=True)
def _count_runs(qcode: np.ndarray, scode: np.ndarray) -> int:
    """The number of runs of equal ``(qcode, scode)`` (``_session_runs`` fills their starts)."""
    k = 0
    for i in range(qcode.shape[0]):
        if i == 0 or qcode[i] != qcode[i - 1] or scode[i] != scode[i - 1]:
            k += 1
    return k


@njit(cache=True)
def _runs_in_order(first: np.ndarray, run_order: np.ndarray, n: int, out: np.ndarray) -> None:
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
def _sessions_valid(starts: np.ndarray, position: np.ndarray, count: np.ndarray) -> bool:
    """Every session shows positions ``1..m`` in order with one count (the usual case)."""
    for s in range(starts.shape[0] - 1):
        lo = starts[s]
        for e in range(lo, starts[s + 1]):
            if position[e] != e - lo + 1 or count[e] != count[lo]:
                return False
    return True


@njit(cache=True)
def _remap(codes: np.ndarray, table: np.ndarray) -> None:
    """``codes[i] = table[codes[i]]``, in place."""
    for i in range(codes.shape[0]):
        codes[i] = table[codes[i]]


@njit(cache=True)
def _same_span(buf: np.ndarray, a: int, b: int, ids: np.ndarray, c: int, d: int) -> bool:
    """``buf[a:b] == ids[c:d]``."""
    if b - a != d - c:
        return False
    for i in range(b - a):
        if buf[a + i] != ids[c + i]:
            return False
    return True


@njit(cache=True, nogil=True)  # the gzip thread decompresses meanwhile
def _intern_spans(  # noqa: PLR0917  numba kernel: the chunk's spans, the table, the known ids
    buf: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    slots: np.ndarray,
    keys: np.ndarray,
    n_keys: int,
    blob: np.ndarray,
    blob_at: np.ndarray,
    codes: np.ndarray,
    new_at: np.ndarray,
) -> int:
    """Code the ids ``buf[start[r]:end[r]]``: ``_hash_spans``, ``_intern`` and ``_same_bytes``.

    A row holding its predecessor's bytes takes its code (ids repeat on neighbouring rows:
    a session's qid and session id); any other is hashed, looked up, and its bytes compared
    with the id of the code found (``blob[blob_at[c]:blob_at[c + 1]]`` for the ``n_keys``
    known ids, the first row of a new one). Returns the number of new ids (their rows in
    ``new_at``), or -1 when two different ids share a hash.
    """
    mask = np.uint64(slots.shape[0] - 1)
    n_old = n_keys
    n_new = 0
    for r in range(start.shape[0]):
        a = start[r]
        b = end[r]
        if r > 0 and _same_span(buf, a, b, buf, start[r - 1], end[r - 1]):
            codes[r] = codes[r - 1]
            continue
        x = _span_hash(buf, a, b)
        j = _slot(x, mask)
        while True:
            c = slots[j]
            if c < 0:
                slots[j] = n_keys
                keys[n_keys] = x
                codes[r] = n_keys
                new_at[n_new] = r
                n_new += 1
                n_keys += 1
                break
            if keys[c] == x:
                if c < n_old:
                    same = _same_span(buf, a, b, blob, blob_at[c], blob_at[c + 1])
                else:
                    f = new_at[c - n_old]
                    same = _same_span(buf, a, b, buf, start[f], end[f])
                if not same:
                    return -1
                codes[r] = c
                break
            j = (j + 1) & np.int64(mask)
    return n_new


@njit(cache=True, nogil=True)
def _parse_small_ints(  # noqa: PLR0917  numba kernel: the chunk's spans, the range, the output
    buf: np.ndarray, start: np.ndarray, end: np.ndarray, low: int, high: int, out: np.ndarray
) -> bool:
    """Parse spans of 1-15 plain digits within ``[low, high]`` into ``out``.

    Returns False at the first other span (a sign, a dot, text, a value out of range): the
    caller then parses the column as numbers (``_parse_numbers``) and checks them.
    """
    for r in range(start.shape[0]):
        s = start[r]
        e = end[r]
        if e <= s or e - s > 15:
            return False
        v = 0
        for k in range(s, e):
            b = buf[k]
            if b < 48 or b > 57:
                return False
            v = v * 10 + (b - 48)
        if v < low or v > high:
            return False
        out[r] = v
    return True
