"""rankboost: RankBoost (Freund, Iyer, Schapire & Singer, JMLR 2003), faithful and fast."""

from importlib.metadata import PackageNotFoundError, version

from .booster import TrainingStoppedWarning, train
from .callback import CallbackEnv, EarlyStopException
from .feedback import BipartiteFeedback, LayeredFeedback, PairFeedback
from .model import RankBoostModel, load_model

try:
    __version__ = version("rankboost")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

__all__ = [
    "BipartiteFeedback",
    "CallbackEnv",
    "EarlyStopException",
    "LayeredFeedback",
    "PairFeedback",
    "RankBoostModel",
    "TrainingStoppedWarning",
    "__version__",
    "load_model",
    "train",
]
