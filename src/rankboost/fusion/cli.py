"""The ``rankboost fuse`` command line: train / apply / evaluate a learned rank fusion.

``rankboost.cli`` calls :func:`register` to add the ``fuse`` subcommand to its parser;
each leaf subcommand sets ``func`` (via ``set_defaults``) to a handler that takes the parsed
``argparse.Namespace`` and returns an exit code (0 = success). Handlers raise
``ValueError`` / ``FileNotFoundError`` with a one-line message on bad input (exit status 1)
and :class:`rankboost._cli_common.UsageError` for a usage error found after parsing, such as an
output path that is one of the inputs or no subcommand (exit status 2); the caller prints it
as ``rankboost: error: ...``. Numeric options and metric names are checked by the parser
(exit status 2), as in the other subcommands.

Examples
--------
>>> import argparse
>>> parser = argparse.ArgumentParser(prog="rankboost")
>>> register(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["fuse", "train", "--runs", "a.run", "b.run",
...                           "--qrels", "q.txt", "-o", "fusion.json"])
>>> args.fuse_command, args.runs, args.n_rounds, args.positive_cumulative
('train', ['a.run', 'b.run'], 'auto', True)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .._cli_common import UsageError, check_output, count, int_at_least
from .._cli_metrics import (
    add_metric_argument,
    add_metric_options,
    format_conventions,
    metric_options,
)
from ._export_cli import add_export_parser
from ._train_cli import (
    CV_CONVENTIONS,
    EXAMPLES,
    FAMILY_DEFAULTED,
    add_common_queries,
    by_family,
    check_family_options,
    check_plot,
    common_queries,
    family_defaults,
    plot_cv,
    plot_selection,
    warn_degenerate,
)

__all__ = ["register", "rounds_value", "run", "train_options"]


def register(subparsers: Any) -> None:
    """Add the ``fuse`` subcommand (train / apply / evaluate) to an argparse subparsers object.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The object returned by ``ArgumentParser.add_subparsers()``.
    """
    fuse = subparsers.add_parser(
        "fuse",
        help="learn to combine ranked lists (meta-search / rank fusion)",
        description="Learned rank fusion with RankBoost (Freund et al. 2003, section 6.2).",
        epilog=EXAMPLES["fuse"],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fuse.set_defaults(func=_help_handler(fuse))
    sub = fuse.add_subparsers(dest="fuse_command", metavar="{train,apply,evaluate,export}")

    # ---- train --------------------------------------------------------------------------
    p = sub.add_parser(
        "train",
        help="fit a fusion model on runs + qrels, save it as JSON",
        epilog=EXAMPLES["train"],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_runs(p)
    p.add_argument("--qrels", required=True, help="TREC qrels file (qid 0 docid rel), gz ok")
    p.add_argument("-o", "--output", required=True, help="where to write the model (JSON)")
    p.add_argument(
        "--rank-feature",
        choices=["neg_rank", "reciprocal"],
        default="neg_rank",
        help="decreasing function of the rank used as the feature (default neg_rank)",
    )
    _add_training_options(p)
    _add_family_options(p)
    p.add_argument(
        "--depth",
        type=int_at_least(1),
        default=None,
        help="read only the top DEPTH of each run, an int >= 1 (default: all)",
    )
    add_common_queries(p)
    p.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bars (inner folds, rounds)"
    )
    p.add_argument(
        "--plot",
        metavar="FILE",
        default=None,
        help="also draw the inner cross-validation curve (held-out NDCG@10 per round, the "
        "one --rounds auto chooses from; with --family auto, each family's held-out NDCG@10) "
        "to FILE (.png, .pdf, .svg; needs matplotlib)",
    )
    p.set_defaults(func=_train)

    # ---- apply --------------------------------------------------------------------------
    p = sub.add_parser(
        "apply",
        help="fuse runs with a saved model, write a TREC run",
        epilog=EXAMPLES["apply"],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", help="fusion model JSON written by 'fuse train'")
    _add_runs(p)
    p.add_argument("-o", "--output", required=True, help="where to write the fused TREC run")
    p.add_argument("--tag", default="rankboost", help="run tag (6th column, default rankboost)")
    p.add_argument(
        "--depth",
        type=int_at_least(1),
        default=None,
        help="keep the top DEPTH per query, an int >= 1 (default: all)",
    )
    _add_by_order(p)
    add_common_queries(p)
    p.set_defaults(func=_apply)

    # ---- evaluate -----------------------------------------------------------------------
    p = sub.add_parser(
        "evaluate",
        help="evaluate a fusion model on runs, or run files themselves, against qrels",
        description=(
            "With MODEL: fuse --runs with it and evaluate the fused run. Without MODEL: "
            "evaluate every --runs file on its own."
        ),
        epilog=EXAMPLES["evaluate"],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", nargs="?", default=None, help="fusion model JSON (optional)")
    _add_runs(p)
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
    _add_by_order(p)
    add_common_queries(p)
    p.set_defaults(func=_evaluate)

    add_export_parser(sub)


def _add_family_options(p: argparse.ArgumentParser) -> None:
    f = p.add_argument_group("model family and prior")
    f.add_argument(
        "--family",
        choices=["boost", "linear", "auto"],
        default="auto",
        help="auto (default): chosen among linear, the tuned convex combination of min-max "
        "scores, boost, boost from the CombSUM prior and RRF by inner cross-validation "
        "(--cv-folds), keeping linear unless another wins by more than two standard errors "
        "(for runs that miss queries: boost or boost from CombSUM, keeping boost); boost: "
        "RankBoost over rank features; linear: a weighted sum of normalised scores that "
        "'fuse export' hands to Elasticsearch / OpenSearch",
    )
    f.add_argument(
        "--normalizer",
        choices=["minmax", "rrf", "dbsf", "atan"],
        default="minmax",
        help="--family linear: per-query normalisation of every run (default minmax); dbsf "
        "and atan are Qdrant's DBSF and Milvus's arctan, for 'fuse export --engine qdrant' "
        "and '--engine milvus'",
    )
    f.add_argument(
        "--prior",
        choices=["none", "combsum", "rrf"],
        default="none",
        help="--family boost: boost from CombSUM of min-max scores or RRF (default none)",
    )
    f.add_argument(
        "--prior-scale",
        type=_scale_value,
        default="auto",
        metavar="C|auto",
        help="the prior's multiplier, a float >= 0, or auto: chosen with the rounds by inner "
        "cross-validation (needs --rounds auto; default auto)",
    )


def _scale_value(text: str) -> float | str:
    """``--prior-scale``: ``auto`` or a finite float >= 0 (argparse ``type=``)."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be 'auto' or a finite float >= 0; got {text!r}")
    return value


