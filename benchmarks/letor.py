"""LETOR 4.0 MQ2008 quality benchmark: RankBoost variants vs LightGBM and XGBoost, 5 folds.

Protocol (the same for every row):

* data: ``../shared/data/letor4/MQ2008/Fold{1..5}/{train,vali,test}.txt.gz`` (46 features,
  QueryLevelNorm, grades 0-2), loaded with ``rankboost.datasets.load_svmlight`` (or
  ``sklearn.datasets.load_svmlight_file(query_id=True)`` when that is missing);
* metrics on the test fold, averaged over queries and then over the 5 folds: NDCG@1,3,5,10
  (gain ``2**rel - 1``, discount ``1 / log2(1 + rank)``) and MAP (relevant = grade >= 1);
  a query without a relevant document scores 0; ties broken pessimistically (among equal
  scores the relevant documents are ranked last). Computed with ``rankboost.metrics``
  (``ties="pessimistic"``, ``empty="zero"``) and cross-checked against the plain-numpy
  ``benchmarks/_common.reference_metrics`` on every prediction;
* RankBoost: ``rb.train(X, rb.LayeredFeedback(y, qid, normalize=...), n_rounds=300, ...)``,
  then the number of rounds ``k`` in 1..300 maximising the validation-fold NDCG@10 (first
  maximum) from the staged scores; the test scores are ``model.decision_function(X_test,
  n_rounds=k)``. The rows chosen by validation MAP instead are in a second table;
* LightGBM lambdarank: 100 trees, ``objective="lambdarank"``, ``num_threads=2``,
  ``verbose=-1``, everything else default (num_leaves 31, learning_rate 0.1,
  min_data_in_leaf 20, max_bin 255, lambdarank_truncation_level 30), no early stopping;
* XGBoost ``rank:pairwise``: 100 rounds, ``tree_method="hist"``, ``nthread=2``, everything
  else default (eta 0.3, max_depth 6, lambdarank_pair_method "topk"), no early stopping;
  plus a row with ``lambdarank_pair_method="mean"`` (all pairs sampled, classic RankNet);
* reference points measured earlier with the same evaluator (not re-run here): RankLib 2.14
  RankBoost with its defaults, and LightGBM lambdarank 100 trees.

Training times are the median over the 5 folds of the fit call's wall time (RankBoost:
feedback + binning + 300 rounds; LightGBM/XGBoost: Dataset/DMatrix construction +
training), on a shared 2-core machine:
bursts of load from other processes change them by up to 10x between runs (the metrics never
change: every model here is deterministic).

Run (38 s on an idle 2-core machine in the last run):
    PYTHONPATH=src .venv/bin/python benchmarks/letor.py --write-results
``--quick`` runs only the normalize comparison and the two GBDT rows; ``--no-all`` skips
``thresholds="all"``. With ``--write-results`` it writes ``benchmarks/results/letor.md`` and
``letor.json`` (``letor_quick.*`` with ``--quick``); without it, it only prints.

Shrinkage study (issue 10), run on its own:
    PYTHONPATH=src .venv/bin/python benchmarks/letor.py --learning-rate-study --write-results
RankBoost with ``normalize="query"`` (the defaults) and with WeakLearn.cum
(``positive_cumulative=True``), each with ``learning_rate`` nu in {1, 0.5, 0.1} and a
budget of 300 / nu rounds (300, 600, 3000); the rounds are chosen on the validation fold as
above (first maximum of NDCG@10, or of MAP in the second table), and every nu < 1 is compared
with nu = 1 by the paired per-query test (``paired``: 95 % normal interval, two-sided
p-value) under the same selection rule. With ``--write-results`` it writes
``benchmarks/results/letor_learning_rate.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    add_write_results,
    data_file,
    library_metrics,
    machine_info,
    machine_line,
    markdown_table,
    reference_metrics,
    report_result,
)

import rankboost as rb  # noqa: E402

N_FEATURES = 46
N_ROUNDS = 300
N_TREES = 100
KS = (1, 3, 5, 10)
METRIC_KEYS = [f"ndcg@{k}" for k in KS] + ["map"]
REFERENCE_ROWS = [
    # (name, ndcg@10, map): measured earlier with this evaluator (pessimistic ties, empty=0)
    ("RankLib 2.14 RankBoost, defaults (reference, not re-run)", 0.4893, 0.4676),
    ("LightGBM lambdarank 100 trees (reference, not re-run)", 0.4953, 0.4697),
]


# --------------------------------------------------------------------------- data


def load_split(fold: int, split: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    path = data_file(f"letor4/MQ2008/Fold{fold}/{split}.txt.gz")
    try:
        from rankboost.datasets import load_svmlight

        ds = load_svmlight(path, n_features=N_FEATURES)
        X, y, qid = ds.X, ds.y, ds.qid
    except ImportError:
        from sklearn.datasets import load_svmlight_file

        Xs, y, qid = load_svmlight_file(str(path), n_features=N_FEATURES, query_id=True)
        X = Xs.toarray()
    return (
        np.ascontiguousarray(X, dtype=np.float64),
        np.asarray(y, dtype=np.float64),
        np.asarray(qid),
    )


# --------------------------------------------------------------------------- evaluation


class Evaluator:
    """rankboost.metrics when importable, always cross-checked with the numpy reference."""

    def __init__(self) -> None:
        self.max_diff = 0.0
        self.n_checked = 0
        self.source = (
            "rankboost.metrics"
            if library_metrics(np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([0, 0]))
            is not None
            else "benchmarks/_common.reference_metrics"
        )

    def __call__(self, y: np.ndarray, s: np.ndarray, qid: np.ndarray) -> dict[str, float]:
        ref = reference_metrics(y, s, qid, KS)
        lib = library_metrics(y, s, qid, KS)
        if lib is None:
            return ref
        diff = max(abs(lib[k] - ref[k]) for k in METRIC_KEYS)
        self.max_diff = max(self.max_diff, diff)
        self.n_checked += 1
        if diff > 1e-9:
            raise AssertionError(
                f"rankboost.metrics and the reference differ by {diff}: {lib} {ref}"
            )
        return lib

    def fast_ndcg10_map(self, y: np.ndarray, s: np.ndarray, qid: np.ndarray) -> tuple[float, float]:
        """Validation NDCG@10 and MAP (library when available, for speed)."""
        lib = library_metrics(y, s, qid, (10,))
        out = lib if lib is not None else reference_metrics(y, s, qid, (10,))
        return out["ndcg@10"], out["map"]


def per_query_ndcg10_ap(y: np.ndarray, s: np.ndarray, qid: np.ndarray) -> np.ndarray:
    """(n_queries, 2) per-query NDCG@10 and AP in sorted query-id order (same conventions)."""
    from rankboost.metrics import average_precision, ndcg_score

    opts = {"ties": "pessimistic", "empty": "zero", "per_query": True}
    return np.column_stack(
        [ndcg_score(y, s, qid, k=10, gain="exp2", **opts), average_precision(y, s, qid, **opts)]
    )


def paired(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Per-query paired difference b - a over the pooled test queries of the 5 folds."""
    da = np.concatenate(a["per_query"])
    db = np.concatenate(b["per_query"])
    diff = db - da
    mean = diff.mean(axis=0)
    se = diff.std(axis=0, ddof=1) / np.sqrt(diff.shape[0])
    return {
        "n_queries": int(diff.shape[0]),
        "mean_diff": mean.tolist(),
        "se": se.tolist(),
        "b_better": (diff > 0).sum(axis=0).tolist(),
        "a_better": (diff < 0).sum(axis=0).tolist(),
    }


