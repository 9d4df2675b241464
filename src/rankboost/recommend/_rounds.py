"""The pooled model's number of rounds, chosen on held-out target users (inner CV).

The targets are dealt at random into ``inner_folds`` groups (:func:`_inner_groups`). For a
group, a model is trained on the other groups' rows and the held-out group's mean NDCG@10
is recorded after every round (:func:`_held_out_curve`). Two ways to use it:

* :func:`select_rounds` (``refit=True``): every group is held out in turn, the round with
  the best mean curve is kept, and the caller trains the final model on every target.
* :func:`holdout_rounds` (``refit=False``, the default): only the first group is held out
  and the model trained on the others is kept, cut at its best round -- one training run
  instead of ``inner_folds + 1`` (as scikit-learn's ``HistGradientBoosting*`` keep the
  model trained beside their ``validation_fraction``).

With a prior (``F0`` per row, SPEC 7.2) the runs start from it and round 0 (the prior
alone) is a candidate too.
"""

from __future__ import annotations

import warnings
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from .._compat import Steps
from .._kernels import numba_threads
from ..engine import TrainingStoppedWarning, train_checked
from ..feedback import LayeredFeedback
from ..model import RankBoostModel
from ..params import TrainParams
from ._ndcg import ndcg_per_query_round


class PooledProblem(Protocol):
    """What the searches read of a pooled problem (:class:`._pooled.PooledProblem`)."""

    X: NDArray[np.float64]
    qid: NDArray[np.int64]
    held: NDArray[np.bool_]

    def labels(self, kind: str) -> NDArray[np.float64]: ...

    def gains(self, kind: str) -> NDArray[np.float64]: ...

    def feedback(self, kind: str, rows: NDArray[np.bool_] | None = None) -> LayeredFeedback: ...


__all__ = ["holdout_rounds", "select_rounds", "train_quiet"]

#: scores held at once by :func:`_held_out_curve` (rounds x rows of a block of users)
_BLOCK_CELLS = 1 << 22