def _load_any(path: str) -> Any:
    """A fusion model of either family."""
    from ..model import read_json
    from .linear import FORMAT_NAME, LinearFusion

    data = read_json(path, "fusion model file", "fusion model") if _exists(path) else None
    if isinstance(data, dict) and data.get("format") == FORMAT_NAME:
        return LinearFusion.from_dict(data)
    return _load_fusion(path)


def _exists(path: str) -> bool:
    from pathlib import Path

    return Path(path).exists()


def run(args: argparse.Namespace) -> int:
    """Dispatch parsed ``fuse`` arguments to their handler and return the exit code.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments from a parser on which :func:`register` was called.

    Returns
    -------
    int
        0 on success (on an error the handler raises; callers print the message and exit
        with status 1, or 2 for a :class:`rankboost._cli_common.UsageError`).
    """
    func = getattr(args, "func", None)
    if func is None:
        raise UsageError("no fuse subcommand given; use one of train, apply, evaluate.")
    return int(func(args))


# ------------------------------------------------------------------ helpers -------------
def _add_runs(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--runs",
        nargs="+",
        required=True,
        metavar="RUN",
        help="TREC run files (qid Q0 docid rank score tag), gz ok; a model matches them to "
        "its lists by file name",
    )


def _add_by_order(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--by-order",
        action="store_true",
        help="use the --runs in the order given; by default each run file is matched to the "
        "model's list of the same path or file name (an unknown name is an error)",
    )


