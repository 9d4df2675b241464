"""``rankboost fuse export``: a ``--family linear`` model as a search engine's request.

The subcommand's arguments and its handler; the request bodies and their reference
evaluators live in :mod:`rankboost.fusion.engines` (Elasticsearch, OpenSearch) and
``_qdrant`` / ``_milvus`` (run against the real engines).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._cli_common import UsageError, check_output, int_at_least
from ._train_cli import (
    EXAMPLES,
    add_common_queries,
    common_queries,
    refuse_other_models,
    warn_degenerate,
)

__all__ = ["add_export_parser", "export"]


def add_export_parser(sub: Any) -> None:
    """Add ``export`` to the ``fuse`` subparsers."""
    p = sub.add_parser(
        "export",
        help="write a --family linear model as a search engine's hybrid request or pipeline "
        "(Elasticsearch, OpenSearch, Qdrant, Milvus)",
        epilog=EXAMPLES["export"],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", help="linear fusion model JSON written by 'fuse train --family linear'")
    p.add_argument(
        "--engine", required=True, choices=["elasticsearch", "opensearch", "qdrant", "milvus"]
    )
    p.add_argument("-o", "--output", required=True, help="where to write the JSON body")
    p.add_argument(
        "--rank-window-size",
        type=int_at_least(1),
        default=100,
        help="documents taken from each retriever (Elasticsearch's rank_window_size, the "
        "limit of Qdrant's prefetches and Milvus's requests; default 100)",
    )
    p.add_argument(
        "--vectors",
        nargs="+",
        metavar="NAME",
        default=None,
        help="Qdrant / Milvus: the collection's vector name (field) of each run, in the "
        "model's order (default: the model's run names)",
    )
    p.add_argument(
        "--limit",
        type=int_at_least(1),
        default=10,
        help="Qdrant / Milvus: documents the fused request returns (default 10)",
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
        help="OpenSearch min-max: write the normalization-processor although it ranks "
        "differently (a weighted mean over the sub-queries that returned a document)",
    )
    add_common_queries(p)
    p.set_defaults(func=export)


def export(args: argparse.Namespace) -> int:
    from .engines import check_export, export_linear
    from .io import read_runs
    from .linear import LinearFusion

    if args.vectors is not None and args.engine not in ("qdrant", "milvus"):
        raise UsageError(
            f"--vectors names Qdrant's vectors or Milvus's fields; {args.engine} takes its "
            "sub-queries in the model's order (drop --vectors)."
        )
    check_output(args.output, [("fusion model file", args.model)])  # before the work
    refuse_other_models(args.model)
    model = LinearFusion.load(args.model)
    opts = {"rank_window_size": args.rank_window_size, "approximate": args.approximate,
            "vectors": args.vectors, "limit": args.limit}  # fmt: skip
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
