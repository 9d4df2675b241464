"""The first fit of a fresh process (issue 47): rankboost against LightGBM, and where it goes.

Each run is a fresh process that reads LETOR 4.0 MQ2008 fold 1 train (9,630 rows, 46
features), imports the library, then times ``RankBoostRanker().fit(X, y, qid=qid)`` twice
(the first fit, with numba's cache warm, and a second in the same process) or
``lightgbm.LGBMRanker().fit`` once: the fit alone, imports and data loading excluded, wall
and CPU seconds (CPU: the process's, every thread; on a shared machine the figure the
neighbours inflate least). The processes alternate (rankboost, LightGBM, rankboost, ...),
one thread each (``NUMBA_NUM_THREADS=1``, ``n_jobs=1``) and with each library's default
threads; the table gives medians over ``--repeats`` runs of each. Goal (issue 47): the first
fit at most 1.5x LightGBM's first fit, one thread each.

Inside rankboost's first fit it times, from numba's own functions (wrapped in the child):

* ``numba target set-up``: ``BaseContext.refresh``, numba's registries of implementations and
  typing templates (it imports ``numba.np.arraymath``, ``numba.np.linalg``, ... and registers
  1,000 templates); numba runs it before each cache read and compile;
* ``index read``: the ``.nbi`` index of each kernel, its source stamp checked;
* ``data read + unpickle``: the ``.nbc`` entry, less the next line;
* ``numba modules of the kernels' environments``: the modules a loaded kernel's environment
  names, imported on reading (``numba.np.arrayobj`` for a kernel that allocates an array);
* ``LLVM object load`` (``unserialize_library``) and ``LLVM link`` (``get_executable``);
* ``compile``: kernels not in the cache (0 with a warm cache);
* ``dispatch``: the rest of the kernels' first calls (argument typing, the overload added);
* ``Python and the kernels' work``: the fit less all of the above; compare with the second fit.

Per kernel it lists the time of its first call (read from the cache, or compiled).

``--ref REF`` runs the same rankboost processes on git ``REF``'s ``src`` too (``git
archive``; its own numba cache, filled first), alternating with this checkout's: a
before/after under one machine load. ``--bytecode`` runs every process with Python's
bytecode cached in a temporary folder (``PYTHONPYCACHEPREFIX``, filled by a first run), as a
``pip install`` would have it for numba and scikit-learn; without it the processes see the
environment as it is (``uv`` installs no bytecode and these machines set
``PYTHONDONTWRITEBYTECODE``: then every process compiles numba's modules from source).

Run:
    .venv/bin/python benchmarks/bench_first_fit.py --repeats 5
    .venv/bin/python benchmarks/bench_first_fit.py --repeats 5 --ref e214595 --bytecode
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    add_write_results,
    data_file,
    machine_info,
    machine_line,
    markdown_table,
    report_result,
)

ROOT = Path(__file__).resolve().parents[1]
TARGET_RATIO = 1.5  # issue 47: first fit <= 1.5x LightGBM's first fit, one thread each

#: The child process: ``sys.argv[1:]`` = library ("rankboost" or "lightgbm"), data file,
#: threads ("1" or "default"). Prints one JSON line.
CHILD = r"""
import collections, importlib, json, sys, time
from time import perf_counter, process_time

lib, path, threads = sys.argv[1:4]
from rankboost.datasets import load_svmlight

ds = load_svmlight(path)
X, y, qid = ds.X, ds.y, ds.qid
out = {"lib": lib, "threads": threads}


def clock():
    return perf_counter(), process_time()


if lib == "lightgbm":
    import lightgbm
    import numpy as np

    group = np.unique(qid, return_counts=True)[1]
    kw = {"n_jobs": 1} if threads == "1" else {}
    w, c = clock()
    lightgbm.LGBMRanker(verbose=-1, **kw).fit(X, y, group=group)
    w1, c1 = clock()
    out["fit1"] = [w1 - w, c1 - c]
    print(json.dumps(out))
    sys.exit()

from rankboost import RankBoostRanker
import sklearn.utils.validation  # imported by fit's input checks: an import, not the fit
from numba.core import base, caching, codegen, cpu, dispatcher, environment, event

pieces = collections.defaultdict(lambda: [0.0, 0.0])
per_kernel = collections.defaultdict(lambda: [0.0, 0.0])
depth = [0]


def wrap(owner, name, piece):
    orig = getattr(owner, name)
    nested = [0]

    def timed(*args, **kwargs):  # the outermost call only (numba's refresh can nest)
        nested[0] += 1
        w, c = clock()
        try:
            return orig(*args, **kwargs)
        finally:
            nested[0] -= 1
            w1, c1 = clock()
            if nested[0] == 0:
                pieces[piece][0] += w1 - w
                pieces[piece][1] += c1 - c

    setattr(owner, name, timed)


