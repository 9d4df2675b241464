"""Every user, fast, sparse: RankBoostRecommender on all MovieLens users and at 100x scale.

Two parts, measured in one run:

1. **MovieLens 100K, every user.** Each of the 943 users' ratings is split at random
   (seed 0) into 80% training / 20% held out. ``RankBoostRecommender`` (the pooled
   default, and the per-user paper and best configurations of docs/movies.md; every other
   user is a feature user) is fitted for all 943 users from the sparse training matrix, then
   ``recommend_all(10)`` ranks every unrated item of every user. Against it, in the same
   process: scikit-surprise's ``KNNWithMeans`` (user-based, pearson, k=40) fit on the same
   training ratings and predict on the same held-out pairs. Reported: seconds, users per
   second, peak memory of the phase, and NDCG@10 / precision@10 of each method on each
   user's held-out ratings (``rankboost.metrics``, ties in expectation, good = rating >= 4).
2. **Synthetic 100,000 users x 20,000 items at 1% density** (20 million ratings, a latent
   taste model): the per-user learner (the pooled model's EASE needs a dense items x items
   matrix, 3.2 GB at 20,000 items): 1,000 targets fitted with every user as a feature user
   (``max_feature_users=500`` bounds each dense per-target problem) and
   ``recommend_all(10)``, serially (``n_jobs=1``, so all memory is this process's). The
   peak memory is compared with the size of the CSR matrix: it stays a small multiple of
   the ratings, far from the 16 GB a dense users x items float64 matrix would take.

Peak memory is the process's resident high-water mark (``VmHWM``), reset before each phase
(``/proc/self/clear_refs``); with ``n_jobs=2`` the joblib workers' memory is not included
(part 2 runs serially for that reason).

    PYTHONPATH=src .venv/bin/python benchmarks/bench_recommend.py --write-results

Options: ``--n-jobs`` (part 1, default 2), ``--skip-synthetic``, ``--synthetic-targets``.

``--speed [REPEATS]`` runs only issue 35's comparison: on the same MovieLens 100K split,
the pooled default's fit + ``recommend_all(10)`` against one EASE fit (the library's EASE,
``ease_lambda`` = the pooled fit's ``ease_lambda_``) + its top 10 of every user, each
``REPEATS`` times (default 3) alternately in one process; the medians of wall and CPU
seconds and their ratio are printed (the machine is shared: quote the ratio, not a time),
and the pooled phase's peak memory. ``--save-top NPZ`` saves its top 10 of every user, the
inner-CV curves, ``ease_lambda_`` and rounds, to compare two versions of the code.
``--floor`` adds what every fit of the default method pays whatever its code (EASE's
inverses, the boosting runs, ``recommend_all``), beside one EASE fit. ``--levers`` also
times the configurations of ``LEVERS`` in the same repeats: the previous
default (``refit=True``, 500 held unrated rows), the folds in two threads (``n_jobs=2``),
and cheaper ones (fewer folds, no inner CV; their quality:
``experiments/movies_topn.py --validate-levers``).

    PYTHONPATH=src .venv/bin/python benchmarks/bench_recommend.py --speed 3 --levers
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    add_write_results,
    data_file,
    machine_info,
    machine_line,
    markdown_table,
    peak_rss_bytes,
    report_result,
    reset_peak,
    rss_bytes,
)

from rankboost import TrainingStoppedWarning  # noqa: E402
from rankboost.datasets import load_movielens  # noqa: E402
from rankboost.metrics import ndcg_score, precision_at_k  # noqa: E402
from rankboost.recommend import (
    RankBoostRecommender,  # noqa: E402
    _pooled,  # noqa: E402
)
from rankboost.recommend._base import BaseScores  # noqa: E402
from rankboost.recommend._pooled import top_k  # noqa: E402

# the configurations reported in docs/movies.md, defined once there
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
from movies import BEST, GOOD, PAPER  # noqa: E402


def split(R: sp.csr_matrix, frac: float, seed: int) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Per user, a random ``frac`` of the ratings held out (at least one kept in training)."""
    rng = np.random.default_rng(seed)
    coo = R.tocoo()
    key = rng.random(coo.nnz)
    # rank of each rating within its user by the random key -> held out if in the top frac
    order = np.lexsort((key, coo.row))
    start = R.indptr[coo.row[order]]
    rank = np.arange(coo.nnz) - start
    n = np.diff(R.indptr)[coo.row[order]]
    test_sorted = rank < np.floor(frac * n)
    test = np.empty(coo.nnz, dtype=bool)
    test[order] = test_sorted

    def part(mask: np.ndarray) -> sp.csr_matrix:
        return sp.csr_matrix((coo.data[mask], (coo.row[mask], coo.col[mask])), shape=R.shape)

    return part(~test), part(test)


