"""The RankBoost variants side by side (issue 13, "The study"; docs/variants.md).

Variants (all :func:`rankboost.train` options, threshold weak rankers, ``learning_rate=1``):
Rb-c (``alpha="r"``), Rb-d (``alpha="exact"``), line search (``alpha="line_search"``) and
RankBoost+ (``alpha="rbplus"``), each with and without WeakLearn.cum
(``positive_cumulative=True``); and the three WeakLearn criteria ``abs_r`` (the paper),
``r`` (RankLib) and ``exact_z``, each with Rb-c.
An option the installed rankboost does not have yet (a :class:`rankboost.params.ParameterError`)
is reported as missing, never replaced by numbers; it is run as soon as it exists.

Data and protocol:

* LETOR 4.0 MQ2008 (46 features, graded 0/1/2): the official 5 folds; layered feedback
  (library default normalisation), 255 quantile thresholds; the round count is chosen on
  ``vali`` by NDCG@10 among ``1..T``; test NDCG@10 (2^rel - 1 gain, LETOR discount, 0 for a
  query without relevant documents) and MAP (relevant = grade >= 1).
* MQ2008-agg and MQ2007-agg (rank fusion, :mod:`rankboost.fusion`): features = -rank in each
  input list (NaN when the list did not return the document; ``fusion_features``), layered
  feedback with ``normalize="query"`` and every distinct rank as a threshold (RankFusion's
  defaults); same protocol; judged documents no list returned are tied below the returned
  ones (as in experiments/metasearch.py).
* MovieLens 100K per-user task (Freund et al. section 6.2, experiments/movies.py): seeded
  targets with >= 40 ratings, a random half of each target's ratings is feedback and the
  other half test, feature users disjoint from the targets; one model per target, a fixed
  number of rounds (50, the movies pilot's choice: there is no validation split); test
  disagreement (tied pairs count 1/2).

Reported: test metrics, rounds chosen, training-loss curves (``history["rloss"]``, figure
``docs/img/variants_rloss.png``), median time per round (the ``Booster.update`` loop only,
one numba thread), and paired per-query (per-user) differences against Rb-c with a paired
t-test and a sign-flip randomisation test (``--n-perm`` flips, two-sided). ``bound`` adds the
generalization-bound figure of docs/metrics.md (``docs/img/bound_mq2008.png``).

Run::

    PYTHONPATH=src .venv/bin/python experiments/variants.py              # print only
    PYTHONPATH=src .venv/bin/python experiments/variants.py --write-docs # + docs, figures
    PYTHONPATH=src .venv/bin/python experiments/variants.py --quick      # smoke test, seconds
"""

from __future__ import annotations

import os

# One thread: the machine is shared, and per-round times are comparable across variants.
# (only when run as a script: a test importing this module keeps its own threads)
if __name__ == "__main__":
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import rankboost as rb  # noqa: E402
from rankboost.params import ParameterError, TrainParams  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling modules below
from variants_report import (  # noqa: E402
    COMMAND,
    claim,
    paired,  # noqa: F401 - the study's test, variants.paired (tests/test_variants_experiment.py)
    plot_curves,
    replace_block,
    table,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("RANKBOOST_DATA", ROOT.parent / "shared" / "data"))
DOCS = ROOT / "docs"
NDCG = {"k": 10, "gain": "exp2", "discount": "letor", "empty": "zero"}
DATASETS = ("mq2008", "mq2008-agg", "mq2007-agg", "movielens", "bound")

#: name -> train() options; Rb-c is the reference of every paired test.
VARIANTS: dict[str, dict[str, Any]] = {
    "Rb-c": {"alpha": "r"},
    "Rb-c cum": {"alpha": "r", "positive_cumulative": True},
    "Rb-d": {"alpha": "exact"},
    "Rb-d cum": {"alpha": "exact", "positive_cumulative": True},
    "line search": {"alpha": "line_search"},
    "line search cum": {"alpha": "line_search", "positive_cumulative": True},
    "RankBoost+": {"alpha": "rbplus"},
    "RankBoost+ cum": {"alpha": "rbplus", "positive_cumulative": True},
    "Rb-c criterion=r": {"alpha": "r", "criterion": "r"},
    "Rb-c criterion=exact_z": {"alpha": "r", "criterion": "exact_z"},
}


def missing_reason(options: dict[str, Any]) -> str | None:
    """Why the installed rankboost cannot run these options (None = it can)."""
    for key, value in options.items():
        try:
            TrainParams(**{key: value})
        except ParameterError:
            return f"this rankboost has no {key}={value!r} (TrainParams raises ParameterError)"
    try:
        TrainParams(**options)
    except ParameterError as exc:
        return str(exc)
    return None


