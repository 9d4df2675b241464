"""Input checks shared by every public entry point.

Every message names the argument, says what is allowed and echoes what was received
(STYLE.md rule 2). Public wrappers call these, then hand clean contiguous arrays to the
numba kernels.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "as_float_matrix",
    "check_feature_matrix",
    "check_init_score",
    "check_labels",
    "check_n_rounds",
    "check_qid",
    "check_scores",
    "forget_fit",
    "keep_params",
    "check_group_sizes",
    "group_sizes_to_qid",
    "group_by_qid",
    "not_fitted",
]


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def as_float_matrix(X: Any) -> NDArray[np.float64]:
    """A checked matrix (scikit-learn's ``validate_data``) as C-contiguous float64, dense.

    A conversion only, for adapters that have validated ``X`` already: no second pass of
    checks on the way to the engine.
    """
    if hasattr(X, "toarray") and callable(X.toarray):  # scipy.sparse: absent entries are 0
        X = X.toarray()
    return np.ascontiguousarray(X, dtype=np.float64)


#: The smallest float64 magnitude that rounds to infinity in float32 (FLT_MAX + half an ulp,
#: which rounds to even: to infinity).
FLOAT32_OVERFLOW = float(np.finfo(np.float32).max) + 2.0**103


def check_feature_matrix(
    X: ArrayLike, *, name: str = "X", n_features: int | None = None
) -> NDArray[np.float64]:
    """Return ``X`` as a C-contiguous float64 2-D array; NaN means "abstain".

    Raises a ``TypeError`` for non-numeric input and a ``ValueError`` for a wrong shape or
    infinite values.
    """
    if hasattr(X, "toarray") and callable(X.toarray):  # scipy.sparse: absent entries are 0
        X = X.toarray()
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and friends
        raise TypeError(
            f"{name} must be a 2-D array-like of numbers; it could not be converted: {exc}"
        ) from exc
    if arr.dtype.kind in "OUSV" or arr.dtype.kind == "c":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"{name} must hold numbers (use NaN for a missing value); got an array of "
                f"dtype {arr.dtype} that does not convert to float: {exc}"
            ) from exc
    if arr.dtype.kind == "b":
        arr = arr.astype(np.float64)
    if arr.ndim == 1:
        raise ValueError(
            f"{name} must be 2-D of shape (n_samples, n_features); got a 1-D array of shape "
            f"{arr.shape}. Reshape a single feature with x.reshape(-1, 1)."
        )
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D of shape (n_samples, n_features); got shape {arr.shape}."
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must have at least one row and one column; got {arr.shape}.")
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(
            f"{name} has {arr.shape[1]} features but the model was trained on {n_features}."
        )
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if np.isinf(arr).any():
        row, col = np.argwhere(np.isinf(arr))[0]
        raise ValueError(
            f"{name} contains infinity (first at row {row}, column {col}); rankboost reads "
            "NaN as 'this feature abstains', so replace missing values by NaN and clip "
            "infinite ones."
        )
    return arr


def check_float32_range(X: NDArray[np.float64], name: str = "X") -> None:
    """Refuse a value that float32 rounds to +-inf (training and scoring call it).

    rankboost compares features as float32 (:mod:`rankboost.binning`): such a value has no
    place in that domain, like infinity itself, which :func:`check_feature_matrix` refuses.
    """
    big = (X >= FLOAT32_OVERFLOW) | (X <= -FLOAT32_OVERFLOW)
    if big.any():
        row, col = np.argwhere(big)[0]
        raise ValueError(
            f"{name}[{row}, {col}] is {float(X[row, col])!r}, beyond the float32 range "
            f"(|x| < 3.4e38): rankboost compares features as float32, as XGBoost does; clip "
            "or rescale the feature."
        )


def check_labels(y: ArrayLike, *, name: str = "y", n_samples: int | None = None) -> NDArray:
    """Return ``y`` as a 1-D float64 array without NaN or inf."""
    try:
        arr = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a 1-D array of numbers; got {_describe(y)}.") from exc
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D of shape (n_samples,); got shape {arr.shape}.")
    if n_samples is not None and arr.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {arr.shape[0]} entries but X has {n_samples} rows; pass one label per row."
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(
            f"{name} contains NaN or infinity (first at row {int(np.flatnonzero(bad)[0])}); "
            "every row needs a finite label."
        )
    return np.ascontiguousarray(arr)


def check_scores(scores: ArrayLike, *, name: str = "y_score", n_samples: int) -> NDArray:
    """Return scores as a 1-D float64 array of length ``n_samples`` without NaN."""
    arr = np.asarray(scores, dtype=np.float64)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1 or arr.shape[0] != n_samples:
        raise ValueError(
            f"{name} must be 1-D with {n_samples} entries (one per row); got shape {arr.shape}."
        )
    if np.isnan(arr).any():
        raise ValueError(
            f"{name} contains NaN (first at row {int(np.flatnonzero(np.isnan(arr))[0])}); "
            "scores must be comparable numbers."
        )
    return np.ascontiguousarray(arr)


def check_init_score(init_score: ArrayLike, n_samples: int) -> NDArray[np.float64]:
    """A prior's scores ``F0`` as a finite 1-D float64 array with one entry per row."""
    try:
        arr = np.asarray(init_score, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            "init_score must be an array of numbers, one prior score per row; got "
            f"{_describe(init_score)}."
        ) from None
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1 or arr.shape[0] != n_samples:
        raise ValueError(
            f"init_score must have shape ({n_samples},), one prior score per row of X; got "
            f"shape {arr.shape}."
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"init_score must be finite; init_score[{k}] = {float(arr[k])!r}. Replace missing "
            "prior scores by a finite value (e.g. the query's lowest score)."
        )
    return np.ascontiguousarray(arr)


def group_sizes_to_qid(group: ArrayLike, n_samples: int) -> NDArray[np.int64]:
    """Turn LightGBM-style group sizes (consecutive rows) into a per-row query id."""
    sizes = check_group_sizes(group, n_samples)
    return np.repeat(np.arange(sizes.shape[0], dtype=np.int64), sizes)


def check_group_sizes(group: ArrayLike, n_samples: int | None = None) -> NDArray[np.int64]:
    """LightGBM-style group sizes as int64, checked.

    1-D positive integers (floats with integral values too) summing to ``n_samples`` (None:
    any sum); the errors name ``group``.
    """
    sizes = np.asarray(group)
    if (
        sizes.ndim != 1
        or sizes.dtype.kind not in "iu"
        and not (sizes.dtype.kind == "f" and np.all(np.mod(sizes, 1) == 0))
    ):
        raise ValueError(
            f"group must be a 1-D array of positive integers (query sizes in row order); got "
            f"{_describe(group)}."
        )
    sizes = sizes.astype(np.int64)
    if (sizes <= 0).any():
        raise ValueError("group sizes must all be positive; a query cannot be empty.")
    if n_samples is not None and int(sizes.sum()) != n_samples:
        raise ValueError(
            f"group sizes sum to {int(sizes.sum())} but there are {n_samples} rows; they must "
            "add up to the number of rows."
        )
    return sizes


def check_n_rounds(n_rounds: Any, total: int) -> int:
    """The first ``n_rounds`` rounds of a model of ``total`` rounds to use (None: all)."""
    if n_rounds is None:
        return total
    if isinstance(n_rounds, bool) or not isinstance(n_rounds, (int, np.integer)):
        raise TypeError(f"n_rounds must be an int or None; got {n_rounds!r}.")
    if not 0 <= n_rounds <= total:
        raise ValueError(
            f"n_rounds must be between 0 and {total} (the rounds in the model); got {n_rounds}."
        )
    return int(n_rounds)


def check_qid(qid: ArrayLike | None, n_samples: int, *, name: str = "qid") -> NDArray[np.int64]:
    """Return dense query codes ``0..Q-1`` (ordered by query id value), one per row.

    ``qid`` may be any 1-D array of hashable, sortable values (ints, strings), in any
    row order. ``None`` means every row belongs to one query.
    """
    if qid is None:
        return np.zeros(n_samples, dtype=np.int64)
    arr = np.asarray(qid)
    if arr.dtype.kind == "O" or (arr.dtype.kind in "US" and not isinstance(qid, np.ndarray)):
        # a list or object array: numpy turns [1, "1"] into two equal strings, so look at
        # the values themselves before any conversion
        arr = _homogeneous_qid(qid, name)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D of shape (n_samples,), one query id per row; got shape "
            f"{arr.shape}."
        )
    if arr.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {arr.shape[0]} entries but there are {n_samples} rows; pass one "
            "query id per row (in any order), or group= sizes for consecutive rows."
        )
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN; every row needs a query id.")
    if arr.dtype.kind in "iu" and arr.shape[0]:
        # O(n) path for integer ids of a compact range (the usual case): no sort
        lo = int(arr.min())
        span = int(arr.max()) - lo + 1
        if span <= 4 * arr.shape[0] + 1024:
            offset = (arr - lo).astype(np.int64)
            present = np.zeros(span, dtype=bool)
            present[offset] = True
            remap = np.cumsum(present, dtype=np.int64) - 1
            return remap[offset]
    try:
        _, codes = np.unique(arr, return_inverse=True)
    except TypeError as exc:
        raise TypeError(
            f"{name} values must be sortable, all ints or all strings; got {_describe(qid)}."
        ) from exc
    return codes.reshape(-1).astype(np.int64)


