"""``fuse train --family auto`` against ``--family boost`` and the tuned convex combination.

On LETOR 4.0 MQ2008-agg and MQ2007-agg (issue 33 follow-up): should ``--family auto``
(:class:`rankboost.fusion.auto.AutoFusion` at its defaults) be ``fuse train``'s default? It
must not lose to today's default (:class:`RankFusion` at its defaults) on meta-search data.
Protocol and evaluation as ``experiments/metasearch.py``: the official folds, trained on
``train`` only (``vali`` unused), NDCG@10 on ``test`` over every judged document (LETOR 4.0
discount, 0 for a query without relevant document). The aggregation runs miss queries, so
AutoFusion leaves out its same-query candidates and chooses between ``boost`` and
``boost_combsum`` (fallback ``boost``). ``convex``: :func:`rankboost.fusion.auto.convex_weights`
on the training queries (min-max scores, a run that misses a query scores 0 there; with
25 runs the simplex grid has step 1/2: each run alone or an equal pair).

Run: ``PYTHONPATH=src .venv/bin/python experiments/metasearch_auto.py`` (both data sets, 5
folds each, 2 worker processes with one numba thread each: about 14 minutes on the shared
2-core machine). Prints per-fold NDCG@10, the family AutoFusion chose, the seconds, and
paired tests over the pooled test queries; the results are in docs/metasearch.md.
"""

from __future__ import annotations

import os

if __name__ == "__main__":
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _data import data_file  # noqa: E402
from metasearch import NDCG, Split  # noqa: E402

METHODS = ("boost", "auto", "convex")


def _per_query(ev: Split, fused: Any) -> np.ndarray:
    from rankboost.metrics import ndcg_score

    s, _ = ev.scores_of(fused.qid, fused.docid, fused.score)
    return np.asarray(ndcg_score(ev.y, s, ev.qid, k=10, per_query=True, **NDCG))


def run_fold(dataset: str, fold: int) -> dict[str, Any]:
    from rankboost.fusion import RankFusion, grades_for
    from rankboost.fusion.auto import AutoFusion, _rows, convex_weights
    from rankboost.fusion.features import fused_run
    from rankboost.fusion.io import read_letor_agg_folds
    from rankboost.fusion.linear import linear_features

    data = read_letor_agg_folds(
        data_file(f"letor4/{dataset}/Fold{fold}/train.txt.gz").parent, splits=("train", "test")
    )
    runs = {s: data[s].to_runs() for s in data}
    qrels = {s: data[s].to_qrels() for s in data}
    ev = Split(data["test"])
    out: dict[str, Any] = {"dataset": dataset, "fold": fold, "pq": {}, "seconds": {}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        boost = RankFusion().fit(runs["train"], qrels["train"])
        out["pq"]["boost"] = _per_query(ev, boost.fuse(runs["test"]))
        out["seconds"]["boost"] = time.perf_counter() - t
        t = time.perf_counter()
        auto = AutoFusion().fit(runs["train"], qrels["train"])
        out["pq"]["auto"] = _per_query(ev, auto.fuse(runs["test"]))
        out["seconds"]["auto"] = time.perf_counter() - t
        out["family"] = auto.family_
        out["selection"] = {
            k: round(v["mean"], 4) for k, v in auto.selection_["candidates"].items()
        }
        t = time.perf_counter()
        items = list(runs["train"].values())
        N, qid, docid = linear_features(items, "minmax")
        judged = np.isin(qid, np.asarray(qrels["train"].queries))
        y = grades_for(_rows(qid[judged], docid[judged]), qrels["train"])
        w, _ = convex_weights(N[judged], y, qid[judged])
        # scored directly: LinearFusion refuses runs that miss queries (an engine would run
        # every retriever on every query); a run that misses a query adds 0 there
        Nt, qt, dt = linear_features(list(runs["test"].values()), "minmax")
        out["pq"]["convex"] = _per_query(ev, fused_run(qt, dt, Nt @ w, None))
        out["seconds"]["convex"] = time.perf_counter() - t
        out["convex_weights"] = {r.name: float(x) for r, x in zip(items, w, strict=True) if x > 0}
    return out


def main() -> int:
    from scipy import stats

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["MQ2007-agg", "MQ2008-agg"])
    parser.add_argument("--folds", nargs="+", type=int, default=[1, 2, 3, 4, 5])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    jobs = [(d, f) for d in args.datasets for f in args.folds]
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        results = list(pool.map(run_fold, *zip(*jobs, strict=True)))
    for d in args.datasets:
        folds = [r for r in results if r["dataset"] == d]
        print(f"\n{d}, folds {[r['fold'] for r in folds]}")
        for r in folds:
            means = " ".join(f"{m} {r['pq'][m].mean():.4f}" for m in METHODS)
            secs = " ".join(f"{m} {r['seconds'][m]:.0f}s" for m in METHODS)
            print(f"  fold {r['fold']}: {means}; auto chose {r['family']} (inner CV "
                  f"{r['selection']}); {secs}; convex weights {r['convex_weights']}")  # fmt: skip
        pooled = {m: np.concatenate([r["pq"][m] for r in folds]) for m in METHODS}
        n = pooled["auto"].shape[0]
        for other in ("boost", "convex"):
            d_ = pooled["auto"] - pooled[other]
            p = float(stats.ttest_rel(pooled["auto"], pooled[other]).pvalue) if d_.any() else 1.0
            tcrit = stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1)
            det = float(tcrit * d_.std(ddof=1) / np.sqrt(n))
            print(f"  pooled over {n} test queries: auto {pooled['auto'].mean():.4f} - {other} "
                  f"{pooled[other].mean():.4f} = {d_.mean():+.4f} (paired t p {p:.3f}; "
                  f"detectable +-{det:.4f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
