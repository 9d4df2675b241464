"""Meta-search / rank fusion on LETOR 4.0 MQ2008-agg and MQ2007-agg (issue 5; SPEC 8.2).

Reproduces, on today's public rank-aggregation data, the meta-search study of Freund, Iyer,
Schapire & Singer (JMLR 2003, section 6.2; Knowl 9 of the summary): RankBoost combines the
input rankers' lists (feature = -rank in list i, NaN when list i did not return the
document), layered feedback per query (``normalize="query"``), WeakLearn.cum by default.

Protocol: the official 5 folds; train on ``train``, choose the round count (RankBoost) or
the early-stopping point (LightGBM) on ``vali`` by NDCG@10, report ``test``. Methods:

* ``rankboost fuse --family boost`` at its defaults (``RankFusion()``: rounds by inner
  cross-validation on ``train``; ``vali`` unused);
* RankBoost, WeakLearn.cum and unconstrained (the paper's setup: rank features, 1,000 rounds
  each; rounds chosen on vali);
* LightGBM lambdarank on the same rank features (NaN = missing), early-stopped on vali;
* ranx CombSUM, CombMNZ (min-max), BordaFuse, RRF (k = 60), and ranx ``optimize_fusion``
  for a weighted sum (its exhaustive weight grid is run on the 3 lists best on train);
* the best single list, chosen on train, and the oracle best on test (as the paper did).

Metrics (module ``rankboost.metrics``): NDCG@10 (2^rel - 1 gain, LETOR 4.0 discount, 0 for a
query without relevant documents) and MAP (relevant = grade >= 1) over every judged document
of the query (documents a method did not return are tied below the returned ones; ties count
at their expected value). The paper's table: number of test queries whose first relevant
document is in the top k, k = 1, 2, 5, 10, 20, 30, and its average rank, where a relevant
document the method did not return is unretrieved and counts as rank 31 (the cap), over the
test queries that have a relevant document.

Run: ``PYTHONPATH=src .venv/bin/python experiments/metasearch.py --write-docs`` (2 worker
processes, one numba/LightGBM thread each). With ``--write-docs`` it writes the tables
between the ``results`` markers of ``docs/metasearch.md`` and the plots
``docs/img/metasearch_*.png``; without it, it only prints the tables.
"""

from __future__ import annotations

import os

# One thread per worker: the numba kernels are parallel and thrash on a loaded 2-core box.
# (only when run as a script: a test importing this module keeps its own threads)
if __name__ == "__main__":
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from _data import data_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
DATASETS = ("MQ2008-agg", "MQ2007-agg")
KS = (1, 2, 5, 10, 20, 30)
CAP = 31
N_ROUNDS = 1000
ROUND_STEP = 5
NDCG = {"gain": "exp2", "discount": "letor", "empty": "zero"}


