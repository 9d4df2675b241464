"""The ``rankboost`` command: train, predict, evaluate, info, demo (and fuse).

Reads SVMlight/LETOR files (gzip, bzip2 and xz too; LETOR 4.0 aggregation files, whose
``NULL`` values are read as NaN = abstain) and writes models as versioned JSON; ``predict
--format trec`` writes a TREC run and ``convert`` turns LETOR-agg files into TREC runs + qrels
and back.
Exit status, the same for every subcommand (``fuse`` included):

* 0 on success;
* 1 on an error in the data (missing, damaged or malformed file, wrong feature count);
* 2 on a usage error: unknown option, a value out of its range (every numeric option's range
  is in ``--help``), unknown metric, an output path that is one of the inputs;
* 130 when interrupted (Ctrl-C); no partial output file is left;
* 141 (128 + SIGPIPE) when the reader of standard output closed it (``... | head``), quietly.

Every error is one line on stderr, ``rankboost: error: ...``, saying what to do; every warning
is one line, ``rankboost: warning: ...``; never a traceback for bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ._cli_common import (
    PROG,
    CLIError,
    UsageError,
    check_output,
    count,
    did_you_mean,
    error_line,
    int_at_least,
    interrupt_at_round_end,
    os_error_text,
    user_text,
)
from ._cli_common import one_line as _one_line
from ._cli_inputs import (
    check_exists,
    check_plot,
    check_width,
    load_data,
    load_model_file,
    pyplot_offscreen,
    query_ids,
    save_plot,
    write_file,
)
from ._cli_metrics import (
    add_metric_argument,
    add_metric_options,
    format_conventions,
    metric_options,
)
from ._conventions import FEATURE_NUMBERING
from .params import FEEDBACK_PARAMS, TRAIN_PARAMS, add_arguments

# NOTE: numpy, numba, scipy and scikit-learn are imported inside the subcommand handlers, not
# here, so that ``rankboost --help`` / ``--version`` and building the parser stay fast
# (issue 16, item 10; benchmarks/bench_startup.py). ``train`` and ``demo`` train through
# rankboost._fit (RankBoostRanker.fit's steps) and never import scikit-learn (2 s).
if TYPE_CHECKING:
    from .datasets import RankingDataset
    from .model import RankBoostModel

__all__ = ["CLIError", "UsageError", "main"]

DEFAULT_METRICS = ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map")
DEFAULT_MODEL = "model.json"

_EPILOG = """\
examples:
  rankboost demo                                   # MQ2008 fold 1, bundled: scores in ~20 s
  rankboost train train.txt --valid vali.txt --early-stopping 50 -o model.json
  rankboost predict model.json test.txt -o scores.txt
  rankboost evaluate model.json test.txt --metric ndcg@10 --metric map
  rankboost info model.json
  rankboost convert agg.txt --to trec -o runs/       # LETOR-agg -> TREC runs + qrels
  rankboost datasets write mq2008 mq2008/          # the bundled fold 1 as train/vali/test.txt

Data files are SVMlight/LETOR ("2 qid:10 1:0.5 2:0.1 ... #docid = D"), optionally
compressed (.gz, .bz2, .xz); LETOR 4.0 aggregation files ("1:3 2:NULL") load too, with
NULL = abstain. Exit status: 0 ok, 1 error in the data, 2 usage error
(bad option or value, unknown metric, output path that is an input), 130 interrupted.
"""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit status 2) that suggest the names meant.

    A mistyped command or option gets "did you mean" (``difflib``; Python 3.11's argparse
    has no ``suggest_on_error``): commands from the choices the error lists, options from
    the parser of the command the arguments name (an unknown option is reported by the
    top-level parser, which keeps the arguments for this).
    """

    _argv: Sequence[str] = ()

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        text = _one_line(message) + self._suggestion(message)
        prog = self._command_parser().prog  # an unknown option: the help of its command
        self.exit(2, error_line(f"{text} (see '{prog} --help')") + "\n")

    def _suggestion(self, message: str) -> str:
        """``" (did you mean ...?)"`` for the mistyped command or option of ``message``."""
        if "did you mean" in message or "maybe you meant" in message:  # Python >= 3.14
            return ""
        choice = re.search(r"invalid choice: '?([^'\s]*)'? \(choose from (.*)\)", message)
        if choice is not None:
            choices = [c.strip(" '\"") for c in choice.group(2).split(",")]
            return did_you_mean(choice.group(1), choices)
        unknown = re.match(r"unrecognized arguments: (.*)", message)
        if unknown is None:
            return ""
        options = [o for o in self._command_parser()._option_string_actions if o != "--help"]
        for word in unknown.group(1).split():
            if word.startswith("-") and len(word) > 1:
                hint = did_you_mean(word.split("=", 1)[0], options)
                if hint:
                    return hint
        return ""

    def _command_parser(self) -> argparse.ArgumentParser:
        """The parser of the (sub)command that ``self._argv`` names (``fuse train``: its own)."""
        parser: argparse.ArgumentParser = self
        for word in self._argv:
            subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            if subparsers and word in subparsers[0].choices:
                parser = subparsers[0].choices[word]
        return parser


