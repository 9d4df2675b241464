"""Learning to rank from click logs: position-debiased pair preferences (SPEC 7.2).

* :func:`read_click_log` / :class:`ClickLog`: the log (TSV/CSV: ``qid``, ``docid``,
  ``position``, ``click``, optional ``session`` and ``count``), matched to feature rows by
  ``(qid, docid)`` with :meth:`ClickLog.match`; :func:`read_click_counts` /
  :class:`ClickCounts`: the log streamed and summed into what training needs (pairs and
  (row, position) cells), so 10^7 sessions fit in memory.
* :func:`click_feedback`: the log as :class:`rankboost.PairFeedback` of (non-clicked,
  clicked, weight), weights ``1/p_k`` clipped (Joachims, Swaminathan & Schnabel 2017); by
  default each click above every other shown document (their estimator), or skip-above
  (Joachims 2002) and the other extractions of Joachims et al. (2005).
* :func:`estimate_propensity`: ``p_k`` from the log itself, EM or regression-EM (Wang et al.
  2018) or intervention harvesting (Agarwal et al. 2019, :func:`intervention_counts`);
  :func:`read_propensity` for a user table; :meth:`Propensity.plot`.
* :func:`simulate_clicks` and :func:`production_ranker`: the standard simulation protocol;
  :func:`simulate_to_file` writes the same log chunk by chunk (10^7 sessions in bounded memory).

See docs/clicks.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._lazy import lazy_attribute, lazy_dir

if TYPE_CHECKING:
    from ._counts import ClickCounts, click_counts
    from ._log import REQUIRED_COLUMNS, ClickLog
    from ._pairs import PAIR_EXTRACTIONS, click_feedback, click_pairs, resolve_propensity
    from ._propensity import (
        EYE_TRACKING,
        Propensity,
        estimate_propensity,
        intervention_counts,
        read_propensity,
    )
    from ._read import read_click_log
    from ._simulate import (
        SimulatedClicks,
        examination,
        production_ranker,
        simulate_clicks,
        simulate_to_file,
        write_click_log,
    )
    from ._stream import read_click_counts

# NOTE: imported on first use (PEP 562), so that importing the package (and reading its
# functions' defaults for ``rankboost clicks --help``) imports neither numpy nor numba
# (rankboost/__init__.py does the same).
_LAZY = {
    "REQUIRED_COLUMNS": "._log",
    "ClickLog": "._log",
    "read_click_log": "._read",
    "read_click_counts": "._stream",
    "ClickCounts": "._counts",
    "click_counts": "._counts",
    "PAIR_EXTRACTIONS": "._pairs",
    "click_feedback": "._pairs",
    "click_pairs": "._pairs",
    "resolve_propensity": "._pairs",
    "EYE_TRACKING": "._propensity",
    "Propensity": "._propensity",
    "estimate_propensity": "._propensity",
    "intervention_counts": "._propensity",
    "read_propensity": "._propensity",
    "SimulatedClicks": "._simulate",
    "examination": "._simulate",
    "production_ranker": "._simulate",
    "simulate_clicks": "._simulate",
    "simulate_to_file": "._simulate",
    "write_click_log": "._simulate",
}


def __getattr__(name: str) -> Any:
    """Import a public name on first access; cache it in the package (rankboost._lazy)."""
    return lazy_attribute(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return lazy_dir(__name__, __all__)


__all__ = [
    "EYE_TRACKING",
    "PAIR_EXTRACTIONS",
    "REQUIRED_COLUMNS",
    "ClickCounts",
    "ClickLog",
    "Propensity",
    "SimulatedClicks",
    "click_counts",
    "click_feedback",
    "click_pairs",
    "estimate_propensity",
    "examination",
    "intervention_counts",
    "production_ranker",
    "read_click_counts",
    "read_click_log",
    "read_propensity",
    "resolve_propensity",
    "simulate_clicks",
    "simulate_to_file",
    "write_click_log",
]
