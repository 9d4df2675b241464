"""``recommend_all(k=10)`` against a loop of ``recommend(u, k=10)``: the pooled model, all
943 MovieLens 100K users (issue 24).

Both return the same items (checked); CPU seconds (``time.process_time``) are reported
beside wall seconds because the shared machine's load makes wall time noisy. The model is
fitted once with 50 rounds and no inner CV (its quality does not matter here).

    PYTHONPATH=src python benchmarks/bench_recommend_all.py
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

from rankboost.datasets import load_movielens
from rankboost.recommend import RankBoostRecommender

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import data_file  # noqa: E402


def main(repeats: int = 2) -> None:
    warnings.simplefilter("ignore")
    R, _, _ = load_movielens(data_file("movielens/ml-100k/u.data.gz")).to_matrix()
    rec = RankBoostRecommender(rating_range=(1, 5), n_estimators=50, inner_folds=None).fit(R)
    rec.recommend_all(k=10)  # warm: numba compilation, caches
    rec.recommend(0, k=10)
    for _ in range(repeats):
        t, w = time.process_time(), time.perf_counter()
        _, top, _ = rec.recommend_all(k=10)
        a = (time.process_time() - t, time.perf_counter() - w)
        t, w = time.process_time(), time.perf_counter()
        loop = np.vstack([rec.recommend(u, k=10)[0] for u in range(R.shape[0])])
        b = (time.process_time() - t, time.perf_counter() - w)
        print(
            f"recommend_all cpu {a[0]:.1f}s wall {a[1]:.1f}s | loop of recommend cpu "
            f"{b[0]:.1f}s wall {b[1]:.1f}s | same items {np.array_equal(top, loop)}",
            flush=True,
        )


if __name__ == "__main__":
    main()
