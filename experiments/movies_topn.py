"""Top-N recommendation on MovieLens 100K, and the speed of a whole-catalogue run (issue 24).

Protocol (the one recommender users run first): per user, a random 20% of the ratings is
held out; every item the user has not rated in training is ranked; relevant = held-out
items rated >= 4. NDCG@10 (binary gains, ideal = min(#relevant, 10) hits) and Recall@20
(hits / min(#relevant, 20)), averaged over users with a relevant held-out item; paired
Wilcoxon signed-rank over those users for RankBoost against each baseline.

Baselines (hyper-parameters picked on a split of the *training* ratings, seed + 1000):
popularity, item-KNN (cosine on binary rater vectors, k neighbours), EASE (Steck 2019,
lambda), and `implicit`'s ALS and BPR when installed. RankBoost: the pooled
:class:`rankboost.recommend.RankBoostRecommender` with its defaults, and its feedback
variants; optionally the paper's per-user learner (``--per-user``, slow).

Speed (``--speed``): all 943 users fitted and ``recommend_all(k=10)``, against Surprise's
KNNWithMeans fit + predict of every (user, unrated item) pair (what its top-10 needs) and of
the test pairs only; and ``recommend_all`` against a loop of ``recommend``.

Validation (``--validate``): the top-N model's choices (feedback, EASE's lambda,
negatives, rounds, prior scale) against EASE on a validation split of each seed's
*training* ratings, never the test split. ``--validate-levers``: issue 35's cheaper
configurations of the pooled fit (fewer folds, no inner CV) against the default, the same way.

Run::

    PYTHONPATH=src python experiments/movies_topn.py --seeds 0,1,2 --speed \
        --json experiments/results/movies_topn.json
    PYTHONPATH=src python experiments/movies_topn.py --seeds 0,1,2 --validate
    PYTHONPATH=src python experiments/movies_topn.py --seeds 0,1,2 --validate-levers
    PYTHONPATH=src python experiments/movies_topn.py --plot docs/img/movies_topn.png \
        --from-json experiments/results/movies_topn.json   # the chart, from a saved run

``--plot PNG`` draws the recommender beside the baselines (NDCG@10 and Recall@20, needs
matplotlib), after a run or, with ``--from-json``, from a saved ``--json`` file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _data import data_file
from scipy.stats import wilcoxon
from threadpoolctl import threadpool_limits

from rankboost import TrainingStoppedWarning
from rankboost.datasets import load_movielens
from rankboost.recommend import RankBoostRecommender, _pooled
from rankboost.recommend._base import BaseScores


def split(R: sp.csr_matrix, seed: int, frac: float = 0.2):
    """Per user, a random ``frac`` of the ratings (rounded) held out."""
    rng = np.random.default_rng(seed)
    n_u = np.diff(R.indptr)
    rows = np.repeat(np.arange(R.shape[0]), n_u)
    order = np.lexsort((rng.random(R.nnz), rows))
    rank = np.empty(R.nnz, dtype=np.int64)
    rank[order] = np.arange(R.nnz) - np.repeat(R.indptr[:-1], n_u)
    test = rank < np.round(frac * n_u[rows])

    def part(mask):
        M = sp.csr_matrix((R.data[mask], R.indices[mask], np.r_[0, np.cumsum(
            np.bincount(rows[mask], minlength=R.shape[0]))]), shape=R.shape)  # fmt: skip
        return M

    return part(~test), part(test)


def per_user_metrics(S, Rtr, Rte):
    """Per-user NDCG@10 and Recall@20 (users without a relevant held-out item: NaN)."""
    S = np.array(S, dtype=np.float64)
    S[np.isnan(S)] = -1e300
    rows = np.repeat(np.arange(Rtr.shape[0]), np.diff(Rtr.indptr))
    S[rows, Rtr.indices] = -np.inf
    rel = np.zeros(S.shape, dtype=bool)
    trow = np.repeat(np.arange(Rte.shape[0]), np.diff(Rte.indptr))
    good = Rte.data >= 4
    rel[trow[good], Rte.indices[good]] = True
    top = np.argsort(-S, axis=1, kind="stable")[:, :20]
    hit = np.take_along_axis(rel, top, axis=1)
    disc = 1.0 / np.log2(np.arange(2, 12))
    n_rel = rel.sum(axis=1)
    idcg = np.cumsum(disc)[np.clip(np.minimum(n_rel, 10) - 1, 0, 9)]
    ndcg = np.where(n_rel > 0, (hit[:, :10] * disc).sum(axis=1) / idcg, np.nan)
    recall = np.where(n_rel > 0, hit.sum(axis=1) / np.maximum(np.minimum(n_rel, 20), 1), np.nan)
    return ndcg, recall


def base_scores(name, Rtr, **kw):
    b = BaseScores((name,), **kw).fit(Rtr)
    return b.scores(np.arange(Rtr.shape[0]))[..., 0]


def implicit_scores(kind, Rtr, factors, reg, seed):
    import implicit

    X = Rtr.copy()
    X.data[:] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "ALS":
            m = implicit.cpu.als.AlternatingLeastSquares(
                factors=factors, regularization=reg, iterations=15, random_state=seed,
                num_threads=1,
            )  # fmt: skip
        else:
            m = implicit.cpu.bpr.BayesianPersonalizedRanking(
                factors=factors, regularization=reg, learning_rate=0.01, iterations=100,
                random_state=seed, num_threads=1,
            )  # fmt: skip
        m.fit(sp.csr_matrix(X, dtype=np.float32), show_progress=False)
    return np.asarray(m.user_factors) @ np.asarray(m.item_factors).T


def baselines(seed, Rtr):
    """Every baseline's score matrix, hyper-parameters picked on a split of Rtr."""
    inner_tr, inner_va = split(Rtr, seed + 1000)
    grids = {
        "item-KNN": ("cooccurrence", "k", (20, 50, 100, 200)),
        "EASE": ("ease", "ease_lambda", (50, 100, 250, 500, 1000)),
    }
    out, chosen = {"popularity": base_scores("popularity", Rtr)}, {}
    for label, (name, key, values) in grids.items():
        best = max(values, key=lambda v: np.nanmean(per_user_metrics(
            base_scores(name, inner_tr, **{key: v}), inner_tr, inner_va)[0]))  # fmt: skip
        chosen[label] = {key: best}
        out[label] = base_scores(name, Rtr, **{key: best})
    try:
        import implicit  # noqa: F401
    except ImportError:
        print("implicit is not installed: no ALS/BPR rows", file=sys.stderr)
        return out, chosen
    for kind in ("ALS", "BPR"):
        grid = [(f, r) for f in (32, 64, 128) for r in (0.01, 0.1)]
        best = max(grid, key=lambda fr: np.nanmean(per_user_metrics(
            implicit_scores(kind, inner_tr, *fr, seed), inner_tr, inner_va)[0]))  # fmt: skip
        chosen[kind] = {"factors": best[0], "regularization": best[1]}
        out[kind] = implicit_scores(kind, Rtr, *best, seed)
    return out, chosen


