"""The click-log reader: TSV/CSV, optionally compressed, streamed in chunks of whole lines.

The numba tokenizer of :mod:`rankboost._kernels.clicks` splits each chunk; ids are interned by
64-bit hash (equal hashes checked to hold equal bytes) and numbers parsed in the kernel, so a
log of 10^7 rows is read without a Python object per row. Files with quoted fields (and
multi-character delimiters) go through the csv module instead. Either way the result is the
:class:`ClickLog` that :meth:`ClickLog.from_arrays` builds from the same strings.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import csv
import io
import lzma
import queue
import threading
import zlib
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._kernels import clicks as _k
from ..datasets._io import PathLike, read_bytes
from ._counts import ClickCounts
from ._log import _SHOW, OPTIONAL_COLUMNS, REQUIRED_COLUMNS, ClickLog, feature_keys

__all__ = ["read_click_counts", "read_click_log"]


def read_click_log(
    path: PathLike, *, delimiter: str | None = None, verbose: bool = False
) -> ClickLog:
    r"""Read a click log: TSV or CSV with a header, optionally gzip/bzip2/xz-compressed.

    Parameters
    ----------
    path : str or path-like
        The file. Columns (any order, by header name): ``qid``, ``docid``, ``position``
        (1 = top), ``click`` (0/1), and optionally ``session`` and ``count``; other columns
        are ignored.
    delimiter : str, default=None
        None: a tab if the header has one, else a comma.
    verbose : bool, default=False
        Show a progress bar over the file's bytes (tqdm).

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
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"click log {str(p)!r} does not exist (or is not a file).")
    if delimiter is not None and len(delimiter.encode()) != 1:
        return _read_with_csv(p, delimiter)
    reader = _ChunkReader(p, delimiter, verbose)
    try:
        return reader.read()
    except (_QuotedFields, _HashCollision):
        return _read_with_csv(p, delimiter)


class _QuotedFields(Exception):
    """The file quotes fields: read it with the csv module instead."""


_CHUNK = 1 << 23  # bytes of text parsed at a time (whole lines)
_NUMBER_COLUMNS = ("position", "click", "count")
_INT_RANGE = {"position": (1, 10**15), "click": (0, 1)}  # valid values, as _checked finds


def _empty_error(p: Path) -> ValueError:
    return ValueError(
        f"click log {str(p)!r} is empty or has no header; its first line must name the "
        f"columns {', '.join(REQUIRED_COLUMNS)} (and optionally session, count)."
    )


def _header(p: Path, line: str, delimiter: str | None) -> tuple[str, list[str]]:
    if not line.strip():
        raise _empty_error(p)
    sep = delimiter or ("\t" if "\t" in line else ",")
    header = [h.strip().lower() for h in next(csv.reader([line], delimiter=sep))]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise ValueError(
            f"click log {str(p)!r}: the header {header} lacks {', '.join(missing)}; it must name "
            f"{', '.join(REQUIRED_COLUMNS)} (and optionally session, count)."
        )
    return sep, header