# ---------------------------------------------------------------------- argument types


_positive_int = int_at_least(1)
_non_negative_int = int_at_least(0)


# ---------------------------------------------------------------------- helpers


def _fmt(value: Any) -> str:
    import numpy as np

    if isinstance(value, (float, np.floating)):
        return f"{value:.4f}"
    return str(value)


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Plain-text table: text columns left-aligned, numbers right-aligned."""
    import numpy as np

    cells = [[_fmt(v) for v in row] for row in rows]
    numeric = [
        all(isinstance(row[j], (int, float, np.number)) for row in rows) if rows else False
        for j in range(len(headers))
    ]
    widths = [max([len(h)] + [len(r[j]) for r in cells]) for j, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        out = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(out).rstrip()

    return "\n".join([line(headers), *(line(r) for r in cells)])


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")


def _rounds_to_use(model: RankBoostModel, rounds: int | None) -> int | None:
    if rounds is None:
        return model.best_iteration
    if rounds > model.n_rounds:
        raise CLIError(
            f"--rounds {rounds} exceeds the {model.n_rounds} rounds in the model; pass at most "
            f"{model.n_rounds}."
        )
    return rounds


# ---------------------------------------------------------------------- commands


def _check_training(data: RankingDataset, what: str) -> tuple[Any, Any]:
    """``(X, y)`` of a training file, checked (finite features, NaN = abstain; finite labels).

    The command line's own checks before :func:`rankboost._fit.fit_ranker`, in place of
    scikit-learn's (``import sklearn`` alone took 2 s of a small ``rankboost train``).
    """
    from ._validation import check_feature_matrix, check_labels

    X = check_feature_matrix(data.X, name=f"X of {what}")
    return X, check_labels(data.y, name=f"y of {what}", n_samples=X.shape[0])


def _check_eval(what: str) -> Callable[[int, Any, Any], tuple[Any, Any]]:
    """The check of a validation file's features (its labels are the monitor's to check)."""

    def prepare(i: int, X: Any, qid: Any) -> tuple[Any, Any]:
        from ._validation import check_feature_matrix

        return check_feature_matrix(X, name=f"X of {what}"), qid

    return prepare


def _cmd_train(args: argparse.Namespace) -> int:
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
    inputs = [("training file", args.data)]
    if args.valid is not None:
        inputs.append(("validation file", args.valid))
    check_output(args.output, inputs)
    if args.plot is not None:
        check_plot(args.plot, [*inputs, ("model output", args.output)])
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
            "prepare_eval": _check_eval(f"validation file {args.valid!r}"),
        }
    from .clicks.cli import click_fit_kwargs  # --clicks LOG: pairs from clicks (issue 25)

    fit_kw.update(click_fit_kwargs(args, train))

    from ._fit import fit_ranker  # here, after the inputs: their errors come fast
    from .metrics import evaluate
    from .params import params_of

    names = train.feature_names
    if args.feature_names is not None:  # one name per line (rankboost.datasets)
        from .datasets import load_feature_names

        names = load_feature_names(args.feature_names, train.n_features)
    X, y = _check_training(train, f"training file {args.data!r}")
    start = time.perf_counter()
    with interrupt_at_round_end() as check:
        fitted = fit_ranker(  # the steps of RankBoostRanker.fit, without scikit-learn
            X,
            y,
            train_qid,
            params_of(args, f"{PROG} train"),
            feedback=args.feedback,
            normalize=args.normalize,
            feature_names=names,
            callbacks=[check],
            verbose=not args.quiet,
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
    _out(f"trained {sizes[0]} on {', '.join(sizes[1:])} in {seconds:.1f} s; wrote {args.output}")
    if model.stop_reason:
        _out(f"note: {model.stop_reason}")
    if valid is not None:
        used = fitted.best_iteration or model.n_rounds
        scores = model.decision_function(valid.X, n_rounds=used)
        res = evaluate(valid.y, scores, valid.qid, metrics=list(dict.fromkeys(metrics)))
        label = "best round" if fitted.best_iteration else "rounds"
        _out()
        _out(_table(["split", label, *res], [["valid", used, *res.values()]]))
    if args.plot is not None:
        _plot_training(model, args.plot, f"rankboost train {Path(args.data).name}")
    return 0


def _plot_training(model: Any, path: str, title: str) -> None:
    """``--plot``: the training rloss, its bound ``prod Z_t`` and the validation metrics."""
    pyplot_offscreen()
    from .plotting import plot_training

    save_plot(plot_training(model, title=title), path)


def _cmd_predict(args: argparse.Namespace) -> int:
    if args.output is not None:
        check_output(args.output, [("model file", args.model), ("data file", args.data)])
    check_exists(args.data, "data file")
    model = load_model_file(args.model)
    data = load_data(args.data, n_features=model.n_features, query_file=args.query_file)
    check_width(data, model, args.data)
    scores = model.decision_function(data.X, n_rounds=_rounds_to_use(model, args.rounds))
    if args.format == "trec":
        return _write_trec(args, data, scores)
    text = "".join(f"{s!r}\n" for s in scores.tolist())
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_file(args.output, text)
        _err(f"wrote {len(scores)} scores to {args.output}")
    return 0


def _write_trec(args: argparse.Namespace, data: RankingDataset, scores: Any) -> int:
    """``predict --format trec``: ranks 1..n per query by decreasing score, ties in row order.

    The docid is the ``#docid = ...`` comment, or the row number (1 = first data row) for
    rows without one (all rows with ``--docid row``); a file without qid is query ``0``.
    """
    import numpy as np

    from .fusion import Run, format_run, write_run

    rows = np.arange(1, data.n_samples + 1).astype(str)
    docid = rows
    if data.docids is not None and args.docid == "auto":
        docid = np.where(data.docids == "", rows, data.docids)
    qid = query_ids(data, args.data)  # a file without qid is one query, and the user is told
    try:
        run = Run.from_scores(qid, docid, scores, name=args.tag)
    except ValueError as exc:
        raise CLIError(
            f"cannot write {args.data!r} as a TREC run: {_one_line(str(exc))} Pass --docid row "
            "to use row numbers as docids."
        ) from None
    if args.output is None:
        sys.stdout.write(format_run(run, tag=args.tag))
        return 0
    try:
        write_run(args.output, run, tag=args.tag)
    except OSError as exc:
        raise CLIError(os_error_text(exc)) from None
    sizes = f"{count(len(run), 'row', 'rows')}, {count(len(run.queries), 'query', 'queries')}"
    _err(f"wrote a TREC run of {sizes} to {args.output}")
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    check_exists(args.data, "data file")
    model = load_model_file(args.model)
    data = load_data(args.data, n_features=model.n_features, query_file=args.query_file)
    check_width(data, model, args.data)
    from .metrics import evaluate  # after the inputs: their errors come fast

    qid = query_ids(data, args.data)
    rounds = _rounds_to_use(model, args.rounds)
    scores = model.decision_function(data.X, n_rounds=rounds)
    names = list(dict.fromkeys(args.metric or DEFAULT_METRICS))
    options = metric_options(args, names)
    try:
        res = evaluate(data.y, scores, qid, metrics=names, **options)
    except ValueError as exc:
        raise CLIError(f"cannot evaluate {args.data!r}: {_one_line(str(exc))}") from None
    if args.json:
        _out(json.dumps({**{k: float(v) for k, v in res.items()}, "conventions": options}))
    else:
        used = model.n_rounds if rounds is None else rounds
        _out(_table(["metric", "value"], [[k, float(v)] for k, v in res.items()]))
        sizes = [count(data.n_queries, "query", "queries"), count(data.n_samples, "row", "rows")]
        _out(f"({', '.join(sizes)}, {count(used, 'round', 'rounds')})")
        _out(format_conventions(options))
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    import numpy as np

    from .model import KINDS

    if args.plot is not None:
        check_plot(args.plot, [("model file", args.model)])
        _plot_training(_boosted_model(args.model), args.plot, Path(args.model).name)

    try:
        from .fusion._info import fusion_info_lines, is_fusion_file
    except ImportError:  # pragma: no cover - the fusion subpackage is optional
        pass
    else:
        if is_fusion_file(args.model):
            for line in fusion_info_lines(args.model, _table, args.top):
                _out(line)
            return 0
    model = load_model_file(args.model)
    names = model.feature_labels  # as the plots and model.history["feature_label"] show them
    rounds = model.rounds
    _out(f"model: {args.model}")
    best = "-" if model.best_iteration is None else str(model.best_iteration)
    _out(f"rounds: {model.n_rounds} (best iteration: {best}), features: {model.n_features}")
    _out(FEATURE_NUMBERING)
    params = " ".join(f"{k}={v}" for k, v in model.params.items() if k != "feedback")
    _out(f"params: {params or '-'}")
    if model.params.get("feedback"):
        _out(f"feedback: {model.params['feedback']}")
    if model.stop_reason:
        _out(f"stopped: {model.stop_reason}")
    if model.n_rounds == 0:
        return 0
    gain = model.feature_importances("gain")
    split = np.bincount(rounds.feature, minlength=model.n_features)
    order = [int(i) for i in np.argsort(-gain, kind="stable") if split[i] > 0]
    top = order if args.top == 0 else order[: args.top]
    _out()
    _out(f"feature importances ({len(order)} features used; gain = share of -sum ln Z_t)")
    rows = [[i + 1, names[i], float(gain[i]), int(split[i])] for i in top]
    _out(_table(["feature", "name", "gain", "rounds"], rows))
    head = model.n_rounds if args.head == 0 else min(args.head, model.n_rounds)
    _out()
    _out(f"rounds (first {head} of {model.n_rounds}; feature = 1-based id, as above)")
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
    _out(_table(headers, rows))
    return 0


def _boosted_model(path: str) -> Any:
    """The RankBoost model in ``path``: a ranking model, or a learned fusion model's."""
    from .fusion._info import file_format

    kind = file_format(path) or ""
    if kind == "rankboost-fusion":
        from .fusion import RankFusion

        return RankFusion.load(path)
    if kind.startswith("rankboost-fusion"):
        raise UsageError(
            f"{path!r} is a linear fusion model, which has no boosting rounds to plot; leave "
            "out --plot."
        )
    return load_model_file(path)


