"""Ratings on Dask: a DataFrame of ``(user, item, rating)`` rows as blocks of whole users.

:func:`user_blocks` reads a dask DataFrame of rating rows in any partitioning (a user's
rows may straddle partitions) into blocks of whole users, as
:func:`rankboost.dask.repartition_by_query` does for queries: the users, in sorted order of
their labels (the rows of ``RankBoostRecommender``'s ratings matrix), are dealt in
contiguous runs of about equal rating counts, and each block is the CSR matrix of its
users' rows of that matrix (``R[start:stop]``), built on a worker and kept there (a
future). Its ratings are the slice ``[nnz_before, nnz_before + nnz)`` of ``R``'s stored
entries in CSR order, which lets a block draw its part of a random stream over them
(:mod:`rankboost.dask._recommend`). The checks of the one-machine reader
(``rankboost.recommend._labels.from_frame``) run per partition and name the user and item.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .._compat import require

__all__ = ["UserBlocks", "user_blocks"]


class UserBlocks(NamedTuple):
    """Blocks of whole users of a ratings DataFrame (see the module docstring).

    ``users``, ``items``: the sorted distinct labels (rows and columns of ``R``);
    ``n_rated``: ratings per user; ``starts``: the first user of every block, and
    ``n_users`` at the end; ``nnz_before``: the ratings before every block (and ``R.nnz``);
    ``blocks``: per block, a future of its CSR matrix ``R[starts[b]:starts[b + 1]]``.
    """

    users: NDArray[Any]
    items: NDArray[Any]
    n_rated: NDArray[np.int64]
    starts: NDArray[np.int64]
    nnz_before: NDArray[np.int64]
    blocks: list[Any]


def _labels(client: Any, column: Any, what: str) -> NDArray[Any]:
    values = np.asarray(client.compute(column.unique()).result())
    try:
        return np.unique(values)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in values.tolist()})
        raise ValueError(
            f"the {what} ids mix types ({', '.join(kinds)}); an id read as text in one place "
            f"and as a number in another names two different {what}s. Convert the column to "
            "one type (e.g. .astype(str) or .astype(int)) before fit."
        ) from None


def _codes(
    frame: Any,
    columns: tuple[str, str, str],
    users: NDArray[Any],
    items: NDArray[Any],
    rating_range: tuple[float, float] | None,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """A partition's rows as (user row, item column, rating), checked."""
    ucol, icol, rcol = columns
    u_lab = frame[ucol].to_numpy()
    i_lab = frame[icol].to_numpy()
    try:
        r = frame[rcol].to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        raw = frame[rcol].to_numpy(dtype=object)
        k = next(j for j, v in enumerate(raw.tolist()) if not _is_number(v))
        raise ValueError(
            f"ratings column {rcol!r} must be numeric; user {_py(u_lab[k])!r}, item "
            f"{_py(i_lab[k])!r} has {raw[k]!r}. Convert the column first, e.g. with "
            "pandas.to_numeric."
        ) from None
    bad = ~np.isfinite(r)
    if rating_range is not None:
        bad |= (r < rating_range[0]) | (r > rating_range[1])
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        allowed = "finite" if rating_range is None else f"in {tuple(rating_range)!r}"
        raise ValueError(
            f"ratings holds {float(r[k])!r} for user {_py(u_lab[k])!r}, item {_py(i_lab[k])!r}; "
            "every rating "
            f"must be {allowed}."
        )
    return np.searchsorted(users, u_lab), np.searchsorted(items, i_lab), r


def _py(value: Any) -> Any:
    """A label as Python writes it (``39``, not ``np.int32(39)``)."""
    return value.item() if isinstance(value, np.generic) else value


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _split(
    codes: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]],
    starts: NDArray[np.int64],
) -> tuple[tuple[NDArray[Any], ...], ...]:
    """A partition's rows split by the block of their user (order kept)."""
    u = codes[0]
    block = np.searchsorted(starts, u, side="right") - 1
    return tuple(tuple(a[block == b] for a in codes) for b in range(starts.shape[0] - 1))


