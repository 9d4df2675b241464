"""Ranking datasets: SVMlight/LETOR files, LightGBM group files, bundled MQ2008, MovieLens.

:func:`make_ratings` draws MovieLens-shaped ratings (seeded, any size); :func:`make_ranking`
the small ranking set of the examples.

Conventions: features are dense float64 with 1-based file indices (feature ``k`` of a
LETOR/SVMlight line is column ``k - 1``); query ids are one per row, as in the file.

The names are imported on first use (:mod:`rankboost._lazy`): the commands read a file's first
lines with ``datasets._io`` (standard library only) to tell its format before numpy is imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:
    from ._bundled import MQ2008_FEATURE_NAMES, load_feature_names, load_mq2008
    from ._dataset import RankingDataset
    from ._movielens import RatingsDataset, load_movielens
    from ._svmlight import load_query_file, load_svmlight
    from ._svmlight_write import dump_svmlight
    from ._synthetic import make_ranking, make_ratings

__all__ = [
    "MQ2008_FEATURE_NAMES",
    "RankingDataset",
    "RatingsDataset",
    "dump_svmlight",
    "load_feature_names",
    "load_movielens",
    "load_mq2008",
    "load_query_file",
    "load_svmlight",
    "make_ranking",
    "make_ratings",
]

__getattr__, __dir__ = attach(__name__, __all__)