def train_quiet(
    X: NDArray[np.float64], fb: LayeredFeedback, params: TrainParams, **kw: Any
) -> RankBoostModel:
    with numba_threads(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        return train_checked(X, fb, params, **kw)


def _inner_groups(
    qid: NDArray[np.int64], inner_folds: int, rng: np.random.Generator
) -> NDArray[np.int64]:
    """The inner fold of every row: target users dealt at random into ``inner_folds``."""
    users = np.unique(qid)
    group = rng.permutation(users.shape[0]) % inner_folds
    g_of = np.zeros(int(users.max()) + 1, dtype=np.int64)
    g_of[users] = group
    return g_of[qid]


def _fold_curve(  # noqa: PLR0917  private helper of the two searches
    problem: PooledProblem,
    kind: str,
    params: TrainParams,
    valid: NDArray[np.bool_],
    prior: NDArray[np.float64] | None,
    steps: Steps,
    what: str,
) -> tuple[NDArray[np.float64], RankBoostModel] | None:
    """The model trained on the rows outside ``valid`` and its held-out curve.

    The curve has one value per round (index 0: the prior alone, with a prior), padded with
    its last value when the run stopped early; None when the fold cannot be used (no
    held-out row, or one label only among the training rows).
    """
    start = 0 if prior is None else 1
    train = ~valid & ~problem.held
    labels = problem.labels(kind)
    steps.start(what)
    try:
        if not valid.any() or not train.any() or labels[train].max() == labels[train].min():
            return None
        gain = problem.gains(kind)[valid]
        f0 = None if prior is None else prior[train]
        fb = problem.feedback(kind, train)
        model = train_quiet(problem.X[train], fb, params, init_score=f0)
        curve = _held_out_curve(model, problem.X[valid], problem.qid[valid], gain, start,
                                None if prior is None else prior[valid])  # fmt: skip
    finally:
        steps.done()
    full = np.full(params.n_rounds + start, curve[-1] if curve.size else np.nan)
    full[: curve.shape[0]] = curve  # a stopped run keeps its last value
    return full, model


def select_rounds(
    problem: PooledProblem,
    kind: str,
    params: TrainParams,
    inner_folds: int,
    rng: np.random.Generator,
    prior: NDArray[np.float64] | None = None,
    steps: Steps | None = None,
) -> tuple[int, NDArray[np.float64]]:
    """The number of rounds with the best mean held-out NDCG@10 over folds of users.

    One run of ``params.n_rounds`` per inner fold; the held-out users' scores after every
    round come from the run's rounds at the end (``staged_decision_function``) and their
    NDCG@10 from one kernel call per block of users (:func:`_held_out_curve`, equal to
    :func:`rankboost.metrics.ndcg_score` per round). Returns the best round (1-based; 0 =
    the prior alone) and the mean curve (one value per round; with a prior, index 0 is the
    prior alone).
    """
    steps = steps or Steps(0, disable=True, desc="")
    g = _inner_groups(problem.qid, inner_folds, rng)
    start = 0 if prior is None else 1
    curves = []
    for k in range(inner_folds):
        what = f"choosing the rounds ({kind}), inner fold {k + 1}/{inner_folds}"
        out = _fold_curve(problem, kind, params, g == k, prior, steps, what)
        if out is not None:
            curves.append(out[0])
    if not curves:
        return params.n_rounds, np.full(params.n_rounds + start, np.nan)
    mean = np.mean(curves, axis=0)
    return int(np.nanargmax(mean)) + 1 - start, mean


def holdout_rounds(  # noqa: PLR0917  select_rounds' arguments
    problem: PooledProblem,
    kind: str,
    params: TrainParams,
    inner_folds: int,
    rng: np.random.Generator,
    prior: NDArray[np.float64] | None = None,
    steps: Steps | None = None,
) -> tuple[int, NDArray[np.float64], RankBoostModel] | None:
    """The first inner fold held out: the model trained on the others, and its best round.

    The same groups, run and curve as :func:`select_rounds`'s first fold; returns the best
    round (0 = the prior alone), the curve and the model (trained on the targets of the
    other ``inner_folds - 1`` groups), or None when that fold cannot be used.
    """
    steps = steps or Steps(0, disable=True, desc="")
    g = _inner_groups(problem.qid, inner_folds, rng)
    what = f"training the pooled model ({kind}) and choosing its rounds on held-out users"
    out = _fold_curve(problem, kind, params, g == 0, prior, steps, what)
    if out is None:
        return None
    curve, model = out
    if not np.isfinite(curve).any():
        return None
    return int(np.nanargmax(curve)) + 1 - (prior is not None), curve, model


def _held_out_curve(  # noqa: PLR0917  private helper of select_rounds
    model: RankBoostModel,
    Xv: NDArray[np.float64],
    qv: NDArray[np.int64],
    gain: NDArray[np.float64],
    start: int,
    prior: NDArray[np.float64] | None,
) -> NDArray[np.float64]:
    """Mean NDCG@10 of the held-out rows after every round (index 0 = the prior, if any).

    The rows' scores after every round (``rounds x rows``) are built for blocks of whole
    users of at most :data:`_BLOCK_CELLS` cells, so memory stays O(block), not rounds x
    held-out rows; the per-user NDCG rows are stacked and averaged, the same numbers as
    one block.
    """
    width = model.n_rounds + start
    n = Xv.shape[0]
    starts = np.flatnonzero(np.r_[True, qv[1:] != qv[:-1]])
    cap = max(1, _BLOCK_CELLS // max(width, 1))
    cuts = np.r_[starts[np.r_[True, np.diff(starts // cap) > 0]], n]
    per_user = []
    for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
        HT = np.zeros((width, b - a))  # one round's scores per row
        if prior is not None:
            HT += prior[a:b]
        for t, h in enumerate(model.staged_decision_function(Xv[a:b])):
            HT[t + start] += h
        per_user.append(ndcg_per_query_round(HT, gain[a:b], qv[a:b]))
    return np.concatenate(per_user).mean(axis=0)
