"""What the ``fuse`` subcommands share: the runs' options, ``--common-queries``, the notes.

:data:`OPTIONS` (added by :func:`add_options`) are the options of several ``fuse``
subcommands; :func:`common_queries` is ``--common-queries``;
:func:`load_fusion` reads a fusion model of any family; :func:`warn_degenerate` warns about
a degenerate learned model; :func:`plot_cv` and :func:`plot_selection` are ``fuse train
--plot``; :data:`EXAMPLES` are the ``Examples`` of every ``fuse`` subcommand's ``--help``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._common import count
from ._inputs import save_plot

__all__ = [
    "EXAMPLES",
    "OPTIONS",
    "add_options",
    "common_queries",
    "load_fusion",
    "plot_cv",
    "plot_selection",
    "warn_degenerate",
]


def warn_degenerate(model: Any) -> None:
    """Warn (FusionWarning) when a learned fusion is degenerate.

    That is: a list's weight is 0, the ranking is one list's, or the model has at most one
    round.
    """
    import warnings

    from ..fusion.features import FusionWarning

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

    from ..fusion.linear import keep_common_queries
    from ..fusion.run import Qrels

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
      train/ranker08.run --qrels train/qrels.txt -o lin.json
  rankboost fuse train --family linear --runs bm25.run dense.run --clicks clicks.tsv.gz \\
      --logged-by wsum:0.7,0.3 -o lin.json""",
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
  rankboost fuse export rrf.json --engine opensearch -o pipeline.json
  rankboost fuse export model.json --engine lancedb --text-list bm25 -o lancedb.json \
      --check-runs bm25.run dense.run""",
}


# ------------------------------------------------------------------ --plot ---------------
def plot_cv(model: Any, path: str, command: str) -> None:
    """Draw ``model.cv_results_`` (held-out NDCG@10 per round) to ``path`` (atomic write)."""
    import numpy as np
    from matplotlib.figure import Figure

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
    save_plot(fig, path, say=False)


def plot_selection(auto: Any, path: str, command: str) -> None:
    """Draw ``--family auto``'s choice: each candidate's held-out NDCG@10 (atomic write).

    A bar per candidate family (the chosen one in red), with the band that a family had to
    clear to replace the fallback: the fallback's mean plus ``threshold_se`` standard errors
    of the candidate's per-query differences to it.
    """
    import numpy as np
    from matplotlib.figure import Figure

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
    if sel.get("left_out_wide"):
        left += f"; left out (too many runs): {', '.join(sel['left_out_wide'])}"
    ax.set_xlabel(
        f"held-out NDCG@10, {sel['cv_folds']} inner folds, {sel['n_queries']} queries "
        f"(chosen: {sel['family']}, red){left}"
    )
    ax.set_title(command, fontsize="small")
    save_plot(fig, path, say=False)


#: The options several ``fuse`` subcommands share: name -> ``add_argument``'s arguments.
OPTIONS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "runs": (
        ("--runs",),
        {
            "nargs": "+",
            "required": True,
            "metavar": "RUN",
            "help": "TREC run files (qid Q0 docid rank score tag), gz ok; a model matches them "
            "to its lists by file name",
        },
    ),
    "by_order": (
        ("--by-order",),
        {
            "action": "store_true",
            "help": "use the --runs in the order given; by default each run file is matched to "
            "the model's list of the same path or file name (an unknown name is an error)",
        },
    ),
    "common_queries": (
        ("--common-queries",),
        {
            "action": "store_true",
            "help": "keep only the queries every run covers (how many were dropped is printed); "
            "--family linear needs runs of the same queries, as an engine runs every retriever",
        },
    ),
}


def add_options(p: argparse.ArgumentParser, *names: str) -> None:
    """Add the shared ``fuse`` options ``names`` (keys of :data:`OPTIONS`) to ``p``."""
    for name in names:
        flags, kwargs = OPTIONS[name]
        p.add_argument(*flags, **kwargs)


def load_fusion(path: str, command: str = "fuse apply") -> Any:
    """The fusion model (either family) that ``command`` fuses with: the registry's loader.

    A model of another kind is refused with the command that takes it
    (:func:`rankboost.model_files.refusal`).
    """
    from ._inputs import load_model_file

    return load_model_file(path, command)
