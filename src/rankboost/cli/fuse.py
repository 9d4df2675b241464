"""The ``rankboost fuse`` group: train / apply / evaluate / export a learned rank fusion.

:func:`register` adds ``fuse`` and its subcommands (one module each:
:mod:`~rankboost.cli.fuse_train`, :mod:`~rankboost.cli.fuse_apply` for ``apply`` and
``evaluate``, :mod:`~rankboost.cli.fuse_export`); each sets ``func``, the handler, and
``files``, what it reads and writes (:mod:`rankboost.cli._rules`). :func:`run` calls the
handler of parsed arguments (:func:`rankboost.cli.main` also checks the files first and
prints the errors: ``ValueError`` / ``OSError``, exit status 1, and
:class:`~rankboost.cli._common.UsageError`, exit status 2).

Examples
--------
>>> import argparse
>>> parser = argparse.ArgumentParser(prog="rankboost")
>>> register(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["fuse", "train", "--runs", "a.run", "b.run",
...                           "--qrels", "q.txt", "-o", "fusion.json"])
>>> args.fuse_command, args.runs, args.family, args.n_rounds, args.positive_cumulative
('train', ['a.run', 'b.run'], 'auto', 'auto', True)
"""

from __future__ import annotations

import argparse
from typing import Any

from . import fuse_apply, fuse_export, fuse_train
from ._common import UsageError, add_parser
from ._fuse import EXAMPLES

__all__ = ["register", "run"]

#: The subcommands of ``fuse``, in the order ``--help`` lists them.
SUBCOMMANDS = ("train", "apply", "evaluate", "export")


def register(subparsers: Any) -> None:
    """Add ``rankboost fuse`` (train / apply / evaluate / export) to the subparsers of a parser."""
    fuse = add_parser(
        subparsers,
        "fuse",
        "learn to combine ranked lists (meta-search / rank fusion)",
        EXAMPLES["fuse"],
        "Learned rank fusion with RankBoost (Freund et al. 2003, section 6.2).",
    )
    fuse.set_defaults(func=_needs_a_subcommand(fuse))
    sub = fuse.add_subparsers(dest="fuse_command", metavar="{" + ",".join(SUBCOMMANDS) + "}")
    fuse_train.register(sub)
    fuse_apply.register(sub)
    fuse_export.register(sub)


def run(args: argparse.Namespace) -> int:
    """Call the handler of parsed ``fuse`` arguments and return its exit status.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments from a parser on which :func:`register` was called.

    Returns
    -------
    int
        0 on success (on an error the handler raises; :func:`rankboost.cli.main` prints
        the message and exits with status 1, or 2 for a usage error).
    """
    func = getattr(args, "func", None)
    if func is None:
        raise UsageError("no fuse subcommand given; use one of train, apply, evaluate, export.")
    return int(func(args))


def _needs_a_subcommand(parser: argparse.ArgumentParser) -> Any:
    def handler(args: argparse.Namespace) -> int:
        *others, last = SUBCOMMANDS
        raise UsageError(
            f"{parser.prog} needs a subcommand: {', '.join(others)} or {last} (see "
            f"'{parser.prog} --help')."
        )

    return handler
