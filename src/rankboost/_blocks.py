"""The block contract and the two block states: the seam between the booster and its data.

A *block* holds training rows no crucial pair links to another block (whole queries, or
whole connected groups of rows for explicit pairs) and the round's state on them. The
contract is :class:`Block` below, written once; :class:`rankboost.Booster` (and a Dask
worker, :mod:`rankboost.dask._block`) drive blocks only through it. **Every value a block
reports is this block's part of a global quantity.** Two states implement it:

* :class:`LayeredState`: whole queries of graded (or bipartite) feedback, O(n + K) per query
  and round by the factorisation of :mod:`rankboost._kernels.layered`;
* :class:`PairState`: explicit pairs (paper section 3.1), O(|Phi|) per round.

Internally, the distribution at round ``t`` is kept through the current scores ``H_t`` of
the block's rows: ``D_t(x0, x1) = D(x0, x1) exp(H_t(x0) - H_t(x1)) / M_t`` (paper sections
3.1 and 3.3: the updates multiply by ``exp(alpha h(x0)) exp(-alpha h(x1))``), with every sum
kept in log space, so ``Z_t = M_t / M_{t-1}`` and ``prod Z_t = M_T / M_0`` hold by
construction. The initial distribution is normalised in two phases over all blocks
(:func:`fix_normalisers`, :func:`start_blocks`); the log-space sums of the blocks' parts are
:func:`log_sum_of`.

What the user declares (the crucial pairs, the grades and queries) is
:mod:`rankboost.feedback`'s; its classes build these states (``feedback._blocks(n)``).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray
from scipy.special import logsumexp

from ._kernels.layered import (
    layered_binary_update,
    layered_log_mass,
    layered_potential,
    layered_refresh,
)
from ._kernels.pairwise import reorder, sorted_level_errors
from ._kernels.split_sums import code_order, layered_factors, layered_split_sums, pair_split_sums

__all__ = [
    "Block",
    "FeedbackState",
    "LayeredState",
    "PairState",
    "fix_normalisers",
    "layered_log_c",
    "log_sum",
    "log_sum_of",
    "log_weights",
    "pair_log_w",
    "start_blocks",
]


# --------------------------------------------------------------------------- the contract


@runtime_checkable
class Block(Protocol):
    """What :class:`rankboost.Booster` asks of a block of training rows: the engine's seam.

    A block holds whole queries (layered and bipartite feedback) or whole connected groups
    of rows (explicit pairs), so no crucial pair crosses blocks. Every value is this block's
    part of a global quantity: the parts of all blocks add up
    (log masses by log-sum-exp) to the whole training set's, and with a single block every
    value is bit-identical to a whole-data computation. The owner (the booster, or a Dask
    worker for a remote block) drives the life cycle:

    1. phase 1 of the normalisation: the owner reads every block's counts
       (``pairs_per_query`` or ``weights``) and fixes the initial distribution from the
       totals (:func:`fix_normalisers`), optionally a prior (:meth:`set_prior`);
    2. :meth:`start` returns the block's initial log mass; the owner sums them and gives
       every block the global one (:meth:`set_log_total`; :func:`start_blocks` does 1-2);
    3. every round, the statistics (:meth:`scaled_potential`, :meth:`binary_stats`,
       :meth:`log_slopes_at`, :meth:`split_sums`) are the block's parts under the global
       ``D_t``; :meth:`update` applies ``H <- H + alpha h`` and returns the block's new log
       mass; the owner settles ``Z_t = exp(new global - old global)`` and calls
       :meth:`set_log_total` on every block.

    ``D_t(x0, x1) = D(x0, x1) exp(H(x0) - H(x1)) / M_t`` is kept through the scores ``H``
    of the block's rows, every sum in log space.
    """

    #: The block's rows (indices into X), in the block's internal order.
    rows: NDArray[np.int64]
    #: The rows' bin codes, (n_features, n), set by the owner once the bins are fixed.
    codes: NDArray[Any]
    #: The current scores of the block's rows: the rounds so far, plus a prior ``F0`` (up to
    #: a constant per query, or per block for pairs, which changes no ``D_t``).
    H: NDArray[np.float64]
    #: The global log mass ``log M_t`` the block's parts are relative to.
    log_total: float

    def set_prior(self, f0: NDArray[np.float64]) -> None:
        """Start from scores ``F0`` of the block's rows instead of 0 (before :meth:`start`)."""
        ...

    def start(self) -> float:
        """The block's part of the initial log mass (after the normalisers are fixed)."""
        ...

    def set_log_total(self, log_total: float) -> None:
        """Take the global log mass (after the start, and after every update)."""
        ...

    def scaled_potential(self) -> tuple[NDArray[np.float64], float]:
        """``(p, s)`` with the block's rows' potential ``pi = s p`` under the global ``D_t``."""
        ...

    def potential(self) -> NDArray[np.float64]:
        """The block's rows' potential ``pi(x) = sum_x' D_t(x', x) - D_t(x, x')`` (new array)."""
        ...

    def binary_stats(self, h: NDArray[np.float64]) -> tuple[float, float, float]:
        """The block's part of ``(W_-, W_0, W_+)`` of a binary ranker's values ``h``."""
        ...

    def log_total_at(self, h: NDArray[np.float64], alpha: float) -> float:
        """The block's part of ``log M`` at scores ``H + alpha h``."""
        ...

    def log_slopes_at(self, h: NDArray[np.float64], alpha: float) -> tuple[float, float]:
        """The block's parts of ``(log S_0, log S_1)`` (``dM/dalpha = S_0 - S_1``) at H + a h."""
        ...

    def split_sums(self, out: NDArray[np.float64]) -> None:
        """The block's part of ``W_-, W_+`` of every threshold candidate, into ``out``."""
        ...

    def update(self, h: NDArray[Any], alpha: float, binary: bool = False) -> float:
        """Apply ``H <- H + alpha h``; return the block's part of the new log mass."""
        ...

    def rloss(self, tie_weight: float = 1.0) -> float:
        """The block's part of the D-weighted fraction of crucial pairs misordered by ``H``."""
        ...


