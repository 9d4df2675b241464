"""The P-Norm Push study (issue 48; docs/variants.md, "The P-Norm Push").

``push = p`` in {1, 2, 4, 8, 16} (:mod:`rankboost.push`; p = 1 is RankBoost, Rb-c) on

* LETOR 4.0 MQ2008, the official 5 folds: layered feedback (library defaults), 255 quantile
  thresholds;
* MQ2008-agg and MQ2007-agg (rank fusion, 25 and 21 input lists, 5 folds): features = -rank in
  each list, every distinct rank a threshold (RankFusion's defaults), as
  ``experiments/variants.py``;

(``--datasets`` picks a subset). Protocol of ``experiments/variants.py``: ``--rounds``
rounds, the round count chosen on ``vali`` by NDCG@10 among ``1..T``, test NDCG@1, @3, @10
(2^rel - 1 gain, LETOR discount, 0 for a query without relevant documents) and MAP
(relevant = grade >= 1), per query over the 5 test folds, each p paired with p = 1 (paired
t-test and sign-flip randomisation test). Also reported: the training objective, ``log R_p``
at the chosen round minus at the start (mean over folds), and the training rloss there, so
that "the objective goes down but the metric does not" can be read off the table.

``--auto`` runs ``RankBoostRanker(push="auto")`` instead of the grid (and p = 1 to pair it
with): on each fold it chooses p on ``vali`` (the library's rule: held-out NDCG@10 at each
p's first best round, ``early_stopping_rounds=--rounds`` so that none stops early; p = 1
unless another p is better by more than 2 standard errors), then the round count is chosen
on ``vali`` as for every p above, and the test metrics are paired with p = 1's.

Run::

    PYTHONPATH=src .venv/bin/python experiments/push.py              # print only
    PYTHONPATH=src .venv/bin/python experiments/push.py --write-docs # + docs table, figure
    PYTHONPATH=src .venv/bin/python experiments/push.py --normalize pair --write-docs
    PYTHONPATH=src .venv/bin/python experiments/push.py --auto --write-docs
    PYTHONPATH=src .venv/bin/python experiments/push.py --quick      # smoke test
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # one thread: the machine is shared
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import rankboost as rb  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from variants import AGG_OPTIONS, NDCG, agg_folds, choose_rounds, letor_folds  # noqa: E402
from variants import per_query as variants_per_query  # noqa: E402
from variants_report import paired, replace_block  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
COMMAND = "PYTHONPATH=src .venv/bin/python experiments/push.py"
PS = (1.0, 2.0, 4.0, 8.0, 16.0)
METRICS = ("ndcg@1", "ndcg@3", "ndcg@10", "map")


def per_query(y: np.ndarray, s: np.ndarray, qid: np.ndarray) -> dict[str, np.ndarray]:
    """Per-query test metrics: NDCG@1, @3 and variants.py's (its conventions, ``NDCG``), MAP."""
    conventions = {key: v for key, v in NDCG.items() if key != "k"}
    out = {
        f"ndcg@{k}": np.asarray(
            rb.metrics.ndcg_score(y, s, qid, k=k, per_query=True, **conventions)
        )
        for k in (1, 3)
    }
    return {**out, **variants_per_query(y, s, qid)}


def run(folds: list[dict[str, Any]], options: dict[str, Any], args: Any) -> dict[float, Any]:
    """Every p on every fold: rounds on vali, per-query test metrics, objective, time."""
    out: dict[float, Any] = {}
    for p in args.ps:
        res: dict[str, Any] = {"rounds": [], "per_round": [], "dlogR": [], "rloss": []}
        res["test"] = {m: [] for m in METRICS}
        bst = rb.Booster(folds[0]["X"], folds[0]["feedback"], {"push": p, **options})
        bst.update()  # compile before timing
        for f in folds:
            bst = rb.Booster(f["X"], f["feedback"], {"push": p, **options})
            t0 = time.perf_counter()
            for _ in range(args.rounds):
                if bst.update() is None:
                    break
            seconds = time.perf_counter() - t0
            model = bst.model()
            t = choose_rounds(model, f["vali"])
            test = f["test"]
            s = test.full(model.decision_function(test.X, n_rounds=t))
            for k, v in per_query(test.y, s, test.qid).items():
                res["test"][k].append(v)
            res["rounds"].append(t)
            res["per_round"].append(seconds / max(model.n_rounds, 1))
            res["rloss"].append(float(model.history["rloss"][t - 1]))
            if p != 1.0:
                res["dlogR"].append(bst.log_objective[t] - bst.log_objective[0])
            else:  # RankBoost: R_1 = prod Z_t (the bound), relative to the start
                res["dlogR"].append(float(np.log(model.history["bound"][t - 1])))
        res["test"] = {k: np.concatenate(v) for k, v in res["test"].items()}
        out[p] = res
        print(
            f"  p={p:g}: "
            + " ".join(f"{m} {res['test'][m].mean():.4f}" for m in METRICS)
            + f" rounds {res['rounds']} {1e3 * np.median(res['per_round']):.2f} ms/round",
            file=sys.stderr,
        )
    return out


