"""Click logs at scale: reading + pair extraction against pandas.read_csv of the same file.

What it measures, in one run (issue 40):

1. ``rankboost clicks simulate`` on MQ2008 Fold 1 (``../shared/data``) writes a log of
   ``--sessions`` sessions (gzip TSV, about 9 rows per session), in a child process: its
   wall time and peak memory.
2. Then ``--repeats`` rounds, each one child process per contender, alternating which goes
   first: **ours** = ``read_click_log`` + ``ClickLog.match`` (the feature file's qid and
   docid) + ``click_pairs`` (all_shown, no propensity: the ``train --clicks`` steps before
   the propensity and the rounds), after the numba kernels were loaded on a tiny log in the
   same child; **pandas** = ``pandas.read_csv(path, sep="\\t")`` alone (parsing only: no
   session grouping, no validation, no pairs). Each child reports its CPU time
   (``time.process_time``: all its threads), its wall time and its peak RSS (``VmHWM``: the
   child's own address space, see ``_common.peak_rss_bytes``). The ratio is taken on CPU
   time: on the shared 2-core machine wall time mostly measures the other processes.
   A third contender, **streamed** = ``read_click_counts`` + ``click_pairs``: what ``train
   --clicks`` runs (the log summed chunk by chunk into pairs and cells, never held whole).
3. Once, ours in a fresh child without the warm-up: the cost a command pays to load the
   compiled kernels (``cold``).

Targets (issue 40): ours within 2x pandas' read time and under 2 GB at 10^6 sessions.

Run:
    PYTHONPATH=src .venv/bin/python benchmarks/bench_clicks.py --write-results
``--no-whole`` skips ours (the whole log in memory, ~1 GB per 10^6 sessions; pandas still
runs, ~0.7 GB per 10^6). 10^7 sessions end to end: the commands in docs/clicks.md.
Smaller: ``--sessions 100000``; ``--smoke`` (2,000 sessions, one repeat, no cold run: seconds,
for tests; its "cold" row repeats the warm one).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
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
)

TRAIN = "letor4/MQ2008/Fold1/train.txt.gz"
GB = 1024**3


def _child(kind: str, log: str, features: str, warm: str | None) -> None:
    """One measurement in this (fresh) process; prints a JSON line."""
    out: dict[str, Any] = {"kind": kind}
    if kind == "pandas":
        import pandas as pd

        t, c = time.perf_counter(), time.process_time()
        frame = pd.read_csv(log, sep="\t")
        out["seconds"] = time.perf_counter() - t
        out["cpu_seconds"] = time.process_time() - c
        out["rows"] = len(frame)
    elif kind == "simulate":
        from rankboost.cli import main as cli_main

        t, c = time.perf_counter(), time.process_time()
        n = warm or "1"
        code = cli_main(["clicks", "simulate", features, "--sessions", n, "-q", "-o", log])
        out["seconds"] = time.perf_counter() - t
        out["cpu_seconds"] = time.process_time() - c
        out["status"] = code
    elif kind == "streamed":
        from rankboost.clicks import click_pairs, read_click_counts
        from rankboost.datasets import load_svmlight

        data = load_svmlight(features)
        if warm:  # load the compiled kernels first
            click_pairs(read_click_counts(warm, data.qid, data.docids))
        t, c = time.perf_counter(), time.process_time()
        counts = read_click_counts(log, data.qid, data.docids)
        pairs, _ = click_pairs(counts)
        out["seconds"] = time.perf_counter() - t
        out["cpu_seconds"] = time.process_time() - c
        out["rows"] = counts.n_entries
        out["sessions"] = counts.n_sessions
        out["pairs"] = int(pairs.shape[0])
    else:
        from rankboost.clicks import click_pairs, read_click_log
        from rankboost.datasets import load_svmlight

        data = load_svmlight(features)
        if kind == "ours" and warm:  # load the compiled kernels first
            click_pairs(read_click_log(warm).match(data.qid, data.docids))
        t, c = time.perf_counter(), time.process_time()
        clicks = read_click_log(log)
        t_read, c_read = time.perf_counter() - t, time.process_time() - c
        pairs, _ = click_pairs(clicks.match(data.qid, data.docids))
        out["seconds"] = time.perf_counter() - t
        out["cpu_seconds"] = time.process_time() - c
        out["read_cpu_seconds"] = c_read
        out["read_seconds"] = t_read
        out["rows"] = clicks.n_entries
        out["sessions"] = clicks.n_sessions
        out["pairs"] = int(pairs.shape[0])
    out["peak_rss"] = peak_rss_bytes()
    print(json.dumps(out))


def _run(kind: str, log: Path, features: Path, warm: str | None = None) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", kind, str(log), str(features), warm or ""]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench_clicks.py: error: the {kind} child failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sessions", type=int, default=1_000_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--smoke", action="store_true", help="2,000 sessions, one repeat")
    p.add_argument("--keep", type=Path, help="write the log here (default: a temporary folder)")
    p.add_argument(
        "--no-whole",
        action="store_true",
        help="skip read_click_log (the whole log in memory: about 1 GB per 10^6 sessions)",
    )
    p.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    add_write_results(p)
    args = p.parse_args()
    if args.child:
        kind, log, features, warm = args.child
        _child(kind, log, features, warm or None)
        return
    if args.smoke:
        args.sessions, args.repeats = 2_000, 1
    features = data_file(TRAIN)
    try:
        import pandas  # noqa: F401
    except ImportError:
        raise SystemExit("bench_clicks.py: error: needs pandas (the `bench` extra).") from None
    info = machine_info()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        log = folder / f"clicks_{args.sessions}.tsv.gz"
        tiny = Path(tmp) / "tiny.tsv.gz"
        sim = _run("simulate", log, features, str(args.sessions))
        if args.smoke:
            tiny = log  # the warm-up reads the log itself
        else:
            _run("simulate", tiny, features, "200")
        size_mb = log.stat().st_size / 1e6
        print(
            f"simulated {args.sessions} sessions: {size_mb:.1f} MB, "
            f"{sim['seconds']:.1f} s, peak {sim['peak_rss'] / GB:.2f} GB",
            flush=True,
        )
        kinds = ("streamed", "pandas") if args.no_whole else ("ours", "streamed", "pandas")
        runs: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
        for r in range(args.repeats):
            for kind in kinds if r % 2 == 0 else kinds[::-1]:
                runs[kind].append(_run(kind, log, features, str(tiny)))
            print(
                f"repeat {r + 1}: "
                + ", ".join(f"{k} {runs[k][-1]['seconds']:.2f} s" for k in kinds),
                flush=True,
            )
        cold = None
        if not args.no_whole:
            cold = runs["ours"][0] if args.smoke else _run("cold", log, features)

    def med(kind: str, key: str) -> float:
        return float(np.median([x[key] for x in runs[kind]]))

    peak = {k: float(np.median([x["peak_rss"] for x in v])) / GB for k, v in runs.items()}

    def ratios(kind: str, key: str) -> float:
        both = zip(runs[kind], runs["pandas"], strict=True)
        return float(np.median([o[key] / q[key] for o, q in both]))

    main = "streamed" if args.no_whole else "ours"
    ratio, ratio_wall = ratios(main, "cpu_seconds"), ratios(main, "seconds")
    ratio_streamed = ratios("streamed", "cpu_seconds")
    ours = runs[main][0]
    rows = []
    if not args.no_whole:
        assert cold is not None
        rows += [
            ["ours: read_click_log + match + click_pairs", med("ours", "cpu_seconds"),
             med("ours", "seconds"), f"{peak['ours']:.2f}"],
            ["  of which read_click_log", med("ours", "read_cpu_seconds"),
             med("ours", "read_seconds"), ""],
        ]  # fmt: skip
    rows += [
        ["ours, streamed: read_click_counts + click_pairs (train --clicks)",
         med("streamed", "cpu_seconds"), med("streamed", "seconds"), f"{peak['streamed']:.2f}"],
        ["pandas.read_csv (parse only)", med("pandas", "cpu_seconds"), med("pandas", "seconds"),
         f"{peak['pandas']:.2f}"],
    ]  # fmt: skip
    if cold is not None:
        rows.append(
            ["ours, cold (loading the compiled kernels included)", cold["cpu_seconds"],
             cold["seconds"], f"{cold['peak_rss'] / GB:.2f}"],
        )  # fmt: skip
    rows.append(
        ["clicks simulate (writing the log)", sim["cpu_seconds"], sim["seconds"],
         f"{sim['peak_rss'] / GB:.2f}"],
    )  # fmt: skip
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    text = "\n".join(
        [
            "# Click-log benchmark (`benchmarks/bench_clicks.py`)",
            "",
            machine_line(info),
            "",
            f"Log: `rankboost clicks simulate` on MQ2008 Fold 1, {args.sessions:,} sessions, "
            f"{ours['rows']:,} rows, {size_mb:.1f} MB gzip; {ours['pairs']:,} all_shown pairs. "
            f"Medians over {args.repeats} repeats, each contender in its own process "
            "(alternating order); peak memory = the child's `VmHWM`.",
            "",
            markdown_table(["step", "CPU s", "wall s", "peak GB"], rows),
            "",
            f"ours / pandas: **{ratio:.2f}x** the CPU time, {ratio_wall:.2f}x the wall time "
            f"(medians of per-repeat ratios; target <= 2), peak {peak[main]:.2f} GB (target "
            f"< 2); streamed / pandas: {ratio_streamed:.2f}x the CPU time, peak "
            f"{peak['streamed']:.2f} GB. Load average (1 min) at the end: {load:.1f} on "
            f"{os.cpu_count()} cores: on "
            "this shared machine wall time mostly measures the other processes, so the ratio "
            "is taken on CPU time (`time.process_time`, all threads of the child).",
        ]
    )
    print(text)
    data = {
        "machine": info,
        "sessions": args.sessions,
        "runs": runs,
        "cold": cold,
        "simulate": sim,
        "ratio_cpu": ratio,
        "ratio_wall": ratio_wall,
        "ratio_cpu_streamed": ratio_streamed,
    }
    name = "bench_clicks" if args.sessions == 1_000_000 else f"bench_clicks_{args.sessions}"
    report_result(args.write_results and not args.smoke, name, text + "\n", data)


if __name__ == "__main__":
    main()
