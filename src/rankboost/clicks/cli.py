"""The ``rankboost clicks`` subcommands and the click options of ``rankboost train``.

``rankboost.cli`` calls :func:`register` (``clicks simulate``, ``clicks propensity``),
:func:`add_train_arguments` (``train --clicks LOG --propensity auto|none|FILE``) and
:func:`click_fit_kwargs` (the ``fit`` arguments those options give). Handlers raise
``ValueError`` / ``OSError`` with a one-line message on bad input, which the caller prints as
``rankboost: error: ...`` (exit status 1). numpy is imported inside the handlers only, so
building the parser stays fast.

Examples
--------
>>> import argparse
>>> parser = argparse.ArgumentParser(prog="rankboost")
>>> register(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["clicks", "simulate", "train.txt", "-o", "log.tsv.gz"])
>>> args.sessions, args.eta, args.model
(100000, 1.0, 'pbm')
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._cli_common import PROG, int_at_least

__all__ = ["add_train_arguments", "click_fit_kwargs", "register"]

_POSITIVE_INT = int_at_least(1)
# progress bars only where a step can take seconds (small inputs stay quiet on stderr)
_BAR_LOG_BYTES = 4 << 20  # a click log file larger than this: a bar while reading
_BAR_ENTRIES = 1_000_000  # a log with this many rows: a bar over the EM iterations
_BAR_SESSIONS = 100_000  # simulating this many sessions (the default): a bar over them


def _log_bar(args: argparse.Namespace, path: str) -> bool:
    import os

    big = os.path.isfile(path) and os.path.getsize(path) > _BAR_LOG_BYTES
    return big and not getattr(args, "quiet", False)


_EPILOG = """\
examples:
  rankboost clicks simulate train.txt --sessions 100000 --eta 1 -o clicks.tsv.gz
  rankboost clicks propensity clicks.tsv.gz train.txt -o propensity.tsv --plot prop.png
  rankboost train train.txt --clicks clicks.tsv.gz --propensity auto -o model.json

