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
from ._defaults import add_option, changed, defaults
from ._fuse import EXAMPLES, add_options, common_queries, load_fusion, warn_degenerate
from ._rules import Files

__all__ = ["register", "run"]

#: What the options are passed to (their defaults are its own).
EXPORT = "rankboost.fusion.engines:export_linear"
#: ``fuse export``'s options, each named as its parameter of export_linear
OPTIONS = ("rank_window_size", "vectors", "limit", "approximate", "text_list")


def register(sub: Any) -> None:
    """Add ``export`` to the ``fuse`` subparsers."""
    from ..fusion.engines import ENGINES

    d = defaults(EXPORT, OPTIONS)
    p = add_parser(
        sub,
        "export",
        "write a --family linear model as a search engine's hybrid request or pipeline "
        f"({', '.join(e.label for e in ENGINES.values())})",
        EXAMPLES["export"],
        func=run,
        files=Files({"model": "fusion model file", "check_runs": "run file"}, {"output": "-o"}),
    )
    p.add_argument("model", help="linear fusion model JSON written by 'fuse train --family linear'")
    p.add_argument("--engine", required=True, choices=list(ENGINES))
    p.add_argument("-o", "--output", required=True, help="where to write the JSON body")
    add_option(
        p,
        "--rank-window-size",
        d,
        "documents taken from each retriever (Elasticsearch's rank_window_size, the limit of "
        "Qdrant's prefetches and Milvus's requests, LanceDB's hybrid query limit)",
        type=int_at_least(1),
    )
    p.add_argument(
        "--vectors",
        nargs="+",
        metavar="NAME",
        default=d["vectors"],
        help=f"{_takers(ENGINES, 'vectors')}: the collection's vector name (field; LanceDB: the "
        "table's column) of each run, in the model's order (required for "
        f"{_takers(ENGINES, 'vectors', asked=True)}; LanceDB: its own choice when not given)",
    )
    add_option(
        p,
        "--limit",
        d,
        f"{_takers(ENGINES, 'limit')}: documents the fused request returns",
        type=int_at_least(1),
    )
    p.add_argument(
        "--text-list",
        metavar="NAME",
        default=d["text_list"],
        help=f"{_takers(ENGINES, 'text_list')}: the model's run its full-text search serves "
        "(the other is its vector search); required there",
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


def _takers(engines: Any, option: str, asked: bool = False) -> str:
    """The engines whose request takes ``option`` (``asked``: requires it): "Qdrant / Milvus"."""
    return " / ".join(
        e.label for e in engines.values() if option in (e.asks if asked else e.options)
    )


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
    if args.text_list is not None and "text_list" not in ENGINES[args.engine].options:
        raise UsageError(
            f"--text-list is for {_takers(ENGINES, 'text_list')} (one full-text and one vector "
            f"search); {args.engine} takes its sub-queries in the model's order (drop "
            "--text-list)."
        )
    model = load_fusion(args.model, "fuse export")  # another kind: what takes it
    row = ENGINES[args.engine]
    serves = row.serves(model.normalizer, model.weights_)[0] != "no"  # else: its refusal
    for option, what in row.asks.items():
        if serves and getattr(args, option) is None:
            raise UsageError(
                f"--engine {args.engine} needs --{option.replace('_', '-')}: {what} (the "
                f"model's lists are {', '.join(map(repr, model.list_names_))})."
            )
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
    sys.stdout.write(
        f"wrote {args.output} ({ENGINES[args.engine].label} request, {len(model.list_names_)} "
        f"lists, {model.normalizer} normaliser)\n"
    )
    return 0
