"""Per-round callbacks for :func:`rankboost.train` (the shape of ``lightgbm/callback.py``).

A callback is any callable taking a :class:`CallbackEnv`; it is called after every round.
To end training early, raise :class:`EarlyStopException` (its ``best_iteration`` is stored
on the model).

:class:`EvaluationMonitor` keeps the scores ``H_t(x)`` of validation sets current, in
O(n_valid) per round through :meth:`CallbackEnv.update_scores`, and evaluates metrics on
them after every round. The callbacks :func:`early_stopping`, :func:`log_evaluation` and
:func:`record_evaluation` read it. Each of them brings the monitor up to date first, so the
order of the callbacks in the list does not matter and one monitor can feed several of them.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import check_feature_matrix, check_labels, check_qid
from .metrics import METRICS, parse_metric
from .weak_rankers import WeakRanker

__all__ = [
    "CallbackEnv",
    "EarlyStopException",
    "EvaluationMonitor",
    "early_stopping",
    "log_evaluation",
    "record_evaluation",
]

logger = logging.getLogger("rankboost")

MetricLike = str | Callable[..., float]


@dataclass(frozen=True)
class CallbackEnv:
    """What a callback sees after round ``iteration`` (0-based).

    Attributes
    ----------
    iteration : int
        Index of the round just finished (0-based).
    n_rounds : int
        Number of rounds requested.
    weak_ranker : ThresholdRanker or FeatureRanker
        The weak ranker of this round; ``weak_ranker.predict(X)`` gives ``h_t`` so a
        callback can keep validation scores up to date in O(n) per round.
    alpha : float
        Its weight ``alpha_t``.
    history : dict of list
        The per-round records so far: the keys of ``RankBoostModel.history`` except
        ``feature_label``.
    """

    iteration: int
    n_rounds: int
    weak_ranker: WeakRanker
    alpha: float
    history: dict[str, list[Any]]

    def update_scores(self, scores: NDArray[np.float64], X: NDArray[np.float64]) -> None:
        """Add this round's ``alpha_t h_t(x)`` to ``scores`` in place."""
        scores += self.alpha * self.weak_ranker.predict(X)


class EarlyStopException(Exception):
    """Raise from a callback to stop training.

    Parameters
    ----------
    best_iteration : int
        Number of rounds to keep as the model's ``best_iteration`` (1-based count).
    best_score : float, default=nan
        The score at that round, for the record.
    """

    def __init__(self, best_iteration: int, best_score: float = float("nan")) -> None:
        super().__init__(best_iteration, best_score)
        self.best_iteration = best_iteration
        self.best_score = best_score


def _metric(spec: MetricLike) -> tuple[str, Callable[..., float], bool]:
    """``(name, f(y_true, y_score, qid) -> float, greater_is_better)`` for a metric spec."""
    if callable(spec):
        name = getattr(spec, "__name__", type(spec).__name__)
        return name, spec, True
    func, kwargs = parse_metric(spec)
    info = METRICS[spec.strip().lower().partition("@")[0]]

    def score(y_true: ArrayLike, y_score: ArrayLike, qid: ArrayLike | None) -> float:
        return float(func(y_true, y_score, qid, **kwargs))

    return spec, score, info.greater_is_better


