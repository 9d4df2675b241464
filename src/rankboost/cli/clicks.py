"""``rankboost clicks simulate`` and ``rankboost clicks propensity``: click logs.

``simulate`` writes a click log from a labelled SVMlight/LETOR file (the standard protocol,
:func:`rankboost.clicks.simulate_to_file`), or from TREC runs and qrels on the list a fusion
serves (``--runs RUN... --qrels FILE --fusion MODEL|rrf|sum|wsum:W1,W2``,
:func:`rankboost.fusion.clicks.served_rows`); ``propensity`` estimates the examination
propensity per position from a log (:func:`rankboost.clicks.estimate_propensity`). Each
option's default is the function's own (:mod:`rankboost.cli._defaults`). The click options
of ``train`` are in :mod:`rankboost.cli._clicks`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._clicks import log_bar, matched_counts, propensity_bar, propensity_table
from ._common import UsageError, add_parser, int_at_least
from ._defaults import add_option, changed, default_of, defaults
from ._inputs import check_plot, pyplot_offscreen, save_plot
from ._rules import Files, Paths, add_progress_options, show_progress

__all__ = ["register"]

SIMULATE = "rankboost.clicks._simulate:simulate_to_file"
PRODUCTION = "rankboost.clicks._simulate:production_ranker"
ESTIMATE = "rankboost.clicks._propensity:estimate_propensity"
#: ``clicks simulate``'s options: destination -> parameter of simulate_to_file
SIMULATE_OPTIONS = {
    "eta": "eta",
    "model": "model",
    "table": "table",
    "shown": "n_shown",
    "epsilon": "epsilon",
    "seed": "random_state",
}
#: ... and of production_ranker (the seed serves both)
PRODUCTION_OPTIONS = {"production_share": "share", "seed": "random_state"}
#: The sessions ``clicks simulate`` draws without ``--sessions`` (simulate_to_file has no
#: default: it is the command's)
SESSIONS = 100_000
#: Simulating this many sessions (the default) shows a bar over them
BAR_SESSIONS = SESSIONS

_EPILOG = """\
examples:
  rankboost clicks simulate train.txt --sessions 100000 --eta 1 -o clicks.tsv.gz
  rankboost clicks simulate --runs bm25.run dense.run --qrels qrels.txt \
      --fusion wsum:0.7,0.3 --sessions 10000 -o clicks.tsv.gz
  rankboost fuse train --runs bm25.run dense.run --clicks clicks.tsv.gz -o fusion.json
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
    """Add ``rankboost clicks`` (``simulate``, ``propensity``) to the command line's subparsers.

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="rankboost")
    >>> register(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["clicks", "simulate", "train.txt", "-o", "log.tsv.gz"])
    >>> args.sessions, args.eta, args.model
    (100000, 1.0, 'pbm')
    """
    p = add_parser(
        subparsers,
        "clicks",
        "click logs: simulate one from a labelled file, estimate position propensities",
        _EPILOG,
        "Click logs for learning to rank from clicks (docs/clicks.md).",
    )
    sub = p.add_subparsers(dest="clicks_command", metavar="COMMAND", required=True)
    _add_simulate(sub)
    _add_propensity(sub)


