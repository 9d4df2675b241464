"""Click logs: the :class:`ClickLog` arrays and the feature-row match (the reader: ``_read``).

A click log has one row per shown document: ``qid``, ``docid``, ``position`` (1 = top of
the shown list), ``click`` (0/1), optionally ``session`` (one shown list; without it, all rows
of a qid form one list) and ``count`` (how many times that list was shown with those clicks;
default 1, constant within a session). Rows are kept grouped by session and sorted by
position, so the pair kernels read each session as one contiguous slice.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._kernels import click_sessions as _s

__all__ = [
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "SHOW",
    "ClickLog",
    "feature_keys",
    "key_strings",
]

REQUIRED_COLUMNS = ("qid", "docid", "position", "click")
OPTIONAL_COLUMNS = ("session", "count")
SHOW = 5  # how many offending items an error message lists


def key_strings(values: ArrayLike) -> NDArray[np.str_]:
    """Strings to match ids on: integral numbers print as ints (10.0 and 10 -> "10")."""
    arr = np.asarray(values)
    if arr.dtype.kind == "f":
        if np.all(np.isfinite(arr)) and np.all(np.mod(arr, 1) == 0):
            arr = arr.astype(np.int64)
    elif arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    return arr.astype(str)


@dataclass(frozen=True, eq=False)
class ClickLog:
    """A click log as arrays, grouped by session and sorted by position inside each session.

    Build one with :meth:`from_arrays` or :func:`read_click_log`; attach feature rows with
    :meth:`match`. Every array has one entry per shown document.

    Attributes
    ----------
    qid_code, docid_code : ndarray of int32 of shape (n_entries,)
        Query and document id of each entry as an index into ``qid_names`` / ``docid_names``
        (the distinct ids, sorted as strings); ``docid_code`` is None when the log was built
        without docids (``row`` given directly). The properties ``qid`` and ``docid`` give
        the ids as strings, one per entry.
    position : ndarray of int64 of shape (n_entries,)
        Rank in the shown list, 1 = top; every session shows positions ``1..m``.
    click : ndarray of uint8 of shape (n_entries,)
        1 where the document was clicked.
    count : ndarray of float64 of shape (n_entries,)
        How many times the session was seen (the same on all its rows).
    starts : ndarray of int64 of shape (n_sessions + 1,)
        Offsets of each session's entries.
    line : ndarray of int64 of shape (n_entries,)
        Where each entry came from: the file's line (1 = header) or the input's row index.
    row : ndarray of int64 of shape (n_entries,) or None
        The feature row of each entry, after :meth:`match` (or given to :meth:`from_arrays`).
    n_samples : int or None
        Rows of the feature matrix ``row`` indexes.

    Examples
    --------
    >>> from rankboost.clicks import ClickLog
    >>> log = ClickLog.from_arrays(
    ...     qid=[1, 1, 1], docid=["a", "b", "c"], position=[1, 2, 3], click=[0, 0, 1]
    ... )
    >>> log.n_sessions, log.n_clicks
    (1, 1.0)
    >>> log.match(qid=[1, 1, 1, 2], docid=["c", "b", "a", "a"]).row.tolist()
    [2, 1, 0]
    """

    qid_code: NDArray[np.int32]
    qid_names: NDArray[np.str_]
    docid_code: NDArray[np.int32] | None
    docid_names: NDArray[np.str_] | None
    position: NDArray[np.int64]
    click: NDArray[np.uint8]
    count: NDArray[np.float64]
    starts: NDArray[np.int64]
    line: NDArray[np.int64]
    source: str = "click log"
    row: NDArray[np.int64] | None = None
    n_samples: int | None = None

    @property
    def qid(self) -> NDArray[np.str_]:
        """Query id of every entry (``qid_names[qid_code]``, built on each access)."""
        return self.qid_names[self.qid_code]

    @property
    def docid(self) -> NDArray[np.str_] | None:
        """Document id of every entry, or None (``docid_names[docid_code]``)."""
        if self.docid_code is None or self.docid_names is None:
            return None
        return self.docid_names[self.docid_code]

    @property
    def n_entries(self) -> int:
        """Shown documents (rows of the log)."""
        return int(self.position.shape[0])

    @property
    def n_sessions(self) -> int:
        """Shown lists."""
        return int(self.starts.shape[0] - 1)

    @property
    def n_clicks(self) -> float:
        """Clicks, each session counted ``count`` times."""
        return float(np.sum(self.click * self.count))

    @property
    def session_count(self) -> NDArray[np.float64]:
        """``count`` of each session, shape ``(n_sessions,)``."""
        return self.count[self.starts[:-1]]

    @classmethod
    def from_arrays(
        cls,
        qid: ArrayLike,
        docid: ArrayLike | None,
        position: ArrayLike,
        click: ArrayLike,
        session: ArrayLike | None = None,
        count: ArrayLike | None = None,
        *,
        row: ArrayLike | None = None,
        n_samples: int | None = None,
        line: ArrayLike | None = None,
        source: str = "click log",
    ) -> ClickLog:
        """Validate per-entry arrays and group them by session (see the class).

        Parameters
        ----------
        qid, docid : array-like of shape (n_entries,)
            Query and document ids; ``docid`` may be None when ``row`` is given.
        position : array-like of int of shape (n_entries,)
            1 = top of the shown list.
        click : array-like of {0, 1} of shape (n_entries,)
        session : array-like of shape (n_entries,), default=None
            Shown-list id (within a qid); None: one list per qid.
        count : array-like of shape (n_entries,), default=None
            Positive multiplicity of the session; None: 1.
        row : array-like of int of shape (n_entries,), default=None
            Feature rows, when already known (as :meth:`match` would give).
        n_samples : int, default=None
            Rows of the feature matrix; None: ``max(row) + 1``.
        line : array-like of int, default=None
            Where each entry came from, for error messages; None: its index.
        source : str, default="click log"
            Name used in error messages.

        Raises
        ------
        ValueError
            On a position < 1 or not an integer, a click not 0/1, a non-positive count, a
            count that varies within a session, two entries of a session at one position or
            with one docid, or a session whose positions are not ``1..m`` (a click or a
            document below a position the log does not show).
        """
        pos_raw = np.asarray(position)
        n = pos_raw.shape[0] if pos_raw.ndim == 1 else -1
        if n < 0:
            raise ValueError(f"{source}: position must be 1-D; got shape {pos_raw.shape}.")
        where = np.arange(n, dtype=np.int64) if line is None else np.asarray(line, np.int64)
        what = "line" if line is not None else "entry"
        arrays = {"qid": qid, "docid": docid, "click": click, "session": session, "count": count}
        arrays["row"] = row
        for name, arr in arrays.items():
            if arr is not None and np.shape(arr) != (n,):
                raise ValueError(
                    f"{source}: {name} has shape {np.shape(arr)} but position has {n} entries; "
                    "pass one value per shown document."
                )
        if n == 0:
            raise ValueError(f"{source} has no entries; a click log needs at least one row.")
        pos = _as_int(pos_raw, "position", source, where, what)
        bad = np.flatnonzero(pos < 1)
        if bad.size:
            raise ValueError(
                f"{source}: position must be >= 1 (1 = top of the shown list); {bad.size} rows "
                f"have a smaller one, first at {what} {where[bad[0]]} (position {pos[bad[0]]}). "
                "If your positions start at 0, add 1."
            )
        clk = _as_int(np.asarray(click), "click", source, where, what)
        bad = np.flatnonzero((clk != 0) & (clk != 1))
        if bad.size:
            raise ValueError(
                f"{source}: click must be 0 or 1; {what} {where[bad[0]]} has {clk[bad[0]]}."
            )
        if count is None:
            cnt = np.ones(n)
        else:
            cnt = np.asarray(count, dtype=np.float64)
            bad = np.flatnonzero(~np.isfinite(cnt) | (cnt <= 0))
            if bad.size:
                raise ValueError(
                    f"{source}: count must be a positive number; {what} {where[bad[0]]} has "
                    f"{cnt[bad[0]]!r}."
                )
        qnames, qcode = _codes(key_strings(qid))
        dnames, dcode = (None, None) if docid is None else _codes(key_strings(docid))
        scode = None if session is None else _codes(key_strings(session))[1]
        r = None if row is None else _as_int(np.asarray(row), "row", source, where, what)
        return cls._build(
            qcode, qnames, dcode, dnames, scode, pos, clk, cnt, where, what, source, r, n_samples
        )

    @classmethod
    def _build(  # noqa: PLR0917  private, two callers: from_arrays and the file reader
        cls,
        qcode: NDArray[np.int32],
        qnames: NDArray[np.str_],
        dcode: NDArray[np.int32] | None,
        dnames: NDArray[np.str_] | None,
        scode_in: NDArray[np.int32] | None,
        pos: NDArray[np.int64],
        clk: NDArray[Any],
        cnt: NDArray[np.float64],
        where: NDArray[np.int64] | None,
        what: str,
        source: str,
        r: NDArray[np.int64] | None,
        n_samples: int | None,
    ) -> ClickLog:
        """Group validated columns by session (codes = ranks of the sorted distinct ids).

        ``where`` None: entry ``i`` is line ``i + 2`` (a file without blank lines).
        """
        n = pos.shape[0]
        order, starts = _group(qcode, scode_in, pos)
        pos, clk, cnt, qcode = pos[order], clk[order], cnt[order], qcode[order]
        dcode = None if dcode is None else dcode[order]
        r = None if r is None else r[order]
        if where is None:
            where = order  # the order is spent: its memory becomes the lines
            where += 2
        else:
            where = where[order]
        del order
        first = starts[:-1]
        valid = _s.first_irregular_run(starts, pos, cnt) < 0  # then only docids can repeat
        session_of = np.repeat(np.arange(first.size), np.diff(starts)) if not valid else None
        rank = None if session_of is None else np.arange(n) - first[session_of] + 1
        _check_sessions(
            source,
            what,
            where,
            qnames,
            qcode,
            pos,
            clk,
            cnt,
            rank,
            first,
            session_of,
            dnames,
            dcode,
        )
        del rank, session_of
        if r is not None:
            if n_samples is None:
                n_samples = int(r.max()) + 1
            if r.min() < 0 or r.max() >= n_samples:
                raise ValueError(
                    f"{source}: row must lie in [0, {n_samples}); got values in "
                    f"[{r.min()}, {r.max()}]."
                )
        return cls(
            qid_code=qcode,
            qid_names=qnames,
            docid_code=dcode,
            docid_names=dnames,
            position=pos,
            click=clk.astype(np.uint8, copy=False),
            count=cnt,
            starts=starts,
            line=where,
            source=source,
            row=r,
            n_samples=None if r is None else int(n_samples),  # type: ignore[arg-type]
        )

    def match(
        self, qid: ArrayLike, docid: ArrayLike, *, what: str = "the feature rows"
    ) -> ClickLog:
        """The log with ``row`` set: the feature row of each entry, by ``(qid, docid)``.

        Parameters
        ----------
        qid, docid : array-like of shape (n_samples,)
            Query and document id of every feature row (a LETOR file's ``qid:`` and
            ``#docid = ...`` comment, or a DataFrame's columns).
        what : str, default="the feature rows"
            Name of the features in error messages.

        Raises
        ------
        ValueError
            When a ``(qid, docid)`` appears twice in the features, or entries of the log have
            no feature row (how many, and the first few).
        """
        if self.docid_code is None or self.docid_names is None:
            raise ValueError(f"{self.source} has no docid column; it cannot be matched.")
        order, sk = feature_keys(qid, docid, what)
        # the distinct (qid, docid) of the log, matched once each
        n_d = max(int(self.docid_names.shape[0]), 1)
        pk = self.qid_code.astype(np.int64) * n_d + self.docid_code
        space = int(self.qid_names.shape[0]) * n_d
        if space <= 4 * pk.shape[0] + 1_000_000:  # np.unique by a table over (qid, docid)
            index = np.zeros(space, dtype=np.int64)
            index[pk] = 1
            upk = np.flatnonzero(index)
            index[upk] = np.arange(upk.shape[0])
            inv = index[pk]
            del index
        else:
            upk, inv = np.unique(pk, return_inverse=True)
            inv = inv.ravel()
        del pk
        uq, ud = self.qid_names[upk // n_d], self.docid_names[upk % n_d]
        lkey = np.char.add(np.char.add(uq, "\x1f"), ud)
        at = np.searchsorted(sk, lkey)
        at_c = np.minimum(at, max(sk.shape[0] - 1, 0))
        found = (at < sk.shape[0]) & (sk[at_c] == lkey) if sk.size else np.zeros(lkey.size, bool)
        if not found.all():
            miss = np.flatnonzero(~found[inv])
            # distinct missing documents in the order the log first shows them
            _, first_at = np.unique(inv[miss], return_index=True)
            first_keys = inv[miss[np.sort(first_at)]]
            keys = [f"(qid {uq[k]}, docid {ud[k]})" for k in first_keys[:SHOW]]
            shown = ", ".join(keys) + (
                f" and {first_keys.size - len(keys)} more" if first_keys.size > len(keys) else ""
            )
            raise ValueError(
                f"{self.source}: {miss.size} rows ({first_keys.size} distinct documents) have no "
                f"row in {what}: {shown} (first at line {self.line[miss].min()}). Match the log "
                "to the feature file it was logged with, or drop those sessions."
            )
        row = order[at_c].astype(np.int64)[inv]
        return replace(self, row=row, n_samples=int(sk.shape[0]))


def feature_keys(
    qid: ArrayLike, docid: ArrayLike, what: str
) -> tuple[NDArray[np.int64], NDArray[np.str_]]:
    """The feature rows' ``qid + chr(31) + docid`` keys, sorted, and the rows in that order.

    Raises a ValueError naming both rows when a ``(qid, docid)`` appears twice.
    """
    fq, fd = key_strings(qid), key_strings(docid)
    if fq.shape != fd.shape or fq.ndim != 1:
        raise ValueError(
            f"match: qid and docid must be 1-D of one length; got {fq.shape} and {fd.shape}."
        )
    fkey = np.char.add(np.char.add(fq, "\x1f"), fd)
    order = np.argsort(fkey, kind="stable")
    sk = fkey[order]
    dup = np.flatnonzero(sk[1:] == sk[:-1])
    if dup.size:
        a, b = order[dup[0]], order[dup[0] + 1]
        raise ValueError(
            f"{what} hold (qid {fq[a]}, docid {fd[a]}) twice (rows {min(a, b)} and "
            f"{max(a, b)}); a click cannot be matched to one of them. Make docids unique "
            "within each query."
        )
    return order, sk


def _group(
    qcode: NDArray[np.int32], scode_in: NDArray[np.int32] | None, pos: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The entry order grouping sessions (sorted by qid, then session id) by position.

    Returns ``(order, starts)``: the order of ``np.lexsort((pos, session))`` and the offsets
    of the sessions in it. A log written session by session (each session one run of rows,
    positions rising) is ordered by sorting its sessions only.
    """
    n = pos.shape[0]
    s_in = qcode if scode_in is None else scode_in
    first = np.empty(_s.count_runs(qcode, s_in), dtype=np.int64)
    k = _s.session_runs(qcode, s_in, pos, first)
    width = np.int64(int(s_in.max()) + 1)
    if k > 0:
        key = qcode[first].astype(np.int64) * width + s_in[first]
        run_order = np.argsort(key, kind="stable")
        skey = key[run_order]
        if not np.any(skey[1:] == skey[:-1]):  # every session is one run
            lengths = np.diff(np.r_[first, n])[run_order]
            new_first = np.zeros(k, dtype=np.int64)
            np.cumsum(lengths[:-1], out=new_first[1:])
            order = np.empty(n, dtype=np.int64)
            _s.runs_in_order(first, run_order, n, order)
            return order, np.r_[new_first, n].astype(np.int64)
    del first
    _, scode = np.unique(qcode.astype(np.int64) * width + s_in, return_inverse=True)
    scode = scode.ravel()
    order = np.lexsort((pos, scode))
    scode = scode[order]
    starts = np.r_[np.flatnonzero(np.r_[True, scode[1:] != scode[:-1]]), n].astype(np.int64)
    return order, starts


def _codes(values: NDArray[Any]) -> tuple[NDArray[np.str_], NDArray[np.int32]]:
    """The sorted distinct strings and each value's index among them (int32)."""
    names, code = np.unique(values, return_inverse=True)
    if names.shape[0] >= 2**31:  # pragma: no cover - 2 billion distinct ids
        raise ValueError("a click log with 2**31 or more distinct ids is not supported.")
    return names, code.ravel().astype(np.int32)


def _as_int(arr: NDArray[Any], name: str, source: str, where: NDArray[np.int64], what: str) -> Any:
    if arr.dtype.kind in "iub":
        return arr.astype(np.int64)
    try:
        f = arr.astype(np.float64)
    except (TypeError, ValueError):
        for i, v in enumerate(arr):
            try:
                float(v)
            except (TypeError, ValueError):
                raise ValueError(
                    f"{source}: {name} must be an integer; {what} {where[i]} has {str(v)!r}."
                ) from None
        raise
    bad = np.flatnonzero(~np.isfinite(f) | (np.mod(f, 1) != 0))
    if bad.size:
        raise ValueError(
            f"{source}: {name} must be an integer; {what} {where[bad[0]]} has {str(arr[bad[0]])!r}."
        )
    return f.astype(np.int64)


def _check_sessions(  # noqa: PLR0917  private, one caller: the log's validated columns, checked together
    source: str,
    what: str,
    where: NDArray[np.int64],
    qnames: NDArray[np.str_],
    qcode: NDArray[np.int32],
    pos: NDArray[np.int64],
    clk: NDArray[Any],
    cnt: NDArray[np.float64],
    rank: NDArray[np.int64] | None,
    first: NDArray[np.int64],
    session_of: NDArray[np.int64] | None,
    dnames: NDArray[np.str_] | None,
    dcode: NDArray[np.int32] | None,
) -> None:
    """Duplicate positions or docids, gaps (clicks on positions not shown), varying counts.

    ``rank`` and ``session_of`` are None when every session shows ``1..m`` with one count
    (``first_irregular_run``): then only a docid shown twice is looked for.
    """

    def q(i: Any) -> str:
        return str(qnames[qcode[i]])

    if rank is None or session_of is None:
        _check_docids(source, what, where, q, pos, first, dnames, dcode)
        return
    same_session = np.r_[False, session_of[1:] == session_of[:-1]]
    dup = np.flatnonzero(same_session & np.r_[False, pos[1:] == pos[:-1]])
    if dup.size:
        i = dup[0]
        raise ValueError(
            f"{source}: duplicate rows: {dup.size} entries repeat a position of their session, "
            f"first {what}s {where[i - 1]} and {where[i]} (qid {q(i)}, position {pos[i]}). "
            "Each session shows one document per position; give repeated lists distinct "
            "session ids or a count."
        )
    _check_docids(source, what, where, q, pos, first, dnames, dcode)
    gap = np.flatnonzero(pos != rank)
    if gap.size:
        i = gap[0]
        s = session_of[i]
        missing = int(rank[i])
        clicks_below = np.flatnonzero(clk[i:][session_of[i:] == s])
        if clicks_below.size:
            j = i + clicks_below[0]
            msg = (
                f"a click at position {pos[j]} ({what} {where[j]}, qid {q(j)}) is on a position "
                f"not shown: the session does not show position {missing}"
            )
        else:
            msg = f"qid {q(i)}: a session does not show position {missing} ({what} {where[i]})"
        raise ValueError(
            f"{source}: {msg}. Every session must list each shown position from 1 to its last "
            "one (positions are ranks in the shown list, 1 = top)."
        )
    varies = np.flatnonzero(same_session & np.r_[False, cnt[1:] != cnt[:-1]])
    if varies.size:
        i = varies[0]
        raise ValueError(
            f"{source}: count differs within one session of qid {q(i)} ({what}s {where[i - 1]} "
            f"and {where[i]}: {cnt[i - 1]} and {cnt[i]}); count is the session's multiplicity."
        )


def _check_docids(  # noqa: PLR0917  private, one caller: _check_sessions' arrays
    source: str,
    what: str,
    where: NDArray[np.int64],
    q: Any,
    pos: NDArray[np.int64],
    first: NDArray[np.int64],
    dnames: NDArray[np.str_] | None,
    dcode: NDArray[np.int32] | None,
) -> None:
    """A docid shown twice in one session (the first such session)."""
    if dcode is None or dnames is None:
        return
    ab = np.empty(2, dtype=np.int64)
    _s.first_duplicate(np.r_[first, pos.shape[0]].astype(np.int64), dcode, ab)
    if ab[0] >= 0:
        a, b = int(ab[0]), int(ab[1])
        raise ValueError(
            f"{source}: duplicate rows: docid {dnames[dcode[a]]} is shown twice in one "
            f"session of qid {q(a)} ({what}s {where[a]} and {where[b]}, positions {pos[a]} "
            f"and {pos[b]})."
        )
