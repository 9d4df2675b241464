"""Click logs counted on a Dask LocalCluster vs one machine (issue 49, item 3).

What it measures, in one run:

1. **The shards**, simulated in parallel (``--workers`` processes of a process pool) by the
   library's simulator, :func:`rankboost.clicks.simulate_to_file`, with the protocol and
   defaults of ``rankboost clicks simulate`` on MQ2008 Fold 1 (``../shared/data``): one
   production ranker (trained once, ``--seed``), then shard ``k`` is a log of its share of
   ``--sessions`` drawn with seed ``--seed + k`` (distinct sessions, not copies), its
   sessions numbered after the previous shards' (so no session comes back in the shards
   written one after the other), gzip level 1. A shard is two gzip members, the header line
   and the rows, so the **whole log** is the header member followed by every shard's rows
   member: bytes copied, not compressed again. (The old way, one 10^8-session log simulated
   in one process at gzip level 6 and then cut and compressed again, took about 2 hours
   here; zlib at level 6 was 80% of the simulation.)
2. **One machine**: ``rankboost.clicks.read_click_counts`` of the whole log in a fresh child
   process, after the kernels were loaded on a tiny log: wall time, CPU time and peak RSS
   (``VmHWM``).
3. **Dask**: a ``distributed.LocalCluster`` of ``--workers`` worker processes (1 thread each)
   with ``--memory-limit`` each (the nanny pauses a worker at 80% of it and restarts it at
   95%), the kernels loaded on every worker on the tiny log, every worker's peak RSS reset;
   then ``rankboost.dask.read_click_counts(client, shards, ...)``: wall time, the workers' CPU
   time, and each worker's peak RSS during the count.
4. The two results are compared array by array (they must be equal, bit for bit).

The issue's goal, 10^8 sessions as 100 shards at <= 2 GB per worker (about 20 minutes on a
quiet 2-core machine, 7 GB of disk while it runs: the shards and the whole log):
    PYTHONPATH=src .venv/bin/python benchmarks/bench_dask_clicks.py --sessions 100000000 \
        --shards 100 --write-results
Smaller: ``--sessions 1000000 --shards 10`` (the default); ``--smoke`` (2,000 sessions, 3
shards: seconds, for tests). With ``--write-results`` it writes
``benchmarks/results/bench_dask_clicks_<sessions>.md`` and ``.json``. ``--keep DIR`` keeps
the shards and the whole log in ``DIR`` (default: a temporary folder, deleted at the end).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    add_write_results,
    data_file,
    machine_info,
    machine_line,
    markdown_table,
    peak_rss_bytes,
    report_result,
    reset_peak,
)

TRAIN = "letor4/MQ2008/Fold1/train.txt.gz"
GB = 1024**3
ARRAYS = (
    "pair_lower",
    "pair_upper",
    "pair_position",
    "pair_count",
    "cell_row",
    "cell_position",
    "cell_impressions",
    "cell_clicks",
)
FIELDS = ("n_samples", "n_sessions", "n_entries", "n_clicks", "max_click_position")
LEVEL = 1  # gzip level of the shards

_ROWS: dict[str, Any] = {}  # a pool process's feature rows and production scores


def header_member() -> bytes:
    """The log's header line as a gzip member of its own (the same bytes every time)."""
    from rankboost.clicks._simulate import HEADER

    return gzip.compress(HEADER, compresslevel=LEVEL, mtime=0)


def shard_plan(n_sessions: int, n_shards: int) -> list[tuple[int, int]]:
    """``(first_session, sessions)`` of each shard: equal shares, the first ones one more."""
    share, extra = divmod(n_sessions, n_shards)
    sizes = [share + (k < extra) for k in range(n_shards)]
    firsts = np.r_[0, np.cumsum(sizes)[:-1]]
    return [(int(f), m) for f, m in zip(firsts, sizes, strict=True) if m]


def _load_rows(rows: str) -> None:
    with np.load(rows) as z:
        _ROWS.update({k: z[k] for k in z.files})