class _ChunkReader:
    """Streams a click log in chunks of whole lines through the numba tokenizer.

    Ids are kept as 64-bit hashes while reading (each distinct id decoded once, and equal
    hashes checked to hold equal bytes), numbers as float64; at the end the hashes become
    codes ranked like the sorted id strings, so the log is the one :meth:`ClickLog.from_arrays`
    builds from the same strings.
    """

    def __init__(
        self, p: Path, delimiter: str | None, verbose: bool, sink: _Stream | None = None
    ) -> None:
        self.p, self.delimiter, self.verbose, self.sink = p, delimiter, verbose, sink
        self.ids: dict[str, _Ids] = {}
        self.first_bad: dict[str, tuple[Any, ...]] = {}
        self.store: _Store | None = None
        self.lines_follow = True  # row i is line i + 2: no line numbers stored
        self.kind: str | None = None

    def read(self) -> ClickLog:
        from .._compat import progress_bar
        from ..datasets._io import compression, decompression_errors

        p, sink = self.p, self.sink
        kind = compression(p)
        bar = progress_bar(
            p.stat().st_size, disable=not self.verbose, desc="reading click log", stacklevel=4
        )
        with (
            open(p, "rb") as raw,
            decompression_errors(p, "click log", kind),
            contextlib.ExitStack() as stack,
        ):
            fh: Any = raw
            if kind == "gzip":  # decompressed in a thread while the chunks are parsed
                fh = stack.enter_context(_Gunzip(raw))
            elif kind == "bzip2":
                fh = bz2.BZ2File(raw, "rb")
            elif kind == "xz":
                fh = lzma.LZMAFile(raw, "rb")
            first = fh.readline()
            if first.startswith(codecs.BOM_UTF8):
                first = first[len(codecs.BOM_UTF8) :]
            try:
                head = first.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                raise ValueError(f"click log {str(p)!r} is not UTF-8 text ({exc}).") from None
            if b'"' in first:
                raise _QuotedFields
            self.sep, self.header = _header(p, head, self.delimiter)
            self.cols = [c for c in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS) if c in self.header]
            self.wanted = np.full(len(self.header), -1, dtype=np.int64)
            for c, name in enumerate(self.cols):
                self.wanted[self.header.index(name)] = c
            self.ids = {name: _Ids() for name in self.cols if name not in _NUMBER_COLUMNS}
            self.kind = kind
            if sink is not None:
                self.ids.pop("session", None)
                sink.start(self)
            line, carry, seen = 2, b"", raw.tell()
            bar.update(seen)
            while True:
                block = fh.read(_CHUNK)
                if not block:
                    line = self._chunk(carry, 0, len(carry), line)
                    bar.update(raw.tell() - seen)
                    break
                first = block.find(b"\n") + 1
                if first == 0:  # no line ends in this block
                    carry += block
                    continue
                # the line the previous block cut, then this block's whole lines, in place
                line = self._chunk(carry + block[:first], 0, len(carry) + first, line)
                last = block.rfind(b"\n") + 1
                line = self._chunk(block, first, last, line)
                carry = block[last:]
                now = raw.tell()
                bar.update(now - seen)
                seen = now
        bar.close()
        return self._finish()

    def read_counts(self) -> ClickCounts:
        """Read the file into the sink (``_Stream``); its counts."""
        assert self.sink is not None
        self.read()  # _finish hands over to the sink
        return self.sink.counts

    def _lines_follow(self, at: NDArray[np.int64], n: int, n_lines: int, line: int) -> bool:
        """Whether row ``i`` is still line ``i + 2`` after this chunk (no blank line yet).

        At the first chunk with a blank line the rows before get their lines stored, and
        every chunk after stores its own.
        """
        if not self.lines_follow:
            return False
        if n == n_lines and (n == 0 or at[n - 1] == n - 1):
            return True
        self.lines_follow = False
        if self.store is not None:  # the rows so far: lines 2, 3, ...
            self.store.add("line", np.arange(2, self.store.n + 2, dtype=np.int64))
        return False

    def _rows_expected(self, n: int, size: int) -> int:
        """Rows of the whole file, guessed from its first chunk (``n`` rows, ``size`` bytes).

        Generous: room reserved and never written costs no memory.
        """
        total = self.p.stat().st_size
        if self.kind == "gzip":  # the last member's size (mod 2**32) ends the file
            with open(self.p, "rb") as fh:
                fh.seek(max(total - 4, 0))
                isize = int.from_bytes(fh.read(4), "little")
            total = isize if isize >= total else 12 * total
        elif self.kind is not None:
            total *= 12
        return int(1.25 * max(n, 1) * max(total, size) / max(size, 1)) + 1024

    def _chunk(self, data: bytes, lo: int, hi: int, line: int) -> int:
        """Parse the whole lines ``data[lo:hi]`` (the first is the file's ``line``); the next."""
        if hi <= lo:
            return line
        if data.find(b'"', lo, hi) >= 0:
            raise _QuotedFields
        buf = np.frombuffer(data, dtype=np.uint8, count=hi - lo, offset=lo)
        n_lines = data.count(b"\n", lo, hi) + (0 if data[hi - 1] == 10 else 1)
        n_cols = len(self.cols)
        at = np.empty(n_lines, dtype=np.int64)
        start = np.empty((n_cols, n_lines), dtype=np.int64)
        end = np.empty((n_cols, n_lines), dtype=np.int64)
        bad = np.zeros(2, dtype=np.int64)
        n = _k._tokenize(buf, ord(self.sep), len(self.header), self.wanted, at, start, end, bad)
        if n < 0:
            raise ValueError(
                f"click log {str(self.p)!r}, line {line + bad[0]}: {bad[1]} fields but the header "
                f"has {len(self.header)}; separate the fields with "
                f"{'a tab' if self.sep == chr(9) else repr(self.sep)}."
            )
        lines = at[:n] + line
        cols: dict[str, Any] = {}
        if self.sink is not None or not self._lines_follow(at, n, n_lines, line):
            cols["line"] = lines
        for c, name in enumerate(self.cols):
            s, e = start[c, :n], end[c, :n]  # rows of C-ordered arrays: contiguous
            if name in ("position", "click"):  # plain small integers: no float on the way
                v = np.empty(n, dtype=np.int64)
                if _k._parse_small_ints(buf, s, e, *_INT_RANGE[name], v):
                    cols[name] = v if name == "position" else v.astype(np.uint8)
                    continue
            if name in _NUMBER_COLUMNS:
                values = self._numbers(data, lo, buf, s, e, name, lines)
                cols[name] = self._checked(values, name, lines)
            elif name == "session" and self.sink is not None:
                cols[name] = (s, e)  # the sink compares neighbours' bytes, keeps no id
            else:
                cols[name] = self._hashes(buf, s, e, name)
        if self.sink is None:
            if self.store is None:
                self.store = _Store(
                    {name: v.dtype for name, v in cols.items()},
                    self._rows_expected(n, hi - lo),
                )
            self.store.append(cols, n)
        elif n:
            if self.first_bad:
                self._raise_bad(streamed=True)
            self.sink.feed(self, buf, cols)
        return line + n_lines

    def _numbers(
        self,
        data: bytes,
        lo: int,
        buf: NDArray[np.uint8],
        s: NDArray[np.int64],
        e: NDArray[np.int64],
        name: str,
        lines: NDArray[np.int64],
    ) -> NDArray[np.float64]:
        out = np.empty(s.shape[0], dtype=np.float64)
        flag = np.zeros(s.shape[0], dtype=np.uint8)
        if _k._parse_numbers(buf, s, e, _k._POW10, out, flag):
            for r in np.flatnonzero(flag):  # rare: exponents, inf, long numbers or text
                try:
                    text = data[lo + s[r] : lo + e[r]].decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise ValueError(
                        f"click log {str(self.p)!r} is not UTF-8 text ({exc}; line {lines[r]})."
                    ) from None
                out[r] = _parse_numbers(np.array([text]), name, self.p, [int(lines[r])])[0]
        return out

    def _checked(self, f: NDArray[np.float64], name: str, lines: NDArray[np.int64]) -> NDArray[Any]:
        """A chunk's numbers as the log keeps them, its first bad value noted per check.

        ``position`` becomes int64 and ``click`` uint8; the errors are raised at the end in
        the order :meth:`ClickLog.from_arrays` checks (every position, then every click).
        """
        if name == "count":
            bad = np.flatnonzero(~np.isfinite(f) | (f <= 0))
            if bad.size:
                self.first_bad.setdefault("count", (int(lines[bad[0]]), f[bad[0]]))
            return f
        bad = np.flatnonzero(~np.isfinite(f) | (np.mod(f, 1) != 0))
        if bad.size:
            self.first_bad.setdefault(f"{name} integer", (int(lines[bad[0]]), f[bad[0]]))
            f = np.where(np.isfinite(f), np.floor(f), 0.0)
        v = f.astype(np.int64)
        bad = np.flatnonzero(v < 1) if name == "position" else np.flatnonzero((v != 0) & (v != 1))
        if bad.size:
            first = self.first_bad.setdefault(name, (int(lines[bad[0]]), v[bad[0]], 0))
            self.first_bad[name] = (first[0], first[1], first[2] + bad.size)
        return v if name == "position" else v.astype(np.uint8)

    def _hashes(
        self,
        buf: NDArray[np.uint8],
        s: NDArray[np.int64],
        e: NDArray[np.int64],
        name: str,
    ) -> NDArray[np.int32]:
        """Codes of the ids (in order of first appearance), each new id's bytes kept."""
        ids = self.ids[name]
        n = s.shape[0]
        ids.reserve(n)
        codes = np.empty(n, dtype=np.int32)
        new_at = np.empty(n, dtype=np.int64)
        n_new = _k._intern_spans(
            buf, s, e, ids.slots, ids.keys, ids.n, ids.blob, ids.at, codes, new_at
        )
        if n_new < 0:
            raise _HashCollision
        if n_new:
            ids.add(buf, s[new_at[:n_new]], e[new_at[:n_new]])
        return codes

    def _raise_bad(self, streamed: bool = False) -> None:
        """The first bad value noted by ``_checked``, as :meth:`ClickLog.from_arrays` says it.

        ``streamed``: raised at the chunk holding it, before the rest is read, so the
        message names the first bad line without counting the file's bad rows.
        """
        source = f"click log {str(self.p)!r}"
        bad = self.first_bad
        if "position integer" in bad:
            ln, v = bad["position integer"]
            raise ValueError(f"{source}: position must be an integer; line {ln} has {str(v)!r}.")
        if "position" in bad:
            ln, v, k = bad["position"]
            rows = (
                f"line {ln} has position {v}"
                if streamed
                else (f"{k} rows have a smaller one, first at line {ln} (position {v})")
            )
            raise ValueError(
                f"{source}: position must be >= 1 (1 = top of the shown list); {rows}. "
                "If your positions start at 0, add 1."
            )
        if "click integer" in bad:
            ln, v = bad["click integer"]
            raise ValueError(f"{source}: click must be an integer; line {ln} has {str(v)!r}.")
        if "click" in bad:
            ln, v, _ = bad["click"]
            raise ValueError(f"{source}: click must be 0 or 1; line {ln} has {v}.")
        if "count" in bad:
            ln, v = bad["count"]
            raise ValueError(f"{source}: count must be a positive number; line {ln} has {v!r}.")

    def _finish(self) -> ClickLog:
        p = self.p
        source = f"click log {str(p)!r}"
        if self.sink is not None:
            self.sink.finish(self)
            return None  # type: ignore[return-value]  # read_counts takes the sink's counts
        if self.store is None or self.store.n == 0:
            raise ValueError(f"{source} has no entries; a click log needs at least one row.")
        col = self.store.columns()
        where = col.pop("line", None)  # None: row i is line i + 2
        n = self.store.n
        codes: dict[str, tuple[NDArray[np.str_], NDArray[np.int32]]] = {}
        for name, ids in self.ids.items():
            # codes numbered by first appearance -> ranks of the sorted ids (from_arrays'
            # codes): UTF-8 bytes sort as their strings, and numpy pads both with zeros
            n_ids = ids.n
            width = max(int(np.max(np.diff(ids.at))), 1)
            if width <= 8:  # as big-endian 64-bit numbers: they sort as the bytes do
                width = 8
            padded = np.empty((n_ids, width), dtype=np.uint8)
            _k._padded(ids.blob, ids.at, width, padded)
            keys = padded.view(">u8" if width == 8 else f"S{width}").ravel()
            rank_order = np.argsort(keys)  # distinct ids: every sort gives one order
            del padded, keys
            rank = np.empty(n_ids, dtype=np.int32)
            rank[rank_order] = np.arange(n_ids, dtype=np.int32)
            names = np.empty(0, dtype=str)
            if name != "session":  # session ids are only grouped on, never shown
                blob = ids.blob.tobytes()
                at = ids.at.tolist()
                try:
                    names = np.array(
                        [blob[at[c] : at[c + 1]].decode("utf-8") for c in rank_order.tolist()],
                        dtype=str,
                    )
                except UnicodeDecodeError as exc:
                    raise ValueError(f"click log {str(p)!r} is not UTF-8 text ({exc}).") from None
            code = col.pop(name)
            _k._remap(code, rank)  # first-appearance codes -> ranks, in place
            codes[name] = names, code
        self._raise_bad()
        pos, clk = col["position"], col["click"]
        cnt = col["count"] if "count" in col else np.ones(n)
        qnames, qcode = codes["qid"]
        dnames, dcode = codes["docid"]
        scode = codes["session"][1] if "session" in codes else None
        self.store = None
        return ClickLog._build(
            qcode, qnames, dcode, dnames, scode, pos, clk, cnt, where, "line", source, None, None
        )


