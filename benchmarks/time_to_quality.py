"""Time to quality: validation NDCG@10 against wall time, RankBoost beside LightGBM (and XGBoost).

Each learner trains on the training fold while a callback stamps the wall time at the end of
every round / boosting iteration; afterwards the validation NDCG@10 of every prefix of the
model (rounds ``1..t``, trees ``1..t``) is computed from staged scores, so the evaluation
costs no training time. For each learner and fold the report gives

* ``best vali``: its own best validation NDCG@10 over the budget;
* ``t (s)``: the wall time from the start of the fit call (binning / Dataset construction
  included) until its validation NDCG@10 first comes within ``--within`` (0.002) of that best,
  and the iteration where that happens;
* ``test``: the test NDCG@10 of the model cut at that iteration.

Data sets (``--dataset``, one or more; each one a line of ``DATASETS``; data under
``../shared/data``, override with ``RANKBOOST_DATA``):

* ``mq2008``: LETOR 4.0 MQ2008 (``letor4/MQ2008``), its train / vali / test files of
  ``--folds`` (default all five).
* ``lightgbm-example``: LightGBM's lambdarank example (``lightgbm_lambdarank/``:
  ``rank.train`` 3005 rows / 201 queries, ``rank.test`` 768 rows, 300 features, query sizes
  in the ``.query`` files). It has no validation file: "fold" ``k`` holds out 20 % of the
  training queries (40 of 201, drawn with ``numpy.random.default_rng(k)``) as validation
  and trains on the other 161; test is ``rank.test``. Default folds 1-5 (five splits).
* ``synthetic``: the problem of ``benchmarks/bench_engine.py`` (its ``make_data``: queries of
  100 rows, grades 0-4, 136 features, some NaN / rounded), ``--rows`` training rows
  (default 1,000,000) followed by ``--rows // 10`` validation and ``--rows // 10`` test
  rows, cut at query boundaries from one draw with seed ``k`` (fold ``k``; default fold 1).

NDCG@10 with gain
``2**rel - 1``, pessimistic ties and queries without a relevant document counted 0
(``rankboost.metrics``, the conventions of ``benchmarks/letor.py``). RankBoost:
``rb.train(X, rb.LayeredFeedback(y, qid), n_rounds=--rounds)`` at its defaults, numba kernels
compiled before the clock starts (one 2-round warm-up training); LightGBM ``lambdarank`` and
XGBoost ``rank:ndcg`` at their defaults, ``--trees`` iterations. Every learner runs on
``--threads`` threads (default 1: at 10k rows a second thread gains little, and on a shared
machine an OpenMP thread waiting for a busy core costs the tree learners many times their
time; the numba kernels' threads are set the same way). The learners of
a fold run one after the other in one process, so they see the same machine load; the
machine is shared, so quote ratios and medians over folds, not single times.

Adding a learner (issue 36: XGBoost ``rank:ndcg`` is one): write ``fit_<name>(train, budget,
threads) -> Curve`` and add it to ``LEARNERS``. Adding a dataset: a loader
``(fold, rows) -> (train, vali, test)`` and one ``DataSpec`` entry of ``DATASETS``.

Run::

    python benchmarks/time_to_quality.py                     # all 5 folds, table on stdout
    python benchmarks/time_to_quality.py --folds 1 --plot docs/img/time_to_quality.png
    python benchmarks/time_to_quality.py --dataset mq2008 lightgbm-example synthetic \
        --plot docs/img/time_to_quality_all.png --write-results  # results/time_to_quality.*
    python benchmarks/time_to_quality.py --dataset synthetic --rows 20000   # a small synthetic run

Needs the ``bench`` extra (LightGBM, XGBoost, matplotlib); a learner whose package is
missing is skipped and said so.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_info, machine_line, markdown_table, report_result  # noqa: E402

import rankboost as rb  # noqa: E402
from rankboost.datasets import load_svmlight  # noqa: E402
from rankboost.metrics import ndcg_score  # noqa: E402

DATA = Path(
    os.environ.get("RANKBOOST_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)
WITHIN = 0.002
THREADS = 1  # every learner's threads (--threads)
ROWS = 1_000_000  # training rows of the synthetic problem (--rows)
Split = tuple[np.ndarray, np.ndarray, np.ndarray]  # X, y, qid


def ndcg10(y: np.ndarray, s: np.ndarray, qid: np.ndarray) -> float:
    """NDCG@10 with the conventions of ``benchmarks/letor.py``."""
    return float(ndcg_score(y, s, qid, k=10, gain="exp2", ties="pessimistic", empty="zero"))


@dataclass
class Curve:
    """One training run: wall seconds since the fit call began at the end of iteration ``t``
    (``seconds[t - 1]``) and the staged scores of iteration ``t`` on any matrix."""

    seconds: np.ndarray
    staged: Callable[[np.ndarray], list[np.ndarray]]  # X -> scores after 1, 2, ... iterations
    predict: Callable[[np.ndarray], np.ndarray]  # X -> the whole model's own scores
    version: str


# --------------------------------------------------------------------------- learners


def fit_rankboost(train: Split, budget: int, threads: int) -> Curve:
    import numba

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    X, y, qid = train
    stamps: list[float] = []
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
        model = rb.train(
            X,
            rb.LayeredFeedback(y, qid),
            n_rounds=budget,
            callbacks=[lambda env: stamps.append(time.perf_counter())],
        )
    seconds = np.asarray(stamps) - start

    def staged(Xs: np.ndarray) -> list[np.ndarray]:
        return [s.copy() for s in model.staged_decision_function(Xs)]

    return Curve(seconds[: model.n_rounds], staged, model.decision_function, rb.__version__)


def _grouped(split: Split) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    X, y, qid = split
    if np.all(qid[1:] >= qid[:-1]):  # already grouped (the synthetic problem): no copy of X
        return X, y, qid, np.unique(qid, return_counts=True)[1]
    order = np.argsort(qid, kind="stable")
    _, first, sizes = np.unique(qid[order], return_index=True, return_counts=True)
    return X[order], y[order], qid[order], sizes[np.argsort(first)]


def fit_lightgbm(train: Split, budget: int, threads: int) -> Curve:
    import lightgbm as lgb

    X, y, _, sizes = _grouped(train)
    params = {"objective": "lambdarank", "num_threads": threads, "verbose": -1}
    stamps: list[float] = []
    start = time.perf_counter()
    ds = lgb.Dataset(X, label=y, group=sizes, params=params)
    booster = lgb.train(
        params,
        ds,
        num_boost_round=budget,
        callbacks=[lambda env: stamps.append(time.perf_counter())],
    )

    def staged(Xs: np.ndarray) -> list[np.ndarray]:
        trees = [booster.predict(Xs, start_iteration=i, num_iteration=1) for i in range(budget)]
        return list(np.cumsum(trees, axis=0))

    return Curve(np.asarray(stamps) - start, staged, booster.predict, lgb.__version__)


def fit_xgboost(train: Split, budget: int, threads: int) -> Curve:
    import xgboost as xgb

    X, y, qid, _ = _grouped(train)
    params = {"objective": "rank:ndcg", "tree_method": "hist", "nthread": threads}
    stamps: list[float] = []

    class Stamp(xgb.callback.TrainingCallback):
        def after_iteration(self, model: Any, epoch: int, evals_log: Any) -> bool:
            stamps.append(time.perf_counter())
            return False

    start = time.perf_counter()
    booster = xgb.train(params, xgb.DMatrix(X, label=y, qid=qid), budget, callbacks=[Stamp()])

    def staged(Xs: np.ndarray) -> list[np.ndarray]:
        d = xgb.DMatrix(Xs)
        # each tree's margin alone (the base score is added to every row of every tree: a
        # constant, no change to any ranking)
        trees = [
            booster.predict(d, iteration_range=(i, i + 1), output_margin=True)
            for i in range(budget)
        ]
        return list(np.cumsum(trees, axis=0))

    def predict(Xs: np.ndarray) -> np.ndarray:
        return booster.predict(xgb.DMatrix(Xs), output_margin=True)

    return Curve(np.asarray(stamps) - start, staged, predict, xgb.__version__)


# name -> (label, fit function, package it needs, budget option)
LEARNERS: dict[str, tuple[str, Callable[[Split, int, int], Curve], str, str]] = {
    "rankboost": ("RankBoost (defaults)", fit_rankboost, "rankboost", "rounds"),
    "lightgbm": ("LightGBM lambdarank", fit_lightgbm, "lightgbm", "trees"),
    "xgboost": ("XGBoost rank:ndcg", fit_xgboost, "xgboost", "trees"),
}


# --------------------------------------------------------------------------- protocol


def _fail(path: Path) -> None:
    sys.exit(f"time_to_quality: {path} not found; set RANKBOOST_DATA to the shared data")


def _read(path: Path, n_features: int) -> Split:
    if not path.is_file():
        _fail(path)
    ds = load_svmlight(path, n_features=n_features)
    return np.ascontiguousarray(ds.X, dtype=np.float64), np.asarray(ds.y), np.asarray(ds.qid)


def load_mq2008(fold: int, rows: int) -> tuple[Split, Split, Split]:
    """MQ2008 ``Fold<fold>``'s train / vali / test files (``rows`` unused)."""
    folder = DATA / "letor4" / "MQ2008" / f"Fold{fold}"
    train, vali, test = (_read(folder / f"{s}.txt.gz", 46) for s in ("train", "vali", "test"))
    return train, vali, test


