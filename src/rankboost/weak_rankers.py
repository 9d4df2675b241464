"""Weak rankers and WeakLearn (paper section 4).

Two kinds of weak ranker, both functions of a single feature ``f_i`` with a default for rows
where the feature abstains (NaN, the paper's ⊥):

* :class:`ThresholdRanker` (binary, the paper's):
  ``h(x) = 1 if f_i(x) > theta, 0 if f_i(x) <= theta, q_def if f_i(x) = ⊥``.
* :class:`FeatureRanker` (real-valued, as section 3.2 of the paper allows):
  ``h(x) = (b(x) - 1) / (n_bins - 1)`` in [0, 1], where ``b(x)`` is the training bin of
  ``f_i(x)`` (a rank transform, so invariant to strictly increasing transforms of the
  feature), ``q_def`` in {0, 1} on ⊥.

WeakLearn picks the candidate maximising ``|r|`` where ``r = sum_x pi(x) h(x)`` and ``pi`` is
the potential (paper section 4). For a threshold ranker with threshold index ``t`` the scan gives
``L(t) = sum_{code > t} pi`` and ``R = sum_{ranked} pi``, and ``r = L - q_def R``.

Options of WeakLearn (``rb.train(..., criterion=, default=)``):

* ``criterion="abs_r"`` (default, the paper): maximise ``|r|``; a candidate with ``r < 0``
  gets a negative ``alpha`` (the reversed ranker). ``criterion="r"`` (RankLib): only
  candidates with ``r > 0`` compete, and the largest ``r`` wins (no sign reversal).
* ``criterion="exact_z"``: minimise the exact ``Z = W_0 + 2 sqrt(W_- W_+)`` of the binary
  ranker at its best alpha (SPEC 4.1), i.e. maximise ``|sqrt(W_-) - sqrt(W_+)|``
  (``Z = 1 - (sqrt(W_-) - sqrt(W_+))^2`` as ``D_t`` sums to 1), among the candidates with
  ``|r| > tol``; threshold rankers only. Same tie-break, on that score. The alpha is then
  the chosen rule's (with ``alpha="exact"`` the round's ``Z`` is that minimum, up to the
  alpha guard).
* ``default="learned"`` (default, the paper): both ``q_def = 0`` and ``q_def = 1`` are
  candidates; ``default=0`` or ``1`` keeps only the candidates with that ``q_def`` (e.g.
  "absent = worst" is ``default=0``).

Tie-break (documented, tests rely on it): candidates whose ``|r|`` is within
``TIE_TOLERANCE`` of the best are tied, and the first in the order (smallest feature index,
then largest threshold, then ``q_def = 0``; with ``weak_ranker="both"``, a feature's real-valued
candidates come after its threshold candidates) wins.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from .binning import BinMapper

__all__ = [
    "FeatureRanker",
    "Spec",
    "ThresholdRanker",
    "TIE_TOLERANCE",
    "WeakRanker",
    "candidate_ranker",
    "candidate_values",
]

#: |r| values closer than this to the best one count as tied (then the candidate order decides).
TIE_TOLERANCE = 1e-10


@dataclass(frozen=True)
class ThresholdRanker:
    """Binary weak ranker ``[f_i(x) > theta]`` with default ``q_def`` where ``f_i`` abstains.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.weak_rankers import ThresholdRanker
    >>> h = ThresholdRanker(feature=0, threshold=0.5, default=1.0)
    >>> h.predict(np.array([[0.2], [0.7], [np.nan]]))
    array([0., 1., 1.])
    """

    feature: int
    threshold: float
    default: float

    kind = "threshold"

    def predict(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Return ``h(x)`` for every row of ``X`` (compared as float32, as in training)."""
        with np.errstate(over="ignore"):
            col = X[:, self.feature].astype(np.float32).astype(np.float64)
        out = (col > self.threshold).astype(np.float64)
        out[np.isnan(col)] = self.default
        return out

    def key(self) -> tuple[Any, ...]:
        """Identity of the ranker for WeakLearn.cum's cumulative weights."""
        return ("threshold", self.feature, self.threshold, self.default)


