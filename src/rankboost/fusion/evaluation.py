"""Evaluate a run against qrels with :mod:`rankboost.metrics` (LETOR-style candidate sets).

The candidate set of a query is every judged document plus every document the run returns
(unjudged ones count as grade 0, the TREC convention). Judged documents that the run did not
return are placed below every returned one, tied with each other; a negative grade (TREC's
spam -2) is not relevant, as grade 0 (``trec_eval``'s rule); with the default
``ties="expected"`` they count at their expected positions under random tie-breaking. This is
how the LETOR 4.0 tools score a ranking of every listed document, and it treats every method
on the same footing whatever it returns. Queries of the run that the qrels do not judge are
ignored (as ``trec_eval`` does).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..metrics import evaluate
from .features import FusionWarning
from .run import Qrels, Run

__all__ = ["evaluate_run", "run_arrays"]


def run_arrays(
    run: Run, qrels: Qrels
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.str_]]:
    """``(y_true, y_score, qid)`` over the judged queries' candidate sets (module docstring).

    Examples
    --------
    >>> from rankboost.fusion import Qrels, Run, run_arrays
    >>> run = Run(["q", "q"], ["a", "x"], [1, 2], [2.0, 1.0])
    >>> y, s, q = run_arrays(run, Qrels(["q", "q"], ["a", "b"], [1, 1]))
    >>> y.tolist(), s.tolist()
    ([1, 1, 0], [2.0, 0.0, 1.0])
    """
    judged = qrels.to_dict()
    scores: dict[str, dict[str, float]] = {}
    for q, d, s in zip(run.qid.tolist(), run.docid.tolist(), run.score.tolist(), strict=True):
        if q in judged:
            scores.setdefault(q, {})[d] = s
    floor = float(run.score.min()) - 1.0
    ys: list[int] = []
    ss: list[float] = []
    qs: list[str] = []
    for q, docs in judged.items():
        got = scores.get(q, {})
        for d, g in docs.items():
            ys.append(max(g, 0))  # trec_eval: a grade <= 0 is not relevant
            ss.append(got.get(d, floor))
            qs.append(q)
        for d, s in got.items():
            if d not in docs:
                ys.append(0)
                ss.append(s)
                qs.append(q)
    return np.asarray(ys, dtype=np.int64), np.asarray(ss), np.asarray(qs).astype(str)


def evaluate_run(
    run: Run, qrels: Qrels, metrics: str | Iterable[str] = ("ndcg@10", "map"), **options: Any
) -> dict[str, float]:
    """Mean of each metric over the judged queries (see :func:`rankboost.metrics.evaluate`).

    Parameters
    ----------
    run : Run
        The ranking to evaluate (scores decide the order).
    qrels : Qrels
        The judgements; they define the evaluated queries.
    metrics : str or iterable of str, default=("ndcg@10", "map")
        Metric names such as ``"ndcg@10"``, ``"map"``, ``"p@5"``, ``"mrr"``,
        ``"average_rank"``.
    **options
        Passed to :func:`rankboost.metrics.evaluate` (``ties``, ``gain``, ``empty``, ...).

    Returns
    -------
    dict of str to float

    Warns
    -----
    FusionWarning
        When the qrels judge queries the run does not return: they count as a random order
        of their judged documents, where ``trec_eval`` leaves them out.

    Examples
    --------
    >>> from rankboost.fusion import Qrels, Run, evaluate_run
    >>> run = Run(["q", "q"], ["a", "b"], [1, 2])
    >>> evaluate_run(run, Qrels(["q", "q"], ["a", "b"], [0, 1]), ["mrr", "p@1"])
    {'mrr': 0.5, 'p@1': 0.0}
    """
    missing = sorted(set(qrels.queries) - set(run.queries))
    if missing:  # trec_eval leaves these out (-c: 0); here they are a random order
        warnings.warn(
            f"run {run.name}: {len(missing)} judged queries are not in the run (e.g. "
            f"{missing[0]!r}); they are scored as a random order of their judged documents "
            "(the candidate set: judged documents a run does not return rank below it, "
            "tied), where trec_eval leaves them out. To compare with trec_eval, keep only "
            "the run's queries in the qrels.",
            FusionWarning,
            stacklevel=2,
        )
    y, s, q = run_arrays(run, qrels)
    out = evaluate(y, s, q, metrics, **options)
    return {k: float(v) for k, v in out.items()}
