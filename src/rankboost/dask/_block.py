"""The worker side of distributed training: one Dask partition as one query block.

A :class:`PartitionBlock` lives on a worker as a Dask actor. It holds its partition's rows
(features, and labels + query ids or explicit pairs), builds its feedback block
(:mod:`rankboost.feedback`: whole queries, or rows linked by pairs), its bin codes once the
client has fixed the global bins, and the block's training state. Every method returns only
small, row-count-free things: per-query pair counts (once), per-feature value counts (once),
the block's log mass, its (d, n_codes) histograms and its part of the rloss; nothing of size
n ever leaves the worker.

With ``push=p > 1`` (the P-Norm Push, :mod:`rankboost.push`) the block also holds a
:class:`rankboost.push.PushBlock` (its scores and per-row parts of ``R_p``): it reports its
``log R_p`` after each step and its ``(log R_p, slope, curvature)`` at each trial alpha of
the line search, a few floats per block.

The state after ``t`` rounds is a function of the rows and of the rounds so far (each round's
ranker, alpha and the global normaliser before it), so a lost block is rebuilt by replaying
the rounds on the same rows (:meth:`PartitionBlock.replay`): the same floating-point
operations in the same order, hence the same bits.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._kernels import numba_threads
from .._kernels.histogram import potential_histograms
from ..binning import BinMapper
from ..feedback import BipartiteFeedback, LayeredFeedback, PairFeedback
from ..push import PushBlock, combine
from ..weak_rankers import Spec, candidate_values

__all__ = ["PartitionBlock", "WorkerBlocks", "merge_block_value_counts", "sum_parts"]


class PartitionBlock:
    """One partition's feedback block and bin codes (runs on a worker, as an actor).

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features)
        The partition's features (NaN = abstain).
    y, qid : ndarray of shape (n_rows,), default=None
        Labels and query ids (layered or bipartite feedback). Every query must be whole in
        this partition (the client checks it).
    pairs : ndarray of shape (n_pairs, 2), default=None
        Explicit pairs as row numbers *of this partition*; ``weights`` their weights.
    kind : {"layered", "bipartite", "pairs"}
        The feedback kind.
    normalize : {"query", "pair"}
        As :class:`rankboost.LayeredFeedback`.
    sample_weight : ndarray of shape (n_rows,), default=None
        Row multiplicities, not constant over the whole data (the client checks): the
        block lists its crucial pairs with ``Phi = w(x0) w(x1)`` as
        :meth:`rankboost.LayeredFeedback.with_sample_weight` does.
    init_score : ndarray of shape (n_rows,), default=None
        A prior ``F0`` of the partition's rows (finite, the client checks): the block starts
        from ``H = F0`` (:meth:`rankboost._blocks.Block.set_prior`, SPEC 7.2), as
        :class:`rankboost.Booster` does with ``init_score``.
    push : float, default=1.0
        The P-Norm Push's ``p`` (:meth:`start_push` builds its state; 1 is RankBoost).
    """

    def __init__(
        self,
        X: NDArray[np.float64],
        y: NDArray[Any] | None = None,
        qid: NDArray[Any] | None = None,
        pairs: NDArray[np.int64] | None = None,
        weights: NDArray[np.float64] | None = None,
        *,
        kind: str = "layered",
        normalize: str = "query",
        sample_weight: NDArray[np.float64] | None = None,
        init_score: NDArray[np.float64] | None = None,
        push: float = 1.0,
    ) -> None:
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.kind = kind
        self.state: Any = None
        self.p = float(push)
        self.push: PushBlock | None = None  # built by start_push when p > 1
        self._line: tuple[Spec, Any] | None = None  # the round's line search along h
        # the bins weigh the rows as the pairs do (value_counts)
        self.sample_weight = (
            None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        )
        try:
            if kind == "pairs":
                if pairs is not None and len(pairs):
                    fb: Any = PairFeedback(pairs, weights, n_samples=self.X.shape[0])
                else:
                    fb = None
            else:
                cls = BipartiteFeedback if kind == "bipartite" else LayeredFeedback
                fb = cls(np.asarray(y), qid, normalize=normalize)
                if sample_weight is not None:  # not constant over all rows (client checked)
                    self.kind = "pairs"
                    fb = fb._weighted_pairs(np.asarray(sample_weight, dtype=np.float64))
        except ValueError as exc:
            if "no crucial pair" not in str(exc):
                raise
            if sample_weight is not None:
                self.kind = "pairs"
            fb = None  # a partition without a crucial pair takes part in nothing
        if fb is not None:
            self.state = fb._blocks(1)[0]
            if init_score is not None:  # a prior: H = F0 before start (the one-machine call)
                f0 = np.asarray(init_score, dtype=np.float64)
                self.state.set_prior(np.ascontiguousarray(f0[self.state.rows]))
        self.binner: BinMapper | None = None
        self.n_codes = 1

    # ------------------------------------------------------------------ setup
    def counts(self) -> tuple[str, NDArray[Any]]:
        """Phase 1 of the normalisation: the block's pair weights or pairs per query.

        Returns ``("pairs", weights)`` or ``("layered", pairs per query)``.
        """
        if self.kind == "pairs":
            return "pairs", (np.empty(0) if self.state is None else self.state.weights)
        if self.state is None:
            return "layered", np.empty(0, dtype=np.int64)
        return "layered", self.state.pairs_per_query

    def value_counts(self) -> list[tuple[NDArray[np.float64], NDArray[Any]]]:
        """Per feature: the distinct non-NaN values of the training rows and their counts.

        With ``sample_weight`` the counts are the rows' weights summed per value (float), as
        :meth:`rankboost.binning.BinMapper.fit` weighs them on one machine.
        """
        out = []
        d = self.X.shape[1]
        rows = self.state.rows if self.state is not None else np.empty(0, dtype=np.int64)
        w = None if self.sample_weight is None else self.sample_weight[rows]
        for i in range(d):
            col = self.X[rows, i]
            ok = ~np.isnan(col)
            if w is None:
                values, counts = np.unique(col[ok], return_counts=True)
                out.append((values, counts.astype(np.int64)))
            else:
                values, inv = np.unique(col[ok], return_inverse=True)
                out.append((values, np.bincount(inv, weights=w[ok], minlength=values.shape[0])))
        return out

    def set_bins(
        self, cuts: list[NDArray[np.float64]], has_values: NDArray[np.bool_], thresholds: Any
    ) -> int:
        """Take the global bins and code the training rows; return the number of rows."""
        self.binner = BinMapper.from_cuts(cuts, has_values, thresholds)
        self.n_codes = self.binner.n_codes
        if self.state is not None:
            self.state.codes = self.binner.transform(self.X, self.state.rows)
        return 0 if self.state is None else int(self.state.rows.shape[0])

    def start(self, norm: Any) -> float:
        """Phase 2 of the normalisation: take the global normaliser; return the log mass.

        ``norm`` is ``log c_q`` per query (layered) or the total pair weight (pairs); the
        client sums the blocks' masses and calls :meth:`begin`.
        """
        if self.state is None:
            return -np.inf
        if self.kind == "pairs":
            self.state.log_w = np.log(self.state.weights / norm)
        else:
            self.state.log_c = norm
        return float(self.state.start())

    def own_mass(self) -> float:
        """The block's part of ``D``'s own log mass, without a prior's factors (pairs)."""
        if self.state is None or self.kind != "pairs":
            return -np.inf
        return float(self.state.log_w_total)  # set by start()

    def start_push(self, log_mass: float) -> float:
        """The P-Norm Push's state once ``D``'s global log mass is known; return ``log R_p``.

        ``log_mass`` is the sum of :meth:`start`'s masses (the rloss's normaliser for
        explicit pairs); the returned value is the block's part of ``log R_p(F_0)``.
        """
        if self.state is None:
            return -np.inf
        self.state.set_log_total(log_mass)
        if self.kind == "pairs":
            self.state.log_w_total = log_mass
        self.push = PushBlock(self.state, self.p)
        return self.push.refresh()

    def begin(self, log_total: float, log_d: float | None = None) -> NDArray[np.float64]:
        """The global initial mass is known: return the first round's histograms.

        ``log_d`` is ``D``'s own global log mass (pairs, the rloss's normaliser); None:
        ``log_total``, which it equals without a prior. With the push, ``log_total`` is the
        global ``log R_p(F_0)``.
        """
        if self.state is None:
            return self._zeros()
        if self.push is not None:
            return self.push_histograms(log_total)
        self.state.set_log_total(log_total)
        if self.kind == "pairs":
            self.state.log_w_total = log_total if log_d is None else log_d
        return self._hist()

    # ------------------------------------------------------------------ a round
    def _zeros(self) -> NDArray[np.float64]:
        return np.zeros((self.X.shape[1], self.n_codes))

    def _hist(self) -> NDArray[np.float64]:
        """Histograms of the potential *relative to the current* ``log_total`` (unscaled)."""
        out = np.empty((self.X.shape[1], self.n_codes))
        pi, _ = self.state.scaled_potential()  # relative to log_total (see module doc)
        potential_histograms(self.state.codes, pi, out, 1.0)
        return out

    def push_histograms(self, log_ref: float) -> NDArray[np.float64]:
        """Histograms of the push potential computed with ``log R_p = log_ref``.

        The potential is linear in ``exp(-log R_p)``: the caller scales the sum by
        ``exp(log_ref - log R_p)`` once the global value is known.
        """
        if self.state is None or self.push is None:
            return self._zeros()
        out = np.empty((self.X.shape[1], self.n_codes))
        potential_histograms(self.state.codes, self.push.potential(log_ref), out, 1.0)
        return out

    def push_line(self, spec: Spec, alpha: float) -> tuple[float, float, float]:
        """The block's ``(log R_p, slope, curvature)`` at ``F + alpha h`` (the line search).

        The first call of a round prepares the line along ``h`` (for a threshold ranker on
        layered feedback, the O(n) split of the level sums); the next are O(K) or O(n).
        """
        if self.state is None or self.push is None:
            return -np.inf, 0.0, 0.0
        if self._line is None or self._line[0] != spec:
            self._line = (spec, self.push.line(np.asarray(self._h(spec))))
        return self._line[1](alpha)

    def push_split(self, spec: Spec) -> NDArray[np.float64] | None:
        """The block's level sums split by a threshold ranker (columns 0-3), or None.

        :meth:`rankboost.push.PushBlock.split_sums`: K x 4 floats, from which the client
        searches alpha without a round trip per evaluation. None for explicit pairs.
        """
        if self.state is None or self.push is None:
            return np.empty((0, 4))
        split = self.push.split_sums(np.asarray(self._h(spec)))
        return None if split is None else np.ascontiguousarray(split[:, :4])

    def _h(self, spec: Spec) -> NDArray[Any]:
        if self.binner is None:
            raise RuntimeError("PartitionBlock: set_bins must run before a round")
        return candidate_values(self.state.codes, self.binner, spec)

    def binary_parts(self, spec: Spec, log_total: float) -> tuple[float, float]:
        """The block's part of ``(W_-, W_+)`` under the distribution of mass ``log_total``."""
        if self.state is None:
            return 0.0, 0.0
        self.state.set_log_total(log_total)
        wm, _, wp = self.state.binary_stats(np.asarray(self._h(spec), dtype=np.float64))
        return wm, wp

    def split_sums(self, log_total: float) -> NDArray[np.float64]:
        """The block's split sums of ``W_-, W_+`` per candidate (``criterion="exact_z"``).

        Shape (4, d, n_codes - 1) (:mod:`rankboost._kernels.split_sums`), under the
        distribution of global mass ``log_total``.
        """
        out = np.zeros((4, self.X.shape[1], max(self.n_codes - 1, 0)))
        if self.state is not None:
            self.state.set_log_total(log_total)
            self.state.split_sums(out)
        return out

    def log_slopes(self, spec: Spec, alpha: float) -> tuple[float, float]:
        """The block's ``(log S_0, log S_1)`` of dZ/dalpha at ``alpha`` (line search)."""
        if self.state is None:
            return -np.inf, -np.inf
        h = np.asarray(self._h(spec), dtype=np.float64)
        return self.state.log_slopes_at(h, alpha)

    def step(
        self, log_total: float, spec: Spec, alpha: float, binary: bool
    ) -> tuple[float, NDArray[np.float64], float, float]:
        """Update with ``(h, alpha)``, then the next round's histograms: one round trip.

        ``log_total`` is the global log mass before this round. Returns the block's new log
        mass, its histograms of the next potential relative to ``log_total`` (the client
        scales their sum by ``1 / Z``), its part of the training rloss, and the seconds the
        worker spent (for ``benchmarks/bench_dask.py``).
        """
        start = time.perf_counter()
        if self.state is None:
            return -np.inf, self._zeros(), 0.0, time.perf_counter() - start
        if self.push is not None:  # the histograms follow, from every block's log R_p
            self._line = None
            log_r = self.push.step(self._h(spec), alpha, binary)
            return log_r, self._zeros(), self.push.rloss(), time.perf_counter() - start
        self.state.set_log_total(log_total)
        mass = self.state.update(self._h(spec), alpha, binary=binary)
        hist = self._hist()
        rloss = self.state.rloss(1.0)
        return mass, hist, rloss, time.perf_counter() - start

    def replay(
        self,
        log_total0: float,
        rounds: list[tuple[float, Spec, float, bool]],
        log_d: float | None = None,
    ) -> int:
        """Rebuild the state of a lost block: :meth:`begin`, then every round's :meth:`step`."""
        self.begin(log_total0, log_d)
        for log_total, spec, alpha, binary in rounds:
            self.step(log_total, spec, alpha, binary)
        return len(rounds)