# --------------------------------------------------------------------------- the states


def log_weights(h: NDArray[np.float64]) -> NDArray[np.float64]:
    """Log h with log 0 = -inf, without a divide-by-zero warning."""
    out = np.full(h.shape[0], -np.inf)
    pos = h > 0
    out[pos] = np.log(h[pos])
    return out


def log_sum(x: NDArray[np.float64]) -> float:
    """log(sum(exp(x))) of per-query log masses (scipy's logsumexp costs ~0.5 ms a call)."""
    top = float(np.max(x))
    if top == -np.inf:
        return top
    return top + float(np.log(np.sum(np.exp(x - top))))


#: A binary update scales the stored exp(+-H) by per-level factors (one rounding per round);
#: every this many rounds they are recomputed from H, so the drift stays ~1e-14.
EXACT_EVERY = 64


class LayeredState:
    """One block of layered feedback: whole queries, their support rows grouped by query.

    A block holds what a round needs of its queries (:mod:`rankboost._kernels.layered`): the
    scores ``H`` of its rows, their level sums and potential, and the kept order by ``H``.
    Everything it reports is its *part* of a global quantity, so the parts of several blocks
    add up:

    * ``pairs_per_query`` (phase 1 of the normalisation): the owner fixes every query's pair
      weight ``c_q`` from the counts of all blocks (:func:`fix_normalisers`), then calls
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
        return log_sum(self._log_mass_q)

    def _log_mass(
        self, G: NDArray[np.float64], wa: NDArray[np.float64], wb: NDArray[np.float64]
    ) -> float:
        out = np.empty(self._log_mass_q.shape[0])
        layout = (self.level, self.qstart, self.lstart, self.log_c)
        layered_log_mass(G, wa, wb, layout, (self._scratch_a, self._scratch_b), out)
        return log_sum(out)

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
        lh = log_weights(h)
        l1h = log_weights(1.0 - h)
        return self._log_mass(G, lh, l1h), self._log_mass(G, l1h, lh)

    def binary_stats(self, h: NDArray[np.float64]) -> tuple[float, float, float]:
        """The block's part of (W_-, W_0, W_+) of a binary ranker under D_t."""
        on = log_weights(h)
        off = log_weights(1.0 - h)
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
        if binary and alpha != 0.0 and self._since_exact < EXACT_EVERY:
            # one sweep per query: H, level sums, the next potential, kept order, errors
            layout = (self.level, self.qstart, self.lstart, self.log_c)
            layered_binary_update(
                h, float(alpha), self.log_total, layout, self._row_state, self._level_state,
                self._factors, self._scratch, self._out,
            )  # fmt: skip
            new = log_sum(self._log_mass_q)
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
        layout = (self.level, self.qstart, self.lstart, self.log_c)
        layered_factors(self.H, self.log_total, layout, factors)
        layered_split_sums(self.codes, order, layout, factors, out)

    def rloss(self, tie_weight: float = 1.0) -> float:
        """The block's part of the D-weighted fraction of pairs misordered by ``H``."""
        if tie_weight == 1.0 and self._errors_fresh:
            errors = self._errors  # counted during the last binary update
        else:
            errors = sorted_level_errors(
                self.H, self.level, self.order, self.qstart, self.lstart, tie_weight
            )
        return float(np.sum(np.exp(self.log_c) * errors))


