"""The boosting round over query blocks and the loss bound (paper section 3).

:class:`Booster` bins the features once and holds the training state as a list of *blocks*
(:mod:`rankboost._blocks`: the contract :class:`~rankboost._blocks.Block`, whole queries or
rows no pair links to another block). One call of :meth:`Booster.update` is one round of
the paper's Figure 1:

1. **per-block statistics**: each block computes its rows' potential
   ``pi(x) = sum_x' D_t(x', x) - D_t(x, x')`` (paper section 4) and its unscaled, summable
   per-feature histograms of ``pi`` over the candidate bins (``_kernels.histogram``);
2. **sum** the histograms over the blocks;
3. **choose** the weak ranker maximising ``|r|`` (:mod:`rankboost.weak_rankers`; WeakLearn.cum,
   ``criterion="r"`` and a fixed ``default`` filter the candidates; ``criterion="exact_z"``
   minimises ``Z = W_0 + 2 sqrt(W_- W_+)`` instead, from every block's per-candidate split
   sums of ``W_-, W_+``, summed like the histograms) and its ``alpha`` by the rule
   (:mod:`rankboost.alpha_rules`), from the blocks' parts of ``W_-, W_0, W_+`` or of the
   line-search slopes; RankBoost+ (``alpha="rbplus"``) chooses by its own score
   (:func:`rankboost.rbplus.plus_choose`);
4. **shrink** the rule's alpha by ``learning_rate`` (:meth:`Booster._shrink`, the one place);
5. **step**: every block applies ``D_{t+1} = D_t exp(alpha (h(x0) - h(x1))) / Z_t`` and
   reports its new log mass (:meth:`Booster._step`; RankBoost+'s own update for its
   blocks); **settle** (:meth:`Booster._settle`, the one place): ``Z_t`` is the new global
   mass over the old, and the blocks keep the new global normaliser;
6. **record** the round: ``prod Z_t``, the rloss (:meth:`Booster._record`).

The initial distribution is normalised globally in two phases: the blocks report their pair
counts (or pair weights), then every query's ``c_q`` is fixed from the totals
(:func:`rankboost._blocks.fix_normalisers`). With one block every result is bit-identical
to a whole-data computation; with several it is the same up to the order of the sums. A Dask
partition is such a block (:class:`rankboost.dask._booster.DaskBooster`).

Whatever the rule and ``nu``, the recorded ``Z_t`` is the exact
``sum D_t exp(alpha_t (h(x0) - h(x1)))`` at the applied ``alpha_t``, so ``prod Z_t`` equals
``sum D exp(H(x0) - H(x1))`` and bounds the training rloss (paper section 3.1, Theorem 1).
From a prior ``F0`` (``init_score``) the rounds start from ``H = F0`` and ``prod Z_t`` is
the loss relative to the prior's (:attr:`Booster.prior_loss`).

Where each round-level formula lives: the potential and the masses, :mod:`rankboost._blocks`
(its kernels in :mod:`rankboost._kernels`); ``r`` and the candidate choice,
:mod:`rankboost.weak_rankers`; ``alpha``, :mod:`rankboost.alpha_rules`; the shrinkage,
``Z_t``, the bound and the record, this module; RankBoost+'s score and update,
:mod:`rankboost.rbplus`. The loop, callbacks and stopping are :mod:`rankboost.engine`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._blocks import FeedbackState, log_sum_of, start_blocks
from ._kernels.histogram import potential_histograms
from ._validation import check_feature_matrix, check_init_score
from .alpha_rules import (
    ALPHA_EPS,
    MAX_ALPHA,
    PERFECT,
    alpha_exact,
    alpha_from_r,
    alpha_line_search,
)
from .binning import BinMapper
from .feedback import BipartiteFeedback, LayeredFeedback, PairFeedback
from .model import HISTORY_KEYS, STAT_KEYS, RankBoostModel, Rounds
from .params import TrainParams, make_params
from .push import PushRounds, stored_params
from .rbplus import PlusState, plus_blocks, plus_choose, plus_step
from .weak_rankers import (
    TIE_TOLERANCE,
    CandidateTable,
    ThresholdRanker,
    WeakRanker,
    candidate_ranker,
    candidate_table,
    candidate_values,
)

__all__ = [
    "ALPHA_EPS",  # the alpha rules are rankboost.alpha_rules', re-exported here
    "MAX_ALPHA",
    "Booster",
    "PushBooster",
    "RoundRecord",
    "TrainingStoppedWarning",
    "alpha_exact",
    "alpha_from_r",
]

Feedback = PairFeedback | LayeredFeedback | BipartiteFeedback


class TrainingStoppedWarning(UserWarning):
    """Training ended before ``n_rounds`` (the message says why)."""


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


@dataclass
class _Choice:
    """A round's choice (``alpha`` shrunk; ``plus_id`` None for the plain update)."""

    ranker: WeakRanker
    values: list[Any]
    r: float
    alpha: float
    flat: int
    plus_id: int | None = None