def run_auto(folds: list[dict[str, Any]], options: dict[str, Any], args: Any) -> dict[str, Any]:
    """``RankBoostRanker(push="auto")`` on every fold: its choice on vali, the test metrics."""
    res: dict[str, Any] = {"rounds": [], "chosen": [], "seconds": []}
    res["test"] = {m: [] for m in METRICS}
    for f in folds:
        fb, vali, test = f["feedback"], f["vali"], f["test"]
        rows = slice(None) if vali.rows is None else vali.rows
        est = rb.RankBoostRanker(
            n_estimators=args.rounds, push="auto", normalize=args.normalize, **options
        )
        t0 = time.perf_counter()
        est.fit(f["X"], fb.y, qid=fb.qid, eval_set=[(vali.X, vali.y[rows])],
                eval_qid=[vali.qid[rows]], early_stopping_rounds=args.rounds)  # fmt: skip
        res["seconds"].append(time.perf_counter() - t0)
        t = choose_rounds(est.model_, vali)
        s = test.full(est.model_.decision_function(test.X, n_rounds=t))
        for k, v in per_query(test.y, s, test.qid).items():
            res["test"][k].append(v)
        res["rounds"].append(t)
        res["chosen"].append(est.push_)
        sel = est.push_selection_
        print(f"    fold: chose p={est.push_:g} (vali NDCG@10 {sel['ndcg@10']}, "
              f"diff {sel['diff']}, se {sel['se']}) rounds {t}", file=sys.stderr)  # fmt: skip
    res["test"] = {k: np.concatenate(v) for k, v in res["test"].items()}
    print("  auto: " + " ".join(f"{m} {res['test'][m].mean():.4f}" for m in METRICS)
          + f" chose {res['chosen']}", file=sys.stderr)  # fmt: skip
    return res


def auto_table(results: dict[str, dict[float, Any]], auto: dict[str, Any], args: Any) -> str:
    """One row per collection: the p chosen per fold and auto's test metrics against p = 1."""
    head = (
        "| collection | p chosen per fold | " + " | ".join(
            f"{m.upper()} p=1 / auto (diff, p_t)" for m in METRICS) + " | fit time auto |"
    )  # fmt: skip
    lines = [head, "|" + "---|" * (len(METRICS) + 3)]
    for name, r in auto.items():
        base = results[name][1.0]["test"]
        cells = []
        for m in METRICS:
            d, p_t, p_perm = paired(r["test"][m], base[m], args.n_perm, seed=0)
            star = "*" if max(p_t, p_perm) < 0.05 else ""
            cells.append(f"{base[m].mean():.4f} / {r['test'][m].mean():.4f} "
                         f"({d:+.4f}, {p_t:.2f}){star}")  # fmt: skip
        chosen = ", ".join(f"{p:g}" for p in r["chosen"])
        lines.append(f"| {name} | {chosen} | " + " | ".join(cells)
                     + f" | {np.median(r['seconds']):.0f} s/fold |")  # fmt: skip
    return "\n".join(lines)


def table(name: str, res: dict[float, Any], args: Any) -> tuple[str, list[str]]:
    """Markdown table of one collection and the significant gains/losses against p = 1."""
    head = (
        "| p | " + " | ".join(f"{m.upper()} (diff, p_t)" for m in METRICS)
        + " | rounds | log R_p(T) - log R_p(0) | train rloss | ms/round |"
    )  # fmt: skip
    lines = [f"**{name}** ({len(res[1.0]['test']['map'])} test queries)", "", head,
             "|" + "---|" * (len(METRICS) + 5)]  # fmt: skip
    notes = []
    base = res[1.0]["test"]
    for p, r in res.items():
        cells = []
        for m in METRICS:
            mean = r["test"][m].mean()
            if p == 1.0:
                cells.append(f"{mean:.4f}")
                continue
            d, p_t, p_perm = paired(r["test"][m], base[m], args.n_perm, seed=int(p))
            star = "*" if max(p_t, p_perm) < 0.05 else ""
            cells.append(f"{mean:.4f} ({d:+.4f}, {p_t:.2f}){star}")
            if star:
                notes.append(f"{name} p={p:g} {m}: {d:+.4f} (p_t={p_t:.3f}, p_perm={p_perm:.3f})")
        lines.append(
            f"| {p:g} | " + " | ".join(cells)
            + f" | {np.median(r['rounds']):.0f} | {np.mean(r['dlogR']):.2f}"
            + f" | {np.mean(r['rloss']):.4f} | {1e3 * np.median(r['per_round']):.1f} |"
        )  # fmt: skip
    return "\n".join(lines), notes