def held_out_metrics(test: sp.csr_matrix, users: np.ndarray, score_of: Any) -> tuple[float, float]:
    """Mean NDCG@10 and precision@10 over users, on each user's held-out ratings."""
    ys, ss, qs = [], [], []
    for u in users.tolist():
        lo, hi = test.indptr[u], test.indptr[u + 1]
        if hi - lo == 0:
            continue
        ys.append(test.data[lo:hi])
        ss.append(score_of(u, test.indices[lo:hi]))
        qs.append(np.full(hi - lo, u))
    y, s, q = np.concatenate(ys), np.concatenate(ss), np.concatenate(qs)
    ndcg = float(ndcg_score(y, s, q, k=10, gain="exp2"))
    prec = float(precision_at_k(y, s, q, k=10, relevance_threshold=GOOD))
    return ndcg, prec


def movielens(n_jobs: int) -> tuple[list[list[Any]], dict[str, Any]]:
    R, _, _ = load_movielens(data_file("movielens/ml-100k/u.data.gz")).to_matrix()
    train, test = split(R, 0.2, seed=0)
    users = np.arange(R.shape[0])
    rows, data = [], {}
    configs = (
        ("RankBoost (pooled)", {}),
        ("RankBoost (paper)", PAPER),
        ("RankBoost (best)", BEST),
    )
    for name, cfg in configs:
        reset_peak()
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrainingStoppedWarning)
            rec = RankBoostRecommender(rating_range=(1, 5), n_jobs=n_jobs, **cfg).fit(train)
        t_fit = time.perf_counter() - t0
        t0 = time.perf_counter()
        _, top, _ = rec.recommend_all(10)
        t_rec = time.perf_counter() - t0
        peak = peak_rss_bytes()
        ndcg, prec = held_out_metrics(test, users, rec.predict)
        n = len(rec.models_)
        assert top.shape == (n, 10)
        rows.append([name, n, t_fit, t_rec, n / (t_fit + t_rec), peak / 2**20, ndcg, prec])
        data[name] = {
            "users": n, "fit_s": t_fit, "recommend_all_s": t_rec, "peak_mib": peak / 2**20,
            "ndcg10": ndcg, "p10": prec, "config": cfg,
        }  # fmt: skip
    try:
        from surprise import Dataset, KNNWithMeans, Reader
    except ImportError:
        print("scikit-surprise not installed: skipping the KNNWithMeans row", file=sys.stderr)
        return rows, data
    import pandas as pd

    reset_peak()
    t0 = time.perf_counter()
    c = train.tocoo()
    frame = pd.DataFrame({"u": c.row, "i": c.col, "r": c.data})
    trainset = Dataset.load_from_df(frame, Reader(rating_scale=(1, 5))).build_full_trainset()
    algo = KNNWithMeans(k=40, sim_options={"name": "pearson", "user_based": True}, verbose=False)
    algo.fit(trainset)
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    tc = test.tocoo()
    est = np.array([algo.predict(int(u), int(i)).est for u, i in zip(tc.row, tc.col, strict=True)])
    t_pred = time.perf_counter() - t0
    peak = peak_rss_bytes()
    pred = sp.csr_matrix((est, (tc.row, tc.col)), shape=test.shape)
    pred.sort_indices()
    test_sorted = test.copy()
    test_sorted.sort_indices()

    def score_of(u: int, items: np.ndarray) -> np.ndarray:
        return pred[u, items].toarray().ravel()

    ndcg, prec = held_out_metrics(test_sorted, users, score_of)
    n = R.shape[0]
    name = "KNNWithMeans (surprise), predict held-out pairs"
    rows.append([name, n, t_fit, t_pred, n / (t_fit + t_pred), peak / 2**20, ndcg, prec])
    data["KNNWithMeans"] = {
        "users": n, "fit_s": t_fit, "predict_s": t_pred, "peak_mib": peak / 2**20,
        "ndcg10": ndcg, "p10": prec, "n_predictions": int(tc.nnz),
    }  # fmt: skip
    return rows, data


