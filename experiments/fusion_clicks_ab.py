"""Issue 51, goal: why the click-trained fusion trails the qrels-trained one under a
lexical-first logger at strong position bias, and whether a share of A/B traffic closes it.

The setting of ``experiments/fusion_clicks.py`` (the same collections, folds, simulator and
seeds) with the lexical-first weighted sum (0.7 BM25 + 0.3 MiniLM) as the logging fusion at
``eta`` 2. On each outer fold and session count ``n``, :class:`LinearFusion` from clicks:

* ``debiased``, ``oracle``: as in ``fusion_clicks.py`` (the same logs: the same numbers),
  propensities estimated by regression-EM (one logger) or the simulator's true ones;
* ``oracle_unclipped``: the true propensities without the clip ``max_weight`` (100): is the
  clip the gap?
* ``ab``: the log of ``0.9 n`` sessions on the weighted sum and ``0.1 n`` on RRF (an A/B
  test of a tenth of the traffic), declared ``logged_by=["wsum:0.7,0.3", "rrf"]``, so the
  propensities are estimated by intervention harvesting (``propensity="auto"``);
* ``ab_oracle``: the same A/B log with the true propensities (what the A/B data gives when
  the propensities are right);
* ``debiased_shown``, ``oracle_shown``, ``ab_shown``: ``debiased``, ``oracle`` and ``ab``
  with ``held_out="shown"``: the inner folds that choose the rounds and the prior's scale
  rank only the documents the log showed (a document never shown is of unknown relevance,
  not unclicked).

Per fold it keeps every estimated propensity (``p_est``: regression-EM on the wsum log,
``p_ab``: harvested from the A/B log) beside the true one. Held-out NDCG@10 against the
qrels, pooled over the four collections, against ``LinearFusion().fit`` on the training
qrels (paired t-test and randomisation test).

Run (each (collection, fold, n) is kept in ``build/fusion_clicks/ab/``; a rerun resumes):
``NUMBA_NUM_THREADS=1 PYTHONPATH=src .venv/bin/python experiments/fusion_clicks_ab.py
--sessions 10000 [--sessions 1000 --sessions 100000] [--write-docs]``.
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

from fusion_clicks import DOC, OUT, _stable_seed, collection, logger  # noqa: E402
from hybridlib.protocol import COLLECTIONS, folds_of, paired_tests, per_query, subset, top  # noqa: E402

ETA = 2.0
SHARE = 0.1  # of the sessions served by RRF in the A/B log
VARIANTS = ("debiased", "oracle", "oracle_unclipped", "ab", "ab_oracle", "debiased_shown",
            "oracle_shown", "ab_shown")  # fmt: skip
KEPT = OUT / "ab"


def _concat(a: Any, b: Any) -> Any:
    """Two logs as one: b's sessions numbered after a's."""
    from rankboost.clicks import ClickLog

    sa = np.repeat(np.arange(a.n_sessions), np.diff(a.starts))
    sb = a.n_sessions + np.repeat(np.arange(b.n_sessions), np.diff(b.starts))
    return ClickLog.from_arrays(
        qid=np.r_[a.qid, b.qid],
        docid=np.r_[a.docid, b.docid],
        position=np.r_[a.position, b.position],
        click=np.r_[a.click, b.click],
        session=np.r_[sa, sb],
    )


def fold_job(args: tuple, kept: dict | None = None) -> dict:
    """The variants on one (collection, fold, n) that ``kept`` (a former result) lacks."""
    from rankboost.clicks import simulate_clicks
    from rankboost.fusion import LinearFusion, Qrels
    from rankboost.fusion.clicks import click_targets, fit_targets
    from rankboost.fusion.features import FusionFeatures, grades_for
    from rankboost.fusion.linear import linear_features

    name, runs, qrels, train_q, test_q, fold, n = args
    tr, te = set(train_q), set(test_q)
    runs_tr = [subset(r, tr) for r in runs.values()]
    runs_te = [subset(r, te) for r in runs.values()]
    names = [r.name for r in runs_tr]
    qrels_tr = Qrels.from_dict({q: qrels[q] for q in train_q})
    out: dict[str, Any] = {} if kept is None else dict(kept["ndcg"])
    info: dict[str, Any] = {} if kept is None else dict(kept["info"])

    def score(model: Any) -> np.ndarray:
        return per_query(qrels, top(model.fuse(runs_te).to_dict()), test_q)["ndcg@10"]

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "qrels" not in out:
            out["qrels"] = score(LinearFusion().fit(runs_tr, qrels_tr))
        N, qid, docid = linear_features(runs_tr, "minmax")
        y = grades_for(FusionFeatures(np.empty((qid.shape[0], 0)), qid, docid, []), qrels_tr)
        served = {k: logger(k, names).decision_function(runs_tr)[2] for k in ("wsum", "rrf")}

        def sim(kind: str, m: int, seed: int) -> Any:
            return simulate_clicks(
                y, qid, served[kind], m, eta=ETA, docids=docid, random_state=seed
            )

        one = sim("wsum", n, _stable_seed(name, fold, "wsum", ETA, n))  # fusion_clicks.py's log
        true = one.propensity
        n_rrf = int(round(SHARE * n))
        ab = _concat(
            sim("wsum", n - n_rrf, _stable_seed(name, fold, "ab-wsum", ETA, n)).log,
            sim("rrf", n_rrf, _stable_seed(name, fold, "ab-rrf", ETA, n)).log,
        )
        declared = ["wsum:0.7,0.3", "rrf"]
        fits = {  # variant: (log, click_targets keywords)
            "debiased": (one.log, {}),
            "oracle": (one.log, {"propensity": true}),
            "oracle_unclipped": (one.log, {"propensity": true, "max_weight": None}),
            "ab": (ab, {"logged_by": declared}),
            "ab_oracle": (ab, {"propensity": true}),
            "debiased_shown": (one.log, {"held_out": "shown"}),
            "oracle_shown": (one.log, {"propensity": true, "held_out": "shown"}),
            "ab_shown": (ab, {"logged_by": declared, "held_out": "shown"}),
        }
        for v in VARIANTS:
            if v in out:
                continue
            log, kw = fits[v]
            t = click_targets(runs_tr, log, **kw)
            out[v] = score(fit_targets(LinearFusion(), runs_tr, t))
            if v == "debiased":
                info["p_true"], info["p_est"] = true.values.tolist(), t.propensity.values.tolist()
            if v == "ab":
                info["p_ab"], info["p_ab_method"] = (
                    t.propensity.values.tolist(),
                    t.propensity.method,
                )
    return {"collection": name, "fold": fold, "n": n, "ndcg": out, "info": info,
            "seconds": time.perf_counter() - t0}  # fmt: skip


def run(n: int) -> list[dict]:
    results = []
    for name in COLLECTIONS:
        runs, qrels = collection(name)
        folds = folds_of(sorted(qrels))
        for f, test_q in enumerate(folds):
            kept = KEPT / f"{name}_{f + 1}_{n}.pkl"
            old = pickle.loads(kept.read_bytes()) if kept.exists() else None
            if old is not None and all(v in old["ndcg"] for v in VARIANTS):
                results.append(old)
                continue
            train_q = sorted(q for g, fq in enumerate(folds) if g != f for q in fq)
            r = fold_job((name, runs, qrels, train_q, test_q, f + 1, n), old)
            print(f"ab {name} fold {f + 1} n={n}: {r['seconds']:.0f} s", flush=True)
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_bytes(pickle.dumps(r))
            results.append(r)
    return results


def report(by_n: dict[int, list[dict]]) -> str:
    lines = [
        "Logged on 0.7 BM25 + 0.3 MiniLM at eta 2; `LinearFusion()` from clicks; pooled over "
        "the four collections; difference to the qrels-trained fusion (paired t-test p, "
        "randomisation p) and to the debiased fit (p_t).",
        "",
        "| sessions | variant | NDCG@10 | - qrels (p_t, p_r) | - debiased (p_t) |",
        "|---|---|---|---|---|",
    ]
    for n, results in sorted(by_n.items()):
        order = sorted(results, key=lambda r: (r["collection"], r["fold"]))
        pq = {k: np.concatenate([r["ndcg"][k] for r in order]) for k in order[0]["ndcg"]}
        for v in VARIANTS:
            dq, tq, rq = paired_tests(pq[v], pq["qrels"])
            dd, td, _ = paired_tests(pq[v], pq["debiased"])
            vs = "" if v == "debiased" else f"{dd:+.4f} ({td:.2g})"
            lines.append(
                f"| {n:,} | {v} | {pq[v].mean():.4f} | {dq:+.4f} ({tq:.2g}, {rq:.2g}) | {vs} |"
            )
    lines += [
        "",
        "Propensities `p_2..p_6` (mean over the 20 folds; true = the simulator's):",
        "",
        "| sessions | estimate | p_2 | p_3 | p_4 | p_5 | p_6 |",
        "|---|---|---|---|---|---|---|",
    ]
    for n, results in sorted(by_n.items()):
        for key, text in (("p_true", "true"), ("p_est", "regression-EM, wsum log"),
                          ("p_ab", "harvested, A/B log")):  # fmt: skip
            p = np.mean([r["info"][key] for r in results], axis=0)
            lines.append(f"| {n:,} | {text} | " + " | ".join(f"{v:.3f}" for v in p[1:6]) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, action="append", help="10000 unless given")
    ap.add_argument("--write-docs", action="store_true", help=f"write the table into {DOC}")
    args = ap.parse_args()
    by_n = {n: run(n) for n in (args.sessions or [10_000])}
    text = report(by_n)
    print(text)
    (OUT / "report_ab.md").write_text(text)
    if args.write_docs:
        doc = DOC.read_text()
        start, end = "<!-- fusion_clicks_ab:begin -->", "<!-- fusion_clicks_ab:end -->"
        head, rest = doc.split(start, 1)
        _, tail = rest.split(end, 1)
        DOC.write_text(head + start + "\n" + text + end + tail)


if __name__ == "__main__":
    main()