wrap(base.BaseContext, "refresh", "numba target set-up")
wrap(caching.IndexDataCacheFile, "_load_index", "index read")
wrap(caching.IndexDataCacheFile, "_load_data", "data read + unpickle")
wrap(environment, "_rebuild_env", "numba modules of the kernels' environments")
wrap(codegen.JITCPUCodegen, "unserialize_library", "LLVM object load")
wrap(cpu.CPUContext, "get_executable", "LLVM link")
orig_first_call = dispatcher.Dispatcher._compile_for_args


def first_call(self, *args, **kwargs):  # a kernel's first call with new argument types
    depth[0] += 1
    w, c = clock()
    try:
        return orig_first_call(self, *args, **kwargs)
    finally:
        depth[0] -= 1
        w1, c1 = clock()
        if depth[0] == 0:
            name = self.py_func.__module__.rsplit(".", 1)[-1] + "." + self.py_func.__qualname__
            per_kernel[name][0] += w1 - w
            per_kernel[name][1] += c1 - c
            pieces["first calls"][0] += w1 - w
            pieces["first calls"][1] += c1 - c


dispatcher.Dispatcher._compile_for_args = first_call


class Compiles(event.Listener):
    def on_start(self, ev):
        self.start = clock()

    def on_end(self, ev):
        w1, c1 = clock()
        pieces["compile"][0] += w1 - self.start[0]
        pieces["compile"][1] += c1 - self.start[1]


