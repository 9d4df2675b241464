"""Meta-search and rank fusion: TREC run / qrels / LETOR-agg I/O and learned fusion.

:class:`RankFusion` learns to combine ranked lists with RankBoost (Freund et al. 2003,
section 6.2); :mod:`rankboost.fusion.io` reads and writes TREC runs, TREC qrels and the LETOR
4.0 aggregation format; :func:`evaluate_run` scores a run against qrels. The command line is
``rankboost fuse {train,apply,evaluate}`` (:mod:`rankboost.fusion.cli`).
"""

from .evaluation import evaluate_run, run_arrays
from .io import (
    AggData,
    format_run,
    is_letor_agg,
    read_letor_agg,
    read_letor_agg_folds,
    read_qrels,
    read_run,
    read_runs,
    write_letor_agg,
    write_qrels,
    write_run,
)
from .learned import FusionFeatures, FusionWarning, RankFusion, fusion_features, grades_for
from .run import Qrels, Run

__all__ = [
    "AggData",
    "FusionFeatures",
    "FusionWarning",
    "Qrels",
    "RankFusion",
    "Run",
    "evaluate_run",
    "format_run",
    "fusion_features",
    "grades_for",
    "is_letor_agg",
    "read_letor_agg",
    "read_letor_agg_folds",
    "read_qrels",
    "read_run",
    "read_runs",
    "run_arrays",
    "write_letor_agg",
    "write_qrels",
    "write_run",
]
