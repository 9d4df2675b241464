"""Engine benchmark: seconds per RankBoost round on 1,000,000 rows x 136 features.

What it measures, all in one process and one run (so ratios are side by side):

1. Synthetic LETOR-like data (float64, C-order): queries of ``--query-size`` consecutive rows,
   grades 0-4 cut from a noisy latent score at the 50/75/90/97 % quantiles, half of the
   features informative, a fifth of the features with 10 % NaN (the feature abstains) and a
   fifth rounded to one decimal (few distinct values, as many LETOR features).
2. ``bst = rb.Booster(X, rb.LayeredFeedback(y, qid))`` with default parameters (alpha="r",
   thresholds=255; its construction is the **setup**: feedback blocks + binning), then
   ``rounds + 1`` calls of ``bst.update()``, the round ``rb.train`` runs, each timed: the
   **round time**. After every round but the first, ``--passes`` **streaming passes** (a numba
   kernel, parallel over features like the histogram kernel, summing the booster's (d, n)
   uint8 bin matrix once: the memory-bandwidth floor of any O(d n) round; median of the
   passes) and **one LightGBM lambdarank tree** (``Booster.update()``; num_leaves=31,
   max_bin=255, num_threads=2, learning_rate 0.1 and everything else default, on the same
   X / y / groups; Dataset constructed and tree 1 grown beforehand, both timed), so round,
   pass and tree are measured next to each other under the same machine load. s/round,
   s/pass, s/tree = medians over ``rounds`` rounds; the ratios are medians of the per-round
   ratios.
3. **Phase breakdown** of ``Booster.update()`` on a second booster whose step methods are
   wrapped with timers while the real update runs: potential, histogram, choose
   (``candidate_table`` + ``best`` + alpha + bookkeeping), h (the chosen ranker's values on
   the training rows), update (the blocks' update), rloss (recorded every round); and the
   setup split into the feedback blocks, ``BinMapper.fit`` and ``BinMapper.transform``.
4. **Peak memory** in a subprocess started first: warm-up, build X, then LayeredFeedback +
   train ``rounds`` rounds; reported as peak RSS (``VmHWM``, see ``_common.peak_rss_bytes``)
   minus the RSS right after X was built, plus the absolute figures.

Targets (issue 2): a round <= 0.25 LightGBM trees and <= 12 streaming passes; training peak
memory < 2.5 GB above X (X itself is 1.09 GB at full size).

Run (full size: about 70 s on an idle 2-core machine, several times that under load):
    PYTHONPATH=src .venv/bin/python benchmarks/bench_engine.py --write-results
Smaller: ``--rows 200000 --features 40 --rounds 5``; ``--no-lightgbm``, ``--no-memory``.
With ``--write-results`` it writes ``benchmarks/results/bench_engine.md`` and ``.json`` (full
size) or ``bench_engine_<rows>x<features>.md`` / ``.json`` (other sizes); without it, it only
prints.
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
TARGET_PASSES = 12.0
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


# --------------------------------------------------------------------------- measurements


def warm_up() -> None:
    """Compile (or load from the numba cache) every kernel on a small problem."""
    X, y, qid = make_data(3000, 12, 100, seed=1)
    rb.train(X, rb.LayeredFeedback(y, qid), n_rounds=3)
    _stream_sum(np.zeros((2, 10), dtype=np.uint8), np.zeros(2, dtype=np.int64))
    _phase_breakdown(X, rb.LayeredFeedback(y, qid), 2)


def time_interleaved(
    X: np.ndarray, fb: Any, rounds: int, passes: int, lgb_booster: Any | None
) -> dict[str, Any]:
    """``rb.Booster(X, fb)`` (timed: the setup), then ``rounds + 1`` calls of
    ``Booster.update()``, each timed; after every round but the first, ``passes`` streaming
    passes over the booster's own bin matrix and one LightGBM tree, each timed, so the three
    are measured side by side under the same machine load.
    """
    stream: list[float] = []
    trees: list[float] = []
    round_times: list[float] = []
    start = time.perf_counter()
    bst = rb.Booster(X, fb)
    setup = time.perf_counter() - start
    codes = bst._blocks[0].codes  # the (d, n) uint8 matrix every round reads
    out = np.zeros(codes.shape[0], dtype=np.int64)
    t = time.perf_counter()
    bst.update()  # round 1 follows the setup: no side measurements
    first = time.perf_counter() - t
    for _ in range(rounds):
        t = time.perf_counter()
        bst.update()
        round_times.append(time.perf_counter() - t)
        ts = []
        for _ in range(passes):
            t = time.perf_counter()
            _stream_sum(codes, out)
            ts.append(time.perf_counter() - t)
        stream.append(float(np.median(ts)))
        if lgb_booster is not None:
            t = time.perf_counter()
            lgb_booster.update()
            trees.append(time.perf_counter() - t)
    end = time.perf_counter()
    per_round = np.array(round_times)
    model = bst.model()
    res: dict[str, Any] = {
        "s_per_round": float(np.median(per_round)),
        "round_times": per_round.tolist(),
        "first_round": first,
        "setup": setup,
        "total": end - start,
        "rounds_done": model.n_rounds,
        "rloss_last": float(model.history["rloss"][-1]),
        "stream": float(np.median(stream)),
        "stream_times": stream,
        "ratio_round_stream": float(np.median(per_round / np.array(stream))),
        "codes_shape": list(codes.shape),
        "codes_dtype": str(codes.dtype),
        "n_codes": int(bst.binner.n_codes),
    }
    if trees:
        res["s_per_tree"] = float(np.median(trees))
        res["tree_times"] = trees
        res["ratio_round_tree"] = float(np.median(per_round / np.array(trees)))
    return res


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


def _phase_breakdown(X: np.ndarray, fb: Any, rounds: int) -> dict[str, Any]:
    """Where a ``Booster.update()`` spends its time: the booster's own steps, timed in place.

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
    med = {k: float(np.median(v[1:])) for k, v in phases.items()}
    return {"setup": setup, "median": med, "sum_of_medians": float(sum(med.values()))}


