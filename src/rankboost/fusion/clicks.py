"""Learn a fusion from a click log instead of relevance judgements.

The log is the one ``rankboost train --clicks`` reads (:func:`rankboost.clicks.read_click_log`:
``qid``, ``docid``, ``position``, ``click`` per shown result), logged on the lists an earlier
fusion served. Its documents are matched to the rows of the runs (the union of the documents
the runs return, per query), and the click pairs of :func:`rankboost.clicks.click_pairs`
(each clicked document above the other shown ones, weighted by the inverse examination
propensity ``min(1 / p_k, max_weight)``; Joachims, Swaminathan & Schnabel, WSDM 2017) are the
feedback of every family that takes pair feedback:

* :class:`~rankboost.fusion.LinearFusion`: the same RankBoost over normalised scores, its
  potential ``pi`` the pairs' (:class:`PairPotential`) instead of the grades';
* :class:`~rankboost.fusion.RankFusion`: :func:`rankboost.train` on
  :class:`rankboost.PairFeedback` (from the prior ``c F_0`` when it has one);
* :class:`~rankboost.fusion.AutoFusion`: the family chosen among its candidates by inner
  cross-validation (:mod:`rankboost.fusion._click_auto`).

**What is chosen on held-out clicks.** Without judgements, the rounds, the prior's scale and
the family are chosen on inner folds of the clicked queries by NDCG@10 with the debiased
click-through rate of each document as its gain: ``sum of clicks / p_k`` over its
impressions divided by its impressions (the same clip ``max_weight``; 0 for a document
never shown). Under a position-based model it estimates the document's click probability
had it been examined, which ranks as its relevance; with ``propensity="none"`` it is the
raw click-through rate (the naive estimator). ``held_out="shown"`` ranks only the
documents the log showed: a document never shown has no click-through rate, and counting
it as unclicked favours the fusions that keep the logging fusion's top (docs/fusion_clicks.md
measures it).

**Propensities.** ``"auto"`` estimates them from the log: by intervention harvesting
(Agarwal et al., WSDM 2019) when documents of a query were shown at several positions (the
log of several fusions, served in an A/B or interleaved fashion, is such an intervention),
else by regression-EM (Wang et al., WSDM 2018) on the runs' min-max scores; ``"none"``, a
file or ``p_1..p_K`` as in :func:`rankboost.clicks.click_feedback`.

**The logging fusion.** ``logged_by`` declares the fusion(s) that served the log; the log is
checked against the lists they serve on the runs given
(:mod:`rankboost.fusion._click_logged`), and several declared fusions are harvested for the
propensities (a warning says when their lists give no intervention to harvest).

:func:`fit_clicks` returns a new fitted estimator with the parameters of the one given (the
argument is not changed, as scikit-learn's ``clone``), built through its file format, so it
saves, applies and exports (``rankboost fuse export``) as any model of its family.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._click_auto import fit_auto
from ._click_fit import ClickTargets, PairPotential, click_targets, fit_boost, fit_linear
from ._click_logged import SIMPLE_FUSIONS, simple_fusion
from .features import RunsLike, as_run_list

__all__ = [
    "SIMPLE_FUSIONS",
    "ClickTargets",
    "PairPotential",
    "click_targets",
    "fit_clicks",
    "fit_targets",
    "served_rows",
    "simple_fusion",
    "simulate_served",
]


# ------------------------------------------------------------------ the entry ------------
def fit_clicks(
    estimator: Any,
    runs: RunsLike,
    clicks: Any,
    *,
    propensity: Any = "auto",
    pairs: str = "all_shown",
    max_weight: float | None = 100.0,
    logged_by: Any = None,
    held_out: str = "all",
    verbose: bool = False,
) -> Any:
    """Fit a fusion estimator on a click log instead of qrels; returns a new fitted estimator.

    Parameters
    ----------
    estimator : LinearFusion, RankFusion or AutoFusion
        Its parameters are used; it is not changed (the result is a new estimator of its
        class, as after ``clone(estimator).fit``).
    runs : list of Run or dict of str to Run
        The runs the logged fusion fused (every document the log shows must be in them).
    clicks : ClickLog or path
        The click log (:func:`rankboost.clicks.read_click_log`'s format).
    propensity : "auto", "none", path, array-like or Propensity, default="auto"
        Examination propensities (module docstring): ``"none"`` is the naive estimator.
    pairs : str, default="all_shown"
        Pair extraction (:func:`rankboost.clicks.click_pairs`).
    max_weight : float, default=100.0
        Clip of the inverse propensities.
    logged_by : str, path, fusion or list of them, default=None
        The fusion that served the log: ``"rrf"``, ``"sum"``, ``"wsum:W1,W2,..."``
        (:func:`simple_fusion`), a model file or a fitted fusion; a list of them for a log
        of several fusions served A/B (each session one fusion's list). Every session must
        show the top of a declared fusion's list on ``runs`` (ties either way), else a
        ValueError says how many impressions, sessions and queries disagree; several make
        ``propensity="auto"`` estimate by intervention harvesting. None: not checked.
    held_out : {"all", "shown"}, default="all"
        What the inner folds rank when they choose the rounds, the prior's scale or the
        family: every document of the held-out queries, one never shown counting as
        unclicked, or only the documents the log showed (module docstring).
    verbose : bool, default=False
        Progress bars.

    Returns
    -------
    fitted : LinearFusion, RankFusion or AutoFusion
        Saved, applied and exported as any model of its family.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.clicks import ClickLog
    >>> from rankboost.fusion import Run
    >>> from rankboost.fusion.clicks import fit_clicks
    >>> from rankboost.fusion.linear import LinearFusion
    >>> qs = np.repeat([f"q{i}" for i in range(10)], 4)
    >>> ds = np.tile(["a", "b", "c", "d"], 10)
    >>> good = Run(qs, ds, np.tile([1, 2, 3, 4], 10), np.tile([4.0, 3, 2, 1], 10), name="good")
    >>> bad = Run(qs, ds, np.tile([4, 3, 2, 1], 10), np.tile([1.0, 2, 3, 4], 10), name="bad")
    >>> log = ClickLog.from_arrays(qid=qs, docid=ds, position=np.tile([1, 2, 3, 4], 10),
    ...                            click=np.tile([1, 0, 0, 0], 10))
    >>> lin = fit_clicks(LinearFusion(n_rounds=5, prior_scale=0.0), [good, bad], log,
    ...                  propensity="none")
    >>> bool(lin.weights_[0] > lin.weights_[1])
    True
    """
    from .auto import AutoFusion
    from .learned import RankFusion
    from .linear import LinearFusion

    if not isinstance(estimator, (LinearFusion, RankFusion, AutoFusion)):
        raise TypeError(
            "fit_clicks: estimator must be a LinearFusion, RankFusion or AutoFusion; got "
            f"{type(estimator).__name__}."
        )
    owner = f"{type(estimator).__name__} fit_clicks"
    items = as_run_list(runs, owner)
    t = click_targets(
        items,
        clicks,
        propensity=propensity,
        pairs=pairs,
        max_weight=max_weight,
        logged_by=logged_by,
        held_out=held_out,
        owner=owner,
    )
    return fit_targets(estimator, items, t, verbose)


def fit_targets(estimator: Any, items: list[Any], t: ClickTargets, verbose: bool = False) -> Any:
    """:func:`fit_clicks` on targets already built (:func:`click_targets` of ``items``)."""
    from .learned import RankFusion
    from .linear import LinearFusion

    if isinstance(estimator, LinearFusion):
        return fit_linear(estimator, items, t, verbose)
    if isinstance(estimator, RankFusion):
        return fit_boost(estimator, items, t, verbose)
    return fit_auto(estimator, items, t, verbose)


# ------------------------------------------------------------------ simulating ----------
def served_rows(
    model: Any, runs: RunsLike, qrels: Any, *, match: str = "name"
) -> tuple[Any, Any, Any, Any]:
    """``(y, qid, docid, score)`` of the list ``model`` serves, on the queries ``qrels`` judge.

    Every document the fused list holds, its grade (0 when unjudged) and fused score: what
    :func:`rankboost.clicks.simulate_clicks` shows the top of.
    """
    from ._select import rows
    from .features import grades_for

    fused = model.fuse(runs, match=match)
    judged = np.isin(fused.qid, np.asarray(qrels.queries))
    if not judged.any():
        raise ValueError(
            "simulate: no query of the runs is judged in the qrels; check that the query ids "
            "of the run files and the qrels file match."
        )
    qid, docid, score = fused.qid[judged], fused.docid[judged], fused.score[judged]
    return grades_for(rows(qid, docid), qrels), qid, docid, score


def simulate_served(
    fusion: Any,
    runs: RunsLike,
    qrels: Any,
    n_sessions: int,
    *,
    match: str = "name",
    **options: Any,
) -> Any:
    """Sessions on the list a fusion serves: :func:`rankboost.clicks.simulate_clicks`.

    ``fusion`` is any fitted fusion (or :func:`simple_fusion`'s); the sessions draw the queries
    ``qrels`` judge; ``options`` are ``simulate_clicks``' (``eta``, ``model``, ``table``,
    ``n_shown``, ``epsilon``, ``random_state``).

    Examples
    --------
    >>> from rankboost.fusion import Qrels, Run
    >>> a = Run(["q", "q", "q"], ["d1", "d2", "d3"], [1, 2, 3], [3.0, 2.0, 1.0], name="a")
    >>> b = Run(["q", "q"], ["d3", "d2"], [1, 2], [0.9, 0.1], name="b")
    >>> sim = simulate_served(simple_fusion("rrf", ["a", "b"]), [a, b],
    ...                       Qrels(["q"], ["d3"], [1]), 5, n_shown=2)
    >>> sim.log.docid[:2].tolist()  # RRF's top 2: d3 (3rd + 1st), d2 (2nd + 2nd)
    ['d3', 'd2']
    """
    from ..clicks._simulate import simulate_clicks

    y, qid, docid, score = served_rows(fusion, runs, qrels, match=match)
    return simulate_clicks(y, qid, score, n_sessions, docids=docid, **options)
