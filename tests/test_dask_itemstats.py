"""The Dask recommender's item x item statistics, task by task (no cluster).

``rankboost.dask._itemstats`` sums the Gram matrix of the binary ratings in float32 stripes
of rows over blocks of users, prunes ``cooccurrence``'s neighbours stripe by stripe and
inverts EASE from the stripes' lower triangle: each must give the one-machine numbers bit
for bit (``item_gram``, ``top_k_cosine``, ``_ease_weights``), so the distributed model is
the one-machine one.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import scipy.sparse as sp

from rankboost.datasets import make_ratings
from rankboost.recommend._base import BaseScores, _ease_weights, item_gram
from rankboost.recommend._scale import ItemTotals, top_k_cosine, top_k_cosine_rows

if importlib.util.find_spec("dask") is None:
    pytest.skip("dask is needed", allow_module_level=True)

from rankboost.dask._itemstats import (  # noqa: E402
    add_stripes,
    ease_of_stripes,
    gram_stripe,
    lower_part,
    row_sum_max,
    stack_rows,
)


def _problem():
    R = make_ratings(120, 45, 1500, scale="half", random_state=3).tocsr()
    B = R.copy()
    B.data[:] = 1.0
    cuts = [0, 37, 80, 120]  # three blocks of users
    blocks = [sp.csr_matrix(R[a:b]) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    return R, B, blocks


def _stripes(blocks, n, rows, folds=None, k=0):
    """The summed stripes of rows, two "workers": the first block, then the others."""
    out = []
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        f = folds or [None] * len(blocks)
        first = gram_stripe(lo, hi, k, np.float32, blocks[0], f[0])
        pairs = [x for p in zip(blocks[1:], f[1:], strict=True) for x in p]
        rest = gram_stripe(lo, hi, k, np.float32, *pairs)
        out.append((lo, add_stripes(first, rest)))
    return out


@pytest.mark.parametrize("rows", [7, 45])
def test_float32_stripes_are_the_gram_matrix(rows):
    R, B, blocks = _problem()
    gram = item_gram(B)
    stripes = _stripes(blocks, R.shape[1], rows)
    assert all(s.dtype == np.float32 for _, s in stripes)
    assert np.array_equal(np.vstack([s for _, s in stripes]).astype(np.float64), gram)
    # a fold left out: the Gram matrix of the other ratings
    folds = [np.arange(b.nnz) % 3 for b in blocks]
    kept = sp.vstack([
        sp.csr_matrix((np.ones(int((f != 1).sum())), b.indices[f != 1],
                       np.r_[0, np.cumsum(np.bincount(np.repeat(np.arange(b.shape[0]),
                             np.diff(b.indptr))[f != 1], minlength=b.shape[0]))]),
                      shape=b.shape)
        for b, f in zip(blocks, folds, strict=True)
    ])  # fmt: skip
    got = np.vstack([s for _, s in _stripes(blocks, R.shape[1], rows, folds, 1)])
    assert np.array_equal(got.astype(np.float64), item_gram(sp.csr_matrix(kept)))


@pytest.mark.parametrize("rows", [7, 45])
def test_neighbours_by_stripe_are_top_k_cosine(rows):
    R, B, blocks = _problem()
    counts = np.bincount(B.indices, minlength=R.shape[1]).astype(np.float64)
    full = top_k_cosine(B, 5, item_gram(B))
    parts = [top_k_cosine_rows(s, lo, 5, counts) for lo, s in _stripes(blocks, R.shape[1], rows)]
    got = stack_rows(*parts)
    assert (got != full).nnz == 0
    assert np.array_equal(got.indptr, full.indptr)
    assert np.array_equal(got.indices, full.indices)
    assert np.array_equal(got.data, full.data)


@pytest.mark.parametrize(("lam", "float32"), [(500.0, True), (500.0, False), (2.0, True)])
def test_ease_from_the_lower_triangle_is_ease(lam, float32):
    R, B, blocks = _problem()
    want = _ease_weights(item_gram(B), lam, float32)
    stripes = _stripes(blocks, R.shape[1], 7)
    got = ease_of_stripes(
        lam, float32, [row_sum_max(s) for _, s in stripes], None,
        *[lower_part(s, lo) for lo, s in stripes],
    )  # fmt: skip
    assert got.dtype == want.dtype  # lam 2 is too ill-conditioned for float32
    assert got.flags.c_contiguous
    assert np.array_equal(got, want)


def test_block_fit_from_neighbours_and_weights_scores_as_the_gram():
    R, B, blocks = _problem()
    names = ("cooccurrence", "ease", "item_mean", "popularity")
    gram, totals = item_gram(B), ItemTotals.of(R)
    W = _ease_weights(gram, 500.0)
    near = top_k_cosine(B, BaseScores(names).k, gram, totals.counts)
    users = np.arange(blocks[1].shape[0])
    a = BaseScores(names, ease_lambda=500.0).fit(blocks[1], gram=gram, ease_weights=W, items=totals)
    b = BaseScores(names, ease_lambda=500.0).fit(
        blocks[1], ease_weights=W, neighbours=near, items=totals
    )
    assert np.array_equal(a.scores(users), b.scores(users), equal_nan=True)
    with pytest.raises(ValueError, match="neighbours="):
        BaseScores(names).fit(blocks[1], ease_weights=W, items=totals)


@pytest.mark.parametrize("n", [1, 5, 256, 257, 700])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_mirror_is_the_full_copy(n, dtype):
    from rankboost.recommend._base import _mirror_upper

    rng = np.random.default_rng(n)
    for order in ("C", "F"):
        P = np.asarray(rng.random((n, n)), dtype=dtype, order=order)
        want = P.copy(order=order)
        np.copyto(want, want.T, where=np.tri(n, k=-1, dtype=bool))
        _mirror_upper(P, 100)
        assert np.array_equal(P, want)
