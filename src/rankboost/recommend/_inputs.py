"""What ``RankBoostRecommender.fit`` was given, read once: the ratings and the users' rows.

:func:`fit_input` checks the ratings (a DataFrame of rows or a user x item matrix with
labels, or a sparse or dense matrix) into a CSR matrix, and turns the target and feature
users (labels, or row numbers for a matrix) into rows; the estimator keeps the labels to
answer in them.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ._labels import from_frame, is_frame, label_positions
from ._problem import check_explicit_zeros, check_ratings, check_users

__all__ = ["FitInput", "fit_input"]


class FitInput(NamedTuple):
    """The checked input of a fit.

    ``R``: the ratings (users x items, CSR); ``users``, ``items``: their labels (row and
    column numbers for matrix input), ``user_labels`` the users' as a list; ``labelled``:
    whether the input carried labels (a DataFrame); ``user_pos``, ``item_pos``: label ->
    row or column; ``targets``, ``feats``: the rows of the target and feature users.
    """

    R: sp.csr_matrix
    users: NDArray[Any]
    items: NDArray[Any]
    user_labels: list[Any]
    labelled: bool
    user_pos: dict[Any, int]
    item_pos: dict[Any, int]
    targets: NDArray[np.int64]
    feats: NDArray[np.int64]


def fit_input(
    ratings: Any,
    target_users: Any,
    feature_users: Any,
    columns: tuple[str, str, str],
    rating_range: tuple[float, float] | None,
) -> FitInput:
    """Check ``fit``'s ratings and users (the errors name the user, item or rating).

    ``target_users`` and ``feature_users``: labels, or rows for matrix input; None = every
    user.
    """
    labelled = is_frame(ratings)
    if labelled:
        matrix, users, items = from_frame(ratings, tuple(columns))  # type: ignore[arg-type]
        names = (users.tolist(), items.tolist())
        R = check_ratings(matrix, rating_range=rating_range, labels=names)
    else:
        R = check_ratings(ratings, rating_range=rating_range)
        users = np.arange(R.shape[0], dtype=np.int64)
        items = np.arange(R.shape[1], dtype=np.int64)
        names = (users.tolist(), items.tolist())
    n_users = R.shape[0]
    user_pos = {u: k for k, u in enumerate(names[0])}

    def rows_of(given: Any, name: str) -> NDArray[np.int64]:
        if given is None:
            return np.arange(n_users, dtype=np.int64)
        if labelled:
            return label_positions(given, user_pos, names[0], name)
        return check_users(given, n_users, name=name)

    targets = rows_of(target_users, "target_users")
    feats = rows_of(feature_users, "feature_users")
    if sp.issparse(ratings) and not labelled:
        check_explicit_zeros(R, rating_range)
    item_pos = {it: k for k, it in enumerate(names[1])}
    return FitInput(R, users, items, names[0], labelled, user_pos, item_pos, targets, feats)
