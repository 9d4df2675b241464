"""RankBoost+ (``alpha="rbplus"``): Connamacher et al., Machine Learning 109 (2020) 51-78.

RankBoost+ keeps, for every distinct binary weak ranker ``j`` used so far, its cumulative
weight ``eta_j`` (``H = sum_j eta_j h_j``), and boosts the loss in which a pair that ``h_j``
*ties* pays ``cosh(eta_j)`` (the mean of ``e^eta`` and ``e^-eta``: a random tie-break)
instead of 1 (SPEC 5.4):

    L = sum D(x0, x1) prod_j f_j(x0, x1),
    f_j = exp(-eta_j (h_j(x1) - h_j(x0))) if h_j orders the pair, cosh(eta_j) if it ties it.

One round, with ``W_-, W_0, W_+`` the masses of the pairs the candidate orders correctly,
ties and misorders under the current (normalised) weights:

* **selection**: the largest ``|W_- - W_+ - W_0 tanh(eta_j)|`` (``eta_j = 0`` for a new
  ranker: ``|W_- - W_+| = |r|``), ties within ``TIE_TOLERANCE`` to the first candidate in the
  canonical order (SPEC 4.1); stop when it is at most ``tol``;
* **alpha** ``= 1/2 ln[(W_- + W_0 e^-eta / (2 cosh eta)) / (W_+ + W_0 e^eta / (2 cosh eta))]``.
  The numerator and denominator add up to ``W_- + W_0 + W_+ = 1`` and differ by
  ``rho = W_- - W_+ - W_0 tanh(eta)`` (the signed score), so alpha is
  ``1/2 ln((1 + rho) / (1 - rho))``: Rb-c's formula at ``rho`` (with its guard,
  ``|rho| <= 1 - ALPHA_EPS``), and exactly Rb-c's alpha when ``eta = 0`` (then also Rb-d's
  when ``W_0 = 0``). It zeroes ``dL/d eta_j``, so right after a step the same ranker has
  score 0 (without shrinkage);
* **update**: ordered pairs times ``exp(-alpha (h(x1) - h(x0)))``, tied pairs times
  ``cosh(eta + alpha) / cosh(eta)``, then ``eta += alpha``; ``Z_t`` is the exact normaliser
  (new mass / old mass) at the applied alpha (after ``learning_rate``).

**Cost.** A round needs ``W_-, W_0, W_+`` of every candidate (an existing ranker's score
depends on its ``W_0``): the split sums of :mod:`rankboost._kernels.split_sums`, O(|Phi| d)
per round, plus the usual potential histograms and an O(|Phi|) update.

**The bound.** ``prod Z_t = L_T / L_0`` exactly, and ``rloss <= L_T``: on a pair that
``H`` misorders or ties, ``sum_j eta_j (h_j(x1) - h_j(x0)) <= 0``, so the product of the
ordered factors is at least 1, and every ``cosh >= 1``. The tests check it every round.

**Distinct rankers.** Two candidates with the same values on every training row are the
same ranker (one ``eta``), whatever their features, thresholds or defaults (:class:`PlusState`).
A re-chosen ranker is recorded as the candidate that first introduced it.

**Explicit pairs only.** The tied factor of ranker ``j`` on a pair is a 2 x 2 table in
``(h_j(x0), h_j(x1))``: ``[[cosh eta_j, 1], [1, cosh eta_j]]`` (with the ordered factors
``e^{+-eta_j}`` folded into ``a(x0) b(x1)``). It factorises as ``u(x0) v(x1)`` only when the
table has rank one, i.e. ``cosh eta_j = 1``, ``eta_j = 0``. So after the first round the
weight of a pair depends jointly on both rows' signatures ``(h_1(x), .., h_J(x))``: a
query with ``S`` distinct signatures needs ``O(S^2)`` work, and ``S`` grows with the
rounds up to the query's size. No O(n) round survives in general (SPEC 5.4);
:class:`~rankboost.LayeredFeedback` and :class:`~rankboost.BipartiteFeedback` are expanded
to their crucial pairs (same ``D``), costing O(pairs) memory and time per round. Above
``RBPLUS_MAX_PAIRS`` pairs (about ``RBPLUS_BYTES_PER_PAIR`` bytes each) a
:class:`~rankboost.params.ParameterError` says what to do instead.

**Differences from the authors' code** (``rail-cwru/rankboostplus``, ``rankboost/algorithms/
rbp.py`` and ``base_ranking.py``, read for this module):

* *Linear dependence*: their greedy phase checks, for a new ranker, the least-squares
  residual of its pair column against the used rankers' columns; below 1e-5 they switch to
  a basis of all remaining rankers (QR of the columns, pivots above 1e-4, on a *random*
  permutation of them) and from then only re-weight basis rankers. Not implemented here:
  this module stays in the greedy regime (the SPEC allows it for a first version), so its
  results are deterministic.
* *Thresholds*: they use the midpoints between distinct values and, beyond 255, a random
  sample of 255 of them; here every ``thresholds=`` rule of :mod:`rankboost.binning`
  (``"midpoints"`` is theirs without the sampling), all deterministic, plus ``q_def`` for
  rows where the feature abstains (they have no missing values).
* *Duplicates*: they drop duplicate pair columns once up front (a one-sided test:
  ``r_i . r_j == |r_i|_1``); here rankers equal on the training rows share one ``eta``.
* *Selection ties*: they compare the best used ranker with the best new one, ties to the
  used one; here one canonical order over every candidate (SPEC 4.1).
* *Guards and stops*: their alpha is ``+-sys.maxsize`` when a side is empty, and they stop
  when a ranker is chosen twice in a row; here alpha is guarded as Rb-c's and training
  stops as the engine's (no candidate with score > ``tol``, or ``|r| = 1``). Their weights
  are float32; here float64 in log space.

Not supported: real-valued rankers, ``positive_cumulative`` (WeakLearn.cum selects by
``|r|``, RankBoost+ by its own score), ``criterion`` other than the default, and Dask.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._blocks import PairState, log_sum, log_sum_of
from ._kernels.split_sums import code_hashes
from .feedback import LayeredFeedback, PairFeedback
from .params import ParameterError, TrainParams
from .weak_rankers import TIE_TOLERANCE, CandidateTable

__all__ = [
    "RBPLUS_BYTES_PER_PAIR",
    "RBPLUS_MAX_PAIRS",
    "PlusState",
    "expand_to_pairs",
    "plus_blocks",
    "plus_choose",
    "plus_step",
]

#: Layered feedback is expanded to at most this many explicit pairs for RankBoost+.
RBPLUS_MAX_PAIRS = 20_000_000
#: Bytes a training pair costs RankBoost+ (pair indices, initial and current log weights,
#: and the round's temporaries), for the memory estimate of the error above the cap.
RBPLUS_BYTES_PER_PAIR = 96


def expand_to_pairs(feedback: LayeredFeedback) -> PairFeedback:
    """The crucial pairs of layered (or bipartite) feedback, listed with the same ``D``.

    Parameters
    ----------
    feedback : LayeredFeedback or BipartiteFeedback

    Returns
    -------
    pairs : PairFeedback
        Every crucial pair, weighted so that ``D = Phi / sum Phi`` is the layered one
        (``normalize="query"`` or ``"pair"``).

    Raises
    ------
    ParameterError
        Beyond ``RBPLUS_MAX_PAIRS`` pairs.

    Examples
    --------
    >>> import rankboost as rb
    >>> from rankboost.rbplus import expand_to_pairs
    >>> pf = expand_to_pairs(rb.LayeredFeedback([0, 1, 2, 0, 1], qid=[1, 1, 1, 2, 2]))
    >>> pf.n_pairs
    4
    """
    n_pairs = int(feedback.n_pairs)
    if n_pairs > RBPLUS_MAX_PAIRS:
        gb = n_pairs * RBPLUS_BYTES_PER_PAIR / 1e9
        raise ParameterError(
            f"alpha='rbplus' needs the {n_pairs:,} crucial pairs of this {type(feedback).__name__} "
            f"listed explicitly (about {gb:.1f} GB), more than RBPLUS_MAX_PAIRS="
            f"{RBPLUS_MAX_PAIRS:,}: its tied-pair factors do not factorise per query "
            "(rankboost.rbplus). Use alpha='r', 'exact' or 'line_search' (O(n) per round), "
            "subsample the rows of large queries, or raise rankboost.rbplus.RBPLUS_MAX_PAIRS "
            "if the memory is there."
        )
    out = feedback._weighted_pairs(np.ones(feedback.n_samples))
    out.sample_weight = None  # every row counts once, as in the layered feedback
    return out


class _PlusPairState(PairState):
    """A block of explicit pairs whose weights carry RankBoost+'s per-pair log factor ``G``.

    ``D_t(x0, x1) = exp(log_w + G - log_total)``, ``G = log prod_j f_j`` (module docstring);
    ``H`` is kept for the training rloss.
    """

    def __init__(self, state: PairState) -> None:
        super().__init__(state.rows, state.i0, state.i1, state.weights)
        self.G = np.zeros(state.i0.shape[0])

    def set_prior(self, f0: NDArray[np.float64]) -> None:
        """Start from a prior ``F0``: every pair's factor ``exp(F0(x0) - F0(x1))`` in ``G``."""
        super().set_prior(f0)
        self.G = self.H[self.i0] - self.H[self.i1]

    def _pair_weights(self) -> NDArray[np.float64]:
        return np.exp(self.log_w + self.G - self.log_total)

    def update(self, h: NDArray[Any], alpha: float, binary: bool = False) -> float:
        raise TypeError("a RankBoost+ block is updated by update_plus(h, alpha, eta)")

    def log_total_at(self, h: NDArray[np.float64], alpha: float) -> float:
        raise TypeError("RankBoost+ has its own alpha; Z(alpha) of the plain update is unused")

    def log_slopes_at(self, h: NDArray[np.float64], alpha: float) -> tuple[float, float]:
        raise TypeError("RankBoost+ has its own alpha; Z(alpha) of the plain update is unused")

    def update_plus(self, h: NDArray[Any], alpha: float, eta: float) -> float:
        """Apply one RankBoost+ step of ranker values ``h`` (0/1); return the new log mass."""
        if alpha != 0.0:
            hf = np.asarray(h, dtype=np.float64)
            m = hf[self.i1] - hf[self.i0]
            tied = _log_cosh(eta + alpha) - _log_cosh(eta)
            self.G += np.where(m != 0.0, -alpha * m, tied)
            self.H += alpha * hf
        return log_sum(self.log_w + self.G)