class PairState:
    """One block of explicit pairs (paper section 3.1): rows and the pairs among them.

    As :class:`LayeredState`: the owner fixes the initial distribution from every block's
    weights (``log_w = log(Phi / sum Phi)``, :func:`fix_normalisers`), then the block
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
            float(logsumexp(base + log_weights(h0 * (1.0 - h1)))),
            float(logsumexp(base + log_weights((1.0 - h0) * h1))),
        )

    def binary_stats(self, h: NDArray[np.float64]) -> tuple[float, float, float]:
        d = self._pair_weights()
        diff = h[self.i0] - h[self.i1]
        return float(d[diff < 0].sum()), float(d[diff == 0].sum()), float(d[diff > 0].sum())

    def split_sums(self, out: NDArray[np.float64]) -> None:
        """The block's part of ``W_-, W_+`` of every threshold candidate, into ``out``."""
        pair_split_sums(self.codes, (self.i0, self.i1, self._pair_weights()), out)

    def update(self, h: NDArray[Any], alpha: float, binary: bool = False) -> float:
        if alpha != 0.0:
            self.H += alpha * h
        return float(logsumexp(self.log_w + self.H[self.i0] - self.H[self.i1]))

    def rloss(self, tie_weight: float = 1.0) -> float:
        d1 = np.exp(self.log_w - self.log_w_total)
        s0 = self.H[self.i0]
        s1 = self.H[self.i1]
        return float(np.sum(d1 * ((s1 < s0) + tie_weight * (s1 == s0))))


FeedbackState = LayeredState | PairState


def layered_log_c(counts: list[NDArray[np.int64]], normalize: str) -> list[NDArray[np.float64]]:
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


def pair_log_w(weights: list[NDArray[np.float64]]) -> list[NDArray[np.float64]]:
    """Every block's ``log D(x0, x1)`` from every block's pair weights: ``Phi / sum Phi``."""
    total = 0.0
    for w in weights:
        total += float(w.sum())
    return [np.log(w / total) for w in weights]


def fix_normalisers(blocks: list[LayeredState] | list[PairState]) -> None:
    """Phase 2 of the normalisation: the initial distribution from every block's counts."""
    pair_blocks = [b for b in blocks if isinstance(b, PairState)]
    if pair_blocks:
        logs = pair_log_w([pb.weights for pb in pair_blocks])
        for pb, log_w in zip(pair_blocks, logs, strict=True):
            pb.log_w = log_w
        return
    layered = [b for b in blocks if isinstance(b, LayeredState)]
    modes = {b.normalize for b in layered}
    if len(modes) != 1:
        raise ValueError(f"blocks disagree on normalize: {sorted(modes)}; use one mode.")
    logs = layered_log_c([lb.pairs_per_query for lb in layered], modes.pop())
    for lb, log_c in zip(layered, logs, strict=True):
        lb.log_c = log_c


def start_blocks(blocks: list[LayeredState] | list[PairState]) -> float:
    """Fix the normalisers, start every block and give each the global log mass; return it."""
    fix_normalisers(blocks)
    log_total = log_sum_of([b.start() for b in blocks])
    pair_blocks = [b for b in blocks if isinstance(b, PairState)]
    # D's own mass (without a prior's factors: log_total then differs), its normaliser in rloss
    log_d = log_sum_of([b.log_w_total for b in pair_blocks]) if pair_blocks else 0.0
    for b in blocks:
        b.set_log_total(log_total)
        if isinstance(b, PairState):
            b.log_w_total = log_d
    return log_total


def log_sum_of(parts: list[float]) -> float:
    """Global log mass from the blocks' log masses (one block: that value, bit for bit)."""
    if len(parts) == 1:
        return parts[0]
    return log_sum(np.asarray(parts, dtype=np.float64))
