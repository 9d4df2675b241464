"""The cross-validation protocol of the hybrid benchmark: folds, fusion methods, statistics."""

from __future__ import annotations

import pickle
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .corpora import DEPTH

N_FOLDS = 5
SEED = 17
METRICS = ("ndcg@10", "map@100", "recall@100")
#: the four collections of the leave-one-collection-out runs (``loco``, ``lexical``)
COLLECTIONS = ("cisi", "med", "cacm", "lisa")


# ------------------------------------------------------------------ protocol -------------
def folds_of(queries: list[str], k: int = N_FOLDS, seed: int = SEED) -> list[list[str]]:
    """One fixed k-fold split of the queries: a seeded permutation, query i to fold i mod k."""
    perm = np.random.default_rng(seed).permutation(len(queries))
    return [sorted(queries[j] for j in perm[f::k]) for f in range(k)]


def run_folds(
    runs_of: Callable[[str], tuple[dict, dict]],
    fold: Callable[[tuple], dict],
    out: Path,
    workers: int = 2,
) -> list[dict]:
    """``fold((name, runs, qrels, train_q, test_q, k))`` of every (collection, fold) job.

    ``runs_of(name)`` gives a collection's runs and qrels; the jobs run in ``workers``
    processes and their results are kept in ``out / "folds.pkl"`` (``--reuse`` reads it).
    """
    from concurrent.futures import ProcessPoolExecutor

    jobs = []
    for name in COLLECTIONS:
        runs, qrels = runs_of(name)
        folds = folds_of(sorted(qrels))
        for f, test_q in enumerate(folds):
            train_q = sorted(q for g, fq in enumerate(folds) if g != f for q in fq)
            jobs.append((name, runs, qrels, train_q, test_q, f + 1))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(fold, jobs))
    out.mkdir(parents=True, exist_ok=True)
    (out / "folds.pkl").write_bytes(pickle.dumps(results))
    return results


def subset(run: Any, queries: set[str]) -> Any:
    """The entries of ``run`` for ``queries`` only."""
    from rankboost.fusion import Run

    keep = np.isin(run.qid, np.asarray(sorted(queries)))
    return Run(run.qid[keep], run.docid[keep], run.rank[keep], run.score[keep], name=run.name)


def ranx_run(run: Any, name: str | None = None) -> Any:
    from ranx import Run as RanxRun

    return RanxRun(run.to_dict(), name=name or run.name)


def per_query(qrels: dict, run: dict, queries: list[str]) -> dict[str, np.ndarray]:
    """ranx per-query NDCG@10, MAP@100 and R@100 of ``run`` ({qid: {doc: score}}), in order."""
    from ranx import Qrels as RanxQrels
    from ranx import Run as RanxRun
    from ranx import evaluate

    rq = RanxQrels({q: qrels[q] for q in queries})
    rr = RanxRun({q: run.get(q, {"__none__": -1e9}) for q in queries})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = evaluate(rq, rr, list(METRICS), return_mean=False, make_comparable=True)
    return {m: np.asarray(out[m], dtype=np.float64) for m in METRICS}


def top(run_dict: dict, depth: int = DEPTH) -> dict:
    """Keep the top ``depth`` documents per query of a {qid: {doc: score}} run."""
    return {
        q: dict(sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))[:depth])
        for q, d in run_dict.items()
    }


UNSUPERVISED = ("sum", "mnz", "anz", "max", "min", "med", "isr", "log_isr", "logn_isr",
                "bordafuse", "condorcet", "rrf")  # fmt: skip
# ranx optimize_fusion: the weighted sum on a grid of step 0.2 (the 252 weight vectors over six
# runs that sum to 1; ranx's default step 0.1 gives 2,486 vectors, about 10 times the time, too
# slow for five folds on the shared 2-core machine), wmnz and mixed on step 0.25 (126 vectors),
# the weighted Borda and Condorcet fusions (about 0.5 s per weight vector in ranx) on step 0.5
# (21 vectors), 23-point parameter sweeps (0.01 to 1), up to 25 segments / window sizes (the
# runs have 100 documents), and the trained probabilities
SUPERVISED = {
    "wsum": {"step": 0.2},
    "wmnz": {"step": 0.25},
    "mixed": {"step": 0.25},
    "w_bordafuse": {"step": 0.5},
    "w_condorcet": {"step": 0.5},
    "gmnz": {"step": 0.045},
    "logn_isr": {"step": 0.045},
    "rbc": {"step": 0.045},
    "rrf": {},
    "probfuse": {"max_n_segments": 25},
    "slidefuse": {"max_w": 25},
    "segfuse": {},
    "bayesfuse": {},
    "mapfuse": {},
    "posfuse": {},
}


