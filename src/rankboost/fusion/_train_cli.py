"""``rankboost fuse train``'s rules: which options each family uses, the checks and notes.

:func:`check_family_options` refuses (a usage error, exit status 2) a model option that the
chosen ``--family`` does not use, so that no option is silently ignored;
:func:`family_defaults` gives the options whose default depends on the family;
:func:`common_queries` is ``--common-queries``; :func:`warn_degenerate` warns about a
degenerate learned model; :func:`refuse_other_models` is ``fuse export``'s hint for a
model of another command; :func:`check_plot` and :func:`plot_cv` are ``--plot``; and
:data:`EXAMPLES` are the ``Examples`` of every ``fuse`` subcommand's ``--help``.
:mod:`rankboost.fusion.cli` builds the parser and calls these.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._cli_common import UsageError, count
from .._cli_metrics import format_conventions

__all__ = [
    "CV_CONVENTIONS",
    "EXAMPLES",
    "AUTO_USES",
    "FAMILY_DEFAULTED",
    "LINEAR_USES",
    "NOT_MODEL",
    "by_family",
    "check_family_options",
    "auto_family",
    "check_plot",
    "common_queries",
    "family_defaults",
    "option_text",
    "plot_cv",
    "plot_selection",
    "refuse_other_models",
    "warn_degenerate",
]


def warn_degenerate(model: Any) -> None:
    """Warn (FusionWarning) when a learned fusion is degenerate.

    That is: a list's weight is 0, the ranking is one list's, or the model has at most one
    round.
    """
    import warnings

    from .features import FusionWarning

    names = list(model.list_names_)
    notes = []
    if hasattr(model, "weights_"):
        w = [float(x) for x in model.weights_]
        used = [n for n, x in zip(names, w, strict=True) if x > 0]
        zero = [n for n, x in zip(names, w, strict=True) if x <= 0]
        if len(used) == 1 and len(names) > 1:
            notes.append(
                f"every weight is 0 but that of {used[0]!r}: the fused ranking is the ranking "
                f"of {used[0]!r} alone"
            )
        elif zero:
            they = "it does" if len(zero) == 1 else "they do"
            notes.append(
                f"{count(len(zero), 'list has', 'lists have')} weight 0 ({', '.join(zero[:5])}"
                f"{', ...' if len(zero) > 5 else ''}): {they} not change the fused ranking, "
                "and an engine would run the retriever for nothing"
            )
    rounds = int(model.n_rounds_)
    if rounds <= 1:
        what = (
            "the prior alone (equal weights)"
            if rounds == 0
            else "one step on one list"
            if hasattr(model, "weights_")
            else "one weak ranker, so the fused score takes two values per query and the "
            "documents tie in two groups"
        )
        notes.append(f"the model has {count(rounds, 'round', 'rounds')}: {what}")
    hint = ", or set --rounds" if model.n_rounds == "auto" else ""
    for note in notes:
        warnings.warn(
            f"degenerate fusion model: {note}. Check that the runs and the qrels are the "
            f"intended ones (the same query ids){hint}.",
            FusionWarning,
            stacklevel=2,
        )


def common_queries(args: argparse.Namespace, runs: dict[str, Any], qrels: Any = None) -> Any:
    """``--common-queries``: the runs (and qrels) cut to the queries every run covers."""
    if not args.common_queries:
        return runs if qrels is None else (runs, qrels)
    import numpy as np

    from .linear import keep_common_queries
    from .run import Qrels

    kept, dropped = keep_common_queries(list(runs.values()))
    queries = kept[0].queries
    example = f" (e.g. {dropped[0]!r})" if dropped else ""
    sys.stderr.write(
        f"rankboost fuse {args.fuse_command}: --common-queries kept the "
        f"{count(len(queries), 'query', 'queries')} every run covers and dropped "
        f"{count(len(dropped), 'query', 'queries')}{example}\n"
    )
    runs = dict(zip(runs, kept, strict=True))
    if qrels is None:
        return runs
    m = np.isin(qrels.qid, np.asarray(queries))
    if not m.any():
        raise ValueError(
            "--common-queries: the qrels judge none of the queries every run covers; check "
            "that the query ids of the run files and the qrels file match."
        )
    return runs, Qrels(qrels.qid[m], qrels.docid[m], qrels.rel[m])


#: ``fuse train`` options about the data or the output, not the model; every other option
#: is a model option, which the chosen family either uses or refuses.
NOT_MODEL = frozenset(
    {"help", "runs", "qrels", "output", "depth", "common_queries", "quiet", "plot", "family"}
)
#: The model options ``--family linear`` uses (LinearFusion's parameters); it refuses the others.
LINEAR_USES = ("normalizer", "prior_scale", "n_rounds", "max_rounds", "learning_rate", "cv_folds")
#: The model options ``--family auto`` uses (AutoFusion's parameters; ``--rounds`` only at
#: its default, auto); it refuses the others: it compares the families at their defaults.
AUTO_USES = ("max_rounds", "cv_folds")
#: Options whose default depends on the family (None in the parser: the family's default).
FAMILY_DEFAULTED = ("max_rounds", "learning_rate")


def family_defaults(family: str) -> dict[str, Any]:
    """The constructor defaults of the family's model class."""
    import inspect

    if family == "linear":
        from .linear import LinearFusion as cls
    elif family == "auto":
        from .auto import AutoFusion as cls  # type: ignore[assignment]
    else:
        from .learned import RankFusion as cls  # type: ignore[assignment]
    return {k: v.default for k, v in inspect.signature(cls).parameters.items()}