def _log_cosh(x: float) -> float:
    ax = abs(x)
    return ax + float(np.log1p(np.exp(-2.0 * ax))) - float(np.log(2.0))


def plus_blocks(feedback: Any, n_blocks: int) -> tuple[PairFeedback, list[_PlusPairState]]:
    """The feedback as explicit pairs (expanded if layered) and its RankBoost+ blocks."""
    if isinstance(feedback, LayeredFeedback):
        feedback = expand_to_pairs(feedback)
    return feedback, [_PlusPairState(b) for b in feedback._blocks(n_blocks)]


class PlusState:
    """``eta`` of every distinct ranker, and which candidates are the same ranker.

    ``ids[flat]`` is the distinct ranker of candidate ``flat``: candidates with the same
    values on every training row share an id, across thresholds, defaults and features (as
    the authors' duplicate-column removal). The set of rows where a candidate is 1 is
    identified by the sum, modulo 2**64, of fixed pseudo-random 64-bit weights of its rows
    (:func:`rankboost._kernels.split_sums.code_hashes`; O(d n) once). ``eta[id]`` is its
    cumulative weight, ``first[id]`` the candidate that introduced it (-1: unused).
    """

    def __init__(self, table: CandidateTable, blocks: list[_PlusPairState], n_codes: int) -> None:
        d, n_cols = table.r.shape
        sums = np.zeros((d, max(n_codes, 2)), dtype=np.uint64)
        for b in blocks:
            if b.codes.shape[1]:
                code_hashes(b.codes, _row_weights(b.rows), sums)
        n_t = table.n_thresholds
        # above[:, t] = sum over the codes > t (t = 0 .. n_t - 1), wrapping
        tail = np.cumsum(sums[:, :0:-1], axis=1, dtype=np.uint64)[:, ::-1]
        above = np.zeros((d, n_t), dtype=np.uint64)
        m = min(n_t, tail.shape[1])
        above[:, :m] = tail[:, :m]
        j = np.arange(n_cols)
        t = n_t - 1 - j // 2
        q = (j % 2).astype(np.uint64)
        key = above[:, t] + q[None, :] * sums[:, :1]  # q_def = 1 adds the abstaining rows
        uniq, inverse = np.unique(key.ravel(), return_inverse=True)
        self.ids = inverse.reshape(d, n_cols)
        self.eta = np.zeros(uniq.shape[0])
        self.first = np.full(uniq.shape[0], -1, dtype=np.int64)