event.register("numba:compile", Compiles())
wanted = {"numba.np.arraymath", "numba.np.arrayobj", "numba.cpython.unicode"}
before = {m for m in wanted if m in sys.modules}
w, c = clock()
RankBoostRanker().fit(X, y, qid=qid)
w1, c1 = clock()
RankBoostRanker().fit(X, y, qid=qid)
w2, c2 = clock()
out["fit1"] = [w1 - w, c1 - c]
out["fit2"] = [w2 - w1, c2 - c1]
# _rebuild_env runs inside _load_data: count it once
env = pieces["numba modules of the kernels' environments"]
data = pieces["data read + unpickle"]
pieces["data read + unpickle"] = [data[0] - env[0], data[1] - env[1]]
out["pieces"] = dict(pieces)
out["per_kernel"] = dict(per_kernel)
out["imported"] = sorted({m for m in wanted if m in sys.modules} - before)
print(json.dumps(out))
"""

#: the pieces of the kernels' first calls, in the order of the table (``dispatch`` is what is
#: left of the first calls; numba's set-up runs inside them, at the first cache read)
LOAD_PIECES = [
    "numba target set-up",
    "index read",
    "data read + unpickle",
    "numba modules of the kernels' environments",
    "LLVM object load",
    "LLVM link",
    "compile",
]


def run_child(
    lib: str, threads: str, src: Path, env_extra: dict[str, str], path: Path
) -> dict[str, Any]:
    """One fresh process; its JSON line."""
    env = {**os.environ, **env_extra, "PYTHONPATH": str(src)}
    if threads == "1":
        env.update(NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, lib, str(path), threads],
        check=True, capture_output=True, text=True, env=env,
    )  # fmt: skip
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def pieces_rows(runs: list[dict[str, Any]]) -> list[list[Any]]:
    """Median wall and CPU seconds of each piece of the first fit (rankboost runs)."""
    rows = []

    def add(label: str, get: Any) -> None:
        rows.append([label, _med([get(r)[0] for r in runs]), _med([get(r)[1] for r in runs])])

    def piece(name: str) -> Any:
        return lambda r: r["pieces"].get(name, [0.0, 0.0])

    for name in LOAD_PIECES:
        add(name, piece(name))

    def dispatch(r: dict[str, Any]) -> list[float]:  # warm cache: no compile to count twice
        first = r["pieces"].get("first calls", [0.0, 0.0])
        inner = [piece(n)(r) for n in LOAD_PIECES]
        return [first[i] - sum(p[i] for p in inner) for i in (0, 1)]

    def rest(r: dict[str, Any]) -> list[float]:
        first = r["pieces"].get("first calls", [0.0, 0.0])
        return [r["fit1"][i] - first[i] for i in (0, 1)]

    add("dispatch (rest of the kernels' first calls)", dispatch)
    add("Python and the kernels' work (fit less first calls)", rest)
    add("first fit", lambda r: r["fit1"])
    add("second fit, same process", lambda r: r["fit2"])
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print (and with --write-results write) the tables."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5, help="processes per case (default 5)")
    p.add_argument("--ref", metavar="REF", help="also rankboost at git REF's src, alternating")
    p.add_argument("--bytecode", action="store_true", help="cache Python bytecode (a pip install)")
    p.add_argument(
        "--threads", choices=["1", "default", "both"], default="both", help="(default both)"
    )
    add_write_results(p)
    args = p.parse_args(argv)
    path = data_file("letor4/MQ2008/Fold1/train.txt.gz")
    info = machine_info()
    print(machine_line(info), flush=True)
    threads = ["1", "default"] if args.threads == "both" else [args.threads]
    with tempfile.TemporaryDirectory(prefix="rb-first-fit-") as tmp:
        trees = [("this checkout", ROOT / "src", {})]
        if args.ref:
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", args.ref, "src"],
                check=True, capture_output=True,
            ).stdout  # fmt: skip
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            ref_cache = {"NUMBA_CACHE_DIR": str(Path(tmp) / "numba-ref")}
            trees.insert(0, (args.ref, Path(tmp) / "src", ref_cache))
        extra: dict[str, str] = {}
        if args.bytecode:
            extra = {"PYTHONDONTWRITEBYTECODE": "", "PYTHONPYCACHEPREFIX": str(Path(tmp) / "pyc")}
        cases = [(name, src, {**env, **extra}, t) for name, src, env in trees for t in threads]
        for _name, src, env, _ in cases[:: len(threads)]:  # fill the caches: "warm" is warm
            run_child("rankboost", "1", src, env, path)
        run_child("lightgbm", "1", ROOT / "src", extra, path)
        runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for i in range(args.repeats):
            for name, src, env, t in cases:
                for lib in ("rankboost", "lightgbm") if name == "this checkout" else ("rankboost",):
                    r = run_child(lib, t, src, env, path)
                    label = name if lib == "rankboost" else "LightGBM"
                    runs.setdefault((label, t), []).append(r)
                    print(
                        f"  run {i + 1}: {label}, threads {t}: first fit {r['fit1'][0]:.3f} s "
                        f"wall, {r['fit1'][1]:.3f} s CPU",
                        flush=True,
                    )
    md = report(args, info, threads, trees, runs)
    print(md)
    report_result(args.write_results, "bench_first_fit", md, {"machine": info, "runs": {
        f"{k[0]} / {k[1]}": v for k, v in runs.items()}})  # fmt: skip
    return 0


def report(
    args: argparse.Namespace,
    info: dict[str, Any],
    threads: list[str],
    trees: list[tuple[str, Path, dict[str, str]]],
    runs: dict[tuple[str, str], list[dict[str, Any]]],
) -> str:
    """The markdown: first fits and ratios, then the pieces of each tree's first fit."""
    rows, lines = [], []
    for t in threads:
        lgb = runs[("LightGBM", t)]
        lw, lc = _med([r["fit1"][0] for r in lgb]), _med([r["fit1"][1] for r in lgb])
        rows.append([f"LightGBM LGBMRanker().fit, threads {t}", lw, lc, 1.0, 1.0])
        for name, _, _ in trees:
            rb = runs[(name, t)]
            w, c = _med([r["fit1"][0] for r in rb]), _med([r["fit1"][1] for r in rb])
            rows.append([f"rankboost first fit ({name}), threads {t}", w, c, w / lw, c / lc])
            w2, c2 = _med([r["fit2"][0] for r in rb]), _med([r["fit2"][1] for r in rb])
            rows.append([f"rankboost second fit ({name}), threads {t}", w2, c2, w2 / lw, c2 / lc])
            if t == "1":
                verdict = "PASS" if c / lc <= TARGET_RATIO else "MISS"
                lines.append(
                    f"First fit ({name}) / LightGBM's first fit, one thread each: "
                    f"{w / lw:.2f} wall, {c / lc:.2f} CPU (goal <= {TARGET_RATIO}: {verdict}; "
                    "judged on CPU seconds, which one thread spends as wall time on an idle "
                    "machine and which a busy one inflates least)."
                )
    out = [
        "# The first fit of a fresh process (benchmarks/bench_first_fit.py)",
        "",
        f"Machine: {machine_line(info)}. Python bytecode: "
        + ("cached (--bytecode)." if args.bytecode else "as installed."),
        f"Medians of {args.repeats} alternated fresh processes per row; MQ2008 fold 1 train, "
        "defaults; the fit alone (imports and data loading excluded).",
        "",
        markdown_table(["fit", "wall s", "CPU s", "wall / LightGBM", "CPU / LightGBM"], rows),
        "",
        *lines,
    ]
    for name, _, _ in trees:
        rb = runs[(name, "1" if "1" in threads else threads[0])]
        out += [
            "",
            f"## Where rankboost's first fit goes ({name}, threads {threads[0]})",
            "",
            markdown_table(["piece", "wall s", "CPU s"], pieces_rows(rb)),
            "",
            "Numba modules imported by the fit: "
            + (", ".join(sorted({m for r in rb for m in r["imported"]})) or "none of the three")
            + " (of numba.np.arraymath, numba.np.arrayobj, numba.cpython.unicode).",
            "",
            markdown_table(
                ["kernel's first call", "wall s", "CPU s"],
                sorted(
                    (
                        [
                            k,
                            _med([r["per_kernel"].get(k, [0, 0])[0] for r in rb]),
                            _med([r["per_kernel"].get(k, [0, 0])[1] for r in rb]),
                        ]
                        for k in {k for r in rb for k in r["per_kernel"]}
                    ),
                    key=lambda row: -row[2],
                ),  # fmt: skip
            ),
        ]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