class EvaluationMonitor:
    """Validation scores kept current during training, and metrics evaluated every round.

    Pass it (or a callback built on it) in ``callbacks=`` of :func:`rankboost.train`.

    Parameters
    ----------
    eval_sets : sequence of (X, y, qid)
        Validation sets; ``qid`` may be None (one query) and given in any row order.
    metrics : str, callable or sequence of them, default="ndcg@10"
        Metric names understood by :func:`rankboost.metrics.parse_metric`, or callables
        ``f(y_true, y_score, qid) -> float`` (higher is better).
    names : sequence of str, default=None
        Names of the sets; None gives ``"valid_0"``, ``"valid_1"``, ...

    Attributes
    ----------
    results : dict of dict of list of float
        ``results[set_name][metric_name]``: the value after every round so far (the
        LightGBM ``evals_result_`` layout).
    greater_is_better : dict of bool
        For every metric name, whether higher values are better.
    scores : list of ndarray
        Current ``H_t(x)`` of every validation row.
    iteration : int
        The last round evaluated (0-based), -1 before training.

    Examples
    --------
    >>> import rankboost as rb
    >>> from rankboost.callback import EvaluationMonitor
    >>> from rankboost.datasets import make_ranking
    >>> X, y, qid = make_ranking(300, noise=0.5)
    >>> monitor = EvaluationMonitor([(X[200:], y[200:], qid[200:])], metrics=["ndcg@5"])
    >>> model = rb.train(X[:200], rb.LayeredFeedback(y[:200], qid[:200]), n_rounds=5,
    ...                  callbacks=[monitor])
    >>> len(monitor.results["valid_0"]["ndcg@5"])
    5
    """

    def __init__(
        self,
        eval_sets: Sequence[tuple[ArrayLike, ArrayLike, ArrayLike | None]],
        metrics: MetricLike | Sequence[MetricLike] = "ndcg@10",
        names: Sequence[str] | None = None,
    ) -> None:
        specs = [metrics] if isinstance(metrics, str) or callable(metrics) else list(metrics)
        if not specs:
            raise ValueError("EvaluationMonitor: metrics must name at least one metric.")
        self._metrics = [_metric(s) for s in specs]
        sets = list(eval_sets)
        if names is None:
            names = [f"valid_{i}" for i in range(len(sets))]
        if len(names) != len(sets):
            raise ValueError(
                f"EvaluationMonitor got {len(names)} names for {len(sets)} eval_sets; pass one "
                "name per set."
            )
        self.names = [str(n) for n in names]
        self._data: list[tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]] = []
        for name, item in zip(self.names, sets, strict=True):
            X, y, qid = item
            Xc = check_feature_matrix(X, name=f"X of eval set {name!r}")
            yc = check_labels(y, name=f"y of eval set {name!r}", n_samples=Xc.shape[0])
            self._data.append((Xc, yc, check_qid(qid, Xc.shape[0], name=f"qid of {name!r}")))
        self.scores = [np.zeros(d[0].shape[0]) for d in self._data]
        self.results: dict[str, dict[str, list[float]]] = {
            n: {m[0]: [] for m in self._metrics} for n in self.names
        }
        self.greater_is_better = {m[0]: m[2] for m in self._metrics}
        self.iteration = -1
        self._best: tuple[int, float] | None = None  # (1-based round, value) for summary()

    @property
    def eval_sets(
        self,
    ) -> list[tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]]:
        """The checked validation sets ``(X, y, query codes)``, in the order given."""
        return list(self._data)

    @property
    def metric_names(self) -> list[str]:
        """Names of the metrics, in the order given."""
        return [m[0] for m in self._metrics]

    def __call__(self, env: CallbackEnv) -> None:
        """Add round ``env.iteration`` to the scores and evaluate; a no-op if already done."""
        if env.iteration <= self.iteration:
            return
        if env.iteration != self.iteration + 1:
            raise RuntimeError(
                f"EvaluationMonitor missed rounds: it saw round {self.iteration} last and is now "
                f"called for round {env.iteration}; call it after every round."
            )
        for name, (Xc, yc, qid), scores in zip(self.names, self._data, self.scores, strict=True):
            env.update_scores(scores, Xc)
            for metric, func, _ in self._metrics:
                self.results[name][metric].append(func(yc, scores, qid))
        self.iteration = env.iteration
        if self.names:
            value = self.results[self.names[-1]][self.metric_names[0]][-1]
            better = self.greater_is_better[self.metric_names[0]]
            if (
                self._best is None
                or (better and value > self._best[1])
                or (not better and value < self._best[1])
            ):
                self._best = (env.iteration + 1, value)

    def summary(self) -> str:
        """One line for the progress bar: the first metric's latest value and the best round.

        The value is on the last set (as :meth:`best_iteration` with no arguments), e.g.
        ``"ndcg@10=0.4712 best=37"``; the set's name is prefixed when there are several
        sets. Empty before the first round. :func:`rankboost.train` with ``verbose=True``
        shows it next to the bar for every callback that has a ``summary()`` method.
        """
        if self._best is None:
            return ""
        name, metric = self.names[-1], self.metric_names[0]
        value = self.results[name][metric][-1]
        prefix = f"{name}:" if len(self.names) > 1 else ""
        return f"{prefix}{metric}={value:.4g} best={self._best[0]}"

    def latest(self) -> list[tuple[str, str, float]]:
        """``(set name, metric name, value)`` after the last round evaluated."""
        return [(n, m, self.results[n][m][-1]) for n in self.names for m in self.metric_names]

    def best_iteration(self, metric: str | None = None, dataset: str | None = None) -> int:
        """1-based round with the best value of ``metric`` on ``dataset`` (first if tied).

        ``None`` picks the first metric and the last set (the XGBoost convention).
        """
        name, metric = self._resolve(metric, dataset)
        values = np.asarray(self.results[name][metric])
        if values.size == 0:
            raise ValueError("EvaluationMonitor has not evaluated any round yet.")
        best = np.argmax(values) if self.greater_is_better[metric] else np.argmin(values)
        return int(best) + 1

    def _resolve(self, metric: str | None, dataset: str | None) -> tuple[str, str]:
        if not self.names:
            raise ValueError("EvaluationMonitor has no eval set; pass at least one (X, y, qid).")
        name = self.names[-1] if dataset is None else dataset
        metric = self.metric_names[0] if metric is None else metric
        if name not in self.results:
            raise ValueError(f"dataset must be one of {self.names}; got {dataset!r}.")
        if metric not in self.greater_is_better:
            raise ValueError(f"metric must be one of {self.metric_names}; got {metric!r}.")
        return name, metric


