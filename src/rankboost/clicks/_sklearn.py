"""The ``clicks=`` path of :meth:`rankboost.RankBoostRanker.fit` (kept out of sklearn.py)."""

from __future__ import annotations

from typing import Any

from numpy.typing import NDArray

from ._counts import ClickCounts
from ._log import ClickLog
from ._pairs import click_feedback, resolve_propensity

__all__ = ["click_fit_feedback"]


def click_fit_feedback(
    clicks: Any, propensity: Any, X: NDArray[Any], sample_weight: Any
) -> tuple[Any, Any]:
    """``(PairFeedback, Propensity or None)`` for ``fit(X, None, clicks=..., propensity=...)``."""
    from ..feedback import PairFeedback

    if sample_weight is not None:
        raise ValueError(
            "RankBoostRanker.fit got sample_weight= with clicks=; weigh sessions with the "
            "log's count column instead."
        )
    if isinstance(clicks, PairFeedback):
        if clicks.n_samples != X.shape[0]:
            raise ValueError(
                f"RankBoostRanker.fit: clicks= is a PairFeedback over {clicks.n_samples} rows "
                f"but X has {X.shape[0]}; build it from a log matched to X's rows."
            )
        return clicks, None
    if isinstance(clicks, ClickCounts):  # read_click_counts: the log summed, streamed
        if clicks.n_samples != X.shape[0]:
            raise ValueError(
                f"RankBoostRanker.fit: the click counts were matched to {clicks.n_samples} rows "
                f"but X has {X.shape[0]}; read them with the qid and docid of this X's rows."
            )
        prop = resolve_propensity(clicks, propensity, X)
        return click_feedback(clicks, prop, pairs=clicks.pairs), prop
    if not isinstance(clicks, ClickLog):
        raise TypeError(
            "RankBoostRanker.fit: clicks= must be a rankboost.clicks.ClickLog matched to X's "
            f"rows, its ClickCounts, or a PairFeedback; got {type(clicks).__name__}."
        )
    if clicks.row is None:
        raise ValueError(
            "RankBoostRanker.fit: the click log is not matched to X's rows; call "
            "log.match(qid, docid) with the qid and docid of each row of X."
        )
    if clicks.n_samples != X.shape[0]:
        raise ValueError(
            f"RankBoostRanker.fit: the click log was matched to {clicks.n_samples} rows but X "
            f"has {X.shape[0]}; match it to the rows of this X."
        )
    prop = resolve_propensity(clicks, propensity, X)
    return click_feedback(clicks, prop), prop
