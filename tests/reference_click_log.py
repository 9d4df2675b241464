"""The click-log reader as it was before the streaming reader (issue 40), kept as an oracle.

``tests/test_clicks.py`` checks that ``rankboost.clicks.read_click_log`` and
``ClickLog.match`` give the arrays, pairs and models this code gave, and the same errors.
Verbatim copy of ``src/rankboost/clicks/_log.py`` at commit 829c084 (only the import is
absolute); do not edit.

Click logs: the :class:`ClickLog` arrays, the TSV/CSV reader and the feature-row match.

A click log has one row per shown document: ``qid``, ``docid``, ``position`` (1 = top of
the shown list), ``click`` (0/1), optionally ``session`` (one shown list; without it, all rows
of a qid form one list) and ``count`` (how many times that list was shown with those clicks;
default 1, constant within a session). Rows are kept grouped by session and sorted by
position, so the pair kernels read each session as one contiguous slice.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rankboost.datasets._io import PathLike, read_bytes

__all__ = ["REQUIRED_COLUMNS", "ClickLog", "read_click_log"]

REQUIRED_COLUMNS = ("qid", "docid", "position", "click")
_OPTIONAL_COLUMNS = ("session", "count")
_SHOW = 5  # how many offending items an error message lists


def _key_strings(values: ArrayLike) -> NDArray[np.str_]:
    """Strings to match ids on: integral numbers print as ints (10.0 and 10 -> "10")."""
    arr = np.asarray(values)
    if arr.dtype.kind == "f":
        if np.all(np.isfinite(arr)) and np.all(np.mod(arr, 1) == 0):
            arr = arr.astype(np.int64)
    elif arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    return arr.astype(str)


def _list(values: Any) -> str:
    items = [str(v) for v in list(values)[:_SHOW]]
    more = len(values) - len(items)
    return ", ".join(items) + (f" and {more} more" if more > 0 else "")


@dataclass(frozen=True, eq=False)
class ClickLog:
    """A click log as arrays, grouped by session and sorted by position inside each session.

    Build one with :meth:`from_arrays` or :func:`read_click_log`; attach feature rows with
    :meth:`match`. Every array has one entry per shown document.

    Attributes
    ----------
    qid, docid : ndarray of str of shape (n_entries,)
        Query and document ids (``docid`` may be None when ``row`` is given directly).
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

    qid: NDArray[Any]
    docid: NDArray[Any] | None
    position: NDArray[np.int64]
    click: NDArray[np.uint8]
    count: NDArray[np.float64]
    starts: NDArray[np.int64]
    line: NDArray[np.int64]
    source: str = "click log"
    row: NDArray[np.int64] | None = None
    n_samples: int | None = None

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
        q = _key_strings(qid)
        _, qcode = np.unique(q, return_inverse=True)
        if session is None:
            scode = qcode.astype(np.int64)
        else:
            s_str = _key_strings(session)
            _, s_in = np.unique(s_str, return_inverse=True)
            pair = qcode.astype(np.int64) * (int(s_in.max()) + 1) + s_in
            _, scode = np.unique(pair, return_inverse=True)
        scode = scode.astype(np.int64).ravel()
        order = np.lexsort((pos, scode))
        scode, pos, clk, cnt, where = scode[order], pos[order], clk[order], cnt[order], where[order]
        q = q[order]
        d = None if docid is None else _key_strings(docid)[order]
        r = None if row is None else _as_int(np.asarray(row), "row", source, where, what)[order]
        first = np.flatnonzero(np.r_[True, scode[1:] != scode[:-1]])
        starts = np.r_[first, n].astype(np.int64)
        session_of = np.repeat(np.arange(first.size), np.diff(starts))
        rank = np.arange(n) - first[session_of] + 1
        _check_sessions(source, what, where, q, pos, clk, cnt, rank, first, session_of, d)
        if r is not None:
            if n_samples is None:
                n_samples = int(r.max()) + 1
            if r.min() < 0 or r.max() >= n_samples:
                raise ValueError(
                    f"{source}: row must lie in [0, {n_samples}); got values in "
                    f"[{r.min()}, {r.max()}]."
                )
        return cls(
            qid=q,
            docid=d,
            position=pos,
            click=clk.astype(np.uint8),
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
        if self.docid is None:
            raise ValueError(f"{self.source} has no docid column; it cannot be matched.")
        fq, fd = _key_strings(qid), _key_strings(docid)
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
        lkey = np.char.add(np.char.add(self.qid, "\x1f"), self.docid)
        at = np.searchsorted(sk, lkey)
        at_c = np.minimum(at, max(sk.shape[0] - 1, 0))
        found = (at < sk.shape[0]) & (sk[at_c] == lkey) if sk.size else np.zeros(lkey.size, bool)
        if not found.all():
            miss = np.flatnonzero(~found)
            keys = list(dict.fromkeys(f"(qid {self.qid[i]}, docid {self.docid[i]})" for i in miss))
            raise ValueError(
                f"{self.source}: {miss.size} rows ({len(keys)} distinct documents) have no row in "
                f"{what}: {_list(keys)} (first at line {self.line[miss].min()}). Match the log "
                "to the feature file it was logged with, or drop those sessions."
            )
        return replace(self, row=order[at_c].astype(np.int64), n_samples=int(fq.shape[0]))


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
    q: NDArray[Any],
    pos: NDArray[np.int64],
    clk: NDArray[Any],
    cnt: NDArray[np.float64],
    rank: NDArray[np.int64],
    first: NDArray[np.int64],
    session_of: NDArray[np.int64],
    d: NDArray[Any] | None,
) -> None:
    """Duplicate positions or docids, gaps (clicks on positions not shown), varying counts."""
    same_session = np.r_[False, session_of[1:] == session_of[:-1]]
    dup = np.flatnonzero(same_session & np.r_[False, pos[1:] == pos[:-1]])
    if dup.size:
        i = dup[0]
        raise ValueError(
            f"{source}: duplicate rows: {dup.size} entries repeat a position of their session, "
            f"first {what}s {where[i - 1]} and {where[i]} (qid {q[i]}, position {pos[i]}). "
            "Each session shows one document per position; give repeated lists distinct "
            "session ids or a count."
        )
    if d is not None:
        _, dcode = np.unique(d, return_inverse=True)
        dkey = session_of.astype(np.int64) * (int(dcode.max()) + 1) + dcode.ravel()
        order = np.argsort(dkey, kind="stable")
        sk = dkey[order]
        dd = np.flatnonzero(sk[1:] == sk[:-1])
        if dd.size:
            a, b = sorted((order[dd[0]], order[dd[0] + 1]))
            raise ValueError(
                f"{source}: duplicate rows: docid {d[a]} is shown twice in one session of qid "
                f"{q[a]} ({what}s {where[a]} and {where[b]}, positions {pos[a]} and {pos[b]})."
            )
    gap = np.flatnonzero(pos != rank)
    if gap.size:
        i = gap[0]
        s = session_of[i]
        missing = int(rank[i])
        clicks_below = np.flatnonzero(clk[i:][session_of[i:] == s])
        if clicks_below.size:
            j = i + clicks_below[0]
            msg = (
                f"a click at position {pos[j]} ({what} {where[j]}, qid {q[j]}) is on a position "
                f"not shown: the session does not show position {missing}"
            )
        else:
            msg = f"qid {q[i]}: a session does not show position {missing} ({what} {where[i]})"
        raise ValueError(
            f"{source}: {msg}. Every session must list each shown position from 1 to its last "
            "one (positions are ranks in the shown list, 1 = top)."
        )
    varies = np.flatnonzero(same_session & np.r_[False, cnt[1:] != cnt[:-1]])
    if varies.size:
        i = varies[0]
        raise ValueError(
            f"{source}: count differs within one session of qid {q[i]} ({what}s {where[i - 1]} "
            f"and {where[i]}: {cnt[i - 1]} and {cnt[i]}); count is the session's multiplicity."
        )


