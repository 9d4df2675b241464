"""The fit of a ranker on labels grouped by query, without scikit-learn: :func:`fit_ranker`.

:meth:`rankboost.RankBoostRanker.fit` (after scikit-learn's input validation) and the
``rankboost train`` and ``rankboost demo`` commands (after their own) both call
:func:`fit_ranker`: the feedback from ``y``, ``qid`` and ``sample_weight`` (or a click log),
the validation monitor and early stopping, :func:`rankboost.engine.train_checked`, and the
settlement of the best round. One definition, so the estimator and the command line train
the same model from the same input, and the command line never imports scikit-learn
(about 2 s of start-up). The Dask estimator reuses :func:`fit_callbacks` and :func:`settle`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import as_float_matrix
from .callback import CallbackEnv, EvaluationMonitor, early_stopping
from .engine import train_checked
from .feedback import BipartiteFeedback, LayeredFeedback, PairFeedback
from .model import RankBoostModel
from .params import TrainParams

__all__ = [
    "FitResult",
    "OneQueryWarning",
    "fit_callbacks",
    "fit_feature_names",
    "fit_ranker",
    "settle",
    "warn_one_query",
]

#: ``prepare(i, X, qid) -> (X, qid)``: an adapter's checks of validation set ``i``
PrepareEval = Callable[[int, Any, Any], tuple[Any, Any]]
Callback = Callable[[CallbackEnv], None]


class OneQueryWarning(UserWarning):
    """``fit`` got no query ids, so all the rows were taken as one query.

    A ranker learns (and a validation set is scored) within queries. Without ``qid``,
    ``group`` or a ``"qid"`` column every row is in one query, which training data almost
    never means: the model and the validation scores look plausible and are wrong (the
    LightGBM and XGBoost rankers refuse such input). To rank the rows as one query on
    purpose pass ``qid=np.zeros(n_samples)`` (``eval_qid=[np.zeros(n_valid)]``), or
    silence the category: ``warnings.filterwarnings("ignore",
    category=rankboost.OneQueryWarning)``.
    """


def warn_one_query(owner: str, what: str, how: str, n_rows: Any, stacklevel: int) -> None:
    """Warn that ``what`` (``n_rows`` rows, no query ids) is taken as ONE query.

    ``stacklevel`` as seen from the caller: 1 = the caller's line, 2 = its caller's.
    """
    n = str(n_rows) if isinstance(n_rows, (int, np.integer)) else "n_samples"
    warnings.warn(
        f"{owner}.fit: {what} has no query ids, so all its {n} rows are taken as ONE query "
        f"(a ranker learns within queries: this is rarely meant). Pass {how}; to use one "
        f"query on purpose pass np.zeros({n}) as its query ids; to silence this warning: "
        "warnings.filterwarnings('ignore', category=rankboost.OneQueryWarning).",
        OneQueryWarning,
        stacklevel=stacklevel + 1,
    )


def fit_feature_names(columns: Any, names: Sequence[str] | None, n_features: int) -> Any:
    """The feature names ``fit`` keeps: ``feature_names=``, else a DataFrame's ``columns``."""
    if names is None:
        return columns
    if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
        raise TypeError(f"feature_names must be a list of non-empty str; got {names!r:.80}.")
    names = list(names)
    if len(names) != n_features or len(set(names)) != len(names):
        raise ValueError(
            f"feature_names must be {n_features} unique names, one per column of X; got "
            f"{len(names)} ({len(set(names))} distinct)."
        )
    if columns is not None and [str(c) for c in columns] != names:
        raise ValueError(
            "feature_names differ from the columns of the DataFrame X; pass one of them."
        )
    return names


def _monitor(
    eval_set: Any,
    eval_qid: Any,
    eval_metric: Any,
    prepare: PrepareEval | None,
    owner: str,
    stacklevel: int,
) -> EvaluationMonitor:
    """The :class:`EvaluationMonitor` of ``eval_set`` (each entry checked by ``prepare``)."""
    if isinstance(eval_set, tuple) and len(eval_set) == 2 and not isinstance(eval_set[0], tuple):
        eval_set = [eval_set]
    sets = list(eval_set)
    qids = [None] * len(sets) if eval_qid is None else list(eval_qid)
    if len(qids) != len(sets):
        raise ValueError(
            f"{owner}.fit got {len(sets)} eval_set entries but {len(qids)} eval_qid "
            "entries; pass one qid array (or None) per validation set."
        )
    prepared = []
    for i, (item, q) in enumerate(zip(sets, qids, strict=True)):
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise ValueError(f"eval_set[{i}] must be a pair (X, y); got {type(item).__name__}.")
        Xv, yv = item
        if prepare is not None:
            Xv, q = prepare(i, Xv, q)
        if q is None:
            warn_one_query(
                owner,
                f"eval_set[{i}]",
                f"eval_qid=[...] with the query of each row of eval_set[{i}]",
                Xv.shape[0],
                stacklevel + 2,
            )
        prepared.append((Xv, yv, q))
    return EvaluationMonitor(prepared, eval_metric)