def _row_weights(rows: NDArray[np.int64]) -> NDArray[np.uint64]:
    """A fixed pseudo-random 64-bit weight per row index (splitmix64 of the index)."""
    z = rows.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return np.ascontiguousarray(z ^ (z >> np.uint64(31)))


def plus_choose(
    table: CandidateTable,
    w_minus: NDArray[np.float64],
    w_plus: NDArray[np.float64],
    state: PlusState,
    params: TrainParams,
) -> tuple[int, int, float, float] | str:
    """RankBoost+'s selection: ``(flat, id, rho, r)`` of the chosen ranker, or why none.

    ``w_minus, w_plus`` are every candidate's ``W_-, W_+`` under the current distribution
    (the booster's summed split sums); ``flat`` is the candidate recorded for the distinct
    ranker ``id`` (the one that first introduced it), ``rho`` its score
    ``W_- - W_+ - W_0 tanh(eta)`` (the booster's alpha is Rb-c's formula at ``rho``, module
    docstring) and ``r = W_- - W_+``. A string is the stop reason: no score above ``tol``.
    """
    w_zero = np.maximum(1.0 - w_minus - w_plus, 0.0)  # D_t sums to 1
    eta = state.eta[state.ids]
    rho = w_minus - w_plus - w_zero * np.tanh(eta)
    score = np.abs(rho)
    alive = table.valid.copy()
    if params.default != "learned":
        alive &= table.column_defaults()[None, :] == int(params.default)
    best = table.best_of(score, TIE_TOLERANCE, alive) if alive.any() else -1
    if best < 0 or float(score.ravel()[best]) <= params.tol:
        top = float(score.ravel()[best]) if best >= 0 else 0.0
        return (
            "no weak ranker has a RankBoost+ score "
            f"|W_- - W_+ - W_0 tanh(eta)| > tol={params.tol:g} (best {top:.3g}); no step "
            "lowers the loss"
        )
    rid = int(state.ids.ravel()[best])
    if state.first[rid] < 0:
        state.first[rid] = best
    r = float(w_minus.ravel()[best] - w_plus.ravel()[best])
    return int(state.first[rid]), rid, float(rho.ravel()[best]), r


def plus_step(blocks: list[Any], hs: list[Any], alpha: float, eta: float) -> float:
    """Every block applies RankBoost+'s update; return the new global log mass.

    ``hs`` are the ranker's values on every block, ``eta`` its cumulative weight before
    the step; the booster settles ``Z_t`` from the returned mass and then adds ``alpha``
    to ``eta``.
    """
    return log_sum_of([b.update_plus(h, alpha, eta) for b, h in zip(blocks, hs, strict=True)])