def by_family(name: str) -> str:
    """``300 for --family boost, 100 for --family linear, ...``: a help text's default."""
    values = {f: family_defaults(f).get(name) for f in ("boost", "linear", "auto")}
    return ", ".join(f"{v:g} for --family {f}" for f, v in values.items() if v is not None)


def option_text(action: argparse.Action, value: Any) -> str:
    """The option as the user wrote it: ``--no-score-features``, ``--prior rrf``."""
    if isinstance(action, argparse.BooleanOptionalAction):
        return action.option_strings[0 if value else 1]
    return f"{action.option_strings[0]} {value}"


def check_family_options(args: argparse.Namespace, actions: dict[str, argparse.Action]) -> None:
    """Refuse (usage error, exit 2) a model option the chosen family does not use.

    ``actions``: ``fuse train``'s options by destination
    (:func:`rankboost.fusion.cli.train_options`).
    """
    family = args.family
    for dest, action in actions.items():
        if dest in NOT_MODEL or not action.option_strings:
            continue
        value = getattr(args, dest, action.default)
        if value == action.default:
            continue
        flag = option_text(action, value)
        if family == "auto" and dest not in AUTO_USES:
            uses = ", ".join(actions[d].option_strings[0] for d in AUTO_USES)
            raise UsageError(
                f"{flag} is not an option of --family auto, which compares the families at "
                f"their defaults by inner cross-validation (its options: {uses}); drop "
                f"{flag}, or choose the family yourself: --family boost or --family linear."
            )
        if family == "linear" and dest == "prior":
            raise UsageError(
                f"{flag} is not an option of --family linear: it always starts from the sum of "
                "its normalised scores (CombSUM for --normalizer minmax, RRF for rrf) times "
                "--prior-scale (0 = no prior, auto = chosen by inner cross-validation); drop "
                f"{flag}, or use --family boost."
            )
        if family == "linear" and dest not in LINEAR_USES:
            uses = ", ".join(actions[d].option_strings[0] for d in LINEAR_USES)
            raise UsageError(
                f"{flag} is not an option of --family linear, a weighted sum of normalised "
                f"scores (its options: {uses}); drop {flag}, or use --family boost."
            )
        if family != "linear" and dest == "normalizer":
            raise UsageError(
                f"{flag} is not an option of --family {family}: it normalises the scores of "
                "--family linear (--family boost uses the ranks; see --score-features); drop "
                f"{flag}, or add --family linear."
            )
    if family == "auto":
        return
    if family != "linear" and args.prior == "none" and args.prior_scale != "auto":
        raise UsageError(
            f"--prior-scale {args.prior_scale} with --family {family} scales --prior, which is "
            "none: add --prior combsum or --prior rrf, or drop --prior-scale."
        )
    if family != "linear" and args.prior != "none" and args.prior_scale == "auto":
        if args.n_rounds != "auto":
            raise UsageError(
                f"--prior-scale auto (the default) with --family {family} is chosen with the "
                f"rounds by inner cross-validation (--rounds auto); with --rounds "
                f"{args.n_rounds} pass a scale, e.g. --prior-scale 1."
            )


