"""``rankboost fuse train``: fit a fusion model on TREC runs and qrels, save it as JSON.

``--clicks LOG`` (instead of ``--qrels``) learns it from a click log of the lists an earlier
fusion served (:func:`rankboost.fusion.clicks.fit_clicks`), with the click options of
``rankboost train --clicks`` (:mod:`rankboost.cli._clicks`).

``--family`` chooses the estimator (:mod:`rankboost.cli._family`: ``auto``, the default, is
:class:`~rankboost.fusion.AutoFusion`; ``boost`` is :class:`~rankboost.fusion.RankFusion`;
``linear`` is :class:`~rankboost.fusion.LinearFusion`), built from the options given, each
default being the estimator's own. ``--plot`` draws the inner cross-validation.

Examples
--------
>>> opts = train_options()
>>> opts["prior_scale"].option_strings, opts["family"].default, opts["max_rounds"].default
(['--prior-scale'], 'auto', None)
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._conventions import INNER_FOLDS, INNER_FOLDS_NOTE, format_conventions
from ._clicks import add_click_options, click_inputs, click_options
from ._common import UsageError, add_parser, count, int_at_least
from ._defaults import add_option
from ._family import (
    DEFAULT_FAMILY,
    FAMILIES,
    NOT_MODEL,
    by_family,
    check_family_options,
    estimator,
    for_engine,
    infer_family,
    option_defaults,
)
from ._fuse import (
    EXAMPLES,
    add_options,
    common_queries,
    plot_cv,
    plot_selection,
    warn_degenerate,
)
from ._inputs import check_plot
from ._rules import Files, Paths, add_progress_options, show_progress

__all__ = ["CLICK_CONVENTIONS", "CV_CONVENTIONS", "register", "rounds_value", "train_options"]

#: How the inner folds score NDCG@10 (:func:`rankboost.fusion.cv_rounds`): not as
#: ``fuse evaluate`` does by default, so ``--verbose`` (and ``rankboost info``) say so.
CV_CONVENTIONS = (
    "rankboost fuse train: the inner folds' "
    + format_conventions(INNER_FOLDS)
    + "; "
    + INNER_FOLDS_NOTE
    + "\n"
)
#: ... and with ``--clicks``: the gains are the debiased click-through rates, not grades.
CLICK_CONVENTIONS = (
    "rankboost fuse train: --clicks: the inner folds are the clicked queries, scored by "
    "NDCG@10 with each document's debiased click-through rate (clicks / propensity per "
    "impression; raw with --propensity none) as its gain\n"
)


def register(sub: Any) -> argparse.ArgumentParser:
    """Add ``train`` to the ``fuse`` subparsers."""
    p = add_parser(
        sub,
        "train",
        "fit a fusion model on runs + qrels (or a click log), save it as JSON",
        EXAMPLES["train"],
    )
    add_arguments(p)
    return p


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``fuse train``'s arguments, handler and files on ``p``."""
    add_options(p, "runs")
    p.add_argument(
        "--qrels", default=None, help="TREC qrels file (qid 0 docid rel), gz ok (or --clicks LOG)"
    )
    p.add_argument("-o", "--output", required=True, help="where to write the model (JSON)")
    _add_model_options(p)
    p.add_argument(
        "--depth",
        type=int_at_least(1),
        default=None,
        help="read only the top DEPTH of each run, an int >= 1 (default: all)",
    )
    add_options(p, "common_queries")
    g = add_click_options(
        p,
        "clicks (docs/fusion_clicks.md): learn the fusion from a click log instead of --qrels",
        "click log (qid, docid, position, click[, session, count]) of the lists an earlier "
        "fusion of these runs served, matched to the runs' documents by (qid, docid)",
    )
    g.add_argument(
        "--logged-by",
        action="append",
        metavar="MODEL|rrf|sum|wsum:W1,W2",
        help="with --clicks: the fusion that served the log (as 'clicks simulate --fusion'); "
        "every session must show the top of its list on --runs, else an error counts what "
        "disagrees. Repeat it for a log of several fusions served A/B (each session one "
        "fusion's list): --propensity auto then harvests their interventions",
    )
    g.add_argument(
        "--held-out",
        choices=["all", "shown"],
        default=None,
        help="with --clicks: what the inner folds rank when they choose the rounds, the "
        "prior's scale or the family: all = every document of the held-out queries, one "
        "never shown counting as unclicked; shown = only the documents the log showed them "
        "(default all)",
    )
    add_progress_options(p, "progress bars (inner folds, rounds)")
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also say how the inner folds score their held-out NDCG@10 (its conventions, "
        "which are not 'fuse evaluate''s; 'rankboost info MODEL' shows them too)",
    )
    p.add_argument(
        "--plot",
        metavar="FILE",
        default=None,
        help="also draw the inner cross-validation curve (held-out NDCG@10 per round, the "
        "one --rounds auto chooses from; with --family auto, each family's held-out NDCG@10) "
        "to FILE (.png, .pdf, .svg; needs matplotlib)",
    )
    p.set_defaults(
        family_given=False,
        func=run,
        files=Files(
            {"runs": "run file", "qrels": "qrels file", "clicks": "input click log"},
            {"output": "-o", "plot": "--plot"},
            implied=lambda a: Paths(inputs=click_inputs(a) + _logged_inputs(a)),
        ),
    )


