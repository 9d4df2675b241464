"""Movie recommendation on MovieLens 100K: Freund et al. (2003) section 6.2, three studies.

Run (37 s on 2 cores in the last run; the docs record each run's time)::

    PYTHONPATH=src .venv/bin/python experiments/movies.py --write-docs

Studies (seeded; targets and feature users are always disjoint):

1. number of feature users F in {50, 100, 200, 400, 600, 800};
2. feature density: 100 feature users drawn from one rating-count group at a time;
3. feedback density: n in {10, 20, 40, 80, 160} training ratings per target.

``--pooled-seeds 0,1,2 --out FILE`` runs only the default pooled model (issue 24) in the
studies over those seeds, with paired tests against VSIM and Surprise's KNN per study.

Methods: RankBoost (:class:`rankboost.recommend.RankBoostRecommender`), VSIM (Breese et al.
1998), nearest neighbour, least-squares linear regression, and scikit-surprise's user-based
KNNWithMeans when it is installed. Metrics on each target's test movies: disagreement and the
expected AP, PROT and coverage under random tie-breaking (good = rating >= 4). See
docs/movies.md for the protocol and the discussion.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LinearRegression
from threadpoolctl import threadpool_limits

from rankboost import TrainingStoppedWarning
from rankboost.datasets import load_movielens
from rankboost.metrics import (
    disagreement,
    expected_average_precision,
    expected_coverage,
    expected_prot,
    ndcg_score,
    precision_at_k,
)
from rankboost.recommend import RankBoostRecommender, user_ranking_problem

try:  # optional real-world peer
    from surprise import Dataset, KNNWithMeans, Reader

    SURPRISE = True
except ImportError:  # pragma: no cover
    SURPRISE = False

ROOT = Path(__file__).resolve().parents[1]
# the shared data folder sits beside the repository (override with RANKBOOST_DATA)
DATA = (
    Path(
        os.environ.get(
            "RANKBOOST_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"
        )
    )
    / "movielens"
    / "ml-100k"
    / "u.data.gz"
)
GOOD = 4.0  # a test movie is "good" when the target rated it >= 4
METRICS = ("disagreement", "AP", "PROT", "coverage", "NDCG@10", "P@10")
N_TARGETS = 120


# ----------------------------------------------------------------------------- protocol


@dataclass
class Config:
    """One point of a study: targets, their train/test items, the feature users."""

    label: str
    targets: np.ndarray
    train: dict[int, np.ndarray]  # target -> training item indices
    test: dict[int, np.ndarray]  # target -> test item indices
    features: np.ndarray


def masked(R: sp.csr_matrix, cfg: Config) -> sp.csr_matrix:
    """R without the targets' non-training ratings (nothing about the test can leak)."""
    R = R.tolil(copy=True)
    for u in cfg.targets:
        keep = set(cfg.train[u].tolist())
        for j in R.rows[u][:]:
            if j not in keep:
                R[u, j] = 0
    out = sp.csr_matrix(R)
    out.eliminate_zeros()  # MovieLens ratings are 1..5, so 0 only marks removed entries
    return out


def half_split(R, targets, rng):
    """Study 1 and 2: a random half of each target's ratings is feedback, the rest test."""
    train, test = {}, {}
    for u in targets:
        items = rng.permutation(R[u].indices)
        h = items.shape[0] // 2
        train[u], test[u] = np.sort(items[:h]), np.sort(items[h:])
    return train, test


# ----------------------------------------------------------------------------- baselines


def vsim(Xtr, ytr, Xte, means):
    """Vector similarity (Breese et al. 1998, eq. 1 and the cosine weight of section 2.1.2).

    Weight of feature user f: cosine of the target's and f's ratings on co-rated training
    movies. Prediction: sum_f w_f (v_fj - mean_f) / sum_f |w_f| over feature users who rated
    movie j (the target's own mean is a constant and does not change its ranking); 0 when
    nobody rated j.
    """
    M = ~np.isnan(Xtr)
    X0 = np.where(M, Xtr, 0.0)
    num = ytr @ X0
    den = np.sqrt((ytr**2) @ M * (X0**2).sum(axis=0))
    w = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
    Mte = ~np.isnan(Xte)
    dev = np.where(Mte, Xte - means, 0.0)
    norm = Mte @ np.abs(w)
    return np.divide(dev @ w, norm, out=np.zeros(Xte.shape[0]), where=norm > 0)


