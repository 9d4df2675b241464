"""scikit-learn scorers for the ranking metrics: :func:`make_scorer`.

A ranking metric needs the query of every row, which a scikit-learn scorer does not get by
default (it is called as ``scorer(estimator, X_test, y_test)``). The scorers made here take
the query ids as metadata ``qid``: requested by default under scikit-learn's metadata
routing (``sklearn.set_config(enable_metadata_routing=True)``, scikit-learn >= 1.4), so
``GridSearchCV``/``cross_validate`` hand each test fold its own ``qid``; or the ``"qid"``
column of a pandas DataFrame ``X`` (the column the estimator also reads). Without either the
scorer raises instead of scoring all the rows as one query.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

# NOTE: the private base class gives the scorer scikit-learn's own routing (the default
# request, set_score_request) and lets _MultimetricScorer share one predict between metrics.
from sklearn.metrics._scorer import _BaseScorer
from sklearn.utils.metadata_routing import _raise_for_params, _routing_enabled

from ._registry import METRICS, parse_metric

__all__ = ["RankingScorer", "make_scorer"]

QID_COLUMN = "qid"


def _is_frame(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "iloc")


class RankingScorer(_BaseScorer):
    """A scikit-learn scorer of a ranking metric, with the query ids as metadata ``qid``.

    Made by :func:`make_scorer`; see there. Called as ``scorer(estimator, X, y, qid=qid)``
    it returns ``sign * metric(y, estimator.predict(X), qid, **kwargs)``.
    """

    # The query ids are requested by default: under metadata routing a search passes each
    # test fold its own qid without set_score_request(qid=True) (which still works).
    __metadata_request__score = {QID_COLUMN: True}

    def __init__(
        self,
        score_func: Callable[..., Any],
        sign: int,
        kwargs: dict[str, Any],
        name: str,
    ) -> None:
        super().__init__(score_func, sign, kwargs, response_method="predict")
        self._name = name

    def __repr__(self) -> str:
        """``make_scorer('ndcg@5')``-style repr with the extra keyword arguments."""
        extra = "".join(f", {key}={value!r}" for key, value in self._extra.items())
        return f"make_scorer({self._name!r}{extra})"

    @property
    def _extra(self) -> dict[str, Any]:
        return {key: value for key, value in self._kwargs.items() if key != "k"}

    def _accept_sample_weight(self) -> bool:
        return False

    def __call__(
        self,
        estimator: Any,
        X: Any,
        y_true: ArrayLike,
        *,
        qid: ArrayLike | None = None,
        **kwargs: Any,
    ) -> float:
        """Score ``estimator`` on ``(X, y_true)`` with the query ids ``qid``.

        Parameters
        ----------
        estimator : object
            A fitted estimator with ``predict``.
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Test data; a DataFrame's ``"qid"`` column gives the queries when ``qid`` is None.
        y_true : array-like of shape (n_samples,)
            Relevance labels.
        qid : array-like of shape (n_samples,), default=None
            Query id of each row, in any order (routed by scikit-learn under metadata
            routing, or passed by hand).
        **kwargs : dict
            Other metadata (only under metadata routing); the metrics take none.

        Returns
        -------
        score : float
            The metric, negated for a loss (``greater_is_better=False``).
        """
        if kwargs:
            _raise_for_params(kwargs, self, None)
        return self._score(None, estimator, X, y_true, qid=qid, **kwargs)

    def _score(
        self,
        method_caller: Callable[..., Any] | None,
        estimator: Any,
        X: Any,
        y_true: ArrayLike,
        **kwargs: Any,
    ) -> float:
        qid = kwargs.pop(QID_COLUMN, None)
        if kwargs:
            raise TypeError(
                f"The scorer {self!r} got metadata {sorted(kwargs)} it cannot use; a ranking "
                "scorer takes only qid (the query id of each row)."
            )
        qid = self._qid(X, qid)
        if method_caller is None:
            y_pred = estimator.predict(X)
        else:  # scikit-learn's cached call, shared by the metrics of one multimetric search
            y_pred = method_caller(estimator, "predict", X)
        value = self._score_func(y_true, y_pred, qid, **self._kwargs)
        return float(self._sign * value)

    def _qid(self, X: Any, qid: ArrayLike | None) -> ArrayLike:
        """The query ids: the metadata ``qid``, else ``X``'s ``"qid"`` column, else an error."""
        column = None
        if _is_frame(X) and QID_COLUMN in X.columns:
            column = np.asarray(X[QID_COLUMN])
        if qid is not None:
            if column is not None and not np.array_equal(np.asarray(qid), column):
                raise ValueError(
                    f"The ranking scorer {self!r} got qid= and an X with a 'qid' column that "
                    "differ; pass the queries only once."
                )
            return qid
        if column is not None:
            return column
        how = (
            "it is requested by default; pass qid= to the fit of the search "
            "(GridSearchCV.fit(X, y, qid=qid, groups=qid)) or params={'qid': qid} to "
            "cross_validate"
            if _routing_enabled()
            else "enable scikit-learn's metadata routing with "
            "sklearn.set_config(enable_metadata_routing=True) (or in a "
            "sklearn.config_context) and pass qid= to the fit of the search, or give X "
            "as a pandas DataFrame with a 'qid' column"
        )
        raise ValueError(
            f"The ranking scorer {self!r} got no query ids (qid), so it would score all "
            f"the rows as one query; {how}."
        )


