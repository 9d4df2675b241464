"""Issue 33 goal: with all lexical runs added, ``auto`` at least the best single run everywhere.

On each of CISI, MED, CACM and LISA the six lexical runs of :func:`hybridlib.corpora.
build_runs` (BM25, stemmed BM25, TF-IDF, LSA, Dirichlet LM, RM3; parameters fixed a priori)
and all-MiniLM-L6-v2, on the queries every run answers; the same 5-fold split of the judged
queries as ``--loco`` (:func:`hybridlib.protocol.folds_of`). Methods: ``auto``
(``AutoFusion()``, the defaults of ``fuse train --family auto``), ``best`` (the single run
with the best NDCG@10 on the training folds), ``rrf`` (k = 60, ranx). Run:
``PYTHONPATH=src .venv/bin/python experiments/hybrid.py --loco-lexical [--write-docs]``.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from .corpora import LOADERS, ROOT, build_runs, dense_run
from .protocol import COLLECTIONS, detectable, paired_tests, per_query, run_folds, subset, top

OUT = ROOT / "build" / "hybrid_loco_lexical"


def lexical_runs(name: str) -> tuple[dict, dict]:
    """({run name: Run}, qrels): the six lexical runs and MiniLM, on their common queries."""
    docs, queries, qrels = LOADERS[name]()
    runs = build_runs(docs, queries)
    runs["minilm"] = dense_run(docs, queries, rebuild=False, collection=name)
    common = set(qrels)
    for r in runs.values():
        common &= set(r.queries)
    return {k: subset(r, common) for k, r in runs.items()}, {q: qrels[q] for q in sorted(common)}


def lexical_fold(args: tuple) -> dict:
    """``auto``, the best single run and RRF on one (collection, fold)."""
    from ranx import fuse

    from rankboost.fusion import Qrels
    from rankboost.fusion.auto import AutoFusion

    from .protocol import _warm_up, ranx_run

    name, runs, qrels, train_q, test_q, fold = args
    _warm_up()
    tr, te = set(train_q), set(test_q)
    runs_tr = [subset(r, tr) for r in runs.values()]
    runs_te = [subset(r, te) for r in runs.values()]
    out: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nd = [per_query(qrels, r.to_dict(), train_q)["ndcg@10"].mean() for r in runs_tr]
        best = int(np.argmax(nd))
        out["best"] = top(runs_te[best].to_dict())
        out["rrf"] = top(dict(fuse([ranx_run(r) for r in runs_te], method="rrf",
                                   params={"k": 60})))  # fmt: skip
        t0 = time.perf_counter()
        auto = AutoFusion().fit(runs_tr, Qrels.from_dict({q: qrels[q] for q in train_q}))
        out["auto"] = top(auto.fuse(runs_te).to_dict())
        seconds = time.perf_counter() - t0
    pq = {k: per_query(qrels, v, test_q) for k, v in out.items()}
    return {"collection": name, "fold": fold, "pq": pq, "seconds": seconds,
            "family": auto.family_, "best": runs_te[best].name}  # fmt: skip


def run_lexical(workers: int = 2) -> list[dict]:
    """Every (collection, fold); the fold results are kept in :data:`OUT`."""
    return run_folds(lexical_runs, lexical_fold, OUT, workers)


def lexical_tables(results: list[dict]) -> str:
    """Per collection: ``auto`` against the best single run and RRF (NDCG@10, MAP@100)."""
    lines = [
        "| collection | queries | `auto` | best single (chosen per fold) | `auto` - best "
        "(p t / rand; detectable) | RRF | MAP@100 `auto` / best | `auto` chose | `auto` s |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for c in COLLECTIONS:
        rs = sorted((r for r in results if r["collection"] == c), key=lambda r: r["fold"])
        v = {k: {m: np.concatenate([r["pq"][k][m] for r in rs]) for m in ("ndcg@10", "map@100")}
             for k in ("auto", "best", "rrf")}  # fmt: skip
        a, b = v["auto"]["ndcg@10"], v["best"]["ndcg@10"]
        d, p_t, p_r = paired_tests(a, b)
        chosen = ", ".join(sorted({r["best"] for r in rs}))
        fams = ", ".join(r["family"] for r in rs)
        secs = np.median([r["seconds"] for r in rs])
        lines.append(
            f"| {c.upper()} | {a.shape[0]} | {a.mean():.4f} | {b.mean():.4f} ({chosen}) | "
            f"{d:+.4f} (p {p_t:.3f} / {p_r:.3f}; ±{detectable(a, b):.4f}) | "
            f"{v['rrf']['ndcg@10'].mean():.4f} | {v['auto']['map@100'].mean():.4f} / "
            f"{v['best']['map@100'].mean():.4f} | {fams} | {secs:.1f} |"
        )
    return "\n".join(lines)