def _block(
    pieces: list[tuple[NDArray[Any], ...]],
    start: int,
    stop: int,
    n_items: int,
    users: NDArray[Any],
    items: NDArray[Any],
) -> sp.csr_matrix:
    """The CSR rows ``start:stop`` of ``R`` from the pieces of every partition."""
    u = np.concatenate([p[0] for p in pieces]) - start
    i = np.concatenate([p[1] for p in pieces])
    r = np.concatenate([p[2] for p in pieces])
    key = u.astype(np.int64) * n_items + i
    uniq, counts = np.unique(key, return_counts=True)
    if (counts > 1).any():
        k = int(uniq[np.flatnonzero(counts > 1)[0]])
        raise ValueError(
            f"ratings holds user {_py(users[start + k // n_items])!r}, item "
            f"{_py(items[k % n_items])!r} more than once; keep one rating per (user, item)."
        )
    R = sp.csr_matrix((r, (u, i)), shape=(stop - start, n_items))
    R.sort_indices()
    return R


def user_blocks(
    client: Any,
    ratings: Any,
    columns: tuple[str, str, str],
    rating_range: tuple[float, float] | None = None,
    n_blocks: int | None = None,
) -> UserBlocks:
    """Read a dask DataFrame of ``(user, item, rating)`` rows into blocks of whole users.

    Parameters
    ----------
    client : distributed.Client
        The cluster's client.
    ratings : dask DataFrame
        One row per rating, in the ``columns`` named; any partitioning.
    columns : tuple of (str, str, str)
        The user, item and rating columns.
    rating_range : tuple of (float, float), default=None
        Inclusive bounds of every rating (None: finite).
    n_blocks : int, default=None
        Blocks of users (default: the DataFrame's partitions, at most the users).

    Returns
    -------
    UserBlocks
    """
    import dask

    if not (hasattr(ratings, "npartitions") and hasattr(ratings, "columns")):
        raise TypeError(
            "ratings must be a dask DataFrame of (user, item, rating) rows; got "
            f"{type(ratings).__name__}. Use rankboost.recommend.RankBoostRecommender for "
            "in-memory ratings, or dask.dataframe.from_pandas(...)."
        )
    if len(columns) != 3 or not all(c in ratings.columns for c in columns):
        raise ValueError(
            f"ratings must hold the columns {tuple(columns)!r} (user, item, rating; pass "
            f"columns= to name them); it has {list(ratings.columns)!r}."
        )
    require("distributed", "rankboost.dask")
    ucol, icol, _ = columns
    for c in (ucol, icol):
        n_missing = int(client.compute(ratings[c].isna().sum()).result())
        if n_missing:
            raise ValueError(
                f"ratings column {c!r} is missing {n_missing} labels; every row needs a user "
                "and an item."
            )
    users = _labels(client, ratings[ucol], "user")
    items = _labels(client, ratings[icol], "item")
    if users.shape[0] == 0:
        raise ValueError("ratings has no row; the recommender needs ratings to learn from.")
    counted = client.compute(ratings[ucol].value_counts()).result()
    n_rated = np.zeros(users.shape[0], dtype=np.int64)
    n_rated[np.searchsorted(users, np.asarray(counted.index))] = np.asarray(counted.to_numpy())
    n_out = max(1, min(int(n_blocks or ratings.npartitions), users.shape[0]))
    ends = np.cumsum(n_rated)
    cuts = np.searchsorted(ends, np.arange(1, n_out) * (ends[-1] / n_out), side="left") + 1
    starts = np.unique(np.concatenate([[0], np.minimum(cuts, users.shape[0]), [users.shape[0]]]))
    starts = starts.astype(np.int64)
    nnz_before = np.concatenate([[0], ends])[starts].astype(np.int64)
    lab_u, lab_i = dask.delayed(users), dask.delayed(items)  # one key each in the graph
    codes = [
        dask.delayed(_codes)(part, tuple(columns), lab_u, lab_i, rating_range)
        for part in ratings.to_delayed()
    ]
    n_b = starts.shape[0] - 1
    split = [dask.delayed(_split, nout=n_b)(c, starts) for c in codes]
    blocks = [
        dask.delayed(_block)(
            [s[b] for s in split], int(starts[b]), int(starts[b + 1]), items.shape[0], lab_u,
            lab_i,
        )
        for b in range(n_b)
    ]  # fmt: skip
    futures = client.compute(blocks)
    require("distributed", "rankboost.dask").wait(futures)
    for fut in futures:  # the checks ran: a bad row is an error of fit (data stays there)
        if fut.status == "error":
            fut.result()
    return UserBlocks(users, items, n_rated, starts, nnz_before, futures)
