"""Meta-search and rank fusion: TREC run / qrels / LETOR-agg I/O and learned fusion.

:class:`RankFusion` learns to combine ranked lists with RankBoost (Freund et al. 2003,
section 6.2); :mod:`rankboost.fusion.io` reads and writes TREC runs, TREC qrels and the LETOR
4.0 aggregation format; :func:`evaluate_run` scores a run against qrels. The command line is
``rankboost fuse {train,apply,evaluate,export}`` (:mod:`rankboost.cli.fuse`);
:class:`LinearFusion` (:mod:`rankboost.fusion.linear`) is a weighted sum of normalised scores
that :mod:`rankboost.fusion.engines` exports to the search engines of its table
(Elasticsearch, OpenSearch, Qdrant, Milvus).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._lazy import lazy_attribute, lazy_dir

if TYPE_CHECKING:
    from .auto import AutoFusion
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
    from .learned import (
        FusionFeatures,
        FusionWarning,
        RankFusion,
        cv_rounds,
        fusion_features,
        grades_for,
    )
    from .linear import LinearFusion
    from .run import Qrels, Run

# NOTE: imported on first use (PEP 562), so ``rankboost --help`` (which imports
# rankboost.fusion.engines for ``fuse export``'s engines) does not import numba through
# ``evaluation`` (issue 16, item 10). Name -> submodule holding it.
_LAZY = {
    "AutoFusion": ".auto",
    **dict.fromkeys(["evaluate_run", "run_arrays"], ".evaluation"),
    **dict.fromkeys(
        [
            "AggData",
            "format_run",
            "is_letor_agg",
            "read_letor_agg",
            "read_letor_agg_folds",
            "read_qrels",
            "read_run",
            "read_runs",
            "write_letor_agg",
            "write_qrels",
            "write_run",
        ],
        ".io",
    ),
    **dict.fromkeys(
        [
            "FusionFeatures",
            "FusionWarning",
            "RankFusion",
            "cv_rounds",
            "fusion_features",
            "grades_for",
        ],
        ".learned",
    ),
    **dict.fromkeys(["Qrels", "Run"], ".run"),
    "LinearFusion": ".linear",
}


def __getattr__(name: str) -> Any:
    """Import a public name on first access; cache it in the package (rankboost._lazy)."""
    return lazy_attribute(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return lazy_dir(__name__, __all__)


__all__ = [
    "AggData",
    "AutoFusion",
    "FusionFeatures",
    "FusionWarning",
    "LinearFusion",
    "Qrels",
    "RankFusion",
    "Run",
    "cv_rounds",
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
