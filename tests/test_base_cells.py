"""``BaseScores.cells`` (issue 35 item 1): the base recommenders at given (user, item) cells
only, against the dense ``BaseScores.scores`` they replace in the cross-fitting, on random
matrices (hypothesis), on MovieLens 100K's shape, across blocks of users, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ML100K
from rankboost.recommend import _base
from rankboost.recommend._base import BASE_RECOMMENDERS, BaseScores


def _dense_at(base: BaseScores, users: np.ndarray, items: np.ndarray) -> np.ndarray:
    """``scores(np.unique(users))`` read at the cells: what ``cells`` must equal."""
    uq = np.unique(users)
    return base.scores(uq)[np.searchsorted(uq, users), items]


def _assert_same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def _random_ratings(rng: np.random.Generator, n_users: int, n_items: int, density: float):
    M = (rng.random((n_users, n_items)) < density) * rng.integers(1, 6, (n_users, n_items))
    M[rng.integers(0, n_users), :] = 0  # a user without ratings
    M[:, rng.integers(0, n_items)] = 0  # an item nobody rated
    return sp.csr_matrix(M.astype(float))


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_users=st.integers(2, 25),
    n_items=st.integers(2, 160),  # above 128: numpy's pairwise sum splits the row
    density=st.floats(0.02, 0.9),
    k=st.integers(1, 12),
    use_pool=st.booleans(),
    float32=st.booleans(),
)
def test_cells_equal_the_dense_scores_on_random_matrices(
    seed, n_users, n_items, density, k, use_pool, float32
):
    rng = np.random.default_rng(seed)
    R = _random_ratings(rng, n_users, n_items, density)
    pool = np.sort(rng.choice(n_users, max(1, n_users // 2), replace=False)) if use_pool else None
    base = BaseScores(BASE_RECOMMENDERS, pool=pool, k=k, ease_lambda=5.0, ease_float32=float32)
    base.fit(R)
    n = int(rng.integers(1, 300))
    users, items = rng.integers(0, n_users, n), rng.integers(0, n_items, n)
    _assert_same(base.cells(users, items), _dense_at(base, users, items))


def test_cells_carry_the_dense_bits_on_sorted_csr():
    """With sorted indices every sum runs in the dense path's order (_kernels/cells.py)."""
    rng = np.random.default_rng(3)
    R = _random_ratings(rng, 30, 300, 0.2)
    assert R.has_sorted_indices
    base = BaseScores(BASE_RECOMMENDERS, k=10, ease_lambda=20.0, ease_float32=True).fit(R)
    users, items = np.repeat(np.arange(30), 300), np.tile(np.arange(300), 30)
    got, want = base.cells(users, items), _dense_at(base, users, items)
    assert np.isnan(want[:, 0]).any()  # user_knn abstains somewhere: NaN kept
    np.testing.assert_array_equal(got, want)  # NaN == NaN here


def test_user_knn_similarity_has_the_bits_of_the_dense_product():
    """``scores`` and ``cells`` take the pool cosines from the sparse kernel: the numbers of
    the dense ``self._un[users] @ self._un[pool].T.toarray()`` they replaced, bit for bit."""
    rng = np.random.default_rng(4)
    R = _random_ratings(rng, 40, 70, 0.25)
    pool = np.sort(rng.choice(40, 25, replace=False))
    base = BaseScores(("user_knn",), pool=pool).fit(R)
    users = np.array([0, 3, 17, 39, 5])
    dense = np.asarray(base._un[users] @ base._un[base._pool].T.toarray())
    at = np.searchsorted(base._pool, users)
    mine = (at < 25) & (base._pool[np.minimum(at, 24)] == users)
    dense[np.flatnonzero(mine), at[mine]] = 0.0
    np.testing.assert_array_equal(base._pool_similarity(users), dense)


def test_cells_in_any_order_repeated_and_across_blocks(monkeypatch):
    rng = np.random.default_rng(5)
    R = _random_ratings(rng, 20, 40, 0.3)
    base = BaseScores(BASE_RECOMMENDERS, k=5, ease_lambda=10.0).fit(R)
    users = np.r_[rng.integers(0, 20, 200), 7, 7, 7]
    items = np.r_[rng.integers(0, 40, 200), 3, 3, 3]  # one cell asked three times
    want = _dense_at(base, users, items)
    _assert_same(base.cells(users, items), want)
    monkeypatch.setattr(_base, "_BLOCK_CELLS", 80)  # two users per block
    _assert_same(base.cells(users, items), want)
    got = base.cells(users.tolist(), items.astype(np.int32))  # a list, int32
    _assert_same(got, want)
    assert base.cells(np.array([], int), np.array([], int)).shape == (0, len(BASE_RECOMMENDERS))


