"""``rankboost info``: a model's rounds and feature importances, or a fusion model's lists.

A ranking model (``rankboost train``) shows its parameters, the gain of each feature and its
first rounds; a fusion model (``rankboost fuse train``) is described by
:func:`rankboost.fusion._info.fusion_info_lines`. ``--plot`` draws the training curves.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ._common import UsageError, add_parser, int_at_least, table
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
    """Handle ``rankboost info``; return the exit status (0)."""
    if args.plot is not None:
        check_plot(args.plot)
        plot_training(_boosted_model(args.model), args.plot, Path(args.model).name)
    try:
        from ..fusion._info import fusion_info_lines, is_fusion_file
    except ImportError:  # pragma: no cover - the fusion subpackage is optional
        pass
    else:
        if is_fusion_file(args.model):
            sys.stdout.writelines(
                f"{line}\n" for line in fusion_info_lines(args.model, table, args.top)
            )
            return 0
    sys.stdout.writelines(f"{line}\n" for line in _model_lines(args))
    return 0


def _model_lines(args: argparse.Namespace) -> list[str]:
    """What ``info`` prints about a ranking model: parameters, importances, rounds."""
    import numpy as np

    from .._conventions import FEATURE_NUMBERING
    from ..model import KINDS

    model = load_model_file(args.model)
    names = model.feature_labels  # as the plots and model.history["feature_label"] show them
    rounds = model.rounds
    best = "-" if model.best_iteration is None else str(model.best_iteration)
    params = " ".join(f"{k}={v}" for k, v in model.params.items() if k != "feedback")
    out = [
        f"model: {args.model}",
        f"rounds: {model.n_rounds} (best iteration: {best}), features: {model.n_features}",
        FEATURE_NUMBERING,
        f"params: {params or '-'}",
    ]
    if model.params.get("feedback"):
        out.append(f"feedback: {model.params['feedback']}")
    if model.stop_reason:
        out.append(f"stopped: {model.stop_reason}")
    if model.n_rounds == 0:
        return out
    gain = model.feature_importances("gain")
    split = np.bincount(rounds.feature, minlength=model.n_features)
    order = [int(i) for i in np.argsort(-gain, kind="stable") if split[i] > 0]
    top = order if args.top == 0 else order[: args.top]
    rows = [[i + 1, names[i], float(gain[i]), int(split[i])] for i in top]
    out += [
        "",
        f"feature importances ({len(order)} features used; gain = share of -sum ln Z_t)",
        table(["feature", "name", "gain", "rounds"], rows),
    ]
    head = model.n_rounds if args.head == 0 else min(args.head, model.n_rounds)
    h = model.history  # the training records r, Z, rloss and bound, and the feature labels
    rows = [
        [
            t + 1,
            int(rounds.feature[t]) + 1,
            h["feature_label"][t],
            KINDS[int(rounds.kind[t])],  # threshold: [f > theta]; feature: real-valued rank
            float(rounds.threshold[t]),
            float(rounds.default[t]),
            float(rounds.alpha[t]),
            float(h["r"][t]),
            float(h["z"][t]),
            float(h["rloss"][t]),
            float(h["bound"][t]),
        ]
        for t in range(head)
    ]
    headers = [
        "t", "feature", "name", "kind", "threshold", "q_def", "alpha", "r", "Z", "rloss", "bound"
    ]  # fmt: skip
    out += ["", f"rounds (first {head} of {model.n_rounds}; feature = 1-based id, as above)"]
    out.append(table(headers, rows))
    return out


def _boosted_model(path: str) -> Any:
    """The RankBoost model in ``path``: a ranking model, or a learned fusion model's."""
    from ..fusion._info import file_format

    kind = file_format(path) or ""
    if kind == "rankboost-fusion":
        from ..fusion import RankFusion

        return RankFusion.load(path)
    if kind.startswith("rankboost-fusion"):
        raise UsageError(
            f"{path!r} is a linear fusion model, which has no boosting rounds to plot; leave "
            "out --plot."
        )
    return load_model_file(path)
