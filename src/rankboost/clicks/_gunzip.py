"""A gzip file decompressed by a thread while the reader parses (``_read.ChunkReader``)."""

from __future__ import annotations

import queue
import threading
import zlib
from typing import Any

__all__ = ["Gunzip"]


class Gunzip:
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

    def __enter__(self) -> Gunzip:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
