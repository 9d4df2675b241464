"""The pooled recommender: one RankBoost model over every user (SPEC 7.2, third bullet).

One query per target user; its rows are candidate items; its features are the base
recommenders' scores for (user, item) (:mod:`._base`). The scores of a training row are
*cross-fitted*: each user's ratings are split into ``n_folds`` folds, the base
recommenders are fitted ``n_folds`` times on the ratings minus one fold, and a rated item
of fold ``k`` is scored by the fit without fold ``k`` -- so no rating informs its own
feature value. Unrated items sampled as negatives are each given a fold at random and
scored the same way, so rated and unrated rows of one query see the same history.

The feedback (:data:`FEEDBACK`):

* ``"ratings"``: :class:`~rankboost.LayeredFeedback` on the user's ratings (the paper's
  crucial pairs, pooled); only rated rows.
* ``"rated"``: :class:`~rankboost.BipartiteFeedback`, rated above unrated (what top-N
  needs: which items a user chooses to rate at all, paper section 2's bipartite case).
* ``"both"``: one layered feedback whose lowest layer is the sampled unrated items, so
  every rated item is above every unrated one and higher ratings above lower ones.
* ``"liked"``: three layers, liked (rated at or above the user's mean rating) above rated
  but not liked above the sampled unrated items: the top-N task where a relevant item is
  one the user rates *and* likes (``"auto"``'s top-N model, :data:`TOP_N`).

With ``inner_folds`` the number of rounds is chosen on held-out target users
(:mod:`._rounds`): by default the model trained beside the first held-out group is kept at
its best round (``refit=False``); with ``refit=True`` every group is held out in turn and
the final model is trained on every target.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from numpy.typing import NDArray

from .._compat import Steps
from .._kernels import blas_threads, numba_threads
from ..feedback import BipartiteFeedback, LayeredFeedback
from ..model import RankBoostModel
from ..model_selection import EASE_LAMBDAS, EASE_PRIOR_SCALES, seed_stream
from ..params import TrainParams
from ._base import (
    VALIDATION_FOLDS,
    BaseScores,
    choose_ease_lambda,
    entry_folds,
    inverse_blas_threads,
    user_means,
    user_sample,
)
from ._penalty import top_columns
from ._rounds import RoundsChoice, choose_rounds, fit_rounds, train_quiet

__all__ = [
    "FEEDBACK",
    "PooledProblem",
    "block_size",
    "has_pair",
    "negatives_per_user",
    "pooled_problem",
    "sample_unrated",
    "top_k",
    "top_of_block",
]

FEEDBACK = ("auto", "both", "ratings", "rated", "liked")
#: the top-N model of ``feedback="auto"`` (what :meth:`recommend` ranks with)
TOP_N = "liked"
#: unrated rows per target sampled only for the inner CV of a top-N model: a held-out user's
#: rated items are ranked among them, closer to top-N than one unrated item per rated one
#: (100 and 500 choose rounds of the same quality on validation splits, docs/movies.md)
HELD_UNRATED = 100
#: users scored per dense block (bounds memory: block x items x features floats)
_BLOCK_CELLS = 1 << 22


def block_size(n_items: int, n_features: int) -> int:
    """Users scored per dense block of ``n_items`` x ``n_features`` cells (about 4M)."""
    return max(1, _BLOCK_CELLS // max(1, n_items * n_features))


def negatives_per_user(n_rated: NDArray[np.int64], n_items: int, ratio: float) -> NDArray[np.int64]:
    """Unrated items sampled per user: ``ceil(ratio * n_rated)``, at least 1, at most all."""
    n_free = n_items - n_rated
    return np.minimum(n_free, np.maximum(1, np.ceil(ratio * n_rated))).astype(int)


def sample_unrated(
    R: sp.csr_matrix,
    users: NDArray[np.int64],
    ratio: float,
    rng: np.random.Generator,
    extra: int = 0,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_]]:
    """Per user, ``ceil(ratio * n_rated)`` unrated items (at least 1), without replacement.

    Then up to ``extra`` more per user, flagged in the third array (evaluation rows).
    """
    n_items = R.shape[1]
    out_u, out_i, out_x = [], [], []
    step = max(1, (1 << 22) // n_items)
    for s in range(0, users.shape[0], step):  # a block of users at a time, vectorised
        us = users[s : s + step]
        Ru = R[us]
        rated = (
            sp.csr_matrix((np.ones(Ru.nnz), Ru.indices, Ru.indptr), shape=Ru.shape).toarray() > 0
        )
        n_free = n_items - rated.sum(axis=1)
        want = negatives_per_user(rated.sum(axis=1), n_items, ratio)
        more = np.minimum(n_free, want + extra)
        keys = rng.random(rated.shape)
        keys[rated] = 2.0
        order = np.argsort(keys, axis=1)
        take = np.arange(n_items)[None, :] < more[:, None]
        r, c = np.nonzero(take)
        out_u.append(us[r])
        out_i.append(order[r, c])
        out_x.append(c >= want[r])
    return np.concatenate(out_u), np.concatenate(out_i), np.concatenate(out_x)


class PooledProblem:
    """The pooled ranking problem: features ``X``, labels ``y`` and query ``qid`` (user).

    ``held`` flags unrated rows sampled only to evaluate rounds (inner CV), never trained on;
    ``liked`` flags the rated rows at or above their user's mean rating.
    """

    def __init__(  # noqa: PLR0917  its arrays
        self,
        X: NDArray[np.float64],
        y: NDArray[np.float64],
        qid: NDArray[np.int64],
        held: NDArray[np.bool_] | None = None,
        liked: NDArray[np.bool_] | None = None,
    ):
        self.X, self.y, self.qid = X, y, qid
        self.held = np.zeros(y.shape[0], dtype=bool) if held is None else held
        self.liked = y > 0 if liked is None else liked

    def subset(self, rows: NDArray[np.bool_]) -> PooledProblem:
        """The problem of some rows (order kept)."""
        return PooledProblem(
            self.X[rows], self.y[rows], self.qid[rows], self.held[rows], self.liked[rows]
        )

    def labels(self, kind: str) -> NDArray[np.float64]:
        """The graded labels of a kind of feedback: liked 2, rated 1, unrated 0 for "liked"."""
        if kind == "rated":
            return (self.y > 0).astype(np.float64)
        if kind == "liked":
            return self.liked.astype(np.float64) + (self.y > 0)
        return self.y

    def gains(self, kind: str) -> NDArray[np.float64]:
        """The inner CV's NDCG gains: rated (``"rated"``), liked (``"liked"``) or the labels."""
        return self.liked.astype(np.float64) if kind == "liked" else self.labels(kind)

    def feedback(self, kind: str, rows: NDArray[np.bool_] | None = None) -> LayeredFeedback:
        y = self.labels(kind)
        y, q = (y, self.qid) if rows is None else (y[rows], self.qid[rows])
        if kind == "rated":
            return BipartiteFeedback(y, q)
        return LayeredFeedback(y, q)


