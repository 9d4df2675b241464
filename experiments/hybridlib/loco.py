"""Issue 33: BM25 + all-MiniLM-L6-v2 on four collections, defaults chosen leave-one-collection-out.

Collections: CISI, MED, CACM, LISA (:mod:`hybridlib.corpora`; Cranfield is kept aside). On
each collection one fixed 5-fold split of the judged queries (:func:`folds_of`): every
supervised method is trained on four folds and scores the fifth, as a user with judged
queries of their own would. Methods (``rankboost`` = the library, ``ranx`` = the peer):

* ``convex``: convex combination of min-max scores, weight tuned on the training folds
  (grid 0, 0.05, ..., 1; ranx NDCG@10; this experiment's own code, not the library's);
* ``rrf``: reciprocal rank fusion, k = 60 (ranx); ``combsum``: 50/50 min-max sum (ranx);
* ``best``: the single run with the best training NDCG@10;
* ``boost`` (``RankFusion()``: the previous default), ``linear`` (``LinearFusion()``),
  ``boost_combsum`` (``RankFusion(prior="combsum")``), ``auto`` (``AutoFusion()``, which
  chooses among those families, the convex combination and RRF by inner cross-validation
  on the training folds), and two other rules of it: ``auto_convex_1se`` (fallback the
  convex combination, one standard error) and ``auto_convex_2se`` (two);
* ``adaptive_<signal>``: query-adaptive convex weights: the training queries are split at
  the median of a query-level signal (query length, dense top-1 minus top-10 cosine, BM25
  relative top-1/top-2 gap) and each half gets its own tuned weight;
* ``ranx_wsum``: ranx ``optimize_fusion`` (``wsum``, min-max, NDCG@10) for its time.

Leave-one-collection-out: ``loco`` is, for each collection, the configuration among
``boost``, ``linear``, ``boost_combsum``, ``convex_lib`` and the three AutoFusion rules with the
best NDCG@10
pooled over the queries of the *other* three collections, scored on the one left out. Run:
``PYTHONPATH=src .venv/bin/python experiments/hybrid.py --loco [--write-docs]``.
"""

from __future__ import annotations

import pickle
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .corpora import LOADERS, ROOT, dense_run, write_dense_run
from .methods import tuned_convex
from .protocol import (
    COLLECTIONS,
    METRICS,
    detectable,
    folds_of,
    paired_tests,
    per_query,
    run_folds,
    subset,
    top,
)

LIBRARY = ("boost", "linear", "boost_combsum", "convex_lib", "auto_convex_1se")
#: AutoFusion variants measured in a second pass (:func:`adaptive_all`); ``auto`` = the defaults
AUTO_VARIANTS = {"auto": {}, "auto_convex_2se": {"fallback": "convex", "threshold_se": 2.0}}
ORDER = (
    "loco",
    "auto",
    "convex",
    "rrf",
    "combsum",
    "best",
    "boost",
    "linear",
    "boost_combsum",
    "auto_convex_1se",
    "auto_convex_2se",
    "adaptive_qlen",
    "adaptive_dense_spread",
    "adaptive_bm25_gap",
)
OUT = ROOT / "build" / "hybrid_loco"
RUNS = ROOT / "experiments" / "data"


def bm25_run(docs: dict[str, str], queries: dict[str, str], depth: int = 100) -> Any:
    """BM25 (bm25s, Lucene variant, k1 = 1.2, b = 0.75, English stop words), top ``depth``."""
    import bm25s

    from .corpora import _top

    doc_ids = list(docs)
    tok = bm25s.tokenize([docs[d] for d in doc_ids], stopwords="en", show_progress=False)
    model = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    model.index(tok, show_progress=False)
    qids = list(queries)
    qtok = bm25s.tokenize([queries[q] for q in qids], stopwords="en", show_progress=False,
                          return_ids=False)  # fmt: skip
    rows: list[tuple] = []
    for q, toks in zip(qids, qtok, strict=True):
        s = model.get_scores(list(toks))
        keep = s > 0
        rows += _top(np.where(keep, s, -np.inf), doc_ids, q, min(depth, int(keep.sum())))
    return rows


def collection_runs(name: str) -> tuple[dict, dict]:
    """({"bm25": Run, "minilm": Run}, qrels) of a collection; writes the committed BM25 run."""
    from rankboost.fusion import read_run

    docs, queries, qrels = LOADERS[name]()
    path = RUNS / f"{name}_bm25.run.gz"
    write_dense_run(bm25_run(docs, queries), path, tag="bm25")  # reproducible bytes
    bm25 = read_run(path, name="bm25")
    dense = dense_run(docs, queries, rebuild=False, collection=name)
    # a query BM25 returns nothing for would be missing from one run: keep common queries
    common = sorted(set(bm25.queries) & set(dense.queries) & set(qrels))
    runs = {"bm25": subset(bm25, set(common)), "minilm": subset(dense, set(common))}
    return runs, {q: qrels[q] for q in common}