def _add_simulate(sub: Any) -> None:
    s = add_parser(
        sub,
        "simulate",
        "simulate a click log from a labelled SVMlight/LETOR file",
        _EPILOG,
        "Simulate clicks (standard protocol): a weak production ranker trained on a share of "
        "the queries ranks each query; each session draws a query uniformly and clicks its "
        "top documents by a position-based or cascade model.",
        func=_simulate,
        files=Files(
            {"data": "input data file", "runs": "run file", "qrels": "qrels file"},
            {"output": "-o"},
            implied=_fusion_file,
        ),
    )
    d = defaults(SIMULATE, SIMULATE_OPTIONS)
    d["production_share"] = default_of(PRODUCTION, "share")
    s.add_argument(
        "data", metavar="DATA", nargs="?", help="labelled SVMlight/LETOR file (may be .gz)"
    )
    s.add_argument("-o", "--output", required=True, help="click log to write (.gz: gzip)")
    s.add_argument("--sessions", type=int_at_least(1), default=SESSIONS, help=f"default {SESSIONS}")
    add_option(s, "--eta", d, "bias severity", type=_non_negative)
    s.add_argument(
        "--model", choices=["pbm", "cascade"], default=d["model"], help=f"default {d['model']}"
    )
    add_option(
        s,
        "--table",
        d,
        "examination: eye-tracking table ** eta or (1/rank) ** eta",
        choices=["eye", "inverse"],
    )
    add_option(s, "--shown", d, "list length", type=int_at_least(1))
    add_option(s, "--epsilon", d, "click noise on grade 0", type=_share)
    add_option(
        s,
        "--production-share",
        d,
        "share of queries the production ranker is trained on",
        type=_share,
    )
    add_option(s, "--seed", d, "random seed", type=int)
    f = s.add_argument_group(
        "a fusion's lists (instead of DATA): sessions on the list a fusion of TREC runs serves, "
        "clicks from the qrels' grades (docs/fusion_clicks.md)"
    )
    f.add_argument("--runs", nargs="+", metavar="RUN", help="TREC run files, gz ok")
    f.add_argument("--qrels", help="TREC qrels file: the grades the users click by")
    f.add_argument(
        "--fusion",
        metavar="MODEL|rrf|sum|wsum:W1,W2",
        help="the fusion that serves the lists: a model file of 'rankboost fuse train' (its "
        "lists matched to --runs by file name), rrf (k = 60), sum (equal-weight sum of min-max "
        "scores) or wsum:W1,W2,... (weighted sum of min-max scores, one weight per run)",
    )
    add_progress_options(s)


def _fusion_file(args: argparse.Namespace) -> Paths:
    """The model file ``--fusion`` names (an input), unless it names a simple fusion."""
    spec = getattr(args, "fusion", None)
    if spec is None or spec in ("rrf", "sum") or spec.startswith("wsum:"):
        return Paths()
    return Paths(inputs=[("fusion model", spec)])


def _add_propensity(sub: Any) -> None:
    e = add_parser(
        sub,
        "propensity",
        "estimate examination propensity per position from a click log",
        _EPILOG,
        "Estimate p_k (p_1 = 1) by regression-EM or EM (Wang et al. WSDM 2018) or "
        "intervention harvesting (Agarwal et al. WSDM 2019; documents shown at several positions).",
        func=_propensity,
        files=Files(
            {"log": "input click log", "data": "input feature file"},
            {"output": "-o", "plot": "--plot"},
        ),
    )
    e.add_argument("log", metavar="LOG", help="click log (TSV/CSV, may be .gz)")
    e.add_argument("data", metavar="FEATURES", nargs="?", help="feature file (regression-EM)")
    method = default_of(ESTIMATE, "method")
    e.add_argument(
        "--method",
        choices=["auto", "em", "regression_em", "intervention_harvesting"],
        default=method,
        help=f"auto: regression_em with FEATURES, else em (default {method})",
    )
    e.add_argument("-o", "--output", help="table to write (default: standard output)")
    e.add_argument("--plot", metavar="PNG", help="also plot p_k against position (matplotlib)")
    add_progress_options(e)


def _check_source(args: argparse.Namespace) -> None:
    """DATA, or ``--runs``, ``--qrels`` and ``--fusion`` together (a usage error otherwise)."""
    fusion = {"--runs": args.runs, "--qrels": args.qrels, "--fusion": args.fusion}
    given = [k for k, v in fusion.items() if v is not None]
    if args.data is not None and given:
        raise UsageError(
            f"clicks simulate takes DATA or a fusion's lists (--runs, --qrels, --fusion); got "
            f"DATA and {', '.join(given)}: pass one of them."
        )
    if args.data is None and len(given) < 3:
        missing = [k for k in fusion if k not in given]
        raise UsageError(
            "clicks simulate needs DATA (a labelled SVMlight/LETOR file), or --runs, --qrels "
            f"and --fusion together; missing {', '.join(missing)}."
        )
    if args.data is None and args.production_share != default_of(PRODUCTION, "share"):
        raise UsageError(
            "--production-share trains the production ranker of DATA; with --fusion the "
            "fusion serves the lists: drop --production-share."
        )