def test_cells_on_unsorted_and_duplicate_csr_entries():
    """A CSR matrix with unsorted indices and a duplicate entry: the same sums, another order."""
    rng = np.random.default_rng(8)
    R = _random_ratings(rng, 15, 30, 0.4)
    order = np.concatenate([rng.permutation(np.arange(R.indptr[u], R.indptr[u + 1]))
                            for u in range(R.shape[0])])  # fmt: skip
    U = sp.csr_matrix((R.data[order], R.indices[order], R.indptr), shape=R.shape)
    assert not U.has_sorted_indices
    base = BaseScores(BASE_RECOMMENDERS, k=4, ease_lambda=10.0).fit(U)
    users, items = np.repeat(np.arange(15), 30), np.tile(np.arange(30), 15)
    _assert_same(base.cells(users, items), _dense_at(base, users, items))
    # the first user with two ratings has its first one stored twice (halved: the same sum)
    u = int(np.flatnonzero(np.diff(R.indptr) >= 2)[0])
    lo = R.indptr[u]
    data = np.insert(R.data, lo, R.data[lo] / 2)
    data[lo + 1] /= 2
    ind = np.insert(R.indices, lo, R.indices[lo])
    ptr = R.indptr + (np.arange(R.shape[0] + 1) > u)
    D = sp.csr_matrix((data, ind, ptr), shape=R.shape)
    base = BaseScores(BASE_RECOMMENDERS, k=4, ease_lambda=10.0).fit(D)
    _assert_same(base.cells(users, items), _dense_at(base, users, items))


@pytest.mark.skipif(not ML100K.is_file(), reason="../shared data absent")
def test_cells_equal_the_dense_scores_on_movielens_100k():
    from rankboost.datasets import load_movielens

    R, _, _ = load_movielens(ML100K).to_matrix()
    rng = np.random.default_rng(0)
    keep = rng.random(R.nnz) < 0.8  # a training part, as a cross-fitting fold sees
    rows = np.repeat(np.arange(R.shape[0]), np.diff(R.indptr))
    Rk = sp.csr_matrix((R.data[keep], (rows[keep], R.indices[keep])), shape=R.shape)
    assert Rk.shape == (943, 1682)
    pool = np.sort(rng.choice(943, 400, replace=False))
    base = BaseScores(BASE_RECOMMENDERS, pool=pool, ease_lambda=500.0, ease_float32=True)
    base.fit(Rk)
    users = np.sort(rng.choice(943, 60, replace=False))  # their held-out and unrated cells
    held = np.isin(rows, users) & ~keep
    cu = np.r_[rows[held], rng.choice(users, 6000)]
    ci = np.r_[R.indices[held], rng.integers(0, 1682, 6000)]
    got = base.cells(cu, ci)
    assert np.isnan(got[:, 0]).any()  # user_knn abstains where no pool user rated the item
    assert not np.isnan(got[:, 2:]).any()
    _assert_same(got, _dense_at(base, cu, ci))


@pytest.mark.parametrize(
    ("users", "items", "match"),
    [
        (np.zeros((2, 2), int), np.zeros(4, int),
         r"users must be a 1-D array of integer indices; got shape \(2, 2\) of dtype int64"),
        (np.array([0.0, 1.0]), np.array([0, 1]),
         r"users must be a 1-D array of integer indices; got shape \(2,\) of dtype float64"),
        (np.array([0, 6]), np.array([0, 1]),
         r"users\[1\] = 6 is outside the fitted matrix's 6 users \(0 to 5\); pass indices"),
        (np.array([0, 1]), np.array([-1, 1]),
         r"items\[0\] = -1 is outside the fitted matrix's 8 items \(0 to 7\)"),
        (np.array([0, 1, 2]), np.array([0, 1]),
         r"users and items must have one entry per cell; got 3 users and 2 items"),
    ],
)  # fmt: skip
def test_cells_bad_input(users, items, match):
    R = _random_ratings(np.random.default_rng(1), 6, 8, 0.5)
    base = BaseScores(BASE_RECOMMENDERS, k=3, ease_lambda=10.0).fit(R)
    with pytest.raises(ValueError, match=match):
        base.cells(users, items)


# ------------------------------------------------------------------ the fit's pruning


def _old_top_k_similar(V: sp.csr_matrix, k: int) -> sp.csr_matrix:
    """The pruning before issue 35 item 1: ``np.argpartition`` of the dense cosine rows."""
    D = V.toarray()
    norms = np.linalg.norm(D, axis=1)
    Dn = D / np.where(norms > 0, norms, 1.0)[:, None]
    S = Dn @ Dn.T
    np.fill_diagonal(S, 0.0)
    kk = min(k, S.shape[0] - 1)
    top = np.argpartition(-S, kk - 1, axis=1)[:, :kk]
    rows = np.repeat(np.arange(S.shape[0]), kk)
    out = sp.csr_matrix((np.take_along_axis(S, top, 1).ravel(), (rows, top.ravel())), S.shape)
    out.eliminate_zeros()
    return out