def _write_shard(path: str, k: int, first: int, sessions: int, seed: int) -> tuple[int, int]:
    """Shard ``k``: the header member, then its sessions' rows (seed ``seed + k``), written
    atomically; its rows and clicks."""
    from rankboost.clicks import simulate_to_file

    body = f"{path}.rows.gz"
    _, n_rows, n_clicks, _ = simulate_to_file(
        body,
        _ROWS["y"],
        _ROWS["qid"],
        _ROWS["scores"],
        sessions,
        docids=_ROWS["docids"],
        random_state=seed + k,
        first_session=first,
        header=False,
        compresslevel=LEVEL,
    )
    with open(f"{path}.part", "wb") as out, open(body, "rb") as rows:
        out.write(header_member())
        shutil.copyfileobj(rows, out, 1 << 24)
    os.replace(f"{path}.part", path)
    os.remove(body)
    return n_rows, n_clicks


def production_rows(features: Path, seed: int, out: Path) -> None:
    """The feature rows' grades, qids, docids and production scores, saved to ``out``: the
    production ranker trained once, as ``rankboost clicks simulate`` trains it (seed ``seed``)."""
    from rankboost.clicks import production_ranker
    from rankboost.datasets import load_svmlight

    data = load_svmlight(features)
    ranker = production_ranker(data.X, data.y, data.qid, random_state=seed)
    scores = ranker.decision_function(data.X)
    np.savez(out, y=data.y, qid=data.qid, docids=data.docids, scores=scores)


def write_shards(
    folder: Path, rows: Path, n_sessions: int, n_shards: int, seed: int, jobs: int
) -> tuple[list[Path], int, int]:
    """Simulate the shards into ``folder`` with a pool of ``jobs`` processes, each loading the
    rows of :func:`production_rows` once; the shards' paths, their rows and clicks."""
    plan = shard_plan(n_sessions, n_shards)
    paths = [folder / f"part-{k:04d}.tsv.gz" for k in range(len(plan))]
    ctx = get_context("spawn")  # fresh processes: no copy of this one's threads or memory
    with ProcessPoolExecutor(jobs, ctx, initializer=_load_rows, initargs=(str(rows),)) as pool:
        done = [
            pool.submit(_write_shard, str(p), k, first, m, seed)
            for k, (p, (first, m)) in enumerate(zip(paths, plan, strict=True))
        ]
        counts = [f.result() for f in done]
    return paths, sum(r for r, _ in counts), sum(c for _, c in counts)


def whole_log(shards: list[Path], path: Path) -> None:
    """The shards written one after the other as one log: the header member once, then each
    shard's rows member (bytes copied)."""
    head = header_member()
    with open(path, "wb") as out:
        out.write(head)
        for shard in shards:
            with open(shard, "rb") as fh:
                if fh.read(len(head)) != head:
                    raise SystemExit(f"bench_dask_clicks.py: error: {shard} has another header.")
                shutil.copyfileobj(fh, out, 1 << 24)


def _child(log: str, features: str, warm: str, out: str) -> None:
    """One machine: the whole log counted in this fresh process; its counts saved to ``out``."""
    from rankboost.clicks import read_click_counts
    from rankboost.datasets import load_svmlight

    data = load_svmlight(features)
    read_click_counts(warm, data.qid, data.docids)  # load the compiled kernels first
    reset_peak()
    t, c = time.perf_counter(), time.process_time()
    counts = read_click_counts(log, data.qid, data.docids)
    seconds, cpu = time.perf_counter() - t, time.process_time() - c
    peak = peak_rss_bytes()
    np.savez(out, **{k: getattr(counts, k) for k in ARRAYS + FIELDS})
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "peak_rss": peak}))


