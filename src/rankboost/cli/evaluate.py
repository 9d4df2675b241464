"""``rankboost evaluate``: a model's metrics on a labelled file, as a table or JSON.

The metric conventions (``--gain``, ``--discount``, ``--ties``, ``--empty``) are those of
:mod:`rankboost.metrics` and are printed with the results (:mod:`rankboost.cli._metrics`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ._common import CLIError, add_parser, count, int_at_least, one_line, table
from ._inputs import (
    add_query_file,
    check_exists,
    check_width,
    load_data,
    load_model_file,
    query_ids,
    rounds_to_use,
)
from ._metrics import add_metric_argument, add_metric_options, format_conventions, metric_options
from ._rules import Files
from ._training import DEFAULT_METRICS

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add ``rankboost evaluate`` to the ``subparsers`` of the command line."""
    p = add_parser(
        sub,
        "evaluate",
        "evaluate a model on a labelled file",
        "rankboost evaluate model.json test.txt --metric ndcg@10 --metric map --discount letor",
        func=run,
        files=Files(),  # reads, writes nothing
    )
    p.add_argument("model", metavar="MODEL", help="model file from 'rankboost train'")
    p.add_argument("data", metavar="DATA", help="labelled SVMlight/LETOR file")
    add_query_file(p)
    add_metric_argument(
        p,
        "metric, repeatable: --metric ndcg@10 map or --metric ndcg@10 --metric map; ndcg@k, "
        "map, mrr, p@k, ... (default ndcg@1,3,5,10 and map)",
    )
    p.add_argument(
        "--rounds", type=int_at_least(1), help="use the first N rounds (default: best or all)"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help='print a JSON object instead of a table ({metric: value, "conventions": {...}})',
    )
    add_metric_options(p)


def run(args: argparse.Namespace) -> int:
    """Handle ``rankboost evaluate``; return the exit status (0)."""
    check_exists(args.data, "data file")
    model = load_model_file(args.model)
    data = load_data(args.data, n_features=model.n_features, query_file=args.query_file)
    check_width(data, model, args.data)
    from ..metrics import evaluate  # after the inputs: their errors come fast

    qid = query_ids(data, args.data)
    rounds = rounds_to_use(model, args.rounds)
    scores = model.decision_function(data.X, n_rounds=rounds)
    names = list(dict.fromkeys(args.metric or DEFAULT_METRICS))
    options = metric_options(args, names)
    try:
        res = evaluate(data.y, scores, qid, metrics=names, **options)
    except ValueError as exc:
        raise CLIError(f"cannot evaluate {args.data!r}: {one_line(str(exc))}") from None
    out = sys.stdout
    if args.json:
        out.write(json.dumps({**{k: float(v) for k, v in res.items()}, "conventions": options}))
        out.write("\n")
        return 0
    used = model.n_rounds if rounds is None else rounds
    out.write(table(["metric", "value"], [[k, float(v)] for k, v in res.items()]) + "\n")
    sizes = [count(data.n_queries, "query", "queries"), count(data.n_samples, "row", "rows")]
    out.write(f"({', '.join(sizes)}, {count(used, 'round', 'rounds')})\n")
    out.write(format_conventions(options) + "\n")
    return 0