def ease_top(train: sp.csr_matrix, lam: float, k: int = 10) -> np.ndarray:
    """One EASE fit on ``train`` and the top ``k`` unrated items of every user."""
    base = BaseScores(("ease",), ease_lambda=lam).fit(train)
    S = base.scores(np.arange(train.shape[0]))[..., 0]
    S[np.repeat(np.arange(train.shape[0]), np.diff(train.indptr)), train.indices] = -np.inf
    return top_k(S, k)[0]


#: issue 35's cheaper configurations of the pooled fit (``--speed --levers``); their quality
#: against the default: ``experiments/movies_topn.py --validate-levers``
LEVERS = {
    "previous default (refit=True, 500 held unrated rows)": {"refit": True, "_HELD": 500},
    "n_jobs=2 (folds in two threads)": {"n_jobs": 2},
    "inner_folds=None": {"inner_folds": None},
    "n_folds=4, inner_folds=None": {"n_folds": 4, "inner_folds": None},
    "n_folds=2, inner_folds=None, ease_lambda=500": {
        "n_folds": 2, "inner_folds": None, "ease_lambda": 500.0},
}  # fmt: skip


@contextlib.contextmanager
def held_rows(n: int | None) -> Iterator[None]:
    """``_pooled.HELD_UNRATED`` = ``n`` inside the block (None: unchanged), then restored."""
    old = _pooled.HELD_UNRATED
    _pooled.HELD_UNRATED = old if n is None else n
    try:
        yield
    finally:
        _pooled.HELD_UNRATED = old