#: the default's row: what ``recommend`` ranks (the "liked" model boosted from the EASE
#: prior, EASE's lambda chosen on a validation split of the training ratings); the same
#: fit's "ratings" model (what ``predict`` uses) is scored too
DEFAULT = "RankBoost pooled, default (recommend: 'liked' model from the EASE prior)"
DEFAULT_RATING = "RankBoost pooled, default's 'ratings' model (what predict uses)"
#: the default before issue 35's third round (its top-N model): rounds by 2-fold inner CV and
#: a refit on every target, 500 held unrated rows per held-out user (``_HELD``: a module
#: constant of the library, set for that fit only)
PREVIOUS = "RankBoost pooled, previous default (refit=True, 500 held unrated rows)"
_PREVIOUS = {"refit": True, "_HELD": 500}
RANKBOOST = {
    DEFAULT: {},
    PREVIOUS: _PREVIOUS,
    "RankBoost pooled, feedback='rated', ease_lambda=250, negatives=1 (the previous default)": {
        "feedback": "rated",
        "ease_lambda": 250.0,
        "negatives": 1.0,
    },
    "RankBoost pooled, feedback='liked', no prior": {"feedback": "liked", "prior": None},
}


#: the top-N model's choices (issue 24), compared on validation splits of the training
#: ratings only (``--validate``); feedback="liked" fits the model that "auto" uses for
#: ``recommend`` (bit-identical, tested) without the rating model
_LIKED = {"feedback": "liked"}
VALIDATION = {
    "rated, lambda 250, negatives 1 (previous default)": {
        "feedback": "rated", "ease_lambda": 250.0, "negatives": 1.0},
    "rated, lambda auto, negatives 1": {"feedback": "rated", "negatives": 1.0},
    "liked, lambda 250, negatives 1": {**_LIKED, "ease_lambda": 250.0, "negatives": 1.0},
    "liked, lambda auto, negatives 1": {**_LIKED, "negatives": 1.0},
    "liked, lambda auto, negatives 2 (the default)": _LIKED,
    "liked, lambda auto, negatives 3": {**_LIKED, "negatives": 3.0},
    "liked, lambda auto, negatives 4": {**_LIKED, "negatives": 4.0},
    "liked, lambda auto, negatives 2, n_estimators 200": {**_LIKED, "n_estimators": 200},
    "liked, lambda auto, negatives 2, prior_scale None": {**_LIKED, "prior_scale": None},
}  # fmt: skip


