"""rankboost: RankBoost (Freund, Iyer, Schapire & Singer, JMLR 2003), faithful and fast.

The engine (:func:`train`, the feedback classes, :class:`RankBoostModel`), a scikit-learn
ranker (:class:`RankBoostRanker`), ranking metrics (:mod:`rankboost.metrics`), data readers
(:mod:`rankboost.datasets`), rank fusion (:mod:`rankboost.fusion`) and collaborative
filtering (:mod:`rankboost.recommend`). Plots live in :mod:`rankboost.plotting` (needs
matplotlib) and are not imported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import attach

if TYPE_CHECKING:
    from . import clicks, datasets, fusion, metrics, params
    from . import recommend as recommend  # public, though not in __all__
    from ._compat import ProgressBarWarning
    from ._version import __version__
    from .booster import Booster, RoundRecord, TrainingStoppedWarning
    from .callback import (
        CallbackEnv,
        EarlyStopException,
        EvaluationMonitor,
        early_stopping,
        log_evaluation,
        record_evaluation,
    )
    from .engine import train
    from .feedback import BipartiteFeedback, LayeredFeedback, PairFeedback
    from .fusion import RankFusion
    from .model import RankBoostModel, load_model
    from .params import TrainParams
    from .recommend import RankBoostRecommender
    from .sklearn import OneQueryWarning, RankBoostRanker

__all__ = [
    "__version__",
    "BipartiteFeedback",
    "Booster",
    "CallbackEnv",
    "clicks",
    "datasets",
    "early_stopping",
    "EarlyStopException",
    "EvaluationMonitor",
    "fusion",
    "LayeredFeedback",
    "load_model",
    "log_evaluation",
    "metrics",
    "OneQueryWarning",
    "PairFeedback",
    "params",
    "ProgressBarWarning",
    "RankBoostModel",
    "RankBoostRanker",
    "RankBoostRecommender",
    "RankFusion",
    "record_evaluation",
    "RoundRecord",
    "train",
    "TrainParams",
    "TrainingStoppedWarning",
]

# NOTE: every public name is imported on first use (PEP 562), so ``import rankboost``
# and ``rankboost --help`` do not import numba, scipy or scikit-learn nor load the compiled
# kernels (issue 16, item 10; benchmarks/bench_startup.py), and ``rankboost predict`` does
# not import the parameter tables (``params``). The names and their modules are the
# imports under TYPE_CHECKING above (rankboost._lazy).
__getattr__, __dir__ = attach(__name__, __all__)