def _lib(kind: str, runs_tr: list, qrels_tr: Any) -> Any:
    from rankboost.fusion import RankFusion
    from rankboost.fusion.auto import AutoFusion, _fit_one
    from rankboost.fusion.linear import LinearFusion

    if kind == "boost":
        return RankFusion().fit(runs_tr, qrels_tr)
    if kind == "linear":
        return LinearFusion().fit(runs_tr, qrels_tr)
    if kind == "boost_combsum":
        return RankFusion(prior="combsum").fit(runs_tr, qrels_tr)
    if kind == "convex_lib":
        return _fit_one("convex", runs_tr, qrels_tr)
    return AutoFusion(fallback="convex", threshold_se=1.0).fit(runs_tr, qrels_tr)


def loco_fold(args: tuple) -> dict:
    """Every method on one (collection, fold): per-query measures, seconds, choices."""
    from ranx import Qrels as RanxQrels
    from ranx import fuse, optimize_fusion

    from rankboost.fusion import Qrels

    from .protocol import _warm_up, ranx_run

    name, runs, qrels, train_q, test_q, fold = args
    _warm_up()
    tr, te = set(train_q), set(test_q)
    runs_tr = [subset(r, tr) for r in runs.values()]
    runs_te = [subset(r, te) for r in runs.values()]
    qrels_tr = Qrels.from_dict({q: qrels[q] for q in train_q})
    out: dict[str, dict] = {}
    seconds: dict[str, float] = {}
    info: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = tuned_convex(runs_tr, runs_te, qrels, train_q, theoretical=False)
        out["convex"], seconds["convex"], info["convex_weight"] = (
            res["run"], res["seconds"], res["weight"])  # fmt: skip
        rx_te = [ranx_run(r) for r in runs_te]
        out["rrf"] = top(dict(fuse(rx_te, method="rrf", params={"k": 60})))
        out["combsum"] = top(dict(fuse(rx_te, norm="min-max", method="sum")))
        tr_nd = [per_query(qrels, r.to_dict(), train_q)["ndcg@10"].mean() for r in runs_tr]
        best = int(np.argmax(tr_nd))
        out["best"], info["best"] = top(runs_te[best].to_dict()), runs_te[best].name
        t0 = time.perf_counter()
        rx_tr = [ranx_run(r) for r in runs_tr]
        best_params = optimize_fusion(RanxQrels({q: qrels[q] for q in train_q}), rx_tr,
                                      norm="min-max", method="wsum", metric="ndcg@10",
                                      show_progress=False)  # fmt: skip
        out["ranx_wsum"] = top(dict(fuse(rx_te, norm="min-max", method="wsum",
                                         params=best_params)))  # fmt: skip
        seconds["ranx_wsum"] = time.perf_counter() - t0
        for kind in LIBRARY:
            t0 = time.perf_counter()
            model = _lib(kind, runs_tr, qrels_tr)
            out[kind] = top(model.fuse(runs_te).to_dict())
            seconds[kind] = time.perf_counter() - t0
            if kind == "auto_convex_1se":
                info["auto_family"] = model.family_
                info["auto_table"] = model.selection_["candidates"]
    pq = {k: per_query(qrels, v, test_q) for k, v in out.items()}
    return {"collection": name, "fold": fold, "queries": list(test_q), "pq": pq,
            "seconds": seconds, "info": info}  # fmt: skip


def run_all(workers: int = 2) -> list[dict]:
    """Every (collection, fold) job, 2 worker processes by default; results kept in OUT."""
    return run_folds(collection_runs, loco_fold, OUT, workers)


def pooled(results: list[dict]) -> dict[str, dict[str, dict[str, np.ndarray]]]:
    """{collection: {method: {metric: per-query values}}} over the test folds, plus ``loco``."""
    per: dict[str, dict[str, dict[str, list]]] = {}
    for r in sorted(results, key=lambda r: (r["collection"], r["fold"])):
        c = per.setdefault(r["collection"], {})
        for k, v in r["pq"].items():
            for m in METRICS:
                c.setdefault(k, {}).setdefault(m, []).append(v[m])
    pq = {c: {k: {m: np.concatenate(v[m]) for m in METRICS} for k, v in d.items()}
          for c, d in per.items()}  # fmt: skip
    for c in pq:  # leave-one-collection-out choice among the library's configurations
        others = [o for o in pq if o != c]
        lib = [k for k in (*LIBRARY, *AUTO_VARIANTS) if k in pq[c]]
        score = {k: np.concatenate([pq[o][k]["ndcg@10"] for o in others]).mean() for k in lib}
        choice = max(lib, key=lambda k: score[k])
        pq[c]["loco"] = dict(pq[c][choice])
        pq[c]["loco"]["choice"] = choice  # type: ignore[assignment]
    return pq


