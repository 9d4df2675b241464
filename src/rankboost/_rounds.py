"""The rounds of a model as arrays, and the step functions they add up to (paper section 3.1).

:class:`Rounds` holds one array entry per boosting round (the feature, the kind of weak
ranker, its threshold or cuts, its default ``q_def`` and its weight ``alpha``);
:class:`StepFunction` is the learned function ``H_i`` of one feature, compiled from the
rounds by :func:`compile_steps`. Public through :mod:`rankboost.model`.

The numeric domain is float32 (:mod:`rankboost._float32`): a feature value is rounded to
float32 before it is compared with a threshold or a cut, in training, here and in every
export, so all of them take the same branch for every input.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._float32 import to_float32
from .weak_rankers import FeatureRanker, ThresholdRanker, WeakRanker

__all__ = [
    "HISTORY_KEYS",
    "KINDS",
    "STAT_KEYS",
    "Rounds",
    "StepFunction",
    "compile_steps",
]

#: The per-round records of :attr:`RankBoostModel.history` (which adds ``feature_label``).
HISTORY_KEYS = ("feature", "threshold", "default", "alpha", "r", "z", "rloss", "bound")
#: The training records kept besides the rounds (the rest of the history is in the rounds).
STAT_KEYS = ("r", "z", "rloss", "bound")
#: Names of the weak-ranker kinds: ``Rounds.kind[t]`` indexes this tuple.
KINDS = ("threshold", "feature")
KIND_THRESHOLD, KIND_FEATURE = 0, 1


def frozen_array(a: NDArray[Any]) -> NDArray[Any]:
    a.flags.writeable = False
    return a


def _set_frozen_state(obj: object, state: dict[str, Any]) -> None:
    """``__setstate__`` of the frozen dataclasses: arrays stay read-only after unpickling."""
    for k, v in state.items():
        object.__setattr__(obj, k, frozen_array(v) if isinstance(v, np.ndarray) else v)


def _array_of(x: ArrayLike, name: str, numbers: type[Any], what: str) -> NDArray[Any]:
    """``x`` as a new 1-D array; its values must be ``numbers`` (booleans never are)."""
    a = np.asarray(x)
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {a.shape}")
    if a.size and (a.dtype == np.bool_ or not np.issubdtype(a.dtype, numbers)):
        raise ValueError(f"{name} must hold {what}; got dtype {a.dtype}")
    return a


def _int_array(x: ArrayLike, name: str) -> NDArray[np.int64]:
    return np.array(_array_of(x, name, np.integer, "integers"), dtype=np.int64)


def float_array(x: ArrayLike, name: str) -> NDArray[np.float64]:
    return np.array(_array_of(x, name, np.number, "numbers"), dtype=np.float64)


def _kind_array(x: ArrayLike) -> NDArray[np.int8]:
    a = np.asarray(x)
    if a.ndim != 1:
        raise ValueError(f"kind must be 1-D; got shape {a.shape}")
    if a.size and a.dtype.kind in "US":
        codes = np.empty(a.shape[0], dtype=np.int8)
        for t, k in enumerate(a.tolist()):
            if k not in KINDS:
                raise ValueError(f"round {t} has unknown kind {k!r}")
            codes[t] = KINDS.index(k)
        return codes
    k = _int_array(a, "kind")
    bad = np.flatnonzero((k < 0) | (k >= len(KINDS)))
    if bad.size:
        raise ValueError(
            f"round {bad[0]} has unknown kind {int(k[bad[0]])!r} (kinds are 0 = threshold, "
            "1 = feature)"
        )
    return k.astype(np.int8)


@dataclass(frozen=True, eq=False)
class Rounds:
    """The weak rankers of a model and their weights, as one array entry per round.

    Round ``t`` is the weak ranker ``h_t`` of feature ``feature[t]`` weighted by
    ``alpha[t]``. A threshold ranker (``kind[t] == 0``) is ``h_t(x) = [f(x) > threshold[t]]``;
    a real-valued ranker (``kind[t] == 1``) is ``h_t(x) = #{c in cuts_t : c < f(x)} /
    len(cuts_t)`` with ``cuts_t = cuts[cut_offsets[t]:cut_offsets[t + 1]]`` (sorted, at least
    one); both are ``default[t]`` (``q_def``) where the feature abstains (NaN). The arrays are
    read-only copies of the inputs.

    Parameters
    ----------
    feature : array-like of int, shape (n_rounds,)
        Feature (column) index of every round.
    kind : array-like of int or str, shape (n_rounds,)
        ``0`` / ``"threshold"`` or ``1`` / ``"feature"`` (real-valued); see :data:`KINDS`.
    threshold : array-like of float, shape (n_rounds,)
        ``theta`` of a threshold round (may be ``+-inf``, not NaN); NaN for a real-valued one.
    default : array-like of float, shape (n_rounds,)
        The abstain value ``q_def``.
    alpha : array-like of float, shape (n_rounds,)
        The weights ``alpha_t``.
    cuts : array-like of float, default=()
        The cuts of every real-valued round, concatenated in round order.
    cut_offsets : array-like of int, shape (n_rounds + 1,), default=None
        Round ``t``'s cuts are ``cuts[cut_offsets[t]:cut_offsets[t + 1]]`` (empty for a
        threshold round). None means no round has cuts (every round is a threshold round).

    Raises
    ------
    ValueError
        If the arrays have different lengths or the wrong types, a kind is unknown, a
        threshold round has cuts or a NaN threshold, or a real-valued round has a threshold,
        no cuts, unsorted cuts or a NaN cut.

    Examples
    --------
    >>> from rankboost.model import Rounds
    >>> rounds = Rounds(
    ...     feature=[0, 1], kind=["threshold", "feature"], threshold=[0.5, float("nan")],
    ...     default=[0.0, 1.0], alpha=[0.7, 0.2], cuts=[1.0, 2.0], cut_offsets=[0, 0, 2],
    ... )
    >>> len(rounds), rounds.kind.tolist(), rounds.cuts_of(1).tolist()
    (2, [0, 1], [1.0, 2.0])
    >>> rounds.ranker(0)
    ThresholdRanker(feature=0, threshold=0.5, default=0.0)
    """

    feature: NDArray[np.int64]
    kind: NDArray[np.int8]
    threshold: NDArray[np.float64]
    default: NDArray[np.float64]
    alpha: NDArray[np.float64]
    cuts: NDArray[np.float64] = field(default_factory=lambda: np.empty(0))
    cut_offsets: NDArray[np.int64] = None  # type: ignore[assignment]  # None: no cuts

    def __post_init__(self) -> None:
        feature = _int_array(self.feature, "feature")
        n = feature.shape[0]
        kind = _kind_array(self.kind)
        threshold = float_array(self.threshold, "threshold")
        default = float_array(self.default, "default")
        alpha = float_array(self.alpha, "alpha")
        cuts = float_array(self.cuts, "cuts")
        if self.cut_offsets is None:
            offsets = np.zeros(n + 1, dtype=np.int64)
        else:
            offsets = _int_array(self.cut_offsets, "cut_offsets")
        lengths = {
            "feature": n,
            "kind": kind.shape[0],
            "threshold": threshold.shape[0],
            "default": default.shape[0],
            "alpha": alpha.shape[0],
            "cut_offsets - 1": offsets.shape[0] - 1,
        }
        if len(set(lengths.values())) != 1:
            raise ValueError(f"the round arrays have different lengths: {lengths}")
        if np.any(feature < 0):
            raise ValueError(f"round {np.flatnonzero(feature < 0)[0]} has a negative feature")
        if offsets[0] != 0 or offsets[-1] != cuts.shape[0] or np.any(np.diff(offsets) < 0):
            raise ValueError(
                f"cut_offsets must rise from 0 to len(cuts) = {cuts.shape[0]}; got "
                f"{offsets.tolist()[:10]}"
            )
        n_cuts = np.diff(offsets)
        is_thr = kind == KIND_THRESHOLD
        for t in np.flatnonzero(is_thr & ((n_cuts > 0) | np.isnan(threshold))).tolist():
            if n_cuts[t]:
                raise ValueError(f"round {t} is a threshold ranker but has {n_cuts[t]} cuts")
            raise ValueError(f"round {t} is a threshold ranker with threshold nan")
        for t in np.flatnonzero(~is_thr & ((n_cuts == 0) | ~np.isnan(threshold))).tolist():
            if n_cuts[t] == 0:
                raise ValueError(f"round {t} is a real-valued ranker with no cuts")
            raise ValueError(
                f"round {t} is a real-valued ranker but its threshold is {threshold[t]!r}, not nan"
            )
        if np.any(np.isnan(cuts)):
            bad = int(np.searchsorted(offsets, np.flatnonzero(np.isnan(cuts))[0], "right")) - 1
            raise ValueError(f"round {bad} has nan among its cuts")
        if cuts.shape[0] > 1:
            down = np.flatnonzero(cuts[1:] < cuts[:-1]) + 1  # cuts[j] < cuts[j - 1]
            inside = down[~np.isin(down, offsets)]  # not at the start of a round
            if inside.size:
                bad = int(np.searchsorted(offsets, inside[0], "right")) - 1
                raise ValueError(f"round {bad} has cuts that are not sorted")
        for name, value in (
            ("feature", feature),
            ("kind", kind),
            ("threshold", threshold),
            ("default", default),
            ("alpha", alpha),
            ("cuts", cuts),
            ("cut_offsets", offsets),
        ):
            object.__setattr__(self, name, frozen_array(value))

    def __setstate__(self, state: dict[str, Any]) -> None:
        _set_frozen_state(self, state)

    @classmethod
    def from_rankers(cls, rankers: Sequence[WeakRanker], alpha: ArrayLike) -> Rounds:
        """The rounds of a list of :class:`ThresholdRanker` / :class:`FeatureRanker`."""
        cuts: list[NDArray[np.float64]] = []
        offsets = [0]
        for t, h in enumerate(rankers):
            if isinstance(h, FeatureRanker):
                cuts.append(np.asarray(h.cuts, dtype=np.float64).ravel())
            elif not isinstance(h, ThresholdRanker):
                raise ValueError(f"round {t}: {h!r} is not a ThresholdRanker or FeatureRanker")
            offsets.append(offsets[-1] + (cuts[-1].shape[0] if isinstance(h, FeatureRanker) else 0))
        return cls(
            feature=np.array([int(h.feature) for h in rankers], dtype=np.int64),
            kind=np.array([KINDS.index(h.kind) for h in rankers], dtype=np.int8),
            threshold=np.array([float(h.threshold) for h in rankers], dtype=np.float64),
            default=np.array([float(h.default) for h in rankers], dtype=np.float64),
            alpha=np.asarray(alpha, dtype=np.float64),
            cuts=np.concatenate(cuts) if cuts else np.empty(0),
            cut_offsets=np.array(offsets, dtype=np.int64),
        )

    def __len__(self) -> int:
        return int(self.feature.shape[0])

    def cuts_of(self, t: int) -> NDArray[np.float64]:
        """The (read-only) cuts of round ``t``; empty for a threshold round."""
        return self.cuts[self.cut_offsets[t] : self.cut_offsets[t + 1]]

    def ranker(self, t: int) -> WeakRanker:
        """Round ``t`` as a :class:`ThresholdRanker` or :class:`FeatureRanker` object."""
        if self.kind[t] == KIND_THRESHOLD:
            return ThresholdRanker(
                int(self.feature[t]), float(self.threshold[t]), float(self.default[t])
            )
        return FeatureRanker(int(self.feature[t]), self.cuts_of(t), float(self.default[t]))

    def predict(self, t: int, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """``h_t(x)`` for every row of the checked feature matrix ``X`` (compared as float32)."""
        col = to_float32(X[:, self.feature[t]])
        if self.kind[t] == KIND_THRESHOLD:
            out = (col > self.threshold[t]).astype(np.float64)
        else:
            cuts = self.cuts_of(t)
            out = np.searchsorted(cuts, col, side="left") / float(cuts.shape[0])
        out[np.isnan(col)] = self.default[t]
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Rounds):
            return NotImplemented
        return all(
            np.array_equal(getattr(self, k), getattr(other, k), equal_nan=k != "cut_offsets")
            for k in ("feature", "kind", "cut_offsets", "threshold", "default", "alpha", "cuts")
        )

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, eq=False)
class StepFunction:
    """The learned function ``H_i`` of one feature (see :meth:`RankBoostModel.step_functions`).

    ``H_i(x) = values[k]`` for ``breaks[k-1] < x <= breaks[k]`` (with ``breaks[-1] = -inf``
    and ``breaks[len(breaks)] = +inf``), i.e. ``values[np.searchsorted(breaks, x,
    side="left")]``: the weak rankers are ``[x > theta]``, so a value equal to a break belongs
    to the interval below it. ``missing`` is ``H_i`` where the feature abstains (NaN).
    Calling it rounds ``x`` to float32 first (:func:`to_float32`), as training did.

    Attributes
    ----------
    breaks : ndarray of float64, shape (n_breaks,)
        Sorted, unique: every threshold and cut of the feature's rounds (may hold ``+-inf``).
    values : ndarray of float64, shape (n_breaks + 1,)
        ``H_i`` on every interval.
    missing : float
        ``H_i`` where the feature is NaN, ``sum_t alpha_t q_def_t``.
    """

    breaks: NDArray[np.float64]
    values: NDArray[np.float64]
    missing: float

    def __post_init__(self) -> None:
        breaks = float_array(self.breaks, "breaks")
        values = float_array(self.values, "values")
        if values.shape[0] != breaks.shape[0] + 1:
            raise ValueError(
                f"values must have len(breaks) + 1 = {breaks.shape[0] + 1} entries; "
                f"got {values.shape[0]}"
            )
        if np.any(np.isnan(breaks)) or np.any(breaks[1:] <= breaks[:-1]):
            raise ValueError("breaks must be sorted, unique and not nan")
        object.__setattr__(self, "breaks", frozen_array(breaks))
        object.__setattr__(self, "values", frozen_array(values))
        object.__setattr__(self, "missing", float(self.missing))

    def __setstate__(self, state: dict[str, Any]) -> None:
        _set_frozen_state(self, state)

    def __call__(self, x: ArrayLike) -> NDArray[np.float64]:
        """``H_i(float32(x))`` for every value of ``x`` (NaN = abstains)."""
        xa = to_float32(x)
        idx = np.searchsorted(self.breaks, xa, side="left")  # NaN sorts last: a valid index
        out: NDArray[np.float64] = np.where(np.isnan(xa), self.missing, self.values[idx])
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StepFunction):
            return NotImplemented
        return (
            np.array_equal(self.breaks, other.breaks)
            and np.array_equal(self.values, other.values, equal_nan=True)
            and (
                self.missing == other.missing
                or (math.isnan(self.missing) and math.isnan(other.missing))
            )
        )

    __hash__ = None  # type: ignore[assignment]


def _sorted_unique(a: NDArray[Any]) -> NDArray[Any]:
    """``np.unique(a)`` of a 1-D array without NaN, by the same sort and mask.

    (``np.unique`` imports ``numpy.ma``, 7 ms of every ``rankboost predict``.)
    """
    s = np.sort(a)
    keep = np.ones(s.shape[0], dtype=bool)
    keep[1:] = s[1:] != s[:-1]
    return s[keep]


def compile_steps(rounds: Rounds, n_rounds: int) -> dict[int, StepFunction]:
    """``H_i`` of every feature used by the first ``n_rounds`` rounds.

    The sums run over the rounds in training order (the float64 results are part of the
    model's behaviour: the golden-file tests pin them bit for bit).
    """
    feats = rounds.feature[:n_rounds]
    out: dict[int, StepFunction] = {}
    for i in _sorted_unique(feats).tolist():
        ts = np.flatnonzero(feats == i).tolist()
        pts = [rounds.threshold[[t for t in ts if rounds.kind[t] == KIND_THRESHOLD]]]
        pts += [rounds.cuts_of(t) for t in ts if rounds.kind[t] == KIND_FEATURE]
        breaks = _sorted_unique(np.concatenate(pts))
        # a representative point of every interval k: breaks[k] for k < len, +inf for the last
        reps = np.concatenate([breaks, [np.inf]])
        values = np.zeros(breaks.shape[0] + 1)
        missing = 0.0
        for t in ts:
            a = float(rounds.alpha[t])
            if rounds.kind[t] == KIND_THRESHOLD:
                values += a * (reps > float(rounds.threshold[t]))
            else:
                cuts = rounds.cuts_of(t)
                b = np.searchsorted(cuts, reps, side="left").astype(np.float64)
                # the last interval lies above every break, hence above every cut
                b[-1] = cuts.shape[0]
                values += a * (b / float(cuts.shape[0]))
            missing += a * float(rounds.default[t])
        out[i] = StepFunction(breaks, values, missing)
    return out
