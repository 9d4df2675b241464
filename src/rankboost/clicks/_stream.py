"""The streamed reader: a click log summed chunk by chunk into :class:`ClickCounts`.

:class:`_read.ChunkReader` parses the file; its sink, :class:`_Stream`, finds each chunk's
sessions as runs of rows and adds the finished ones into the sums of ``_counts``, so the log
is never held whole (``read_click_counts``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._kernels import click_sessions as _s
from .._kernels import clicks as _k
from ..datasets._io import PathLike
from ._counts import ClickCounts, SessionSums, check_pairs, click_counts
from ._log import SHOW, feature_keys
from ._read import ChunkReader, HashCollision, Ids, QuotedFields, read_click_log

__all__ = ["read_click_counts"]


class _NotStreamable(Exception):
    """A session not in one run of rows by position (or a session-level error): read whole."""


def read_click_counts(
    path: PathLike,
    qid: ArrayLike,
    docid: ArrayLike,
    *,
    pairs: str = "all_shown",
    delimiter: str | None = None,
    what: str = "the feature rows",
    verbose: bool = False,
) -> ClickCounts:
    r"""Read a click log into :class:`ClickCounts`, streamed: memory grows with documents.

    The sums :func:`click_counts` makes of ``read_click_log(path).match(qid, docid)``
    (the same counts, pairs and models bit for bit, for integral counts), but summed chunk
    by chunk: a log written session by session (each session's rows together, by position,
    as ``rankboost clicks simulate`` writes it) is never held whole, so its memory grows with
    the distinct documents and pairs, not with the sessions (plus a 64-bit hash per session,
    11-21 bytes, to notice a session that comes back). Any other log (sessions spread over
    the file, rows out of order, a session-level error) is read whole by
    :func:`read_click_log`, as before.

    Parameters
    ----------
    path : str or path-like
        The click log (:func:`read_click_log`).
    qid, docid : array-like of shape (n_samples,)
        Query and document id of every feature row (:meth:`ClickLog.match`).
    pairs : str, default="all_shown"
        The pair extraction to sum (:func:`click_pairs`).
    delimiter : str, default=None
        As :func:`read_click_log`.
    what : str, default="the feature rows"
        Name of the features in error messages.
    verbose : bool, default=False
        Show a progress bar over the file's bytes (tqdm).

    Returns
    -------
    counts : ClickCounts
        For :func:`click_pairs`, :func:`click_feedback`, :func:`estimate_propensity`.

    Raises
    ------
    ValueError
        Every error of :func:`read_click_log` and :meth:`ClickLog.match`, with the line.

    Examples
    --------
    >>> import tempfile, os
    >>> from rankboost.clicks import read_click_counts
    >>> rows = ["qid,docid,position,click", "7,d1,1,0", "7,d2,2,1"]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "clicks.csv")
    ...     with open(path, "w") as fh:
    ...         _ = fh.write(chr(10).join(rows))
    ...     counts = read_click_counts(path, qid=[7, 7], docid=["d2", "d1"])
    >>> counts.n_sessions, counts.pair_lower.tolist(), counts.pair_upper.tolist()
    (1, [1], [0])
    """
    check_pairs(pairs)
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"click log {str(p)!r} does not exist (or is not a file).")

    def whole() -> ClickCounts:
        log = read_click_log(p, delimiter=delimiter, verbose=verbose)
        return click_counts(log.match(qid, docid, what=what), pairs)

    if delimiter is not None and len(delimiter.encode()) != 1:
        return whole()
    sink = _Stream(qid, docid, what, pairs)
    try:
        ChunkReader(p, delimiter, verbose, sink).read()  # its end hands over to the sink
        return sink.counts
    except (QuotedFields, HashCollision, _NotStreamable):
        del sink
        return whole()


class _Stream:
    """Sums the sessions of a log as :class:`ChunkReader` parses it (``read_click_counts``).

    A session is a run of rows with one qid and one session id (neighbours' bytes compared);
    the last run of a chunk is carried into the next. Each finished run must show positions
    ``1..m`` in order with one count and distinct documents, and must not come back later
    (a set of 64-bit hashes of (qid, session id); a false alarm only costs the whole read).
    """

    def __init__(self, qid: ArrayLike, docid: ArrayLike, what: str, pairs: str) -> None:
        self.what, self.pairs = what, pairs
        self.order, self.sk = feature_keys(qid, docid, what)
        self.tables = SessionSums(check_pairs(pairs))
        self.docs = Ids()  # (qid code, docid code) -> document code, first appearance
        self.doc_row = np.empty(0, dtype=np.int64)
        self.doc_line = np.empty(0, dtype=np.int64)  # line of each document's first row
        self.missing_rows = 0
        self.seen = np.zeros(1 << 12, dtype=np.uint64)  # hashes of the finished sessions
        self.n_seen = 0
        self.carry: dict[str, NDArray[Any]] | None = None
        self.carry_hash = np.empty(1, dtype=np.uint64)
        self.prev = np.empty(0, dtype=np.uint8)  # session bytes and qid of the last row
        self.prev_q = -1
        self.counts: ClickCounts

    def start(self, reader: ChunkReader) -> None:
        self.has_session = "session" in reader.cols

    def feed(self, reader: ChunkReader, buf: NDArray[np.uint8], cols: dict[str, Any]) -> None:
        """Sum the sessions the chunk finishes; carry its last run."""
        q = cols["qid"]
        n = q.shape[0]
        doc = self._docs(reader, q, cols["docid"], cols["line"])
        row = self.doc_row[doc]
        if (row < 0).any():
            self.missing_rows += int(np.count_nonzero(row < 0))
        if self.has_session:
            s, e = cols["session"]
        else:  # one list per qid: empty session ids
            s = e = np.zeros(n, dtype=np.int64)
        new = np.empty(n, dtype=np.uint8)
        _s.run_breaks(buf, s, e, q, self.prev, self.prev_q, new)
        first = np.flatnonzero(new)
        h = np.empty(first.shape[0], dtype=np.uint64)
        _k.hash_spans(buf, s[first], e[first], h)
        h ^= q[first].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        self.prev = buf[s[n - 1] : e[n - 1]].copy()
        self.prev_q = int(q[n - 1])
        chunk = {
            "row": row,
            "doc": doc,
            "position": cols["position"],
            "click": cols["click"],
            "count": cols["count"] if "count" in cols else np.ones(n),
        }
        k = int(first[0]) if first.shape[0] else n  # rows continuing the carried run
        if self.carry is not None and k:
            self.carry = {c: np.concatenate([v, chunk[c][:k]]) for c, v in self.carry.items()}
        if not first.shape[0]:
            return
        if self.carry is not None:
            self._sessions(self.carry, np.array([0, self.carry["row"].shape[0]]), self.carry_hash)
        last = int(first[-1])
        if first.shape[0] > 1:
            part = {c: v[k:last] for c, v in chunk.items()}
            self._sessions(part, first - k, h[:-1])
        self.carry = {c: v[last:].copy() for c, v in chunk.items()}
        self.carry_hash = h[-1:].copy()

    def _docs(
        self,
        reader: ChunkReader,
        q: NDArray[np.int32],
        d: NDArray[np.int32],
        line: NDArray[np.int64],
    ) -> NDArray[np.int64]:
        """The document code of every row; new documents matched to feature rows."""
        key = (q.astype(np.uint64) << np.uint64(32)) | d.astype(np.uint64)
        n_known = self.doc_row.shape[0]
        code, new_at, n_new = self.docs.intern(key, n_known)
        if n_new:
            at = new_at[:n_new]
            qids, dids = reader.ids["qid"], reader.ids["docid"]
            try:
                names = [
                    f"{qids.name(a)}\x1f{dids.name(b)}" for a, b in zip(q[at], d[at], strict=True)
                ]
            except UnicodeDecodeError as exc:
                source = f"click log {str(reader.p)!r}"
                raise ValueError(f"{source} is not UTF-8 text ({exc}).") from None
            lkey = np.asarray(names, dtype=str)
            sk = self.sk
            pos = np.searchsorted(sk, lkey)
            pos_c = np.minimum(pos, max(sk.shape[0] - 1, 0))
            found = (pos < sk.shape[0]) & (sk[pos_c] == lkey) if sk.size else np.zeros(n_new, bool)
            rows = np.where(found, self.order[pos_c] if sk.size else -1, -1).astype(np.int64)
            self.doc_row = np.concatenate([self.doc_row, rows])
            self.doc_line = np.concatenate([self.doc_line, line[at]])
        return code

    def _sessions(
        self, part: dict[str, NDArray[Any]], starts: NDArray[np.int64], h: NDArray[np.uint64]
    ) -> None:
        """Sum finished runs ``[starts[i], starts[i + 1])`` of ``part``; their hashes ``h``."""
        starts = np.asarray(starts, dtype=np.int64)
        if _s.first_irregular_run(starts, part["position"], part["count"]) >= 0:
            raise _NotStreamable
        pair = np.empty(2, dtype=np.int64)
        _s.first_duplicate(starts, part["doc"], pair)
        if pair[0] >= 0:
            raise _NotStreamable
        need = self.n_seen + h.shape[0]
        if 4 * need > 3 * self.seen.shape[0]:  # at most 3/4 full
            size = self.seen.shape[0]
            while 4 * need > 3 * size:
                size *= 2
            grown = np.zeros(size, dtype=np.uint64)
            _s.set_rehash(self.seen, grown)
            self.seen = grown
        n_seen = _s.set_add(self.seen, self.n_seen, h)
        if n_seen < 0:  # a session seen before (or twice in this chunk): not one run
            raise _NotStreamable
        self.n_seen = n_seen
        self.tables.add(
            starts,
            part["row"],
            part["position"],
            np.ascontiguousarray(part["click"], dtype=np.uint8),
            part["count"],
        )

    def finish(self, reader: ChunkReader) -> None:
        """Sum the last run; the counts, or the missing documents' error."""
        source = f"click log {str(reader.p)!r}"
        if self.carry is not None:
            self._sessions(self.carry, np.array([0, self.carry["row"].shape[0]]), self.carry_hash)
        if self.tables.n_sessions == 0:
            raise ValueError(f"{source} has no entries; a click log needs at least one row.")
        missing = np.flatnonzero(self.doc_row < 0)
        if missing.size:
            qids, dids = reader.ids["qid"], reader.ids["docid"]
            key = self.docs.keys[missing[:SHOW]]
            names = [
                f"(qid {qids.name(int(k >> np.uint64(32)))}, docid "
                f"{dids.name(int(k & np.uint64(0xFFFFFFFF)))})"
                for k in key
            ]
            more = f" and {missing.size - len(names)} more" if missing.size > len(names) else ""
            raise ValueError(
                f"{source}: {self.missing_rows} rows ({missing.size} distinct documents) have "
                f"no row in {self.what}: {', '.join(names)}{more} (first at line "
                f"{int(self.doc_line[missing].min())}). Match the log to the feature file it "
                "was logged with, or drop those sessions."
            )
        self.counts = self.tables.counts(self.pairs, self.sk.shape[0], source)
