"""Distributed training benchmark: a round on a Dask LocalCluster vs one machine, same data.

What it measures, in one run:

1. The data of ``benchmarks/bench_engine.py`` (synthetic LETOR-like, ``--rows`` x
   ``--features``, queries of ``--query-size`` rows), split into ``--partitions`` row chunks
   at query boundaries.
2. **One machine**: ``rb.Booster(X, feedback)`` and ``rounds + 1`` calls of ``update()``
   (numba on this process's threads); s/round = median over rounds 2.. .
3. **Dask**: a ``distributed.LocalCluster`` with 2 worker processes of 1 thread each (the
   same 2 cores), ``rankboost.dask.make_booster(client, X, y, qid)`` (setup: blocks on the
   workers + global bins), then ``rounds + 1`` calls of ``update()``. Per round: the wall
   time; the fused step's round trip; the busiest worker's compute inside it (a worker runs
   its blocks' actor calls one after the other, so its compute is their sum); the client's
   reduce (sum of the histograms, scaled); the rest (choosing the ranker and alpha on the
   client, scheduling). The **overhead** is the median Dask round minus the median
   one-machine round (target: below 50 ms at 1M x 136). **Bytes per round**: what the blocks
   return (their histograms and a few floats), measured at ``--rows`` and at a quarter of it
   to show it does not depend on the number of rows.
4. ``alpha="line_search"``: a few rounds timed the same way, with the number of round trips
   (one per evaluation of dZ/dalpha).

Run (full size needs ~6 GB of memory; several minutes on the shared 2-core machine):
    PYTHONPATH=src .venv/bin/python benchmarks/bench_dask.py --write-results
Smaller: ``--rows 200000 --features 40``. With ``--write-results`` it writes
``benchmarks/results/bench_dask.md`` and ``.json`` (full size) or
``bench_dask_<rows>x<features>.*``; without it, it only prints.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    add_write_results,
    machine_info,
    machine_line,
    markdown_table,
    report_result,
)
from bench_engine import make_data  # noqa: E402

import rankboost as rb  # noqa: E402


def query_chunks(qid: np.ndarray, k: int) -> tuple[int, ...]:
    """Row chunk sizes that cut only between queries (qid sorted), about n / k rows each."""
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    cuts = np.unique(starts[np.searchsorted(starts, np.arange(1, k) * len(qid) / k)])
    edges = np.concatenate([[0], cuts[cuts > 0], [len(qid)]])
    return tuple(int(v) for v in np.diff(edges))


def one_machine(X: np.ndarray, fb: Any, rounds: int) -> dict[str, Any]:
    t = time.perf_counter()
    bst = rb.Booster(X, fb)
    setup = time.perf_counter() - t
    times = []
    for _ in range(rounds + 1):
        t = time.perf_counter()
        bst.update()
        times.append(time.perf_counter() - t)
    return {"setup": setup, "round_times": times[1:], "s_per_round": float(np.median(times[1:]))}


def on_dask(client: Any, X: np.ndarray, y: np.ndarray, qid: np.ndarray, parts: int,
            rounds: int, **params: Any) -> dict[str, Any]:  # fmt: skip
    import dask.array as da

    import rankboost.dask as rbd

    chunks = query_chunks(qid, parts)
    Xd = da.from_array(X, chunks=(chunks, X.shape[1]))
    yd = da.from_array(y, chunks=(chunks,))
    qd = da.from_array(qid, chunks=(chunks,))
    t = time.perf_counter()
    bst = rbd.make_booster(client, Xd, yd, qd, **params)
    setup = time.perf_counter() - t
    rows: list[dict[str, float]] = []
    slope_calls = []
    calls = {"n": 0}
    original = bst._call

    def counting(name: str, *args: Any) -> list[Any]:
        if name == "log_slopes":
            calls["n"] += 1
        return original(name, *args)

    bst._call = counting  # type: ignore[method-assign]
    for r in range(rounds + 1):
        calls["n"] = 0
        t = time.perf_counter()
        bst.update()
        wall = time.perf_counter() - t
        step = dict(bst.last_step)
        step["wall"] = wall
        step["other"] = wall - step["round_trip"] - step["reduce"]
        if r:
            rows.append(step)
            slope_calls.append(calls["n"])
    bst.close()
    med = {k: float(np.median([row[k] for row in rows])) for k in rows[0]}
    return {
        "setup": setup,
        "partitions": len(chunks),
        "rounds": rows,
        "median": med,
        "slope_round_trips": slope_calls,
    }


def report(args: argparse.Namespace, r: dict[str, Any]) -> str:
    one, dk, small = r["one"], r["dask"], r["dask_quarter"]
    med = dk["median"]
    overhead = med["wall"] - one["s_per_round"]
    lines = [
        "# Distributed training benchmark (`benchmarks/bench_dask.py`)",
        "",
        f"Machine: {machine_line(r['machine'])}.",
        "",
        f"Data: {args.rows:,} rows x {args.features} features, queries of {args.query_size} "
        f"rows, {dk['partitions']} partitions (cut at query boundaries). Dask: "
        "`distributed.LocalCluster`, 2 worker processes x 1 thread. Medians over "
        f"{args.rounds} rounds after round 1 (shared machine: medians and ratios only).",
        "",
        markdown_table(
            ["quantity", "value"],
            [
                ["one machine: `Booster.update()` s/round", f"{one['s_per_round']:.4f}"],
                ["one machine: setup (`rb.Booster`) s", f"{one['setup']:.2f}"],
                ["Dask: `update()` s/round (wall)", f"{med['wall']:.4f}"],
                ["Dask: setup (`make_booster`: blocks + global bins) s", f"{dk['setup']:.2f}"],
                [
                    "**overhead per round over one machine** (target < 0.050 s)",
                    f"{overhead:.4f} ({'PASS' if overhead < 0.05 else 'MISS'})",
                ],
                ["bytes returned per round (all blocks)", f"{med['bytes_received']:,.0f}"],
                [
                    f"bytes per round at {args.rows // 4:,} rows (same partitions)",
                    f"{small['median']['bytes_received']:,.0f}",
                ],
            ],
        ),
        "",
        "## Where a Dask round goes (medians, s)",
        "",
        markdown_table(
            ["part", "s", "share of the round"],
            [
                [
                    "busiest worker's compute (its blocks' update + next histograms + rloss)",
                    f"{med['worker_compute']:.4f}",
                    f"{med['worker_compute'] / med['wall']:.0%}",
                ],
                [
                    "rest of the step's round trip (serialisation, network, actor calls)",
                    f"{med['round_trip'] - med['worker_compute']:.4f}",
                    f"{(med['round_trip'] - med['worker_compute']) / med['wall']:.0%}",
                ],
                [
                    "reduce on the client (sum of histograms, 1/Z)",
                    f"{med['reduce']:.4f}",
                    f"{med['reduce'] / med['wall']:.0%}",
                ],
                [
                    "client: candidate table, choice, alpha, bookkeeping",
                    f"{med['other']:.4f}",
                    f"{med['other'] / med['wall']:.0%}",
                ],
            ],
        ),  # fmt: skip
    ]
    ls = r.get("line_search")
    if ls:
        lm = ls["median"]
        lines += [
            "",
            '## `alpha="line_search"`',
            "",
            f"Median round {lm['wall']:.4f} s with "
            f"{int(np.median(ls['slope_round_trips']))} extra round trips (one per evaluation "
            "of dZ/dalpha, each a call on every block) against "
            f'{med["wall"]:.4f} s for `alpha="r"`, which needs none.',
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--features", type=int, default=136)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--query-size", type=int, default=100)
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument("--line-search-rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    add_write_results(p)
    args = p.parse_args()
    import distributed

    r: dict[str, Any] = {"machine": machine_info(), "args": vars(args)}
    print(machine_line(r["machine"]), flush=True)
    X, y, qid = make_data(args.rows, args.features, args.query_size, args.seed)
    Xw, yw, qw = make_data(3000, args.features, 100, seed=1)
    rb.train(Xw, rb.LayeredFeedback(yw, qw), n_rounds=2)  # compile
    r["one"] = one_machine(X, rb.LayeredFeedback(y, qid), args.rounds)
    print(f"one machine: {r['one']['s_per_round']:.4f} s/round", flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
            memory_limit=0,
        )  # fmt: skip
    client = distributed.Client(cluster)
    # the data is embedded in the graph (da.from_array) so that a lost partition could be
    # recomputed; dask warns about the graph's size, which is the point here
    warnings.filterwarnings("ignore", message="Sending large graph")
    try:
        on_dask(client, Xw, yw, qw, 2, 1)  # compile on the workers
        r["dask"] = on_dask(client, X, y, qid, args.partitions, args.rounds)
        print(f"dask: {r['dask']['median']}", flush=True)
        q = args.rows // 4
        r["dask_quarter"] = on_dask(client, X[:q], y[:q], qid[:q], args.partitions, 2)
        if args.line_search_rounds:
            r["line_search"] = on_dask(
                client, X, y, qid, args.partitions, args.line_search_rounds,
                alpha="line_search",
            )  # fmt: skip
    finally:
        client.close()
        cluster.close()
    md = report(args, r)
    print()
    print(md)
    full = args.rows == 1_000_000 and args.features == 136
    name = "bench_dask" if full else f"bench_dask_{args.rows}x{args.features}"
    report_result(args.write_results, name, md, r)


if __name__ == "__main__":
    main()