def _rankboost(runs_tr: list, qrels_tr: Any, runs_te: list, params: dict) -> dict:
    from rankboost.fusion import RankFusion

    t0 = time.perf_counter()
    fusion = RankFusion(**params).fit(runs_tr, qrels_tr)
    fused = fusion.fuse(runs_te, depth=DEPTH)
    res = fusion.cv_results_
    cv = res["mean"].tolist() if res is not None and "scale" not in res else None
    return {"run": fused.to_dict(), "seconds": time.perf_counter() - t0,
            "n_rounds": fusion.n_rounds_, "cv_mean": cv,
            "cv_best": None if res is None else float(res["best_score"]),
            "prior_scale": getattr(fusion, "prior_scale_", 0.0)}  # fmt: skip


def _lightgbm(runs_tr: list, qrels_tr: Any, runs_te: list, params: dict) -> dict:
    """LightGBM lambdarank on RankFusion's features; early stopping on 20% of train queries."""
    import lightgbm as lgb

    from rankboost.fusion import RankFusion, Run, grades_for

    t0 = time.perf_counter()
    proto = RankFusion(**params)
    f = proto.features(runs_tr)
    y = grades_for(f, qrels_tr)
    qs = sorted(set(f.qid.tolist()))
    held = set(folds_of(qs, 5, SEED + 1)[0])
    va = np.isin(f.qid, np.asarray(sorted(held)))

    def ds(mask: np.ndarray, ref: Any = None) -> Any:
        _, first, counts = np.unique(f.qid[mask], return_index=True, return_counts=True)
        return lgb.Dataset(f.X[mask], y[mask], group=counts[np.argsort(first)], reference=ref,
                           free_raw_data=False)  # fmt: skip

    # rows are grouped by query already (fusion_features), so the group sizes line up
    dtr = ds(~va)
    dva = ds(va, dtr)
    lp = {"objective": "lambdarank", "metric": "ndcg", "ndcg_eval_at": [10],
          "learning_rate": 0.05, "num_leaves": 15, "min_data_in_leaf": 20,
          "num_threads": 1, "verbose": -1, "seed": 0, "deterministic": True}  # fmt: skip
    booster = lgb.train(lp, dtr, num_boost_round=1000, valid_sets=[dva],
                        callbacks=[lgb.early_stopping(50, verbose=False)])  # fmt: skip
    ft = proto.features(runs_te)
    pred = booster.predict(ft.X, num_iteration=booster.best_iteration)
    fused = Run.from_scores(ft.qid, ft.docid, pred, name="lightgbm")
    return {"run": top(fused.to_dict()), "seconds": time.perf_counter() - t0,
            "n_rounds": int(booster.best_iteration)}  # fmt: skip


def split_fold(runs: dict, qrels: dict, train_q: list[str], test_q: list[str]) -> tuple:
    """A fold's runs on its training and test queries, its training qrels, and what every
    method table starts from: each single run on the test queries, the best one chosen on the
    training queries (NDCG@10), and each run's training NDCG@10."""
    from rankboost.fusion import Qrels

    tr, te = set(train_q), set(test_q)
    runs_tr = [subset(r, tr) for r in runs.values()]
    runs_te = [subset(r, te) for r in runs.values()]
    qrels_tr = Qrels.from_dict({q: qrels[q] for q in train_q})
    out: dict[str, dict] = {}
    train_nd = {}
    for name, r in runs.items():
        out[f"run:{name}"] = {"run": subset(r, te).to_dict()}
        train_nd[name] = float(per_query(qrels, subset(r, tr).to_dict(), train_q)["ndcg@10"].mean())
    best = max(train_nd, key=lambda n: train_nd[n])
    out["best_single"] = dict(out[f"run:{best}"], chosen=best)
    return runs_tr, runs_te, qrels_tr, out, train_nd


def run_fold(runs: dict, qrels: dict, train_q: list[str], test_q: list[str],
             fold: int, rb_params: dict, ranx_methods: bool = True,
             ranx_cache: Path | None = None) -> dict:  # fmt: skip
    """Every method on one fold: {method: {"run": test run dict, "seconds": ..., ...}}."""
    runs_tr, runs_te, qrels_tr, out, train_nd = split_fold(runs, qrels, train_q, test_q)

    out["rankboost"] = _rankboost(runs_tr, qrels_tr, runs_te, rb_params)
    out["lightgbm"] = _lightgbm(runs_tr, qrels_tr, runs_te, rb_params)

    if ranx_methods:
        out.update(cached_ranx_fold(runs, qrels, train_q, test_q, ranx_cache))
    return {"fold": fold, "test": test_q, "methods": out, "train_ndcg": train_nd}