def _with_summary(
    callback: Callable[[CallbackEnv], None], monitor: EvaluationMonitor
) -> Callable[[CallbackEnv], None]:
    """Give a callback built on ``monitor`` the monitor's ``summary`` (for the progress bar)."""
    callback.summary = monitor.summary  # type: ignore[attr-defined]
    return callback


def early_stopping(
    monitor: EvaluationMonitor,
    stopping_rounds: int,
    *,
    metric: str | None = None,
    dataset: str | None = None,
    min_delta: float = 0.0,
) -> Callable[[CallbackEnv], None]:
    """Stop training when a validation metric has not improved for ``stopping_rounds`` rounds.

    Like LightGBM, the callback also ends training at the last round, so the model always
    records the best round in ``best_iteration`` (1-based), which predictions then use.

    Parameters
    ----------
    monitor : EvaluationMonitor
        Where the validation values come from.
    stopping_rounds : int
        Patience: rounds without an improvement larger than ``min_delta`` before stopping.
    metric : str, default=None
        Metric to watch; None = the monitor's first metric.
    dataset : str, default=None
        Validation set to watch; None = the last one (as in XGBoost).
    min_delta : float, default=0.0
        Smallest change that counts as an improvement.

    Returns
    -------
    callback : callable
        To put in ``callbacks=`` of :func:`rankboost.train`.

    Examples
    --------
    >>> import rankboost as rb
    >>> from rankboost.callback import EvaluationMonitor, early_stopping
    >>> from rankboost.datasets import make_ranking
    >>> X, y, qid = make_ranking(400, 4)
    >>> monitor = EvaluationMonitor([(X[300:], y[300:], qid[300:])], metrics="map")
    >>> model = rb.train(X[:300], rb.BipartiteFeedback(y[:300], qid[:300]), n_rounds=200,
    ...                  callbacks=[early_stopping(monitor, 10)])
    >>> model.best_iteration == monitor.best_iteration()
    True
    """
    if isinstance(stopping_rounds, bool) or not isinstance(stopping_rounds, (int, np.integer)):
        raise TypeError(
            f"early_stopping: stopping_rounds must be an int >= 1; got {stopping_rounds!r}."
        )
    if stopping_rounds < 1:
        raise ValueError(f"early_stopping: stopping_rounds must be >= 1; got {stopping_rounds}.")
    if not (isinstance(min_delta, (int, float)) and min_delta >= 0):
        raise ValueError(f"early_stopping: min_delta must be a number >= 0; got {min_delta!r}.")
    name, key = monitor._resolve(metric, dataset)
    sign = 1.0 if monitor.greater_is_better[key] else -1.0
    state: dict[str, Any] = {"best": -np.inf, "best_iter": 0}
    _, yv, codes = monitor._data[monitor.names.index(name)]
    low, high = np.full(codes.max() + 1, np.inf), np.full(codes.max() + 1, -np.inf)
    np.minimum.at(low, codes, yv)
    np.maximum.at(high, codes, yv)
    if not (high > low).any():  # no pair to order: every metric is the same every round
        warnings.warn(
            f"early stopping watches eval set {name!r}, in which no query has two different "
            "grades (no relevant document to rank above another): its metric cannot change, "
            "so training keeps round 1. Pass a validation set with relevant documents.",
            UserWarning,
            stacklevel=2,
        )

    def _callback(env: CallbackEnv) -> None:
        monitor(env)
        value = sign * monitor.results[name][key][-1]
        if value > state["best"] + min_delta or env.iteration == 0:
            state["best"], state["best_iter"] = value, env.iteration + 1
        last = env.iteration + 1 >= env.n_rounds
        if env.iteration + 1 - state["best_iter"] >= stopping_rounds or last:
            raise EarlyStopException(state["best_iter"], sign * state["best"])

    return _with_summary(_callback, monitor)


