"""The hybrid table: BM25 + all-MiniLM-L6-v2 (and the lexical runs) fused by every method."""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from .corpora import DEPTH, ROOT, build_runs, dense_run, load_cisi
from .protocol import (
    METRICS,
    N_FOLDS,
    _rankboost,
    _warm_up,
    collect,
    detectable,
    folds_of,
    paired_tests,
    per_query,
    ranx_run,
    split_fold,
    top,
)

# ------------------------------------------------------------------ hybrid: BM25 + MiniLM -
#: Theoretical minimum of each run's score for TM2C2 (Bruch et al. 2023): BM25 and the other
#: lexical scores are >= 0, cosines >= -1; the Dirichlet log-likelihood has none (observed min).
THEORETICAL_MIN = {"bm25": 0.0, "bm25_stem": 0.0, "tfidf": 0.0, "rm3": 0.0, "lsa": -1.0,
                   "minilm": -1.0}  # fmt: skip
CC_GRID = np.round(np.linspace(0.0, 1.0, 21), 2)


def _normalised(run: Any, theoretical: bool) -> dict[str, dict[str, float]]:
    """{q: {d: (s - lo) / (hi - lo)}}: lo = the observed or theoretical minimum, hi = the max."""
    out: dict[str, dict[str, float]] = {}
    for q, docs in run.to_dict().items():
        v = np.array(list(docs.values()))
        lo = THEORETICAL_MIN.get(run.name, v.min()) if theoretical else v.min()
        span = v.max() - lo
        out[q] = {d: ((x - lo) / span if span > 0 else 1.0) for d, x in docs.items()}
    return out


def _convex(na: dict, nb: dict, a: float) -> dict:
    """a * n_a + (1 - a) * n_b, a document a run did not return getting 0 from it."""
    out = {}
    for q in set(na) | set(nb):
        da, db = na.get(q, {}), nb.get(q, {})
        out[q] = {d: a * da.get(d, 0.0) + (1 - a) * db.get(d, 0.0) for d in set(da) | set(db)}
    return top(out)


def tuned_convex(runs_tr: list, runs_te: list, qrels: dict, train_q: list[str],
                 theoretical: bool) -> dict:  # fmt: skip
    """The convex combination of two runs, weight tuned on the training queries (NDCG@10).

    ``theoretical=True`` is TM2C2 (Bruch et al. 2023, theoretical-minimum min-max), else the
    observed min-max (the 'tuned convex combination of min-max scores'). The weight grid is
    0, 0.05, ..., 1; the first best weight wins.
    """
    t0 = time.perf_counter()
    na, nb = (_normalised(r, theoretical) for r in runs_tr)
    nd = [float(per_query(qrels, _convex(na, nb, a), train_q)["ndcg@10"].mean()) for a in CC_GRID]
    a = float(CC_GRID[int(np.argmax(nd))])
    ta, tb = (_normalised(r, theoretical) for r in runs_te)
    return {"run": _convex(ta, tb, a), "seconds": time.perf_counter() - t0, "weight": a}


def _linear(runs_tr: list, qrels_tr: Any, runs_te: list, params: dict) -> dict:
    from rankboost.fusion.linear import LinearFusion

    t0 = time.perf_counter()
    lin = LinearFusion(**params).fit(runs_tr, qrels_tr)
    fused = lin.fuse(runs_te, depth=DEPTH)
    return {
        "run": fused.to_dict(),
        "seconds": time.perf_counter() - t0,
        "weights": lin.weights_.round(3).tolist(),
        "prior_scale": lin.prior_scale_,
        "n_rounds": lin.n_rounds_,
        "cv_best": None if lin.cv_results_ is None else float(lin.cv_results_["mean"].max()),
    }