def _add_training_options(p: argparse.ArgumentParser) -> None:
    """RankFusion's training parameters, derived from rankboost.params with its defaults."""
    import inspect

    from ..params import FEEDBACK_PARAMS, TRAIN_PARAMS, add_arguments
    from .learned import RankFusion

    own = inspect.signature(RankFusion).parameters
    defaults = {name: par.default for name, par in own.items()}
    f = p.add_argument_group("features of --family boost (RankFusion's defaults)")
    f.add_argument(
        "--score-features",
        action=argparse.BooleanOptionalAction,
        default=defaults["score_features"],
        help="also use per-query min-max normalised run scores as features (default: "
        f"{'on' if defaults['score_features'] else 'off'})",
    )
    f.add_argument(
        "--missing-features",
        action=argparse.BooleanOptionalAction,
        default=defaults["missing_features"],
        help="also use 'returned by list i' (1) / 'missing from list i' (0) per list and the "
        f"number of lists returning the document (default: "
        f"{'on' if defaults['missing_features'] else 'off'})",
    )
    g = p.add_argument_group(
        "boosting (--family boost, with RankFusion's defaults; --family linear and auto "
        "refuse the ones they do not use)"
    )
    g.add_argument(
        "--rounds",
        dest="n_rounds",
        type=rounds_value,
        default=defaults["n_rounds"],
        metavar="T|auto",
        help="boosting rounds T, or auto: chosen by inner cross-validation (NDCG@10) over the "
        f"training queries, up to --max-rounds (default: {defaults['n_rounds']})",
    )
    g.add_argument(
        "--max-rounds",
        type=TRAIN_PARAMS[0].parse,
        default=None,
        metavar="T",
        help=f"largest round count --rounds auto tries (default: {by_family('max_rounds')})",
    )
    g.add_argument(
        "--cv-folds",
        type=int_at_least(2),
        default=defaults["cv_folds"],
        metavar="K",
        help=f"inner folds of --rounds auto and of --family auto's choice, an int >= 2 "
        f"(default: {defaults['cv_folds']})",
    )
    add_arguments(
        g,
        params=[
            q for q in TRAIN_PARAMS + FEEDBACK_PARAMS if q.name in own and q.name != "n_rounds"
        ],
        defaults=defaults,
    )
    for action in g._group_actions:  # the linear family has its own defaults
        if action.dest in FAMILY_DEFAULTED:
            action.default = None
            head = (action.help or "").rsplit(" (default: ", 1)[0]
            action.help = f"{head} (default: {by_family(action.dest)})"
    # NOTE: the names of earlier releases, kept working but not shown
    g.add_argument("--n-rounds", dest="n_rounds", type=rounds_value, help=argparse.SUPPRESS)
    g.add_argument(
        "--unconstrained", dest="positive_cumulative", action="store_false", help=argparse.SUPPRESS
    )


def rounds_value(text: str) -> int | str:
    """``--rounds``: ``auto`` or an int >= 1 (argparse ``type=``).

    Examples
    --------
    >>> rounds_value("auto"), rounds_value("40")
    ('auto', 40)
    >>> rounds_value("forty")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be 'auto' or an int >= 1; got 'forty'
    """
    if text.strip().lower() == "auto":
        return "auto"
    try:
        from ..params import TRAIN_PARAMS

        return int(TRAIN_PARAMS[0].parse(text))
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"must be 'auto' or an int >= 1; got {text!r}") from None


def _help_handler(parser: argparse.ArgumentParser) -> Any:
    def handler(args: argparse.Namespace) -> int:
        raise UsageError(
            f"{parser.prog} needs a subcommand: train, apply, evaluate or export (see "
            f"'{parser.prog} --help')."
        )

    return handler


def train_options() -> dict[str, argparse.Action]:
    """``fuse train``'s options (argparse actions) by destination, the first of each.

    Examples
    --------
    >>> from rankboost.fusion.cli import train_options
    >>> train_options()["prior_scale"].option_strings
    ['--prior-scale']
    """
    parser = argparse.ArgumentParser(prog="rankboost")
    register(parser.add_subparsers(dest="command"))
    train = _subparser(_subparser(parser, "fuse"), "train")
    out: dict[str, argparse.Action] = {}
    for action in train._actions:
        out.setdefault(action.dest, action)
    return out


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The subcommand ``name`` of ``parser``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[name]
    raise KeyError(name)


def _train(args: argparse.Namespace) -> int:
    from .io import read_qrels, read_runs
    from .learned import RankFusion

    inputs = [("run file", r) for r in args.runs] + [("qrels file", args.qrels)]
    check_output(args.output, inputs)  # before training, not after
    check_family_options(args, train_options())  # before the work too
    if args.plot is not None:
        check_output(args.plot, [*inputs, ("model output", args.output)])
    check_plot(args)
    family = family_defaults(args.family)
    for name in FAMILY_DEFAULTED:
        if getattr(args, name) is None:
            setattr(args, name, family.get(name))  # None: not an option of the family
    runs = read_runs(args.runs, depth=args.depth)
    qrels = read_qrels(args.qrels)
    runs, qrels = common_queries(args, runs, qrels)
    from ..params import FEEDBACK_PARAMS, TRAIN_PARAMS

    training = {
        q.name: getattr(args, q.name)
        for q in TRAIN_PARAMS + FEEDBACK_PARAMS
        if hasattr(args, q.name)
    }
    if args.family == "auto":
        return _train_auto(args, runs, qrels)
    if args.family == "linear":
        from .linear import LinearFusion

        lin = LinearFusion(
            normalizer=args.normalizer,
            n_rounds=args.n_rounds,
            max_rounds=args.max_rounds,
            prior_scale=args.prior_scale,
            learning_rate=args.learning_rate,
            cv_folds=args.cv_folds,
        ).fit(runs, qrels, verbose=not args.quiet)
        lin.save(args.output)
        if args.plot is not None:
            plot_cv(lin, args.plot, "rankboost fuse train --family linear")
        warn_degenerate(lin)
        sys.stderr.write(
            f"rankboost fuse train: linear weights {lin.weights_.round(4).tolist()} (prior "
            f"scale {lin.prior_scale_}, {lin.n_rounds_} rounds)\n"
        )
        if lin.cv_results_ is not None:
            best = float(lin.cv_results_["mean"].max())
            sys.stderr.write(
                f"rankboost fuse train: mean held-out NDCG@10 {best:.4f} over {args.cv_folds} "
                "inner folds\n" + CV_CONVENTIONS
            )
        return 0
    model = RankFusion(
        prior=None if args.prior == "none" else args.prior,
        prior_scale=args.prior_scale,
        rank_feature=args.rank_feature,
        score_features=args.score_features,
        missing_features=args.missing_features,
        max_rounds=args.max_rounds,
        cv_folds=args.cv_folds,
        **training,
    ).fit(runs, qrels, verbose=not args.quiet)
    model.save(args.output)
    if args.plot is not None:
        plot_cv(model, args.plot, "rankboost fuse train")
    warn_degenerate(model)
    if model.cv_results_ is not None:
        sys.stderr.write(
            f"rankboost fuse train: --rounds auto chose {model.n_rounds_} rounds (mean "
            f"held-out NDCG@10 {model.cv_results_['best_score']:.4f} over {args.cv_folds} "
            f"inner folds, tried 1..{args.max_rounds})\n" + CV_CONVENTIONS
        )
    return 0