def _one_machine(log: Path, features: Path, warm: Path, out: Path) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", str(log), str(features), str(warm), str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(
            f"bench_dask_clicks.py: error: the one-machine child failed:\n{done.stderr}"
        )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _on_dask(args: argparse.Namespace, shards: list[Path], features: Path, warm: Path) -> Any:
    import distributed

    import rankboost.dask as rbd
    from rankboost.datasets import load_svmlight

    data = load_svmlight(features)
    keys = data.qid, data.docids
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=args.memory_limit,
            dashboard_address=None,
        )
    client = distributed.Client(cluster)
    try:
        before = set(client.scheduler_info()["workers"])
        for address in before:  # the compiled kernels loaded on every worker
            client.submit(_warm, str(warm), data.qid, data.docids, workers=[address]).result()
        client.run(reset_peak)
        cpu0 = client.run(time.process_time)
        t = time.perf_counter()
        with distributed.get_task_stream(client) as stream:
            counts = rbd.read_click_counts(client, [str(p) for p in shards], *keys)
        seconds = time.perf_counter() - t
        cpu1 = client.run(time.process_time)
        peaks = client.run(peak_rss_bytes)
        restarts = len(set(client.scheduler_info()["workers"]) - before)
    finally:
        client.close()
        cluster.close()
    cpu = sum(cpu1[w] - cpu0.get(w, 0.0) for w in cpu1)
    tasks: dict[str, float] = {}
    for task in stream.data:  # the tasks' own compute time, by function
        name = task["key"].split("-")[0] if isinstance(task["key"], str) else str(task["key"])
        for part in task["startstops"]:
            if part["action"] == "compute":
                tasks[name] = tasks.get(name, 0.0) + part["stop"] - part["start"]
    return counts, {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "task_seconds": tasks,
        "peak_rss_per_worker": sorted(peaks.values()),
        "restarts": restarts,
    }


