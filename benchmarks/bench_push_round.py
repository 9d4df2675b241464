"""Seconds per round of the P-Norm Push (``push=p``) against RankBoost (p = 1), side by side.

LETOR 4.0 MQ2008 Fold1 (train) with ``LayeredFeedback`` (and, with ``--bipartite``, grades
>= 1 as relevant), one ``rb.Booster`` per p: one warm-up round each (compiles the kernels),
then ``--repeats`` blocks of ``--rounds`` rounds, the p interleaved so that they run under
the same machine load. Prints the median time per round of each p, its ratio to p = 1 (the
issue's target: within 1.5x) and the mean number of ``R_p`` evaluations of the line search
per round; both in wall time and in the CPU time of the training thread
(``time.thread_time``: the kernels run serially at this size), which a loaded machine
disturbs less (the wall time then counts the waits for a core too). Writes nothing.

Run:
    PYTHONPATH=src .venv/bin/python benchmarks/bench_push_round.py
    NUMBA_NUM_THREADS=1 PYTHONPATH=src .venv/bin/python benchmarks/bench_push_round.py
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import rankboost as rb
from rankboost import push
from rankboost.datasets import load_svmlight

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import data_file  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=None, help="default: ../shared/data MQ2008 Fold1 train"
    )
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ps", type=float, nargs="+", default=[2.0, 4.0, 16.0])
    parser.add_argument("--bipartite", action="store_true", help="grades >= 1 vs 0")
    args = parser.parse_args()
    if args.data is None:
        args.data = data_file("letor4/MQ2008/Fold1/train.txt.gz")
    ds = load_svmlight(args.data)
    X = np.asarray(ds.X.todense() if hasattr(ds.X, "todense") else ds.X)
    if args.bipartite:
        fb: rb.LayeredFeedback = rb.BipartiteFeedback((ds.y >= 1).astype(float), ds.qid)
    else:
        fb = rb.LayeredFeedback(ds.y, ds.qid)
    print(f"{args.data}: {X.shape[0]} rows, {X.shape[1]} features, {fb.n_pairs} crucial pairs")
    ps = [1.0, *[p for p in args.ps if p != 1.0]]
    boosters = {p: rb.Booster(X, fb, {"push": p}) for p in ps}
    evaluations: dict[float, int] = dict.fromkeys(ps, 0)
    current = [1.0]
    newton = push.newton_alpha

    def counted(fun, r):  # type: ignore[no-untyped-def]  # counts the line search's evaluations
        def fun_counted(a):  # type: ignore[no-untyped-def]
            evaluations[current[0]] += 1
            return fun(a)

        return newton(fun_counted, r)

    push.newton_alpha = counted
    one_call = push.binary_newton  # one block: the whole search in one kernel call

    def one_call_counted(*args):  # type: ignore[no-untyped-def]
        alpha, n_evaluations = one_call(*args)
        evaluations[current[0]] += n_evaluations
        return alpha, n_evaluations

    push.binary_newton = one_call_counted
    times: dict[float, list[float]] = {p: [] for p in ps}
    cpu: dict[float, list[float]] = {p: [] for p in ps}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
        for b in boosters.values():
            b.update()
        evaluations.update(dict.fromkeys(ps, 0))
        for _ in range(args.repeats):
            for p, b in boosters.items():
                current[0] = p
                t0, c0 = time.perf_counter(), time.thread_time()
                for _ in range(args.rounds):
                    b.update()
                cpu[p].append((time.thread_time() - c0) / args.rounds)
                times[p].append((time.perf_counter() - t0) / args.rounds)
    base = float(np.median(times[1.0]))
    base_cpu = float(np.median(cpu[1.0]))
    n = args.rounds * args.repeats
    for p, v in times.items():
        med = float(np.median(v))
        med_cpu = float(np.median(cpu[p]))
        ev = f"{evaluations[p] / n:4.1f} R_p evaluations/round" if p != 1.0 else "RankBoost"
        print(
            f"push={p:<5g} {1e3 * med:8.2f} ms/round ({med / base:4.2f} x p=1), CPU "
            f"{1e3 * med_cpu:6.2f} ms ({med_cpu / base_cpu:4.2f} x p=1)  {ev}"
        )


if __name__ == "__main__":
    main()
