"""Choosing defaults by cross-validation on training folds (``--select``), and the output:
TREC runs, the chart and the docs writer."""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .corpora import DOCS, ROOT, build_runs, load_cisi
from .protocol import N_FOLDS, _label, folds_of, subset


# ------------------------------------------------------------------ choosing defaults ----
def configurations() -> dict[str, dict]:
    """The configurations scored to choose the defaults (each with rounds chosen by CV).

    One factor at a time from the paper's setup (WeakLearn.cum, no shrinkage, rank features),
    then the combinations of the factors that helped; graded feedback is a separate
    comparison (``FEEDBACK_CONFIGS``): CISI's judgements are binary.
    """
    sm = {"score_features": True, "missing_features": True}
    # every factor explicit, so that the table does not move when RankFusion's defaults do
    base = {"positive_cumulative": True, "learning_rate": 1.0, "score_features": False,
            "missing_features": False, "feedback": "layered", "max_rounds": 300,
            "cv_folds": 5}  # fmt: skip
    configs = {
        "cum lr=1 rank (the paper)": {},
        "free lr=1 rank": {"positive_cumulative": False},
        "cum lr=0.3 rank": {"learning_rate": 0.3},
        "cum lr=1 rank+score": {"score_features": True},
        "cum lr=1 rank+missing": {"missing_features": True},
        "cum lr=1 rank+score+missing": sm,
        "free lr=1 rank+score+missing": {"positive_cumulative": False, **sm},
        "cum lr=0.3 rank+score+missing": {"learning_rate": 0.3, **sm},
        "free lr=0.3 rank+score+missing": {
            "positive_cumulative": False,
            "learning_rate": 0.3,
            **sm,
        },  # fmt: skip
        "cum lr=0.1 rank+score+missing (max 1000)": {
            "learning_rate": 0.1,
            "max_rounds": 1000,
            **sm,
        },
        "free lr=1 rank+missing": {"positive_cumulative": False, "missing_features": True},
        "cum lr=0.3 rank+missing": {"learning_rate": 0.3, "missing_features": True},
        "cum lr=1 rank+missing, bipartite feedback": {
            "missing_features": True,
            "feedback": "bipartite",
        },
    }
    return {k: {**base, **v} for k, v in configs.items()}


#: Configurations run on the LETOR sets (whose run scores are -rank, so score features only
#: repeat the ranks: left out), including graded against bipartite feedback.
MQ_CONFIGS = (
    "cum lr=1 rank (the paper)",
    "free lr=1 rank",
    "cum lr=1 rank+missing",
    "free lr=1 rank+missing",
    "cum lr=0.3 rank+missing",
    "cum lr=1 rank+missing, bipartite feedback",
)


def _training_sets(dataset: str) -> list[tuple[list, Any]]:
    """Per outer fold, the training queries' runs and qrels (test queries never included)."""
    from rankboost.fusion import Qrels
    from rankboost.fusion.io import read_letor_agg

    if dataset == "cisi":
        docs, queries, qrels = load_cisi()
        runs = build_runs(docs, queries)
        folds = folds_of(sorted(qrels))
        out = []
        for f in range(N_FOLDS):
            tr = {q for g, fq in enumerate(folds) if g != f for q in fq}
            out.append(([subset(r, tr) for r in runs.values()],
                        Qrels.from_dict({q: qrels[q] for q in sorted(tr)})))  # fmt: skip
        return out
    base = ROOT.parent / "shared" / "data" / "letor4" / dataset
    out = []
    for f in range(1, 6):
        agg = read_letor_agg(next((base / f"Fold{f}").glob("train.txt*")))
        out.append((list(agg.to_runs().values()), agg.to_qrels()))
    return out


def _select_job(dataset: str, fold: int, configs: dict, common: dict) -> dict:
    from rankboost import TrainingStoppedWarning
    from rankboost.fusion import RankFusion

    runs, qrels = _training_sets(dataset)[fold]
    out = {}
    for key, cfg in configs.items():
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrainingStoppedWarning)
            fusion = RankFusion(**{**common, **cfg}).fit(runs, qrels)
        assert fusion.cv_results_ is not None
        out[key] = (fusion.cv_results_["best_score"], fusion.n_rounds_, time.perf_counter() - t0)
    return out


