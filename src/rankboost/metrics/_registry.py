"""Metric names shared by ``evaluate``, the estimator and the CLI: registry and parser."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._conventions import CONVENTIONS
from .average_precision import average_precision, mean_average_precision, reciprocal_rank
from .metasearch import average_rank
from .movie import expected_average_precision, expected_coverage, expected_prot
from .ndcg import dcg_score, ndcg_score
from .pairwise import disagreement
from .precision import precision_at_k

__all__ = ["CONVENTIONS", "METRICS", "MetricInfo", "conventions", "evaluate", "parse_metric"]


@dataclass(frozen=True)
class MetricInfo:
    """A registry entry.

    Attributes
    ----------
    func : callable
        The metric, ``func(y_true, y_score, qid, **kwargs) -> float``.
    cutoff : {"none", "optional", "required"}
        Whether the name takes an ``@k`` suffix (passed as ``k=``).
    greater_is_better : bool
        ``False`` for losses (disagreement, average rank).
    description : str
        One line for help texts.
    """

    func: Callable[..., Any]
    cutoff: str
    greater_is_better: bool
    description: str


METRICS: dict[str, MetricInfo] = {
    "ndcg": MetricInfo(ndcg_score, "optional", True, "NDCG@k (exp2 gain); 'ndcg' = whole list"),
    "dcg": MetricInfo(dcg_score, "optional", True, "DCG@k (exp2 gain); 'dcg' = whole list"),
    "p": MetricInfo(precision_at_k, "required", True, "precision at k, e.g. 'p@5'"),
    "precision": MetricInfo(precision_at_k, "required", True, "precision at k, 'precision@5'"),
    "map": MetricInfo(mean_average_precision, "optional", True, "mean average precision"),
    "ap": MetricInfo(average_precision, "optional", True, "average precision (mean = MAP)"),
    "mrr": MetricInfo(reciprocal_rank, "optional", True, "mean reciprocal rank"),
    "disagreement": MetricInfo(disagreement, "none", False, "fraction of pairs misordered"),
    "expected_ap": MetricInfo(expected_average_precision, "none", True, "paper's expected AP"),
    "prot": MetricInfo(expected_prot, "none", True, "paper's predicted rank of top"),
    "coverage": MetricInfo(expected_coverage, "none", True, "paper's coverage K/rank(t_K)"),
    "average_rank": MetricInfo(average_rank, "none", False, "mean capped rank of first hit"),
}


def conventions(metrics: str | Iterable[str], **options: Any) -> dict[str, str]:
    """The conventions in effect when :func:`evaluate` computes ``metrics`` with ``options``.

    Parameters
    ----------
    metrics : str or iterable of str
        Metric names understood by :func:`parse_metric`.
    **options
        Values of :data:`CONVENTIONS` names (``gain="linear"``, ...); ``None`` or absent
        means the metrics' default.

    Returns
    -------
    dict
        ``{name: value}`` for every :data:`CONVENTIONS` name that at least one of the metrics
        accepts, in the order of :data:`CONVENTIONS`: the value given, else the default of
        the metric functions' signatures.

    Raises
    ------
    ValueError
        For a value that is not allowed, or an unknown metric name.

    Examples
    --------
    >>> from rankboost.metrics import conventions
    >>> conventions(["ndcg@10", "map"], discount="letor")
    {'gain': 'exp2', 'discount': 'letor', 'ties': 'expected', 'empty': 'zero'}
    >>> conventions("disagreement")
    {'ties': 'expected'}
    """
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    out: dict[str, str] = {}
    for key, allowed in CONVENTIONS.items():
        value = options.get(key)
        if value is not None and value not in allowed:
            raise ValueError(
                f"The {key!r} convention of rankboost.metrics must be one of {list(allowed)}; "
                f"got {value!r} instead."
            )
        for name in names:
            param = inspect.signature(parse_metric(name)[0]).parameters.get(key)
            if param is not None:
                out[key] = param.default if value is None else value
                break
    return out


def _known() -> str:
    names = []
    for key, info in METRICS.items():
        suffix = {"none": "", "optional": "[@k]", "required": "@k"}[info.cutoff]
        names.append(key + suffix)
    return ", ".join(names)


def parse_metric(name: str) -> tuple[Callable[..., Any], dict[str, Any]]:
    """Turn a metric name such as ``"ndcg@10"`` into ``(function, keyword arguments)``.

    Names are case-insensitive; ``@k`` sets the rank cut-off ``k``. Known names: ``ndcg[@k]``,
    ``dcg[@k]``, ``p@k``, ``precision@k``, ``map[@k]``, ``ap[@k]``, ``mrr[@k]``,
    ``disagreement``, ``expected_ap``, ``prot``, ``coverage``, ``average_rank`` (see
    :data:`METRICS`). ``"ndcg"`` without ``@k`` means the whole list.

    Parameters
    ----------
    name : str
        The metric name.

    Returns
    -------
    func : callable
        The metric function of :mod:`rankboost.metrics`.
    kwargs : dict
        Keyword arguments to pass to it (``{"k": 10}`` for ``"ndcg@10"``).

    Raises
    ------
    ValueError
        For an unknown name or a malformed cut-off; the message lists the known names.

    Examples
    --------
    >>> from rankboost.metrics import parse_metric
    >>> func, kwargs = parse_metric("NDCG@5")
    >>> func.__name__, kwargs
    ('ndcg_score', {'k': 5})
    >>> parse_metric("ndcg")[1]
    {'k': None}
    """
    if not isinstance(name, str):
        raise TypeError(f"A metric name must be a str such as 'ndcg@10'; got {name!r} instead.")
    text = name.strip().lower()
    base, at, cut = text.partition("@")
    info = METRICS.get(base)
    if info is None:
        raise ValueError(f"Unknown metric {name!r}; known metrics are: {_known()}.")
    if not at:
        if info.cutoff == "required":
            raise ValueError(f"Metric {name!r} needs a rank cut-off, e.g. '{base}@10'; got none.")
        return info.func, ({"k": None} if info.cutoff == "optional" else {})
    if info.cutoff == "none":
        raise ValueError(f"Metric {base!r} takes no '@k' cut-off; got {name!r}.")
    if not cut.isdigit() or int(cut) < 1:
        raise ValueError(
            f"The cut-off of metric {name!r} must be a positive integer, as in '{base}@10'; "
            f"got {cut!r}."
        )
    return info.func, {"k": int(cut)}


def evaluate(
    y_true: ArrayLike,
    y_score: ArrayLike,
    qid: ArrayLike | None = None,
    metrics: str | Iterable[str] = ("ndcg@10", "map", "mrr"),
    *,
    ties: str = "expected",
    **options: Any,
) -> dict[str, float | NDArray[np.float64]]:
    """Compute several metrics by name.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance labels.
    y_score : array-like of shape (n_samples,)
        Predicted scores; higher ranks first.
    qid : array-like of shape (n_samples,), default=None
        Query id of each row, in any order. ``None`` means one query.
    metrics : str or iterable of str, default=("ndcg@10", "map", "mrr")
        Metric names understood by :func:`parse_metric`.
    ties : {"expected", "pessimistic", "optimistic", "stable"}, default="expected"
        Tie policy passed to every metric.
    **options
        Further keyword arguments (``gain``, ``empty``, ``relevance_threshold``,
        ``per_query``, ...), each passed to the metrics that accept it. An option no
        requested metric accepts raises a ``TypeError``.

    Returns
    -------
    dict
        ``{name: value}`` in the order of ``metrics``, keyed by the names as given.

    Examples
    --------
    >>> from rankboost.metrics import evaluate
    >>> evaluate([1, 0, 1], [0.9, 0.8, 0.7], metrics=["p@2", "mrr"])
    {'p@2': 0.5, 'mrr': 1.0}
    """
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise ValueError("The 'metrics' parameter of evaluate must name at least one metric.")
    used: set[str] = set()
    results: dict[str, float | NDArray[np.float64]] = {}
    for name in names:
        func, kwargs = parse_metric(name)
        accepted = inspect.signature(func).parameters
        extra = {key: value for key, value in options.items() if key in accepted}
        used.update(extra)
        results[name] = func(y_true, y_score, qid, ties=ties, **kwargs, **extra)
    unused = sorted(set(options) - used)
    if unused:
        raise TypeError(
            f"evaluate got option(s) {unused} that none of the metrics {names} accepts."
        )
    return results