def nearest_neighbour(Xtr, ytr, Xte, means):
    """The single feature user whose ratings best order the target's training movies.

    Score of a movie: the neighbour's rating, or the neighbour's mean rating when the
    neighbour did not rate it (the default for unrated movies); the neighbour is the feature
    user with the smallest training disagreement of that scoring rule (ties: lowest index).
    """
    d = Xtr.shape[1]
    S = np.where(np.isnan(Xtr), means, Xtr)
    n = ytr.shape[0]
    dis = disagreement(np.tile(ytr, d), S.T.ravel(), np.repeat(np.arange(d), n), per_query=True)
    f = int(np.argmin(dis))
    return np.where(np.isnan(Xte[:, f]), means[f], Xte[:, f])


def linear_regression(Xtr, ytr, Xte, means):
    """Least squares on mean-centred ratings, 0 (= the feature user's mean) where unrated.

    With more feature users than training movies, sklearn's lstsq returns the minimum-norm
    solution.
    """
    A = np.where(np.isnan(Xtr), 0.0, Xtr - means)
    B = np.where(np.isnan(Xte), 0.0, Xte - means)
    return LinearRegression().fit(A, ytr).predict(B)


BASELINES = {"VSIM": vsim, "NN": nearest_neighbour, "LinReg": linear_regression}


def surprise_scores(Rtr, cfg):
    """User-based KNNWithMeans (pearson, k=40) on feature users + targets' training ratings.

    Similarities between two targets are zeroed after fitting, so every target's
    neighbours are feature users only, as for the other methods.
    """
    users = np.concatenate([cfg.features, cfg.targets])
    sub = Rtr[users].tocoo()
    import pandas as pd

    frame = pd.DataFrame({"u": users[sub.row], "i": sub.col, "r": sub.data})
    data = Dataset.load_from_df(frame[["u", "i", "r"]], Reader(rating_scale=(1, 5)))
    trainset = data.build_full_trainset()
    algo = KNNWithMeans(k=40, sim_options={"name": "pearson", "user_based": True}, verbose=False)
    algo.fit(trainset)
    inner = np.array([trainset.to_inner_uid(int(u)) for u in cfg.targets])
    algo.sim[np.ix_(inner, inner)] = 0.0
    algo.sim[inner, inner] = 1.0
    out = {}
    for u in cfg.targets:
        out[u] = np.array([algo.predict(int(u), int(j)).est for j in cfg.test[u]])
    return out


# ----------------------------------------------------------------------------- evaluation


def metrics_of(y, s, q):
    """Mean over targets of the four metrics (targets with no good test movie skipped)."""
    kw = {"relevance_threshold": GOOD, "empty": "skip"}
    return {
        "disagreement": float(disagreement(y, s, q)),
        "AP": float(expected_average_precision(y, s, q, **kw)),
        "PROT": float(expected_prot(y, s, q, **kw)),
        "coverage": float(expected_coverage(y, s, q, **kw)),
        # standard recommender metrics on the held-out ratings (ties in expectation)
        "NDCG@10": float(ndcg_score(y, s, q, k=10, gain="exp2")),
        "P@10": float(precision_at_k(y, s, q, k=10, relevance_threshold=GOOD)),
    }


#: RankBoost configurations reported as separate rows. "paper" = the paper's learner
#: (thresholds of single feature users, learned q_def, equal pair weights) with the rounds
#: and WeakLearn.cum the rounds pilot chose; "best" = the configuration the configuration
#: pilot chose (docs/movies.md), on seeds other than the reported ones.
PAPER = {"mode": "per_user", "n_estimators": 50, "positive_cumulative": True}
CROWD = ("centred_mean", "count", "vsim")
#: the feature users' columns (unrated = the user's mean) plus the crowd and VSIM columns
MIXED = {
    "mode": "per_user",
    "n_estimators": 25,
    "positive_cumulative": True,
    "unrated": "user_mean",
    "extra_features": CROWD,
}
#: the pilot's choice: RankBoost combining the crowd and VSIM rankers, real-valued rankers
BEST = {**MIXED, "n_estimators": 20, "user_features": False, "weak_ranker": "feature"}
#: the pooled model (issue 24): rated-above-unrated and rating pairs in one layered
#: feedback, and the variant trained on rating pairs only
POOLED = {"feedback": "both"}
POOLED_RATINGS = {"feedback": "ratings"}
#: the default (feedback="auto"): predict/rank use its "ratings" model; the row
#: DEFAULT_TOP_N scores the same fit's top-N ("liked") model, the one recommend uses
DEFAULT = "RankBoost (pooled, default)"
DEFAULT_TOP_N = "RankBoost (pooled, default's recommend model)"


