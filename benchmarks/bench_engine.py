"""Engine benchmark: seconds per RankBoost round on 1,000,000 rows x 136 features.

What it measures, all in one process and one run (so ratios are side by side):

1. Synthetic LETOR-like data (float64, C-order): queries of ``--query-size`` consecutive rows,
   grades 0-4 cut from a noisy latent score at the 50/75/90/97 % quantiles, half of the
   features informative, a fifth of the features with 10 % NaN (the feature abstains) and a
   fifth rounded to one decimal (few distinct values, as many LETOR features).
2. ``bst = rb.Booster(X, rb.LayeredFeedback(y, qid))`` with default parameters (alpha="r",
   thresholds=255; its construction is the **setup**: feedback blocks + binning), one round,
   then for each thread count of ``--threads`` (default 1 and 2; ``numba.set_num_threads``)
   ``rounds`` more calls of ``bst.update()``, the round ``rb.train`` runs, each timed: the
   **round time**. After every timed round, ``--passes`` **streaming passes** (a numba
   kernel, parallel over features like the histogram kernel, summing the booster's (d, n)
   uint8 bin matrix once: the memory-bandwidth floor of any O(d n) round; median of the
   passes), ``--passes`` **scatter floors** (the same kernel shape storing ``pi[j]`` at the
   address each code selects in a per-feature table: the d n scattered stores any histogram
   of the codes must commit, without its loads and adds; median) and **one LightGBM
   lambdarank tree** (``Booster.update()``; num_leaves=31, max_bin=255, learning_rate 0.1
   and everything else default, ``num_threads`` = the thread count via
   ``reset_parameter``, on the same X / y / groups; Dataset constructed and tree 1 grown
   beforehand, both timed), so round, pass, floor and tree are measured next to each other
   under the same machine load. s/round, s/pass, s/tree = medians over ``rounds`` rounds;
   the ratios are medians of the per-round ratios.
3. **Phase breakdown** of ``Booster.update()`` on a second booster whose step methods are
   wrapped with timers while the real update runs, at each thread count: potential,
   histogram, choose (``candidate_table`` + ``best`` + alpha + bookkeeping), h (the chosen
   ranker's values on the training rows), update (the blocks' update), rloss (recorded every
   round), each also in streaming passes of the same thread count; and the setup split into
   the feedback blocks, ``BinMapper.fit`` and ``BinMapper.transform``.
4. **Peak memory** in a subprocess started first: warm-up, build X, then LayeredFeedback +
   train ``rounds`` rounds; reported as peak RSS (``VmHWM``, see ``_common.peak_rss_bytes``)
   minus the RSS right after X was built, plus the absolute figures.

Targets: issue 36, a round within 3 streaming passes at 1 and 2 threads; issue 2, a round
<= 0.25 LightGBM trees and <= 12 streaming passes; training peak memory < 2.5 GB above X
(X itself is 1.09 GB at full size).

Run (full size: a few minutes on an idle 2-core machine, several times that under load):
    PYTHONPATH=src .venv/bin/python benchmarks/bench_engine.py --write-results
Smaller: ``--rows 200000 --features 40 --rounds 5``; ``--threads 1``, ``--no-lightgbm``,
``--no-memory``. With ``--write-results`` it writes ``benchmarks/results/bench_engine.md``
and ``.json`` (full size) or ``bench_engine_<rows>x<features>.md`` / ``.json`` (other
sizes); without it, it only prints.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numba import njit, prange

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    add_write_results,
    machine_info,
    machine_line,
    markdown_table,
    peak_rss_bytes,
    report_result,
    rss_bytes,
)

import rankboost as rb  # noqa: E402

FULL_ROWS = 1_000_000
FULL_FEATURES = 136
TARGET_TREE_RATIO = 0.25
TARGET_PASSES = 12.0  # issue 2
TARGET_PASSES_36 = 3.0  # issue 36
TARGET_MEMORY_GB = 2.5
GB = 1e9


# --------------------------------------------------------------------------- data


def make_data(
    n: int, d: int, query_size: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Synthetic graded-ranking data; X is built in row chunks (no full-size temporaries)."""
    rng = np.random.default_rng(seed)
    latent = rng.standard_normal(n)
    informative = rng.random(d) < 0.5
    w = np.where(informative, rng.uniform(0.2, 1.0, d), 0.0)
    has_nan = rng.random(d) < 0.2
    rounded = (rng.random(d) < 0.2) & ~has_nan
    X = np.empty((n, d), dtype=np.float64)
    chunk = 32768
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        block = rng.standard_normal((hi - lo, d))
        block += latent[lo:hi, None] * w
        block[:, rounded] = np.round(block[:, rounded], 1)
        mask = (rng.random((hi - lo, d)) < 0.1) & has_nan
        block[mask] = np.nan
        X[lo:hi] = block
    noisy = latent + rng.standard_normal(n)
    y = np.digitize(noisy, np.quantile(noisy, [0.5, 0.75, 0.9, 0.97])).astype(np.float64)
    qid = np.arange(n, dtype=np.int64) // query_size
    return X, y, qid