def ranx_fold(runs: dict, qrels: dict, train_q: list[str], test_q: list[str]) -> dict:
    """Every ranx fusion method on one fold (supervised ones tuned on ``train_q``)."""
    from ranx import Qrels as RanxQrels
    from ranx import fuse, optimize_fusion

    tr, te = set(train_q), set(test_q)
    runs_tr = [subset(r, tr) for r in runs.values()]
    runs_te = [subset(r, te) for r in runs.values()]
    out: dict[str, dict] = {}
    rx_tr = [ranx_run(r) for r in runs_tr]
    rx_te = [ranx_run(r) for r in runs_te]
    rq_tr = RanxQrels({q: qrels[q] for q in train_q})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m in UNSUPERVISED:
            fused = fuse(rx_te, norm="min-max", method=m)
            out[f"ranx:{m}"] = {"run": top(fused.to_dict())}
        for m, kw in SUPERVISED.items():
            t0 = time.perf_counter()
            extra = {} if m in ("bayesfuse", "mapfuse", "posfuse", "segfuse") else {
                "show_progress": False}  # fmt: skip
            params = optimize_fusion(rq_tr, rx_tr, norm="min-max", method=m,
                                     metric="ndcg@10", **kw, **extra)  # fmt: skip
            t_opt = time.perf_counter() - t0
            fused = fuse(rx_te, norm="min-max", method=m, params=params)
            keys = ("weights", "k", "phi", "gamma", "sigma", "w")
            shown = {k: (np.round(v, 2).tolist() if k == "weights" else v)
                     for k, v in params.items() if k in keys}  # fmt: skip
            out[f"ranx_opt:{m}"] = {"run": top(fused.to_dict()), "seconds": t_opt,
                                    "params": shown}  # fmt: skip
    return out


def cached_ranx_fold(runs: dict, qrels: dict, train_q: list[str], test_q: list[str],
                     cache: Path | None) -> dict:  # fmt: skip
    """:func:`ranx_fold`, kept in ``cache`` (a folder) under a hash of all its inputs.

    ranx's grid searches take minutes per fold and do not depend on rankboost, so a re-run
    after a change to rankboost reuses them; any change to the runs, the split, the method
    lists or the ranx version gives another hash (another file).
    """
    import hashlib
    import pickle
    from importlib.metadata import version

    if cache is None:
        return ranx_fold(runs, qrels, train_q, test_q)
    h = hashlib.sha256()
    for r in runs.values():
        for a in (r.qid, r.docid, r.rank, r.score):
            h.update(np.ascontiguousarray(a).tobytes())
    h.update(repr((train_q, test_q, sorted(qrels.items()), UNSUPERVISED, SUPERVISED,
                   version("ranx"), DEPTH)).encode())  # fmt: skip
    path = cache / f"ranx_{h.hexdigest()[:16]}.pkl"
    if path.is_file():
        with path.open("rb") as fh:
            return dict(pickle.load(fh))
    out = ranx_fold(runs, qrels, train_q, test_q)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("wb") as fh:
        pickle.dump(out, fh)
    tmp.replace(path)
    return out


# ------------------------------------------------------------------ statistics -----------
def paired_tests(a: np.ndarray, b: np.ndarray, n_perm: int = 10000, seed: int = 0) -> tuple:
    """(mean difference, paired t-test p, paired randomisation test p), two-sided."""
    from scipy import stats

    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if not np.any(d):
        return 0.0, 1.0, 1.0
    p_t = float(stats.ttest_rel(a, b).pvalue)
    rng = np.random.default_rng(seed)
    signs = rng.choice([-1.0, 1.0], size=(n_perm, d.shape[0]))
    null = np.abs((signs * d).mean(axis=1))
    p_r = float((np.sum(null >= abs(d.mean()) - 1e-15) + 1) / (n_perm + 1))
    return float(d.mean()), p_t, p_r


def detectable(a: np.ndarray, b: np.ndarray, power: float = 0.8, alpha: float = 0.05) -> float:
    """Smallest mean paired difference a two-sided t-test detects with ``power`` at ``alpha``."""
    from scipy import stats

    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = d.shape[0]
    t = stats.t.ppf(1 - alpha / 2, n - 1) + stats.t.ppf(power, n - 1)
    return float(t * d.std(ddof=1) / np.sqrt(n))