def read_click_log(path: PathLike, *, delimiter: str | None = None) -> ClickLog:
    r"""Read a click log: TSV or CSV with a header, optionally gzip/bzip2/xz-compressed.

    Parameters
    ----------
    path : str or path-like
        The file. Columns (any order, by header name): ``qid``, ``docid``, ``position``
        (1 = top), ``click`` (0/1), and optionally ``session`` and ``count``; other columns
        are ignored.
    delimiter : str, default=None
        None: a tab if the header has one, else a comma.

    Returns
    -------
    log : ClickLog
        With ``line`` = the file's line numbers (1 = header).

    Raises
    ------
    ValueError
        A missing column, a row with the wrong number of fields, and everything
        :meth:`ClickLog.from_arrays` refuses (with the line number).

    Examples
    --------
    >>> import tempfile, os
    >>> from rankboost.clicks import read_click_log
    >>> rows = ["qid,docid,position,click", "7,d1,1,0", "7,d2,2,1"]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "clicks.csv")
    ...     with open(path, "w") as fh:
    ...         _ = fh.write(chr(10).join(rows))
    ...     log = read_click_log(path)
    >>> log.n_sessions, log.click.tolist()
    (1, [0, 1])
    """
    p, raw = read_bytes(path, "click log")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"click log {str(p)!r} is not UTF-8 text ({exc}).") from None
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise ValueError(
            f"click log {str(p)!r} is empty or has no header; its first line must name the "
            f"columns {', '.join(REQUIRED_COLUMNS)} (and optionally session, count)."
        )
    sep = delimiter or ("\t" if "\t" in lines[0] else ",")
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    header = [h.strip().lower() for h in next(reader)]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise ValueError(
            f"click log {str(p)!r}: the header {header} lacks {', '.join(missing)}; it must name "
            f"{', '.join(REQUIRED_COLUMNS)} (and optionally session, count)."
        )
    rows = list(reader)
    numbers = [i + 2 for i, r in enumerate(rows) if r and any(f.strip() for f in r)]
    rows = [r for r in rows if r and any(f.strip() for f in r)]
    width = len(header)
    for ln, r in zip(numbers, rows, strict=True):
        if len(r) != width:
            raise ValueError(
                f"click log {str(p)!r}, line {ln}: {len(r)} fields but the header has {width}; "
                f"separate the fields with {'a tab' if sep == chr(9) else repr(sep)}."
            )
    cols = list(zip(*rows, strict=True)) if rows else [()] * width
    get = {name: np.asarray(cols[header.index(name)], dtype=str) for name in header}
    stripped = {k: np.char.strip(v) for k, v in get.items()}
    return ClickLog.from_arrays(
        qid=stripped["qid"],
        docid=stripped["docid"],
        position=_parse_numbers(stripped["position"], "position", p, numbers),
        click=_parse_numbers(stripped["click"], "click", p, numbers),
        session=stripped.get("session"),
        count=None
        if "count" not in stripped
        else _parse_numbers(stripped["count"], "count", p, numbers),
        line=np.asarray(numbers, dtype=np.int64),
        source=f"click log {str(p)!r}",
    )


def _parse_numbers(values: NDArray[np.str_], name: str, path: Any, numbers: list[int]) -> Any:
    try:
        return values.astype(np.float64)
    except ValueError:
        for ln, v in zip(numbers, values, strict=True):
            try:
                float(v)
            except ValueError:
                raise ValueError(
                    f"click log {str(path)!r}, line {ln}: {name} must be a number; got {str(v)!r}."
                ) from None
        raise
