"""Candidate thresholds and feature-major bin codes (paper section 4).

A threshold weak ranker on feature ``i`` is ``h(x) = 1 if f_i(x) > theta``, ``0 if
f_i(x) <= theta`` and ``q_def`` if ``f_i(x)`` is missing (NaN, the paper's "abstain", ⊥).
The candidate thresholds of a feature are

* ``thresholds="all"``: every distinct training value except the largest (a threshold at the
  largest value gives ``h = 0`` on every ranked row, the same ranker as ``theta = +inf``), as
  in the paper;
* ``thresholds=B`` (int, default 255): the same when the feature has at most ``B`` distinct
  values, otherwise ``B - 1`` values chosen at the ``k/B`` quantiles of the training rows
  (a threshold is always a training value, and the choice depends only on the order of the
  values, so it is invariant to strictly increasing transforms of the feature);

* ``thresholds="midpoints"``: halfway between consecutive distinct training values (as
  RankBoost+'s code does): the same split of the training rows as ``"all"``, but a new value
  between two training values goes to the nearer one's side;
* ``thresholds=("uniform", B)``: the ``B - 1`` inner edges of ``B`` equal-width bins between
  the feature's training min and max (RankLib's rule, default ``B = 10`` there); not
  invariant to transforms of the feature, and row weights do not move them;

plus ``theta = -inf`` in every case, which with ``q_def = 0`` is the ranker "the feature does
not abstain on x" (in meta-search: "list i returned x"). With row weights (``sample_weight``
of :meth:`BinMapper.fit`) the quantiles are weighted: integer weights ``w`` give the cuts of
the data with each row repeated ``w`` times.

**One numeric domain: float32.** Every feature value is rounded to float32 (round to nearest,
ties to even, as ``x.astype(np.float32)``) before it is binned or compared, as XGBoost does,
and every cut is a float32 number (stored in float64): the distinct values, quantiles and
midpoints are those of ``float32(x)``, the uniform edges are rounded down to float32.
:meth:`rankboost.RankBoostModel.decision_function` compares ``float32(x)`` with the
thresholds too, so training, prediction and every export (docs/serving.md) take the same
branch for every input, float64 or float32.

Codes: 0 = NaN; ``k >= 1`` = ``1 + #{cuts < float32(x)}``. Threshold index ``t`` (``0 <= t <=
n_cuts``) stands for ``theta = -inf`` when ``t = 0`` and ``theta = cuts[t - 1]`` otherwise,
and ``h(x) = [code(x) > t]`` on ranked rows.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from ._float32 import floor32
from ._kernels import use_parallel
from ._kernels.binning import bin_rows, gather_columns
from ._validation import check_float32_range

__all__ = [
    "BinMapper",
    "check_thresholds",
    "cuts_from_counts",
    "floor32",
    "midpoint_cuts",
    "uniform_cuts",
]


def check_thresholds(thresholds: Any) -> Any:
    """Validate the ``thresholds`` parameter; return it (``("uniform", B)`` as a tuple)."""
    if isinstance(thresholds, (tuple, list)):
        if len(thresholds) != 2 or thresholds[0] != "uniform":
            raise TypeError(
                "thresholds must be 'all' or an int number of bins >= 2, 'midpoints' or "
                f"('uniform', B); got {thresholds!r}."
            )
        b = thresholds[1]
        if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 2:
            raise ValueError(
                f"thresholds=('uniform', B) needs an int number of bins B >= 2; got {b!r}."
            )
        return ("uniform", int(b))
    if isinstance(thresholds, str):
        if thresholds not in ("all", "midpoints"):
            raise ValueError(
                "thresholds must be 'all' or an int number of bins >= 2, 'midpoints' or "
                f"('uniform', B); got {thresholds!r}."
            )
        return thresholds
    if isinstance(thresholds, bool) or not isinstance(thresholds, (int, np.integer)):
        raise TypeError(
            "thresholds must be 'all' or an int number of bins >= 2, 'midpoints' or "
            "('uniform', B); got "
            f"{type(thresholds).__name__} {thresholds!r}."
        )
    if thresholds < 2:
        raise ValueError(
            "thresholds must be 'all' or an int number of bins >= 2, 'midpoints' or "
            f"('uniform', B); got {thresholds}."
        )
    return int(thresholds)


def _cuts_from_sorted(
    values: NDArray[np.float64],
    thresholds: int | str | tuple[str, int],
    weights: NDArray[np.float64] | None = None,
) -> NDArray:
    """Candidate cut values of one feature from its sorted non-NaN training values.

    ``weights`` (aligned with ``values``, positive) replace the count of each row.
    """
    if values.shape[0] == 0:
        return np.empty(0, dtype=np.float64)
    change = np.flatnonzero(values[1:] != values[:-1])
    distinct = np.concatenate([values[change], values[-1:]])
    if weights is None:
        # cumulative counts at the end of each distinct value
        ends: NDArray[Any] = np.concatenate([change + 1, [values.shape[0]]])
    else:
        # cumulative weights: each distinct value's total, summed in increasing value order
        # (integer weights add up exactly, so they equal the counts of the repeated rows)
        ends = np.cumsum(np.add.reduceat(weights, np.concatenate([[0], change + 1])))
    return cuts_from_counts(distinct, ends, thresholds)


def cuts_from_counts(
    distinct: NDArray[np.float64], ends: NDArray[Any], thresholds: int | str | tuple[str, int]
) -> NDArray[np.float64]:
    """Candidate cut values of one feature from its distinct values and cumulative counts.

    ``distinct`` holds the feature's distinct non-NaN training values in increasing order and
    ``ends[k]`` the number of training values ``<= distinct[k]`` (the weight, when rows are
    weighted or values summarised). The values are rounded to float32 first (values with the
    same float32 merge), so every cut is a float32 number. The rule of the module docstring:
    every distinct value but the largest when there are at most ``B`` of them (or
    ``thresholds="all"``), else the values at the ``k/B`` quantiles. A distributed trainer
    merges the partitions' counts and calls this, so its bins equal the single-machine ones.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.binning import cuts_from_counts
    >>> cuts_from_counts(np.array([1.0, 2.0, 5.0]), np.array([3, 4, 9]), "all")
    array([1., 2.])
    >>> cuts_from_counts(np.array([1.0, 2.0, 5.0, 7.0]), np.array([3, 4, 9, 10]), 2)
    array([5.])
    """
    if distinct.shape[0] == 0:
        return np.empty(0, dtype=np.float64)
    # the float32 domain: values that round to the same float32 are one value (a merged
    # partition's distinct float64 values, or any caller's), counted up to the last of them
    with np.errstate(over="ignore"):
        d32 = np.asarray(distinct, dtype=np.float64).astype(np.float32).astype(np.float64)
    if d32.shape[0] > 1 and np.any(d32[1:] == d32[:-1]):
        last = np.flatnonzero(np.concatenate([d32[1:] != d32[:-1], [True]]))
        d32, ends = d32[last], np.asarray(ends)[last]
    distinct = d32
    if isinstance(thresholds, (tuple, list)):
        return uniform_cuts(float(distinct[0]), float(distinct[-1]), int(thresholds[1]))
    if isinstance(thresholds, str) and thresholds == "midpoints":
        return midpoint_cuts(distinct)
    if thresholds == "all" or distinct.shape[0] <= int(thresholds):
        return distinct[:-1] + 0.0  # + 0.0: -0.0 and 0.0 sort in either order; store 0.0
    n_bins = int(thresholds)
    targets = ends[-1] * np.arange(1, n_bins, dtype=np.float64) / n_bins
    idx = np.searchsorted(ends, targets, side="left")
    idx = np.unique(idx[idx < distinct.shape[0] - 1])
    return distinct[idx] + 0.0


def midpoint_cuts(distinct: NDArray[np.float64]) -> NDArray[np.float64]:
    """``thresholds="midpoints"``: halfway between consecutive distinct values.

    ``a / 2 + b / 2`` (which equals the rounded ``(a + b) / 2`` and cannot overflow), rounded
    to the nearest float32; when that is not below ``b`` (``a`` and ``b`` adjacent floats)
    ``a`` is the cut, so the cuts always split the training values as ``"all"`` does. The
    values are float32 numbers (:func:`cuts_from_counts` rounds them).

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.binning import midpoint_cuts
    >>> midpoint_cuts(np.array([1.0, 2.0, 5.0]))
    array([1.5, 3.5])
    """
    a, b = distinct[:-1], distinct[1:]
    mid = a / 2.0 + b / 2.0
    with np.errstate(over="ignore"):
        mid = mid.astype(np.float32).astype(np.float64)
    mid = np.where((mid >= b) | (mid < a), a, mid)
    return mid + 0.0


def uniform_cuts(low: float, high: float, n_bins: int) -> NDArray[np.float64]:
    """``thresholds=("uniform", B)``: the ``B - 1`` inner edges of ``B`` equal-width bins.

    The edges ``low + k (high - low) / B``, ``k = 1 .. B-1`` (RankLib's candidates, whose
    default is ``B = 10``), each rounded down to float32 (:func:`floor32`: the same
    decision on every float32 value), without repeats; none when ``low == high``.

    Examples
    --------
    >>> from rankboost.binning import uniform_cuts
    >>> uniform_cuts(0.0, 1.0, 4)
    array([0.25, 0.5 , 0.75])
    """
    low, high = float(low), float(high)  # Python floats: high - low may be inf, no warning
    if not high > low:
        return np.empty(0, dtype=np.float64)
    edges = low + np.arange(1, n_bins, dtype=np.float64) * (high - low) / n_bins
    if not np.isfinite(edges).all():  # high - low overflows: the same edges, by weights
        w = np.arange(1, n_bins, dtype=np.float64) / n_bins
        edges = low * (1.0 - w) + high * w
    edges = floor32(edges[(edges >= low) & (edges < high)])
    return np.unique(edges[(edges >= low) & (edges < high)]) + 0.0


@dataclass
class BinMapper:
    """Per-feature candidate thresholds and the feature-major code matrix.

    Parameters
    ----------
    thresholds : int, "all", "midpoints" or ("uniform", B), default=255
        See the module docstring.

    Attributes
    ----------
    cuts_ : list of ndarray
        Sorted cut values per feature (threshold candidates besides ``-inf``).
    n_bins_ : ndarray of shape (n_features,)
        Number of non-missing bins per feature (``len(cuts) + 1``, or 0 for an all-NaN
        feature).

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.binning import BinMapper
    >>> X = np.array([[0.1, np.nan], [0.5, 2.0], [0.5, 3.0], [0.9, 2.0]])
    >>> bm = BinMapper("all").fit(X)
    >>> bm.cuts_[0]
    array([0.1, 0.5])
    >>> bm.transform(X)
    array([[1, 2, 2, 3],
           [0, 1, 2, 1]], dtype=uint8)
    """

    thresholds: int | str | tuple[str, int] = 255

    def fit(
        self,
        X: NDArray[np.float64],
        rows: NDArray[np.int64] | None = None,
        sample_weight: NDArray[np.float64] | None = None,
    ) -> BinMapper:
        """Choose cut values from ``X[rows]`` (all rows when ``rows`` is None).

        ``sample_weight`` (one non-negative weight per row of ``X``; None = 1 each) weighs
        the quantiles as multiplicities: integer weights ``w`` give the cuts of ``X`` with
        row ``i`` repeated ``w[i]`` times, and rows of weight 0 are left out.
        """
        thresholds = check_thresholds(self.thresholds)
        check_float32_range(X)  # the float32 domain has no room for them (module docstring)
        rows_ = np.arange(X.shape[0], dtype=np.int64) if rows is None else rows
        rows_ = np.ascontiguousarray(rows_, dtype=np.int64)
        if sample_weight is not None:
            return self._fit_weighted(X, rows_, sample_weight, thresholds)
        d = X.shape[1]
        self.cuts_: list[NDArray[np.float64]] = []
        n_bins = np.zeros(d, dtype=np.int64)
        # sort a few columns at a time so memory stays O(n), not O(d n): gathered by a numba
        # kernel, sorted by numpy's SIMD sort, one column per thread (numpy releases the GIL
        # while it sorts; BinMapper.fit at 1M x 136 went from 8.2 s with numba's sort to
        # 4.8 s: "Setup pieces" of benchmarks/bench_engine.py); NaN sorts last
        chunk = 8
        # float32: the domain (module docstring), and half the memory and sort time
        sorted_cols = np.empty((min(chunk, d), rows_.shape[0]), dtype=np.float32)
        threads = numba.get_num_threads() if use_parallel(chunk * rows_.shape[0]) else 1
        pool = ThreadPoolExecutor(threads) if threads > 1 else None
        for first in range(0, d, chunk):
            block = sorted_cols[: min(chunk, d - first)]
            if rows_.shape[0]:
                with np.errstate(over="ignore"):  # beyond float32: +-inf, as astype
                    gather_columns(X, rows_, first, block)
                if pool is None:
                    block.sort(axis=1)
                else:
                    list(pool.map(np.ndarray.sort, block))
            for k in range(block.shape[0]):
                col = block[k]
                n_valid = rows_.shape[0] - int(np.count_nonzero(np.isnan(col)))
                cuts = _cuts_from_sorted(col[:n_valid].astype(np.float64), thresholds)
                self.cuts_.append(cuts)
                n_bins[first + k] = cuts.shape[0] + 1 if n_valid else 0
        if pool is not None:
            pool.shutdown()
        self.n_bins_ = n_bins
        return self

    def _fit_weighted(
        self,
        X: NDArray[np.float64],
        rows: NDArray[np.int64],
        sample_weight: NDArray[np.float64],
        thresholds: int | str | tuple[str, int],
    ) -> BinMapper:
        """:meth:`fit` with row weights: one stable argsort per feature carries them along."""
        w = np.asarray(sample_weight, dtype=np.float64)
        if w.shape != (X.shape[0],):
            raise ValueError(
                f"BinMapper.fit: sample_weight must hold one weight per row of X "
                f"({X.shape[0]}); got shape {w.shape}."
            )
        if not np.isfinite(w).all() or (w < 0).any():
            raise ValueError("BinMapper.fit: sample_weight must hold finite non-negative numbers.")
        wr = w[rows]
        rows, wr = rows[wr > 0], wr[wr > 0]
        self.cuts_ = []
        n_bins = np.zeros(X.shape[1], dtype=np.int64)
        for i in range(X.shape[1]):
            with np.errstate(over="ignore"):
                col = X[rows, i].astype(np.float32).astype(np.float64)
            ok = ~np.isnan(col)
            col, wc = col[ok], wr[ok]
            order = np.argsort(col, kind="stable")
            cuts = _cuts_from_sorted(col[order], thresholds, wc[order])
            self.cuts_.append(cuts)
            n_bins[i] = cuts.shape[0] + 1 if col.shape[0] else 0
        self.n_bins_ = n_bins
        return self

    @classmethod
    def from_cuts(
        cls,
        cuts: list[NDArray[np.float64]],
        has_values: NDArray[np.bool_] | None = None,
        thresholds: int | str | tuple[str, int] = 255,
    ) -> BinMapper:
        """A fitted mapper from per-feature sorted cut values.

        ``has_values[i]`` says whether feature ``i`` had a non-NaN training value (None: all
        had); a feature without one has no bin (``n_bins_ = 0``), else ``len(cuts) + 1``.
        This is how a distributed trainer (or a user with bins fitted on a sample) gives
        every partition the same bins.
        """
        self = cls(thresholds)
        self.cuts_ = [np.ascontiguousarray(c, dtype=np.float64) for c in cuts]
        has = np.ones(len(cuts), dtype=bool) if has_values is None else np.asarray(has_values)
        self.n_bins_ = np.array(
            [(c.shape[0] + 1) if bool(h) else 0 for c, h in zip(self.cuts_, has, strict=True)],
            dtype=np.int64,
        )
        return self

    @property
    def n_codes(self) -> int:
        """Number of distinct codes, missing code 0 included."""
        return int(self.n_bins_.max(initial=0)) + 1

    @property
    def code_dtype(self) -> type[np.unsignedinteger]:
        """Smallest unsigned dtype that holds every code."""
        if self.n_codes <= 256:
            return np.uint8
        if self.n_codes <= 65536:
            return np.uint16
        return np.uint32

    def threshold_value(self, feature: int, t: int) -> float:
        """The threshold ``theta`` of threshold index ``t`` on ``feature``."""
        return -np.inf if t == 0 else float(self.cuts_[feature][t - 1])

    def transform(
        self, X: NDArray[np.float64], rows: NDArray[np.int64] | None = None
    ) -> NDArray[np.unsignedinteger]:
        """Feature-major codes of shape (n_features, n_rows) for ``X[rows]``.

        The code of ``x`` is ``1 + #{cuts < float32(x)}`` (0 for NaN).
        """
        rows_ = np.arange(X.shape[0], dtype=np.int64) if rows is None else rows
        rows_ = np.ascontiguousarray(rows_, dtype=np.int64)
        flat = (np.concatenate(self.cuts_) if self.cuts_ else np.empty(0, dtype=np.float64)).astype(
            np.float64
        )
        starts = np.zeros(len(self.cuts_) + 1, dtype=np.int64)
        np.cumsum([c.shape[0] for c in self.cuts_], out=starts[1:])
        out = np.empty((X.shape[1], rows_.shape[0]), dtype=self.code_dtype)
        if rows_.shape[0]:
            bin_rows(X, rows_, flat, starts, out)
        return out
