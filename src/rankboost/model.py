"""The learned ranking function ``H(x) = sum_t alpha_t h_t(x)`` (paper section 3.1).

A model is plain arrays, one entry per boosting round (:class:`Rounds`): the feature, the
kind of weak ranker, its threshold or cuts, its default ``q_def`` and its weight ``alpha``;
plus the training records ``r``, ``Z``, rloss and bound. Every weak ranker is a step function
of one feature, so ``H`` is additive: ``H(x) = sum_i H_i(f_i(x))``. The model compiles each
``H_i`` once into sorted breakpoints and the value of ``H_i`` on every interval, plus its
value where the feature abstains (:meth:`RankBoostModel.step_functions`), and scores with one
``searchsorted`` per used feature: never a Python loop over rows.
"""

from __future__ import annotations

import json
import math
import os
import reprlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._atomic import atomic_write_text
from ._conventions import FEATURE_NUMBERING
from ._validation import check_feature_matrix
from .weak_rankers import FeatureRanker, ThresholdRanker, WeakRanker

__all__ = [
    "FEATURE_NUMBERING",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "HISTORY_KEYS",
    "KINDS",
    "RankBoostModel",
    "Rounds",
    "StepFunction",
    "atomic_write_text",
    "load_model",
]

FORMAT_NAME = "rankboost-model"
#: Version 2 stores the rounds as columns; version 1 (one object per round) still loads.
FORMAT_VERSION = 2

#: The per-round records of :attr:`RankBoostModel.history` (which adds ``feature_label``).
HISTORY_KEYS = ("feature", "threshold", "default", "alpha", "r", "z", "rloss", "bound")
#: The training records kept besides the rounds (the rest of the history is in the rounds).
STAT_KEYS = ("r", "z", "rloss", "bound")
#: Names of the weak-ranker kinds: ``Rounds.kind[t]`` indexes this tuple.
KINDS = ("threshold", "feature")
_THRESHOLD, _FEATURE = 0, 1


def _frozen(a: NDArray[Any]) -> NDArray[Any]:
    a.flags.writeable = False
    return a


def _set_frozen_state(obj: object, state: dict[str, Any]) -> None:
    """``__setstate__`` of the frozen dataclasses: arrays stay read-only after unpickling."""
    for k, v in state.items():
        object.__setattr__(obj, k, _frozen(v) if isinstance(v, np.ndarray) else v)


def _int_array(x: ArrayLike, name: str) -> NDArray[np.int64]:
    a = np.asarray(x)
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {a.shape}")
    if a.size and (a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer)):
        raise ValueError(f"{name} must hold integers; got dtype {a.dtype}")
    return np.array(a, dtype=np.int64)


def _float_array(x: ArrayLike, name: str) -> NDArray[np.float64]:
    a = np.asarray(x)
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {a.shape}")
    if a.size and (a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.number)):
        raise ValueError(f"{name} must hold numbers; got dtype {a.dtype}")
    return np.array(a, dtype=np.float64)


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
        threshold = _float_array(self.threshold, "threshold")
        default = _float_array(self.default, "default")
        alpha = _float_array(self.alpha, "alpha")
        cuts = _float_array(self.cuts, "cuts")
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
        is_thr = kind == _THRESHOLD
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
            object.__setattr__(self, name, _frozen(value))

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
        if self.kind[t] == _THRESHOLD:
            return ThresholdRanker(
                int(self.feature[t]), float(self.threshold[t]), float(self.default[t])
            )
        return FeatureRanker(int(self.feature[t]), self.cuts_of(t), float(self.default[t]))

    def predict(self, t: int, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """``h_t(x)`` for every row of the checked feature matrix ``X``."""
        col = X[:, self.feature[t]]
        if self.kind[t] == _THRESHOLD:
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
        breaks = _float_array(self.breaks, "breaks")
        values = _float_array(self.values, "values")
        if values.shape[0] != breaks.shape[0] + 1:
            raise ValueError(
                f"values must have len(breaks) + 1 = {breaks.shape[0] + 1} entries; "
                f"got {values.shape[0]}"
            )
        if np.any(np.isnan(breaks)) or np.any(breaks[1:] <= breaks[:-1]):
            raise ValueError("breaks must be sorted, unique and not nan")
        object.__setattr__(self, "breaks", _frozen(breaks))
        object.__setattr__(self, "values", _frozen(values))
        object.__setattr__(self, "missing", float(self.missing))

    def __setstate__(self, state: dict[str, Any]) -> None:
        _set_frozen_state(self, state)

    def __call__(self, x: ArrayLike) -> NDArray[np.float64]:
        """``H_i(x)`` for every value of ``x`` (NaN = abstains)."""
        xa = np.asarray(x, dtype=np.float64)
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


def _compile(rounds: Rounds, n_rounds: int) -> dict[int, StepFunction]:
    """``H_i`` of every feature used by the first ``n_rounds`` rounds.

    The sums run over the rounds in training order (the float64 results are part of the
    model's behaviour: the golden-file tests pin them bit for bit).
    """
    feats = rounds.feature[:n_rounds]
    out: dict[int, StepFunction] = {}
    for i in np.unique(feats).tolist():
        ts = np.flatnonzero(feats == i).tolist()
        pts = [rounds.threshold[[t for t in ts if rounds.kind[t] == _THRESHOLD]]]
        pts += [rounds.cuts_of(t) for t in ts if rounds.kind[t] == _FEATURE]
        breaks = np.unique(np.concatenate(pts))
        # a representative point of every interval k: breaks[k] for k < len, +inf for the last
        reps = np.concatenate([breaks, [np.inf]])
        values = np.zeros(breaks.shape[0] + 1)
        missing = 0.0
        for t in ts:
            a = float(rounds.alpha[t])
            if rounds.kind[t] == _THRESHOLD:
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


def _float_to_json(x: float) -> float | str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)


