"""The ``rankboost`` command line: one module per command, the shared rules checked once.

Commands: ``train``, ``predict``, ``evaluate``, ``info``, ``demo``, ``fuse {train, apply,
evaluate, export}``, ``convert``, ``export``, ``clicks {simulate, propensity}``, ``datasets
write`` (:data:`COMMANDS`; the module of each has its name). Each module's
``register(subparsers)`` adds its parser, with ``func`` (the handler) and ``files`` (what it
reads and writes); before the handler runs, :func:`main` checks the files
(:func:`rankboost.cli._rules.check_files`: no output is an input or another output, every
output can be written). Progress bars show on a terminal or with ``--progress``, never with
``-q`` (:func:`rankboost.cli._rules.show_progress`); each option's default is the one of
what it is passed to (:mod:`rankboost.cli._defaults`).

Reads SVMlight/LETOR files (gzip, bzip2 and xz too; LETOR 4.0 aggregation files, whose
``NULL`` values are read as NaN = abstain) and writes models as versioned JSON; ``predict
--format trec`` writes a TREC run and ``convert`` turns LETOR-agg files into TREC runs + qrels
and back.
Exit status, the same for every subcommand (``fuse`` included):

* 0 on success;
* 1 on an error in the data (missing, damaged or malformed file, wrong feature count) or
  an output that cannot be written (a missing folder, a folder without write permission),
  said before any work;
* 2 on a usage error: unknown option, a value out of its range (every numeric option's range
  is in ``--help``), unknown metric, an output path that is one of the inputs (or another
  output), through links too;
* 130 when interrupted (Ctrl-C); no partial output file is left;
* 141 (128 + SIGPIPE) when the reader of standard output closed it (``... | head``), quietly.

Every error is one line on stderr, ``rankboost: error: ...``, saying what to do; every warning
is one line, ``rankboost: warning: ...``; never a traceback for bad input.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn

from ._common import PROG, CLIError, UsageError, did_you_mean, error_line, os_error_text, user_text
from ._common import one_line as _one_line
from ._rules import Files, check_files

# NOTE: numpy, numba, scipy and scikit-learn are imported inside the handlers, not by the
# command modules, so that ``rankboost --help`` / ``--version`` and building the parser stay
# fast (issue 16, item 10; benchmarks/bench_startup.py); a command named on the command line
# registers alone (``rankboost predict`` imports no fusion, export or click module).

__all__ = ["COMMANDS", "CLIError", "UsageError", "main"]

#: The commands, in ``--help``'s order; each is registered by the module of its name.
COMMANDS = (
    "train", "predict", "evaluate", "info", "demo", "fuse", "convert", "export", "clicks",
    "datasets",
)  # fmt: skip

_EPILOG = """\
examples:
  rankboost demo                                   # MQ2008 fold 1, bundled: scores in ~20 s
  rankboost train train.txt --valid vali.txt --early-stopping 50 -o model.json
  rankboost predict model.json test.txt -o scores.txt
  rankboost evaluate model.json test.txt --metric ndcg@10 --metric map
  rankboost info model.json
  rankboost convert agg.txt --to trec -o runs/       # LETOR-agg -> TREC runs + qrels
  rankboost datasets write mq2008 mq2008/          # the bundled fold 1 as train/vali/test.txt

