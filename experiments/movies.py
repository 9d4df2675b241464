"""Movie recommendation on MovieLens 100K: Freund et al. (2003) section 6.2, three studies.

Run (37 s on 2 cores in the last run; the docs record each run's time)::

    PYTHONPATH=src .venv/bin/python experiments/movies.py --write-docs

Studies (seeded; targets and feature users are always disjoint):

1. number of feature users F in {50, 100, 200, 400, 600, 800};
2. feature density: 100 feature users drawn from one rating-count group at a time;
3. feedback density: n in {10, 20, 40, 80, 160} training ratings per target.

``--pooled-seeds 0,1,2 --out FILE`` runs only the default pooled model (issue 24) in the
studies over those seeds, with paired tests against VSIM and Surprise's KNN per study, over
the pooled seeds and within each seed (issue 35); ``--json FILE`` then also keeps each
method's per-target disagreement by study, seed and configuration.

Methods: RankBoost (:class:`rankboost.recommend.RankBoostRecommender`), VSIM (Breese et al.
1998), nearest neighbour, least-squares linear regression, and scikit-surprise's user-based
KNNWithMeans when it is installed. Metrics on each target's test movies: disagreement and the
expected AP, PROT and coverage under random tie-breaking (good = rating >= 4). See
docs/movies.md for the protocol and the discussion.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from rankboost import TrainingStoppedWarning
from rankboost.datasets import load_movielens
from rankboost.metrics import (
    disagreement,
    expected_average_precision,
)
from rankboost.recommend import RankBoostRecommender, user_ranking_problem

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling modules below
from movies_protocol import (  # noqa: E402
    BASELINES,
    DATA,
    GOOD,
    N_TARGETS,
    ROOT,
    SURPRISE,
    Config,
    half_split,
    masked,
    metrics_of,
    surprise_scores,
)
from movies_report import (  # noqa: E402
    per_seed_table,
    plot,
    seeds_table,
    size_table,
    table,
    write_atomic,
)

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
                    out.append(per_seed_table(seeded, args.n_targets, best=DEFAULT,
                                              title=title, column=column))  # fmt: skip
            text = "\n".join(out) + (
                f"\nDefault = RankBoostRecommender() (feedback='auto'); seeds done so far: "
                f"{ {k: sorted(v) for k, v in per_study.items()} }; runtime "
                f"{time.perf_counter() - t0:.0f} s (n_jobs={args.n_jobs}).\n"
            )
            if args.out:
                write_atomic(args.out, text)
            if args.json:  # per-target disagreement, to redo the paired tests from the file
                dump = {st2: {str(sd2): {lab: {m: [None if np.isnan(x) else x
                                                  for x in v["disagreement"].tolist()]
                                               for m, v in pt.items() if not m.startswith("_")}
                                         for lab, pt in per.items()}
                              for sd2, (_, per) in seeded.items()}
                        for st2, seeded in per_study.items()}  # fmt: skip
                write_atomic(args.json, json.dumps(dump))
            print(text, flush=True)


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
