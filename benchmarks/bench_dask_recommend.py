"""Time and peak memory of ``DaskRankBoostRecommender`` beside the one-machine fit (issue 49).

A ``make_ratings`` problem of the given shape as a dask DataFrame of shuffled rows; a
``LocalCluster`` of 2 worker processes x 1 thread with a memory limit each. Fit and
``recommend_all(k=10)`` on Dask, then the same on one machine (``RankBoostRecommender`` with
``rec.params``), and whether the top 10 of every user agree. Peak memory: each worker
process's peak resident set (``ru_maxrss``, imports included), and this process's.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_dask_recommend.py \
        --users 20000 --items 2000 --ratings 1000000 --rounds 30
"""

from __future__ import annotations

import argparse
import resource
import time
import warnings

import numpy as np


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=20_000)
    ap.add_argument("--items", type=int, default=2_000)
    ap.add_argument("--ratings", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--memory-limit", default="3GB")
    ap.add_argument("--no-local", action="store_true", help="skip the one-machine run")
    args = ap.parse_args()

    import dask.dataframe as dd
    import distributed
    import pandas as pd

    from rankboost.dask import DaskRankBoostRecommender
    from rankboost.datasets import make_ratings
    from rankboost.recommend import RankBoostRecommender

    R = make_ratings(args.users, args.items, args.ratings, scale="half", random_state=0)
    coo = R.tocoo()
    df = pd.DataFrame({"user": coo.row, "item": coo.col, "rating": coo.data})
    df = df.sample(frac=1.0, random_state=0).reset_index(drop=True)
    del R, coo
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
            memory_limit=args.memory_limit,
        )  # fmt: skip
    client = distributed.Client(cluster)
    ddf = dd.from_pandas(df, npartitions=args.partitions)
    ddf = client.persist(ddf)
    distributed.wait(ddf)
    base = client.run(_peak_mb)
    print(f"shape: {args.users} users x {args.items} items x {args.ratings} ratings")
    print(f"workers' peak RSS before the fit (imports, the ratings): {base}")
    t0 = time.perf_counter()
    rec = DaskRankBoostRecommender(client=client, n_estimators=args.rounds).fit(ddf)
    t1 = time.perf_counter()
    users, items, scores = rec.recommend_all(k=10)
    items = items.compute()
    t2 = time.perf_counter()
    peaks = client.run(_peak_mb)
    print(f"dask fit: {t1 - t0:.1f} s, recommend_all(k=10): {t2 - t1:.1f} s")
    print(f"workers' peak RSS (MB): {peaks}; client: {_peak_mb():.0f} MB")
    client.close()
    cluster.close()
    if args.no_local:
        return
    t0 = time.perf_counter()
    one = RankBoostRecommender(**rec.params).fit(df)
    t1 = time.perf_counter()
    _, items1, _ = one.recommend_all(k=10)
    t2 = time.perf_counter()
    print(f"one machine fit: {t1 - t0:.1f} s, recommend_all(k=10): {t2 - t1:.1f} s")
    print(f"this process's peak RSS after both: {_peak_mb():.0f} MB")
    print(f"top 10 of every user equal: {bool(np.array_equal(items, items1))}")


if __name__ == "__main__":
    main()