def hybrid_fold(runs: dict, qrels: dict, train_q: list[str], test_q: list[str], fold: int,
                variants: dict) -> dict:  # fmt: skip
    """The headline comparison on one fold, for the given runs (two or more)."""
    from ranx import Qrels as RanxQrels
    from ranx import fuse, optimize_fusion

    runs_tr, runs_te, qrels_tr, out, train_nd = split_fold(runs, qrels, train_q, test_q)
    rx_tr = [ranx_run(r) for r in runs_tr]
    rx_te = [ranx_run(r) for r in runs_te]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out["ranx:rrf"] = {"run": top(fuse(rx_te, method="rrf").to_dict())}
        out["ranx:sum"] = {"run": top(fuse(rx_te, norm="min-max", method="sum").to_dict())}
        t0 = time.perf_counter()
        step = 0.05 if len(runs) == 2 else 0.2
        params = optimize_fusion(RanxQrels({q: qrels[q] for q in train_q}), rx_tr,
                                 norm="min-max", method="wsum", metric="ndcg@10", step=step,
                                 show_progress=False)  # fmt: skip
        t_opt = time.perf_counter() - t0
        out["ranx_opt:wsum"] = {
            "run": top(fuse(rx_te, norm="min-max", method="wsum", params=params).to_dict()),
            "seconds": t_opt, "weights": np.round(params["weights"], 2).tolist()}  # fmt: skip
    if len(runs) == 2:
        out["cc_minmax"] = tuned_convex(runs_tr, runs_te, qrels, train_q, False)
        out["tm2c2"] = tuned_convex(runs_tr, runs_te, qrels, train_q, True)
    for key, (kind, params) in variants.items():
        fn = _linear if kind == "linear" else _rankboost
        out[key] = fn(runs_tr, qrels_tr, runs_te, params)
    return {"fold": fold, "test": test_q, "methods": out}


def _hybrid_job(args: tuple) -> dict:
    _warm_up()
    return hybrid_fold(*args)


HYBRID_VARIANTS: dict[str, tuple[str, dict]] = {
    "rankboost": ("rankfusion", {}),
    "prior_combsum": ("rankfusion", {"prior": "combsum", "max_rounds": 100}),
    "prior_rrf": ("rankfusion", {"prior": "rrf", "max_rounds": 100}),
    "prior_combsum_scores": (
        "rankfusion",
        {"prior": "combsum", "max_rounds": 100, "score_features": "minmax+zscore+rrf"},
    ),
    "scores": ("rankfusion", {"score_features": "minmax+zscore+rrf"}),
    "linear_minmax": ("linear", {"normalizer": "minmax"}),
    "linear_rrf": ("linear", {"normalizer": "rrf"}),
}