def top_n_scores(rec, u, items):
    """The scores ``rec.recommend`` ranks by (``model_`` plus its EASE prior) for given items."""
    return rec._fits[0].score(rec._base.scores(np.array([u]))[0][items])


def fit_rankboost(Rtr, cfg, n_jobs, **kw):
    if kw.get("mode", "pooled") == "pooled":
        # only the feature users' and the targets' (training) ratings, as for the others
        keep = np.zeros(Rtr.shape[0])
        keep[cfg.features] = keep[cfg.targets] = 1.0
        Rtr = sp.csr_matrix(sp.diags(keep) @ Rtr)
        Rtr.eliminate_zeros()
        # one model for all: the feature users' queries train it too (none is a test rating)
        targets = np.concatenate([cfg.targets, cfg.features])
    else:
        targets = cfg.targets
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        return RankBoostRecommender(
            feature_users=cfg.features, rating_range=(1, 5), invalid_targets="skip",
            n_jobs=n_jobs, **kw,
        ).fit(Rtr, target_users=targets)  # fmt: skip


def run_config(R, cfg, args, counts, variants=None, per_target=None):
    """Scores of every method on every target's test movies; returns metrics per method.

    ``variants`` maps a row name to RankBoostRecommender parameters (default: the paper and
    the best configuration); ``per_target`` (a dict) receives each method's per-target
    disagreement, for paired tests.
    """
    if variants is None and args.pooled_only:
        variants = {
            "RankBoost (pooled, both)": POOLED,
            "RankBoost (pooled, ratings)": POOLED_RATINGS,
        }
    if variants is None:
        variants = {
            "RankBoost (paper)": PAPER,
            "RankBoost (users + crowd)": MIXED,
            "RankBoost (best)": BEST,
            "RankBoost (pooled, both)": POOLED,
            "RankBoost (pooled, ratings)": POOLED_RATINGS,
        }
    Rtr = masked(R, cfg)
    t0 = time.perf_counter()
    recs = {name: fit_rankboost(Rtr, cfg, args.n_jobs, **kw) for name, kw in variants.items()}
    t_rb = time.perf_counter() - t0
    first = next(iter(recs.values()))
    for k in ("n_skipped", "n_features_dropped", "n_stopped_early"):
        counts[k] = counts.get(k, 0) + first.report_.get(k, 0)
    fitted = [u for u in cfg.targets if all(u in r.models_ for r in recs.values())]
    counts["n_target_problems"] = counts.get("n_target_problems", 0) + len(fitted)
    means = np.asarray(Rtr[cfg.features].sum(axis=1)).ravel() / np.maximum(
        np.diff(Rtr[cfg.features].indptr), 1
    )
    two = DEFAULT in recs and recs[DEFAULT].rating_model_ is not recs[DEFAULT].model_
    scores = {m: [] for m in (*variants, *((DEFAULT_TOP_N,) if two else ()), *BASELINES, "random")}
    ys, qs = [], []
    t0 = time.perf_counter()
    for u in fitted:
        n_tr = cfg.train[u].shape[0]
        X, y = user_ranking_problem(
            Rtr, u, cfg.features, np.concatenate([cfg.train[u], cfg.test[u]])
        )
        Xtr, ytr, Xte = X[:n_tr], y[:n_tr], X[n_tr:]
        yte = R[u, cfg.test[u]].toarray().ravel()
        for name, rec in recs.items():
            scores[name].append(rec.predict(u, cfg.test[u]))
        if two:
            scores[DEFAULT_TOP_N].append(top_n_scores(recs[DEFAULT], u, cfg.test[u]))
        for name, fn in BASELINES.items():
            scores[name].append(fn(Xtr, ytr, Xte, means))
        scores["random"].append(np.zeros(yte.shape[0]))  # all tied: expectation = random order
        ys.append(yte)
        qs.append(np.full(yte.shape[0], u))
    t_base = time.perf_counter() - t0
    t_sur = 0.0
    if SURPRISE and not args.no_surprise:
        t0 = time.perf_counter()
        sur = surprise_scores(Rtr, cfg)
        scores["KNN (surprise)"] = [sur[u] for u in fitted]
        t_sur = time.perf_counter() - t0
    y, q = np.concatenate(ys), np.concatenate(qs)
    res = {m: metrics_of(y, np.concatenate(s), q) for m, s in scores.items()}
    if per_target is not None:
        for m, s in scores.items():
            sc = np.concatenate(s)
            per_target[m] = {
                "disagreement": disagreement(y, sc, q, per_query=True),
                "AP": expected_average_precision(
                    y, sc, q, relevance_threshold=GOOD, empty="skip", per_query=True
                ),
            }
        per_target["_n_train"] = np.array([cfg.train[u].shape[0] for u in fitted])
    counts["n_no_good_test"] = counts.get("n_no_good_test", 0) + int(
        sum((yy >= GOOD).sum() == 0 for yy in ys)
    )
    print(
        f"  {cfg.label:>12}: {len(fitted)} targets, RankBoost fit {t_rb:.1f}s "
        f"({len(recs)} configurations), baselines {t_base:.1f}s, surprise {t_sur:.1f}s",
        file=sys.stderr,
    )
    return res


