"""The recommender estimator: the pooled model (default) or the paper's per-user models."""

from __future__ import annotations

from typing import Any

import numpy as np
from joblib import effective_n_jobs
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator

from .._validation import forget_fit, keep_params, not_fitted
from ..model import RankBoostModel
from ..params import TrainParams
from ._base import BASE_RECOMMENDERS
from ._checks import check_params, design_of
from ._inputs import FitInput, fit_input
from ._labels import COLUMNS, check_k, labelled_top, to_positions, user_position
from ._per_user import PerUserResult, fit_per_user_models, recommend_all_per_user, score_items
from ._pooled import PooledOptions, PooledResult, fit_pooled, recommend_pooled
from ._problem import check_items

__all__ = ["RankBoostRecommender"]


class RankBoostRecommender(BaseEstimator):
    """RankBoost recommendations: one pooled model over all users, or one model per user.

    ``mode="pooled"`` (default, SPEC 7.2): one model; a user is a query, its rows items,
    its features the base recommenders' scores (``BASE_RECOMMENDERS``) cross-fitted over
    folds of each user's ratings (no rating informs its own feature); rounds by inner CV
    over users. ``mode="per_user"``: the paper's learner (Freund et al. 2003, section
    6.2), features = the feature users' ratings of the target's items, feedback
    ``LayeredFeedback(ratings of u)``. docs/movies.md measures both.

    Parameters
    ----------
    feature_users : array-like, default=None
        Users (labels, or rows for matrix input) whose ratings are the features
        (per_user), or the neighbour pool of the ``user_knn`` base recommender (pooled).
        None = every user. A target never uses itself.
    n_estimators : int, default=100
        Boosting rounds per target user (per_user), or the most rounds of the pooled
        model (``inner_folds`` picks the number up to this).
    mode : {"pooled", "per_user"}, default="pooled"
        One model over all targets, or the paper's one model per target.
    base_recommenders : tuple of str, default=BASE_RECOMMENDERS
        The pooled model's features, among ``BASE_RECOMMENDERS``.
    feedback : {"auto", "liked", "rated", "ratings", "both"}, default="auto"
        Pooled pairs of a user: liked (rated at or above the user's mean rating) above
        rated but not liked above unrated (top-N of liked items), rated above unrated,
        higher rating above lower (the paper's task), or every rating above unrated in one
        layered feedback. ``"auto"``: two models on the same cross-fitted rows, ``"liked"``
        for :meth:`recommend` and :meth:`recommend_all` (which unrated items a user will
        rate and like) and ``"ratings"`` for :meth:`predict` and :meth:`rank` (how the
        user orders given items); docs/movies.md shows that neither one wins both tasks.
    prior : {"ease", None}, default="ease"
        The top-N model (every feedback but "ratings"; "auto"'s ``model_``) boosts from the
        prior ``F0 = c * EASE score`` (SPEC 7.2): 0 rounds = EASE's ranking, and the rounds
        correct it where the other recommenders disagree. Needs "ease" in
        ``base_recommenders``. None: boosting from 0.
    prior_scale : float or None, default=0.25
        The multiplier ``c`` (the prior's scale matters: ``exp(F0)`` weights the pairs);
        0.25 was chosen on validation splits of training ratings only
        (``experiments/movies_prior_pilot.py``). None: chosen by the inner CV among
        :data:`rankboost.model_selection.EASE_PRIOR_SCALES` (0.1, 0.25, 0.5) with the
        rounds, three times the inner CV's training (0.25 when ``inner_folds=None``).
    ease_lambda : float or "auto", default="auto"
        EASE's L2 penalty (feature and prior). ``"auto"``: the one of
        :data:`rankboost.model_selection.EASE_LAMBDAS` (50 ... 1000) with the best NDCG@10
        of liked items on a validation split of the ratings given to ``fit``
        (:func:`._base.choose_ease_lambda`), in ``ease_lambda_``; found by a local search
        from 500 (the grid's best when its NDCG has one peak, 3-4 of the 5 penalties
        evaluated).
    n_folds : int, default=5
        Cross-fitting folds of each user's ratings (pooled).
    negatives : float, default=2.0
        Unrated items sampled per rated item (every feedback but "ratings"); 2 was chosen
        over 1, 3 and 4 on validation splits of training ratings only (docs/movies.md).
    inner_folds : int or None, default=2
        Folds of target users for choosing the pooled model's rounds by held-out NDCG@10;
        None trains ``n_estimators`` rounds.
    refit : bool, default=False
        (pooled, with ``inner_folds``) False: one group of ``1 / inner_folds`` of the
        targets is held out, and the model trained on the others is kept at its best
        round (one training run per model, as scikit-learn's ``HistGradientBoosting*``
        keep the model trained beside ``validation_fraction``). True: every group is held
        out in turn and the model is trained again on every target (``inner_folds + 1``
        runs). docs/movies.md measures both.
    random_state : int, default=0
        Seed of the folds, the sampled unrated items and the inner folds (pooled; one
        stream per purpose, :func:`rankboost.model_selection.seed_stream`).
    positive_cumulative : bool, default=False
        WeakLearn.cum (paper section 4): ``H`` non-decreasing in every feature.
    alpha : {"r", "exact", "line_search", "rbplus"}, default="r"
        Step-size rule, or RankBoost+ (see :func:`rankboost.train` and
        :mod:`rankboost.alpha_rules`).
    learning_rate : float, default=1.0
        Shrinkage ``nu`` in (0, 1]: ``alpha_t = nu`` times the rule's alpha (1 = the paper).
    thresholds : int, "all", "midpoints", ("uniform", B) or None, default=None
        Candidate thresholds per feature (:mod:`rankboost.binning`). None: "all" for
        per_user (ratings take few values), 255 quantile bins for the pooled model's
        real-valued scores.
    criterion : {"abs_r", "r", "exact_z"}, default="abs_r"
        WeakLearn's objective: the largest ``|r|`` (the paper), the largest ``r > 0``, or
        the smallest exact ``Z`` (see :func:`rankboost.train`).
    default : {"learned", 0, 1}, default="learned"
        ``q_def`` where the feature user did not rate the item: picked by WeakLearn (the
        paper), or fixed.
    weak_ranker : {"threshold", "feature", "both"}, default="threshold"
        Threshold rankers (the paper), real-valued rankers or both (:func:`rankboost.train`).
    unrated : {"abstain", "user_mean"}, default="abstain"
        (per_user, as the options down to ``max_feature_users``) A feature user's column
        where they did not rate the item: NaN, the paper's ⊥, or their mean rating.
    pair_weight : {"equal", "gap"}, default="equal"
        Weight of a crucial pair: 1 (the paper's ``LayeredFeedback``) or the rating gap
        ``|y_i - y_j|`` (``PairFeedback``; SPEC 1's table ``g(l0, l1) = l1 - l0``).
    extra_features : tuple of str, default=()
        Columns after the feature users, from their ratings of the row's item: ``"mean"``,
        ``"centred_mean"`` (of rating minus the rater's mean), ``"count"`` and ``"vsim"``
        (Breese et al. 1998, weights from the target's ratings cross-fitted over 5 folds of
        the training items). NaN where no feature user rated the item.
    user_features : bool, default=True
        Whether the feature users' own columns enter the model; False keeps only
        ``extra_features`` (RankBoost then combines the crowd and VSIM rankers).
    min_overlap : int, default=1
        A feature user enters a target's model only if they rated at least this many of
        the target's training items (counted in ``report_["n_features_dropped"]``).
    max_feature_users : int, default=None
        Keep at most this many feature users per target, those who co-rated the most of
        its training items (ties: the lowest row number). None keeps all.
    rating_range : tuple of (float, float), default=None
        Inclusive bounds for every rating (e.g. ``(1, 5)`` for MovieLens); None only
        requires finite ratings.
    invalid_targets : {"raise", "skip"}, default="raise"
        What to do with a target that cannot be trained: fewer than two distinct ratings
        (no crucial pair) or no feature user left after ``min_overlap``. "raise" raises a
        ValueError naming the user; "skip" leaves it out and records the reason in
        ``skipped_users_``. (Pooled: a target without ratings is skipped the same way.)
    n_jobs : int, default=None
        joblib workers (None = 1, -1 = all cores): over target users in per_user fits and
        :meth:`recommend_all`, and threads over the cross-fitting folds of a pooled fit;
        ``n_jobs`` changes the speed, never the model: results are bit-identical for every
        ``n_jobs`` (``tests/test_n_jobs.py``).
    verbose : int, default=0
        Progress: from 1, a progress bar over the stages of ``fit`` (needs tqdm: each
        stage named, e.g. ``choosing ease_lambda 2/5``, or the target users of a per_user
        fit); also the joblib verbosity of the ``n_jobs`` workers.

    Attributes
    ----------
    users_ : ndarray
        The user labels, one per row of the ratings matrix (``0..n_users-1`` for matrix
        input; the sorted distinct labels of a DataFrame).
    items_ : ndarray
        The item labels, one per column (``0..n_items-1`` for matrix input).
    model_ : RankBoostModel or None
        The pooled model that :meth:`recommend` and :meth:`recommend_all` use (None for
        per_user).
    rating_model_ : RankBoostModel or None
        The pooled model that :meth:`predict` and :meth:`rank` use: the ``"ratings"`` model
        with ``feedback="auto"`` (``model_`` if no target has two different ratings),
        otherwise ``model_`` (None for per_user).
    models_ : dict of user label to RankBoostModel
        The model of every fitted target user (pooled: the same ``model_`` for all).
    feature_users_ : dict of user label to ndarray
        The feature users (labels; model columns, in order) of every fitted target user
        (pooled: the ``user_knn`` neighbour pool).
    rounds_curve_ : ndarray or None
        Pooled with ``inner_folds``: held-out NDCG@10 after every round (``model_``; the
        mean over the inner folds with ``refit=True``, the held-out group's otherwise).
    rating_rounds_curve_ : ndarray or None
        The same for ``rating_model_``.
    prior_scale_ : float or None
        The prior's multiplier ``c`` of ``model_`` (None without a prior): ``recommend``
        scores ``c * EASE + model_``, with ``report_["n_rounds"]`` of its rounds (0 = EASE
        alone).
    ease_lambda_ : float or None
        The EASE penalty used (None without "ease" or for per_user).
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
    >>> rec = RankBoostRecommender(feature_users=[1, 2, 3], n_estimators=20, mode="per_user")
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
        mode: str = "pooled",
        base_recommenders: tuple[str, ...] = BASE_RECOMMENDERS,
        feedback: str = "auto",
        prior: str | None = "ease",
        prior_scale: float | None = 0.25,
        ease_lambda: float | str = "auto",
        n_folds: int = 5,
        negatives: float = 2.0,
        inner_folds: int | None = 2,
        refit: bool = False,
        random_state: int = 0,
        positive_cumulative: bool = False,
        alpha: str = "r",
        learning_rate: float = 1.0,
        thresholds: int | str | tuple[str, int] | None = None,
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
        keep_params(self, locals())

    # ------------------------------------------------------------------ fit
    def _check_params(self) -> TrainParams:
        """Validate the parameters; return the training ones (:mod:`rankboost.params`)."""
        return check_params(self)

    def fit(
        self,
        ratings: Any,
        target_users: ArrayLike | None = None,
        *,
        columns: tuple[str, str, str] = COLUMNS,
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
        forget_fit(self)  # a fit that raises leaves an unfitted recommender, not a half state
        params = self._check_params()
        data = fit_input(ratings, target_users, self.feature_users, columns, self.rating_range)
        args = (data.R, data.targets, data.feats, params, data.user_labels)
        fit: PooledResult | PerUserResult
        if self.mode == "pooled":
            fit = fit_pooled(*args, PooledOptions.of(self))
        else:
            fit = fit_per_user_models(
                *args, design_of(self), min_overlap=self.min_overlap,
                max_feature_users=self.max_feature_users, invalid_targets=self.invalid_targets,
                n_jobs=self.n_jobs, verbose=self.verbose,
            )  # fmt: skip
        self._set_fitted(data, fit)
        return self

    def _set_fitted(self, data: FitInput, fit: PooledResult | PerUserResult) -> None:
        """Assign every fitted attribute from what the fit learned (``models_`` last)."""
        self._labelled, self._user_pos, self._item_pos = data.labelled, data.user_pos, data.item_pos
        self.users_, self.items_ = data.users, data.items
        self.n_users_, self.n_items_ = data.R.shape
        self._R = data.R
        label = data.user_labels
        self.skipped_users_ = {label[u]: why for u, why in fit.skipped.items()}
        self.report_ = fit.report
        if isinstance(fit, PooledResult):  # one model for every fitted target
            model = fit.top_n.model
            self._fits, self._base = (fit.top_n, fit.by_rating), fit.base
            self.model_: RankBoostModel | None = model
            self.rating_model_: RankBoostModel | None = fit.by_rating.model
            self.rounds_curve_: NDArray[np.float64] | None = fit.top_n.curve
            self.rating_rounds_curve_: NDArray[np.float64] | None = fit.by_rating.curve
            self.prior_scale_ = fit.top_n.scale if fit.top_n.prior is not None else None
            self.ease_lambda_ = fit.ease_lambda
            self._models = dict.fromkeys(fit.fitted.tolist(), model)
            pool = self.users_[data.feats]
            self.feature_users_ = {label[u]: pool for u in self._models}
        else:
            self._models, self._vsim_w, self._feats = fit.models, fit.vsim_weights, fit.feats
            self._design_, self._means = fit.design, fit.means
            self.model_ = self.rating_model_ = self.prior_scale_ = self.ease_lambda_ = None
            self.rounds_curve_ = self.rating_rounds_curve_ = None
            self.feature_users_ = {label[u]: self.users_[f] for u, f in fit.feats.items()}
        self.models_ = {label[u]: m for u, m in self._models.items()}

    # ------------------------------------------------------------------ prediction
    def __sklearn_is_fitted__(self) -> bool:
        """Fitted = ``fit`` finished (``check_is_fitted`` ignores what a fit that raised set)."""
        return "models_" in vars(self)

    def _check_fitted(self) -> None:
        if not hasattr(self, "models_"):
            raise not_fitted("", self, "call fit(ratings) first")

    def _model_of(self, user: Any, top_n: bool = False) -> tuple[int, RankBoostModel]:
        """The user's row and model (pooled: ``model_`` if ``top_n``, else ``rating_model_``)."""
        self._check_fitted()
        u = user_position(user, self._user_pos if self._labelled else None, self.n_users_)
        if self.model_ is not None:  # pooled: every user of the ratings can be scored
            return u, self.model_ if top_n or self.rating_model_ is None else self.rating_model_
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
            return to_positions(items, self._item_pos, what="item", name=name)
        return check_items(items, self.n_items_, name=name)

    def _score(self, u: int, model: RankBoostModel, it: NDArray[np.int64]) -> NDArray[np.float64]:
        if it.size == 0:  # no item to score (pooled models refuse an empty X)
            return np.empty(0)
        if self.model_ is not None:
            fit = self._fits[0] if model is self.model_ else self._fits[1]
            return fit.score(self._base.scores(np.array([u]))[0][it])
        w = self._vsim_w.get(u)
        return score_items(self._R, self._means, self._design_, self._feats[u], model, w, it)

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
        u, model = self._model_of(user, top_n=True)
        check_k(k)
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
        items : ndarray of shape (n_fitted, min(k, n_items))
            Row ``i``: the items of ``users[i]``, best first, as :meth:`recommend` gives
            them. A user with fewer candidate items has the row padded with
            ``-1`` (matrix input) or ``None`` (labels).
        scores : ndarray of float of shape (n_fitted, min(k, n_items))
            Their scores; NaN in padded cells.

        Examples
        --------
        >>> import numpy as np
        >>> from rankboost.recommend import RankBoostRecommender
        >>> rng = np.random.default_rng(0)
        >>> taste = rng.integers(1, 6, size=30).astype(float)
        >>> R = np.vstack([taste, 6 - taste, taste, 6 - taste, rng.integers(1, 6, size=30)])
        >>> R[0, 20:] = R[1, :10] = np.nan  # users 0 and 1 have not seen some items
        >>> rec = RankBoostRecommender(feature_users=[2, 3, 4], n_estimators=20, mode="per_user")
        >>> users, items, scores = rec.fit(R, target_users=[0, 1]).recommend_all(k=3)
        >>> users.tolist(), items.shape
        ([0, 1], (2, 3))
        >>> taste[items[0]].tolist(), (6 - taste[items[1]]).tolist()  # each one's taste
        ([5.0, 5.0, 4.0], [5.0, 5.0, 5.0])
        """
        self._check_fitted()
        check_k(k)
        k = min(int(k), self.n_items_)  # no row holds more than every item
        n_jobs = effective_n_jobs(self.n_jobs) if self._models else 1
        if self.model_ is not None:
            fitted = np.fromiter(self._models, dtype=np.int64, count=len(self._models))
            pos, scores = recommend_pooled(
                self._base, self._fits[0], self._R, fitted, k, exclude_rated, n_jobs, self.verbose
            )
            return labelled_top(self.users_, self.items_, self._labelled, fitted, pos, scores)
        jobs = [(u, self._feats[u], m, self._vsim_w.get(u)) for u, m in self._models.items()]
        pos, scores = recommend_all_per_user(
            self._R, self._means, self._design_, jobs, k, exclude_rated, n_jobs, self.verbose
        )
        fitted = np.array([u for u, *_ in jobs], dtype=np.int64)
        return labelled_top(self.users_, self.items_, self._labelled, fitted, pos, scores)
