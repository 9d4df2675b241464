"""``rankboost fuse train`` (``--family auto``) on many runs: time and peak memory (issue 46).

Builds ``--runs`` synthetic TREC runs of ``--queries`` queries (each run returns the top
``--docs`` of a pool of ``1.5 x --docs`` documents per query, scored by a run-specific mix of
the grade and noise) and their qrels (grades 0, 1, 2 in proportions 70/20/10), writes them
gzipped to a temporary folder, then runs ``python -m rankboost fuse train`` on them in a child
process and prints its wall time, its peak resident memory (``getrusage`` of the child,
``ru_maxrss``: the largest of the process's resident sets) and the family it chose. The
goal of issue 46: 1,000 runs x 100 queries x 100 documents in <= 2 minutes and <= 1 GB.

``--api`` times the Python fit instead: a child process builds the same runs in memory
(:func:`make_runs`, no file) and times ``AutoFusion().fit`` alone, printing its seconds, the
process's peak resident memory (runs included) and the family (on a loaded machine its
CPU seconds, ``process_time`` of all threads, say more than the wall time). ``--compare N``
(default 25) then runs the same shape with ``N`` runs, side by side. Reading 1,000 run
files of 10,000 lines takes ``fuse train`` minutes by itself (``read_run`` parses line by
line), so ``--api`` is the measure of the fit.

Run (a few minutes on a loaded 2-core machine, most of them writing the runs)::

    PYTHONPATH=src .venv/bin/python benchmarks/bench_fuse_wide.py --runs 1000 --queries 100 \\
        --docs 100 --api

``--keep DIR`` writes the runs there and keeps them; ``--family`` and ``--extra`` pass other
options to ``fuse train``.
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def write_runs(folder: Path, n_runs: int, n_queries: int, depth: int, seed: int = 0) -> None:
    """``run0000.run.gz ...`` and ``qrels.txt`` in ``folder`` (seeded, so always the same)."""
    rng = np.random.default_rng(seed)
    pool = int(depth * 1.5)
    grades = rng.choice([0, 1, 2], size=(n_queries, pool), p=[0.7, 0.2, 0.1])
    docs = np.array([f"d{j}" for j in range(pool)])
    with open(folder / "qrels.txt", "w", encoding="ascii") as fh:
        for q in range(n_queries):
            fh.writelines(f"q{q} 0 {docs[j]} {grades[q, j]}\n" for j in range(pool))
    quality = rng.uniform(0.0, 1.5, n_runs)
    ranks = np.arange(1, depth + 1)
    for r in range(n_runs):
        scores = quality[r] * grades + rng.normal(size=grades.shape)
        top = np.argsort(-scores, axis=1, kind="stable")[:, :depth]
        lines = []
        for q in range(n_queries):
            s = scores[q, top[q]]
            lines += [
                f"q{q} Q0 {docs[j]} {k} {v:.6f} r{r}\n"
                for j, k, v in zip(top[q], ranks, s, strict=True)
            ]
        with gzip.open(folder / f"run{r:04d}.run.gz", "wt", compresslevel=1) as fh:
            fh.writelines(lines)


def make_runs(n_runs: int, n_queries: int, depth: int, seed: int = 0) -> tuple[list, object]:
    """The runs and qrels of :func:`write_runs` in memory (scores rounded as written)."""
    from rankboost.fusion import Qrels, Run

    rng = np.random.default_rng(seed)
    pool = int(depth * 1.5)
    grades = rng.choice([0, 1, 2], size=(n_queries, pool), p=[0.7, 0.2, 0.1])
    docs = np.array([f"d{j}" for j in range(pool)])
    qs = np.array([f"q{q}" for q in range(n_queries)])
    qrels = Qrels(np.repeat(qs, pool), np.tile(docs, n_queries), grades.reshape(-1))
    quality = rng.uniform(0.0, 1.5, n_runs)
    ranks = np.tile(np.arange(1, depth + 1), n_queries)
    runs = []
    for r in range(n_runs):
        scores = quality[r] * grades + rng.normal(size=grades.shape)
        top = np.argsort(-scores, axis=1, kind="stable")[:, :depth]
        s = np.round(np.take_along_axis(scores, top, axis=1), 6).reshape(-1)
        runs.append(Run(np.repeat(qs, depth), docs[top].reshape(-1), ranks, s, name=f"run{r:04d}"))
    return runs, qrels


def fit_in_memory(n_runs: int, n_queries: int, depth: int) -> None:
    """(child of ``--api``) time ``AutoFusion().fit`` on :func:`make_runs`' runs."""
    import warnings

    from rankboost.fusion import AutoFusion

    runs, qrels = make_runs(n_runs, n_queries, depth)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = AutoFusion().fit(runs, qrels)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"AutoFusion().fit: {n_runs} runs x {n_queries} queries x {depth} documents: "
          f"{seconds:.1f} s ({cpu:.1f} CPU s), peak RSS {peak:.0f} MB ({before:.0f} MB with "
          f"the runs built, before the fit); chose {auto.family_} "
          f"(left out: {auto.selection_.get('left_out_wide', [])})", flush=True)  # fmt: skip


def run_api(n_runs: int, n_queries: int, depth: int) -> None:
    cmd = [sys.executable, __file__, "--child-api", str(n_runs), str(n_queries), str(depth)]
    subprocess.run(cmd, check=False, env=os.environ.copy())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--family", default="auto")
    ap.add_argument("--extra", nargs=argparse.REMAINDER, default=[])
    ap.add_argument("--keep", metavar="DIR", default=None)
    ap.add_argument("--api", action="store_true", help="time AutoFusion().fit in memory")
    ap.add_argument("--compare", type=int, default=25, help="then the same shape with N runs")
    ap.add_argument("--child-api", nargs=3, type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_api is not None:
        fit_in_memory(*args.child_api)
        return
    if args.api:
        for n in (args.runs, args.compare):
            run_api(n, args.queries, args.docs)
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        return

    tmp = None
    if args.keep is None:
        tmp = tempfile.TemporaryDirectory()
        folder = Path(tmp.name)
    else:
        folder = Path(args.keep)
        folder.mkdir(parents=True, exist_ok=True)
    if not (folder / f"run{args.runs - 1:04d}.run.gz").exists():
        t0 = time.perf_counter()
        write_runs(folder, args.runs, args.queries, args.docs)
        print(f"wrote {args.runs} runs in {time.perf_counter() - t0:.1f} s", flush=True)
    runs = sorted(str(p) for p in folder.glob("run*.run.gz"))[: args.runs]
    cmd = [sys.executable, "-m", "rankboost", "fuse", "train", "--runs", *runs,
           "--qrels", str(folder / "qrels.txt"), "-o", str(folder / "model.json"), "-q",
           "--family", args.family, *args.extra]  # fmt: skip
    t0 = time.perf_counter()
    done = subprocess.run(cmd, check=False, capture_output=True, text=True, env=os.environ.copy())
    seconds = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    chosen = [line for line in done.stderr.splitlines() if "chose" in line or "error" in line]
    load = os.getloadavg()[0]
    print(f"fuse train --family {args.family}: {args.runs} runs x {args.queries} queries x "
          f"{args.docs} documents: exit {done.returncode}, {seconds:.1f} s, peak RSS "
          f"{peak_mb:.0f} MB (load average {load:.1f} on {os.cpu_count()} cores)")  # fmt: skip
    print("\n".join(line[:300] for line in chosen))
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
