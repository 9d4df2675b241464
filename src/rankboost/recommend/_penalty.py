"""EASE's penalty search (``ease_lambda="auto"``): its per-user NDCG and its local search.

The pieces :func:`._base.choose_ease_lambda` is made of, shared with the Dask recommender
(:mod:`rankboost.dask._ease_auto`), which runs the per-user ones in each block of users and
the rest on its client, so both choose the same penalty bit for bit:

* :func:`users_dcg`: each held-out user's DCG@k of EASE's ranking of the items outside their
  remaining history (binary gain: the held-out items they liked); a user's value does not
  depend on the users scored with it;
* :func:`mean_ndcg`: the mean NDCG@k of those users, in user order (the one reduction);
* :func:`search_penalty`: the local search (or the whole grid) over the penalties, given the
  mean NDCG of a penalty.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .._kernels import use_parallel
from .._kernels.cells import ease_rows
from ._scale import csr_triple

__all__ = [
    "check_search",
    "mean_ndcg",
    "search_penalty",
    "top_columns",
    "unrated_ease_scores",
    "users_dcg",
]

#: the ways :func:`search_penalty` goes over the penalties
SEARCHES = ("local", "grid")


def top_columns(S: NDArray[np.float64], k: int) -> NDArray[np.int64]:
    """``np.argsort(-S, axis=1, kind="stable")[:, :k]``, without sorting whole rows.

    A partition finds each row's ``k``-th largest value ``t``; only the cells ``>= t``
    (``k`` of them unless ``t`` is tied) are sorted, stably in column order, so ties go to
    the lower column exactly as the full sort does. Rows with NaN among their ``k`` largest
    (fewer than ``k`` numbers) take the full sort.
    """
    n, m = S.shape
    if k >= m or n == 0 or k <= 0:
        return np.argsort(-S, axis=1, kind="stable")[:, : max(k, 0)]
    neg = -S
    part = np.argpartition(neg, k - 1, axis=1)[:, :k]
    t = np.take_along_axis(neg, part, axis=1).max(axis=1)  # NaN when a NaN is among them
    full = np.isnan(t)
    cand = neg <= t[:, None]
    cand[full] = False
    counts = cand.sum(axis=1)
    r, c = np.nonzero(cand)  # row-major: columns ascending within a row
    pos = np.arange(r.shape[0]) - np.repeat(np.cumsum(counts) - counts, counts)
    width = max(int(counts.max()), k)
    vals = np.full((n, width), np.inf)  # padding after a row's cells: sorts after them
    cols = np.zeros((n, width), dtype=np.int64)
    vals[r, pos] = neg[r, c]
    cols[r, pos] = c
    out = np.take_along_axis(cols, np.argsort(vals, axis=1, kind="stable")[:, :k], axis=1)
    if full.any():
        out[full] = np.argsort(neg[full], axis=1, kind="stable")[:, :k]
    return out


def unrated_ease_scores(b: sp.csr_matrix, W: NDArray[np.floating]) -> NDArray[np.float64]:
    """EASE's raw scores ``X_u B`` of the users of the binary ``b``, ``-inf`` at their history."""
    S = np.zeros(b.shape)
    ease_rows(csr_triple(b), W, S, use_parallel(b.nnz * b.shape[1]))
    S[np.repeat(np.arange(b.shape[0]), np.diff(b.indptr)), b.indices] = -np.inf
    return S


def users_dcg(
    Bu: sp.csr_matrix, rel: sp.csr_matrix, W: NDArray[np.floating], k: int, step: int
) -> NDArray[np.float64]:
    """The DCG@``k`` of each user (row) of ``Bu`` under EASE's weights ``W``.

    ``Bu``: the users' binary remaining history; ``rel``: their relevant held-out items
    (binary gain); ``step`` users scored at once (memory ``step x n_items``; a user's value
    does not depend on it).
    """
    kk = min(k, Bu.shape[1])
    disc = 1.0 / np.log2(np.arange(2, kk + 2))
    dcg = np.empty(Bu.shape[0])
    for s in range(0, Bu.shape[0], step):
        top = top_columns(unrated_ease_scores(Bu[s : s + step], W), kk)
        hit = np.take_along_axis(rel[s : s + step].toarray() > 0, top, axis=1)
        dcg[s : s + step] = (hit * disc).sum(axis=1)
    return dcg


def mean_ndcg(dcg: NDArray[np.float64], n_rel: NDArray[np.int64], k: int, n_items: int) -> float:
    """The mean NDCG@``k`` of users of DCG ``dcg`` and ``n_rel`` (>= 1) relevant items each.

    The ideal DCG has ``min(n_rel, k)`` hits; the mean is over the users in their order.
    """
    kk = min(k, n_items)
    disc = 1.0 / np.log2(np.arange(2, kk + 2))
    idcg = np.cumsum(disc)[np.minimum(n_rel, kk) - 1]
    return float(np.mean(dcg / idcg))


def check_search(search: str) -> None:
    """A ValueError unless ``search`` is one of :data:`SEARCHES`."""
    if search not in SEARCHES:
        raise ValueError(f"search must be 'local' or 'grid'; got {search!r}.")


def search_penalty(
    value: Callable[[float], float], lambdas: tuple[float, ...], search: str, start: float
) -> tuple[float, dict[float, float]]:
    """The penalty of ``lambdas`` with the highest ``value`` (the first of ties).

    ``value(lam)``: the mean NDCG at ``lam``, called once per penalty evaluated.
    ``search="grid"`` evaluates every ``lambda``. ``search="local"`` climbs the sorted grid
    from ``start`` (the grid's middle when absent): it evaluates the two neighbours of the
    current ``lambda`` and moves to the better one while it improves (a lower neighbour on
    a tie, as the grid's first-of-ties rule). Returns the chosen ``lambda`` and the value of
    each one evaluated, in the order of ``lambdas``.
    """
    check_search(search)
    found: dict[float, float] = {}

    def at(lam: float) -> float:
        if lam not in found:
            found[lam] = value(lam)
        return found[lam]

    grid = sorted(float(lam) for lam in lambdas) if search == "local" else list(map(float, lambdas))
    if search == "grid":
        for lam in grid:
            at(lam)
    else:
        i = grid.index(start) if start in grid else (len(grid) - 1) // 2
        while True:
            here = at(grid[i])
            low = at(grid[i - 1]) if i > 0 else -np.inf
            high = at(grid[i + 1]) if i + 1 < len(grid) else -np.inf
            if low >= here and low >= high:
                i -= 1
            elif high > here:
                i += 1
            else:
                break
    order = [float(lam) for lam in lambdas if float(lam) in found]
    out = {lam: found[lam] for lam in order}
    best = max(out.values())
    return next(lam for lam in out if out[lam] == best), out