def _row(label: str, a: np.ndarray, refs: dict[str, np.ndarray]) -> str:
    cells = [label, f"{a.mean():.4f}"]
    for ref in refs.values():
        d, p_t, p_r = paired_tests(a, ref)
        cells.append(f"{d:+.4f} (p {p_t:.3f} / {p_r:.3f}; ±{detectable(a, ref):.4f})")
    return "| " + " | ".join(cells) + " |"


def tables(results: list[dict]) -> str:
    """Per-collection and pooled tables (NDCG@10; MAP@100 of the headline rows)."""
    pq = pooled(results)
    lines: list[str] = []
    refs = ("convex", "rrf", "best")
    for c in [*COLLECTIONS, "pooled"]:
        if c == "pooled":
            data = {k: {m: np.concatenate([pq[x][k][m] for x in COLLECTIONS]) for m in METRICS}
                    for k in ORDER if k in pq[COLLECTIONS[0]]}  # fmt: skip
            n = data["auto"]["ndcg@10"].shape[0]
            head = f"**Pooled over the {n} queries of the four collections** (NDCG@10)"
        else:
            data = pq[c]
            n = data["auto"]["ndcg@10"].shape[0]
            head = (f"**{c.upper()}** ({n} queries; `loco` = `{pq[c]['loco']['choice']}`, "
                    "chosen on the other three)")  # fmt: skip
        lines += ["", head, "",
                  "| method | NDCG@10 | vs convex (p t / rand; detectable) | vs RRF "
                  "| vs best single |",
                  "|---|---:|---:|---:|---:|"]  # fmt: skip
        r = {k: data[k]["ndcg@10"] for k in refs}
        for k in ORDER:
            if k in data:
                lines.append(_row(k, data[k]["ndcg@10"], r))
        lines.append("")
        maps = [f"{k} {data[k]['map@100'].mean():.4f}" for k in ("auto", "convex", "rrf", "best")]
        lines.append("MAP@100: " + ", ".join(maps))
    from .headroom import headroom, weight_curves

    curves = {c: weight_curves(*collection_runs(c)) for c in COLLECTIONS}
    lines.append(headroom(pq, curves, COLLECTIONS))
    # choices and times
    lines += ["", "**What the AutoFusion rules chose per fold, and seconds per fold (train + "
              "apply, medians)**", "",
              "| collection | `auto` (defaults) | `auto_convex_1se` | BM25 weight of `convex` | "
              "`auto` s | boost s | linear s | ranx optimize_fusion s |",
              "|---|---|---|---|---:|---:|---:|---:|"]  # fmt: skip
    for c in COLLECTIONS:
        rs = sorted((r for r in results if r["collection"] == c), key=lambda r: r["fold"])
        auto_s = "auto" if all("auto" in r["seconds"] for r in rs) else "auto_convex_1se"
        med = {k: np.median([r["seconds"][k] for r in rs])
               for k in (auto_s, "boost", "linear", "ranx_wsum")}  # fmt: skip
        med["auto_convex_1se"] = med[auto_s]
        new = [r["info"].get("adaptive_weights", {}).get("auto", ["-"])[0] for r in rs]
        lines.append(f"| {c} | {', '.join(new)} | "
                     f"{', '.join(r['info']['auto_family'] for r in rs)} | "
                     f"{', '.join(str(r['info']['convex_weight']) for r in rs)} | "
                     f"{med['auto_convex_1se']:.1f} | {med['boost']:.1f} | {med['linear']:.1f} | "
                     f"{med['ranx_wsum']:.1f} |")  # fmt: skip
    return "\n".join(lines)


