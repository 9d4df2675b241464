"""Issue 51: learn the hybrid fusion from simulated clicks instead of judgements.

Collections: CISI, MED, CACM, LISA with the committed BM25 and all-MiniLM-L6-v2 runs
(``experiments/data/*_bm25.run.gz``, ``*_minilm.run.gz``; qrels by
:mod:`hybridlib.corpora`), the queries every run returns and the qrels judge, and the fixed
5-fold split over queries of the hybrid benchmark (:func:`hybridlib.protocol.folds_of`).

On each outer fold, sessions are simulated on the training queries only
(:func:`rankboost.clicks.simulate_clicks`: each session draws a training query uniformly
and is shown the top 10 of the list the *logging fusion* serves; position-based user,
eye-tracking examination ``p_k ** eta``, click probability 0.1 on a non-relevant examined
document and 1 on a relevant one). Two logging fusions: ``wsum``, a lexical-first weighted
sum of min-max scores (0.7 BM25 + 0.3 MiniLM), and ``rrf`` (k = 60). ``eta`` 1 (the
standard protocol) and 2 (strong position bias); 10^3, 10^4 and 10^5 sessions.

From each log, :class:`rankboost.fusion.LinearFusion` (its defaults) is fitted by
:func:`rankboost.fusion.clicks.fit_clicks`: ``debiased`` (propensities estimated from the
log, ``propensity="auto"``: regression-EM on the runs' scores, one logger), ``naive``
(``propensity="none"``) and ``oracle`` (the simulator's true propensities). Baselines on the
same held-out queries: ``qrels`` (``LinearFusion().fit`` on the training qrels), ``rrf``,
each ``logger`` and ``best`` (the single run with the better training NDCG@10). Measure:
NDCG@10 of the held-out queries against their qrels (ranx, as docs/hybrid.md), pooled
over the four collections; paired t-test and randomisation test.

``--families boost,auto`` fits :class:`RankFusion` and :class:`AutoFusion` from the same
logs instead (:data:`FAMILIES`: the sessions, etas and variants of each), against the same
family and ``LinearFusion()`` trained on the qrels; ``auto_shown`` is AutoFusion with
``held_out="shown"``. Every (collection, fold) is kept in ``build/fusion_clicks/FAMILY/``: a
rerun resumes, ``--collections`` runs some only (two processes on two halves).

Run (linear: about 30-60 minutes on one core; boost about 1 hour, auto 35 minutes on the
loaded shared machine):
``NUMBA_NUM_THREADS=1 PYTHONPATH=src .venv/bin/python experiments/fusion_clicks.py
[--families linear,boost,auto] [--reuse] [--write-docs] [--plot docs/img/fusion_clicks.png]``.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hybridlib.corpora import LOADERS, ROOT  # noqa: E402
from hybridlib.protocol import (  # noqa: E402
    COLLECTIONS,
    folds_of,
    paired_tests,
    per_query,
    subset,
    top,
)

OUT = ROOT / "build" / "fusion_clicks"
RUNS = ROOT / "experiments" / "data"
DOC = ROOT / "docs" / "fusion_clicks.md"
LOGGERS = {"wsum": (0.7, 0.3), "rrf": None}
ETAS = (1.0, 2.0)
SESSIONS = (1_000, 10_000, 100_000)
VARIANTS = ("debiased", "naive", "oracle")
COMMAND = (
    "NUMBA_NUM_THREADS=1 PYTHONPATH=src .venv/bin/python experiments/fusion_clicks.py "
    "--write-docs --plot docs/img/fusion_clicks.png"
)


def collection(name: str) -> tuple[dict, dict]:
    """({"bm25": Run, "minilm": Run}, qrels) on the queries both runs return and qrels judge."""
    from rankboost.fusion import read_run

    _, _, qrels = LOADERS[name]()
    bm25 = read_run(RUNS / f"{name}_bm25.run.gz", name="bm25")
    dense = read_run(RUNS / f"{name}_minilm.run.gz", name="minilm")
    common = set(bm25.queries) & set(dense.queries) & set(qrels)
    runs = {"bm25": subset(bm25, common), "minilm": subset(dense, common)}
    return runs, {q: qrels[q] for q in sorted(common)}


def logger(kind: str, names: list[str]) -> Any:
    from rankboost.fusion import LinearFusion

    if kind == "rrf":
        return LinearFusion.from_weights(names, np.ones(len(names)), normalizer="rrf")
    return LinearFusion.from_weights(names, LOGGERS[kind])


def fold_job(args: tuple) -> dict:
    """Every method on one (collection, fold): per-query NDCG@10 and what was learned."""
    from rankboost.clicks import simulate_clicks
    from rankboost.fusion import LinearFusion, Qrels
    from rankboost.fusion.clicks import fit_clicks
    from rankboost.fusion.features import FusionFeatures, grades_for
    from rankboost.fusion.linear import linear_features

    name, runs, qrels, train_q, test_q, fold = args
    tr, te = set(train_q), set(test_q)
    runs_tr = [subset(r, tr) for r in runs.values()]
    runs_te = [subset(r, te) for r in runs.values()]
    names = [r.name for r in runs_tr]
    qrels_tr = Qrels.from_dict({q: qrels[q] for q in train_q})
    out: dict[str, dict] = {}
    info: dict[str, Any] = {}

    def score(model: Any) -> np.ndarray:
        return per_query(qrels, top(model.fuse(runs_te).to_dict()), test_q)["ndcg@10"]

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qmodel = LinearFusion().fit(runs_tr, qrels_tr)
        out["qrels"], info["qrels"] = score(qmodel), qmodel.weights_.tolist()
        for kind in LOGGERS:
            out[f"logger_{kind}"] = score(logger(kind, names))
        tr_nd = [per_query(qrels, r.to_dict(), train_q)["ndcg@10"].mean() for r in runs_tr]
        best = int(np.argmax(tr_nd))
        out["best"] = per_query(qrels, top(runs_te[best].to_dict()), test_q)["ndcg@10"]
        N, qid, docid = linear_features(runs_tr, "minmax")
        y = grades_for(FusionFeatures(np.empty((qid.shape[0], 0)), qid, docid, []), qrels_tr)
        for kind in LOGGERS:
            served = logger(kind, names).decision_function(runs_tr)[2]
            for eta in ETAS:
                for n in SESSIONS:
                    seed = _stable_seed(name, fold, kind, eta, n)
                    sim = simulate_clicks(
                        y, qid, served, n, eta=eta, docids=docid, random_state=seed
                    )
                    props = {"debiased": "auto", "naive": "none", "oracle": sim.propensity}
                    for variant, prop in props.items():
                        m = fit_clicks(LinearFusion(), runs_tr, sim.log, propensity=prop)
                        key = f"{kind}|{eta:g}|{n}|{variant}"
                        out[key] = score(m)
                        info[key] = m.weights_.tolist()
    return {
        "collection": name,
        "fold": fold,
        "queries": list(test_q),
        "ndcg": out,
        "info": info,
        "seconds": time.perf_counter() - t0,
    }


#: The other families that learn from click pairs, benchmarked by ``--families``: their
#: estimator, and the session counts, etas and variants each is fitted at (AutoFusion's
#: nested inner cross-validation costs about 9 s a fit on a quiet core: the goal's 10^4
#: sessions under strong position bias only, debiased).
FAMILIES = {
    "boost": ("RankFusion()", SESSIONS, ETAS, ("debiased", "naive")),
    "auto": ("AutoFusion()", (10_000,), (2.0,), ("debiased",)),
    # the same, its inner folds ranking the documents the log showed (held_out="shown")
    "auto_shown": ("AutoFusion()", (10_000,), (2.0,), ("debiased",)),
}


def _family(family: str) -> Any:
    from rankboost.fusion import AutoFusion, RankFusion

    return {"boost": RankFusion, "auto": AutoFusion, "auto_shown": AutoFusion}[family]()


def family_job(args: tuple) -> dict:
    """``family`` from the same simulated logs as :func:`fold_job` (the same seeds).

    Per-query NDCG@10 of the family trained on the training qrels (``qrels``), of
    ``LinearFusion().fit`` on them (``qrels_linear``), the logging fusions, and the family
    trained from clicks, debiased and naive; ``info``: the family AutoFusion chose.
    """
    from rankboost.clicks import simulate_clicks
    from rankboost.fusion import LinearFusion, Qrels
    from rankboost.fusion.clicks import fit_clicks
    from rankboost.fusion.features import FusionFeatures, grades_for
    from rankboost.fusion.linear import linear_features

    name, runs, qrels, train_q, test_q, fold, family = args
    tr, te = set(train_q), set(test_q)
    runs_tr = [subset(r, tr) for r in runs.values()]
    runs_te = [subset(r, te) for r in runs.values()]
    names = [r.name for r in runs_tr]
    qrels_tr = Qrels.from_dict({q: qrels[q] for q in train_q})
    out: dict[str, Any] = {}
    info: dict[str, Any] = {}

    def score(model: Any) -> np.ndarray:
        return per_query(qrels, top(model.fuse(runs_te).to_dict()), test_q)["ndcg@10"]

    def chosen(model: Any) -> Any:
        return model.selection_["family"] if family.startswith("auto") else model.n_rounds_

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qmodel = _family(family).fit(runs_tr, qrels_tr)
        out["qrels"], info["qrels"] = score(qmodel), chosen(qmodel)
        out["qrels_linear"] = score(LinearFusion().fit(runs_tr, qrels_tr))
        for kind in LOGGERS:
            out[f"logger_{kind}"] = score(logger(kind, names))
        N, qid, docid = linear_features(runs_tr, "minmax")
        y = grades_for(FusionFeatures(np.empty((qid.shape[0], 0)), qid, docid, []), qrels_tr)
        for kind in LOGGERS:
            served = logger(kind, names).decision_function(runs_tr)[2]
            for eta in FAMILIES[family][2]:
                for n in FAMILIES[family][1]:
                    seed = _stable_seed(name, fold, kind, eta, n)
                    sim = simulate_clicks(
                        y, qid, served, n, eta=eta, docids=docid, random_state=seed
                    )
                    for variant in FAMILIES[family][3]:
                        prop = {"debiased": "auto", "naive": "none"}[variant]
                        held = "shown" if family.endswith("_shown") else "all"
                        m = fit_clicks(
                            _family(family), runs_tr, sim.log, propensity=prop, held_out=held
                        )
                        key = f"{kind}|{eta:g}|{n}|{variant}"
                        out[key], info[key] = score(m), chosen(m)
    return {
        "collection": name,
        "fold": fold,
        "family": family,
        "queries": list(test_q),
        "ndcg": out,
        "info": info,
        "seconds": time.perf_counter() - t0,
    }


def _stable_seed(*parts: Any) -> int:
    import zlib

    return zlib.crc32(repr(parts).encode()) % (2**31)


def run_all(family: str = "linear", collections: tuple[str, ...] = COLLECTIONS) -> list[dict]:
    """Every (collection, fold) of ``family``; kept in ``build/fusion_clicks/`` (``--reuse``)."""
    results = []
    for name in collections:
        runs, qrels = collection(name)
        folds = folds_of(sorted(qrels))
        for f, test_q in enumerate(folds):
            train_q = sorted(q for g, fq in enumerate(folds) if g != f for q in fq)
            job = (name, runs, qrels, train_q, test_q, f + 1)
            kept = OUT / family / f"{name}_{f + 1}.pkl"  # each fold kept: a rerun resumes
            if kept.exists():
                results.append(pickle.loads(kept.read_bytes()))
                continue
            r = fold_job(job) if family == "linear" else family_job((*job, family))
            print(f"{family} {name} fold {f + 1}: {r['seconds']:.0f} s", flush=True)
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_bytes(pickle.dumps(r))
            results.append(r)
    OUT.mkdir(parents=True, exist_ok=True)
    if collections == COLLECTIONS:
        (OUT / _pickle(family)).write_bytes(pickle.dumps(results))
    return results


def _pickle(family: str) -> str:
    return "folds.pkl" if family == "linear" else f"folds_{family}.pkl"


def pooled(results: list[dict]) -> dict[str, np.ndarray]:
    """Per-query NDCG@10 of every method over the test queries of every collection."""
    keys = [k for k in results[0]["ndcg"] if all(k in r["ndcg"] for r in results)]
    order = sorted(results, key=lambda r: (r["collection"], r["fold"]))
    return {k: np.concatenate([r["ndcg"][k] for r in order]) for k in keys}


def per_collection(results: list[dict], key: str) -> dict[str, float]:
    out = {}
    for c in COLLECTIONS:
        out[c] = float(
            np.concatenate([r["ndcg"][key] for r in results if r["collection"] == c]).mean()
        )
    return out


def report(results: list[dict]) -> str:
    pq = pooled(results)
    n_q = pq["qrels"].shape[0]
    lines = [
        f"Pooled over the four collections ({n_q} held-out queries, 5 folds each); NDCG@10 "
        "of the held-out queries against their qrels.",
        "",
        "| trained on | mean NDCG@10 | " + " | ".join(COLLECTIONS) + " |",
        "|---|---|" + "---|" * len(COLLECTIONS),
    ]
    base = ["qrels", "logger_wsum", "logger_rrf", "best"]
    label = {
        "qrels": "qrels (LinearFusion().fit)",
        "logger_wsum": "logging fusion: 0.7 BM25 + 0.3 MiniLM",
        "logger_rrf": "logging fusion / RRF (k = 60)",
        "best": "best single run (on training qrels)",
    }
    for k in base:
        pc = per_collection(results, k)
        lines.append(
            f"| {label[k]} | {pq[k].mean():.4f} | "
            + " | ".join(f"{pc[c]:.4f}" for c in COLLECTIONS)
            + " |"
        )
    lines += [
        "",
        "Trained from clicks (LinearFusion(), `fit_clicks`): difference to the qrels-trained "
        "fusion, to the logging fusion and to RRF (paired t-test p, randomisation p), and "
        "debiased minus naive.",
        "",
        "| logger | eta | sessions | variant | NDCG@10 | - qrels (p_t, p_r) | - logger (p_t) "
        "| - RRF (p_t) | debiased - naive (p_t) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for kind in LOGGERS:
        for eta in ETAS:
            for n in SESSIONS:
                for v in VARIANTS:
                    key = f"{kind}|{eta:g}|{n}|{v}"
                    a = pq[key]
                    dq, tq, rq = paired_tests(a, pq["qrels"])
                    dl, tl, _ = paired_tests(a, pq[f"logger_{kind}"])
                    dr, tr_, _ = paired_tests(a, pq["logger_rrf"])
                    dn = ""
                    if v == "debiased":
                        d, t, _ = paired_tests(a, pq[f"{kind}|{eta:g}|{n}|naive"])
                        dn = f"{d:+.4f} ({t:.2g})"
                    lines.append(
                        f"| {kind} | {eta:g} | {n:,} | {v} | {a.mean():.4f} | {dq:+.4f} "
                        f"({tq:.2g}, {rq:.2g}) | {dl:+.4f} ({tl:.2g}) | {dr:+.4f} ({tr_:.2g}) | "
                        f"{dn} |"
                    )
    return "\n".join(lines) + "\n"


def report_family(results: list[dict], family: str) -> str:
    """The table of ``family`` trained from clicks (:func:`family_job`'s results)."""
    from collections import Counter

    pq = pooled(results)
    est = FAMILIES[family][0]
    lines = [
        f"**{family}** (`{est}`"
        + (', `held_out="shown"`' if family.endswith("_shown") else "")
        + "): trained on the training qrels and from the same logs as the linear table ("
        + " and ".join(FAMILIES[family][3])
        + "); pooled over the four collections "
        f"({pq['qrels'].shape[0]} held-out queries).",
        "",
        "| trained on | mean NDCG@10 | " + " | ".join(COLLECTIONS) + " |",
        "|---|---|" + "---|" * len(COLLECTIONS),
    ]
    for k, text in (
        ("qrels", f"qrels ({est}.fit)"),
        ("qrels_linear", "qrels (LinearFusion().fit)"),
    ):
        pc = per_collection(results, k)
        lines.append(
            f"| {text} | {pq[k].mean():.4f} | "
            + " | ".join(f"{pc[c]:.4f}" for c in COLLECTIONS)
            + " |"
        )
    lines += [
        "",
        f"| logger | eta | sessions | variant | NDCG@10 | - {family} from qrels (p_t, p_r) "
        "| - linear from qrels (p_t) | - logger (p_t) | - RRF (p_t) | debiased - naive (p_t) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for kind in LOGGERS:
        for eta in FAMILIES[family][2]:
            for n in FAMILIES[family][1]:
                for v in FAMILIES[family][3]:
                    key = f"{kind}|{eta:g}|{n}|{v}"
                    a = pq[key]
                    dq, tq, rq = paired_tests(a, pq["qrels"])
                    dlq, tlq, _ = paired_tests(a, pq["qrels_linear"])
                    dl, tl, _ = paired_tests(a, pq[f"logger_{kind}"])
                    dr, tr_, _ = paired_tests(a, pq["logger_rrf"])
                    dn, naive = "", f"{kind}|{eta:g}|{n}|naive"
                    if v == "debiased" and naive in pq:
                        d, t, _ = paired_tests(a, pq[naive])
                        dn = f"{d:+.4f} ({t:.2g})"
                    lines.append(
                        f"| {kind} | {eta:g} | {n:,} | {v} | {a.mean():.4f} | {dq:+.4f} "
                        f"({tq:.2g}, {rq:.2g}) | {dlq:+.4f} ({tlq:.2g}) | {dl:+.4f} ({tl:.2g}) "
                        f"| {dr:+.4f} ({tr_:.2g}) | {dn} |"
                    )
    if family.startswith("auto"):
        keys = [k for k in results[0]["info"] if all(k in r["info"] for r in results)]
        lines += ["", "Families AutoFusion chose (20 outer folds):", ""]
        for k in keys:
            c = Counter(r["info"][k] for r in results)
            lines.append(f"* {k}: " + ", ".join(f"{f} {n}" for f, n in c.most_common()))
    return "\n".join(lines) + "\n"


def plot(results: list[dict], path: str) -> None:
    from matplotlib.figure import Figure

    pq = pooled(results)
    fig = Figure(figsize=(11.5, 4.2), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    styles = {"debiased": "C0", "naive": "C3", "oracle": "C2"}
    for ax, kind in zip(axes, LOGGERS, strict=True):
        for eta, ls in zip(ETAS, ("-", "--"), strict=True):
            for v, color in styles.items():
                ys = [pq[f"{kind}|{eta:g}|{n}|{v}"].mean() for n in SESSIONS]
                ax.plot(SESSIONS, ys, ls, color=color, marker="o", label=f"{v}, eta {eta:g}")
        for k, color, text in (
            ("qrels", "k", "trained on qrels"),
            (f"logger_{kind}", "C1", "logging fusion"),
            ("logger_rrf", "C4", "RRF"),
            ("best", "0.6", "best single run"),
        ):
            if kind == "rrf" and text == "RRF":  # the logging fusion is RRF
                continue
            ax.axhline(pq[k].mean(), color=color, lw=0.9, ls=":", label=text)
        ax.set_xscale("log")
        ax.set_xlabel("simulated sessions over the training queries")
        ax.set_title(f"logged on {'0.7 BM25 + 0.3 MiniLM' if kind == 'wsum' else 'RRF'}")
    axes[0].set_ylabel("held-out NDCG@10, 4 collections pooled")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize="x-small", loc="outside right upper")
    fig.suptitle(COMMAND, fontsize="x-small")
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reuse", action="store_true", help="read build/fusion_clicks/folds.pkl")
    ap.add_argument("--write-docs", action="store_true", help=f"write the tables into {DOC}")
    ap.add_argument("--plot", metavar="PNG", help="draw the learning curves (linear)")
    ap.add_argument(
        "--families",
        default="linear",
        help="comma-separated: linear (the learning curves), boost, auto (default linear)",
    )
    ap.add_argument(
        "--collections",
        default=",".join(COLLECTIONS),
        help="run these only (their folds are kept; a run over all four then reports)",
    )
    args = ap.parse_args()
    only = tuple(args.collections.split(","))
    for family in args.families.split(","):
        if only != COLLECTIONS:
            run_all(family, only)
            continue
        if args.reuse:
            results = pickle.loads((OUT / _pickle(family)).read_bytes())
        else:
            results = run_all(family)
        text = report(results) if family == "linear" else report_family(results, family)
        print(text)
        (OUT / f"report_{family}.md").write_text(text)
        if args.plot and family == "linear":
            plot(results, args.plot)
        if args.write_docs:
            _write_docs(family, text)


def _write_docs(family: str, text: str) -> None:
    """Put ``text`` between the family's markers in docs/fusion_clicks.md."""
    tag = "fusion_clicks" if family == "linear" else f"fusion_clicks_{family}"
    doc = DOC.read_text()
    start, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
    head, rest = doc.split(start, 1)
    _, tail = rest.split(end, 1)
    DOC.write_text(head + start + "\n" + text + end + tail)


if __name__ == "__main__":
    main()