def _qid_kind(t: type) -> str:
    if issubclass(t, (str, np.str_)):
        return "str"
    if issubclass(t, (bytes, np.bytes_)):
        return "bytes"
    if issubclass(t, (numbers.Integral, np.bool_)):
        return "int"
    if issubclass(t, numbers.Real):
        return "float"
    return t.__name__


def _homogeneous_qid(qid: Any, name: str) -> NDArray[Any]:
    """Query ids of one type (ints and floats count as one: numbers), as a numpy array.

    Mixed types (``[1, 1, "1", "1"]``, an object array ``[0, 0, "a", "a"]``) are one
    ``TypeError`` whatever their order: ``1`` and ``"1"`` are not silently the same query.
    """
    obj = np.asarray(qid, dtype=object)
    flat = obj.ravel()
    kinds = {_qid_kind(t) for t in set(map(type, flat.tolist()))}
    numeric = kinds <= {"int", "float"}
    if len(kinds) > 1 and not numeric:
        first: dict[str, tuple[int, Any]] = {}
        for row, v in enumerate(flat.tolist()):
            first.setdefault(_qid_kind(type(v)), (row, v))
        shown = ", ".join(
            f"{k} at row {r} ({_describe(v)})"
            for k, (r, v) in sorted(first.items(), key=lambda x: x[1][0])
        )
        raise TypeError(
            f"{name} mixes query ids of different types ({shown}); use one type for every "
            "query id (all ints or all strings), e.g. convert them with np.asarray(qid, str)."
        )
    kind = next(iter(kinds)) if kinds else "int"
    if kind not in ("str", "bytes", "int", "float"):
        raise TypeError(
            f"{name} values must be ints or strings; got a value of type {kind} "
            f"({_describe(flat[0] if flat.size else None)})."
        )
    if kind == "str":
        return obj.astype(str)
    if kind == "bytes":
        return obj.astype(bytes)
    return np.asarray(obj.tolist())