A click log is TSV/CSV with a header: qid, docid, position (1 = top), click (0/1), and
optionally session (one shown list) and count. Documents are matched to the feature file by
(qid, docid), the docid from LETOR's '#docid = ...' comment. See docs/clicks.md.
"""


def _non_negative(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0; got {text!r}") from None
    if not v >= 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0; got {text}")
    return v


def _share(text: str) -> float:
    v = _non_negative(text)
    if not 0 < v <= 1:
        raise argparse.ArgumentTypeError(f"expected a share in (0, 1]; got {text}")
    return v


def register(subparsers: Any) -> None:
    """Add the ``clicks`` subcommand (with ``simulate`` and ``propensity``) to a parser.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The object returned by ``ArgumentParser.add_subparsers()``.
    """
    p = subparsers.add_parser(
        "clicks",
        help="click logs: simulate one from a labelled file, estimate position propensities",
        description="Click logs for learning to rank from clicks (docs/clicks.md).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="clicks_command", metavar="COMMAND", parser_class=type(p))
    sub.required = True
    s = sub.add_parser(
        "simulate",
        help="simulate a click log from a labelled SVMlight/LETOR file",
        description="Simulate clicks (standard protocol): a weak production ranker trained on "
        "a share of the queries ranks each query; each session draws a query uniformly and "
        "clicks its top documents by a position-based or cascade model.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("data", metavar="DATA", help="labelled SVMlight/LETOR file (may be .gz)")
    s.add_argument("-o", "--output", required=True, help="click log to write (.gz: gzip)")
    s.add_argument("--sessions", type=_POSITIVE_INT, default=100_000, help="default 100000")
    s.add_argument("--eta", type=_non_negative, default=1.0, help="bias severity (default 1)")
    s.add_argument("--model", choices=["pbm", "cascade"], default="pbm", help="default pbm")
    s.add_argument(
        "--table",
        choices=["eye", "inverse"],
        default="eye",
        help="examination: eye-tracking table ** eta (default) or (1/rank) ** eta",
    )
    s.add_argument("--shown", type=_POSITIVE_INT, default=10, help="list length (default 10)")
    s.add_argument(
        "--epsilon", type=_share, default=0.1, help="click noise on grade 0 (default 0.1)"
    )
    s.add_argument(
        "--production-share",
        type=_share,
        default=0.01,
        help="share of queries the production ranker is trained on (default 0.01)",
    )
    s.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=_cmd_simulate)

    e = sub.add_parser(
        "propensity",
        help="estimate examination propensity per position from a click log",
        description="Estimate p_k (p_1 = 1) by regression-EM or EM (Wang et al. WSDM 2018) or "
        "intervention harvesting (Agarwal et al. WSDM 2019; documents shown at several positions).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    e.add_argument("log", metavar="LOG", help="click log (TSV/CSV, may be .gz)")
    e.add_argument("data", metavar="FEATURES", nargs="?", help="feature file (regression-EM)")
    e.add_argument(
        "--method",
        choices=["auto", "em", "regression_em", "intervention_harvesting"],
        default="auto",
        help="auto: regression_em with FEATURES, else em (default)",
    )
    e.add_argument("-o", "--output", help="table to write (default: standard output)")
    e.add_argument("--plot", metavar="PNG", help="also plot p_k against position (matplotlib)")
    e.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    e.set_defaults(func=_cmd_propensity)


def add_train_arguments(p: argparse.ArgumentParser) -> None:
    """``--clicks LOG`` and ``--propensity`` for ``rankboost train``."""
    g = p.add_argument_group(
        "clicks (docs/clicks.md): train on a click log; the labels of DATA are then ignored"
    )
    g.add_argument(
        "--clicks",
        metavar="LOG",
        help="click log (qid, docid, position, click[, session, count]) matched to DATA by "
        "(qid, '#docid = ...')",
    )
    g.add_argument(
        "--click-pairs",
        default="all_shown",
        metavar="KIND",
        choices=["all_shown", "all_unclicked", "skip_above", "skip_next", "last_click_skip_above"],
        help="with --clicks: all_shown = each click above every other shown document (default; "
        "unbiased with propensities), all_unclicked, skip_above, skip_next, last_click_skip_above",
    )
    g.add_argument(
        "--propensity",
        metavar="auto|none|FILE",
        help="with --clicks: auto = estimate from the log by regression-EM (default), none = "
        "no position-bias correction, FILE = a 'position propensity' table",
    )
    g.add_argument(
        "--max-weight",
        type=float,
        default=100.0,
        metavar="M",
        help="with --clicks: clip inverse propensities at M (default 100)",
    )


def _refuse_overwrite(output: str | None, *inputs: str | None) -> None:
    """Refuse, before anything is read, an output that is an input or cannot be written.

    An output that is an input is a usage error (exit 2), as for every command.
    """
    from .._cli_common import check_output

    if output is None:
        return
    check_output(output, [("input", path) for path in inputs if path is not None])


def click_fit_kwargs(args: argparse.Namespace, data: Any) -> dict[str, Any]:
    """The ``RankBoostRanker.fit`` arguments of ``--clicks`` (empty without it)."""
    if getattr(args, "clicks", None) is None:
        if getattr(args, "propensity", None) is not None:
            raise ValueError("--propensity needs --clicks LOG; pass the click log too.")
        return {}
    from ._pairs import click_feedback, resolve_propensity
    from ._stream import read_click_counts

    _refuse_overwrite(args.output, args.clicks)
    if not args.max_weight >= 1:
        raise ValueError(f"--max-weight must be >= 1; got {args.max_weight}.")
    if data.docids is None:
        raise ValueError(
            f"{args.data!r} has no '#docid = ...' comments; --clicks matches the log to the "
            "features by (qid, docid). Add the comments (rankboost.datasets.dump_svmlight)."
        )
    if data.qid is None:
        raise ValueError(f"{args.data!r} has no qid; --clicks matches the log by (qid, docid).")
    # summed while streaming: memory grows with the documents and pairs, not the sessions
    log = read_click_counts(
        args.clicks,
        data.qid,
        data.docids,
        pairs=args.click_pairs,
        what=repr(args.data),
        verbose=_log_bar(args, args.clicks),
    )
    verbose = not getattr(args, "quiet", False) and log.n_entries >= _BAR_ENTRIES
    prop = resolve_propensity(log, args.propensity or "auto", data.X, verbose=verbose)
    fb = click_feedback(log, prop, pairs=args.click_pairs, max_weight=args.max_weight)
    sys.stderr.write(
        f"{PROG}: note: --clicks: the labels of {args.data!r} are ignored; training on "
        f"{fb.n_pairs} {args.click_pairs} pairs from {log.n_sessions} sessions and "
        f"{int(log.n_clicks)} clicks of {args.clicks!r}; propensity {prop.method}: "
        + _table(prop)
        + "\n"
    )
    return {"clicks": fb}


def _table(prop: Any) -> str:
    return ", ".join(f"p{k}={v:.3g}" for k, v in zip(prop.positions, prop.values, strict=True))


def _cmd_simulate(args: argparse.Namespace) -> int:
    from ..datasets import load_svmlight
    from ._simulate import production_ranker, simulate_to_file

    _refuse_overwrite(args.output, args.data)
    data = load_svmlight(args.data)
    if data.qid is None:
        raise ValueError(f"{args.data!r} has no qid; clicks are simulated per query.")
    if data.docids is None:
        raise ValueError(
            f"{args.data!r} has no '#docid = ...' comments, which the log names documents by."
        )
    production = production_ranker(
        data.X, data.y, data.qid, share=args.production_share, random_state=args.seed
    )
    scores = production.decision_function(data.X)
    n_sessions, n_rows, n_clicks, truth = simulate_to_file(
        args.output,
        data.y,
        data.qid,
        scores,
        args.sessions,
        eta=args.eta,
        model=args.model,
        table=args.table,
        n_shown=args.shown,
        epsilon=args.epsilon,
        docids=data.docids,
        random_state=args.seed,
        verbose=not args.quiet and args.sessions >= _BAR_SESSIONS,
    )
    sys.stdout.write(
        f"wrote {args.output}: {n_sessions} sessions, {n_rows} rows, "
        f"{n_clicks} clicks ({args.model}, eta={args.eta}); true propensity " + _table(truth) + "\n"
    )
    return 0


def _cmd_propensity(args: argparse.Namespace) -> int:
    from .._atomic import atomic_write_text
    from ._propensity import estimate_propensity
    from ._read import read_click_log
    from ._stream import read_click_counts

    _refuse_overwrite(args.output, args.log, args.data)
    _refuse_overwrite(args.plot, args.log, args.data)
    if args.plot:  # matplotlib and the file type, before the work (status 2)
        from .._cli_inputs import check_plot

        check_plot(args.plot, [("click log", args.log)])
    if args.method == "regression_em" and args.data is None:
        raise ValueError("--method regression_em needs FEATURES; pass the feature file.")
    X = None
    log: Any
    if args.data is not None:
        from ..datasets import load_svmlight

        data = load_svmlight(args.data)
        if data.docids is None or data.qid is None:
            raise ValueError(f"{args.data!r} needs qid and '#docid = ...' comments.")
        X = data.X
        if args.method == "intervention_harvesting":  # needs the sessions' queries
            log = read_click_log(args.log, verbose=_log_bar(args, args.log))
            log = log.match(data.qid, data.docids, what=repr(args.data))
        else:  # EM needs the (row, position) cells only: summed while streaming
            log = read_click_counts(
                args.log,
                data.qid,
                data.docids,
                what=repr(args.data),
                verbose=_log_bar(args, args.log),
            )
    else:
        log = read_click_log(args.log, verbose=_log_bar(args, args.log))
    verbose = not args.quiet and log.n_entries >= _BAR_ENTRIES
    prop = estimate_propensity(log, X, method=args.method, verbose=verbose)
    text = prop.to_tsv()
    if args.output:
        atomic_write_text(args.output, text)
        sys.stdout.write(f"wrote {args.output} ({prop.method}, {prop.n_iter} iterations)\n")
    else:
        sys.stdout.write(text)
    if args.plot:
        from .._compat import require

        plt = require("matplotlib.pyplot", "--plot")
        from pathlib import Path

        from .._atomic import atomic_open

        ax = prop.plot()
        ax.figure.tight_layout()
        kind = Path(args.plot).suffix[1:].lower() or None  # None: matplotlib's default, png
        with atomic_open(args.plot) as f:  # all of the picture or nothing, as every output
            ax.figure.savefig(f, dpi=120, format=kind)
        plt.close(ax.figure)
    return 0
