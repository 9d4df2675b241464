"""The model file format: versioned JSON, written exactly and read strictly.

:func:`model_to_dict` and :func:`model_from_dict` are :meth:`RankBoostModel.to_dict` and
:meth:`RankBoostModel.from_dict` (a file's strict JSON is read by
:func:`rankboost.model_files.read_json`). Public through :mod:`rankboost.model`; this module
does not import it (the model class is passed in).
"""

from __future__ import annotations

import math
import reprlib
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._rounds import HISTORY_KEYS, KIND_FEATURE, KIND_THRESHOLD, KINDS, STAT_KEYS, Rounds

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MAX_FEATURES",
    "model_from_dict",
    "model_to_dict",
]

FORMAT_NAME = "rankboost-model"
#: Version 2 stores the rounds as columns; version 1 (one object per round) still loads.
FORMAT_VERSION = 2


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


#: how far beyond [-1, 1] (r) or [0, 1] (rloss) a trained model's rounding may take them
_ROUNDING = 1e-9


def _check_loaded(model: Any) -> None:
    """The ranges of a loaded model's fields (a file may have been edited or damaged).

    ``alpha`` finite with ``sum |alpha| < 1e300`` (so no score can overflow: every ``h_t`` is
    in [0, 1]), ``default`` (``q_def``) in [0, 1], ``r`` in [-1, 1], ``z`` finite and > 0
    (the gain importance is ``-ln Z``), ``bound`` finite and >= 0, ``rloss`` in [0, 1],
    ``best_iteration`` in [1, n_rounds].
    """
    r, st = model.rounds, model._stats
    # r and rloss are sums of a distribution's weights (in [-1, 1] and [0, 1] exactly), summed
    # in floating point: a first round that orders every pair gives r = 1 + 4e-16 (the
    # engine records what it computed). Rounding is allowed, a damaged value is not.
    tol = _ROUNDING
    checks = (
        ("rounds.alpha", r.alpha, np.isfinite(r.alpha), "finite"),
        ("rounds.default", r.default, (r.default >= 0) & (r.default <= 1), "in [0, 1]"),
        ("history.r", st["r"], np.abs(st["r"]) <= 1 + tol, "in [-1, 1]"),
        ("history.z", st["z"], np.isfinite(st["z"]) & (st["z"] > 0), "finite and > 0"),
        (
            "history.rloss",
            st["rloss"],
            (st["rloss"] >= -tol) & (st["rloss"] <= 1 + tol),
            "in [0, 1]",
        ),
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
            kind.append(KIND_THRESHOLD)
            threshold.append(_float_from_json(e["threshold"], f"rounds[{t}].threshold"))
        elif e["kind"] == "feature":
            kind.append(KIND_FEATURE)
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


def model_to_dict(self: Any) -> dict[str, Any]:
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
        **_evals_to_json(getattr(self, "evals_result", None)),
        "rounds": rounds,
        "history": {k: floats(self._stats[k]) for k in STAT_KEYS},
    }


def model_from_dict(cls: Any, data: Any) -> Any:  # noqa: C901  one validator per field of the file format, in file order
    """Rebuild a model from :meth:`to_dict` output (format version 1 or 2).

    Raises
    ------
    ValueError
        If ``data`` is not a rankboost model, is malformed, or has a newer format version.
    """
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise ValueError(f'not a rankboost model: the JSON has no "format": "{FORMAT_NAME}" field.')
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
        model.evals_result = _evals_from_json(data.get("evals_result"), model.n_rounds)
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


def _evals_to_json(evals: Any) -> dict[str, Any]:
    """``{"evals_result": ...}`` when the model keeps validation curves, else ``{}``."""
    if not evals:
        return {}
    return {
        "evals_result": {
            str(n): {str(k): [_float_to_json(float(v)) for v in vs] for k, vs in per.items()}
            for n, per in evals.items()
        }
    }


def _evals_from_json(x: Any, n_rounds: int) -> dict[str, dict[str, list[float]]] | None:
    """The optional ``evals_result``: ``{set: {metric: [one value per round]}}``."""
    if x is None:
        return None
    if not isinstance(x, dict) or not all(isinstance(v, dict) for v in x.values()):
        raise ValueError(f"evals_result is {_short(x)}, not an object of objects of lists")
    out: dict[str, dict[str, list[float]]] = {}
    for name, per in x.items():
        out[str(name)] = {}
        for key, values in per.items():
            vals = _floats_from_json(values, f"evals_result.{name}.{key}")
            if len(vals) > n_rounds:
                raise ValueError(
                    f"evals_result.{name}.{key} has {len(vals)} values for {n_rounds} rounds"
                )
            out[str(name)][str(key)] = vals
    return out