def _warm(path: str, qid: Any, docid: Any) -> int:
    from rankboost.clicks import read_click_counts

    return read_click_counts(path, qid, docid).n_sessions


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sessions", type=int, default=1_000_000)
    p.add_argument("--shards", type=int, default=10)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--memory-limit", default="2GB", help="per worker (default 2GB)")
    p.add_argument("--seed", type=int, default=0, help="production ranker; shard k: seed + k")
    p.add_argument("--smoke", action="store_true", help="2,000 sessions, 3 shards")
    p.add_argument(
        "--keep", type=Path, help="keep the shards and the whole log here (default: temporary)"
    )
    p.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    add_write_results(p)
    args = p.parse_args()
    if args.child:
        _child(*args.child)
        return
    if args.smoke:
        args.sessions, args.shards = 2_000, 3
    features = data_file(TRAIN)
    info = machine_info()
    load: dict[str, tuple[float, ...]] = {"start": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        (folder / "shards").mkdir(parents=True, exist_ok=True)
        rows, warm = Path(tmp) / "rows.npz", Path(tmp) / "tiny.tsv.gz"
        log = folder / f"clicks_{args.sessions}.tsv.gz"
        t = time.perf_counter()
        production_rows(features, args.seed, rows)
        _load_rows(str(rows))
        _write_shard(str(warm), 0, 0, 200, args.seed + args.shards)  # not one of the shards
        production = time.perf_counter() - t
        t = time.perf_counter()
        shards, n_rows, n_clicks = write_shards(
            folder / "shards", rows, args.sessions, args.shards, args.seed, args.workers
        )
        sim = time.perf_counter() - t
        t = time.perf_counter()
        whole_log(shards, log)
        cat = time.perf_counter() - t
        size = sum(s.stat().st_size for s in shards)
        load["simulated"] = os.getloadavg()
        print(
            f"simulated {args.sessions} sessions ({n_rows} rows, {n_clicks} clicks) as "
            f"{len(shards)} shards ({size / 1e6:.1f} MB, gzip level {LEVEL}) with "
            f"{args.workers} processes in {sim:.1f} s (the production ranker before: "
            f"{production:.1f} s); whole log ({log.stat().st_size / 1e6:.1f} "
            f"MB) in {cat:.1f} s; load average {load['simulated'][0]:.1f}",
            flush=True,
        )
        one = _one_machine(log, features, warm, Path(tmp) / "one.npz")
        load["one machine"] = os.getloadavg()
        print(
            f"one machine: {one['seconds']:.1f} s, peak {one['peak_rss'] / GB:.2f} GB; load "
            f"average {load['one machine'][0]:.1f}",
            flush=True,
        )
        if not args.keep:
            log.unlink()  # the disk for the shards only
        counts, dask = _on_dask(args, shards, features, warm)
        load["dask"] = os.getloadavg()
        with np.load(Path(tmp) / "one.npz") as want:
            equal = all(np.array_equal(getattr(counts, k), want[k]) for k in ARRAYS) and all(
                getattr(counts, k) == want[k] for k in FIELDS
            )
    peaks = ", ".join(f"{v / GB:.2f}" for v in dask["peak_rss_per_worker"])
    tasks = ", ".join(f"{k} {v:.1f} s" for k, v in sorted(dask["task_seconds"].items()))
    rows = [
        ["one machine: read_click_counts(whole log)", one["seconds"], one["cpu_seconds"],
         f"{one['peak_rss'] / GB:.2f}"],
        [f"Dask: read_click_counts({len(shards)} shards), {args.workers} workers x "
         f"{args.memory_limit}", dask["seconds"], dask["cpu_seconds"], peaks],
    ]  # fmt: skip
    table = markdown_table(["", "wall s", "CPU s", "peak RSS GB (per process)"], rows)
    lines = [
        f"# Click logs on Dask: {args.sessions} sessions ({n_rows} rows) as {len(shards)} shards",
        "",
        machine_line(info),
        "",
        table,
        "",
        f"The shards: {args.sessions} sessions ({n_rows} rows, {n_clicks} clicks) simulated "
        f"by `simulate_to_file` (MQ2008 Fold 1, the defaults of `rankboost clicks simulate`, "
        f"seeds {args.seed}..{args.seed + len(shards) - 1}) with {args.workers} processes in "
        f"{sim:.1f} s (after the production ranker, {production:.1f} s); {size:,} bytes at "
        f"gzip level {LEVEL} (the whole log, their concatenation, made in {cat:.1f} s).",
        "",
        f"Load average (1 min, 2 cores): {load['start'][0]:.1f} at the start, "
        f"{load['simulated'][0]:.1f} after the simulation, {load['one machine'][0]:.1f} after "
        f"the one-machine count, {load['dask'][0]:.1f} after the Dask count.",
        "",
        f"Counts equal to one machine's, array by array: {'yes' if equal else 'NO'}. "
        f"Workers restarted during the count: {dask['restarts']}. The tasks' own compute "
        f"(wall, summed over tasks): {tasks}; the workers' CPU time also counts their "
        "event loop, heartbeats and Dask's sampling profiler over the whole wall time.",
        "",
        "Made by `PYTHONPATH=src .venv/bin/python benchmarks/bench_dask_clicks.py "
        f"--sessions {args.sessions} --shards {args.shards} --workers {args.workers} "
        f"--memory-limit {args.memory_limit} --seed {args.seed}`.",
    ]
    markdown = "\n".join(lines) + "\n"
    print(markdown)
    data = {
        "machine": info,
        "sessions": args.sessions,
        "rows": n_rows,
        "clicks": n_clicks,
        "shards": len(shards),
        "shard_bytes": size,
        "seed": args.seed,
        "production_seconds": production,
        "simulate_seconds": sim,
        "whole_log_seconds": cat,
        "load_average": load,
        "memory_limit": args.memory_limit,
        "one_machine": one,
        "dask": dask,
        "equal": equal,
    }
    report_result(args.write_results, f"bench_dask_clicks_{args.sessions}", markdown, data)
    if not equal:
        raise SystemExit("bench_dask_clicks.py: error: the Dask counts differ from one machine's.")


if __name__ == "__main__":
    main()