def validate(R, seeds):
    """Each variant against EASE on a validation split of each seed's training ratings.

    The seed's test split is never read: the training ratings are split again (seed + 1000,
    as for the baselines' hyper-parameters), RankBoost is fitted on the inner training part
    and scored on the validation part; EASE's lambda is the grid's best on that very
    validation part (an advantage to EASE). Paired Wilcoxon over (seed, user).
    """
    per = {}
    for seed in seeds:
        Rtr, _ = split(R, seed)
        itr, iva = split(Rtr, seed + 1000)
        lam = max((50, 100, 250, 500, 1000), key=lambda v: np.nanmean(per_user_metrics(
            base_scores("ease", itr, ease_lambda=v), itr, iva)[0]))  # fmt: skip
        per.setdefault("EASE (lambda tuned on this validation split)", []).append(
            per_user_metrics(base_scores("ease", itr, ease_lambda=lam), itr, iva)
        )
        for name, kw in VALIDATION.items():
            Hs, fit, rec = rankboost_scores(itr, kw)
            per.setdefault(name, []).append(per_user_metrics(Hs[0], itr, iva))
            print(f"seed {seed} (EASE lambda {lam}): {name}: fit {fit:.0f} s, rounds "
                  f"{rec.report_['n_rounds']}, ease_lambda_ {rec.ease_lambda_}, prior scale "
                  f"{rec.prior_scale_}", file=sys.stderr, flush=True)  # fmt: skip
    ref = "EASE (lambda tuned on this validation split)"
    lines = [
        f"Validation splits of the training ratings (seeds {seeds}; the test split unread): "
        "means over seeds; row - EASE, paired Wilcoxon over (seed, user).",
        "",
        "| top-N model | NDCG@10 | Recall@20 | NDCG@10 - EASE (p) | Recall@20 - EASE (p) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, runs in per.items():
        nd = np.concatenate([r[0] for r in runs])
        rc = np.concatenate([r[1] for r in runs])
        ok = np.isfinite(nd)
        d = nd[ok] - np.concatenate([r[0] for r in per[ref]])[ok]
        e = rc[ok] - np.concatenate([r[1] for r in per[ref]])[ok]
        diff = ("", "") if name == ref else (
            f"{d.mean():+.4f} ({wilcoxon(d).pvalue:.2g})",
            f"{e.mean():+.4f} ({wilcoxon(e).pvalue:.2g})")  # fmt: skip
        m_nd = np.mean([np.nanmean(r[0]) for r in runs])
        m_rc = np.mean([np.nanmean(r[1]) for r in runs])
        lines.append(f"| {name} | {m_nd:.4f} | {m_rc:.4f} | {diff[0]} | {diff[1]} |")
    return "\n".join(lines)


#: issue 35's levers on the pooled fit's cost (fewer fits), each against the default on the
#: same validation splits (``--validate-levers``); "liked" = the default's top-N model
LEVERS = {
    "default (n_folds 5, inner_folds 2, ease_lambda auto)": _LIKED,
    "inner_folds None (rounds = n_estimators, no inner CV)": {**_LIKED, "inner_folds": None},
    "n_folds 4": {**_LIKED, "n_folds": 4},
    "n_folds 3": {**_LIKED, "n_folds": 3},
    "n_folds 4, inner_folds None": {**_LIKED, "n_folds": 4, "inner_folds": None},
    "n_folds 2, inner_folds None, ease_lambda 500": {
        **_LIKED, "n_folds": 2, "inner_folds": None, "ease_lambda": 500.0},
    "previous default (refit=True, 500 held unrated rows)": {**_LIKED, **_PREVIOUS},
    "refit=True": {**_LIKED, "refit": True},
    "500 held unrated rows": {**_LIKED, "_HELD": 500},
}  # fmt: skip


def validate_levers(R, seeds):
    """Each lever of :data:`LEVERS` against the default on validation splits (as
    :func:`validate`: the seed's test split unread), paired Wilcoxon over (seed, user)."""
    per = {}
    for seed in seeds:
        Rtr, _ = split(R, seed)
        itr, iva = split(Rtr, seed + 1000)
        for name, kw in LEVERS.items():
            Hs, fit, rec = rankboost_scores(itr, kw)
            per.setdefault(name, []).append(per_user_metrics(Hs[0], itr, iva))
            print(f"seed {seed}: {name}: fit {fit:.0f} s, rounds {rec.report_['n_rounds']}, "
                  f"ease_lambda_ {rec.ease_lambda_}", file=sys.stderr, flush=True)  # fmt: skip
    ref = next(iter(LEVERS))
    lines = [
        f"Validation splits of the training ratings (seeds {seeds}; the test split unread): "
        "means over seeds; row - default, paired Wilcoxon over (seed, user).",
        "",
        "| top-N model | NDCG@10 | Recall@20 | NDCG@10 - default (p) | Recall@20 - default (p) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, runs in per.items():
        nd, rc = (np.concatenate([r[i] for r in runs]) for i in (0, 1))
        nd0, rc0 = (np.concatenate([r[i] for r in per[ref]]) for i in (0, 1))
        ok = np.isfinite(nd)
        d, e = nd[ok] - nd0[ok], rc[ok] - rc0[ok]
        diff = ("", "") if name == ref else tuple(
            f"{x.mean():+.4f} ({wilcoxon(x).pvalue:.2g})" if x.any() else "+0.0000 (equal)"
            for x in (d, e))  # fmt: skip
        m_nd = np.mean([np.nanmean(r[0]) for r in runs])
        m_rc = np.mean([np.nanmean(r[1]) for r in runs])
        lines.append(f"| {name} | {m_nd:.4f} | {m_rc:.4f} | {diff[0]} | {diff[1]} |")
    return "\n".join(lines)


def rankboost_scores(Rtr, kw):
    """Score matrices (one per model of the fit: top-N, and the rating model if another).

    ``kw["_HELD"]``: the held unrated rows per held-out user of the inner CV for this fit
    (``_pooled.HELD_UNRATED``, a library constant; the previous default's 500).
    """
    kw = dict(kw)
    held = kw.pop("_HELD", _pooled.HELD_UNRATED)
    old, _pooled.HELD_UNRATED = _pooled.HELD_UNRATED, held
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrainingStoppedWarning)
            t = time.perf_counter()
            rec = RankBoostRecommender(rating_range=(1, 5), **kw).fit(Rtr)
            fit = time.perf_counter() - t
    finally:
        _pooled.HELD_UNRATED = old
    if rec.model_ is not None:
        S = rec._base.scores(np.arange(Rtr.shape[0]))
        S2 = S.reshape(-1, S.shape[2])
        top_n, by_rating = rec._fits
        fits = [top_n] if by_rating is top_n else [top_n, by_rating]
        out = [f.score(S2).reshape(S.shape[:2]) for f in fits]
    else:
        out = [np.vstack([rec.predict(u) for u in range(Rtr.shape[0])])]
    return out, fit, rec


def speed(R, seed, repeats):
    """Interleaved timings: RankBoost fit + recommend_all vs Surprise fit + predict.

    Each repeat times, in turn: (i) ``RankBoostRecommender()`` (the defaults) fitted on all
    943 users' training ratings + ``recommend_all(k=10)``; a loop of ``recommend``; (ii)
    Surprise's KNNWithMeans fit + predict of every (user, unrated item) pair (what a top-10
    of every user needs); (iii) its fit + predict of the held-out pairs only. Wall seconds
    (``perf_counter``) and CPU seconds (``process_time``, less sensitive to the machine's
    load) of each; medians over repeats.
    """
    import pandas as pd
    from surprise import Dataset, KNNWithMeans, Reader

    Rtr, Rte = split(R, seed)
    rows = {}

    def timed(name, fn):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        rows.setdefault(name, []).append((time.perf_counter() - t, time.process_time() - c))
        return out

    def rankboost():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrainingStoppedWarning)
            rec = timed(
                "RankBoost: fit", lambda: RankBoostRecommender(rating_range=(1, 5)).fit(Rtr)
            )
        timed("RankBoost: recommend_all(k=10)", lambda: rec.recommend_all(k=10))
        return rec

    coo = Rtr.tocoo()
    frame = pd.DataFrame({"u": coo.row, "i": coo.col, "r": coo.data})
    tc = Rte.tocoo()
    test_pairs = list(zip(tc.row.tolist(), tc.col.tolist(), tc.data.tolist(), strict=True))

    def surprise_fit():
        data = Dataset.load_from_df(frame, Reader(rating_scale=(1, 5)))
        trainset = data.build_full_trainset()
        algo = KNNWithMeans(k=40, sim_options={"name": "pearson", "user_based": True},
                            verbose=False).fit(trainset)  # fmt: skip
        return trainset, algo

    for _ in range(repeats):
        rec = timed("(i) RankBoost: fit + recommend_all(k=10)", rankboost)
        timed("RankBoost: loop of recommend(u, k=10)", lambda r=rec: [
            r.recommend(u, k=10) for u in range(R.shape[0])])  # fmt: skip

        def every_unrated():
            trainset, algo = timed("Surprise: fit", surprise_fit)
            return algo.test(trainset.build_anti_testset())

        def held_out():
            _, algo = surprise_fit()
            return algo.test(test_pairs)

        timed("(ii) Surprise KNNWithMeans: fit + predict every unrated pair", every_unrated)
        timed("(iii) Surprise KNNWithMeans: fit + predict the held-out pairs", held_out)
    med = {k: (float(np.median([w for w, _ in v])), float(np.median([c for _, c in v])))
           for k, v in rows.items()}  # fmt: skip
    return med, {k: [list(x) for x in v] for k, v in rows.items()}


