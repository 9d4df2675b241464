"""``rankboost fuse apply`` and ``fuse evaluate``: use a saved fusion model on TREC runs.

``apply`` writes the fused TREC run; ``evaluate`` scores the fused run (with a model) or each
run file (without one) against qrels, with the metric conventions printed
(:mod:`rankboost.cli._metrics`). The model of either family is read by
:func:`rankboost.cli._fuse.load_fusion`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ._common import add_parser, count, int_at_least
from ._fuse import EXAMPLES, add_options, common_queries, load_fusion
from ._metrics import add_metric_argument, add_metric_options, format_conventions, metric_options
from ._rules import Files

__all__ = ["register"]

#: The metrics ``fuse evaluate`` prints without ``--metric``.
DEFAULT_METRICS = ("ndcg@10", "map")


def register(sub: Any) -> None:
    """Add ``apply`` and ``evaluate`` to the ``fuse`` subparsers."""
    p = add_parser(
        sub,
        "apply",
        "fuse runs with a saved model, write a TREC run",
        EXAMPLES["apply"],
        func=apply,
        files=Files({"model": "fusion model file", "runs": "run file"}, {"output": "-o"}),
    )
    p.add_argument("model", help="fusion model JSON written by 'fuse train'")
    add_options(p, "runs")
    p.add_argument("-o", "--output", required=True, help="where to write the fused TREC run")
    p.add_argument("--tag", default="rankboost", help="run tag (6th column, default rankboost)")
    p.add_argument(
        "--depth",
        type=int_at_least(1),
        default=None,
        help="keep the top DEPTH per query, an int >= 1 (default: all)",
    )
    add_options(p, "by_order", "common_queries")

    p = add_parser(
        sub,
        "evaluate",
        "evaluate a fusion model on runs, or run files themselves, against qrels",
        EXAMPLES["evaluate"],
        "With MODEL: fuse --runs with it and evaluate the fused run. Without MODEL: evaluate "
        "every --runs file on its own.",
        func=evaluate,
        files=Files(),  # reads, writes nothing
    )
    p.add_argument("model", nargs="?", default=None, help="fusion model JSON (optional)")
    add_options(p, "runs")
    p.add_argument("--qrels", required=True, help="TREC qrels file (qid 0 docid rel), gz ok")
    add_metric_argument(
        p,
        "metric names, repeatable: --metric ndcg@10 map or --metric ndcg@10 --metric map "
        "(ndcg@K, map, p@K, mrr, average_rank, ...; default: ndcg@10 map)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help='print JSON instead of a table ({run: {metric: value}, "conventions": {...}})',
    )
    add_metric_options(p)
    add_options(p, "by_order", "common_queries")


def apply(args: argparse.Namespace) -> int:
    """Handle ``rankboost fuse apply``; return the exit status (0)."""
    from ..fusion.io import read_runs, write_run

    model = load_fusion(args.model)
    runs = common_queries(args, read_runs(args.runs))
    fused = model.fuse(runs, depth=args.depth, match="order" if args.by_order else "name")
    write_run(args.output, fused, tag=args.tag)
    sizes = f"{count(len(fused), 'row', 'rows')}, {count(len(fused.queries), 'query', 'queries')}"
    sys.stderr.write(f"wrote a fused TREC run of {sizes} to {args.output}\n")  # as predict
    return 0


def evaluate(args: argparse.Namespace) -> int:
    """Handle ``rankboost fuse evaluate``; return the exit status (0)."""
    from ..fusion.evaluation import evaluate_run
    from ..fusion.io import read_qrels, read_runs

    qrels = read_qrels(args.qrels)
    runs, qrels = common_queries(args, read_runs(args.runs), qrels)
    args.metric = list(dict.fromkeys(args.metric or DEFAULT_METRICS))
    options = metric_options(args, args.metric)
    rows: dict[str, dict[str, float]] = {}
    if args.model is not None:
        model = load_fusion(args.model, "fuse evaluate")
        fused = model.fuse(runs, match="order" if args.by_order else "name")
        rows[args.model] = evaluate_run(fused, qrels, args.metric, **options)
    else:
        for name, one in zip(args.runs, runs.values(), strict=True):
            rows[name] = evaluate_run(one, qrels, args.metric, **options)
    if args.json:
        sys.stdout.write(json.dumps({**rows, "conventions": options}, indent=2) + "\n")
        return 0
    width = max(len(n) for n in rows)
    head = "".join(f"{m:>12}" for m in args.metric)
    sys.stdout.write(f"{'run':<{width}}{head}\n")
    for name, vals in rows.items():
        sys.stdout.write(f"{name:<{width}}" + "".join(f"{vals[m]:>12.4f}" for m in args.metric))
        sys.stdout.write("\n")
    sys.stdout.write(format_conventions(options) + "\n")
    return 0
