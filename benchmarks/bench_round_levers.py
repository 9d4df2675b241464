"""Where the streaming passes of a round go, and what the levers of issue 36 do, on 1 thread.

Issue 36 asks for a round within 3 streaming passes of the bin matrix. This script times, on
``bench_engine.py``'s problem (1,000,000 rows x 136 features, queries of 100, grades 0-4),
in CPU time of one thread (``time.thread_time``, or ``process_time`` for the two kernels
compiled ``parallel=True``, run here on one thread), so that waiting for a core on a shared
machine does not count; each figure is the minimum over ``--repeats`` calls:

* the streaming pass (``bench_engine._stream_sum``) and the scatter floor
  (``bench_engine._scatter_floor``: the d n scattered stores any histogram of the codes
  commits, nothing else);
* the shipped histogram (``potential_histograms``, serial) and variants of it, each checked
  to give the same bits: codes read as bytes instead of words, eight features per sweep
  instead of four, and rows in blocks (every feature's histogram advanced one block of rows
  at a time, so the block's potential stays in cache: the loop a histogram fused with the
  update's sweep over queries must run);
* the binary update of the block (``layered_binary_update``, serial) and, inside it, the
  merge that restores the kept order and counts the training errors
  (``pairwise.counting_merge`` over every query).

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/bench_round_levers.py`` (about a minute
idle); ``--smoke`` for a tiny size. Prints a markdown table only.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_info, machine_line, markdown_table  # noqa: E402
from bench_engine import _scatter_floor, _stream_sum, make_data  # noqa: E402

import rankboost as rb  # noqa: E402
from rankboost._kernels import layered as kl  # noqa: E402
from rankboost._kernels.histogram import _histograms_serial, potential_histograms  # noqa: E402
from rankboost._kernels.pairwise import counting_merge  # noqa: E402


@njit(cache=True)
def eight_per_sweep(codes: np.ndarray, pi: np.ndarray, scale: float, out: np.ndarray) -> None:
    """The histogram with eight features per sweep over the rows (then one at a time)."""
    d, n = codes.shape
    n_codes = out.shape[1]
    acc = np.zeros((8, n_codes))
    for g in range(d // 8):
        acc[:] = 0.0
        i = 8 * g
        r0, r1, r2, r3 = codes[i], codes[i + 1], codes[i + 2], codes[i + 3]
        r4, r5, r6, r7 = codes[i + 4], codes[i + 5], codes[i + 6], codes[i + 7]
        a0, a1, a2, a3, a4, a5, a6, a7 = (
            acc[0],
            acc[1],
            acc[2],
            acc[3],
            acc[4],
            acc[5],
            acc[6],
            acc[7],
        )
        for j in range(n):
            p = pi[j]
            a0[r0[j]] += p
            a1[r1[j]] += p
            a2[r2[j]] += p
            a3[r3[j]] += p
            a4[r4[j]] += p
            a5[r5[j]] += p
            a6[r6[j]] += p
            a7[r7[j]] += p
        for k in range(8):
            for b in range(n_codes):
                out[i + k, b] = acc[k, b] * scale
    for i in range(d // 8 * 8, d):
        one = np.zeros(n_codes)
        row = codes[i]
        for j in range(n):
            one[row[j]] += pi[j]
        for b in range(n_codes):
            out[i, b] = one[b] * scale


@njit(cache=True)
def rows_in_blocks(
    codes: np.ndarray, pi: np.ndarray, scale: float, out: np.ndarray, block: int
) -> None:
    """The histogram advanced ``block`` rows at a time for every feature (four per sweep)."""
    d, n = codes.shape
    n_codes = out.shape[1]
    acc = np.zeros((d, n_codes))
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        for g in range(d // 4):
            i = 4 * g
            a0, a1, a2, a3 = acc[i], acc[i + 1], acc[i + 2], acc[i + 3]
            r0, r1, r2, r3 = codes[i], codes[i + 1], codes[i + 2], codes[i + 3]
            for j in range(lo, hi):
                p = pi[j]
                a0[r0[j]] += p
                a1[r1[j]] += p
                a2[r2[j]] += p
                a3[r3[j]] += p
        for i in range(d // 4 * 4, d):
            row = codes[i]
            one = acc[i]
            for j in range(lo, hi):
                one[row[j]] += pi[j]
    for i in range(d):
        for b in range(n_codes):
            out[i, b] = acc[i, b] * scale


@njit(cache=True)
def merges(
    H: np.ndarray, h: np.ndarray, level: np.ndarray, qstart: np.ndarray, lstart: np.ndarray,
    order: np.ndarray, tmp: np.ndarray,
) -> float:  # fmt: skip
    """``counting_merge`` over every query (the binary update's step 5)."""
    total = 0.0
    for q in range(qstart.shape[0] - 1):
        k = lstart[q + 1] - lstart[q]
        total += counting_merge(H, h, level, order, tmp, qstart[q], qstart[q + 1], k)
    return total


def cpu_min(f: Callable[[], Any], repeats: int, clock: Callable[[], float]) -> float:
    f()  # compile / warm
    best = np.inf
    for _ in range(repeats):
        t = clock()
        f()
        best = min(best, clock() - t)
    return float(best)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--features", type=int, default=136)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--smoke", action="store_true", help="3,000 rows x 12 features, 2 repeats")
    args = p.parse_args()
    if args.smoke:
        args.rows, args.features, args.repeats = 3000, 12, 2
    print(machine_line(machine_info()), flush=True)
    numba.set_num_threads(1)
    X, y, qid = make_data(args.rows, args.features, 100)
    bst = rb.Booster(X, rb.LayeredFeedback(y, qid))
    del X
    for _ in range(3):
        bst.update()
    blk = bst._blocks[0]
    codes = blk.codes
    pi, scale = blk.scaled_potential()
    pi = pi.copy()
    d, n_codes = codes.shape[0], bst.binner.n_codes
    ref = np.empty((d, n_codes))
    potential_histograms(codes, pi, ref, scale)
    thread, process = time.thread_time, time.process_time
    R = args.repeats
    sums = np.zeros(d, dtype=np.int64)
    table = np.zeros((d, 256))
    pass_s = cpu_min(lambda: _stream_sum(codes, sums), R, process)
    rows: list[tuple[str, float, str]] = [
        ("streaming pass (`_stream_sum`)", pass_s, "the yardstick"),
        ("scatter floor (`_scatter_floor`: the stores only)", 0.0, ""),
    ]
    rows[1] = (rows[1][0], cpu_min(lambda: _scatter_floor(codes, pi, table), R, process), "")
    out = np.empty((d, n_codes))

    def variant(name: str, f: Callable[[], None]) -> None:
        s = cpu_min(f, R, thread)
        same = np.array_equal(out, ref)
        rows.append((name, s, "same bits" if same else "DIFFERENT BITS"))

    variant("histogram, shipped (words, 4 features per sweep)",
            lambda: potential_histograms(codes, pi, out, scale))  # fmt: skip
    variant("histogram, bytes instead of words", lambda: _histograms_serial(codes, pi, scale, out))
    variant("histogram, 8 features per sweep", lambda: eight_per_sweep(codes, pi, scale, out))
    for block in (4096, 65536):
        variant(f"histogram, rows in blocks of {block:,}",
                lambda b=block: rows_in_blocks(codes, pi, scale, out, b))  # fmt: skip
    h = (codes[codes.shape[0] // 2] > n_codes // 2).astype(np.uint8)  # a binary ranker's values
    layout = (blk.level, blk.qstart, blk.lstart, blk.log_c)
    state = (blk._row_state, blk._level_state, blk._factors, blk._scratch, blk._out)
    rows.append((
        "binary update (`layered_binary_update`, alpha = 1e-3)",
        cpu_min(lambda: kl.layered_binary_update(h, 1e-3, blk.log_total, layout, *state), R,
                thread),
        "the whole sweep per query",
    ))  # fmt: skip
    rows.append((
        "of which the merge + error count (`counting_merge`)",
        cpu_min(lambda: merges(blk.H, h, blk.level, blk.qstart, blk.lstart, blk.order, blk._tmp),
                R, thread),
        "step 5 of the sweep",
    ))  # fmt: skip
    table_rows = [[name, f"{s * 1e3:.2f}", f"{s / pass_s:.2f}", note] for name, s, note in rows]
    print()
    print(f"{args.rows:,} rows x {args.features} features, 1 thread, CPU ms (min of {R}):")
    print()
    print(markdown_table(["kernel", "CPU ms", "passes", "note"], table_rows))
    different = [name for name, _, note in rows if note == "DIFFERENT BITS"]
    if different:
        raise SystemExit(f"not the shipped histogram's bits: {', '.join(different)}")


if __name__ == "__main__":
    main()