# the bars of the chart: the baselines and the default (the other RankBoost rows are studies)
PLOT_ROWS = ("popularity", "BPR", "item-KNN", "ALS", "EASE", DEFAULT)


def plot(summary: dict, path: Path, command: str) -> None:
    """NDCG@10 and Recall@20 of the baselines and the default recommender, side by side."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [name for name in PLOT_ROWS if name in summary]
    labels = ["RankBoost\n(default)" if name == DEFAULT else name for name in rows]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=False)
    for ax, metric in zip(axes, ("ndcg@10", "recall@20"), strict=True):
        values = [summary[name][metric] for name in rows]
        colors = ["C3" if name == DEFAULT else "0.65" for name in rows]
        bars = ax.bar(range(len(rows)), values, color=colors)
        ax.bar_label(bars, fmt="%.3f", fontsize=8)
        ax.set_xticks(range(len(rows)), labels, fontsize=8)
        ax.set_title(metric.replace("ndcg", "NDCG").replace("recall", "Recall"), fontsize=10)
        ax.set_ylim(0, max(values) * 1.15)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle("Top-N on MovieLens 100K (per-user 80/20 split, mean of 3 seeds)", fontsize=10)
    fig.text(0.01, 0.01, command, fontsize=7, color="0.4")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}", file=sys.stderr)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--per-user", action="store_true", help="also the paper's per-user learner")
    ap.add_argument("--speed", action="store_true")
    ap.add_argument("--speed-repeats", type=int, default=3)
    ap.add_argument("--speed-only", action="store_true", help="skip the quality table")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--validate", action="store_true", help="only the validation-split table")
    ap.add_argument(
        "--validate-levers",
        action="store_true",
        help="only issue 35's speed levers against the default, validation splits",
    )
    ap.add_argument("--plot", type=Path, metavar="PNG", help="chart of the quality table")
    ap.add_argument("--from-json", type=Path, metavar="JSON", help="plot a saved --json run")
    args = ap.parse_args(argv)
    if args.plot or args.from_json:
        if args.from_json and not args.plot:
            ap.error("--from-json needs --plot PNG")
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            ap.error("--plot needs matplotlib: .venv/bin/pip install -e '.[experiments]'")
    command = "python experiments/movies_topn.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    if args.from_json:
        try:
            summary = json.loads(args.from_json.read_text())["summary"]
        except (OSError, ValueError, KeyError) as exc:
            ap.error(f"--from-json {args.from_json}: not a saved --json run ({exc})")
        plot(summary, args.plot, command)
        return
    R, _, _ = load_movielens(data_file("movielens/ml-100k/u.data.gz")).to_matrix()
    seeds = [int(s) for s in args.seeds.split(",") if s]
    if args.validate:
        print(validate(R, seeds))
        return
    if args.validate_levers:
        print(validate_levers(R, seeds))
        return
    if args.speed:  # first: the machine is at its quietest, and an error shows early
        med, raw = speed(R, seeds[0], args.speed_repeats)
        print(json.dumps(med, indent=1), file=sys.stderr)
    speed_seed = seeds[0]
    if args.speed_only:
        seeds = []
    per, fits, chosen_all = {}, {}, {}
    variants = dict(RANKBOOST)
    if args.per_user:
        variants["RankBoost per-user (paper)"] = {"mode": "per_user", "n_estimators": 50,
                                                  "positive_cumulative": True}  # fmt: skip
    for seed in seeds:
        Rtr, Rte = split(R, seed)
        t = time.perf_counter()
        scores, chosen = baselines(seed, Rtr)
        chosen_all[seed] = chosen
        print(f"seed {seed}: baselines {time.perf_counter() - t:.0f} s {chosen}", file=sys.stderr)
        for name, kw in variants.items():
            Hs, fit, rec = rankboost_scores(Rtr, kw)
            scores[name] = Hs[0]
            if name == DEFAULT and len(Hs) > 1:
                scores[DEFAULT_RATING] = Hs[1]
            fits.setdefault(name, []).append(fit)
            print(f"seed {seed}: {name} fit {fit:.0f} s, report {rec.report_}, prior scale "
                  f"{getattr(rec, 'prior_scale_', None)}, ease_lambda_ "
                  f"{getattr(rec, 'ease_lambda_', None)}", file=sys.stderr)  # fmt: skip
        for name, S in scores.items():
            nd, rc = per_user_metrics(S, Rtr, Rte)
            per.setdefault(name, {"ndcg": [], "recall": []})
            per[name]["ndcg"].append(nd)
            per[name]["recall"].append(rc)
    names = list(per)
    ref = DEFAULT
    lines = [
        f"Top-N, MovieLens 100K, per-user random 80/20 split, seeds {seeds}; means over seeds of "
        "the mean over users; paired Wilcoxon over (seed, user) of NDCG@10 against "
        f"{ref!r} (negative = the row is below it).",
        "",
        "| method | NDCG@10 | Recall@20 | NDCG@10 diff vs default (p) | Recall@20 diff (p) |",
        "|---|---:|---:|---:|---:|",
    ]
    summary = {}
    for name in names:
        nd = np.concatenate(per[name]["ndcg"])
        rc = np.concatenate(per[name]["recall"])
        ok = np.isfinite(nd)
        m_nd = float(np.mean([np.nanmean(x) for x in per[name]["ndcg"]]))
        m_rc = float(np.mean([np.nanmean(x) for x in per[name]["recall"]]))
        d = nd[ok] - np.concatenate(per[ref]["ndcg"])[ok]
        e = rc[ok] - np.concatenate(per[ref]["recall"])[ok]
        test = "" if name == ref else f"{d.mean():+.4f} ({wilcoxon(d).pvalue:.2g})"
        test2 = "" if name == ref else f"{e.mean():+.4f} ({wilcoxon(e).pvalue:.2g})"
        lines.append(f"| {name} | {m_nd:.4f} | {m_rc:.4f} | {test} | {test2} |")
        summary[name] = {"ndcg@10": m_nd, "recall@20": m_rc}
    lines.append("")
    lines.append("Fit times (s, median over seeds, loaded 2-core machine): " + ", ".join(
        f"{k} {np.median(v):.0f}" for k, v in fits.items()))  # fmt: skip
    lines.append(f"Baseline hyper-parameters chosen per seed: {json.dumps(chosen_all)}")
    out = {"summary": summary, "chosen": chosen_all, "fit_seconds": fits}
    if args.speed:
        head = f"Speed (seed {speed_seed} split, median of {args.speed_repeats} interleaved repeats"
        lines += ["", head + "):", "", "| step | wall s | CPU s |", "|---|---:|---:|"]
        lines += [f"| {k} | {w:.1f} | {c:.1f} |" for k, (w, c) in med.items()]
        i = med["(i) RankBoost: fit + recommend_all(k=10)"]
        for key in [k for k in med if k.startswith(("(ii)", "(iii)"))]:
            lines.append(f"\n(i) / {key.split()[0]}: wall {i[0] / med[key][0]:.2f}x, "
                         f"CPU {i[1] / med[key][1]:.2f}x")  # fmt: skip
        out["speed_median"], out["speed_raw"] = med, raw
    text = "\n".join(lines)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({**out, "table": text}, indent=1))
    if args.plot and summary:
        plot(summary, args.plot, command)


if __name__ == "__main__":
    with threadpool_limits(limits=1):
        main()
