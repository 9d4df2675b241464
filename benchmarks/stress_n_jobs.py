"""Issue 52's reproduction, repeated: pooled fits with ``n_jobs > 1`` against ``n_jobs=1``.

Fits ``RankBoostRecommender(n_jobs=j)`` on MovieLens 100K with the issue's parameters
(``feature_users`` 100..399, 30 rounds, targets 0..7), ``j`` cycling over ``--n-jobs``,
and compares every fit's models with the ``n_jobs=1`` fit's, bit for bit (``to_dict`` of
every user's model, of ``model_`` and of ``rating_model_``). The race of issue 52 showed
under load: run two or more copies at once (each is the others' load), e.g.

    PYTHONPATH=src .venv/bin/python benchmarks/stress_n_jobs.py --fits 500 &
    PYTHONPATH=src .venv/bin/python benchmarks/stress_n_jobs.py --fits 500 &

``--seconds`` stops after that long (the fits done are counted). The last line is the
summary: fits, fits with any differing model, user models that differ (the issue's
``bad`` lists, summed), seconds. Any tree runs it (``PYTHONPATH`` chooses the package):
it uses the public API only.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from rankboost.datasets import load_movielens
from rankboost.recommend import RankBoostRecommender

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA  # noqa: E402

DATA = str(SHARED_DATA / "movielens" / "ml-100k" / "u.data.gz")


def _models(rec: RankBoostRecommender) -> dict[str, Any]:
    out = {f"user {u}": m.to_dict() for u, m in rec.models_.items()}
    for name in ("model_", "rating_model_"):
        if getattr(rec, name, None) is not None:
            out[name] = getattr(rec, name).to_dict()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=os.environ.get("RANKBOOST_ML100K", DATA))
    p.add_argument("--fits", type=int, default=500, help="fits with n_jobs > 1")
    p.add_argument("--n-jobs", default="2,4", help="the n_jobs values, in turn")
    p.add_argument("--seconds", type=float, default=None, help="stop after this long")
    p.add_argument("--tag", default=str(os.getpid()), help="prefix of every line")
    args = p.parse_args()
    n_jobs = [int(j) for j in args.n_jobs.split(",")]
    M, _, _ = load_movielens(args.data).to_matrix()
    kw: dict[str, Any] = {
        "feature_users": np.arange(100, 400), "n_estimators": 30, "invalid_targets": "skip",
    }  # fmt: skip
    targets = np.arange(8)
    import rankboost

    print(f"[{args.tag}] rankboost from {os.path.dirname(rankboost.__file__)}", flush=True)
    start = time.perf_counter()
    a = RankBoostRecommender(n_jobs=1, **kw).fit(M, target_users=targets)
    expected = _models(a)
    fits = bad_fits = bad_users = 0
    while fits < args.fits:
        if args.seconds is not None and time.perf_counter() - start > args.seconds:
            break
        j = n_jobs[fits % len(n_jobs)]
        b = RankBoostRecommender(n_jobs=j, **kw).fit(M, target_users=targets)
        bad = [u for u in a.models_ if a.models_[u].to_dict() != b.models_[u].to_dict()]
        differs = _models(b) != expected
        fits += 1
        bad_fits += differs
        bad_users += len(bad)
        print(
            f"[{args.tag}] fit {fits} n_jobs={j} bad users {bad} other models differ "
            f"{differs and not bad} load {os.getloadavg()[0]:.2f}",
            flush=True,
        )
    seconds = time.perf_counter() - start
    print(
        f"[{args.tag}] SUMMARY fits {fits} differing_fits {bad_fits} differing_user_models "
        f"{bad_users} seconds {seconds:.0f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