def _cmd_demo(args: argparse.Namespace) -> int:
    from ._fit import fit_ranker
    from .datasets import load_mq2008
    from .metrics import evaluate
    from .params import params_of

    train, vali, test = load_mq2008(args.fold)
    _out(
        f"RankBoost on LETOR 4.0 MQ2008 fold {args.fold} (bundled): train {train.n_samples} "
        f"rows / {train.n_queries} queries, {train.n_features} features"
    )
    X, y = _check_training(train, f"MQ2008 fold {args.fold} train")
    start = time.perf_counter()
    fitted = fit_ranker(  # RankBoostRanker(n_estimators=...).fit(...), without scikit-learn
        X,
        y,
        train.qid,
        params_of(args, f"{PROG} demo"),
        eval_set=[(vali.X, vali.y)],
        eval_qid=[vali.qid],
        eval_metric="map",
        early_stopping_rounds=args.n_rounds,  # patience = all rounds: argmax of validation MAP
        verbose=not args.quiet,
        prepare_eval=_check_eval(f"MQ2008 fold {args.fold} vali"),
    )
    seconds = time.perf_counter() - start
    model, best = fitted.model, fitted.best_iteration
    _out(
        f"trained {model.n_rounds} rounds in {seconds:.1f} s; round count chosen on "
        f"validation MAP: {best}"
    )
    _out()
    rows = []
    for split, data in (("vali", vali), ("test", test)):
        scores = model.decision_function(data.X, n_rounds=best)
        res = evaluate(data.y, scores, data.qid, metrics=list(DEFAULT_METRICS))
        rows.append([split, best, *(float(v) for v in res.values())])
    _out(_table(["split", "rounds", "NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "MAP"], rows))
    _out()
    _out(
        "metrics: rankboost.metrics defaults (exp2 gain, log2 discount, ties = expected value, "
        "queries without a relevant document score 0)"
    )
    return 0


# ---------------------------------------------------------------------- parser


def _add_train_options(p: argparse.ArgumentParser) -> None:
    """The training options, derived from rankboost.params (so --help cannot drift)."""
    g = p.add_argument_group("boosting (rankboost.params: the defaults of rankboost.train)")
    add_arguments(g, params=TRAIN_PARAMS + FEEDBACK_PARAMS)


def _add_query_file(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--query-file",
        metavar="FILE",
        help="the queries of a DATA without qid: LightGBM's group file, one query size per "
        "line, rows in order (default: DATA.query when it exists)",
    )


def _add_command(
    sub: Any, name: str, func: Callable[[argparse.Namespace], int], help: str, epilog: str
) -> argparse.ArgumentParser:
    """Add subcommand ``name`` (its help, one example, ``func`` as handler) to ``sub``."""
    p: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help,
        description=help,
        epilog="example:\n  " + epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(func=func)
    return p


def _register_train(sub: Any) -> None:
    """Add ``rankboost train``."""
    p = _add_command(
        sub,
        "train",
        _cmd_train,
        "train a model on an SVMlight/LETOR file",
        "rankboost train train.txt --valid vali.txt --early-stopping 50 -o model.json",
    )
    p.add_argument("data", metavar="DATA", help="training file (SVMlight/LETOR, may be .gz)")
    _add_query_file(p)
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
        type=_positive_int,
        metavar="N",
        help="stop when the first --metric on --valid has not improved for N rounds",
    )
    add_metric_argument(p, "validation metric, repeatable: --metric ndcg@10 map (default ndcg@10)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--feature-names", metavar="FILE", help="one feature name per line, kept in the model"
    )
    p.add_argument(
        "--plot",
        metavar="PNG",
        help="also plot the training rloss, its bound prod Z_t and (with --valid) the "
        "validation metrics per round (needs matplotlib; .png, .pdf, .svg, ...)",
    )
    _add_train_options(p)
    from .clicks.cli import add_train_arguments  # --clicks, --propensity (issue 25)

    add_train_arguments(p)


def _register_predict(sub: Any) -> None:
    """Add ``rankboost predict``."""
    p = _add_command(
        sub,
        "predict",
        _cmd_predict,
        "score every row of a file (one score per line, input order)",
        "rankboost predict model.json test.txt -o scores.txt",
    )
    p.add_argument("model", metavar="MODEL", help="model file from 'rankboost train'")
    p.add_argument("data", metavar="DATA", help="SVMlight/LETOR file to score")
    _add_query_file(p)
    p.add_argument("-o", "--output", help="scores file (default: standard output)")
    p.add_argument(
        "--rounds", type=_positive_int, help="use the first N rounds (default: best or all)"
    )
    p.add_argument(
        "--format",
        choices=["scores", "trec"],
        default="scores",
        help="scores: one score per line, input order (default); trec: a TREC run "
        "'qid Q0 docid rank score tag', ranks 1..n per query by decreasing score, equal "
        "scores in input order (for trec_eval, ranx, pyserini)",
    )
    p.add_argument(
        "--tag", default="rankboost", help="trec: run tag, 6th column (default rankboost)"
    )
    p.add_argument(
        "--docid",
        choices=["auto", "row"],
        default="auto",
        help="trec: docid from the '#docid = D' comment, else the row number (auto, default), "
        "or always the row number (1 = first data row)",
    )


def _register_evaluate(sub: Any) -> None:
    """Add ``rankboost evaluate``."""
    p = _add_command(
        sub,
        "evaluate",
        _cmd_evaluate,
        "evaluate a model on a labelled file",
        "rankboost evaluate model.json test.txt --metric ndcg@10 --metric map --discount letor",
    )
    p.add_argument("model", metavar="MODEL", help="model file from 'rankboost train'")
    p.add_argument("data", metavar="DATA", help="labelled SVMlight/LETOR file")
    _add_query_file(p)
    add_metric_argument(
        p,
        "metric, repeatable: --metric ndcg@10 map or --metric ndcg@10 --metric map; ndcg@k, "
        "map, mrr, p@k, ... (default ndcg@1,3,5,10 and map)",
    )
    p.add_argument(
        "--rounds", type=_positive_int, help="use the first N rounds (default: best or all)"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help='print a JSON object instead of a table ({metric: value, "conventions": {...}})',
    )
    add_metric_options(p)


def _register_info(sub: Any) -> None:
    """Add ``rankboost info``."""
    p = _add_command(
        sub,
        "info",
        _cmd_info,
        "show a model's rounds and feature importances (or a fusion model's lists)",
        "rankboost info model.json --top 10 --head 20",
    )
    p.add_argument("model", metavar="MODEL", help="model file")
    p.add_argument(
        "--top",
        type=_non_negative_int,
        default=20,
        metavar="N",
        help="importance rows, an int >= 0 (default 20, 0 = all)",
    )
    p.add_argument(
        "--head",
        type=_non_negative_int,
        default=10,
        metavar="N",
        help="round rows, an int >= 0 (default 10, 0 = all)",
    )
    p.add_argument(
        "--plot",
        metavar="PNG",
        help="also plot the training rloss and its bound prod Z_t per round, and the "
        "validation metrics a model from 'train --valid' keeps (needs matplotlib)",
    )


def _register_demo(sub: Any) -> None:
    """Add ``rankboost demo``."""
    p = _add_command(
        sub,
        "demo",
        _cmd_demo,
        "train on the bundled MQ2008 fold and print validation/test scores",
        "rankboost demo --fold 1",
    )
    p.add_argument("--fold", type=int, choices=range(1, 6), default=1, help="fold (default 1)")
    add_arguments(p, params=TRAIN_PARAMS[:1])
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


class _Version(argparse.Action):
    """``--version``, which looks the version up only when asked (package metadata is slow)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.setdefault("help", "show program's version number and exit")
        super().__init__(
            option_strings, argparse.SUPPRESS, nargs=0, default=argparse.SUPPRESS, **kwargs
        )

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from . import __version__

        sys.stdout.write(f"{parser.prog} {__version__}\n")
        parser.exit()


#: the commands defined in this module; for them the other command modules are not imported
_OWN_COMMANDS = ("train", "predict", "evaluate", "info", "demo")


def _build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or (``argv`` naming one of ``_OWN_COMMANDS``) of its own.

    The second spares ``rankboost predict`` importing fusion and export (start-up time).
    """
    parser = _Parser(
        prog=PROG,
        description="RankBoost (Freund et al., JMLR 2003) for learning to rank.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for register in (
        _register_train, _register_predict, _register_evaluate, _register_info, _register_demo
    ):  # fmt: skip
        register(sub)
    command = next((a for a in argv or () if not a.startswith("-")), None)
    if command in _OWN_COMMANDS:
        return parser
    try:
        from .fusion.cli import register as _register_fuse
    except ImportError:  # the fusion subcommand is optional
        pass
    else:
        _register_fuse(sub)
        from .fusion.convert import register as _register_convert

        _register_convert(sub)
    from .export.cli import register as _register_export

    _register_export(sub)
    from .clicks.cli import register as _register_clicks

    _register_clicks(sub)
    from .datasets.cli import register as _register_datasets

    _register_datasets(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``rankboost`` command line; return the exit status.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments without the program name; None reads ``sys.argv[1:]``.

    Returns
    -------
    status : int
        0 on success, 1 on an error in the data, 2 on a usage error, 130 when interrupted,
        141 when the reader of the output closed it (see the module docstring).

    Examples
    --------
    >>> from rankboost.cli import main
    >>> main(["info", "no-such-model.json"])
    1
    """
    if argv is None:
        argv = sys.argv[1:]
    parser = _build_parser(argv)
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning  # restored when the block ends
            return int(args.func(args))
    except CLIError as exc:
        _err(error_line(user_text(exc)))
        return exc.exit_status
    except BrokenPipeError:
        # the reader of the output went away (rankboost info m.json | head): stop without a
        # word, as a command killed by SIGPIPE, and keep Python's exit from flushing into it
        _quiet_stdout()
        return 141
    except OSError as exc:
        _err(error_line(user_text(os_error_text(exc))))
    except (ValueError, TypeError, ImportError) as exc:
        _err(error_line(user_text(exc)))
    except MemoryError:
        _err(error_line("out of memory; the input is too large for this machine."))
    except KeyboardInterrupt:
        # NOTE: on a line of its own: the terminal's "^C" or a progress bar interrupted
        # before it ended its line may be on the current one
        _err(f"\n{PROG}: interrupted")
        return 130
    return 1


def _quiet_stdout() -> None:
    """Point standard output at the null device (after its reader closed the pipe)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (a test's capture)
        pass


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """Warnings as one readable line (``rankboost: warning: ...``), no source line."""
    _err(f"{PROG}: warning: {user_text(message)}")
