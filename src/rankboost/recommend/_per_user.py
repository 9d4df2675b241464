"""The paper's per-user learner: one target's design matrix, feedback, fit and scoring.

Freund et al. (2003), section 6.2: for one target user, rows are the items the target rated,
columns the feature users' ratings (NaN where unrated), feedback layered by the target's
ratings. The options beyond the paper (``unrated``, ``extra_features``, ``pair_weight``)
are measured in docs/movies.md.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs
from numpy.typing import NDArray

from .._compat import Steps
from .._kernels import blas_threads, numba_threads
from ..engine import TrainingStoppedWarning, train_checked
from ..feedback import LayeredFeedback, PairFeedback
from ..model import RankBoostModel
from ..params import TrainParams
from ._base import user_means
from ._problem import problem_features

UNRATED = ("abstain", "user_mean")
PAIR_WEIGHTS = ("equal", "gap")
EXTRA = ("mean", "centred_mean", "count", "vsim")
_VSIM_FOLDS = 5
#: rows of a dense feature block built at once when scoring (bounds memory per call)
_SCORE_CELLS = 1 << 22


@dataclass(frozen=True)
class Design:
    """How a target's feature matrix and feedback are built from the ratings."""

    unrated: str
    pair_weight: str
    extra: tuple[str, ...]
    user_columns: bool = True

    @property
    def paper(self) -> bool:
        return self.unrated == "abstain" and not self.extra and self.user_columns


