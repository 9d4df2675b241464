"""The ``rankboost convert`` command: LETOR 4.0 aggregation files <-> TREC runs + qrels.

* ``rankboost convert AGG --to trec -o OUTDIR`` writes one TREC run per input ranker,
  ``OUTDIR/ranker01.run`` ... ``OUTDIR/ranker25.run`` (zero-padded to the width of ``K``, so
  a shell glob lists them in column order; the tag is the same name; ``score = -rank``; the
  documents a ranker did not return, ``NULL``, left out), and ``OUTDIR/qrels.txt`` (every
  row's label).
  ``OUTDIR`` is created if needed; existing files of these names are replaced.
* ``rankboost convert RUN... --qrels Q --to letor -o OUT`` writes a LETOR 4.0 aggregation
  file: one row per judged or returned document, column ``i`` = the rank the ``i``-th RUN
  gave it, ``NULL`` where that run did not return it (not "absent": in SVMlight an absent
  value means 0, which would read as a rank). ``rankboost train`` reads it with ``NULL`` =
  abstain.

Each file is written atomically (a temporary file renamed over the target; gzip when the
name ends in ``.gz``). An output that is one of the inputs is refused before anything is
read (exit status 2, :mod:`rankboost.cli._rules`), as are inconsistent options; a bad input
file is exit status 1. The conversions are :mod:`rankboost.fusion.io`'s.

Examples
--------
>>> import argparse
>>> parser = argparse.ArgumentParser(prog="rankboost")
>>> register(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["convert", "agg.txt", "--to", "trec", "-o", "runs"])
>>> args.inputs, args.to, args.output
(['agg.txt'], 'trec', 'runs')
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from ._common import UsageError, add_parser
from ._rules import Files, Paths

__all__ = ["register"]

QRELS_NAME = "qrels.txt"
#: The run files ``--to trec`` writes: ``ranker1.run`` ... (zero-padded to the widest)
_RUN_NAME = re.compile(r"ranker\d+\.run")


def _written(args: argparse.Namespace) -> Paths:
    """The files ``convert`` writes: one (``--to letor``), or a folder (``--to trec``).

    ``--to trec``: the folder, its qrels.txt and the ranker runs already there (the runs
    written may replace them).
    """
    if args.to != "trec":
        return Paths(outputs=[("-o", args.output)])
    out = Path(args.output)
    runs = sorted(p for p in out.iterdir() if _RUN_NAME.fullmatch(p.name)) if out.is_dir() else []
    outputs = [("-o", str(out / QRELS_NAME)), *(("-o", str(p)) for p in runs)]
    return Paths(outputs=outputs, folders=[("-o", args.output)])


FILES = Files({"inputs": "input file", "qrels": "qrels file"}, implied=_written)


def register(subparsers: Any) -> None:
    """Add ``rankboost convert`` to the command line's subparsers."""
    p = add_parser(
        subparsers,
        "convert",
        "convert LETOR-agg files to TREC runs + qrels, or TREC runs to LETOR-agg",
        "examples:\n"
        "  rankboost convert MQ2008-agg/Fold1/train.txt.gz --to trec -o train/\n"
        "  rankboost convert a.run b.run --qrels qrels.txt --to letor -o agg.txt",
        (
            "--to trec: one LETOR 4.0 aggregation file -> OUTDIR/ranker1.run ... rankerK.run "
            "(zero-padded: ranker01 ... ranker25) "
            "(score = -rank, NULL entries left out) + OUTDIR/qrels.txt. --to letor: TREC runs "
            "+ --qrels -> one LETOR aggregation file, column i = the rank in the i-th run, "
            "NULL where it did not return the document."
        ),
        func=_convert,
        files=FILES,
    )
    p.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="--to trec: one LETOR-agg file; --to letor: TREC run files (columns in this order)",
    )
    p.add_argument("--to", required=True, choices=["trec", "letor"], help="output format")
    p.add_argument(
        "-o",
        "--output",
        required=True,
        help="--to trec: output folder (created if needed); --to letor: output file",
    )
    p.add_argument("--qrels", help="--to letor: TREC qrels file giving the labels (required)")


def _convert(args: argparse.Namespace) -> int:
    if args.to == "trec":
        if len(args.inputs) != 1:
            raise UsageError(
                f"convert --to trec takes one LETOR aggregation file; got {len(args.inputs)} "
                "inputs. Convert each file into its own folder."
            )
        if args.qrels is not None:
            raise UsageError(
                "convert --to trec takes no --qrels: the labels come from the LETOR file "
                "(written to OUTDIR/qrels.txt)."
            )
        return _to_trec(args.inputs[0], args.output)
    if args.qrels is None:
        raise UsageError("convert --to letor needs --qrels FILE for the labels.")
    return _to_letor(args.inputs, args.qrels, args.output)


#: an SVMlight/LETOR feature line: ``label qid:Q k:v`` with a value that is not a rank
_FEATURE_LINE = re.compile(rb"(?m)^[ \t]*[-+]?\d+(?:\.\d*)?[ \t]+qid:\S+[ \t].*?\d:[-+]?\d*\.\d")


def _looks_like_features(path: str) -> bool:
    """Whether ``path`` reads (decompressed) as a feature file: a value with decimals."""
    from ..datasets._io import open_binary

    try:
        with open_binary(Path(path)) as fh:
            head = fh.read(1 << 16)
    except (OSError, ValueError, EOFError):
        return False
    return _FEATURE_LINE.search(head) is not None


def _to_trec(path: str, outdir: str) -> int:
    from ..datasets._io import DamagedFileError
    from ..fusion.io import is_letor_agg, read_letor_agg, write_qrels, write_run

    out = Path(outdir)
    try:
        data = read_letor_agg(path)
    except ValueError as exc:
        damaged = isinstance(exc, DamagedFileError)
        if damaged or is_letor_agg(path) or not _looks_like_features(path):
            raise  # the reader's error says what is wrong (damaged, empty, another format)
        raise ValueError(
            f"{exc} {path!r} has no NULL rank: is it a feature file (SVMlight/LETOR)? Those "
            "are read by 'rankboost train/predict/evaluate'; 'convert --to trec' reads the "
            "LETOR 4.0 aggregation files of ranks (MQ2008-agg)."
        ) from None
    runs = data.to_runs()
    # NOTE: zero-padded (ranker01 ... ranker25), so that a shell glob lists them in column
    # order and 'convert OUTDIR/ranker*.run --to letor' gives the columns back in order
    width = len(str(len(runs)))
    names = {name: f"ranker{i:0{width}d}" for i, name in enumerate(runs, start=1)}
    targets = {name: out / f"{names[name]}.run" for name in runs}
    out.mkdir(parents=True, exist_ok=True)
    for name, run in runs.items():
        write_run(targets[name], run, tag=names[name])
    write_qrels(out / QRELS_NAME, data.to_qrels())
    first, last = next(iter(runs)), list(runs)[-1]
    sys.stderr.write(
        f"wrote {len(runs)} runs ({targets[first].name} ... {targets[last].name}) and {QRELS_NAME} "
        f"({len(data.labels)} rows, {len(set(data.qid.tolist()))} queries) to {outdir}\n"
    )
    return 0


def _to_letor(paths: list[str], qrels_path: str, output: str) -> int:
    from ..fusion.io import read_qrels, read_runs, write_letor_agg

    runs = read_runs(paths)
    qrels = read_qrels(qrels_path)
    write_letor_agg(output, runs, qrels)
    columns = ", ".join(f"{i}:{p}" for i, p in enumerate(paths, start=1))
    sys.stderr.write(f"wrote {output} (columns {columns})\n")
    return 0
