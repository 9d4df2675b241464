"""What ``rankboost train`` and ``demo`` share: the options of rankboost.params, the checks.

Both train through :func:`rankboost._fit.fit_ranker` (``RankBoostRanker.fit``'s steps,
without scikit-learn: ``import sklearn`` alone took 2 s of a small ``rankboost train``), so
the command line checks the data itself (:func:`check_training`, :func:`check_eval`).
``--plot``'s figure is :func:`plot_training` (``train --plot`` and ``info --plot``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ..params import FEEDBACK_PARAMS, TRAIN_PARAMS, add_arguments

__all__ = [
    "DEFAULT_METRICS",
    "add_train_options",
    "check_eval",
    "check_training",
    "plot_training",
]

#: The metrics ``evaluate`` and ``demo`` print by default (the LETOR 4.0 table's).
DEFAULT_METRICS = ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map")


def add_train_options(p: argparse.ArgumentParser, only: int | None = None) -> None:
    """The training options, derived from rankboost.params (so --help cannot drift).

    ``only``: the first ``only`` training parameters (``demo``: ``--rounds``), without a group.
    """
    if only is not None:
        add_arguments(p, params=TRAIN_PARAMS[:only])
        return
    g = p.add_argument_group("boosting (rankboost.params: the defaults of rankboost.train)")
    add_arguments(g, params=TRAIN_PARAMS + FEEDBACK_PARAMS)


def check_training(data: Any, what: str) -> tuple[Any, Any]:
    """``(X, y)`` of a training file, checked (finite features, NaN = abstain; finite labels).

    The command line's own checks before :func:`rankboost._fit.fit_ranker`, in place of
    scikit-learn's.
    """
    from .._validation import check_feature_matrix, check_labels

    X = check_feature_matrix(data.X, name=f"X of {what}")
    return X, check_labels(data.y, name=f"y of {what}", n_samples=X.shape[0])


def check_eval(what: str) -> Callable[[int, Any, Any], tuple[Any, Any]]:
    """The check of a validation file's features (its labels are the monitor's to check)."""

    def prepare(i: int, X: Any, qid: Any) -> tuple[Any, Any]:
        from .._validation import check_feature_matrix

        return check_feature_matrix(X, name=f"X of {what}"), qid

    return prepare


def plot_training(model: Any, path: str, title: str) -> None:
    """``--plot``: the training rloss, its bound ``prod Z_t`` and the validation metrics."""
    from ._inputs import pyplot_offscreen, save_plot

    pyplot_offscreen()
    from ..plotting import plot_training as draw

    save_plot(draw(model, title=title).figure, path)