def plot(results: list[dict], path: Path) -> None:
    """docs/img/hybrid_collections.png: NDCG@10 of auto, tuned convex, RRF, best per collection."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pq = pooled(results)
    shown = ("auto", "convex", "rrf", "best", "boost")
    labels = {
        "auto": "rankboost AutoFusion (defaults)",
        "convex": "tuned convex (min-max)",
        "rrf": "RRF k=60",
        "best": "best single run",
        "boost": "previous default (boost)",
    }
    cols = [*COLLECTIONS, "pooled"]
    fig, ax = plt.subplots(figsize=(8, 3.6))
    w = 0.16
    for i, k in enumerate(shown):
        every = np.concatenate([pq[x][k]["ndcg@10"] for x in COLLECTIONS]).mean()
        vals = [pq[c][k]["ndcg@10"].mean() if c != "pooled" else every for c in cols]
        ax.bar(np.arange(len(cols)) + (i - 2) * w, vals, w, label=labels[k])
    ax.set_xticks(np.arange(len(cols)), [c.upper() for c in cols])
    ax.set_ylabel("NDCG@10 (5-fold CV)")
    ax.set_title("BM25 + all-MiniLM-L6-v2, per collection (experiments/hybrid.py --loco)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


# ------------------------------------------------------------------ query-adaptive fusion -
SIGNALS = ("qlen", "dense_spread", "bm25_gap")


def query_signals(name: str, runs: dict) -> dict[str, dict[str, float]]:
    """Query-level signals: words in the query, the dense run's top-1 minus top-10 cosine
    (a confident vs a flat dense score distribution), BM25's relative top-1/top-2 gap."""
    _, queries, _ = LOADERS[name]()
    out: dict[str, dict[str, float]] = {s: {} for s in SIGNALS}
    for sig, run, fn in (
        ("dense_spread", runs["minilm"], lambda v: v[0] - v[min(9, len(v) - 1)]),
        ("bm25_gap", runs["bm25"], lambda v: (v[0] - v[1]) / v[0] if len(v) > 1 and v[0] else 0),
    ):
        for q, docs in run.to_dict().items():
            out[sig][q] = float(fn(np.sort(np.array(list(docs.values())))[::-1]))
    for q in out["dense_spread"]:
        out["qlen"][q] = float(len(queries[q].split()))
    return out


def adaptive_fold(args: tuple) -> dict:
    """Convex weights per group of queries split at the training median of a query signal,
    and the :data:`AUTO_VARIANTS`."""
    from .protocol import _warm_up

    name, runs, qrels, train_q, test_q, fold, signals = args
    _warm_up()
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for sig in SIGNALS:
            v = signals[sig]
            cut = float(np.median([v[q] for q in train_q]))
            fused: dict = {}
            weights = []
            for side in (False, True):
                tr = [q for q in train_q if (v[q] > cut) == side]
                te = [q for q in test_q if (v[q] > cut) == side]
                if not te:
                    continue
                if len(tr) < 3:  # too few to tune: the whole training set's weight
                    tr = list(train_q)
                res = tuned_convex([subset(r, set(tr)) for r in runs.values()],
                                   [subset(r, set(te)) for r in runs.values()],
                                   qrels, tr, theoretical=False)  # fmt: skip
                fused.update(res["run"])
                weights.append(res["weight"])
            out[f"adaptive_{sig}"] = (fused, weights)
        from rankboost.fusion import Qrels
        from rankboost.fusion.auto import AutoFusion

        tr, te = set(train_q), set(test_q)
        runs_tr = [subset(r, tr) for r in runs.values()]
        runs_te = [subset(r, te) for r in runs.values()]
        qrels_tr = Qrels.from_dict({q: qrels[q] for q in train_q})
        seconds = {}
        for k, params in AUTO_VARIANTS.items():
            t0 = time.perf_counter()
            model = AutoFusion(**params).fit(runs_tr, qrels_tr)  # type: ignore[arg-type]
            out[k] = (top(model.fuse(runs_te).to_dict()), [model.family_])
            seconds[k] = time.perf_counter() - t0
    pq = {k: per_query(qrels, v[0], test_q) for k, v in out.items()}
    return {"collection": name, "fold": fold, "pq": pq, "seconds": seconds,
            "weights": {k: v[1] for k, v in out.items()}}  # fmt: skip


def adaptive_all(results: list[dict], workers: int = 2) -> list[dict]:
    """Add the query-adaptive methods to ``results`` (same collections and folds)."""
    from concurrent.futures import ProcessPoolExecutor

    jobs = []
    for name in COLLECTIONS:
        runs, qrels = collection_runs(name)
        sig = query_signals(name, runs)
        folds = folds_of(sorted(qrels))
        for f, test_q in enumerate(folds):
            train_q = sorted(q for g, fq in enumerate(folds) if g != f for q in fq)
            jobs.append((name, runs, qrels, train_q, test_q, f + 1, sig))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        extra = list(pool.map(adaptive_fold, jobs))
    key = {(e["collection"], e["fold"]): e for e in extra}
    for r in results:
        e = key[(r["collection"], r["fold"])]
        r["pq"].update(e["pq"])
        r["seconds"].update(e.get("seconds", {}))
        r["info"]["adaptive_weights"] = e["weights"]
    (OUT / "folds.pkl").write_bytes(pickle.dumps(results))
    return results