def check_feedback(feedback: Any, n_rows: int) -> None:
    """A feedback object of the engine's kinds covering ``n_rows`` rows, or a clear error."""
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


def as_params(params: TrainParams | Mapping[str, Any] | None, owner: str) -> TrainParams:
    """``params`` as :class:`~rankboost.params.TrainParams` (None = the defaults)."""
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
    far. :func:`rankboost.train` is this class plus a loop with callbacks and stopping
    (:mod:`rankboost.engine`).

    A subclass whose blocks live elsewhere (:class:`rankboost.dask._booster.DaskBooster`)
    sets up its own state and may override only the steps that touch the blocks:
    ``_histograms`` (steps 1-2, the summed histograms of the potential), ``_split_columns``
    (the summed split sums), ``_values`` (a candidate's values on every block),
    ``_w_minus_plus`` and ``_log_slopes`` (the sums the alpha rules read), ``_step`` (every
    block applies the round; returns the new global log mass) and ``_rloss`` (the summed
    rloss), plus ``n_blocks``. The choice, the alpha rules, the shrinkage, ``Z_t`` and the
    record (``update``, ``_choose``, ``_shrink``, ``_settle``, ``_record``) are this class's
    and are not overridden, so every backend runs the same round.

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
    >>> import rankboost as rb
    >>> from rankboost.datasets import make_ranking
    >>> X, y, _ = make_ranking(200, noise=0.1)
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
        check_feedback(feedback, Xc.shape[0])
        p = as_params(params, "Booster")
        if isinstance(n_blocks, bool) or not isinstance(n_blocks, (int, np.integer)):
            raise TypeError(f"n_blocks must be an int >= 1; got {n_blocks!r}.")
        if n_blocks < 1:
            raise ValueError(f"n_blocks must be an int >= 1; got {n_blocks}.")
        self._setup(Xc, feedback, p, feature_names, int(n_blocks), init_score)

    @classmethod
    def from_checked(
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
        self.log_total = start_blocks(blocks)
        self.log_prior_loss = self.log_total
        self._blocks: list[FeedbackState] = blocks
        self._hist = np.empty((self.n_features, self.binner.n_codes))
        self._block_hist = [np.empty_like(self._hist) for _ in blocks[1:]]
        self._start_rounds()
        if params.push != 1.0:  # the P-Norm Push: its own round steps (rankboost.push)
            self.__class__ = PushBooster
            self.start_push(feedback)  # type: ignore[attr-defined]

    def _start_rounds(self) -> None:
        """The state of the rounds themselves, before the first (shared with subclasses)."""
        self._cumulative: NDArray[np.float64] | None = None  # WeakLearn.cum's c(h)
        self._split: list[NDArray[np.float64]] | None = None  # the blocks' split sums
        self._plus: PlusState | None = None  # RankBoost+'s eta per distinct ranker
        self._records: dict[str, list[Any]] = {k: [] for k in HISTORY_KEYS}
        self._rankers: list[WeakRanker] = []
        self._bound = 1.0
        self.stop_reason: str | None = None

    @property
    def prior_loss(self) -> float:
        """``sum D exp(F0(x0) - F0(x1))``: the prior's exponential loss (1 without one)."""
        return float(np.exp(self.log_prior_loss))

    @property
    def history(self) -> dict[str, list[Any]]:
        """The rounds' records so far, one list per key (live: read, do not modify)."""
        return self._records

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
        return alpha_line_search(self._log_slopes(hs))

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
            return log_sum_of([p[0] for p in parts]), log_sum_of([p[1] for p in parts])

        return log_slopes

    def _step(self, hs: list[Any], alpha: float, binary: bool) -> float:
        """Step 5: every block applies ``H += alpha h``; return the new global log mass."""
        return log_sum_of(
            [b.update(h, alpha, binary=binary) for b, h in zip(self._blocks, hs, strict=True)]
        )

    def _shrink(self, alpha: float) -> float:
        """Step 4: the rule's alpha times ``learning_rate`` (the one place shrinkage is)."""
        nu = self.params.learning_rate
        return alpha if nu == 1.0 else nu * alpha

    def _settle(self, new_log_total: float) -> float:
        """Step 5, the one place ``Z_t`` is settled: new global mass over the old.

        Every block takes the new global normaliser; return the exact ``Z_t``.
        """
        z = float(np.exp(new_log_total - self.log_total))
        self.log_total = new_log_total
        for b in self._blocks:
            b.set_log_total(new_log_total)
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
        it is on; RankBoost+: no score above ``tol``): no candidate orders the remaining
        crucial pairs better than chance, and ``stop_reason`` says so. The state is then
        unchanged.

        Returns
        -------
        record : RoundRecord or None
        """
        table = candidate_table(self._histograms(), self.binner.n_bins_, self.params.weak_ranker)
        if self.params.alpha == "rbplus":
            choice = self._choose_plus(table)
        else:
            choice = self._choose(table)
        if choice is None:
            return None
        binary = isinstance(choice.ranker, ThresholdRanker)
        a = choice.alpha
        if choice.plus_id is None:
            z = self._settle(self._step(choice.values, a, binary))
            assert self._cumulative is not None
            self._cumulative[choice.flat] += a
        else:
            assert self._plus is not None
            eta = self._plus.eta
            z = self._settle(plus_step(self._blocks, choice.values, a, float(eta[choice.plus_id])))
            eta[choice.plus_id] += a
        return self._record(choice.ranker, a, choice.r, z)

    def _choose(self, table: CandidateTable) -> _Choice | None:
        """Step 3: WeakLearn's ranker and its (shrunk) alpha, or None with ``stop_reason``."""
        p = self.params
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
            a = self._shrink(self._rule_alpha(r, hs))
            if not p.positive_cumulative or cumulative[flat] + a > 0:
                return _Choice(ranker, hs, r, a, flat)
            alive.ravel()[flat] = False
        self.stop_reason = (
            f"stopped after {self.n_rounds} rounds: no weak ranker has |r| > "
            f"tol={p.tol:g} (best |r| = {best_abs:.3g}); no candidate orders the "
            "remaining crucial pairs better than chance"
            + (" under the positive-cumulative constraint" if p.positive_cumulative else "")
            + (" with r > 0 (criterion='r')" if p.criterion == "r" else "")
        )
        return None

    def _choose_plus(self, table: CandidateTable) -> _Choice | None:
        """Step 3 of RankBoost+ (:func:`rankboost.rbplus.plus_choose`), its alpha shrunk."""
        if self._plus is None:
            self._plus = PlusState(table, self._blocks, self.binner.n_codes)  # type: ignore[arg-type]
        w_minus, w_plus = self._split_columns(table)
        pick = plus_choose(table, w_minus, w_plus, self._plus, self.params)
        if isinstance(pick, str):
            self.stop_reason = f"stopped after {self.n_rounds} rounds: {pick}"
            return None
        flat, rid, rho, r = pick
        ranker, hs = self._values(table, flat)
        # RankBoost+'s alpha is Rb-c's formula at its score rho (rankboost.rbplus)
        return _Choice(ranker, hs, r, self._shrink(alpha_from_r(rho)), flat, rid)

    def _record(self, ranker: WeakRanker, a: float, r: float, z: float) -> RoundRecord:
        """Step 6: keep the applied round (the bound times ``Z_t``, the new rloss)."""
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
            self.n_rounds - 1, ranker, a, r, z, rloss, self._bound, abs(r) >= PERFECT
        )

    def model(self) -> RankBoostModel:
        """The :class:`~rankboost.model.RankBoostModel` of the rounds run so far."""
        rec = self._records
        return RankBoostModel.from_arrays(
            Rounds.from_rankers(self._rankers, np.asarray(rec["alpha"], dtype=np.float64)),
            {k: np.asarray(rec[k], dtype=np.float64) for k in STAT_KEYS},
            self.n_features,
            feature_names=self.feature_names,
            params={**stored_params(self.params), "feedback": self._feedback_repr},
            stop_reason=self.stop_reason,
        )

    def __repr__(self) -> str:
        return (
            f"Booster(n_rounds={self.n_rounds}, n_blocks={self.n_blocks}, "
            f"n_features={self.n_features}, params={self.params})"
        )


class PushBooster(PushRounds, Booster):
    """A :class:`Booster` minimising the P-Norm Push's ``R_p`` (:mod:`rankboost.push`)."""