def make_scorer(
    metric: str | Callable[..., Any],
    *,
    greater_is_better: bool | None = None,
    **metric_kwargs: Any,
) -> RankingScorer:
    """A scikit-learn scorer of a ranking metric that gets the query ids as metadata ``qid``.

    The scorer calls ``estimator.predict(X)`` and the metric with the query ids of the
    scored rows. It requests ``qid`` under scikit-learn's metadata routing (scikit-learn
    >= 1.4): inside ``sklearn.config_context(enable_metadata_routing=True)``,
    ``GridSearchCV(..., scoring=make_scorer("ndcg@10")).fit(X, y, qid=qid, groups=qid)`` and
    ``cross_validate(..., params={"qid": qid, "groups": qid})`` pass every test fold its own
    query ids (and :class:`rankboost.RankBoostRanker` requests ``qid`` for ``fit`` too).
    Without routing it reads the ``"qid"`` column of a pandas DataFrame ``X``. With no query
    ids at all it raises a ``ValueError`` instead of scoring every row as one query.

    Parameters
    ----------
    metric : str or callable
        A metric name of :func:`rankboost.metrics.parse_metric`, with its cut-off
        (``"ndcg@10"``, ``"map"``, ``"p@5"``, ``"mrr@10"``, ``"disagreement"``, ...), or a
        function ``f(y_true, y_score, qid, **metric_kwargs) -> float``.
    greater_is_better : bool, default=None
        Whether a higher value is better. None: from the registry (losses such as
        ``"disagreement"`` and ``"average_rank"`` are negated, as scikit-learn's ``neg_``
        scorers, so a search still maximises); True for a callable.
    **metric_kwargs
        Further keyword arguments of the metric (``ties``, ``gain``, ``empty``,
        ``relevance_threshold``, ...). ``per_query`` is refused (a scorer returns one number).

    Returns
    -------
    scorer : RankingScorer
        A scikit-learn scorer, ``scorer(estimator, X, y, qid=qid) -> float``, with
        ``set_score_request``.

    Raises
    ------
    ValueError
        For an unknown metric name (the message lists the known ones) or ``per_query``.
    TypeError
        For a keyword argument the metric does not take.

    See Also
    --------
    rankboost.metrics.evaluate : Several metrics by name, without an estimator.

    Examples
    --------
    >>> import sklearn
    >>> from sklearn.model_selection import GroupKFold, cross_validate
    >>> from rankboost import RankBoostRanker
    >>> from rankboost.datasets import make_ranking
    >>> from rankboost.metrics import make_scorer
    >>> X, y, qid = make_ranking(300, noise=0.5)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     cv = cross_validate(RankBoostRanker(n_estimators=10), X, y, cv=GroupKFold(3),
    ...                         scoring=make_scorer("ndcg@5"), params={"qid": qid, "groups": qid})
    >>> cv["test_score"].shape
    (3,)
    >>> make_scorer("map", ties="pessimistic")
    make_scorer('map', ties='pessimistic')
    """
    if callable(metric):
        func: Callable[..., Any] = metric
        kwargs: dict[str, Any] = {}
        name = getattr(metric, "__name__", repr(metric))
        better = True if greater_is_better is None else bool(greater_is_better)
    else:
        func, kwargs = parse_metric(metric)
        name = metric
        info = METRICS[metric.strip().lower().partition("@")[0]]
        better = info.greater_is_better if greater_is_better is None else bool(greater_is_better)
        accepted = inspect.signature(func).parameters
        unknown = sorted(set(metric_kwargs) - set(accepted) - {"y_true", "y_score", "qid"})
        if unknown:
            raise TypeError(
                f"make_scorer: metric {metric!r} ({func.__name__}) takes no keyword argument "
                f"{unknown}; it takes {sorted(set(accepted) - {'y_true', 'y_score', 'qid'})}."
            )
    if metric_kwargs.get("per_query"):
        raise ValueError(
            "make_scorer got per_query=True; a scorer returns one number (the mean over "
            "queries): use rankboost.metrics.evaluate for per-query values."
        )
    for key in ("y_true", "y_score", "qid"):
        if key in metric_kwargs:
            raise TypeError(
                f"make_scorer got {key}= as a metric keyword argument; the scorer passes "
                f"{key} itself (qid as metadata)."
            )
    return RankingScorer(func, 1 if better else -1, {**kwargs, **metric_kwargs}, name)
