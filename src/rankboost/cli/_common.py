"""What every command of :mod:`rankboost.cli` shares: errors, argument types, tables.

Every command module imports from here (and from the other ``_`` modules of this package),
and no command module imports another: :mod:`rankboost.cli` registers each one
(``register(subparsers)``, which sets ``func``, the handler taking the parsed
``argparse.Namespace`` and returning the exit status, and ``files``, the files it reads and
writes: :mod:`rankboost.cli._rules`), and its :func:`~rankboost.cli.main` prints the errors
raised here. Stdlib only (``rankboost --help`` stays fast); :func:`metric_name` imports
:mod:`rankboost.metrics` when called.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = [
    "MAX_ERROR_CHARS",
    "PROG",
    "CLIError",
    "UsageError",
    "add_parser",
    "count",
    "did_you_mean",
    "error_line",
    "int_at_least",
    "interrupt_at_round_end",
    "metric_name",
    "one_line",
    "os_error_text",
    "require_option_package",
    "table",
    "user_text",
]

#: The program name every command's messages start with (``rankboost: error: ...``).
PROG = "rankboost"


class CLIError(Exception):
    """A user-facing error: printed as one line, exit status 1."""

    exit_status = 1


class UsageError(CLIError):
    """A usage error found after parsing (e.g. an output that is an input): exit status 2."""

    exit_status = 2


def count(n: int, one: str, many: str) -> str:
    """``n`` with its noun: ``count(1, "query", "queries")`` is ``"1 query"``."""
    return f"{n} {one if n == 1 else many}"


def one_line(text: object) -> str:
    """``text`` on one line (runs of whitespace, newlines included, become one space)."""
    return " ".join(str(text).split())


#: ``Owner.method: `` or ``function: ``, as the library's messages start (``RankFusion.fit:``)
#: at the start of the message or of a message quoted after "...: "
_CALLER = re.compile(r"(^|: )([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?: ")


def _names_python_api(owner: str, attr: str | None) -> bool:
    """Whether ``owner[.attr]`` is a name of an imported rankboost module (not a file name)."""
    for name, module in list(sys.modules.items()):
        if name != "rankboost" and not name.startswith("rankboost."):
            continue
        obj = getattr(module, owner, None)
        if obj is None or (owner.islower() and not callable(obj)):
            continue
        if attr is None:  # a function (load_svmlight) or a class (Qrels), not a plain word
            return callable(obj) and ("_" in owner or not owner.islower())
        if callable(getattr(obj, attr, None)):
            return True
    return False


def user_text(text: object) -> str:
    """A library message for a command's user: on one line, without the Python caller.

    The library's messages name the Python call they come from (``RankFusion.fit: ...``,
    ``load_svmlight: ...``), which means nothing on the command line; each such prefix that
    names a function or method of an imported rankboost module is removed (a file name
    before a colon is kept). Every message a command prints goes through here
    (:func:`rankboost.cli.main`).
    """

    def drop(m: re.Match[str]) -> str:
        return m.group(1) if _names_python_api(m.group(2), m.group(3)) else m.group(0)

    return _as_options(one_line(_CALLER.sub(drop, one_line(text))))


def _as_options(text: str) -> str:
    """Training parameters written as Python (``alpha='exact'``) as their options.

    ``alpha='exact'`` reads ``--alpha exact``, ``positive_cumulative=True`` reads
    ``--positive-cumulative``: the messages of :mod:`rankboost.params` serve the functions,
    the estimators and the command line.
    """
    params = sys.modules.get("rankboost.params")
    if params is None or "=" not in text:
        return text
    for p in (*params.TRAIN_PARAMS, *params.FEEDBACK_PARAMS):
        if not p.cli or p.name not in text:
            continue

        def option(m: re.Match[str], cli: str = p.cli) -> str:
            value = m.group(2) if m.group(2) is not None else m.group(3)
            if value in ("True", "False"):
                return cli if value == "True" else "--no-" + cli[2:]
            return f"{cli} {value}"

        text = re.sub(rf"(?<![\w.])({re.escape(p.name)})=(?:'([^']*)'|([\w.+-]+))", option, text)
    return text


#: The longest error message printed whole (characters); a longer one is cut in its middle.
#: (Messages name a file, often twice: 300 would cut those of long temporary paths.)
MAX_ERROR_CHARS = 500


def error_line(text: object) -> str:
    """The line ``rankboost: error: ...`` that a command prints for ``text``: the one printer.

    The message is put on one line; one longer than :data:`MAX_ERROR_CHARS` keeps its start
    (what is wrong) and its end (what to do) and says how many characters were cut between.

    Examples
    --------
    >>> error_line("bad value")
    'rankboost: error: bad value'
    >>> line = error_line("y" * 1000 + " Pass -o.")
    >>> line[351:379], len(line)
    ('... [509 characters cut] ...', 546)
    >>> line[-40:]
    'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy Pass -o.'
    """
    text = one_line(text)
    if len(text) > MAX_ERROR_CHARS:
        head = MAX_ERROR_CHARS * 2 // 3
        tail = MAX_ERROR_CHARS - head
        cut = len(text) - head - tail
        text = f"{text[:head]}... [{cut} characters cut] ...{text[-tail:]}"
    return f"{PROG}: error: {text}"


def did_you_mean(word: str, candidates: Sequence[str]) -> str:
    """``" (did you mean 'x'?)"`` for the candidates close to a mistyped ``word``, or ``""``.

    Examples
    --------
    >>> did_you_mean("trian", ["train", "predict", "info"])
    " (did you mean 'train'?)"
    >>> did_you_mean("xyz", ["train", "predict"])
    ''
    """
    import difflib

    close = difflib.get_close_matches(word, list(dict.fromkeys(candidates)), n=3, cutoff=0.7)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"


def require_option_package(module: str, option: str) -> None:
    """Raise :class:`UsageError` (status 2) when ``option`` needs a ``module`` not installed.

    Called before a command reads or computes anything (``--plot`` without matplotlib), with
    the install line of :func:`rankboost._compat.install_hint`; finding the package does not
    import it.
    """
    import importlib.util

    if importlib.util.find_spec(module) is None:
        from .._compat import install_hint  # this error path only

        raise UsageError(
            f"{option} needs the optional package {module!r}, which is not installed: "
            f"{install_hint(module)}; or leave out {option}."
        )


def os_error_text(exc: OSError) -> str:
    """The message of an ``OSError`` for the user: no ``[Errno 2]``, the path named once.

    The package's writers (:mod:`rankboost._atomic`) say ``cannot write 'PATH': why``; other
    errors say why and, when known, the path.
    """
    why = exc.strerror or ""
    if why.startswith("cannot "):
        return why
    if why and exc.filename is not None:
        return f"{why}: {exc.filename!r}"
    return why or str(exc)


def int_at_least(low: int) -> Callable[[str], int]:
    """An argparse ``type=``: an int ``>= low`` (the message of ``rankboost.params``)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low:
            raise argparse.ArgumentTypeError(f"must be an int >= {low}; got {text!r}")
        return value

    return parse


