"""The learned ranking function ``H(x) = sum_t alpha_t h_t(x)`` (paper section 3, Knowl 1).

Every weak ranker is a step function of one feature, so ``H`` is additive:
``H(x) = sum_i H_i(f_i(x))``. The model compiles each ``H_i`` once into sorted breakpoints
and the value of ``H_i`` on every interval (plus its value where the feature abstains), and
scores with one ``searchsorted`` per used feature: never a Python loop over rounds per row.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._atomic import atomic_write_text
from ._validation import check_feature_matrix
from .weak_rankers import FeatureRanker, ThresholdRanker, WeakRanker

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "RankBoostModel", "atomic_write_text", "load_model"]

FORMAT_NAME = "rankboost-model"
FORMAT_VERSION = 1

HISTORY_KEYS = ("feature", "threshold", "default", "alpha", "r", "z", "rloss", "bound")


@dataclass
class _StepFunction:
    breaks: NDArray[np.float64]  # sorted, unique
    values: NDArray[np.float64]  # len(breaks) + 1: value on interval #{breaks < x}
    missing: float  # value where the feature is NaN


def _compile(rankers: list[WeakRanker], alphas: NDArray[np.float64]) -> dict[int, _StepFunction]:
    by_feature: dict[int, list[int]] = {}
    for t, h in enumerate(rankers):
        by_feature.setdefault(h.feature, []).append(t)
    out: dict[int, _StepFunction] = {}
    for i, ts in sorted(by_feature.items()):
        pts: list[NDArray[np.float64]] = []
        for t in ts:
            h = rankers[t]
            if isinstance(h, ThresholdRanker):
                pts.append(np.array([h.threshold]))
            else:
                pts.append(h.cuts)
        breaks = np.unique(np.concatenate(pts))
        # a representative point of every interval k: breaks[k] for k < len, +inf for the last
        reps = np.concatenate([breaks, [np.inf]])
        values = np.zeros(breaks.shape[0] + 1)
        missing = 0.0
        for t in ts:
            h = rankers[t]
            a = float(alphas[t])
            if isinstance(h, ThresholdRanker):
                values += a * (reps > h.threshold)
            else:
                b = np.searchsorted(h.cuts, reps, side="left").astype(np.float64)
                # the last interval lies above every break, hence above every cut
                b[-1] = h.cuts.shape[0]
                values += a * (b / float(h.cuts.shape[0]))
            missing += a * h.default
        out[i] = _StepFunction(breaks, values, missing)
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
        raise ValueError(f"malformed model file: {what} is the string {x!r}, not a number.")
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"malformed model file: {what} is {x!r}, not a number.")
    return float(x)


class RankBoostModel:
    """A trained RankBoost ranking function.

    Built by :func:`rankboost.train`; load a saved one with :func:`rankboost.load_model`.

    Attributes
    ----------
    n_features : int
        Number of features the model expects.
    feature_names : list of str or None
        Names of the features, when known.
    history : dict of ndarray
        One entry per round: ``feature``, ``threshold`` (NaN for a real-valued ranker),
        ``default`` (``q_def``), ``alpha``, ``r``, ``z`` (the exact ``Z_t``), ``rloss``
        (training loss of ``H_t``, ties counted as errors) and ``bound`` (``prod Z_s``).
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
        history: dict[str, NDArray[Any]],
        n_features: int,
        *,
        feature_names: list[str] | None = None,
        params: dict[str, Any] | None = None,
        stop_reason: str | None = None,
        best_iteration: int | None = None,
    ) -> None:
        self.rankers = list(rankers)
        self.history = {k: np.asarray(history[k]) for k in HISTORY_KEYS}
        self.n_features = int(n_features)
        self.feature_names = None if feature_names is None else [str(f) for f in feature_names]
        self.params = dict(params or {})
        self.stop_reason = stop_reason
        self.best_iteration = best_iteration
        self._steps: dict[int, dict[int, _StepFunction]] = {}

    # ------------------------------------------------------------------ scoring
    @property
    def n_rounds(self) -> int:
        """Number of boosting rounds (weak rankers) in the model."""
        return len(self.rankers)

    @property
    def alphas(self) -> NDArray[np.float64]:
        """The weights ``alpha_t``."""
        return np.asarray(self.history["alpha"], dtype=np.float64)

    def _step_functions(self, n_rounds: int) -> dict[int, _StepFunction]:
        if n_rounds not in self._steps:
            self._steps[n_rounds] = _compile(self.rankers[:n_rounds], self.alphas[:n_rounds])
        return self._steps[n_rounds]

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
        for i, sf in self._step_functions(k).items():
            col = Xc[:, i]
            idx = np.searchsorted(sf.breaks, col, side="left")
            vals = sf.values[np.minimum(idx, sf.values.shape[0] - 1)]
            out += np.where(np.isnan(col), sf.missing, vals)
        return out

    predict = decision_function

    def staged_decision_function(self, X: ArrayLike) -> Iterator[NDArray[np.float64]]:
        """Yield ``H_t(x)`` after every round ``t = 1..T``."""
        Xc = check_feature_matrix(X, n_features=self.n_features)
        out = np.zeros(Xc.shape[0])
        for h, a in zip(self.rankers, self.alphas, strict=True):
            out = out + a * h.predict(Xc)
            yield out

    def feature_function(self, feature: int) -> tuple[NDArray, NDArray, float]:
        """The learned step function ``H_i`` of one feature.

        Returns ``(breaks, values, missing)``: ``H_i(x) = values[k]`` for
        ``breaks[k-1] < x <= breaks[k]`` and ``missing`` where the feature is NaN.
        """
        sf = self._step_functions(self.n_rounds).get(int(feature))
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
        feats = np.asarray(self.history["feature"], dtype=np.int64)
        if importance_type == "gain":
            w = -np.log(np.asarray(self.history["z"], dtype=np.float64))
        elif importance_type == "split":
            w = np.ones(feats.shape[0])
        elif importance_type == "alpha":
            w = np.abs(self.alphas)
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
        """A JSON-ready dict (format name and version included)."""
        rounds = []
        for h, a in zip(self.rankers, self.alphas, strict=True):
            entry: dict[str, Any] = {
                "kind": h.kind,
                "feature": int(h.feature),
                "default": _float_to_json(h.default),
                "alpha": _float_to_json(float(a)),
            }
            if isinstance(h, ThresholdRanker):
                entry["threshold"] = _float_to_json(h.threshold)
            else:
                entry["cuts"] = [_float_to_json(float(c)) for c in h.cuts]
            rounds.append(entry)
        history = {
            k: [_float_to_json(float(v)) for v in self.history[k]]
            for k in HISTORY_KEYS
            if k not in ("feature",)
        }
        history["feature"] = [int(v) for v in self.history["feature"]]
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "n_features": self.n_features,
            "feature_names": self.feature_names,
            "params": self.params,
            "stop_reason": self.stop_reason,
            "best_iteration": self.best_iteration,
            "rounds": rounds,
            "history": history,
        }

    @classmethod
    def from_dict(cls, data: Any) -> RankBoostModel:
        """Rebuild a model from :meth:`to_dict` output; raises ValueError if malformed."""
        if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
            raise ValueError(
                f'not a rankboost model: the JSON has no "format": "{FORMAT_NAME}" field.'
            )
        version = data.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise ValueError(f"malformed model file: version is {version!r}, not an int.")
        if version > FORMAT_VERSION:
            raise ValueError(
                f"this model file has format version {version}, newer than the {FORMAT_VERSION} "
                "this rankboost reads; upgrade rankboost to load it."
            )
        try:
            n_features = int(data["n_features"])
            rankers: list[WeakRanker] = []
            for t, e in enumerate(data["rounds"]):
                feature = int(e["feature"])
                if not 0 <= feature < n_features:
                    raise ValueError(f"round {t} uses feature {feature} of {n_features}")
                default = _float_from_json(e["default"], f"rounds[{t}].default")
                if e["kind"] == "threshold":
                    thr = _float_from_json(e["threshold"], f"rounds[{t}].threshold")
                    rankers.append(ThresholdRanker(feature, thr, default))
                elif e["kind"] == "feature":
                    cuts = np.array([_float_from_json(c, f"rounds[{t}].cuts") for c in e["cuts"]])
                    rankers.append(FeatureRanker(feature, cuts, default))
                else:
                    raise ValueError(f"round {t} has unknown kind {e['kind']!r}")
            hist = data["history"]
            history: dict[str, NDArray[Any]] = {
                "feature": np.asarray(hist["feature"], dtype=np.int64)
            }
            for k in HISTORY_KEYS:
                if k != "feature":
                    history[k] = np.array(
                        [_float_from_json(v, f"history.{k}") for v in hist[k]], dtype=np.float64
                    )
            lengths = {len(v) for v in history.values()} | {len(rankers)}
            if len(lengths) != 1:
                raise ValueError("rounds and history have different lengths")
            for t, e in enumerate(data["rounds"]):
                a = _float_from_json(e["alpha"], f"rounds[{t}].alpha")
                if a != history["alpha"][t] or rankers[t].feature != history["feature"][t]:
                    raise ValueError(f"rounds[{t}] disagrees with history (alpha or feature)")
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed model file: missing or bad field {exc}.") from exc
        except ValueError as exc:
            if str(exc).startswith("malformed"):
                raise
            raise ValueError(f"malformed model file: {exc}.") from exc
        return cls(
            rankers,
            history,
            n_features,
            feature_names=data.get("feature_names"),
            params=data.get("params") or {},
            stop_reason=data.get("stop_reason"),
            best_iteration=data.get("best_iteration"),
        )

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


def load_model(path: str | os.PathLike[str]) -> RankBoostModel:
    """Load a model saved by :meth:`RankBoostModel.save`.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the file is not valid JSON, not a rankboost model, malformed, or of a newer
        format version.
    """
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); is it a rankboost model?") from exc
    return RankBoostModel.from_dict(data)
