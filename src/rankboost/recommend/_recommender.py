"""The recommender estimator: the pooled model (default) or the paper's per-user models."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator

from ..booster import TrainingStoppedWarning
from ..model import RankBoostModel
from ..params import TrainParams, params_of
from ._labels import _COLUMNS, _from_frame, _is_frame, _positions
from ._per_user import (
    _EXTRA,
    _PAIR_WEIGHTS,
    _UNRATED,
    _Design,
    _fit_chunk,
    _plan,
    _recommend_chunk,
    _score_items,
)
from ._problem import _check_items, _check_users, check_ratings

__all__ = ["RankBoostRecommender"]

_INVALID = ("raise", "skip")


class RankBoostRecommender(BaseEstimator):
    """One RankBoost ranking model per target user, from other users' ratings.

    For each target user ``u`` the instances are the items ``u`` rated, the features are
    the ratings of the feature users (NaN where unrated) and the feedback is
    ``LayeredFeedback(ratings of u)``: every pair of items ``u`` rated differently must be
    ordered by rating; equal ratings are not compared (Freund et al. 2003, section 6.2).

    Parameters
    ----------
    feature_users : array-like, default=None
        Users (labels, or rows for matrix input) whose ratings are the features. None = every
        user. A target never uses itself as a feature.
    n_estimators : int, default=100
        Boosting rounds per target user.
    positive_cumulative : bool, default=False
        WeakLearn.cum (paper section 4): ``H`` non-decreasing in every feature
        user's rating. Off by default because a feature user with opposite taste is
        informative through a negative weight.
    alpha : {"r", "exact", "line_search"}, default="r"
        Step-size rule (see :func:`rankboost.train`).
    learning_rate : float, default=1.0
        Shrinkage ``nu`` in (0, 1]: ``alpha_t = nu`` times the rule's alpha (1 = the paper).
    thresholds : int, "all", "midpoints" or ("uniform", B), default="all"
        Candidate thresholds per feature (ratings take few values, so "all" is cheap;
        :mod:`rankboost.binning` for the others).
    criterion : {"abs_r", "r"}, default="abs_r"
        WeakLearn's objective: the largest ``|r|`` (the paper) or the largest ``r > 0``.
    default : {"learned", 0, 1}, default="learned"
        ``q_def`` where the feature user did not rate the item: picked by WeakLearn (the
        paper), or fixed.
    weak_ranker : {"threshold", "feature", "both"}, default="threshold"
        Threshold rankers (the paper), real-valued rankers (the training-bin rank of a
        column rescaled to [0, 1]) or both (see :func:`rankboost.train`).
    unrated : {"abstain", "user_mean"}, default="abstain"
        A feature user's column where they did not rate the item: NaN, the paper's ⊥
        (the weak ranker gives ``q_def`` in {0, 1}: the unrated item sits with the items
        the user rated highest or lowest), or the feature user's mean rating (the item
        sits between, by where the threshold lies relative to that mean).
    pair_weight : {"equal", "gap"}, default="equal"
        Weight of a crucial pair: 1 (the paper's ``LayeredFeedback``) or the rating gap
        ``|y_i - y_j|`` (``PairFeedback``; SPEC 1's table ``g(l0, l1) = l1 - l0``).
    extra_features : tuple of str, default=()
        Columns appended after the feature users, all computed from the feature users'
        ratings of the row's item: ``"mean"`` (their mean rating), ``"centred_mean"``
        (mean of rating minus the rater's mean rating), ``"count"`` (how many rated it:
        popularity) and ``"vsim"`` (the VSIM score of Breese et al. 1998 with cosine
        weights from the target's ratings, *cross-fitted* on the training items: 5
        folds, each fold's score uses weights from the other four, so no training item
        sees its own rating; scoring uses weights from all training items). NaN where
        no feature user rated the item. The configuration pilot of docs/movies.md
        compares them.
    user_features : bool, default=True
        Whether the feature users' own columns enter the model; False keeps only
        ``extra_features`` (RankBoost then combines the crowd and VSIM rankers).
    min_overlap : int, default=1
        A feature user enters a target's model only if they rated at least this many of
        the target's training items; the others are dropped for that target (a feature
        that abstains on every training item cannot be learned from). Counted in
        ``report_["n_features_dropped"]``.
    max_feature_users : int, default=None
        Keep at most this many feature users per target: those who co-rated the most of
        the target's training items (ties: the lowest row number). None keeps all. Bounds
        the dense per-target problem (items x feature users) on large catalogues.
    rating_range : tuple of (float, float), default=None
        Inclusive bounds for every rating (e.g. ``(1, 5)`` for MovieLens); None only
        requires finite ratings.
    invalid_targets : {"raise", "skip"}, default="raise"
        What to do with a target that cannot be trained: fewer than two distinct ratings
        (no crucial pair) or no feature user left after ``min_overlap``. "raise" raises a
        ValueError naming the user; "skip" leaves it out and records the reason in
        ``skipped_users_``.
    n_jobs : int, default=None
        Parallel workers over target users (joblib; None = 1, -1 = all cores). Each
        per-user fit runs its numba kernels single-threaded, so models are bit-identical
        for every ``n_jobs``.
    verbose : int, default=0
        joblib verbosity.

    Attributes
    ----------
    users_ : ndarray
        The user labels, one per row of the ratings matrix (``0..n_users-1`` for matrix
        input; the sorted distinct labels of a DataFrame).
    items_ : ndarray
        The item labels, one per column (``0..n_items-1`` for matrix input).
    models_ : dict of user label to RankBoostModel
        The model of every fitted target user.
    feature_users_ : dict of user label to ndarray
        The feature users (labels; model columns, in order) of every fitted target user.
    skipped_users_ : dict of user label to str
        Targets left out (``invalid_targets="skip"``) and why.
    report_ : dict
        Counts: ``n_targets``, ``n_fitted``, ``n_skipped``, ``n_features_dropped`` (feature
        columns dropped by ``min_overlap``, summed over targets) and ``n_stopped_early``
        (models whose training stopped before ``n_estimators``, see
        ``models_[u].stop_reason``).
    n_users_ : int
        Rows of the ratings matrix seen in ``fit``.
    n_items_ : int
        Columns of the ratings matrix seen in ``fit``.

    See Also
    --------
    user_ranking_problem : The ``(X, y)`` of one target user.
    rankboost.train : The engine run once per target user.

    References
    ----------
    .. [1] Y. Freund, R. Iyer, R. E. Schapire and Y. Singer, "An efficient boosting algorithm
       for combining preferences", JMLR 4, 2003, section 6.2 (movie recommendations).

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from rankboost.recommend import RankBoostRecommender
    >>> rng = np.random.default_rng(0)
    >>> taste = rng.integers(1, 6, size=30).astype(float)
    >>> R = np.vstack([taste, taste, 6 - taste, rng.integers(1, 6, size=30)])
    >>> R[0, 20:] = np.nan  # the target has not seen items 20..29
    >>> rec = RankBoostRecommender(feature_users=[1, 2, 3], n_estimators=20)
    >>> rec = rec.fit(sp.csr_matrix(np.nan_to_num(R)), target_users=[0])
    >>> items, scores = rec.recommend(0, k=3)  # unseen items only
    >>> items, taste[items]
    (array([21, 25, 22]), array([5., 5., 4.]))
    >>> taste[rec.rank(0, items=np.arange(20, 30))]  # user 1's taste, recovered
    array([5., 5., 4., 4., 4., 3., 2., 2., 1., 1.])
    """

    def __init__(
        self,
        *,
        feature_users: ArrayLike | None = None,
        n_estimators: int = 100,
        positive_cumulative: bool = False,
        alpha: str = "r",
        learning_rate: float = 1.0,
        thresholds: int | str | tuple[str, int] = "all",
        criterion: str = "abs_r",
        default: str | int = "learned",
        weak_ranker: str = "threshold",
        unrated: str = "abstain",
        pair_weight: str = "equal",
        extra_features: tuple[str, ...] = (),
        user_features: bool = True,
        min_overlap: int = 1,
        max_feature_users: int | None = None,
        rating_range: tuple[float, float] | None = None,
        invalid_targets: str = "raise",
        n_jobs: int | None = None,
        verbose: int = 0,
    ) -> None:
        self.feature_users = feature_users
        self.n_estimators = n_estimators
        self.positive_cumulative = positive_cumulative
        self.alpha = alpha
        self.learning_rate = learning_rate
        self.thresholds = thresholds
        self.criterion = criterion
        self.default = default
        self.weak_ranker = weak_ranker
        self.unrated = unrated
        self.pair_weight = pair_weight
        self.extra_features = extra_features
        self.user_features = user_features
        self.min_overlap = min_overlap
        self.max_feature_users = max_feature_users
        self.rating_range = rating_range
        self.invalid_targets = invalid_targets
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ fit
    def _check_params(self) -> TrainParams:
        """Validate the parameters; return the training ones (:mod:`rankboost.params`)."""
        params = params_of(self, "RankBoostRecommender", {"n_rounds": "n_estimators"})
        if self.invalid_targets not in _INVALID:
            raise ValueError(
                f"RankBoostRecommender.invalid_targets must be one of {_INVALID}; got "
                f"{self.invalid_targets!r}."
            )
        m = self.min_overlap
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
            raise ValueError(f"RankBoostRecommender.min_overlap must be an int >= 1; got {m!r}.")
        c = self.max_feature_users
        if c is not None and (isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1):
            raise ValueError(
                f"RankBoostRecommender.max_feature_users must be None or an int >= 1; got {c!r}."
            )
        self._design()
        return params

    def _design(self) -> _Design:
        for name, allowed in (("unrated", _UNRATED), ("pair_weight", _PAIR_WEIGHTS)):
            value = getattr(self, name)
            if not isinstance(value, str) or value not in allowed:
                raise ValueError(
                    f"RankBoostRecommender.{name} must be one of {allowed}; got {value!r}."
                )
        extra = self.extra_features
        if isinstance(extra, str):
            extra = (extra,)
        extra = tuple(extra)
        if not isinstance(self.user_features, (bool, np.bool_)):
            raise ValueError(
                f"RankBoostRecommender.user_features must be True or False; got "
                f"{self.user_features!r}."
            )
        if not self.user_features and not extra:
            raise ValueError(
                "RankBoostRecommender.user_features=False leaves no column: name at least "
                "one extra_features column."
            )
        bad = [e for e in extra if not isinstance(e, str) or e not in _EXTRA]
        if bad or len(set(extra)) != len(extra):
            raise ValueError(
                "RankBoostRecommender.extra_features must be distinct names among "
                f"{_EXTRA}; got {self.extra_features!r}."
            )
        return _Design(self.unrated, self.pair_weight, extra, self.user_features)

    def fit(
        self,
        ratings: Any,
        target_users: ArrayLike | None = None,
        *,
        columns: tuple[str, str, str] = _COLUMNS,
    ) -> RankBoostRecommender:
        """Train one RankBoost model per target user.

        Parameters
        ----------
        ratings : pandas DataFrame, sparse matrix or array-like of shape (n_users, n_items)
            The ratings, in one of three forms:

            * a DataFrame of ``(user, item, rating)`` rows, one per rating, in the
              ``columns`` named below; users and items are the labels found there (any
              hashable: ids, strings);
            * a DataFrame user x item matrix: index = user labels, columns = item labels,
              NaN = not rated;
            * a sparse matrix or array (absent (sparse) or NaN (dense) = not rated): users
              and items are the row and column numbers.

            With labels, ``target_users``, ``feature_users`` and the users and items of
            :meth:`predict`, :meth:`rank` and :meth:`recommend` are labels too. For an
            evaluation, remove the targets' test ratings before calling ``fit``.
        target_users : array-like, default=None
            Users (labels, or row numbers for a matrix) to fit a model for; None = every
            user.
        columns : tuple of (str, str, str), default=("user", "item", "rating")
            The user, item and rating columns of a DataFrame of rows. A DataFrame without
            these three columns is read as a user x item matrix.

        Returns
        -------
        self : RankBoostRecommender
            The fitted recommender.

        Raises
        ------
        ValueError
            For a rating that is not finite or outside ``rating_range`` (naming the user
            and item), an unknown user in ``target_users`` or ``feature_users``, and, with
            ``invalid_targets="raise"``, a target without a crucial pair or without any
            feature user (naming the user).
        """
        params = self._check_params()
        labelled = _is_frame(ratings)
        if labelled:
            matrix, users, items = _from_frame(ratings, tuple(columns))  # type: ignore[arg-type]
            names = (users.tolist(), items.tolist())
            R = check_ratings(matrix, rating_range=self.rating_range, labels=names)
        else:
            R = check_ratings(ratings, rating_range=self.rating_range)
            users = np.arange(R.shape[0], dtype=np.int64)
            items = np.arange(R.shape[1], dtype=np.int64)
            names = (users.tolist(), items.tolist())
        n_users = R.shape[0]
        user_pos = {u: k for k, u in enumerate(names[0])}

        def to_positions(given: Any, name: str) -> NDArray[np.int64]:
            if not labelled:
                return _check_users(given, n_users, name=name)
            arr = _positions(given, user_pos, what="user", name=name)
            uniq, counts = np.unique(arr, return_counts=True)
            if (counts > 1).any():
                dup = names[0][int(uniq[counts > 1][0])]
                raise ValueError(f"{name} lists user {dup!r} more than once.")
            return arr

        targets = (
            np.arange(n_users, dtype=np.int64)
            if target_users is None
            else to_positions(target_users, "target_users")
        )
        feats = (
            np.arange(n_users, dtype=np.int64)
            if self.feature_users is None
            else to_positions(self.feature_users, "feature_users")
        )
        by_item = R.T.tocsr()
        plan, skipped, dropped = _plan(
            R, by_item, targets, feats, names[0], self.min_overlap, self.max_feature_users
        )
        if skipped and self.invalid_targets == "raise":
            u, why = next(iter(skipped.items()))
            raise ValueError(
                f"cannot fit target {why}. Drop the user from target_users, or pass "
                "invalid_targets='skip' to skip such users."
            )
        design = self._design()
        n_per_user = np.diff(R.indptr)
        sums = np.asarray(R.sum(axis=1), dtype=np.float64).ravel()
        means = np.divide(  # each user's mean rating (the "user_mean" fill)
            sums,
            n_per_user,
            out=np.zeros(n_users),
            where=n_per_user > 0,
        )
        n_jobs = effective_n_jobs(self.n_jobs) if plan else 1
        if n_jobs == 1 or len(plan) < 2:
            results = _fit_chunk(by_item, R, plan, params, design, means)
        else:
            # a few chunks per worker: balances uneven users, ships the matrix once a chunk
            n_chunks = min(len(plan), 4 * n_jobs)
            chunks = [plan[i::n_chunks] for i in range(n_chunks)]
            parts = Parallel(n_jobs=n_jobs, verbose=self.verbose)(
                delayed(_fit_chunk)(by_item, R, c, params, design, means) for c in chunks
            )
            results = [r for part in parts for r in part]
        order = {u: i for i, (u, _) in enumerate(plan)}
        results.sort(key=lambda r: order[r[0]])
        label = names[0]
        self._models = {u: m for u, m, _ in results}
        self._vsim_w = {u: w for u, _, w in results if w is not None}
        self._design_ = design
        self._means = means
        self._feats = dict(plan)
        self._labelled = labelled
        self._user_pos = user_pos
        self._item_pos = {it: k for k, it in enumerate(names[1])}
        self.users_ = users
        self.items_ = items
        self.models_ = {label[u]: m for u, m, _ in results}
        self.feature_users_ = {label[u]: users[f] for u, f in plan}
        self.skipped_users_ = {label[u]: why for u, why in skipped.items()}
        self.n_users_, self.n_items_ = R.shape
        self._R = R
        stopped = sum(m.stop_reason is not None for m in self._models.values())
        self.report_ = {
            "n_targets": int(targets.shape[0]),
            "n_fitted": len(self.models_),
            "n_skipped": len(skipped),
            "n_features_dropped": dropped,
            "n_stopped_early": int(stopped),
        }
        if stopped:
            warnings.warn(
                f"{stopped} of {len(self.models_)} per-user models stopped before "
                f"n_estimators={self.n_estimators} rounds (see models_[user].stop_reason).",
                TrainingStoppedWarning,
                stacklevel=2,
            )
        return self

    # ------------------------------------------------------------------ prediction
    def _model_of(self, user: Any) -> tuple[int, RankBoostModel]:
        if not hasattr(self, "models_"):
            raise ValueError(
                "This RankBoostRecommender is not fitted yet; call fit(ratings) first."
            )
        if self._labelled:
            try:
                u = self._user_pos[user]
            except (KeyError, TypeError):
                raise ValueError(
                    f"unknown user {user!r}: not among the {len(self._user_pos)} user labels "
                    "of the ratings given to fit."
                ) from None
        else:
            if isinstance(user, bool) or not isinstance(user, (int, np.integer)):
                raise ValueError(f"user must be an int user index; got {user!r}.")
            u = int(user)
        if u in self._models:
            return u, self._models[u]
        label = self.users_[u]
        label = label.item() if isinstance(label, np.generic) else label
        if label in self.skipped_users_:
            raise ValueError(
                f"user {label!r} has no model: it was skipped in fit "
                f"({self.skipped_users_[label]})."
            )
        raise ValueError(
            f"user {label!r} has no model: it was not among the fitted target users "
            f"({len(self._models)} fitted; pass it in target_users)."
        )

    def _items_of(self, items: Any, name: str) -> NDArray[np.int64]:
        """Column positions of ``items`` (labels, or column numbers for matrix input)."""
        if items is None:
            return np.arange(self.n_items_, dtype=np.int64)
        if self._labelled:
            return _positions(items, self._item_pos, what="item", name=name)
        return _check_items(items, self.n_items_, name=name)

    def _score(self, u: int, model: RankBoostModel, it: NDArray[np.int64]) -> NDArray[np.float64]:
        return _score_items(
            self._R, self._means, self._design_, self._feats[u], model,
            self._vsim_w.get(u), it,
        )  # fmt: skip

    def _rated_items(self, u: int) -> NDArray[np.int64]:
        R = self._R
        return R.indices[R.indptr[u] : R.indptr[u + 1]].astype(np.int64)

    def predict(self, user: Any, items: ArrayLike | None = None) -> NDArray[np.float64]:
        """Return the score ``H`` of items for ``user`` (higher = ranked higher).

        Parameters
        ----------
        user : label, or int for matrix input
            A fitted target user.
        items : array-like, default=None
            Item labels (column numbers for matrix input); None = every item, in the
            order of ``items_``.

        Returns
        -------
        scores : ndarray of shape (n_items,)

        Raises
        ------
        ValueError
            For an unknown user or item (naming it) or a user without a model.
        """
        u, model = self._model_of(user)
        return self._score(u, model, self._items_of(items, "items"))

    def rank(self, user: Any, items: ArrayLike | None = None) -> NDArray[Any]:
        """Return ``items`` ordered by decreasing score (ties keep the given order).

        Parameters
        ----------
        user : label, or int for matrix input
            A fitted target user.
        items : array-like, default=None
            Item labels (column numbers for matrix input); None = every item.

        Returns
        -------
        ranked : ndarray
            Item labels (column numbers for matrix input), best first.
        """
        u, model = self._model_of(user)
        it = self._items_of(items, "items")
        return self.items_[it[np.argsort(-self._score(u, model, it), kind="stable")]]

    def recommend(
        self,
        user: Any,
        k: int = 10,
        candidates: ArrayLike | None = None,
        exclude_rated: bool = True,
    ) -> tuple[NDArray[Any], NDArray[np.float64]]:
        """Return the ``k`` best items for ``user`` and their scores.

        Parameters
        ----------
        user : label, or int for matrix input
            A fitted target user.
        k : int, default=10
            Number of items (fewer if fewer candidates remain).
        candidates : array-like, default=None
            Item labels (column numbers for matrix input) to choose from; None = every
            item.
        exclude_rated : bool, default=True
            Leave out the items ``user`` rated in the matrix given to ``fit``.

        Returns
        -------
        items : ndarray of shape (min(k, n_candidates),)
            Item labels (column numbers for matrix input), best first; equal scores keep
            candidate order.
        scores : ndarray of float of the same shape
        """
        u, model = self._model_of(user)
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k must be an int >= 1; got {k!r}.")
        it = self._items_of(candidates, "candidates")
        if exclude_rated:
            it = it[~np.isin(it, self._rated_items(u))]
        scores = self._score(u, model, it)
        top = np.argsort(-scores, kind="stable")[:k]
        return self.items_[it[top]], scores[top]

    def recommend_all(
        self, k: int = 10, exclude_rated: bool = True
    ) -> tuple[NDArray[Any], NDArray[Any], NDArray[np.float64]]:
        """Return the ``k`` best items of every fitted target user, in parallel.

        Parameters
        ----------
        k : int, default=10
            Number of items per user.
        exclude_rated : bool, default=True
            Leave out the items each user rated in the matrix given to ``fit``.

        Returns
        -------
        users : ndarray of shape (n_fitted,)
            The fitted target users (labels; row numbers for matrix input), in fit order.
        items : ndarray of shape (n_fitted, k)
            Row ``i``: the items of ``users[i]``, best first, as :meth:`recommend` gives
            them. A user with fewer than ``k`` candidate items has the row padded with
            ``-1`` (matrix input) or ``None`` (labels).
        scores : ndarray of float of shape (n_fitted, k)
            Their scores; NaN in padded cells.

        Examples
        --------
        >>> import numpy as np
        >>> from rankboost.recommend import RankBoostRecommender
        >>> rng = np.random.default_rng(0)
        >>> taste = rng.integers(1, 6, size=30).astype(float)
        >>> R = np.vstack([taste, 6 - taste, taste, 6 - taste, rng.integers(1, 6, size=30)])
        >>> R[0, 20:] = R[1, :10] = np.nan  # users 0 and 1 have not seen some items
        >>> rec = RankBoostRecommender(feature_users=[2, 3, 4], n_estimators=20)
        >>> users, items, scores = rec.fit(R, target_users=[0, 1]).recommend_all(k=3)
        >>> users.tolist(), items.shape
        ([0, 1], (2, 3))
        >>> taste[items[0]].tolist(), (6 - taste[items[1]]).tolist()  # each one's taste
        ([5.0, 5.0, 4.0], [5.0, 5.0, 5.0])
        """
        if not hasattr(self, "models_"):
            raise ValueError(
                "This RankBoostRecommender is not fitted yet; call fit(ratings) first."
            )
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k must be an int >= 1; got {k!r}.")
        k = int(k)
        jobs = [(u, self._feats[u], m, self._vsim_w.get(u)) for u, m in self._models.items()]
        n_jobs = effective_n_jobs(self.n_jobs) if jobs else 1
        args = (self._R, self._means, self._design_)
        if n_jobs == 1 or len(jobs) < 2:
            parts = [_recommend_chunk(*args, jobs, k, exclude_rated)]
            order = np.arange(len(jobs))
        else:
            n_chunks = min(len(jobs), 4 * n_jobs)
            idx = [np.arange(i, len(jobs), n_chunks) for i in range(n_chunks)]
            parts = Parallel(n_jobs=n_jobs, verbose=self.verbose)(
                delayed(_recommend_chunk)(*args, [jobs[j] for j in ix], k, exclude_rated)
                for ix in idx
            )
            order = np.argsort(np.concatenate(idx), kind="stable")
        pos = np.concatenate([p[0] for p in parts])[order]
        scores = np.concatenate([p[1] for p in parts])[order]
        users = self.users_[np.array([u for u, *_ in jobs], dtype=np.int64)]
        if self._labelled:
            items = np.empty(pos.shape, dtype=object)
            items[pos >= 0] = self.items_[pos[pos >= 0]]
            items[pos < 0] = None
        else:
            items = pos
        return users, items, scores