# --------------------------------------------------------------------------- models


def run_rankboost(
    folds: list[dict[str, Any]],
    ev: Evaluator,
    n_rounds: int = N_ROUNDS,
    per_query_map: bool = False,
    **params: Any,
) -> dict[str, Any]:
    """Train ``n_rounds`` per fold; rounds chosen on vali (first maximum of NDCG@10 / MAP).

    The validation scores come from ``model.staged_decision_function`` (``H_t`` updated by
    ``alpha_t h_t`` each round: O(n) per round, no re-scoring from scratch). The test
    metrics of the full budget are under ``f"at_{n_rounds}"``; ``per_query_map`` also keeps
    the per-query test NDCG@10/AP of the vali-MAP choice (``"per_query_map"``).
    """
    normalize = params.pop("normalize")
    per_fold: dict[str, list[Any]] = {"by_ndcg": [], "by_map": [], "k_ndcg": [], "k_map": []}
    full_key = f"at_{n_rounds}"
    per_fold[full_key] = []
    times = []
    select_times = []
    for f in folds:
        Xtr, ytr, qtr = f["train"]
        Xva, yva, qva = f["vali"]
        Xte, yte, qte = f["test"]
        start = time.perf_counter()
        fb = rb.LayeredFeedback(ytr, qtr, normalize=normalize)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
            model = rb.train(Xtr, fb, n_rounds=n_rounds, **params)
        times.append(time.perf_counter() - start)
        start = time.perf_counter()
        vals = np.empty((model.n_rounds, 2))
        best, s_best = -np.inf, None
        for t, s in enumerate(model.staged_decision_function(Xva)):
            vals[t] = ev.fast_ndcg10_map(yva, s, qva)
            if vals[t, 0] > best:
                best, s_best = vals[t, 0], s.copy()
        k_ndcg = int(np.argmax(vals[:, 0])) + 1
        k_map = int(np.argmax(vals[:, 1])) + 1
        select_times.append(time.perf_counter() - start)
        # the staged scores are the model's: same vali scores as decision_function at k
        s_check = model.decision_function(Xva, n_rounds=k_ndcg)
        if not np.allclose(s_best, s_check, rtol=0.0, atol=1e-9):
            raise AssertionError("staged_decision_function and decision_function disagree")
        per_fold["k_ndcg"].append(k_ndcg)
        per_fold["k_map"].append(k_map)
        s_ndcg = model.decision_function(Xte, n_rounds=k_ndcg)
        per_fold["by_ndcg"].append(ev(yte, s_ndcg, qte))
        per_fold.setdefault("per_query", []).append(per_query_ndcg10_ap(yte, s_ndcg, qte))
        s_map = model.decision_function(Xte, n_rounds=k_map)
        per_fold["by_map"].append(ev(yte, s_map, qte))
        if per_query_map:
            per_fold.setdefault("per_query_map", []).append(per_query_ndcg10_ap(yte, s_map, qte))
        per_fold[full_key].append(ev(yte, model.decision_function(Xte), qte))
        per_fold.setdefault("rounds_trained", []).append(model.n_rounds)
    per_fold["train_s"] = times
    per_fold["select_s"] = select_times
    return per_fold


