"""Choosing the number of boosting rounds by cross-validation over queries (``--rounds auto``)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..params import ParameterError, TrainParams

__all__ = ["cv_rounds", "query_folds"]


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
    into ``cv_folds`` folds (a permutation seeded by ``seed``; query ``i`` of the permuted
    order goes to fold ``i mod cv_folds``). For each fold one model of ``params.n_rounds``
    rounds is trained on the other folds' queries, and the NDCG@10 of the held-out queries
    (:func:`rankboost.metrics.ndcg_score`, defaults: exp2 gain, log2 discount, expected ties)
    is computed after every round. A model that stops early (no weak ranker left) keeps its
    last value. The chosen count is the first with the highest mean over the folds.

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
    from ..engine import TrainingStoppedWarning, train_checked
    from ..metrics import ndcg_score

    uq, qcode = np.unique(np.asarray(qid), return_inverse=True)
    qcode = qcode.reshape(-1)
    n_q = uq.shape[0]
    yy = np.asarray(y, dtype=np.int64)
    gain = np.maximum(yy, 0)  # scored as trec_eval: a grade <= 0 is not relevant
    fold = query_folds(yy, qcode, cv_folds, seed=seed, pair_labels=pair_labels)
    fold_q = np.full(n_q, -1, dtype=np.int64)
    fold_q[qcode] = fold
    T = int(params.n_rounds)
    curves = np.empty((cv_folds, T))
    for f in range(cv_folds):
        tr = (fold >= 0) & (fold != f)
        va = fold == f
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrainingStoppedWarning)
            model = train_checked(
                np.ascontiguousarray(X[tr]), make_feedback(yy[tr], qcode[tr]), params
            )
        t = 0
        for t, h in enumerate(model.staged_decision_function(X[va])):
            curves[f, t] = ndcg_score(gain[va], h, qcode[va], k=10)
        if model.n_rounds == 0:
            curves[f, :] = ndcg_score(gain[va], np.zeros(int(va.sum())), qcode[va], k=10)
        else:
            curves[f, t + 1 :] = curves[f, t]
        if progress is not None:
            progress.update(1)
    mean = curves.mean(axis=0)
    best = int(np.argmax(mean))
    return {
        "n_rounds": np.arange(1, T + 1),
        "mean": mean,
        "per_fold": curves,
        "best_n_rounds": best + 1,
        "best_score": float(mean[best]),
        "fold_of_query": {str(uq[i]): int(fold_q[i]) for i in range(n_q)},
    }


def query_folds(
    y: NDArray[Any],
    qcode: NDArray[np.int64],
    cv_folds: int,
    *,
    seed: int = 0,
    pair_labels: NDArray[Any] | None = None,
) -> NDArray[np.int64]:
    """The inner fold of every row: its query's fold, -1 for a query that cannot train.

    The queries with two different labels (``pair_labels``, default ``y``) are split into
    ``cv_folds`` folds: a permutation seeded by ``seed``, the ``i``-th query of the permuted
    order (queries in order of first appearance) to fold ``i mod cv_folds``.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.fusion.cv import query_folds
    >>> query_folds(np.array([0, 1, 0, 0, 1, 0, 1]), np.array([0, 0, 1, 1, 2, 2, 3, 3][:7]), 2)
    array([ 0,  0, -1, -1,  1,  1, -1])
    """
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
    # NOTE: a query without two labels gives no pairs to train on, and a constant NDCG
    # whatever the model, so it takes no part in the choice.
    order = np.argsort(first, kind="stable")  # queries in order of first appearance
    usable = order[usable_q[order]]
    if isinstance(cv_folds, bool) or not isinstance(cv_folds, (int, np.integer)) or cv_folds < 2:
        raise ParameterError(f"cv_folds must be an int >= 2; got {cv_folds!r}.")
    if usable.shape[0] < cv_folds:
        raise ValueError(
            f"n_rounds='auto' chooses the rounds by {cv_folds}-fold cross-validation over the "
            f"training queries, which needs at least {cv_folds} judged queries with two "
            f"different grades among the returned documents; there are {usable.shape[0]}. "
            "Pass an int number of rounds (n_rounds=100, --rounds 100), or fewer folds "
            "(cv_folds, --cv-folds)."
        )
    perm = np.random.default_rng(seed).permutation(usable.shape[0])
    fold_q = np.full(n_q, -1, dtype=np.int64)
    fold_q[usable[perm]] = np.arange(usable.shape[0]) % cv_folds
    return fold_q[qcode]