# --------------------------------------------------------------------------- streaming floor


@njit(cache=True, parallel=True)
def _stream_sum(codes: np.ndarray, out: np.ndarray) -> None:
    """``out[i] = sum_j codes[i, j]``: one read of the (d, n) uint8 matrix."""
    d, n = codes.shape
    for i in prange(d):
        row = codes[i]
        acc = 0
        for j in range(n):
            acc += row[j]
        out[i] = acc


@njit(cache=True, parallel=True)
def _scatter_floor(codes: np.ndarray, pi: np.ndarray, out: np.ndarray) -> None:
    """``out[i, codes[i, j]] = pi[j]`` for every code: the stores of any histogram of ``codes``.

    A histogram that sums ``pi`` per (feature, code) in row order, as
    ``_kernels.histogram`` does (its bits are the sequential sums), commits one float64
    store per code of the (d, n) matrix to the address its code selects. This kernel does
    those stores and nothing else (no load of the old value, no add), in the histogram's
    shape: features in groups of four per sweep, each ``pi[j]`` loaded once, groups split
    across threads. Its time is what the scattered stores alone cost on this machine.
    """
    d, n = codes.shape
    n_quads = d // 4
    for g in prange(n_quads):
        i = 4 * g
        r0, r1, r2, r3 = codes[i], codes[i + 1], codes[i + 2], codes[i + 3]
        a0, a1, a2, a3 = out[i], out[i + 1], out[i + 2], out[i + 3]
        for j in range(n):
            p = pi[j]
            a0[r0[j]] = p
            a1[r1[j]] = p
            a2[r2[j]] = p
            a3[r3[j]] = p
    for i in prange(4 * n_quads, d):
        row = codes[i]
        acc = out[i]
        for j in range(n):
            acc[row[j]] = pi[j]


# --------------------------------------------------------------------------- measurements


def warm_up() -> None:
    """Compile (or load from the numba cache) every kernel on a small problem."""
    X, y, qid = make_data(3000, 12, 100, seed=1)
    rb.train(X, rb.LayeredFeedback(y, qid), n_rounds=3)
    codes = np.zeros((5, 10), dtype=np.uint8)
    _stream_sum(codes, np.zeros(5, dtype=np.int64))
    _scatter_floor(codes, np.zeros(10), np.zeros((5, 256)))
    _phase_breakdown(X, rb.LayeredFeedback(y, qid), 2, [numba.get_num_threads()])


