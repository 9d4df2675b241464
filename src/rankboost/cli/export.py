"""The ``rankboost export`` command: write a saved model for another consumer.

The handler reads a model saved by ``rankboost train`` / :meth:`rankboost.RankBoostModel.save`
(or a fusion model saved by ``rankboost fuse train``), exports it with
:func:`rankboost.export.export_model`, and raises ``ValueError`` / ``OSError`` with a
one-line message on bad input, which :func:`rankboost.cli.main` prints as
``rankboost: error: ...``. Each option's default is :func:`rankboost.export.export_bytes`'s.

Examples
--------
>>> import argparse
>>> parser = argparse.ArgumentParser(prog="rankboost")
>>> register(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["export", "model.json", "--format", "lightgbm", "-o", "m.txt"])
>>> args.format, args.output, args.trees, args.rounds
('lightgbm', 'm.txt', 'feature', None)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ._common import add_parser
from ._defaults import changed, default_of, shown
from ._rules import Files

__all__ = ["register", "run"]

#: What the options are passed to (their defaults are its own).
EXPORT = "rankboost.export:export_bytes"
#: ``export``'s options: destination -> parameter of export_bytes
OPTIONS = {
    "trees": "trees",
    "name": "name",
    "store": "store",
    "missing_as_zero": "missing_as_zero",
    "dtype": "dtype",
}

_EPILOG = """\
examples (for a model trained with the features' names, which es-xgboost and solr need:
  rankboost train train.txt --feature-names names.txt -o model.json):
  rankboost export model.json --format xgboost -o model.xgb.json
  rankboost export model.json --format lightgbm --trees round -o model.lgb.txt
  rankboost export model.json --format onnx -o model.onnx
  rankboost export model.json --format ranklib -o model.ranklib.txt
  rankboost export model.json --format es-xgboost --name my_model -o body.json
  rankboost export model.json --format solr --feature-names @names.txt -o solr.json

formats: {formats}
See docs/serving.md for how each consumer reads the file and what is exact.
"""


def register(subparsers: Any) -> None:
    """Add ``rankboost export`` to the command line's subparsers."""
    from ..export import ALIASES, FORMATS

    d = {dest: default_of(EXPORT, name) for dest, name in OPTIONS.items()}

    p = add_parser(
        subparsers,
        "export",
        "write a model for XGBoost, LightGBM, ONNX, RankLib or a search engine's LTR",
        _EPILOG.format(formats=", ".join(FORMATS)),
        "Export a saved rankboost model for another consumer (docs/serving.md).",
        func=run,
        files=FILES,
    )
    p.add_argument("model", metavar="MODEL", help="model file from 'rankboost train' (or fuse)")
    p.add_argument(
        "--format",
        "-f",
        required=True,
        type=str.lower,
        choices=[*FORMATS, *ALIASES],
        metavar="FORMAT",
        help=f"output format: {', '.join(FORMATS)}",
    )
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="file to write")
    p.add_argument(
        "--rounds",
        type=int,
        metavar="N",
        help="export the first N rounds (default: the best iteration if saved, else all)",
    )
    p.add_argument(
        "--trees",
        choices=["feature", "round"],
        default=d["trees"],
        help=f"one tree per used feature or one per round (staged scores) (default {d['trees']})",
    )
    p.add_argument(
        "--feature-names",
        metavar="NAMES",
        help="comma-separated names, or @FILE with one name per line (default: the model's)",
    )
    p.add_argument(
        "--name", default=d["name"], help=f"model name for es-* and solr (default {d['name']})"
    )
    p.add_argument(
        "--store",
        default=d["store"],
        help="solr: the feature store (default: Solr's default store)",
    )
    p.add_argument(
        "--missing-as-zero",
        action="store_true",
        default=d["missing_as_zero"],
        help="ranklib, es-ranklib, solr: write the model although a missing feature "
        "would score as 0 there (see docs/serving.md)",
    )
    p.add_argument(
        "--dtype",
        choices=["float32", "float64"],
        default=d["dtype"],
        help=f"onnx: input and split precision (default {shown(d['dtype'])})",
    )


def _feature_name_file(args: argparse.Namespace) -> Any:
    """``--feature-names @FILE`` reads FILE (an input)."""
    from ._rules import Paths

    text = args.feature_names
    if text is not None and text.startswith("@"):
        return Paths(inputs=[("feature-name file", text[1:])])
    return Paths()


FILES = Files({"model": "model file"}, {"output": "-o"}, implied=_feature_name_file)


def _names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    if text.startswith("@"):  # one name per line, as 'rankboost train --feature-names'
        from ..datasets import load_feature_names

        return load_feature_names(text[1:])
    return [s.strip() for s in text.split(",")]


def _load(path: str) -> tuple[Any, list[str] | None]:
    """The RankBoostModel in ``path`` and the feature names to use by default.

    A ranking model, or a boosted fusion model's; another kind is refused with what takes it.
    """
    from ._inputs import load_model_file

    model = load_model_file(path, "export")
    if hasattr(model, "model_"):  # RankFusion: its RankBoost model over its features
        return model.model_, list(model.feature_names_)
    return model, model.feature_names


def run(args: argparse.Namespace) -> int:
    """Handle ``rankboost export``; return the exit status (0)."""
    from ..export import export_model

    model, names = _load(args.model)
    given = _names(args.feature_names)
    rounds = args.rounds
    if rounds is None:
        rounds = model.best_iteration
    elif not 0 <= rounds <= model.n_rounds:
        raise ValueError(
            f"--rounds {rounds} is not between 0 and the {model.n_rounds} rounds in the model."
        )
    out = Path(args.output)
    export_model(
        model,
        out,
        args.format,
        n_rounds=rounds,
        feature_names=given if given is not None else names,
        **changed(args, EXPORT, OPTIONS),
    )
    used = model.n_rounds if rounds is None else rounds
    sys.stderr.write(f"wrote {args.output} ({args.format}, {used} rounds)\n")
    return 0
