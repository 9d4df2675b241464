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
import csv
import gzip
import io
import lzma
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._kernels import clicks as _k
from ..datasets._io import PathLike, read_bytes
from ._log import OPTIONAL_COLUMNS, REQUIRED_COLUMNS, ClickLog

__all__ = ["read_click_log"]


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


_CHUNK = 1 << 25  # bytes of text parsed at a time (whole lines)
_NUMBER_COLUMNS = ("position", "click", "count")


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

    def __init__(self, p: Path, delimiter: str | None, verbose: bool) -> None:
        self.p, self.delimiter, self.verbose = p, delimiter, verbose
        self.ids: dict[str, _Ids] = {}
        self.first_bad: dict[str, tuple[Any, ...]] = {}
        self.parts: dict[str, list[NDArray[Any]]] = {}

    def read(self) -> ClickLog:
        from .._compat import progress_bar
        from ..datasets._io import compression, decompression_errors

        p = self.p
        kind = compression(p)
        bar = progress_bar(
            p.stat().st_size, disable=not self.verbose, desc="reading click log", stacklevel=4
        )
        with open(p, "rb") as raw, decompression_errors(p, "click log", kind):
            fh: Any = raw
            if kind == "gzip":
                fh = gzip.GzipFile(fileobj=raw, mode="rb")
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
            self.parts = {name: [] for name in (*self.cols, "line")}
            self.ids = {name: _Ids() for name in self.cols if name not in _NUMBER_COLUMNS}
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
        self.parts["line"].append(lines)
        for c, name in enumerate(self.cols):
            s, e = start[c, :n], end[c, :n]  # rows of C-ordered arrays: contiguous
            if name in _NUMBER_COLUMNS:
                values = self._numbers(data, lo, buf, s, e, name, lines)
                self.parts[name].append(self._checked(values, name, lines))
            else:
                self.parts[name].append(self._hashes(buf, s, e, name))
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
        h = np.empty(n, dtype=np.uint64)
        _k._hash_spans(buf, s, e, h)
        n_keys = ids.at.shape[0] - 1
        if 2 * (n_keys + n) >= ids.slots.shape[0]:  # room for every entry being new
            size = 1 << int(2 * (n_keys + n)).bit_length()
            ids.slots = np.full(size, -1, dtype=np.int64)
            keys = np.empty(size // 2, dtype=np.uint64)
            keys[:n_keys] = ids.keys[:n_keys]
            ids.keys = keys
            _k._rehash(ids.keys, n_keys, ids.slots)
        codes = np.empty(n, dtype=np.int64)
        new_at = np.empty(n, dtype=np.int64)
        n_new = _k._intern(h, ids.slots, ids.keys, n_keys, codes, new_at)
        del h
        if n_new:
            ns, ne = s[new_at[:n_new]], e[new_at[:n_new]]
            more = np.empty(int(np.sum(ne - ns)), dtype=np.uint8)
            _k._gather_spans(buf, ns, ne, more)
            ids.blob = np.concatenate([ids.blob, more])
            ids.at = np.concatenate([ids.at, ids.at[-1] + np.cumsum(ne - ns)])
        if _k._same_bytes(buf, s, e, codes, ids.blob, ids.at) >= 0:
            raise _HashCollision
        return codes.astype(np.int32)

    def _finish(self) -> ClickLog:
        p = self.p
        source = f"click log {str(p)!r}"
        col: dict[str, Any] = {
            k: np.concatenate(v) if v else np.empty(0) for k, v in self.parts.items()
        }
        self.parts.clear()
        where = col.pop("line").astype(np.int64)
        n = where.shape[0]
        if n == 0:
            raise ValueError(f"{source} has no entries; a click log needs at least one row.")
        codes: dict[str, tuple[NDArray[np.str_], NDArray[np.int32]]] = {}
        for name, ids in self.ids.items():
            # codes numbered by first appearance -> ranks of the sorted ids (from_arrays'
            # codes): UTF-8 bytes sort as their strings, and numpy pads both with zeros
            n_ids = ids.at.shape[0] - 1
            width = max(int(np.max(np.diff(ids.at))), 1)
            padded = np.empty((n_ids, width), dtype=np.uint8)
            _k._padded(ids.blob, ids.at, width, padded)
            rank_order = np.argsort(padded.view(f"S{width}").ravel(), kind="stable")
            del padded
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
            codes[name] = names, rank[col.pop(name)]
        bad = self.first_bad
        if "position integer" in bad:
            ln, v = bad["position integer"]
            raise ValueError(f"{source}: position must be an integer; line {ln} has {str(v)!r}.")
        if "position" in bad:
            ln, v, k = bad["position"]
            raise ValueError(
                f"{source}: position must be >= 1 (1 = top of the shown list); {k} rows "
                f"have a smaller one, first at line {ln} (position {v}). "
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
        pos, clk = col["position"], col["click"]
        cnt = col["count"] if "count" in col else np.ones(n)
        qnames, qcode = codes["qid"]
        dnames, dcode = codes["docid"]
        scode = codes["session"][1] if "session" in codes else None
        return ClickLog._build(
            qcode, qnames, dcode, dnames, scode, pos, clk, cnt, where, "line", source, None, None
        )


class _Ids:
    """The distinct ids of one column while reading: hash table, and each id's bytes."""

    def __init__(self) -> None:
        self.slots = np.full(0, -1, dtype=np.int64)
        self.keys = np.empty(0, dtype=np.uint64)
        self.blob = np.empty(0, dtype=np.uint8)
        self.at = np.zeros(1, dtype=np.int64)


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