#: fraction of rank.train's queries held out as validation in the LightGBM example
HELD_OUT = 0.2


def split_queries(split: Split, fraction: float, seed: int) -> tuple[Split, Split]:
    """``(rest, held_out)``: ``round(fraction * n_queries)`` whole queries drawn with
    ``numpy.random.default_rng(seed)`` go to ``held_out``, rows kept in file order."""
    X, y, qid = split
    queries = np.unique(qid)
    rng = np.random.default_rng(seed)
    held = rng.choice(queries, size=int(round(fraction * len(queries))), replace=False)
    mask = np.isin(qid, held)
    return (X[~mask], y[~mask], qid[~mask]), (X[mask], y[mask], qid[mask])


def load_lightgbm_example(fold: int, rows: int) -> tuple[Split, Split, Split]:
    """LightGBM's lambdarank example: validation = 20 % of rank.train's queries (seed
    ``fold``), test = rank.test (``rows`` unused)."""
    folder = DATA / "lightgbm_lambdarank"
    full = _read(folder / "rank.train.gz", 300)
    test = _read(folder / "rank.test.gz", 300)
    train, vali = split_queries(full, HELD_OUT, fold)
    return train, vali, test


def load_synthetic(fold: int, rows: int) -> tuple[Split, Split, Split]:
    """``bench_engine.make_data`` with seed ``fold``: ``rows`` training rows, then
    ``rows // 10`` validation and ``rows // 10`` test rows, cut at query boundaries (whole
    queries of 100; sizes rounded down to a multiple of 100, at least one query)."""
    from bench_engine import make_data

    q = 100
    n_train = max(q, rows // q * q)
    n_eval = max(q, rows // 10 // q * q)
    X, y, qid = make_data(n_train + 2 * n_eval, 136, q, seed=fold)
    cuts = [(0, n_train), (n_train, n_train + n_eval), (n_train + n_eval, n_train + 2 * n_eval)]
    # contiguous row slices of a C-order X: views, no copies at 1M rows
    train, vali, test = ((X[a:b], y[a:b], qid[a:b]) for a, b in cuts)
    return train, vali, test


@dataclass(frozen=True)
class DataSpec:
    """One ``--dataset``: its title, default folds and loader ``(fold, rows) -> splits``."""

    title: str
    folds: tuple[int, ...]
    load: Callable[[int, int], tuple[Split, Split, Split]]


DATASETS: dict[str, DataSpec] = {
    "mq2008": DataSpec("LETOR 4.0 MQ2008", (1, 2, 3, 4, 5), load_mq2008),
    "lightgbm-example": DataSpec(
        "LightGBM lambdarank example (validation: 20% of rank.train's queries, seed = fold)",
        (1, 2, 3, 4, 5),
        load_lightgbm_example,
    ),
    "synthetic": DataSpec("Synthetic (bench_engine.make_data), 136 features", (1,), load_synthetic),
}


def reached(vali: np.ndarray, within: float) -> int:
    """Index of the first iteration whose validation NDCG@10 is within ``within`` of the best."""
    return int(np.flatnonzero(vali >= vali.max() - within)[0])


def run_fold(
    dataset: str,
    fold: int,
    names: list[str],
    budgets: dict[str, int],
    within: float,
    threads: int,
    rows: int = ROWS,
) -> dict:
    train, vali, test = DATASETS[dataset].load(fold, rows)
    out: dict[str, Any] = {
        "rows": {"train": len(train[1]), "vali": len(vali[1]), "test": len(test[1])}
    }
    for name in names:
        label, fit, _, option = LEARNERS[name]
        curve = fit(train, budgets[option], threads)
        v = np.array([ndcg10(vali[1], s, vali[2]) for s in curve.staged(vali[0])])
        i = reached(v, within)
        seconds = np.round(curve.seconds, 5)  # 10 us: the results file stays small
        s_test = curve.staged(test[0])[i]
        out[name] = {
            "label": label,
            "version": curve.version,
            "seconds": seconds.tolist(),
            "vali_ndcg10": np.round(v, 6).tolist(),
            "best_vali": float(v.max()),
            "reached_iteration": i + 1,
            "reached_seconds": float(seconds[i]),
            "test_ndcg10_there": ndcg10(test[1], s_test, test[2]),
            "total_seconds": float(seconds[-1]),
        }
        print(
            f"{dataset} fold {fold} {label}: best vali {v.max():.4f}, within {within} at iteration "
            f"{i + 1} after {curve.seconds[i]:.2f} s (test {out[name]['test_ndcg10_there']:.4f});"
            f" {len(v)} iterations in {curve.seconds[-1]:.2f} s",
            file=sys.stderr,
        )
    return out


def report(dataset: str, folds: dict[int, dict], names: list[str], within: float) -> str:
    rows = []
    for name in names:
        per = [folds[f][name] for f in folds]
        t = [p["reached_seconds"] for p in per]
        rows.append(
            [
                per[0]["label"],
                f"{np.mean([p['best_vali'] for p in per]):.4f}",
                f"{np.median([p['reached_iteration'] for p in per]):.0f}",
                f"{np.median(t):.2f}",
                f"{np.mean([p['test_ndcg10_there'] for p in per]):.4f}",
                f"{np.median([p['total_seconds'] for p in per]):.2f}",
            ]
        )
    head = [
        "learner",
        "best vali NDCG@10 (mean)",
        f"iteration within {within} (median)",
        "t (s, median)",
        "test NDCG@10 there (mean)",
        "whole budget (s, median)",
    ]
    sizes = folds[min(folds)]["rows"]
    title = f"{DATASETS[dataset].title}, folds {sorted(folds)}"
    title += f" (rows: {sizes['train']:,} train, {sizes['vali']:,} vali, {sizes['test']:,} test)"
    return title + "\n\n" + markdown_table(head, rows)


def plot(
    results: dict[str, dict[int, dict]], names: list[str], path: str, command: str, within: float
) -> None:
    """One panel per dataset: validation NDCG@10 against wall time on its first fold."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(results)
    fig, axes = plt.subplots(1, n, figsize=(7.5 * n, 4.2), squeeze=False)
    offsets = [(6, -26), (8, 8), (6, -30), (8, 20)]
    for ax, (dataset, folds) in zip(axes[0], results.items(), strict=True):
        fold = min(folds)
        for k, name in enumerate(names):
            color, offset = f"C{k}", offsets[k % len(offsets)]
            r = folds[fold][name]
            seconds, v = np.asarray(r["seconds"]), np.asarray(r["vali_ndcg10"])
            i = r["reached_iteration"] - 1
            ax.plot(seconds, v, color=color, lw=1.4, label=f"{r['label']} ({len(v)} iterations)")
            ax.plot(seconds[i], v[i], "o", color=color, ms=7)
            ax.annotate(
                f"{seconds[i]:.2f} s, it. {i + 1}\ntest {r['test_ndcg10_there']:.3f}",
                (seconds[i], v[i]),
                textcoords="offset points",
                xytext=offset,
                fontsize=8,
                color=color,
            )
        ax.set_xscale("log")
        ax.set_xlabel("wall time since the fit call began (s, log scale)")
        ax.set_ylabel("validation NDCG@10")
        title = DATASETS[dataset].title.split(" (")[0]
        ax.set_title(
            f"{title} fold {fold}: time to quality\n(dot: first within {within} of its own best)",
            fontsize=10,
        )
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
    fig.text(0.01, 0.01, command, fontsize=7, color="0.4")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}", file=sys.stderr)


def warm_up() -> None:
    """Compile rankboost's numba kernels before any clock starts: 70 rounds, so the exact
    refresh of every 64th round is compiled too (else its first call, about 1-2 s of
    compilation on an empty cache, lands inside the first fold's curve)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    y = np.clip(np.round(X[:, 0] + rng.normal(size=400) + 1), 0, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
        model = rb.train(X, rb.LayeredFeedback(y, np.repeat(np.arange(20), 20)), n_rounds=70)
    assert model.n_rounds == 70, "the warm-up stopped before round 64"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dataset", nargs="+", default=["mq2008"], choices=list(DATASETS), help="(mq2008)"
    )
    parser.add_argument(
        "--folds", type=int, nargs="+", help="folds of every dataset (default: its own list)"
    )
    parser.add_argument("--learners", nargs="+", default=list(LEARNERS), choices=list(LEARNERS))
    parser.add_argument("--rounds", type=int, default=300, help="RankBoost rounds (300)")
    parser.add_argument("--trees", type=int, default=300, help="trees per tree learner (300)")
    parser.add_argument("--within", type=float, default=WITHIN)
    parser.add_argument("--threads", type=int, default=THREADS, help="threads of every learner (1)")
    parser.add_argument(
        "--rows", type=int, default=ROWS, help=f"training rows of the synthetic problem ({ROWS:,})"
    )
    parser.add_argument("--plot", metavar="PNG", help="plot each dataset's first fold to PNG")
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args(argv)
    for option in ("rounds", "trees", "threads", "rows"):
        if getattr(args, option) < 1:
            parser.error(f"--{option} must be at least 1, got {getattr(args, option)}")
    if args.folds is not None and min(args.folds) < 1:
        parser.error(f"--folds must be 1 or more, got {args.folds}")
    if args.folds is not None and "mq2008" in args.dataset and max(args.folds) > 5:
        parser.error(f"MQ2008 has folds 1-5, got --folds {' '.join(map(str, args.folds))}")
    if args.plot:
        import importlib.util

        if importlib.util.find_spec("matplotlib") is None:
            parser.error("--plot needs matplotlib: pip install -e '.[bench]'")
    names = []
    for name in args.learners:
        package = LEARNERS[name][2]
        try:
            __import__(package)
        except ImportError:
            print(f"skipping {name}: {package} is not installed", file=sys.stderr)
            continue
        names.append(name)
    warm_up()
    budgets = {"rounds": args.rounds, "trees": args.trees}
    results: dict[str, dict[int, dict]] = {}
    sections = []
    for dataset in dict.fromkeys(args.dataset):
        folds = args.folds or DATASETS[dataset].folds
        results[dataset] = {
            f: run_fold(dataset, f, names, budgets, args.within, args.threads, args.rows)
            for f in folds
        }
        sections.append(report(dataset, results[dataset], names, args.within))
    markdown = "\n\n".join(sections) + "\n\n" + machine_line(machine_info()) + "\n"
    print(markdown)
    argv_text = " ".join(sys.argv[1:] if argv is None else argv)
    command = f"python benchmarks/time_to_quality.py {argv_text}".strip()
    if args.plot:
        plot(results, names, args.plot, command, args.within)
    data = {
        "command": command,
        "datasets": list(results),
        "budgets": budgets,
        "within": args.within,
        "threads": args.threads,
        "rows": args.rows,
        "results": {d: {str(f): r for f, r in folds.items()} for d, folds in results.items()},
    }
    report_result(args.write_results, "time_to_quality", markdown, data)


if __name__ == "__main__":
    main()