def _logged_inputs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The model files ``--logged-by`` names (inputs), not the simple fusions."""
    specs = getattr(args, "logged_by", None) or []
    simple = [s for s in specs if s in ("rrf", "sum") or s.startswith("wsum:")]
    return [("logging fusion model", s) for s in specs if s not in simple]


def _add_model_options(p: argparse.ArgumentParser) -> None:
    """The model options: each family's parameters, with the families' defaults."""
    from ..params import FEEDBACK_PARAMS, TRAIN_PARAMS, add_arguments
    from ._family import family_parameters

    d = option_defaults(
        [
            "rank_feature",
            "score_features",
            "missing_features",
            "n_rounds",
            "max_rounds",
            "cv_folds",
            "normalizer",
            "prior",
            "prior_scale",
        ]  # fmt: skip
        + [q.name for q in TRAIN_PARAMS + FEEDBACK_PARAMS]
    )
    add_option(
        p,
        "--rank-feature",
        d,
        "decreasing function of the rank used as the feature",
        choices=["neg_rank", "reciprocal"],
    )
    f = p.add_argument_group("features of --family boost (RankFusion's defaults)")
    f.add_argument(
        "--score-features",
        action=argparse.BooleanOptionalAction,
        default=d["score_features"],
        help="also use per-query min-max normalised run scores as features (default: "
        f"{'on' if d['score_features'] else 'off'})",
    )
    f.add_argument(
        "--missing-features",
        action=argparse.BooleanOptionalAction,
        default=d["missing_features"],
        help="also use 'returned by list i' (1) / 'missing from list i' (0) per list and the "
        f"number of lists returning the document (default: "
        f"{'on' if d['missing_features'] else 'off'})",
    )
    g = p.add_argument_group(
        "boosting (--family boost, with RankFusion's defaults; --family linear and auto "
        "refuse the ones they do not use)"
    )
    g.add_argument(
        "--rounds",
        dest="n_rounds",
        type=rounds_value,
        default=d["n_rounds"],
        metavar="T|auto",
        help="boosting rounds T, or auto: chosen by inner cross-validation (NDCG@10) over the "
        f"training queries, up to --max-rounds (default: {d['n_rounds']})",
    )
    g.add_argument(
        "--max-rounds",
        type=TRAIN_PARAMS[0].parse,
        default=d["max_rounds"],
        metavar="T",
        help="largest round count --rounds auto tries (default: "
        f"{by_family('max_rounds') if d['max_rounds'] is None else d['max_rounds']})",
    )
    g.add_argument(
        "--cv-folds",
        type=int_at_least(2),
        default=d["cv_folds"],
        metavar="K",
        help=f"inner folds of --rounds auto and of --family auto's choice, an int >= 2 "
        f"(default: {by_family('cv_folds') if d['cv_folds'] is None else d['cv_folds']})",
    )
    boost = family_parameters("boost")
    params = [q for q in TRAIN_PARAMS + FEEDBACK_PARAMS if q.name in boost and q.name != "n_rounds"]
    add_arguments(g, params=params, defaults={q.name: d[q.name] for q in params})
    for action in g._group_actions:  # an option whose default is each family's own
        if action.default is None and action.dest in d and action.dest not in NOT_MODEL:
            head = (action.help or "").rsplit(" (default: ", 1)[0]
            action.help = f"{head} (default: {by_family(action.dest)})"
    # NOTE: the names of earlier releases, kept working but not shown
    g.add_argument("--n-rounds", dest="n_rounds", type=rounds_value, help=argparse.SUPPRESS)
    g.add_argument(
        "--unconstrained", dest="positive_cumulative", action="store_false", help=argparse.SUPPRESS
    )
    _add_family_options(p, d)


def _add_family_options(p: argparse.ArgumentParser, d: dict[str, Any]) -> None:
    f = p.add_argument_group("model family and prior")
    f.add_argument(
        "--family",
        choices=list(FAMILIES),
        default=DEFAULT_FAMILY,
        action=_FamilyGiven,
        help="auto (default: AutoFusion): chosen among linear, the tuned convex combination "
        "of min-max scores, boost, boost from the CombSUM prior and RRF by inner "
        "cross-validation (--cv-folds), keeping linear unless another wins by more than two "
        "standard errors (for runs that miss queries: boost or boost from CombSUM, keeping "
        "boost); boost (RankFusion): RankBoost over rank features; linear (LinearFusion): a "
        "weighted sum of normalised scores that 'fuse export' hands to Elasticsearch / "
        "OpenSearch. Without --family, options of one family (--rounds 20, --thresholds 4, "
        "--normalizer rrf) train that family (boost first), with a note",
    )
    from ..fusion.engines import ENGINES
    from ._family import engine_normalizers

    served = ", ".join(f"{e} {engine_normalizers(e)[0]}" for e in ENGINES)
    f.add_argument(
        "--engine",
        choices=list(ENGINES),
        default=None,
        help="train what this search engine serves ('fuse export --engine'): --family linear "
        f"with the first normaliser the engine serves exactly ({served}; --normalizer "
        "another it serves exactly)",
    )
    f.add_argument(
        "--normalizer",
        choices=["minmax", "rrf", "dbsf", "atan"],
        default=d["normalizer"],
        help="--family linear: per-query normalisation of every run (default "
        f"{d['normalizer']}); dbsf and atan are Qdrant's DBSF and Milvus's arctan, for 'fuse "
        "export --engine qdrant' and '--engine milvus'",
    )
    add_option(
        f,
        "--prior",
        d,
        "--family boost: boost from CombSUM of min-max scores or RRF",
        choices=["none", "combsum", "rrf"],
    )
    f.add_argument(
        "--prior-scale",
        type=_scale_value,
        default=d["prior_scale"],
        metavar="C|auto",
        help="the prior's multiplier, a float >= 0, or auto: chosen with the rounds by inner "
        f"cross-validation (needs --rounds auto; default {d['prior_scale']})",
    )


class _FamilyGiven(argparse.Action):
    """``--family``: store the value and record that it was given (``args.family_given``)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        setattr(namespace, self.dest, values)
        namespace.family_given = True


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


