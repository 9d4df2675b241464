"""Seconds per round of WeakLearn / alpha variants on LETOR 4.0 MQ2008 Fold1 (train).

``criterion="abs_r"`` with Rb-c (the default), ``criterion="exact_z"`` with Rb-d, and
RankBoost+ (``alpha="rbplus"``, the graded feedback expanded to its 52,325 pairs), each a
``rb.Booster`` on the same ``LayeredFeedback``; one warm-up round each, then ``--repeats``
blocks of ``--rounds`` rounds, the variants interleaved so that they run under the same
machine load. Prints the median time per round of each and its ratio to the default; it
writes nothing.

Run:
    PYTHONPATH=src .venv/bin/python benchmarks/bench_variants_round.py
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import rankboost as rb
from rankboost.datasets import load_svmlight

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import data_file  # noqa: E402

VARIANTS = {
    "abs_r + r (default)": {},
    "exact_z + exact": {"criterion": "exact_z", "alpha": "exact"},
    "rbplus": {"alpha": "rbplus"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=None, help="default: ../shared/data MQ2008 Fold1 train"
    )
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if args.data is None:
        args.data = data_file("letor4/MQ2008/Fold1/train.txt.gz")
    ds = load_svmlight(args.data)
    X = np.asarray(ds.X.todense() if hasattr(ds.X, "todense") else ds.X)
    fb = rb.LayeredFeedback(ds.y, ds.qid)
    print(f"{args.data}: {X.shape[0]} rows, {X.shape[1]} features, {fb.n_pairs} crucial pairs")
    boosters = {name: rb.Booster(X, fb, p) for name, p in VARIANTS.items()}
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
        for b in boosters.values():
            b.update()  # compiles the kernels
        for _ in range(args.repeats):
            for name, b in boosters.items():
                t0 = time.perf_counter()
                for _ in range(args.rounds):
                    b.update()
                times[name].append((time.perf_counter() - t0) / args.rounds)
    base = float(np.median(times["abs_r + r (default)"]))
    for name, v in times.items():
        med = float(np.median(v))
        print(f"{name:22s} {1e3 * med:8.2f} ms/round  ({med / base:5.1f} x the default)")


if __name__ == "__main__":
    main()
