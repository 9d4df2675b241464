"""Plots of a trained RankBoost model (matplotlib, optional: ``pip install 'rankboost[plot]'``).

Every function takes a :class:`~rankboost.model.RankBoostModel` or a fitted estimator
holding one in ``model_`` (:class:`~rankboost.sklearn.RankBoostRanker`,
:class:`~rankboost.fusion.RankFusion`), draws on ``ax`` (a new figure if None) and returns the
matplotlib ``Axes``. A new figure uses constrained layout, so long feature names, axis labels
and legends are not clipped. This module imports only :mod:`rankboost.model`, so the
estimators can import it (lazily) without a cycle.

Features are labelled as ``rankboost info`` and ``model.history["feature_label"]`` label them
(:meth:`~rankboost.model.RankBoostModel.feature_label`): by name when the model has
``feature_names``, else ``f<id>`` with the 1-based id of LETOR files (``f1`` = column 0),
which the axis label then states.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from ._compat import require
from .model import RankBoostModel

if TYPE_CHECKING:
    from .fusion import RankFusion
    from .sklearn import RankBoostRanker

    ModelLike: TypeAlias = RankBoostModel | RankBoostRanker | RankFusion

__all__ = ["plot_bound", "plot_feature_function", "plot_importance", "plot_training"]


def _model_of(obj: Any) -> RankBoostModel:
    """The :class:`RankBoostModel` of a model or of a fitted estimator (its ``model_``).

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If ``obj`` is an estimator (it has ``fit``) that has not been fitted yet.
    TypeError
        If ``obj`` is neither a model nor an estimator holding one.
    """
    if isinstance(obj, RankBoostModel):
        return obj
    model = getattr(obj, "model_", None)
    if isinstance(model, RankBoostModel):
        return model
    if model is None and callable(getattr(obj, "fit", None)):
        from sklearn.exceptions import NotFittedError

        raise NotFittedError(
            f"This {type(obj).__name__} instance is not fitted yet; call 'fit' before plotting it."
        )
    raise TypeError(
        f"Expected a RankBoostModel or a fitted RankBoostRanker; got {type(obj).__name__}."
    )


def _axes(ax: Any, feature: str, height: float = 0.0, width: float = 0.0) -> Any:
    """``ax``, or the axes of a new figure with constrained layout (nothing clipped).

    Constrained layout makes room for long tick labels (LETOR feature names), axis labels,
    the twin axis of :func:`plot_training` and legends outside the axes; ``height`` and
    ``width`` (inches) grow the new figure beyond matplotlib's default size (many bars, long
    names).
    """
    plt = require("matplotlib.pyplot", feature)
    if ax is None:
        w, h = plt.rcParams["figure.figsize"]
        _, ax = plt.subplots(layout="constrained", figsize=(max(w, width), max(h, height)))
    return ax


def _names(model: RankBoostModel) -> list[str]:
    """The feature labels of ``rankboost info`` and ``model.history["feature_label"]``."""
    return model.feature_labels


#: The y label of :func:`plot_importance` for a model without feature names.
_UNNAMED_AXIS_LABEL = "feature (f<id>: 1-based id as in LETOR, column = id - 1)"


def plot_importance(
    model: ModelLike,
    *,
    importance_type: str = "gain",
    max_num_features: int | None = 20,
    ax: Any = None,
    title: str | None = "Feature importance",
    color: str | None = None,
) -> Any:
    """Horizontal bar chart of the feature importances, largest on top.

    Parameters
    ----------
    model : RankBoostModel, or a fitted RankBoostRanker or RankFusion
        The model.
    importance_type : {"gain", "split", "alpha"}, default="gain"
        ``"gain"``: share of ``-sum ln Z_t`` (how much the feature lowered the training-loss
        bound); ``"split"``: the number of rounds that chose the feature (an integer count,
        as in LightGBM; :meth:`~rankboost.model.RankBoostModel.feature_importances` gives
        the same as a share); ``"alpha"``: share of ``sum |alpha_t|``. Every bar is labelled
        with its value.
    max_num_features : int or None, default=20
        Show at most this many features (None = every used feature).
    ax : matplotlib Axes, default=None
        Where to draw; None creates a figure.
    title : str or None, default="Feature importance"
        Axes title.
    color : str, default=None
        Bar colour (matplotlib default if None).

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> import rankboost as rb
    >>> from rankboost.plotting import plot_importance
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 3))
    >>> y = X[:, 1] + 0.5 * rng.normal(size=100) > 0
    >>> model = rb.train(X, rb.BipartiteFeedback(y), n_rounds=5, feature_names=["a", "b", "c"])
    >>> ax = plot_importance(model)
    >>> ax.get_yticklabels()[0].get_text()
    'b'

    Without feature names the bars are labelled ``f<id>`` (1-based, as ``rankboost info``),
    and the y label says so:

    >>> ax = plot_importance(rb.train(X, rb.BipartiteFeedback(y), n_rounds=5))
    >>> ax.get_yticklabels()[0].get_text(), ax.get_ylabel()
    ('f2', 'feature (f<id>: 1-based id as in LETOR, column = id - 1)')
    """
    m = _model_of(model)
    imp = m.feature_importances(importance_type)  # validates importance_type
    if importance_type == "split":  # counts, not shares (docs/user_guide.md section 9)
        imp = np.bincount(m.rounds.feature, minlength=m.n_features).astype(np.int64)
    used = np.flatnonzero(imp > 0)
    order = used[np.argsort(-imp[used], kind="stable")]
    if max_num_features is not None:
        order = order[:max_num_features]
    names = _names(m)
    longest = max((len(names[i]) for i in order), default=0)
    # a long name takes width from the bars: widen the figure by about its extra length
    ax = _axes(
        ax,
        "plot_importance",
        height=0.25 * order.shape[0] + 1.2,
        width=4.8 + 0.08 * longest,
    )
    pos = np.arange(order.shape[0])[::-1]
    bars = ax.barh(pos, imp[order], color=color)
    ax.set_yticks(pos, [names[i] for i in order])
    if importance_type == "split":
        ax.bar_label(bars, fmt="%d", padding=3)
        ax.xaxis.get_major_locator().set_params(integer=True)
    else:
        ax.bar_label(bars, fmt="%.3f", padding=3)
    ax.margins(x=0.15)  # room for the value labels inside the axes
    ax.set_xlim(left=0)
    ax.set_xlabel(_IMPORTANCE_LABELS[importance_type])
    ax.set_ylabel("feature" if m.feature_names else _UNNAMED_AXIS_LABEL)
    if title:
        ax.set_title(title)
    return ax


_IMPORTANCE_LABELS = {
    "gain": "gain: share of -sum ln Z_t",
    "split": "split: number of rounds",
    "alpha": "alpha: share of sum |alpha_t|",
}


def plot_training(
    model: ModelLike,
    *,
    metric: str | None = None,
    ax: Any = None,
    log_scale: bool = True,
    title: str | None = "Training",
) -> Any:
    """Training rloss and its bound ``prod Z_t`` per round, plus validation metrics.

    The bound of Freund et al. (2003, Theorem 1) says the training rloss of ``H_t`` (ties
    counted as errors) never exceeds ``prod_{s <= t} Z_s``. The validation curves (a fitted
    estimator's ``evals_result_``, or the ``evals_result`` a model keeps from its fit, so a
    model saved by ``rankboost train --valid`` has them too) go in a panel of their own
    under the training curves, sharing the round axis, with the best iteration marked: the
    loss and the metric each have their own y scale. Each panel has its legend.

    Parameters
    ----------
    model : RankBoostModel, or a fitted RankBoostRanker or RankFusion
        The model.
    metric : str, default=None
        Validation metric to draw (None = every recorded metric).
    ax : matplotlib Axes, default=None
        Where to draw; None creates a figure.
    log_scale : bool, default=True
        Logarithmic y-axis for the loss and the bound.
    title : str or None, default="Training"
        Axes title.

    Returns
    -------
    ax : matplotlib Axes
        The axes of the training curves (the validation panel, when drawn, is the axes
        appended under it: ``ax.figure.axes[-1]``).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from rankboost.datasets import make_ranking
    >>> from rankboost.sklearn import RankBoostRanker
    >>> X, y, qid = make_ranking(200)
    >>> est = RankBoostRanker(n_estimators=10).fit(X, y, qid=qid, eval_set=[(X, y)],
    ...                                            eval_qid=[qid])
    >>> ax = est.plot_training()
    >>> [line.get_label() for line in ax.get_lines()]
    ['training rloss', 'bound prod Z_t']
    """
    m = _model_of(model)
    evals = getattr(model, "evals_result_", None) or getattr(m, "evals_result", None) or {}
    curves = [
        (f"{name} {key}", values)
        for name, per_metric in evals.items()
        for key, values in per_metric.items()
        if metric is None or key == metric
    ]
    vax = None
    if ax is None and curves:  # two panels sharing the round axis, one scale each
        plt = require("matplotlib.pyplot", "plot_training")
        w, h = plt.rcParams["figure.figsize"]
        _, (ax, vax) = plt.subplots(2, 1, sharex=True, layout="constrained", figsize=(w, 1.6 * h))
    ax = _axes(ax, "plot_training")
    rounds = np.arange(1, m.n_rounds + 1)
    history = m.history
    ax.plot(rounds, history["rloss"], label="training rloss")
    ax.plot(rounds, history["bound"], linestyle="--", label="bound prod Z_t")
    if log_scale and m.n_rounds and np.all(history["bound"] > 0):
        ax.set_yscale("log")
    ax.set_xlabel("round t")
    ax.xaxis.get_major_locator().set_params(integer=True)  # rounds are whole numbers
    ax.set_ylabel("ranking loss")
    ax.legend(loc="best", framealpha=0.9)
    if curves:
        # a panel of its own under the training curves: the metric has its own scale (a
        # second y-axis over the loss would put two scales on one plot)
        if vax is None:  # someone else's axes: split it
            from mpl_toolkits.axes_grid1 import make_axes_locatable

            vax = make_axes_locatable(ax).append_axes("bottom", size="100%", pad=0.5, sharex=ax)
        ax.set_xlabel("")
        ax.tick_params(labelbottom=False)
        k = 2  # go on in the colour cycle: no validation curve shares a colour
        for label, values in curves:
            steps = np.arange(1, len(values) + 1)
            vax.plot(steps, values, color=f"C{k}", label=label)
            k += 1
        best = getattr(model, "best_iteration_", None) or m.best_iteration
        if best is not None:
            vax.axvline(best, color="grey", linewidth=0.8, label=f"best iteration {best}")
        vax.set_xlabel("round t")
        vax.set_ylabel("validation metric")
        vax.legend(loc="best", framealpha=0.9)
    if title:
        ax.set_title(title)
    return ax


def plot_feature_function(
    model: ModelLike,
    feature: int | str,
    *,
    ax: Any = None,
    title: str | None = None,
    color: str | None = None,
) -> Any:
    """The learned step function ``H_i`` of one feature.

    RankBoost's ranking function is additive, ``H(x) = sum_i H_i(f_i(x))`` (every weak
    ranker looks at one feature), so ``H_i`` is the whole contribution of feature ``i``
    (:meth:`~rankboost.model.RankBoostModel.step_functions`). Its value where the feature
    abstains (NaN) is drawn as a dotted horizontal line; an infinite threshold (a ranker that
    only asks whether the feature is defined) is not drawn as a break.

    Parameters
    ----------
    model : RankBoostModel, or a fitted RankBoostRanker or RankFusion
        The model.
    feature : int or str
        Column index (0-based) or feature label: its name, or ``"f<id>"`` (1-based, as
        ``rankboost info`` prints it) for a model without feature names.
    ax : matplotlib Axes, default=None
        Where to draw; None creates a figure.
    title : str, default=None
        Axes title (None = the feature's label).
    color : str, default=None
        Line colour.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import rankboost as rb
    >>> from rankboost.datasets import make_ranking
    >>> from rankboost.plotting import plot_feature_function
    >>> X, y, _ = make_ranking(100, 2, noise=0.5)
    >>> model = rb.train(X, rb.BipartiteFeedback(y), n_rounds=3)
    >>> ax = plot_feature_function(model, 0)
    >>> ax.get_xlabel(), ax.get_title()
    ('f1 (column 0)', 'f1')
    """
    m = _model_of(model)
    names = _names(m)
    if isinstance(feature, str):
        if feature not in names:
            raise ValueError(
                f"plot_feature_function: feature {feature!r} is not a feature label of the "
                f"model; known labels start with {names[:5]} (or pass a 0-based column)."
            )
        index = names.index(feature)
    elif (
        isinstance(feature, (int, np.integer))
        and not isinstance(feature, bool)
        and 0 <= feature < m.n_features
    ):
        index = int(feature)
    else:
        raise ValueError(
            f"plot_feature_function: feature must be a name or an index in [0, {m.n_features}); "
            f"got {feature!r}."
        )
    ax = _axes(ax, "plot_feature_function")
    sf = m.step_functions().get(index)
    if sf is None:  # the feature is never used: H_i is 0 everywhere
        breaks, values, missing = np.empty(0), np.zeros(1), 0.0
    else:
        breaks, values, missing = sf.breaks, sf.values, sf.missing
    # a break at -inf only splits off x = -inf, one at +inf an empty interval: draw the rest
    lo = int(breaks.shape[0] > 0 and breaks[0] == -np.inf)
    hi = breaks.shape[0] - int(breaks.shape[0] > lo and breaks[-1] == np.inf)
    breaks, values = breaks[lo:hi], values[lo : hi + 1]
    if breaks.shape[0]:
        span = float(breaks[-1] - breaks[0]) or 1.0
        edges = np.concatenate([[breaks[0] - 0.1 * span], breaks, [breaks[-1] + 0.1 * span]])
    else:  # H_i is constant (or the feature is never used: 0 everywhere)
        edges = np.array([0.0, 1.0])
    label = "H_i(x)"
    if not breaks.shape[0]:  # the x range drawn means nothing: no ticks, and say why
        ax.set_xticks([])
        label = "H_i(x): constant (no threshold on this feature)"
    ax.stairs(values, edges, color=color, label=label, baseline=None)
    ax.axhline(missing, linestyle=":", color="grey", label="H_i where missing (NaN)")
    # the label as rankboost info prints it; without names, the column it stands for
    ax.set_xlabel(names[index] if m.feature_names else f"{names[index]} (column {index})")
    ax.set_ylabel("contribution to H(x)")
    ax.legend(loc="best", framealpha=0.9)
    ax.set_title(names[index] if title is None else title)
    return ax


def plot_bound(
    model: ModelLike,
    X: Any,
    y: Any,
    qid: Any = None,
    *,
    X_test: Any = None,
    y_test: Any = None,
    qid_test: Any = None,
    delta: float = 0.05,
    vc_dim: int | None = None,
    relevance_threshold: float = 1,
    ax: Any = None,
    log_scale: bool = True,
    title: str | None = "Generalization bound",
) -> Any:
    """Train error, test error and the bipartite generalization bound against rounds.

    Draws, for ``t = 1..T``, the pooled bipartite error of ``H_t`` on the training rows
    (``"train error"``), on the test rows if given (``"test error"``), and the theorem's upper
    bound on the true error, ``train error + eps_t`` (``"bound (train + eps)"``), from
    :func:`rankboost.bounds.model_bound`; the bound is drawn only for the rounds where it is
    defined (``m, n >= d'``). A grey line at 1 marks the trivial bound: above it the theorem
    says nothing. With ``qid`` (and ``qid_test``), the within-query errors (the training
    loss, not covered by the theorem) are added as dotted lines.

    Parameters
    ----------
    model : RankBoostModel, or a fitted RankBoostRanker or RankFusion
        A model of binary threshold rankers.
    X, y : array-like
        Training features and labels (``y >= relevance_threshold`` is a positive).
    qid : array-like, default=None
        Training query ids (adds the within-query training error).
    X_test, y_test, qid_test : array-like, default=None
        Test rows (adds the test errors).
    delta : float, default=0.05
        Confidence parameter of the bound.
    vc_dim : int, default=None
        VC-dimension of the weak rankers; None = :func:`rankboost.bounds.threshold_vc_dim`.
    relevance_threshold : float, default=1
        Labels ``>=`` this value are positives.
    ax : matplotlib Axes, default=None
        Where to draw; None creates a figure.
    log_scale : bool, default=True
        Logarithmic y-axis (the bound is usually far above the errors).
    title : str or None, default="Generalization bound"
        Axes title.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import rankboost as rb
    >>> from rankboost.datasets import make_ranking
    >>> from rankboost.plotting import plot_bound
    >>> X, y, _ = make_ranking(4000, 2, threshold=1.0)
    >>> model = rb.train(X[:3000], rb.BipartiteFeedback(y[:3000]), n_rounds=5)
    >>> ax = plot_bound(model, X[:3000], y[:3000], X_test=X[3000:], y_test=y[3000:])
    >>> [line.get_label() for line in ax.get_lines()]
    ['train error', 'test error', 'bound (train + eps)', 'trivial bound 1']
    """
    from .bounds import bipartite_error_curve, model_bound

    m = _model_of(model)
    if (X_test is None) != (y_test is None):
        raise ValueError("plot_bound: pass both X_test and y_test, or neither.")
    b = model_bound(
        m, X, y, qid, delta=delta, vc_dim=vc_dim, relevance_threshold=relevance_threshold
    )
    ax = _axes(ax, "plot_bound")
    rounds = b.rounds
    ax.plot(rounds, b.error, color="C0", label="train error")
    test = None
    if X_test is not None:
        test = bipartite_error_curve(
            m, X_test, y_test, qid_test, relevance_threshold=relevance_threshold
        )
        ax.plot(rounds, test[0], color="C1", label="test error")
    ok = ~np.isnan(b.epsilon)
    ax.plot(rounds[ok], b.upper[ok], color="C3", linestyle="--", label="bound (train + eps)")
    ax.axhline(1.0, color="grey", linewidth=0.8, label="trivial bound 1")
    if b.query_error is not None:
        ax.plot(rounds, b.query_error, color="C0", linestyle=":", label="train error, in query")
    if test is not None and test[1] is not None:
        ax.plot(rounds, test[1], color="C1", linestyle=":", label="test error, in query")
    if log_scale:
        ax.set_yscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel("bipartite error (pairs misordered)")
    ax.legend(loc="best", framealpha=0.9)
    if title:
        ax.set_title(
            f"{title} (m={b.n_negatives}, n={b.n_positives}, d={b.vc_dim}, delta={b.delta:g})"
        )
    return ax