def _float_from_json(x: Any, what: str) -> float:
    if isinstance(x, str):
        if x in ("nan", "inf", "-inf"):
            return float(x)
        raise ValueError(f"malformed model file: {what} is the string {_short(x)}, not a number.")
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"malformed model file: {what} is {_short(x)}, not a number.")
    try:
        return float(x)
    except OverflowError:  # an int beyond the float64 range
        raise ValueError(f"malformed model file: {what} is {_short(x)}, too large.") from None


def _floats_from_json(xs: Any, what: str) -> list[float]:
    if not isinstance(xs, list):
        raise ValueError(f"malformed model file: {what} is {type(xs).__name__}, not a list.")
    return [_float_from_json(v, f"{what}[{j}]") for j, v in enumerate(xs)]


_INT64_MAX = 2**63 - 1
#: The most features a model may have (the SVMlight reader's largest feature index).
MAX_FEATURES = 2**31 - 1
#: Deepest nesting of a value of ``params`` in a model file.
_MAX_PARAMS_DEPTH = 8


def _int_from_json(x: Any, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise ValueError(f"malformed model file: {what} is {_short(x)}, not an int.")
    if not -_INT64_MAX - 1 <= x <= _INT64_MAX:
        raise ValueError(f"malformed model file: {what} is {_short(x)}, outside the int64 range.")
    return x


def _ints_from_json(xs: Any, what: str) -> list[int]:
    if not isinstance(xs, list):
        raise ValueError(f"malformed model file: {what} is {type(xs).__name__}, not a list.")
    return [_int_from_json(v, f"{what}[{j}]") for j, v in enumerate(xs)]


def _short(x: Any) -> str:
    """``repr`` of a value read from a file, shortened (and safe on deeply nested lists)."""
    return reprlib.repr(x)


def _depth(x: Any, limit: int) -> int:
    """Nesting depth of a JSON value, counted up to ``limit + 1`` (no deep recursion)."""
    level, todo = 0, [x]
    while todo and level <= limit:
        nxt: list[Any] = []
        for v in todo:
            if isinstance(v, dict):
                nxt.extend(v.values())
            elif isinstance(v, list):
                nxt.extend(v)
        todo = nxt
        level += 1 if nxt else 0
    return level


def _check_loaded(model: RankBoostModel) -> None:
    """The ranges of a loaded model's fields (a file may have been edited or damaged).

    ``alpha`` finite with ``sum |alpha| < 1e300`` (so no score can overflow: every ``h_t`` is
    in [0, 1]), ``default`` (``q_def``) in [0, 1], ``r`` in [-1, 1], ``z`` finite and > 0
    (the gain importance is ``-ln Z``), ``bound`` finite and >= 0, ``rloss`` in [0, 1],
    ``best_iteration`` in [1, n_rounds].
    """
    r, st = model.rounds, model._stats
    checks = (
        ("rounds.alpha", r.alpha, np.isfinite(r.alpha), "finite"),
        ("rounds.default", r.default, (r.default >= 0) & (r.default <= 1), "in [0, 1]"),
        ("history.r", st["r"], (st["r"] >= -1) & (st["r"] <= 1), "in [-1, 1]"),
        ("history.z", st["z"], np.isfinite(st["z"]) & (st["z"] > 0), "finite and > 0"),
        ("history.rloss", st["rloss"], (st["rloss"] >= 0) & (st["rloss"] <= 1), "in [0, 1]"),
        ("history.bound", st["bound"], np.isfinite(st["bound"]) & (st["bound"] >= 0), ">= 0"),
    )
    for name, values, ok, allowed in checks:
        bad = np.flatnonzero(~ok)
        if bad.size:
            t = int(bad[0])
            raise ValueError(
                f"malformed model file: {name}[{t}] is {float(values[t])!r}; it must be {allowed}."
            )
    total = float(np.abs(r.alpha).sum())
    if not total < 1e300:
        raise ValueError(
            f"malformed model file: the weights |alpha| sum to {total!r}; scores would overflow."
        )
    best = model.best_iteration
    if best is not None and not 1 <= best <= model.n_rounds:
        raise ValueError(
            f"malformed model file: best_iteration is {best}; it must be between 1 and the "
            f"{model.n_rounds} rounds of the model."
        )


def _rounds_v1(data: dict[str, Any], n_features: int) -> tuple[Rounds, dict[str, Any]]:
    """Version 1: ``rounds`` is a list of objects, ``history`` repeats feature/alpha/..."""
    entries = data["rounds"]
    if not isinstance(entries, list):
        raise ValueError(
            f"malformed model file: rounds is {type(entries).__name__}, not a list (version 1)."
        )
    feature, kind, threshold, default, alpha = [], [], [], [], []
    cuts: list[float] = []
    offsets = [0]
    for t, e in enumerate(entries):
        f = _int_from_json(e["feature"], f"rounds[{t}].feature")
        if not 0 <= f < n_features:
            raise ValueError(f"round {t} uses feature {f} of {n_features}")
        feature.append(f)
        default.append(_float_from_json(e["default"], f"rounds[{t}].default"))
        alpha.append(_float_from_json(e["alpha"], f"rounds[{t}].alpha"))
        if e["kind"] == "threshold":
            kind.append(_THRESHOLD)
            threshold.append(_float_from_json(e["threshold"], f"rounds[{t}].threshold"))
        elif e["kind"] == "feature":
            kind.append(_FEATURE)
            threshold.append(math.nan)
            cuts.extend(_float_from_json(c, f"rounds[{t}].cuts") for c in e["cuts"])
        else:
            raise ValueError(f"round {t} has unknown kind {_short(e['kind'])}")
        offsets.append(len(cuts))
    rounds = Rounds(
        feature=np.array(feature, dtype=np.int64),
        kind=np.array(kind, dtype=np.int8),
        threshold=np.array(threshold, dtype=np.float64),
        default=np.array(default, dtype=np.float64),
        alpha=np.array(alpha, dtype=np.float64),
        cuts=np.array(cuts, dtype=np.float64),
        cut_offsets=np.array(offsets, dtype=np.int64),
    )
    hist = data["history"]
    feature_history = _ints_from_json(hist["feature"], "history.feature")
    history: dict[str, Any] = {"feature": np.array(feature_history, dtype=np.int64)}
    for k in HISTORY_KEYS:
        if k != "feature":
            history[k] = np.array(_floats_from_json(hist[k], f"history.{k}"), dtype=np.float64)
    if len({len(v) for v in history.values()} | {len(rounds)}) != 1:
        raise ValueError("rounds and history have different lengths")
    return rounds, history  # the model checks that the history agrees with the rounds


def _rounds_v2(data: dict[str, Any]) -> tuple[Rounds, dict[str, Any]]:
    """Version 2: ``rounds`` and ``history`` are objects of columns (one list per field)."""
    cols = data["rounds"]
    if not isinstance(cols, dict):
        raise ValueError(
            f"malformed model file: rounds is {type(cols).__name__}, not an object of columns."
        )
    names = ("feature", "kind", "threshold", "default", "alpha", "cuts")
    for name in names:
        if not isinstance(cols[name], list):
            raise ValueError(
                f"malformed model file: rounds.{name} is {type(cols[name]).__name__}, not a list."
            )
    lengths = {name: len(cols[name]) for name in names}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"the rounds columns have different lengths: {lengths}")
    kind = []
    for t, k in enumerate(cols["kind"]):
        if k not in KINDS:
            raise ValueError(f"round {t} has unknown kind {_short(k)}")
        kind.append(KINDS.index(k))
    cuts: list[float] = []
    offsets = [0]
    for t, c in enumerate(cols["cuts"]):
        cuts.extend(_floats_from_json(c, f"rounds.cuts[{t}]"))
        offsets.append(len(cuts))
    rounds = Rounds(
        feature=np.array(
            [_int_from_json(f, f"rounds.feature[{t}]") for t, f in enumerate(cols["feature"])],
            dtype=np.int64,
        ),
        kind=np.array(kind, dtype=np.int8),
        threshold=np.array(_floats_from_json(cols["threshold"], "rounds.threshold")),
        default=np.array(_floats_from_json(cols["default"], "rounds.default")),
        alpha=np.array(_floats_from_json(cols["alpha"], "rounds.alpha")),
        cuts=np.array(cuts, dtype=np.float64),
        cut_offsets=np.array(offsets, dtype=np.int64),
    )
    hist = data["history"]
    if not isinstance(hist, dict):
        raise ValueError(
            f"malformed model file: history is {type(hist).__name__}, not an object of columns."
        )
    return rounds, {k: np.array(_floats_from_json(hist[k], f"history.{k}")) for k in STAT_KEYS}


