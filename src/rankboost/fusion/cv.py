"""RankFusion's held-out method on the model-selection floor: ``n_rounds="auto"``.

How one inner fold is scored (:func:`boosted_curve`: a RankBoost model of ``max_rounds``
rounds trained on the other folds' queries, from the prior ``c F_0`` when there is one, and
its held-out NDCG@10 after every round) is fusion's own; the folds, the curves, the grid of
prior scales and the first-best rule are :mod:`rankboost.model_selection`'s.
:func:`cv_rounds` (public) chooses the rounds of boosting without a prior;
:func:`rankboost.fusion.prior.cv_prior` the prior's scale and the rounds together.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..model_selection import (
    cross_validate,
    first_best,
    held_out_curve,
    query_folds,
    staged_scores,
)
from ..params import TrainParams

__all__ = ["boosted_curve", "cv_rounds"]

FoldCurve = Callable[[NDArray[np.bool_], NDArray[np.bool_], float], NDArray[np.float64]]


def boosted_curve(
    X: NDArray[np.float64],
    y: NDArray[np.int64],
    qcode: NDArray[np.int64],
    params: TrainParams,
    make_feedback: Callable[[NDArray[np.int64], NDArray[Any]], Any],
    F0: NDArray[np.float64] | None = None,
) -> FoldCurve:
    """The fold method of :func:`rankboost.model_selection.cross_validate` for RankFusion.

    ``curve(train, valid, c)`` trains ``params.n_rounds`` rounds on the rows of ``train``
    (from ``init_score = c F0[train]`` when ``F0`` is given) and returns the held-out
    NDCG@10 of the rows of ``valid`` after rounds ``1..T`` (``0..T`` with a prior: 0 = the
    prior alone). A model that stops early keeps its last value.
    """
    from ..engine import TrainingStoppedWarning, train_checked

    T = int(params.n_rounds)

    def curve(train: NDArray[np.bool_], valid: NDArray[np.bool_], c: float) -> NDArray[np.float64]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrainingStoppedWarning)
            model = train_checked(
                np.ascontiguousarray(X[train]),
                make_feedback(y[train], qcode[train]),
                params,
                init_score=None if F0 is None else c * F0[train],
            )
        if F0 is None:
            HT = staged_scores(model, X[valid], T)
        else:
            HT = staged_scores(model, X[valid], T, base=c * F0[valid], start=0)
        return held_out_curve(HT, y[valid], qcode[valid])

    return curve


def cv_rounds(
    X: NDArray[np.float64],
    y: NDArray[np.int64],
    qid: NDArray[Any],
    params: TrainParams,
    make_feedback: Callable[[NDArray[np.int64], NDArray[Any]], Any],
    *,
    cv_folds: int = 5,
    seed: int = 0,
    pair_labels: NDArray[Any] | None = None,
    progress: Any = None,
) -> dict[str, Any]:
    """Choose the number of boosting rounds by cross-validation over queries.

    The queries that can train (two different labels under ``make_feedback``) are split
    into ``cv_folds`` folds (:func:`rankboost.model_selection.query_folds`, seeded by
    ``seed``). For each fold one model of ``params.n_rounds`` rounds is trained on the other
    folds' queries, and the NDCG@10 of the held-out queries
    (:func:`rankboost.metrics.ndcg_score`'s, defaults: exp2 gain, log2 discount, expected
    ties) is read off its staged scores after every round (:func:`boosted_curve`). A model
    that stops early (no weak ranker left) keeps its last value. The chosen count is the
    first with the highest mean over the folds.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features)
        Feature rows (NaN = abstain), grouped or not by query.
    y : ndarray of int of shape (n_rows,)
        Grades.
    qid : ndarray of shape (n_rows,)
        Query of each row.
    params : TrainParams
        Training parameters; ``params.n_rounds`` is the largest count tried.
    make_feedback : callable
        ``make_feedback(y, qid)`` builds the feedback of a subset of rows.
    cv_folds : int, default=5
        Number of folds, at least 2 and at most the number of usable queries.
    seed : int, default=0
        Seed of the permutation of the queries.
    pair_labels : ndarray of shape (n_rows,), default=None
        The labels ``make_feedback`` orders (a query can train when they differ within it);
        None = ``y``. Bipartite feedback on grades passes ``y >= 1``.
    progress : object with an ``update(n)`` method, default=None
        Told after each fold (a progress bar: :func:`rankboost._compat.progress_bar`).

    Returns
    -------
    dict
        ``"n_rounds"`` (1..T), ``"mean"`` and ``"per_fold"`` (held-out NDCG@10 per round
        count), ``"best_n_rounds"``, ``"best_score"`` and ``"fold_of_query"`` ({qid: fold}).

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost import LayeredFeedback
    >>> from rankboost.fusion import cv_rounds
    >>> from rankboost.params import TrainParams
    >>> rng = np.random.default_rng(0)
    >>> qid = np.repeat(np.arange(20), 8)
    >>> y = rng.integers(0, 2, 160)
    >>> X = (y + rng.normal(size=160))[:, None]
    >>> cv = cv_rounds(X, y, qid, TrainParams(n_rounds=10), LayeredFeedback, cv_folds=4)
    >>> cv["mean"].shape, 1 <= cv["best_n_rounds"] <= 10
    ((10,), True)
    """
    uq, qcode = np.unique(np.asarray(qid), return_inverse=True)
    qcode = qcode.reshape(-1)
    yy = np.asarray(y, dtype=np.int64)
    fold = query_folds(yy, qcode, cv_folds, seed=seed, pair_labels=pair_labels)
    fold_q = np.full(uq.shape[0], -1, dtype=np.int64)
    fold_q[qcode] = fold
    curve = boosted_curve(X, yy, qcode, params, make_feedback)
    per_fold = cross_validate(fold, cv_folds, (0.0,), curve, progress=progress)[:, 0]
    mean = per_fold.mean(axis=0)
    best = first_best(mean)
    return {
        "n_rounds": np.arange(1, int(params.n_rounds) + 1),
        "mean": mean,
        "per_fold": per_fold,
        "best_n_rounds": best + 1,
        "best_score": float(mean[best]),
        "fold_of_query": {
            str(q): int(f) for q, f in zip(uq.tolist(), fold_q.tolist(), strict=True)
        },
    }