def group_by_qid(codes: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Stable grouping of rows by query code.

    Returns ``(order, starts)``: ``order`` lists row indices query by query (rows of a
    query keep their input order) and ``starts`` has ``n_queries + 1`` offsets into it.
    """
    order = np.argsort(codes, kind="stable").astype(np.int64)
    counts = np.bincount(codes) if codes.size else np.zeros(0, dtype=np.int64)
    starts = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    return order, starts


def forget_fit(estimator: Any) -> None:
    """Drop what a previous ``fit`` learned (every attribute whose name ends in ``_``).

    Called first thing in ``fit``: a fit that raises (bad input, a callback, Ctrl-C) then
    leaves an unfitted estimator, whose ``predict`` raises ``NotFittedError``, never the
    old model mixed with the new fit's attributes (a half state).
    """
    for name in [k for k in vars(estimator) if k.endswith("_") and not k.startswith("__")]:
        delattr(estimator, name)


def keep_params(estimator: Any, values: dict[str, Any]) -> None:
    """Store each constructor argument as the attribute of its name (scikit-learn convention).

    Called as ``keep_params(self, locals())`` first in ``__init__``: every parameter of the
    class's ``__init__`` but ``self`` is stored as given (the checks come in ``fit``).
    """
    code = type(estimator).__init__.__code__
    for name in code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount]:
        setattr(estimator, name, values[name])


class ParamsMixin:
    """``get_params`` / ``set_params`` over the constructor parameters named in ``_PARAMS``.

    The scikit-learn convention for estimators that stay light to import (no
    ``sklearn.base.BaseEstimator``): ``set_params`` refuses a name the class does not have.
    """

    _PARAMS: tuple[str, ...] = ()

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor parameters (scikit-learn convention)."""
        return {k: getattr(self, k) for k in self._PARAMS}

    def set_params(self, **params: Any) -> Self:
        """Set constructor parameters (scikit-learn convention)."""
        for k, v in params.items():
            if k not in self._PARAMS:
                raise ValueError(
                    f"{type(self).__name__} has no parameter {k!r}; valid ones: {self._PARAMS}."
                )
            setattr(self, k, v)
        return self


def not_fitted(owner: str, estimator: Any, hint: str = "call fit first") -> Exception:
    """scikit-learn's ``NotFittedError`` (a ``ValueError``) for an unfitted ``estimator``."""
    from sklearn.exceptions import NotFittedError  # only on this error path: a light import

    what = f"this {type(estimator).__name__} is not fitted yet; {hint}."
    return NotFittedError(f"{owner}: {what}" if owner else what[0].upper() + what[1:])