def merge_block_value_counts(
    parts: list[list[tuple[NDArray[np.float64], NDArray[Any]]]],
) -> list[tuple[NDArray[np.float64], NDArray[Any]]]:
    """Per feature, the union of several blocks' (distinct values, counts), counts added."""
    if len(parts) == 1:
        return parts[0]
    out = []
    for i in range(len(parts[0])):
        values = np.concatenate([p[i][0] for p in parts])
        counts = np.concatenate([p[i][1] for p in parts])
        distinct, inv = np.unique(values, return_inverse=True)
        out.append((distinct, np.bincount(inv, weights=counts, minlength=distinct.shape[0])))
    return out


class WorkerBlocks:
    """The blocks of one worker, as one Dask actor.

    Every call runs on each of its blocks and sums what adds up (histograms, rloss, ``W``
    parts, value counts) before it answers, so the client receives one histogram per
    worker, not one per partition (a two-level tree reduction). Per-block log masses come
    back as a list (a few floats), so the global normaliser is summed in partition order.

    Parameters
    ----------
    parts : list of dict
        Per block, the keyword arguments of :class:`PartitionBlock` (its rows' arrays).
    kind, normalize, push
        As :class:`PartitionBlock`.
    """

    def __init__(
        self, parts: list[dict[str, Any]], kind: str, normalize: str, push: float = 1.0
    ) -> None:
        self.threads = _worker_threads()
        self.p = float(push)
        with numba_threads(self.threads):
            self.blocks = [
                PartitionBlock(kind=kind, normalize=normalize, push=push, **p) for p in parts
            ]

    def __getattribute__(self, name: str) -> Any:
        # every call runs numba with the worker's threads, not the machine's cores: two
        # one-thread workers on two cores would otherwise run four numba threads
        attr = object.__getattribute__(self, name)
        if name.startswith("_") or name in ("blocks", "threads", "p") or not callable(attr):
            return attr
        threads = object.__getattribute__(self, "threads")

        def call(*args: Any, **kwargs: Any) -> Any:
            with numba_threads(threads):
                return attr(*args, **kwargs)

        return call

    def counts(self) -> list[tuple[str, NDArray[Any]]]:
        """Every block's :meth:`PartitionBlock.counts`."""
        return [b.counts() for b in self.blocks]

    def value_counts(self) -> list[tuple[NDArray[np.float64], NDArray[Any]]]:
        """The blocks' value counts merged per feature."""
        return merge_block_value_counts([b.value_counts() for b in self.blocks])

    def set_bins(self, cuts: list[NDArray[np.float64]], has_values: Any, thresholds: Any) -> int:
        """Every block takes the global bins; return the rows coded."""
        return sum(b.set_bins(cuts, has_values, thresholds) for b in self.blocks)

    def start(self, norms: list[Any]) -> list[float]:
        """Every block's :meth:`PartitionBlock.start` with its normaliser."""
        return [b.start(n) for b, n in zip(self.blocks, norms, strict=True)]

    def own_masses(self) -> list[float]:
        """Every block's :meth:`PartitionBlock.own_mass`."""
        return [b.own_mass() for b in self.blocks]

    def start_push(self, log_mass: float) -> list[float]:
        """Every block's :meth:`PartitionBlock.start_push`: their ``log R_p`` (a list)."""
        return [b.start_push(log_mass) for b in self.blocks]

    def push_split(self, spec: Spec) -> list[NDArray[np.float64] | None]:
        """Every block's :meth:`PartitionBlock.push_split` (a list)."""
        return [b.push_split(spec) for b in self.blocks]

    def push_line(self, spec: Spec, alpha: float) -> list[tuple[float, float, float]]:
        """Every block's :meth:`PartitionBlock.push_line` (a list, summed by the client)."""
        return [b.push_line(spec, alpha) for b in self.blocks]

    def begin(self, log_total: float, log_d: float | None = None) -> NDArray[np.float64]:
        """The blocks' first histograms, summed."""
        return sum_parts([b.begin(log_total, log_d) for b in self.blocks])

    def binary_parts(self, spec: Spec, log_total: float) -> tuple[float, float]:
        """The blocks' parts of ``(W_-, W_+)``, summed."""
        wm = wp = 0.0
        for b in self.blocks:
            m, p = b.binary_parts(spec, log_total)
            wm += m
            wp += p
        return wm, wp

    def split_sums(self, log_total: float) -> NDArray[np.float64]:
        """The blocks' split sums, summed (one (4, d, n_codes - 1) array per worker)."""
        return sum_parts([b.split_sums(log_total) for b in self.blocks])

    def log_slopes(self, spec: Spec, alpha: float) -> list[tuple[float, float]]:
        """Every block's ``(log S_0, log S_1)``."""
        return [b.log_slopes(spec, alpha) for b in self.blocks]

    def step(
        self, log_total: float, spec: Spec, alpha: float, binary: bool
    ) -> tuple[list[float], NDArray[np.float64], float, float, float]:
        """Every block's :meth:`PartitionBlock.step`.

        Returns their log masses (a list), and their histograms, rloss parts and seconds
        summed, and the log mass the histograms are relative to: ``log_total`` for
        RankBoost; with the push, the worker's own new ``log R_p`` (the sum of its blocks',
        :func:`rankboost.push.combine`): its potential is computed after every block has
        stepped, relative to that, and the client scales it by
        ``exp(worker's - global)`` <= 1, so a large drop of ``R_p`` underflows nothing.
        """
        results = [b.step(log_total, spec, alpha, binary) for b in self.blocks]
        rloss = results[0][2]
        seconds = results[0][3]
        for r in results[1:]:
            rloss += r[2]
            seconds += r[3]
        masses = [r[0] for r in results]
        if self.p == 1.0:
            return masses, sum_parts([r[1] for r in results]), rloss, seconds, log_total
        start = time.perf_counter()
        ref = combine([(float(m), 0.0, 0.0) for m in masses])[0]
        hist = sum_parts([b.push_histograms(ref) for b in self.blocks])
        return masses, hist, rloss, seconds + time.perf_counter() - start, ref

    def replay(
        self,
        log_total0: float,
        rounds: list[tuple[float, Spec, float, bool]],
        log_d: float | None = None,
    ) -> int:
        """Rebuild every block's state from the rounds so far."""
        for b in self.blocks:
            b.replay(log_total0, rounds, log_d)
        return len(rounds)


def _worker_threads() -> int:
    """The threads of the Dask worker this runs on (1 outside a worker)."""
    try:
        from distributed import get_worker

        return max(1, int(get_worker().state.nthreads))
    except (ImportError, ValueError, AttributeError):
        return 1


def sum_parts(hists: list[NDArray[np.float64]]) -> NDArray[np.float64]:
    total = hists[0].copy()
    for h in hists[1:]:
        total += h
    return total
