"""The P-Norm Push: RankBoost that concentrates at the top of the list (Rudin, 2009).

RankBoost minimises ``sum D exp(H(x0) - H(x1))`` over the crucial pairs alike. The P-Norm
Push (C. Rudin, "The P-Norm Push: A Simple Convex Ranking Algorithm that Concentrates at the
Top of the List", JMLR 10 (2009) 2233-2271, equation (2.2) with ``g(z) = exp(-z)``) sums
each lower item's pairs first and raises the sum to the power ``p >= 1``:

    R_p(F) = sum_k L_k(F)^p,   L_k(F) = sum_{i above k} D(i, k) exp(-(F(i) - F(k))),

so ``p = 1`` is RankBoost and a larger ``p`` weighs the lower items that score high (the
mistakes at the top of the list) more. It is boosted by coordinate descent, as RankBoost
(Rudin's section 3, "P-Norm Push" algorithm): each round

1. the pair weights are the normalised gradient of ``R_p`` (SPEC 7.3),
   ``D_t(i, k) = (L_k^p / R_p) D(i, k) exp(-F(i)) / S_k``, ``S_k = sum_{i above k}
   D(i, k) exp(-F(i))``; their potential ``pi`` feeds RankBoost's histograms and WeakLearn
   unchanged (max ``|r|``, ``r = sum pi h``);
2. ``alpha = argmin R_p(F + alpha h)``: ``log R_p`` is convex in ``alpha`` (a log-sum-exp of
   ``p log L_k``, each a log-sum-exp of affine functions), so a **safeguarded Newton search**
   on its slope finds it: Newton steps from Rb-c's ``alpha`` with the exact first and second
   derivatives (:mod:`rankboost._kernels.push`), bisection whenever a step leaves the
   bracket where the slope changes sign (and after ``NEWTON_STEPS`` steps, when the far end
   ``+-MAX_ALPHA`` is checked first: RankBoost's clip of an infinite alpha), until the step
   is below ``1e-12`` relative (at most ``MAX_NEWTON`` evaluations). Rudin's algorithm
   takes the same argmin (her section 3 leaves it to a line search); ``learning_rate``
   shrinks it as for RankBoost;
3. ``F <- F + alpha h`` and ``L_k`` is recomputed from ``F`` (not updated multiplicatively).

Each evaluation of ``R_p`` and its derivatives is O(n + K) per query for layered and
bipartite feedback (suffix sums over levels) and O(|Phi|) for explicit pairs
(:mod:`rankboost._kernels.push`); for a threshold ranker on layered feedback one O(n) pass
splits the level sums by ``h`` and each evaluation of the line search is then O(K)
(:mod:`rankboost._kernels.push_split`), and the step (``F``, the kept order and the rloss,
``L_k`` and ``R_p`` at the new ``F``) is one sweep per query
(:mod:`rankboost._kernels.push_step`). Everything is in log space (``L_k^p`` overflows
fast).

What a round records (:class:`rankboost.booster.RoundRecord`): ``z`` is ``R_p``'s ratio
``R_p(F_t) / R_p(F_{t-1})`` (< 1 while the objective goes down: it never goes up, alpha = 0
being a candidate) and ``bound`` the product of the ``z`` so far, ``R_p(F_t) / R_p(F_0)``.
For ``p > 1`` this is not a bound on the rloss; ``rloss`` is the training rloss as for
RankBoost. :attr:`PushBooster.log_objective` lists ``log R_p`` before round 1 and after
each round.

``p = 1`` never reaches this module: :class:`rankboost.Booster` keeps RankBoost's code
path, so its models are bit for bit those of before the parameter existed. Not supported
with ``p > 1``: ``alpha="exact"``, ``"rbplus"`` and ``criterion="exact_z"`` (refused by
:class:`rankboost.params.TrainParams`).

``R_p`` is a sum over blocks of whole queries, so the round splits as RankBoost's does
(per-block statistics, sum, choose, broadcast): a block's :class:`PushBlock` reports its
``(log R_p, slope, curvature)`` and :func:`combine` adds them; Dask runs the same blocks on
its workers (:mod:`rankboost.dask._push`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._blocks import FeedbackState, LayeredState
from ._kernels.histogram import potential_histograms
from ._kernels.pairwise import reorder, sorted_level_errors
from ._kernels.push import (
    layered_push_eval,
    layered_push_potential,
    pair_push_eval,
    pair_push_potential,
    push_combine,
    push_log_sum,
)
from ._kernels.push_split import binary_newton, binary_push_eval, layered_push_split
from ._kernels.push_step import layered_push_refresh, layered_push_step
from .alpha_rules import MAX_ALPHA, alpha_from_r

__all__ = [
    "MAX_NEWTON",
    "NEWTON_STEPS",
    "PushBlock",
    "PushRounds",
    "combine",
    "newton_alpha",
    "split_alpha",
    "split_line",
    "stored_params",
]

#: Most evaluations of ``R_p`` in one round's line search (Newton takes 3-8 in practice).
MAX_NEWTON = 100
#: Newton steps before the search checks the bracket's far end and bisects.
NEWTON_STEPS = 10


def stored_params(params: Any) -> dict[str, Any]:
    """``params.to_dict()`` as a model stores it: ``push`` only when it is not 1.

    A model trained with ``push=1`` is RankBoost's and its file is byte for byte the file
    written before ``push`` existed; a file without ``push`` reads as ``p = 1``
    (:attr:`rankboost.model.RankBoostModel.push`).
    """
    d = params.to_dict()
    if d["push"] == 1.0:
        del d["push"]
    return d


def _check_grouped_by_level(level: NDArray[np.int64], qstart: NDArray[np.int64]) -> None:
    """The layered kernels sum each level over a run of rows: a query's must be grouped."""
    down = np.flatnonzero(np.diff(level) < 0) + 1  # a row whose level is below the last one
    new_query = np.isin(down, qstart)
    if not new_query.all():
        row = int(down[~new_query][0])
        raise RuntimeError(
            f"the push's layered state has row {row} at level {int(level[row])} after a row "
            f"at level {int(level[row - 1])} of the same query; each query's rows must come "
            "grouped by increasing level, as LayeredFeedback orders them"
        )


