"""Issue 51, goal: the click-trained fusion's gap to the qrels-trained one over many logs.

The tables of ``experiments/fusion_clicks.py`` fit each (collection, fold, logger, eta,
sessions) from *one* simulated log. The held-out NDCG@10 of a click-trained fusion is then
one draw: another log of the same size can give other weights (``LinearFusion`` from clicks
often stays at its prior, an equal-weight sum, when the inner folds choose no round). This
script fits the same fusions from ``R`` independent logs of each size (replicate 0 is the
log of ``fusion_clicks.py``, the same seed, so the same numbers) and reports the *expected*
gap: the mean over replicates of the pooled difference to ``LinearFusion().fit`` on the
training qrels, its spread over replicates, the share of replicates within the goal's
0.005, and a paired test over the held-out queries of each query's NDCG@10 averaged over
the replicates.

Variants: ``debiased`` (``propensity="auto"``: regression-EM, one logger), ``naive``
(``"none"``), ``oracle`` (the simulator's true propensities) and ``debiased_shown``
(``debiased`` with ``held_out="shown"``). The collections, folds, simulator, loggers and
etas are ``fusion_clicks.py``'s.

``--ab TAG``: instead, the A/B log of ``fusion_clicks_ab.py`` at ``eta`` 2 (``0.9 n`` sessions
on the weighted sum, ``0.1 n`` on RRF; replicate 0 its seeds), both fusions declared
(``logged_by``): ``ab`` (``propensity="auto"``: intervention harvesting) and ``ab_oracle``
(the true propensities), kept under ``TAG`` (to compare two versions of the library on the
same logs); ``--share`` sets RRF's share of the sessions (0.1).

Run (each (collection, fold, sessions, replicate) is kept in
``build/fusion_clicks/seeds/``; a rerun resumes; 10^4 sessions with 10 replicates take about
15 minutes on one core):
``NUMBA_NUM_THREADS=1 PYTHONPATH=src .venv/bin/python experiments/fusion_clicks_seeds.py
--sessions 10000 --replicates 10 [--write-docs]``.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fusion_clicks import (  # noqa: E402
    DOC,
    ETAS,
    LOGGERS,
    OUT,
    _stable_seed,
    _write_docs,
    collection,
    logger,
    pooled,
)
from hybridlib.protocol import COLLECTIONS, folds_of, paired_tests, per_query, subset, top  # noqa: E402

VARIANTS = ("debiased", "naive", "oracle", "debiased_shown")
KEPT = OUT / "seeds"
GOAL = 0.005


def _seed(name: str, fold: int, kind: str, eta: float, n: int, rep: int) -> int:
    """Replicate 0 is ``fusion_clicks.py``'s log (its seed); the others are new logs."""
    if rep == 0:
        return _stable_seed(name, fold, kind, eta, n)
    return _stable_seed(name, fold, kind, eta, n, rep)


class _Fold:
    """One outer fold: the runs on its training and test queries, the training grades, and
    the held-out NDCG@10 of a fusion (``score``)."""

    def __init__(self, runs: dict, qrels: dict, train_q: list, test_q: list) -> None:
        from rankboost.fusion import Qrels
        from rankboost.fusion.features import FusionFeatures, grades_for
        from rankboost.fusion.linear import linear_features

        tr, te = set(train_q), set(test_q)
        self.runs_tr = [subset(r, tr) for r in runs.values()]
        self.runs_te = [subset(r, te) for r in runs.values()]
        self.names = [r.name for r in self.runs_tr]
        self.qrels, self.test_q = qrels, test_q
        self.qrels_tr = Qrels.from_dict({q: qrels[q] for q in train_q})
        _, self.qid, self.docid = linear_features(self.runs_tr, "minmax")
        rows = FusionFeatures(np.empty((self.qid.shape[0], 0)), self.qid, self.docid, [])
        self.y = grades_for(rows, self.qrels_tr)

    def score(self, model: Any) -> np.ndarray:
        fused = top(model.fuse(self.runs_te).to_dict())
        return per_query(self.qrels, fused, self.test_q)["ndcg@10"]

    def baselines(self) -> dict[str, np.ndarray]:
        """The qrels-trained fusion's and each logger's per-query NDCG@10."""
        from rankboost.fusion import LinearFusion

        out = {"qrels": self.score(LinearFusion().fit(self.runs_tr, self.qrels_tr))}
        for kind in LOGGERS:
            out[f"logger_{kind}"] = self.score(logger(kind, self.names))
        return out

    def simulate(self, kind: str, n: int, eta: float, seed: int) -> Any:
        from rankboost.clicks import simulate_clicks

        served = logger(kind, self.names).decision_function(self.runs_tr)[2]
        return simulate_clicks(
            self.y, self.qid, served, n, eta=eta, docids=self.docid, random_state=seed
        )