def time_interleaved(
    bst: Any, threads: int, rounds: int, passes: int, lgb_booster: Any | None
) -> dict[str, Any]:
    """``rounds`` calls of ``bst.update()`` with ``threads`` numba threads, each timed; after
    every round ``passes`` streaming passes and ``passes`` scatter floors over the booster's
    own bin matrix, and one LightGBM tree on as many threads, each timed, so the four are
    measured side by side under the same machine load.
    """
    numba.set_num_threads(threads)
    if lgb_booster is not None:
        lgb_booster.reset_parameter({"num_threads": threads})
    stream: list[float] = []
    floor: list[float] = []
    trees: list[float] = []
    round_times: list[float] = []
    cpu_round: list[float] = []  # process CPU time of the same calls
    cpu_stream: list[float] = []
    codes = bst._blocks[0].codes  # the (d, n) uint8 matrix every round reads
    out = np.zeros(codes.shape[0], dtype=np.int64)
    pi = np.ones(codes.shape[1])
    table = np.zeros((codes.shape[0], 256))
    start = time.perf_counter()
    for _ in range(rounds):
        c = time.process_time()
        t = time.perf_counter()
        bst.update()
        round_times.append(time.perf_counter() - t)
        cpu_round.append(time.process_time() - c)
        ts, tf, cs = [], [], []
        for _ in range(passes):
            c = time.process_time()
            t = time.perf_counter()
            _stream_sum(codes, out)
            ts.append(time.perf_counter() - t)
            cs.append(time.process_time() - c)
            t = time.perf_counter()
            _scatter_floor(codes, pi, table)
            tf.append(time.perf_counter() - t)
        stream.append(float(np.median(ts)))
        floor.append(float(np.median(tf)))
        cpu_stream.append(float(np.median(cs)))
        if lgb_booster is not None:
            t = time.perf_counter()
            lgb_booster.update()
            trees.append(time.perf_counter() - t)
    per_round = np.array(round_times)
    res: dict[str, Any] = {
        "threads": threads,
        "s_per_round": float(np.median(per_round)),
        "round_times": per_round.tolist(),
        "total": time.perf_counter() - start,
        "stream": float(np.median(stream)),
        "stream_times": stream,
        "ratio_round_stream": float(np.median(per_round / np.array(stream))),
        "scatter_floor": float(np.median(floor)),
        "floor_times": floor,
        "ratio_floor_stream": float(np.median(np.array(floor) / np.array(stream))),
        "cpu_round": float(np.median(cpu_round)),
        "cpu_stream": float(np.median(cpu_stream)),
        "cpu_ratio_round_stream": float(np.median(np.array(cpu_round) / np.array(cpu_stream))),
    }
    if trees:
        res["s_per_tree"] = float(np.median(trees))
        res["tree_times"] = trees
        res["ratio_round_tree"] = float(np.median(per_round / np.array(trees)))
    return res


def time_rounds(
    X: np.ndarray, fb: Any, threads: list[int], rounds: int, passes: int, lgb_booster: Any
) -> dict[str, Any]:
    """``rb.Booster(X, fb)`` (timed: the setup) and its first round, then
    :func:`time_interleaved` at each thread count, one after the other on that booster."""
    start = time.perf_counter()
    bst = rb.Booster(X, fb)
    setup = time.perf_counter() - start
    codes = bst._blocks[0].codes
    t = time.perf_counter()
    bst.update()  # round 1 follows the setup: no side measurements
    first = time.perf_counter() - t
    by_threads = {str(th): time_interleaved(bst, th, rounds, passes, lgb_booster) for th in threads}
    model = bst.model()
    return {
        "setup": setup,
        "first_round": first,
        "rounds_done": model.n_rounds,
        "rloss_last": float(model.history["rloss"][-1]),
        "codes_shape": list(codes.shape),
        "codes_dtype": str(codes.dtype),
        "n_codes": int(bst.binner.n_codes),
        "by_threads": by_threads,
    }


