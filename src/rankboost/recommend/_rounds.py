"""The pooled model's prior multiplier and number of rounds, chosen on held-out target users.

Written on the model-selection floor (:mod:`rankboost.model_selection`). The targets are
dealt at random into ``inner_folds`` groups (:func:`~rankboost.model_selection.group_folds`,
seed stream ``"inner_folds"``). For a held-out group and a multiplier ``c`` of the prior, one
model is trained on the other groups' rows and the held-out users' NDCG@10 is read after
every round off its staged scores (:func:`held_out_users`); the groups and multipliers run
through :func:`~rankboost.model_selection.cross_validate`, and
:func:`~rankboost.model_selection.first_best_grid` chooses (on equal values the first
multiplier of the grid, then the fewest rounds). Two ways to use it (:func:`choose_rounds`):

* ``refit=True``: every group is held out in turn, the best of the mean curves is kept, and
  the caller trains the final model on every target.
* ``refit=False`` (the default): only the first group is held out and the model trained on
  the others is kept, cut at its best round -- one training run per multiplier instead of
  ``inner_folds + 1`` (as scikit-learn's ``HistGradientBoosting*`` keep the model trained
  beside their ``validation_fraction``).

With a prior (``F0 = c * prior`` per row, SPEC 7.2) the runs start from it and round 0 (the
prior alone) is a candidate too.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

import numpy as np
from numpy.typing import NDArray

from .._compat import Steps
from .._kernels import numba_threads
from ..engine import TrainingStoppedWarning, train_checked
from ..feedback import LayeredFeedback
from ..model import RankBoostModel
from ..model_selection import (
    cross_validate,
    first_best_grid,
    group_folds,
    round_curves,
    staged_scores,
)
from ..params import TrainParams


class PooledProblem(Protocol):
    """What the searches read of a pooled problem (:class:`._pooled.PooledProblem`)."""

    X: NDArray[np.float64]
    qid: NDArray[np.int64]
    held: NDArray[np.bool_]

    def labels(self, kind: str) -> NDArray[np.float64]: ...

    def gains(self, kind: str) -> NDArray[np.float64]: ...

    def feedback(self, kind: str, rows: NDArray[np.bool_] | None = None) -> LayeredFeedback: ...


__all__ = [
    "FoldRun",
    "RoundsChoice",
    "choose_rounds",
    "fit_rounds",
    "fold_usable",
    "held_out_users",
    "padded_curve",
    "search_rounds",
    "select_rounds",
    "train_quiet",
]

#: scores held at once by :func:`held_out_users` (rounds x rows of a block of users)
_BLOCK_CELLS = 1 << 22


def train_quiet(
    X: NDArray[np.float64], fb: LayeredFeedback, params: TrainParams, **kw: Any
) -> RankBoostModel:
    with numba_threads(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        return train_checked(X, fb, params, **kw)


class RoundsChoice(NamedTuple):
    """What the inner CV chose.

    ``scale``: the prior's multiplier; ``rounds``: the number of rounds (0 = the prior
    alone); ``curve``: the held-out NDCG@10 after every round at that multiplier (index 0:
    the prior alone, with a prior; the mean over the groups with ``refit=True``);
    ``model``: with ``refit=False``, the run trained beside the held-out group at that
    multiplier (every round of it; None with ``refit=True``).
    """

    scale: float
    rounds: int
    curve: NDArray[np.float64]
    model: RankBoostModel | None


def choose_rounds(  # noqa: PLR0917  private, its callers' validated pieces
    problem: PooledProblem,
    kind: str,
    params: TrainParams,
    inner_folds: int,
    rng: np.random.Generator,
    prior: NDArray[np.float64] | None,
    scales: Sequence[float],
    steps: Steps | None = None,
    refit: bool = True,
) -> RoundsChoice | None:
    """The prior's multiplier and the number of rounds with the best held-out NDCG@10.

    One run of ``params.n_rounds`` per held-out group and multiplier of ``scales`` (the
    runs boost from ``c * prior``; ``prior`` None: from 0, one multiplier); the held-out
    users' scores after every round come from the run's rounds at the end and their
    NDCG@10 from one kernel call per block of users (:func:`held_out_users`).
    ``refit=True``: every group is held out in turn and the mean curves compared;
    ``refit=False``: the first group only, and its model kept. None when no group can be
    used (no held-out row, or one label only among the training rows).
    """
    steps = steps or Steps(0, disable=True, desc="")
    start = 0 if prior is None else 1
    group = group_folds(problem.qid, inner_folds, rng)

    def run(
        train: NDArray[np.bool_], valid: NDArray[np.bool_], c: float, what: str
    ) -> tuple[NDArray[np.float64], RankBoostModel] | None:
        rows = (train & ~problem.held, valid)
        return _fold_curve(problem, kind, params, *rows, prior, c, steps, what)

    return search_rounds(group, kind, inner_folds, scales, refit, start, run)


#: one inner-CV run (:func:`search_rounds`): ``(train, valid, scale, what) -> (curve, model)``
FoldRun = Callable[
    [NDArray[np.bool_], NDArray[np.bool_], float, str],
    "tuple[NDArray[np.float64], RankBoostModel] | None",
]


def search_rounds(  # noqa: PLR0917  choose_rounds' pieces
    group: NDArray[np.int64],
    kind: str,
    inner_folds: int,
    scales: Sequence[float],
    refit: bool,
    start: int,
    run: FoldRun,
) -> RoundsChoice | None:
    """:func:`choose_rounds`' search over the groups and multipliers, whatever trains.

    ``group``: the inner group of every row (or of every user, when ``run`` takes masks
    of users: the Dask recommender's); ``run(train, valid, c, what)`` trains on ``train``
    from ``c * prior`` and returns the padded held-out curve of ``valid`` and the model
    (:func:`_fold_curve`), or None when the fold cannot be used. The groups run in order,
    the multipliers inside; ``refit=False`` runs the first group only and keeps its model.
    """
    calls = itertools.count()  # cross_validate runs the groups in order, the scales inside
    usable: set[int] = set()
    models: dict[float, RankBoostModel] = {}

    def fold_curve(
        train: NDArray[np.bool_], valid: NDArray[np.bool_], c: float
    ) -> NDArray[np.float64] | None:
        k = next(calls) // len(scales)
        what = (
            f"choosing the rounds ({kind}), inner fold {k + 1}/{inner_folds}"
            if refit
            else f"training the pooled model ({kind}) and choosing its rounds on held-out users"
        )
        out = run(train, valid, c, what)
        if out is None:
            return None
        usable.add(k)
        if not refit:
            models[c] = out[1]
        return out[0]

    # refit=False: only the first group is held out (the others' rows always train)
    per_fold = cross_validate(group, inner_folds if refit else 1, scales, fold_curve)
    if not usable:
        return None
    curves = per_fold[sorted(usable)].mean(axis=0)  # (scale, round): the usable groups' mean
    if np.isnan(curves).all():
        return None
    s, t = first_best_grid(curves)
    c = float(scales[s])
    return RoundsChoice(c, t + 1 - start, curves[s].copy(), models.get(c))


def fit_rounds(  # noqa: PLR0917  the pooled fit's pieces
    n_users: int,
    params: TrainParams,
    inner_folds: int | None,
    has_prior: bool,
    scales: tuple[float, ...],
    choose: Callable[[tuple[float, ...]], RoundsChoice | None],
    train_all: Callable[[float, TrainParams], RankBoostModel],
) -> tuple[RankBoostModel, NDArray[np.float64] | None, int, float]:
    """One pooled model: its rounds (and prior multiplier) by the inner CV, whatever trains.

    ``choose(scales)``: :func:`choose_rounds` (or the Dask recommender's search), run when
    ``inner_folds`` is set and at most ``n_users`` (the targets); ``train_all(c, p)``: the
    model on every target's training rows from ``c * prior`` with ``p``. ``refit=False``
    (the choice holds a model): that model is kept at its best round; otherwise, or when
    no group can be used, ``train_all`` runs for the rounds chosen (``params.n_rounds``
    without a choice, the first multiplier of ``scales``). Returns the model, the curve
    (None without a choice), the rounds used and the prior's multiplier (0 without prior).
    """
    if not has_prior:
        scales = (0.0,)
    chosen = None
    if inner_folds is not None and n_users >= inner_folds:
        chosen = choose(scales)
    c, rounds, curve = scales[0], params.n_rounds, None
    if chosen is not None:
        c, rounds, curve = chosen.scale, chosen.rounds, chosen.curve
    scale = c if has_prior else 0.0
    if chosen is not None and chosen.model is not None:  # refit=False: kept at its best round
        return chosen.model, curve, min(rounds, chosen.model.n_rounds), scale
    model = train_all(c, params.replace(n_rounds=max(rounds, 1)))
    return model, curve, min(rounds, model.n_rounds), scale


def select_rounds(  # noqa: PLR0917  choose_rounds' arguments
    problem: PooledProblem,
    kind: str,
    params: TrainParams,
    inner_folds: int,
    rng: np.random.Generator,
    prior: NDArray[np.float64] | None = None,
    steps: Steps | None = None,
) -> tuple[int, NDArray[np.float64]]:
    """The number of rounds from ``prior`` (``refit=True``'s search at one multiplier).

    Returns the best round (0 = the prior alone) and the mean held-out curve (with a prior,
    index 0 is the prior alone); ``params.n_rounds`` and a NaN curve when no group can be
    used.
    """
    found = choose_rounds(problem, kind, params, inner_folds, rng, prior, (1.0,), steps)
    if found is None:
        return params.n_rounds, np.full(params.n_rounds + (prior is not None), np.nan)
    return found.rounds, found.curve


def _fold_curve(  # noqa: PLR0917  private helper of choose_rounds
    problem: PooledProblem,
    kind: str,
    params: TrainParams,
    train: NDArray[np.bool_],
    valid: NDArray[np.bool_],
    prior: NDArray[np.float64] | None,
    scale: float,
    steps: Steps,
    what: str,
) -> tuple[NDArray[np.float64], RankBoostModel] | None:
    """The model trained on the rows of ``train`` and its curve on the rows of ``valid``.

    The runs boost from ``scale * prior`` (scaled per side: memory of one prior column).
    The curve has one value per round (index 0: the prior alone, with a prior), padded with
    its last value when the run stopped early; None when the fold cannot be used (no
    held-out row, or one label only among the training rows).
    """
    start = 0 if prior is None else 1
    labels = problem.labels(kind)
    steps.start(what)
    try:
        if not fold_usable(labels[train], bool(valid.any())):
            return None
        grades = problem.gains(kind)[valid]
        f0 = None if prior is None else scale * prior[train]
        fb = problem.feedback(kind, train)
        model = train_quiet(problem.X[train], fb, params, init_score=f0)
        pv = None if prior is None else scale * prior[valid]
        users = held_out_users(model, problem.X[valid], problem.qid[valid], grades, start, pv)
        curve = users.mean(axis=0)  # the mean NDCG@10 of the held-out users after each round
    finally:
        steps.done()
    return padded_curve(curve, params.n_rounds + start), model


def fold_usable(train_labels: NDArray[np.float64], any_valid: bool) -> bool:
    """Whether an inner fold can be used: a held-out row, two labels among the training rows.

    ``train_labels``: the training rows' labels (or their distinct values per block).
    """
    return any_valid and train_labels.size > 0 and train_labels.max() != train_labels.min()


def padded_curve(curve: NDArray[np.float64], width: int) -> NDArray[np.float64]:
    """The held-out curve over ``width`` round counts: a stopped run keeps its last value."""
    full = np.full(width, curve[-1] if curve.size else np.nan)
    full[: curve.shape[0]] = curve
    return full


def held_out_users(  # noqa: PLR0917  the held-out rows' arrays, as _fold_curve has them
    model: RankBoostModel,
    Xv: NDArray[np.float64],
    qv: NDArray[np.int64],
    grades: NDArray[np.float64],
    start: int,
    prior: NDArray[np.float64] | None,
) -> NDArray[np.float64]:
    """NDCG@10 of every held-out user after every round (index 0 = the prior, if any).

    Shape ``(users, rounds)``, users in increasing ``qv`` (rows grouped by user); its mean
    over the users (``.mean(axis=0)``) is the held-out curve.

    The rows' scores after every round (:func:`~rankboost.model_selection.staged_scores`,
    rounds x rows) are built for blocks of whole users of at most :data:`_BLOCK_CELLS`
    cells, so memory stays O(block), not rounds x held-out rows; the per-user NDCG rows
    (:func:`~rankboost.model_selection.round_curves`, gain ``2**grade - 1``) are stacked,
    the same numbers as one block: a user's row does not depend on the others.
    """
    width = model.n_rounds + start
    n = Xv.shape[0]
    starts = np.flatnonzero(np.r_[True, qv[1:] != qv[:-1]])
    cap = max(1, _BLOCK_CELLS // max(width, 1))
    cuts = np.r_[starts[np.r_[True, np.diff(starts // cap) > 0]], n]
    per_user = []
    for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
        base = None if prior is None else prior[a:b]
        HT = staged_scores(model, Xv[a:b], model.n_rounds, base=base, start=1 - start)
        per_user.append(round_curves(HT, grades[a:b], qv[a:b]))
        del HT  # before the next block's: one block of scores at a time
    return np.concatenate(per_user) if per_user else np.empty((0, width))
