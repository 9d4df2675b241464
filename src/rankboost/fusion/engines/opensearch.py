"""OpenSearch: hybrid search pipelines, and their arithmetic in float32.

``normalizer="rrf"``: a ``score-ranker-processor`` with ``rrf`` and ``weights`` summing to 1
(exact). ``normalizer="minmax"``: the ``normalization-processor`` (``min_max`` +
``arithmetic_mean``) is a weighted *mean* over the sub-queries that returned the document,
and scores a sub-query's lowest document 0.001: not the same ranking, so it is written only
with ``approximate=True`` (``--approximate``). OpenSearch is *modelled*:
:func:`opensearch_scores` is written from neural-search's source.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..features import RunsLike, as_run_list
from ._base import F32, MINMAX_OR_RRF, Engine, Support, by_query

__all__ = ["ENGINE", "opensearch_scores", "request"]


def request(model: Any, weights: NDArray[np.float64]) -> dict[str, Any]:
    """The body of ``PUT /_search/pipeline/<name>``; the ``hybrid`` query lists the lists."""
    names = list(model.list_names_)
    ws = _sum_to_one(weights)
    if model.normalizer == "rrf":
        proc = {"score-ranker-processor": {"combination": {
            "technique": "rrf", "rank_constant": int(model.rank_constant),
            "parameters": {"weights": ws}}}}  # fmt: skip
    else:
        proc = {
            "normalization-processor": {
                "normalization": {"technique": "min_max"},
                "combination": {"technique": "arithmetic_mean", "parameters": {"weights": ws}},
            }
        }
    return {"description": f"rankboost linear fusion of {', '.join(names)}",
            "phase_results_processors": [proc]}  # fmt: skip


def _sum_to_one(w: NDArray[np.float64]) -> list[float]:
    """Weights divided by their sum, as float32 values (OpenSearch checks |sum - 1| <= 0.01)."""
    return [float(np.float32(x)) for x in w / w.sum()]


def _os_check_weights(weights: list[float], n: int) -> list[np.float32]:
    """neural-search ``ScoreCombinationUtil``: validateWeights, validateIfWeightsMatchScores."""
    ws = [F32(x) for x in weights]
    if any(not (0.0 <= float(x) <= 1.0) for x in ws):
        raise ValueError(
            f"OpenSearch refuses the pipeline: all weights must be in range [0.0 ... 1.0], "
            f"submitted weights: {weights}"
        )
    total = F32(0.0)
    for x in ws:
        total = F32(total + x)
    if abs(1.0 - float(total)) > 0.01:
        raise ValueError(
            f"OpenSearch refuses the pipeline: sum of weights for combination must be equal "
            f"to 1.0, submitted weights: {weights}"
        )
    if ws and len(ws) != n:
        raise ValueError(
            f"OpenSearch refuses the query: number of weights [{len(ws)}] must match number of "
            f"sub-queries [{n}] in hybrid query"
        )
    return ws


def _os_minmax(s: NDArray[np.float32]) -> NDArray[np.float32]:
    """neural-search ``MinMaxScoreNormalizationTechnique.normalizeSingleScore`` (no bounds).

    ``max == min == score`` gives 1; else ``(s - min) / (max - min)``, and an exact 0 becomes
    ``MIN_SCORE = 0.001``.
    """
    lo, hi = F32(s.min()), F32(s.max())
    if hi == lo:
        return np.ones_like(s)
    v = ((s - lo) / F32(hi - lo)).astype(F32)
    v[v == 0] = F32(0.001)
    return v


def _os_rrf(n: int, k: int) -> NDArray[np.float32]:
    """neural-search ``RRFNormalizationTechnique``: ``1 / (k + position + 1)``, position from 0.

    Rounded to 10 decimals (``BigDecimal``, HALF_UP), then a float.
    """
    step = Decimal("1e-10")
    vals = [float((Decimal(1) / Decimal(k + p + 1)).quantize(step, rounding=ROUND_HALF_UP))
            for p in range(n)]  # fmt: skip
    return np.asarray(vals, dtype=np.float64).astype(F32)


def opensearch_scores(runs: RunsLike, pipeline: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Scores an OpenSearch hybrid query with this search pipeline gives the runs' documents.

    Written from opensearch-project/neural-search (3.7.0, commit 936d3c4d):
    ``ScoreCombiner`` starts every document's per-sub-query score at -1.0 ("as after
    normalization it's possible that score is 0.0"), the normalisation techniques
    (:func:`_os_minmax`, :func:`_os_rrf`), then
    ``ArithmeticMeanScoreCombinationTechnique.combine`` (sum of ``weight * score`` over the
    sub-queries with a score >= 0, divided by the sum of those weights) or
    ``RRFScoreCombinationTechnique.combine`` (the same sum, not divided), in float; weights
    are checked by ``ScoreCombinationUtil``.
    """
    items = as_run_list(runs, "opensearch_scores")
    proc = pipeline["phase_results_processors"][0]
    kind = next(iter(proc))
    spec = proc[kind]
    comb = spec.get("combination", {})
    ws = _os_check_weights(list(comb.get("parameters", {}).get("weights", [])), len(items))
    if not ws:
        ws = [F32(1.0)] * len(items)
    if kind == "score-ranker-processor":
        k = int(comb.get("rank_constant", 60))
        technique, mean = "rrf", False
    elif kind == "normalization-processor":
        technique = spec.get("normalization", {}).get("technique", "min_max")
        mean = comb.get("technique", "arithmetic_mean") == "arithmetic_mean"
        if technique != "min_max" or not mean:
            raise ValueError("opensearch_scores: only min_max + arithmetic_mean is modelled.")
        k = 0
    else:
        raise ValueError(f"opensearch_scores: processor {kind!r} is not modelled.")
    n = len(items)
    table: dict[str, dict[str, NDArray[np.float32]]] = {}
    for i, run in enumerate(items):
        for q, (docs, s, _) in by_query(run).items():
            v = _os_rrf(len(docs), k) if technique == "rrf" else _os_minmax(s)
            acc = table.setdefault(q, {})
            for d, x in zip(docs, v.tolist(), strict=True):
                acc.setdefault(d, np.full(n, -1.0, dtype=F32))[i] = F32(x)
    out: dict[str, dict[str, float]] = {}
    for q, docs_scores in table.items():
        res = out.setdefault(q, {})
        for d, sc in docs_scores.items():
            total, wsum = F32(0.0), F32(0.0)
            for x, w in zip(sc.tolist(), ws, strict=True):
                if x >= 0.0:
                    total = F32(total + F32(F32(x) * w))
                    wsum = F32(wsum + w)
            res[d] = 0.0 if wsum == 0 else float(F32(total / wsum) if mean else total)
    return out


ENGINE = Engine(
    name="opensearch",
    label="OpenSearch",
    normalizers={
        "rrf": Support(
            "exact",
            "score-ranker-processor: rrf with rank_constant and weights divided by their sum",
        ),
        "minmax": Support(
            "approximate",
            "normalization-processor (min_max + arithmetic_mean): a weighted mean over the "
            "sub-queries that returned the document, a sub-query's lowest document 0.001",
            refusal=(
                "export_linear: OpenSearch's normalization-processor (min_max + "
                "arithmetic_mean) divides by the weights of the sub-queries that returned "
                "each document and scores a sub-query's lowest document 0.001, so it does "
                "not rank as this weighted sum; train with normalizer='rrf' for an exact "
                "OpenSearch export (score-ranker-processor), or pass approximate=True "
                "(check the ranking with check_export)."
            ),
            option="approximate",
        ),
    },
    refusal=MINMAX_OR_RRF,
    request=request,
    options=(),
    scores=opensearch_scores,
    source="opensearch-project/neural-search 3.7.0 (commit 936d3c4d): ScoreCombiner, "
    "MinMaxScoreNormalizationTechnique, RRFNormalizationTechnique, ScoreCombinationUtil",
)
