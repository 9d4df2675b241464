"""Distributed RankBoost on Dask: the same model as one machine, blocks kept on the workers.

:func:`train` (functional, like ``rankboost.train``) and :class:`DaskRankBoostRanker` (the
scikit-learn estimator, like LightGBM's ``DaskLGBMRanker``) train on dask arrays or dask
DataFrames. One Dask partition is one block of whole queries (:mod:`rankboost.booster`): it
stays on its worker for the whole training (a Dask actor); per round each block returns its
histograms and a few numbers, the client chooses the weak ranker and broadcasts it
(:mod:`rankboost.dask._booster`). Global bins are fitted once from all partitions (exact
merge of the value counts, or a mergeable sketch for large data). A lost worker's blocks
are rebuilt from their rows and the rounds so far, and training goes on to the same model.

Needs ``pip install 'rankboost[dask]'`` (dask[array,dataframe] and distributed).
See docs/distributed.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._lazy import lazy_attribute, lazy_dir

if TYPE_CHECKING:
    from ._data import repartition_by_query
    from ._sklearn import DaskRankBoostRanker
    from ._train import make_booster, predict, train

# NOTE: imported on first use (PEP 562). A Dask worker imports this package to unpickle a
# block (``rankboost.dask._block``): it then loads neither scikit-learn (the estimator) nor
# the client's training loop, about 2 s of CPU per worker process (tests/test_dask.py).
_LAZY = {
    "DaskRankBoostRanker": "._sklearn",
    "make_booster": "._train",
    "predict": "._train",
    "repartition_by_query": "._data",
    "train": "._train",
}


def __getattr__(name: str) -> Any:
    """Import a public name on first access; cache it in the package (rankboost._lazy)."""
    return lazy_attribute(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return lazy_dir(__name__, __all__)


__all__ = ["DaskRankBoostRanker", "make_booster", "predict", "repartition_by_query", "train"]
