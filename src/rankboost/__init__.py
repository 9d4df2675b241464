"""rankboost: RankBoost (Freund, Iyer, Schapire & Singer, JMLR 2003), faithful and fast.

The engine (:func:`train`, the feedback classes, :class:`RankBoostModel`), a scikit-learn
ranker (:class:`RankBoostRanker`), ranking metrics (:mod:`rankboost.metrics`), data readers
(:mod:`rankboost.datasets`), rank fusion (:mod:`rankboost.fusion`) and collaborative
filtering (:mod:`rankboost.recommend`). Plots live in :mod:`rankboost.plotting` (needs
matplotlib) and are not imported here.
"""

from importlib.metadata import PackageNotFoundError, version

from . import datasets, fusion, metrics, params
from .booster import Booster, RoundRecord, TrainingStoppedWarning, train
from .callback import (
    CallbackEnv,
    EarlyStopException,
    EvaluationMonitor,
    early_stopping,
    log_evaluation,
    record_evaluation,
)
from .feedback import BipartiteFeedback, LayeredFeedback, PairFeedback
from .fusion import RankFusion
from .model import RankBoostModel, load_model
from .params import TrainParams
from .recommend import RankBoostRecommender
from .sklearn import OneQueryWarning, RankBoostRanker

try:
    __version__ = version("rankboost")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

__all__ = [
    "__version__",
    "BipartiteFeedback",
    "Booster",
    "CallbackEnv",
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