def speed(
    repeats: int, save: str | None = None, levers: bool = False
) -> tuple[str, dict[str, Any]]:
    """Pooled default fit + recommend_all(10) against one EASE fit + top 10, medians.

    ``save``: an ``.npz`` path for the last repeat's top 10 of every user, inner-CV curves,
    ``ease_lambda_`` and rounds (to compare two versions of the code). ``levers``: also each
    configuration of :data:`LEVERS` (fit + ``recommend_all(10)``), in the same repeats.
    """
    R, _, _ = load_movielens(data_file("movielens/ml-100k/u.data.gz")).to_matrix()
    train, _ = split(R, 0.2, seed=0)
    with warnings.catch_warnings():  # warm: numba's cache, imports
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        RankBoostRecommender(rating_range=(1, 5), n_estimators=5).fit(train[:60])
    times: dict[str, list[tuple[float, float]]] = {"pooled": [], "ease": []}
    configs = LEVERS if levers else {}
    times.update({name: [] for name in configs})
    lam = 250.0
    peaks = []
    for _ in range(repeats):
        reset_peak()
        start = rss_bytes()
        w, c = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrainingStoppedWarning)
            rec = RankBoostRecommender(rating_range=(1, 5)).fit(train)
        _, top, _ = rec.recommend_all(10)
        times["pooled"].append((time.perf_counter() - w, time.process_time() - c))
        peaks.append((peak_rss_bytes() - start) / 2**20)
        lam = float(rec.ease_lambda_)
        w, c = time.perf_counter(), time.process_time()
        ease_top(train, lam)
        times["ease"].append((time.perf_counter() - w, time.process_time() - c))
        for name, kw in configs.items():
            w, c = time.perf_counter(), time.process_time()
            with warnings.catch_warnings(), held_rows(kw.get("_HELD")):
                warnings.simplefilter("ignore", TrainingStoppedWarning)
                kw = {k: v for k, v in kw.items() if k != "_HELD"}
                RankBoostRecommender(rating_range=(1, 5), **kw).fit(train).recommend_all(10)
            times[name].append((time.perf_counter() - w, time.process_time() - c))
    if save:
        np.savez(
            save, top=top, curve=rec.rounds_curve_, rating_curve=rec.rating_rounds_curve_,
            ease_lambda=lam, rounds=[rec.report_["n_rounds"], rec.report_["n_rounds_rating_model"]],
        )  # fmt: skip
    med = {k: np.median(np.array(v), axis=0) for k, v in times.items()}
    rows = [
        ["pooled default: fit + recommend_all(10)", *np.round(med["pooled"], 2)],
        [f"EASE (lambda {lam:g}): fit + top 10 of every user", *np.round(med["ease"], 2)],
        ["ratio pooled / EASE", *np.round(med["pooled"] / med["ease"], 1)],
    ]
    for name in configs:
        rows.append([f"pooled, {name}: fit + recommend_all(10)", *np.round(med[name], 2)])
        rows.append([f"ratio pooled ({name}) / EASE", *np.round(med[name] / med["ease"], 1)])
    text = "\n".join([
        f"## Speed: MovieLens 100K, 943 users (80/20 split, seed 0), median of {repeats}",
        "",
        markdown_table(["", "wall s", "CPU s"], rows),
        "",
        f"Peak memory of the pooled fit + recommend_all above its start: "
        f"{np.median(peaks):.0f} MiB (median).",
        "",
    ])  # fmt: skip
    data = {k: [list(t) for t in v] for k, v in times.items()}
    return text, {"speed": data, "ease_lambda": lam, "peak_mib": peaks}