def _result(name: str, fold: int, test_q: list, out: dict, info: dict, t0: float) -> dict:
    """What a job keeps for one (collection, fold, sessions, replicate)."""
    return {"collection": name, "fold": fold, "queries": list(test_q), "ndcg": out,
            "info": info, "seconds": time.perf_counter() - t0}  # fmt: skip


def fold_job(args: tuple) -> dict:
    """Every logger, eta and variant on one (collection, fold, sessions, replicate)."""
    from rankboost.fusion import AutoFusion, LinearFusion
    from rankboost.fusion.clicks import fit_clicks

    name, runs, qrels, train_q, test_q, fold, n, rep, family = args
    info: dict[str, Any] = {}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fo = _Fold(runs, qrels, train_q, test_q)
        out = fo.baselines() if rep == 0 else {}
        for kind in LOGGERS:
            for eta in ETAS:
                sim = fo.simulate(kind, n, eta, _seed(name, fold, kind, eta, n, rep))
                if family == "auto_shown":
                    m = fit_clicks(AutoFusion(), fo.runs_tr, sim.log, held_out="shown")
                    key = f"{kind}|{eta:g}|auto_shown"
                    out[key], info[key] = fo.score(m), m.selection_["family"]
                    continue
                fits = {
                    "debiased": ("auto", "all"),
                    "naive": ("none", "all"),
                    "oracle": (sim.propensity, "all"),
                    "debiased_shown": ("auto", "shown"),
                }
                for variant, (prop, held) in fits.items():
                    m = fit_clicks(
                        LinearFusion(), fo.runs_tr, sim.log, propensity=prop, held_out=held
                    )
                    key = f"{kind}|{eta:g}|{variant}"
                    out[key] = fo.score(m)
                    w = np.asarray(m.weights_, dtype=np.float64)
                    info[key] = [float(w[0] / w.sum()), int(m.n_rounds_)]
    return _result(name, fold, test_q, out, info, t0)


AB_VARIANTS = ("ab", "ab_oracle")


def ab_job(args: tuple) -> dict:
    """``ab`` and ``ab_oracle`` on one (collection, fold, sessions, replicate)."""
    from fusion_clicks_ab import _concat

    from rankboost.fusion import LinearFusion
    from rankboost.fusion.clicks import fit_clicks

    name, runs, qrels, train_q, test_q, fold, n, rep, share = args
    info: dict[str, Any] = {}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fo = _Fold(runs, qrels, train_q, test_q)
        out = fo.baselines() if rep == 0 else {}
        logs, n_rrf = [], int(round(share * n))
        for kind, m in (("wsum", n - n_rrf), ("rrf", n_rrf)):
            seed = _stable_seed(name, fold, f"ab-{kind}", 2.0, n, *([rep] if rep else []))
            logs.append(fo.simulate(kind, m, 2.0, seed))
        ab = _concat(logs[0].log, logs[1].log)
        declared = ["wsum:0.7,0.3", "rrf"]
        for variant, prop in (("ab", "auto"), ("ab_oracle", logs[0].propensity)):
            model = fit_clicks(LinearFusion(), fo.runs_tr, ab, propensity=prop, logged_by=declared)
            out[variant] = fo.score(model)
            w = np.asarray(model.weights_, dtype=np.float64)
            info[variant] = [float(w[0] / w.sum()), int(model.n_rounds_)]
    return _result(name, fold, test_q, out, info, t0)


