"""MovieLens-10M scale: the pooled RankBoostRecommender beside EASE on one machine (issue 35).

A MovieLens-10M-shaped matrix (70,000 users x 10,000 items x 10M ratings, 0.5 .. 5 in
halves; ``rankboost.datasets.make_ratings``, seeded: popularity and activity skew, a taste
model) times ``--scale`` users and ratings (the items stay 10,000 unless ``--items``: the
smoke test in tests/test_benchmarks_smoke.py runs ``--scale 0.002 --items 300``). Measured in
one process, each phase with its wall and CPU seconds and its peak resident memory (``VmHWM``, reset
before the phase through ``/proc/self/clear_refs``):

1. **pooled**: ``RankBoostRecommender(rating_range=(0.5, 5))`` (every default: the pooled
   model, ``ease_lambda="auto"``, two models) ``.fit(R)`` then ``recommend_all(k=10)`` for
   every user;
2. **EASE**: the library's EASE (``ease_lambda`` = the pooled fit's ``ease_lambda_``) fitted
   on the same matrix, then the top 10 unrated items of every user, a block of users at a
   time (:func:`rankboost.recommend._pooled.top_k`).

Also printed: the size of the CSR matrix, and what a dense users x items float64 array
would take (the memory that must not be needed).

    PYTHONPATH=src nice -n 5 .venv/bin/python benchmarks/bench_recommend_scale.py \
        --verbose --write-results
    PYTHONPATH=src .venv/bin/python benchmarks/bench_recommend_scale.py --scale 0.1  # 1M
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    add_write_results,
    machine_info,
    machine_line,
    markdown_table,
    peak_rss_bytes,
    report_result,
    reset_peak,
)

from rankboost import TrainingStoppedWarning  # noqa: E402
from rankboost.datasets import make_ratings  # noqa: E402
from rankboost.recommend import RankBoostRecommender  # noqa: E402
from rankboost.recommend._base import BaseScores  # noqa: E402
from rankboost.recommend._pooled import top_k  # noqa: E402

FULL = (70_000, 10_000, 10_000_000)  # MovieLens 10M: users, items, ratings


class Phase:
    """Wall seconds, CPU seconds (this process and its threads) and peak memory of a block."""

    def __enter__(self) -> Phase:
        reset_peak()
        self.t0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.t0
        self.cpu = time.process_time() - self.c0
        self.peak = peak_rss_bytes()


def ease_top(R: sp.csr_matrix, lam: float, k: int) -> np.ndarray:
    """EASE fitted on ``R``, then the top ``k`` unrated items of every user (in blocks)."""
    base = BaseScores(("ease",), ease_lambda=lam).fit(R)
    n_users, n_items = R.shape
    step = max(1, (1 << 22) // n_items)
    out = np.empty((n_users, k), dtype=np.int64)
    B = base._B
    for s in range(0, n_users, step):
        b = B[s : s + step]
        S = np.asarray(b @ base._ease)
        S[np.repeat(np.arange(b.shape[0]), np.diff(b.indptr)), b.indices] = -np.inf
        out[s : s + step] = top_k(S, k)[0]
    return out


def run(
    scale: float, n_items: int, seed: int, k: int, verbose: bool = False
) -> tuple[list[list[Any]], dict[str, Any]]:
    n_users, n_ratings = max(2, round(FULL[0] * scale)), round(FULL[2] * scale)
    with Phase() as gen:
        R = make_ratings(n_users, n_items, n_ratings, random_state=seed)
    csr = R.data.nbytes + R.indices.nbytes + R.indptr.nbytes
    dense = 8 * n_users * n_items
    print(
        f"{n_users:,} users x {n_items:,} items x {R.nnz:,} ratings (scale {scale}, seed {seed}):"
        f" generated in {gen.wall:.1f} s; CSR {csr / 2**20:.0f} MiB, a dense users x items "
        f"float64 array would be {dense / 2**30:.2f} GiB",
        flush=True,
    )
    with Phase() as fit, warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        rec = RankBoostRecommender(rating_range=(0.5, 5), verbose=int(verbose)).fit(R)
    print(f"pooled fit: {fit.wall:.1f} s, peak {fit.peak / 2**30:.2f} GiB", flush=True)
    with Phase() as rall:
        users, items, _ = rec.recommend_all(k=k)
    assert users.shape[0] == n_users  # every user is recommended for
    print(f"pooled recommend_all: {rall.wall:.1f} s, peak {rall.peak / 2**30:.2f} GiB", flush=True)
    lam = float(rec.ease_lambda_)
    with Phase() as ease:
        top = ease_top(R, lam, k)
    print(f"EASE fit + top {k}: {ease.wall:.1f} s, peak {ease.peak / 2**30:.2f} GiB", flush=True)
    overlap = float(
        np.mean([len(np.intersect1d(a, b)) / k for a, b in zip(items, top, strict=True)])
    )
    rows = [
        ["pooled RankBoost fit", fit.wall, fit.cpu, fit.peak / 2**30],
        [f"pooled recommend_all(k={k})", rall.wall, rall.cpu, rall.peak / 2**30],
        [
            "pooled total",
            fit.wall + rall.wall,
            fit.cpu + rall.cpu,
            max(fit.peak, rall.peak) / 2**30,
        ],
        [f"EASE fit + top {k} (lambda {lam:g})", ease.wall, ease.cpu, ease.peak / 2**30],
    ]
    data = {
        "shape": [n_users, n_items, int(R.nnz)],
        "scale": scale,
        "seed": seed,
        "csr_mib": csr / 2**20,
        "dense_users_x_items_gib": dense / 2**30,
        "pooled_fit_s": fit.wall,
        "pooled_recommend_all_s": rall.wall,
        "pooled_peak_gib": max(fit.peak, rall.peak) / 2**30,
        "ease_s": ease.wall,
        "ease_peak_gib": ease.peak / 2**30,
        "ease_lambda": lam,
        "n_rounds": rec.report_["n_rounds"],
        "n_rows": rec.report_["n_rows"],
        "top10_overlap_with_ease": overlap,
    }
    return [[r[0], f"{r[1]:.1f}", f"{r[2]:.1f}", f"{r[3]:.2f}"] for r in rows], data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=float, default=1.0,
                    help="fraction of MovieLens 10M's users and ratings")  # fmt: skip
    ap.add_argument("--items", type=int, default=FULL[1],
                    help="items (default 10,000; fewer only for a smoke test)")  # fmt: skip
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--verbose", action="store_true", help="the fit's progress bar (tqdm)")
    add_write_results(ap)
    args = ap.parse_args()
    if not 0 < args.scale <= 1:
        ap.error(f"--scale must be in (0, 1], got {args.scale}")
    rows, data = run(args.scale, args.items, args.seed, args.k, args.verbose)
    table = markdown_table(["phase", "wall s", "CPU s", "peak GiB"], rows)
    info = machine_info()
    data["machine"] = info
    table = f"{machine_line(info)}\n\n{table}"
    print(table)
    print(
        f"top-{args.k} overlap of the pooled model with EASE: {data['top10_overlap_with_ease']:.3f}"
    )
    report_result(args.write_results, "recommend_scale", table, data)


if __name__ == "__main__":
    main()