# ----------------------------------------------------------------------------- training


def fit(X: np.ndarray, feedback: Any, options: dict[str, Any], n_rounds: int) -> dict[str, Any]:
    """Train with a Booster; the loop of ``update()`` is timed apart from the setup."""
    params = TrainParams(n_rounds=n_rounds, **options)
    bst = rb.Booster(X, feedback, params)
    t0 = time.perf_counter()
    for _ in range(n_rounds):
        rec = bst.update()
        if rec is None or rec.perfect:
            break
    seconds = time.perf_counter() - t0
    model = bst.model()
    return {"model": model, "seconds": seconds, "stopped": model.n_rounds < n_rounds}


def choose_rounds(model: Any, score_of: Any) -> int:
    """The round count ``t`` with the best validation score (the first one on ties)."""
    best, best_t = -np.inf, 1
    for t, h in enumerate(model.staged_decision_function(score_of.X), start=1):
        v = score_of(h)
        if v > best + 1e-12:
            best, best_t = v, t
    return best_t


class Scorer:
    """Validation NDCG@10 of staged scores on ``X`` (rows may be a subset of the judged ones)."""

    def __init__(self, X: np.ndarray, y: np.ndarray, qid: np.ndarray, rows: Any = None) -> None:
        self.X, self.y, self.qid, self.rows = X, y, qid, rows

    def full(self, h: np.ndarray) -> np.ndarray:
        if self.rows is None:
            return h
        s = np.full(self.y.shape[0], float(np.min(h)) - 1.0)  # unretrieved: below all
        s[self.rows] = h
        return s

    def __call__(self, h: np.ndarray) -> float:
        return float(rb.metrics.ndcg_score(self.y, self.full(h), self.qid, **NDCG))


def per_query(y: np.ndarray, s: np.ndarray, qid: np.ndarray) -> dict[str, np.ndarray]:
    return {
        "ndcg@10": np.asarray(rb.metrics.ndcg_score(y, s, qid, per_query=True, **NDCG)),
        "map": np.asarray(
            rb.metrics.mean_average_precision(y, s, qid, empty="zero", per_query=True)
        ),
    }