def train_options() -> dict[str, argparse.Action]:
    """``fuse train``'s options (argparse actions) by destination, the first of each.

    Examples
    --------
    >>> train_options()["cv_folds"].option_strings
    ['--cv-folds']
    """
    parser = argparse.ArgumentParser(prog="rankboost fuse train")
    add_arguments(parser)
    out: dict[str, argparse.Action] = {}
    for action in parser._actions:
        out.setdefault(action.dest, action)
    return out


def _check_plot(args: argparse.Namespace) -> None:
    """``--plot``, before the work: matplotlib and the file type, and an inner CV will run."""
    if args.plot is None:
        return
    if args.clicks is not None:
        raise UsageError(
            "--plot draws the inner cross-validation of a fit on --qrels; a fit on --clicks "
            "does not keep its curves: drop --plot."
        )
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:  # NOTE: issue 38's wording, kept
        raise UsageError(
            "--plot needs the optional package matplotlib, which is not installed: "
            "pip install matplotlib (or pip install -e '.[plot]' in a clone of rankboost)."
        )
    check_plot(args.plot)
    cv = args.n_rounds == "auto" or (args.family == "linear" and args.prior_scale == "auto")
    if not cv:
        raise UsageError(
            f"--plot draws the inner cross-validation curve (held-out NDCG@10 per round), which "
            f"--rounds {args.n_rounds} does not compute: use --rounds auto (up to --max-rounds)"
            f"{', or --prior-scale auto' if args.family == 'linear' else ''}."
        )


