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
def last_click(mode: int, clicked: np.ndarray, lo: int, hi: int) -> int:
    """The last clicked entry of session ``[lo, hi)`` under mode 2, else -1.

    Mode 2 takes its pairs from the last click only; -1 also when nothing is clicked.
    """
    if mode == 2:
        for e in range(hi - 1, lo - 1, -1):
            if clicked[e]:
                return e
    return -1


@njit(cache=True)
def compared_rows(mode: int, c: int, lo: int, hi: int) -> tuple[int, int]:
    """``(first, stop)``: the entries a click at ``c`` is preferred to, as a range.

    Of session ``[lo, hi)`` under ``mode``: the next one (1), the whole list (3, 4), the ones
    above (0, 2); the caller skips ``c`` itself and, except in mode 4, the clicked ones.
    """
    if mode == 1:
        return c + 1, min(c + 2, hi)
    if mode >= 3:
        return lo, hi
    return lo, c


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
    last = last_click(mode, clicked, lo, hi)
    n = 0
    for c in range(lo, hi):
        if not clicked[c] or (mode == 2 and c != last):
            continue
        first, stop = compared_rows(mode, c, lo, hi)
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


def count_pairs(  # noqa: PLR0917  the driver's arrays, then the pick
    starts: np.ndarray,
    rows: np.ndarray,
    clicked: np.ndarray,
    entry_weight: np.ndarray,
    mode: int,
    counts: np.ndarray,
    parallel: bool,
) -> None:
    """``counts[s]`` = the number of pairs of session ``s`` (module docstring's arrays)."""
    (_count_pairs_parallel if parallel else _count_pairs_serial)(
        starts, rows, clicked, entry_weight, mode, counts
    )


def fill_pairs(  # noqa: PLR0917  the driver's arrays, then the pick
    starts: np.ndarray,
    rows: np.ndarray,
    clicked: np.ndarray,
    entry_weight: np.ndarray,
    mode: int,
    offsets: np.ndarray,
    out: tuple[np.ndarray, np.ndarray, np.ndarray],
    parallel: bool,
) -> None:
    """Write each session's pairs into ``out = (lower, upper, weight)`` at ``offsets[s]``.

    ``offsets``: the cumulative sums of :func:`count_pairs`'s counts.
    """
    (_fill_pairs_parallel if parallel else _fill_pairs_serial)(
        starts, rows, clicked, entry_weight, mode, offsets, *out
    )


# --------------------------------------------------------------------------- log reading
#
# The reader (``rankboost.clicks._read``) hands a chunk of whole lines of a TSV/CSV file as a
# uint8 array. ``tokenize`` splits it in one pass: per kept line (blank lines are skipped)
# its line index within the chunk, and per wanted field its stripped byte span;
# ``intern_spans`` codes the spans of an id column (64-bit hashes, equal hashes checked to
# hold equal bytes), ``parse_small_ints`` / ``parse_numbers`` the spans of a number column
# (exactly, for plain decimals; anything else is flagged for the Python parser).

_FNV_OFFSET = np.uint64(14695981039346656037)
_WORD_PRIME = np.uint64(0x9E3779B97F4A7C15)  # odd: multiplying by it is a bijection


@njit(cache=True)
def _is_space(b: int, sep: int) -> bool:
    return b != sep and (b == 32 or b == 9 or b == 13 or b == 11 or b == 12)