def pooled_problem(
    R: sp.csr_matrix,
    targets: NDArray[np.int64],
    base: dict[str, Any],
    *,
    n_folds: int,
    feedback: str,
    negatives: float,
    rng: np.random.Generator,
    held_unrated: int = 0,
    steps: Steps | None = None,
    n_jobs: int | None = None,
    fold: NDArray[np.int64] | None = None,
    prefit: dict[int, dict[str, Any]] | None = None,
) -> PooledProblem:
    """The cross-fitted rows of every target (rated items, plus sampled unrated ones).

    Labels: a rated row has ``1 + rating - min rating`` (>= 1), an unrated row 0; with
    ``feedback="ratings"`` no unrated row is sampled. ``held_unrated`` more unrated rows
    per target (``held``) let the inner CV rank a held-out user's rated items among many
    unrated ones, as top-N does, without training on them. ``n_jobs``: folds cross-fitted
    at once, in threads (joblib; the same rows for every value). ``fold``: the fold of
    every stored rating (:func:`._base.entry_folds`; None: drawn from ``rng``);
    ``prefit[k]``: keyword arguments of fold ``k``'s ``BaseScores.fit`` computed on its
    very ratings already (the penalty search's Gram matrix and EASE weights); that fold
    runs first and pops its entry from the dict, so they are released with its fit.
    """
    steps = steps or Steps(0, disable=True, desc="")
    fold = entry_folds(R, n_folds, rng) if fold is None else fold
    prefit = {} if prefit is None else prefit
    n_u = np.diff(R.indptr)
    rows = np.repeat(np.arange(R.shape[0]), n_u)
    is_target = np.zeros(R.shape[0], dtype=bool)
    is_target[targets] = True
    lo = float(R.data.min())
    # the rows: (user, item, label, fold)
    keep = is_target[rows]
    users = [rows[keep]]
    items = [R.indices[keep].astype(np.int64)]
    labels = [1.0 + R.data[keep] - lo]
    folds = [fold[keep]]
    held = [np.zeros(keep.sum(), dtype=bool)]
    if feedback != "ratings":
        nu, ni, nh = sample_unrated(R, targets, negatives, rng, held_unrated)
        users.append(nu)
        items.append(ni)
        labels.append(np.zeros(nu.shape[0]))
        folds.append(rng.integers(0, n_folds, size=nu.shape[0]))
        held.append(nh)
    u = np.concatenate(users)
    it = np.concatenate(items)
    y = np.concatenate(labels)
    f = np.concatenate(folds)
    X = np.empty((u.shape[0], len(base["names"])))
    n_rows = np.bincount(rows, minlength=R.shape[0])

    def cross_fit(k: int) -> None:
        with numba_threads(1):  # the threads of n_jobs are the parallelism (thread-local)
            cross_fit_serial(k)

    def cross_fit_serial(k: int) -> None:
        steps.start(f"cross-fitting the base recommenders {k + 1}/{n_folds}")
        mask = fold != k
        indptr = np.concatenate(
            [[0], np.cumsum(n_rows - np.bincount(rows[~mask], minlength=R.shape[0]))]
        )
        Rk = sp.csr_matrix((R.data[mask], R.indices[mask], indptr), shape=R.shape)
        given = prefit.pop(k, {})
        model = BaseScores(**base, ease_float32=True).fit(Rk, **given)  # float32: as trained
        del given
        mine = np.flatnonzero(f == k)
        X[mine] = model.cells(u[mine], it[mine])  # only the fold's cells; each fold its rows
        steps.done()

    first = sorted(range(n_folds), key=lambda k: k not in prefit)  # the prefitted fold first
    if n_jobs in (None, 1):
        for k in first:
            cross_fit_serial(k)
    else:  # the inverses' BLAS count taken here, for all folds: a thread cannot set its own
        with blas_threads(inverse_blas_threads(R.shape[1])):
            Parallel(n_jobs=n_jobs, prefer="threads")(delayed(cross_fit)(k) for k in first)
    liked = (y > 0) & (y >= 1.0 + user_means(R)[u] - lo - 1e-9)
    order = np.lexsort((it, u))
    return PooledProblem(X[order], y[order], u[order], np.concatenate(held)[order], liked[order])


