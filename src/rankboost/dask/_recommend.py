"""The pooled recommender on Dask: :class:`DaskRankBoostRecommender`.

The one-machine pooled fit (:mod:`rankboost.recommend._pooled`, SPEC 7.2) with the users
spread over the workers in blocks of whole users (:mod:`rankboost.dask._ratings`), each
step run where the ratings are and with the one-machine code:

* **item statistics**: each block sums its users' per-item totals
  (:class:`~rankboost.recommend._base.ItemTotals`), which the client adds up; the item x
  item Gram matrix is summed on the workers in float32 stripes of rows (integer counts:
  exactly), ``cooccurrence``'s neighbours are pruned per stripe and one task inverts
  EASE's matrix in place (:mod:`rankboost.dask._itemstats`, which states the memory),
  once per fit of the base recommenders; the blocks take the weights and neighbours;
* **cross-fitting**: the folds of the ratings and the sampled unrated items are drawn by
  each block from its own slice of the one-machine random streams (PCG64's ``advance``
  jumps to it), so every row, fold and label is the one-machine one; fold by fold, the
  client sums the blocks' Gram matrices without that fold, inverts once, and each block
  scores its rows of the fold (``BaseScores.fit(..., items=...)``: its users with the
  totals of every user); ``user_knn``'s neighbour pool rows and ``item_knn``'s pruned
  neighbours come from :mod:`rankboost.dask._knn` (the one-machine bits);
* **boosting**: the rows stay in their blocks, which are the partitions of
  :func:`rankboost.dask.train` (a user is a query, whole in its block), from the prior
  ``c * EASE`` as ``init_score``; with ``inner_folds``, the rounds (and with
  ``prior_scale=None`` the multiplier ``c``) are chosen on held-out users by one machine's
  search, its runs trained on the blocks and its curves scored there
  (:mod:`rankboost.dask._inner`);
* **ease_lambda="auto"**: EASE's penalty chosen on a validation split as one machine's, its
  per-user parts in the blocks (:mod:`rankboost.dask._ease_auto`);
* **recommending**: each block scores its users with the base recommenders on all the
  ratings and keeps the top ``k``.

The same ``random_state`` gives the one-machine model (to 1e-12, as the Dask ranker) and
the same top-``k`` for every user, for ratings whose sums are exact in float64 (integers,
halves): the totals are added in another order otherwise. What is not distributed is
refused with a clear error: the paper's per-user models (``mode="per_user"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .._compat import require
from ..recommend._base import VALIDATION_FOLDS, BaseScores
from ..recommend._labels import COLUMNS, check_k
from ..recommend._pooled import (
    TOP_N,
    PooledFit,
    PooledOptions,
    PooledResult,
    held_unrated,
    negatives_per_user,
    prior_scales,
)
from ..recommend._recommender import RankBoostRecommender
from ..recommend._scale import ItemTotals, neighbour_pool, user_sample
from ._ease_auto import choose_ease_lambda as ease_auto
from ._inner import KindRows, fit_kind
from ._itemstats import item_stats
from ._knn import knn_pool, knn_stats
from ._ratings import UserBlocks, user_blocks
from ._rectasks import (
    block_features,
    block_folds,
    block_rows,
    block_totals,
    cross_fit_block,
    kind_part,
    labelled_block,
    top_of_users,
    totals_without,
)

__all__ = ["DaskRankBoostRecommender"]


# --------------------------------------------------------------------------- the estimator


class DaskRankBoostRecommender:
    """The pooled :class:`~rankboost.recommend.RankBoostRecommender` on a Dask cluster.

    ``fit`` takes a dask DataFrame of ``(user, item, rating)`` rows in any partitioning;
    the users are grouped in blocks of whole users on the workers, and the base
    recommenders' statistics, the cross-fitting, the boosting and the recommendations run
    there (module docstring). The same ``random_state`` gives the model and the top-``k``
    of ``RankBoostRecommender(**est.params)`` fitted on the same ratings in memory.

    Parameters
    ----------
    client : distributed.Client, default=None
        The cluster's client (None: ``distributed.get_client()``).
    **params
        ``RankBoostRecommender``'s parameters, with its defaults (one definition: the
        same model as ``RankBoostRecommender(**params)``); ``mode`` must be ``"pooled"``.
        An unknown or invalid value is a ValueError naming the parameter.

    Attributes
    ----------
    users_, items_ : ndarray
        The sorted distinct user and item labels.
    model_, rating_model_ : RankBoostModel
        As ``RankBoostRecommender``'s (pooled).
    prior_scale_, ease_lambda_ : float or None
        As ``RankBoostRecommender``'s.
    rounds_curve_, rating_rounds_curve_ : ndarray or None
        As ``RankBoostRecommender``'s: the inner CV's held-out NDCG@10 per round.
    report_ : dict
        As ``RankBoostRecommender``'s, and ``n_blocks`` (blocks of users).

    Examples
    --------
    >>> import dask.dataframe as dd  # doctest: +SKIP
    >>> from distributed import Client  # doctest: +SKIP
    >>> from rankboost.dask import DaskRankBoostRecommender  # doctest: +SKIP
    >>> ratings = dd.read_parquet("ratings.parquet")  # user, item, rating  # doctest: +SKIP
    >>> rec = DaskRankBoostRecommender(client=Client(), n_estimators=50)  # doctest: +SKIP
    >>> rec = rec.fit(ratings)  # doctest: +SKIP
    >>> users, items, scores = rec.recommend_all(k=10)  # dask arrays  # doctest: +SKIP
    >>> local = rec.to_local()  # a plain RankBoostRecommender  # doctest: +SKIP
    """

    def __init__(self, *, client: Any = None, **params: Any) -> None:
        self.client = client
        self.params = dict(params)  # RankBoostRecommender's, with its defaults

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the client or the workers' data (use :meth:`to_local`)."""
        return {"client": None, "params": dict(self.params)}

    def _get_client(self) -> Any:
        if self.client is not None:
            return self.client
        return require("distributed", "DaskRankBoostRecommender").get_client()

    def _template(self) -> RankBoostRecommender:
        """The in-memory recommender of these parameters, its values checked for Dask."""
        try:
            est = RankBoostRecommender(**self.params)
        except TypeError as exc:
            raise TypeError(f"DaskRankBoostRecommender: {exc}.") from None
        est._check_params()
        if est.mode != "pooled":
            raise ValueError(
                f"DaskRankBoostRecommender: mode={est.mode!r} is not available on Dask: only "
                "the pooled model is distributed. Use rankboost.recommend.RankBoostRecommender "
                "for the paper's per-user models."
            )
        return est

    # ------------------------------------------------------------------ fit
    def fit(self, ratings: Any, *, columns: tuple[str, str, str] = COLUMNS) -> Any:
        """Fit the pooled model(s) on a dask DataFrame of ``(user, item, rating)`` rows.

        Parameters
        ----------
        ratings : dask DataFrame
            One row per rating in the ``columns`` named; any partitioning (a user's rows
            may straddle partitions). Every user in it is a target.
        columns : tuple of (str, str, str), default=("user", "item", "rating")
            The user, item and rating columns.

        Returns
        -------
        self : DaskRankBoostRecommender
        """
        for name in [k for k in vars(self) if k.endswith("_") or k.startswith("_")]:
            delattr(self, name)  # a fit that raises leaves an unfitted recommender
        template = self._template()
        params = template._check_params()
        opts = PooledOptions.of(template)
        client = self._get_client()
        ub = user_blocks(client, ratings, columns, template.rating_range)
        names = opts.base_recommenders
        per_block = client.gather(
            [client.submit(block_totals, b, None, pure=False) for b in ub.blocks]
        )
        totals = per_block[0][0]
        for t, _ in per_block[1:]:
            totals = totals.add(t)
        low = min(lo for _, lo in per_block)
        self._feats = knn_pool(ub, template.feature_users)  # user_knn's (feature_users)
        self._pool = neighbour_pool(self._feats, ub.users.shape[0])
        rows, counts = self._rows(client, ub, opts, low)
        lam = None
        if "ease" in names and isinstance(opts.ease_lambda, str):  # "auto": a validation split
            folds = [f for f, _ in rows] if opts.n_folds == VALIDATION_FOLDS else None  # same
            lam = ease_auto(client, ub, opts.random_state, folds=folds)[0]
        elif "ease" in names:
            lam = float(opts.ease_lambda)
        X = self._cross_fit(client, ub, rows, opts, names, lam)
        fits = self._boost(client, rows, X, counts, opts, params, names, ub.starts)
        top_n = fits.get(TOP_N if opts.feedback == "auto" else opts.feedback)
        top_n = top_n or next(iter(fits.values()))
        by_rating = fits.get("ratings", top_n)
        stats = self._stats(client, ub, names, lam, totals)
        self._ub, self._stats_f, self._fits, self._names = ub, stats, (top_n, by_rating), names
        self.users_, self.items_ = ub.users, ub.items
        self.n_users_, self.n_items_ = ub.users.shape[0], ub.items.shape[0]
        self.model_, self.rating_model_ = top_n.model, by_rating.model
        self.rounds_curve_, self.rating_rounds_curve_ = top_n.curve, by_rating.curve
        self.prior_scale_ = top_n.scale if top_n.prior is not None else None
        self.ease_lambda_ = lam
        self.report_ = {
            "n_targets": self.n_users_, "n_fitted": self.n_users_, "n_skipped": 0,
            "n_rows": int(counts[0].sum()), "n_rounds": top_n.rounds,
            "n_rounds_rating_model": by_rating.rounds,
            "n_stopped_early": int(top_n.model.stop_reason is not None),
            "n_blocks": len(ub.blocks),
        }  # fmt: skip
        return self

    def _rows(
        self, client: Any, ub: UserBlocks, opts: PooledOptions, low: float
    ) -> tuple[list[Any], tuple[NDArray[np.int64], NDArray[np.int64]]]:
        """Every block's rows (futures) and their counts per block (all, rated)."""
        n_items = ub.items.shape[0]
        sample = user_sample(np.arange(ub.users.shape[0], dtype=np.int64), opts.random_state)
        sample_neg = opts.feedback not in ("ratings",)  # "auto", "liked": rated above unrated
        n_b = len(ub.blocks)
        in_block = np.searchsorted(ub.starts, sample, side="right") - 1
        n_neg = np.zeros(sample.shape[0], dtype=np.int64)
        held = held_unrated(opts)  # and the inner CV's unrated rows (drawn with them)
        n_all = n_neg
        if sample_neg:
            n_neg = negatives_per_user(ub.n_rated[sample], n_items, float(opts.negatives))
            n_all = np.minimum(n_items - ub.n_rated[sample], n_neg + held)
        neg_block = np.bincount(in_block, weights=n_neg, minlength=n_b).astype(np.int64)
        rated_block = np.bincount(in_block, weights=ub.n_rated[sample], minlength=n_b)
        all_block = np.bincount(in_block, weights=n_all, minlength=n_b).astype(np.int64)
        neg_before = np.concatenate([[0], np.cumsum(all_block)])
        draws_before = np.concatenate([[0], np.cumsum(np.bincount(in_block, minlength=n_b))])
        rows = []
        for j, block in enumerate(ub.blocks):
            fold = client.submit(
                block_folds,
                block,
                opts.n_folds,
                opts.random_state,
                int(ub.nnz_before[j]),
                pure=False,
            )
            neg = (
                opts.random_state, opts.n_folds, int(draws_before[j]) * n_items,
                sample.shape[0] * n_items, int(neg_before[j]), int(neg_before[-1]),
            )  # fmt: skip
            mine = sample[in_block == j] - ub.starts[j]
            fut = client.submit(
                block_rows, block, fold, int(ub.starts[j]), mine, neg, sample_neg,
                float(opts.negatives), low, held, pure=False,
            )  # fmt: skip
            rows.append((fold, fut))
        return rows, (rated_block.astype(np.int64) + neg_block, rated_block.astype(np.int64))

    def _cross_fit(
        self,
        client: Any,
        ub: UserBlocks,
        rows: list[Any],
        opts: PooledOptions,
        names: tuple[str, ...],
        lam: float | None,
    ) -> list[Any]:
        """Every block's cross-fitted features (futures), fold by fold.

        Per fold, the blocks' Gram matrices and totals without it are summed, EASE's
        matrix is inverted once here, sent to every worker, and each block scores its
        rows of the fold; the fold's matrices are released before the next.
        """
        distributed = require("distributed", "DaskRankBoostRecommender")
        parts: list[list[Any]] = [[] for _ in ub.blocks]
        for k in range(opts.n_folds):
            per = [
                client.submit(totals_without, b, fold, k, pure=False)
                for b, (fold, _) in zip(ub.blocks, rows, strict=True)
            ]
            totals = per[0].result()
            for t in client.gather(per[1:]):
                totals = totals.add(t)
            folds = [fold for fold, _ in rows]
            knn_f = knn_stats(client, ub, folds, k, names, self._pool, totals.counts)
            weights_f, cooc_f = item_stats(client, ub, folds, k, totals.counts, names, lam, True)
            done = []
            for j, (b, (fold, fut)) in enumerate(zip(ub.blocks, rows, strict=True)):
                cells = client.submit(
                    cross_fit_block, b, fold, fut, k, weights_f, cooc_f, totals, names, lam or 0.0,
                    knn_f, int(ub.starts[j]), pure=False,
                )  # fmt: skip
                parts[j].append(cells)
                done.append(cells)
            distributed.wait(done)  # the fold's matrices are no longer needed
            del weights_f, cooc_f, knn_f
        return [
            client.submit(block_features, fut, parts[j], pure=False)
            for j, (_, fut) in enumerate(rows)
        ]

    def _boost(  # noqa: PLR0917  the fit's state
        self,
        client: Any,
        rows: list[Any],
        X: list[Any],
        counts: tuple[NDArray[np.int64], NDArray[np.int64]],
        opts: PooledOptions,
        params: Any,
        names: tuple[str, ...],
        starts: NDArray[np.int64],
    ) -> dict[str, PooledFit]:
        """The pooled model of each kind of feedback, trained on the blocks (``train_pooled``).

        Rounds and prior multiplier by the inner CV on the blocks (:mod:`._inner`).
        """
        sampled = "rated" if opts.feedback in ("auto", "liked") else opts.feedback
        kinds = ("ratings", TOP_N) if opts.feedback == "auto" else (opts.feedback,)
        fits: dict[str, PooledFit] = {}
        for kind in kinds:
            subset = kind == "ratings" and sampled != kind
            n_rows = counts[1] if subset else counts[0]
            live = [j for j in range(len(rows)) if n_rows[j] > 0]
            checks = client.gather([
                client.submit(kind_part, rows[j][1], X[j], kind, subset, "check", pure=False)
                for j in live
            ])  # fmt: skip
            labels = np.unique(np.concatenate([c[0] for c in checks]))
            no_pair = kind == "ratings" and not any(c[1] for c in checks)
            if labels.shape[0] < 2 or no_pair:
                if opts.feedback == "auto":
                    continue
                raise ValueError(
                    "no target user has a crucial pair: with feedback='ratings' a target "
                    "needs two different ratings. Use feedback='auto', 'liked', 'rated' or "
                    "'both' (rated above unrated), or add ratings."
                )
            col = names.index("ease") if opts.prior == "ease" and kind != "ratings" else None
            kr = KindRows(rows, X, kind, subset, n_rows, len(names), col, starts)
            fits[kind] = fit_kind(client, kr, opts, params, prior_scales(opts))
        return fits

    def _stats(
        self,
        client: Any,
        ub: UserBlocks,
        names: tuple[str, ...],
        lam: float | None,
        totals: ItemTotals,
    ) -> tuple[Any, Any, ItemTotals, tuple[str, ...], float, Any]:
        """The base recommenders' statistics on all the ratings (futures: tasks on the workers).

        EASE's weights and ``cooccurrence``'s neighbours (:func:`._itemstats.item_stats`),
        the totals, the names, EASE's penalty, and ``user_knn``'s and ``item_knn``'s
        (:func:`._knn.knn_stats`).
        """
        knn_f = knn_stats(client, ub, None, 0, names, self._pool, totals.counts)
        weights_f, cooc_f = item_stats(client, ub, None, 0, totals.counts, names, lam, False)
        return weights_f, cooc_f, totals, names, lam or 0.0, knn_f

    # ------------------------------------------------------------------ recommend
    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            from .._validation import not_fitted

            raise not_fitted("", self, "call fit(ratings) first")

    def recommend(
        self, user: Any, k: int = 10, exclude_rated: bool = True
    ) -> tuple[NDArray[Any], NDArray[np.float64]]:
        """The ``k`` best items of ``user`` and their scores (computed on its block's worker).

        As :meth:`RankBoostRecommender.recommend` (``candidates`` is not available here).
        """
        self._check_fitted()
        check_k(k)
        at = int(np.searchsorted(self.users_, user)) if self.users_.shape[0] else 0
        if at >= self.users_.shape[0] or self.users_[at] != user:
            raise ValueError(
                f"unknown user {user!r}: not among the {self.users_.shape[0]} users of the "
                "ratings given to fit."
            )
        ub, client = self._ub, self._get_client()
        j = int(np.searchsorted(ub.starts, at, side="right") - 1)
        lo = int(ub.starts[j])
        fut = client.submit(
            top_of_users, ub.blocks[j], *self._stats_f, self._fits[0], int(k), exclude_rated,
            np.array([at - lo]), lo, pure=False,
        )  # fmt: skip
        pos, scores = fut.result()
        keep = pos[0] >= 0  # top_k pads a user with fewer candidates
        return self.items_[pos[0][keep]], scores[0][keep]

    def recommend_all(self, k: int = 10, exclude_rated: bool = True) -> tuple[Any, Any, Any]:
        """The ``k`` best items of every user, as dask arrays computed block by block.

        Returns
        -------
        users : ndarray of shape (n_users,)
            The users (labels), in order.
        items : dask array of object of shape (n_users, min(k, n_items))
            Row ``i``: the items of ``users[i]``, best first (None where fewer remain), as
            :meth:`RankBoostRecommender.recommend_all` gives them.
        scores : dask array of float of the same shape
            Their scores; NaN in padded cells.
        """
        import dask
        import dask.array as da

        self._check_fitted()
        check_k(k)
        k = min(int(k), self.n_items_)
        ub, client = self._ub, self._get_client()
        items, scores = [], []
        for j, block in enumerate(ub.blocks):
            lo, hi = int(ub.starts[j]), int(ub.starts[j + 1])
            fut = client.submit(
                labelled_block, block, self._stats_f, self._fits[0], k, exclude_rated, None,
                self.users_[lo:hi], self.items_, lo, pure=False,
            )  # fmt: skip
            out = dask.delayed(fut)
            items.append(da.from_delayed(out[1], (hi - lo, k), dtype=object))
            scores.append(da.from_delayed(out[2], (hi - lo, k), dtype=np.float64))
        return self.users_, da.concatenate(items), da.concatenate(scores)

    def to_local(self) -> RankBoostRecommender:
        """The same fitted recommender in memory: a plain :class:`RankBoostRecommender`.

        Brings every block's ratings and the item x item statistics to this process.
        """
        from ..recommend._inputs import FitInput

        self._check_fitted()
        client, ub = self._get_client(), self._ub
        R = sp.csr_matrix(sp.vstack(client.gather(ub.blocks), format="csr"))
        weights_f, cooc_f, _, names, lam, (_, near_f) = self._stats_f
        weights = None if weights_f is None else weights_f.result()
        cooc = None if cooc_f is None else cooc_f.result()
        near = None if near_f is None else near_f.result()
        everyone = np.arange(self.n_users_, dtype=np.int64)
        labels = self.users_.tolist()
        data = FitInput(
            R, self.users_, self.items_, labels, True, {u: i for i, u in enumerate(labels)},
            {it: i for i, it in enumerate(self.items_.tolist())}, everyone, self._feats,
        )  # fmt: skip
        base = BaseScores(names, pool=self._feats)
        if "ease" in names:
            base.ease_lambda = lam
        base.fit(R, ease_weights=weights, neighbours=cooc, item_neighbours=near)
        report = {k: v for k, v in self.report_.items() if k != "n_blocks"}
        fit = PooledResult(
            self._fits[0], self._fits[1], base, self.ease_lambda_, everyone, {}, report
        )
        est = RankBoostRecommender(**self.params)
        est._set_fitted(data, fit)
        return est