def run_all(  # noqa: PLR0913
    n: int,
    replicates: int,
    ab: str | None = None,
    share: float = 0.1,
    family: str = "linear",
    collections: tuple[str, ...] = COLLECTIONS,
) -> tuple[list[dict], list[list[dict]]]:
    """(the baselines of each fold, [replicate][fold] results), each fold kept on disk."""
    reps: list[list[dict]] = [[] for _ in range(replicates)]
    for name in collections:
        runs, qrels = collection(name)
        folds = folds_of(sorted(qrels))
        for f, test_q in enumerate(folds):
            train_q = sorted(q for g, fq in enumerate(folds) if g != f for q in fq)
            for rep in range(replicates):
                where = KEPT if ab is None else KEPT / f"ab_{ab}"
                where = where if family == "linear" else KEPT / family
                kept = where / f"{name}_{f + 1}_{n}_{rep}.pkl"
                if kept.exists():
                    reps[rep].append(pickle.loads(kept.read_bytes()))
                    continue
                job = (name, runs, qrels, train_q, test_q, f + 1, n, rep)
                r = fold_job((*job, family)) if ab is None else ab_job((*job, share))
                print(
                    f"{name} fold {f + 1} n={n} replicate {rep}: {r['seconds']:.0f} s", flush=True
                )
                kept.parent.mkdir(parents=True, exist_ok=True)
                tmp = kept.with_suffix(".tmp")
                tmp.write_bytes(pickle.dumps(r))
                tmp.replace(kept)
                reps[rep].append(r)
    return reps[0], reps


def equal_sum() -> np.ndarray:
    """Per-query NDCG@10 of the equal-weight sum of min-max scores (LinearFusion's prior, no
    training), in :func:`pooled`'s order (collection, fold)."""
    from rankboost.fusion import LinearFusion

    out = []
    for name in sorted(COLLECTIONS):
        runs, qrels = collection(name)
        for test_q in folds_of(sorted(qrels)):
            te = set(test_q)
            runs_te = [subset(r, te) for r in runs.values()]
            fused = LinearFusion.from_weights(list(runs), np.ones(len(runs))).fuse(runs_te)
            out.append(per_query(qrels, top(fused.to_dict()), test_q)["ndcg@10"])
    return np.concatenate(out)