class PushBlock:
    """One block's push state: its scores ``F`` and the per-row parts of ``R_p``.

    Built on a started block (its ``log_c`` or ``log_w`` fixed); what it returns are the
    block's parts (``log R_p`` of its rows), which :func:`combine` adds over the blocks. The
    potential takes the global ``log R_p`` (or any reference: it is linear in
    ``exp(-log_r)``).
    """

    def __init__(self, state: FeedbackState, p: float) -> None:
        self.state = state
        self.p = float(p)
        self.F = np.array(state.H, dtype=np.float64)  # 0, or the prior's (relative) scores
        n = self.F.shape[0]
        self.layered = isinstance(state, LayeredState)
        self.lp = np.empty(n)  # p log L_k at F (the last evaluation at alpha = 0)
        self._s = np.empty(n)
        self._v = np.empty(n)
        self._zero = np.zeros(n)
        self.pi = np.empty(n)
        if isinstance(state, LayeredState):
            _check_grouped_by_level(state.level, state.qstart)
            self.layout = (state.level, state.qstart, state.lstart, state.log_c)
            n_work = int(state.lstart[-1])
            self.order = state.order.copy()  # each query's rows by increasing F (the rloss)
            self._tmp = np.empty_like(self.order)
            self._errors = np.empty(state.qstart.shape[0] - 1)  # misordered pairs per query
            scratch = np.empty(2 * n_work + state.qstart.shape[0])  # their count's
            self._kept = (self.order, self._tmp, scratch, self._errors)
            q_top = np.empty(state.qstart.shape[0] - 1)  # the refresh's: each query's top lp
        else:
            self.pairs = (state.i0, state.i1, state.log_w)
            n_work = n
            q_top = np.empty(0)
        self._errors_fresh = False  # the last step's merge counted the rloss errors
        self.work_0 = np.empty((n_work, 4))  # the evaluation at F (its log S, for pi)
        self._w_row = np.empty(n)  # layered, at F: exp(-F - m_l) (the refresh's, for the split)
        self._m_lvl = np.empty(n_work)  # and each level's m_l
        self._refresh = (self.lp, self.work_0, self._w_row, self._m_lvl, q_top)
        self.work = np.empty((n_work, 4))  # the line search's evaluations
        self.split = np.empty((n_work, 6))  # a binary ranker's split level sums

    def line(self, h: NDArray[Any]) -> Any:
        """``alpha -> (log R_p, slope, curvature)`` of the block along ``h``.

        Layered feedback and a threshold ranker's ``h`` (uint8 0/1): one O(n) pass splits the
        level sums by ``h``, then each evaluation is O(K) (:func:`binary_push_eval`);
        otherwise each evaluation is O(n) (:meth:`evaluate`).
        """
        split = self.split_sums(h)
        if split is not None:
            p = self.p
            return lambda a: binary_push_eval(split, float(a), p)
        h64 = np.asarray(h, dtype=np.float64)
        return lambda a: self.evaluate(h64, a)

    def split_sums(self, h: NDArray[Any]) -> NDArray[np.float64] | None:
        """The level sums split by a threshold ranker's ``h`` (uint8 0/1) on layered feedback.

        Shape (K, 6), one row per level of the block's queries: :func:`binary_push_eval`
        reads columns 0-3 (:func:`layered_push_split`). None for explicit pairs or a
        real-valued ``h`` (the line search then evaluates along ``h`` in O(n)).
        """
        if not (self.layered and h.dtype == np.uint8):
            return None
        layered_push_split(self.layout, self.F, h, self.p, self.split, self._w_row, self._m_lvl)
        return self.split

    def evaluate(self, h: NDArray[np.float64], alpha: float, at_f: bool = False) -> Any:
        """``(log R_p, slope, curvature)`` of the block at ``F + alpha h``."""
        return push_combine(*self._parts(h, alpha, at_f))

    def _parts(self, h: NDArray[np.float64], alpha: float, at_f: bool) -> Any:
        """The per-row ``(lp, s, v)`` at ``F + alpha h`` (``at_f``: kept for the potential)."""
        lp = self.lp if at_f else np.empty_like(self.lp)
        out = (lp, self._s, self._v)
        work = self.work_0 if at_f else self.work
        if self.layered:
            layered_push_eval(self.layout, self.F, h, alpha, self.p, out, work)
        else:
            i0, i1, log_w = self.pairs
            pair_push_eval(i0, i1, log_w, self.F, h, alpha, self.p, *out, work)
        return out

    def step(self, h: NDArray[Any], alpha: float, binary: bool) -> float:
        """``F <- F + alpha h`` (and the kept order); return the block's new ``log R_p``."""
        self._errors_fresh = False
        if alpha != 0.0:
            if self.layered and binary and h.dtype == np.uint8:
                # one sweep per query: F, the kept order, the rloss errors, the refresh
                self._errors_fresh = True
                return layered_push_step(
                    self.layout, self.F, h, alpha, self.p, self._kept, self._refresh
                )
            h64 = np.asarray(h, dtype=np.float64)
            self.F += alpha * h64
            if self.layered:
                level, qstart = self.layout[0], self.layout[1]
                reorder(self.F, h64, level, binary, qstart, self.order, self._tmp)
        return self.refresh()

    def rloss(self) -> float:
        """The block's part of the training rloss of ``F`` (ties count 1)."""
        if self.layered:
            level, qstart, lstart, log_c = self.layout
            if self._errors_fresh:
                errors = self._errors
            else:
                errors = sorted_level_errors(self.F, level, self.order, qstart, lstart, 1.0)
            return float(np.sum(np.exp(log_c) * errors))
        state = self.state
        assert not isinstance(state, LayeredState)
        d = np.exp(state.log_w - state.log_w_total)
        s0, s1 = self.F[state.i0], self.F[state.i1]
        return float(np.sum(d * ((s1 < s0) + (s1 == s0))))

    def refresh(self) -> float:
        """``log R_p`` of the block at ``F`` (keeps ``lp`` and the sums the potential reads)."""
        if self.layered:
            return layered_push_refresh(self.layout, self.F, self.p, self._refresh)
        return float(push_log_sum(self._parts(self._zero, 0.0, True)[0]))

    def potential(self, log_r: float) -> NDArray[np.float64]:
        """The potential of the round's push weights (normalised over every block)."""
        if self.layered:
            layered_push_potential(self.layout, self.F, self.lp, log_r, self.work_0, self.pi)
        else:
            i0, i1, log_w = self.pairs
            pair_push_potential(i0, i1, log_w, self.F, self.lp, log_r, self.work_0, self.pi)
        return self.pi


