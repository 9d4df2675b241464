"""Ratings validation and the per-user ranking problem (features, NaN where unrated)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

__all__ = ["check_ratings", "user_ranking_problem"]


# --------------------------------------------------------------------------- validation


def check_ratings(
    ratings: Any,
    *,
    rating_range: tuple[float, float] | None = None,
    name: str = "ratings",
    labels: tuple[Any, Any] | None = None,
) -> sp.csr_matrix:
    """Return ``ratings`` as a canonical float64 CSR user x item matrix.

    Parameters
    ----------
    ratings : sparse matrix or array-like of shape (n_users, n_items)
        Stored entries are ratings, absent entries mean "not rated". A dense array uses
        ``NaN`` for "not rated".
    rating_range : tuple of (float, float), default=None
        Inclusive ``(low, high)`` bounds every rating must respect; None checks only that
        ratings are finite.
    name : str, default="ratings"
        Name used in error messages.
    labels : tuple of (array, array), default=None
        The user labels (one per row) and item labels (one per column) to name in error
        messages; None names row and column numbers.

    Returns
    -------
    csr : scipy.sparse.csr_matrix of shape (n_users, n_items)

    Raises
    ------
    ValueError
        If the matrix is not 2-D, holds a non-finite rating, a rating outside
        ``rating_range`` (the message names the user and the item), or the same
        (user, item) entry twice.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.recommend import check_ratings
    >>> check_ratings(np.array([[5.0, np.nan], [1.0, 3.0]])).nnz
    3
    """
    if sp.issparse(ratings) and ratings.format == "csr" and ratings.has_canonical_format:
        # fast path: canonical CSR has sorted indices and no duplicate entries
        csr = sp.csr_matrix(ratings, dtype=np.float64, copy=True)
    elif sp.issparse(ratings):
        coo = sp.coo_matrix(ratings)  # keeps duplicates, which converting to CSR would add
        if coo.ndim != 2:
            raise ValueError(
                f"{name} must be 2-D of shape (n_users, n_items); got shape {coo.shape}."
            )
        key = coo.row.astype(np.int64) * coo.shape[1] + coo.col
        uniq, counts = np.unique(key, return_counts=True)
        if (counts > 1).any():
            k = int(uniq[np.flatnonzero(counts > 1)[0]])
            raise ValueError(
                f"{name} stores user {k // coo.shape[1]}, item {k % coo.shape[1]} more than "
                "once; keep one rating per (user, item) (scipy would add them up)."
            )
        csr = sp.csr_matrix((coo.data.astype(np.float64), (coo.row, coo.col)), shape=coo.shape)
        csr.sort_indices()
    else:
        arr = _numbers(ratings, name)
        if arr.ndim != 2:
            raise ValueError(
                f"{name} must be 2-D of shape (n_users, n_items); got shape {arr.shape}."
            )
        rows, cols = np.nonzero(~np.isnan(arr))
        csr = sp.csr_matrix((arr[rows, cols], (rows, cols)), shape=arr.shape)
    if csr.ndim != 2 or csr.shape[0] == 0 or csr.shape[1] == 0:
        raise ValueError(
            f"{name} must be a non-empty 2-D user x item matrix; got shape {csr.shape}."
        )
    data = csr.data
    bad = ~np.isfinite(data)
    if rating_range is not None:
        lo, hi = _check_range(rating_range)
        bad |= (data < lo) | (data > hi)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        user: Any = int(np.searchsorted(csr.indptr, k, side="right") - 1)
        item: Any = int(csr.indices[k])
        if labels is not None:
            user, item = repr(labels[0][user]), repr(labels[1][item])
        allowed = "finite" if rating_range is None else f"within rating_range={rating_range}"
        raise ValueError(
            f"{name} has rating {float(data[k])!r} for user {user}, item {item}; "
            f"ratings must be {allowed}."
        )
    return csr


def _numbers(ratings: Any, name: str) -> NDArray[np.float64]:
    """A dense matrix as float64: numbers and strings that spell numbers (as numpy reads them).

    Any other cell (a word, None, an object) raises a ValueError naming its user and item.
    """
    try:
        return np.asarray(ratings, dtype=np.float64)
    except (TypeError, ValueError):
        cells = np.asarray(ratings, dtype=object)
    if cells.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D of shape (n_users, n_items); got shape {cells.shape}."
        )
    for (u, i), value in np.ndenumerate(cells):  # only after numpy refused: find the cell
        try:
            float(value)
        except (TypeError, ValueError):
            raise ValueError(
                f"{name} has {value!r} for user {u}, item {i}; ratings must be numbers "
                "(NaN where not rated). Convert them first, e.g. with pandas.to_numeric."
            ) from None
    return np.asarray(cells, dtype=np.float64)


def check_explicit_zeros(R: sp.csr_matrix, rating_range: Any) -> None:
    """Refuse stored zeros of a sparse matrix unless ``rating_range`` makes 0 a rating."""
    if not (R.data == 0).any():
        return
    lo, hi = _check_range(rating_range) if rating_range is not None else (1.0, 0.0)
    if lo <= 0 <= hi:
        return
    k = int(np.flatnonzero(R.data == 0)[0])
    u = int(np.searchsorted(R.indptr, k, side="right") - 1)
    raise ValueError(
        f"ratings stores an explicit 0 (user {u}, item {int(R.indices[k])}): in a sparse "
        "matrix an absent entry means 'not rated', so a stored 0 is most likely a missing "
        "rating. Call ratings.eliminate_zeros() first, or, if 0 is a real rating, pass a "
        "rating_range that includes 0."
    )


def _check_range(rating_range: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in rating_range)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"rating_range must be None or a pair (low, high); got {rating_range!r}."
        ) from exc
    if not lo <= hi:
        raise ValueError(f"rating_range must have low <= high; got {rating_range!r}.")
    return lo, hi


def _indices(
    values: Any, n: int, name: str, what: str, indices: str, axis: str, *, scalar: bool = False
) -> NDArray[np.int64]:
    """``values`` (1-D integers; one integer too if ``scalar``) as int64 indices in ``0..n-1``."""
    arr = np.asarray(values)
    if scalar and arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise ValueError(f"{name} must be a 1-D array of {indices}; got {values!r}.")
    arr = arr.astype(np.int64)
    bad = (arr < 0) | (arr >= n)
    if bad.any():
        raise ValueError(
            f"{name} contains unknown {what} {int(arr[bad][0])}: ratings has {n} {what}s "
            f"({axis} 0..{n - 1})."
        )
    return arr


def check_users(users: Any, n_users: int, *, name: str) -> NDArray[np.int64]:
    indices = "user indices (rows of ratings)"
    arr = _indices(users, n_users, name, "user", indices, "rows", scalar=True)
    uniq, counts = np.unique(arr, return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"{name} lists user {int(uniq[counts > 1][0])} more than once.")
    return arr


def check_items(items: Any, n_items: int, *, name: str = "items") -> NDArray[np.int64]:
    return _indices(items, n_items, name, "item", "item indices", "columns")


# --------------------------------------------------------------------------- problems


def problem_features(
    by_item: sp.csr_matrix, items: NDArray[np.int64], column_of: NDArray[np.int64], d: int
) -> NDArray[np.float64]:
    """Dense ``X[i, j]`` = rating of feature ``j`` for ``items[i]``, NaN where unrated.

    ``by_item`` is the item x user CSR matrix and ``column_of[user]`` the feature column of
    a user (-1 when the user is not a feature). Vectorised: no Python loop over ratings.
    """
    sub = by_item[items].tocoo()
    col = column_of[sub.col]
    keep = col >= 0
    X = np.full((items.shape[0], d), np.nan)
    X[sub.row[keep], col[keep]] = sub.data[keep]
    return X


def user_ranking_problem(
    ratings: Any, user: int, feature_users: ArrayLike, items: ArrayLike | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Build the ranking problem of one target user (Freund et al. 2003, section 6.2).

    Parameters
    ----------
    ratings : sparse matrix or array-like of shape (n_users, n_items)
        User x item ratings (absent or NaN = not rated).
    user : int
        The target user (a row of ``ratings``).
    feature_users : array-like of int
        Users whose ratings are the features, in column order.
    items : array-like of int, default=None
        Items (rows of the problem); None = the items ``user`` rated, in column order.

    Returns
    -------
    X : ndarray of shape (n_rows, len(feature_users))
        ``X[i, j]`` is the rating of ``feature_users[j]`` for item ``i``; NaN where unrated.
    y : ndarray of shape (n_rows,)
        The target's rating of each item; NaN where the target did not rate it.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.recommend import user_ranking_problem
    >>> R = np.array([[5, 3, np.nan], [4, np.nan, 1], [np.nan, 2, 2]])
    >>> X, y = user_ranking_problem(R, user=0, feature_users=[1, 2])
    >>> X
    array([[ 4., nan],
           [nan,  2.]])
    >>> y
    array([5., 3.])
    """
    R = check_ratings(ratings)
    (u,) = check_users([user], R.shape[0], name="user")
    fu = check_users(feature_users, R.shape[0], name="feature_users")
    row = R[u]
    if items is None:
        it = row.indices.astype(np.int64)
        y = row.data.copy()
    else:
        it = check_items(items, R.shape[1])
        dense = np.full(R.shape[1], np.nan)
        dense[row.indices] = row.data
        y = dense[it]
    column_of = np.full(R.shape[0], -1, dtype=np.int64)
    column_of[fu] = np.arange(fu.shape[0])
    return problem_features(R.T.tocsr(), it, column_of, fu.shape[0]), y
