"""The user's own ids: a DataFrame of ratings as a matrix plus labels, labels to positions."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

COLUMNS = ("user", "item", "rating")


def is_frame(obj: Any) -> bool:
    """Whether ``obj`` is a pandas DataFrame (without importing pandas)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(obj, pd.DataFrame)


def _kind(label: Any) -> str:
    """The family of a label: "number", "text" or its type name."""
    if isinstance(label, (bool, np.bool_)):
        return "bool"
    if isinstance(label, (int, float, np.integer, np.floating)):
        return "number"
    if isinstance(label, (str, bytes, np.str_)):
        return "text"
    return type(label).__name__


def _check_one_kind(uniq: NDArray[Any], what: str) -> None:
    """Refuse labels that mix numbers and text: ``1`` and ``"1"`` would be two users."""
    kinds: dict[str, Any] = {}
    for label in uniq.tolist():
        kinds.setdefault(_kind(label), label)
        if len(kinds) > 1:
            (k1, a), (k2, b) = list(kinds.items())[:2]
            raise ValueError(
                f"the {what} ids mix types: {a!r} ({k1}) and {b!r} ({k2}); an id read as "
                f"text in one place and as a number in another names two different "
                f"{what}s. Convert the column to one type (e.g. .astype(str) or "
                ".astype(int)) before fit."
            )


def _unique_labels(values: Any, what: str) -> tuple[NDArray[Any], NDArray[np.int64]]:
    """Sorted distinct labels of one type and each value's code."""
    import pandas as pd

    try:
        codes, uniq = pd.factorize(values, sort=True)
    except TypeError:  # labels of mixed types
        codes, uniq = pd.factorize(values, sort=False)
    uniq = np.asarray(uniq)
    if uniq.dtype == object:
        _check_one_kind(uniq, what)
    return uniq, codes.astype(np.int64)


def from_frame(
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
        users, rows = _unique_labels(frame[ucol].to_numpy(), "user")
        items, cols = _unique_labels(frame[icol].to_numpy(), "item")
        try:
            data = frame[rcol].to_numpy(dtype=np.float64)
        except (TypeError, ValueError) as exc:
            k = _first_non_number(frame[rcol].to_numpy(dtype=object))
            user, item, value = (frame[c].to_numpy(dtype=object)[k] for c in (ucol, icol, rcol))
            raise ValueError(
                f"ratings column {rcol!r} must be numeric; user {user!r}, item {item!r} has "
                f"{value!r}. Convert the column first, e.g. with pandas.to_numeric."
            ) from exc
        R = sp.coo_matrix((data, (rows, cols)), shape=(users.shape[0], items.shape[0]))
        return R, users, items
    _refuse_long_format(frame, columns)
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
    users, items = frame.index.to_numpy(), frame.columns.to_numpy()
    for what, labels in (("user", users), ("item", items)):
        if labels.dtype == object:
            _check_one_kind(labels, what)
    return M, users, items


_LONG_MAX_COLUMNS = 6  # (user, item, rating) rows plus a timestamp or two
_ID_DISTINCT = 20  # an id column holds more distinct whole numbers than a rating scale


def _refuse_long_format(frame: Any, columns: tuple[str, str, str]) -> None:
    """Refuse a table of (user, item, rating) rows whose columns have other names.

    Read as a user x item matrix it would make every row a user (100,000 "users" of 4
    "items" for MovieLens' ``userId, movieId, rating, timestamp``: a 74.5 GiB user-user
    table, or an All-NaN error). Such a frame has few columns, many more rows, no missing
    value, and two columns of whole numbers with many distinct values (ids, unlike ratings).
    """
    n_rows, n_cols = frame.shape
    if not 3 <= n_cols <= _LONG_MAX_COLUMNS or n_rows < 10 * n_cols:
        return
    id_like, other = [], []
    for name in frame.columns:
        col = frame[name]
        if col.isna().any():
            return  # a matrix with unrated cells
        values = col.to_numpy()
        whole = values.dtype.kind in "iu" or (
            values.dtype.kind == "f" and bool(np.all(np.mod(values, 1) == 0))
        )
        if whole and col.nunique() > _ID_DISTINCT:
            id_like.append(name)
        else:
            other.append(name)
    if len(id_like) < 2:
        return
    rating = next((c for c in frame.columns if "rating" in str(c).lower()), None)
    if rating is None:
        rating = other[0] if other else id_like[2] if len(id_like) > 2 else None
    ids = [c for c in id_like if c != rating][:2]
    guess = (*ids, rating) if rating is not None else None
    hint = f"columns={guess!r}" if guess is not None else "columns=(user, item, rating)"
    raise ValueError(
        f"ratings looks like a table of (user, item, rating) rows ({n_rows} rows, columns "
        f"{list(frame.columns)!r}), not a user x item matrix, but it lacks the columns "
        f"{tuple(columns)!r}; name its columns with {hint} (read as a matrix, its {n_rows} "
        "rows would be users)."
    )


def to_positions(labels: Any, index: dict[Any, int], *, what: str, name: str) -> NDArray[np.int64]:
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
                f"{what} labels of the ratings given to fit.{_type_hint(label, index, what)}"
            ) from None
    return out