#: the configurations the configuration pilot compares (docs/movies.md, "Diagnosis")
PILOT_VARIANTS = {
    "paper (50 rounds, cum)": PAPER,
    "plain WeakLearn": {**PAPER, "positive_cumulative": False},
    "unrated = user mean": {**PAPER, "unrated": "user_mean"},
    "gap pair weights": {**PAPER, "pair_weight": "gap"},
    "real-valued + thresholds": {**PAPER, "weak_ranker": "both"},
    "lr 0.1, 300 rounds": {**PAPER, "n_estimators": 300, "learning_rate": 0.1},
    "+ crowd, vsim": {**PAPER, "extra_features": CROWD},
    "user mean + crowd, vsim": {**PAPER, "unrated": "user_mean", "extra_features": CROWD},
    "users + crowd: user mean + crowd, vsim, 25 rounds": MIXED,
    "users + crowd, gap weights": {**MIXED, "pair_weight": "gap"},
    "users + crowd, 100 rounds": {**MIXED, "n_estimators": 100},
    "users + crowd, max 100 feature users": {**MIXED, "max_feature_users": 100},
    "best: only crowd, vsim (real-valued, 20 rounds)": BEST,
    "only vsim (real-valued, 1 round)": {
        **BEST, "extra_features": ("vsim",), "n_estimators": 1,
    },
}  # fmt: skip


def diagnose(R, args):
    """Statistics of the learned models: study 1, F=800, seed ``args.seed``.

    For the paper configuration, the same with real-valued rankers allowed, and the
    users + crowd configuration: how often a chosen feature user abstains on the target's
    training and test movies, the share of rankers with ``q_def = 1``, the distinct feature
    users a model uses, the share of rounds on the extra columns and on real-valued rankers.
    """
    cfgs, *_ = study_features(R, np.random.default_rng(args.seed), args)
    cfg = cfgs[-1]
    Rtr = masked(R, cfg)
    lines = [
        f"Diagnosis, study 1 {cfg.label}, seed {args.seed}, {len(cfg.targets)} targets:",
        "",
        "| configuration | abstain (train) | abstain (test) | q_def = 1 | distinct users "
        "(median) | rounds on extra columns | real-valued rounds |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    variants = {"paper": PAPER, "paper, weak_ranker='both'": {**PAPER, "weak_ranker": "both"},
                "users + crowd": MIXED}  # fmt: skip
    for name, kw in variants.items():
        rec = fit_rankboost(Rtr, cfg, args.n_jobs, **kw)
        ab_tr, ab_te, q1, n_users, extra, real = [], [], [], [], [], []
        for u in cfg.targets:
            model = rec.models_[u]
            f = np.asarray(model.rounds.feature)
            d = len(rec.feature_users_[u])
            users = f[f < d]
            Xtr, _ = user_ranking_problem(Rtr, u, rec.feature_users_[u], cfg.train[u])
            Xte, _ = user_ranking_problem(Rtr, u, rec.feature_users_[u], cfg.test[u])
            if users.size:
                ab_tr.append(np.isnan(Xtr[:, users]).mean())
                ab_te.append(np.isnan(Xte[:, users]).mean())
                q1.append(np.mean(np.asarray(model.rounds.default)[f < d] == 1))
            n_users.append(np.unique(users).shape[0])
            extra.append(np.mean(f >= d))
            real.append(np.mean([h.kind == "feature" for h in model.rankers]))
        lines.append(
            f"| {name} | {np.mean(ab_tr):.3f} | {np.mean(ab_te):.3f} | {np.mean(q1):.3f} | "
            f"{np.median(n_users):.0f} | {np.mean(extra):.3f} | {np.mean(real):.3f} |"
        )
    share = np.diff(R.indptr)[cfg.features] / R.shape[1]
    n_train = [cfg.train[u].shape[0] for u in cfg.targets]
    lines += [
        "",
        f"Share of the movies a feature user rated: median {np.median(share):.3f}, mean "
        f"{share.mean():.3f}; training ratings per target: median {np.median(n_train):.0f}.",
    ]
    return "\n".join(lines)


