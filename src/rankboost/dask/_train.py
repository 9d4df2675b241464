"""The functional Dask API: :func:`make_booster`, :func:`train` and :func:`predict`."""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._compat import require
from ..binning import BinMapper
from ..callback import CallbackEnv
from ..engine import run_loop
from ..feedback import constant_row_weights
from ..model import RankBoostModel
from ..params import TrainParams, check_param, resolve_params
from ._data import (
    as_dask_array,
    check_partitions,
    check_whole_queries,
    repartition_by_query,
    unknown_rows,
)
from ._prior import add_prior, prior_array

__all__ = ["make_booster", "predict", "train"]


def _parts(client: Any, arrays: dict[str, Any]) -> list[dict[str, Any]]:
    """Per partition: a dict of futures of its chunk of every given array (on the cluster)."""
    names = [k for k, v in arrays.items() if v is not None]
    chunks = {}
    for k in names:
        a = arrays[k]
        chunks[k] = a.to_delayed().reshape(len(a.chunks[0]), -1)[:, 0].tolist()
    futures = client.compute([chunks[k][p] for p in range(len(chunks["X"])) for k in names])
    out = []
    for p in range(len(chunks["X"])):
        out.append({k: futures[p * len(names) + j] for j, k in enumerate(names)})
    return out


def _no_push_from_a_prior(p: TrainParams, init_score: Any) -> None:
    """The error of the P-Norm Push from a prior, which Dask does not run."""
    if init_score is not None and p.push != 1.0:
        raise ValueError(
            f"rankboost.dask.train: push={p.push!r} with init_score= (the P-Norm Push from a "
            "prior) is not implemented on Dask; train it on one machine (rankboost.train "
            "with push= and init_score=), or pass push=1 or no init_score."
        )


def make_booster(
    client: Any,
    X: Any,
    y: Any = None,
    qid: Any = None,
    *,
    pairs: Any = None,
    pair_weights: Any = None,
    feedback: str = "layered",
    normalize: str = "query",
    sample_weight: Any = None,
    init_score: Any = None,
    repartition: bool = False,
    bins: str | BinMapper = "auto",
    n_rounds: int = 300,
    alpha: str = "r",
    learning_rate: float = 1.0,
    positive_cumulative: bool = False,
    thresholds: int | str | tuple[str, int] = 255,
    criterion: str = "abs_r",
    default: str | int = "learned",
    weak_ranker: str = "threshold",
    tol: float = 1e-9,
    push: float = 1.0,
    feature_names: Sequence[str] | None = None,
    params: TrainParams | None = None,
) -> Any:
    """The distributed :class:`rankboost.Booster`: blocks on the workers, ``update()`` here.

    Same parameters as :func:`train` (without ``callbacks``); :func:`train` is this and a
    loop of ``update()``. Use it to drive the rounds yourself.

    Returns
    -------
    booster : rankboost.dask._booster.DaskBooster
        Call ``update()`` for one round, ``model()`` for the model so far, ``close()`` at
        the end to release the workers' blocks.
    """
    require("distributed", "rankboost.dask")
    p = resolve_params("rankboost.dask.train", locals(), params)
    _no_push_from_a_prior(p, init_score)
    check_param("normalize", normalize, "rankboost.dask.train")
    check_param("feedback", feedback, "rankboost.dask.train")
    if hasattr(X, "columns"):
        if feature_names is None:
            feature_names = [str(c) for c in X.columns if c != "qid"]
        if "qid" in X.columns and qid is None and pairs is None:
            qid = X["qid"]
        if "qid" in X.columns:
            X = X.drop(columns="qid")
    Xd = as_dask_array(X, "X", client=client)
    if Xd.ndim != 2:
        raise ValueError(f"X must be 2-D of shape (n_samples, n_features); got {Xd.ndim}-D.")
    if np.isnan(Xd.shape[0]):
        raise unknown_rows("X")
    if Xd.shape[0] == 0 or Xd.shape[1] == 0:
        raise ValueError(f"X must have at least one row and one column; got {Xd.shape}.")
    Xd = Xd.rechunk({1: -1})
    if pairs is not None:
        if y is not None or qid is not None:
            raise ValueError("rankboost.dask.train got pairs= and y=/qid=; pass one feedback.")
        kind = "pairs"
        parts = _pair_parts(client, Xd, pairs, pair_weights)
        add_prior(client, parts, init_score, Xd.chunks[0])
        check_partitions(client, parts, Xd.chunks[0], int(Xd.shape[1]))
        feedback_repr = "PairFeedback (dask)"
    else:
        if y is None:
            raise ValueError("rankboost.dask.train needs y (with qid) or pairs.")
        kind = feedback
        rows = Xd.chunks[0]
        yd = as_dask_array(y, "y", rows, client)
        if yd.ndim == 2 and yd.shape[1] == 1:
            yd = yd[:, 0]
        if yd.ndim != 1:
            raise ValueError(f"y must be 1-D of shape (n_samples,); got shape {yd.shape}.")
        qd = (
            as_dask_array(qid, "qid", rows, client)
            if qid is not None
            else require("dask.array", "rankboost.dask").zeros(
                Xd.shape[0], chunks=rows, dtype=np.int64
            )
        )
        wd = as_dask_array(sample_weight, "sample_weight", rows, client)
        if wd is not None:
            wd = _check_sample_weight(client, wd)
        fd = prior_array(init_score, rows, client)
        if repartition:
            extra = tuple(a for a in (wd, fd) if a is not None)
            moved = iter(repartition_by_query(Xd, yd, qd, *extra, client=client))
            Xd, yd, qd = next(moved), next(moved), next(moved)
            wd = next(moved) if wd is not None else None
            fd = next(moved) if fd is not None else None
        parts = _parts(client, {"X": Xd, "y": yd, "qid": qd, "sample_weight": wd})
        add_prior(client, parts, fd, Xd.chunks[0])
        check_partitions(client, parts, Xd.chunks[0], int(Xd.shape[1]))
        check_whole_queries(client, [part["qid"] for part in parts])
        feedback_repr = f"{'Bipartite' if kind == 'bipartite' else 'Layered'}Feedback (dask)"
    from ._booster import DaskBooster
    from ._push import DaskPushBooster

    return (DaskBooster if p.push == 1.0 else DaskPushBooster)(
        client,
        parts,
        p,
        n_features=int(Xd.shape[1]),
        kind=kind,
        normalize=normalize,
        feature_names=feature_names,
        feedback_repr=f"{feedback_repr}, normalize={normalize!r}",
        bins=bins,
    )