def run_letor_like(folds: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    """Every variant on every fold: rounds on vali, per-query test metrics, curves, times."""
    out: dict[str, Any] = {}
    for name, options in VARIANTS.items():
        reason = missing_reason(options)
        if reason is not None:
            out[name] = {"missing": reason}
            continue
        res: dict[str, Any] = {"rounds": [], "per_round": [], "curves": [], "stopped": 0}
        res["test"] = {"ndcg@10": [], "map": []}
        try:
            fit(folds[0]["X"], folds[0]["feedback"], options, 2)  # compile before timing
            for f in folds:
                r = fit(f["X"], f["feedback"], options, args.rounds)
                model = r["model"]
                t = choose_rounds(model, f["vali"])
                test = f["test"]
                s = test.full(model.decision_function(test.X, n_rounds=t))
                for k, v in per_query(test.y, s, test.qid).items():
                    res["test"][k].append(v)
                res["rounds"].append(t)
                res["per_round"].append(r["seconds"] / max(model.n_rounds, 1))
                res["curves"].append(model.history["rloss"])
                res["stopped"] += int(r["stopped"])
        except (ValueError, MemoryError) as exc:  # e.g. a variant refusing this feedback
            out[name] = {"missing": f"{type(exc).__name__}: {exc}"}
            continue
        res["test"] = {k: np.concatenate(v) for k, v in res["test"].items()}
        out[name] = res
        print(
            f"  {name:>24}: NDCG@10 {res['test']['ndcg@10'].mean():.4f} "
            f"MAP {res['test']['map'].mean():.4f} rounds {res['rounds']} "
            f"{1e3 * np.median(res['per_round']):.2f} ms/round",
            file=sys.stderr,
        )
    return out


def _first_queries(qid: np.ndarray, k: int | None) -> np.ndarray:
    """Row mask of the first ``k`` queries in order of appearance (all when None)."""
    if k is None:
        return np.ones(qid.shape[0], dtype=bool)
    _, first = np.unique(qid, return_index=True)
    keep = qid[np.sort(first)[:k]]
    return np.isin(qid, keep)


def letor_folds(args: argparse.Namespace) -> list[dict[str, Any]]:
    from rankboost.datasets import load_svmlight

    folds = []
    for k in args.folds:
        d = {}
        for split in ("train", "vali", "test"):
            ds = load_svmlight(DATA / "letor4" / "MQ2008" / f"Fold{k}" / f"{split}.txt.gz",
                               n_features=46)  # fmt: skip
            keep = _first_queries(ds.qid, args.max_queries)
            d[split] = (ds.X[keep], ds.y[keep], ds.qid[keep])
        X, y, q = d["train"]
        folds.append({
            "X": X, "feedback": rb.LayeredFeedback(y.astype(np.int64), q),
            "vali": Scorer(*d["vali"]), "test": Scorer(*d["test"]),
        })  # fmt: skip
    return folds


def agg_folds(dataset: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    from rankboost.fusion import fusion_features, grades_for
    from rankboost.fusion.io import read_letor_agg_folds

    folds = []
    for k in args.folds:
        data = read_letor_agg_folds(DATA / "letor4" / dataset / f"Fold{k}")
        parts = {}
        for split, agg in data.items():
            keep = _first_queries(agg.qid, args.max_queries)
            sub = type(agg)(agg.ranks[keep], agg.labels[keep], agg.qid[keep], agg.docid[keep])
            runs = sub.to_runs()
            feats = fusion_features(runs)
            index = {(q, d): i for i, (q, d) in enumerate(zip(sub.qid, sub.docid, strict=True))}
            rows = np.array([index[(q, d)] for q, d in zip(feats.qid, feats.docid, strict=True)])
            parts[split] = (sub, runs, feats, rows)
        sub, runs, feats, _ = parts["train"]
        y = grades_for(feats, sub.to_qrels())
        folds.append({
            "X": feats.X, "feedback": rb.LayeredFeedback(y, feats.qid, normalize="query"),
            **{s: Scorer(parts[s][2].X, parts[s][0].labels.astype(float), parts[s][0].qid,
                         parts[s][3]) for s in ("vali", "test")},
        })  # fmt: skip
    return folds


AGG_OPTIONS = {"thresholds": "all"}  # RankFusion's default: "top k of list i" for every k


def run_movies(args: argparse.Namespace) -> dict[str, Any]:
    """Every variant on the MovieLens per-user problems (one query = one target)."""
    from movies_protocol import DATA as MOVIES
    from movies_protocol import Config, half_split, masked

    from rankboost.datasets import load_movielens
    from rankboost.recommend import user_ranking_problem

    R, _, _ = load_movielens(MOVIES).to_matrix()
    rng = np.random.default_rng(args.seed)
    counts = np.diff(R.indptr)
    targets = np.sort(rng.choice(np.flatnonzero(counts >= 40), args.n_targets, replace=False))
    pool = rng.permutation(np.setdiff1d(np.arange(R.shape[0]), targets))
    train, test = half_split(R, targets, rng)
    cfg = Config("variants", targets, train, test, np.sort(pool[: args.feature_users]))
    Rtr = masked(R, cfg)
    problems = []
    for u in targets:
        n_tr = train[u].shape[0]
        X, y = user_ranking_problem(Rtr, u, cfg.features, np.concatenate([train[u], test[u]]))
        yte = R[u, test[u]].toarray().ravel()
        problems.append((X[:n_tr], y[:n_tr], X[n_tr:], yte))
    out: dict[str, Any] = {}
    for name, options in VARIANTS.items():
        reason = missing_reason(options)
        if reason is not None:
            out[name] = {"missing": reason}
            continue
        ys, ss, qs, per_round, curves, stopped = [], [], [], [], [], 0
        try:
            fit(problems[0][0], rb.LayeredFeedback(problems[0][1]), options, 2)  # compile
            for i, (Xtr, ytr, Xte, yte) in enumerate(problems):
                r = fit(Xtr, rb.LayeredFeedback(ytr), options, args.movie_rounds)
                model = r["model"]
                ss.append(model.decision_function(Xte))
                ys.append(yte)
                qs.append(np.full(yte.shape[0], i))
                per_round.append(r["seconds"] / max(model.n_rounds, 1))
                curves.append(model.history["rloss"])
                stopped += int(r["stopped"])
        except (ValueError, MemoryError) as exc:
            out[name] = {"missing": f"{type(exc).__name__}: {exc}"}
            continue
        dis = rb.metrics.disagreement(
            np.concatenate(ys), np.concatenate(ss), np.concatenate(qs), per_query=True
        )
        out[name] = {
            "test": {"disagreement": np.asarray(dis)},
            "rounds": [args.movie_rounds],
            "per_round": per_round,
            "curves": curves,
            "stopped": stopped,
        }
        print(
            f"  {name:>24}: disagreement {np.nanmean(dis):.4f} "
            f"{1e3 * np.median(per_round):.2f} ms/round",
            file=sys.stderr,
        )
    return out


def bound_study(args: argparse.Namespace, write: bool) -> str:
    """Train error, test error and the bound on MQ2008 fold 1 (bipartite: relevant = y > 0)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rankboost.bounds import min_sample_size, model_bound
    from rankboost.datasets import load_svmlight
    from rankboost.plotting import plot_bound

    base = DATA / "letor4" / "MQ2008" / "Fold1"
    tr = load_svmlight(base / "train.txt.gz", n_features=46)
    te = load_svmlight(base / "test.txt.gz", n_features=46)
    keep = _first_queries(tr.qid, args.max_queries)
    X, y, q = tr.X[keep], tr.y[keep], tr.qid[keep]
    model = fit(X, rb.BipartiteFeedback((y >= 1).astype(np.int64), q), {"alpha": "r"},
                args.rounds)["model"]  # fmt: skip
    b = model_bound(model, X, y, q, delta=0.05)
    fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
    plot_bound(model, X, y, q, X_test=te.X, y_test=te.y, qid_test=te.qid, ax=ax,
               title="MQ2008 fold 1, Rb-c, bipartite")  # fmt: skip
    fig.suptitle(f"made by: {COMMAND}", fontsize="x-small")
    if write:
        fig.savefig(DOCS / "img" / "bound_mq2008.png", dpi=110)
    plt.close(fig)
    from rankboost.bounds import bipartite_error_curve

    test_err, test_q = bipartite_error_curve(model, te.X, te.y, te.qid)
    ok = np.flatnonzero(~np.isnan(b.epsilon))
    ratio = b.n_positives / b.n_negatives
    T = model.n_rounds
    rows = [f"| T | d' (d = {b.vc_dim}) | m = n for eps < 1 | m for eps < 1 at this n/m | "
            "m = n for eps < 1 if d were 2 | eps at this m, n |",
            "|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for t in sorted({1, 10, 100, T}):
        d_prime = 2 * (b.vc_dim + 1) * (t + 1) * np.log2(np.e * (t + 1))
        eps = f"{b.epsilon[t - 1]:.3f}" if t <= T and not np.isnan(b.epsilon[t - 1]) else \
            "undefined (n < d')"  # fmt: skip
        rows.append(f"| {t} | {d_prime:.0f} | {min_sample_size(b.vc_dim, t, 0.05):,} | "
                    f"{min_sample_size(b.vc_dim, t, 0.05, ratio=ratio):,} | "
                    f"{min_sample_size(2, t, 0.05):,} | {eps} |")  # fmt: skip
    last = int(ok[-1]) + 1 if ok.size else 0
    text = [
        f"MQ2008 fold 1 train, relevant = label > 0: m = {b.n_negatives} negatives, "
        f"n = {b.n_positives} positives (n/m = {ratio:.3f}); {X.shape[1]} features, so "
        f"d = threshold_vc_dim({X.shape[1]}) = {b.vc_dim}; delta = 0.05; Rb-c on "
        f"BipartiteFeedback(y > 0, qid), {T} rounds.",
        "",
        (
            f"* The bound is defined (m, n >= d') only for T <= {last}; there eps_T runs from "
            f"{b.epsilon[0]:.2f} (T = 1) to {b.epsilon[last - 1]:.2f} (T = {last})"
            + (": vacuous (> 1) at every round." if np.all(b.epsilon[ok] > 1) else ".")
            if last
            else "* The bound is defined at no round (n < d' already at T = 1)."
        ),
        f"* Pooled error (every negative against every positive, queries ignored) after "
        f"{T} rounds: train {b.error[-1]:.4f}, test {test_err[-1]:.4f}; within-query "
        f"(the training loss): train {b.query_error[-1]:.4f}, test {test_q[-1]:.4f}"
        if b.query_error is not None and test_q is not None
        else "",
        "",
        "Sample sizes for a non-vacuous bound (eps < 1), d = "
        f"{b.vc_dim}, delta = 0.05 (`rankboost.bounds.min_sample_size`):",
        "",
        *rows,
    ]
    return "\n".join(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: fold 1, 6 rounds, 30 queries, 3 users (seconds)")  # fmt: skip
    ap.add_argument("--datasets", default=",".join(DATASETS),
                    help=f"comma-separated subset of {','.join(DATASETS)}")  # fmt: skip
    ap.add_argument("--folds", default="1,2,3,4,5")
    ap.add_argument("--rounds", type=int, default=300, help="T for LETOR/fusion (rounds on vali)")
    ap.add_argument("--movie-rounds", type=int, default=50)
    ap.add_argument("--n-targets", type=int, default=60)
    ap.add_argument("--feature-users", type=int, default=200)
    ap.add_argument("--max-queries", type=int, default=None, help="first K queries per split")
    ap.add_argument("--n-perm", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--write-docs", action="store_true",
                    help="rewrite the docs/variants.md tables, the bound block of "
                         "docs/metrics.md and docs/img/{variants,bound}_*.png")  # fmt: skip
    ap.add_argument("--json", type=Path, default=None, help="also dump the summary as JSON")
    args = ap.parse_args(argv)
    if args.quick:
        if args.write_docs:
            ap.error("--write-docs needs the full run, not --quick")
        args.folds, args.rounds, args.movie_rounds = "1", 6, 6
        args.max_queries, args.n_targets, args.feature_users, args.n_perm = 30, 3, 40, 200
    args.folds = [int(f) for f in args.folds.split(",")]
    wanted = [d.strip() for d in args.datasets.split(",") if d.strip()]
    unknown = sorted(set(wanted) - set(DATASETS))
    if unknown:
        ap.error(f"unknown dataset(s) {unknown}; choose from {list(DATASETS)}")

    t_start = time.perf_counter()
    res_all: dict[str, dict[str, Any]] = {}
    tables = []
    for ds in wanted:
        if ds == "bound":
            continue
        print(f"{ds} (at {time.perf_counter() - t_start:.0f} s):", file=sys.stderr)
        if ds == "mq2008":
            res_all["MQ2008"] = run_letor_like(letor_folds(args), args)
            tables.append(table("LETOR 4.0 MQ2008 (test, 5 folds pooled)", res_all["MQ2008"],
                                ("ndcg@10", "map"), args))  # fmt: skip
        elif ds == "movielens":
            res_all["MovieLens"] = run_movies(args)
            tables.append(table(
                f"MovieLens 100K, {args.n_targets} targets, {args.feature_users} feature users "
                f"(test disagreement, lower is better; {args.movie_rounds} rounds)",
                res_all["MovieLens"], ("disagreement",), args, unit="users"))  # fmt: skip
        else:
            name = {"mq2008-agg": "MQ2008-agg", "mq2007-agg": "MQ2007-agg"}[ds]
            folds = agg_folds(name, args)
            saved = dict(VARIANTS)
            for k in VARIANTS:
                VARIANTS[k] = {**saved[k], **AGG_OPTIONS}
            try:
                res_all[name] = run_letor_like(folds, args)
            finally:
                VARIANTS.update(saved)
            tables.append(table(f"{name} (rank fusion; test, 5 folds pooled)", res_all[name],
                                ("ndcg@10", "map"), args))  # fmt: skip
    seconds = time.perf_counter() - t_start
    header = (f"Made by `{COMMAND}` in {seconds:.0f} s (wall clock, one process, one numba "
              f"thread; folds {args.folds}, T = {args.rounds} rounds for LETOR/fusion with the "
              f"count chosen on vali by NDCG@10, {args.movie_rounds} rounds for MovieLens; "
              f"{args.n_perm} sign flips per randomisation test; rankboost "
              f"{rb.__version__}).")  # fmt: skip
    report = "\n\n".join([header, *tables])
    if res_all:
        report += "\n\n#### Connamacher et al.'s claim: RankBoost+ beats Rb-c and Rb-d\n\n"
        report += claim(res_all, args)
    print(report)
    bound_text = None
    if "bound" in wanted:
        bound_text = bound_study(args, args.write_docs)
        print("\n" + bound_text)
    if args.write_docs:
        if res_all:
            plot_curves(res_all, DOCS / "img" / "variants_rloss.png")
            replace_block(DOCS / "variants.md", "variants", report)
        if bound_text is not None:
            replace_block(DOCS / "metrics.md", "bound",
                          f"Made by `{COMMAND}` (its `bound` part).\n\n{bound_text}")  # fmt: skip
    if args.json:
        summary = {ds: {n: {k: (np.nanmean(v).item() if k == "test" else v)
                            for k, v in r.items() if k in ("rounds", "missing", "stopped")}
                        | ({m: float(np.nanmean(a)) for m, a in r["test"].items()}
                           if "test" in r else {})
                        for n, r in res.items()} for ds, res in res_all.items()}  # fmt: skip
        args.json.write_text(json.dumps(summary, indent=1))
    print(f"total {time.perf_counter() - t_start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
