"""``rankboost fuse export``: a ``--family linear`` model as a search engine's request.

The subcommand's arguments and its handler; the request bodies and their reference
evaluators live in :mod:`rankboost.fusion.engines` (``ENGINES``, ``export_linear`` whose
defaults the options take, ``check_export``). A model of another kind is refused with
the command that takes it (:func:`rankboost.model_files.refusal`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._common import UsageError, add_parser, int_at_least
from ._defaults import changed, default_of
from ._fuse import EXAMPLES, add_options, common_queries, load_fusion, warn_degenerate
from ._rules import Files

__all__ = ["register", "run"]

#: What the options are passed to (their defaults are its own).
EXPORT = "rankboost.fusion.engines:export_linear"
#: ``fuse export``'s options: destination -> parameter of export_linear
OPTIONS = {
    "rank_window_size": "rank_window_size",
    "vectors": "vectors",
    "limit": "limit",
    "approximate": "approximate",
}


def register(sub: Any) -> None:
    """Add ``export`` to the ``fuse`` subparsers."""
    from ..fusion.engines import ENGINES

    d = {dest: default_of(EXPORT, name) for dest, name in OPTIONS.items()}
    p = add_parser(
        sub,
        "export",
        "write a --family linear model as a search engine's hybrid request or pipeline "
        "(Elasticsearch, OpenSearch, Qdrant, Milvus)",
        EXAMPLES["export"],
        func=run,
        files=Files({"model": "fusion model file", "check_runs": "run file"}, {"output": "-o"}),
    )
    p.add_argument("model", help="linear fusion model JSON written by 'fuse train --family linear'")
    p.add_argument("--engine", required=True, choices=list(ENGINES))
    p.add_argument("-o", "--output", required=True, help="where to write the JSON body")
    p.add_argument(
        "--rank-window-size",
        type=int_at_least(1),
        default=d["rank_window_size"],
        help="documents taken from each retriever (Elasticsearch's rank_window_size, the "
        f"limit of Qdrant's prefetches and Milvus's requests; default {d['rank_window_size']})",
    )
    p.add_argument(
        "--vectors",
        nargs="+",
        metavar="NAME",
        default=d["vectors"],
        help="Qdrant / Milvus: the collection's vector name (field) of each run, in the "
        "model's order (default: the model's run names)",
    )
    p.add_argument(
        "--limit",
        type=int_at_least(1),
        default=d["limit"],
        help=f"Qdrant / Milvus: documents the fused request returns (default {d['limit']})",
    )
    p.add_argument(
        "--check-runs",
        nargs="+",
        metavar="RUN",
        default=None,
        help="TREC runs of the retrievers: fail unless the engine's formula ranks them exactly "
        "as 'fuse apply' does",
    )
    p.add_argument(
        "--approximate",
        action="store_true",
        default=d["approximate"],
        help="OpenSearch min-max: write the normalization-processor although it ranks "
        "differently (a weighted mean over the sub-queries that returned a document)",
    )
    add_options(p, "common_queries")


def run(args: argparse.Namespace) -> int:
    """Handle ``rankboost fuse export``; return the exit status (0)."""
    from ..fusion.engines import ENGINES, check_export, export_linear
    from ..fusion.io import read_runs

    if args.vectors is not None and "vectors" not in ENGINES[args.engine].options:
        named = [f"{e.label}'s vectors" for e in ENGINES.values() if "vectors" in e.options]
        raise UsageError(
            f"--vectors names {' or '.join(named)} (one per run); {args.engine} takes its "
            "sub-queries in the model's order (drop --vectors)."
        )
    model = load_fusion(args.model, "fuse export")  # another kind: what takes it
    opts = changed(args, EXPORT, OPTIONS)
    body = export_linear(model, args.engine, **opts)
    warn_degenerate(model)  # after the engine's refusal: a model it cannot take fails alone
    if args.check_runs:
        runs = common_queries(args, read_runs(args.check_runs))
        n = check_export(model, runs, args.engine, body)
        sys.stderr.write(
            f"rankboost fuse export: {args.engine} ranks the {n} queries as fuse apply\n"
        )
    export_linear(model, args.engine, args.output, **opts)
    return 0