#: How the inner folds score NDCG@10 (:func:`rankboost.fusion.cv_rounds`): not as
#: ``fuse evaluate`` does by default, so the line says so.
CV_CONVENTIONS = (
    "rankboost fuse train: the inner folds' "
    + format_conventions({"gain": "exp2", "discount": "log2", "ties": "expected", "empty": "skip"})
    + "; over the documents the runs return. 'fuse evaluate' counts a query without relevant "
    "document as 0 (--empty zero) and ranks the judged documents no run returned last, so "
    "it prints another number for the same ranking\n"
)


def refuse_other_models(path: str) -> None:
    """``fuse export`` given a model of another command: say which command takes it."""
    from ._info import file_format

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


# ------------------------------------------------------------------ --help examples ------
_D = "../shared/data/letor4/MQ2008-agg/Fold1"
#: The ``Examples`` epilog of each ``fuse`` subcommand's ``--help``: the
#: LETOR 4.0 MQ2008-agg fold of docs/metasearch.md, runs written by ``rankboost convert``.
EXAMPLES = {
    "fuse": f"""examples:
  rankboost convert {_D}/train.txt.gz --to trec -o train/
  rankboost convert {_D}/test.txt.gz --to trec -o test/
  rankboost fuse train --runs train/ranker*.run --qrels train/qrels.txt -o fusion.json
  rankboost fuse apply fusion.json --runs test/ranker*.run -o fused.run
  rankboost fuse evaluate fusion.json --runs test/ranker*.run --qrels test/qrels.txt
  (docs/metasearch.md; docs/hybrid.md for the linear family and its engine exports)""",
    "train": """examples:
  rankboost fuse train --runs train/ranker*.run --qrels train/qrels.txt -o fusion.json
  rankboost fuse train --runs train/ranker*.run --qrels train/qrels.txt -o fusion.json \\
      --plot cv.png
  rankboost fuse train --family boost --runs train/ranker*.run --qrels train/qrels.txt \\
      -o paper.json --rounds 100 --no-missing-features
  rankboost fuse train --family linear --common-queries --runs train/ranker06.run \\
      train/ranker08.run --qrels train/qrels.txt -o lin.json""",
    "apply": """examples:
  rankboost fuse apply fusion.json --runs test/ranker*.run -o fused.run
  rankboost fuse apply fusion.json --runs test/ranker*.run -o top10.run --depth 10
  rankboost fuse apply lin.json --common-queries --runs test/ranker06.run \\
      test/ranker08.run -o fused.run""",
    "evaluate": """examples:
  rankboost fuse evaluate fusion.json --runs test/ranker*.run --qrels test/qrels.txt
  rankboost fuse evaluate fusion.json --runs test/ranker*.run --qrels test/qrels.txt \\
      --metric ndcg@10 map --discount letor
  rankboost fuse evaluate --runs fused.run test/ranker01.run --qrels test/qrels.txt""",
    "export": """examples:
  rankboost fuse export lin.json --engine elasticsearch -o es.json
  rankboost fuse export lin.json --engine elasticsearch -o es.json --common-queries \\
      --check-runs test/ranker06.run test/ranker08.run
  rankboost fuse export rrf.json --engine opensearch -o pipeline.json""",
}


# ------------------------------------------------------------------ --plot ---------------
def check_plot(args: argparse.Namespace) -> None:
    """``--plot``, before the work: matplotlib is importable and an inner CV will run."""
    import importlib.util

    if args.plot is None:
        return
    if importlib.util.find_spec("matplotlib") is None:
        raise UsageError(
            "--plot needs the optional package matplotlib, which is not installed: "
            "pip install matplotlib (or pip install -e '.[plot]' in a clone of rankboost)."
        )
    from pathlib import Path

    from matplotlib.backend_bases import FigureCanvasBase

    kinds = FigureCanvasBase.get_supported_filetypes()
    suffix = Path(args.plot).suffix.lstrip(".").lower()
    if suffix not in kinds:
        raise UsageError(
            f"--plot {args.plot}: the file type is read from the name's extension, and "
            f"{'.' + suffix if suffix else 'no extension'} is not one matplotlib writes; use "
            f"one of {', '.join('.' + k for k in sorted(kinds))} (e.g. --plot cv.png)."
        )
    cv = args.n_rounds == "auto" or (args.family == "linear" and args.prior_scale == "auto")
    if not cv:
        raise UsageError(
            f"--plot draws the inner cross-validation curve (held-out NDCG@10 per round), which "
            f"--rounds {args.n_rounds} does not compute: use --rounds auto (up to --max-rounds)"
            f"{', or --prior-scale auto' if args.family == 'linear' else ''}."
        )


