"""Benchmark: NDCG@10 on 1,000,000 rows in 10,000 queries (target < 1 s).

Prints the median of 5 runs of ``ndcg_score`` (each tie policy) and, as a floor measured in the
same run, the median of 5 runs of ``np.lexsort((-score, qid))``, the single sort any
per-query metric needs.

Run: PYTHONPATH=src .venv/bin/python benchmarks/bench_metrics.py
"""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import median_time  # noqa: E402

from rankboost.metrics import average_precision, ndcg_score  # noqa: E402

N_ROWS = 1_000_000
N_QUERIES = 10_000
REPEATS = 5


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--smoke", action="store_true", help="10,000 rows, one run (tests)")
    args = p.parse_args()
    n_rows, n_queries, repeats = (10_000, 100, 1) if args.smoke else (N_ROWS, N_QUERIES, REPEATS)
    rng = np.random.default_rng(0)
    qid = rng.permutation(np.repeat(np.arange(n_queries), n_rows // n_queries))
    y = rng.integers(0, 5, n_rows).astype(np.float64)
    score = rng.normal(size=n_rows)
    tied = np.round(score, 1)  # about 50 distinct values: many ties per query
    ndcg_score(y[:1000], score[:1000], qid[:1000])  # compile / load the numba cache
    average_precision(y[:1000], score[:1000], qid[:1000])
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    print(f"{n_rows} rows, {n_queries} queries (unsorted qid), median of {repeats} runs")
    floor = median_time(lambda: np.lexsort((-score, qid)), repeats)
    print(f"{'np.lexsort((-score, qid)) floor':44s} {floor:7.3f} s")
    cases = [
        ("ndcg_score k=10 ties=expected", lambda: ndcg_score(y, score, qid, k=10)),
        ("ndcg_score k=10 ties=stable", lambda: ndcg_score(y, score, qid, k=10, ties="stable")),
        ("ndcg_score k=10 ties=expected (tied scores)", lambda: ndcg_score(y, tied, qid, k=10)),
        ("average_precision ties=expected (tied scores)", lambda: average_precision(y, tied, qid)),
    ]
    for name, func in cases:
        t = median_time(func, repeats)
        print(f"{name:44s} {t:7.3f} s  ({t / floor:4.1f} x floor)")


if __name__ == "__main__":
    main()
