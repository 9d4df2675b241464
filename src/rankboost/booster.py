"""The boosting loop (SPEC section 2; paper Figure 1, Knowl 1-6).

One round, structured so that a distributed trainer can reuse every step:

1. per-query-block statistics: the potential ``pi`` of every training row (feedback) and
   its histogram per feature and bin (``_kernels.histogram``);
2. sum the histograms over blocks (here: one block);
3. choose the weak ranker maximising ``|r|`` (:mod:`rankboost.weak_rankers`) and its
   ``alpha`` (this module);
4. broadcast ``h_t`` and update every block: ``D_{t+1} = D_t exp(alpha (h(x0) - h(x1))) / Z_t``.

Alpha rules (SPEC 5):

* ``"r"`` (Rb-c, default): ``alpha = 1/2 ln((1 + r) / (1 - r))``, minimising the bound
  ``Z <= sqrt(1 - r^2)`` (valid for any ``h`` in [0, 1]). Guard: ``r`` is clipped to
  ``[-1 + ALPHA_EPS, 1 - ALPHA_EPS]``, so ``|alpha| <= MAX_ALPHA`` (about 11.86).
* ``"exact"`` (Rb-d, binary rankers only):
  ``alpha = 1/2 ln(max(W_-, eps) / max(W_+, eps))`` with ``eps = ALPHA_EPS``: exactly the
  minimiser ``1/2 ln(W_- / W_+)`` of ``Z = W_- e^-a + W_0 + W_+ e^a`` whenever both ``W`` are
  at least ``eps``, and finite (``|alpha| <= 1/2 ln(1/eps)``, about 11.5) when ``W_+ = 0``
  or ``W_- = 0``.
* ``"line_search"``: the minimiser of the convex ``Z(alpha)`` over
  ``[-MAX_ALPHA, MAX_ALPHA]``; the
  paper's method 1, valid for real-valued rankers. Found as the root of dZ/dalpha (Brent,
  tolerance 1e-14), since Z is flat at its minimum.

Whatever the rule, the recorded ``Z_t`` is the exact ``sum D_t exp(alpha (h(x0) - h(x1)))``
at the chosen alpha, so ``prod Z_t`` equals ``sum D exp(H(x0) - H(x1))`` and bounds the
training rloss (Knowl 2).

Stopping: after ``n_rounds``; earlier, with a :class:`TrainingStoppedWarning` and
``model.stop_reason``, when no candidate has ``|r| > tol`` or when the chosen weak ranker
orders every crucial pair correctly (``|r| = 1``: the distribution would not change, so
every later round would repeat it); or when a callback raises
:class:`~rankboost.callback.EarlyStopException`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import brentq

from ._compat import progress_bar
from ._kernels.histogram import _table_values, _threshold_values, potential_histograms
from ._validation import check_feature_matrix
from .binning import BinMapper, check_thresholds
from .callback import CallbackEnv, EarlyStopException
from .feedback import BipartiteFeedback, LayeredFeedback, PairFeedback, _FeedbackState
from .model import HISTORY_KEYS, RankBoostModel
from .weak_rankers import (
    TIE_TOLERANCE,
    CandidateTable,
    FeatureRanker,
    ThresholdRanker,
    WeakRanker,
    candidate_table,
    feature_table,
)

__all__ = [
    "ALPHA_EPS",
    "MAX_ALPHA",
    "TrainingStoppedWarning",
    "alpha_exact",
    "alpha_from_r",
    "train",
]

#: Guard of the alpha rules against a perfect weak ranker (see the module docstring).
ALPHA_EPS = 1e-10
#: Largest |alpha| any rule returns: 1/2 ln((2 - ALPHA_EPS) / ALPHA_EPS).
MAX_ALPHA = 0.5 * float(np.log((2.0 - ALPHA_EPS) / ALPHA_EPS))
_PERFECT = 1.0 - 1e-12
_ALPHAS = ("r", "exact", "line_search")
_WEAK = ("threshold", "feature", "both")

Feedback = PairFeedback | LayeredFeedback | BipartiteFeedback


class TrainingStoppedWarning(UserWarning):
    """Training ended before ``n_rounds`` (the message says why)."""


def alpha_from_r(r: float) -> float:
    """Rb-c: ``1/2 ln((1 + r) / (1 - r))``, with ``r`` clipped to ``±(1 - ALPHA_EPS)``."""
    rc = min(max(float(r), -1.0 + ALPHA_EPS), 1.0 - ALPHA_EPS)
    return 0.5 * float(np.log((1.0 + rc) / (1.0 - rc)))


def alpha_exact(w_minus: float, w_plus: float) -> float:
    """Rb-d: ``1/2 ln(max(W_-, eps) / max(W_+, eps))`` with ``eps = ALPHA_EPS``."""
    return 0.5 * float(np.log(max(w_minus, ALPHA_EPS) / max(w_plus, ALPHA_EPS)))


def _alpha_line_search(state: _FeedbackState, h: NDArray[np.float64]) -> float:
    """Argmin of the convex Z(alpha) on [-MAX_ALPHA, MAX_ALPHA].

    dZ/dalpha = (S_0 - S_1) / M, with S_0, S_1 >= 0 (``log_slopes_at``), so the root of
    ``phi(alpha) = ln S_0 - ln S_1`` (increasing in alpha) is the minimiser. Root-finding on
    the slope pins alpha to ~1e-14, where minimising Z's values could only reach ~1e-8.
    """

    def phi(a: float) -> float:
        s0, s1 = state.log_slopes_at(h, a)
        if s0 == s1:  # both -inf: Z does not depend on alpha
            return 0.0
        return s0 - s1

    lo = phi(-MAX_ALPHA)
    if lo >= 0:
        return -MAX_ALPHA if lo > 0 else 0.0
    hi = phi(MAX_ALPHA)
    if hi <= 0:
        return MAX_ALPHA
    return float(brentq(phi, -MAX_ALPHA, MAX_ALPHA, xtol=1e-14, rtol=4 * np.finfo(float).eps))


def _check_params(
    n_rounds: int, alpha: str, weak_ranker: str, tol: float, positive_cumulative: bool
) -> None:
    if isinstance(n_rounds, bool) or not isinstance(n_rounds, (int, np.integer)):
        raise TypeError(f"n_rounds must be an int >= 1; got {n_rounds!r}.")
    if n_rounds < 1:
        raise ValueError(f"n_rounds must be an int >= 1; got {n_rounds}.")
    if alpha not in _ALPHAS:
        raise ValueError(f"alpha must be one of {_ALPHAS}; got {alpha!r}.")
    if weak_ranker not in _WEAK:
        raise ValueError(f"weak_ranker must be one of {_WEAK}; got {weak_ranker!r}.")
    if alpha == "exact" and weak_ranker != "threshold":
        raise ValueError(
            "alpha='exact' needs binary weak rankers (weak_ranker='threshold'); real-valued "
            f"rankers (weak_ranker={weak_ranker!r}) need alpha='r' or 'line_search'."
        )
    if not (isinstance(tol, (int, float)) and tol >= 0):
        raise ValueError(f"tol must be a number >= 0; got {tol!r}.")
    if not isinstance(positive_cumulative, (bool, np.bool_)):
        raise TypeError(f"positive_cumulative must be True or False; got {positive_cumulative!r}.")


class _Round:
    """The candidate chosen in one round, with its values on the training rows.

    ``h`` is uint8 0/1 for a threshold ranker (what the binary update reads), float64 in
    [0, 1] for a real-valued one; ``values`` is always float64.
    """

    def __init__(self, ranker: WeakRanker, h: NDArray, r: float) -> None:
        self.ranker = ranker
        self.h = h
        self.r = r

    @property
    def values(self) -> NDArray[np.float64]:
        return np.asarray(self.h, dtype=np.float64)


def _materialise(table: CandidateTable, flat: int, codes: NDArray, binner: BinMapper) -> _Round:
    feature, kind, t, q = table.decode(flat)
    r = float(table.r.ravel()[flat])
    if kind == "threshold":
        h = _threshold_values(codes, feature, t, int(q))
        ranker: WeakRanker = ThresholdRanker(feature, binner.threshold_value(feature, t), float(q))
    else:
        tab = feature_table(int(binner.n_bins_[feature]))
        tab[0] = float(q)
        full = np.zeros(binner.n_codes)
        full[: tab.shape[0]] = tab
        h = _table_values(codes, feature, full)
        ranker = FeatureRanker(feature, binner.cuts_[feature].copy(), float(q))
    return _Round(ranker, h, r)


def _choose_alpha(method: str, state: _FeedbackState, rnd: _Round) -> float:
    if method == "r":
        return alpha_from_r(rnd.r)
    if method == "exact":
        w_minus, _, w_plus = state.binary_stats(rnd.values)
        return alpha_exact(w_minus, w_plus)
    return _alpha_line_search(state, rnd.values)


def train(
    X: ArrayLike,
    feedback: Feedback,
    n_rounds: int = 300,
    *,
    alpha: str = "r",
    positive_cumulative: bool = False,
    thresholds: int | str = 255,
    weak_ranker: str = "threshold",
    callbacks: Sequence[Callable[[CallbackEnv], None]] | None = None,
    tol: float = 1e-9,
    feature_names: Sequence[str] | None = None,
    verbose: bool = False,
) -> RankBoostModel:
    """Train RankBoost (Freund, Iyer, Schapire & Singer, JMLR 4 (2003) 933-969).

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
    alpha : {"r", "exact", "line_search"}, default="r"
        How ``alpha_t`` is chosen (module docstring; SPEC 5).
    positive_cumulative : bool, default=False
        WeakLearn.cum (Knowl 6): only accept a weak ranker whose cumulative weight
        ``sum_{s: h_s = h} alpha_s`` stays positive, so ``H`` is non-decreasing in every
        feature. Candidates are tried in decreasing ``|r|`` among the eligible ones (new
        rankers with ``r > 0``, and rankers with a positive cumulative weight), with the
        tie window of :mod:`rankboost.weak_rankers` anchored at the best eligible one.
        The guarantee is over the values where the feature is defined; the (learned) value
        where it abstains is its own step, which may sit anywhere relative to them.
    thresholds : int or "all", default=255
        Candidate thresholds per feature (:mod:`rankboost.binning`).
    weak_ranker : {"threshold", "feature", "both"}, default="threshold"
        Binary threshold rankers (the paper), real-valued rank rankers in [0, 1], or both.
    callbacks : list of callable, default=None
        Called after every round with a :class:`~rankboost.callback.CallbackEnv`.
    tol : float, default=1e-9
        Stop when no candidate has ``|r| > tol``. Kept well above ``ALPHA_EPS`` (1e-10):
        after a clipped alpha the chosen ranker's residual ``|r|`` is of that order, and it
        must not decide whether training goes on.
    feature_names : list of str, default=None
        Names stored in the model (taken from ``X.columns`` for a DataFrame).
    verbose : bool, default=False
        Show a progress bar (needs ``tqdm``).

    Returns
    -------
    model : RankBoostModel

    Examples
    --------
    >>> import numpy as np
    >>> import rankboost as rb
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y = (X[:, 0] + 0.1 * rng.normal(size=200) > 0).astype(int)
    >>> model = rb.train(X, rb.BipartiteFeedback(y), n_rounds=20)
    >>> int(np.argmax(model.feature_importances_))
    0
    >>> bool(model.history["rloss"][-1] <= model.history["bound"][-1])
    True
    """
    if feature_names is None and hasattr(X, "columns"):
        feature_names = [str(c) for c in X.columns]
    Xc = check_feature_matrix(X)
    if not isinstance(feedback, (PairFeedback, LayeredFeedback)):
        raise TypeError(
            "feedback must be a rankboost PairFeedback, BipartiteFeedback or LayeredFeedback; "
            f"got {type(feedback).__name__}. Build one with e.g. rb.LayeredFeedback(y, qid)."
        )
    if feedback.n_samples != Xc.shape[0]:
        raise ValueError(
            f"feedback covers {feedback.n_samples} rows but X has {Xc.shape[0]}; build the "
            "feedback from the same rows as X."
        )
    _check_params(n_rounds, alpha, weak_ranker, tol, positive_cumulative)
    check_thresholds(thresholds)
    if feature_names is not None and len(feature_names) != Xc.shape[1]:
        raise ValueError(
            f"feature_names has {len(feature_names)} names but X has {Xc.shape[1]} columns."
        )

    state = feedback._make_state()
    binner = BinMapper(thresholds).fit(Xc, state.rows)
    codes = binner.transform(Xc, state.rows)
    hist = np.empty((Xc.shape[1], binner.n_codes))

    records: dict[str, list[Any]] = {k: [] for k in HISTORY_KEYS}
    rankers: list[WeakRanker] = []
    cumulative: NDArray[np.float64] | None = None
    bound = 1.0
    stop_reason: str | None = None
    best_iteration: int | None = None
    bar = progress_bar(total=n_rounds, disable=not verbose, desc="rankboost")
    try:
        for it in range(n_rounds):
            # 1-2. per-block statistics and their sum
            pi, scale = state.scaled_potential()
            potential_histograms(codes, pi, hist, scale)
            table = candidate_table(hist, binner.n_bins_, weak_ranker)
            # 3. choose
            alive = table.valid.copy()
            if cumulative is None:
                # candidates keep their flat index for the whole run (the table's shape is
                # fixed by the binning), so WeakLearn.cum's c(h) is one array
                cumulative = np.zeros(table.r.size)
            if positive_cumulative:
                # a ranker with r <= 0 (so alpha <= 0) is allowed only while it lowers an
                # existing positive cumulative weight
                alive &= (table.r > 0) | (cumulative.reshape(table.r.shape) > 0)
            chosen: _Round | None = None
            chosen_flat = -1
            a = 0.0
            best_abs = 0.0
            while alive.any():
                flat = table.best(TIE_TOLERANCE, alive)
                best_abs = abs(float(table.r.ravel()[flat]))
                if best_abs <= tol:
                    break
                rnd = _materialise(table, flat, codes, binner)
                a = _choose_alpha(alpha, state, rnd)
                if not positive_cumulative or cumulative[flat] + a > 0:
                    chosen = rnd
                    chosen_flat = flat
                    break
                alive.ravel()[flat] = False
            if chosen is None:
                stop_reason = (
                    f"stopped after {it} rounds: no weak ranker has |r| > tol={tol:g} "
                    f"(best |r| = {best_abs:.3g}); no candidate orders the remaining crucial "
                    "pairs better than chance"
                    + (" under the positive-cumulative constraint" if positive_cumulative else "")
                )
                break
            # 4. broadcast and update
            z = state.update(chosen.h, a, binary=isinstance(chosen.ranker, ThresholdRanker))
            bound *= z
            cumulative[chosen_flat] += a
            rankers.append(chosen.ranker)
            for k, v in (
                ("feature", chosen.ranker.feature),
                ("threshold", chosen.ranker.threshold),
                ("default", chosen.ranker.default),
                ("alpha", a),
                ("r", chosen.r),
                ("z", z),
                ("rloss", state.rloss(1.0)),
                ("bound", bound),
            ):
                records[k].append(v)
            bar.update(1)
            if callbacks:
                env = CallbackEnv(it, n_rounds, chosen.ranker, a, records)
                try:
                    for cb in callbacks:
                        cb(env)
                except EarlyStopException as stop:
                    best_iteration = int(stop.best_iteration)
                    break
            if abs(chosen.r) >= _PERFECT:
                if it + 1 < n_rounds:
                    stop_reason = (
                        f"stopped after {it + 1} rounds: the last weak ranker orders every "
                        "crucial pair correctly (|r| = 1), so the distribution no longer "
                        "changes and every further round would repeat it"
                    )
                break
    finally:
        bar.close()
    if stop_reason is not None:
        warnings.warn(stop_reason, TrainingStoppedWarning, stacklevel=2)

    params = {
        "n_rounds": int(n_rounds),
        "alpha": alpha,
        "positive_cumulative": bool(positive_cumulative),
        "thresholds": thresholds if isinstance(thresholds, str) else int(thresholds),
        "weak_ranker": weak_ranker,
        "tol": float(tol),
        "feedback": repr(feedback),
    }
    history = {
        "feature": np.asarray(records["feature"], dtype=np.int64),
        **{k: np.asarray(records[k], dtype=np.float64) for k in HISTORY_KEYS if k != "feature"},
    }
    return RankBoostModel(
        rankers,
        history,
        Xc.shape[1],
        feature_names=None if feature_names is None else list(feature_names),
        params=params,
        stop_reason=stop_reason,
        best_iteration=best_iteration,
    )
