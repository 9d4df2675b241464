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
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._kernels import click_sessions as _s
from .._kernels import clicks as _k
from ..datasets._io import PathLike, read_bytes
from ._gunzip import Gunzip
from ._log import OPTIONAL_COLUMNS, REQUIRED_COLUMNS, ClickLog

__all__ = ["ChunkReader", "HashCollision", "Ids", "QuotedFields", "read_click_log"]


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
    reader = ChunkReader(p, delimiter, verbose)
    try:
        return reader.read()
    except (QuotedFields, HashCollision):
        return _read_with_csv(p, delimiter)


class QuotedFields(Exception):
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


class ChunkReader:
    """Streams a click log in chunks of whole lines through the numba tokenizer.

    Ids are kept as 64-bit hashes while reading (each distinct id decoded once, and equal
    hashes checked to hold equal bytes), numbers as float64; at the end the hashes become
    codes ranked like the sorted id strings, so the log is the one :meth:`ClickLog.from_arrays`
    builds from the same strings.
    """

    def __init__(self, p: Path, delimiter: str | None, verbose: bool, sink: Any = None) -> None:
        self.p, self.delimiter, self.verbose, self.sink = p, delimiter, verbose, sink
        self.ids: dict[str, Ids] = {}
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
                fh = stack.enter_context(Gunzip(raw))
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
                raise QuotedFields
            self.sep, self.header = _header(p, head, self.delimiter)
            self.cols = [c for c in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS) if c in self.header]
            self.wanted = np.full(len(self.header), -1, dtype=np.int64)
            for c, name in enumerate(self.cols):
                self.wanted[self.header.index(name)] = c
            self.ids = {name: Ids() for name in self.cols if name not in _NUMBER_COLUMNS}
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
            raise QuotedFields
        buf = np.frombuffer(data, dtype=np.uint8, count=hi - lo, offset=lo)
        n_lines = data.count(b"\n", lo, hi) + (0 if data[hi - 1] == 10 else 1)
        n_cols = len(self.cols)
        at = np.empty(n_lines, dtype=np.int64)
        start = np.empty((n_cols, n_lines), dtype=np.int64)
        end = np.empty((n_cols, n_lines), dtype=np.int64)
        bad = np.zeros(2, dtype=np.int64)
        n = _k.tokenize(buf, ord(self.sep), len(self.header), self.wanted, at, start, end, bad)
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
                if _k.parse_small_ints(buf, s, e, *_INT_RANGE[name], v):
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
        if _k.parse_numbers(buf, s, e, _k.POW10, out, flag):
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
        n_new = _k.intern_spans(
            buf, s, e, ids.slots, ids.keys, ids.n, ids.blob, ids.at, codes, new_at
        )
        if n_new < 0:
            raise HashCollision
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
            _k.padded(ids.blob, ids.at, width, padded)
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
            _s.remap(code, rank)  # first-appearance codes -> ranks, in place
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


class Ids:
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
        _k.gather_spans(buf, ns, ne, self._blob[self._at[n] : size])
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
            _k.rehash(self.keys, n_keys, self.slots)

    def intern(
        self, h: NDArray[np.uint64], n_keys: int
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], int]:
        """Codes of the hashes ``h`` (``n_keys`` known): codes, where the new ones are, how many."""
        n = h.shape[0]
        self.reserve(n, n_keys)
        codes = np.empty(n, dtype=np.int64)
        new_at = np.empty(n, dtype=np.int64)
        n_new = _k.intern(h, self.slots, self.keys, n_keys, codes, new_at)
        return codes, new_at, n_new

    def name(self, code: int) -> str:
        """The id of ``code`` (UTF-8 checked by the caller's ``decode``)."""
        return self.blob[self.at[code] : self.at[code + 1]].tobytes().decode("utf-8")


class HashCollision(Exception):
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