def run_lightgbm(folds: list[dict[str, Any]], ev: Evaluator) -> dict[str, Any] | None:
    try:
        import lightgbm as lgb
    except ImportError:
        return None
    params = {"objective": "lambdarank", "num_threads": 2, "verbose": -1}
    res: dict[str, Any] = {
        "by_fixed": [],
        "train_s": [],
        "params": params,
        "version": lgb.__version__,
    }
    for f in folds:
        Xtr, ytr, qtr = f["train"]
        Xte, yte, qte = f["test"]
        order = np.argsort(qtr, kind="stable")
        _, sizes = np.unique(qtr[order], return_counts=True)
        # np.unique sorts ids; keep the group sizes in the order the sorted rows appear
        start = time.perf_counter()
        ds = lgb.Dataset(Xtr[order], label=ytr[order], group=sizes, params=params)
        booster = lgb.train(params, ds, num_boost_round=N_TREES)
        res["train_s"].append(time.perf_counter() - start)
        res["by_fixed"].append(ev(yte, booster.predict(Xte), qte))
    return res


def run_xgboost(folds: list[dict[str, Any]], ev: Evaluator, **extra: Any) -> dict[str, Any] | None:
    try:
        import xgboost as xgb
    except ImportError:
        return None
    params = {"objective": "rank:pairwise", "tree_method": "hist", "nthread": 2, **extra}
    res: dict[str, Any] = {
        "by_fixed": [],
        "train_s": [],
        "params": params,
        "version": xgb.__version__,
    }
    for f in folds:
        Xtr, ytr, qtr = f["train"]
        Xte, yte, qte = f["test"]
        order = np.argsort(qtr, kind="stable")
        start = time.perf_counter()
        dtr = xgb.DMatrix(Xtr[order], label=ytr[order], qid=qtr[order])
        booster = xgb.train(params, dtr, num_boost_round=N_TREES)
        res["train_s"].append(time.perf_counter() - start)
        res["by_fixed"].append(ev(yte, booster.predict(xgb.DMatrix(Xte)), qte))
    return res