def hybrid_table(pq: dict, ref: str, folds: list[dict]) -> str:
    """Rows sorted by NDCG@10, paired tests against ``ref``."""
    base = pq[ref]
    rows = [f"| Method | NDCG@10 | MAP@100 | R@100 | Δ NDCG@10 vs {_hlabel(ref)} | p (t / rand) "
            "| detectable Δ | Δ MAP | p (t / rand) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for n in sorted(pq, key=lambda n: -pq[n]["ndcg@10"].mean()):
        v = pq[n]
        cells = [f"{v[m].mean():.4f}" for m in METRICS]
        if n == ref:
            cells += ["", "", "", "", ""]
        else:
            for m in ("ndcg@10", "map@100"):
                d, pt, pr = paired_tests(base[m], v[m])
                cells += [f"{d:+.4f}", f"{pt:.3f} / {pr:.3f}"]
                if m == "ndcg@10":
                    cells.append(f"{detectable(base[m], v[m]):.4f}")
        rows.append(f"| {_hlabel(n)} | " + " | ".join(cells) + " |")
    extra = [
        "",
        "detectable Δ: the smallest mean NDCG@10 difference a paired t-test over these "
        "queries detects with 80% power at p < 0.05 (two-sided), from the per-query "
        "differences' standard deviation: (t_0.975 + t_0.8) sd / sqrt(n).",
        "",
    ]
    for key in pq:
        if key.startswith("linear"):
            extra.append(f"{_hlabel(key)} weights per fold: "
                         + "; ".join(f"{f['methods'][key]['weights']} (prior "
                                     f"{f['methods'][key]['prior_scale']}, "
                                     f"{f['methods'][key]['n_rounds']} rounds)"
                                     for f in folds) + ".")  # fmt: skip
    if "cc_minmax" in pq:
        extra.append("Tuned convex weight of the first run, per fold: min-max "
                     + str([f["methods"]["cc_minmax"]["weight"] for f in folds]) + ", TM2C2 "
                     + str([f["methods"]["tm2c2"]["weight"] for f in folds]) + ".")  # fmt: skip
    extra.append(
        "ranx wsum weights per fold: "
        + "; ".join(str(f["methods"]["ranx_opt:wsum"]["weights"]) for f in folds)
        + "."
    )
    for key in pq:
        m0 = folds[0]["methods"][key]
        if m0.get("cv_best") is not None:
            cvs = [f["methods"][key]["cv_best"] for f in folds]
            extra.append(
                f"{_hlabel(key)}: inner-CV NDCG@10 on the training queries (the choice's "
                f"score) mean {np.mean(cvs):.4f}, per fold "
                + " ".join(f"{x:.4f}" for x in cvs)
                + "; rounds "
                + str([f["methods"][key]["n_rounds"] for f in folds])
                + ", prior scale "
                + str([f["methods"][key].get("prior_scale", 0.0) for f in folds])
                + "."
            )
    timed = [k for k in folds[0]["methods"] if "seconds" in folds[0]["methods"][k]]
    extra += ["", "| Train + apply per fold (s) | median | per fold |", "|---|---:|---|"]
    for k in timed:
        sec = [f["methods"][k]["seconds"] for f in folds]
        extra.append(f"| {_hlabel(k)} | {np.median(sec):.2f} | "
                     + " ".join(f"{x:.2f}" for x in sec) + " |")  # fmt: skip
    return "\n".join(rows + [""] + extra) + "\n"


HLABELS = {
    "rankboost": "rankboost fuse (defaults)",
    "linear_minmax": "rankboost fuse --family linear (min-max)",
    "linear_rrf": "rankboost fuse --family linear --normalizer rrf",
    "prior_combsum": "rankboost fuse --prior combsum",
    "prior_rrf": "rankboost fuse --prior rrf",
    "prior_combsum_scores": "rankboost fuse --prior combsum --score-features minmax+zscore+rrf",
    "scores": "rankboost fuse --score-features minmax+zscore+rrf",
    "cc_minmax": "convex combination of min-max scores, weight tuned on train",
    "tm2c2": "TM2C2 (theoretical min-max), weight tuned on train",
    "ranx:rrf": "RRF, k = 60 (ranx)",
    "ranx:sum": "CombSUM of min-max scores (50/50)",
    "ranx_opt:wsum": "ranx wsum (optimize_fusion)",
    "best_single": "best single run (chosen on train)",
}


def _hlabel(n: str) -> str:
    if n in HLABELS:
        return HLABELS[n]
    if n.startswith("run:"):
        return f"run {n[4:]}"
    return n


def hybrid_main(names: list[str], workers: int, variants: dict, ref: str = "rankboost",
                reuse: bool = False) -> str:  # fmt: skip
    """The headline table for the runs ``names`` (e.g. bm25 minilm), 5 folds pooled.

    ``reuse``: tabulate the fold results kept by an earlier run of the same command
    (``build/hybrid/hybrid_*.pkl``) instead of computing them.
    """
    import pickle
    from concurrent.futures import ProcessPoolExecutor

    kept = ROOT / "build" / "hybrid" / f"hybrid_{'_'.join(names)}_{'_'.join(variants)}.pkl"
    if reuse:
        _, _, qrels = load_cisi()
        with kept.open("rb") as fh:
            results = pickle.load(fh)
        pq = collect(results, qrels)
        return hybrid_table(pq, ref if ref in pq else next(iter(variants)), results)
    docs, queries, qrels = load_cisi()
    lexical = build_runs(docs, queries)
    allruns = {**lexical, "minilm": dense_run(docs, queries)}
    runs = {n: allruns[n] for n in names}
    folds = folds_of(sorted(qrels))
    jobs = []
    for f in range(N_FOLDS):
        train_q = sorted(q for g, fq in enumerate(folds) if g != f for q in fq)
        jobs.append((runs, qrels, train_q, folds[f], f + 1, variants))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = sorted(pool.map(_hybrid_job, jobs), key=lambda r: r["fold"])
    kept.parent.mkdir(parents=True, exist_ok=True)
    with kept.open("wb") as fh:
        pickle.dump(results, fh)  # the fold results, to re-tabulate without re-running
    pq = collect(results, qrels)
    return hybrid_table(pq, ref if ref in pq else next(iter(variants)), results)