Data files are SVMlight/LETOR ("2 qid:10 1:0.5 2:0.1 ... #docid = D"), optionally
compressed (.gz, .bz2, .xz); LETOR 4.0 aggregation files ("1:3 2:NULL") load too, with
NULL = abstain. Progress bars show on a terminal (or with --progress; -q: none). Exit
status: 0 ok, 1 error in the data, 2 usage error (bad option or value, unknown metric,
output path that is an input), 130 interrupted.
"""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit status 2) that suggest the names meant.

    A mistyped command or option gets "did you mean" (``difflib``; Python 3.11's argparse
    has no ``suggest_on_error``): commands from the choices the error lists, options from
    the parser of the command the arguments name (an unknown option is reported by the
    top-level parser, which keeps the arguments for this).
    """

    _argv: Sequence[str] = ()

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        text = _one_line(message) + self._suggestion(message)
        prog = self._command_parser().prog  # an unknown option: the help of its command
        self.exit(2, error_line(f"{text} (see '{prog} --help')") + "\n")

    def _suggestion(self, message: str) -> str:
        """``" (did you mean ...?)"`` for the mistyped command or option of ``message``."""
        if "did you mean" in message or "maybe you meant" in message:  # Python >= 3.14
            return ""
        choice = re.search(r"invalid choice: '?([^'\s]*)'? \(choose from (.*)\)", message)
        if choice is not None:
            choices = [c.strip(" '\"") for c in choice.group(2).split(",")]
            return did_you_mean(choice.group(1), choices)
        unknown = re.match(r"unrecognized arguments: (.*)", message)
        if unknown is None:
            return ""
        options = [o for o in self._command_parser()._option_string_actions if o != "--help"]
        for word in unknown.group(1).split():
            if word.startswith("-") and len(word) > 1:
                hint = did_you_mean(word.split("=", 1)[0], options)
                if hint:
                    return hint
        return ""

    def _command_parser(self) -> argparse.ArgumentParser:
        """The parser of the (sub)command that ``self._argv`` names (``fuse train``: its own)."""
        parser: argparse.ArgumentParser = self
        for word in self._argv:
            subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            if subparsers and word in subparsers[0].choices:
                parser = subparsers[0].choices[word]
        return parser


class _Version(argparse.Action):
    """``--version``, which looks the version up only when asked (package metadata is slow)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.setdefault("help", "show program's version number and exit")
        super().__init__(
            option_strings, argparse.SUPPRESS, nargs=0, default=argparse.SUPPRESS, **kwargs
        )

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from .. import __version__

        sys.stdout.write(f"{parser.prog} {__version__}\n")
        parser.exit()


def _build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or (``argv`` naming a command) of that command alone.

    The second spares a command importing the others' modules (start-up time).
    """
    parser = _Parser(
        prog=PROG,
        description="RankBoost (Freund et al., JMLR 2003) for learning to rank.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    command = next((a for a in argv or () if not a.startswith("-")), None)
    for name in COMMANDS:
        if command not in COMMANDS or command == name:
            importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``rankboost`` command line; return the exit status.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments without the program name; None reads ``sys.argv[1:]``.

    Returns
    -------
    status : int
        0 on success, 1 on an error in the data, 2 on a usage error, 130 when interrupted,
        141 when the reader of the output closed it (see the module docstring).

    Examples
    --------
    >>> from rankboost.cli import main
    >>> main(["info", "no-such-model.json"])
    1
    """
    if argv is None:
        argv = sys.argv[1:]
    parser = _build_parser(argv)
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning  # restored when the block ends
            check_files(args, getattr(args, "files", None) or Files())  # before any work
            return int(args.func(args))
    except CLIError as exc:
        _err(error_line(user_text(exc)))
        return exc.exit_status
    except BrokenPipeError:
        # the reader of the output went away (rankboost info m.json | head): stop without a
        # word, as a command killed by SIGPIPE, and keep Python's exit from flushing into it
        _quiet_stdout()
        return 141
    except OSError as exc:
        _err(error_line(user_text(os_error_text(exc))))
    except (ValueError, TypeError, ImportError) as exc:
        _err(error_line(user_text(exc)))
    except MemoryError:
        _err(error_line("out of memory; the input is too large for this machine."))
    except KeyboardInterrupt:
        # NOTE: on a line of its own: the terminal's "^C" or a progress bar interrupted
        # before it ended its line may be on the current one
        _err(f"\n{PROG}: interrupted")
        return 130
    return 1


def _quiet_stdout() -> None:
    """Point standard output at the null device (after its reader closed the pipe)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (a test's capture)
        pass


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """Warnings as one readable line (``rankboost: warning: ...``), no source line."""
    _err(f"{PROG}: warning: {user_text(message)}")


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")
