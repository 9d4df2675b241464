"""Atomic file writes: nothing a user wrote is ever left half-written.

Everything goes to a temporary file in the target's folder, is flushed to disk, and then
renamed over the target (``os.replace`` is atomic on POSIX and Windows); the folder is then
flushed too, so that the rename itself survives a crash. A reader, or a writer killed at any
moment (``kill -9``), sees the old file or the new one, never a partial one. On any error the
temporary file is removed and an existing target is left untouched.

* Permissions: a new file gets the usual ``0o666`` minus the umask (as ``open`` would give
  it); a replaced file keeps its mode (a ``0o600`` model stays ``0o600``).
* Links: a target that is a symbolic link is written through (the link stays a link).
* Temporary files are named ``.<name>.<host>-<pid>-<random>.tmp``, ``<name>`` shortened so
  that the whole name fits the file system's limit (``NAME_MAX``, 255 bytes): any name the
  target can have, the temporary file can have too. One left behind by a writer that was
  killed (its process no longer exists on this host) is removed by the next write to the
  same target.
* A target that exists and is not a regular file (``/dev/null``, a named pipe) is written
  directly, as ``cat > target`` would: it stays what it is, and an error of the device
  (``/dev/full``: no space left) is raised. A path to an open file descriptor of this
  process (``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``: ``-o >(gzip > x.gz)``)
  writes to that descriptor, whatever it is open on (a pipe, or a file opened by ``>>``,
  which is appended to). A folder is refused.
* :func:`check_target` raises, before any work is done, the error a write would raise
  for a folder, a missing folder or a folder that cannot be written (it creates and removes
  a temporary file there, as the write would: file modes, read-only file systems and
  immutable folders, for root too); the command line calls it before training.
* Errors name the target, never the temporary file: a missing folder is a
  ``FileNotFoundError`` saying which folder to create; an error of the disk while writing
  (``ENOSPC``, ``EDQUOT``, ``EIO``) is an ``OSError`` of its kind naming the target.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "atomic_open",
    "atomic_write_bytes",
    "atomic_write_text",
    "check_folder",
    "check_target",
]

_POSIX = os.name == "posix"


def _host_tag() -> str:
    """Six hex digits of the SHA-1 of this host's name (os.uname: the name gethostname gives)."""
    try:  # CPython's own SHA-1, the digest of hashlib's without loading OpenSSL (2 ms)
        from _sha1 import sha1
    except ImportError:  # pragma: no cover - another Python
        from hashlib import sha1

    if hasattr(os, "uname"):
        host = os.uname().nodename
    else:  # pragma: no cover - Windows
        import socket

        host = socket.gethostname()
    return sha1(host.encode("utf-8", "replace")).hexdigest()[:6]


#: the longest file name (bytes) where ``os.pathconf`` cannot tell (POSIX's usual value)
_NAME_MAX = 255
#: what a temporary name adds to its stem: "." + "." + host (6) + "-" + pid + "-" + 8 + ".tmp"
_TMP_EXTRA = 1 + 1 + 6 + 1 + 10 + 1 + 8 + 4


def _name_max(folder: Path) -> int:
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (AttributeError, OSError, ValueError):  # Windows, or a folder that is not there
        return _NAME_MAX


def _tmp_stem(folder: Path, name: str) -> str:
    """``name``, shortened (whole characters) so that its temporary name fits ``NAME_MAX``."""
    room = _name_max(folder) - _TMP_EXTRA
    stem = name
    while len(stem.encode("utf-8", "surrogateescape")) > room and stem:
        stem = stem[:-1]
    return stem


def _tmp_pattern(stem: str) -> re.Pattern[str]:
    """Our temporary files for stem ``stem``: group 1 is the host tag, group 2 the pid."""
    return re.compile(rf"\.{re.escape(stem)}\.([0-9a-f]{{6}})-(\d+)-[0-9a-f]{{8}}\.tmp")


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


def _remove_stale(folder: Path, stem: str) -> None:
    """Remove temporary files of ``stem`` left by writers of this host that were killed."""
    if not _POSIX:  # os.kill(pid, 0) would terminate the process on Windows
        return
    pattern, host = _tmp_pattern(stem), _host_tag()
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


