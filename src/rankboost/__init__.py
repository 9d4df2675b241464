"""rankboost: RankBoost (Freund, Iyer, Schapire & Singer, JMLR 2003), faithful and fast.

The engine (:func:`train`, the feedback classes, :class:`RankBoostModel`), a scikit-learn
ranker (:class:`RankBoostRanker`), ranking metrics (:mod:`rankboost.metrics`), data readers
(:mod:`rankboost.datasets`), rank fusion (:mod:`rankboost.fusion`) and collaborative
filtering (:mod:`rankboost.recommend`). Plots live in :mod:`rankboost.plotting` (needs
matplotlib) and are not imported here.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from . import params
from ._lazy import lazy_attribute, lazy_dir
from .params import TrainParams

if TYPE_CHECKING:
    from . import clicks, datasets, fusion, metrics
    from ._compat import ProgressBarWarning
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
    from .recommend import RankBoostRecommender
    from .sklearn import OneQueryWarning, RankBoostRanker

try:
    __version__ = version("rankboost")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

# NOTE: everything but ``params`` is imported on first use (PEP 562), so ``import rankboost``
# and ``rankboost --help`` do not import numba, scipy or scikit-learn nor load the compiled
# kernels (issue 16, item 10; benchmarks/bench_startup.py). Name -> submodule holding it;
# a submodule maps to itself.
_LAZY = {
    "clicks": ".clicks",
    "datasets": ".datasets",
    "fusion": ".fusion",
    "metrics": ".metrics",
    "recommend": ".recommend",
    "Booster": ".booster",
    "RoundRecord": ".booster",
    "ProgressBarWarning": "._compat",
    "TrainingStoppedWarning": ".booster",
    "train": ".engine",
    "CallbackEnv": ".callback",
    "EarlyStopException": ".callback",
    "EvaluationMonitor": ".callback",
    "early_stopping": ".callback",
    "log_evaluation": ".callback",
    "record_evaluation": ".callback",
    "BipartiteFeedback": ".feedback",
    "LayeredFeedback": ".feedback",
    "PairFeedback": ".feedback",
    "RankFusion": ".fusion",
    "RankBoostModel": ".model",
    "load_model": ".model",
    "RankBoostRecommender": ".recommend",
    "OneQueryWarning": ".sklearn",
    "RankBoostRanker": ".sklearn",
}


def __getattr__(name: str) -> Any:
    """Import a public name on first access; cache it in the package (rankboost._lazy)."""
    return lazy_attribute(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return lazy_dir(__name__, __all__)


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
