"""Distributed RankBoost on Dask: the same model as one machine, blocks kept on the workers.

:func:`train` (functional, like ``rankboost.train``) and :class:`DaskRankBoostRanker` (the
scikit-learn estimator, like LightGBM's ``DaskLGBMRanker``) train on dask arrays or dask
DataFrames. One Dask partition is one block of whole queries (:mod:`rankboost.booster`): it
stays on its worker for the whole training (a Dask actor); per round each block returns its
histograms and a few numbers, the client chooses the weak ranker and broadcasts it
(:mod:`rankboost.dask._booster`); ``push=p > 1`` trains the P-Norm Push the same way
(:mod:`rankboost.dask._push`). Global bins are fitted once from all partitions (exact
merge of the value counts, or a mergeable sketch for large data). A lost worker's blocks
are rebuilt from their rows and the rounds so far, and training goes on to the same model.
:class:`DaskRankBoostRecommender` is the pooled recommender on blocks of whole users.
:func:`read_click_counts` counts the shards of a click log on the workers (``_clicks``).

Needs ``pip install 'rankboost[dask]'`` (dask[array,dataframe] and distributed).
See docs/distributed.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:
    from ._clicks import read_click_counts
    from ._data import repartition_by_query
    from ._recommend import DaskRankBoostRecommender
    from ._sklearn import DaskRankBoostRanker
    from ._train import make_booster, predict, train

__all__ = [
    "DaskRankBoostRanker",
    "DaskRankBoostRecommender",
    "make_booster",
    "predict",
    "read_click_counts",
    "repartition_by_query",
    "train",
]

# NOTE: imported on first use (PEP 562). A Dask worker imports this package to unpickle a
# block (``rankboost.dask._block``): it then loads neither scikit-learn (the estimator) nor
# the client's training loop, about 2 s of CPU per worker process (tests/test_dask.py).
__getattr__, __dir__ = attach(__name__, __all__)
