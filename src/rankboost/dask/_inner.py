"""The pooled model's rounds and prior multiplier on Dask: the inner CV over held-out users.

:class:`~rankboost.dask.DaskRankBoostRecommender` with ``inner_folds`` (``refit`` False or
True, ``prior_scale=None``) runs the one-machine search itself
(:func:`rankboost.recommend._rounds.search_rounds` and ``fit_rounds``, which
``RankBoostRecommender`` runs too); only its training runs and held-out curves are
distributed:

* **the groups**: the target users (the training sample, in increasing order) are dealt
  into ``inner_folds`` groups on the client by :func:`~rankboost.model_selection.group_folds`
  from the seed stream ``"inner_folds"``, the draw one machine makes over the same users;
* **a run** (one held-out group, one multiplier ``c``): each block of users splits its rows
  into the training rows (the other groups' users, without the :data:`HELD_UNRATED` rows,
  which each block draws from its slice of the one-machine stream with the training
  negatives) and the held-out group's rows (:func:`fold_split`, once per group); the
  training rows are the partitions of :func:`rankboost.dask.train`, boosting from
  ``c * EASE``; the model (small) goes to the blocks, which score their held-out users after
  every round with the one-machine :func:`~rankboost.recommend._rounds.held_out_users`
  (:func:`held_out_part`); the client stacks the per-user NDCG@10 rows in user order and
  averages them as one machine does;
* **the choice**: ``first_best_grid`` over the mean curves; ``refit=False`` keeps the run's
  model at its best round, ``refit=True`` trains once more on every target (the non-held
  rows of every block).

Exactness: the groups, the rows of every run and every held-out user's NDCG@10 row are one
machine's, and the curves are reduced by one machine's code in one machine's order; a run's
model is :func:`rankboost.dask.train`'s (the one-machine model to 1e-12: its sums run over
the blocks), so the scores after every round agree to 1e-12 and the users' NDCG, which
reads only the order of their items, is one machine's bit for bit unless two of a user's
items score within 1e-12 of each other. The chosen multiplier and rounds, the curve, the
model (to 1e-12) and the top 10 of every user are one machine's
(``tests/test_dask_inner.py``).

Memory per worker, beside the fit's other steps: a group's split holds a copy of the
block's rows, ``rows_b * (d + 3) * 8`` bytes (``rows_b``: the block's rows of the sample,
at most ``MAX_QUERIES`` = 10,000 users in all, each ``n_rated * (1 + negatives) +
HELD_UNRATED`` rows; ``d`` the base recommenders), the booster's block of the training rows
(as a fit without inner CV), and the scoring of the held-out users: ``8 * 2**22`` bytes of
staged scores (``_BLOCK_CELLS``) plus ``users_b * (n_estimators + 1) * 8`` of NDCG rows. At
MovieLens-20M's shape: 10,000 users x ~530 rows (144 ratings each) x 7 x 8 B = 300 MB in all,
split over the workers; it runs after the cross-fitting, when no item x item matrix is held.
At 30,000 users x 6,000 items x 3M ratings its tasks peaked at 650-800 MB per worker, under
the fit's peak (the Gram stripes, 1.2-1.4 GB; benchmarks/bench_dask_recommend.py).
"""

from __future__ import annotations

import operator
import warnings
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..booster import TrainingStoppedWarning
from ..model import RankBoostModel
from ..model_selection import group_folds, seed_stream
from ..params import TrainParams
from ..recommend._pooled import PooledFit, PooledOptions
from ..recommend._rounds import (
    RoundsChoice,
    fit_rounds,
    fold_usable,
    held_out_users,
    padded_curve,
    search_rounds,
)
from ..recommend._scale import user_sample
from ._rectasks import block_problem, kind_part, stacked

__all__ = ["KindRows", "fit_kind", "fold_split", "held_out_part"]


class KindRows(NamedTuple):
    """One kind of feedback's rows on the blocks.

    ``rows``: per block, (folds, rows) futures (``_rectasks.block_rows``); ``X``: per block,
    a future of its features; ``kind``, ``subset`` (the rated rows only); ``n_train``: the
    training rows (without the held ones) per block; ``d``: features; ``col``: the prior's
    column (None: no prior); ``starts``: the first user of every block (and the users).
    """

    rows: list[Any]
    X: list[Any]
    kind: str
    subset: bool
    n_train: NDArray[np.int64]
    d: int
    col: int | None
    starts: NDArray[np.int64]


def fold_split(  # noqa: PLR0917  the block's inputs
    rows: dict[str, Any],
    X: NDArray[np.float64],
    kind: str,
    subset: bool,
    span: tuple[int, int],
    users: NDArray[np.int64],
    train: NDArray[np.bool_],
    valid: NDArray[np.bool_],
) -> dict[str, Any]:
    """The block's training and held-out rows of one group (``choose_rounds``' masks).

    ``span``: the block's first user and its number of users; ``users``: its users of the
    sample (local rows); ``train``, ``valid``: whether each trains or is held out. The
    training rows leave out the held unrated rows; the held-out rows keep them (they rank).
    """
    prob = block_problem(rows, X)
    if subset:
        prob = prob.subset(prob.y > 0)
    t_of = np.zeros(span[1], dtype=bool)
    v_of = np.zeros(span[1], dtype=bool)
    t_of[users], v_of[users] = train, valid
    tr = t_of[prob.qid - span[0]] & ~prob.held
    va = v_of[prob.qid - span[0]]
    labels = prob.labels(kind)
    return {
        "X": prob.X[tr], "y": labels[tr], "qid": prob.qid[tr],
        "Xv": prob.X[va], "qv": prob.qid[va], "gv": prob.gains(kind)[va],
        "check": (np.unique(labels[tr]), int(tr.sum()), int(va.sum())),
    }  # fmt: skip