def run(args: argparse.Namespace) -> int:
    """Handle ``rankboost fuse train``; return the exit status (0)."""
    from ..fusion.io import read_qrels, read_runs

    actions = train_options()
    sys.stderr.write(for_engine(args, actions))
    sys.stderr.write(infer_family(args, actions))
    check_family_options(args, actions)  # before the work
    if (args.qrels is None) == (args.clicks is None):
        raise UsageError(
            "fuse train learns from --qrels FILE or from --clicks LOG: pass one of them"
            + (", not both." if args.clicks is not None else ".")
        )
    clicks = click_options(args)
    if args.logged_by and args.clicks is None:
        raise UsageError("--logged-by declares the fusion that served --clicks LOG; pass the log.")
    if args.held_out is not None and args.clicks is None:
        raise UsageError("--held-out chooses what the inner folds of --clicks rank; pass the log.")
    _check_plot(args)
    model = estimator(args, actions)
    runs = read_runs(args.runs, depth=args.depth)
    if args.clicks is not None:
        model = _fit_clicks(args, model, common_queries(args, runs), clicks)
    else:
        qrels = read_qrels(args.qrels)
        runs, qrels = common_queries(args, runs, qrels)
        model.fit(runs, qrels, verbose=show_progress(args))
    model.save(args.output)
    if args.engine is not None:
        from ..fusion.engines import ENGINES

        sys.stderr.write(
            f"rankboost fuse train: serve it: rankboost fuse export {args.output} --engine "
            f"{args.engine} -o REQUEST.json {ENGINES[args.engine].asked()}".rstrip()
            + "\n"
        )
    command = "rankboost fuse train" + (
        "" if args.family == "boost" else f" --family {args.family}"
    )
    if args.family == "auto":
        if args.plot is not None:
            plot_selection(model, args.plot, command)
        _report_auto(model)
    else:
        if args.plot is not None:
            plot_cv(model, args.plot, command)
        warn_degenerate(model)
        (_report_linear if args.family == "linear" else _report_boost)(model)
    if args.verbose and _cross_validated(model):
        sys.stderr.write(CV_CONVENTIONS if args.clicks is None else CLICK_CONVENTIONS)
    return 0


def _cross_validated(model: Any) -> bool:
    """Whether ``model``'s fit reported a held-out NDCG@10 (auto, or a family's inner CV)."""
    return hasattr(model, "selection_") or getattr(model, "cv_results_", None) is not None


def _fit_clicks(args: argparse.Namespace, model: Any, runs: Any, given: dict[str, Any]) -> Any:
    """``--clicks LOG``: the estimator fitted on the log's click pairs (a new one)."""
    from ..clicks._read import read_click_log
    from ..fusion.clicks import click_targets, fit_targets
    from ..fusion.features import as_run_list
    from ._clicks import log_bar, propensity_table

    items = as_run_list(runs, "fuse train")
    log = read_click_log(args.clicks, verbose=log_bar(args, args.clicks))
    held_out = args.held_out or "all"
    t = click_targets(
        items, log, logged_by=args.logged_by, held_out=held_out, owner="--clicks", **given
    )
    if t.served is not None:
        shares = ", ".join(
            f"{n:,.0f} by {lab}"
            for lab, n in zip(t.served.labels, t.served.n_sessions, strict=True)
        )
        sys.stderr.write(
            f"rankboost fuse train: --logged-by: every session of {args.clicks!r} shows the "
            f"top of a declared fusion's list on the runs ({shares})\n"
        )
    sys.stderr.write(
        f"rankboost fuse train: --clicks: learning from {t.pairs.shape[0]} {args.click_pairs} "
        f"pairs of {t.n_sessions} sessions and {int(t.n_clicks)} clicks of {args.clicks!r}; "
        f"propensity {t.propensity.method}: {propensity_table(t.propensity)}\n"
    )
    return fit_targets(model, items, t, verbose=show_progress(args))


def _report_linear(lin: Any) -> None:
    sys.stderr.write(
        f"rankboost fuse train: linear weights {lin.weights_.round(4).tolist()} (prior "
        f"scale {lin.prior_scale_}, {lin.n_rounds_} rounds)\n"
    )
    if lin.cv_results_ is not None:
        best = float(lin.cv_results_["mean"].max())
        sys.stderr.write(
            f"rankboost fuse train: mean held-out NDCG@10 {best:.4f} over {lin.cv_folds} "
            "inner folds\n"
        )


def _report_boost(model: Any) -> None:
    if model.cv_results_ is not None:
        sys.stderr.write(
            f"rankboost fuse train: --rounds auto chose {model.n_rounds_} rounds (mean "
            f"held-out NDCG@10 {model.cv_results_['best_score']:.4f} over {model.cv_folds} "
            f"inner folds, tried 1..{model.max_rounds})\n"
        )


def _report_auto(auto: Any) -> None:
    sel = auto.selection_
    rows = ", ".join(f"{k} {v['mean']:.4f}" for k, v in sel["candidates"].items())
    sys.stderr.write(
        f"rankboost fuse train: --family auto chose {auto.family_} (mean held-out NDCG@10 "
        f"over {auto.cv_folds} inner folds of {count(sel['n_queries'], 'query', 'queries')}: "
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