def floor(repeats: int) -> tuple[str, dict[str, Any]]:
    """What any fit of the default method pays, in CPU seconds beside one EASE fit.

    The pieces that remain however the scoring and sampling are written: EASE's inverses
    (the penalty search's, one per other cross-fitting fold in float32 -- the last fold
    reuses the chosen penalty's -- and the final fit's in float64, each timed on the
    split's own Gram matrix), the boosting runs of the two
    models (timed inside a default fit), and ``recommend_all(10)`` of the fitted model.
    Medians of ``repeats``.
    """
    from rankboost.recommend import _rounds
    from rankboost.recommend._base import _ease_weights, choose_ease_lambda, item_gram

    R, _, _ = load_movielens(data_file("movielens/ml-100k/u.data.gz")).to_matrix()
    train, _ = split(R, 0.2, seed=0)
    B = train.copy()
    B.data[:] = 1.0
    G = item_gram(B)
    searched = len(choose_ease_lambda(train, 0)[1])
    n_folds = RankBoostRecommender().n_folds
    boost: list[float] = []
    train_quiet = _rounds.train_quiet

    def timed_train(*a: Any, **k: Any) -> Any:
        c = time.process_time()
        out = train_quiet(*a, **k)
        boost[-1] += time.process_time() - c
        return out

    t: dict[str, list[float]] = {k: [] for k in ("ease", "f32", "f64", "boost", "rec")}
    for _ in range(repeats + 1):  # the first: warm-up, dropped
        c = time.process_time()
        ease_top(train, 500.0)
        t["ease"].append(time.process_time() - c)
        for key, single in (("f32", True), ("f64", False)):
            c = time.process_time()
            _ease_weights(G, 500.0, single)
            t[key].append(time.process_time() - c)
        boost.append(0.0)
        _rounds.train_quiet = timed_train
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TrainingStoppedWarning)
                rec = RankBoostRecommender(rating_range=(1, 5)).fit(train)
        finally:
            _rounds.train_quiet = train_quiet
        t["boost"].append(boost[-1])
        c = time.process_time()
        rec.recommend_all(10)
        t["rec"].append(time.process_time() - c)
    med = {k: float(np.median(v[1:])) for k, v in t.items()}
    n32 = searched + n_folds - 1  # the last fold's is the chosen penalty's (train_pooled)
    pieces = [
        (f"EASE inverse, float32 ({searched} penalties searched + {n_folds - 1} more folds)",
         n32, med["f32"]),
        ("EASE inverse, float64 (the final fit: prior and feature)", 1, med["f64"]),
        ("boosting runs of the two models (inside a default fit)", 1, med["boost"]),
        ("recommend_all(10) of the fitted default", 1, med["rec"]),
    ]  # fmt: skip
    rows = [[name, n, round(each, 3), round(n * each, 3), round(n * each / med["ease"], 1)]
            for name, n, each in pieces]  # fmt: skip
    total = sum(n * each for _, n, each in pieces)
    rows.append(["floor: the sum", "", "", round(total, 3), round(total / med["ease"], 1)])
    rows.append(["EASE (lambda 500): fit + top 10 of every user", 1, round(med["ease"], 3),
                 round(med["ease"], 3), 1.0])  # fmt: skip
    text = "\n".join([
        f"## Floor: what every default fit pays (CPU s, medians of {repeats})",
        "",
        markdown_table(["piece", "count", "CPU s each", "CPU s", "x EASE"], rows),
        "",
    ])  # fmt: skip
    return text, {"floor": {k: v[1:] for k, v in t.items()}, "searched": searched}