def _vsim_weights(
    X: NDArray[np.float64], M: NDArray[np.bool_], y: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Breese et al. (1998) cosine weight of each feature user over the co-rated rows."""
    X0 = np.where(M, X, 0.0)
    num = y @ X0
    den = np.sqrt(((y**2) @ M) * (X0**2).sum(axis=0))
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def _vsim_scores(
    X: NDArray[np.float64], M: NDArray[np.bool_], means: NDArray[np.float64], w: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``sum_f w_f (x_f - mean_f) / sum_f |w_f|`` over the raters of each row; NaN if none."""
    dev = np.where(M, X - means, 0.0)
    norm = M @ np.abs(w)
    out = np.full(X.shape[0], np.nan)
    np.divide(dev @ w, norm, out=out, where=norm > 0)
    return out


def _design_matrix(
    X: NDArray[np.float64],
    means: NDArray[np.float64],
    design: Design,
    *,
    y: NDArray[np.float64] | None = None,
    w: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """The model's columns from the raw ratings ``X`` (NaN = unrated) of the feature users.

    Columns: one per feature user (NaN = abstain, or the user's mean rating with
    ``unrated="user_mean"``), then the ``extra`` columns, all functions of the row's
    feature-user ratings only, except ``"vsim"``: the VSIM score with weights learned from
    the target's ratings ``y``, *cross-fitted* on training rows (a row's score uses weights
    fitted on the other folds, so no row sees its own rating) and fitted on all training
    rows (``w``) for scoring. Returns the matrix and, when ``y`` is given, those weights.
    """
    if design.paper:
        return X, None
    M = ~np.isnan(X)
    cnt = M.sum(axis=1).astype(np.float64)
    has = cnt > 0
    cols = []
    w_full = None
    for name in design.extra:
        if name == "count":
            cols.append(cnt)
        elif name in ("mean", "centred_mean"):
            val = np.where(M, X - (means if name == "centred_mean" else 0.0), 0.0).sum(axis=1)
            cols.append(np.divide(val, cnt, out=np.full(X.shape[0], np.nan), where=has))
        else:  # vsim
            if y is not None:
                w_full = _vsim_weights(X, M, y)
                col = np.empty(X.shape[0])
                fold = np.arange(X.shape[0]) % _VSIM_FOLDS
                for k in range(_VSIM_FOLDS):
                    out = fold == k
                    if not out.any():
                        continue
                    wk = _vsim_weights(X[~out], M[~out], y[~out])
                    col[out] = _vsim_scores(X[out], M[out], means, wk)
                cols.append(col)
            else:
                assert w is not None
                cols.append(_vsim_scores(X, M, means, w))
    if not design.user_columns:
        return np.column_stack(cols), w_full
    if design.unrated == "user_mean":
        X = np.where(M, X, means)
    if cols:
        X = np.column_stack([X, *cols])
    return X, w_full


def _feedback(y: NDArray[np.float64], pair_weight: str) -> LayeredFeedback | PairFeedback:
    """Every pair of items rated differently is crucial; weight 1 or the rating gap."""
    if pair_weight == "equal":
        return LayeredFeedback(y)
    lo, hi = np.nonzero(y[:, None] < y[None, :])  # row hi above row lo
    return PairFeedback(np.column_stack([lo, hi]), weights=y[hi] - y[lo], n_samples=y.shape[0])


def score_items(
    R: sp.csr_matrix,
    means: NDArray[np.float64],
    design: Design,
    feats: NDArray[np.int64],
    model: RankBoostModel,
    w: NDArray[np.float64] | None,
    it: NDArray[np.int64],
) -> NDArray[np.float64]:
    """``H`` of items ``it`` for one target, in dense blocks of at most ~4M cells.

    The features come from the feature users' rows of ``R`` (one CSR slice, the ratings
    of those users only), so scoring every item of a large catalogue costs the feature
    users' ratings per block, not every rating of every item.
    """
    d = feats.shape[0]
    sub = R[feats].tocoo()
    pos = np.full(R.shape[1], -1, dtype=np.int64)
    step = max(1, _SCORE_CELLS // max(d, 1))
    out = np.empty(it.shape[0])
    for start in range(0, it.shape[0], step):
        uniq, inverse = np.unique(it[start : start + step], return_inverse=True)
        pos[uniq] = np.arange(uniq.shape[0])
        row = pos[sub.col]
        keep = row >= 0
        X = np.full((uniq.shape[0], d), np.nan)
        X[row[keep], sub.row[keep]] = sub.data[keep]
        pos[uniq] = -1
        X, _ = _design_matrix(X, means[feats], design, w=w)
        out[start : start + step] = model.decision_function(X)[inverse]
    return out


#: A target's scoring job: its row, feature users, model and VSIM weights (or None).
Job = tuple[int, NDArray[np.int64], RankBoostModel, NDArray[np.float64] | None]


class _TopK(NamedTuple):
    """Top-``k`` item positions and scores of a chunk of targets (-1 / NaN pad short rows)."""

    R: sp.csr_matrix
    means: NDArray[np.float64]
    design: Design
    k: int
    exclude_rated: bool

    def __call__(self, jobs: list[Job]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        R, k = self.R, self.k
        items = np.full((len(jobs), k), -1, dtype=np.int64)
        scores = np.full((len(jobs), k), np.nan)
        every = np.arange(R.shape[1], dtype=np.int64)
        # one BLAS and numba thread here as in every joblib worker: the same bits for any n_jobs
        with numba_threads(1), blas_threads(1):
            for row, (u, feats, model, w) in enumerate(jobs):
                it = every
                if self.exclude_rated:
                    keep = np.ones(R.shape[1], dtype=bool)
                    keep[R.indices[R.indptr[u] : R.indptr[u + 1]]] = False
                    it = every[keep]
                s = score_items(R, self.means, self.design, feats, model, w, it)
                top = np.argsort(-s, kind="stable")[:k]
                items[row, : top.shape[0]] = it[top]
                scores[row, : top.shape[0]] = s[top]
        return items, scores


def _fit_chunk(
    by_item: sp.csr_matrix,
    R: sp.csr_matrix,
    jobs: list[tuple[int, NDArray[np.int64]]],
    params: TrainParams,
    design: Design,
    means: NDArray[np.float64],
    steps: Steps | None = None,
) -> list[tuple[int, RankBoostModel, NDArray[np.float64] | None]]:
    """Train the models of a chunk of target users (runs in a joblib worker)."""
    steps = steps or Steps(0, disable=True, desc="")
    out = []
    column_of = np.full(R.shape[0], -1, dtype=np.int64)
    # BLAS (VSIM's products: other bits on other thread counts) and numba on one thread, in
    # the caller's thread and in every joblib worker alike: the same models for every n_jobs
    with numba_threads(1), blas_threads(1), warnings.catch_warnings():
        # early stops are recorded in model.stop_reason and summarised by fit
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        for user, feats in jobs:
            row = R[user]
            column_of[feats] = np.arange(feats.shape[0])
            X = problem_features(by_item, row.indices.astype(np.int64), column_of, feats.shape[0])
            column_of[feats] = -1
            X, w = _design_matrix(X, means[feats], design, y=row.data)
            model = train_checked(X, _feedback(row.data, design.pair_weight), params)
            out.append((user, model, w))
            steps.done()
    return out


def make_plan(
    R: sp.csr_matrix,
    by_item: sp.csr_matrix,
    targets: NDArray[np.int64],
    feats: NDArray[np.int64],
    names: list[Any],
    min_overlap: int,
    cap: int | None,
) -> tuple[list[tuple[int, NDArray[np.int64]]], dict[int, str], int]:
    """Per target: its feature users (``min_overlap``, ``max_feature_users``) or why not.

    The feature users keep the order of ``feats``.
    """
    n_rated = np.diff(R.indptr)
    # co-rating counts of one target at a time, from the raters of its items (CSR
    # slices of the item x user matrix): memory O(ratings), never targets x users
    is_feat = np.zeros(R.shape[0], dtype=bool)
    is_feat[feats] = True
    position = np.zeros(R.shape[0], dtype=np.int64)
    position[feats] = np.arange(feats.shape[0])
    plan: list[tuple[int, NDArray[np.int64]]] = []
    skipped: dict[int, str] = {}
    dropped = 0
    n_feats = feats.shape[0]
    for u in targets.tolist():
        mine = R.data[R.indptr[u] : R.indptr[u + 1]]
        if mine.shape[0] < 2 or not mine.min() < mine.max():
            why = (
                f"user {names[u]!r} has {n_rated[u]} rating(s) with fewer than two "
                "distinct values, so no pair of items is crucial (nothing to learn)"
            )
            skipped[u] = why
            continue
        raters = by_item[R.indices[R.indptr[u] : R.indptr[u + 1]]].indices
        overlap = np.bincount(raters[is_feat[raters]], minlength=R.shape[0])
        overlap[u] = 0  # a target never uses itself
        ok = np.flatnonzero(overlap >= min_overlap)
        n_ok = ok.shape[0]
        if cap is not None and n_ok > cap:
            # the cap users with the most co-rated items (ties: lowest user number)
            ok = ok[np.argsort(-overlap[ok], kind="stable")[:cap]]
        dropped += n_feats - int(is_feat[u]) - n_ok
        if n_ok == 0:
            skipped[u] = (
                f"user {names[u]!r}: no feature user rated at least "
                f"min_overlap={min_overlap} of this user's items"
            )
            continue
        plan.append((u, ok[np.argsort(position[ok], kind="stable")]))
    return plan, skipped, dropped


def fit_per_user(
    R: sp.csr_matrix,
    plan: list[tuple[int, NDArray[np.int64]]],
    params: TrainParams,
    design: Design,
    means: NDArray[np.float64],
    n_jobs: int,
    verbose: int,
) -> list[tuple[int, RankBoostModel, NDArray[np.float64] | None]]:
    """Train every planned target's model (joblib over chunks of targets), in plan order.

    ``verbose``: a progress bar over the targets (each chunk's as it ends with ``n_jobs``).
    """
    by_item = R.T.tocsr()
    steps = Steps(len(plan), not verbose, "RankBoostRecommender.fit", stacklevel=4)
    steps.start(f"one model per target user ({len(plan)})")
    try:
        if n_jobs == 1 or len(plan) < 2:
            results = _fit_chunk(by_item, R, plan, params, design, means, steps)
        else:
            # a few chunks per worker: balances uneven users, ships the matrix once a chunk
            n_chunks = min(len(plan), 4 * n_jobs)
            chunks = [plan[i::n_chunks] for i in range(n_chunks)]
            try:  # joblib >= 1.3: the chunks as they end, for the progress bar
                parallel = Parallel(n_jobs=n_jobs, verbose=verbose, return_as="generator")
            except TypeError:  # pragma: no cover - older joblib: the bar fills at the end
                parallel = Parallel(n_jobs=n_jobs, verbose=verbose)
            results = []
            for part in parallel(
                delayed(_fit_chunk)(by_item, R, c, params, design, means) for c in chunks
            ):
                results.extend(part)
                steps.done(len(part))
    finally:
        steps.close()
    order = {u: i for i, (u, _) in enumerate(plan)}
    results.sort(key=lambda r: order[r[0]])
    return results


def recommend_all_per_user(
    R: sp.csr_matrix,
    means: NDArray[np.float64],
    design: Design,
    jobs: list[Job],
    k: int,
    exclude_rated: bool,
    n_jobs: int,
    verbose: int,
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Top-``k`` item positions and scores of every job's target, in job order."""
    top_k = _TopK(R, means, design, k, exclude_rated)
    if n_jobs == 1 or len(jobs) < 2:
        return top_k(jobs)
    n_chunks = min(len(jobs), 4 * n_jobs)
    idx = [np.arange(i, len(jobs), n_chunks) for i in range(n_chunks)]
    parts = Parallel(n_jobs=n_jobs, verbose=verbose)(
        delayed(top_k)([jobs[j] for j in ix]) for ix in idx
    )
    order = np.argsort(np.concatenate(idx), kind="stable")
    pos = np.concatenate([p[0] for p in parts])[order]
    return pos, np.concatenate([p[1] for p in parts])[order]


class PerUserResult(NamedTuple):
    """What a per-user fit learned; ``RankBoostRecommender.fit`` assigns it.

    Keyed by target row, in plan order: ``models``, the VSIM weights of the models with a
    ``"vsim"`` column (``vsim_weights``), the feature users (rows, model columns in order:
    ``feats``); ``design`` and ``means`` (every user's mean rating, the ``"user_mean"``
    fill) score new items; ``skipped``: the row of every target left out, and why;
    ``report``: the counts of ``report_``.
    """

    models: dict[int, RankBoostModel]
    vsim_weights: dict[int, NDArray[np.float64]]
    feats: dict[int, NDArray[np.int64]]
    design: Design
    means: NDArray[np.float64]
    skipped: dict[int, str]
    report: dict[str, int]


def fit_per_user_models(  # noqa: PLR0917  private, one caller (RankBoostRecommender.fit)
    R: sp.csr_matrix,
    targets: NDArray[np.int64],
    feats: NDArray[np.int64],
    params: TrainParams,
    label: list[Any],
    design: Design,
    *,
    min_overlap: int,
    max_feature_users: int | None,
    invalid_targets: str,
    n_jobs: int | None,
    verbose: int,
) -> PerUserResult:
    """Fit one model per target (``mode="per_user"``); return what was learned.

    ``feats``: the candidate feature users (rows); ``label``: every row's user label (for
    the messages).
    """
    plan, skipped, dropped = make_plan(
        R, R.T.tocsr(), targets, feats, label, min_overlap, max_feature_users
    )
    if skipped and invalid_targets == "raise":
        u, why = next(iter(skipped.items()))
        raise ValueError(
            f"cannot fit target {why}. Drop the user from target_users, or pass "
            "invalid_targets='skip' to skip such users."
        )
    means = user_means(R)  # the "user_mean" fill
    workers = effective_n_jobs(n_jobs) if plan else 1
    results = fit_per_user(R, plan, params, design, means, workers, verbose)
    models = {u: m for u, m, _ in results}
    stopped = sum(m.stop_reason is not None for m in models.values())
    report = {
        "n_targets": int(targets.shape[0]),
        "n_fitted": len(models),
        "n_skipped": len(skipped),
        "n_features_dropped": dropped,
        "n_stopped_early": int(stopped),
    }
    if stopped:
        warnings.warn(
            f"{stopped} of {len(models)} per-user models stopped before "
            f"n_estimators={params.n_rounds} rounds (see models_[user].stop_reason).",
            TrainingStoppedWarning,
            stacklevel=3,
        )
    vsim = {u: w for u, _, w in results if w is not None}
    return PerUserResult(models, vsim, dict(plan), design, means, skipped, report)
