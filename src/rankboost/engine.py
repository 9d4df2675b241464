"""The loop apart from the round: :func:`train`, the validated entry, the round loop.

As LightGBM's ``engine.py`` runs ``basic.Booster.update``: :func:`train` validates the
user's input and hands it to :func:`train_checked`, the entry every adapter uses
(:class:`rankboost.RankBoostRanker`, fusion, the recommender); :func:`run_loop` calls
:meth:`rankboost.Booster.update` ``n_rounds`` times with the callbacks, the progress bar
and the stopping rules. One round is :mod:`rankboost.booster`'s (its module docstring
names the file of each round-level formula).

Stopping: after ``n_rounds``; earlier, with a :class:`TrainingStoppedWarning` and
``model.stop_reason``, when no candidate has ``|r| > tol`` (``Booster.update`` returns
None) or when the chosen weak ranker orders every crucial pair correctly (``|r| = 1``: the
distribution would not change, so every later round would repeat it); or when a callback
raises :class:`~rankboost.callback.EarlyStopException`.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _compat
from ._kernels import on_compile
from ._validation import check_feature_matrix
from .booster import Booster, Feedback, TrainingStoppedWarning, check_feedback
from .callback import CallbackEnv, EarlyStopException
from .model import RankBoostModel
from .params import TrainParams, resolve_params

__all__ = ["TrainingStoppedWarning", "progress_postfix", "run_loop", "train", "train_checked"]


def train(
    X: ArrayLike,
    feedback: Feedback,
    n_rounds: int = 300,
    *,
    alpha: str = "r",
    learning_rate: float = 1.0,
    positive_cumulative: bool = False,
    thresholds: int | str | tuple[str, int] = 255,
    criterion: str = "abs_r",
    default: str | int = "learned",
    weak_ranker: str = "threshold",
    callbacks: Sequence[Callable[[CallbackEnv], None]] | None = None,
    tol: float = 1e-9,
    push: float = 1.0,
    feature_names: Sequence[str] | None = None,
    verbose: bool = False,
    params: TrainParams | None = None,
    init_score: ArrayLike | None = None,
) -> RankBoostModel:
    """Train RankBoost (Freund, Iyer, Schapire & Singer, JMLR 4 (2003) 933-969).

    Validation, a :class:`~rankboost.Booster`, and a loop of
    :meth:`~rankboost.Booster.update` with callbacks and stopping (as ``lightgbm.train``
    runs ``Booster.update``; module docstring).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Ranking features; NaN where a feature abstains (⊥). Only the order of each feature's
        values matters. A scipy.sparse matrix is densified with absent entries read as 0
        (SVMlight's meaning), not as "abstain": pass NaN explicitly for ratings or ranks
        that are missing.
    feedback : PairFeedback, BipartiteFeedback or LayeredFeedback
        What should rank above what; its ``n_samples`` must equal the rows of ``X``.
    n_rounds : int, default=300
        Number of boosting rounds ``T``.
    alpha : {"r", "exact", "line_search", "rbplus"}, default="r"
        How ``alpha_t`` is chosen (:mod:`rankboost.alpha_rules`; paper section 3.2), or
        RankBoost+ (:mod:`rankboost.rbplus`: its own selection score, alpha and tied-pair
        update; binary rankers; layered feedback is expanded to explicit pairs).
    learning_rate : float, default=1.0
        Shrinkage ``nu`` in (0, 1]: ``alpha_t = nu`` times the rule's alpha (1 = the paper).
        ``Z_t`` is recorded at the applied ``alpha_t``, so ``rloss <= prod Z_t`` holds.
    positive_cumulative : bool, default=False
        WeakLearn.cum (paper section 4): only accept a weak ranker whose cumulative weight
        ``sum_{s: h_s = h} alpha_s`` stays positive, so ``H`` is non-decreasing in every
        feature. Candidates are tried in decreasing ``|r|`` among the eligible ones (new
        rankers with ``r > 0``, and rankers with a positive cumulative weight), with the
        tie window of :mod:`rankboost.weak_rankers` anchored at the best eligible one.
        The guarantee is over the values where the feature is defined; the (learned) value
        where it abstains is its own step, which may sit anywhere relative to them.
    thresholds : int, "all", "midpoints" or ("uniform", B), default=255
        Candidate thresholds per feature (:mod:`rankboost.binning`): ``B`` quantile bins,
        every distinct value, the midpoints between consecutive distinct values, or ``B``
        equal-width bins between the training min and max (RankLib's rule).
    criterion : {"abs_r", "r", "exact_z"}, default="abs_r"
        WeakLearn's objective (:mod:`rankboost.weak_rankers`): the largest ``|r|`` (the
        paper; ``r < 0`` gives a negative alpha), the largest ``r`` among candidates
        with ``r > 0`` (RankLib: no sign reversal), or the smallest exact
        ``Z = W_0 + 2 sqrt(W_- W_+)`` among candidates with ``|r| > tol`` (binary rankers;
        ``W_-, W_+`` of every candidate from :mod:`rankboost._kernels.split_sums`).
    default : {"learned", 0, 1}, default="learned"
        ``q_def`` where the feature abstains: picked by WeakLearn (the paper) or fixed.
    weak_ranker : {"threshold", "feature", "both"}, default="threshold"
        Binary threshold rankers (the paper), real-valued rank rankers in [0, 1], or both.
    callbacks : list of callable, default=None
        Called after every round with a :class:`~rankboost.callback.CallbackEnv`.
    tol : float, default=1e-9
        Stop when no candidate has ``|r| > tol``. Kept well above ``ALPHA_EPS`` (1e-10):
        after a clipped alpha the chosen ranker's residual ``|r|`` is of that order, and it
        must not decide whether training goes on.
    push : float, default=1.0
        The P-Norm Push's ``p >= 1`` (Rudin, JMLR 10, 2009; :mod:`rankboost.push`):
        minimise ``R_p = sum_k L_k^p``, ``L_k`` the exponential loss of the crucial pairs
        above lower item ``k``, so a larger ``p`` concentrates on the top of the list. ``1``
        is RankBoost, bit for bit. With ``p > 1`` alpha is the minimiser of ``R_p`` (a
        safeguarded Newton search) and ``history["z"]`` is ``R_p``'s ratio per round.
    feature_names : list of str, default=None
        Names stored in the model (taken from ``X.columns`` for a DataFrame).
    verbose : bool, default=False
        Show a progress bar (needs ``tqdm``; without it a
        :class:`~rankboost.ProgressBarWarning` says so once per process). Callbacks with a
        ``summary()`` method (an :class:`~rankboost.callback.EvaluationMonitor`, and the
        callbacks built on one) show it next to the bar, e.g. ``ndcg@10=0.4712 best=37``.
    params : TrainParams, default=None
        All the training parameters at once (:class:`rankboost.params.TrainParams`); when
        given, the keyword parameters above (``n_rounds`` to ``push``) must keep their
        defaults.
    init_score : array-like of shape (n_samples,), default=None
        Boost from a prior ranking function ``F0`` (one finite score per row, as LightGBM's
        ``init_score``; SPEC 7.2): round 1 runs on ``D_1`` proportional to
        ``D(x0, x1) exp(F0(x0) - F0(x1))``, so the rounds minimise the loss of ``F0 + H``.
        The model holds the learned ``H`` only, as LightGBM's does: rank new rows by
        ``F0(x) + model.predict(x)``. The history's ``rloss`` is that of ``F0 + H`` and
        ``bound`` is ``prod Z_t``, the loss *relative to* the prior's
        (:attr:`Booster.prior_loss`). A constant ``F0`` trains exactly as none; ``F0`` =
        a model's scores continues its training.

    Returns
    -------
    model : RankBoostModel

    Examples
    --------
    >>> import numpy as np
    >>> import rankboost as rb
    >>> from rankboost.datasets import make_ranking
    >>> X, y, _ = make_ranking(200, noise=0.1)
    >>> model = rb.train(X, rb.BipartiteFeedback(y), n_rounds=20)
    >>> int(np.argmax(model.feature_importances_))
    0
    >>> bool(model.history["rloss"][-1] <= model.history["bound"][-1])
    True
    """
    p = resolve_params("rankboost.train", locals(), params)
    if feature_names is None and hasattr(X, "columns"):
        feature_names = [str(c) for c in X.columns]
    Xc = check_feature_matrix(X)
    check_feedback(feedback, Xc.shape[0])
    return train_checked(Xc, feedback, p, callbacks, feature_names, verbose, init_score=init_score)


def train_checked(
    Xc: NDArray[np.float64],
    feedback: Feedback,
    params: TrainParams,
    callbacks: Sequence[Callable[[CallbackEnv], None]] | None = None,
    feature_names: Sequence[str] | None = None,
    verbose: bool = False,
    stacklevel: int = 3,
    *,
    init_score: ArrayLike | None = None,
) -> RankBoostModel:
    """The loop of :func:`train` on validated input: the adapters' entry point.

    ``Xc`` is a C-contiguous float64 matrix (``check_feature_matrix`` or the adapter's own
    checks), ``feedback`` matches its rows and ``params`` is a validated
    :class:`~rankboost.params.TrainParams`; nothing of them is checked again.
    ``init_score`` (a prior ``F0``, see :func:`train`) is checked by the booster.
    ``stacklevel`` is the warnings' stack level as seen from this function's caller.
    """
    bst = Booster.from_checked(Xc, feedback, params, feature_names, init_score=init_score)
    return run_loop(bst, params, callbacks, verbose, stacklevel + 1)


def progress_postfix(callbacks: Sequence[Callable[[CallbackEnv], None]]) -> str:
    """The progress bar's postfix: ``summary()`` of the callbacks that have one.

    A callback opts in with a ``summary()`` method returning a short string (the
    :class:`~rankboost.callback.EvaluationMonitor` gives its first metric and best round);
    the same object listed twice (or wrapped by several callbacks) is shown once.
    """
    parts: list[str] = []
    seen: set[int] = set()
    for cb in callbacks:
        summary = getattr(cb, "summary", None)
        owner = getattr(summary, "__self__", summary)
        if not callable(summary) or id(owner) in seen:
            continue
        seen.add(id(owner))
        text = summary()
        if text:
            parts.append(str(text))
    return " ".join(parts)


#: The progress bar's name while numba compiles kernels (not while it reads them from its cache)
COMPILING = "rankboost (compiling kernels)"


def run_loop(
    bst: Booster,
    params: TrainParams,
    callbacks: Sequence[Callable[[CallbackEnv], None]] | None,
    verbose: bool,
    stacklevel: int,
) -> RankBoostModel:
    """``params.n_rounds`` calls of ``bst.update()`` with callbacks and stopping.

    Any :class:`~rankboost.Booster` (the Dask one too); ``stacklevel`` is the stack level
    of the :class:`TrainingStoppedWarning` and of the progress bar's warning, as seen from
    this function.
    """
    n_rounds = params.n_rounds
    stop_reason: str | None = None
    best_iteration: int | None = None
    bar = _compat.progress_bar(
        total=n_rounds, disable=not verbose, desc="rankboost", stacklevel=stacklevel
    )
    compiled: list[bool] = []  # whether numba compiled a kernel in this round

    def compiling() -> None:  # named on the bar at once: the round may take seconds
        if not compiled:
            compiled.append(True)
            bar.set_description_str(COMPILING, refresh=True)

    listening = contextlib.ExitStack()
    if verbose:  # a round that compiles is named so (round 1 mostly; a rare path later)
        listening.enter_context(on_compile(compiling))
    try:
        for it in range(n_rounds):
            rec = bst.update()
            if rec is None:
                stop_reason = bst.stop_reason
                break
            if callbacks:
                env = CallbackEnv(it, n_rounds, rec.ranker, rec.alpha, bst.history)
                try:
                    for cb in callbacks:
                        cb(env)
                except EarlyStopException as stop:
                    best_iteration = int(stop.best_iteration)
                    bar.update(1)
                    break
                if verbose:
                    postfix = progress_postfix(callbacks)
                    if postfix:
                        bar.set_postfix_str(postfix, refresh=False)
            bar.update(1)
            if it == 0 or compiled:  # round 1 loads (or compiles) kernels: no rate or ETA from it
                _compat.restart_clock(bar, "rankboost")
                compiled.clear()
            if rec.perfect:
                if it + 1 < n_rounds:
                    stop_reason = (
                        f"stopped after {it + 1} rounds: the last weak ranker orders every "
                        "crucial pair correctly (|r| = 1), so the distribution no longer "
                        "changes and every further round would repeat it"
                    )
                break
    finally:
        listening.close()
        bar.close()
    if stop_reason is not None:
        warnings.warn(stop_reason, TrainingStoppedWarning, stacklevel=stacklevel)
    model = bst.model()
    model.stop_reason = stop_reason
    model.best_iteration = best_iteration
    return model