def fit_callbacks(
    owner: str,
    eval_set: Any,
    eval_qid: Any,
    eval_metric: Any,
    early_stopping_rounds: int | None,
    callbacks: Sequence[Callback] | None,
    prepare: PrepareEval | None = None,
    stacklevel: int = 2,
) -> tuple[list[Callback], EvaluationMonitor | None]:
    """The callbacks of ``fit``: the validation monitor, early stopping, the user's.

    ``owner`` is the estimator's class name; ``prepare`` checks each validation set's
    ``X`` (and may find its query ids) before the monitor does; ``stacklevel`` of the
    :class:`OneQueryWarning` of a set without query ids is as seen from the caller.
    """
    cbs: list[Callback] = []
    monitor = None
    if eval_set is not None:
        monitor = _monitor(eval_set, eval_qid, eval_metric, prepare, owner, stacklevel)
        cbs.append(monitor)
    elif eval_qid is not None:
        raise ValueError(f"{owner}.fit got eval_qid= without eval_set=; pass both.")
    if early_stopping_rounds is not None:
        if monitor is None:
            raise ValueError(
                f"{owner}.fit got early_stopping_rounds={early_stopping_rounds!r} but no "
                "eval_set=; early stopping needs a validation set."
            )
        with warnings.catch_warnings(record=True) as caught:  # shown at the user's fit line
            warnings.simplefilter("always")
            cbs.append(early_stopping(monitor, early_stopping_rounds))
        for w in caught:
            warnings.warn(w.message, w.category, stacklevel=stacklevel + 1)
    cbs.extend(callbacks or [])
    return cbs, monitor


def settle(
    model: RankBoostModel, monitor: EvaluationMonitor | None, early_stopping_rounds: int | None
) -> tuple[int | None, dict[str, dict[str, list[float]]]]:
    """``(best_iteration, evals_result)`` of a trained ``model``, both stored on it too.

    With early stopping the best round is where it stopped (``model.best_iteration``) or,
    when all the rounds ran, the monitor's best; ``evals_result`` is saved with the model
    (for the plots).
    """
    best = None
    if early_stopping_rounds is not None and monitor is not None:
        best = model.best_iteration or monitor.best_iteration()
        model.best_iteration = best
    evals_result = {} if monitor is None else monitor.results
    model.evals_result = evals_result or None
    return best, evals_result


@dataclass
class FitResult:
    """What :func:`fit_ranker` learned.

    Attributes
    ----------
    model : RankBoostModel
        Every round trained, with ``best_iteration`` and ``evals_result`` set.
    monitor : EvaluationMonitor or None
        The validation monitor (None without ``eval_set``).
    best_iteration : int or None
        With early stopping: the best round (1-based); None otherwise.
    evals_result : dict
        ``evals_result[set_name][metric]``: the value after each round.
    propensity : Propensity or None
        With a click log: the propensity the clicks were weighted by.
    push_choice : PushChoice or None
        With ``push="auto"``: the ``p`` chosen on held-out queries and the table it was
        chosen by (:mod:`rankboost._auto_push`).
    """

    model: RankBoostModel
    monitor: EvaluationMonitor | None
    best_iteration: int | None
    evals_result: dict[str, dict[str, list[float]]]
    propensity: Any = None
    push_choice: Any = None


