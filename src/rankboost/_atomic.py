"""Atomic file writes: nothing a user wrote is ever left half-written.

Everything goes to a temporary file in the target's folder, is flushed to disk, and then
renamed over the target (``os.replace`` is atomic on POSIX and Windows); the folder is then
flushed too, so that the rename itself survives a crash. A reader, or a writer killed at any
moment (``kill -9``), sees the old file or the new one, never a partial one. On any error the
temporary file is removed and an existing target is left untouched.

* Permissions: a new file gets the usual ``0o666`` minus the umask (as ``open`` would give
  it); a replaced file keeps its mode (a ``0o600`` model stays ``0o600``).
* Links: a target that is a symbolic link is written through (the link stays a link).
* Temporary files are named ``.<name>.<host>-<pid>-<random>.tmp``. One left behind by a
  writer that was killed (its process no longer exists on this host) is removed by the next
  write to the same target.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import socket
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

__all__ = ["atomic_open", "atomic_write_bytes", "atomic_write_text"]

_POSIX = os.name == "posix"


def _host_tag() -> str:
    return hashlib.sha1(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:6]


def _tmp_pattern(name: str) -> re.Pattern[str]:
    """Our temporary files for target ``name``: group 1 is the host tag, group 2 the pid."""
    return re.compile(rf"\.{re.escape(name)}\.([0-9a-f]{{6}})-(\d+)-[0-9a-f]{{8}}\.tmp")


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # this process: another thread may be writing it right now
    try:
        os.kill(pid, 0)  # signal 0: only checks that the process exists
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, it belongs to someone else
        return True
    return True


def _remove_stale(folder: Path, name: str) -> None:
    """Remove temporary files of ``name`` left by writers of this host that were killed."""
    if not _POSIX:  # os.kill(pid, 0) would terminate the process on Windows
        return
    pattern, host = _tmp_pattern(name), _host_tag()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None or match.group(1) != host or _pid_alive(int(match.group(2))):
            continue
        try:
            os.unlink(entry.path)
        except OSError:  # removed by someone else meanwhile, or not ours to remove
            pass


def _fsync_folder(folder: Path) -> None:
    if not hasattr(os, "O_DIRECTORY"):  # Windows: folders cannot be opened
        return
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems do not support it; the rename is done anyway
        pass
    finally:
        os.close(fd)


def _create_tmp(folder: Path, name: str) -> tuple[int, Path]:
    """Create a new temporary file with mode ``0o666`` minus the umask; ``(fd, path)``."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    prefix = f".{name}.{_host_tag()}-{os.getpid()}-"
    while True:
        tmp = folder / f"{prefix}{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:  # pragma: no cover - 32 random bits collided
            continue


@contextmanager
def atomic_open(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """Open a binary stream whose content replaces ``path`` only when the block succeeds.

    See the module docstring for the guarantees (atomic replace, modes, links, stale
    temporary files).
    """
    target = Path(os.path.realpath(path))
    folder = target.parent
    try:
        mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        mode = None  # a new file: the umask decides, as for open()
    _remove_stale(folder, target.name)
    fd, tmp = _create_tmp(folder, target.name)
    try:
        with os.fdopen(fd, "wb") as fh:
            if mode is not None:
                if _POSIX:
                    os.fchmod(fh.fileno(), mode)
                else:  # pragma: no cover - Windows
                    os.chmod(tmp, mode)
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_folder(folder)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path) as fh:
        fh.write(data)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))