@njit(cache=True, nogil=True)  # the gzip thread decompresses meanwhile
def tokenize(  # noqa: PLR0917  numba kernel: the chunk and its output arrays, unpacked by the reader
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
def hash_spans(buf: np.ndarray, start: np.ndarray, end: np.ndarray, out: np.ndarray) -> None:
    """``out[r]`` = the 64-bit hash (``_span_hash``) of ``buf[start[r]:end[r]]``."""
    for r in range(start.shape[0]):
        out[r] = _span_hash(buf, start[r], end[r])


@njit(cache=True)
def mixed_slot(x: np.uint64, mask: np.uint64) -> int:
    """Table slot of hash ``x``: its bits mixed (splitmix64's finalizer), then masked."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    x = x ^ (x >> np.uint64(31))
    return np.int64(x & mask)


@njit(cache=True)
def _code_of(  # noqa: PLR0917  numba helper: the hash and its row, the table, the new rows
    x: np.uint64,
    r: int,
    slots: np.ndarray,
    keys: np.ndarray,
    n_keys: int,
    new_at: np.ndarray,
    n_new: int,
) -> int:
    """The code of hash ``x``: a known one's, or ``n_keys`` for a new one, added.

    ``slots`` is an open-addressing table of codes (-1: empty), ``keys[c]`` the hash of code
    ``c``; a new hash takes the empty slot its probe ends on, ``keys[n_keys]`` and
    ``new_at[n_new] = r`` (the caller counts it).
    """
    mask = np.uint64(slots.shape[0] - 1)
    j = mixed_slot(x, mask)
    while slots[j] >= 0 and keys[slots[j]] != x:
        j = (j + 1) & np.int64(mask)
    if slots[j] < 0:
        slots[j] = n_keys
        keys[n_keys] = x
        new_at[n_new] = r
    return slots[j]


@njit(cache=True)
def rehash(keys: np.ndarray, n_keys: int, slots: np.ndarray) -> None:
    """Fill the empty open-addressing table ``slots`` (-1) with codes ``0..n_keys-1``."""
    mask = np.uint64(slots.shape[0] - 1)
    for c in range(n_keys):
        j = mixed_slot(keys[c], mask)
        while slots[j] >= 0:
            j = (j + 1) & np.int64(mask)
        slots[j] = c


@njit(cache=True)
def intern(  # noqa: PLR0917  numba kernel: the hashes, the table and the outputs
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
    n_new = 0
    for r in range(h.shape[0]):
        c = codes[r] = _code_of(h[r], r, slots, keys, n_keys, new_at, n_new)
        if c == n_keys:  # a new hash
            n_new += 1
            n_keys += 1
    return n_new


@njit(cache=True)
def gather_spans(buf: np.ndarray, start: np.ndarray, end: np.ndarray, out: np.ndarray) -> None:
    """Concatenate the spans ``buf[start[r]:end[r]]`` into ``out``."""
    k = 0
    for r in range(start.shape[0]):
        for i in range(start[r], end[r]):
            out[k] = buf[i]
            k += 1


@njit(cache=True)
def padded(blob: np.ndarray, at: np.ndarray, width: int, out: np.ndarray) -> None:
    """``out[c, :]`` = the bytes of id ``c`` (``blob[at[c]:at[c + 1]]``), zero-padded."""
    for c in range(at.shape[0] - 1):
        m = at[c + 1] - at[c]
        for i in range(m):
            out[c, i] = blob[at[c] + i]
        for i in range(m, width):
            out[c, i] = 0


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
def format_log(  # noqa: PLR0917  numba kernel: the shown lists of a chunk of sessions
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


POW10 = 10.0 ** np.arange(23)


@njit(cache=True, nogil=True)  # the gzip thread decompresses meanwhile
def parse_numbers(
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
def intern_spans(  # noqa: PLR0917  numba kernel: the chunk's spans, the table, the known ids
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
    """Code the ids ``buf[start[r]:end[r]]``: hash, look up, and compare the bytes.

    A row holding its predecessor's bytes takes its code (ids repeat on neighbouring rows:
    a session's qid and session id); any other is hashed, looked up, and its bytes compared
    with the id of the code found (``blob[blob_at[c]:blob_at[c + 1]]`` for the ``n_keys``
    known ids, the first row of a new one). Returns the number of new ids (their rows in
    ``new_at``), or -1 when two different ids share a hash.
    """
    n_old = n_keys
    n_new = 0
    for r in range(start.shape[0]):
        a = start[r]
        b = end[r]
        if r > 0 and _same_span(buf, a, b, buf, start[r - 1], end[r - 1]):
            codes[r] = codes[r - 1]
            continue
        c = _code_of(_span_hash(buf, a, b), r, slots, keys, n_keys, new_at, n_new)
        if c == n_keys:  # a new hash
            n_new += 1
            n_keys += 1
        elif c < n_old:  # a known hash: the same bytes?
            if not _same_span(buf, a, b, blob, blob_at[c], blob_at[c + 1]):
                return -1
        elif not _same_span(buf, a, b, buf, start[new_at[c - n_old]], end[new_at[c - n_old]]):
            return -1
        codes[r] = c
    return n_new


@njit(cache=True, nogil=True)
def parse_small_ints(  # noqa: PLR0917  numba kernel: the chunk's spans, the range, the output
    buf: np.ndarray, start: np.ndarray, end: np.ndarray, low: int, high: int, out: np.ndarray
) -> bool:
    """Parse spans of 1-15 plain digits within ``[low, high]`` into ``out``.

    Returns False at the first other span (a sign, a dot, text, a value out of range): the
    caller then parses the column as numbers (``parse_numbers``) and checks them.
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
