"""scikit-learn adapter: :class:`RankBoostRanker`, a thin layer over :func:`rankboost.train`.

The estimator stores its parameters and nothing else; ``fit`` validates them and the input
(scikit-learn's ``validate_data``), finds the queries (``qid`` in any order, LightGBM-style
``group`` sizes, or a ``qid`` column of a pandas DataFrame) and calls
:func:`rankboost._fit.fit_ranker`, which builds the feedback and the validation callbacks
and runs the functional engine (``rankboost train`` calls it too). Everything learned lives
in ``model_`` (a :class:`~rankboost.model.RankBoostModel`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted

from ._auto_push import is_auto
from ._fit import FitResult, OneQueryWarning, fit_callbacks, fit_ranker, settle
from ._validation import forget_fit, group_sizes_to_qid, keep_params
from .callback import CallbackEnv, EvaluationMonitor
from .metrics import ndcg_score
from .params import TrainParams, check_param, params_of

try:
    from sklearn.utils.validation import validate_data as _sk_validate_data

    _ENSURE_FINITE = "ensure_all_finite"
except ImportError:  # pragma: no cover - remove when the minimum scikit-learn is >= 1.6
    _sk_validate_data = None
    _ENSURE_FINITE = "force_all_finite"

__all__ = ["OneQueryWarning", "RankBoostRanker"]

QID_COLUMN = "qid"


def _validate_data(est: BaseEstimator, X: Any, y: Any = "no_validation", **kw: Any) -> Any:
    kw = {**kw, _ENSURE_FINITE: "allow-nan", "accept_sparse": ("csr", "csc")}
    if _sk_validate_data is None:  # pragma: no cover - scikit-learn < 1.6
        return est._validate_data(X, y, **kw)
    return _sk_validate_data(est, X, y, **kw)


def _is_frame(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "drop") and hasattr(X, "iloc")


def _pop_qid(
    X: Any, qid: ArrayLike | None, group: ArrayLike | None, *, x_name: str, owner: str
) -> tuple[Any, ArrayLike | None]:
    """Return ``(X without a qid column, per-row qid or None)`` from qid=, group= or X."""
    if qid is not None and group is not None:
        raise ValueError(
            f"{owner} got both qid= and group=; pass only one (qid: one query id per row in "
            "any order; group: sizes of consecutive queries)."
        )
    has_column = _is_frame(X) and QID_COLUMN in X.columns
    if has_column:
        if qid is not None or group is not None:
            raise ValueError(
                f"{owner}: {x_name} has a {QID_COLUMN!r} column and "
                f"{'qid' if qid is not None else 'group'}= was given too; pass the queries "
                f"only once (drop the column, or leave {'qid' if qid is not None else 'group'}="
                "None to use it)."
            )
        qid = np.asarray(X[QID_COLUMN])
        X = X.drop(columns=QID_COLUMN)
    if group is not None:
        qid = group_sizes_to_qid(group, len(X) if not hasattr(X, "shape") else X.shape[0])
    return X, qid


class RankBoostRanker(BaseEstimator):
    """RankBoost ranker with the scikit-learn estimator interface.

    A thin adapter over :func:`rankboost.train` (Freund, Iyer, Schapire & Singer, 2003):
    ``fit`` builds the feedback from graded labels grouped by query, and ``predict`` returns
    the learned ranking function ``H(x) = sum_t alpha_t h_t(x)`` (higher ranks first).

    Parameters
    ----------
    n_estimators : int, default=300
        Number of boosting rounds ``T`` (``n_rounds`` of :func:`rankboost.train`).
    alpha : {"r", "exact", "line_search", "rbplus"}, default="r"
        How ``alpha_t`` is chosen (:mod:`rankboost.alpha_rules`): Rb-c
        ``1/2 ln((1 + r)/(1 - r))``, Rb-d (exact minimiser of ``Z`` for binary rankers), a
        line search on ``Z``, or RankBoost+ (:mod:`rankboost.rbplus`; binary rankers, the
        crucial pairs listed explicitly).
    learning_rate : float, default=1.0
        Shrinkage ``nu`` in (0, 1]: ``alpha_t = nu`` times the rule's alpha (1 = the paper).
    thresholds : int, "all", "midpoints" or ("uniform", B), default=255
        Candidate thresholds per feature: quantile candidates, every distinct value, the
        midpoints between them, or ``B`` equal-width bins (:mod:`rankboost.binning`).
    criterion : {"abs_r", "r", "exact_z"}, default="abs_r"
        WeakLearn's objective: the largest ``|r|`` (the paper), the largest ``r > 0``
        (RankLib, no sign reversal), or the smallest exact ``Z = W_0 + 2 sqrt(W_- W_+)``
        (binary rankers).
    default : {"learned", 0, 1}, default="learned"
        ``q_def`` where a feature abstains: picked by WeakLearn, or fixed.
    positive_cumulative : bool, default=False
        WeakLearn.cum: keep ``H`` non-decreasing in every feature.
    weak_ranker : {"threshold", "feature", "both"}, default="threshold"
        Binary threshold rankers (the paper's), real-valued rank rankers, or both.
    feedback : {"layered", "bipartite"}, default="layered"
        ``"layered"``: within a query, every higher grade of ``y`` above every lower one.
        ``"bipartite"``: ``y`` in {0, 1}, every 1 above every 0 (RankBoost.B).
    normalize : {"query", "pair"}, default="query"
        ``"pair"``: every crucial pair weighs the same (the paper's ``D``); ``"query"``:
        every query with a crucial pair gets the same total weight.
    tol : float, default=1e-9
        Stop when no weak ranker has ``|r| > tol``.
    push : float or "auto", default=1.0
        The P-Norm Push's ``p >= 1`` (Rudin, JMLR 10, 2009; :mod:`rankboost.push`):
        minimise ``R_p = sum_k L_k^p``, ``L_k`` the exponential loss of the crucial pairs
        above lower item ``k``, so a larger ``p`` concentrates on the top of the list. ``1``
        is RankBoost, bit for bit. With ``p > 1`` alpha is the minimiser of ``R_p`` (a
        safeguarded Newton search) and ``model_.history["z"]`` is ``R_p``'s ratio per round.
        ``"auto"``: ``p`` chosen among 1, 2, 4, 8 and 16 by held-out NDCG@10 on the last
        ``eval_set`` (at each ``p``'s best round with ``early_stopping_rounds``), else on 5
        inner folds of the training queries; 1 is kept unless another ``p`` beats it by more
        than 2 standard errors of the per-query differences (:mod:`rankboost._auto_push`).
        It costs 5 fits (25 without ``eval_set``) before the final one.
    verbose : bool, default=False
        Show a progress bar (tqdm) during ``fit``; with ``eval_set`` it shows the first
        metric on the last set and the best round so far (``ndcg@10=0.4712 best=37``).
        Without tqdm, a :class:`~rankboost.ProgressBarWarning` says so once per process.

    Attributes
    ----------
    model_ : RankBoostModel
        The trained ranking function (every round, also those after ``best_iteration_``).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Feature names, when ``X`` was a DataFrame with string column names (a ``qid``
        column used as query ids is not a feature).
    feature_importances_ : ndarray of shape (n_features_in_,)
        Share of the loss bound's reduction ``-sum ln Z_t`` owed to each feature.
    n_estimators_ : int
        Rounds actually trained (fewer than ``n_estimators`` if training stopped early).
    best_iteration_ : int or None
        With ``early_stopping_rounds``: the best round (1-based) on the validation set,
        which ``predict`` and ``score`` use. None otherwise.
    evals_result_ : dict
        ``evals_result_[set_name][metric] = [value after each round]`` for every
        ``eval_set`` (LightGBM layout); empty without ``eval_set``.
    history_ : dict of ndarray
        Per-round records of the engine (``model_.history``): ``feature``, ``threshold``,
        ``default``, ``alpha``, ``r``, ``z``, ``rloss``, ``bound``.
    push_ : float
        The P-Norm Push's ``p`` the model was trained with (``push``, or the one
        ``push="auto"`` chose).
    push_selection_ : dict or None
        With ``push="auto"``: what it chose on (held-out set, mean NDCG@10 per ``p``, the
        difference to ``p = 1`` and its standard error; also ``model_.params["push_auto"]``).
        None otherwise.

    See Also
    --------
    rankboost.train : The functional engine.

    Notes
    -----
    Queries are given per row (``qid``, any order), as ``group`` sizes of consecutive rows,
    or, when ``X`` is a pandas DataFrame and neither is passed, as its ``"qid"`` column
    (dropped from the features): the last form lets ``GroupKFold``, ``cross_val_score`` and
    ``GridSearchCV`` pass the queries along with the rows. Without any of them all rows form
    one query, and ``fit`` says so with a :class:`OneQueryWarning` (as it does for an
    ``eval_set`` entry without query ids): pass ``qid=np.zeros(n_samples)`` to mean one
    query, which also silences it, or filter the category. The engine's
    ``rankboost.LayeredFeedback(y)`` (no ``qid``) is one query by definition and does not
    warn.

    ``sample_weight`` weighs rows as multiplicities: a crucial pair gets
    ``Phi(x0, x1) = w(x0) w(x1)``, exactly as if each row were repeated ``w`` times
    (:meth:`rankboost.LayeredFeedback.with_sample_weight`); the quantile candidate thresholds
    (``thresholds=255``) weigh the rows too, so integer weights give the model of the
    repeated rows at any ``thresholds``. The O(n)-per-round layered engine has no row
    weights yet, so a non-constant ``sample_weight`` lists the crucial pairs explicitly
    (O(pairs) memory and time per round; refused beyond
    ``rankboost.feedback.MAX_WEIGHTED_PAIRS``).

    The training parameters are validated by :func:`rankboost.params.params_of`, the
    one definition :func:`rankboost.train` and the command line use too.

    References
    ----------
    .. [1] Y. Freund, R. Iyer, R. E. Schapire and Y. Singer, "An Efficient Boosting
       Algorithm for Combining Preferences", JMLR 4 (2003) 933-969.

    Examples
    --------
    >>> from rankboost.datasets import make_ranking
    >>> from rankboost.sklearn import RankBoostRanker
    >>> X, y, qid = make_ranking(200, noise=0.3)
    >>> ranker = RankBoostRanker(n_estimators=20).fit(X, y, qid=qid)
    >>> ranker.predict(X[:3]).shape
    (3,)
    >>> round(ranker.score(X, y, qid=qid), 2) > 0.9
    True
    """

    # Under scikit-learn's metadata routing (scikit-learn >= 1.4) fit and score request the
    # query ids by default, so GridSearchCV/cross_validate pass each fold its own qid.
    __metadata_request__fit = {"qid": True}
    __metadata_request__score = {"qid": True}

    def __init__(
        self,
        *,
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
        push: float | str = 1.0,
        verbose: bool = False,
    ) -> None:
        keep_params(self, locals())

    # ------------------------------------------------------------------ sklearn tags
    def __sklearn_tags__(self) -> Any:
        """NaN allowed (the feature abstains), sparse accepted (densified), y required."""
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags

    def __sklearn_is_fitted__(self) -> bool:
        """Fitted = ``fit`` finished (``check_is_fitted`` ignores what a fit that raised set)."""
        return "model_" in vars(self)

    @classmethod
    def _from_fitted(cls, params: dict[str, Any], fitted: dict[str, Any]) -> RankBoostRanker:
        """A fitted estimator of these parameters holding the fitted attributes ``fitted``.

        The loader of another estimator's fit (``DaskRankBoostRanker.to_local``): only the
        class writes its own fitted attributes (``tests/test_architecture.py``).
        """
        est = cls(**params)
        for name, value in fitted.items():
            if not name.endswith("_") or name.startswith("__"):
                raise ValueError(f"{cls.__name__}: {name!r} is not a fitted attribute.")
            est.__dict__[name] = value
        return est

    # ------------------------------------------------------------------ fitting
    def _params(self, push_auto: bool = False) -> TrainParams:
        """The training parameters, validated (errors name this estimator's parameters).

        ``push_auto``: ``push="auto"`` is taken, with ``p = 1`` standing in until ``fit``
        chooses it (:mod:`rankboost._auto_push`).
        """
        owner = type(self).__name__
        check_param("feedback", self.feedback, owner)
        check_param("normalize", self.normalize, owner)
        est = clone(self).set_params(push=1.0) if push_auto else self
        return params_of(est, owner, {"n_rounds": "n_estimators"})

    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        *,
        qid: ArrayLike | None = None,
        group: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
        init_score: ArrayLike | None = None,
        eval_set: Sequence[tuple[ArrayLike, ArrayLike]] | None = None,
        eval_qid: Sequence[ArrayLike | None] | None = None,
        eval_metric: str | Callable[..., float] | Sequence[Any] = "ndcg@10",
        early_stopping_rounds: int | None = None,
        callbacks: Sequence[Callable[[CallbackEnv], None]] | None = None,
        feature_names: Sequence[str] | None = None,
        clicks: Any = None,
        propensity: Any = "auto",
    ) -> RankBoostRanker:
        """Train on graded labels grouped by query (or on a click log, ``clicks=``).

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Features; NaN where a feature abstains. A DataFrame may carry a ``"qid"``
            column, used as ``qid`` (and dropped) when ``qid`` and ``group`` are None.
        y : array-like of shape (n_samples,)
            Relevance grades (only their order within a query matters for training).
        qid : array-like of shape (n_samples,), default=None
            Query id of each row, in any order (ints or strings). None and no ``group``
            and no ``qid`` column: all rows form one query, with a :class:`OneQueryWarning`
            (pass ``np.zeros(n_samples)`` for one query on purpose).
        group : array-like of int, default=None
            LightGBM-style query sizes of consecutive rows; exclusive with ``qid``.
        sample_weight : array-like of shape (n_samples,), default=None
            Row multiplicities (non-negative): a crucial pair weighs ``w(x0) w(x1)``.
            Non-constant weights enumerate the crucial pairs (see Notes of the class).
        init_score : array-like of shape (n_samples,), default=None
            A prior ranking function ``F0``, one finite score per row, boosted from (as
            LightGBM's ``init_score``; :func:`rankboost.train`). As in LightGBM,
            ``predict`` returns the learned ``H`` only: rank by ``F0 + predict(X)``. Not
            combined with ``eval_set`` (its metrics would score ``H`` without ``F0``).
        eval_set : list of (X, y), default=None
            Validation sets, scored after every round into ``evals_result_``.
        eval_qid : list of array-like, default=None
            Query ids of each validation set (None entries: the set's ``"qid"`` column, or
            else one query, with a :class:`OneQueryWarning`).
        eval_metric : str, callable or list of them, default="ndcg@10"
            Metrics for ``eval_set`` (names of :func:`rankboost.metrics.parse_metric`, or
            ``f(y_true, y_score, qid) -> float``, higher is better). The first one drives
            early stopping.
        early_stopping_rounds : int, default=None
            Stop when the first metric on the last validation set has not improved for this
            many rounds, and set ``best_iteration_``.
        callbacks : list of callable, default=None
            Extra callbacks for :func:`rankboost.train`.
        feature_names : list of str, default=None
            Names of the columns of ``X`` (e.g. ``load_mq2008()``'s ``feature_names``),
            kept in ``model_`` for ``history_``, the plots, ``save`` and every export. None:
            a DataFrame's column names, else none. With a DataFrame they must equal its
            columns.
        clicks : rankboost.clicks.ClickLog or PairFeedback, default=None
            Train on clicks instead of ``y`` (then ignored; pass None): a log matched to the
            rows of ``X`` (:meth:`~rankboost.clicks.ClickLog.match`) becomes click pairs
            (``pairs="all_shown"``, each click above every other shown document) weighted by
            inverse propensity (:func:`rankboost.clicks.click_feedback`), with
            the propensity kept in ``propensity_``; a ``PairFeedback`` built by
            ``click_feedback`` (other pair extractions, clipping) is used as it is.
        propensity : "auto", "none", path, array-like or Propensity, default="auto"
            With a ``ClickLog``: ``"auto"`` estimates it from the log by regression-EM on
            ``X`` (:func:`rankboost.clicks.estimate_propensity`); ``"none"``: no correction.

        Returns
        -------
        self : RankBoostRanker
            The fitted estimator.
        """
        forget_fit(self)  # a fit that raises leaves an unfitted estimator, not a half state
        push_auto = is_auto(self.push)
        params = self._params(push_auto)
        X, qid = _pop_qid(X, qid, group, x_name="X", owner="RankBoostRanker.fit")
        if clicks is not None and y is None:
            y = np.zeros(len(X))  # labels are ignored with clicks=: the pairs come from them
        Xc, yc = _validate_data(self, X, y, y_numeric=True, reset=True)
        fitted = fit_ranker(  # the steps the command line runs too (rankboost._fit)
            Xc,
            np.asarray(yc, dtype=np.float64),
            qid,
            params,
            feedback=self.feedback,
            normalize=self.normalize,
            sample_weight=sample_weight,
            init_score=init_score,
            eval_set=eval_set,
            eval_qid=eval_qid,
            eval_metric=eval_metric,
            early_stopping_rounds=early_stopping_rounds,
            callbacks=callbacks,
            feature_names=feature_names,
            columns=getattr(self, "feature_names_in_", None),
            clicks=clicks,
            propensity=propensity,
            verbose=bool(self.verbose),
            prepare_eval=self._prepare_eval,
            owner=type(self).__name__,
            push_auto=push_auto,
        )
        if clicks is not None:
            self.propensity_ = fitted.propensity
        return self._store(fitted)

    def _prepare_eval(self, i: int, X: Any, qid: Any) -> tuple[Any, Any]:
        """Validation set ``i``: its ``"qid"`` column popped, ``X`` checked as in ``predict``."""
        X, qid = _pop_qid(X, qid, None, x_name=f"eval_set[{i}] X", owner="RankBoostRanker.fit")
        return _validate_data(self, X, reset=False), qid

    def _callbacks(
        self,
        eval_set: Any,
        eval_qid: Any,
        eval_metric: Any,
        early_stopping_rounds: int | None,
        callbacks: Sequence[Callable[[CallbackEnv], None]] | None,
    ) -> tuple[list[Callable[[CallbackEnv], None]], EvaluationMonitor | None]:
        """The callbacks of ``fit`` (:func:`rankboost._fit.fit_callbacks`; the Dask fit's)."""
        return fit_callbacks(
            type(self).__name__,
            eval_set,
            eval_qid,
            eval_metric,
            early_stopping_rounds,
            callbacks,
            self._prepare_eval,
            stacklevel=3,  # the line that called fit
        )

    def _set_fitted(
        self,
        model: Any,
        monitor: EvaluationMonitor | None,
        early_stopping_rounds: int | None,
    ) -> Any:
        """Store a model trained with ``monitor`` (the Dask fit's last step)."""
        best, evals_result = settle(model, monitor, early_stopping_rounds)
        return self._store(FitResult(model, monitor, best, evals_result))

    def _store(self, fitted: FitResult) -> Any:
        """Store what ``fit`` learned (``model_`` and the attributes derived from it)."""
        model = fitted.model
        self.model_ = model
        self.n_estimators_ = model.n_rounds
        self.best_iteration_ = fitted.best_iteration
        self.evals_result_ = fitted.evals_result
        self.history_ = model.history
        self.feature_importances_ = model.feature_importances_
        self.push_ = model.push
        choice = fitted.push_choice
        self.push_selection_ = None if choice is None else choice.to_dict()
        return self

    # ------------------------------------------------------------------ prediction
    def _transform(self, X: Any, qid: ArrayLike | None, group: ArrayLike | None) -> Any:
        check_is_fitted(self, "model_")
        X, qid = _pop_qid(X, qid, group, x_name="X", owner=type(self).__name__)
        return _validate_data(self, X, reset=False), qid

    def predict(self, X: ArrayLike, *, n_rounds: int | None = None) -> NDArray[np.float64]:
        """Score every row: ``H(x)``, higher ranks first.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Features; a DataFrame's ``"qid"`` column is ignored.
        n_rounds : int, default=None
            Use the first ``n_rounds`` rounds; None = ``best_iteration_`` when early
            stopping was used, else all.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        Xc, _ = self._transform(X, None, None)
        k = self.best_iteration_ if n_rounds is None else n_rounds
        return self.model_.decision_function(Xc, n_rounds=k)

    def score(
        self,
        X: ArrayLike,
        y: ArrayLike,
        *,
        qid: ArrayLike | None = None,
        group: ArrayLike | None = None,
    ) -> float:
        """Mean NDCG@10 over queries (:func:`rankboost.metrics.ndcg_score` defaults).

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Features; a DataFrame's ``"qid"`` column gives the queries when ``qid`` and
            ``group`` are None.
        y : array-like of shape (n_samples,)
            Non-negative relevance grades.
        qid : array-like of shape (n_samples,), default=None
            Query id of each row, in any order; None = one query.
        group : array-like of int, default=None
            Query sizes of consecutive rows; exclusive with ``qid``.

        Returns
        -------
        score : float
            Mean NDCG@10 (exp2 gain, expected value over ties, 0 for a query without a
            relevant row).
        """
        Xc, qid = self._transform(X, qid, group)
        k = self.best_iteration_
        return float(ndcg_score(y, self.model_.decision_function(Xc, n_rounds=k), qid, k=10))

    # ------------------------------------------------------------------ plots
    def plot_importance(self, **kwargs: Any) -> Any:
        """Bar chart of ``feature_importances_``; see :func:`rankboost.plotting.plot_importance`."""
        from .plotting import plot_importance

        return plot_importance(self, **kwargs)

    def plot_training(self, **kwargs: Any) -> Any:
        """Training loss, its bound and validation metrics per round.

        See :func:`rankboost.plotting.plot_training`.
        """
        from .plotting import plot_training

        return plot_training(self, **kwargs)

    def plot_feature_function(self, feature: int | str, **kwargs: Any) -> Any:
        """The learned step function of one feature.

        See :func:`rankboost.plotting.plot_feature_function`.
        """
        from .plotting import plot_feature_function

        return plot_feature_function(self, feature, **kwargs)

    def export(self, path: str | os.PathLike[str], format: str, **options: Any) -> None:
        """Write the fitted model for another consumer (XGBoost, LightGBM, ONNX, RankLib, ...).

        See :func:`rankboost.export.export_model` (formats, ``options``) and docs/serving.md.
        Feature names default to the columns of the DataFrame given to :meth:`fit`.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        """
        check_is_fitted(self, "model_")
        self.model_.export(path, format, **options)
