"""Collaborative filtering with RankBoost: rank items for a user from other users' ratings.

Two learners behind one estimator, :class:`RankBoostRecommender`:

* ``mode="pooled"`` (the default; SPEC 7.2): **one** RankBoost model over every target user.
  A user is a query, its rows are items (the items it rated, and sampled unrated ones),
  its features are the scores of base recommenders for (user, item)
  (:data:`BASE_RECOMMENDERS`: VSIM user-KNN, item-KNN, implicit item-KNN, EASE, item mean,
  popularity; vectorised numpy/scipy), *cross-fitted* over folds of each user's ratings so
  that no rating informs its own feature value. By default two models share those rows:
  one learns the order of a user's ratings (``predict``, ``rank``), the other liked items
  above rated ones above unrated ones, boosted from EASE's score as a prior (``recommend``,
  top-N; EASE's penalty chosen on a validation split of the ratings); rounds by inner CV
  over users.
* ``mode="per_user"``: the movie task of Freund, Iyer, Schapire & Singer (JMLR 4 (2003)
  933-969, section 6.2): for a *target* user, the instances are the items it rated, the
  features are the ratings of a set of *feature users* (``NaN``, the paper's ⊥, where a
  feature user did not rate the item), and the feedback is layered by the target's own
  ratings (:class:`rankboost.LayeredFeedback`). One model per target, in parallel with
  joblib; :func:`user_ranking_problem` builds one target's ``(X, y)``. Beyond the paper it
  offers crowd and cross-fitted VSIM columns (``extra_features``), a mean fill for unrated
  items (``unrated``), rating-gap pair weights and a cap on feature users.

docs/movies.md measures both against VSIM, Surprise's KNNWithMeans, EASE and ``implicit``.
The pooled model's choices on held-out users (folds of users, the held-out NDCG@10 of every
round, the first-best rule), its grids (``EASE_PRIOR_SCALES``, ``EASE_LAMBDAS``) and its seed
streams are those of :mod:`rankboost.model_selection`, the floor every wing chooses on.

:class:`RankBoostRecommender` takes the user's own labels: a pandas DataFrame of
``(user, item, rating)`` rows (``fit(..., columns=...)`` names the columns) or a DataFrame
user x item matrix (index = users, columns = items, NaN = not rated); then target users,
feature users and the users and items of ``predict``/``rank``/``recommend`` are labels, and
``users_``/``items_`` hold them. For a sparse or dense matrix, users and items are the row
and column *indices* (see :meth:`rankboost.datasets.RatingsDataset.to_matrix` for the id
arrays). A stored entry of a sparse matrix is a rating; a stored 0 is refused unless
``rating_range`` includes 0 (``eliminate_zeros()`` drops them).

Examples
--------
>>> import numpy as np
>>> from rankboost.recommend import RankBoostRecommender
>>> rng = np.random.default_rng(0)
>>> taste = rng.integers(1, 6, size=40).astype(float)
>>> R = np.vstack([taste if u % 2 else 6 - taste for u in range(30)])  # two tastes
>>> R[rng.random(R.shape) < 0.5] = np.nan  # each user rated about half the items
>>> rec = RankBoostRecommender(feedback="ratings", n_estimators=20).fit(R)
>>> items, scores = rec.recommend(1, k=5)  # user 1's unrated items, best first
>>> bool(taste[items].mean() > taste.mean())  # user 1 shares the first taste
True
"""

from ._base import BASE_RECOMMENDERS
from ._problem import check_ratings, user_ranking_problem
from ._recommender import RankBoostRecommender

__all__ = ["BASE_RECOMMENDERS", "RankBoostRecommender", "check_ratings", "user_ranking_problem"]
