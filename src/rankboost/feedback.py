"""Feedback: what should rank above what (paper sections 2 and 3).

Every feedback reduces to a non-negative weight ``Phi(x0, x1)`` on *crucial pairs*
("``x1`` should rank above ``x0``") and the initial distribution ``D = Phi / sum(Phi)``.

* :class:`PairFeedback`: an explicit list of pairs with weights (general RankBoost,
  O(|Phi|) per round).
* :class:`LayeredFeedback`: graded labels per query; every (lower grade, higher grade) pair
  of a query is crucial with weight 1 (times a per-query constant, see ``normalize``).
  O(n + K) per query and round by the factorisation of :mod:`rankboost._kernels.layered`
  (the paper's section 3.3 bipartite one, extended to K levels), never enumerating pairs.
* :class:`BipartiteFeedback`: labels in {0, 1}, the two-level case (RankBoost.B).

Internally, the distribution at round ``t`` is kept through the current scores ``H_t`` of
the training rows: ``D_t(x0, x1) = D(x0, x1) exp(H_t(x0) - H_t(x1)) / M_t`` (paper sections
3.1 and 3.3: the updates multiply by ``exp(alpha h(x0)) exp(-alpha h(x1))``), with every sum kept
in log space, so ``Z_t = M_t / M_{t-1}`` and ``prod Z_t = M_T / M_0`` hold by construction.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp

from ._kernels.layered import (
    _layered_log_mass,
    layered_binary_update,
    layered_potential,
    layered_refresh,
)
from ._kernels.pairwise import level_pair_errors, reorder, sorted_level_errors
from ._kernels.split_sums import code_order, layered_factors, layered_split_sums, pair_split_sums
from ._validation import check_labels, check_qid, check_scores

__all__ = ["MAX_WEIGHTED_PAIRS", "BipartiteFeedback", "LayeredFeedback", "PairFeedback"]

#: :meth:`LayeredFeedback.with_sample_weight` lists the crucial pairs when the row weights
#: are not constant; beyond this many pairs it refuses instead of exhausting memory.
MAX_WEIGHTED_PAIRS = 20_000_000


# --------------------------------------------------------------------------- internal states


def _log_weights(h: NDArray[np.float64]) -> NDArray[np.float64]:
    """Log h with log 0 = -inf, without a divide-by-zero warning."""
    out = np.full(h.shape[0], -np.inf)
    pos = h > 0
    out[pos] = np.log(h[pos])
    return out


def _log_sum(x: NDArray[np.float64]) -> float:
    """log(sum(exp(x))) of per-query log masses (scipy's logsumexp costs ~0.5 ms a call)."""
    top = float(np.max(x))
    if top == -np.inf:
        return top
    return top + float(np.log(np.sum(np.exp(x - top))))


#: A binary update scales the stored exp(+-H) by per-level factors (one rounding per round);
#: every this many rounds they are recomputed from H, so the drift stays ~1e-14.
_EXACT_EVERY = 64


class _LayeredState:
    """One block of layered feedback: whole queries, their support rows grouped by query.

    A block holds what a round needs of its queries (:mod:`rankboost._kernels.layered`): the
    scores ``H`` of its rows, their level sums and potential, and the kept order by ``H``.
    Everything it reports is its *part* of a global quantity, so the parts of several blocks
    add up:

    * ``pairs_per_query`` (phase 1 of the normalisation): the owner fixes every query's pair
      weight ``c_q`` from the counts of all blocks (:func:`_fix_normalisers`), then calls
      :meth:`start`, which returns the block's log mass ``log sum_q c_q sum_{l0<l1} A B``;
    * ``log_total`` is the log mass ``M_t`` of the *whole* training set, set by the owner
      after every round (:meth:`set_log_total`); the potential, ``W_-, W_0, W_+`` and the
      rloss are then the block's parts of the global ones;
    * :meth:`update` applies ``H += alpha h`` and returns the block's new log mass.

    With a single block every value is bit-identical to a whole-data computation.
    """

    def __init__(
        self,
        rows: NDArray[np.int64],
        level: NDArray[np.int64],
        qstart: NDArray[np.int64],
        lstart: NDArray[np.int64],
        pairs_per_query: NDArray[np.int64],
        normalize: str,
    ) -> None:
        self.rows = rows
        self.level = level
        self.qstart = qstart
        self.lstart = lstart
        self.pairs_per_query = pairs_per_query
        self.normalize = normalize
        self.log_c = np.zeros(qstart.shape[0] - 1)  # fixed by the owner before start()
        self.codes: NDArray[Any] = np.empty((0, 0), dtype=np.uint8)  # set by the owner
        n = rows.shape[0]
        self.H = np.zeros(n)
        self._zeros = np.zeros(n)
        self._a = np.empty(n)  # exp(H - shift_a[level]), kept for the potential
        self._b = np.empty(n)  # exp(-H - shift_b[level])
        n_levels = int(lstart[-1])
        self._shift_a = np.empty(n_levels)
        self._shift_b = np.empty(n_levels)
        self._log_a = np.empty(n_levels)
        self._log_b = np.empty(n_levels)
        self._up = np.empty(n_levels)
        self._down = np.empty(n_levels)
        self._scratch_a = np.empty(n_levels)
        self._scratch_b = np.empty(n_levels)
        self._log_mass_q = np.empty(qstart.shape[0] - 1)
        # each query's rows in increasing H, and by decreasing level among equal H (the kept
        # order of _kernels.pairwise, restored by a merge per round); the rows come grouped
        # by query then increasing level, and H = 0, so each query starts reversed. int32
        # indices halve the merge's memory traffic (the update's largest term)
        index = np.int32 if n < 2**31 else np.int64
        of_row = np.repeat(np.arange(qstart.shape[0] - 1), np.diff(qstart))
        self.order = (qstart[of_row] + qstart[of_row + 1] - 1 - np.arange(n)).astype(index)
        self._fac = np.empty((n_levels, 6))
        # the potential written by the last binary update, relative to the mass before it:
        # the true potential is _pi * _pi_scale
        self._pi = np.empty(n)
        self._pi_scale = 1.0
        self._pi_fresh = False
        self._since_exact = 0
        self._tmp = np.empty(n, dtype=index)
        self._tree = np.empty(2 * n_levels + qstart.shape[0])
        self._errors = np.empty(qstart.shape[0] - 1)
        self._errors_fresh = False
        self._rescale_pi = False
        self.log_total = 0.0
        self._split: tuple[Any, ...] | None = None  # split_sums' code order and buffers
        # the kernels' state tuples (_kernels.layered's module docstring): the arrays above;
        # the layout (level, qstart, lstart, log_c) is built per call, as the owner sets log_c
        self._row_state = (self.H, self._a, self._b, self.order)
        self._level_state = (self._shift_a, self._shift_b, self._log_a, self._log_b)
        self._factors = (self._up, self._down)
        self._scratch = (self._fac, self._tmp, self._tree)
        self._out = (self._log_mass_q, self._pi, self._errors)

    @property
    def n(self) -> int:
        return int(self.rows.shape[0])

    def set_prior(self, f0: NDArray[np.float64]) -> None:
        """Start from the scores ``H = F0`` of the block's rows (a prior; before :meth:`start`).

        ``D_1(x0, x1)`` is then proportional to ``D(x0, x1) exp(F0(x0)) exp(-F0(x1))``: the
        level sums weigh a row's "lower item" part by ``exp(F0)`` and its "upper item" part
        by ``exp(-F0)``, in log space with the per-level shifts. Each query's ``F0`` is taken
        relative to its maximum (no pair crosses queries, so ``D_1`` is unchanged): a
        constant prior gives ``H = 0`` exactly, the bits of training without one.
        """
        nq = self.qstart.shape[0] - 1
        of_row = np.repeat(np.arange(nq), np.diff(self.qstart))
        top = np.maximum.reduceat(f0, self.qstart[:-1]) if nq else np.empty(0)
        self.H[:] = f0 - top[of_row]
        # the kept order: increasing H, then decreasing level, then decreasing row (at
        # H = 0, the order __init__ builds)
        n = self.n
        order = np.lexsort((-np.arange(n), -self.level, self.H, of_row))
        self.order[:] = order.astype(self.order.dtype)

    def start(self) -> float:
        """Statistics at ``H`` (0, or a prior's) once ``log_c`` is fixed; return the log mass.

        ``log_total`` is set to it, which is right for a single block; with several, the
        owner then sets the global one (:meth:`set_log_total`).
        """
        self.log_total = self._refresh(self._zeros, 0.0)
        return self.log_total

    def set_log_total(self, log_total: float) -> None:
        """Take the new global log mass after an update (and the potential's scale 1/Z)."""
        if self._rescale_pi:
            self._pi_scale = float(np.exp(self.log_total - log_total))
            self._rescale_pi = False
        self.log_total = log_total

    def _refresh(self, h: NDArray[np.float64], alpha: float) -> float:
        # apply H += alpha h, then per-query-block statistics, then the sum over blocks
        layout = (self.level, self.qstart, self.lstart, self.log_c)
        layered_refresh(
            h, float(alpha), layout, self._row_state, self._level_state, self._log_mass_q
        )
        return _log_sum(self._log_mass_q)

    def _log_mass(
        self, G: NDArray[np.float64], wa: NDArray[np.float64], wb: NDArray[np.float64]
    ) -> float:
        out = np.empty(self._log_mass_q.shape[0])
        layout = (self.level, self.qstart, self.lstart, self.log_c)
        _layered_log_mass(G, wa, wb, layout, (self._scratch_a, self._scratch_b), out)
        return _log_sum(out)

    def potential(self) -> NDArray[np.float64]:
        """pi(x) = sum_x' D_t(x', x) - D_t(x, x') on the support rows (a new array)."""
        pi, scale = self.scaled_potential()
        return pi * scale

    def scaled_potential(self) -> tuple[NDArray[np.float64], float]:
        """``(p, s)`` with ``pi = s p``: the round's potential without a pass to rescale it.

        After a binary update ``p`` is the kernel's output relative to the mass before the
        update and ``s = 1 / Z``; the caller scales what it sums from ``p`` (the histograms).
        ``p`` is the state's own buffer, valid until the next update.
        """
        if not self._pi_fresh:
            layout = (self.level, self.qstart, self.lstart, self.log_c)
            layered_potential(
                self.log_total, layout, self._row_state, self._level_state, self._factors,
                self._pi,
            )  # fmt: skip
            self._pi_scale = 1.0
            self._pi_fresh = True
        return self._pi, self._pi_scale

    def log_total_at(self, h: NDArray[np.float64], alpha: float) -> float:
        """Log M for scores ``H + alpha h`` (``Z(alpha) = exp(log_total_at - log_total)``)."""
        return self._log_mass(self.H + alpha * h, self._zeros, self._zeros)

    def log_slopes_at(self, h: NDArray[np.float64], alpha: float) -> tuple[float, float]:
        """``(log S_0, log S_1)`` with ``dM/dalpha = S_0 - S_1`` at ``H + alpha h``.

        Since ``h0 - h1 = h0 (1 - h1) - (1 - h0) h1``, ``S_0 = sum D h(x0)(1 - h(x1)) e^(...)``
        and ``S_1 = sum D (1 - h(x0)) h(x1) e^(...)`` (unnormalised): both non-negative for
        ``h`` in [0, 1] and free of the tied pairs, so their difference does not cancel.
        """
        G = self.H + alpha * h
        lh = _log_weights(h)
        l1h = _log_weights(1.0 - h)
        return self._log_mass(G, lh, l1h), self._log_mass(G, l1h, lh)

    def binary_stats(self, h: NDArray[np.float64]) -> tuple[float, float, float]:
        """The block's part of (W_-, W_0, W_+) of a binary ranker under D_t."""
        on = _log_weights(h)
        off = _log_weights(1.0 - h)
        w_minus = self._log_mass(self.H, off, on)  # h(x0) = 0, h(x1) = 1: correctly ordered
        w_plus = self._log_mass(self.H, on, off)
        w_00 = self._log_mass(self.H, off, off)
        w_11 = self._log_mass(self.H, on, on)
        w = np.exp(np.array([w_minus, w_00, w_11, w_plus]) - self.log_total)
        return float(w[0]), float(w[1] + w[2]), float(w[3])

    def update(self, h: NDArray[Any], alpha: float, binary: bool = False) -> float:
        """Apply ``H <- H + alpha h``; return the block's new log mass.

        The exact ``Z_t`` is ``exp(new global log mass - log_total)``; the owner computes it
        and then calls :meth:`set_log_total`. ``binary=True`` promises ``h`` in {0, 1} (uint8
        from a threshold ranker, or float): the per-query order by H is then kept by an O(n)
        merge (each h-group keeps its order) instead of a sort.
        """
        if binary and alpha != 0.0 and self._since_exact < _EXACT_EVERY:
            # one sweep per query: H, level sums, the next potential, kept order, errors
            layout = (self.level, self.qstart, self.lstart, self.log_c)
            layered_binary_update(
                h, float(alpha), self.log_total, layout, self._row_state, self._level_state,
                self._factors, self._scratch, self._out,
            )  # fmt: skip
            new = _log_sum(self._log_mass_q)
            self._rescale_pi = True  # the potential is relative to the old mass: 1/Z
            self._pi_fresh = True
            self._since_exact += 1
            self._errors_fresh = True
        else:
            h = np.asarray(h, dtype=np.float64)
            new = self._refresh(h, alpha)
            self._pi_fresh = False
            self._since_exact = 0
            if alpha != 0.0:
                reorder(self.H, h, self.level, binary, self.qstart, self.order, self._tmp)
                self._errors_fresh = False
        return new

    def split_sums(self, out: NDArray[np.float64]) -> None:
        """The block's part of ``W_-, W_+`` of every threshold candidate, into ``out``.

        ``out`` has shape (4, d, n_codes - 1) (:mod:`rankboost._kernels.split_sums`). The
        first call sorts each query's rows by code once per feature (4 bytes per code).
        """
        if self._split is None:
            n_levels = int(self.lstart[-1])
            k = np.diff(self.lstart)
            estart = np.concatenate([[0], np.cumsum(k * k)]).astype(np.int64)
            self._split = (
                code_order(self.codes, self.qstart),
                (np.empty(self.n), np.empty(self.n), np.empty(n_levels), np.empty(n_levels),
                 np.empty(int(estart[-1])), estart),
            )  # fmt: skip
        order, factors = self._split
        a, b, A, B, E, estart = factors
        layered_factors(
            self.H, self.level, self.qstart, self.lstart, self.log_c, self.log_total,
            a, b, A, B, E, estart,
        )  # fmt: skip
        layered_split_sums(self.codes, order, self.level, self.qstart, self.lstart, factors, out)

    def rloss(self, tie_weight: float = 1.0) -> float:
        """The block's part of the D-weighted fraction of pairs misordered by ``H``."""
        if tie_weight == 1.0 and self._errors_fresh:
            errors = self._errors  # counted during the last binary update
        else:
            errors = sorted_level_errors(
                self.H, self.level, self.order, self.qstart, self.lstart, tie_weight
            )
        return float(np.sum(np.exp(self.log_c) * errors))


class _PairState:
    """One block of explicit pairs (paper section 3.1): rows and the pairs among them.

    As :class:`_LayeredState`: the owner fixes the initial distribution from every block's
    weights (``log_w = log(Phi / sum Phi)``, :func:`_fix_normalisers`), then the block
    reports parts of global quantities, ``log_total`` being the global log mass.
    """

    def __init__(
        self, rows: NDArray[np.int64], i0: NDArray[np.int64], i1: NDArray[np.int64],
        weights: NDArray[np.float64],
    ) -> None:  # fmt: skip
        self.rows = rows
        self.i0 = i0
        self.i1 = i1
        self.weights = weights
        self.log_w = np.zeros(weights.shape[0])  # fixed by the owner before start()
        self.log_w_total = 0.0  # log of the sum of exp(log_w) over every block
        self.codes: NDArray[Any] = np.empty((0, 0), dtype=np.uint8)  # set by the owner
        self.H = np.zeros(rows.shape[0])
        self.log_total = 0.0

    @property
    def n(self) -> int:
        return int(self.rows.shape[0])

    def set_prior(self, f0: NDArray[np.float64]) -> None:
        """Start from the scores ``H = F0`` of the block's rows (a prior; before :meth:`start`).

        ``D_1`` is proportional to ``D exp(F0(x0) - F0(x1))``, every pair reweighted in log
        space. ``F0`` is taken relative to its maximum over the block (no pair crosses
        blocks), so a constant prior gives ``H = 0`` exactly.
        """
        self.H[:] = f0 - (float(np.max(f0)) if f0.shape[0] else 0.0)

    def start(self) -> float:
        """The block's log mass at ``H`` (``log_total`` is set to it, see the layered).

        ``log_w_total`` is set to the block's part of ``D``'s own mass (the rloss's
        normaliser, without the prior's factors); the owner sums it over the blocks.
        """
        self.log_w_total = float(logsumexp(self.log_w))
        self.log_total = float(logsumexp(self.log_w + self.H[self.i0] - self.H[self.i1]))
        return self.log_total

    def set_log_total(self, log_total: float) -> None:
        """Take the new global log mass after an update."""
        self.log_total = log_total

    def _pair_weights(self) -> NDArray[np.float64]:
        return np.exp(self.log_w + self.H[self.i0] - self.H[self.i1] - self.log_total)

    def potential(self) -> NDArray[np.float64]:
        d = self._pair_weights()
        up = np.bincount(self.i1, weights=d, minlength=self.n).astype(np.float64)
        down = np.bincount(self.i0, weights=d, minlength=self.n).astype(np.float64)
        return up - down

    def scaled_potential(self) -> tuple[NDArray[np.float64], float]:
        return self.potential(), 1.0

    def log_total_at(self, h: NDArray[np.float64], alpha: float) -> float:
        g = self.H + alpha * h
        return float(logsumexp(self.log_w + g[self.i0] - g[self.i1]))

    def log_slopes_at(self, h: NDArray[np.float64], alpha: float) -> tuple[float, float]:
        g = self.H + alpha * h
        base = self.log_w + g[self.i0] - g[self.i1]
        h0 = h[self.i0]
        h1 = h[self.i1]
        return (
            float(logsumexp(base + _log_weights(h0 * (1.0 - h1)))),
            float(logsumexp(base + _log_weights((1.0 - h0) * h1))),
        )

    def binary_stats(self, h: NDArray[np.float64]) -> tuple[float, float, float]:
        d = self._pair_weights()
        diff = h[self.i0] - h[self.i1]
        return float(d[diff < 0].sum()), float(d[diff == 0].sum()), float(d[diff > 0].sum())

    def split_sums(self, out: NDArray[np.float64]) -> None:
        """The block's part of ``W_-, W_+`` of every threshold candidate, into ``out``."""
        pair_split_sums(self.codes, self.i0, self.i1, self._pair_weights(), out)

    def update(self, h: NDArray[Any], alpha: float, binary: bool = False) -> float:
        if alpha != 0.0:
            self.H += alpha * h
        return float(logsumexp(self.log_w + self.H[self.i0] - self.H[self.i1]))

    def rloss(self, tie_weight: float = 1.0) -> float:
        d1 = np.exp(self.log_w - self.log_w_total)
        s0 = self.H[self.i0]
        s1 = self.H[self.i1]
        return float(np.sum(d1 * ((s1 < s0) + tie_weight * (s1 == s0))))


_FeedbackState = _LayeredState | _PairState


def _layered_log_c(counts: list[NDArray[np.int64]], normalize: str) -> list[NDArray[np.float64]]:
    """Every block's ``log c_q`` from every block's pairs per query (phase 2, layered).

    ``normalize="pair"`` gives every crucial pair ``c_q = 1 / n_pairs`` (the paper's
    ``D = Phi / sum Phi``); ``"query"`` gives query ``q`` with ``P_q`` pairs
    ``c_q = 1 / (n_queries_with_pairs P_q)``. The totals are added over the blocks in their
    order, so one block gives the same bits as the whole data.
    """
    n_pairs = 0
    n_queries = 0
    for c in counts:
        n_pairs += int(c.sum())
        n_queries += int(c.shape[0])
    out = []
    for c in counts:
        if normalize == "pair":
            w = np.full(c.shape[0], 1.0 / n_pairs)
        else:
            w = 1.0 / (n_queries * c)
        out.append(np.log(w))
    return out


def _pair_log_w(weights: list[NDArray[np.float64]]) -> list[NDArray[np.float64]]:
    """Every block's ``log D(x0, x1)`` from every block's pair weights: ``Phi / sum Phi``."""
    total = 0.0
    for w in weights:
        total += float(w.sum())
    return [np.log(w / total) for w in weights]


def _fix_normalisers(blocks: list[_LayeredState] | list[_PairState]) -> None:
    """Phase 2 of the normalisation: the initial distribution from every block's counts."""
    pair_blocks = [b for b in blocks if isinstance(b, _PairState)]
    if pair_blocks:
        logs = _pair_log_w([pb.weights for pb in pair_blocks])
        for pb, log_w in zip(pair_blocks, logs, strict=True):
            pb.log_w = log_w
        return
    layered = [b for b in blocks if isinstance(b, _LayeredState)]
    modes = {b.normalize for b in layered}
    if len(modes) != 1:
        raise ValueError(f"blocks disagree on normalize: {sorted(modes)}; use one mode.")
    logs = _layered_log_c([lb.pairs_per_query for lb in layered], modes.pop())
    for lb, log_c in zip(layered, logs, strict=True):
        lb.log_c = log_c


def _start_blocks(blocks: list[_LayeredState] | list[_PairState]) -> float:
    """Fix the normalisers, start every block and give each the global log mass; return it."""
    _fix_normalisers(blocks)
    log_total = _log_sum_of([b.start() for b in blocks])
    pair_blocks = [b for b in blocks if isinstance(b, _PairState)]
    # D's own mass (without a prior's factors: log_total then differs), its normaliser in rloss
    log_d = _log_sum_of([b.log_w_total for b in pair_blocks]) if pair_blocks else 0.0
    for b in blocks:
        b.set_log_total(log_total)
        if isinstance(b, _PairState):
            b.log_w_total = log_d
    return log_total


def _log_sum_of(parts: list[float]) -> float:
    """Global log mass from the blocks' log masses (one block: that value, bit for bit)."""
    if len(parts) == 1:
        return parts[0]
    return _log_sum(np.asarray(parts, dtype=np.float64))


# --------------------------------------------------------------------------- public classes


def _constant_row_weights(lo: float, hi: float, finite: bool) -> bool:
    """Check row weights from their min, max and finiteness; True when they are constant.

    Constant weights change nothing (a constant factor cancels out of ``D``). Shared by
    :meth:`LayeredFeedback.with_sample_weight` and the Dask trainer, which reduces the
    three numbers over its partitions.
    """
    if not finite or lo < 0:
        raise ValueError("sample_weight must hold finite non-negative numbers.")
    if hi <= 0:
        raise ValueError(
            "sample_weight is zero for every row; at least one weight must be positive."
        )
    return lo == hi


class PairFeedback:
    """Explicit crucial pairs with weights: general RankBoost (paper section 3.1).

    Parameters
    ----------
    pairs : array-like of shape (n_pairs, 2), int
        Row ``(i, j)`` means "row ``j`` should rank above row ``i``".
    weights : array-like of shape (n_pairs,), default=None
        Positive importance of each pair (``Phi``); None gives every pair weight 1.
        Duplicate pairs add their weights.
    n_samples : int, default=None
        Number of rows of the feature matrix; None means ``max(pairs) + 1``.

    Attributes
    ----------
    sample_weight : ndarray of shape (n_samples,) or None
        The row weights the pairs were built from
        (:meth:`LayeredFeedback.with_sample_weight`), which the candidate thresholds then
        weigh too (:meth:`rankboost.binning.BinMapper.fit`); None (pairs given directly):
        every row counts once.

    Examples
    --------
    >>> import rankboost as rb
    >>> fb = rb.PairFeedback([[0, 1], [2, 1]], n_samples=3)
    >>> fb.n_pairs, fb.n_samples
    (2, 3)
    """

    sample_weight: NDArray[np.float64] | None = None

    def __init__(
        self, pairs: ArrayLike, weights: ArrayLike | None = None, n_samples: int | None = None
    ) -> None:
        arr = np.asarray(pairs)
        if arr.dtype.kind == "f" and arr.size and np.all(np.mod(arr, 1) == 0):
            arr = arr.astype(np.int64)
        if arr.ndim != 2 or arr.shape[1] != 2 or arr.dtype.kind not in "iu":
            raise ValueError(
                "pairs must be an integer array of shape (n_pairs, 2), row (i, j) meaning "
                f"'row j above row i'; got shape {arr.shape} and dtype {arr.dtype}."
            )
        if arr.shape[0] == 0:
            raise ValueError("pairs is empty; RankBoost needs at least one crucial pair.")
        arr = arr.astype(np.int64)
        if n_samples is None:
            n_samples = int(arr.max()) + 1
        if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)):
            raise TypeError(f"n_samples must be an int; got {n_samples!r}.")
        bad = (arr < 0) | (arr >= n_samples)
        if bad.any():
            k = int(np.flatnonzero(bad.any(axis=1))[0])
            raise ValueError(
                f"pairs[{k}] = {arr[k].tolist()} is out of range: row indices must lie in "
                f"[0, {n_samples}) for n_samples={n_samples}."
            )
        same = arr[:, 0] == arr[:, 1]
        if same.any():
            k = int(np.flatnonzero(same)[0])
            raise ValueError(
                f"pairs[{k}] compares row {arr[k, 0]} with itself; a crucial pair needs two "
                "different rows."
            )
        if weights is None:
            w = np.ones(arr.shape[0])
        else:
            w = np.asarray(weights, dtype=np.float64).ravel()
            if w.shape[0] != arr.shape[0]:
                raise ValueError(
                    f"weights has {w.shape[0]} entries but pairs has {arr.shape[0]} rows; "
                    "pass one weight per pair."
                )
            if not np.all(np.isfinite(w)):
                raise ValueError("weights contains NaN or infinity; pass finite positive weights.")
            if (w <= 0).any():
                k = int(np.flatnonzero(w <= 0)[0])
                raise ValueError(
                    f"weights must be positive (Phi > 0 on crucial pairs); weights[{k}] = "
                    f"{float(w[k])!r}. Drop the pair instead of giving it weight 0."
                )
        self.pairs = arr
        self.weights = w
        self.n_samples = int(n_samples)

    @property
    def n_pairs(self) -> int:
        """Number of pairs given (duplicates counted)."""
        return int(self.pairs.shape[0])

    def _blocks(self, n_blocks: int = 1) -> list[_PairState]:
        """The pairs split into at most ``n_blocks`` blocks that share no row.

        A block holds whole connected components of the pair graph (rows linked by a pair),
        so no pair crosses blocks; components are dealt to blocks in order of their first
        row, balancing the number of pairs. Not normalised yet (:func:`_start_blocks`).
        """
        if n_blocks == 1:
            rows, inv = np.unique(self.pairs.ravel(), return_inverse=True)
            inv = inv.reshape(-1, 2).astype(np.int64)
            return [
                _PairState(rows.astype(np.int64), inv[:, 0].copy(), inv[:, 1].copy(), self.weights)
            ]
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        n = self.n_samples
        graph = coo_matrix(
            (np.ones(self.n_pairs), (self.pairs[:, 0], self.pairs[:, 1])), shape=(n, n)
        )
        _, comp = connected_components(graph, directed=False)
        pair_comp = comp[self.pairs[:, 0]]
        used = np.unique(pair_comp)  # components with a pair, by smallest row label
        sizes = np.bincount(pair_comp, minlength=comp.max() + 1)[used]
        # contiguous runs of components with about n_pairs / n_blocks pairs each
        edges = np.searchsorted(np.cumsum(sizes), np.arange(1, n_blocks) * self.n_pairs / n_blocks)
        block_of_comp = np.zeros(comp.max() + 1, dtype=np.int64)
        block_of_comp[used] = np.searchsorted(edges, np.arange(used.shape[0]), side="right")
        pair_block = block_of_comp[pair_comp]
        out = []
        for k in np.unique(pair_block):
            sel = np.flatnonzero(pair_block == k)
            rows, inv = np.unique(self.pairs[sel].ravel(), return_inverse=True)
            inv = inv.reshape(-1, 2).astype(np.int64)
            out.append(
                _PairState(
                    rows.astype(np.int64), inv[:, 0].copy(), inv[:, 1].copy(), self.weights[sel]
                )
            )
        return out

    def _make_state(self) -> _PairState:
        """The whole feedback as one started block."""
        blocks = self._blocks(1)
        _start_blocks(blocks)
        return blocks[0]

    def rloss(self, scores: ArrayLike, tie_weight: float = 1.0) -> float:
        """D-weighted fraction of pairs with ``scores[j] < scores[i]``.

        Ties count ``tie_weight``.
        """
        s = check_scores(scores, name="scores", n_samples=self.n_samples)
        d = self.weights / self.weights.sum()
        s0 = s[self.pairs[:, 0]]
        s1 = s[self.pairs[:, 1]]
        return float(np.sum(d * ((s1 < s0) + tie_weight * (s1 == s0))))

    def __repr__(self) -> str:
        return f"PairFeedback(n_pairs={self.n_pairs}, n_samples={self.n_samples})"