def report(  # noqa: PLR0913
    n: int,
    reps: list[list[dict]],
    ab: str | None = None,
    share: float = 0.1,
    family: str = "linear",
) -> str:
    base = pooled(reps[0])
    per_rep = [pooled(r) for r in reps]
    plain = equal_sum()
    R = len(reps)
    lines = [
        f"{n:,} sessions, {R} independent logs per (collection, fold, logger, eta); "
        f"`LinearFusion()` from clicks, pooled over the four collections "
        f"({base['qrels'].shape[0]} held-out queries; qrels-trained {base['qrels'].mean():.4f}). "
        "Gap: the pooled NDCG@10 difference to the qrels-trained fusion, mean over the logs "
        "(standard deviation over the logs; the gap of replicate 0, the log of the tables "
        "above); within 0.005: the share of logs whose gap is; p_t: paired t-test over the "
        "queries of each query's NDCG@10 averaged over the logs against the qrels-trained "
        "fusion's; - sum: to the equal-weight sum of min-max scores (the fusions' prior, "
        f"untrained: {plain.mean() - base['qrels'].mean():+.4f} to the qrels-trained fusion); "
        "BM25 share: of the learned weights, mean over folds and logs; rounds: "
        "the share of fits that kept more than 0 rounds.",
        "",
        "| logger | eta | variant | gap: mean (sd; replicate 0) | within 0.005 | p_t "
        "| - logger | - RRF | - sum | "
        + ("families chosen | |" if family == "auto_shown" else "BM25 share | rounds > 0 |"),
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    variants = ("auto_shown",) if family == "auto_shown" else VARIANTS
    cells = (
        [(k, e, f"{k}|{e:g}|{v}") for k in LOGGERS for e in ETAS for v in variants]
        if ab is None
        else [("wsum", 2.0, v) for v in AB_VARIANTS]
    )
    for kind, eta, key in cells:
        gaps = np.array([p[key].mean() - base["qrels"].mean() for p in per_rep])
        avg = np.mean([p[key] for p in per_rep], axis=0)
        _, tq, _ = paired_tests(avg, base["qrels"])
        dl = avg.mean() - base[f"logger_{kind}"].mean()
        dr = avg.mean() - base["logger_rrf"].mean()
        if family == "auto_shown":  # the family AutoFusion chose, in place of the weights
            chose = Counter(f["info"][key] for r in reps for f in r).most_common(2)
            bm25, moved = ", ".join(f"{c} {k}" for c, k in chose), ""
        else:
            bm25 = f"{np.mean([f['info'][key][0] for r in reps for f in r]):.2f}"
            moved = f"{np.mean([f['info'][key][1] > 0 for r in reps for f in r]):.0%}"

        who = kind if ab is None else f"A/B: wsum {1 - share:g}, rrf {share:g}"
        lines.append(
            f"| {who} | {eta:g} | {key.split('|')[-1]} | {gaps.mean():+.4f} "
            f"({gaps.std(ddof=1):.4f}; {gaps[0]:+.4f}) | {np.mean(gaps >= -GOAL):.0%} | {tq:.2g} "
            f"| {dl:+.4f} | {dr:+.4f} | {avg.mean() - plain.mean():+.4f} | {bm25} "
            f"| {moved} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, action="append", help="10000 unless given")
    ap.add_argument(
        "--replicates",
        type=int,
        action="append",
        help="independent logs (10); once, or once per --sessions, in its order",
    )
    ap.add_argument("--ab", metavar="TAG", help="the A/B log's variants, kept under TAG")
    ap.add_argument("--share", type=float, default=0.1, help="with --ab: RRF's share (0.1)")
    ap.add_argument(
        "--family",
        choices=["linear", "auto_shown"],
        default="linear",
        help="linear: LinearFusion's variants; auto_shown: AutoFusion(held_out='shown')",
    )
    ap.add_argument(
        "--collections",
        default=",".join(COLLECTIONS),
        help="run these only, no report (two processes on two halves)",
    )
    ap.add_argument("--write-docs", action="store_true", help=f"write the tables into {DOC}")
    args = ap.parse_args()
    if args.ab and args.write_docs:
        ap.error("--write-docs writes the table of the logger's logs; leave out --ab")
    sizes = args.sessions or [10_000]
    reps = args.replicates or [10]
    if len(reps) == 1:
        reps = reps * len(sizes)
    if len(reps) != len(sizes) or min(reps) < 2:
        ap.error(
            "--replicates: at least 2 (the spread over logs needs two), once or once per "
            f"--sessions ({len(sizes)}); got {reps}"
        )
    only = tuple(args.collections.split(","))
    text = ""
    for n, r in zip(sizes, reps, strict=True):
        _, kept = run_all(n, r, args.ab, args.share, args.family, only)
        if only == COLLECTIONS:
            text += report(n, kept, args.ab, args.share, args.family) + "\n"
    if only != COLLECTIONS:
        return
    print(text)
    tag = f"_ab_{args.ab}" if args.ab else "" if args.family == "linear" else f"_{args.family}"
    (KEPT / f"report{tag}.md").write_text(text)
    if args.write_docs:
        _write_docs("seeds" + tag, text.rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