class _Gunzip:
    """A gzip file decompressed by a thread (zlib lets go of the GIL), read in pieces.

    ``read()`` returns the next piece (about 10 MB of text; ``b""`` at the end),
    ``readline()`` the first line. Members follow one another as in :mod:`gzip`; a file cut
    short raises EOFError, damaged data zlib.error (``decompression_errors`` words both).
    """

    _IN = 1 << 20  # compressed bytes decompressed at a time

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.pieces: queue.Queue[Any] = queue.Queue(maxsize=2)
        self.stop = threading.Event()
        self.pending = b""
        self.done = False
        self.thread = threading.Thread(target=self._run, name="rankboost-gunzip", daemon=True)
        self.thread.start()

    def _put(self, item: Any) -> bool:
        while not self.stop.is_set():
            try:
                self.pieces.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        try:
            d = zlib.decompressobj(31)
            started = False
            while True:
                data = self.raw.read(self._IN)
                if not data:
                    if started and not d.eof:
                        raise EOFError(
                            "Compressed file ended before the end-of-stream marker was reached"
                        )
                    break
                while data:
                    started = True
                    out = d.decompress(data)
                    if out and not self._put(out):
                        return
                    data = b""
                    if d.eof:  # the next member, unless only zero padding follows
                        data = d.unused_data
                        if not data.strip(b"\x00"):
                            data = b""
                        else:
                            d = zlib.decompressobj(31)
                            started = False
            self._put(b"")
        except BaseException as exc:  # handed to the reading thread
            self._put(exc)

    def read(self, size: int = -1) -> bytes:
        if self.pending:
            out, self.pending = self.pending, b""
            return out
        if self.done:
            return b""
        item = self.pieces.get()
        if isinstance(item, BaseException):
            self.done = True
            raise item
        if not item:
            self.done = True
        return bytes(item)

    def readline(self) -> bytes:
        data = b""
        while True:
            piece = self.read()
            at = piece.find(b"\n")
            if at >= 0 or not piece:
                self.pending = piece[at + 1 :] if at >= 0 else b""
                return data + (piece[: at + 1] if at >= 0 else b"")
            data += piece

    def __enter__(self) -> _Gunzip:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


