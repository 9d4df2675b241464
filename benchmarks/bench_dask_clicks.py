"""Click logs counted on a Dask LocalCluster vs one machine (issue 49, item 3).

What it measures, in one run:

1. ``rankboost clicks simulate`` on MQ2008 Fold 1 (``../shared/data``) writes a log of
   ``--sessions`` sessions (gzip TSV, about 9 rows per session), in a child process; the log
   is then cut into ``--shards`` gzip shards of about equal rows, each with the header, never
   inside a session (the shards, one after the other, are the log).
2. **One machine**: ``rankboost.clicks.read_click_counts`` of the whole log in a fresh child
   process, after the kernels were loaded on a tiny log: wall time, CPU time and peak RSS
   (``VmHWM``).
3. **Dask**: a ``distributed.LocalCluster`` of ``--workers`` worker processes (1 thread each)
   with ``--memory-limit`` each (the nanny pauses a worker at 80% of it and restarts it at
   95%), the kernels loaded on every worker on the tiny log, every worker's peak RSS reset;
   then ``rankboost.dask.read_click_counts(client, shards, ...)``: wall time, the workers' CPU
   time, and each worker's peak RSS during the count.
4. The two results are compared array by array (they must be equal, bit for bit).

The issue's goal: 10^8 sessions as 100 shards at <= 2 GB per worker. On the shared 2-core
machine run the largest it allows, e.g.:
    PYTHONPATH=src .venv/bin/python benchmarks/bench_dask_clicks.py --sessions 10000000 \
        --shards 100 --write-results
Smaller: ``--sessions 1000000 --shards 10`` (the default); ``--smoke`` (2,000 sessions, 3
shards: seconds, for tests). With ``--write-results`` it writes
``benchmarks/results/bench_dask_clicks_<sessions>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
import warnings
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


def split_log(src: Path, folder: Path, n_rows: int, n_shards: int) -> list[Path]:
    """Cut a log written session by session into about ``n_rows / n_shards`` rows per shard,
    at session ends (a change of (qid, session)), streamed in 16 MiB blocks; the shards."""
    target = -(-n_rows // n_shards)
    paths: list[Path] = []

    def next_shard(header: bytes) -> Any:
        paths.append(folder / f"part-{len(paths):04d}.tsv.gz")
        out = gzip.open(paths[-1], "wb", compresslevel=1)
        out.write(header)
        return out

    def key(line: bytes) -> list[bytes]:
        return line.split(b"\t")[0:5:4]  # qid, session

    with gzip.open(src, "rb") as fh:
        header = fh.readline()
        out = next_shard(header)
        written, pending, prev, carry = 0, False, [b""], b""
        while True:
            data = carry + fh.read(1 << 24)
            last = data.rfind(b"\n") + 1
            if last == 0:  # the end (a last line without its newline goes with it)
                out.write(data)
                break
            carry = data[last:]
            ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8, count=last) == 10)
            starts = np.r_[0, ends[:-1] + 1]
            n, i, lo = ends.shape[0], 0, 0
            while i < n:
                if not pending:  # skip to the shard's target row
                    step = min(target - written, n - i)
                    i += step
                    written += step
                    if written < target:
                        break
                    prev, pending = key(data[starts[i - 1] : ends[i - 1]]), True
                    continue
                if key(data[starts[i] : ends[i]]) != prev:  # a new session: cut before it
                    out.write(data[lo : starts[i]])
                    out.close()
                    out = next_shard(header)
                    lo, written, pending = int(starts[i]), 0, False
                else:  # the session goes on
                    i += 1
                    written += 1
            out.write(data[lo:last])
        out.close()
    return paths


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


def _simulate(log: Path, features: Path, sessions: int) -> float:
    t = time.perf_counter()
    cmd = [sys.executable, "-m", "rankboost", "clicks", "simulate", str(features)]
    cmd += ["--sessions", str(sessions), "-q", "-o", str(log)]
    subprocess.run(cmd, check=True)
    return time.perf_counter() - t


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
    p.add_argument("--smoke", action="store_true", help="2,000 sessions, 3 shards")
    p.add_argument("--keep", type=Path, help="write the log and shards here (default: temporary)")
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
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        (folder / "shards").mkdir(parents=True, exist_ok=True)
        log, warm = folder / f"clicks_{args.sessions}.tsv.gz", Path(tmp) / "tiny.tsv.gz"
        sim = _simulate(log, features, args.sessions)
        _simulate(warm, features, 200)
        with gzip.open(log, "rb") as fh:
            n_rows = sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 24), b"")) - 1
        t = time.perf_counter()
        shards = split_log(log, folder / "shards", n_rows, args.shards)
        cut = time.perf_counter() - t
        size = sum(s.stat().st_size for s in shards) / 1e6
        print(
            f"simulated {args.sessions} sessions ({n_rows} rows, {log.stat().st_size / 1e6:.1f} "
            f"MB) in {sim:.1f} s; cut into {len(shards)} shards ({size:.1f} MB) in {cut:.1f} s",
            flush=True,
        )
        one = _one_machine(log, features, warm, Path(tmp) / "one.npz")
        print(
            f"one machine: {one['seconds']:.1f} s, peak {one['peak_rss'] / GB:.2f} GB", flush=True
        )
        counts, dask = _on_dask(args, shards, features, warm)
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
        f"Counts equal to one machine's, array by array: {'yes' if equal else 'NO'}. "
        f"Workers restarted during the count: {dask['restarts']}. The tasks' own compute "
        f"(wall, summed over tasks): {tasks}; the workers' CPU time also counts their "
        "event loop, heartbeats and Dask's sampling profiler over the whole wall time.",
        "",
        "Made by `PYTHONPATH=src .venv/bin/python benchmarks/bench_dask_clicks.py "
        f"--sessions {args.sessions} --shards {args.shards} --memory-limit {args.memory_limit}`.",
    ]
    markdown = "\n".join(lines) + "\n"
    print(markdown)
    data = {
        "machine": info,
        "sessions": args.sessions,
        "rows": n_rows,
        "shards": len(shards),
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
