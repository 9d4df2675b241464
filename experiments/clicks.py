"""Learning from simulated clicks: debiased vs naive RankBoost vs XGBoost / LightGBM (issue 25).

Protocol (rankboost.clicks._simulate; docs/clicks.md):

* Data: LETOR 4.0 MQ2008 (official folds) and LightGBM's lambdarank example
  (``rank.train`` / ``rank.test``, grades 0-4; no validation split: the last 20% of training
  queries serve as one). Test NDCG@10 is always against the *true* labels.
* A weak production ranker (RankBoost, 50 rounds, on 1% of the training queries' labels)
  ranks every training query; each session draws a query uniformly and shows its top 10;
  clicks follow the position-based model with the eye-tracking table ** eta and noisy clicks
  by grade (eps = 0.1).
* Methods: ``rb_debiased`` (``all_shown`` pairs: each click above every other shown
  document, weights 1/p_k clipped at 100, p_k estimated from the log by regression-EM),
  ``rb_oracle`` (the true p_k), ``rb_naive`` (the same pairs, no correction),
  ``rb_skip_above`` (skip-above pairs, estimated p_k), ``xgb_unbiased`` (XGBoost
  ``lambdarank_unbiased``: one group per distinct session, rows in shown order, click
  labels, group weight = how often the session occurred),
  ``lgb_position`` (LightGBM lambdarank with the ``position`` of each row, the same groups),
  ``full_info`` (RankBoost on the true labels: the ceiling) and ``production``.
  RankBoost: 300 rounds, the round count picked on vali by NDCG@10 of the true labels (as for
  every method: XGBoost/LightGBM 300 trees, best iteration on vali).

Run (``--full`` = 5 folds, sizes 1e4..1e6, eta 0.5/1/2, peers at every size; docs/clicks.md
gives the commands of its tables, which split the grid over two processes with ``--methods``
and ``--resume``; ``--production-share 1`` is the strong production ranker)::

    PYTHONPATH=src .venv/bin/python experiments/clicks.py --out experiments/clicks_results.json
    PYTHONPATH=src .venv/bin/python experiments/clicks.py --full --out clicks_full.json
    PYTHONPATH=src .venv/bin/python experiments/clicks.py --report A.json B.json --figure p.png
"""

from __future__ import annotations

import os

if __name__ == "__main__":
    # one thread everywhere: numba, and the BLAS of regression-EM's Newton steps (a
    # multi-threaded BLAS on a shared 2-core machine made them 100x slower)
    for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from _data import data_file  # noqa: E402

import rankboost as rb  # noqa: E402
from rankboost.clicks import (  # noqa: E402
    click_feedback,
    estimate_propensity,
    production_ranker,
    simulate_clicks,
)
from rankboost.datasets import load_svmlight  # noqa: E402
from rankboost.metrics import ndcg_score  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
N_ROUNDS = 300


def ndcg10(y: Any, s: Any, q: Any) -> float:
    return float(ndcg_score(y, s, q, k=10))


def test_scores(te: Any, s: Any) -> dict[str, Any]:
    """Test NDCG@10 (mean) and per query (for paired tests over queries), true labels."""
    pq = np.asarray(ndcg_score(te.y, s, te.qid, k=10, per_query=True), dtype=float)
    return {"ndcg10": float(pq.mean()), "per_query": pq.round(5).tolist()}


def load(dataset: str, fold: int) -> tuple[Any, Any, Any]:
    if dataset == "mq2008":
        d = data_file(f"letor4/MQ2008/Fold{fold}/train.txt.gz").parent
        return tuple(load_svmlight(d / f"{s}.txt.gz") for s in ("train", "vali", "test"))  # type: ignore[return-value]
    d = data_file("lightgbm_lambdarank/rank.train.gz").parent
    tr = load_svmlight(d / "rank.train.gz", query_file=d / "rank.train.query.gz")
    te = load_svmlight(d / "rank.test.gz", query_file=d / "rank.test.query.gz")
    uq = np.unique(tr.qid)
    cut = uq[int(0.8 * uq.size)]
    fit, val = tr.qid < cut, tr.qid >= cut
    mk = lambda m: rb.datasets.RankingDataset(tr.X[m], tr.y[m], tr.qid[m], None)  # noqa: E731
    return mk(fit), mk(val), te


def best_rounds(scores_by_round: Any, y: Any, q: Any) -> int:
    return int(np.argmax([ndcg10(y, s, q) for s in scores_by_round])) + 1