class _Store:
    """Columns appended chunk by chunk into arrays with room to spare (grown by doubling)."""

    def __init__(self, dtypes: dict[str, Any], capacity: int) -> None:
        self.cols = {name: np.empty(capacity, dtype=dt) for name, dt in dtypes.items()}
        self.n = 0

    def append(self, values: dict[str, NDArray[Any]], m: int) -> None:
        n = self.n
        for name, v in values.items():
            col = self.cols[name]
            if n + m > col.shape[0]:
                grown = np.empty(max(n + m, 2 * col.shape[0]), dtype=col.dtype)
                grown[:n] = col[:n]
                self.cols[name] = col = grown
            col[n : n + m] = v
        self.n = n + m

    def add(self, name: str, values: NDArray[Any]) -> None:
        """A new column, given for the rows so far (room as the others)."""
        col = np.empty(next(iter(self.cols.values())).shape[0], dtype=values.dtype)
        col[: self.n] = values
        self.cols[name] = col

    def columns(self) -> dict[str, NDArray[Any]]:
        """The columns (views of the first ``n`` rows)."""
        return {name: col[: self.n] for name, col in self.cols.items()}


class _Ids:
    """The distinct ids of one column while reading: hash table, and each id's bytes."""

    def __init__(self) -> None:
        self.slots = np.full(0, -1, dtype=np.int64)
        self.keys = np.empty(0, dtype=np.uint64)
        self._blob = np.empty(1 << 10, dtype=np.uint8)  # room to grow into (doubling)
        self._at = np.zeros(1 << 7, dtype=np.int64)
        self.n = 0

    @property
    def blob(self) -> NDArray[np.uint8]:
        """The ids' bytes, one after the other."""
        return self._blob[: self._at[self.n]]

    @property
    def at(self) -> NDArray[np.int64]:
        """Offsets of each id's bytes in ``blob`` (``n + 1``)."""
        return self._at[: self.n + 1]

    def add(self, buf: NDArray[np.uint8], ns: NDArray[np.int64], ne: NDArray[np.int64]) -> None:
        """Append the ids ``buf[ns[i]:ne[i]]`` (new codes ``n, n + 1, ...``)."""
        n, m = self.n, ns.shape[0]
        end = self._at[n] + np.cumsum(ne - ns)
        size = int(end[-1])
        if size > self._blob.shape[0]:
            grown = np.empty(max(size, 2 * self._blob.shape[0]), dtype=np.uint8)
            grown[: self._at[n]] = self._blob[: self._at[n]]
            self._blob = grown
        if n + m + 1 > self._at.shape[0]:
            grown_at = np.empty(max(n + m + 1, 2 * self._at.shape[0]), dtype=np.int64)
            grown_at[: n + 1] = self._at[: n + 1]
            self._at = grown_at
        _k._gather_spans(buf, ns, ne, self._blob[self._at[n] : size])
        self._at[n + 1 : n + m + 1] = end
        self.n = n + m

    def reserve(self, n: int, n_keys: int | None = None) -> None:
        """Make the table room for ``n`` new keys beyond ``n_keys`` (default: the ids)."""
        n_keys = self.n if n_keys is None else n_keys
        if 2 * (n_keys + n) >= self.slots.shape[0]:  # room for every entry being new
            size = 1 << int(2 * (n_keys + n)).bit_length()
            self.slots = np.full(size, -1, dtype=np.int64)
            keys = np.empty(size // 2, dtype=np.uint64)
            keys[:n_keys] = self.keys[:n_keys]
            self.keys = keys
            _k._rehash(self.keys, n_keys, self.slots)

    def intern(
        self, h: NDArray[np.uint64], n_keys: int
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], int]:
        """Codes of the hashes ``h`` (``n_keys`` known): codes, where the new ones are, how many."""
        n = h.shape[0]
        self.reserve(n, n_keys)
        codes = np.empty(n, dtype=np.int64)
        new_at = np.empty(n, dtype=np.int64)
        n_new = _k._intern(h, self.slots, self.keys, n_keys, codes, new_at)
        return codes, new_at, n_new

    def name(self, code: int) -> str:
        """The id of ``code`` (UTF-8 checked by the caller's ``decode``)."""
        return self.blob[self.at[code] : self.at[code + 1]].tobytes().decode("utf-8")


