"""``rankboost fuse export``: a ``--family linear`` model as a search engine's request.

The subcommand's arguments and its handler; the request bodies and their reference
evaluators live in :mod:`rankboost.fusion.engines` (``ENGINES``, ``export_linear`` whose
defaults the options take, ``check_export``). A model of another command is refused with
the command that takes it (:func:`refuse_other_models`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._common import UsageError, add_parser, int_at_least
from ._defaults import changed, default_of
from ._fuse import EXAMPLES, add_options, common_queries, warn_degenerate
from ._rules import Files

__all__ = ["refuse_other_models", "register", "run"]

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
    from ..fusion.engines import check_export, export_linear
    from ..fusion.io import read_runs
    from ..fusion.linear import LinearFusion

    if args.vectors is not None and args.engine not in ("qdrant", "milvus"):
        raise UsageError(
            f"--vectors names Qdrant's vectors or Milvus's fields; {args.engine} takes its "
            "sub-queries in the model's order (drop --vectors)."
        )
    refuse_other_models(args.model)
    model = LinearFusion.load(args.model)
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


def refuse_other_models(path: str) -> None:
    """``fuse export`` given a model of another command: say which command takes it."""
    from ..fusion._info import file_format

    kind = file_format(path)
    family = auto_family(path)
    if kind == "rankboost-fusion" and family is not None:
        raise ValueError(
            f"{path!r} is a model of 'rankboost fuse train --family auto', which chose "
            f"{family} (steps on the runs' ranks) for these runs; no engine's hybrid query "
            "computes it. 'fuse export' writes a weighted sum of scores: train one with "
            "'rankboost fuse train --family linear' on the same runs ('rankboost info "
            f"{path}' shows how each family scored in the choice)."
        )
    if kind == "rankboost-fusion":
        raise ValueError(
            f"{path!r} is a fusion model of 'rankboost fuse train' (--family boost: steps on "
            "the runs' ranks), which no engine's hybrid query computes: 'fuse export' writes a "
            "model of 'rankboost fuse train --family linear' (train one); this one is written "
            f"for an LTR plugin by 'rankboost export {path} --format es-xgboost -o OUT'."
        )
    if kind == "rankboost-model":
        raise ValueError(
            f"{path!r} is a ranking model of 'rankboost train', not a fusion model: write it "
            f"for an LTR plugin with 'rankboost export {path} --format es-xgboost -o OUT'; "
            "'fuse export' writes a model of 'rankboost fuse train --family linear'."
        )


def auto_family(path: str) -> str | None:
    """The family ``--family auto`` chose, if ``path`` is such a model (else None)."""
    import json
    from pathlib import Path

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    sel = data.get("selection") if isinstance(data, dict) else None
    family = sel.get("family") if isinstance(sel, dict) else None
    return family if isinstance(family, str) else None