def train(
    client: Any,
    X: Any,
    y: Any = None,
    qid: Any = None,
    *,
    callbacks: Sequence[Callable[[CallbackEnv], None]] | None = None,
    **kwargs: Any,
) -> RankBoostModel:
    """Train RankBoost or the P-Norm Push on a Dask cluster: :func:`rankboost.train`'s model.

    :func:`make_booster` and a loop of ``update()`` with callbacks and stopping, as
    :func:`rankboost.train` is over :class:`rankboost.Booster`.

    Parameters
    ----------
    client : distributed.Client
        The cluster's client.
    X : dask array or dask DataFrame of shape (n_samples, n_features)
        Features (NaN = abstain); its row chunks (partitions) are the query blocks. A
        DataFrame's ``"qid"`` column is used as ``qid`` when ``qid`` is None.
    y, qid : dask arrays or Series of shape (n_samples,), default=None
        Grades and query ids (re-chunked to ``X``'s rows). Every query must live in one
        partition: a split query is an error naming it, unless ``repartition=True``.
    pairs : dask array of shape (n_pairs, 2), default=None
        Explicit crucial pairs instead of ``y``: row ``(i, j)`` = "row ``j`` above row
        ``i``", as global row numbers of ``X``. Chunk ``k`` of ``pairs`` must hold the pairs
        among the rows of partition ``k`` of ``X`` (same number of chunks); ``pair_weights``
        (same chunks) their weights.
    feedback : {"layered", "bipartite"}, default="layered"
        With ``y``: as :class:`rankboost.LayeredFeedback` / :class:`rankboost.BipartiteFeedback`.
    normalize : {"query", "pair"}, default="query"
        As :class:`rankboost.LayeredFeedback`; the normalisation is global (two phases).
    sample_weight : dask array of shape (n_samples,), default=None
        Row multiplicities (:meth:`rankboost.LayeredFeedback.with_sample_weight`).
    init_score : dask array or Series of shape (n_samples,), default=None
        A prior ranking function ``F0``, one finite score per row, as
        :func:`rankboost.train`'s ``init_score`` (SPEC 7.2): boosting minimises
        ``sum D exp((F0 + H)(x0) - (F0 + H)(x1))`` and the model holds ``H`` only (score
        with ``F0 + predict(X)``). Re-chunked to ``X``'s rows as ``y`` is (a numpy array is
        cut at them); moved with the rows by ``repartition=True``.
    repartition : bool, default=False
        Move rows first so that each query lives in one partition
        (:func:`repartition_by_query`).
    bins : {"auto", "exact", "sketch"} or BinMapper, default="auto"
        Global candidate thresholds: the exact merge of every partition's value counts
        (same bins as one machine), a mergeable quantile sketch (``"auto"`` picks it above
        2^24 distinct (value, partition) pairs), or bins fitted on a sample.
    n_rounds, alpha, learning_rate, positive_cumulative, thresholds, criterion, default
    weak_ranker, tol, push
        As :func:`rankboost.train` (one definition: :mod:`rankboost.params`); ``push > 1``
        trains the P-Norm Push on the cluster (:mod:`rankboost.dask._push`).
    callbacks : list of callable, default=None
        As :func:`rankboost.train` (run on the client; e.g. early stopping on a validation
        set held by the client).
    feature_names : list of str, default=None
        Names stored in the model (a DataFrame's columns by default).
    params : TrainParams, default=None
        All training parameters at once (then leave the keywords above at their defaults).

    Returns
    -------
    model : RankBoostModel
        An ordinary in-memory model (score with it anywhere, or with :func:`predict`).
    """
    bst = make_booster(client, X, y, qid, **kwargs)
    try:
        return run_loop(bst, bst.params, callbacks, verbose=False, stacklevel=3)
    finally:
        bst.close()