class _HashCollision(Exception):
    """Two different ids with one 64-bit hash (never seen in practice): use the csv path."""


def _read_with_csv(p: Path, delimiter: str | None) -> ClickLog:
    """The csv-module reader: for quoted fields and multi-character delimiters."""
    p, raw = read_bytes(p, "click log")
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
    the distinct documents and pairs, not with the sessions (plus 16 bytes per session, to
    notice a session that comes back). Any other log (sessions spread over the file, rows out
    of order, a session-level error) is read whole by :func:`read_click_log`, as before.

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
    from ._counts import check_pairs, click_counts

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
        return _ChunkReader(p, delimiter, verbose, sink).read_counts()
    except (_QuotedFields, _HashCollision, _NotStreamable):
        del sink
        return whole()


class _Stream:
    """Sums the sessions of a log as :class:`_ChunkReader` parses it (``read_click_counts``).

    A session is a run of rows with one qid and one session id (neighbours' bytes compared);
    the last run of a chunk is carried into the next. Each finished run must show positions
    ``1..m`` in order with one count and distinct documents, and must not come back later
    (a set of 64-bit hashes of (qid, session id); a false alarm only costs the whole read).
    """

    def __init__(self, qid: ArrayLike, docid: ArrayLike, what: str, pairs: str) -> None:
        from ._counts import _Tables, check_pairs

        self.what, self.pairs = what, pairs
        self.order, self.sk = feature_keys(qid, docid, what)
        self.tables = _Tables(check_pairs(pairs))
        self.docs = _Ids()  # (qid code, docid code) -> document code, first appearance
        self.doc_row = np.empty(0, dtype=np.int64)
        self.doc_line = np.empty(0, dtype=np.int64)  # line of each document's first row
        self.missing_rows = 0
        self.seen = _Ids()  # hashes of the finished sessions (keys and slots only)
        self.n_seen = 0
        self.carry: dict[str, NDArray[Any]] | None = None
        self.carry_hash = np.empty(1, dtype=np.uint64)
        self.prev = np.empty(0, dtype=np.uint8)  # session bytes and qid of the last row
        self.prev_q = -1
        self.counts: ClickCounts

    def start(self, reader: _ChunkReader) -> None:
        self.has_session = "session" in reader.cols

    def feed(self, reader: _ChunkReader, buf: NDArray[np.uint8], cols: dict[str, Any]) -> None:
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
        _k._run_breaks(buf, s, e, q, self.prev, self.prev_q, new)
        first = np.flatnonzero(new)
        h = np.empty(first.shape[0], dtype=np.uint64)
        _k._hash_spans(buf, s[first], e[first], h)
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
        reader: _ChunkReader,
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
        if _k._runs_ok(starts, part["position"], part["count"]) >= 0:
            raise _NotStreamable
        pair = np.empty(2, dtype=np.int64)
        _k._first_duplicate(starts, part["doc"], pair)
        if pair[0] >= 0:
            raise _NotStreamable
        _, _, n_new = self.seen.intern(h, self.n_seen)
        if n_new < h.shape[0]:  # a session seen before (or two in this chunk): not one run
            raise _NotStreamable
        self.n_seen += n_new
        self.tables.add(
            starts,
            part["row"],
            part["position"],
            np.ascontiguousarray(part["click"], dtype=np.uint8),
            part["count"],
        )

    def finish(self, reader: _ChunkReader) -> None:
        """Sum the last run; the counts, or the missing documents' error."""
        source = f"click log {str(reader.p)!r}"
        if self.carry is not None:
            self._sessions(self.carry, np.array([0, self.carry["row"].shape[0]]), self.carry_hash)
        if self.tables.n_sessions == 0:
            raise ValueError(f"{source} has no entries; a click log needs at least one row.")
        missing = np.flatnonzero(self.doc_row < 0)
        if missing.size:
            qids, dids = reader.ids["qid"], reader.ids["docid"]
            key = self.docs.keys[missing[:_SHOW]]
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