def _train_auto(args: argparse.Namespace, runs: Any, qrels: Any) -> int:
    """``fuse train --family auto``: :class:`rankboost.fusion.auto.AutoFusion`."""
    from .auto import AutoFusion

    auto = AutoFusion(cv_folds=args.cv_folds, max_rounds=args.max_rounds).fit(
        runs, qrels, verbose=not args.quiet
    )
    auto.save(args.output)
    if args.plot is not None:
        plot_selection(auto, args.plot, "rankboost fuse train --family auto")
    sel = auto.selection_
    table = sel["candidates"]
    rows = ", ".join(f"{k} {v['mean']:.4f}" for k, v in table.items())
    sys.stderr.write(
        f"rankboost fuse train: --family auto chose {auto.family_} (mean held-out NDCG@10 "
        f"over {args.cv_folds} inner folds of {count(sel['n_queries'], 'query', 'queries')}: "
        f"{rows}; {sel['fallback']} is kept unless another family beats it by more than "
        f"{auto.threshold_se:g} standard errors)\n"
    )
    model = auto.model_
    if hasattr(model, "weights_"):
        sys.stderr.write(
            f"rankboost fuse train: {auto.family_} weights {model.weights_.round(4).tolist()} "
            f"({model.normalizer} scores, {model.n_rounds_} rounds)\n"
        )
    else:
        sys.stderr.write(f"rankboost fuse train: {auto.family_}: {model.n_rounds_} rounds\n")
    sys.stderr.write(CV_CONVENTIONS)
    return 0


def _apply(args: argparse.Namespace) -> int:
    from .io import read_runs, write_run

    check_output(
        args.output, [("fusion model file", args.model)] + [("run file", r) for r in args.runs]
    )
    model = _load_any(args.model)
    runs = common_queries(args, read_runs(args.runs))
    fused = model.fuse(runs, depth=args.depth, match="order" if args.by_order else "name")
    write_run(args.output, fused, tag=args.tag)
    sizes = f"{count(len(fused), 'row', 'rows')}, {count(len(fused.queries), 'query', 'queries')}"
    sys.stderr.write(f"wrote a fused TREC run of {sizes} to {args.output}\n")  # as predict
    return 0


def _load_fusion(path: str) -> Any:
    """``RankFusion.load``, saying what to do with a ranking model given instead."""
    from .learned import RankFusion

    try:
        return RankFusion.load(path)
    except ValueError as exc:
        if b'"rankboost-model"' in Path(path).read_bytes()[:200]:
            raise ValueError(
                f"{path!r} is a ranking model from 'rankboost train', not a fusion model: score "
                f"data with it by 'rankboost predict {path} DATA'; 'fuse' needs a model from "
                "'rankboost fuse train'."
            ) from None
        raise exc from None


def _evaluate(args: argparse.Namespace) -> int:
    from .evaluation import evaluate_run
    from .io import read_qrels, read_runs

    qrels = read_qrels(args.qrels)
    runs, qrels = common_queries(args, read_runs(args.runs), qrels)
    args.metric = list(dict.fromkeys(args.metric or ["ndcg@10", "map"]))
    options = metric_options(args, args.metric)
    rows: dict[str, dict[str, float]] = {}
    if args.model is not None:
        model = _load_any(args.model)
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
