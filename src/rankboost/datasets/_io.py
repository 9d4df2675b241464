"""File helpers shared by the readers: transparent decompression and whole-file reads.

gzip, bzip2 and xz are recognised by their magic bytes, whatever the file's name. A damaged
or truncated compressed stream is a ``ValueError`` naming the file and the compression, never
the decompressor's own exception (``zlib.error``, ``EOFError``, ``gzip.BadGzipFile``,
``lzma.LZMAError``, bz2's ``OSError``).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PathLike = str | os.PathLike[str]

__all__ = ["PathLike", "compression", "decompression_errors", "open_binary", "read_bytes"]

_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"))


def compression(path: PathLike) -> str | None:
    """``"gzip"``, ``"bzip2"`` or ``"xz"`` (from the magic bytes), or None for a plain file."""
    with open(path, "rb") as probe:
        magic = probe.read(6)
    for prefix, name in _MAGIC:
        if magic.startswith(prefix):
            return name
    return None


def open_binary(path: PathLike) -> io.BufferedIOBase:
    """Open ``path`` for reading, decompressing gzip, bzip2 or xz (detected by magic)."""
    kind = compression(path)
    if kind == "gzip":
        return gzip.GzipFile(path, "rb")
    if kind == "bzip2":
        return bz2.BZ2File(path, "rb")
    if kind == "xz":
        return lzma.LZMAFile(path, "rb")
    return open(path, "rb")


@contextmanager
def decompression_errors(path: PathLike, what: str, kind: str | None) -> Iterator[None]:
    """Turn the decompressor's exceptions inside the block into one ``ValueError``.

    ``kind`` is :func:`compression` of ``path``; for a plain file (None) nothing is caught.
    """
    if kind is None:
        yield
        return
    try:
        yield
    except (EOFError, zlib.error, lzma.LZMAError, OSError) as exc:
        # gzip.BadGzipFile and bz2's "Invalid data stream" are OSErrors
        if isinstance(exc, OSError) and not isinstance(exc, gzip.BadGzipFile) and exc.errno:
            raise  # a real I/O error (EIO, ...), not the content
        raise ValueError(
            f"{what} {str(path)!r} holds damaged or truncated {kind} data ({exc}); "
            "download or compress it again."
        ) from None


def read_bytes(path: PathLike, what: str) -> tuple[Path, bytes]:
    """Return ``(Path(path), decompressed content)``; ``what`` names the file in errors."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{what} {str(p)!r} does not exist (or is not a file).")
    kind = compression(p)
    with decompression_errors(p, what, kind), open_binary(p) as fh:
        return p, fh.read()