# --------------------------------------------------------------------------- report


def mean_metrics(per_fold: list[dict[str, float]]) -> dict[str, float]:
    return {k: float(np.mean([m[k] for m in per_fold])) for k in METRIC_KEYS}


LEARNING_RATES = (1.0, 0.5, 0.1)
LR_CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("defaults", {"normalize": "query"}),
    ("positive_cumulative", {"normalize": "query", "positive_cumulative": True}),
]


def paired_verdict(pt: dict[str, Any], j: int) -> str:
    """'beats' / 'loses' when the 95 % interval of metric ``j`` excludes 0, else 'ties'."""
    lo = pt["mean_diff"][j] - 1.96 * pt["se"][j]
    hi = pt["mean_diff"][j] + 1.96 * pt["se"][j]
    return "beats" if lo > 0 else "loses" if hi < 0 else "ties (within noise)"


def paired_cell(pt: dict[str, Any], j: int) -> str:
    """``mean ± 1.96 SE (b better : a better), p`` for metric ``j`` of a :func:`paired` row."""
    m, se = pt["mean_diff"][j], pt["se"][j]
    p = math.erfc(abs(m / se) / math.sqrt(2.0)) if se > 0 else float(m == 0)
    return f"{m:+.4f} ± {1.96 * se:.4f} ({pt['b_better'][j]}:{pt['a_better'][j]}), p = {p:.2f}"


