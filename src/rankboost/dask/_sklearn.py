"""``DaskRankBoostRanker``: :class:`rankboost.RankBoostRanker` on Dask collections.

The shape of LightGBM's ``DaskLGBMRanker``: a subclass of the in-memory estimator with a
``client`` parameter, ``fit`` on dask arrays / DataFrames, ``predict`` returning a dask array
(row order kept), :meth:`to_local` returning a plain :class:`~rankboost.RankBoostRanker`, and
no client in the pickle; :func:`sklearn.base.clone` keeps the client by reference (a client is a
connection, not a value), so ``GridSearchCV`` and ``cross_validate`` work on it. Every
computation goes through the estimator's client, never dask's default one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._compat import require
from .._fit import warn_one_query
from .._validation import check_group_sizes, forget_fit, group_sizes_to_qid, keep_params
from ..callback import CallbackEnv
from ..sklearn import RankBoostRanker

__all__ = ["DaskRankBoostRanker"]


def _local(client: Any, obj: Any) -> Any:
    """A dask collection computed by ``client`` to numpy / pandas (e.g. validation sets)."""
    return client.compute(obj).result() if hasattr(obj, "__dask_graph__") else obj


def _names(names: list[str]) -> str:
    """A list of column names for an error message (the first ones when there are many)."""
    if len(names) <= 8:
        return repr(names)
    return "[" + ", ".join(map(repr, names[:8])) + f", ...] ({len(names)} names)"


def _group_to_qid(client: Any, X: Any, group: Any, repartition: bool) -> Any:
    """Per-row query ids (a dask array chunked like ``X``) from LightGBM-style ``group``.

    A dask ``group``: chunk ``k`` holds the sizes of partition ``k``'s queries (as
    LightGBM's ``DaskLGBMRanker``); any other: sizes of consecutive queries over all rows,
    cut at ``X``'s partition boundaries. Query ``j`` gets id ``j``, as
    ``RankBoostRanker.fit(X, y, group=group)`` numbers them; the ids are built on the
    workers, partition by partition (only the sizes are in this process).
    """
    import dask

    from ._data import as_dask_array, is_dask_collection, unknown_rows

    da = require("dask.array", "DaskRankBoostRanker")
    if hasattr(X, "columns") and "qid" in X.columns:
        raise ValueError(
            "DaskRankBoostRanker.fit: X has a 'qid' column and group= was given too; pass the "
            "queries only once (drop the column, or leave group=None to use it)."
        )
    Xd = as_dask_array(X, "X", client=client)
    if any(np.isnan(n) for n in Xd.chunks[0]):
        raise unknown_rows("X")
    rows = tuple(int(n) for n in Xd.chunks[0])
    n_rows = sum(rows)
    if is_dask_collection(group):
        g = as_dask_array(group, "group", client=client)
        blocks = list(g.to_delayed().ravel())
        if g.ndim != 1 or len(blocks) != len(rows):
            raise ValueError(
                f"group is a dask array of {len(blocks)} chunks (shape {g.shape}) but X has "
                f"{len(rows)} row partitions; as in LightGBM's DaskLGBMRanker, chunk k of "
                "group holds the sizes of the queries of partition k of X (1-D, one chunk per "
                "partition). Rechunk group, or pass a numpy array of sizes over all rows."
            )
        chunks = [np.asarray(c) for c in client.gather(client.compute(blocks))]
        sizes = check_group_sizes(np.concatenate(chunks))
        start = 0
        for k, c in enumerate(chunks):
            total = int(sizes[start : start + len(c)].sum())
            start += len(c)
            if total != rows[k]:
                raise ValueError(
                    f"group: the sizes in chunk {k} sum to {total} but partition {k} of X has "
                    f"{rows[k]} rows; chunk k of group must hold the sizes of exactly the "
                    "queries of partition k (sum(chunk) = its rows)."
                )
    else:
        sizes = check_group_sizes(group, n_rows)
    ends = np.cumsum(sizes)
    starts = ends - sizes
    bounds = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
    if not repartition:
        for k in range(len(rows) - 1):
            b = int(bounds[k + 1])
            j = int(np.searchsorted(ends, b, side="left"))
            if j < len(ends) and starts[j] < b < ends[j]:
                raise ValueError(
                    f"group: query {j} (rows {starts[j]} to {ends[j] - 1}) straddles "
                    f"partitions {k} and {k + 1} of X (partition {k} ends at row {b - 1}); "
                    "a query must live in one partition. Rechunk X at query boundaries, "
                    "pass a dask array group with one chunk of sizes per partition, or pass "
                    "repartition=True."
                )
    pieces = []
    for k, n in enumerate(rows):
        s, e = int(bounds[k]), int(bounds[k + 1])
        first = int(np.searchsorted(ends, s, side="right"))  # first query ending after s
        last = int(np.searchsorted(starts, e, side="left"))  # queries starting before e
        ids = np.arange(first, last, dtype=np.int64)
        counts = np.minimum(ends[first:last], e) - np.maximum(starts[first:last], s)
        # np.repeat itself, not a function of this module: a worker that unpickles it
        # imports no scikit-learn (this module imports the estimator)
        part = dask.delayed(np.repeat, pure=True)(ids, counts)
        pieces.append(da.from_delayed(part, shape=(n,), dtype=np.int64))
    return da.concatenate(pieces)


def _eval_qid(i: int, group: Any, n_rows: int) -> Any:
    """Validation set ``i``'s query ids from its sizes (an error names ``eval_group[i]``)."""
    try:
        return group_sizes_to_qid(group, n_rows)
    except ValueError as exc:
        raise ValueError(f"eval_group[{i}] (eval_set[{i}] has {n_rows} rows): {exc}") from None