def plot(results: dict[str, dict[float, Any]], path: Path, command: str) -> None:
    """Test metric against p, one panel per collection (difference from p = 1)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 3.6), squeeze=False)
    for ax, (name, res) in zip(axes[0], results.items(), strict=True):
        ps = list(res)
        for m in METRICS:
            base = res[1.0]["test"][m].mean()
            ax.plot(ps, [res[p]["test"][m].mean() - base for p in ps], marker="o", label=m)
        ax.axhline(0.0, color="grey", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("push p")
        ax.set_ylabel("test metric minus p = 1")
        ax.set_title(name)
        ax.legend(fontsize=8)
    fig.suptitle(command, fontsize=7, y=0.02)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--folds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    ap.add_argument("--datasets", nargs="+", default=["mq2008", "mq2008-agg", "mq2007-agg"],
                    choices=["mq2008", "mq2008-agg", "mq2007-agg"])  # fmt: skip
    ap.add_argument("--ps", type=float, nargs="+", default=list(PS))
    ap.add_argument("--n-perm", type=int, default=10000)
    ap.add_argument("--max-queries", type=int, default=None)
    ap.add_argument(
        "--normalize",
        choices=["query", "pair"],
        default="query",
        help="the feedback's D (query: the library default; pair: Rudin's uniform D)",
    )
    ap.add_argument("--quick", action="store_true", help="2 folds, 30 rounds, 60 queries")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    ap.add_argument("--auto", action="store_true", help='push="auto" against p = 1 only')
    args = ap.parse_args(argv)
    if args.quick:
        args.folds, args.rounds, args.max_queries, args.n_perm = [1, 2], 30, 60, 500
    if 1.0 not in args.ps:
        args.ps = [1.0, *args.ps]
    if args.auto:
        args.ps = [1.0]
    results: dict[str, dict[float, Any]] = {}
    auto: dict[str, Any] = {}
    for name in args.datasets:
        print(f"{name}:", file=sys.stderr)
        if name == "mq2008":
            folds, options = letor_folds(args), {}
        else:
            folds, options = agg_folds(name.upper().replace("AGG", "agg"), args), AGG_OPTIONS
        for f in folds:
            fb = f["feedback"]
            f["feedback"] = rb.LayeredFeedback(fb.y, fb.qid, normalize=args.normalize)
        results[name] = run(folds, options, args)
        if args.auto:
            auto[name] = run_auto(folds, options, args)
    if args.auto:
        body = auto_table(results, auto, args)
        print(body)
        if args.write_docs:
            shown = f"{COMMAND} --auto --write-docs"
            replace_block(DOCS / "variants.md", "push-auto", f"`{shown}`\n\n{body}")
        return 0
    blocks, notes = [], []
    for name, res in results.items():
        text, found = table(name, res, args)
        blocks.append(text)
        notes += found
    body = "\n\n".join(blocks) + "\n\nSignificant (both tests p < 0.05) against p = 1: " + (
        "; ".join(notes) if notes else "none") + "."  # fmt: skip
    print(body)
    if args.json is not None:
        args.json.write_text(json.dumps({
            n: {str(p): {"test_mean": {m: float(r["test"][m].mean()) for m in METRICS},
                         "rounds": r["rounds"], "dlogR": r["dlogR"], "rloss": r["rloss"],
                         "per_round_s": r["per_round"]} for p, r in res.items()}
            for n, res in results.items()}, indent=1))  # fmt: skip
    if args.write_docs:
        tag = "push-table" if args.normalize == "query" else "push-table-pair"
        shown = f"{COMMAND} --normalize {args.normalize} --write-docs"
        replace_block(DOCS / "variants.md", tag, f"`{shown}`\n\n{body}")
        try:
            plot(results, DOCS / "img" / f"push_{args.normalize}.png", shown)
        except ImportError:
            print("matplotlib is not installed: no figure", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
