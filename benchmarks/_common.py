"""Helpers shared by the benchmark scripts: timing, machine description, result files and a
small reference evaluator for LETOR metrics.

The reference evaluator (:func:`reference_metrics`) is deliberately simple numpy code with the
conventions of ``benchmarks/letor.py``: gain ``2**rel - 1``, discount ``1 / log2(1 + i)``,
queries without a relevant document score 0 (NDCG and AP), ties broken pessimistically
(among equal scores, lower labels are ranked first, so relevant documents come last), and a
document is relevant for AP when its label is >= 1. ``letor.py`` cross-checks it against
``rankboost.metrics`` (``ties="pessimistic"``, ``gain="exp2"``, ``empty="zero"``).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

RESULTS_DIR = Path(__file__).resolve().parent / "results"

# --------------------------------------------------------------------------- data

#: The shared data folder: ``../shared/data`` beside the repository, or ``$RANKBOOST_DATA``.
SHARED_DATA = Path(
    os.environ.get("RANKBOOST_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
#: Where each top-level folder of the shared data comes from (its README.md has the details).
PROVENANCE = {
    "letor4": "LETOR 4.0 MQ2008 / MQ2008-agg / MQ2007-agg (Microsoft Research Asia, Qin & Liu, "
    "arXiv:1306.2597)",
    "movielens": "MovieLens 100K (GroupLens, University of Minnesota, grouplens.org)",
    "lightgbm_lambdarank": "LightGBM's examples/lambdarank data (github.com/microsoft/LightGBM)",
    "cisi": "the CISI test collection (University of Glasgow IR group)",
}


def data_file(relative: str, script: str | None = None) -> Path:
    """The shared data file ``relative`` (e.g. ``"letor4/MQ2008/Fold1/train.txt.gz"``).

    When it is missing, exit with status 1 and one line saying which file, which data set it
    belongs to and where the folder comes from, instead of a traceback later.
    """
    path = SHARED_DATA / relative
    if not path.exists():
        import sys

        name = script or Path(sys.argv[0]).name
        what = PROVENANCE.get(relative.split("/")[0], "a public data set")
        raise SystemExit(
            f"{name}: error: needs {path}, part of {what}; it is not there. The data sets live "
            f"in ../shared/data beside the repository (its README.md says where each comes "
            f"from); put a copy there or set RANKBOOST_DATA to its folder."
        )
    return path


# --------------------------------------------------------------------------- timing


def median_time(func: Callable[[], Any], repeats: int = 5) -> float:
    """Median wall time of ``repeats`` calls of ``func`` (seconds)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def rss_bytes() -> int:
    """Current resident set size of this process (Linux ``/proc/self/statm``)."""
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def reset_peak() -> None:
    """Reset this process's resident high-water mark (Linux ``clear_refs``); a no-op elsewhere.

    After it, :func:`peak_rss_bytes` reports the peak of the block that follows.
    """
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def peak_rss_bytes() -> int:
    """Peak resident set size of this process image so far (Linux ``VmHWM``).

    NOTE: not ``resource.getrusage(...).ru_maxrss``: Linux carries the high-water mark of the
    pre-``exec`` image (the forked parent, with all its pages counted) into ``ru_maxrss``, so
    a subprocess started from a big parent reports the parent's size. ``VmHWM`` belongs to
    the current address space only. Falls back to ``ru_maxrss`` elsewhere.
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# --------------------------------------------------------------------------- machine / versions


def machine_info() -> dict[str, Any]:
    """Date, CPU, core count and library versions, for the result files."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info: dict[str, Any] = {
        "date": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }
    try:
        import subprocess

        root = Path(__file__).resolve().parent.parent
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "src"],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        info["commit"] = head + ("+dirty src" if dirty else "")
    except OSError:
        info["commit"] = None
    for name in ("numba", "lightgbm", "xgboost", "sklearn"):
        try:
            mod = __import__(name)
            info[name] = mod.__version__
        except Exception:  # noqa: BLE001 - optional
            info[name] = None
    return info


