"""The client side of distributed training: a :class:`~rankboost.Booster` over remote blocks.

:class:`DaskBooster` runs the same round as :class:`rankboost.Booster` (``update()`` is the
very same method): only the steps that touch the blocks go to the workers. Per round:

* the client holds the summed histograms of the current potential (computed by the
  previous round's fused step), chooses the weak ranker and its alpha (``"exact"`` asks the
  blocks for their parts of ``W_-, W_+``: one more round trip; ``"line_search"`` asks for the
  slopes of Z at each trial alpha: one round trip per evaluation of Brent's method, 6 per
  round in ``benchmarks/bench_dask.py``; ``criterion="exact_z"`` asks every worker for its
  summed split sums of ``W_-, W_+`` per candidate, a (4, d, n_codes - 1) array: one more
  round trip; ``alpha="rbplus"`` is refused);
* one ``step`` call per worker (a :class:`WorkerBlocks` actor holding the partitions dealt
  to it) applies the round to each of its blocks (:meth:`PartitionBlock.step`) and
  returns their new log masses and their histograms of the next potential (relative to
  the old mass) and rloss parts summed on the worker; the client sums the workers' parts
  (a two-level tree reduction), takes ``Z`` and scales the histograms by ``1 / Z``.

With ``push > 1`` the client is :class:`rankboost.dask._push.DaskPushBooster`: the same
round on the P-Norm Push's ``R_p`` (its histograms, line search and objective are that
module's hooks: ``_start_objective``, ``_log_sum``, ``_summed_histograms``, ``_rule_alpha``).

Nothing of size n crosses the network after setup: per round and worker, a few floats per
block and one (d, n_codes) histogram. A block whose worker is lost is rebuilt on another
worker from its partition (recomputed by Dask from the graph if its data was lost too) and
the rounds so far (:meth:`PartitionBlock.replay`), then the round goes on: the model is the
one an uninterrupted run gives.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._blocks import layered_log_c, log_sum_of
from ..binning import BinMapper, cuts_from_counts
from ..booster import Booster
from ..params import ParameterError, TrainParams
from ..weak_rankers import CandidateTable, Spec, WeakRanker, candidate_ranker
from ._block import WorkerBlocks, merge_block_value_counts, sum_parts

__all__ = ["DaskBooster"]

logger = logging.getLogger("rankboost.dask")

#: Merge the partitions' exact value counts when they hold at most this many (value,
#: count) pairs in all (16 bytes each); above it ``bins="auto"`` uses the sketch.
MAX_EXACT_VALUES = 1 << 24
#: Points per feature and partition of the quantile sketch, per candidate bin.
SKETCH_POINTS_PER_BIN = 16


def merge_value_counts(
    parts: list[list[tuple[NDArray[np.float64], NDArray[Any]]]],
    thresholds: int | str | tuple[str, int],
) -> tuple[list[NDArray[np.float64]], NDArray[np.bool_]]:
    """Global cuts from the partitions' per-feature (distinct values, counts).

    The values of every partition are merged exactly (``np.unique`` of the union, counts
    added), then the single-machine rule :func:`rankboost.binning.cuts_from_counts` picks the
    cuts: with exact counts the bins equal those of ``BinMapper.fit`` on all the rows.
    """
    cuts: list[NDArray[np.float64]] = []
    has = np.zeros(len(parts[0]), dtype=bool)
    for i, (distinct, counts) in enumerate(merge_block_value_counts(parts)):
        if distinct.shape[0] == 0:
            cuts.append(np.empty(0))
            continue
        ends = np.cumsum(np.asarray(counts, dtype=np.float64))
        cuts.append(cuts_from_counts(distinct, ends, thresholds))
        has[i] = True
    return cuts, has


def sketch_value_counts(
    vc: list[tuple[NDArray[np.float64], NDArray[Any]]], points: int
) -> list[tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """A partition's mergeable quantile sketch: at most ``points + 1`` weighted values.

    A feature with more distinct values keeps the values at ``points + 1`` evenly spaced
    ranks (always its minimum and maximum), each carrying the count of the values up to the
    next kept one; merged sketches of all partitions then place every cut within about
    ``n_p / points`` ranks of the exact quantile per partition ``p``. Deterministic.
    """
    out = []
    for values, counts in vc:
        if values.shape[0] <= points + 1:
            out.append((values, counts.astype(np.float64)))
            continue
        ends = np.cumsum(counts)
        ranks = np.linspace(0, ends[-1] - 1, points + 1)
        keep = np.unique(np.searchsorted(ends, ranks, side="right"))
        keep = keep[keep < values.shape[0]]
        kept_ends = ends[keep]
        weights = np.diff(np.concatenate([[0], kept_ends])).astype(np.float64)
        weights[-1] += float(ends[-1] - kept_ends[-1])
        out.append((values[keep], weights))
    return out


class DaskBooster(Booster):
    """A :class:`rankboost.Booster` whose blocks are Dask actors, one per partition.

    Built by :func:`rankboost.dask.train`; see the module docstring for a round's traffic.
    """

    def __init__(
        self,
        client: Any,
        parts: list[dict[str, Any]],
        params: TrainParams,
        *,
        n_features: int,
        kind: str,
        normalize: str,
        feature_names: Sequence[str] | None = None,
        feedback_repr: str = "",
        bins: str | BinMapper = "auto",
    ) -> None:
        if params.alpha == "rbplus":
            raise ParameterError(
                "rankboost.dask.train: alpha='rbplus' is not supported on Dask (RankBoost+ "
                "keeps a factor per explicit pair, rankboost.rbplus); train with "
                "rankboost.train on one machine, or use alpha='r', 'exact' or 'line_search'."
            )
        self.client = client
        self.params = params
        self.feature_names = None if feature_names is None else [str(f) for f in feature_names]
        self.n_features = int(n_features)
        self._feedback_repr = feedback_repr
        self._parts = parts
        self._kind = kind
        self._normalize = normalize
        self._log: list[tuple[float, Spec, float, bool]] = []  # every round, for a replay
        self._groups = self._placement(parts)
        self._hubs: list[Any] = [self._new_hub(g, where) for g, where in self._groups]
        per_part = self._flatten(self._call("counts"))
        modes = [m for m, _ in per_part]
        counts = [c for _, c in per_part]
        if "pairs" in modes:  # explicit pairs, or row weights listed as pairs
            total = 0.0
            for w in counts:
                total += float(np.sum(w))
            if total <= 0:
                raise ValueError("the pairs of every partition are empty: nothing to learn.")
            self._norms: list[Any] = [total] * len(parts)
        else:
            if sum(int(c.shape[0]) for c in counts) == 0:
                raise ValueError(
                    "y has no crucial pair in any partition: every query has a single grade."
                )
            self._norms = layered_log_c(counts, normalize)
        self.binner = self._fit_bins(bins)
        self._cuts_args = (self.binner.cuts_, self.binner.n_bins_ > 0, params.thresholds)
        self._call("set_bins", *self._cuts_args)
        masses = self._flatten(
            self._call_each("start", [(self._hub_norms(g),) for g, _ in self._groups])
        )
        self._log_mass0 = log_sum_of([float(m) for m in masses])  # D's own mass
        self.log_total = self._start_objective(self._log_mass0)
        self._log_total0 = self.log_total
        self.log_prior_loss = self.log_total  # as Booster._setup: the prior's loss (or ~0)
        #: with a prior and pairs, D's own global log mass (the rloss's normaliser), else None
        self._log_d: float | None = None
        if "init_score" in parts[0] and "pairs" in modes:
            self._log_d = log_sum_of([float(m) for m in self._flatten(self._call("own_masses"))])
        self._next_hist = sum_parts(self._call("begin", self.log_total, self._log_d))
        self._rloss_value = 0.0
        self._start_rounds()
        self._blocks = []  # the blocks are remote: see _hubs
        #: the last round's fused step: seconds (round trip, busiest worker's compute, the
        #: client's reduce) and bytes received, for benchmarks/bench_dask.py
        self.last_step: dict[str, float] = {}

    # ------------------------------------------------------------------ remote calls
    def _placement(self, parts: list[dict[str, Any]]) -> list[tuple[list[int], str | None]]:
        """Partitions dealt to the workers in contiguous runs (one actor per worker).

        Deterministic (sorted worker addresses, partition order), so the sums of a round run
        in the same order in every run on the same number of workers: training is
        reproducible bit for bit, and a rebuilt group keeps its partitions.
        """
        workers = sorted(self.client.scheduler_info().get("workers", {}))
        n_groups = max(1, min(len(workers), len(parts)))
        out = []
        for k in range(n_groups):
            ids = list(range(k * len(parts) // n_groups, (k + 1) * len(parts) // n_groups))
            out.append((ids, workers[k] if workers else None))
        return out

    def _new_hub(self, ids: list[int], where: str | None) -> Any:
        fut = self.client.submit(
            WorkerBlocks,
            [self._parts[i] for i in ids],
            self._kind,
            self._normalize,
            self.params.push,
            actor=True,
            pure=False,
            **({} if where is None else {"workers": [where], "allow_other_workers": True}),
        )
        actor = fut.result()
        # NOTE: distributed binds an actor it deserialises to the default client; when that is
        # another client (another cluster), every call would wait forever. Bind it to ours.
        with self.client.as_current():
            return type(actor)(actor._cls, actor._address, actor.key)

    def _hub_norms(self, ids: list[int]) -> list[Any]:
        return [self._norms[i] for i in ids]

    def _flatten(self, per_hub: list[list[Any]]) -> list[Any]:
        """Per-hub lists of per-block results -> one list in partition order."""
        out: list[Any] = [None] * len(self._parts)
        for (ids, _), results in zip(self._groups, per_hub, strict=True):
            for i, r in zip(ids, results, strict=True):
                out[i] = r
        return out

    def _call_each(self, name: str, args: list[tuple[Any, ...]]) -> list[Any]:
        """``hub_k.name(*args_k)`` on every worker at once; rebuild lost ones and retry."""
        futures: list[Any] = []
        for hub, a in zip(self._hubs, args, strict=True):
            try:
                futures.append(getattr(hub, name)(*a))
            except Exception as exc:  # the worker holding the actor is gone
                futures.append(exc)
        out: list[Any] = []
        for k, fut in enumerate(futures):
            try:
                if isinstance(fut, Exception):
                    raise fut
                out.append(fut.result())
            except Exception as exc:
                if not self._lost(k):
                    raise
                logger.warning(
                    "rankboost.dask: the worker of blocks %s was lost (%s); rebuilding them",
                    self._groups[k][0], exc,
                )  # fmt: skip
                self._rebuild(k)
                out.append(getattr(self._hubs[k], name)(*args[k]).result())
        return out

    def _call(self, name: str, *args: Any) -> list[Any]:
        return self._call_each(name, [args] * len(self._hubs))

    def _lost(self, k: int, wait: float = 30.0) -> bool:
        """Whether hub ``k``'s worker has left the cluster (waits for the scheduler to see it)."""
        address = getattr(self._hubs[k], "_address", None)
        deadline = time.monotonic() + wait
        while True:
            if address not in self.client.scheduler_info().get("workers", {}):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)

    def _rebuild(self, k: int) -> None:
        """A new actor for the blocks of hub ``k``: setup, then the rounds replayed."""
        ids = self._groups[k][0]
        hub = self._new_hub(ids, None)
        hub.set_bins(*self._cuts_args).result()
        hub.start(self._hub_norms(ids)).result()
        if self.params.push != 1.0:
            hub.start_push(self._log_mass0).result()
        hub.replay(self._log_total0, list(self._log), self._log_d).result()
        self._hubs[k] = hub

    def _fit_bins(self, bins: str | BinMapper) -> BinMapper:
        thresholds = self.params.thresholds
        if isinstance(bins, BinMapper):
            if len(bins.cuts_) != self.n_features:
                raise ValueError(
                    f"bins has cuts for {len(bins.cuts_)} features but X has {self.n_features}."
                )
            return BinMapper.from_cuts(bins.cuts_, bins.n_bins_ > 0, thresholds)
        if bins not in ("auto", "exact", "sketch"):
            raise ValueError(
                f"bins must be 'auto', 'exact', 'sketch' or a fitted BinMapper; got {bins!r}."
            )
        vcs = self._call("value_counts")
        n_values = sum(v.shape[0] for vc in vcs for v, _ in vc)
        sketch = bins == "sketch" or (bins == "auto" and n_values > MAX_EXACT_VALUES)
        if sketch and isinstance(thresholds, (str, tuple, list)):  # not quantile bins
            if bins == "sketch":
                raise ValueError(
                    f"bins='sketch' needs an int number of thresholds, not {thresholds!r}."
                )
            sketch = False
        if sketch and isinstance(thresholds, (int, np.integer)):
            points = SKETCH_POINTS_PER_BIN * int(thresholds)
            vcs = [sketch_value_counts(vc, points) for vc in vcs]
        cuts, has = merge_value_counts(vcs, thresholds)
        return BinMapper.from_cuts(cuts, has, thresholds)

    # ------------------------------------------------------------------ round steps
    @property
    def n_blocks(self) -> int:
        """Number of blocks (Dask partitions)."""
        return len(self._parts)

    def _histograms(self) -> NDArray[np.float64]:
        return self._next_hist

    def _values(self, table: CandidateTable, flat: int) -> tuple[WeakRanker, list[Any]]:
        """The candidate as a weak ranker; the workers compute its values from its spec."""
        feature, kind, t, q = table.decode(flat)
        spec: Spec = (int(feature), kind, int(t), int(q))
        return candidate_ranker(self.binner, spec), [spec] * self.n_blocks

    def _split_columns(
        self, table: CandidateTable
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``criterion="exact_z"``: every worker's split sums, summed (one more round trip)."""
        return table.split_columns(sum_parts(self._call("split_sums", self.log_total)))

    def _w_minus_plus(self, hs: list[Any]) -> tuple[float, float]:
        w_minus = w_plus = 0.0
        for wm, wp in self._call("binary_parts", hs[0], self.log_total):
            w_minus += wm
            w_plus += wp
        return w_minus, w_plus

    def _log_slopes(self, hs: list[Any]) -> Callable[[float], tuple[float, float]]:
        def log_slopes(a: float) -> tuple[float, float]:
            parts = self._flatten(self._call("log_slopes", hs[0], a))
            return log_sum_of([p[0] for p in parts]), log_sum_of([p[1] for p in parts])

        return log_slopes

    def _step(self, hs: list[Any], alpha: float, binary: bool) -> float:
        """One fused call per worker: apply the round, return the new global log mass.

        The workers' next histograms (relative to the old mass) are scaled here by the
        mass ratio; ``Z_t`` itself is settled by :meth:`rankboost.Booster._settle`.
        """
        old = self.log_total
        t0 = time.perf_counter()
        results = self._call("step", old, hs[0], alpha, binary)
        t1 = time.perf_counter()
        self._log.append((old, hs[0], alpha, binary))
        masses = self._flatten([r[0] for r in results])
        new = self._log_sum([float(m) for m in masses])
        self._next_hist = self._summed_histograms(results, new)
        rloss = results[0][2]
        for r in results[1:]:
            rloss += r[2]
        self._rloss_value = float(rloss)
        self.last_step = {
            "round_trip": t1 - t0,
            "worker_compute": max(float(r[3]) for r in results),  # a worker's blocks, summed
            "reduce": time.perf_counter() - t1,
            "bytes_received": sum(int(r[1].nbytes) + 24 * (1 + len(r[0])) for r in results),
        }
        return new

    def _start_objective(self, log_mass: float) -> float:
        """The objective's global log value before round 1: ``D``'s mass for RankBoost."""
        return log_mass

    def _log_sum(self, parts: list[float]) -> float:
        """The global log objective from the blocks' parts (their log masses)."""
        return log_sum_of(parts)

    def _summed_histograms(self, results: list[Any], new: float) -> NDArray[np.float64]:
        """The workers' histograms (relative to the old mass) summed, scaled by ``1 / Z``."""
        hist = sum_parts([r[1] for r in results])
        hist *= float(np.exp(self.log_total - new))
        return hist

    def _rloss(self) -> float:
        return self._rloss_value

    def close(self) -> None:
        """Release the blocks (the actors and the partitions' data on the workers)."""
        self._hubs = []

    def __repr__(self) -> str:
        return (
            f"DaskBooster(n_rounds={self.n_rounds}, n_blocks={self.n_blocks}, "
            f"n_features={self.n_features}, params={self.params})"
        )