def combine(parts: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    """Blocks' ``(log R, slope, curvature)`` of ``log R`` into the whole data's.

    ``R = sum_b R_b``, so ``log R`` is the log-sum-exp of the parts and its derivatives are
    the parts' weighted by ``R_b / R`` (the curvature adds the parts' spread of slopes). A
    block without crucial pairs reports ``(-inf, 0, 0)`` and weighs nothing.
    """
    if len(parts) == 1:
        return parts[0]
    logs = np.array([q[0] for q in parts])
    top = float(np.max(logs))
    if top == -np.inf:
        return top, 0.0, 0.0
    w = np.exp(logs - top)
    log_r = top + float(np.log(w.sum()))
    w = w / w.sum()
    d1 = float(sum(wi * q[1] for wi, q in zip(w, parts, strict=True)))
    d2 = float(sum(wi * (q[2] + q[1] ** 2) for wi, q in zip(w, parts, strict=True))) - d1**2
    return log_r, d1, max(d2, 0.0)


def split_line(splits: list[NDArray[np.float64]], p: float) -> Any:
    """``alpha -> (log R_p, slope, curvature)`` of every block from their split level sums.

    ``splits``: per block, :meth:`PushBlock.split_sums` (columns 0-3 suffice); each block's
    part is :func:`binary_push_eval`'s, added by :func:`combine` in the blocks' order, as
    the blocks' own lines are on one machine.
    """
    return lambda a: combine([binary_push_eval(s, float(a), p) for s in splits])


def split_alpha(splits: list[NDArray[np.float64]], p: float, r: float) -> float:
    """:func:`newton_alpha` on :func:`split_line`: the same ``alpha``, to the bit.

    With one block the whole search runs in one kernel call
    (:func:`rankboost._kernels.push_split.binary_newton`: the same steps on the same floats,
    without a Python call per evaluation).
    """
    if len(splits) == 1:
        a0 = alpha_from_r(r)
        return binary_newton(splits[0], p, r, a0, MAX_ALPHA, MAX_NEWTON, NEWTON_STEPS)[0]
    return newton_alpha(split_line(splits, p), r)


def newton_alpha(fun: Any, r: float) -> float:
    """``argmin_alpha log R_p(F + alpha h)`` by safeguarded Newton (module docstring).

    ``fun(alpha)`` returns ``(log R_p, slope, curvature)``. The slope at 0 is ``-p r``, so
    the minimiser has the sign of ``r``; the search starts at Rb-c's ``alpha_from_r(r)``
    in the bracket ``[0, MAX_ALPHA]`` (or ``[-MAX_ALPHA, 0]``) and returns a value in it.
    After ``NEWTON_STEPS`` steps without convergence (a minimiser far out, where ``R_p``
    flattens: no pair misordered by ``h``), it returns the bracket's end if the slope there
    still points out, else bisects.
    """
    if r == 0.0:
        return 0.0
    lo, hi = (0.0, MAX_ALPHA) if r > 0 else (-MAX_ALPHA, 0.0)
    a = min(max(alpha_from_r(r), lo), hi)
    for it in range(MAX_NEWTON):
        if it == NEWTON_STEPS:  # slow: is the minimiser beyond the bracket (no misordered pair)?
            edge = hi if r > 0 else lo
            slope_at_edge = fun(edge)[1]
            if (slope_at_edge <= 0.0) if r > 0 else (slope_at_edge >= 0.0):
                return edge
        _, d1, d2 = fun(a)
        if d1 == 0.0:
            return a
        if d1 < 0.0:
            lo = a
        else:
            hi = a
        step = a - d1 / d2 if d2 > 0.0 and it < NEWTON_STEPS else np.nan
        if not lo < step < hi:  # outside the bracket, no curvature, or slow: bisect
            step = 0.5 * (lo + hi)
        if abs(step - a) <= 1e-12 * max(1.0, abs(a)):
            return float(step)
        a = float(step)
    return a


class PushRounds:
    """The round steps of the push, mixed into :class:`rankboost.booster.PushBooster`.

    :class:`rankboost.Booster` becomes a ``PushBooster`` when ``params.push != 1``, after
    its blocks are set up (:meth:`start_push`), so every entry point that builds a booster
    trains the push. This class overrides only the block steps the booster's docstring
    names: ``_histograms``, ``_rule_alpha``, ``_step`` and ``_rloss``.
    """

    params: Any
    log_total: float
    _blocks: list[FeedbackState]
    _hist: NDArray[np.float64]
    _block_hist: list[NDArray[np.float64]]
    _push: list[PushBlock]
    _feedback: Any
    #: ``log R_p`` before the first round and after each round.
    log_objective: list[float]

    def start_push(self, feedback: Any) -> None:
        """The push state of the started blocks; ``log_total`` becomes ``log R_p(F_0)``."""
        self._feedback = feedback
        self._push = [PushBlock(b, self.params.push) for b in self._blocks]
        parts = [pb.refresh() for pb in self._push]
        self.log_total = combine([(x, 0.0, 0.0) for x in parts])[0]
        self.log_objective = [self.log_total]

    def _histograms(self) -> NDArray[np.float64]:
        for pb, out in zip(self._push, [self._hist, *self._block_hist], strict=True):
            potential_histograms(pb.state.codes, pb.potential(self.log_total), out, 1.0)
        for extra in self._block_hist:
            self._hist += extra
        return self._hist

    def potential(self) -> NDArray[np.float64]:
        """The current round's potential ``pi`` of every training row (0 off the support)."""
        pi = np.zeros(self._feedback.n_samples)
        for pb in self._push:
            pi[pb.state.rows] = pb.potential(self.log_total)
        return pi

    def objective_at(self, hs: list[Any], alpha: float) -> tuple[float, float, float]:
        """``(log R_p, slope, curvature)`` at ``F + alpha h`` (``hs``: ``h`` per block)."""
        parts = [
            pb.evaluate(np.asarray(h, dtype=np.float64), alpha)
            for pb, h in zip(self._push, hs, strict=True)
        ]
        return combine(parts)

    def _rule_alpha(self, r: float, hs: list[Any]) -> float:
        values = [np.asarray(h) for h in hs]
        splits = [pb.split_sums(h) for pb, h in zip(self._push, values, strict=True)]
        ready = [s for s in splits if s is not None]  # threshold rankers on layered feedback
        if len(ready) == len(splits):
            return split_alpha(ready, self.params.push, r)
        lines = [pb.line(h) for pb, h in zip(self._push, values, strict=True)]
        return newton_alpha(lambda a: combine([line(a) for line in lines]), r)

    def _step(self, hs: list[Any], alpha: float, binary: bool) -> float:
        parts = [pb.step(h, alpha, binary) for pb, h in zip(self._push, hs, strict=True)]
        log_r = combine([(x, 0.0, 0.0) for x in parts])[0]
        self.log_objective.append(log_r)
        return log_r

    def scores(self) -> NDArray[np.float64]:
        """``F`` on every training row (the prior's, per query relative, plus ``H``)."""
        out = np.zeros(self._feedback.n_samples)
        for pb in self._push:
            out[pb.state.rows] = pb.F
        return out

    def _rloss(self) -> float:
        parts = [pb.rloss() for pb in self._push]
        total = parts[0]
        for x in parts[1:]:
            total += x
        return total