def make_lightgbm(X: np.ndarray, y: np.ndarray, qid: np.ndarray) -> dict[str, Any] | None:
    """Construct the LightGBM Dataset and Booster and grow the first tree (all timed)."""
    try:
        import lightgbm as lgb
    except ImportError:
        return None
    _, sizes = np.unique(qid, return_counts=True)  # qid is sorted (contiguous queries)
    params = {
        "objective": "lambdarank",
        "num_leaves": 31,
        "max_bin": 255,
        "num_threads": 2,
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


def report(args: argparse.Namespace, r: dict[str, Any]) -> str:
    info = r["machine"]
    train, ph = r["train"], r["phases"]  # noqa: F841
    lines = [
        "# Engine benchmark (`benchmarks/bench_engine.py`)",
        "",
        f"Machine: {machine_line(info)}.",
        "",
        f"Data: {args.rows:,} rows x {args.features} features (float64, C-order, "
        f"{r['X_gb']:.2f} GB), queries of {args.query_size} rows, grades 0-4, "
        f"{r['nan_fraction']:.1%} NaN of X. `rb.Booster` defaults (alpha='r', thresholds=255), "
        f"LayeredFeedback(normalize='query'). Medians over {args.rounds} rounds after round 1, "
        "numba compiled beforehand on a small problem. Load average (1 min) at start / end: "
        f"{r['loadavg_start'][0]:.1f} / {r['loadavg_end'][0]:.1f} (shared machine).",
        "",
        "## Headline",
        "",
    ]
    rows = [
        ["RankBoost s/round: `Booster.update()` (median)", f"{train['s_per_round']:.4f}", ""],
        [
            "RankBoost setup: `rb.Booster(X, feedback)` (blocks + binning)",
            f"{train['setup']:.2f}",
            "",
        ],
        ["streaming pass over the uint8 bin matrix (median)", f"{train['stream']:.4f}", ""],
        [
            "round / streaming pass (median of per-round ratios)",
            f"{train['ratio_round_stream']:.1f}",
            f"target <= {TARGET_PASSES:g}: "
            + _verdict(train["ratio_round_stream"] <= TARGET_PASSES),
        ],
    ]
    lg = r.get("lightgbm")
    if lg:
        ratio = train["ratio_round_tree"]
        rows += [
            ["LightGBM lambdarank s/tree (median)", f"{train['s_per_tree']:.4f}", ""],
            ["LightGBM Dataset construction", f"{lg['dataset_construct']:.2f}", ""],
            [
                "round / LightGBM tree (median of per-round ratios)",
                f"{ratio:.3f}",
                f"target <= {TARGET_TREE_RATIO:g}: " + _verdict(ratio <= TARGET_TREE_RATIO),
            ],
        ]
    mem = r.get("memory")
    if mem:
        rows += [
            ["RSS after building X (GB)", f"{mem['rss_after_X'] / GB:.2f}", ""],
            ["peak RSS, whole child process (GB)", f"{mem['peak_total'] / GB:.2f}", ""],
            [
                "training peak above X (GB)",
                f"{mem['training_peak_above_X'] / GB:.2f}",
                f"target < {TARGET_MEMORY_GB:g} GB: "
                + _verdict(mem["training_peak_above_X"] / GB < TARGET_MEMORY_GB),
            ],
        ]
    lines.append(markdown_table(["quantity", "value (s unless stated)", "target"], rows))
    lines += ["", "## Phase breakdown of a round (medians, s)", ""]
    total = ph["sum_of_medians"]
    prow = [[k, f"{v:.4f}", f"{v / total:.0%}"] for k, v in ph["median"].items()]
    prow.append(["sum of phases", f"{total:.4f}", ""])
    lines.append(markdown_table(["phase", "s", "share"], prow))
    lines += [
        "",
        "Each phase is a step of `Booster.update()` timed in place (its methods wrapped with "
        "timers while it runs): potential = the blocks' `scaled_potential()` (after a binary "
        "update the potential comes out of the update's own sweep, so this only returns it); "
        "histogram = `potential_histograms` over the "
        f"{train['codes_shape'][0]} x {train['codes_shape'][1]:,} {train['codes_dtype']} codes "
        f"({train['n_codes']} codes); choose = `candidate_table` + `best` + the alpha rule + "
        "the round's bookkeeping; h = the chosen ranker's values on the rows; update = the "
        "blocks' update (scores, Z, the next potential, the kept order and the training "
        "errors, in one sweep per query); rloss = the training rloss recorded every round.",
        "",
        "Setup pieces (s): "
        + ", ".join(f"{k} {v:.2f}" for k, v in ph["setup"].items())
        + f"; LayeredFeedback construction {r['feedback_build']:.2f}.",
    ]
    if lg:
        lines += [
            "",
            f"LightGBM {lg['version']}: params {lg['params']} (learning_rate 0.1 and the rest "
            "default); Dataset constructed and tree 1 grown (in "
            f"{lg['first_tree']:.2f} s) before RankBoost starts; then after every "
            f"`Booster.update()` but the first, {args.passes} streaming passes (median) and one "
            "`Booster.update()` (one more tree), so each ratio compares a round with a pass "
            "and a tree measured next to it; the table gives the medians over "
            f"{len(train['tree_times'])} rounds. Per-round times (s): RankBoost "
            + ", ".join(f"{v:.3f}" for v in train["round_times"])
            + "; LightGBM "
            + ", ".join(f"{v:.3f}" for v in train["tree_times"])
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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=FULL_ROWS)
    p.add_argument("--features", type=int, default=FULL_FEATURES)
    p.add_argument("--rounds", type=int, default=10, help="timed rounds (after round 1)")
    p.add_argument("--query-size", type=int, default=100)
    p.add_argument("--passes", type=int, default=7, help="streaming passes timed")
    p.add_argument("--lgb-trees", type=int, default=10, help="timed LightGBM trees")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-lightgbm", action="store_true")
    p.add_argument("--no-memory", action="store_true")
    p.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    add_write_results(p)
    args = p.parse_args()
    if args.memory_child:
        memory_child(args)
        return

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
    ph = _phase_breakdown(X, fb, args.rounds)
    gc.collect()
    r["phases"] = ph
    print("setup (s): " + ", ".join(f"{k} {v:.2f}" for k, v in ph["setup"].items()), flush=True)
    print("phases (s): " + ", ".join(f"{k} {v:.4f}" for k, v in ph["median"].items()), flush=True)

    lg = None if args.no_lightgbm else make_lightgbm(X, y, qid)
    if lg is not None:
        print(f"LightGBM Dataset construct {lg['dataset_construct']:.2f} s", flush=True)
    r["train"] = time_interleaved(
        X, fb, args.rounds, args.passes, None if lg is None else lg["booster"]
    )
    if lg is not None:
        lg.pop("booster")
        r["lightgbm"] = lg
    tr = r["train"]
    print(
        f"Booster.update: {tr['s_per_round']:.4f} s/round, setup {tr['setup']:.2f} s, "
        f"stream {tr['stream']:.4f} s, ratio {tr['ratio_round_stream']:.1f}"
        + (f", tree {tr['s_per_tree']:.4f} s, ratio {tr['ratio_round_tree']:.3f}" if lg else ""),
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