def plot_cv(model: Any, path: str, command: str) -> None:
    """Draw ``model.cv_results_`` (held-out NDCG@10 per round) to ``path`` (atomic write)."""
    from pathlib import Path

    import numpy as np
    from matplotlib.figure import Figure

    from .._atomic import atomic_open

    cv = model.cv_results_
    fig = Figure(figsize=(7, 4.2), layout="constrained")
    ax = fig.add_subplot()
    if "scales" in cv:  # prior or linear: one curve per prior scale, from round 0
        mean = np.asarray(cv["mean"])
        for s, c in enumerate(cv["scales"]):
            ax.plot(np.arange(mean.shape[1]), mean[s], label=f"prior scale {c:g}")
        ax.legend(fontsize="small")
    else:
        for k, row in enumerate(np.asarray(cv["per_fold"])):
            ax.plot(
                cv["n_rounds"], row, color="0.75", lw=0.8, label="inner folds" if k == 0 else None
            )
        ax.plot(cv["n_rounds"], cv["mean"], color="C0", label="mean")
        ax.legend(fontsize="small")
    ax.axvline(model.n_rounds_, color="C3", ls="--", lw=0.8)
    ax.set_xlabel(f"rounds (chosen: {model.n_rounds_}, dashed)")
    ax.set_ylabel("held-out NDCG@10 (inner folds)")
    ax.set_title(command, fontsize="small")
    with atomic_open(path) as fh:
        fig.savefig(fh, format=Path(path).suffix.lstrip(".").lower())


def plot_selection(auto: Any, path: str, command: str) -> None:
    """Draw ``--family auto``'s choice: each candidate's held-out NDCG@10 (atomic write).

    A bar per candidate family (the chosen one in red), with the band that a family had to
    clear to replace the fallback: the fallback's mean plus ``threshold_se`` standard errors
    of the candidate's per-query differences to it.
    """
    from pathlib import Path

    import numpy as np
    from matplotlib.figure import Figure

    from .._atomic import atomic_open

    sel = auto.selection_
    table = sel["candidates"]
    names = list(table)
    mean = np.array([table[c]["mean"] for c in names])
    base = table[sel["fallback"]]["mean"]
    need = np.array([base + auto.threshold_se * table[c]["se"] for c in names])
    fig = Figure(figsize=(7, 3.6), layout="constrained")
    ax = fig.add_subplot()
    colors = ["C3" if c == sel["family"] else "C0" for c in names]
    ax.barh(names, mean, color=colors)
    rule = f"to replace {sel['fallback']}: its mean + {auto.threshold_se:g} SE"
    ax.scatter(need, names, marker="|", s=300, color="k", zorder=3, label=rule)
    lo = float(min(mean.min(), need.min()))
    hi = float(max(mean.max(), need.max()))
    ax.set_xlim(max(0.0, lo - 0.1 * (hi - lo + 0.01)), hi + 0.1 * (hi - lo + 0.01))
    ax.invert_yaxis()
    ax.legend(fontsize="small", loc="lower right")
    left = f"; left out (runs of different queries): {', '.join(sel['left_out'])}" if sel.get(
        "left_out") else ""  # fmt: skip
    ax.set_xlabel(
        f"held-out NDCG@10, {sel['cv_folds']} inner folds, {sel['n_queries']} queries "
        f"(chosen: {sel['family']}, red){left}"
    )
    ax.set_title(command, fontsize="small")
    with atomic_open(path) as fh:
        fig.savefig(fh, format=Path(path).suffix.lstrip(".").lower())


def add_common_queries(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--common-queries",
        action="store_true",
        help="keep only the queries every run covers (how many were dropped is printed); "
        "--family linear needs runs of the same queries, as an engine runs every retriever",
    )
