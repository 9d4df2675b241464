"""The user's own ids: a DataFrame of ratings as a matrix plus labels, labels to positions."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

_COLUMNS = ("user", "item", "rating")


def _is_frame(obj: Any) -> bool:
    """Whether ``obj`` is a pandas DataFrame (without importing pandas)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(obj, pd.DataFrame)


def _unique_labels(values: Any) -> tuple[NDArray[Any], NDArray[np.int64]]:
    """Sorted distinct labels (first-seen order if they do not sort) and each value's code."""
    import pandas as pd

    try:
        codes, uniq = pd.factorize(values, sort=True)
    except TypeError:  # labels of mixed types
        codes, uniq = pd.factorize(values, sort=False)
    return np.asarray(uniq), codes.astype(np.int64)


def _from_frame(
    frame: Any, columns: tuple[str, str, str]
) -> tuple[sp.csr_matrix | NDArray[np.float64], NDArray[Any], NDArray[Any]]:
    """A DataFrame as (matrix, user labels, item labels).

    Rows ``(user, item, rating)`` when the frame has the three ``columns``; otherwise a
    user x item matrix: index = users, columns = items, NaN = not rated.
    """
    if len(columns) != 3:
        raise ValueError(f"columns must be (user, item, rating) column names; got {columns!r}.")
    if all(c in frame.columns for c in columns):
        ucol, icol, rcol = columns
        for c in (ucol, icol):
            if frame[c].isna().any():
                row = frame.index[frame[c].isna().to_numpy()][0]
                raise ValueError(f"ratings column {c!r} is missing a label at row {row!r}.")
        dup = frame.duplicated([ucol, icol]).to_numpy()
        if dup.any():
            k = int(np.flatnonzero(dup)[0])
            raise ValueError(
                f"ratings holds user {frame[ucol].iloc[k]!r}, item {frame[icol].iloc[k]!r} "
                "more than once; keep one rating per (user, item)."
            )
        users, rows = _unique_labels(frame[ucol].to_numpy())
        items, cols = _unique_labels(frame[icol].to_numpy())
        try:
            data = frame[rcol].to_numpy(dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"ratings column {rcol!r} must be numeric.") from exc
        R = sp.coo_matrix((data, (rows, cols)), shape=(users.shape[0], items.shape[0]))
        return R, users, items
    for what, labels in (("index (users)", frame.index), ("columns (items)", frame.columns)):
        if labels.has_duplicates:
            raise ValueError(
                f"ratings {what} holds {labels[labels.duplicated()][0]!r} more than once; "
                "labels must be unique. (A table of (user, item, rating) rows needs the "
                f"columns {tuple(columns)!r}; pass columns= to name them.)"
            )
    try:
        M = frame.to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "ratings DataFrame must be a user x item matrix of numbers (NaN = not rated) or "
            f"hold (user, item, rating) rows in the columns {tuple(columns)!r} (pass columns= "
            f"to name them); got columns {list(frame.columns)[:5]!r}."
        ) from exc
    return M, frame.index.to_numpy(), frame.columns.to_numpy()


def _positions(labels: Any, index: dict[Any, int], *, what: str, name: str) -> NDArray[np.int64]:
    """Positions of ``labels`` (1-D) in a label -> position mapping; unknown label -> error."""
    if isinstance(labels, (str, bytes)) or np.ndim(labels) == 0:
        raise ValueError(f"{name} must be a 1-D sequence of {what} labels; got {labels!r}.")
    out = np.empty(len(labels), dtype=np.int64)
    for k, label in enumerate(labels):
        try:
            out[k] = index[label]
        except (KeyError, TypeError):
            raise ValueError(
                f"{name} contains unknown {what} {label!r}: not among the {len(index)} "
                f"{what} labels of the ratings given to fit."
            ) from None
    return out