def machine_line(info: dict[str, Any]) -> str:
    """One line describing the machine and versions."""
    libs = ", ".join(
        f"{k} {info[k]}" for k in ("python", "numpy", "numba", "lightgbm", "xgboost") if info[k]
    )
    commit = f"; rankboost commit {info['commit']}" if info.get("commit") else ""
    return f"{info['date']}, {info['cpu']}, {info['cores']} cores; {libs}{commit}"


def write_result(name: str, markdown: str, data: dict[str, Any]) -> tuple[Path, Path]:
    """Write ``results/<name>.md`` and ``results/<name>.json``; return both paths."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    md = RESULTS_DIR / f"{name}.md"
    js = RESULTS_DIR / f"{name}.json"
    md.write_text(markdown)
    js.write_text(json.dumps(data, indent=2, default=_json_default) + "\n")
    return md, js


def add_write_results(parser: Any) -> None:
    """The ``--write-results`` flag: the scripts only print unless it is given."""
    parser.add_argument(
        "--write-results",
        action="store_true",
        help="write benchmarks/results/<name>.md and .json (tracked files); default: print only",
    )


def report_result(write: bool, name: str, markdown: str, data: dict[str, Any]) -> None:
    """Write the result files when asked (``--write-results``), else say they were not."""
    if write:
        print("wrote", *write_result(name, markdown, data))
    else:
        print(f"not written: pass --write-results to update benchmarks/results/{name}.md/.json")


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def markdown_table(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    """A GitHub markdown table (floats with 4 decimals)."""
    head = list(header)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for row in rows:
        cells = [f"{c:.4f}" if isinstance(c, float) else str(c) for c in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- reference evaluator


def _groups(qid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row order grouping the queries (stable) and the start of each group in that order."""
    order = np.argsort(qid, kind="stable")
    q = qid[order]
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    return order, np.r_[starts, q.shape[0]]


def reference_metrics(
    y: np.ndarray, score: np.ndarray, qid: np.ndarray, ks: Iterable[int] = (1, 3, 5, 10)
) -> dict[str, float]:
    """Mean NDCG@k (for every k in ``ks``) and MAP over queries, pessimistic ties.

    Plain per-query numpy, written independently of ``rankboost.metrics`` as a cross-check.
    """
    y = np.asarray(y, dtype=np.float64)
    score = np.asarray(score, dtype=np.float64)
    qid = np.asarray(qid)
    ks = list(ks)
    order, starts = _groups(qid)
    ndcg = {k: [] for k in ks}
    aps = []
    for a, b in zip(starts[:-1], starts[1:], strict=True):
        idx = order[a:b]
        lab = y[idx]
        # decreasing score; among equal scores increasing label (relevant docs last)
        rank = np.lexsort((lab, -score[idx]))
        ranked = lab[rank]
        gains = np.exp2(ranked) - 1.0
        ideal = np.exp2(np.sort(lab)[::-1]) - 1.0
        disc = 1.0 / np.log2(np.arange(2, lab.shape[0] + 2))
        for k in ks:
            idcg = float(np.sum(ideal[:k] * disc[:k]))
            ndcg[k].append(float(np.sum(gains[:k] * disc[:k])) / idcg if idcg > 0 else 0.0)
        rel = ranked >= 1
        if rel.any():
            hits = np.cumsum(rel)
            pos = np.flatnonzero(rel)
            aps.append(float(np.mean(hits[pos] / (pos + 1.0))))
        else:
            aps.append(0.0)
    out = {f"ndcg@{k}": float(np.mean(ndcg[k])) for k in ks}
    out["map"] = float(np.mean(aps))
    return out


def library_metrics(
    y: np.ndarray, score: np.ndarray, qid: np.ndarray, ks: Iterable[int] = (1, 3, 5, 10)
) -> dict[str, float] | None:
    """The same numbers from ``rankboost.metrics`` (None if the module is not importable)."""
    try:
        from rankboost.metrics import mean_average_precision, ndcg_score
    except ImportError:
        return None
    opts = {"ties": "pessimistic", "empty": "zero"}
    out = {f"ndcg@{k}": float(ndcg_score(y, score, qid, k=k, gain="exp2", **opts)) for k in ks}
    out["map"] = float(mean_average_precision(y, score, qid, **opts))
    return out