class _Timers:
    """Wraps methods of live objects with timers (the real code path, instrumented)."""

    def __init__(self) -> None:
        self.acc: dict[str, float] = {}
        self._undo: list[tuple[Any, str, Any]] = []

    def wrap(self, obj: Any, attr: str, name: str) -> None:
        fn = getattr(obj, attr)
        self.acc.setdefault(name, 0.0)

        def timed(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                self.acc[name] += time.perf_counter() - t

        self._undo.append((obj, attr, obj.__dict__.get(attr) if hasattr(obj, "__dict__") else None))
        setattr(obj, attr, timed)

    def restore(self) -> None:
        for obj, attr, old in reversed(self._undo):
            if old is None:
                delattr(obj, attr)
            else:
                setattr(obj, attr, old)
        self._undo.clear()

    def take(self) -> dict[str, float]:
        out = dict(self.acc)
        for k in self.acc:
            self.acc[k] = 0.0
        return out


def _phase_breakdown(X: np.ndarray, fb: Any, rounds: int, threads: list[int]) -> dict[str, Any]:
    """Where a ``Booster.update()`` spends its time: the booster's own steps, timed in place,
    ``rounds + 1`` rounds at each thread count (the first of each dropped).

    The setup (``Booster(X, fb)``) is split the same way: the feedback blocks and their
    normalisation, ``BinMapper.fit`` and ``BinMapper.transform``.
    """
    import rankboost.booster as booster_module
    from rankboost.binning import BinMapper

    timers = _Timers()
    timers.wrap(booster_module, "start_blocks", "start_blocks")
    timers.wrap(BinMapper, "fit", "binmapper_fit")
    timers.wrap(BinMapper, "transform", "transform")
    t = time.perf_counter()
    try:
        bst = rb.Booster(X, fb)
    finally:
        timers.restore()
    total_setup = time.perf_counter() - t
    setup = timers.take()
    setup["make_blocks"] = total_setup - sum(setup.values())
    timers = _Timers()
    for b in bst._blocks:
        timers.wrap(b, "scaled_potential", "potential")
    for attr, name in (
        ("_histograms", "histogram"),
        ("_values", "h"),
        ("_rule_alpha", "alpha"),
        ("_step", "update"),  # the blocks' H += alpha h
        ("_settle", "update"),  # and the new normaliser Z_t, both counted as the update
        ("_rloss", "rloss"),
    ):
        timers.wrap(bst, attr, name)
    by_threads: dict[str, dict[str, float]] = {}
    for th in threads:
        numba.set_num_threads(th)
        phases: dict[str, list[float]] = {
            k: [] for k in ("potential", "histogram", "choose", "h", "update", "rloss")
        }
        for _ in range(rounds + 1):
            t = time.perf_counter()
            bst.update()
            whole = time.perf_counter() - t
            got = timers.take()
            got["histogram"] -= got["potential"]  # the potential is computed inside
            # choose = the candidate table, the best candidate, the alpha rule, the bookkeeping
            got["choose"] = whole - sum(got.values())
            for k in phases:
                phases[k].append(got[k] + (got["alpha"] if k == "choose" else 0.0))
        by_threads[str(th)] = {k: float(np.median(v[1:])) for k, v in phases.items()}
    return {"setup": setup, "by_threads": by_threads}


def make_lightgbm(
    X: np.ndarray, y: np.ndarray, qid: np.ndarray, threads: int
) -> dict[str, Any] | None:
    """Construct the LightGBM Dataset and Booster and grow the first tree (all timed).

    ``threads`` for the construction and tree 1; :func:`time_interleaved` resets
    ``num_threads`` to each thread count it measures.
    """
    try:
        import lightgbm as lgb
    except ImportError:
        return None
    _, sizes = np.unique(qid, return_counts=True)  # qid is sorted (contiguous queries)
    params = {
        "objective": "lambdarank",
        "num_leaves": 31,
        "max_bin": 255,
        "num_threads": threads,
        "verbose": -1,
    }
    start = time.perf_counter()
    ds = lgb.Dataset(X, label=y, group=sizes, params=params, free_raw_data=True)
    ds.construct()
    construct = time.perf_counter() - start
    booster = lgb.Booster(params=params, train_set=ds)
    start = time.perf_counter()
    booster.update()
    first = time.perf_counter() - start
    return {
        "booster": booster,
        "dataset_construct": construct,
        "first_tree": first,
        "params": params,
        "version": lgb.__version__,
    }


def memory_child(args: argparse.Namespace) -> None:
    """Subprocess body: print JSON with RSS before/after X and the peak after training."""
    warm_up()
    gc.collect()
    rss_before = rss_bytes()
    X, y, qid = make_data(args.rows, args.features, args.query_size, args.seed)
    gc.collect()
    rss_x = rss_bytes()
    peak_x = peak_rss_bytes()
    fb = rb.LayeredFeedback(y, qid)
    rb.train(X, fb, n_rounds=args.rounds)
    peak = peak_rss_bytes()
    print(
        json.dumps(
            {
                "rss_before_X": rss_before,
                "rss_after_X": rss_x,
                "peak_after_X": peak_x,
                "peak_total": peak,
                "X_bytes": X.nbytes,
                "training_peak_above_X": peak - rss_x,
            }
        )
    )


def measure_memory(args: argparse.Namespace) -> dict[str, Any]:
    cmd = [
        sys.executable,
        __file__,
        "--memory-child",
        f"--rows={args.rows}",
        f"--features={args.features}",
        f"--rounds={args.rounds}",
        f"--query-size={args.query_size}",
        f"--seed={args.seed}",
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- report


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


PHASE_HELP = (
    "Each phase is a step of `Booster.update()` timed in place (its methods wrapped with "
    "timers while it runs), in a loop of its own before the interleaved one: potential = the "
    "blocks' `scaled_potential()` (after a binary update the potential comes out of the "
    "update's own sweep, so this only returns it); histogram = `potential_histograms` over "
    "the bin matrix; choose = `candidate_table` + `best` + the alpha rule + the round's "
    "bookkeeping; h = the chosen ranker's values on the rows; update = the blocks' update "
    "(scores, Z, the next potential, the kept order and the training errors, in one sweep "
    "per query); rloss = the training rloss recorded every round. Passes = the phase's "
    "median over the streaming pass's median at the same thread count (interleaved loop)."
)


def report(args: argparse.Namespace, r: dict[str, Any]) -> str:
    info = r["machine"]
    train, ph = r["train"], r["phases"]
    by = train["by_threads"]
    lines = [
        "# Engine benchmark (`benchmarks/bench_engine.py`)",
        "",
        f"Machine: {machine_line(info)}.",
        "",
        f"Data: {args.rows:,} rows x {args.features} features (float64, C-order, "
        f"{r['X_gb']:.2f} GB), queries of {args.query_size} rows, grades 0-4, "
        f"{r['nan_fraction']:.1%} NaN of X; bin matrix {train['codes_shape'][0]} x "
        f"{train['codes_shape'][1]:,} {train['codes_dtype']} ({train['n_codes']} codes). "
        "`rb.Booster` defaults (alpha='r', thresholds=255), "
        f"LayeredFeedback(normalize='query'). Medians over {args.rounds} rounds per thread "
        "count after round 1, numba compiled beforehand on a small problem. Load average "
        f"(1 min) at start / end: {r['loadavg_start'][0]:.1f} / {r['loadavg_end'][0]:.1f} "
        "(shared machine).",
        "",
        "## Headline",
        "",
    ]
    rows = []
    for th, tr in by.items():
        rows.append(
            [
                th,
                f"{tr['s_per_round']:.4f}",
                f"{tr['stream']:.4f}",
                f"{tr['ratio_round_stream']:.1f}",
                f"{tr['scatter_floor']:.4f}",
                f"{tr['ratio_floor_stream']:.1f}",
                f"{tr['cpu_ratio_round_stream']:.1f}",
                f"{tr['s_per_tree']:.4f}" if "s_per_tree" in tr else "",
                f"{tr['ratio_round_tree']:.3f}" if "ratio_round_tree" in tr else "",
                _verdict(tr["ratio_round_stream"] <= TARGET_PASSES_36)
                + " / "
                + _verdict(tr["ratio_round_stream"] <= TARGET_PASSES),
            ]
        )
    lines.append(
        markdown_table(
            [
                "threads",
                "s/round",
                "s/pass",
                "round / pass",
                "s/scatter floor",
                "floor / pass",
                "CPU: round / pass",
                "s/LightGBM tree",
                "round / tree",
                "passes: <= 3 (issue 36) / <= 12 (issue 2)",
            ],
            rows,
        )
    )
    lines += [
        "",
        "Ratios are medians of per-round ratios (each round next to its own pass, floor and "
        "tree), so they are not exactly the quotients of the medians. The scatter floor is "
        "the d n scattered float64 stores any histogram of the bin matrix commits (one per "
        "code, at the address its code selects; no load, no add): what those stores alone "
        "cost a histogram with today's bits (sequential per-bin sums) here. CPU: the same "
        "ratio in process CPU time (`time.process_time`), which time spent waiting for a "
        "core does not inflate: at 1 thread the steadier figure on a loaded machine; at 2 "
        "threads it also counts the worker threads' spinning at the end of a parallel loop.",
        "",
    ]
    other = [
        [
            "RankBoost setup: `rb.Booster(X, feedback)` (blocks + binning)",
            f"{train['setup']:.2f}",
            "",
        ],
    ]
    lg = r.get("lightgbm")
    if lg:
        worst = max(tr["ratio_round_tree"] for tr in by.values())
        other += [
            ["LightGBM Dataset construction", f"{lg['dataset_construct']:.2f}", ""],
            [
                "round / LightGBM tree, worst thread count",
                f"{worst:.3f}",
                f"target <= {TARGET_TREE_RATIO:g}: " + _verdict(worst <= TARGET_TREE_RATIO),
            ],
        ]
    mem = r.get("memory")
    if mem:
        other += [
            ["RSS after building X (GB)", f"{mem['rss_after_X'] / GB:.2f}", ""],
            ["peak RSS, whole child process (GB)", f"{mem['peak_total'] / GB:.2f}", ""],
            [
                "training peak above X (GB)",
                f"{mem['training_peak_above_X'] / GB:.2f}",
                f"target < {TARGET_MEMORY_GB:g} GB: "
                + _verdict(mem["training_peak_above_X"] / GB < TARGET_MEMORY_GB),
            ],
        ]
    lines.append(markdown_table(["quantity", "value (s unless stated)", "target"], other))
    lines += ["", "## Phase breakdown of a round (medians: s, and streaming passes)", ""]
    heads = ["phase"]
    for th in ph["by_threads"]:
        heads += [f"{th} thread(s): s", "passes"]
    prow = []
    for k in ("histogram", "update", "choose", "h", "potential", "rloss"):
        row = [k]
        for th, med in ph["by_threads"].items():
            row += [f"{med[k]:.4f}", f"{med[k] / by[th]['stream']:.2f}"]
        prow.append(row)
    row = ["sum of phases"]
    for th, med in ph["by_threads"].items():
        total = sum(med.values())
        row += [f"{total:.4f}", f"{total / by[th]['stream']:.2f}"]
    prow.append(row)
    row = ["scatter floor (interleaved loop)"]
    for th in ph["by_threads"]:
        row += [f"{by[th]['scatter_floor']:.4f}", f"{by[th]['ratio_floor_stream']:.2f}"]
    prow.append(row)
    lines.append(markdown_table(heads, prow))
    lines += [
        "",
        PHASE_HELP,
        "",
        "Setup pieces (s): "
        + ", ".join(f"{k} {v:.2f}" for k, v in ph["setup"].items())
        + f"; LayeredFeedback construction {r['feedback_build']:.2f}.",
    ]
    if lg:
        lines += [
            "",
            f"LightGBM {lg['version']}: params {lg['params']} (learning_rate 0.1 and the rest "
            "default; `num_threads` reset to each thread count); Dataset constructed and tree "
            f"1 grown (in {lg['first_tree']:.2f} s) before RankBoost starts.",
        ]
    for th, tr in by.items():
        lines += [
            "",
            f"Per-round times at {th} thread(s) (s): RankBoost "
            + ", ".join(f"{v:.3f}" for v in tr["round_times"])
            + "; pass "
            + ", ".join(f"{v:.4f}" for v in tr["stream_times"])
            + ("; LightGBM " + ", ".join(f"{v:.3f}" for v in tr["tree_times"]) if lg else "")
            + ".",
        ]
    if mem:
        lines += [
            "",
            "Memory: a subprocess warms up numba, builds X (RSS "
            f"{mem['rss_before_X'] / GB:.2f} -> {mem['rss_after_X'] / GB:.2f} GB; peak so far "
            f"{mem['peak_after_X'] / GB:.2f} GB), then builds the feedback and trains "
            f"{args.rounds} rounds; peak RSS = `VmHWM` of the child (not `ru_maxrss`, which on "
            "Linux inherits the forked parent's high-water mark)."
            + (
                " Training did not raise the peak reached before it (warm-up / data build), "
                "so the figure above is an upper bound."
                if mem["peak_total"] <= mem["peak_after_X"]
                else ""
            ),
        ]
    return "\n".join(lines) + "\n"


def _thread_counts(text: str) -> list[int]:
    """``--threads``: comma-separated thread counts, each 1 .. numba's maximum."""
    top = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        counts = []
    if not counts or any(c < 1 or c > top for c in counts):
        raise argparse.ArgumentTypeError(
            f"--threads takes comma-separated thread counts from 1 to {top} (this machine's "
            f"numba maximum), e.g. 1,2; got {text!r}."
        )
    return counts


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=FULL_ROWS)
    p.add_argument("--features", type=int, default=FULL_FEATURES)
    p.add_argument("--rounds", type=int, default=10, help="timed rounds per thread count")
    p.add_argument("--query-size", type=int, default=100)
    p.add_argument("--passes", type=int, default=7, help="streaming passes timed per round")
    p.add_argument(
        "--threads",
        type=_thread_counts,
        default=None,
        help="thread counts to measure, comma-separated (default: 1 and numba's maximum)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-lightgbm", action="store_true")
    p.add_argument("--no-memory", action="store_true")
    p.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    add_write_results(p)
    args = p.parse_args()
    if args.memory_child:
        memory_child(args)
        return
    if args.threads is None:
        args.threads = sorted({1, numba.config.NUMBA_NUM_THREADS})  # type: ignore[attr-defined]

    r: dict[str, Any] = {"machine": machine_info(), "args": vars(args)}
    r["loadavg_start"] = os.getloadavg()
    print(machine_line(r["machine"]), flush=True)
    warm_up()
    if not args.no_memory:  # first, while this process is still small
        r["memory"] = measure_memory(args)
        print(
            f"memory: training peak above X {r['memory']['training_peak_above_X'] / GB:.2f} GB",
            flush=True,
        )
    t = time.perf_counter()
    X, y, qid = make_data(args.rows, args.features, args.query_size, args.seed)
    r["data_build"] = time.perf_counter() - t
    r["X_gb"] = X.nbytes / GB
    r["nan_fraction"] = float(np.isnan(X[: min(args.rows, 100_000)]).mean())
    print(f"data: {X.shape}, {r['X_gb']:.2f} GB, built in {r['data_build']:.1f} s", flush=True)

    t = time.perf_counter()
    fb = rb.LayeredFeedback(y, qid)
    r["feedback_build"] = time.perf_counter() - t
    ph = _phase_breakdown(X, fb, args.rounds, args.threads)
    gc.collect()
    r["phases"] = ph
    print("setup (s): " + ", ".join(f"{k} {v:.2f}" for k, v in ph["setup"].items()), flush=True)
    for th, med in ph["by_threads"].items():
        print(
            f"phases at {th} thread(s) (s): " + ", ".join(f"{k} {v:.4f}" for k, v in med.items()),
            flush=True,
        )

    lg = None if args.no_lightgbm else make_lightgbm(X, y, qid, max(args.threads))
    if lg is not None:
        print(f"LightGBM Dataset construct {lg['dataset_construct']:.2f} s", flush=True)
    r["train"] = time_rounds(
        X, fb, args.threads, args.rounds, args.passes, None if lg is None else lg["booster"]
    )
    if lg is not None:
        lg.pop("booster")
        r["lightgbm"] = lg
    for th, tr in r["train"]["by_threads"].items():
        print(
            f"{th} thread(s): Booster.update {tr['s_per_round']:.4f} s/round, "
            f"stream {tr['stream']:.4f} s, ratio {tr['ratio_round_stream']:.1f}, "
            f"scatter floor {tr['scatter_floor']:.4f} s ({tr['ratio_floor_stream']:.1f} passes)"
            + (
                f", tree {tr['s_per_tree']:.4f} s, ratio {tr['ratio_round_tree']:.3f}" if lg else ""
            ),
            flush=True,
        )
    del fb, X
    gc.collect()
    r["loadavg_end"] = os.getloadavg()
    md = report(args, r)
    print()
    print(md)
    full = args.rows == FULL_ROWS and args.features == FULL_FEATURES
    name = "bench_engine" if full else f"bench_engine_{args.rows}x{args.features}"
    report_result(args.write_results, name, md, r)


if __name__ == "__main__":
    main()
