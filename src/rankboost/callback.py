"""Per-round callbacks for :func:`rankboost.train` (the shape of ``lightgbm/callback.py``).

A callback is any callable taking a :class:`CallbackEnv`; it is called after every round.
To end training early, raise :class:`EarlyStopException` (its ``best_iteration`` is stored
on the model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .weak_rankers import WeakRanker

__all__ = ["CallbackEnv", "EarlyStopException"]


@dataclass(frozen=True)
class CallbackEnv:
    """What a callback sees after round ``iteration`` (0-based).

    Attributes
    ----------
    iteration : int
        Index of the round just finished (0-based).
    n_rounds : int
        Number of rounds requested.
    weak_ranker : ThresholdRanker or FeatureRanker
        The weak ranker of this round; ``weak_ranker.predict(X)`` gives ``h_t`` so a
        callback can keep validation scores up to date in O(n) per round.
    alpha : float
        Its weight ``alpha_t``.
    history : dict of list
        The per-round records so far (same keys as ``RankBoostModel.history``).
    """

    iteration: int
    n_rounds: int
    weak_ranker: WeakRanker
    alpha: float
    history: dict[str, list[Any]]

    def update_scores(self, scores: NDArray[np.float64], X: NDArray[np.float64]) -> None:
        """Add this round's ``alpha_t h_t(x)`` to ``scores`` in place."""
        scores += self.alpha * self.weak_ranker.predict(X)


class EarlyStopException(Exception):
    """Raise from a callback to stop training.

    Parameters
    ----------
    best_iteration : int
        Number of rounds to keep as the model's ``best_iteration`` (1-based count).
    best_score : float, default=nan
        The score at that round, for the record.
    """

    def __init__(self, best_iteration: int, best_score: float = float("nan")) -> None:
        super().__init__(best_iteration, best_score)
        self.best_iteration = best_iteration
        self.best_score = best_score
