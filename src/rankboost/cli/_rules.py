"""The rules every command follows: declared by each command, checked once, before it runs.

* **Files.** Each command declares the files it reads and writes (:class:`Files`, by the
  destination of the option or argument that names them, as ``set_defaults(files=...)``);
  :func:`check_files`, called by :func:`rankboost.cli.main` before the handler, refuses
  an output that is one of the inputs, or two outputs that are one file (the same path,
  another spelling of it, a symbolic or a hard link: a usage error, exit status 2), and an
  output that cannot be written (a folder, a missing folder, a folder that is not a folder
  or cannot be written: exit status 1, the message the writer itself would give,
  :func:`rankboost._atomic.check_target`). So no command reads, trains or writes anything
  before its outputs are known to be writable and to destroy no input.
* **Progress bars.** :func:`add_progress_options` adds ``-q/--quiet`` and ``--progress``;
  :func:`show_progress` is the one decision: bars when asked (``--progress``), never with
  ``-q``, else when standard error is a terminal (tqdm's ``disable=None``), so that logs
  and pipes stay clean. A step that takes seconds and shows no bar (not a terminal, or an
  input below the bar's size) says what runs in one line instead (:func:`say_step`; not
  with ``-q``).

Stdlib only: :mod:`rankboost._atomic` and the datasets' group-file lookup are imported
when a command runs.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ._common import UsageError

__all__ = [
    "Files",
    "Paths",
    "add_progress_options",
    "check_files",
    "query_files",
    "same_file",
    "say_step",
    "show_progress",
]


class Paths(NamedTuple):
    """Files a command reads or writes that no single option names (found from the others).

    ``inputs`` and ``outputs`` are ``(what, path)``; ``folders`` are output folders, created
    when missing (``(option, path)``).
    """

    inputs: Sequence[tuple[str, str]] = ()
    outputs: Sequence[tuple[str, str]] = ()
    folders: Sequence[tuple[str, str]] = ()


@dataclass(frozen=True)
class Files:
    """The files a command reads and writes, by the destination that holds their paths.

    Parameters
    ----------
    inputs : dict of str to str
        Destination -> what the file is (``{"data": "data file"}``), named by the messages;
        a destination may hold one path, a list of them or None (not given).
    outputs : dict of str to str
        Destination -> the option that names it (``{"output": "-o", "plot": "--plot"}``).
    implied : callable, default=None
        ``implied(args)``: the :class:`Paths` found from the others (a group file found
        beside the data, a default output, the files written into an output folder).

    Examples
    --------
    >>> args = argparse.Namespace(model="m.json", data="d.txt", output="m.json")
    >>> check_files(args, Files({"model": "model file", "data": "data file"}, {"output": "-o"}))
    Traceback (most recent call last):
    ...
    rankboost.cli._common.UsageError: the output 'm.json' is the model file 'm.json'; writing \
it would destroy the input. Pass another path for -o.
    """

    inputs: Mapping[str, str] = field(default_factory=dict)
    outputs: Mapping[str, str] = field(default_factory=dict)
    implied: Callable[[argparse.Namespace], Paths] | None = None


def _paths(value: Any) -> list[str]:
    """The paths a destination holds: none, one or a list."""
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        return [os.fspath(value)]
    return [os.fspath(v) for v in value if v is not None]


def same_file(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name one file (symbolic and hard links too)."""
    try:
        return os.path.samefile(a, b)  # hard links and symbolic links too
    except OSError:  # one of them does not exist (yet)
        return os.path.realpath(a) == os.path.realpath(b)