def learning_rate_study(
    folds: list[dict[str, Any]], ev: Evaluator, info: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """Shrinkage nu in LEARNING_RATES x LR_CONFIGS, budget N_ROUNDS / nu, rounds on vali."""
    runs: dict[str, Any] = {}
    for label, base in LR_CONFIGS:
        for nu in LEARNING_RATES:
            budget = int(round(N_ROUNDS / nu))
            t = time.perf_counter()
            res = run_rankboost(
                folds, ev, n_rounds=budget, per_query_map=True, learning_rate=nu, **dict(base)
            )
            res.update(config=label, learning_rate=nu, budget=budget)
            res["params"] = {**base, "learning_rate": nu, "n_rounds": budget}
            name = f"{label}, nu={nu:g}"
            runs[name] = res
            m = mean_metrics(res["by_ndcg"])
            print(
                f"{name:32s} NDCG@10 {m['ndcg@10']:.4f} MAP {m['map']:.4f} k={res['k_ndcg']} "
                f"(vali MAP: {res['k_map']}; {time.perf_counter() - t:.1f} s)",
                flush=True,
            )

    def chosen(res: dict[str, Any], key: str) -> str:
        """Mean and per-fold rounds, flagging folds whose maximum is the last round."""
        ks, trained = res[key], res["rounds_trained"]
        hit = sum(k == n for k, n in zip(ks, trained, strict=True))
        return f"{np.mean(ks):.0f} {ks}" + (f" ({hit} at the budget)" if hit else "")

    rows_ndcg, rows_map, rows_fold = [], [], []
    for res in runs.values():
        b = res["budget"]
        m = mean_metrics(res["by_ndcg"])
        rows_ndcg.append(
            [res["config"], f"{res['learning_rate']:g}", b]
            + [chosen(res, "k_ndcg")]
            + [m[k] for k in METRIC_KEYS]
            + [f"{np.median(res['train_s']):.2f}", f"{np.median(res['select_s']):.2f}"]
        )
        mm = mean_metrics(res["by_map"])
        mf = mean_metrics(res[f"at_{b}"])
        rows_map.append(
            [res["config"], f"{res['learning_rate']:g}"]
            + [chosen(res, "k_map")]
            + [mm[k] for k in METRIC_KEYS]
            + [mf["ndcg@10"], mf["map"]]
        )
        rows_fold.append(
            [res["config"], f"{res['learning_rate']:g}"]
            + [f"{x['ndcg@10']:.4f} / {x['map']:.4f}" for x in res["by_ndcg"]]
        )

    paired_rows = []
    paired_out: dict[str, Any] = {}
    for label, _ in LR_CONFIGS:
        ref = runs[f"{label}, nu=1"]
        for sel, key in (("vali NDCG@10", "per_query"), ("vali MAP", "per_query_map")):
            for nu in LEARNING_RATES[1:]:
                res = runs[f"{label}, nu={nu:g}"]
                pt = paired({"per_query": ref[key]}, {"per_query": res[key]})
                paired_out.setdefault(label, {}).setdefault(sel, {})[f"{nu:g}"] = pt
                paired_rows.append(
                    [label, sel, f"{nu:g} vs 1", paired_cell(pt, 0), paired_cell(pt, 1)]
                    + [paired_verdict(pt, 0), paired_verdict(pt, 1)]
                )
    n_q = next(iter(next(iter(paired_out.values())).values()))["0.5"]["n_queries"]

    md = "\n".join(
        [
            "# Shrinkage (`learning_rate`) on LETOR 4.0 MQ2008, 5 folds",
            "",
            "`PYTHONPATH=src .venv/bin/python benchmarks/letor.py --learning-rate-study "
            "--write-results`",
            "",
            f"Machine: {machine_line(info)}.",
            "",
            "Same data and evaluator as `letor.md` (test metrics averaged over queries, then "
            "over the 5 folds; gain 2^rel - 1, log2 discount, relevant = grade >= 1, empty "
            f"queries 0, pessimistic ties; {ev.source}, cross-checked against "
            f"benchmarks/_common.reference_metrics on {ev.n_checked} predictions, max "
            f"difference {ev.max_diff:.1e}).",
            "",
            "RankBoost: LayeredFeedback(normalize='query'), alpha='r', thresholds=255, "
            "`learning_rate=nu` (alpha_t = nu x the rule's alpha); 'positive_cumulative' is "
            "WeakLearn.cum. Round budget 300 / nu (300, 600, 3000). The number of rounds is "
            "the first maximum over the staged validation scores of NDCG@10 (first table) or "
            "MAP (second table); '(n at the budget)' flags folds whose maximum is the last "
            "round. 'select s' is the time to score and evaluate every stage on vali.",
            "",
            "## Rounds chosen by validation NDCG@10",
            "",
            markdown_table(
                ["config", "nu", "budget", "rounds chosen (mean [per fold])"]
                + [k.upper() for k in METRIC_KEYS]
                + ["train s/fold (median)", "select s/fold (median)"],
                rows_ndcg,
            ),
            "",
            "## Rounds chosen by validation MAP (and at the full budget)",
            "",
            markdown_table(
                ["config", "nu", "rounds chosen (mean [per fold])"]
                + [k.upper() for k in METRIC_KEYS]
                + ["NDCG@10 at budget", "MAP at budget"],
                rows_map,
            ),
            "",
            "## Paired per-query differences vs nu = 1",
            "",
            f"Mean per-query test difference (nu - nu=1) over the {n_q} pooled test queries "
            "(every MQ2008 query is in exactly one test fold), with a 95 % normal interval "
            "(1.96 SE), (queries better with nu : better with nu = 1) and the two-sided "
            "normal p-value; 'beats' / 'loses' when the interval excludes 0. Both runs of a "
            "row use the same selection rule. 16 tests: expect about one p < 0.05 by chance.",
            "",
            markdown_table(
                ["config", "rounds by", "nu", "ΔNDCG@10", "ΔAP", "NDCG@10", "AP"], paired_rows
            ),
            "",
            "## Per fold (test NDCG@10 / MAP, rounds by vali NDCG@10)",
            "",
            markdown_table(
                ["config", "nu"] + [f"Fold{i} NDCG@10 / MAP" for i in range(1, 6)], rows_fold
            ),
            "",
        ]
    )
    results = {
        "machine": info,
        "learning_rates": list(LEARNING_RATES),
        "runs": runs,
        "paired_vs_nu1": paired_out,
        "evaluator": {"source": ev.source, "n_checked": ev.n_checked, "max_diff": ev.max_diff},
    }
    return md, results


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="normalize comparison + GBDTs only")
    p.add_argument("--no-all", action="store_true", help='skip thresholds="all"')
    p.add_argument(
        "--smoke",
        action="store_true",
        help="fold 1 only, 5 rounds / trees, the --quick configurations: seconds, for tests",
    )
    p.add_argument(
        "--learning-rate-study",
        action="store_true",
        help="only the shrinkage study: nu in {1, 0.5, 0.1}, budget 300/nu (letor_learning_rate.*)",
    )
    add_write_results(p)
    args = p.parse_args()
    n_folds = 5
    if args.smoke:
        global N_ROUNDS, N_TREES  # noqa: PLW0603  the script's constants, shrunk for a smoke run
        N_ROUNDS, N_TREES, n_folds = 5, 5, 1
        args.quick, args.write_results = True, False
    info = machine_info()
    print(machine_line(info), flush=True)
    ev = Evaluator()
    t0 = time.perf_counter()
    folds = [
        {s: load_split(i, s) for s in ("train", "vali", "test")} for i in range(1, n_folds + 1)
    ]
    print(f"loaded {n_folds} folds in {time.perf_counter() - t0:.1f} s", flush=True)
    # warm-up: numba compilation / cache loading outside the timed fits
    Xw, yw, qw = folds[0]["train"]
    rb.train(Xw[:500], rb.LayeredFeedback(yw[:500], qw[:500]), n_rounds=2)
    if args.learning_rate_study:
        md, data = learning_rate_study(folds, ev, info)
        print()
        print(md)
        report_result(args.write_results, "letor_learning_rate", md, data)
        return

    configs: list[tuple[str, dict[str, Any]]] = [
        ("RankBoost normalize='pair'", {"normalize": "pair"}),
        ("RankBoost normalize='query'", {"normalize": "query"}),
    ]
    if not args.quick:
        configs += [
            (
                "RankBoost 'pair', positive_cumulative",
                {"normalize": "pair", "positive_cumulative": True},
            ),
            (
                "RankBoost 'query', positive_cumulative",
                {"normalize": "query", "positive_cumulative": True},
            ),
        ]
        if not args.no_all:
            configs += [
                ("RankBoost 'pair', thresholds='all'", {"normalize": "pair", "thresholds": "all"}),
                (
                    "RankBoost 'query', thresholds='all'",
                    {"normalize": "query", "thresholds": "all"},
                ),
            ]
    results: dict[str, Any] = {"machine": info, "rankboost": {}, "gbdt": {}}
    for name, params in configs:
        t = time.perf_counter()
        res = run_rankboost(folds, ev, n_rounds=N_ROUNDS, **dict(params))
        res["params"] = params
        results["rankboost"][name] = res
        m = mean_metrics(res["by_ndcg"])
        print(
            f"{name:45s} NDCG@10 {m['ndcg@10']:.4f} MAP {m['map']:.4f} "
            f"k={res['k_ndcg']} ({time.perf_counter() - t:.1f} s)",
            flush=True,
        )
    for name, fn, kw in (
        ("LightGBM lambdarank, 100 trees", run_lightgbm, {}),
        ("XGBoost rank:pairwise, 100 rounds", run_xgboost, {}),
        (
            "XGBoost rank:pairwise, 100 rounds, pair_method='mean'",
            run_xgboost,
            {"lambdarank_pair_method": "mean"},
        ),
    ):
        res = fn(folds, ev, **kw)
        if res is None:
            print(f"{name}: not installed")
            continue
        results["gbdt"][name] = res
        m = mean_metrics(res["by_fixed"])
        print(f"{name:45s} NDCG@10 {m['ndcg@10']:.4f} MAP {m['map']:.4f}", flush=True)

    header = (
        ["model", "rounds (mean over folds)"]
        + [k.upper().replace("NDCG", "NDCG") for k in METRIC_KEYS]
        + ["train s/fold (median)"]
    )
    rows = []
    for name, res in results["rankboost"].items():
        m = mean_metrics(res["by_ndcg"])
        rows.append(
            [name, f"{np.mean(res['k_ndcg']):.0f} (vali NDCG@10)"]
            + [m[k] for k in METRIC_KEYS]
            + [f"{np.median(res['train_s']):.2f}"]
        )
    for name, res in results["gbdt"].items():
        m = mean_metrics(res["by_fixed"])
        rows.append(
            [name, f"{N_TREES} (fixed)"]
            + [m[k] for k in METRIC_KEYS]
            + [f"{np.median(res['train_s']):.2f}"]
        )
    for name, n10, mp in REFERENCE_ROWS:
        rows.append([name, "-", "-", "-", "-", f"{n10:.4f}", f"{mp:.4f}", "-"])
    table = markdown_table(header, rows)

    rows_map = []
    for name, res in results["rankboost"].items():
        m = mean_metrics(res["by_map"])
        m3 = mean_metrics(res[f"at_{N_ROUNDS}"])
        rows_map.append(
            [name, f"{np.mean(res['k_map']):.0f}"]
            + [m[k] for k in METRIC_KEYS]
            + [m3["ndcg@10"], m3["map"]]
        )
    table_map = markdown_table(
        ["model", "rounds (vali MAP)"]
        + [k.upper() for k in METRIC_KEYS]
        + ["NDCG@10 at 300", "MAP at 300"],
        rows_map,
    )
    fold_rows = []
    for name, res in results["rankboost"].items():
        fold_rows.append(
            [name]
            + [f"{m['ndcg@10']:.4f} / {m['map']:.4f}" for m in res["by_ndcg"]]
            + [str(res["k_ndcg"])]
        )
    for name, res in results["gbdt"].items():
        fold_rows.append(
            [name] + [f"{m['ndcg@10']:.4f} / {m['map']:.4f}" for m in res["by_fixed"]] + ["-"]
        )
    table_folds = markdown_table(
        ["model"]
        + [f"Fold{i} NDCG@10 / MAP" for i in range(1, len(folds) + 1)]
        + ["rounds chosen"],
        fold_rows,
    )

    verdict_lines = []
    rbres = results["rankboost"]
    for label, pa, qu in (
        ("defaults", "RankBoost normalize='pair'", "RankBoost normalize='query'"),
        (
            "positive_cumulative",
            "RankBoost 'pair', positive_cumulative",
            "RankBoost 'query', positive_cumulative",
        ),
        (
            "thresholds='all'",
            "RankBoost 'pair', thresholds='all'",
            "RankBoost 'query', thresholds='all'",
        ),
    ):
        if pa not in rbres or qu not in rbres:
            continue
        a = mean_metrics(rbres[pa]["by_ndcg"])
        b = mean_metrics(rbres[qu]["by_ndcg"])
        am = mean_metrics(rbres[pa]["by_map"])
        bm = mean_metrics(rbres[qu]["by_map"])
        pt = paired(rbres[pa], rbres[qu])
        results.setdefault("paired_query_minus_pair", {})[label] = pt
        verdict_lines.append(
            f"| {label} | {a['ndcg@10']:.4f} / {b['ndcg@10']:.4f} | {a['map']:.4f} / "
            f"{b['map']:.4f} | {pt['mean_diff'][0]:+.4f} ± {1.96 * pt['se'][0]:.4f} "
            f"({pt['b_better'][0]}:{pt['a_better'][0]}) | {pt['mean_diff'][1]:+.4f} ± "
            f"{1.96 * pt['se'][1]:.4f} ({pt['b_better'][1]}:{pt['a_better'][1]}) | "
            f"{am['ndcg@10']:.4f} / {bm['ndcg@10']:.4f} | {am['map']:.4f} / {bm['map']:.4f} |"
        )
    verdict = ""
    if verdict_lines:
        verdict = "\n".join(
            [
                "## normalize='pair' vs normalize='query'",
                "",
                "Test NDCG@10 and MAP (5-fold means, 'pair' / 'query'); the paired columns give "
                "the mean per-query difference query - pair over the pooled test queries of the 5 "
                "folds (every MQ2008 query is in exactly one test fold) with a 95 % normal "
                "interval (1.96 SE) and (queries better with 'query' : better with 'pair'); "
                "the last two columns select the rounds by validation MAP instead.",
                "",
                "| setting | NDCG@10 pair / query | MAP pair / query | paired ΔNDCG@10 | "
                "paired ΔAP | NDCG@10 (vali-MAP rounds) | MAP (vali-MAP rounds) |",
                "|---|---|---|---|---|---|---|",
                *verdict_lines,
            ]
        )
    md = "\n".join(
        [
            "# LETOR 4.0 MQ2008, 5 folds (`benchmarks/letor.py`)",
            "",
            f"Machine: {machine_line(info)}.",
            "",
            "Test-fold metrics averaged over queries, then over the 5 folds. NDCG: gain 2^rel - 1, "
            "log2 discount; MAP: relevant = grade >= 1; queries without a relevant document "
            "score 0; ties pessimistic (relevant documents last among equal scores). Evaluator: "
            f"{ev.source}, cross-checked against benchmarks/_common.reference_metrics on "
            f"{ev.n_checked} predictions (max difference {ev.max_diff:.1e}).",
            "",
            f"RankBoost: LayeredFeedback, {N_ROUNDS} rounds, alpha='r', thresholds=255 unless "
            "stated; the number of rounds is the first maximum of the validation-fold NDCG@10 "
            "over the staged scores. LightGBM / XGBoost: fixed 100 trees, parameters in the "
            "script docstring.",
            "",
            "## Rounds chosen by validation NDCG@10",
            "",
            table,
            "",
            verdict,
            "",
            "## RankBoost with rounds chosen by validation MAP (and at the full 300 rounds)",
            "",
            table_map,
            "",
            "## Per fold (test NDCG@10 / MAP)",
            "",
            table_folds,
            "",
        ]
    )
    print()
    print(md)
    report_result(args.write_results, "letor_quick" if args.quick else "letor", md, results)


if __name__ == "__main__":
    main()
