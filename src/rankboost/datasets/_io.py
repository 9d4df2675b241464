"""File helpers of the readers: decompression, whole-file reads, the group file of a data file.

Standard library only: the commands tell a file's format with it before numpy is imported.

gzip, bzip2 and xz are recognised by their magic bytes, whatever the file's name. A damaged
or truncated compressed stream is a ``ValueError`` naming the file and the compression, never
the decompressor's own exception (``zlib.error``, ``EOFError``, ``gzip.BadGzipFile``,
``lzma.LZMAError``, bz2's ``OSError``).
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PathLike = str | os.PathLike[str]

__all__ = [
    "DamagedFileError",
    "PathLike",
    "auto_query_file",
    "compression",
    "decompression_errors",
    "open_binary",
    "or_compressed",
    "read_bytes",
]


class DamagedFileError(ValueError):
    """A damaged or truncated compressed stream (a ``ValueError``: bad input, not I/O)."""


_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"))


def compression(path: PathLike) -> str | None:
    """``"gzip"``, ``"bzip2"`` or ``"xz"`` (from the magic bytes), or None for a plain file."""
    with open(path, "rb") as probe:
        magic = probe.read(6)
    for prefix, name in _MAGIC:
        if magic.startswith(prefix):
            return name
    return None


def open_binary(path: PathLike, what: str = "File") -> io.BufferedIOBase:
    """Open ``path`` for reading, decompressing gzip, bzip2 or xz (detected by magic).

    Reading a damaged or truncated compressed stream raises a ``ValueError`` naming the file
    (``what`` starts the message), whoever reads it: no decompressor exception escapes.
    """
    kind = compression(path)
    if kind is None:
        return open(path, "rb")
    # the decompressors are imported for a compressed file only (a command's start-up)
    if kind == "gzip":
        import gzip

        return _Checked(gzip.GzipFile(path, "rb"), path, what, kind)
    if kind == "bzip2":
        import bz2

        return _Checked(bz2.BZ2File(path, "rb"), path, what, kind)
    import lzma

    return _Checked(lzma.LZMAFile(path, "rb"), path, what, kind)


class _Checked(io.BufferedIOBase):
    """A decompressing stream whose read errors are :func:`decompression_errors`'."""

    def __init__(self, inner: io.BufferedIOBase, path: PathLike, what: str, kind: str) -> None:
        self._inner, self._where = inner, (path, what, kind)

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        with decompression_errors(*self._where):
            return self._inner.read(size)

    def read1(self, size: int = -1) -> bytes:
        with decompression_errors(*self._where):
            return self._inner.read1(size)

    def readline(self, size: int | None = -1) -> bytes:
        with decompression_errors(*self._where):
            return self._inner.readline(size)

    def close(self) -> None:
        self._inner.close()
        super().close()


@contextmanager
def decompression_errors(path: PathLike, what: str, kind: str | None) -> Iterator[None]:
    """Turn the decompressor's exceptions inside the block into one ``ValueError``.

    ``kind`` is :func:`compression` of ``path``; for a plain file (None) nothing is caught.
    """
    if kind is None:
        yield
        return
    import gzip
    import lzma
    import zlib

    try:
        yield
    except (EOFError, zlib.error, lzma.LZMAError, OSError) as exc:
        # gzip.BadGzipFile and bz2's "Invalid data stream" are OSErrors
        if isinstance(exc, OSError) and not isinstance(exc, gzip.BadGzipFile) and exc.errno:
            raise  # a real I/O error (EIO, ...), not the content
        raise DamagedFileError(
            f"{what} {str(path)!r} holds damaged or truncated {kind} data ({exc}); "
            "download or compress it again."
        ) from None


COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz")


def or_compressed(path: PathLike) -> Path:
    """``path``, or its compressed copy (``path.gz``, ``.bz2``, ``.xz``) when only that exists.

    MovieLens' ``u.data`` ships plain in GroupLens's zip and gzipped in many mirrors (this
    project's data folder among them): a reader given the plain name finds either.
    """
    p = Path(path)
    if p.exists():
        return p
    for suffix in COMPRESSED_SUFFIXES:
        sibling = p.with_name(p.name + suffix)
        if sibling.is_file():
            return sibling
    return p


def read_bytes(path: PathLike, what: str) -> tuple[Path, bytes]:
    """Return ``(Path(path), decompressed content)``; ``what`` names the file in errors."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{what} {str(p)!r} does not exist (or is not a file).")
    kind = compression(p)
    with decompression_errors(p, what, kind), open_binary(p, what) as fh:
        return p, fh.read()


_COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".lzma")


def auto_query_file(path: Path) -> Path | None:
    """Return the LightGBM group file next to ``path``, if there is one."""
    stems = [str(path)]
    if path.suffix in _COMPRESSED_SUFFIXES:
        stems.append(str(path.with_suffix("")))
    for stem in stems:
        for candidate in (stem + ".query", stem + ".query.gz"):
            if os.path.isfile(candidate):
                return Path(candidate)
    return None