def metric_name(text: str) -> str:
    """An argparse ``type=``: a metric name of ``rankboost.metrics`` (``ndcg@10``, ``map``)."""
    from ..metrics import parse_metric

    try:
        parse_metric(text)
    except (TypeError, ValueError) as exc:
        hint = (
            f" ({text!r} is a file: put --metric after the files, or end its names with --)"
            if os.path.exists(text)
            else ""
        )
        raise argparse.ArgumentTypeError(one_line(str(exc)) + hint) from None
    return text


@contextlib.contextmanager
def interrupt_at_round_end() -> Iterator[Callable[[Any], None]]:
    """Ctrl-C during training ends it at the end of the current round; yields the callback.

    The SIGINT handler only sets a flag and the callback raises ``KeyboardInterrupt`` between
    rounds: raised by the handler itself, the exception could land in a finaliser running
    at that moment, where Python ignores it, and training would go on. The handler is ours
    even where the parent process ignored SIGINT. A second Ctrl-C interrupts at once.
    """
    hit: list[bool] = []

    def handler(signum: int, frame: Any) -> None:
        if hit:
            raise KeyboardInterrupt
        hit.append(True)

    def check(env: Any) -> None:
        if hit:
            raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():  # signals: main only
        yield check
        return
    old = signal.signal(signal.SIGINT, handler)
    try:
        yield check
    finally:
        signal.signal(signal.SIGINT, old)
        if hit:  # a Ctrl-C after the last round's check still interrupts
            raise KeyboardInterrupt


def add_parser(
    sub: Any, name: str, help: str, epilog: str, description: str | None = None, **defaults: Any
) -> argparse.ArgumentParser:
    """Add command ``name`` to the subparsers ``sub``, as every command module does.

    ``help``: its line in the list of commands, and its description unless ``description``
    is given; ``epilog``: its examples, printed as written (one command line alone gets
    ``example:`` before it); ``defaults``: ``func`` (the handler) and ``files`` (what it
    reads and writes, :class:`rankboost.cli._rules.Files`) of a command that runs.
    """
    p: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help,
        description=description or help,
        epilog=epilog if epilog.startswith("example") else "example:\n  " + epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(**defaults)
    return p


def _cell(value: Any) -> str:
    import numpy as np

    if isinstance(value, (float, np.floating)):
        return f"{value:.4f}"
    return str(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Plain-text table: text columns left-aligned, numbers right-aligned (numpy on use).

    Examples
    --------
    >>> print(table(["metric", "value"], [["map", 0.5], ["ndcg@10", 0.61234]]))
    metric    value
    map      0.5000
    ndcg@10  0.6123
    """
    import numpy as np

    cells = [[_cell(v) for v in row] for row in rows]
    numeric = [
        all(isinstance(row[j], (int, float, np.number)) for row in rows) if rows else False
        for j in range(len(headers))
    ]
    widths = [max([len(h)] + [len(r[j]) for r in cells]) for j, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        out = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(out).rstrip()

    return "\n".join([line(headers), *(line(r) for r in cells)])