def log_evaluation(monitor: EvaluationMonitor, period: int = 1) -> Callable[[CallbackEnv], None]:
    """Log the validation metrics every ``period`` rounds (``logging`` logger ``"rankboost"``).

    Parameters
    ----------
    monitor : EvaluationMonitor
        Where the validation values come from.
    period : int, default=1
        Log every ``period`` rounds and at the last round.

    Returns
    -------
    callback : callable
        To put in ``callbacks=`` of :func:`rankboost.train`.

    Examples
    --------
    >>> import logging
    >>> import numpy as np
    >>> import rankboost as rb
    >>> from rankboost.callback import EvaluationMonitor, log_evaluation
    >>> X = np.random.default_rng(0).normal(size=(100, 2))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> monitor = EvaluationMonitor([(X, y, None)], metrics="ndcg@5")
    >>> logging.getLogger("rankboost").setLevel(logging.INFO)
    >>> model = rb.train(X, rb.BipartiteFeedback(y), n_rounds=4,
    ...                  callbacks=[log_evaluation(monitor, period=2)])
    >>> logging.getLogger("rankboost").setLevel(logging.NOTSET)
    """
    if isinstance(period, bool) or not isinstance(period, (int, np.integer)) or period < 1:
        raise ValueError(f"log_evaluation: period must be an int >= 1; got {period!r}.")

    def _callback(env: CallbackEnv) -> None:
        monitor(env)
        if (env.iteration + 1) % period == 0 or env.iteration + 1 == env.n_rounds:
            text = "\t".join(f"{n}'s {m}: {v:.6g}" for n, m, v in monitor.latest())
            logger.info("[%d]\t%s", env.iteration + 1, text)

    return _with_summary(_callback, monitor)


def record_evaluation(
    monitor: EvaluationMonitor, eval_result: dict[str, dict[str, list[float]]]
) -> Callable[[CallbackEnv], None]:
    """Copy the validation values into ``eval_result`` after every round (LightGBM layout).

    Parameters
    ----------
    monitor : EvaluationMonitor
        Where the validation values come from.
    eval_result : dict
        Filled as ``eval_result[set_name][metric_name] = [value per round]``.

    Returns
    -------
    callback : callable
        To put in ``callbacks=`` of :func:`rankboost.train`.

    Examples
    --------
    >>> import numpy as np
    >>> import rankboost as rb
    >>> from rankboost.callback import EvaluationMonitor, record_evaluation
    >>> X = np.random.default_rng(0).normal(size=(100, 2))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> monitor = EvaluationMonitor([(X, y, None)], metrics=["map"], names=["train"])
    >>> evals = {}
    >>> model = rb.train(X, rb.BipartiteFeedback(y), n_rounds=3,
    ...                  callbacks=[record_evaluation(monitor, evals)])
    >>> list(evals), len(evals["train"]["map"])
    (['train'], 3)
    """
    if not isinstance(eval_result, dict):
        raise TypeError(f"record_evaluation: eval_result must be a dict; got {eval_result!r}.")
    eval_result.clear()
    done = [-1]

    def _callback(env: CallbackEnv) -> None:
        monitor(env)
        if env.iteration > done[0]:
            for name, metric, value in monitor.latest():
                eval_result.setdefault(name, {}).setdefault(metric, []).append(value)
            done[0] = env.iteration

    return _with_summary(_callback, monitor)