@dataclass(frozen=True, eq=False)
class FeatureRanker:
    """Real-valued weak ranker: the training bin rank of ``f_i`` rescaled to [0, 1].

    ``cuts`` are the training bin boundaries of the feature (``len(cuts) + 1`` bins); a value
    in bin ``b`` (``b = 1 + #{cuts < x}``) maps to ``(b - 1) / len(cuts)``.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.weak_rankers import FeatureRanker
    >>> h = FeatureRanker(feature=0, cuts=np.array([1.0, 2.0]), default=0.0)
    >>> h.predict(np.array([[0.5], [1.5], [9.0], [np.nan]]))
    array([0. , 0.5, 1. , 0. ])
    """

    feature: int
    cuts: NDArray[np.float64] = field(repr=False)
    default: float

    kind = "feature"
    threshold = float("nan")

    def predict(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Return ``h(x)`` for every row of ``X`` (compared as float32, as in training)."""
        with np.errstate(over="ignore"):
            col = X[:, self.feature].astype(np.float32).astype(np.float64)
        b = np.searchsorted(self.cuts, col, side="left")
        out = b / float(self.cuts.shape[0])
        out[np.isnan(col)] = self.default
        return out

    def key(self) -> tuple[Any, ...]:
        """Identity of the ranker for WeakLearn.cum's cumulative weights."""
        return ("feature", self.feature, self.default)


WeakRanker = ThresholdRanker | FeatureRanker


# --------------------------------------------------------------------------- candidate table


@dataclass
class CandidateTable:
    """``r`` for every candidate of a round, in the canonical tie-break order.

    ``r[i, j]``: feature ``i``; columns ``0 .. 2T-1`` are threshold candidates with threshold
    index ``t = T - 1 - j // 2`` and ``q_def = j % 2``; with real-valued rankers two more
    columns hold ``q_def = 0, 1``. ``valid`` masks candidates that exist.
    """

    r: NDArray[np.float64]
    valid: NDArray[np.bool_]
    n_thresholds: int  # T = max number of threshold indices over features
    has_feature_rankers: bool

    def decode(self, flat: int) -> tuple[int, str, int, int]:
        """Flat index -> (feature, kind, threshold index t, q_def)."""
        i, j = divmod(int(flat), self.r.shape[1])
        if j < 2 * self.n_thresholds:
            return i, "threshold", self.n_thresholds - 1 - j // 2, j % 2
        return i, "feature", -1, j - 2 * self.n_thresholds

    def column_defaults(self) -> NDArray[np.int64]:
        """``q_def`` of every column (what ``default=0`` or ``1`` keeps)."""
        j = np.arange(self.r.shape[1])
        return np.where(j < 2 * self.n_thresholds, j % 2, j - 2 * self.n_thresholds)

    def best(self, tol: float = TIE_TOLERANCE, alive: NDArray[np.bool_] | None = None) -> int:
        """Flat index of the first candidate whose ``|r|`` is within ``tol`` of the best."""
        return self.best_of(np.abs(self.r), tol, alive)

    def best_of(
        self,
        score: NDArray[np.float64],
        tol: float = TIE_TOLERANCE,
        alive: NDArray[np.bool_] | None = None,
    ) -> int:
        """Flat index of the first candidate whose ``score`` is within ``tol`` of the best."""
        s = np.where(self.valid if alive is None else alive, score, -1.0).ravel()
        top = s.max()
        return int(np.argmax(s >= top - tol))

    def split_columns(
        self, sums: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(W_-, W_+)`` in the table's layout from split sums of shape (4, d, n_codes - 1).

        ``sums`` is :mod:`rankboost._kernels.split_sums`' output; threshold candidates only
        (the exact-Z criterion and RankBoost+ need binary rankers).
        """
        d, n_cols = self.r.shape
        n_t = self.n_thresholds
        if n_cols != 2 * n_t:
            raise ValueError("split sums exist for threshold candidates only")
        out = []
        for k in (0, 1):  # W_-, W_+
            w = np.zeros((d, n_t, 2))
            m = min(n_t, sums.shape[2])  # an all-NaN problem pads the table to one threshold
            w[:, :m, 0] = sums[k, :, :m]
            w[:, :m, 1] = sums[2 + k, :, :m]
            out.append(np.ascontiguousarray(w[:, ::-1, :].reshape(d, 2 * n_t)))
        return out[0], out[1]


def candidate_table(
    hist: NDArray[np.float64], n_bins: NDArray[np.int64], weak_ranker: str
) -> CandidateTable:
    """All candidates' ``r`` from the potential histogram ``hist`` of shape (d, n_codes)."""
    if hist.shape[1] < 2:  # every feature abstains on every row: no candidate is valid
        hist = np.concatenate([hist, np.zeros((hist.shape[0], 2 - hist.shape[1]))], axis=1)
    d, n_codes = hist.shape
    n_t = n_codes - 1  # threshold indices 0 .. n_codes - 2
    thresholds = weak_ranker in ("threshold", "both")
    features = weak_ranker in ("feature", "both")
    if not (thresholds or features):
        raise ValueError(
            f"weak_ranker must be 'threshold', 'feature' or 'both'; got {weak_ranker!r}."
        )
    width = 2 * n_t * thresholds + 2 * features
    r = np.empty((d, width))
    valid = np.empty((d, width), dtype=np.bool_)
    hist = np.ascontiguousarray(hist, dtype=np.float64)
    n_bins = np.ascontiguousarray(n_bins, dtype=np.int64)
    if thresholds:
        from ._kernels.candidates import threshold_candidates  # numba: on first use

        # column 2k: L = sum_{b > t} hist[i, b] at t = T-1-k; column 2k+1: L - R
        threshold_candidates(hist, n_bins, r, valid)
    if features:
        denom = np.maximum(n_bins - 1, 1).astype(np.float64)
        vals = (np.arange(n_codes)[None, :] - 1) / denom[:, None]
        vals[:, 0] = 0.0
        in_range = np.arange(n_codes)[None, :] <= n_bins[:, None]
        base = np.sum(np.where(in_range, hist * vals, 0.0), axis=1)
        r[:, width - 2] = base
        r[:, width - 1] = base + hist[:, 0]
        valid[:, width - 2 :] = (n_bins >= 2)[:, None]
    return CandidateTable(
        r=r,
        valid=valid,
        n_thresholds=n_t if thresholds else 0,
        has_feature_rankers=features,
    )


def feature_table(n_bins: int) -> NDArray[np.float64]:
    """Values of a real-valued ranker per code (code 0 is filled with the default later)."""
    out = np.zeros(n_bins + 1)
    out[1:] = np.arange(n_bins) / max(n_bins - 1, 1)
    return out


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
    from ._kernels.histogram import table_values, threshold_values  # numba: on first use

    feature, kind, t, q = spec
    if kind == "threshold":
        return threshold_values(codes, feature, t, int(q))
    tab = feature_table(int(binner.n_bins_[feature]))
    tab[0] = float(q)
    full = np.zeros(binner.n_codes)
    full[: tab.shape[0]] = tab
    return table_values(codes, feature, full)
