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

This module holds what the user declares. The engine's training state on these rows (the
blocks the booster drives, their log-space sums and the two-phase normalisation) is
:mod:`rankboost._blocks`'; each class builds its blocks with ``_blocks(n_blocks)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._blocks import LayeredState, PairState, start_blocks
from ._kernels.pairwise import level_pair_errors
from ._validation import check_labels, check_qid, check_scores
from .params import check_param

__all__ = ["MAX_WEIGHTED_PAIRS", "BipartiteFeedback", "LayeredFeedback", "PairFeedback"]

#: :meth:`LayeredFeedback.with_sample_weight` lists the crucial pairs when the row weights
#: are not constant; beyond this many pairs it refuses instead of exhausting memory.
MAX_WEIGHTED_PAIRS = 20_000_000


# --------------------------------------------------------------------------- public classes


def constant_row_weights(lo: float, hi: float, finite: bool) -> bool:
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


class _OneBlock:
    """``_make_state`` of a feedback that ``_blocks(n)`` splits into blocks of its pairs."""

    def _blocks(self, n_blocks: int = 1) -> list[Any]:
        raise NotImplementedError

    def _make_state(self) -> Any:
        """The whole feedback as one started block."""
        blocks = self._blocks(1)
        start_blocks(blocks)
        return blocks[0]


class PairFeedback(_OneBlock):
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

    def _blocks(self, n_blocks: int = 1) -> list[PairState]:
        """The pairs split into at most ``n_blocks`` blocks that share no row.

        A block holds whole connected components of the pair graph (rows linked by a pair),
        so no pair crosses blocks; components are dealt to blocks in order of their first
        row, balancing the number of pairs. Not normalised yet (:func:`start_blocks`).
        """
        if n_blocks == 1:
            rows, inv = np.unique(self.pairs.ravel(), return_inverse=True)
            inv = inv.reshape(-1, 2).astype(np.int64)
            return [
                PairState(rows.astype(np.int64), inv[:, 0].copy(), inv[:, 1].copy(), self.weights)
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
                PairState(
                    rows.astype(np.int64), inv[:, 0].copy(), inv[:, 1].copy(), self.weights[sel]
                )
            )
        return out

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


class LayeredFeedback(_OneBlock):
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
        check_param("normalize", normalize, type(self).__name__)  # the one definition
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
        self._log_c = np.log(c)  # the same as fix_normalisers gives one block

    def _blocks(self, n_blocks: int = 1) -> list[LayeredState]:
        """The queries with a crucial pair split into at most ``n_blocks`` blocks.

        Each block holds whole queries, contiguous in the internal (query code) order, with
        about the same number of rows. Not normalised yet (:func:`start_blocks`).
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
                LayeredState(
                    self._rows[r0:r1],
                    self._level[r0:r1],
                    self._qstart[q0 : q1 + 1] - r0,
                    self._lstart[q0 : q1 + 1] - l0,
                    self._pairs_q[q0:q1],
                    self.normalize,
                )
            )
        return out

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
        if constant_row_weights(float(w.min()), float(w.max()), finite):
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