def rankboost_fit(tr: Any, va: Any, te: Any, fb: Any) -> tuple[dict[str, Any], float]:
    t = time.perf_counter()
    model = rb.train(tr.X, fb, N_ROUNDS)
    sec = time.perf_counter() - t
    steps = list(range(10, model.n_rounds + 1, 10)) or [model.n_rounds]
    best = steps[
        int(
            np.argmax(
                [ndcg10(va.y, model.decision_function(va.X, n_rounds=r), va.qid) for r in steps]
            )
        )
    ]
    return test_scores(te, model.decision_function(te.X, n_rounds=best)), sec


def session_groups(log: Any) -> tuple[Any, Any, Any, Any]:
    """Distinct sessions with their multiplicity, rows in shown order.

    The production ranking of a query is fixed, so a session is its query (the row shown
    first) and its clicks (a bit mask of positions, <= 62 of them): an exact key.
    """
    lens = np.diff(log.starts)
    sid = np.repeat(np.arange(log.n_sessions), lens)
    mask = np.zeros(log.n_sessions, dtype=np.int64)
    np.add.at(mask, sid, log.click.astype(np.int64) << (log.position - 1))
    key = log.row[log.starts[:-1]].astype(np.int64) * (1 << 20) + mask
    _, first, cnt = np.unique(key, return_index=True, return_counts=True)
    take = np.concatenate([np.arange(log.starts[s], log.starts[s + 1]) for s in first])
    group = np.repeat(np.arange(first.size), lens[first])
    return take, group, cnt.astype(float), lens[first]


