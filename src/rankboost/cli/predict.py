"""``rankboost predict``: score every row of a file, one score per line or a TREC run.

Light by design: it imports neither numba nor scikit-learn (a model's scores are numpy
sums; tests/test_startup.py).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ._common import CLIError, add_parser, count, int_at_least, one_line, os_error_text
from ._inputs import (
    add_query_file,
    check_exists,
    check_width,
    load_data,
    load_model_file,
    query_ids,
    rounds_to_use,
    write_file,
)
from ._rules import Files, Paths, query_files

if TYPE_CHECKING:
    from ..datasets import RankingDataset

__all__ = ["FILES", "register"]

FILES = Files(
    inputs={"model": "model file", "data": "data file", "query_file": "query file"},
    outputs={"output": "-o"},
    implied=lambda args: Paths(inputs=query_files((args.data, args.query_file))),
)


def register(sub: Any) -> None:
    """Add ``rankboost predict`` to the ``subparsers`` of the command line."""
    p = add_parser(
        sub,
        "predict",
        "score every row of a file (one score per line, input order)",
        "rankboost predict model.json test.txt -o scores.txt",
        func=run,
        files=FILES,
    )
    p.add_argument("model", metavar="MODEL", help="model file from 'rankboost train'")
    p.add_argument("data", metavar="DATA", help="SVMlight/LETOR file to score")
    add_query_file(p)
    p.add_argument("-o", "--output", help="scores file (default: standard output)")
    p.add_argument(
        "--rounds", type=int_at_least(1), help="use the first N rounds (default: best or all)"
    )
    p.add_argument(
        "--format",
        choices=["scores", "trec"],
        default="scores",
        help="scores: one score per line, input order (default); trec: a TREC run "
        "'qid Q0 docid rank score tag', ranks 1..n per query by decreasing score, equal "
        "scores in input order (for trec_eval, ranx, pyserini)",
    )
    p.add_argument(
        "--tag", default="rankboost", help="trec: run tag, 6th column (default rankboost)"
    )
    p.add_argument(
        "--docid",
        choices=["auto", "row"],
        default="auto",
        help="trec: docid from the '#docid = D' comment, else the row number (auto, default), "
        "or always the row number (1 = first data row)",
    )


def run(args: argparse.Namespace) -> int:
    """Handle ``rankboost predict``; return the exit status (0)."""
    check_exists(args.data, "data file")
    model = load_model_file(args.model)
    data = load_data(args.data, n_features=model.n_features, query_file=args.query_file)
    check_width(data, model, args.data)
    scores = model.decision_function(data.X, n_rounds=rounds_to_use(model, args.rounds))
    if args.format == "trec":
        return _write_trec(args, data, scores)
    text = "".join(f"{s!r}\n" for s in scores.tolist())
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_file(args.output, text)
        sys.stderr.write(f"wrote {len(scores)} scores to {args.output}\n")
    return 0


def _write_trec(args: argparse.Namespace, data: RankingDataset, scores: Any) -> int:
    """``predict --format trec``: ranks 1..n per query by decreasing score, ties in row order.

    The docid is the ``#docid = ...`` comment, or the row number (1 = first data row) for
    rows without one (all rows with ``--docid row``); a file without qid is query ``0``.
    """
    import numpy as np

    from ..fusion import Run, format_run, write_run

    rows = np.arange(1, data.n_samples + 1).astype(str)
    docid = rows
    if data.docids is not None and args.docid == "auto":
        docid = np.where(data.docids == "", rows, data.docids)
    qid = query_ids(data, args.data)  # a file without qid is one query, and the user is told
    try:
        run = Run.from_scores(qid, docid, scores, name=args.tag)
    except ValueError as exc:
        raise CLIError(
            f"cannot write {args.data!r} as a TREC run: {one_line(str(exc))} Pass --docid row "
            "to use row numbers as docids."
        ) from None
    if args.output is None:
        sys.stdout.write(format_run(run, tag=args.tag))
        return 0
    try:
        write_run(args.output, run, tag=args.tag)
    except OSError as exc:
        raise CLIError(os_error_text(exc)) from None
    sizes = f"{count(len(run), 'row', 'rows')}, {count(len(run.queries), 'query', 'queries')}"
    sys.stderr.write(f"wrote a TREC run of {sizes} to {args.output}\n")
    return 0