def held_out_part(
    split: dict[str, Any], model: RankBoostModel, start: int, scale: float, col: int | None
) -> NDArray[np.float64]:
    """The block's held-out users' NDCG@10 after every round (one machine's rows)."""
    Xv = split["Xv"]
    base = None if col is None else scale * np.nan_to_num(Xv[:, col])
    return held_out_users(model, Xv, split["qv"], split["gv"], start, base)


def _train(  # noqa: PLR0917  the run's pieces
    client: Any,
    parts: list[Any],
    sizes: list[int],
    kr: KindRows,
    c: float,
    params: TrainParams,
    what: Any,
) -> RankBoostModel:
    """:func:`rankboost.dask.train` on the blocks' arrays (``what(part, name)``: a future)."""
    import dask.array as da

    from . import _train as dask_train  # looked up at call time (the fault tests patch it)

    Xd, yd, qd = (
        stacked([what(p, name) for p in parts], sizes, shape, dtype)
        for name, shape, dtype in (
            ("X", (kr.d,), np.float64), ("y", (), np.float64), ("qid", (), np.int64)
        )
    )  # fmt: skip
    f0 = None if kr.col is None else c * da.nan_to_num(Xd[:, kr.col])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        return dask_train.train(
            client, Xd, yd, qd, feedback="bipartite" if kr.kind == "rated" else "layered",
            init_score=f0, params=params,
        )  # fmt: skip


def fit_kind(
    client: Any, kr: KindRows, opts: PooledOptions, params: TrainParams, scales: tuple[float, ...]
) -> PooledFit:
    """One pooled model on the blocks, as one machine's ``_fit_kind`` (module docstring)."""
    sample = user_sample(np.arange(int(kr.starts[-1]), dtype=np.int64), opts.random_state)
    in_block = np.searchsorted(kr.starts, sample, side="right") - 1
    n_b = len(kr.rows)
    start = 0 if kr.col is None else 1

    def train_all(c: float, p: TrainParams) -> RankBoostModel:
        live = [j for j in range(n_b) if kr.n_train[j] > 0]

        def part(j: int, name: str) -> Any:
            rows, X = kr.rows[j][1], kr.X[j]
            return client.submit(kind_part, rows, X, kr.kind, kr.subset, name, pure=False)

        return _train(client, live, [int(kr.n_train[j]) for j in live], kr, c, p, part)

    def choose(sc: tuple[float, ...]) -> RoundsChoice | None:
        rng = seed_stream(opts.random_state, "inner_folds")
        group = group_folds(sample, int(opts.inner_folds or 0), rng)
        split: dict[bytes, list[Any]] = {}  # the current group's splits (kept for its scales)

        def run(
            train: NDArray[np.bool_], valid: NDArray[np.bool_], c: float, what: str
        ) -> tuple[NDArray[np.float64], RankBoostModel] | None:
            key = valid.tobytes()
            if key not in split:
                split.clear()  # the last group's rows are released
                split[key] = [
                    client.submit(
                        fold_split, kr.rows[j][1], kr.X[j], kr.kind, kr.subset,
                        (int(kr.starts[j]), int(kr.starts[j + 1] - kr.starts[j])),
                        sample[in_block == j] - kr.starts[j], train[in_block == j],
                        valid[in_block == j], pure=False,
                    )
                    for j in range(n_b)
                ]  # fmt: skip
            parts = split[key]
            checks = client.gather([client.submit(operator.getitem, s, "check") for s in parts])
            labels = np.concatenate([ch[0] for ch in checks])
            if not fold_usable(labels, any(ch[2] > 0 for ch in checks)):
                return None
            live = [s for s, ch in zip(parts, checks, strict=True) if ch[1] > 0]
            sizes = [ch[1] for ch in checks if ch[1] > 0]

            def item(s: Any, name: str) -> Any:
                return client.submit(operator.getitem, s, name, pure=False)

            model = _train(client, live, sizes, kr, c, params, item)
            held = [s for s, ch in zip(parts, checks, strict=True) if ch[2] > 0]
            rows = client.gather([
                client.submit(held_out_part, s, model, start, c, kr.col, pure=False) for s in held
            ])  # fmt: skip
            curve = np.concatenate(rows).mean(axis=0)  # users in order, as one machine stacks
            return padded_curve(curve, params.n_rounds + start), model

        found = search_rounds(
            group, kr.kind, int(opts.inner_folds or 0), sc, opts.refit, start, run
        )
        split.clear()
        return found

    model, curve, rounds, scale = fit_rounds(
        sample.shape[0], params, opts.inner_folds, kr.col is not None, scales, choose, train_all
    )
    return PooledFit(model, curve, rounds, kr.col, scale)