def peers(tr: Any, va: Any, te: Any, log: Any, which: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    take, group, weight, sizes = session_groups(log)
    X, y, pos = tr.X[log.row[take]], log.click[take].astype(float), log.position[take]
    if "xgb_unbiased" in which:
        import xgboost as xgb

        t = time.perf_counter()
        m = xgb.XGBRanker(
            objective="rank:pairwise",
            lambdarank_unbiased=True,
            n_estimators=N_ROUNDS,
            lambdarank_pair_method="topk",
            lambdarank_num_pair_per_sample=10,
            tree_method="hist",
            learning_rate=0.1,
            max_depth=6,
            eval_metric="ndcg@10",
            n_jobs=1,
            early_stopping_rounds=None,
        )
        m.fit(X, y, qid=group, sample_weight=weight)
        sec = time.perf_counter() - t
        best = best_iter_xgb(m, va)
        out["xgb_unbiased"] = (test_scores(te, m.predict(te.X, iteration_range=(0, best))), sec)
    if "lgb_position" in which:
        import lightgbm as lgb

        t = time.perf_counter()
        ds = lgb.Dataset(X, y, group=sizes, weight=np.repeat(weight, sizes), position=pos - 1)
        booster = lgb.train(
            {
                "objective": "lambdarank",
                "verbose": -1,
                "num_threads": 1,
                "learning_rate": 0.1,
                "lambdarank_truncation_level": 10,
                "seed": 0,
            },
            ds,
            N_ROUNDS,
        )
        sec = time.perf_counter() - t
        steps = range(10, N_ROUNDS + 1, 10)
        best = max(
            steps, key=lambda r: ndcg10(va.y, booster.predict(va.X, num_iteration=r), va.qid)
        )
        out["lgb_position"] = (test_scores(te, booster.predict(te.X, num_iteration=best)), sec)
    return out


def best_iter_xgb(m: Any, va: Any) -> int:
    steps = range(10, N_ROUNDS + 1, 10)
    return max(steps, key=lambda r: ndcg10(va.y, m.predict(va.X, iteration_range=(0, r)), va.qid))


RB_METHODS = ("rb_debiased", "rb_oracle", "rb_naive", "rb_skip_above")
PEER_METHODS = ("xgb_unbiased", "lgb_position")


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The grid; with ``--resume``, configurations already in ``--out`` are not rerun.

    The production ranker and each simulated log are built once per (fold, eta, sessions)
    and shared by every method; the seeds depend only on the fold and the size, so two
    processes running different ``--methods`` see the same logs.
    """
    rows: list[dict[str, Any]] = []
    if args.resume and args.out and Path(args.out).exists():
        rows = json.loads(Path(args.out).read_text())
    done = {(r["dataset"], r["fold"], r.get("eta"), r.get("sessions"), r["method"]) for r in rows}
    methods = [m for m in args.methods if m in (*RB_METHODS, *PEER_METHODS)]
    share = {} if args.production_share == 0.01 else {"production_share": args.production_share}

    def save() -> None:
        if args.out:
            from rankboost._atomic import atomic_open

            with atomic_open(args.out) as fh:
                # one row per line (the per-query scores make rows long)
                fh.write(("[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]\n").encode())

    for dataset in args.datasets:
        folds = args.folds if dataset == "mq2008" else [1]
        for fold in folds:
            tr, va, te = load(dataset, fold)
            base: dict[str, Any] = {"dataset": dataset, "fold": fold, **share}
            production = production_ranker(
                tr.X, tr.y, tr.qid, share=args.production_share, random_state=fold
            )
            prod_scores = production.decision_function(tr.X)
            if "full_info" in args.methods and (dataset, fold, None, None, "full_info") not in done:
                full = rankboost_fit(tr, va, te, rb.LayeredFeedback(tr.y, tr.qid))
                rows.append({**base, "method": "full_info", **full[0], "seconds": full[1]})
                rows.append(
                    {
                        **base,
                        "method": "production",
                        **test_scores(te, production.decision_function(te.X)),
                    }
                )
                print({k: v for k, v in rows[-2].items() if k != "per_query"}, flush=True)
                print({k: v for k, v in rows[-1].items() if k != "per_query"}, flush=True)
                save()
            for eta in args.eta:
                for n in args.sessions:
                    todo = [
                        m
                        for m in methods
                        if (dataset, fold, eta, int(n), m) not in done
                        and (m in RB_METHODS or int(n) <= args.peer_max)
                    ]
                    if not todo:
                        continue
                    sim = simulate_clicks(
                        tr.y, tr.qid, prod_scores, int(n), eta=eta, random_state=int(n) + fold
                    )
                    log = sim.log
                    cfg = {**base, "eta": eta, "sessions": int(n)}
                    prop: Any = None
                    est_sec = err = 0.0
                    if any(m in todo for m in ("rb_debiased", "rb_skip_above")):
                        t = time.perf_counter()
                        prop = estimate_propensity(log, tr.X, method="regression_em")
                        est_sec = time.perf_counter() - t
                        err = float(np.max(np.abs(prop.values - sim.propensity.values)))
                    for method, kind in (
                        ("rb_debiased", "all_shown"),
                        ("rb_oracle", "all_shown"),
                        ("rb_naive", "all_shown"),
                        ("rb_skip_above", "skip_above"),
                    ):
                        if method not in todo:
                            continue
                        p: Any = {"rb_oracle": sim.propensity, "rb_naive": "none"}.get(method, prop)
                        t = time.perf_counter()
                        fb = click_feedback(log, p, pairs=kind)
                        pair_sec = time.perf_counter() - t
                        score, sec = rankboost_fit(tr, va, te, fb)
                        extra = (
                            {
                                "propensity": prop.values.round(4).tolist(),
                                "max_abs_error": err,
                                "estimate_seconds": est_sec,
                            }
                            if method == "rb_debiased"
                            else {}
                        )
                        rows.append(
                            {
                                **cfg,
                                "method": method,
                                **score,
                                "seconds": sec + pair_sec,
                                "pair_seconds": pair_sec,
                                "n_pairs": fb.n_pairs,
                                **extra,
                            }
                        )
                        print({k: v for k, v in rows[-1].items() if k != "per_query"}, flush=True)
                        save()
                    which = [m for m in todo if m in PEER_METHODS]
                    if which:
                        for method, (score, sec) in peers(tr, va, te, log, which).items():
                            rows.append({**cfg, "method": method, **score, "seconds": sec})
                            print(
                                {k: v for k, v in rows[-1].items() if k != "per_query"}, flush=True
                            )
                        save()
    return rows


METHODS = (*RB_METHODS, *PEER_METHODS)
KEY = ("group", "fold", "eta", "sessions", "method")


def load_rows(paths: list[str]) -> list[dict[str, Any]]:
    """Rows of several results files, one per configuration and method.

    ``group`` is the dataset, with " (strong production ranker, share s)" when the production
    ranker learnt from more than 1% of the queries. A configuration in several files keeps
    the row with per-query scores, else the last file's.
    """
    best: dict[tuple[Any, ...], dict[str, Any]] = {}
    for path in paths:
        for r in json.loads(Path(path).read_text()):
            share = r.get("production_share")
            r["group"] = r["dataset"] + (
                f" (strong production ranker, share {share:g})" if share else ""
            )
            k = tuple(r.get(c) for c in KEY)
            if k not in best or "per_query" in r or "per_query" not in best[k]:
                best[k] = r
    return list(best.values())


def paired(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> str:
    """Mean a - b over the folds both have; paired t over folds, Wilcoxon over queries."""
    from scipy import stats

    fa = {r["fold"]: r for r in a}
    fb = {r["fold"]: r for r in b}
    folds = sorted(set(fa) & set(fb))
    if not folds:
        return "-"
    d = np.array([fa[f]["ndcg10"] - fb[f]["ndcg10"] for f in folds])
    parts = []
    if len(folds) > 2:
        t = stats.ttest_rel([fa[f]["ndcg10"] for f in folds], [fb[f]["ndcg10"] for f in folds])
        parts.append(f"t {t.pvalue:.2g}")
    q = [f for f in folds if "per_query" in fa[f] and "per_query" in fb[f]]
    if q:
        dq = np.concatenate([np.subtract(fa[f]["per_query"], fb[f]["per_query"]) for f in q])
        p_q = stats.wilcoxon(dq[dq != 0]).pvalue if np.any(dq != 0) else 1.0
        parts.append(f"W {p_q:.2g}, {dq.size} q")
    parts.append(f"ahead in {int((d > 0).sum())}/{len(folds)} f")
    return f"{d.mean():+.4f} ({'; '.join(parts)})"


def report(paths: list[str]) -> str:
    """Markdown tables of results files.

    Per data set: mean test NDCG@10 over folds per (eta, sessions) and method (a cell run on
    fewer folds than the grid says on how many), paired differences of ``rb_debiased`` with
    naive and the peers (t: paired t-test over folds, W: Wilcoxon signed-rank over the pooled
    test queries of the folds with per-query scores; p-values), test NDCG@10 per fold, and
    median seconds at 1e5 sessions.
    """
    rows = load_rows(paths)
    out = []
    groups = {r["group"] for r in rows}  # MQ2008 first, the strong-ranker runs last
    for group in sorted(groups, key=lambda g: ("strong" in g, not g.startswith("mq2008"), g)):
        rs = [r for r in rows if r["group"] == group]

        def cell(eta: Any, n: Any, m: str, rs: list[dict[str, Any]] = rs) -> list[dict[str, Any]]:
            return [
                r for r in rs if r.get("eta") == eta and r.get("sessions") == n and r["method"] == m
            ]

        ref = {m: [r["ndcg10"] for r in cell(None, None, m)] for m in ("full_info", "production")}
        folds = sorted({r["fold"] for r in rs})
        nf = len(folds)
        mean_ref = {m: float(np.mean(v)) if v else float("nan") for m, v in ref.items()}
        out.append(
            f"\n### {group}\n\nFolds {folds}. Mean test NDCG@10 over folds: full-information "
            f"model {mean_ref['full_info']:.4f}, production ranker {mean_ref['production']:.4f}."
            f"\n\nMean test NDCG@10 over folds (a cell run on fewer folds gives, in brackets, "
            f"their number and rb_debiased's mean over the same folds); gap closed = "
            f"(rb_debiased - production) / (full_info - production):\n"
        )
        out.append(
            "| eta | sessions | " + " | ".join(METHODS) + " | gap closed | max abs err of p_k |"
        )
        out.append("|---|---|" + "---|" * (len(METHODS) + 2))
        cfgs = sorted({(r["eta"], r["sessions"]) for r in rs if r.get("eta") is not None})
        for eta, n in cfgs:
            cells = []
            deb_by_fold = {r["fold"]: r["ndcg10"] for r in cell(eta, n, "rb_debiased")}
            for m in METHODS:
                rm = cell(eta, n, m)
                v = [r["ndcg10"] for r in rm]
                txt = f"{np.mean(v):.4f}" if v else "-"
                if v and len(v) < nf:
                    # fewer folds: the mean is not comparable with the row; give rb_debiased's
                    # mean over the same folds beside it
                    there = [deb_by_fold[r["fold"]] for r in rm if r["fold"] in deb_by_fold]
                    txt += f" [{len(v)} f; rb_debiased there {np.mean(there):.4f}]"
                cells.append(txt)
            deb = cell(eta, n, "rb_debiased")
            gap = "-"
            if deb and ref["full_info"] and ref["production"]:
                dm = np.mean([r["ndcg10"] for r in deb])
                lo, hi = mean_ref["production"], mean_ref["full_info"]
                # no gap to close when the production ranker is level with the ceiling
                gap = f"{(dm - lo) / (hi - lo):.0%}" if hi - lo > 0.01 else "n/a"
            err = [r["max_abs_error"] for r in deb if "max_abs_error" in r]
            out.append(
                f"| {eta:g} | {n:.0e} | "
                + " | ".join(cells)
                + f" | {gap} | {np.mean(err) if err else float('nan'):.3f} |"
            )
        out.append(
            "\nPaired differences of rb_debiased (mean over the folds both methods ran; in "
            "brackets: p-value of a paired t-test over folds, p-value of a Wilcoxon signed-rank "
            "test over the pooled test queries and their number, in how many folds rb_debiased is "
            "ahead):\n"
        )
        out.append(
            "| eta | sessions | - rb_naive | - rb_oracle | - xgb_unbiased | - lgb_position |"
        )
        out.append("|---|---|---|---|---|---|")
        for eta, n in cfgs:
            deb = cell(eta, n, "rb_debiased")
            diffs = [paired(deb, cell(eta, n, m)) for m in ("rb_naive", "rb_oracle", *PEER_METHODS)]
            out.append(f"| {eta:g} | {n:.0e} | " + " | ".join(diffs) + " |")
        if nf > 1:
            out.append("\nTest NDCG@10 per fold:\n")
            cols = (*METHODS, "full_info", "production")
            out.append("| fold | eta | sessions | " + " | ".join(cols) + " |")
            out.append("|---|---|---|" + "---|" * len(cols))
            for f in folds:
                for eta, n in cfgs:
                    v = {
                        r["method"]: r["ndcg10"]
                        for r in rs
                        if r["fold"] == f
                        and r.get("eta") in (eta, None)
                        and r.get("sessions") in (n, None)
                    }
                    out.append(
                        f"| {f} | {eta:g} | {n:.0e} | "
                        + " | ".join(f"{v[m]:.4f}" if m in v else "-" for m in cols)
                        + " |"
                    )
        out.append(
            "\nSeconds at 1e5 sessions (median over eta and folds; rankboost: pairs + 300 "
            "rounds; peers: fit of 300 trees on the distinct sessions; one thread each):\n"
        )
        out.append("| method | seconds | runs |")
        out.append("|---|---|---|")
        for m in (*METHODS, "estimate_propensity"):
            key = "estimate_seconds" if m == "estimate_propensity" else "seconds"
            src = "rb_debiased" if m == "estimate_propensity" else m
            v = [r[key] for r in rs if r["method"] == src and r.get("sessions") == 100000]
            if v:
                out.append(f"| {m} | {np.median(v):.1f} | {len(v)} |")
    return "\n".join(out)


def figure(paths: list[str], png: str) -> None:
    """Estimated p_k (regression-EM, each eta's largest log per dataset) against the truth."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rankboost.clicks import Propensity, examination

    rows = [r for p in paths for r in json.loads(Path(p).read_text())]
    rows = [r for r in rows if r["method"] == "rb_debiased"]
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.5 * len(datasets), 3.2), squeeze=False)
    for ax, dataset in zip(axes[0], datasets, strict=True):
        rs = [r for r in rows if r["dataset"] == dataset]
        for eta in sorted({r["eta"] for r in rs}):
            best = max((r for r in rs if r["eta"] == eta), key=lambda r: r["sessions"])
            true = examination(10, eta)
            line = ax.plot(range(1, 11), true / true[0], ls="--", lw=1)[0]
            Propensity.from_table(best["propensity"]).plot(
                ax=ax, color=line.get_color(), label=f"eta={eta:g}, {best['sessions']:.0e}"
            )
        ax.set_title(f"{dataset}: regression-EM (solid) vs true (dashed)", fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["mq2008", "lightgbm"])
    ap.add_argument("--folds", nargs="+", type=int, default=[1])
    ap.add_argument("--sessions", nargs="+", type=float, default=[1e4, 1e5, 1e6])
    ap.add_argument("--eta", nargs="+", type=float, default=[0.5, 1.0, 2.0])
    ap.add_argument("--peer-max", type=float, default=1e5, help="largest log the peers get")
    ap.add_argument(
        "--methods",
        nargs="+",
        default=["full_info", *RB_METHODS, *PEER_METHODS],
        help="which methods to run (full_info also records the production ranker)",
    )
    ap.add_argument(
        "--production-share",
        type=float,
        default=0.01,
        help="share of training queries the production ranker learns from (1 = strong)",
    )
    ap.add_argument("--resume", action="store_true", help="keep --out's rows, skip them")
    ap.add_argument("--full", action="store_true", help="5 folds, peers at every size")
    ap.add_argument("--out", help="JSON results file (rewritten after every configuration)")
    ap.add_argument("--report", nargs="+", metavar="JSON", help="print tables of results files")
    ap.add_argument("--figure", metavar="PNG", help="with --report: propensity figure")
    args = ap.parse_args()
    if args.report:
        print(report(args.report))
        if args.figure:
            figure(args.report, args.figure)
        return
    if args.full:
        args.folds, args.peer_max = [1, 2, 3, 4, 5], 1e6
    run(args)


if __name__ == "__main__":
    main()
