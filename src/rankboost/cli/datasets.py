"""``rankboost datasets write mq2008 DIR``: the bundled MQ2008 fold as files on disk.

Writes ``DIR/train.txt``, ``DIR/vali.txt`` and ``DIR/test.txt`` of one fold, byte for byte
the official LETOR 4.0 files (SVMlight with ``qid:``, read by LightGBM, XGBoost, RankLib,
scikit-learn's ``load_svmlight_file(..., query_id=True)`` and every ``rankboost`` command),
and ``DIR/feature_names.txt`` (one name per line, for ``rankboost train --feature-names``).
``DIR`` is created when missing; existing files are replaced only with ``--force``, and every
check is made before the first file is written, each written atomically. Errors are a
:class:`~rankboost.cli._common.UsageError` (status 2: a file as ``DIR``, files there without
``--force``); a folder that cannot be written is refused first (:mod:`rankboost.cli._rules`).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ._common import PROG, CLIError, UsageError, add_parser, os_error_text
from ._defaults import default_of
from ._rules import Files, Paths

__all__ = ["register"]

_EPILOG = f"""\
examples:
  {PROG} datasets write mq2008 mq2008/             # fold 1: train.txt vali.txt test.txt
  {PROG} datasets write mq2008 fold3/ --fold 3
  {PROG} train mq2008/train.txt --valid mq2008/vali.txt --early-stopping 50 -o model.json

The files are the LETOR 4.0 MQ2008 fold files as published (784 queries of the TREC 2008
Million Query track, 46 features, labels 0-2; see rankboost/datasets/data/PROVENANCE.md):
'2 qid:10002 1:0.007477 ... 46:0.0 #docid = GX008-86-4444840 inc = 1 prob = 0.086622'.
"""

#: What ``datasets write`` reads the fold from.
WRITE = "rankboost.datasets._bundled:mq2008_fold_files"
#: the files written, in order (the feature names last)
FILES = ("train.txt", "vali.txt", "test.txt", "feature_names.txt")


def register(subparsers: Any) -> None:
    """Add ``rankboost datasets`` (``write``) to the command line's subparsers."""
    p = add_parser(
        subparsers,
        "datasets",
        "write a bundled dataset (LETOR 4.0 MQ2008) to disk",
        _EPILOG,
        "Write a bundled dataset to disk, as the files its publisher ships.",
    )
    sub = p.add_subparsers(dest="datasets_command", metavar="COMMAND", required=True)
    w = add_parser(
        sub,
        "write",
        "write one MQ2008 fold: DIR/train.txt, vali.txt, test.txt, feature_names.txt",
        _EPILOG,
        "Write one MQ2008 fold as DIR/train.txt, DIR/vali.txt, DIR/test.txt (the LETOR 4.0 "
        "files, byte for byte) and DIR/feature_names.txt.",
        func=_cmd_write,
        files=Files(implied=lambda a: Paths(folders=[("DIR", a.directory)])),
    )
    w.add_argument("name", choices=["mq2008"], help="the dataset (mq2008)")
    w.add_argument("directory", metavar="DIR", help="output folder, created when missing")
    fold = default_of(WRITE, "fold")
    w.add_argument(
        "--fold", type=int, choices=range(1, 6), default=fold, help=f"LETOR fold (default {fold})"
    )
    w.add_argument("--force", action="store_true", help="replace files of the same names in DIR")


def _check_directory(directory: str, force: bool) -> None:
    """What the files of a writable ``directory`` would replace, before the first (status 2).

    That ``directory`` is a folder, or can be created, and can be written is checked before
    (the output folder's rule, :func:`rankboost.cli._rules.check_files`).
    """
    if not os.path.isdir(directory):
        return
    there = [name for name in FILES if os.path.lexists(os.path.join(directory, name))]
    for name in there:
        if os.path.isdir(os.path.join(directory, name)):
            raise UsageError(
                f"{os.path.join(directory, name)!r} is a folder; pass another output folder."
            )
    if there and not force:
        raise UsageError(
            f"{directory!r} already has {', '.join(there)}; pass --force to replace them, or "
            "another folder."
        )


def _cmd_write(args: argparse.Namespace) -> int:
    from .._atomic import atomic_write_bytes
    from ..datasets._bundled import MQ2008_FEATURE_NAMES, mq2008_fold_files

    _check_directory(args.directory, args.force)
    files = mq2008_fold_files(args.fold)
    files["feature_names.txt"] = "".join(f"{n}\n" for n in MQ2008_FEATURE_NAMES).encode()
    try:
        os.makedirs(args.directory, exist_ok=True)
        for name in FILES:
            atomic_write_bytes(os.path.join(args.directory, name), files[name])
    except OSError as exc:
        raise CLIError(os_error_text(exc)) from None
    sys.stdout.write(
        f"wrote MQ2008 fold {args.fold} (LETOR 4.0) to {args.directory}: {', '.join(FILES)}\n"
    )
    return 0