def _type_hint(label: Any, index: dict[Any, int], what: str) -> str:
    """A hint when ``label`` is unknown but the same id of another type is known."""
    for other in (str(label), _as_int(label)):
        if other is not None and type(other) is not type(label) and other in index:
            return (
                f" The {what} {other!r} ({type(other).__name__}) exists: pass ids of the "
                "type used in fit."
            )
    return ""


def _as_int(label: Any) -> int | None:
    try:
        return int(label)
    except (TypeError, ValueError):
        return None


def label_positions(
    given: Any, index: dict[Any, int], names: list[Any], name: str
) -> NDArray[np.int64]:
    """Positions of distinct user labels (an unknown or repeated one -> error)."""
    arr = to_positions(given, index, what="user", name=name)
    uniq, counts = np.unique(arr, return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"{name} lists user {names[int(uniq[counts > 1][0])]!r} more than once.")
    return arr


def user_position(user: Any, index: dict[Any, int] | None, n_users: int) -> int:
    """The row of one user: a label (``index``) or, for matrix input, a row number."""
    if index is not None:
        try:
            return index[user]
        except (KeyError, TypeError):
            raise ValueError(
                f"unknown user {user!r}: not among the {len(index)} user labels of the "
                f"ratings given to fit.{_type_hint(user, index, 'user')}"
            ) from None
    if isinstance(user, bool) or not isinstance(user, (int, np.integer)):
        raise ValueError(f"user must be an int user index; got {user!r}.")
    if not 0 <= int(user) < n_users:
        raise ValueError(
            f"unknown user {int(user)}: the ratings given to fit have {n_users} users "
            f"(rows 0..{n_users - 1})."
        )
    return int(user)


def check_k(k: Any) -> None:
    """``k`` of ``recommend``/``recommend_all``: an int >= 1."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1; got {k!r}.")


def labelled_top(  # noqa: PLR0917  private helper of recommend_all: its arrays
    users: NDArray[Any],
    items: NDArray[Any],
    labelled: bool,
    fitted: NDArray[np.int64],
    pos: NDArray[np.int64],
    scores: NDArray[np.float64],
) -> tuple[NDArray[Any], NDArray[Any], NDArray[np.float64]]:
    """``recommend_all``'s result in the user's labels (padding: None for labels, else -1)."""
    if not labelled:
        return users[fitted], pos, scores
    out = np.empty(pos.shape, dtype=object)
    out[pos >= 0] = items[pos[pos >= 0]]
    out[pos < 0] = None
    return users[fitted], out, scores


def _first_non_number(values: NDArray[Any]) -> int:
    """The position of the first value that ``float()`` refuses (0 if none does)."""
    for k, value in enumerate(values.tolist()):
        try:
            float(value)
        except (TypeError, ValueError):
            return k
    return 0