class LayeredFeedback:
    """Graded labels per query: within a query, every higher grade above every lower one.

    Every crucial pair (same query, different grades) gets weight ``c_q``. Queries with a
    single grade have no crucial pair and are skipped for training.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Grades (any finite numbers; only their order within a query matters).
    qid : array-like of shape (n_samples,), default=None
        Query id of each row, in any order (ints or strings); None = one query.
    normalize : {"query", "pair"}, default="query"
        ``"query"``: each query with a crucial pair gets total mass ``1 / n_queries``, spread
        evenly over its pairs, so training weighs queries as per-query metrics (NDCG, MAP)
        do. ``"pair"``: every crucial pair has the same weight globally (the paper's
        ``D = Phi / sum Phi``, and RankLib's), so queries with many pairs dominate. The
        default was chosen on LETOR 4.0 MQ2008, 5 folds (``benchmarks/letor.py``, see
        docs/benchmarks.md): the two are within noise of each other, and ``"query"`` was
        ahead on test MAP in 4 of 5 settings and gave the best setting overall.

    Examples
    --------
    >>> import rankboost as rb
    >>> fb = rb.LayeredFeedback([0, 1, 2, 0, 0], qid=[1, 1, 1, 2, 2])
    >>> fb.n_pairs, fb.n_queries_with_pairs
    (3, 1)
    """

    _binary_only = False

    def __init__(
        self, y: ArrayLike, qid: ArrayLike | None = None, *, normalize: str = "query"
    ) -> None:
        yv = check_labels(y, name="y")
        if self._binary_only:
            values = np.unique(yv)
            if not np.isin(values, (0.0, 1.0)).all():
                raise ValueError(
                    "y must contain only 0 and 1 for BipartiteFeedback; got values "
                    f"{values[:10].tolist()}. Use LayeredFeedback for graded labels."
                )
        if normalize not in ("pair", "query"):
            raise ValueError(f"normalize must be 'pair' or 'query'; got {normalize!r}.")
        codes = check_qid(qid, yv.shape[0])
        n = yv.shape[0]
        order = np.lexsort((yv, codes)).astype(np.int64)  # by query, then grade, then row
        qs = codes[order]
        ys = yv[order]
        new_q = np.ones(n, dtype=bool)
        new_q[1:] = qs[1:] != qs[:-1]
        new_l = new_q.copy()
        new_l[1:] |= ys[1:] != ys[:-1]
        block = np.cumsum(new_l) - 1  # (query, level) block of each sorted row
        n_queries = int(codes.max()) + 1 if n else 0
        block_q = qs[new_l]
        first_block = np.searchsorted(block_q, np.arange(n_queries))
        k_q = np.bincount(block_q, minlength=n_queries)
        block_count = np.bincount(block)
        # rows of lower levels in the same query, per block
        cum = np.cumsum(block_count) - block_count
        below = cum - cum[first_block[block_q]]
        pairs_q = np.bincount(block_q, block_count * below, minlength=n_queries)

        self.y = yv
        self.qid = qid
        self.normalize = normalize
        self.n_samples = n
        self._codes = codes
        self.pairs_per_query = pairs_q
        self.n_pairs = int(pairs_q.sum())
        self.n_queries = n_queries
        self.n_queries_with_pairs = int(np.count_nonzero(k_q >= 2))
        if self.n_pairs == 0:
            raise ValueError(
                "y has no crucial pair: every query has a single grade, so there is nothing "
                "to rank. Check y and qid (each query needs at least two different grades)."
            )
        # support: rows of queries with at least two grades, grouped by query
        keep_q = k_q >= 2
        keep_rows = keep_q[qs]
        self._rows = order[keep_rows]
        self._level = (block - first_block[qs])[keep_rows].astype(np.int64)
        sizes = np.bincount(qs[keep_rows], minlength=n_queries)[keep_q]
        self._qstart = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self._lstart = np.concatenate([[0], np.cumsum(k_q[keep_q])]).astype(np.int64)
        self._pairs_q = pairs_q[keep_q]
        if normalize == "pair":
            c = np.full(sizes.shape[0], 1.0 / self.n_pairs)
        else:
            c = 1.0 / (self.n_queries_with_pairs * self._pairs_q)
        self._log_c = np.log(c)  # the same as _fix_normalisers gives one block

    def _blocks(self, n_blocks: int = 1) -> list[_LayeredState]:
        """The queries with a crucial pair split into at most ``n_blocks`` blocks.

        Each block holds whole queries, contiguous in the internal (query code) order, with
        about the same number of rows. Not normalised yet (:func:`_start_blocks`).
        """
        n_q = self._qstart.shape[0] - 1
        if n_blocks == 1:
            cuts = np.array([0, n_q])
        else:
            target = np.arange(1, n_blocks) * (self._qstart[-1] / n_blocks)
            inner = np.searchsorted(self._qstart, target)
            cuts = np.unique(np.concatenate([[0], np.clip(inner, 1, n_q - 1), [n_q]]))
            cuts = cuts[(cuts >= 0) & (cuts <= n_q)]
        out = []
        for q0, q1 in zip(cuts[:-1], cuts[1:], strict=True):
            r0, r1 = self._qstart[q0], self._qstart[q1]
            l0 = self._lstart[q0]
            out.append(
                _LayeredState(
                    self._rows[r0:r1],
                    self._level[r0:r1],
                    self._qstart[q0 : q1 + 1] - r0,
                    self._lstart[q0 : q1 + 1] - l0,
                    self._pairs_q[q0:q1],
                    self.normalize,
                )
            )
        return out

    def _make_state(self) -> _LayeredState:
        """The whole feedback as one started block."""
        blocks = self._blocks(1)
        _start_blocks(blocks)
        return blocks[0]

    def rloss(self, scores: ArrayLike, tie_weight: float = 1.0) -> float:
        """D-weighted fraction of crucial pairs misordered by ``scores``.

        Ties count ``tie_weight``: 1 in the training loss of the theorem, 1/2 in expectation
        under random tie-breaking. O(n log n) per query.
        """
        s = check_scores(scores, name="scores", n_samples=self.n_samples)
        errors = level_pair_errors(
            np.ascontiguousarray(s[self._rows]), self._level, self._qstart, self._lstart,
            tie_weight,
        )  # fmt: skip
        return float(np.sum(np.exp(self._log_c) * errors))

    def with_sample_weight(self, sample_weight: ArrayLike | None) -> LayeredFeedback | PairFeedback:
        """Weigh rows as multiplicities: ``Phi(x0, x1) = w(x0) w(x1)``.

        Exactly as if each row were repeated ``w`` times (with ``normalize="query"`` each
        query keeps total mass ``1 / n_queries``); the returned feedback carries the
        weights as ``sample_weight``, so that training also weighs the quantile candidate
        thresholds by them (:meth:`rankboost.binning.BinMapper.fit`). None or a constant
        weight change nothing (a constant factor cancels out of ``D``) and return ``self``.
        The O(n) layered engine has no row weights, so non-constant weights list the
        crucial pairs explicitly as a :class:`PairFeedback` (O(pairs) memory and time per
        round; refused beyond ``MAX_WEIGHTED_PAIRS``).

        Parameters
        ----------
        sample_weight : array-like of shape (n_samples,) or None
            Non-negative row weights; rows of weight 0 take part in no pair.

        Returns
        -------
        feedback : LayeredFeedback or PairFeedback

        Examples
        --------
        >>> import rankboost as rb
        >>> fb = rb.LayeredFeedback([0, 1, 2], qid=[1, 1, 1])
        >>> fb.with_sample_weight([1, 1, 1]) is fb
        True
        >>> pf = fb.with_sample_weight([1.0, 2.0, 0.0])
        >>> pf.pairs.tolist(), pf.weights.tolist()
        ([[0, 1]], [1.0])
        """
        if sample_weight is None:
            return self
        w = np.asarray(sample_weight, dtype=np.float64)
        if w.ndim != 1 or w.shape[0] != self.n_samples:
            raise ValueError(
                f"sample_weight must be 1-D with one weight per row ({self.n_samples}); got "
                f"shape {w.shape}."
            )
        finite = bool(np.isfinite(w).all())
        if _constant_row_weights(float(w.min()), float(w.max()), finite):
            return self
        return self._weighted_pairs(w)

    def _weighted_pairs(self, w: NDArray[np.float64]) -> PairFeedback:
        """The crucial pairs listed with ``Phi = w(x0) w(x1)`` (``w`` checked by the caller)."""
        if self.n_pairs > MAX_WEIGHTED_PAIRS:
            raise ValueError(
                f"sample_weight needs the {self.n_pairs} crucial pairs listed explicitly, more "
                f"than MAX_WEIGHTED_PAIRS={MAX_WEIGHTED_PAIRS}; fit without sample_weight, or "
                "train on fewer or smaller queries."
            )
        y, codes = self.y, self._codes
        order = np.lexsort((y, codes))
        starts = np.flatnonzero(np.r_[True, codes[order][1:] != codes[order][:-1], True])
        pairs, weights = [], []
        for a, b in zip(starts[:-1], starts[1:], strict=True):  # one numpy step per query
            rows = order[a:b]
            lo, hi = np.nonzero(y[rows][:, None] < y[rows][None, :])
            phi = w[rows[lo]] * w[rows[hi]]
            keep = phi > 0
            if not keep.any():
                continue
            pairs.append(np.column_stack([rows[lo[keep]], rows[hi[keep]]]))
            phi = phi[keep]
            weights.append(phi / phi.sum() if self.normalize == "query" else phi)
        if not pairs:
            raise ValueError(
                "sample_weight leaves no crucial pair with a positive weight: every query "
                "needs two rows of different grades with sample_weight > 0."
            )
        out = PairFeedback(np.concatenate(pairs), np.concatenate(weights), n_samples=y.shape[0])
        out.sample_weight = w  # the bins weigh the rows too (Booster: BinMapper.fit)
        return out

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(n_samples={self.n_samples}, n_queries={self.n_queries}, "
            f"n_pairs={self.n_pairs}, normalize={self.normalize!r})"
        )


class BipartiteFeedback(LayeredFeedback):
    """Labels in {0, 1} per query: every 1 above every 0 (RankBoost.B, paper section 3.3).

    The two-level case of :class:`LayeredFeedback`: the factorisation
    ``D(x0, x1) = w_q v(x0) v(x1)`` of the paper is the layered one with K = 2, so the same
    O(n) kernels run it.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        1 = relevant (preferred), 0 = not.
    qid : array-like of shape (n_samples,), default=None
        Query id per row, any order; None = one query.
    normalize : {"query", "pair"}, default="query"
        See :class:`LayeredFeedback`.

    Examples
    --------
    >>> import rankboost as rb
    >>> rb.BipartiteFeedback([1, 0, 0, 1], qid=["a", "a", "b", "b"]).n_pairs
    2
    """

    _binary_only = True
