"""Base recommenders: the scores the pooled model combines.

Each base recommender is fitted on a user x item CSR matrix of ratings and scores given
(user, item) cells (:meth:`BaseScores.cells`: the cross-fitting's held-out cells), or every
item for a block of users (:meth:`BaseScores.scores`: the cells of every item, shape
``(n_users_in_block, n_items)`` per recommender); ``NaN`` where it abstains, the paper's ⊥.
Each formula below is written once, as a numba kernel in :mod:`rankboost._kernels.cells`
that both paths call (``popularity`` and ``item_mean`` are one number per item, computed
by :meth:`BaseScores.fit`); EASE's penalty search ranks with the same EASE kernel.
No Python loop runs over ratings. Formulas:

* ``popularity``: ``log(1 + n_i)``, ``n_i`` the number of ratings of item ``i``.
* ``item_mean``: the damped item mean ``(sum_u r_ui + beta * mu) / (n_i + beta)``, ``beta = 5``
  (Funk 2006's "BetterMean"), ``mu`` the global mean rating.
* ``user_knn``: VSIM, the cosine-weighted user-based prediction of Breese, Heckerman & Kadie
  (1998) as in the paper's section 6.2 baseline, with the neighbours' mean offsets as in
  Surprise's ``KNNWithMeans``: ``mu_u + sum_v s_uv (r_vi - mu_v) / sum_v |s_uv|`` over the
  neighbour pool (``feature_users``, never ``u``) who rated ``i``; ``s_uv`` the cosine of the
  two users' rating vectors. NaN where no neighbour rated ``i``.
* ``item_knn``: item-based prediction with means (Sarwar et al. 2001, adjusted cosine):
  ``m_i + sum_j s_ij (r_uj - m_j) / sum_j |s_ij|`` over the items ``j`` the user rated,
  ``s`` pruned to each item's ``k`` most similar items. NaN where none of them was rated.
  (Pruning keeps the ``k`` largest similarities, ties to the lower item index.)
* ``cooccurrence``: implicit item-KNN (Deshpande & Karypis 2004): ``sum_{j rated by u} s_ij``,
  ``s`` the cosine of the items' binary rater vectors, ``G_ij / sqrt(n_i n_j)`` from the
  co-occurrence counts ``G = X^T X`` (EASE's, when fitted), pruned to ``k`` neighbours per
  item.
* ``ease``: EASE (Steck, WWW 2019): with ``X`` the binary user x item matrix,
  ``P = (X^T X + lambda I)^{-1}``, ``B = I - P / diag(P)`` (column-wise), score ``X_u B``.
  Dense ``n_items x n_items``: meant for catalogues up to ~20,000 items.

``cooccurrence`` and ``ease`` are standardised per user over the items outside the user's
history (their raw scale grows with the history length, and the pooled model's thresholds
are shared by every user); the rating-scale scores are kept as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import lapack

from .._compat import Steps
from .._kernels import blas_threads, use_parallel
from .._kernels.cells import cooccurrence_cells, ease_cells, item_knn_cells, user_knn_cells
from ._penalty import check_search, mean_ndcg, search_penalty, users_dcg
from ._scale import (
    ItemTotals,
    PoolRows,
    adjusted_cosines,
    check_block_fit,
    check_cells,
    check_ease_memory,
    cross_gram,
    csr_triple,
    gram_rows,
    neighbour_pool,
    row_normalised,
    top_k_cosine,
    user_sample,
)

__all__ = [
    "BASE_RECOMMENDERS",
    "EASE_LAMBDAS",
    "EASE_START",
    "VALIDATION_FOLDS",
    "BaseScores",
    "choose_ease_lambda",
    "ease_dtype",
    "ease_weights_in_place",
    "entry_folds",
    "item_gram",
    "split_ratings",
    "user_means",
    "users_per_block",
    "validation_split",
]

#: the base recommenders a pooled model may combine, in feature order
BASE_RECOMMENDERS = ("user_knn", "item_knn", "cooccurrence", "ease", "item_mean", "popularity")
_STANDARDISED = ("cooccurrence", "ease")
_DAMPING = 5.0
#: EASE penalties tried by ``ease_lambda="auto"`` (:func:`choose_ease_lambda`)
EASE_LAMBDAS = (50.0, 100.0, 250.0, 500.0, 1000.0)
#: where :func:`choose_ease_lambda`'s local search starts: the penalty EASE's own tuning
#: picked on all three seeds of ``experiments/movies_topn.py`` (validation splits of the
#: training ratings); only the cost depends on it, not the choice (one peak)
EASE_START = 500.0
#: folds of :func:`validation_split` (the last one held out by :func:`choose_ease_lambda`)
VALIDATION_FOLDS = 5
#: scores held at once by :func:`choose_ease_lambda` (users per block = this / items)
_BLOCK_CELLS = 1 << 22
#: EASE's inverse runs on one BLAS thread below this many items (:func:`_spd_inverse`)
_SERIAL_INVERSE = 4096
#: the largest condition-number bound at which :func:`_ease_weights` may use float32
_FLOAT32_CONDITION = 1e4


@dataclass
class BaseScores:
    """Base recommenders fitted on one ratings matrix (a cross-fitting fold or all of it).

    Parameters
    ----------
    names : tuple of str
        Which of :data:`BASE_RECOMMENDERS` to compute, in this order.
    pool : ndarray of int or None
        The users that may be neighbours in ``user_knn`` (the ``feature_users``); None = all.
    k : int
        Neighbours kept per item by ``item_knn`` and ``cooccurrence``.
    ease_lambda : float
        EASE's L2 penalty.
    ease_float32 : bool
        EASE's inverse and scores in float32 when well conditioned (:func:`_ease_weights`):
        the pooled fit's cross-fitted features, which training rounds to float32 anyway.
    """

    names: tuple[str, ...]
    pool: NDArray[np.int64] | None = None
    k: int = 50
    ease_lambda: float = 250.0
    ease_float32: bool = False
    _R: sp.csr_matrix = field(init=False, repr=False)

    def fit(
        self,
        R: sp.csr_matrix,
        *,
        gram: NDArray[np.float64] | None = None,
        ease_weights: NDArray[np.floating] | None = None,
        items: ItemTotals | None = None,
        neighbours: sp.csr_matrix | None = None,
        pool_rows: PoolRows | None = None,
        item_neighbours: sp.csr_matrix | None = None,
    ) -> BaseScores:
        """Fit every base recommender on ``R`` (user x item CSR, stored entry = rating).

        ``gram`` (``B^T B`` of ``R``'s binary matrix) and ``ease_weights`` (EASE's weights at
        ``ease_lambda`` from that Gram matrix, :func:`_ease_weights`) may come from a caller
        that computed them on the same ratings already (:func:`choose_ease_lambda`'s
        ``keep``), so they are not computed twice.

        ``items`` (with ``gram`` and ``ease_weights``): ``R`` is a block of users of larger
        ratings whose :class:`ItemTotals`, Gram matrix and EASE weights these are
        (``rankboost.dask``'s recommender: a partition's users, the sums over every
        partition). The scores of the block's users are then those of a fit on all the
        ratings. ``neighbours``: ``cooccurrence``'s pruned cosines of those ratings
        (:func:`._scale.top_k_cosine`), so neither they nor the Gram matrix are needed here;
        ``item_neighbours``: ``item_knn``'s (:func:`._scale.top_k_similar` of the centred
        columns); ``pool_rows``: ``user_knn``'s pool rows (:class:`._scale.PoolRows`; its
        users as rows of ``R``: a block's own, or outside it).
        """
        R = sp.csr_matrix(R, dtype=np.float64)
        n_users, n_items = R.shape
        for name, given in (("gram", gram), ("ease_weights", ease_weights)):
            if given is not None and np.shape(given) != (n_items, n_items):
                raise ValueError(
                    f"BaseScores.fit: {name} must be an items x items array "
                    f"({n_items} x {n_items} for these ratings); got shape {np.shape(given)}."
                )
        if items is not None:
            knn = (pool_rows, item_neighbours)
            check_block_fit(self.names, items, gram, ease_weights, n_items, neighbours, knn)
        if "ease" in self.names:
            check_ease_memory(n_items)  # before the other recommenders' work
        self._R = R
        B = R.copy()
        B.data[:] = 1.0
        self._B = B
        n_u = np.diff(R.indptr)
        n_i: NDArray[np.float64]
        s_i: NDArray[np.float64]
        if items is None:
            n_i = np.bincount(R.indices, minlength=n_items).astype(np.float64)
            mu = float(R.data.mean()) if R.nnz else 0.0
            s_i = np.bincount(R.indices, weights=R.data, minlength=n_items)  # type: ignore[assignment]
        else:  # a block of users: the totals over every block (summed exactly for integers)
            n_i, s_i = items.counts, items.sums
            mu = items.total / items.n if items.n else 0.0
        self._mu_u = np.divide(
            np.asarray(R.sum(axis=1)).ravel(), n_u, out=np.full(n_users, mu), where=n_u > 0
        )
        self._item_mean = (s_i + _DAMPING * mu) / (n_i + _DAMPING)
        self._pop = np.log1p(n_i)
        want = set(self.names)
        if "user_knn" in want:
            self._un = row_normalised(R)  # rows for the cosine; the pool's (<= USER_KNN_POOL):
            if pool_rows is None:
                pool_rows = PoolRows.of(R, self._mu_u, self._un, neighbour_pool(self.pool, n_users))
            self._pool = pool_rows.users
            self._un_pool_csr = sp.csr_matrix(pool_rows.normalised.T)  # items x pool, sparse
            # the pool's centred ratings by item (column i: who rated i, in increasing order)
            self._uc_pool_csc = sp.csc_matrix(pool_rows.centred)
        if "item_knn" in want:
            given = item_neighbours  # i -> j, pruned
            near = given if given is not None else adjusted_cosines(R, self._mu_u, self.k)
            self._item_sim = near.T.tocsr()  # j -> i: the items that keep j as a neighbour
            dev = R.data - self._item_mean[R.indices]
            self._item_dev = sp.csr_matrix((dev, R.indices, R.indptr), shape=R.shape)
        cooc = "cooccurrence" in want and neighbours is None
        if "ease" not in want and items is None:
            gram = None
        elif gram is None and (cooc or ("ease" in want and ease_weights is None)):
            gram = item_gram(B)  # shared by cooccurrence
        if "cooccurrence" in want:
            counts = None if items is None else n_i
            if neighbours is None:
                neighbours = top_k_cosine(B, self.k, gram, counts)
            self._cooc = neighbours.T.tocsr()
        if "ease" in want:
            if ease_weights is None:
                ease_weights = self.ease_weights(gram)  # type: ignore[arg-type]
            self._ease = ease_weights
        return self

    def ease_weights(self, gram: NDArray[np.float64]) -> NDArray[np.floating]:
        """EASE's weights at ``ease_lambda`` from a Gram matrix (:func:`_ease_weights`)."""
        return _ease_weights(gram, self.ease_lambda, self.ease_float32)

    def scores(self, users: NDArray[np.int64]) -> NDArray[np.float64]:
        """Scores of every item for ``users``: shape ``(len(users), n_items, len(names))``.

        The cells of every item of each user, through the kernels of :meth:`cells` (each
        formula is written once, in :mod:`rankboost._kernels.cells`).
        """
        users = np.asarray(users, dtype=np.int64)
        n_users, n_items = users.shape[0], self._R.shape[1]
        starts = np.arange(n_users + 1, dtype=np.int64) * n_items
        items = np.tile(np.arange(n_items, dtype=np.int64), n_users)
        out = self._block_cells(users, (starts, items))
        return out.reshape(n_users, n_items, len(self.names))

    def cells(self, users: ArrayLike, items: ArrayLike) -> NDArray[np.float64]:
        """Scores of the cells ``(users[c], items[c])`` only: shape ``(n_cells, len(names))``.

        The numbers of :meth:`scores` at those cells, bit for bit (``scores(np.unique(users))
        [row of users[c], items[c]]``: the same kernels), without scoring every item:
        ``user_knn`` sums over each cell's raters, ``item_knn``, ``cooccurrence`` and
        ``ease`` build each user's row (for the standardisation, or the neighbours' sums),
        then read the cells (numba kernels, :mod:`rankboost._kernels.cells`). Memory: a
        block of users at a time, never a users x items array.

        Examples
        --------
        >>> import numpy as np, scipy.sparse as sp
        >>> R = sp.csr_matrix(np.array([[5.0, 3, 0, 1], [4, 0, 0, 1], [1, 1, 0, 5], [0, 1, 5, 4]]))
        >>> base = BaseScores(("item_mean", "cooccurrence"), k=2).fit(R)
        >>> users, items = np.array([3, 0, 3]), np.array([0, 2, 1])
        >>> cells = base.cells(users, items)
        >>> dense = base.scores(np.array([0, 3]))
        >>> bool(np.allclose(cells, dense[[1, 0, 1], items]))
        True
        """
        users, items = check_cells(users, items, self._R.shape)
        out = np.empty((users.shape[0], len(self.names)))
        if users.shape[0] == 0:
            return out
        order = np.argsort(users, kind="stable")
        su, si = users[order], items[order]
        starts = np.flatnonzero(np.r_[True, su[1:] != su[:-1], True])  # a user's cells
        step = max(1, _BLOCK_CELLS // max(self._R.shape[1], 1))  # users per block
        for s in range(0, starts.shape[0] - 1, step):
            e = min(s + step, starts.shape[0] - 1)
            lo, hi = starts[s], starts[e]
            block = (starts[s : e + 1] - lo, si[lo:hi])
            out[order[lo:hi]] = self._block_cells(su[starts[s:e]], block)
        return out

    def _block_cells(
        self, users: NDArray[np.int64], cells: tuple[NDArray[np.int64], NDArray[np.int64]]
    ) -> NDArray[np.float64]:
        """:meth:`cells` of a block of ``users`` (``cells``: their starts, items).

        Each formula lives in its kernel (:mod:`rankboost._kernels.cells`); the dense path
        (:meth:`scores`) passes every item of every user as the cells.
        """
        n_items = self._R.shape[1]
        items = cells[1]
        out = np.empty((items.shape[0], len(self.names)))
        hist = csr_triple(self._B[users])
        work = int(hist[1].shape[0]) * max(1, self.k) + users.shape[0] * n_items
        col = np.empty(items.shape[0])  # one feature at a time, contiguous for the kernels
        for f, name in enumerate(self.names):
            if name == "popularity":
                col[:] = self._pop[items]
            elif name == "item_mean":
                col[:] = self._item_mean[items]
            elif name == "user_knn":
                sim = self._pool_similarity(users)
                user_knn_cells(cells, sim, csr_triple(self._uc_pool_csc), self._mu_u[users], col,
                               use_parallel(sim.size + items.shape[0] * 50))  # fmt: skip
            elif name == "item_knn":
                dev = csr_triple(self._item_dev[users])
                item_knn_cells(cells, dev, csr_triple(self._item_sim), self._item_mean, col,
                               use_parallel(work))  # fmt: skip
            elif name == "cooccurrence":
                cooccurrence_cells(cells, hist, csr_triple(self._cooc), n_items, col,
                                   use_parallel(work))  # fmt: skip
            else:  # ease
                ease_cells(cells, hist, self._ease, col,
                           use_parallel(int(hist[1].shape[0]) * n_items))  # fmt: skip
            out[:, f] = col
        return out

    def _pool_similarity(self, users: NDArray[np.int64]) -> NDArray[np.float64]:
        """``user_knn``'s cosines of ``users`` to the pool users, one's own entry zeroed.

        ``self._un[users] @ self._un[pool].T`` (the bits of scipy's product with the dense
        transpose), summed over each user's rated items only (:func:`._scale.cross_gram`):
        no dense items x pool matrix is kept.
        """
        sim = cross_gram(sp.csr_matrix(self._un[users]), self._un_pool_csr)
        at = np.searchsorted(self._pool, users)
        own = at < self._pool.shape[0]
        own[own] = self._pool[at[own]] == users[own]
        sim[np.flatnonzero(own), at[own]] = 0.0  # never one's own neighbour
        return sim


def inverse_blas_threads(n_items: int) -> int | None:
    """The BLAS threads of EASE's inverse of ``n_items`` items (None: the process's)."""
    return 1 if n_items < _SERIAL_INVERSE else None


def _spd_inverse(G: NDArray[np.floating], overwrite: bool = False) -> NDArray[np.floating]:
    """Inverse of a symmetric positive definite matrix by Cholesky (LAPACK potrf + potri).

    With ``overwrite`` (a C-ordered ``G`` the caller no longer needs) the inverse is
    computed in ``G``'s memory: one ``n x n`` array instead of three (800 MB each at
    10,000 items).

    About half the work of a general inverse; ``G = X^T X + lambda I`` with ``lambda > 0`` is
    positive definite, so a failure means a non-finite or non-positive ``lambda``.

    Below :data:`_SERIAL_INVERSE` rows the BLAS runs on one thread: OpenBLAS's threaded
    ``potrf``/``potri`` spin-wait between their many small steps, and on a shared 2-core
    machine a 1,682-item inverse took 2.6 s of wall time on two threads against 0.2 s on
    one (``benchmarks/bench_recommend.py``, docs/movies.md). The bits depend on the thread
    count, so it holds through both calls whatever other threads do, and ``n_jobs``'
    threads join the count their caller took (:func:`rankboost._kernels.blas_threads`).
    A float32 ``G`` takes LAPACK's single precision routines (``spotrf``/``spotri``).
    """
    single = G.dtype == np.float32
    potrf, potri = (lapack.spotrf, lapack.spotri) if single else (lapack.dpotrf, lapack.dpotri)
    with blas_threads(inverse_blas_threads(G.shape[0])):
        # G is symmetric: G.T is the same matrix in Fortran order, which LAPACK can overwrite
        c, info = potrf(G.T if overwrite else G, lower=0, clean=0, overwrite_a=overwrite)
        if info == 0:
            P, info = potri(c, lower=0, overwrite_c=overwrite)
    if info != 0:
        raise ValueError(
            f"EASE's Gram matrix X^T X + lambda I is not positive definite (LAPACK info "
            f"{info}); ease_lambda must be a finite number > 0, got {G.diagonal().min()!r} "
            "on the diagonal."
        )
    _mirror_upper(P)  # potri fills the upper triangle
    return P.T if overwrite else P  # C order either way (P is symmetric)


def _mirror_upper(P: NDArray[np.floating], rows: int = 256) -> None:
    """``P``'s strictly lower triangle set to its upper one's mirror, ``rows`` rows at a time.

    The values of ``np.copyto(P, P.T, where=np.tri(n, k=-1))``, without its n x n mask and
    the full copy of the overlapping ``P.T`` numpy makes (3.6 GB more at 20,000 items in
    float64): the temporary copies are of one block of rows.
    """
    n = P.shape[0]
    for a in range(0, n, rows):
        b = min(n, a + rows)
        P[a:b, :a] = P[:a, a:b].T.copy()
        d = P[a:b, a:b]
        np.copyto(d, d.T.copy(), where=np.tri(b - a, k=-1, dtype=bool))


def item_gram(B: sp.csr_matrix) -> NDArray[np.float64]:
    """The dense item-item Gram matrix ``B^T B`` of the binary ``B``.

    Straight into the dense array (:func:`._scale.gram_rows`, a numba kernel), without
    scipy's sparse product and its up to ``items x items`` stored entries; first a clear
    MemoryError if EASE's dense matrices (this one and the inverse) cannot fit.
    """
    n = B.shape[1]
    check_ease_memory(n)
    return gram_rows(sp.csr_matrix(B.T), sp.csr_matrix(B), 0, n)


def _ease_weights(
    gram: NDArray[np.float64], lam: float, float32: bool = False
) -> NDArray[np.float64] | NDArray[np.float32]:
    """EASE's item-item weights ``I - P / diag(P)`` (zero diagonal), ``P = (gram + lam I)^-1``.

    ``float32=True``: the inverse in single precision (about half the time of float64 on
    1,682 items) when ``gram + lam I`` is well conditioned: its condition number is at most
    ``(||gram||_inf + lam) / lam`` (the largest absolute row sum bounds the largest
    eigenvalue from above, ``lam`` the smallest from below), and float32 is used only while
    that bound is below :data:`_FLOAT32_CONDITION` (relative error near that bound times
    float32's ``6e-8`` at worst; ``2e-6`` of the largest weight measured at ``lam`` 500,
    ``7e-6`` at 50, on MovieLens 100K); otherwise float64.
    """
    G = gram.astype(ease_dtype(float(np.abs(gram).sum(axis=1).max()), lam, float32))
    return ease_weights_in_place(G, lam)


def ease_dtype(row_sum: float, lam: float, float32: bool) -> type[np.floating]:
    """:func:`_ease_weights`' precision, from the Gram matrix's largest absolute row sum."""
    return np.float32 if float32 and (row_sum + lam) / lam < _FLOAT32_CONDITION else np.float64


def ease_weights_in_place(G: NDArray[np.floating], lam: float) -> NDArray[np.floating]:
    """:func:`_ease_weights` of a C-ordered Gram matrix ``G`` of its dtype, in ``G``'s memory."""
    G[np.diag_indices_from(G)] += lam
    W = _spd_inverse(G, overwrite=True)  # P, in G's memory
    W /= -np.diag(W).copy()  # in place: one items x items array besides the gram
    np.fill_diagonal(W, 0.0)
    return W


def entry_folds(R: sp.csr_matrix, n_folds: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """A fold per stored rating: each user's ratings dealt round-robin in random order."""
    n_u = np.diff(R.indptr)
    rows = np.repeat(np.arange(R.shape[0]), n_u)
    order = np.lexsort((rng.random(R.nnz), rows))
    rank = np.empty(R.nnz, dtype=np.int64)
    rank[order] = np.arange(R.nnz) - np.repeat(R.indptr[:-1], n_u)
    return rank % n_folds


def user_means(R: sp.csr_matrix) -> NDArray[np.float64]:
    """Each user's mean rating (0 for a user without ratings)."""
    n = np.diff(R.indptr)
    sums = np.asarray(R.sum(axis=1), dtype=np.float64).ravel()
    return np.divide(sums, n, out=np.zeros(R.shape[0]), where=n > 0)


def validation_split(
    R: sp.csr_matrix, seed: int, n_folds: int = VALIDATION_FOLDS
) -> NDArray[np.bool_]:
    """The held-out ratings (a mask over ``R.data``) of :func:`choose_ease_lambda`.

    Each user's ratings are dealt in random order round-robin into ``n_folds`` folds
    (:func:`entry_folds`); the last fold is held out, so a user with fewer than ``n_folds``
    ratings keeps them all.
    """
    return entry_folds(R, n_folds, np.random.default_rng([seed, 2])) == n_folds - 1


def choose_ease_lambda(
    R: sp.csr_matrix,
    seed: int,
    lambdas: tuple[float, ...] = EASE_LAMBDAS,
    n_folds: int = VALIDATION_FOLDS,
    k: int = 10,
    steps: Steps | None = None,
    search: str = "local",
    float32: bool = True,
    *,
    keep: dict[str, NDArray[np.floating]] | None = None,
) -> tuple[float, dict[float, float]]:
    """EASE's penalty with the best NDCG@k on a validation split of the ratings ``R``.

    The ratings of :func:`validation_split` are held out, EASE is fitted on the rest for
    a ``lambda`` and ranks every item outside a user's remaining history.
    Relevant = the held-out items the user *liked*, rated at or above their mean rating
    (binary gain, ideal DCG of ``min(#relevant, k)`` hits; users without one are left
    out; at most ``MAX_QUERIES`` of them, a seeded sample, :func:`._scale.user_sample`):
    the top-N task of :meth:`RankBoostRecommender.recommend`. Ties of the mean: the
    first of ``lambdas``.

    ``search="grid"`` evaluates every ``lambda``. ``search="local"`` (the fit's) climbs the
    sorted grid from :data:`EASE_START` (the grid's middle when absent): it evaluates the
    two neighbours of the current ``lambda`` and moves to the better one while it improves
    (a lower neighbour on a tie, as the grid's first-of-ties rule), so it returns the
    grid's choice whenever the NDCG over the grid has one peak (as on every MovieLens 100K
    split measured, docs/movies.md), with 3-4 Cholesky inverses instead of 5. Returns the
    chosen ``lambda`` and the mean NDCG@k of each one evaluated (in grid order).
    ``steps`` counts one step per ``lambda`` (a fit's progress bar; those the search skips
    at its end).
    ``float32``: EASE's inverse in single precision when well conditioned
    (:func:`_ease_weights`; the choice among penalties, not the fit's weights).
    ``keep``: a dict that receives ``"gram"`` and ``"weights"`` (EASE at the chosen
    ``lambda``), those of the ratings outside the validation split, for a caller that
    fits EASE on the same ratings (the pooled fit's last cross-fitting fold, whose
    ratings these are when it has ``n_folds`` folds); at most two weight matrices are
    held at once (the best so far and the one evaluated).

    Made of :func:`split_ratings` and :mod:`._penalty`'s pieces, which
    :mod:`rankboost.dask._ease_auto` runs on blocks of users to choose the same penalty.
    """
    check_search(search)
    steps = steps or Steps(0, disable=True, desc="")
    B, rel = split_ratings(R, validation_split(R, seed, n_folds))
    users = user_sample(np.flatnonzero(np.diff(rel.indptr)), seed)  # at most MAX_QUERIES
    if users.shape[0] == 0 or B.nnz == 0:
        return float(lambdas[0]), {}
    rel, Bu = rel[users], B[users]
    gram = item_gram(B)
    step = users_per_block(R.shape[1])
    kept: dict[float, tuple[float, NDArray[np.floating]]] = {}
    seen: list[float] = []

    def value(lam: float) -> float:
        steps.start(f"choosing ease_lambda {len(seen) + 1}/{len(lambdas)}")
        W = _ease_weights(gram, lam, float32)
        seen.append(lam)
        got = mean_ndcg(users_dcg(Bu, rel, W, k, step), np.diff(rel.indptr), k, R.shape[1])
        if keep is not None and (not kept or got > next(iter(kept.values()))[0]):
            kept.clear()
            kept[lam] = (got, W)  # the best so far (the first of ties, as the choice)
        steps.done()
        return got

    chosen, out = search_penalty(value, lambdas, search, EASE_START)
    steps.done(len(lambdas) - len(out))  # the penalties the search did not need
    if keep is not None and chosen in kept:
        keep.update(gram=gram, weights=kept[chosen][1])
    return chosen, out


def users_per_block(n_items: int) -> int:
    """Users :func:`choose_ease_lambda` scores at once: memory O(block x items)."""
    return max(1, _BLOCK_CELLS // max(n_items, 1))


def split_ratings(R: sp.csr_matrix, held: NDArray[np.bool_]) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """:func:`choose_ease_lambda`'s split of ``R``'s ratings by the mask ``held`` (per rating).

    Returns the binary matrix of the ratings not held out (EASE's training ratings) and the
    one of the held-out ratings the user *liked*, at or above their mean rating (the
    relevant items). Row by row: a block of whole users gives its rows of both.
    """
    rows = np.repeat(np.arange(R.shape[0]), np.diff(R.indptr))
    rest = ~held
    liked = held & (R.data >= user_means(R)[rows] - 1e-9)

    def binary(m: NDArray[np.bool_]) -> sp.csr_matrix:
        return sp.csr_matrix((np.ones(int(m.sum())), (rows[m], R.indices[m])), shape=R.shape)

    return binary(rest), binary(liked)