class PooledFit(NamedTuple):
    """One pooled model: ``H(x) = scale * x[prior] + sum of its first ``rounds`` rounds``.

    ``prior`` is the feature column of the prior ``F0`` (None: no prior, ``scale`` 0);
    ``curve`` the inner-CV curve (mean held-out NDCG@10 per round, or None).
    """

    model: RankBoostModel
    curve: NDArray[np.float64] | None
    rounds: int
    prior: int | None = None
    scale: float = 0.0

    def score(self, S: NDArray[np.float64]) -> NDArray[np.float64]:
        """``H`` of every row of the base-score matrix ``S`` (rows x features)."""
        H = self.model.decision_function(S, n_rounds=self.rounds)
        if self.prior is not None:
            H += self.scale * S[:, self.prior]
        return H


def _fit_kind(  # noqa: PLR0917  private helper of train_pooled
    prob: PooledProblem,
    kind: str,
    params: TrainParams,
    inner_folds: int | None,
    random_state: int,
    prior: int | None,
    scales: tuple[float, ...],
    steps: Steps,
    refit: bool = True,
) -> PooledFit:
    """One model: rounds (and the prior's multiplier) on held-out users (:mod:`._rounds`).

    ``refit=False``: the model of the held-out search is kept (trained without the first
    inner group); when no group can be used, the model is trained on every target for
    ``params.n_rounds``, as without inner CV (the first multiplier of ``scales``).
    """
    n_users = np.unique(prob.qid).shape[0] if inner_folds is not None else 0

    def choose(scales: tuple[float, ...]) -> RoundsChoice | None:
        col = None if prior is None else np.nan_to_num(prob.X[:, prior])
        rng = seed_stream(random_state, "inner_folds")
        return choose_rounds(prob, kind, params, inner_folds or 0, rng, col, scales, steps, refit)

    def train_all(c: float, p: TrainParams) -> RankBoostModel:
        sub = prob.subset(~prob.held) if prob.held.any() else prob  # evaluation rows only
        f0 = None if prior is None else c * np.nan_to_num(sub.X[:, prior])
        steps.start(f"training the pooled model ({kind}, {p.n_rounds} rounds)")
        model = train_quiet(sub.X, sub.feedback(kind), p, feature_names=None, init_score=f0)
        steps.done()
        return model

    found = fit_rounds(n_users, params, inner_folds, prior is not None, scales, choose, train_all)
    return PooledFit(*found[:3], prior, found[3])