def fit_ranker(
    X: Any,
    y: NDArray[np.float64],
    qid: ArrayLike | None,
    params: TrainParams,
    *,
    feedback: str = "layered",
    normalize: str = "query",
    sample_weight: ArrayLike | None = None,
    init_score: ArrayLike | None = None,
    eval_set: Sequence[tuple[Any, Any]] | None = None,
    eval_qid: Sequence[ArrayLike | None] | None = None,
    eval_metric: Any = "ndcg@10",
    early_stopping_rounds: int | None = None,
    callbacks: Sequence[Callback] | None = None,
    feature_names: Sequence[str] | None = None,
    columns: Any = None,
    clicks: Any = None,
    propensity: Any = "auto",
    verbose: bool = False,
    prepare_eval: PrepareEval | None = None,
    owner: str = "RankBoostRanker",
    stacklevel: int = 2,
    push_auto: bool = False,
) -> FitResult:
    """Train on graded labels grouped by query: the steps of ``RankBoostRanker.fit``.

    ``X`` (2-D, dense or scipy.sparse, NaN = abstain) and ``y`` (1-D float64) are checked
    already by the adapter (scikit-learn's ``validate_data``, or the command line's own
    checks); ``params`` is validated and ``feedback``/``normalize`` are checked values.
    The other arguments are those of :meth:`rankboost.RankBoostRanker.fit`, plus
    ``columns`` (a DataFrame's column names, or None), ``prepare_eval`` (the adapter's
    checks of each validation set, see :func:`fit_callbacks`), ``owner`` (the class name
    the messages give), ``stacklevel`` (of the warnings, as seen from the caller: 2 =
    the line that called the caller) and ``push_auto`` (``push="auto"``: ``params.push`` is
    a placeholder, replaced by the ``p`` :func:`rankboost._auto_push.choose_push` chooses).
    """
    if X.shape[0] < 2:
        raise ValueError(
            f"{owner} needs at least 2 samples to form a crucial pair; got {X.shape[0]} sample."
        )
    if qid is None and clicks is None:
        warn_one_query(
            owner, "X", "qid= (or group=, or a 'qid' column)", X.shape[0], stacklevel + 1
        )
    if init_score is not None and eval_set is not None:
        raise ValueError(
            f"{owner}.fit got init_score= with eval_set=: the validation "
            "metrics would score the learned H without the prior F0. Evaluate "
            "F0 + predict(X) on the validation rows after fitting instead."
        )
    prop = None
    fb: LayeredFeedback | PairFeedback
    if clicks is None:
        cls = BipartiteFeedback if feedback == "bipartite" else LayeredFeedback
        fb = cls(y, qid, normalize=normalize).with_sample_weight(sample_weight)
    else:
        from .clicks._sklearn import click_fit_feedback

        fb, prop = click_fit_feedback(clicks, propensity, X, sample_weight)
    cbs, monitor = fit_callbacks(
        owner,
        eval_set,
        eval_qid,
        eval_metric,
        early_stopping_rounds,
        callbacks,
        prepare_eval,
        stacklevel + 1,
    )
    names = fit_feature_names(columns, feature_names, X.shape[1])
    Xc = as_float_matrix(X)
    choice = None
    if push_auto:
        if clicks is not None:
            raise ValueError(
                f"{owner}.fit: push='auto' chooses p by the held-out NDCG@10 of graded "
                "labels, and clicks= has none; pass a float push (push=1.0)."
            )
        choice = _choose_push(
            Xc, y, qid, params, fb, feedback, normalize, sample_weight, init_score, monitor,
            early_stopping_rounds is not None, verbose, owner,
        )  # fmt: skip
        params = params.replace(push=choice.push)
    model = train_checked(
        Xc,
        fb,
        params,
        callbacks=cbs or None,
        feature_names=None if names is None else [str(n) for n in names],
        verbose=verbose,
        stacklevel=stacklevel + 2,  # train_checked counts from itself
        init_score=init_score,
    )
    best, evals_result = settle(model, monitor, early_stopping_rounds)
    if choice is not None:
        model.params["push_auto"] = choice.to_dict()  # saved with the model; rankboost info
    return FitResult(model, monitor, best, evals_result, prop, choice)


def _choose_push(  # noqa: PLR0917  (fit_ranker's pieces)
    Xc: NDArray[np.float64],
    y: NDArray[np.float64],
    qid: Any,
    params: TrainParams,
    fb: Any,
    feedback: str,
    normalize: str,
    sample_weight: Any,
    init_score: Any,
    monitor: EvaluationMonitor | None,
    early_stopping: bool,
    verbose: bool,
    owner: str,
) -> Any:
    """``push="auto"``'s choice (:func:`rankboost._auto_push.choose_push`) for this fit."""
    from ._auto_push import choose_push
    from ._validation import check_init_score, check_qid

    cls = BipartiteFeedback if feedback == "bipartite" else LayeredFeedback
    qcode = check_qid(qid, Xc.shape[0])
    sw = None if sample_weight is None else np.asarray(sample_weight)

    def make_feedback(rows: NDArray[np.bool_]) -> Any:
        if rows.all():
            return fb
        part = cls(y[rows], qcode[rows], normalize=normalize)
        return part.with_sample_weight(None if sw is None else sw[rows])

    sets = [] if monitor is None else monitor.eval_sets
    return choose_push(
        Xc,
        y,
        qcode,
        params,
        make_feedback,
        valid=sets[-1] if sets else None,
        early_stopping=early_stopping,
        init_score=None if init_score is None else check_init_score(init_score, Xc.shape[0]),
        pair_labels=(y >= 1) if feedback == "bipartite" else None,
        verbose=verbose,
        owner=owner,
    )
