"""``rankboost info``: a model's rounds and feature importances, or a fusion model's lists.

Any model file (:func:`rankboost.model_files.load`) prints its own description
(``describe()``, :class:`rankboost.description.Description`): a ranking model its parameters,
the gain of each feature and its first rounds; a fusion model its lists, its formula and the
engines or export formats that serve it. ``--plot`` draws the training curves.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ._common import add_parser, int_at_least, table
from ._inputs import check_plot, load_model_file
from ._rules import Files
from ._training import plot_training

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add ``rankboost info`` to the ``subparsers`` of the command line."""
    p = add_parser(
        sub,
        "info",
        "show a model's rounds and feature importances (or a fusion model's lists)",
        "rankboost info model.json --top 10 --head 20",
        func=run,
        files=Files({"model": "model file"}, {"plot": "--plot"}),
    )
    p.add_argument("model", metavar="MODEL", help="model file")
    for flag, rows, default in (("--top", "importance", 20), ("--head", "round", 10)):
        p.add_argument(
            flag,
            type=int_at_least(0),
            default=default,
            metavar="N",
            help=f"{rows} rows, an int >= 0 (default {default}, 0 = all)",
        )
    p.add_argument(
        "--plot",
        metavar="PNG",
        help="also plot the training rloss and its bound prod Z_t per round, and the "
        "validation metrics a model from 'train --valid' keeps (needs matplotlib)",
    )


def run(args: argparse.Namespace) -> int:
    """Handle ``rankboost info``: the model's description of itself; return 0."""
    if args.plot is not None:
        check_plot(args.plot)
        model = load_model_file(args.model, "info --plot")  # a linear model has no rounds
        plot_training(getattr(model, "model_", model), args.plot, Path(args.model).name)
    model = load_model_file(args.model, "info")
    lines = model.describe(args.model).lines(table, args.top, args.head)
    sys.stdout.writelines(f"{line}\n" for line in lines)
    return 0