def collect(folds: list[dict], qrels: dict) -> dict[str, dict[str, np.ndarray]]:
    """Per-query measures of every method over all test queries (fold by fold)."""
    names = list(folds[0]["methods"])
    out: dict[str, dict[str, list]] = {n: {m: [] for m in METRICS} for n in names}
    for f in folds:
        for n in names:
            pq = per_query(qrels, f["methods"][n]["run"], f["test"])
            for m in METRICS:
                out[n][m].append(pq[m])
    return {n: {m: np.concatenate(v) for m, v in d.items()} for n, d in out.items()}


LABELS = {
    "rankboost": "**rankboost fuse (defaults)**",
    "lightgbm": "LightGBM lambdarank (same features)",
    "best_single": "Best single run (chosen on train)",
}


def _label(name: str) -> str:
    if name in LABELS:
        return LABELS[name]
    kind, _, m = name.partition(":")
    return {"run": f"run {m}", "ranx": f"ranx {m}", "ranx_opt": f"ranx {m} (optimize_fusion)"}[kind]


def tables(folds: list[dict], pq: dict, rb_params: dict) -> str:
    ref = pq["rankboost"]
    rows = ["| Method | NDCG@10 | MAP@100 | R@100 | Δ NDCG@10 | p (t / rand) | Δ MAP | "
            "p (t / rand) |", "|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    order = sorted(pq, key=lambda n: -pq[n]["ndcg@10"].mean())
    for n in order:
        v = pq[n]
        cells = [f"{v[m].mean():.4f}" for m in METRICS]
        if n == "rankboost":
            cells += ["", "", "", ""]
        else:
            for m in ("ndcg@10", "map@100"):
                d, pt, pr = paired_tests(ref[m], v[m])
                cells += [f"{d:+.4f}", f"{pt:.3f} / {pr:.3f}"]
        rows.append(f"| {_label(n)} | " + " | ".join(cells) + " |")
    n_q = ref["ndcg@10"].shape[0]
    lines = [
        f"{n_q} test queries (5 folds pooled). Δ = rankboost fuse (defaults) minus the row's "
        "method, per query; p = paired t-test / paired randomisation test (10,000 sign flips), "
        "two-sided.",
        "",
        *rows,
        "",
    ]
    chosen = [f["methods"]["best_single"]["chosen"] for f in folds]
    rounds = [f["methods"]["rankboost"]["n_rounds"] for f in folds]
    lgb_rounds = [f["methods"]["lightgbm"]["n_rounds"] for f in folds]
    lines.append(
        f"Best single run on the training queries, folds 1-5: {', '.join(chosen)}. "
        f"`rankboost fuse` rounds chosen by `--rounds auto`: {rounds}; LightGBM early-stopping "
        f"rounds: {lgb_rounds}. RankFusion parameters: `{rb_params or 'defaults'}`."
    )
    if "ranx_opt:wsum" in folds[0]["methods"]:
        w = "; ".join(str(f["methods"]["ranx_opt:wsum"]["params"].get("weights")) for f in folds)
        lines.append(f"ranx wsum weights per fold (runs in the order {RUN_ORDER}): {w}.")
    lines += ["", "Train + apply time per fold (seconds; median over the 5 folds, then the "
              "per-fold values):", "",
              "| Method | median | per fold |", "|---|---:|---|"]  # fmt: skip
    timed = ["rankboost", "lightgbm"] + [n for n in folds[0]["methods"] if n.startswith("ranx_opt")]
    for n in timed:
        s = [f["methods"][n]["seconds"] for f in folds]
        what = " (optimize_fusion only)" if n.startswith("ranx_opt") else ""
        lines.append(
            f"| {_label(n)}{what} | {np.median(s):.2f} | " + " ".join(f"{x:.2f}" for x in s) + " |"
        )
    return "\n".join(lines) + "\n"


RUN_ORDER = ["bm25", "bm25_stem", "tfidf", "lsa", "lm_dir", "rm3"]


def _warm_up() -> None:
    """Compile the numba kernels once per process, so that fold times exclude compilation."""
    from rankboost.fusion import Qrels, RankFusion, Run

    qs = np.repeat([f"q{i}" for i in range(10)], 4)
    ds = np.tile(["a", "b", "c", "d"], 10)
    ranks = np.tile([1, 2, 3, 4], 10)
    runs = [Run(qs, ds, ranks, name="x"), Run(qs, ds, ranks[::-1], name="y")]
    RankFusion(max_rounds=3).fit(runs, Qrels(qs, ds, np.tile([1, 0, 1, 0], 10))).fuse(runs)
