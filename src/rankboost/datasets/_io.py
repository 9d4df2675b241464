"""File helpers shared by the loaders: transparent decompression and whole-file reads."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
from pathlib import Path

PathLike = str | os.PathLike[str]

__all__ = ["PathLike", "open_binary", "read_bytes"]


def open_binary(path: Path) -> io.BufferedIOBase:
    """Open ``path`` for reading, decompressing gzip, bzip2 or xz (detected by magic)."""
    with open(path, "rb") as probe:
        magic = probe.read(6)
    if magic.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(path, "rb")
    if magic.startswith(b"BZh"):
        return bz2.BZ2File(path, "rb")
    if magic.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(path, "rb")
    return open(path, "rb")


def read_bytes(path: PathLike, what: str) -> tuple[Path, bytes]:
    """Return ``(Path(path), decompressed content)``; ``what`` names the file in errors."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{what} {str(p)!r} does not exist (or is not a file).")
    with open_binary(p) as fh:
        return p, fh.read()