class DaskRankBoostRanker(RankBoostRanker):
    """RankBoost ranker trained on a Dask cluster (:func:`rankboost.dask.train`).

    Parameters
    ----------
    client : distributed.Client, default=None
        The cluster's client; None uses the default client (``distributed.get_client()``)
        at ``fit`` time. Not pickled.
    alpha : {"r", "exact", "line_search"}, default="r"
        As :class:`rankboost.RankBoostRanker`; ``"rbplus"`` is refused on Dask (RankBoost+
        keeps a factor per explicit pair).
    n_estimators, learning_rate, thresholds, criterion, default, positive_cumulative
        As :class:`rankboost.RankBoostRanker`.
    weak_ranker, feedback, normalize, tol, verbose
        As :class:`rankboost.RankBoostRanker`.
    push : float, default=1.0
        As :class:`rankboost.RankBoostRanker`: ``push > 1`` trains the P-Norm Push on the
        cluster (:mod:`rankboost.dask._push`), the one-machine model of the same blocks.

    Notes
    -----
    ``fit`` takes dask arrays or a dask DataFrame ``X`` (a ``"qid"`` column is used as the
    query ids, as in :class:`~rankboost.RankBoostRanker`). Each query must live in one
    partition; ``fit(..., repartition=True)`` moves rows so that it does. Validation sets
    (``eval_set``) are brought to the client, which scores them after every round: they
    must fit in its memory. The fitted model is the one a single machine learns on the same
    rows and bins (same rankers, alphas to 1e-12).

    Examples
    --------
    >>> from rankboost.dask import DaskRankBoostRanker  # doctest: +SKIP
    >>> ranker = DaskRankBoostRanker(client=client, n_estimators=100)  # doctest: +SKIP
    >>> ranker.fit(X, y, qid=qid).predict(X_test).compute()  # doctest: +SKIP

    LightGBM-style query sizes work too (``group``: one chunk of sizes per partition of X):

    >>> ranker.fit(X, y, group=group).predict(X_test).compute()  # doctest: +SKIP
    """

    def __init__(
        self,
        *,
        client: Any = None,
        n_estimators: int = 300,
        alpha: str = "r",
        learning_rate: float = 1.0,
        thresholds: int | str | tuple[str, int] = 255,
        criterion: str = "abs_r",
        default: str | int = "learned",
        positive_cumulative: bool = False,
        weak_ranker: str = "threshold",
        feedback: str = "layered",
        normalize: str = "query",
        tol: float = 1e-9,
        push: float = 1.0,
        verbose: bool = False,
    ) -> None:
        keep_params(self, locals())

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the client (it cannot be pickled, and belongs to this process)."""
        state = dict(self.__dict__)
        state["client"] = None
        return state

    def __sklearn_clone__(self) -> DaskRankBoostRanker:
        """An unfitted copy with the same parameters and the same client (not a copy of it).

        scikit-learn's :func:`~sklearn.base.clone` deep-copies every parameter, and a
        ``distributed.Client`` cannot be copied; ``GridSearchCV`` and ``cross_validate``
        clone the estimator for every fit.
        """
        from sklearn.base import clone

        params = self.get_params(deep=False)
        client = params.pop("client")
        return type(self)(client=client, **{k: clone(v, safe=False) for k, v in params.items()})

    def _get_client(self) -> Any:
        if self.client is not None:
            return self.client
        distributed = require("distributed", "DaskRankBoostRanker")
        return distributed.get_client()

    def fit(  # type: ignore[override]
        self,
        X: Any,
        y: Any,
        *,
        qid: Any = None,
        group: Any = None,
        sample_weight: Any = None,
        eval_set: Sequence[tuple[Any, Any]] | None = None,
        eval_qid: Sequence[Any] | None = None,
        eval_group: Sequence[Any] | None = None,
        eval_metric: str | Callable[..., float] | Sequence[Any] = "ndcg@10",
        early_stopping_rounds: int | None = None,
        callbacks: Sequence[Callable[[CallbackEnv], None]] | None = None,
        repartition: bool = False,
        bins: Any = "auto",
        init_score: Any = None,
    ) -> DaskRankBoostRanker:
        """Train on a Dask cluster; see :meth:`rankboost.RankBoostRanker.fit`.

        ``repartition=True`` moves rows so that each query lives in one partition;
        ``bins`` and ``init_score`` (a prior ``F0``, a dask array of shape (n_samples,);
        not with ``eval_set``, as in :meth:`rankboost.RankBoostRanker.fit`) are passed to
        :func:`rankboost.dask.train`.

        Parameters
        ----------
        X, y, qid, sample_weight, eval_set, eval_qid, eval_metric, early_stopping_rounds
            As :meth:`rankboost.RankBoostRanker.fit`; ``X``, ``y``, ``qid`` and
            ``sample_weight`` as dask arrays (or ``X`` a dask DataFrame).
        group : dask array, array-like of int or None, default=None
            Group/query data, as LightGBM's ``DaskLGBMRanker.fit``: sizes of consecutive
            queries, sum(group) = n_samples; exclusive with ``qid``. For example
            ``group = [10, 20, 40]`` means 3 queries: rows 0-9, rows 10-29 and rows 30-69.
            A dask array needs one chunk per row partition of ``X``: chunk k holds the
            sizes of the queries of partition k (they sum to its rows). A numpy array or
            list is cut at the partition boundaries of ``X``; a query across a boundary is
            an error unless ``repartition=True``. Query j gets id j, as in
            ``RankBoostRanker.fit(X, y, group=group)``: the model is the one
            ``qid=`` with those ids trains.
        eval_group : list of (dask) array-like of int or None, default=None
            Group/query data of each ``eval_set``, as ``group`` (sizes of consecutive
            queries, sum = the set's rows); exclusive with ``eval_qid``.
        callbacks, repartition, bins, init_score
            As above, and :func:`rankboost.dask.train`.

        Returns
        -------
        self : DaskRankBoostRanker
        """
        from ._train import train

        forget_fit(self)  # a fit that raises leaves an unfitted estimator, not a half state
        if init_score is not None and eval_set is not None:  # as RankBoostRanker.fit
            raise ValueError(
                "DaskRankBoostRanker.fit got init_score= with eval_set=: the validation "
                "metrics would score the learned H without the prior F0. Evaluate "
                "F0 + predict(X) on the validation rows after fitting instead."
            )
        if qid is not None and group is not None:
            raise ValueError(
                "DaskRankBoostRanker.fit got both qid= and group=; pass only one (qid: one "
                "query id per row in any order; group: sizes of consecutive queries)."
            )
        if eval_qid is not None and eval_group is not None:
            raise ValueError(
                "DaskRankBoostRanker.fit got both eval_qid= and eval_group=; pass only one "
                "(eval_qid: query ids per row of each set; eval_group: query sizes)."
            )
        params = self._params()
        names = None
        if hasattr(X, "columns"):
            cols = [c for c in X.columns if c != "qid"]
            n_features = len(cols)
            if all(isinstance(c, str) for c in cols):
                names = np.asarray(cols, dtype=object)
        else:
            n_features = int(X.shape[1])
        self.n_features_in_ = n_features
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        if qid is None and group is None and not (hasattr(X, "columns") and "qid" in X.columns):
            warn_one_query(type(self).__name__, "X", "qid= (or a 'qid' column)", X.shape[0], 2)
        client = self._get_client()
        if group is not None:
            qid = _group_to_qid(client, X, group, repartition)
        if eval_set is not None:  # the client scores the validation sets: bring them here
            eval_set = [(_local(client, Xv), np.asarray(_local(client, yv))) for Xv, yv in eval_set]
            if eval_qid is not None:
                eval_qid = [None if q is None else np.asarray(_local(client, q)) for q in eval_qid]
            elif eval_group is not None:
                if len(eval_group) != len(eval_set):
                    raise ValueError(
                        f"eval_group has {len(eval_group)} entries but eval_set has "
                        f"{len(eval_set)} sets; pass one group (or None) per set."
                    )
                eval_qid = [
                    None if g is None else _eval_qid(i, _local(client, g), len(yv))
                    for i, (g, (_, yv)) in enumerate(zip(eval_group, eval_set, strict=True))
                ]
        cbs, monitor = self._callbacks(
            eval_set, eval_qid, eval_metric, early_stopping_rounds, callbacks
        )
        model = train(
            client,
            X,
            y,
            qid,
            feedback=self.feedback,
            normalize=self.normalize,
            sample_weight=sample_weight,
            init_score=init_score,
            repartition=repartition,
            bins=bins,
            callbacks=cbs or None,
            feature_names=None if names is None else [str(n) for n in names],
            params=params,
        )
        return self._set_fitted(model, monitor, early_stopping_rounds)

    def predict(self, X: Any, *, n_rounds: int | None = None) -> Any:
        """Score a dask array / DataFrame: a dask array of ``H(x)``, row order kept."""
        from ._train import predict

        check_is_fitted(self)
        fitted = getattr(self, "feature_names_in_", None)
        if hasattr(X, "columns") and fitted is not None:  # as scikit-learn checks in memory
            given = [str(c) for c in X.columns if c != "qid"]
            if given != list(fitted):
                raise ValueError(
                    "The feature names should match those that were passed during fit: X has "
                    f"columns {_names(given)}, fit had {_names(list(fitted))} (same names, "
                    "same order); select them with X[list(est.feature_names_in_)]."
                )
        k = self.best_iteration_ if n_rounds is None else n_rounds
        return predict(self.model_, X, n_rounds=k, client=self.client)

    def score(self, X: Any, y: Any, *, qid: Any = None, group: Any = None) -> float:
        """Mean NDCG@10 over queries, as :meth:`rankboost.RankBoostRanker.score`.

        ``X``, ``y`` and ``qid`` may be dask collections: the scores are computed on the
        cluster and brought to this process with the estimator's client.
        """
        check_is_fitted(self)
        client = self._get_client()
        if hasattr(X, "columns") and "qid" in X.columns and qid is None and group is None:
            qid = X["qid"]
        scores = self.predict(X)
        # one compute each: dask warns when arrays and DataFrame columns are computed together
        values = client.gather(
            [client.compute(a) for a in (scores, y, qid) if hasattr(a, "__dask_graph__")]
        )
        it = iter(values)
        scores, y, qid = (next(it) if hasattr(a, "__dask_graph__") else a for a in (scores, y, qid))
        y = np.asarray(y, dtype=np.float64)
        if group is not None:
            from .._validation import group_sizes_to_qid

            qid = group_sizes_to_qid(np.asarray(group), y.shape[0])
        from ..metrics import ndcg_score

        return float(
            ndcg_score(y, np.asarray(scores), None if qid is None else np.asarray(qid), k=10)
        )

    def to_local(self) -> RankBoostRanker:
        """The same fitted model as a plain :class:`rankboost.RankBoostRanker` (no Dask)."""
        check_is_fitted(self)
        params = {k: v for k, v in self.get_params().items() if k != "client"}
        fitted = {k: v for k, v in vars(self).items() if k.endswith("_") and not k.startswith("__")}
        return RankBoostRanker._from_fitted(params, fitted)
