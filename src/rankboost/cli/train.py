"""``rankboost train``: fit a model on an SVMlight/LETOR file and save it as JSON.

With ``--valid`` the metrics are followed every round (``--early-stopping N`` stops when the
first has not improved for N rounds); ``--clicks LOG`` trains on click pairs instead of the
labels (:mod:`rankboost.cli._clicks`); ``--plot`` draws the training curves; ``--push auto``
chooses the P-Norm Push's p on ``--valid`` (else inner folds) and says which.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from ._clicks import add_train_arguments, click_fit_kwargs, click_inputs
from ._common import PROG, UsageError, add_parser, count, int_at_least, table
from ._inputs import add_query_file, check_plot, load_data, query_ids, write_file
from ._metrics import add_metric_argument
from ._rules import Files, Paths, add_progress_options, query_files, show_progress
from ._training import add_train_options, check_eval, check_training, plot_training

__all__ = ["DEFAULT_MODEL", "register"]

#: The model file ``train`` writes without ``-o`` (never replaced unless named by ``-o``).
DEFAULT_MODEL = "model.json"


def _implied(args: argparse.Namespace) -> Paths:
    """The group files found beside DATA and VALID, the propensity table, model.json."""
    inputs = query_files((args.data, args.query_file), (args.valid, args.valid_query_file))
    outputs = [] if args.output is not None else [("-o", DEFAULT_MODEL)]
    return Paths(inputs=inputs + click_inputs(args), outputs=outputs)


FILES = Files(
    inputs={
        "data": "training file",
        "valid": "validation file",
        "query_file": "query file",
        "valid_query_file": "query file",
        "feature_names": "feature-name file",
        "clicks": "input click log",
    },
    outputs={"output": "-o", "plot": "--plot"},
    implied=_implied,
)


def register(sub: Any) -> None:
    """Add ``rankboost train`` to the ``subparsers`` of the command line."""
    p = add_parser(
        sub,
        "train",
        "train a model on an SVMlight/LETOR file",
        "rankboost train train.txt --valid vali.txt --early-stopping 50 -o model.json",
        func=run,
        files=FILES,
    )
    p.add_argument("data", metavar="DATA", help="training file (SVMlight/LETOR, may be .gz)")
    add_query_file(p)
    p.add_argument("--valid", metavar="FILE", help="validation file: metrics every round")
    p.add_argument(
        "--valid-query-file",
        metavar="FILE",
        help="the queries of a --valid file without qid, as --query-file (default: "
        "VALID.query when it exists)",
    )
    p.add_argument(
        "-o",
        "--output",
        help=f"model file (default {DEFAULT_MODEL}, which is never replaced unless named by -o)",
    )
    p.add_argument(
        "--early-stopping",
        type=int_at_least(1),
        metavar="N",
        help="stop when the first --metric on --valid has not improved for N rounds",
    )
    add_metric_argument(p, "validation metric, repeatable: --metric ndcg@10 map (default ndcg@10)")
    add_progress_options(p)
    p.add_argument(
        "--feature-names", metavar="FILE", help="one feature name per line, kept in the model"
    )
    p.add_argument(
        "--plot",
        metavar="PNG",
        help="also plot the training rloss, its bound prod Z_t and (with --valid) the "
        "validation metrics per round (needs matplotlib; .png, .pdf, .svg, ...)",
    )
    add_train_options(p)
    add_train_arguments(p)  # --clicks, --propensity, --click-pairs, --max-weight, --scheduler


def run(args: argparse.Namespace) -> int:
    """Handle ``rankboost train``; return the exit status (0)."""
    if args.early_stopping is not None and args.valid is None:
        raise UsageError("--early-stopping needs a validation file; pass --valid FILE.")
    if args.valid_query_file is not None and args.valid is None:
        raise UsageError("--valid-query-file gives the queries of --valid; pass --valid FILE.")
    if args.output is None:
        args.output = DEFAULT_MODEL
        if Path(DEFAULT_MODEL).exists():
            raise UsageError(
                f"{DEFAULT_MODEL} exists and -o was not given; pass -o {DEFAULT_MODEL} to "
                "replace it, or -o OTHER.json."
            )
    if args.plot is not None:
        check_plot(args.plot)
    train = load_data(args.data, what="training file", query_file=args.query_file)
    train_qid = query_ids(train, args.data)
    metrics = list(args.metric or ["ndcg@10"])
    fit_kw: dict[str, Any] = {}
    valid = None
    if args.valid is not None:
        valid = load_data(
            args.valid,
            n_features=train.n_features,
            what="validation file",
            query_file=args.valid_query_file,
            query_flag="--valid-query-file",
        )
        valid_qid = query_ids(valid, args.valid, "--valid-query-file")
        fit_kw = {
            "eval_set": [(valid.X, valid.y)],
            "eval_qid": [valid_qid],
            "eval_metric": metrics,
            "early_stopping_rounds": args.early_stopping,
            "prepare_eval": check_eval(f"validation file {args.valid!r}"),
        }
    fit_kw.update(click_fit_kwargs(args, train))  # --clicks LOG: pairs from the clicks

    from .._fit import fit_ranker  # here, after the inputs: their errors come fast
    from ..metrics import evaluate
    from ..params import params_of

    names = train.feature_names
    if args.feature_names is not None:  # one name per line (rankboost.datasets)
        from ..datasets import load_feature_names

        names = load_feature_names(args.feature_names, train.n_features)
    X, y = check_training(train, f"training file {args.data!r}")
    from ._common import interrupt_at_round_end

    push_auto = args.push == "auto"  # p chosen by fit_ranker; 1 stands in until then
    given = argparse.Namespace(**{**vars(args), "push": 1.0}) if push_auto else args

    start = time.perf_counter()
    with interrupt_at_round_end() as check:
        fitted = fit_ranker(  # the steps of RankBoostRanker.fit, without scikit-learn
            X,
            y,
            train_qid,
            params_of(given, f"{PROG} train"),
            feedback=args.feedback,
            normalize=args.normalize,
            feature_names=names,
            callbacks=[check],
            verbose=show_progress(args),
            push_auto=push_auto,
            **fit_kw,
        )
    seconds = time.perf_counter() - start
    model = fitted.model
    write_file(args.output, json.dumps(model.to_dict(), indent=1, allow_nan=False) + "\n")
    sizes = [
        count(model.n_rounds, "round", "rounds"),
        count(train.n_samples, "row", "rows"),
        count(train.n_queries, "query", "queries"),
        count(train.n_features, "feature", "features"),
    ]
    out = sys.stdout
    out.write(
        f"trained {sizes[0]} on {', '.join(sizes[1:])} in {seconds:.1f} s; wrote {args.output}\n"
    )
    if fitted.push_choice is not None:
        out.write(f"{fitted.push_choice.summary()}\n")
    if model.stop_reason:
        out.write(f"note: {model.stop_reason}\n")
    if valid is not None:
        used = fitted.best_iteration or model.n_rounds
        scores = model.decision_function(valid.X, n_rounds=used)
        res = evaluate(valid.y, scores, valid.qid, metrics=list(dict.fromkeys(metrics)))
        label = "best round" if fitted.best_iteration else "rounds"
        out.write("\n" + table(["split", label, *res], [["valid", used, *res.values()]]) + "\n")
    if args.plot is not None:
        plot_training(model, args.plot, f"rankboost train {Path(args.data).name}")
    return 0
