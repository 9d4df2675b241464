"""Line reading, atomic writing and the id and number checks of the fusion file formats."""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._atomic import atomic_write_bytes, atomic_write_text
from ..datasets._io import compression, decompression_errors, open_binary

__all__ = [
    "MAX_RANK",
    "check_ids",
    "once_per_query",
    "parse_grade",
    "positive_int",
    "read_lines",
    "trec_lines",
    "write_text",
]

PathLike = str | os.PathLike[str]


def read_lines(path: PathLike, what: str) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)``; gzip, bzip2 and xz are detected from the magic bytes.

    Damaged compressed data and text that is not UTF-8 are ``ValueError``s naming the file.
    """
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"{path}: is a directory; pass a {what}.")
    if not p.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    kind = compression(p)
    # NOTE: decompress everything before parsing: a corrupt stream is then reported as
    # such, not as a garbage line (gzip checks its CRC only at the end).
    with decompression_errors(path, what, kind), open_binary(p) as fh:
        data = fh.read()
    for no, raw in enumerate(data.split(b"\n"), start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{path}:{no}: not UTF-8 text ({exc.reason} at byte {exc.start}); is it a {what}?"
            ) from None
        yield no, text


def trec_lines(path: PathLike, kind: str, columns: str) -> Iterator[tuple[int, str, list[str]]]:
    """Yield ``(line_number, "path:line", fields)`` of each entry of a TREC ``kind`` file.

    Blank lines and lines starting with ``#`` are skipped; an entry has one field per name
    of ``columns`` (``"qid Q0 docid rank score tag"``), or it is a ``ValueError``.
    """
    n_columns = len(columns.split())
    for no, line in read_lines(path, f"{kind} file"):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        where = f"{path}:{no}"
        if len(parts) != n_columns:
            raise ValueError(
                f"{where}: a {kind} line has {n_columns} columns ({columns}); got "
                f"{len(parts)}: {line.strip()!r}."
            )
        yield no, where, parts


def once_per_query(
    first_line: dict[tuple[str, str], int],
    q: str,
    d: str,
    no: int,
    where: str,
    twice: str,
    why: str = "",
) -> None:
    """Note that document ``d`` of query ``q`` is on line ``no``; refuse it a second time.

    ``twice`` and ``why`` are the format's words: ``"appears twice in"`` and a reason.
    """
    if (q, d) in first_line:
        raise ValueError(
            f"{where}: document {d!r} {twice} query {q!r} (first at line "
            f"{first_line[(q, d)]}){why}."
        )
    first_line[(q, d)] = no


def write_text(path: PathLike, text: str) -> None:
    """Atomic write; gzip when ``path`` ends in ``.gz``."""
    if not str(path).endswith(".gz"):
        atomic_write_text(path, text)
        return
    atomic_write_bytes(path, gzip.compress(text.encode("utf-8"), mtime=0))


def _bad_id(name: str, v: str, letor: bool) -> str | None:
    """Why ``v`` (a ``name``) cannot be written, or None."""
    if not v:
        return "is empty"
    if name == "qid" and v.startswith("#"):
        return "starts with '#' (a comment line)"
    if name == "qid" and letor and "#" in v:
        return "has a '#' (the line's comment would start there)"
    if _SPACE.search(v):
        return "has whitespace"
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        return "is not encodable as UTF-8 (a lone surrogate)"
    return None


_SPACE = re.compile(r"\s")  # str.isspace's characters, the readers' field separators


def check_ids(qid: Any, docid: Any, what: str, *, letor: bool = False) -> None:
    """Refuse ids that a TREC file cannot hold: they would not read back as written.

    ``letor``: the file is a LETOR aggregation file, where a qid may hold no ``#`` at all.
    One pass over the joined ids (no Python loop over entries) when they are all fine; the
    first bad entry is then looked for, to name it.
    """
    for name, ids in (("qid", qid), ("docid", docid)):
        values = ids.tolist()
        if _all_fine(name, values, letor):
            continue
        kind, rule = ("a LETOR aggregation", "hold") if letor else ("a TREC", "start with")
        for i, v in enumerate(values):
            why = _bad_id(name, v, letor)
            if why is not None:
                raise ValueError(
                    f"{what}: {name} {v!r} (entry {i}) cannot be written to {kind} file: it "
                    f"{why}. Ids must be non-empty UTF-8 text without whitespace, and a qid "
                    f"must not {rule} '#'. Rename it first."
                )


def _all_fine(name: str, values: list[str], letor: bool) -> bool:
    """Whether every id of ``values`` can be written (a few passes at C speed)."""
    joined = "".join(values)
    if not all(values) or _SPACE.search(joined):
        return False
    try:
        joined.encode("utf-8")
    except UnicodeEncodeError:
        return False
    if name != "qid" or "#" not in joined:
        return True
    return not letor and not any(v.startswith("#") for v in values)


#: The largest rank a file may give (ranks are exact in float64 up to 2**53).
MAX_RANK = 2**53
INT64_RANGE = (-(2**63), 2**63 - 1)


def positive_int(text: str, where: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_RANK:
        raise ValueError(
            f"{where}: {what} must be a positive integer (1 = top) of at most 2**53 = "
            f"{MAX_RANK}; got {text!r}."
        )
    return value


def parse_grade(text: str, where: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{where}: {what} must be an integer grade; got {text!r}.") from None
    if not INT64_RANGE[0] <= value <= INT64_RANGE[1]:
        raise ValueError(
            f"{where}: {what} {text!r} is outside the int64 range "
            f"[{INT64_RANGE[0]}, {INT64_RANGE[1]}]."
        )
    return value