def config_pilot(R, args, variants=None):
    """Compare RankBoost configurations on study 1 drawn with seed ``args.seed + 1000``."""
    variants = PILOT_VARIANTS if variants is None else variants
    rng = np.random.default_rng(args.seed + 1000)
    configs, *_ = study_features(R, rng, args)
    keep = [c for c in configs if c.label in args.pilot_sizes.split(",")]
    rows, counts = {}, {}
    for cfg in keep:
        rows[cfg.label] = run_config(R, cfg, args, counts, variants)
    methods = list(next(iter(rows.values())))
    lines = ["| method | " + " | ".join(rows) + " |", "|---|" + "---:|" * len(rows)]
    for m in methods:
        cells = [f"{rows[lab][m]['disagreement']:.4f} / {rows[lab][m]['AP']:.3f}" for lab in rows]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    return (
        f"Configuration pilot, seed {args.seed + 1000}, {args.n_targets} targets "
        "(disagreement / E[AP]):\n\n" + "\n".join(lines)
    )


# ----------------------------------------------------------------------------- studies


def study_features(R, rng, args):
    counts = np.diff(R.indptr)
    targets = np.sort(rng.choice(np.flatnonzero(counts >= 40), args.n_targets, replace=False))
    pool = rng.permutation(np.setdiff1d(np.arange(R.shape[0]), targets))
    train, test = half_split(R, targets, rng)
    sizes = [s for s in (50, 100, 200, 400, 600, 800) if s <= pool.shape[0]]
    return (
        [Config(f"F={f}", targets, train, test, np.sort(pool[:f])) for f in sizes],
        targets,
        pool,
        (train, test),
    )


def study_feature_density(R, rng, targets, pool, split, group_size):
    counts = np.diff(R.indptr)
    edges = [(20, 29), (30, 49), (50, 99), (100, 199), (200, 10**6)]
    out = []
    for lo, hi in edges:
        group = pool[(counts[pool] >= lo) & (counts[pool] <= hi)]
        feats = np.sort(rng.choice(group, min(group_size, group.shape[0]), replace=False))
        label = f"{lo}-{hi}" if hi < 10**6 else f"{lo}+"
        out.append(Config(label, targets, split[0], split[1], feats))
    return out


def study_feedback(R, rng, args):
    counts = np.diff(R.indptr)
    eligible = np.flatnonzero(counts >= 200)
    targets = np.sort(rng.choice(eligible, min(args.n_targets, eligible.shape[0]), replace=False))
    pool = np.setdiff1d(np.arange(R.shape[0]), targets)
    feats = np.sort(rng.choice(pool, 400, replace=False))
    perm = {u: rng.permutation(R[u].indices) for u in targets}
    test = {u: np.sort(perm[u][160:]) for u in targets}
    return [
        Config(f"n={n}", targets, {u: np.sort(perm[u][:n]) for u in targets}, test, feats)
        for n in (10, 20, 40, 80, 160)
    ]


def pilot(R, args):
    """Choose rounds and WeakLearn vs WeakLearn.cum on a separate seed (not the reported one).

    Test disagreement and E[AP] after 10..300 rounds, for study 1's F=400 and study 3's n=40
    configurations drawn with seed ``args.seed + 1000``.
    """
    rng = np.random.default_rng(args.seed + 1000)
    c1, *_ = study_features(R, rng, args)
    c3 = study_feedback(R, rng, args)
    stages = (10, 25, 50, 100, 200, 300)
    lines = ["| config | WeakLearn | " + " | ".join(f"T={t}" for t in stages) + " |",
             "|---|---|" + "---:|" * len(stages)]  # fmt: skip
    for cfg in (c1[3], c3[2]):
        Rtr = masked(R, cfg)
        for cum in (False, True):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TrainingStoppedWarning)
                rec = RankBoostRecommender(
                    mode="per_user", feature_users=cfg.features, n_estimators=max(stages),
                    positive_cumulative=cum, invalid_targets="skip", n_jobs=args.n_jobs,
                ).fit(Rtr, target_users=cfg.targets)  # fmt: skip
            fitted = [u for u in cfg.targets if u in rec.models_]
            y = np.concatenate([R[u, cfg.test[u]].toarray().ravel() for u in fitted])
            q = np.concatenate([np.full(cfg.test[u].shape[0], u) for u in fitted])
            cells = []
            for t in stages:
                s = []
                for u in fitted:
                    X, _ = user_ranking_problem(Rtr, u, rec.feature_users_[u], cfg.test[u])
                    m = rec.models_[u]
                    s.append(m.decision_function(X, n_rounds=min(t, m.n_rounds)))
                r = metrics_of(y, np.concatenate(s), q)
                cells.append(f"{r['disagreement']:.3f} / {r['AP']:.3f}")
            lines.append(
                f"| {cfg.label} | {'cum' if cum else 'plain'} | " + " | ".join(cells) + " |"
            )
    return "Pilot (disagreement / E[AP]):\n\n" + "\n".join(lines)