def select(datasets: list[str], configs: dict, common: dict, workers: int) -> str:
    """Table: configuration -> mean inner-CV NDCG@10 over the outer folds' training queries."""
    from concurrent.futures import ProcessPoolExecutor

    def wanted(d: str) -> dict:
        # CISI's judgements are binary: bipartite = layered there, not run twice
        if d == "cisi":
            return {k: v for k, v in configs.items() if "bipartite" not in k}
        return {k: v for k, v in configs.items() if k in MQ_CONFIGS}

    # the big jobs first, so that the workers finish together
    jobs = [(d, f) for d in reversed(datasets) for f in range(N_FOLDS)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futs = {j: pool.submit(_select_job, j[0], j[1], wanted(j[0]), common) for j in jobs}
        res = {j: fu.result() for j, fu in futs.items()}
    head = " | ".join(f"{d} CV NDCG@10 (rounds)" for d in datasets)
    lines = [f"| Configuration | {head} |", "|---|" + "---:|" * len(datasets)]
    for key in configs:
        cells = []
        for d in datasets:
            if key not in res[(d, 0)]:
                cells.append("")
                continue
            sc = [res[(d, f)][key][0] for f in range(N_FOLDS)]
            rd = [res[(d, f)][key][1] for f in range(N_FOLDS)]
            cells.append(f"{np.mean(sc):.4f} ({int(np.median(rd))})")
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    secs = {d: np.median([sum(v[2] for v in res[(d, f)].values()) for f in range(N_FOLDS)])
            for d in datasets}  # fmt: skip
    lines.append("")
    lines.append(
        "Mean over the 5 outer folds of the inner 5-fold CV NDCG@10 on that fold's training "
        "queries only (rounds: median of the chosen counts). Common parameters: "
        f"`{common}`. Median time per outer fold, all configurations: "
        + ", ".join(f"{d} {s:.0f} s" for d, s in secs.items())
        + "."
    )
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ output ---------------
def write_runs(runs: dict, out: Path) -> None:
    from rankboost.fusion import write_run

    out.mkdir(parents=True, exist_ok=True)
    for name, r in runs.items():
        write_run(out / f"{name}.run", r, tag=name)


def _plot(folds: list[dict], pq: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8))
    for f in folds:
        cv = f["methods"]["rankboost"]["cv_mean"]
        if cv is not None:
            x = np.arange(1, len(cv) + 1)
            axes[0].plot(x, cv, label=f"outer fold {f['fold']}")
            t = f["methods"]["rankboost"]["n_rounds"]
            axes[0].plot([t], [cv[t - 1]], "ko", ms=4)
    axes[0].set_xscale("log")
    axes[0].set_xlabel("boosting rounds")
    axes[0].set_ylabel("mean held-out NDCG@10 (inner 5-fold CV)")
    axes[0].set_title("--rounds auto on each outer fold's training queries (dot = chosen)")
    axes[0].grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    names = sorted(pq, key=lambda n: pq[n]["ndcg@10"].mean())
    keep = [n for n in names if not n.startswith("run:")][-12:]
    y = np.arange(len(keep))
    axes[1].barh(y - 0.2, [pq[n]["ndcg@10"].mean() for n in keep], 0.4, label="NDCG@10")
    axes[1].barh(y + 0.2, [pq[n]["map@100"].mean() for n in keep], 0.4, label="MAP@100")
    axes[1].set_yticks(y, [_label(n).replace("*", "") for n in keep], fontsize=8)
    axes[1].set_title("CISI, 5-fold CV over queries: the 12 best fusions")
    axes[1].legend(fontsize=8)
    axes[1].grid(alpha=0.3, axis="x")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _write_doc(text: str, marker: str = "results") -> None:
    from rankboost.model import atomic_write_text

    path = DOCS / "hybrid.md"
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    doc = path.read_text() if path.is_file() else f"# Hybrid search\n\n{start}\n{end}\n"
    if start not in doc or end not in doc:
        doc += f"\n{start}\n{end}\n"
    head, rest = doc.split(start, 1)
    _, tail = rest.split(end, 1)
    atomic_write_text(path, f"{head}{start}\n{text}\n{end}{tail}")
