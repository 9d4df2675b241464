"""``GridSearchCV(RankBoostRanker(), ...)`` with ``n_jobs=1`` vs ``n_jobs=2``.

Each setting runs in a fresh Python process (same data, same grid, ``GroupKFold(3)``, the
query ids routed to ``fit`` and to :func:`rankboost.metrics.make_scorer`), timed twice:
the first search includes the joblib worker start and numba's cache load in the workers,
the second one reuses the warm workers. Prints a markdown table.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_gridsearch.py
    PYTHONPATH=src .venv/bin/python benchmarks/bench_gridsearch.py --queries 400
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np


def letor_like(n_queries: int, n_features: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    """Graded LETOR-like data: latent relevance, noisy features with NaN, shuffled qids."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(8, 41, n_queries)
    qid = np.repeat(rng.permutation(n_queries), sizes)
    n = qid.shape[0]
    latent = rng.normal(size=n)
    y = np.digitize(latent + 0.5 * rng.normal(size=n), [-0.8, 0.0, 0.8]).astype(float)
    X = latent[:, None] + rng.uniform(0.3, 3.0, n_features) * rng.normal(size=(n, n_features))
    X[rng.random(X.shape) < 0.1] = np.nan
    perm = rng.permutation(n)
    return X[perm], y[perm], qid[perm]


def run_one(n_jobs: int, n_queries: int, n_features: int) -> dict[str, float | int]:
    """Time two identical searches in this process (the first one cold)."""
    import sklearn
    from sklearn.model_selection import GridSearchCV, GroupKFold

    from rankboost import RankBoostRanker
    from rankboost.metrics import make_scorer

    X, y, qid = letor_like(n_queries, n_features)
    grid = {"n_estimators": [100, 200], "learning_rate": [0.5, 1.0]}
    times = []
    with sklearn.config_context(enable_metadata_routing=True):
        for _ in range(2):
            search = GridSearchCV(
                RankBoostRanker(),
                grid,
                cv=GroupKFold(n_splits=3),
                scoring=make_scorer("ndcg@10"),
                n_jobs=n_jobs,
            )
            start = time.perf_counter()
            search.fit(X, y, qid=qid, groups=qid)
            times.append(time.perf_counter() - start)
    threads = worker_numba_threads(n_jobs)
    return {"cold": times[0], "warm": times[1], "threads": threads}


def worker_numba_threads(n_jobs: int) -> int:
    """``numba.get_num_threads()`` where the folds run (in joblib's workers for n_jobs > 1)."""
    import numba
    from joblib import Parallel, delayed

    if n_jobs == 1:
        return int(numba.get_num_threads())
    return int(max(Parallel(n_jobs=n_jobs)(delayed(numba.get_num_threads)() for _ in range(4))))


def import_seconds() -> float:
    """Wall time of ``import rankboost`` in a fresh process (what every worker pays first)."""
    code = "import time; t = time.perf_counter(); import rankboost; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(run_one(args.child, args.queries, args.features)))
        return

    settings = [
        ("n_jobs=1", 1, {}),
        ("n_jobs=2", 2, {}),
        ("n_jobs=2, NUMBA_NUM_THREADS=1", 2, {"NUMBA_NUM_THREADS": "1"}),
    ]
    print(
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; "
        f"{args.queries} queries x {args.features} features, grid of 4 x GroupKFold(3) = 12 "
        f"fits; import rankboost in a fresh process: {import_seconds():.2f} s"
    )
    print("| setting | run | first search s | second search s | numba threads per fold |")
    print("|---|---|---|---|---|")
    for run in range(args.repeats):
        for label, n_jobs, extra in settings:
            env = {**os.environ, **extra}
            cmd = [sys.executable, __file__, "--child", str(n_jobs)]
            cmd += ["--queries", str(args.queries), "--features", str(args.features)]
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            res = json.loads(out.stdout.strip().splitlines()[-1])
            print(
                f"| {label} | {run + 1} | {res['cold']:.2f} | {res['warm']:.2f} | "
                f"{res['threads']} |"
            )


if __name__ == "__main__":
    main()