def synthetic(
    n_users: int, n_items: int, per_user: int, n_targets: int, seed: int = 0
) -> tuple[list[list[Any]], dict[str, Any]]:
    """Latent-taste ratings, ``per_user`` distinct items per user, built without densifying."""
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    base = rss_bytes()  # the interpreter, numpy, numba... before any rating exists
    draws = np.sort(rng.integers(0, n_items, (n_users, per_user + 2), dtype=np.int32), axis=1)
    keep = np.ones(draws.shape, dtype=bool)
    keep[:, 1:] = draws[:, 1:] != draws[:, :-1]
    rows = np.repeat(np.arange(n_users, dtype=np.int32), keep.sum(axis=1))
    cols = draws[keep]
    del draws, keep
    quality = rng.normal(size=n_items)
    taste = rng.normal(size=(n_users, 4))
    style = rng.normal(size=(n_items, 4))
    latent = quality[cols] + 0.5 * np.einsum("ij,ij->i", taste[rows], style[cols])
    vals = np.clip(np.round(3 + latent + 0.7 * rng.normal(size=cols.shape[0])), 1, 5)
    R = sp.csr_matrix((vals, (rows, cols)), shape=(n_users, n_items))
    del rows, cols, vals, latent
    t_gen = time.perf_counter() - t0
    ratings_mib = (R.data.nbytes + R.indices.nbytes + R.indptr.nbytes) / 2**20
    targets = np.sort(rng.choice(n_users, n_targets, replace=False))
    reset_peak()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        rec = RankBoostRecommender(
            rating_range=(1, 5), max_feature_users=500, n_jobs=1, **PAPER
        ).fit(R, target_users=targets)
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    _, top, _ = rec.recommend_all(10)
    t_rec = time.perf_counter() - t0
    peak = peak_rss_bytes()
    dense_gib = n_users * n_items * 8 / 2**30
    out = [[
        f"{n_users:,} x {n_items:,}", f"{R.nnz:,}", f"{ratings_mib:.0f}", n_targets,
        t_fit, t_rec, n_targets / (t_fit + t_rec), f"{peak / 2**20:.0f}",
        f"{(peak - base) / 2**20:.0f}", f"{(peak - base) / 2**20 / ratings_mib:.1f}",
        f"{dense_gib:.1f}",
    ]]  # fmt: skip
    data = {
        "shape": [n_users, n_items], "nnz": int(R.nnz), "ratings_mib": ratings_mib,
        "generate_s": t_gen, "targets": n_targets, "fit_s": t_fit, "recommend_all_s": t_rec,
        "peak_mib": peak / 2**20, "start_rss_mib": base / 2**20, "dense_gib": dense_gib,
        "top_shape": list(top.shape),
        "config": {**PAPER, "max_feature_users": 500},
    }  # fmt: skip
    return out, data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--skip-synthetic", action="store_true")
    ap.add_argument("--synthetic-targets", type=int, default=1000)
    ap.add_argument("--speed", type=int, nargs="?", const=3, default=None, metavar="REPEATS")
    ap.add_argument("--save-top", default=None, metavar="NPZ", help="with --speed: save the top 10")
    ap.add_argument("--levers", action="store_true", help="with --speed: the LEVERS configs too")
    ap.add_argument("--floor", action="store_true", help="with --speed: the floor table too")
    add_write_results(ap)
    args = ap.parse_args()
    if args.save_top and args.speed is None:
        ap.error("--save-top needs --speed (it saves the speed run's top 10)")
    if args.levers and args.speed is None:
        ap.error("--levers needs --speed (it times the LEVERS configurations beside it)")
    if args.floor and args.speed is None:
        ap.error("--floor needs --speed (its repeats)")
    info = machine_info()
    if args.speed is not None:
        text, data = speed(args.speed, args.save_top, args.levers)
        if args.floor:
            more, extra = floor(args.speed)
            text, data = f"{text}\n{more}", {**data, **extra}
        text = f"{machine_line(info)}\n\n{text}"
        print(text)
        report_result(args.write_results, "bench_recommend_speed", text, {**data, "machine": info})
        return
    t_all = time.perf_counter()
    rows, data = movielens(args.n_jobs)
    md = [
        "# bench_recommend: every user, fast, sparse",
        "",
        machine_line(info),
        "",
        "Command: `PYTHONPATH=src .venv/bin/python benchmarks/bench_recommend.py --write-results`",
        "",
        f"## MovieLens 100K, all 943 users (80/20 split per user, seed 0, n_jobs={args.n_jobs})",
        "",
        "RankBoost: fit every user's model, then `recommend_all(10)` over every unrated "
        "item. KNNWithMeans: fit, then predict the held-out pairs. Peak = this process "
        "(joblib workers not included). NDCG@10 / P@10 on each user's held-out ratings.",
        "",
        markdown_table(
            [
                "method",
                "users",
                "fit s",
                "recommend / predict s",
                "users/s",
                "peak MiB",
                "NDCG@10",
                "P@10",
            ],
            rows,
        ),  # fmt: skip
        "",
    ]
    if not args.skip_synthetic:
        srows, sdata = synthetic(100_000, 20_000, 200, args.synthetic_targets)
        data["synthetic"] = sdata
        md += [
            "## Synthetic, 1% density (n_jobs=1, paper configuration, max_feature_users=500)",
            "",
            markdown_table(
                [
                    "users x items",
                    "ratings",
                    "CSR MiB",
                    "targets",
                    "fit s",
                    "recommend_all s",
                    "targets/s",
                    "peak MiB",
                    "peak - start MiB",
                    "(peak - start) / CSR",
                    "dense matrix would be GiB",
                ],
                srows,
            ),  # fmt: skip
            "",
        ]
    md.append(f"Total runtime {time.perf_counter() - t_all:.0f} s.")
    text = "\n".join(md) + "\n"
    print(text)
    data["machine"] = info
    report_result(args.write_results, "bench_recommend", text, data)


if __name__ == "__main__":
    main()
