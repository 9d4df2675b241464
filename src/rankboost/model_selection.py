"""Choosing on held-out data: the one floor under the three wings (fusion, clicks, recommend).

Every estimator that chooses something by held-out data does it with these pieces, as
LightGBM's ``cv()`` sits beside ``train()``:

* **folds** of whole queries (:func:`query_folds`) or whole users (:func:`group_folds`): a
  query is never split between training and held-out rows;
* **held-out curves**: the metric of every round count read off one model's staged scores
  (:func:`staged_scores`, :func:`round_curves`; one training run per fold and prior scale,
  never one per round count; :func:`held_out_curve`, their mean over the queries), and the
  folds' curves over a grid of prior scales (:func:`cross_validate`);
* **the rules**: the first best round count, or (scale, rounds) pair, scale-major
  (:func:`first_best`, :func:`first_best_grid`); the standard-error rule of a family choice
  (:func:`standard_error_rule`); a held-out fold scored with the choice of the *other* folds
  (:func:`cross_fitted_choice`);
* **the grids**, each quantity's defined once (:data:`FUSION_PRIOR_SCALES`,
  :data:`LINEAR_PRIOR_SCALES`, :data:`EASE_PRIOR_SCALES`, :data:`EASE_LAMBDAS`,
  :data:`CONVEX_GRID_STEPS`, :data:`CONVEX_GRID_MAX_RUNS`), and **the seed streams**, one
  per purpose (:func:`seed_stream`, :data:`SEED_PURPOSES`).

The held-out metric is NDCG@10 with :func:`rankboost.metrics.ndcg_score`'s defaults (gain
``2**label - 1``, ``log2`` discount, ties at their expected value, a query without a
relevant row scoring 0), computed for every round at once by one kernel
(``_kernels.ranking_metrics.ndcg_rounds``, which sums as ``ndcg_score`` sums:
``tests/test_model_selection.py`` checks every value against
:func:`~rankboost.metrics.ndcg_score`'s to the last bit, so a choice read off the curves is
the one a metric call after every round would make).

Examples
--------
>>> import numpy as np
>>> import rankboost as rb
>>> from rankboost.model_selection import (cross_validate, first_best_grid, query_folds,
...                                        round_curves, staged_scores)
>>> rng = np.random.default_rng(0)
>>> qid = np.repeat(np.arange(20), 8)
>>> y = rng.integers(0, 2, 160)
>>> X = (y + rng.normal(size=160))[:, None]
>>> fold = query_folds(y, qid, 4)
>>> def curve(train, valid, scale):
...     model = rb.train(X[train], rb.LayeredFeedback(y[train], qid[train]), n_rounds=10)
...     return round_curves(staged_scores(model, X[valid], 10), y[valid], qid[valid]).mean(0)
>>> per_fold = cross_validate(fold, 4, (0.0,), curve)
>>> per_fold.shape
(4, 1, 10)
>>> scale, index = first_best_grid(per_fold.mean(axis=0))
>>> scale, 0 <= index < 10
(0, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "AUTO_BOOSTED_MAX_RUNS",
    "CONVEX_ASCENT_FACTORS",
    "CONVEX_ASCENT_PASSES",
    "CONVEX_GRID_MAX_RUNS",
    "CONVEX_GRID_STEPS",
    "EASE_LAMBDAS",
    "EASE_PRIOR_SCALES",
    "FUSION_PRIOR_SCALES",
    "LINEAR_PRIOR_SCALES",
    "PUSH_CV_FOLDS",
    "PUSH_EXPONENTS",
    "PUSH_THRESHOLD_SE",
    "SEED_PURPOSES",
    "cross_fitted_choice",
    "cross_validate",
    "first_best",
    "first_best_grid",
    "group_folds",
    "held_out_curve",
    "query_folds",
    "round_curves",
    "seed_stream",
    "staged_scores",
    "standard_error_rule",
]

# ------------------------------------------------------------------ the grids -----------
#: Prior scales ``c`` of boosting from a fusion prior (``RankFusion(prior="combsum" | "rrf",
#: prior_scale="auto")``, ``AutoFusion``'s ``boost_combsum``); 0 = no prior.
FUSION_PRIOR_SCALES = (0.0, 1.0, 2.0, 4.0, 8.0)
#: Prior scales ``c`` of ``LinearFusion(prior_scale="auto")`` (the prior ``c sum_i h_i``,
#: CombSUM of the normalised scores), and of ``AutoFusion``'s ``linear``; 0 = no prior.
LINEAR_PRIOR_SCALES = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)
#: Multipliers ``c`` of the recommender's prior ``F0 = c * EASE score``
#: (``RankBoostRecommender(prior_scale=None)``; SPEC 7.2: the prior's scale matters).
EASE_PRIOR_SCALES = (0.1, 0.25, 0.5)
#: EASE's L2 penalties tried by ``RankBoostRecommender(ease_lambda="auto")``.
EASE_LAMBDAS = (50.0, 100.0, 250.0, 500.0, 1000.0)
#: Steps of the simplex grid of ``AutoFusion``'s ``convex`` family per number of runs (the
#: weights are multiples of ``1 / steps``; more runs, a coarser grid; 2 beyond five runs).
CONVEX_GRID_STEPS = {1: 1, 2: 20, 3: 10, 4: 5, 5: 4}
#: The most runs whose convex weights are searched on the whole simplex grid (step 1/2 beyond
#: five runs: ``m (m + 1) / 2`` points, 528 for 32 runs, each scored over every row); wider,
#: by coordinate ascent (:data:`CONVEX_ASCENT_FACTORS`, at most :data:`CONVEX_ASCENT_PASSES`
#: passes), whose time and memory grow linearly with the runs.
CONVEX_GRID_MAX_RUNS = 32
#: The factors coordinate ascent tries on one run's weight (the others unchanged, then all
#: divided by their sum): dropped, halved, doubled, quadrupled.
CONVEX_ASCENT_FACTORS = (0.0, 0.5, 2.0, 4.0)
#: The most passes of coordinate ascent over the runs (it stops after a pass that changes
#: nothing).
CONVEX_ASCENT_PASSES = 3
#: The P-Norm Push exponents ``p`` that ``push="auto"`` tries (``RankBoostRanker``,
#: ``rankboost train --push auto``; :mod:`rankboost._auto_push`); 1 = RankBoost, the fallback.
PUSH_EXPONENTS = (1.0, 2.0, 4.0, 8.0, 16.0)
#: ``push="auto"`` keeps ``p = 1`` unless another ``p`` beats it by more than this many
#: standard errors of the per-query differences (:func:`standard_error_rule`; AutoFusion's
#: default ``threshold_se``).
PUSH_THRESHOLD_SE = 2.0
#: Inner folds of ``push="auto"`` over the training queries when the fit has no validation set.
PUSH_CV_FOLDS = 5
#: The most runs for which ``AutoFusion`` scores the boosted candidates (``boost``,
#: ``boost_combsum``) beside the weighted sums: each of their ``cv_folds x (1 + 5 prior
#: scales)`` inner fits boosts ``max_rounds`` rounds over ``2 runs + 1`` features of every
#: row (1,000 runs x 100 queries x 100 documents: 0.16 s a round, 8 minutes in all). Wider,
#: and when the weighted sums can run, they are left out of the choice with a note.
AUTO_BOOSTED_MAX_RUNS = 32

# ------------------------------------------------------------------ the seed streams ----
#: What each random stream of a fit is for, and the second word of its seed
#: (``np.random.default_rng([random_state, word])``); ``None``: the seed alone
#: (``np.random.default_rng(random_state)``). Two purposes never share a stream, so a change
#: in how many numbers one draws leaves the others' draws as they were.
SEED_PURPOSES: dict[str, int | None] = {
    # the recommender: the unrated items sampled as negatives and their folds
    "negatives": None,
    # the recommender: the inner folds of target users that choose the rounds
    "inner_folds": 1,
    # the recommender: the cross-fitting folds of each user's ratings (and the validation
    # split of the EASE penalty search, their last fold)
    "rating_folds": 2,
    # the recommender: the sample of at most MAX_QUERIES users of a large fit
    "user_sample": 35,
    # fusion: the permutation of the usable queries dealt into the inner folds
    "query_folds": None,
}


def seed_stream(random_state: int, purpose: str) -> np.random.Generator:
    """The random stream of ``purpose`` (:data:`SEED_PURPOSES`) of a fit seeded ``random_state``.

    Examples
    --------
    >>> from rankboost.model_selection import seed_stream
    >>> a = seed_stream(0, "inner_folds").random()
    >>> a == np.random.default_rng([0, 1]).random()
    True
    """
    if purpose not in SEED_PURPOSES:
        raise ValueError(f"purpose must be one of {sorted(SEED_PURPOSES)}; got {purpose!r}.")
    word = SEED_PURPOSES[purpose]
    return np.random.default_rng(random_state if word is None else [random_state, word])


# ------------------------------------------------------------------ the folds -----------
def query_folds(
    y: NDArray[Any],
    qcode: NDArray[Any],
    n_folds: int,
    *,
    seed: int = 0,
    pair_labels: NDArray[Any] | None = None,
    owner: str = "n_rounds='auto'",
    chooses: str = "the rounds",
    instead: str = "an int number of rounds (n_rounds=100, --rounds 100), or fewer folds "
    "(cv_folds, --cv-folds)",
) -> NDArray[np.int64]:
    """The inner fold of every row: its query's fold, -1 for a query that cannot train.

    The queries with two different labels (``pair_labels``, default ``y``) are split into
    ``n_folds`` folds: a permutation seeded by ``seed`` (:func:`seed_stream`'s
    ``"query_folds"``), the ``i``-th query of the permuted order (queries in order of first
    appearance) to fold ``i mod n_folds``. A query without two labels gives no pair to train
    on and a constant metric whatever the model, so it takes no part in the choice.

    Parameters
    ----------
    y : array-like of shape (n_rows,)
        Grades.
    qcode : array-like of int of shape (n_rows,)
        Query code of every row, ``0..n_queries-1``.
    n_folds : int
        Number of folds, at least 2 and at most the number of usable queries.
    seed : int, default=0
        Seed of the permutation.
    pair_labels : array-like of shape (n_rows,), default=None
        The labels the feedback orders (a query can train when they differ within it);
        None = ``y``.
    owner : str, default="n_rounds='auto'"
        What is chosen by these folds, for the error of too few usable queries.
    chooses, instead : str
        That error's words: what ``owner`` chooses, and what to pass instead.

    Returns
    -------
    ndarray of int64 of shape (n_rows,)

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.model_selection import query_folds
    >>> query_folds(np.array([0, 1, 0, 0, 1, 0, 1]), np.array([0, 0, 1, 1, 2, 2, 3]), 2)
    array([ 0,  0, -1, -1,  1,  1, -1])
    """
    from .params import ParameterError

    qcode = np.asarray(qcode).reshape(-1)
    n_q = int(qcode.max()) + 1 if qcode.size else 0
    first = np.full(n_q, qcode.shape[0], dtype=np.int64)
    np.minimum.at(first, qcode, np.arange(qcode.shape[0]))
    lo = np.full(n_q, np.iinfo(np.int64).max)
    hi = np.full(n_q, np.iinfo(np.int64).min)
    pl = np.asarray(y if pair_labels is None else pair_labels, dtype=np.int64)
    np.minimum.at(lo, qcode, pl)
    np.maximum.at(hi, qcode, pl)
    usable_q = lo < hi
    order = np.argsort(first, kind="stable")  # queries in order of first appearance
    usable = order[usable_q[order]]
    if isinstance(n_folds, bool) or not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise ParameterError(f"cv_folds must be an int >= 2; got {n_folds!r}.")
    if usable.shape[0] < n_folds:
        raise ValueError(
            f"{owner} chooses {chooses} by {n_folds}-fold cross-validation over the "
            f"training queries, which needs at least {n_folds} judged queries with two "
            f"different grades among the returned documents; there are {usable.shape[0]}. "
            f"Pass {instead}."
        )
    perm = seed_stream(seed, "query_folds").permutation(usable.shape[0])
    fold_q = np.full(n_q, -1, dtype=np.int64)
    fold_q[usable[perm]] = np.arange(usable.shape[0]) % n_folds
    return fold_q[qcode]


def group_folds(
    groups: NDArray[np.int64], n_folds: int, rng: np.random.Generator
) -> NDArray[np.int64]:
    """The fold of every row: its group's (a user's), the sorted groups dealt at random.

    The distinct groups, in increasing order, get the folds ``rng.permutation(n) % n_folds``.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.model_selection import group_folds
    >>> group_folds(np.array([3, 3, 5, 9, 9]), 2, np.random.default_rng(0))
    array([0, 0, 0, 1, 1])
    """
    users = np.unique(groups)
    group = rng.permutation(users.shape[0]) % n_folds
    g_of = np.zeros(int(users.max()) + 1, dtype=np.int64)
    g_of[users] = group
    return g_of[groups]


# ------------------------------------------------------------------ the curves ----------
def staged_scores(
    model: Any,
    X: NDArray[np.float64],
    n_rounds: int,
    *,
    base: NDArray[np.float64] | None = None,
    start: int = 1,
) -> NDArray[np.float64]:
    """The rows' scores after every round count ``start..n_rounds``: shape ``(width, rows)``.

    Row ``j`` holds ``base + H_{start + j}`` (``H_t``: the model's first ``t`` rounds,
    ``H_0 = 0``; ``base``: a prior's scores, default 0). A model that stopped before
    ``n_rounds`` keeps its last scores in the remaining rows (as refitting it with more
    rounds would). Boosting is greedy, so row ``j`` scores the rows as the model trained
    with ``start + j`` rounds would.
    """
    width = n_rounds + 1 - start
    HT = np.zeros((width, X.shape[0]))
    if base is not None:
        HT += base
    t = 0
    for t, h in enumerate(model.staged_decision_function(X), start=1):
        if t > n_rounds:
            break
        if t >= start:
            HT[t - start] += h
    done = min(t, n_rounds)
    if done + 1 - start < width:  # stopped early: the last model stays
        last = HT[done - start] if done >= start else HT[0]
        HT[max(done + 1 - start, 0) :] = last.copy()
    return HT


def round_curves(
    HT: NDArray[np.float64], labels: NDArray[Any], qcode: NDArray[Any], k: int = 10
) -> NDArray[np.float64]:
    """NDCG@k of every query (row) under every round's scores (column): ``(n_queries, width)``.

    ``HT`` has one row of scores per round count (:func:`staged_scores`); ``labels`` are
    graded relevance (gain ``2**label - 1``; a label <= 0 is not relevant); queries in any
    row order (grouped here, stable), output rows in increasing ``qcode``. The mean over
    queries (``.mean(axis=0)``) is the held-out curve; blocks of whole queries can be scored
    one after another and their rows stacked.
    """
    from ._kernels.ranking_metrics import ndcg_rounds

    qcode = np.asarray(qcode).reshape(-1)
    labels = np.maximum(np.asarray(labels, dtype=np.float64), 0.0)
    if qcode.shape[0] > 1 and np.any(qcode[1:] < qcode[:-1]):
        order = np.argsort(qcode, kind="stable")
        qcode, labels, HT = qcode[order], labels[order], HT[:, order]
    starts = np.flatnonzero(np.r_[True, qcode[1:] != qcode[:-1], True]).astype(np.int64)
    gain = np.exp2(labels) - 1.0
    return ndcg_rounds(np.ascontiguousarray(HT, dtype=np.float64), gain, starts, int(k))


def held_out_curve(
    HT: NDArray[np.float64], labels: NDArray[Any], qcode: NDArray[Any], k: int = 10
) -> NDArray[np.float64]:
    """Mean NDCG@k over the queries under every round's scores: shape ``(width,)``.

    Entry ``t`` is ``ndcg_score(labels, HT[t], qcode, k=k)`` to the last bit: the per-query
    values of :func:`round_curves` averaged as ``ndcg_score`` averages them (numpy's
    pairwise sum over the queries of one round; ``round_curves(...).mean(axis=0)`` sums
    the queries one after another and may differ in the last bit).

    Examples
    --------
    >>> from rankboost.metrics import ndcg_score
    >>> from rankboost.model_selection import held_out_curve
    >>> rng = np.random.default_rng(0)
    >>> qid, y, HT = np.repeat(np.arange(30), 5), rng.integers(0, 3, 150), rng.normal(size=(3, 150))
    >>> bool(held_out_curve(HT, y, qid)[2] == ndcg_score(y, HT[2], qid))
    True
    """
    return np.ascontiguousarray(round_curves(HT, labels, qcode, k).T).mean(axis=1)


def cross_validate(
    fold: NDArray[np.int64],
    n_folds: int,
    scales: Sequence[float],
    fold_curve: Callable[[NDArray[np.bool_], NDArray[np.bool_], float], NDArray[np.float64] | None],
    *,
    progress: Any = None,
) -> NDArray[np.float64]:
    """The held-out curve of every fold and prior scale: shape ``(n_folds, n_scales, width)``.

    ``fold_curve(train, valid, scale)`` trains on the rows of ``train`` (``fold`` >= 0 and
    not the held-out fold), scores the rows of ``valid`` and returns their curve (one value
    per round count), or None when the fold cannot be used (its row of the result is NaN:
    :func:`first_best_grid` and ``np.nanmean`` leave it out). The folds run in order, the
    scales inside each fold; ``progress.update(1)`` after each fold.
    """
    out: list[list[NDArray[np.float64] | None]] = []
    for f in range(n_folds):
        train, valid = (fold >= 0) & (fold != f), fold == f
        out.append([fold_curve(train, valid, float(c)) for c in scales])
        if progress is not None:
            progress.update(1)
    width = max((len(c) for row in out for c in row if c is not None), default=0)
    per_fold = np.full((n_folds, len(scales), width), np.nan)
    for f, row in enumerate(out):
        for s, c in enumerate(row):
            if c is not None:
                per_fold[f, s] = c
    return per_fold


# ------------------------------------------------------------------ the rules -----------
def first_best(curve: NDArray[np.float64]) -> int:
    """The index of the first highest value (NaN left out)."""
    return int(np.nanargmax(curve))


def first_best_grid(curves: NDArray[np.float64]) -> tuple[int, int]:
    """``(scale, index)`` of the first highest value of ``curves[scale, round]``, scale-major.

    On equal values the first scale of the grid wins, then the fewest rounds.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.model_selection import first_best_grid
    >>> first_best_grid(np.array([[0.1, 0.3, 0.3], [0.2, 0.3, 0.1]]))
    (0, 1)
    """
    s, t = np.unravel_index(int(np.nanargmax(curves)), curves.shape)
    return int(s), int(t)


def cross_fitted_choice(
    curves: Sequence[tuple[Sequence[str], NDArray[np.float64]]],
) -> tuple[dict[str, float], int]:
    """Held-out values per query, each fold scored with the other folds' first best; the refit's.

    ``curves[f] = (queries, P)``: ``P[k, j]`` is held-out query ``j``'s value under
    configuration ``k`` in fold ``f``. Fold ``f``'s queries take the values of the
    configuration the *other* folds' mean prefers (first best), so none of them is
    evaluated in choosing it; the refit takes the first best of the mean over every fold.
    Returns the per-query values and the refit's configuration index.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.model_selection import cross_fitted_choice
    >>> per_q, k = cross_fitted_choice([(["a"], np.array([[0.2], [0.9]])),
    ...                                 (["b"], np.array([[0.5], [0.1]]))])
    >>> per_q, k
    ({'a': 0.2, 'b': 0.1}, 1)
    """
    M = np.array([P.mean(axis=1) for _, P in curves])  # (fold, config) means
    per_q: dict[str, float] = {}
    for f, (qs_f, P) in enumerate(curves):
        k = int(np.argmax(np.delete(M, f, axis=0).mean(axis=0)))
        per_q.update(zip(qs_f, P[k].tolist(), strict=True))
    return per_q, int(np.argmax(M.mean(axis=0)))


def standard_error_rule(
    per_query: dict[str, dict[str, float]],
    candidates: Sequence[str],
    fallback: str,
    threshold_se: float,
) -> tuple[dict[str, dict[str, float]], str]:
    """The selection table and the choice: ``fallback`` unless another wins by enough.

    ``per_query[c][q]`` is candidate ``c``'s held-out value of query ``q``. The table holds,
    per candidate, its mean (``"mean"``), its mean difference to the fallback over the same
    queries (``"diff"``) and that difference's standard error (``"se"``). The best candidate
    (the first of equal means) replaces ``fallback`` only when its difference exceeds
    ``threshold_se`` standard errors: a choice among a few dozen queries is noisy, and a
    family that wins it by noise loses on the next collection.

    Examples
    --------
    >>> from rankboost.model_selection import standard_error_rule
    >>> per_q = {"a": {"q1": 0.5, "q2": 0.5}, "b": {"q1": 0.9, "q2": 0.6}}
    >>> standard_error_rule(per_q, ["a", "b"], "a", 2.0)[1]
    'a'
    >>> standard_error_rule(per_q, ["a", "b"], "a", 1.0)[1]
    'b'
    """
    qs = sorted(per_query[fallback])
    base = np.array([per_query[fallback][q] for q in qs])
    table: dict[str, dict[str, float]] = {}
    for c in candidates:
        v = np.array([per_query[c][q] for q in qs])
        d = v - base
        se = float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else 0.0
        table[c] = {"mean": float(v.mean()), "diff": float(d.mean()), "se": se}
    cands = list(candidates)
    best = max(cands, key=lambda c: (table[c]["mean"], -cands.index(c)))
    if best != fallback and table[best]["diff"] > threshold_se * table[best]["se"]:
        return table, best
    return table, fallback