def _stable_top_k(S: np.ndarray, k: int) -> list[set[int]]:
    """Each row's ``k`` largest (diagonal as 0, ties to the lower column), zeros dropped."""
    S = S.copy()
    np.fill_diagonal(S, 0.0)
    kk = min(k, S.shape[0] - 1)
    top = np.argsort(-S, axis=1, kind="stable")[:, :kk]
    return [{int(j) for j in row if S[i, j] != 0} for i, row in enumerate(top)]


@pytest.mark.parametrize("k", [1, 5, 40])
def test_top_k_similar_keeps_the_sets_and_values_of_the_old_pruning_without_ties(k):
    from rankboost.recommend._scale import top_k_similar

    rng = np.random.default_rng(k)
    V = sp.random(
        60, 35, density=0.3, format="csr", random_state=rng, data_rvs=lambda m: rng.normal(size=m)
    )
    got, old = top_k_similar(V, k), _old_top_k_similar(V, k)
    assert got.has_sorted_indices
    assert got.nnz == old.nnz > 0
    for i in range(60):
        assert set(got[i].indices) == set(old[i].indices)
    np.testing.assert_allclose(got.toarray(), old.toarray(), rtol=1e-12, atol=1e-15)


def test_top_k_cosine_breaks_ties_to_the_lower_column_and_drops_zeros(monkeypatch):
    from rankboost.recommend import _scale

    rng = np.random.default_rng(2)
    X = (rng.random((40, 50)) < 0.1).astype(float)  # many tied cosines
    X[:, 7] = 0.0  # an item nobody rated: no neighbour, and nobody's neighbour
    B = sp.csr_matrix(X)
    G = (B.T @ B).toarray()
    a = np.divide(1.0, np.sqrt(np.diag(G)), out=np.zeros(50), where=np.diag(G) > 0)
    cos = G * a[:, None] * a[None, :]  # the kernel's order: (G_ij * a_i) * a_j
    for k in (1, 3, 49):
        got = _scale.top_k_cosine(B, k)
        assert [set(got[i].indices) for i in range(50)] == _stable_top_k(cos, k)
        assert got.nnz > 0
        assert got[7].nnz == 0
        assert got[:, 7].nnz == 0
        np.testing.assert_array_equal(got.toarray()[got.toarray() != 0], cos[got.toarray() != 0])
        np.testing.assert_array_equal(_scale.top_k_cosine(B, k, G).toarray(), got.toarray())
        old = _old_top_k_similar(sp.csr_matrix(B.T), k)  # the same cosines, to the last bits
        both = (old.toarray() != 0) & (got.toarray() != 0)
        np.testing.assert_allclose(got.toarray()[both], old.toarray()[both], rtol=1e-13)
    monkeypatch.setattr(_scale, "_BLOCK_CELLS", 120)  # blocks of 2 rows
    np.testing.assert_array_equal(
        _scale.top_k_cosine(B, 3).toarray(), _scale.top_k_cosine(B, 3, G).toarray()
    )


def test_top_k_similar_keeps_zeros_before_negatives():
    """A row with fewer than k positive cosines keeps its zeros before any negative one (and
    drops them), as the old argpartition did."""
    from rankboost.recommend._scale import top_k_similar

    V = sp.csr_matrix(np.array([[1.0, 0], [1, 0.1], [-1, 0], [-1, -0.1], [0, 1]]))
    # row 0: cosine 0.995 (row 1), -1 (row 2), -0.995 (row 3), 0 (row 4 and itself)
    for k, kept in ((1, [1]), (2, [1]), (3, [1]), (4, [1, 3])):
        got = top_k_similar(V, k)
        assert list(got[0].indices) == kept
        np.testing.assert_array_equal(got.toarray(), _old_top_k_similar(V, k).toarray())


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 40), k=st.integers(0, 45))
def test_top_k_similar_is_the_stable_top_k_of_its_cosines(seed, n, k):
    """Ties (values rounded to 0.5), zeros and negatives: the kept set of each row is the
    stable sort's first k (diagonal as 0, ties to the lower column), zeros dropped."""
    from rankboost.recommend._scale import gram_rows, row_normalised, top_k_similar

    rng = np.random.default_rng(seed)
    D = np.round(rng.normal(size=(n, 6)) * (rng.random((n, 6)) < 0.4) * 2) / 2
    V = sp.csr_matrix(D)
    Vn = row_normalised(V)
    S = gram_rows(Vn, sp.csr_matrix(Vn.T), 0, n)  # the very cosines the pruning sees
    got = top_k_similar(V, k)
    assert [set(got[i].indices) for i in range(n)] == _stable_top_k(S, k)
    np.testing.assert_array_equal(got.toarray()[got.toarray() != 0], S[got.toarray() != 0])