def _check_agrees(rounds: Rounds, history: Mapping[str, Any], *keys: str) -> None:
    """Raise ValueError if a column of ``history`` differs from the rounds' (NaN == NaN)."""
    for k in keys:
        if k not in history:
            continue
        mine = getattr(rounds, k)
        theirs = np.asarray(history[k])
        if theirs.shape != mine.shape:
            raise ValueError(
                f"rounds and history have different lengths ({len(rounds)} rounds, "
                f"history[{k!r}] of shape {theirs.shape})"
            )
        same = np.asarray(theirs == mine, dtype=bool)
        if mine.dtype.kind == "f" and theirs.dtype.kind in "fiu":
            same |= np.isnan(mine) & np.isnan(theirs.astype(np.float64))
        bad = np.flatnonzero(~same) if same.shape == mine.shape else [0]
        if len(bad):
            raise ValueError(f"rounds[{bad[0]}] disagrees with history ({k})")


class RankBoostModel:
    """A trained RankBoost ranking function ``H(x) = sum_t alpha_t h_t(x)``.

    Built by :func:`rankboost.train`; load a saved one with :func:`rankboost.load_model`.
    The state is plain arrays (:attr:`rounds` and the training records); :attr:`history`,
    :attr:`rankers` and :attr:`alphas` are views built from them.

    Parameters
    ----------
    rankers : list of ThresholdRanker or FeatureRanker
        The weak rankers, one per round.
    history : dict of array-like
        Per-round records with at least ``alpha``, ``r``, ``z``, ``rloss`` and ``bound``
        (``feature``, ``threshold`` and ``default``, when present, must agree with
        ``rankers``). Other keys are ignored.
    n_features : int
        Number of features the model expects.
    feature_names, params, stop_reason, best_iteration
        See the attributes. :meth:`from_arrays` builds a model from the arrays directly.

    Attributes
    ----------
    rounds : Rounds
        The weak rankers and their weights, one (read-only) array entry per round.
    n_features : int
        Number of features the model expects.
    feature_names : list of str or None
        Names of the features, when known.
    params : dict
        The training parameters.
    stop_reason : str or None
        Why training stopped before ``n_rounds``, if it did.
    best_iteration : int or None
        Number of rounds chosen by early stopping (``decision_function`` uses them all
        unless ``n_rounds`` is given).
    """

    def __init__(
        self,
        rankers: list[WeakRanker],
        history: Mapping[str, ArrayLike],
        n_features: int,
        *,
        feature_names: list[str] | None = None,
        params: dict[str, Any] | None = None,
        stop_reason: str | None = None,
        best_iteration: int | None = None,
    ) -> None:
        if "alpha" not in history:
            raise ValueError("history has no 'alpha': the weights of the rounds are needed")
        rounds = Rounds.from_rankers(rankers, history["alpha"])
        self._init(rounds, history, n_features, feature_names, params, stop_reason, best_iteration)

    @classmethod
    def from_arrays(
        cls,
        rounds: Rounds | Mapping[str, ArrayLike],
        history: Mapping[str, ArrayLike],
        n_features: int,
        *,
        feature_names: list[str] | None = None,
        params: dict[str, Any] | None = None,
        stop_reason: str | None = None,
        best_iteration: int | None = None,
    ) -> RankBoostModel:
        """Build a model from its arrays.

        Parameters
        ----------
        rounds : Rounds or mapping of array-like
            The rounds, or the keyword arguments of :class:`Rounds` (``feature``, ``kind``,
            ``threshold``, ``default``, ``alpha``, and ``cuts`` / ``cut_offsets`` when some
            round is real-valued).
        history : mapping of array-like
            ``r``, ``z``, ``rloss`` and ``bound`` per round. ``feature``, ``threshold``,
            ``default`` and ``alpha``, when present, must agree with ``rounds``; other keys
            are ignored.
        n_features : int
            Number of features the model expects.
        feature_names, params, stop_reason, best_iteration
            See :class:`RankBoostModel`.

        Returns
        -------
        model : RankBoostModel

        Raises
        ------
        ValueError
            If the arrays are inconsistent (see :class:`Rounds`), a round uses a feature
            outside ``[0, n_features)``, or the history is missing a key, has another length
            or disagrees with the rounds.

        Examples
        --------
        >>> import numpy as np
        >>> from rankboost.model import RankBoostModel
        >>> model = RankBoostModel.from_arrays(
        ...     {"feature": [0, 0], "kind": [0, 0], "threshold": [0.0, 1.0],
        ...      "default": [0.0, 0.0], "alpha": [1.0, 0.5]},
        ...     {"r": [0.5, 0.2], "z": [0.8, 0.9], "rloss": [0.2, 0.1], "bound": [0.8, 0.72]},
        ...     n_features=1,
        ... )
        >>> model.decision_function([[-1.0], [0.5], [2.0], [np.nan]])
        array([0. , 1. , 1.5, 0. ])
        """
        if not isinstance(rounds, Rounds):
            rounds = Rounds(**cast(Mapping[str, Any], rounds))
        self = cls.__new__(cls)
        self._init(rounds, history, n_features, feature_names, params, stop_reason, best_iteration)
        return self

    def _init(
        self,
        rounds: Rounds,
        history: Mapping[str, ArrayLike],
        n_features: int,
        feature_names: list[str] | None,
        params: dict[str, Any] | None,
        stop_reason: str | None,
        best_iteration: int | None,
    ) -> None:
        n_features = int(n_features)
        outside = np.flatnonzero(rounds.feature >= n_features)
        if outside.size:
            t = int(outside[0])
            raise ValueError(f"round {t} uses feature {rounds.feature[t]} of {n_features}")
        missing = [k for k in STAT_KEYS if k not in history]
        if missing:
            raise ValueError(f"history has no {missing} (it needs {list(STAT_KEYS)})")
        stats = {k: _float_array(history[k], f"history[{k!r}]") for k in STAT_KEYS}
        for k, v in stats.items():
            if v.shape[0] != len(rounds):
                raise ValueError(
                    f"rounds and history have different lengths ({len(rounds)} rounds, "
                    f"{v.shape[0]} values of history[{k!r}])"
                )
        _check_agrees(rounds, history, "feature", "threshold", "default", "alpha")
        self._rounds = rounds
        self._stats = {k: _frozen(v) for k, v in stats.items()}
        self.n_features = n_features
        self.feature_names = None if feature_names is None else [str(f) for f in feature_names]
        self.params = dict(params or {})
        self.stop_reason = stop_reason
        self.best_iteration = best_iteration
        self._steps: dict[int, dict[int, StepFunction]] = {}
        self._rankers: tuple[WeakRanker, ...] | None = None

    # ------------------------------------------------------------------ views of the arrays
    @property
    def rounds(self) -> Rounds:
        """The weak rankers and their weights: one read-only array entry per round."""
        return self._rounds

    @property
    def n_rounds(self) -> int:
        """Number of boosting rounds (weak rankers) in the model."""
        return len(self.rounds)

    @property
    def alphas(self) -> NDArray[np.float64]:
        """The weights ``alpha_t`` (a copy of ``rounds.alpha``)."""
        return self.rounds.alpha.copy()

    @property
    def history(self) -> dict[str, NDArray[Any]]:
        """One entry per round (a new dict of copies, built from the arrays on every access).

        ``feature`` (the 0-based column of ``X``), ``threshold`` (NaN for a real-valued
        ranker), ``default`` (``q_def``), ``alpha``, ``r``, ``z`` (the exact ``Z_t``),
        ``rloss`` (training loss of ``H_t``, ties counted as errors), ``bound``
        (``prod Z_s``), and ``feature_label``: the feature as ``rankboost info`` and the plots
        show it (:attr:`feature_labels`: its name, else ``f<column + 1>``).

        Examples
        --------
        >>> import numpy as np
        >>> import rankboost as rb
        >>> X = np.array([[0.0, 1.0], [0.0, 3.0], [0.0, 2.0]])
        >>> model = rb.train(X, rb.BipartiteFeedback([0, 1, 1]), n_rounds=1)
        >>> int(model.history["feature"][0]), str(model.history["feature_label"][0])
        (1, 'f2')
        """
        r = self.rounds
        out: dict[str, NDArray[Any]] = {
            "feature": r.feature.copy(),
            "threshold": r.threshold.copy(),
            "default": r.default.copy(),
            "alpha": r.alpha.copy(),
        }
        out.update((k, v.copy()) for k, v in self._stats.items())
        labels = self.feature_labels
        out["feature_label"] = np.array([labels[i] for i in r.feature.tolist()], dtype=object)
        return {k: out[k] for k in (*HISTORY_KEYS, "feature_label")}

    def feature_label(self, i: int) -> str:
        """The label of column ``i`` (0-based) in ``rankboost info``, the plots and the history.

        Its name when the model has ``feature_names``, else ``f<i + 1>``: the 1-based id of
        a LETOR file (``FEATURE_NUMBERING``, which every place that shows such labels states).

        Examples
        --------
        >>> import numpy as np
        >>> import rankboost as rb
        >>> X = np.array([[0.0, 1.0], [0.0, 3.0], [0.0, 2.0]])
        >>> model = rb.train(X, rb.BipartiteFeedback([0, 1, 1]), n_rounds=1)
        >>> model.feature_label(0), model.feature_labels
        ('f1', ['f1', 'f2'])
        """
        if not 0 <= int(i) < self.n_features:
            raise IndexError(f"feature_label: column {i} is not in [0, {self.n_features}).")
        return self.feature_names[int(i)] if self.feature_names else f"f{int(i) + 1}"

    @property
    def feature_labels(self) -> list[str]:
        """:meth:`feature_label` of every column (``feature_names`` when the model has them)."""
        if self.feature_names:
            return list(self.feature_names)
        return [f"f{i + 1}" for i in range(self.n_features)]

    @property
    def rankers(self) -> list[WeakRanker]:
        """The weak rankers as :class:`ThresholdRanker` / :class:`FeatureRanker` objects."""
        if self._rankers is None:
            self._rankers = tuple(self.rounds.ranker(t) for t in range(self.n_rounds))
        return list(self._rankers)

    # ------------------------------------------------------------------ scoring
    def _check_n_rounds(self, n_rounds: int | None) -> int:
        if n_rounds is None:
            return self.n_rounds
        if isinstance(n_rounds, bool) or not isinstance(n_rounds, (int, np.integer)):
            raise TypeError(f"n_rounds must be an int or None; got {n_rounds!r}.")
        if not 0 <= n_rounds <= self.n_rounds:
            raise ValueError(
                f"n_rounds must be between 0 and {self.n_rounds} (the rounds in the model); "
                f"got {n_rounds}."
            )
        return int(n_rounds)

    def _compiled(self, n_rounds: int) -> dict[int, StepFunction]:
        if n_rounds not in self._steps:
            self._steps[n_rounds] = _compile(self.rounds, n_rounds)
        return self._steps[n_rounds]

    def step_functions(self, n_rounds: int | None = None) -> dict[int, StepFunction]:
        """The learned function ``H_i`` of every used feature, as exact step functions.

        Every weak ranker looks at one feature, so ``H(x) = sum_i H_i(f_i(x))``, and each
        ``H_i`` is a step function: ``values[k]`` on ``breaks[k-1] < x <= breaks[k]``
        (``values[np.searchsorted(breaks, x, side="left")]``; the rankers are
        ``[x > theta]``, so a value on a break takes the value below it), ``missing`` where
        the feature is NaN. These are the float64 numbers :meth:`decision_function` adds up:
        ``H(x) = sum_i step_functions()[i](x[:, i])``, bit for bit.

        Parameters
        ----------
        n_rounds : int, default=None
            Use only the first ``n_rounds`` rounds (None = all).

        Returns
        -------
        functions : dict of int to StepFunction
            One read-only :class:`StepFunction` per feature used by those rounds, keyed by
            the 0-based feature index in increasing order. An unused feature contributes 0.

        Examples
        --------
        >>> import numpy as np
        >>> import rankboost as rb
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(100, 3))
        >>> model = rb.train(X, rb.BipartiteFeedback(X[:, 0] + rng.normal(size=100) > 0), 10)
        >>> steps = model.step_functions()
        >>> sf = steps[0]
        >>> sf.values.shape == (sf.breaks.shape[0] + 1,)
        True
        >>> bool(sf(sf.breaks[0]) == sf.values[0])  # a break belongs to the interval below
        True
        >>> H = sum(f(X[:, i]) for i, f in steps.items())
        >>> bool(np.array_equal(H, model.decision_function(X)))
        True
        """
        return dict(self._compiled(self._check_n_rounds(n_rounds)))

    def decision_function(self, X: ArrayLike, n_rounds: int | None = None) -> NDArray:
        """Return ``H(x)`` for every row of ``X`` (higher = ranked higher).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features; NaN where a feature abstains.
        n_rounds : int, default=None
            Use only the first ``n_rounds`` weak rankers (None = all).

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        Xc = check_feature_matrix(X, n_features=self.n_features)
        k = self._check_n_rounds(n_rounds)
        out = np.zeros(Xc.shape[0])
        for i, sf in self._compiled(k).items():
            out += sf(Xc[:, i])
        return out

    predict = decision_function

    def staged_decision_function(self, X: ArrayLike) -> Iterator[NDArray[np.float64]]:
        """Yield ``H_t(x)`` after every round ``t = 1..T``."""
        Xc = check_feature_matrix(X, n_features=self.n_features)
        out = np.zeros(Xc.shape[0])
        for t in range(self.n_rounds):
            out = out + self.rounds.alpha[t] * self.rounds.predict(t, Xc)
            yield out

    def feature_function(self, feature: int) -> tuple[NDArray, NDArray, float]:
        """The learned step function ``H_i`` of one feature, as copies.

        Returns ``(breaks, values, missing)`` of :meth:`step_functions` for ``feature``:
        ``H_i(x) = values[k]`` for ``breaks[k-1] < x <= breaks[k]`` and ``missing`` where
        the feature is NaN; ``(empty, [0.0], 0.0)`` for an unused feature.
        """
        sf = self._compiled(self.n_rounds).get(int(feature))
        if sf is None:
            return np.empty(0), np.zeros(1), 0.0
        return sf.breaks.copy(), sf.values.copy(), sf.missing

    # ------------------------------------------------------------------ importances
    def feature_importances(self, importance_type: str = "gain") -> NDArray[np.float64]:
        """Importance of every feature, normalised to sum to 1.

        ``"gain"`` (default): the share of the training-loss bound's reduction owed to the
        feature, ``sum_{t: f_t = i} -ln Z_t`` (RankBoost greedily minimises ``prod Z_t``, so
        this is how much each feature lowered the bound). ``"split"``: how many rounds chose
        the feature. ``"alpha"``: ``sum |alpha_t|``.
        """
        feats = self.rounds.feature
        if importance_type == "gain":
            w = -np.log(self._stats["z"])
        elif importance_type == "split":
            w = np.ones(feats.shape[0])
        elif importance_type == "alpha":
            w = np.abs(self.rounds.alpha)
        else:
            raise ValueError(
                f"importance_type must be 'gain', 'split' or 'alpha'; got {importance_type!r}."
            )
        imp = np.bincount(feats, np.maximum(w, 0.0), minlength=self.n_features)
        total = imp.sum()
        out: NDArray[np.float64] = imp / total if total > 0 else imp.astype(np.float64)
        return out

    @property
    def feature_importances_(self) -> NDArray[np.float64]:
        """``feature_importances("gain")``: share of ``-sum ln Z_t`` per feature."""
        return self.feature_importances("gain")

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (format name and version included).

        Version 2 layout: ``"rounds"`` holds one list per field (``feature``, ``kind`` as
        ``"threshold"`` / ``"feature"``, ``threshold``, ``default``, ``alpha``, and ``cuts``,
        one list per round, empty for a threshold round) and ``"history"`` the lists ``r``,
        ``z``, ``rloss`` and ``bound``. Floats are exact (``repr``); NaN and infinities are the
        strings ``"nan"``, ``"inf"`` and ``"-inf"``.
        """
        r = self.rounds

        def floats(a: NDArray[np.float64]) -> list[float | str]:
            return [_float_to_json(v) for v in a.tolist()]

        rounds = {
            "feature": r.feature.tolist(),
            "kind": [KINDS[k] for k in r.kind.tolist()],
            "threshold": floats(r.threshold),
            "default": floats(r.default),
            "alpha": floats(r.alpha),
            "cuts": [floats(r.cuts_of(t)) for t in range(len(r))],
        }
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "n_features": self.n_features,
            "feature_names": self.feature_names,
            "params": self.params,
            "stop_reason": self.stop_reason,
            "best_iteration": self.best_iteration,
            "rounds": rounds,
            "history": {k: floats(self._stats[k]) for k in STAT_KEYS},
        }

    @classmethod
    def from_dict(cls, data: Any) -> RankBoostModel:
        """Rebuild a model from :meth:`to_dict` output (format version 1 or 2).

        Raises
        ------
        ValueError
            If ``data`` is not a rankboost model, is malformed, or has a newer format version.
        """
        if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
            raise ValueError(
                f'not a rankboost model: the JSON has no "format": "{FORMAT_NAME}" field.'
            )
        version = data.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise ValueError(f"malformed model file: version is {_short(version)}, not an int.")
        if version > FORMAT_VERSION:
            raise ValueError(
                f"this model file has format version {version}, newer than the {FORMAT_VERSION} "
                "this rankboost reads; upgrade rankboost to load it."
            )
        if version < 1:
            raise ValueError(f"malformed model file: unknown format version {version}.")
        try:
            n_features = _int_from_json(data["n_features"], "n_features")
            if not 1 <= n_features <= MAX_FEATURES:
                raise ValueError(f"n_features is {n_features}, not between 1 and {MAX_FEATURES}")
            if version == 1:
                rounds, history = _rounds_v1(data, n_features)
            else:
                rounds, history = _rounds_v2(data)
            names = data.get("feature_names")
            if names is not None and (
                not isinstance(names, list)
                or len(names) != n_features
                or not all(isinstance(s, str) for s in names)
            ):
                raise ValueError(f"feature_names is not a list of {n_features} strings")
            params = data.get("params") or {}
            if not isinstance(params, dict):
                raise ValueError(f"params is {type(params).__name__}, not an object")
            if _depth(params, _MAX_PARAMS_DEPTH) > _MAX_PARAMS_DEPTH:
                raise ValueError(f"params nests deeper than {_MAX_PARAMS_DEPTH} levels")
            stop_reason = data.get("stop_reason")
            if stop_reason is not None and not isinstance(stop_reason, str):
                raise ValueError(f"stop_reason is {_short(stop_reason)}, not a string")
            best = data.get("best_iteration")
            if best is not None:
                _int_from_json(best, "best_iteration")
            model = cls.from_arrays(
                rounds,
                history,
                n_features,
                feature_names=names,
                params=params,
                stop_reason=stop_reason,
                best_iteration=best,
            )
            _check_loaded(model)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed model file: missing or bad field {exc}.") from exc
        except (RecursionError, OverflowError):
            raise ValueError(
                "malformed model file: a field holds lists nested too deeply or a number too large."
            ) from None
        except ValueError as exc:
            if str(exc).startswith("malformed"):
                raise
            raise ValueError(f"malformed model file: {exc}.") from exc
        return model

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model as versioned JSON, atomically (temp file + rename)."""
        text = json.dumps(self.to_dict(), indent=1, allow_nan=False)
        atomic_write_text(path, text + "\n")

    def __repr__(self) -> str:
        return f"RankBoostModel(n_rounds={self.n_rounds}, n_features={self.n_features})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RankBoostModel):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def export(self, path: str | os.PathLike[str], format: str, **options: Any) -> None:
        """Write the model for another consumer: XGBoost, LightGBM, ONNX, RankLib, LTR plugins.

        See :func:`rankboost.export.export_model` for the formats and ``options``
        (``n_rounds``, ``trees``, ``feature_names``, ...) and docs/serving.md for what each
        consumer computes. The file is written atomically.

        Examples
        --------
        >>> import numpy as np
        >>> import rankboost as rb
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(100, 3))
        >>> model = rb.train(X, rb.BipartiteFeedback(X[:, 0] + rng.normal(size=100) > 0), 10)
        >>> model.export("model.lgb.txt", format="lightgbm")  # lightgbm.Booster(model_file=...)
        """
        from .export import export_model

        export_model(self, path, format, **options)


def _reject_constant(name: str) -> Any:
    raise ValueError(
        f"the non-standard JSON constant {name} (rankboost writes non-finite numbers as the "
        'strings "nan", "inf" and "-inf")'
    )


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:30]} is beyond the float64 range")
    return value


def read_json(
    path: str | os.PathLike[str], what: str = "model file", kind: str = "rankboost model"
) -> Any:
    """The strict JSON content of a model file; every problem is one clear error.

    Standard JSON only: the constants ``NaN`` / ``Infinity`` and numbers beyond the float64
    range (``1e999``) are refused, as is nesting too deep for the parser.

    Raises
    ------
    FileNotFoundError, IsADirectoryError
        If ``path`` does not exist or is a folder (the message names it).
    ValueError
        If the file is not UTF-8 or not valid JSON.
    """
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"{what} {str(p)!r} is a directory; pass the path of a file.")
    if not p.exists():
        raise FileNotFoundError(f"{what} {str(p)!r} does not exist.")
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path} is not valid JSON (not UTF-8 text: {exc.reason} at byte {exc.start}); is "
            f"it a {kind}?"
        ) from None
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except RecursionError:
        raise ValueError(
            f"{path} is not valid JSON for rankboost: its lists or objects are nested too "
            f"deeply; is it a {kind}?"
        ) from None
    except ValueError as exc:  # json.JSONDecodeError, and the two hooks above
        raise ValueError(f"{path} is not valid JSON ({exc}); is it a {kind}?") from None


def load_model(path: str | os.PathLike[str]) -> RankBoostModel:
    """Load a model saved by :meth:`RankBoostModel.save` (format version 1 or 2).

    Every field is checked: types, lengths, ranges (finite weights, ``q_def`` in [0, 1],
    ``r`` in [-1, 1], ...), and the rounds against the history.

    Raises
    ------
    FileNotFoundError, IsADirectoryError
        If ``path`` does not exist or is a folder.
    ValueError
        If the file is not valid JSON, not a rankboost model, malformed, or of a newer
        format version.
    """
    return RankBoostModel.from_dict(read_json(path))