def _in_place(path: str) -> bool:
    """Whether ``path`` is written in place (a device, a pipe): two outputs may share it."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def check_files(args: argparse.Namespace, files: Files) -> None:
    """Refuse, before any work, outputs that would destroy an input or cannot be written.

    Raises :class:`~rankboost.cli._common.UsageError` (status 2) for an output that is an
    input or another output, and the writer's ``OSError`` (status 1) for an output, or an
    output folder, that cannot be written.
    """
    inputs = [
        (what, p) for dest, what in files.inputs.items() for p in _paths(getattr(args, dest, None))
    ]
    outputs = [
        (flag, p) for dest, flag in files.outputs.items() for p in _paths(getattr(args, dest, None))
    ]
    folders: list[tuple[str, str]] = []
    if files.implied is not None:
        more = files.implied(args)
        inputs += more.inputs
        outputs += more.outputs
        folders += more.folders
    for option, folder in folders:
        _check_folder(option, folder)
    for k, (flag, out) in enumerate(outputs):
        for what, path in inputs:
            if same_file(out, path):
                raise UsageError(
                    f"the output {out!r} is the {what} {path!r}; writing it would destroy the "
                    f"input. Pass another path for {flag}."
                )
        for other_flag, other in outputs[:k]:
            if same_file(out, other) and not _in_place(out):
                raise UsageError(
                    f"the output {out!r} of {flag} is also the output {other!r} of "
                    f"{other_flag}; one would overwrite the other. Pass two paths."
                )
    from .._atomic import check_target  # when a command runs

    created = {os.path.realpath(folder) for _, folder in folders}
    for _, out in outputs:
        if os.path.realpath(os.path.dirname(out) or ".") not in created:
            check_target(out)  # (a file of a folder the command creates: checked above)


def _check_folder(option: str, folder: str) -> None:
    """An output folder, created when missing: a folder, or in one that can be written."""
    from .._atomic import check_folder

    if not folder:
        raise UsageError(f"the output folder of {option} is empty; pass a folder name.")
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UsageError(
            f"the output folder {folder!r} of {option} is a file; pass a folder (created when "
            "missing)."
        )
    existing = os.path.abspath(folder)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise UsageError(
            f"the output folder {folder!r} of {option} cannot be created: {existing!r} is a "
            "file; pass another folder."
        )
    check_folder(existing, folder)


def query_files(*pairs: tuple[str | None, str | None]) -> list[tuple[str, str]]:
    """The group files found beside data files (``DATA.query``) when none is given.

    ``pairs``: ``(data path, --query-file given or None)``; what ``load_svmlight`` reads
    with ``query_file="auto"``, as inputs ``("query file", path)``.
    """
    from pathlib import Path

    from ..datasets._io import auto_query_file  # standard library only

    found = []
    for data, given in pairs:
        if data is not None and given is None:
            path = auto_query_file(Path(data))
            if path is not None:
                found.append(("query file", str(path)))
    return found


# ---------------------------------------------------------------------- progress bars


def add_progress_options(p: argparse.ArgumentParser | Any, bars: str = "a progress bar") -> None:
    """Add ``-q/--quiet`` and ``--progress`` (what :func:`show_progress` reads)."""
    p.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bars, not even with --progress"
    )
    p.add_argument(
        "--progress",
        action="store_true",
        help=f"show {bars} on standard error even when it is not a terminal (by default: "
        "only on a terminal, so logs and pipes stay clean)",
    )


def show_progress(args: argparse.Namespace, stream: Any = None) -> bool:
    """Whether a command shows its progress bars: the one decision for every command.

    Never with ``-q``; always with ``--progress``; else when ``stream`` (standard error)
    is a terminal, as tqdm's ``disable=None``.

    Examples
    --------
    >>> import io
    >>> show_progress(argparse.Namespace(quiet=False, progress=False), io.StringIO())
    False
    >>> show_progress(argparse.Namespace(quiet=False, progress=True), io.StringIO())
    True
    """
    if getattr(args, "quiet", False):
        return False
    if getattr(args, "progress", False):
        return True
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def say_step(args: argparse.Namespace, text: str, *, bar: bool, stream: Any = None) -> bool:
    r"""Say on standard error what runs, before a step that takes seconds: the bar's stand-in.

    One line, ``rankboost COMMAND: TEXT``, where the step shows no bar of its own (``bar``:
    whether it does, from :func:`show_progress`) and never with ``-q``, so that a command
    silent for seconds under a pipe or a log says why. Returns whether it wrote the line.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> args = argparse.Namespace(quiet=False, command="train")
    >>> say_step(args, "reading the click log 'c.tsv.gz'", bar=False, stream=out)
    True
    >>> out.getvalue()
    "rankboost train: reading the click log 'c.tsv.gz'\n"
    >>> say_step(argparse.Namespace(quiet=True), "reading", bar=False, stream=out)
    False
    """
    if bar or getattr(args, "quiet", False):
        return False
    stream = sys.stderr if stream is None else stream
    names = (getattr(args, dest, None) for dest in ("command", "clicks_command"))
    command = " ".join(str(name) for name in names if name)
    stream.write(f"rankboost{' ' + command if command else ''}: {text}\n")
    stream.flush()
    return True