def top_k(scores: NDArray[np.float64], k: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Per row, the columns of the ``k`` largest finite scores, best first (ties: lower column).

    ``-inf`` marks excluded cells; rows with fewer than ``k`` of the others are padded
    with -1 and NaN.
    """
    n, m = scores.shape
    kk = min(k, m)
    cols = top_columns(scores, kk)
    vals = np.take_along_axis(scores, cols, axis=1)
    items = np.full((n, k), -1, dtype=np.int64)
    out = np.full((n, k), np.nan)
    ok = np.isfinite(vals)
    items[:, :kk] = np.where(ok, cols, -1)
    out[:, :kk] = np.where(ok, vals, np.nan)
    return items, out


def top_of_block(
    base: BaseScores,
    model: PooledFit,
    R: sp.csr_matrix,
    k: int,
    exclude_rated: bool,
    users: NDArray[np.int64],
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Top-``k`` items of a block of users under the pooled model (one scoring call)."""
    S = base.scores(users)
    with numba_threads(1):
        H = model.score(S.reshape(-1, S.shape[2])).reshape(S.shape[:2])
    if exclude_rated:
        Ru = R[users]
        H[np.repeat(np.arange(users.shape[0]), np.diff(Ru.indptr)), Ru.indices] = -np.inf
    return top_k(H, k)


def recommend_pooled(
    base: BaseScores,
    model: PooledFit,
    R: sp.csr_matrix,
    fitted: NDArray[np.int64],
    k: int,
    exclude_rated: bool,
    n_jobs: int,
    verbose: int,
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Top-k of every fitted user: blocks of users scored at once (one model call each)."""
    step = block_size(R.shape[1], len(base.names))
    blocks = [fitted[s : s + step] for s in range(0, fitted.shape[0], step)]
    args = (base, model, R, k, exclude_rated)
    if n_jobs == 1 or len(blocks) < 2:
        parts = [top_of_block(*args, b) for b in blocks]
    else:
        parts = Parallel(n_jobs=n_jobs, verbose=verbose)(
            delayed(top_of_block)(*args, b) for b in blocks
        )
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def train_pooled(
    R: sp.csr_matrix,
    targets: NDArray[np.int64],
    base: dict[str, Any],
    params: TrainParams,
    opts: PooledOptions,
    steps: Steps | None = None,
    ease_fit: dict[str, Any] | None = None,
) -> tuple[dict[str, PooledFit], BaseScores, int]:
    """The pooled model(s), the base recommenders on all of ``R``, and the number of rows.

    One model per kind of feedback (``{"rated": ...}``, ...), and for ``feedback="auto"``
    two, ``"ratings"`` (trained on the rated rows only) and :data:`TOP_N`, on the same
    cross-fitted rows (the top-N one alone when no target has two different ratings;
    :func:`fit_pooled` then lets it serve both). Every model's inner folds come from
    their own random stream, so the two models of ``"auto"`` are bit-identical to the
    ``"ratings"`` and the ``"liked"`` fits of the same seed.

    The inner CV of the models with rated-above-unrated pairs ranks each held-out user's
    rated rows among its training negatives plus :data:`HELD_UNRATED` more unrated rows
    (scored like the others, never trained on); its NDCG gain is 1 for a rated row
    (``"rated"``), a liked row (``"liked"``), or the label.

    ``prior="ease"``: the models with rated-above-unrated pairs (all but ``"ratings"``)
    boost from ``F0 = c * (EASE feature)`` (SPEC 7.2), ``c = prior_scale`` or, when None,
    the one of :data:`~rankboost.model_selection.EASE_PRIOR_SCALES` whose inner-CV curve
    peaks highest (0.25 without inner CV); 0 rounds (EASE alone) is a candidate of the
    inner CV.

    ``refit``: whether the model is trained again on every target after the inner CV
    (:func:`_fit_kind`). ``n_jobs``: cross-fitting folds at once (:func:`pooled_problem`).

    The folds of the ratings are :func:`._base.validation_split`'s (seed stream
    ``"rating_folds"``): with :data:`._base.VALIDATION_FOLDS` folds, the last one holds
    out exactly the ratings the penalty search held out, so its Gram matrix and EASE
    weights (``ease_fit``, :func:`._base.choose_ease_lambda`'s ``keep``) serve that fold.
    """
    steps = steps or Steps(0, disable=True, desc="")
    feedback, n_folds, inner_folds = opts.feedback, opts.n_folds, opts.inner_folds
    rng = seed_stream(opts.random_state, "negatives")
    sampled = "rated" if feedback in ("auto", "liked") else feedback
    held = held_unrated(opts)
    fold = entry_folds(R, n_folds, seed_stream(opts.random_state, "rating_folds"))
    prefit = {}
    if ease_fit and n_folds == VALIDATION_FOLDS:  # moved out of ease_fit: freed after the fold
        prefit[n_folds - 1] = {
            "gram": ease_fit.pop("gram"),
            "ease_weights": ease_fit.pop("weights"),
        }
    problem = pooled_problem(
        R, user_sample(targets, opts.random_state), base, n_folds=n_folds, feedback=sampled,
        negatives=float(opts.negatives), rng=rng, held_unrated=held, steps=steps,
        n_jobs=opts.n_jobs, fold=fold, prefit=prefit,
    )  # fmt: skip
    del prefit
    kinds = ("ratings", TOP_N) if feedback == "auto" else (feedback,)
    fits: dict[str, PooledFit] = {}
    for kind in kinds:
        prob = problem.subset(problem.y > 0) if kind == "ratings" and sampled != kind else problem
        no_pair = kind == "ratings" and not has_pair(prob.y, prob.qid)
        if np.unique(prob.labels(kind)).shape[0] < 2 or no_pair:
            if feedback == "auto":
                continue  # no rating pair at all: predict uses the "rated" model (fit_pooled)
            raise ValueError(
                "no target user has a crucial pair: with feedback='ratings' a target needs "
                "two different ratings. Use feedback='auto', 'liked', 'rated' or 'both' "
                "(rated above unrated), or add ratings."
            )
        col = base["names"].index("ease") if opts.prior == "ease" and kind != "ratings" else None
        fits[kind] = _fit_kind(
            prob, kind, params, inner_folds, opts.random_state, col, prior_scales(opts), steps,
            opts.refit,
        )  # fmt: skip
    steps.start("the base recommenders on all the ratings")
    scores = BaseScores(**base).fit(R)
    steps.done()
    return fits, scores, int((~problem.held).sum())


def prior_scales(opts: PooledOptions) -> tuple[float, ...]:
    """The prior's multipliers tried: ``prior_scale``, or the grid (0.25 without inner CV)."""
    if opts.prior_scale is not None:
        return (float(opts.prior_scale),)
    return EASE_PRIOR_SCALES if opts.inner_folds is not None else (0.25,)


def held_unrated(opts: PooledOptions) -> int:
    """Unrated rows per target sampled for the inner CV only: :data:`HELD_UNRATED`, or 0."""
    sampled = opts.feedback not in ("ratings",)  # "auto", "liked": rated above unrated
    return HELD_UNRATED if opts.inner_folds is not None and sampled else 0


def has_pair(y: NDArray[np.float64], qid: NDArray[np.int64]) -> bool:
    """Whether some query holds two different labels."""
    lo = np.full(int(qid.max()) + 1, np.inf)
    hi = np.full(int(qid.max()) + 1, -np.inf)
    np.minimum.at(lo, qid, y)
    np.maximum.at(hi, qid, y)
    return bool((hi > lo).any())


def pooled_targets(
    R: sp.csr_matrix, targets: NDArray[np.int64], label: list[Any], invalid: str
) -> tuple[NDArray[np.int64], dict[int, str]]:
    """The targets with a rating (a query), and why the others cannot be fitted."""
    n_rated = np.diff(R.indptr)[targets]
    skipped = {
        int(u): f"user {label[u]!r} has no rating, so it has no query to learn from"
        for u in targets[n_rated == 0]
    }
    if skipped and invalid == "raise":
        raise ValueError(
            f"cannot fit target {next(iter(skipped.values()))}. Drop the user from "
            "target_users, or pass invalid_targets='skip' to skip such users."
        )
    fitted = targets[n_rated > 0]
    if fitted.shape[0] == 0:
        raise ValueError("no target user has a rating; the pooled model has no query.")
    return fitted, skipped


def _n_steps(opts: PooledOptions) -> int:
    """The steps of a pooled fit's progress bar (``verbose``), as :func:`train_pooled` runs.

    EASE's penalties (``ease_lambda="auto"``, those its search skips included), the folds,
    per model the inner CV runs (per prior multiplier) and training (``refit=False``: one
    run per multiplier, its model kept), the base fit on R.
    """
    names = opts.base_recommenders
    ease = len(EASE_LAMBDAS) if "ease" in names and isinstance(opts.ease_lambda, str) else 0
    kinds = ("ratings", TOP_N) if opts.feedback == "auto" else (opts.feedback,)
    runs = 0
    for kind in kinds:
        scales = 1
        if opts.prior == "ease" and kind != "ratings" and opts.prior_scale is None:
            scales = len(EASE_PRIOR_SCALES)
        if opts.inner_folds is None:
            runs += 1
        else:
            runs += opts.inner_folds * scales + 1 if opts.refit else scales
    return ease + opts.n_folds + runs + 1


@dataclass(frozen=True)
class PooledOptions:
    """The pooled fit's parameters, validated: ``RankBoostRecommender``'s of these names."""

    base_recommenders: tuple[str, ...]
    feedback: str
    prior: str | None
    prior_scale: float | None
    ease_lambda: float | str
    n_folds: int
    negatives: float
    inner_folds: int | None
    refit: bool
    random_state: int
    invalid_targets: str
    n_jobs: int | None
    verbose: int

    @classmethod
    def of(cls, owner: Any) -> PooledOptions:
        """The values of ``owner``'s parameters of these names (a name alone: one recommender)."""
        values = {f.name: getattr(owner, f.name) for f in fields(cls)}
        names = values["base_recommenders"]
        values["base_recommenders"] = (names,) if isinstance(names, str) else tuple(names)
        return cls(**values)


class PooledResult(NamedTuple):
    """What a pooled fit learned; ``RankBoostRecommender.fit`` assigns it.

    ``top_n`` ranks for ``recommend`` and ``recommend_all``, ``by_rating`` for ``predict``
    and ``rank`` (the same fit unless ``feedback="auto"`` found a rating pair); ``base``:
    the base recommenders on all the ratings; ``ease_lambda``: EASE's penalty (None without
    "ease"); ``fitted``: the rows of the fitted targets, in order; ``skipped``: the row of
    every target left out, and why; ``report``: the counts of ``report_``.
    """

    top_n: PooledFit
    by_rating: PooledFit
    base: BaseScores
    ease_lambda: float | None
    fitted: NDArray[np.int64]
    skipped: dict[int, str]
    report: dict[str, int]


def fit_pooled(  # noqa: PLR0917  private, one caller (RankBoostRecommender.fit)
    R: sp.csr_matrix,
    targets: NDArray[np.int64],
    feats: NDArray[np.int64],
    params: TrainParams,
    label: list[Any],
    opts: PooledOptions,
) -> PooledResult:
    """Fit the pooled model(s) of the targets; return what was learned (:class:`PooledResult`).

    ``feats``: the ``user_knn`` neighbour pool (rows); ``label``: every row's user label
    (for the messages).
    """
    fitted, skipped = pooled_targets(R, targets, label, opts.invalid_targets)
    base: dict[str, Any] = {"names": opts.base_recommenders, "pool": feats}
    lam = None
    kept: dict[str, Any] = {}  # the penalty search's Gram matrix and weights (train_pooled)
    steps = Steps(_n_steps(opts), not opts.verbose, "RankBoostRecommender.fit", stacklevel=3)
    try:
        if "ease" in base["names"]:
            given = opts.ease_lambda
            if isinstance(given, str):  # "auto": on a validation split of the ratings
                given = choose_ease_lambda(R, opts.random_state, steps=steps, keep=kept)[0]
            base["ease_lambda"] = lam = float(given)
        fits, scores, n_rows = train_pooled(R, fitted, base, params, opts, steps, kept)
    finally:
        steps.close()
    top_n = fits.get(TOP_N if opts.feedback == "auto" else opts.feedback, next(iter(fits.values())))
    by_rating = fits.get("ratings", top_n)
    report = {
        "n_targets": int(targets.shape[0]),
        "n_fitted": int(fitted.shape[0]),
        "n_skipped": len(skipped),
        "n_rows": n_rows,
        "n_rounds": top_n.rounds,
        "n_rounds_rating_model": by_rating.rounds,
        "n_stopped_early": int(top_n.model.stop_reason is not None),
    }
    return PooledResult(top_n, by_rating, scores, lam, fitted, skipped, report)