# ------------------------------------------------------------------ evaluation -----------
class Split:
    """Evaluation arrays of one LETOR split: one row per judged document."""

    def __init__(self, agg: Any) -> None:
        self.agg = agg
        self.y = agg.labels
        self.qid = agg.qid
        self.index = {(q, d): i for i, (q, d) in enumerate(zip(agg.qid, agg.docid, strict=True))}
        has_rel = {q for q, g in zip(agg.qid, agg.labels, strict=True) if g >= 1}
        self.rel_q = np.array([q in has_rel for q in agg.qid])
        self.n_rel_queries = len(has_rel)

    def rows(self, qid: Any, docid: Any) -> np.ndarray:
        return np.array([self.index[(q, d)] for q, d in zip(qid, docid, strict=True)])

    def scores_of(self, qid: Any, docid: Any, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(score per judged row, retrieved mask); unretrieved rows get a floor below all."""
        out = np.full(self.y.shape[0], float(np.min(score)) - 1.0)
        got = np.zeros(self.y.shape[0], dtype=bool)
        idx = self.rows(qid, docid)
        out[idx] = score
        got[idx] = True
        return out, got

    def ndcg(self, s: np.ndarray) -> float:
        from rankboost.metrics import ndcg_score

        return float(ndcg_score(self.y, s, self.qid, k=10, **NDCG))

    def measures(self, s: np.ndarray, got: np.ndarray) -> dict[str, Any]:
        from rankboost.metrics import average_rank, mean_average_precision, topk_counts

        out: dict[str, Any] = {
            "ndcg@10": self.ndcg(s),
            "map": float(mean_average_precision(self.y, s, self.qid, empty="zero")),
        }
        # the paper's table: unretrieved relevant documents cannot be "first relevant"
        sel = self.rel_q
        y_hit = np.where(got, self.y, 0)[sel]
        out["topk"] = topk_counts(y_hit, s[sel], self.qid[sel], ks=KS)
        ranks = average_rank(y_hit, s[sel], self.qid[sel], cap=CAP, per_query=True)
        out["rank_sum"] = float(np.sum(ranks))
        out["n_queries"] = int(np.asarray(ranks).shape[0])
        return out


# ------------------------------------------------------------------ one fold -------------
def _ranx_runs(runs: dict, queries: list[str]) -> list:
    from ranx import Run as RanxRun

    out = []
    for name, r in runs.items():
        d = r.to_dict()
        for q in queries:  # ranx needs the same queries in every run
            d.setdefault(q, {"__none__": -1e9})
        out.append(RanxRun(d, name=name))
    return out


def _ranx_fuse(runs: list, method: str, norm: str | None, params: Any = None) -> Any:
    """ranx.fuse without its O(n_runs^2 n_queries) query-id check (our runs are padded)."""
    from ranx.fusion import fusion_switch
    from ranx.normalization import norm_switch

    normed = runs if norm is None else [norm_switch(norm)(r) for r in runs]
    return fusion_switch(method)(normed, **(params or {}))


def _from_ranx(fused: Any) -> Any:
    from rankboost.fusion import Run

    d = {
        q: {k: v for k, v in docs.items() if k != "__none__"} for q, docs in fused.to_dict().items()
    }
    return Run.from_dict({q: docs for q, docs in d.items() if docs}, name=fused.name)


def run_fold(dataset: str, fold: int, n_rounds: int = N_ROUNDS) -> dict[str, Any]:
    import lightgbm as lgb
    from ranx import Qrels as RanxQrels
    from ranx import optimize_fusion

    from rankboost import TrainingStoppedWarning
    from rankboost.feedback import LayeredFeedback
    from rankboost.fusion import RankFusion, evaluate_run, fusion_features, grades_for
    from rankboost.fusion.io import read_letor_agg_folds

    t0 = time.perf_counter()
    data = read_letor_agg_folds(data_file(f"letor4/{dataset}/Fold{fold}/train.txt.gz").parent)
    runs = {s: data[s].to_runs() for s in data}
    qrels = {s: data[s].to_qrels() for s in data}
    ev = {s: Split(data[s]) for s in data}
    feats = {s: fusion_features(runs[s]) for s in data}
    res: dict[str, Any] = {"methods": {}, "lists": {}, "curves": {}, "rounds": {}}

    # RankBoost, with and without the positive-cumulative constraint -------------------
    fb_test = LayeredFeedback(grades_for(feats["test"], qrels["test"]), feats["test"].qid,
                              normalize="query")  # fmt: skip
    for key, pc in (("rb_cum", True), ("rb_free", False)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrainingStoppedWarning)
            # the paper's setup: rank features only, no shrinkage, rounds chosen on vali
            fusion = RankFusion(
                n_rounds=n_rounds,
                positive_cumulative=pc,
                score_features=False,
                missing_features=False,
                learning_rate=1.0,
                feedback="layered",
            ).fit(runs["train"], qrels["train"])
        model = fusion.model_
        vrows = ev["vali"].rows(feats["vali"].qid, feats["vali"].docid)
        best, best_t, test_rloss = -1.0, 1, []
        stage_v = model.staged_decision_function(feats["vali"].X)
        stage_t = model.staged_decision_function(feats["test"].X)
        floor_v = np.zeros(ev["vali"].y.shape[0])
        for t, (hv, ht) in enumerate(zip(stage_v, stage_t, strict=True), start=1):
            test_rloss.append(fb_test.rloss(ht, tie_weight=1.0))
            if t % ROUND_STEP and t != 1:
                continue
            s = floor_v.copy()
            s[:] = hv.min() - 1.0
            s[vrows] = hv
            v = ev["vali"].ndcg(s)
            if v > best + 1e-12:
                best, best_t = v, t
        res["rounds"][key] = best_t
        res["curves"][key] = {
            "train": model.history["rloss"].tolist(),
            "test": test_rloss,
        }
        fused = fusion.fuse(runs["test"], n_rounds=best_t)
        s, got = ev["test"].scores_of(fused.qid, fused.docid, fused.score)
        res["methods"][key] = ev["test"].measures(s, got)
        if key == "rb_cum":  # the library's evaluator agrees with the fast path here
            check = evaluate_run(fused, qrels["test"], ["ndcg@10"], **NDCG)["ndcg@10"]
            assert abs(check - res["methods"][key]["ndcg@10"]) < 1e-9

    # fuse --family boost at its defaults: trained on train only, rounds by inner CV (no vali)
    t1 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        fusion = RankFusion().fit(runs["train"], qrels["train"])
    fused = fusion.fuse(runs["test"])
    res["rounds"]["rb_default"] = fusion.n_rounds_
    res["rb_default_seconds"] = time.perf_counter() - t1
    s, got = ev["test"].scores_of(fused.qid, fused.docid, fused.score)
    res["methods"]["rb_default"] = ev["test"].measures(s, got)

    # LightGBM lambdarank on the same features -----------------------------------------
    def lgb_set(s: str, ref: Any = None) -> Any:
        f = feats[s]
        _, sizes = np.unique(f.qid, return_counts=True)
        order = np.argsort(np.unique(f.qid, return_index=True)[1])
        return lgb.Dataset(f.X, grades_for(f, qrels[s]), group=sizes[order], reference=ref,
                           free_raw_data=False)  # fmt: skip

    dtrain = lgb_set("train")
    dvali = lgb_set("vali", dtrain)
    params = {
        "objective": "lambdarank", "metric": "ndcg", "ndcg_eval_at": [10],
        "learning_rate": 0.05, "num_leaves": 31, "min_data_in_leaf": 20,
        "num_threads": 1, "verbose": -1, "seed": 0, "deterministic": True,
    }  # fmt: skip
    booster = lgb.train(params, dtrain, num_boost_round=1000, valid_sets=[dvali],
                        callbacks=[lgb.early_stopping(100, verbose=False)])  # fmt: skip
    res["rounds"]["lightgbm"] = int(booster.best_iteration)
    pred = booster.predict(feats["test"].X, num_iteration=booster.best_iteration)
    s, got = ev["test"].scores_of(feats["test"].qid, feats["test"].docid, pred)
    res["methods"]["lightgbm"] = ev["test"].measures(s, got)

    # single lists ---------------------------------------------------------------------
    for split in ("train", "test"):
        for name, r in runs[split].items():
            s, got = ev[split].scores_of(r.qid, r.docid, r.score)
            m = ev[split].measures(s, got) if split == "test" else {"ndcg@10": ev[split].ndcg(s)}
            res["lists"].setdefault(name, {})[split] = m
    by_train = sorted(res["lists"], key=lambda n: -res["lists"][n]["train"]["ndcg@10"])
    by_test = max(res["lists"], key=lambda n: res["lists"][n]["test"]["ndcg@10"])
    res["methods"]["best_train"] = dict(res["lists"][by_train[0]]["test"], list=by_train[0])
    res["methods"]["best_oracle"] = dict(res["lists"][by_test]["test"], list=by_test)

    # ranx: unsupervised fusion and the supervised weighted sum -------------------------
    rx = {"test": _ranx_runs(runs["test"], sorted(set(data["test"].qid)))}
    top3 = by_train[:3]
    rx["train"] = _ranx_runs({n: runs["train"][n] for n in top3}, sorted(set(data["train"].qid)))
    for key, method, norm in (
        ("combsum", "sum", "min-max"),
        ("combmnz", "mnz", "min-max"),
        ("borda", "bordafuse", None),
        ("rrf", "rrf", None),
    ):
        fused = _from_ranx(_ranx_fuse(rx["test"], method, norm))
        s, got = ev["test"].scores_of(fused.qid, fused.docid, fused.score)
        res["methods"][key] = ev["test"].measures(s, got)
    idx3 = [list(runs["test"]).index(n) for n in top3]
    qrels_train = RanxQrels(qrels["train"].to_dict())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        best = optimize_fusion(
            qrels_train,
            rx["train"],
            norm="min-max",
            method="wsum",
            metric="ndcg_burges@10",
            show_progress=False,
        )
        fused = _from_ranx(_ranx_fuse([rx["test"][i] for i in idx3], "wsum", "min-max", best))
    s, got = ev["test"].scores_of(fused.qid, fused.docid, fused.score)
    res["methods"]["wsum"] = dict(ev["test"].measures(s, got), weights=list(best["weights"]),
                                  lists=by_train[:3])  # fmt: skip
    res["seconds"] = time.perf_counter() - t0
    res["dataset"], res["fold"] = dataset, fold
    return res


# ------------------------------------------------------------------ reporting ------------
LABELS = {
    "rb_default": "rankboost fuse defaults (train only, --rounds auto)",
    "rb_cum": "RankBoost, WeakLearn.cum",
    "rb_free": "RankBoost, unconstrained",
    "lightgbm": "LightGBM lambdarank (same features)",
    "wsum": "ranx optimize_fusion wsum (3 lists)",
    "combsum": "ranx CombSUM (min-max)",
    "combmnz": "ranx CombMNZ (min-max)",
    "borda": "ranx BordaFuse",
    "rrf": "ranx RRF (k=60)",
    "best_train": "Best single list (chosen on train)",
    "best_oracle": "Best single list (oracle on test)",
}


def _summary(folds: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in LABELS:
        ms = [f["methods"][key] for f in folds]
        n_q = sum(m["n_queries"] for m in ms)
        out[key] = {
            "ndcg@10": [m["ndcg@10"] for m in ms],
            "map": [m["map"] for m in ms],
            "topk": {k: sum(m["topk"][k] for m in ms) for k in KS},
            "avg_rank": sum(m["rank_sum"] for m in ms) / n_q,
            "n_queries": n_q,
        }
    # the paper's oracle rows: one list, best on all test queries for a given column
    names = list(folds[0]["lists"])
    pooled = {}
    for n in names:
        ts = [f["lists"][n]["test"] for f in folds]
        pooled[n] = {
            "topk": {k: sum(t["topk"][k] for t in ts) for k in KS},
            "avg_rank": sum(t["rank_sum"] for t in ts) / sum(t["n_queries"] for t in ts),
            "ndcg@10": [t["ndcg@10"] for t in ts],
            "map": [t["map"] for t in ts],
        }
    out["oracle_rows"] = {
        f"Best (Top {k})": max(names, key=lambda n, k=k: pooled[n]["topk"][k]) for k in (1, 10, 30)
    }
    out["oracle_rows"]["Best (avg rank)"] = min(names, key=lambda n: pooled[n]["avg_rank"])
    out["pooled_lists"] = pooled
    return out


def _tables(dataset: str, folds: list[dict[str, Any]], summ: dict[str, Any]) -> str:
    lines = [f"### {dataset}", ""]
    lines.append("| Method | NDCG@10 (mean ± sd over folds) | MAP | per-fold NDCG@10 |")
    lines.append("|---|---:|---:|---|")
    for key, label in LABELS.items():
        nd, mp = np.array(summ[key]["ndcg@10"]), np.array(summ[key]["map"])
        per = " ".join(f"{v:.3f}" for v in nd)
        lines.append(
            f"| {label} | {nd.mean():.4f} ± {nd.std(ddof=1):.4f} | {mp.mean():.4f} | {per} |"
        )
    keys = ("rb_default", "rb_cum", "rb_free", "lightgbm")
    rounds = {k: [f["rounds"][k] for f in folds] for k in keys}
    secs = [f["rb_default_seconds"] for f in folds]
    lines += [
        "",
        f"Rounds chosen by `--rounds auto` on train (defaults): {rounds['rb_default']} (train + "
        f"apply {np.median(secs):.1f} s per fold, median). "
        f"Rounds chosen on vali (folds 1-5): WeakLearn.cum {rounds['rb_cum']}, unconstrained "
        f"{rounds['rb_free']}, LightGBM {rounds['lightgbm']}. Best list on train per fold: "
        + ", ".join(f["methods"]["best_train"]["list"] for f in folds)
        + "; oracle per fold: "
        + ", ".join(f["methods"]["best_oracle"]["list"] for f in folds)
        + "; wsum lists/weights per fold: "
        + "; ".join(
            f"{'/'.join(f['methods']['wsum']['lists'])} = "
            f"{'/'.join(str(w) for w in f['methods']['wsum']['weights'])}"
            for f in folds
        )
        + ".",
        "",
    ]
    n_q = summ["rb_cum"]["n_queries"]
    lines.append(
        f"Top-k table ({n_q} test queries with a relevant document, 5 folds pooled; expected "
        "counts under random tie-breaking; unretrieved = rank 31):"
    )
    lines.append("")
    head = " | ".join(f"Top {k}" for k in KS)
    lines.append(f"| Strategy | {head} | Avg rank |")
    lines.append("|---|" + "---:|" * (len(KS) + 1))
    for key, label in LABELS.items():
        t = summ[key]["topk"]
        cells = " | ".join(f"{t[k]:.1f}" for k in KS)
        lines.append(f"| {label} | {cells} | {summ[key]['avg_rank']:.2f} |")
    for row, name in summ["oracle_rows"].items():
        t = summ["pooled_lists"][name]["topk"]
        cells = " | ".join(f"{t[k]:.1f}" for k in KS)
        avg = summ["pooled_lists"][name]["avg_rank"]
        lines.append(f"| {row}: {name} (oracle) | {cells} | {avg:.2f} |")
    lines.append("")
    return "\n".join(lines)


def _mean_curves(folds: list[dict[str, Any]], key: str, part: str) -> np.ndarray:
    curves = [np.asarray(f["curves"][key][part]) for f in folds]
    n = min(c.shape[0] for c in curves)
    return np.mean([c[:n] for c in curves], axis=0)


def _curve_text(folds: list[dict[str, Any]]) -> str:
    rows = ["| Variant | train rloss @1000 | test rloss @10 | @100 | @1000 | min test (round) |",
            "|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for key in ("rb_cum", "rb_free"):
        tr, te = _mean_curves(folds, key, "train"), _mean_curves(folds, key, "test")
        rows.append(
            f"| {LABELS[key]} | {tr[-1]:.4f} | {te[9]:.4f} | {te[99]:.4f} | {te[-1]:.4f} | "
            f"{te.min():.4f} ({int(np.argmin(te)) + 1}) |"
        )
    return "Mean rloss curves of the 5 folds (the plot):\n\n" + "\n".join(rows) + "\n"


def _plot(all_folds: dict[str, list[dict[str, Any]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(all_folds)
    fig, axes = plt.subplots(2, n, figsize=(6 * n, 8), squeeze=False)
    for c, (dataset, folds) in enumerate(all_folds.items()):
        for key, color in (("rb_cum", "tab:blue"), ("rb_free", "tab:red")):
            name = LABELS[key].split(", ")[1]
            tr, te = _mean_curves(folds, key, "train"), _mean_curves(folds, key, "test")
            x = np.arange(1, tr.shape[0] + 1)
            axes[0, c].plot(x, tr, "--", color=color, label=f"{name}, train")
            axes[0, c].plot(x, te, "-", color=color, label=f"{name}, test")
            axes[1, c].plot(x[9:], te[9:], "-", color=color, label=f"{name}, test")
        axes[0, c].set_xscale("log")
        axes[0, c].set_title(f"{dataset}: train (dashed) and test (solid) rloss")
        axes[1, c].set_title(f"{dataset}: test rloss, rounds 10-1000 (zoom)")
        for ax in axes[:, c]:
            ax.set_xlabel("boosting round")
            ax.set_ylabel("rloss (ties = errors), mean of 5 folds")
            ax.grid(alpha=0.3)
            ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _write_doc(text: str) -> None:
    from rankboost.model import atomic_write_text

    path = DOCS / "metasearch.md"
    start, end = "<!-- results:start -->", "<!-- results:end -->"
    doc = path.read_text() if path.is_file() else f"# Meta-search\n\n{start}\n{end}\n"
    if start not in doc or end not in doc:
        doc += f"\n{start}\n{end}\n"
    head, rest = doc.split(start, 1)
    _, tail = rest.split(end, 1)
    atomic_write_text(path, f"{head}{start}\n{text}\n{end}{tail}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--folds", nargs="+", type=int, default=[1, 2, 3, 4, 5])
    parser.add_argument("--rounds", type=int, default=N_ROUNDS)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="update docs/metasearch.md and docs/img/metasearch_rloss.png (default: print only)",
    )
    args = parser.parse_args()
    t0 = time.perf_counter()
    jobs = [(d, f) for d in args.datasets for f in args.folds]
    # the big dataset first, so the two workers finish together
    jobs.sort(key=lambda j: (j[0] != "MQ2007-agg", j[1]))
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        futs = [pool.submit(run_fold, d, f, args.rounds) for d, f in jobs]
        results = [fu.result() for fu in futs]
    all_folds = {
        d: sorted((r for r in results if r["dataset"] == d), key=lambda r: r["fold"])
        for d in args.datasets
    }
    from importlib.metadata import version

    import lightgbm
    import ranx  # noqa: F401

    elapsed = time.perf_counter() - t0
    parts = [
        f"Generated by `experiments/metasearch.py` in {elapsed:.0f} s (wall clock, "
        f"{args.workers} worker processes; folds {args.folds}, {args.rounds} RankBoost rounds). "
        f"ranx {version('ranx')}, LightGBM {lightgbm.__version__}.",
        "",
    ]
    summaries = {}
    for d, folds in all_folds.items():
        summaries[d] = _summary(folds)
        parts.append(_tables(d, folds, summaries[d]))
        parts.append(_curve_text(folds))
        parts.append("Fold times (s): " + ", ".join(f"{f['seconds']:.0f}" for f in folds) + "\n")
    text = "\n".join(parts)
    print(text)
    if args.write_docs:
        (DOCS / "img").mkdir(parents=True, exist_ok=True)
        _plot(all_folds, DOCS / "img" / "metasearch_rloss.png")
        _write_doc(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