def _check_sample_weight(client: Any, wd: Any) -> Any:
    """As :meth:`rankboost.LayeredFeedback.with_sample_weight`, over all partitions at once.

    Returns the weights, or None when they are constant (they change nothing).
    """
    da = require("dask.array", "rankboost.dask")
    if wd.ndim != 1:
        raise ValueError(f"sample_weight must be 1-D with one weight per row; got {wd.shape}.")
    lo, hi, finite = client.gather(client.compute([wd.min(), wd.max(), da.isfinite(wd).all()]))
    return None if constant_row_weights(float(lo), float(hi), bool(finite)) else wd


def _pair_parts(client: Any, Xd: Any, pairs: Any, weights: Any) -> list[dict[str, Any]]:
    pd_ = as_dask_array(pairs, "pairs", client=client)
    if pd_.ndim != 2 or pd_.shape[1] != 2:
        raise ValueError(f"pairs must be of shape (n_pairs, 2); got {pd_.shape}.")
    pd_ = pd_.rechunk({1: -1})
    if len(pd_.chunks[0]) != len(Xd.chunks[0]):
        raise ValueError(
            f"pairs has {len(pd_.chunks[0])} chunks but X has {len(Xd.chunks[0])} partitions: "
            "chunk k of pairs must hold the pairs among the rows of partition k of X."
        )
    wd = None
    if weights is not None:
        wd = as_dask_array(weights, "pair_weights", pd_.chunks[0], client, of="pairs")
    import dask

    starts = np.concatenate([[0], np.cumsum(Xd.chunks[0])]).astype(np.int64)
    chunks = pd_.to_delayed()[:, 0].tolist()
    local = [
        dask.delayed(_localise)(c, int(starts[k]), int(starts[k + 1])) for k, c in enumerate(chunks)
    ]
    parts = _parts(client, {"X": Xd, "weights": wd})
    for part, fut in zip(parts, client.compute(local), strict=True):
        part["pairs"] = fut
    return parts


def _localise(pairs: Any, lo_: int, hi_: int) -> Any:
    """Global row numbers of a chunk's pairs -> row numbers in its partition (checked)."""
    p = np.asarray(pairs, dtype=np.int64)
    bad = (p < lo_) | (p >= hi_)
    if bad.any():
        k = int(np.flatnonzero(bad.any(axis=1))[0])
        raise ValueError(
            f"pair {p[k].tolist()} is not inside its partition's rows [{lo_}, {hi_}): chunk k "
            "of pairs must hold only pairs among the rows of partition k of X."
        )
    return p - lo_


def predict(
    model: RankBoostModel, X: Any, n_rounds: int | None = None, *, client: Any = None
) -> Any:
    """Score a dask array (or DataFrame) with a model: a dask array, row order kept.

    Parameters
    ----------
    model : RankBoostModel
        Any model (trained here or not).
    X : dask array or dask DataFrame of shape (n_samples, n_features)
        Features; a DataFrame's columns are read by the model's feature names when it has
        them (as :meth:`RankBoostModel.decision_function` reads a pandas DataFrame), else
        in order, its ``"qid"`` column ignored.
    n_rounds : int, default=None
        Use the first ``n_rounds`` rounds.
    client : distributed.Client, default=None
        The client that counts a DataFrame's partition lengths (None: dask's default one).

    Returns
    -------
    scores : dask array of shape (n_samples,)
    """
    if hasattr(X, "columns") and model.feature_names:  # by name, as decision_function does
        have = [str(c) for c in X.columns]
        missing = [n for n in model.feature_names if n not in have]
        if missing:
            raise ValueError(
                f"X has no column named {missing[0]!r}; the model scores a DataFrame by its "
                f"feature names ({reprlib.repr(model.feature_names)}), and X has columns "
                f"{reprlib.repr(have)}. Rename the columns, or pass a dask array in the "
                "model's column order."
            )
        X = X[[X.columns[have.index(n)] for n in model.feature_names]]
    elif hasattr(X, "columns") and "qid" in X.columns:
        X = X.drop(columns="qid")
    Xd = as_dask_array(X, "X", client=client).rechunk({1: -1})
    return Xd.map_blocks(
        _score_chunk, model, n_rounds, drop_axis=1, dtype=np.float64, meta=np.empty(0)
    )


def _score_chunk(chunk: Any, model: RankBoostModel, n_rounds: int | None) -> Any:
    return model.decision_function(chunk, n_rounds=n_rounds)
