"""The P-Norm Push on Dask: a round against RankBoost's, and what its line search costs.

LETOR 4.0 MQ2008 Fold1 (train), ``--partitions`` row chunks of whole queries on a
``distributed.LocalCluster`` of 2 worker processes x 1 thread (the machine's 2 cores). For
each ``p`` (1 = RankBoost, then ``--ps``): ``rankboost.dask.make_booster``, one warm-up
round, then ``--rounds`` calls of ``update()``, the boosters interleaved round by round.
Each ``p > 1`` runs twice: as trained (the blocks' level sums split by ``h`` gathered once
per round, ``push_split``, and the line search on the client) and with one round trip per
evaluation of the line search (``push_line``, the alternative; what explicit pairs and
real-valued rankers use). Prints per booster the median seconds per round and the round
trips per round by kind (``step`` is the fused update + next histograms), the median time
of one ``push_line`` round trip and the bytes ``push_split`` moves per round (4 float64
per level of every block's queries).

Run:
    PYTHONPATH=src .venv/bin/python benchmarks/bench_dask_push.py
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

import rankboost as rb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import data_file  # noqa: E402
from bench_dask import query_chunks  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--ps", type=float, nargs="+", default=[4.0])
    args = parser.parse_args()
    import dask.array as da
    import distributed

    import rankboost.dask as rbd

    ds = rb.datasets.load_svmlight(data_file("letor4/MQ2008/Fold1/train.txt.gz"))
    order = np.argsort(ds.qid, kind="stable")
    X = np.asarray(ds.X)[order]
    y, qid = ds.y[order], ds.qid[order]
    chunks = query_chunks(qid, args.partitions)
    parts = [da.from_array(X, chunks=(chunks, X.shape[1]))]
    parts += [da.from_array(a, chunks=(chunks,)) for a in (y, qid)]
    fb = rb.LayeredFeedback(y, qid)
    levels = sum(int(b.lstart[-1]) for b in fb._blocks(args.partitions))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
    client = distributed.Client(cluster)
    ps = [1.0, *[p for p in args.ps if p != 1.0]]
    names = ["push=1", *[f"push={p:g}{how}" for p in ps[1:] for how in ("", " per-eval")]]
    calls: dict[str, dict[str, int]] = {k: defaultdict(int) for k in names}
    line_times: list[float] = []
    times: dict[str, list[float]] = {k: [] for k in names}
    try:
        boosters = {
            k: rbd.make_booster(client, *parts, push=float(k[5:].split()[0])) for k in names
        }
        for k, bst in boosters.items():
            if k.endswith("per-eval"):
                bst._splits = False  # type: ignore[attr-defined]
        current = [names[0]]
        for bst in boosters.values():
            call = bst._call

            def counted(name: str, *a: Any, _call: Any = call) -> Any:
                calls[current[0]][name] += 1
                t0 = time.perf_counter()
                out = _call(name, *a)
                if name == "push_line":
                    line_times.append(time.perf_counter() - t0)
                return out

            bst._call = counted  # type: ignore[method-assign]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
            for k, bst in boosters.items():
                current[0] = k
                bst.update()
            for k in names:
                calls[k].clear()
            line_times.clear()
            for _ in range(args.rounds):
                for k, bst in boosters.items():
                    current[0] = k
                    t0 = time.perf_counter()
                    bst.update()
                    times[k].append(time.perf_counter() - t0)
        for bst in boosters.values():
            bst.close()
    finally:
        client.close()
        cluster.close()
    print(
        f"MQ2008 Fold1 train: {X.shape[0]} rows, {args.partitions} partitions, "
        f"{levels} query levels; {args.rounds} rounds per p"
    )
    base = float(np.median(times[names[0]]))
    for k in names:
        med = float(np.median(times[k]))
        per_round = ", ".join(f"{c} {v / args.rounds:.1f}" for c, v in sorted(calls[k].items()))
        print(f"{k:<18} {1e3 * med:7.1f} ms/round ({med / base:4.2f} x p=1); trips/round: "
              f"{per_round}")  # fmt: skip
    if line_times:
        print(
            f"one push_line round trip: median {1e3 * float(np.median(line_times)):.2f} ms; "
            f"push_split moves {levels * 4 * 8:,} bytes per round"
        )


if __name__ == "__main__":
    main()
