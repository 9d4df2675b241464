"""The item x item statistics of :class:`rankboost.dask.DaskRankBoostRecommender`.

EASE's weights and ``cooccurrence``'s pruned cosines come from the Gram matrix ``B^T B`` of
the binary ratings of every user (or of a cross-fitting fold's). At MovieLens-20M's 20,000
items one such dense matrix is 3.2 GB in float64, so the sum is never held per block:

* the Gram matrix is summed in **stripes of rows** (:data:`STRIPE_BYTES` each): one task
  per stripe and worker adds the stripe of every block held on that worker (each block's
  stripe from :func:`rankboost.recommend._scale.gram_rows`, the one-machine kernel), then
  the workers' stripes are added (a pair of stripes at a time);
* the stripes are **float32** when exact: an entry counts the users who rated two items, an
  integer of at most ``n_users``, and every integer below ``2^24`` is a float32, so each
  partial, each sum and the final value are the float64 ones (float64 above that);
* ``cooccurrence``'s neighbours are pruned **stripe by stripe** (a row's top ``k`` needs its
  own row only, :func:`rankboost.recommend._scale.top_k_cosine_rows`), read as float64;
* EASE's matrix is written from the stripes' **lower triangle** (all that LAPACK's
  Cholesky reads of a symmetric matrix) into one array of the inverse's precision
  (:func:`rankboost.recommend._base.ease_dtype`: the same choice as one machine's, from the
  stripes' row sums in float64) and inverted **in place**
  (:func:`rankboost.recommend._base.ease_weights_in_place`): the triangle's stripes and that
  array are what the inverting worker holds, 0.8 + 3.2 GB at 20,000 items for the float64
  weights, then the weights alone (3.2 GB) on each worker that scores users.

The blocks then take the weights and the neighbours (``BaseScores.fit(..., neighbours=)``),
never the Gram matrix.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..recommend._base import BaseScores, ease_dtype, ease_weights_in_place
from ..recommend._scale import gram_rows, top_k_cosine_rows
from ._ratings import UserBlocks
from ._rectasks import keep_ratings

__all__ = [
    "STRIPE_BYTES",
    "ease_of_stripes",
    "item_stats",
    "lower_part",
    "row_sum_max",
    "summed_stripes",
]

#: the bytes of one stripe of rows of the summed Gram matrix (float64 while it is summed)
STRIPE_BYTES = 1 << 28
#: counts below this are exact in float32 (its 24-bit significand)
_FLOAT32_EXACT = 1 << 24


def gram_stripe(lo: int, hi: int, k: int, dtype: Any, *blocks: Any) -> NDArray[np.floating]:
    """Rows ``[lo, hi)`` of the binary Gram matrix summed over ``blocks``.

    ``blocks``: ``(R, fold)`` pairs, flattened; a block's ratings are those outside fold
    ``k`` (all of them when ``fold`` is None). Summed in float64, returned as ``dtype``
    (exact: whole numbers below ``2^24`` when float32).
    """
    out: NDArray[np.float64] | None = None
    for R, fold in zip(blocks[::2], blocks[1::2], strict=True):
        kept = R if fold is None else keep_ratings(R, fold != k)
        B = sp.csr_matrix((np.ones(kept.nnz), kept.indices, kept.indptr), shape=kept.shape)
        part = gram_rows(sp.csr_matrix(B.T), B, lo, hi)
        if out is None:
            out = part
        else:
            out += part
    assert out is not None
    return out.astype(dtype, copy=False)


def add_stripes(a: NDArray[np.floating], b: NDArray[np.floating]) -> NDArray[np.floating]:
    return a + b


def cosine_stripe(
    G: NDArray[np.floating], lo: int, k: int, counts: NDArray[np.float64]
) -> sp.csr_matrix:
    """``cooccurrence``'s neighbours of the items ``[lo, lo + len(G))``."""
    return top_k_cosine_rows(G, lo, k, counts)


def stack_rows(*parts: sp.csr_matrix) -> sp.csr_matrix:
    return sp.csr_matrix(sp.vstack(parts, format="csr"))


def lower_part(G: NDArray[np.floating], lo: int) -> NDArray[np.floating]:
    """Columns ``[0, hi)`` of the stripe of rows ``[lo, hi)``: its part of the lower triangle."""
    return np.ascontiguousarray(G[:, : lo + G.shape[0]])


