"""The boosting round over query blocks, the alpha rules and the loss bound (paper section 3).

:class:`Booster` bins the features once and holds the training state as a list of *blocks*,
each holding whole queries (or, for explicit pairs, rows no pair links to another block).
One call of :meth:`Booster.update` is one round of the paper's Figure 1:

1. **per-block statistics**: each block computes its rows' potential
   ``pi(x) = sum_x' D_t(x', x) - D_t(x, x')`` (paper section 4) and its unscaled, summable
   per-feature histograms of ``pi`` over the candidate bins (``_kernels.histogram``);
2. **sum** the histograms over the blocks;
3. **choose** the weak ranker maximising ``|r|`` (:mod:`rankboost.weak_rankers`; WeakLearn.cum,
   ``criterion="r"`` and a fixed ``default`` filter the candidates; ``criterion="exact_z"``
   minimises ``Z = W_0 + 2 sqrt(W_- W_+)`` instead, from every block's per-candidate split
   sums of ``W_-, W_+``, summed like the histograms) and its ``alpha`` by
   the rule (this module), from the blocks' parts of
   ``W_-, W_0, W_+`` or of the line-search slopes;
4. **broadcast** ``(h_t, alpha_t)``: every block applies
   ``D_{t+1} = D_t exp(alpha (h(x0) - h(x1))) / Z_t`` and reports its new mass; the sum
   gives ``Z_t`` and the global normaliser the blocks keep for the next round.

The initial distribution is normalised globally in two phases: the blocks report their pair
counts (or pair weights), then every query's ``c_q`` is fixed from the totals
(:func:`rankboost.feedback._fix_normalisers`). With one block every result is bit-identical
to a whole-data computation; with several it is the same up to the order of the sums. A Dask
partition will be such a block.

Alpha rules (paper section 3.2), before the shrinkage ``learning_rate`` ``nu`` multiplies them:

* ``"r"`` (Rb-c, default): ``alpha = 1/2 ln((1 + r) / (1 - r))``, minimising the bound
  ``Z <= sqrt(1 - r^2)`` (valid for any ``h`` in [0, 1]). Guard: ``r`` is clipped to
  ``[-1 + ALPHA_EPS, 1 - ALPHA_EPS]``, so ``|alpha| <= MAX_ALPHA`` (about 11.86).
* ``"exact"`` (Rb-d, binary rankers only):
  ``alpha = 1/2 ln(max(W_-, eps) / max(W_+, eps))`` with ``eps = ALPHA_EPS``: exactly the
  minimiser ``1/2 ln(W_- / W_+)`` of ``Z = W_- e^-a + W_0 + W_+ e^a`` whenever both ``W`` are
  at least ``eps``, and finite (``|alpha| <= 1/2 ln(1/eps)``, about 11.5) when ``W_+ = 0``
  or ``W_- = 0``.
* ``"line_search"``: the minimiser of the convex ``Z(alpha)`` over
  ``[-MAX_ALPHA, MAX_ALPHA]``; the paper's method 1, valid for real-valued rankers. Found
  as the root of dZ/dalpha (Brent, tolerance 1e-14), since Z is flat at its minimum.

Whatever the rule and ``nu``, the recorded ``Z_t`` is the exact
``sum D_t exp(alpha_t (h(x0) - h(x1)))`` at the applied ``alpha_t``, so ``prod Z_t`` equals
``sum D exp(H(x0) - H(x1))`` and bounds the training rloss (paper section 3.1, Theorem 1).

Stopping (:func:`train`): after ``n_rounds``; earlier, with a
:class:`TrainingStoppedWarning` and ``model.stop_reason``, when no candidate has
``|r| > tol`` or when the chosen weak ranker orders every crucial pair correctly
(``|r| = 1``: the distribution would not change, so every later round would repeat it); or
when a callback raises :class:`~rankboost.callback.EarlyStopException`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import brentq

from . import _compat
from ._kernels.histogram import _table_values, _threshold_values, potential_histograms
from ._validation import check_feature_matrix, check_init_score
from .binning import BinMapper
from .callback import CallbackEnv, EarlyStopException
from .feedback import (
    BipartiteFeedback,
    LayeredFeedback,
    PairFeedback,
    _FeedbackState,
    _log_sum_of,
    _start_blocks,
)
from .model import HISTORY_KEYS, STAT_KEYS, RankBoostModel, Rounds
from .params import TrainParams, make_params, resolve_params
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
    "Booster",
    "RoundRecord",
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

Feedback = PairFeedback | LayeredFeedback | BipartiteFeedback


class TrainingStoppedWarning(UserWarning):
    """Training ended before ``n_rounds`` (the message says why)."""


# --------------------------------------------------------------------------- alpha rules


def alpha_from_r(r: float) -> float:
    """Rb-c: ``1/2 ln((1 + r) / (1 - r))``, with ``r`` clipped to ``±(1 - ALPHA_EPS)``."""
    rc = min(max(float(r), -1.0 + ALPHA_EPS), 1.0 - ALPHA_EPS)
    return 0.5 * float(np.log((1.0 + rc) / (1.0 - rc)))


def alpha_exact(w_minus: float, w_plus: float) -> float:
    """Rb-d: ``1/2 ln(max(W_-, eps) / max(W_+, eps))`` with ``eps = ALPHA_EPS``."""
    return 0.5 * float(np.log(max(w_minus, ALPHA_EPS) / max(w_plus, ALPHA_EPS)))


def _alpha_line_search(log_slopes: Callable[[float], tuple[float, float]]) -> float:
    """Argmin of the convex Z(alpha) on [-MAX_ALPHA, MAX_ALPHA].

    dZ/dalpha = (S_0 - S_1) / M, with S_0, S_1 >= 0 the sums of the blocks' parts
    (``log_slopes(alpha) = (log S_0, log S_1)``), so the root of
    ``phi(alpha) = ln S_0 - ln S_1`` (increasing in alpha) is the minimiser. Root-finding on
    the slope pins alpha to ~1e-14, where minimising Z's values could only reach ~1e-8.
    """

    def phi(a: float) -> float:
        s0, s1 = log_slopes(a)
        return s0 - s1

    s0, s1 = log_slopes(-MAX_ALPHA)
    if s0 == s1 == -np.inf:  # no pair is ordered by h either way: Z does not depend on alpha
        return 0.0
    lo = s0 - s1
    if lo >= 0:  # Z increases on the whole range (or is flat at its left end)
        return -MAX_ALPHA
    hi = phi(MAX_ALPHA)
    if hi <= 0:
        return MAX_ALPHA
    return float(brentq(phi, -MAX_ALPHA, MAX_ALPHA, xtol=1e-14, rtol=4 * np.finfo(float).eps))


# --------------------------------------------------------------------------- candidates

#: A candidate weak ranker by its place in the candidate table: (feature, kind, threshold
#: index, q_def); see :meth:`rankboost.weak_rankers.CandidateTable.decode`.
Spec = tuple[int, str, int, int]


def candidate_ranker(binner: BinMapper, spec: Spec) -> WeakRanker:
    """The weak ranker of a candidate, with its threshold (or cuts) as training values."""
    feature, kind, t, q = spec
    if kind == "threshold":
        return ThresholdRanker(feature, binner.threshold_value(feature, t), float(q))
    return FeatureRanker(feature, binner.cuts_[feature].copy(), float(q))


def candidate_values(codes: NDArray[Any], binner: BinMapper, spec: Spec) -> NDArray[Any]:
    """A candidate's values on rows given by their codes (a block's, local or remote).

    uint8 0/1 for a threshold ranker (what the binary update reads), float64 in [0, 1] for
    a real-valued one.
    """
    feature, kind, t, q = spec
    if kind == "threshold":
        return _threshold_values(codes, feature, t, int(q))
    tab = feature_table(int(binner.n_bins_[feature]))
    tab[0] = float(q)
    full = np.zeros(binner.n_codes)
    full[: tab.shape[0]] = tab
    return _table_values(codes, feature, full)


# --------------------------------------------------------------------------- one round


@dataclass(frozen=True)
class RoundRecord:
    """What one :meth:`Booster.update` did.

    Attributes
    ----------
    iteration : int
        Index of the round (0-based).
    ranker : ThresholdRanker or FeatureRanker
        The weak ranker ``h_t``.
    alpha : float
        Its applied weight ``alpha_t`` (the rule's alpha times ``learning_rate``).
    r : float
        ``r_t = sum_x pi(x) h(x)`` of the chosen ranker under ``D_t``.
    z : float
        The exact normaliser ``Z_t`` at ``alpha_t``.
    rloss : float
        Training rloss of ``H_t`` (ties counted as errors); of ``F0 + H_t`` when training
        started from a prior ``init_score`` ``F0``.
    bound : float
        ``prod_{s <= t} Z_s``, which bounds ``rloss`` (paper section 3.1, Theorem 1); with
        a prior, ``rloss <= prior_loss * bound`` (:attr:`Booster.prior_loss`).
    perfect : bool
        ``h_t`` orders every crucial pair correctly (``|r| = 1``): the distribution no
        longer changes, so every further round would repeat this one.
    """

    iteration: int
    ranker: WeakRanker
    alpha: float
    r: float
    z: float
    rloss: float
    bound: float
    perfect: bool


def _check_feedback(feedback: Any, n_rows: int) -> None:
    if not isinstance(feedback, (PairFeedback, LayeredFeedback)):
        raise TypeError(
            "feedback must be a rankboost PairFeedback, BipartiteFeedback or LayeredFeedback; "
            f"got {type(feedback).__name__}. Build one with e.g. rb.LayeredFeedback(y, qid)."
        )
    if feedback.n_samples != n_rows:
        raise ValueError(
            f"feedback covers {feedback.n_samples} rows but X has {n_rows}; build the "
            "feedback from the same rows as X."
        )


def _as_params(params: TrainParams | Mapping[str, Any] | None, owner: str) -> TrainParams:
    if params is None:
        return TrainParams()
    if isinstance(params, TrainParams):
        return params
    if isinstance(params, Mapping):
        return make_params(owner, **params)
    raise TypeError(
        f"{owner}: params must be a rankboost.params.TrainParams, a dict of training "
        f"parameters or None; got {type(params).__name__}."
    )


class Booster:
    """RankBoost's training state with a one-round step (LightGBM's ``Booster`` shape).

    ``Booster(X, feedback, params)`` validates the input, bins the features once and holds
    the training state as blocks of whole queries; :meth:`update` runs exactly one round and
    returns its :class:`RoundRecord`; :meth:`model` returns the ranking function learned so
    far. :func:`rankboost.train` is this class plus a loop with callbacks and stopping.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Ranking features; NaN where a feature abstains (⊥).
    feedback : PairFeedback, BipartiteFeedback or LayeredFeedback
        What should rank above what; its ``n_samples`` must equal the rows of ``X``.
    params : TrainParams or dict, default=None
        Training parameters (:class:`rankboost.params.TrainParams`; None = its defaults).
        ``n_rounds`` is not used by the booster itself (it runs as many rounds as it is
        asked), only stored in the model's ``params``.
    feature_names : list of str, default=None
        Names stored in the model (taken from ``X.columns`` for a DataFrame).
    n_blocks : int, default=1
        Split the training queries into this many blocks of whole queries (connected groups
        of rows for explicit pairs), as a distributed trainer's partitions would hold them.
        The model is the same up to the order of floating-point sums.
    init_score : array-like of shape (n_samples,), default=None
        A prior ranking function ``F0``, one finite score per row (as LightGBM's
        ``init_score``): boosting minimises ``sum D exp((F0 + H)(x0) - (F0 + H)(x1))``, so
        the first round runs on ``D_1`` proportional to ``D(x0, x1) exp(F0(x0) - F0(x1))``.
        Only differences within a crucial pair matter (a constant, or a per-query constant
        for query feedback, changes nothing). The model holds the learned ``H`` only: rank
        by ``F0 + model.predict(X)``. The scale matters (``exp(F0)``): a prior on another
        scale needs a multiplier.

    Attributes
    ----------
    n_rounds : int
        Rounds run so far.
    prior_loss : float
        ``sum D exp(F0(x0) - F0(x1))``, the prior's exponential loss (1 without a prior, up
        to rounding; ``log_prior_loss`` is its log, finite where it overflows). ``rloss`` of
        ``F0 + H_t`` is at most ``prior_loss * prod Z_t``. Before any round the model is
        empty (it scores 0), so ``F0`` alone ranks: 0 rounds is the prior's ranking.
    stop_reason : str or None
        Why :meth:`update` could not run a further round (None while it can).
    binner : BinMapper
        The candidate thresholds of every feature.

    Examples
    --------
    >>> import numpy as np
    >>> import rankboost as rb
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y = (X[:, 0] + 0.1 * rng.normal(size=200) > 0).astype(int)
    >>> bst = rb.Booster(X, rb.BipartiteFeedback(y), {"learning_rate": 0.5})
    >>> rec = bst.update()
    >>> rec.ranker.feature, bool(rec.rloss <= rec.bound)
    (0, True)
    >>> for _ in range(9):
    ...     rec = bst.update()
    >>> bst.model().n_rounds
    10
    """

    log_prior_loss: float = 0.0  # set by _setup (a subclass without a prior keeps 0)

    def __init__(
        self,
        X: ArrayLike,
        feedback: Feedback,
        params: TrainParams | Mapping[str, Any] | None = None,
        *,
        feature_names: Sequence[str] | None = None,
        n_blocks: int = 1,
        init_score: ArrayLike | None = None,
    ) -> None:
        if feature_names is None and hasattr(X, "columns"):
            feature_names = [str(c) for c in X.columns]
        Xc = check_feature_matrix(X)
        _check_feedback(feedback, Xc.shape[0])
        p = _as_params(params, "Booster")
        if isinstance(n_blocks, bool) or not isinstance(n_blocks, (int, np.integer)):
            raise TypeError(f"n_blocks must be an int >= 1; got {n_blocks!r}.")
        if n_blocks < 1:
            raise ValueError(f"n_blocks must be an int >= 1; got {n_blocks}.")
        self._setup(Xc, feedback, p, feature_names, int(n_blocks), init_score)

    @classmethod
    def _from_checked(
        cls,
        Xc: NDArray[np.float64],
        feedback: Feedback,
        params: TrainParams,
        feature_names: Sequence[str] | None,
        n_blocks: int = 1,
        init_score: ArrayLike | None = None,
    ) -> Booster:
        """A booster from input the caller has validated already (X, feedback, params).

        ``init_score`` is checked here (it is the booster's own input, checked once).
        """
        self = cls.__new__(cls)
        self._setup(Xc, feedback, params, feature_names, n_blocks, init_score)
        return self

    def _setup(
        self,
        Xc: NDArray[np.float64],
        feedback: Feedback,
        params: TrainParams,
        feature_names: Sequence[str] | None,
        n_blocks: int,
        init_score: ArrayLike | None = None,
    ) -> None:
        f0 = None if init_score is None else check_init_score(init_score, Xc.shape[0])
        if feature_names is not None and len(feature_names) != Xc.shape[1]:
            raise ValueError(
                f"feature_names has {len(feature_names)} names but X has {Xc.shape[1]} columns."
            )
        self.params = params
        self.feature_names = None if feature_names is None else [str(f) for f in feature_names]
        self.n_features = int(Xc.shape[1])
        self._feedback_repr = repr(feedback)
        if params.alpha == "rbplus":  # explicit pairs with RankBoost+'s tied-pair factors
            from .rbplus import plus_blocks

            blocks: list[Any] = plus_blocks(feedback, n_blocks)[1]
        else:
            blocks = feedback._blocks(n_blocks)
        rows = blocks[0].rows if len(blocks) == 1 else np.concatenate([b.rows for b in blocks])
        # global bins once, fitted on every block's rows (weighted as the pairs are, when
        # they came from LayeredFeedback.with_sample_weight)
        weights = getattr(feedback, "sample_weight", None)
        self.binner = BinMapper(params.thresholds).fit(Xc, rows, sample_weight=weights)
        for b in blocks:
            b.codes = self.binner.transform(Xc, b.rows)
            if f0 is not None:  # a prior: the blocks start from H = F0 (relative, see there)
                b.set_prior(np.ascontiguousarray(f0[b.rows]))
        self.log_total = _start_blocks(blocks)
        self.log_prior_loss = self.log_total
        self._blocks: list[_FeedbackState] = blocks
        self._hist = np.empty((self.n_features, self.binner.n_codes))
        self._block_hist = [np.empty_like(self._hist) for _ in blocks[1:]]
        self._start_rounds()

    def _start_rounds(self) -> None:
        """The state of the rounds themselves, before the first (shared with subclasses)."""
        self._cumulative: NDArray[np.float64] | None = None  # WeakLearn.cum's c(h)
        self._split: list[NDArray[np.float64]] | None = None  # the blocks' split sums
        self._plus: Any = None  # RankBoost+'s eta per distinct ranker (rbplus.PlusState)
        self._records: dict[str, list[Any]] = {k: [] for k in HISTORY_KEYS}
        self._rankers: list[WeakRanker] = []
        self._bound = 1.0
        self.stop_reason: str | None = None

    @property
    def prior_loss(self) -> float:
        """``sum D exp(F0(x0) - F0(x1))``: the prior's exponential loss (1 without one)."""
        return float(np.exp(self.log_prior_loss))

    @property
    def n_rounds(self) -> int:
        """Rounds run so far."""
        return len(self._rankers)

    @property
    def n_blocks(self) -> int:
        """Number of query blocks of the training state."""
        return len(self._blocks)

    # ------------------------------------------------------------------ round steps
    def _histograms(self) -> NDArray[np.float64]:
        """Steps 1-2: every block's histograms of its potential, summed."""
        for b, out in zip(self._blocks, [self._hist, *self._block_hist], strict=True):
            pi, scale = b.scaled_potential()
            potential_histograms(b.codes, pi, out, scale)
        for extra in self._block_hist:
            self._hist += extra
        return self._hist

    def _split_columns(
        self, table: CandidateTable
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Steps 1-2 for W: every block's split sums of ``W_-, W_+``, summed, per candidate."""
        shape = (4, self.n_features, max(self.binner.n_codes - 1, 0))
        if self._split is None:
            self._split = [np.empty(shape) for _ in self._blocks]
        for b, out in zip(self._blocks, self._split, strict=True):
            b.split_sums(out)
        total = self._split[0]
        for extra in self._split[1:]:
            total = total + extra
        return table.split_columns(total)

    def _rbplus_update(self, table: CandidateTable) -> RoundRecord | None:
        """A RankBoost+ round (:func:`rankboost.rbplus.plus_round`)."""
        from .rbplus import plus_round

        return plus_round(self, table)

    def _values(self, table: CandidateTable, flat: int) -> tuple[WeakRanker, list[NDArray]]:
        """The candidate ``flat`` as a weak ranker, and its values on every block's rows."""
        spec = table.decode(flat)
        values = [candidate_values(b.codes, self.binner, spec) for b in self._blocks]
        return candidate_ranker(self.binner, spec), values

    def _rule_alpha(self, r: float, hs: list[Any]) -> float:
        """Step 3: the alpha rule's value for the chosen ranker (before shrinkage)."""
        method = self.params.alpha
        if method == "r":
            return alpha_from_r(r)
        if method == "exact":
            w_minus, w_plus = self._w_minus_plus(hs)
            return alpha_exact(w_minus, w_plus)
        return _alpha_line_search(self._log_slopes(hs))

    def _w_minus_plus(self, hs: list[Any]) -> tuple[float, float]:
        """``(W_-, W_+)`` of a binary ranker under ``D_t``: the sum of the blocks' parts."""
        w_minus = w_plus = 0.0
        for b, h in zip(self._blocks, hs, strict=True):
            wm, _, wp = b.binary_stats(np.asarray(h, dtype=np.float64))
            w_minus += wm
            w_plus += wp
        return w_minus, w_plus

    def _log_slopes(self, hs: list[Any]) -> Callable[[float], tuple[float, float]]:
        """``alpha -> (log S_0, log S_1)`` of dZ/dalpha, summed over the blocks."""
        values = [np.asarray(h, dtype=np.float64) for h in hs]

        def log_slopes(a: float) -> tuple[float, float]:
            parts = [b.log_slopes_at(h, a) for b, h in zip(self._blocks, values, strict=True)]
            return _log_sum_of([p[0] for p in parts]), _log_sum_of([p[1] for p in parts])

        return log_slopes

    def _broadcast(self, hs: list[NDArray], alpha: float, binary: bool) -> float:
        """Step 4: every block applies the round; return the exact ``Z_t``."""
        new = _log_sum_of(
            [b.update(h, alpha, binary=binary) for b, h in zip(self._blocks, hs, strict=True)]
        )
        z = float(np.exp(new - self.log_total))
        self.log_total = new
        for b in self._blocks:
            b.set_log_total(new)
        return z

    def _rloss(self) -> float:
        parts = [b.rloss(1.0) for b in self._blocks]
        total = parts[0]
        for x in parts[1:]:
            total += x
        return total

    # ------------------------------------------------------------------ public
    def update(self) -> RoundRecord | None:
        """Run exactly one round; return its record, or None when no round can help.

        None means no weak ranker has ``|r| > tol`` (under WeakLearn.cum's constraint when
        it is on): no candidate orders the remaining crucial pairs better than chance, and
        ``stop_reason`` says so. The state is then unchanged.

        Returns
        -------
        record : RoundRecord or None
        """
        p = self.params
        table = candidate_table(self._histograms(), self.binner.n_bins_, p.weak_ranker)
        if p.alpha == "rbplus":
            return self._rbplus_update(table)
        alive = table.valid.copy()
        score: NDArray[np.float64] | None = None  # None: |r|
        if p.criterion == "r":  # RankLib: max r among r > 0, never a reversed ranker
            alive &= table.r > 0
        elif p.criterion == "exact_z":
            # min Z = W_0 + 2 sqrt(W_- W_+) = 1 - (sqrt W_- - sqrt W_+)^2 (D_t sums to 1):
            # max |sqrt W_- - sqrt W_+|, without the cancellation of 1 - (...)
            w_minus, w_plus = self._split_columns(table)
            score = np.abs(np.sqrt(np.maximum(w_minus, 0.0)) - np.sqrt(np.maximum(w_plus, 0.0)))
            alive &= np.abs(table.r) > p.tol  # no better than chance: never chosen
        if p.default != "learned":  # q_def fixed: only the candidates with that default
            alive &= table.column_defaults()[None, :] == int(p.default)
        if self._cumulative is None:
            # candidates keep their flat index for the whole run (the table's shape is fixed
            # by the binning), so WeakLearn.cum's c(h) is one array
            self._cumulative = np.zeros(table.r.size)
        cumulative = self._cumulative
        if p.positive_cumulative:
            # a ranker with r <= 0 (so alpha <= 0) is allowed only while it lowers an
            # existing positive cumulative weight
            alive &= (table.r > 0) | (cumulative.reshape(table.r.shape) > 0)
        chosen: tuple[WeakRanker, list[NDArray], float, int] | None = None
        a = 0.0
        best_abs = 0.0
        while alive.any():
            if score is None:
                flat = table.best(TIE_TOLERANCE, alive)
            else:
                flat = table.best_of(score, TIE_TOLERANCE, alive)
            r = float(table.r.ravel()[flat])
            best_abs = abs(r)
            if best_abs <= p.tol:
                break
            ranker, hs = self._values(table, flat)
            a = self._rule_alpha(r, hs)
            if p.learning_rate != 1.0:
                a = p.learning_rate * a
            if not p.positive_cumulative or cumulative[flat] + a > 0:
                chosen = (ranker, hs, r, flat)
                break
            alive.ravel()[flat] = False
        if chosen is None:
            self.stop_reason = (
                f"stopped after {self.n_rounds} rounds: no weak ranker has |r| > "
                f"tol={p.tol:g} (best |r| = {best_abs:.3g}); no candidate orders the "
                "remaining crucial pairs better than chance"
                + (" under the positive-cumulative constraint" if p.positive_cumulative else "")
                + (" with r > 0 (criterion='r')" if p.criterion == "r" else "")
            )
            return None
        ranker, hs, r, flat = chosen
        z = self._broadcast(hs, a, binary=isinstance(ranker, ThresholdRanker))
        cumulative[flat] += a
        return self._record(ranker, a, r, z)

    def _record(self, ranker: WeakRanker, a: float, r: float, z: float) -> RoundRecord:
        """Step 5: keep the applied round (the bound times ``Z_t``, the new rloss)."""
        self._bound *= z
        rloss = self._rloss()
        self._rankers.append(ranker)
        for k, v in (
            ("feature", ranker.feature),
            ("threshold", ranker.threshold),
            ("default", ranker.default),
            ("alpha", a),
            ("r", r),
            ("z", z),
            ("rloss", rloss),
            ("bound", self._bound),
        ):
            self._records[k].append(v)
        return RoundRecord(
            self.n_rounds - 1, ranker, a, r, z, rloss, self._bound, abs(r) >= _PERFECT
        )

    def model(self) -> RankBoostModel:
        """The :class:`~rankboost.model.RankBoostModel` of the rounds run so far."""
        rec = self._records
        return RankBoostModel.from_arrays(
            Rounds.from_rankers(self._rankers, np.asarray(rec["alpha"], dtype=np.float64)),
            {k: np.asarray(rec[k], dtype=np.float64) for k in STAT_KEYS},
            self.n_features,
            feature_names=self.feature_names,
            params={**self.params.to_dict(), "feedback": self._feedback_repr},
            stop_reason=self.stop_reason,
        )

    def __repr__(self) -> str:
        return (
            f"Booster(n_rounds={self.n_rounds}, n_blocks={self.n_blocks}, "
            f"n_features={self.n_features}, params={self.params})"
        )


# --------------------------------------------------------------------------- the loop


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
    feature_names: Sequence[str] | None = None,
    verbose: bool = False,
    params: TrainParams | None = None,
    init_score: ArrayLike | None = None,
) -> RankBoostModel:
    """Train RankBoost (Freund, Iyer, Schapire & Singer, JMLR 4 (2003) 933-969).

    Validation, a :class:`Booster`, and a loop of :meth:`Booster.update` with callbacks and
    stopping (as ``lightgbm.train`` runs ``Booster.update``).

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
        How ``alpha_t`` is chosen (module docstring; paper section 3.2), or RankBoost+
        (:mod:`rankboost.rbplus`: its own selection score, alpha and tied-pair update;
        binary rankers; layered feedback is expanded to explicit pairs).
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
    feature_names : list of str, default=None
        Names stored in the model (taken from ``X.columns`` for a DataFrame).
    verbose : bool, default=False
        Show a progress bar (needs ``tqdm``; without it a
        :class:`~rankboost.ProgressBarWarning` says so once per process). Callbacks with a
        ``summary()`` method (an :class:`~rankboost.callback.EvaluationMonitor`, and the
        callbacks built on one) show it next to the bar, e.g. ``ndcg@10=0.4712 best=37``.
    params : TrainParams, default=None
        All the training parameters at once (:class:`rankboost.params.TrainParams`); when
        given, the keyword parameters above (``n_rounds`` to ``tol``) must keep their
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
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y = (X[:, 0] + 0.1 * rng.normal(size=200) > 0).astype(int)
    >>> model = rb.train(X, rb.BipartiteFeedback(y), n_rounds=20)
    >>> int(np.argmax(model.feature_importances_))
    0
    >>> bool(model.history["rloss"][-1] <= model.history["bound"][-1])
    True
    """
    given = {
        "n_rounds": n_rounds,
        "alpha": alpha,
        "learning_rate": learning_rate,
        "positive_cumulative": positive_cumulative,
        "thresholds": thresholds,
        "criterion": criterion,
        "default": default,
        "weak_ranker": weak_ranker,
        "tol": tol,
    }
    p = resolve_params("rankboost.train", given, params)
    if feature_names is None and hasattr(X, "columns"):
        feature_names = [str(c) for c in X.columns]
    Xc = check_feature_matrix(X)
    _check_feedback(feedback, Xc.shape[0])
    return _train(Xc, feedback, p, callbacks, feature_names, verbose, init_score=init_score)


def _train(
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
    """The loop of :func:`train` on validated input (the adapters' entry point).

    ``init_score`` (a prior ``F0``, see :func:`train`) is checked by the booster.
    """
    bst = Booster._from_checked(Xc, feedback, params, feature_names, init_score=init_score)
    return _run_loop(bst, params, callbacks, verbose, stacklevel + 1)


def _postfix(callbacks: Sequence[Callable[[CallbackEnv], None]]) -> str:
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


def _run_loop(
    bst: Booster,
    params: TrainParams,
    callbacks: Sequence[Callable[[CallbackEnv], None]] | None,
    verbose: bool,
    stacklevel: int,
) -> RankBoostModel:
    """``params.n_rounds`` calls of ``bst.update()`` with callbacks and stopping."""
    n_rounds = params.n_rounds
    stop_reason: str | None = None
    best_iteration: int | None = None
    bar = _compat.progress_bar(
        total=n_rounds, disable=not verbose, desc="rankboost", stacklevel=stacklevel
    )
    try:
        for it in range(n_rounds):
            rec = bst.update()
            if rec is None:
                stop_reason = bst.stop_reason
                break
            if callbacks:
                env = CallbackEnv(it, n_rounds, rec.ranker, rec.alpha, bst._records)
                try:
                    for cb in callbacks:
                        cb(env)
                except EarlyStopException as stop:
                    best_iteration = int(stop.best_iteration)
                    bar.update(1)
                    break
                if verbose:
                    postfix = _postfix(callbacks)
                    if postfix:
                        bar.set_postfix_str(postfix, refresh=False)
            bar.update(1)
            if rec.perfect:
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
        warnings.warn(stop_reason, TrainingStoppedWarning, stacklevel=stacklevel)
    model = bst.model()
    model.stop_reason = stop_reason
    model.best_iteration = best_iteration
    return model