# ----------------------------------------------------------------------------- output


def seeds_table(
    seeded, n_targets, best="RankBoost (best)", peers=("VSIM", "KNN (surprise)"),
    title="Study 1", column="F", others=(),
):  # fmt: skip
    """A study over seeds: means, and a paired Wilcoxon test over (seed, target) pairs."""
    from scipy.stats import wilcoxon

    seeds = sorted(seeded)
    labels = list(seeded[seeds[0]][0])
    peers = [m for m in peers if m in seeded[seeds[0]][0][labels[0]]]
    first = seeded[seeds[0]][0][labels[0]]
    methods = [m for m in ("RankBoost (paper)", "RankBoost (users + crowd)", "RankBoost (best)",
                           "RankBoost (pooled, ratings)", *others)
                if m in first and m != best]  # fmt: skip
    methods += [best, *peers]
    head = [column] + [f"{m} dis." for m in methods]
    for m in peers:
        head.append(f"pooled - {m}: mean diff (p)")
    head += [f"{m} E[AP] / E[PROT]" for m in (best, *peers)]
    lines = [
        f"#### {title} over seeds {seeds} ({len(seeds)} x {n_targets} targets)",
        "",
        "Means over seeds of each seed's mean over targets; the paired test compares the "
        f"RankBoost row {best!r} with each peer target by target (Wilcoxon "
        "signed-rank, two-sided, over every (seed, target) with a crucial test pair; "
        "negative difference = RankBoost better).",
        "",
        "| " + " | ".join(head) + " |",
        "|---|" + "---:|" * (len(head) - 1),
    ]
    for lab in labels:
        cells = [lab]
        for m in methods:
            cells.append(f"{np.mean([seeded[sd][0][lab][m]['disagreement'] for sd in seeds]):.4f}")
        for m in peers:
            d = np.concatenate(
                [seeded[sd][1][lab][best]["disagreement"] - seeded[sd][1][lab][m]["disagreement"]
                 for sd in seeds]
            )  # fmt: skip
            d = d[np.isfinite(d)]
            p = wilcoxon(d).pvalue if np.any(d != 0) else 1.0
            cells.append(f"{d.mean():+.4f} ({p:.2g})")
        for m in (best, *peers):
            ap_ = np.mean([seeded[sd][0][lab][m]["AP"] for sd in seeds])
            pr = np.mean([seeded[sd][0][lab][m]["PROT"] for sd in seeds])
            cells.append(f"{ap_:.3f} / {pr:.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def size_table(per, seed):
    """Where RankBoost loses: mean disagreement by the target's number of training ratings."""
    lab = list(per)[-1]
    n = per[lab]["_n_train"]
    methods = [m for m in ("RankBoost (paper)", "RankBoost (users + crowd)", "RankBoost (best)",
                           "RankBoost (pooled, both)", "VSIM", "KNN (surprise)")
               if m in per[lab]]  # fmt: skip
    edges = [(0, 34), (35, 62), (63, 119), (120, 10**6)]
    lines = [
        f"#### Where RankBoost loses: study 1, {lab}, seed {seed}, by training ratings",
        "",
        "| training ratings | targets | " + " | ".join(methods) + " |",
        "|---|---:|" + "---:|" * len(methods),
    ]
    for lo, hi in edges:
        m_ = (n >= lo) & (n <= hi)
        cells = [f"{np.nanmean(per[lab][m]['disagreement'][m_]):.4f}" for m in methods]
        span = f"{lo}-{hi}" if hi < 10**6 else f"{lo}+"
        lines.append(f"| {span} | {int(m_.sum())} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def table(title, rows):
    methods = list(next(iter(rows.values())))
    lines = [f"#### {title}", ""]
    for metric in METRICS:
        lines.append(
            f"**{metric}** ({'lower' if metric == 'disagreement' else 'higher'} is better)"
        )
        lines.append("")
        lines.append("| | " + " | ".join(methods) + " |")
        lines.append("|---|" + "---:|" * len(methods))
        for label, res in rows.items():
            vals = [res[m][metric] for m in methods if m != "random"]
            best = min(vals) if metric == "disagreement" else max(vals)
            cells = []
            for m in methods:
                v = res[m][metric]
                cells.append(f"**{v:.3f}**" if m != "random" and v == best else f"{v:.3f}")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def plot(name, title, xlabel, rows, xs=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(rows)
    x = np.arange(len(labels)) if xs is None else np.asarray(xs)
    methods = [m for m in next(iter(rows.values())) if m != "random"]
    fig, axes = plt.subplots(2, 3, figsize=(14, 7))
    axes = axes.ravel()
    for ax, metric in zip(axes, METRICS, strict=True):
        for m in methods:
            ax.plot(x, [rows[lab][m][metric] for lab in labels], marker="o", label=m)
        ax.plot(x, [rows[lab]["random"][metric] for lab in labels], "k--", label="random")
        ax.set_title(metric)
        ax.set_xlabel(xlabel)
        if xs is None:
            ax.set_xticks(x, labels, rotation=30)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    out = ROOT / "docs" / "img" / f"movies_{name}.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def pooled_seeds(R, args):
    """The default pooled model in studies 1-3 over seeds, with paired tests (issue 24).

    Per seed, each study's configurations are drawn as in a single-seed run of that seed;
    rows: the default's ``predict`` (its "ratings" model), the same fit's top-N model, VSIM,
    KNN (surprise) and the other baselines. Writes the tables to ``--out`` after every
    (seed, study), so a partial run still leaves its results.
    """
    seeds = [int(x) for x in args.pooled_seeds.split(",") if x]
    variants = {DEFAULT: {}}
    names = {"1": ("Study 1", "F"), "2": ("Study 2", "ratings per feature user"),
             "3": ("Study 3", "training ratings per target")}  # fmt: skip
    per_study = {st: {} for st in args.studies}
    t0 = time.perf_counter()
    for sd in seeds:
        rng = np.random.default_rng(sd)
        configs1, targets, pool, split = study_features(R, rng, args)
        for st in args.studies:
            print(f"seed {sd}, study {st}", file=sys.stderr, flush=True)
            if st == "1":
                cfgs = configs1
            elif st == "2":
                cfgs = study_feature_density(
                    R, np.random.default_rng([sd, 2]), targets, pool, split, args.group_size
                )
            else:
                cfgs = study_feedback(R, np.random.default_rng([sd, 3]), args)
            p = {c.label: {} for c in cfgs}
            rows = {c.label: run_config(R, c, args, {}, variants, per_target=p[c.label])
                    for c in cfgs}  # fmt: skip
            per_study[st][sd] = (rows, p)
            out = []
            for st2, seeded in per_study.items():
                if seeded:
                    title, column = names[st2]
                    out.append(seeds_table(seeded, args.n_targets, best=DEFAULT, title=title,
                                           column=column, others=(DEFAULT_TOP_N,)))  # fmt: skip
            text = "\n".join(out) + (
                f"\nDefault = RankBoostRecommender() (feedback='auto'); seeds done so far: "
                f"{ {k: sorted(v) for k, v in per_study.items()} }; runtime "
                f"{time.perf_counter() - t0:.0f} s (n_jobs={args.n_jobs}).\n"
            )
            if args.out:
                write_atomic(args.out, text)
            print(text, flush=True)


def write_atomic(path, text):
    tmp = Path(str(path) + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-targets", type=int, default=N_TARGETS)
    ap.add_argument("--group-size", type=int, default=100)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--no-surprise", action="store_true")
    ap.add_argument("--studies", default="123")
    ap.add_argument(
        "--extra-seeds", default="1,2", help="more seeds of study 1 for the paired test"
    )
    ap.add_argument(
        "--write-docs",
        action="store_true",
        help="update the docs/movies.md tables and the docs/img/movies_*.png figures",
    )
    ap.add_argument(
        "--pooled-only", action="store_true", help="RankBoost rows: only the pooled model's"
    )
    ap.add_argument("--pilot", action="store_true", help="only run the rounds pilot")
    ap.add_argument("--config-pilot", action="store_true", help="only run the configuration pilot")
    ap.add_argument("--pilot-sizes", default="F=200,F=400,F=800")
    ap.add_argument("--diagnose", action="store_true", help="only print the model statistics")
    ap.add_argument("--json", type=Path, default=None, help="also dump the results as JSON")
    ap.add_argument(
        "--pooled-seeds", default="", help="only the default pooled model over these seeds"
    )
    ap.add_argument("--out", type=Path, default=None, help="--pooled-seeds: tables file")
    args = ap.parse_args(argv)

    t_start = time.perf_counter()
    R, _, _ = load_movielens(DATA).to_matrix()
    if args.pooled_seeds:
        pooled_seeds(R, args)
        return
    if args.diagnose:
        print(diagnose(R, args))
        return
    if args.config_pilot:
        print(config_pilot(R, args))
        print(f"pilot runtime {time.perf_counter() - t_start:.0f} s", file=sys.stderr)
        return
    if args.pilot:
        print(pilot(R, args))
        print(f"pilot runtime {time.perf_counter() - t_start:.0f} s", file=sys.stderr)
        return
    rng = np.random.default_rng(args.seed)
    out, results, counts = [], {}, {}
    figures = []  # plot() arguments: drawn into docs/img/ (tracked) only with --write-docs
    configs1, targets, pool, split = study_features(R, rng, args)
    rng2 = np.random.default_rng([args.seed, 2])
    rng3 = np.random.default_rng([args.seed, 3])
    if "1" in args.studies:
        print("study 1: number of feature users", file=sys.stderr)
        per = {c.label: {} for c in configs1}
        rows = {c.label: run_config(R, c, args, counts, per_target=per[c.label]) for c in configs1}
        results["features"] = rows
        out.append(table("Study 1: number of feature users", rows))
        seeded = {args.seed: (rows, per)}
        for sd in [int(x) for x in args.extra_seeds.split(",") if x]:
            print(f"study 1, seed {sd}", file=sys.stderr)
            cfgs, *_ = study_features(R, np.random.default_rng(sd), args)
            p = {c.label: {} for c in cfgs}
            seeded[sd] = ({c.label: run_config(R, c, args, {}, per_target=p[c.label])
                           for c in cfgs}, p)  # fmt: skip
        out.append(seeds_table(seeded, args.n_targets, best="RankBoost (pooled, both)"))
        out.append(size_table(per, args.seed))
        figures.append(("features", "Study 1: number of feature users", "feature users",
                        rows, [int(k[2:]) for k in rows]))  # fmt: skip
    if "2" in args.studies:
        print("study 2: feature density", file=sys.stderr)
        configs2 = study_feature_density(R, rng2, targets, pool, split, args.group_size)
        rows = {c.label: run_config(R, c, args, counts) for c in configs2}
        results["feature_density"] = rows
        out.append(table(f"Study 2: feature density ({args.group_size} feature users of "
                         "each rating-count group)", rows))  # fmt: skip
        figures.append(
            ("feature_density", "Study 2: feature density", "ratings per feature user", rows)
        )
    if "3" in args.studies:
        print("study 3: feedback density", file=sys.stderr)
        rows = {c.label: run_config(R, c, args, counts) for c in study_feedback(R, rng3, args)}
        results["feedback_density"] = rows
        out.append(table("Study 3: feedback density (400 feature users)", rows))
        figures.append(("feedback", "Study 3: feedback density", "training ratings per target",
                        rows, [int(k[2:]) for k in rows]))  # fmt: skip
    elapsed = time.perf_counter() - t_start
    footer = (
        f"Seed {args.seed}, {args.n_targets} targets per study (study 1 also seeds "
        f"{args.extra_seeds}), RankBoost (paper) = {PAPER}, RankBoost (users + crowd) = "
        f"{MIXED}, RankBoost (best) = {BEST}, RankBoost (pooled, both) = {POOLED}, "
        f"RankBoost (pooled, ratings) = {POOLED_RATINGS}; skips "
        f"and counts over the seed-{args.seed} configurations (the paper row's fits): "
        f"{json.dumps(counts)}; total runtime "
        f"{elapsed:.0f} s (n_jobs={args.n_jobs})."
    )
    text = "\n\n".join(out) + "\n\n" + footer + "\n"
    print(text)
    if args.json:
        args.json.write_text(json.dumps({"results": results, "counts": counts}, indent=1))
    if args.write_docs:
        for fig_args in figures:
            plot(*fig_args)
        doc = ROOT / "docs" / "movies.md"
        src = doc.read_text()
        block = f"<!-- tables:begin -->\n{text}<!-- tables:end -->"
        doc.write_text(re.sub(r"<!-- tables:begin -->.*<!-- tables:end -->", lambda m: block,
                              src, flags=re.S))  # fmt: skip


if __name__ == "__main__":
    # one BLAS thread: the least-squares fits are small, and threads only contend here
    with threadpool_limits(limits=1):
        main()