def row_sum_max(G: NDArray[np.floating]) -> float:
    """The largest absolute row sum of a stripe, in float64 (exact for counts)."""
    return float(np.abs(G).sum(axis=1, dtype=np.float64).max())


def ease_of_stripes(
    lam: float, float32: bool, row_sums: list[float], after: Any, *lower: NDArray[np.floating]
) -> NDArray[np.floating]:
    """EASE's weights (``_ease_weights``) from the lower-triangle stripes of the Gram matrix.

    ``after``: ignored (a task this one waits for: the neighbours, which need the whole
    stripes, so that those are released before this task allocates the matrix).

    The Cholesky routines read one triangle of the symmetric matrix (``_spd_inverse``: the
    lower one of the C-ordered array), so only it is written; the inverse fills the rest.
    """
    n = lower[-1].shape[1]
    G = np.zeros((n, n), dtype=ease_dtype(max(row_sums), lam, float32))
    lo = 0
    for s in lower:
        G[lo : lo + s.shape[0], : s.shape[1]] = s
        lo += s.shape[0]
    return ease_weights_in_place(G, lam)


def item_stats(  # noqa: PLR0917  the fit's state
    client: Any,
    ub: UserBlocks,
    folds: list[Any] | None,
    k: int,
    counts: NDArray[np.float64],
    names: tuple[str, ...],
    lam: float | None,
    float32: bool,
) -> tuple[Any, Any]:
    """Futures of EASE's weights and ``cooccurrence``'s neighbours (None where not named).

    The ratings are ``ub``'s blocks' (outside fold ``k`` of ``folds`` when given); ``counts``:
    their ratings per item; ``float32``: EASE's inverse in single precision when well
    conditioned (the cross-fitting's). See the module docstring for the memory.
    """
    need_ease = "ease" in names and lam is not None
    if not (need_ease or "cooccurrence" in names):
        return None, None
    stripes, row_sums, neighbours = [], [], []
    nn = BaseScores(names).k
    for lo, G in summed_stripes(client, ub, folds, k, counts.shape[0]):
        if need_ease:
            stripes.append(client.submit(lower_part, G, lo, pure=False))
            row_sums.append(client.submit(row_sum_max, G, pure=False))
        if "cooccurrence" in names:
            neighbours.append(client.submit(cosine_stripe, G, lo, nn, counts, pure=False))
    cooc = client.submit(stack_rows, *neighbours, pure=False) if neighbours else None
    weights = None
    if need_ease:  # after the neighbours: every whole stripe is released before the inverse
        assert lam is not None
        weights = client.submit(ease_of_stripes, lam, float32, row_sums, cooc, *stripes, pure=False)
    return weights, cooc


def summed_stripes(
    client: Any, ub: UserBlocks, folds: list[Any] | None, k: int, n: int
) -> list[tuple[int, Any]]:
    """Futures of the Gram matrix's stripes of rows, summed over blocks: ``(first row, stripe)``.

    The ratings are ``ub``'s blocks' (outside fold ``k`` of ``folds`` when given). Each
    worker sums the stripes of the blocks it holds, then the workers' stripes are added a
    pair at a time; float32 while the counts are exact in it (module docstring).
    """
    blocks = ub.blocks
    dtype = np.float32 if ub.users.shape[0] < _FLOAT32_EXACT else np.float64
    by_worker: dict[str, list[Any]] = {}
    who = client.who_has(blocks)
    for j, b in enumerate(blocks):
        where = sorted(who.get(b.key, ())) or [""]
        by_worker.setdefault(where[0], []).extend([b, None if folds is None else folds[j]])
    rows = max(1, STRIPE_BYTES // (8 * max(n, 1)))
    out = []
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        parts = [
            client.submit(
                gram_stripe,
                lo,
                hi,
                k,
                dtype,
                *pairs,
                pure=False,
                workers=[addr] if addr else None,  # "": the blocks' worker was lost
                allow_other_workers=bool(addr),  # distributed refuses it without workers=
            )
            for addr, pairs in by_worker.items()
        ]
        while len(parts) > 1:
            parts = [
                client.submit(add_stripes, *parts[i : i + 2], pure=False)
                if i + 1 < len(parts) else parts[i]
                for i in range(0, len(parts), 2)
            ]  # fmt: skip
        out.append((lo, parts[0]))
    return out
