"""Collaborative filtering with RankBoost: rank items for a user from other users' ratings.

The movie task of Freund, Iyer, Schapire & Singer (JMLR 4 (2003) 933-969, section 6.2): for
a *target* user, the instances are items (movies), the ranking features are the ratings of
a set of *feature users* (``NaN``, the paper's ⊥, where a feature user did not rate the
item), and the feedback is layered by the target's own ratings: every pair of items the
target rated differently is crucial, equal ratings are not compared
(:class:`rankboost.LayeredFeedback`). One RankBoost model is trained per target user.

Two entry points:

* :func:`user_ranking_problem` builds one user's ``(X, y)``, exactly as the recommender does;
* :class:`RankBoostRecommender` fits one model per target user (in parallel over users with
  joblib) and scores, ranks and recommends items (``recommend_all(k)``: every fitted user).
  Per-target problems are built from CSR slices of the ratings: the matrix is never
  densified to users x items. Beyond the paper's configuration it offers crowd and
  cross-fitted VSIM columns (``extra_features``), a mean fill for unrated items
  (``unrated``), rating-gap pair weights (``pair_weight``) and a cap on feature users
  (``max_feature_users``); docs/movies.md measures each.

:class:`RankBoostRecommender` takes the user's own labels: a pandas DataFrame of
``(user, item, rating)`` rows (``fit(..., columns=...)`` names the columns) or a DataFrame
user x item matrix (index = users, columns = items, NaN = not rated); then target users,
feature users and the users and items of ``predict``/``rank``/``recommend`` are labels, and
``users_``/``items_`` hold them. For a sparse or dense matrix, users and items are the row
and column *indices* (see :meth:`rankboost.datasets.RatingsDataset.to_matrix` for the id
arrays). A stored entry is a rating (an explicitly stored 0 too); an absent entry means
"not rated".
"""

from ._base import BASE_RECOMMENDERS
from ._problem import check_ratings, user_ranking_problem
from ._recommender import RankBoostRecommender

__all__ = ["BASE_RECOMMENDERS", "RankBoostRecommender", "check_ratings", "user_ranking_problem"]