def _create_tmp(folder: Path, stem: str) -> tuple[int, Path]:
    """Create a new temporary file with mode ``0o666`` minus the umask; ``(fd, path)``."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    prefix = f".{stem}.{_host_tag()}-{os.getpid()}-"
    while True:
        tmp = folder / f"{prefix}{os.urandom(4).hex()}.tmp"  # secrets.token_hex(4)
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:  # pragma: no cover - 32 random bits collided
            continue


#: errors of the disk while writing, reported with the target's name
_WRITE_ERRNOS = {errno.ENOSPC, errno.EIO, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}


def _naming(exc: OSError, path: str | os.PathLike[str], what: str) -> OSError:
    """``exc``, of the same class and errno, saying ``cannot write <path>: <what>``."""
    return type(exc)(exc.errno, f"cannot write {os.fspath(path)!r}: {what}")


#: the folders of this process's open file descriptors (``/dev/fd`` links to the first)
_FD_FOLDER = re.compile(r"/proc/(self|thread-self|\d+)(?:/task/\d+)?/fd")


def _descriptor(path: str | os.PathLike[str]) -> int | None:
    """The descriptor of this process that ``path`` names (``/dev/stdout``), or None.

    Follows the links of ``path`` one by one, stopping at the first that lies in a
    ``/proc/<pid>/fd`` folder (whose entries are not links to a path one could replace).
    """
    if not _POSIX:
        return None
    p = os.path.abspath(path)
    for _ in range(40):  # the kernel's limit on links followed
        parent = os.path.realpath(os.path.dirname(p))
        match = _FD_FOLDER.fullmatch(parent)
        name = os.path.basename(p)
        if match is not None:
            ours = match.group(1) in ("self", "thread-self", str(os.getpid()))
            return int(name) if ours and name.isdigit() else None
        try:
            link = os.readlink(os.path.join(parent, name))
        except OSError:  # not a link (or not there): an ordinary path
            return None
        p = os.path.join(parent, link)
    return None


def _check_folder(path: str | os.PathLike[str], folder: Path) -> None:
    if not folder.is_dir():
        import shlex  # this error only

        given = os.fspath(Path(path).parent) or "."
        real_given = os.path.realpath(given)
        # a link may point into another folder: name the one to create, not the link's
        shown = given if real_given == os.fspath(folder) else os.fspath(folder)
        what = (
            f"the folder {shown!r} is not a folder"
            if folder.exists()
            else f"the folder {shown!r} does not exist; create it first "
            f"(mkdir -p {shlex.quote(shown)})"
        )
        if folder.exists():
            raise _naming(NotADirectoryError(errno.ENOTDIR, what), path, what)
        raise _naming(FileNotFoundError(errno.ENOENT, what), path, what)


@contextmanager
def _direct_open(path: str | os.PathLike[str], fd: int | None) -> Iterator[BinaryIO]:
    """Write a device, a pipe or descriptor ``fd`` in place (nothing to replace atomically)."""
    try:
        with open(path, "wb") if fd is None else os.fdopen(os.dup(fd), "wb") as fh:
            yield fh
            fh.flush()
    except OSError as exc:
        if exc.filename is None or exc.errno in _WRITE_ERRNOS:
            raise _naming(exc, path, exc.strerror or str(exc)) from None
        raise


def _open_tmp(path: str | os.PathLike[str], target: Path) -> tuple[int, Path]:
    """The temporary file beside ``target`` (stale ones removed first); ``(fd, path)``.

    An error (EACCES, EROFS, EPERM, ...) names the user's ``path``, never the temporary name.
    """
    folder = target.parent
    stem = _tmp_stem(folder, target.name)
    _remove_stale(folder, stem)
    try:
        return _create_tmp(folder, stem)
    except OSError as exc:
        raise _naming(exc, path, f"{exc.strerror} (in the folder {str(folder)!r})") from None


@contextmanager
def atomic_open(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """Open a binary stream whose content replaces ``path`` only when the block succeeds.

    See the module docstring for the guarantees (atomic replace, modes, links, stale
    temporary files, devices, error messages).
    """
    st, fd = _target_stat(path)
    if fd is not None or (st is not None and not stat.S_ISREG(st.st_mode)):
        with _direct_open(path, fd) as fh:  # /dev/stdout, /dev/null, /dev/full, a pipe
            yield fh
        return
    target = Path(os.path.realpath(path))
    folder = target.parent
    mode = None if st is None else stat.S_IMODE(st.st_mode)
    fd, tmp = _open_tmp(path, target)
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
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and (
            exc.errno in _WRITE_ERRNOS or os.fspath(tmp) in (exc.filename, exc.filename2)
        ):
            raise _naming(exc, path, exc.strerror or str(exc)) from None
        raise
    _fsync_folder(folder)


def _target_stat(path: str | os.PathLike[str]) -> tuple[os.stat_result | None, int | None]:
    """``(stat of path or None, descriptor it names or None)``; a folder is refused."""
    if not os.fspath(path):
        raise FileNotFoundError(
            errno.ENOENT, "cannot write '': the path is empty; pass a file name"
        )
    fd = _descriptor(path)
    try:
        st: os.stat_result | None = os.stat(path)  # through links, as open() would go
    except OSError:
        st = None  # a new file: the umask decides, as for open()
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(
            errno.EISDIR, f"cannot write {os.fspath(path)!r}: it is a directory; pass a file name"
        )
    if fd is None and (st is None or stat.S_ISREG(st.st_mode)):
        _check_folder(path, Path(os.path.realpath(path)).parent)
    return st, fd


def check_target(path: str | os.PathLike[str]) -> None:
    """Raise what writing ``path`` would raise before its content; else nothing.

    That is: ``path`` is a folder or empty, its folder is missing, is not a folder or cannot
    be written. The last is tried, not guessed from the modes (root ignores them; a
    read-only file system or an immutable folder does not): a temporary file is created
    beside ``path`` and removed, as :func:`atomic_open` would create it. For the command
    line, which calls it before the work whose result it would write; nothing is left.
    """
    st, fd = _target_stat(path)
    if fd is not None or (st is not None and not stat.S_ISREG(st.st_mode)):
        return  # a device, a pipe or a descriptor: written in place
    tmp_fd, tmp = _open_tmp(path, Path(os.path.realpath(path)))
    os.close(tmp_fd)
    os.unlink(tmp)


def check_folder(
    folder: str | os.PathLike[str], target: str | os.PathLike[str] | None = None
) -> None:
    """Raise what creating a file in the existing folder ``folder`` would raise; else nothing.

    Tried as :func:`check_target` tries it (a temporary file created and removed); the error
    names ``target`` (default: ``folder``), e.g. the folder to be created inside ``folder``.
    """
    real = Path(os.path.realpath(folder))
    try:
        fd, tmp = _create_tmp(real, "folder")
    except OSError as exc:
        what = f"{exc.strerror} (no file can be created in {os.fspath(folder)!r})"
        raise _naming(exc, folder if target is None else target, what) from None
    os.close(fd)
    os.unlink(tmp)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path) as fh:
        fh.write(data)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))