def _simulate_fusion(args: argparse.Namespace) -> int:
    """``--runs``, ``--qrels``, ``--fusion``: sessions on the list the fusion serves."""
    from ..clicks._simulate import simulate_to_file
    from ..fusion.clicks import served_rows, simple_fusion
    from ..fusion.io import read_qrels, read_runs
    from ._fuse import load_fusion

    runs = read_runs(args.runs)
    model = simple_fusion(args.fusion, list(runs))
    model = load_fusion(args.fusion, "fuse apply") if model is None else model
    y, qid, docid, score = served_rows(model, runs, read_qrels(args.qrels))
    n_sessions, n_rows, n_clicks, truth = simulate_to_file(
        args.output,
        y,
        qid,
        score,
        args.sessions,
        docids=docid,
        verbose=show_progress(args) and args.sessions >= BAR_SESSIONS,
        **changed(args, SIMULATE, SIMULATE_OPTIONS),
    )
    sys.stdout.write(
        f"wrote {args.output}: {n_sessions} sessions on the lists {args.fusion} serves, "
        f"{n_rows} rows, {n_clicks} clicks ({args.model}, eta={args.eta}); true propensity "
        + propensity_table(truth)
        + "\n"
    )
    return 0


def _simulate(args: argparse.Namespace) -> int:
    from ..clicks._simulate import production_ranker, simulate_to_file
    from ..datasets import load_svmlight

    _check_source(args)
    if args.data is None:
        return _simulate_fusion(args)
    data = load_svmlight(args.data)
    if data.qid is None:
        raise ValueError(f"{args.data!r} has no qid; clicks are simulated per query.")
    if data.docids is None:
        raise ValueError(
            f"{args.data!r} has no '#docid = ...' comments, which the log names documents by."
        )
    production = production_ranker(
        data.X, data.y, data.qid, **changed(args, PRODUCTION, PRODUCTION_OPTIONS)
    )
    scores = production.decision_function(data.X)
    n_sessions, n_rows, n_clicks, truth = simulate_to_file(
        args.output,
        data.y,
        data.qid,
        scores,
        args.sessions,
        docids=data.docids,
        verbose=show_progress(args) and args.sessions >= BAR_SESSIONS,
        **changed(args, SIMULATE, SIMULATE_OPTIONS),
    )
    sys.stdout.write(
        f"wrote {args.output}: {n_sessions} sessions, {n_rows} rows, {n_clicks} clicks "
        f"({args.model}, eta={args.eta}); true propensity " + propensity_table(truth) + "\n"
    )
    return 0


def _propensity(args: argparse.Namespace) -> int:
    from .._atomic import atomic_write_text
    from ..clicks._propensity import estimate_propensity
    from ..clicks._read import read_click_log

    if args.plot:  # matplotlib and the file type, before the work (status 2)
        check_plot(args.plot)
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
            log = read_click_log(args.log, verbose=log_bar(args, args.log))
            log = log.match(data.qid, data.docids, what=repr(args.data))
        else:  # EM needs the (row, position) cells only: summed while streaming
            log = matched_counts(args, args.log, data)
    else:
        log = read_click_log(args.log, verbose=log_bar(args, args.log))
    method = "em" if X is None and args.method == "auto" else args.method
    verbose = propensity_bar(args, log, "regression_em" if method == "auto" else method)
    prop = estimate_propensity(
        log, X, verbose=verbose, **changed(args, ESTIMATE, {"method": "method"})
    )
    text = prop.to_tsv()
    if args.output:
        atomic_write_text(args.output, text)
        sys.stdout.write(f"wrote {args.output} ({prop.method}, {prop.n_iter} iterations)\n")
    else:
        sys.stdout.write(text)
    if args.plot:
        pyplot_offscreen()
        ax = prop.plot()
        ax.figure.tight_layout()
        save_plot(ax.figure, args.plot, say=False)
    return 0
