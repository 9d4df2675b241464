"""Seeded synthetic data: MovieLens-shaped ratings, and the small ranking set of the examples.

:func:`make_ranking` draws the toy learning-to-rank data the docstrings' examples train on
(Gaussian features, binary labels led by the first feature, queries of ten rows).

The real MovieLens 10M file is not in the package registries; :func:`make_ratings` draws a
matrix of the same shape and skew in seconds, in memory that grows with the ratings (a
block of users at a time, never users x items):

* **Activity**: each user's number of ratings is log-normal (``sigma = 1``, MovieLens
  10M's spread), at least ``min_per_user`` (20 in MovieLens), scaled to ``n_ratings`` in
  total and capped at ``n_items``.
* **Popularity**: item ``i`` is drawn with weight proportional to ``(i + 10) ** -1.0``
  after a seeded shuffle (a Zipf-like head and a long tail, as MovieLens's); a user's
  items are distinct, drawn by weight without replacement.
* **Ratings**: a latent taste model, ``mu + b_u + b_i + p_u . q_i + noise`` (8 factors),
  popular items rated a little higher (as in MovieLens), rounded to the ``scale``
  (``"half"``: 0.5 .. 5 in halves, MovieLens 10M; ``"whole"``: 1 .. 5, MovieLens 100K).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:  # scipy on first use: `rankboost.datasets` is imported by the CLI's parser
    import scipy.sparse as sp

__all__ = ["make_ranking", "make_ratings"]

_SCALES = ("half", "whole")
#: cells of the dense fallback that completes a heavy user's items (rows x items)
_BLOCK_CELLS = 1 << 22


def _check_count(value: object, name: str, low: int, owner: str = "make_ratings") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{owner}: {name} must be an int, got {value!r}.")
    if value < low:
        raise ValueError(f"{owner}: {name} must be >= {low}, got {value}.")
    return int(value)


def make_ranking(
    n_samples: int = 200,
    n_features: int = 3,
    *,
    noise: float = 1.0,
    threshold: float = 0.0,
    query_size: int = 10,
    random_state: int | None = 0,
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]:
    """A small seeded ranking set: Gaussian features, binary labels led by the first feature.

    ``X`` is standard normal; a row is relevant when ``X[:, 0] + noise * e > threshold``
    (``e`` standard normal, drawn after ``X``); rows ``0 .. query_size - 1`` are query 0,
    the next ``query_size`` query 1, and so on. The examples of the docstrings train on it.

    Parameters
    ----------
    n_samples : int, default=200
        Rows.
    n_features : int, default=3
        Columns; only the first one tells the labels.
    noise : float, default=1.0
        Scale of the label noise (0: the labels are ``X[:, 0] > threshold``).
    threshold : float, default=0.0
        Larger values make relevant rows rarer.
    query_size : int, default=10
        Rows per query (the last query is shorter when it does not divide ``n_samples``).
    random_state : int or None, default=0
        Seed of ``numpy.random.default_rng``: the same arguments give the same data.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), int64
        1 for a relevant row, else 0.
    qid : ndarray of shape (n_samples,), int64
        Query id of each row, ``0, 0, ..., 1, 1, ...``.

    Examples
    --------
    >>> from rankboost.datasets import make_ranking
    >>> X, y, qid = make_ranking(40, 2, noise=0.5)
    >>> X.shape, y[:5].tolist(), qid[8:12].tolist()
    ((40, 2), [1, 1, 0, 1, 0], [0, 0, 1, 1])
    """
    n_samples = _check_count(n_samples, "n_samples", 1, "make_ranking")
    n_features = _check_count(n_features, "n_features", 1, "make_ranking")
    query_size = _check_count(query_size, "query_size", 1, "make_ranking")
    rng = np.random.default_rng(random_state)
    X = rng.normal(size=(n_samples, n_features))
    y = (X[:, 0] + noise * rng.normal(size=n_samples) > threshold).astype(np.int64)
    return X, y, np.arange(n_samples, dtype=np.int64) // query_size


def _activity(
    n_users: int, n_items: int, n_ratings: int, low: int, rng: np.random.Generator
) -> np.ndarray:
    """Ratings per user: log-normal above ``low``, summing to ``n_ratings``, each <= n_items."""
    w = rng.lognormal(0.0, 1.0, size=n_users)
    n = np.full(n_users, low, dtype=np.int64)
    left = n_ratings - n.sum()
    while left > 0:  # share what is left by weight among users below the cap
        room = n_items - n
        w_open = np.where(room > 0, w, 0.0)
        add = np.minimum(np.floor(left * w_open / w_open.sum()).astype(np.int64), room)
        if add.sum() == 0:  # the rounding left less than one per user: one each, heaviest first
            order = np.argsort(-w_open, kind="stable")[:left]
            add = np.zeros(n_users, dtype=np.int64)
            add[order[room[order] > 0]] = 1
        n += add
        left = n_ratings - n.sum()
    return n


def _draw_items(
    n_per_user: np.ndarray, p: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct items per user, drawn by weight ``p`` without replacement (sorted by user)."""
    n_users, n_items = n_per_user.shape[0], p.shape[0]
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    users = np.empty(0, dtype=np.int64)
    items = np.empty(0, dtype=np.int64)
    short = n_per_user.copy()
    for _ in range(8):  # draw with replacement, keep the distinct ones, draw the shortfall
        need = np.flatnonzero(short > 0)
        if need.shape[0] == 0:
            break
        u = np.repeat(need, short[need] + short[need] // 4 + 1)
        it = np.minimum(np.searchsorted(cdf, rng.random(u.shape[0]), side="right"), n_items - 1)
        key = np.sort(np.concatenate([users * n_items + items, u * n_items + it]))
        key = key[np.r_[True, key[1:] != key[:-1]]]  # distinct (np.unique's hash is slower)
        users, items = key // n_items, key % n_items
        got = np.bincount(users, minlength=n_users)
        over = got - n_per_user
        if (over > 0).any():  # drop a random surplus of the users who got too many
            drop = rng.random(key.shape[0])
            rank = np.empty(key.shape[0], dtype=np.int64)
            order = np.lexsort((drop, users))
            start = np.repeat(np.cumsum(got) - got, got)
            rank[order] = np.arange(key.shape[0]) - start
            keep = rank < n_per_user[users]
            users, items = users[keep], items[keep]
        short = n_per_user - np.bincount(users, minlength=n_users)
    heavy = np.flatnonzero(short > 0)  # users wanting most of the catalogue: a dense block
    if heavy.shape[0]:
        logp = np.log(p)
        step = max(1, _BLOCK_CELLS // n_items)
        extra_u, extra_i = [], []
        for s in range(0, heavy.shape[0], step):
            hu = heavy[s : s + step]
            key = logp - np.log(-np.log(rng.random((hu.shape[0], n_items))))  # Gumbel top-k
            have = np.isin(users, hu)
            key[np.searchsorted(hu, users[have]), items[have]] = -np.inf
            order = np.argsort(-key, axis=1)
            r, c = np.nonzero(np.arange(n_items)[None, :] < short[hu][:, None])
            extra_u.append(hu[r])
            extra_i.append(order[r, c])
        users = np.concatenate([users, *extra_u])
        items = np.concatenate([items, *extra_i])
        order = np.lexsort((items, users))
        users, items = users[order], items[order]
    return users, items


def make_ratings(
    n_users: int = 70_000,
    n_items: int = 10_000,
    n_ratings: int = 10_000_000,
    *,
    scale: str = "half",
    min_per_user: int = 20,
    random_state: int = 0,
) -> sp.csr_matrix:
    """A seeded user x item ratings matrix shaped like MovieLens (default: 10M's size).

    Parameters
    ----------
    n_users : int, default=70_000
        Rows (users).
    n_items : int, default=10_000
        Columns (items).
    n_ratings : int, default=10_000_000
        Stored ratings, exactly; at most ``n_users * n_items``.
    scale : {"half", "whole"}, default="half"
        Ratings 0.5 .. 5 in halves (MovieLens 10M) or 1 .. 5 (MovieLens 100K).
    min_per_user : int, default=20
        Ratings of the least active user (MovieLens keeps users with 20 or more); lowered
        to ``n_ratings // n_users`` (at least 1) when the ratings are too few, and to
        ``n_items``.
    random_state : int, default=0
        Seed: the same arguments give the same matrix.

    Returns
    -------
    ratings : scipy.sparse.csr_matrix of shape (n_users, n_items), float64
        One stored entry per rating (sorted indices, no stored zero); every user has at
        least one rating.

    Raises
    ------
    ValueError
        For more ratings than cells (``n_users * n_items``), fewer ratings than users, a
        count below 1 or an unknown ``scale``.

    Examples
    --------
    >>> from rankboost.datasets import make_ratings
    >>> R = make_ratings(700, 100, 10_000, random_state=0)
    >>> R.shape, R.nnz, float(R.data.min()) >= 0.5, float(R.data.max()) <= 5
    ((700, 100), 10000, True, True)
    >>> int(R.getnnz(axis=1).min())  # min_per_user=20 lowered to 10,000 // 700
    14
    """
    n_users = _check_count(n_users, "n_users", 1)
    n_items = _check_count(n_items, "n_items", 1)
    n_ratings = _check_count(n_ratings, "n_ratings", 1)
    min_per_user = _check_count(min_per_user, "min_per_user", 1)
    if scale not in _SCALES:
        raise ValueError(f"make_ratings: scale must be one of {_SCALES}, got {scale!r}.")
    if n_ratings > n_users * n_items:
        raise ValueError(
            f"make_ratings: n_ratings={n_ratings:,} is more than the {n_users:,} x "
            f"{n_items:,} = {n_users * n_items:,} cells of the matrix (a user rates an item "
            "at most once); ask for at most that many ratings, or more users or items."
        )
    if n_ratings < n_users:
        raise ValueError(
            f"make_ratings: n_ratings={n_ratings:,} is fewer than n_users={n_users:,}; "
            "every user rates at least one item, so ask for at least one rating per user."
        )
    rng = np.random.default_rng(random_state)
    low = max(1, min(min_per_user, n_ratings // n_users, n_items))
    per_user = _activity(n_users, n_items, n_ratings, low, rng)
    rank = rng.permutation(n_items)  # the popularity rank of every item
    p = (rank + 10.0) ** -1.0
    users, items = _draw_items(per_user, p / p.sum(), rng)
    k = 8
    b_u = rng.normal(0.0, 0.45, size=n_users)
    b_i = rng.normal(0.0, 0.5, size=n_items) + 0.25 * (np.log(p) - np.log(p).mean())
    P = rng.normal(0.0, 0.3, size=(n_users, k))
    Q = rng.normal(0.0, 0.3, size=(n_items, k))
    vals = np.empty(users.shape[0])
    step = 1 << 20
    for s in range(0, users.shape[0], step):  # the taste model, a million ratings at a time
        u, i = users[s : s + step], items[s : s + step]
        vals[s : s + step] = (
            3.45 + b_u[u] + b_i[i] + np.einsum("ij,ij->i", P[u], Q[i])
            + rng.normal(0.0, 0.7, size=u.shape[0])
        )  # fmt: skip
    vals += 3.5 - vals.mean()  # MovieLens 10M's mean rating (popular items pull it up)
    if scale == "half":
        vals = np.clip(np.round(vals * 2.0) / 2.0, 0.5, 5.0)
    else:
        vals = np.clip(np.round(vals), 1.0, 5.0)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(users, minlength=n_users))])
    import scipy.sparse as sp

    return sp.csr_matrix((vals, items, indptr), shape=(n_users, n_items))
