"""Reference evaluators: each engine's fusion arithmetic on TREC runs, in 32-bit floats.

Written from the engines' source (cited per function). Elasticsearch and OpenSearch are
*modelled* only here; Qdrant (qdrant-client local mode) and Milvus Lite are also run for
real in the test suite, and their evaluators here serve ``fuse export --check-runs``
(:func:`rankboost.fusion.engines.check_export`). numpy ``float32`` arithmetic is IEEE-754
single precision, as Java's ``float``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .features import RunsLike, as_run_list
from .run import Run

__all__ = [
    "ENGINES",
    "elasticsearch_scores",
    "engine_fuse",
    "milvus_scores",
    "opensearch_scores",
    "qdrant_scores",
]

ENGINES = ("elasticsearch", "opensearch", "qdrant", "milvus")
_F32 = np.float32
# Java's Float.MIN_VALUE: the smallest positive float, which Elasticsearch's minmax
# normaliser starts its running maximum from.
_JAVA_FLOAT_MIN_VALUE = np.float32(1.4e-45)


def _by_query(run: Run) -> dict[str, tuple[list[str], NDArray[np.float32], NDArray[np.int64]]]:
    """Per query: (documents in rank order, float32 scores, ranks), as an engine returns hits."""
    srt = run.sorted()
    out: dict[str, Any] = {}
    q = srt.qid
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    ends = np.r_[starts[1:], q.shape[0]]
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        out[str(q[a])] = (srt.docid[a:b].tolist(), srt.score[a:b].astype(_F32), srt.rank[a:b])
    return out


def _es_minmax(s: NDArray[np.float32]) -> NDArray[np.float32]:
    """Elasticsearch ``MinMaxScoreNormalizer.normalizeScores`` (x-pack/plugin/rank-rrf, 9.x).

    ``min`` starts at ``Float.MAX_VALUE`` and ``max`` at ``Float.MIN_VALUE`` (the smallest
    *positive* float, so a list of scores all <= 0 keeps that max); ``|min - max| < 1e-6``
    gives every document 1; else ``(s - min) / (max - min)`` in float.
    """
    lo = _F32(min(float(s.min()), float(np.finfo(_F32).max)))
    hi = _F32(max(float(s.max()), float(_JAVA_FLOAT_MIN_VALUE)))
    if abs(_F32(lo - hi)) < _F32(1e-6):
        return np.ones_like(s)
    return ((s - lo) / _F32(hi - lo)).astype(_F32)


def elasticsearch_scores(runs: RunsLike, body: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Scores Elasticsearch's ``linear`` or ``rrf`` retriever gives the runs' documents.

    Written from Elasticsearch's source (x-pack/plugin/rank-rrf, 9.x):
    ``LinearRetrieverBuilder.combineInnerRetrieverResults`` (per retriever, normalise its
    hits, then ``score += weight * normalized`` in float; a document a retriever did not
    return gets nothing from it), ``MinMaxScoreNormalizer`` (:func:`_es_minmax`),
    ``LinearRetrieverComponent`` and ``RRFRetrieverComponent`` (a negative weight is refused:
    "[weight] must be non-negative"), and ``RRFRetrieverBuilder``'s weighted sum
    ``score += weights[i] * (1.0f / (rankConstant + rank))``, ranks from 1 (9.1+; earlier
    releases have no ``weight``). The runs are the sub-retrievers' hits, in the body's order.
    """
    items = as_run_list(runs, "elasticsearch_scores")
    kind = next(iter(body["retriever"]))
    spec = body["retriever"][kind]
    comps = spec["retrievers"]
    if len(comps) != len(items):
        raise ValueError(
            f"elasticsearch_scores: the request has {len(comps)} retrievers and {len(items)} "
            "runs were given."
        )
    weights = [_F32(c.get("weight", 1.0)) for c in comps]
    for w in weights:
        if w < 0 or not np.isfinite(w):
            raise ValueError(f"Elasticsearch refuses the request: [weight] must be non-negative, "
                             f"found [{float(w)}]")  # fmt: skip
    out: dict[str, dict[str, Any]] = {}
    for run, comp, w in zip(items, comps, weights, strict=True):
        for q, (docs, s, _ranks) in _by_query(run).items():
            if kind == "linear":
                norm = comp.get("normalizer", "none")
                if norm == "minmax":
                    v = _es_minmax(s)
                elif norm == "none":
                    v = s
                else:
                    raise ValueError(f"elasticsearch_scores: normalizer {norm!r} is not modelled.")
            elif kind == "rrf":
                k = int(spec.get("rank_constant", 60))
                v = (_F32(1.0) / (_F32(k) + np.arange(1, len(docs) + 1).astype(_F32))).astype(_F32)
            else:
                raise ValueError(f"elasticsearch_scores: retriever {kind!r} is not modelled.")
            acc = out.setdefault(q, {})
            for d, x in zip(docs, v.tolist(), strict=True):
                acc[d] = _F32(acc.get(d, _F32(0.0)) + _F32(w * _F32(x)))
    return {q: {d: float(x) for d, x in m.items()} for q, m in out.items()}


def _os_check_weights(weights: list[float], n: int) -> list[np.float32]:
    """neural-search ``ScoreCombinationUtil``: validateWeights, validateIfWeightsMatchScores."""
    ws = [_F32(x) for x in weights]
    if any(not (0.0 <= float(x) <= 1.0) for x in ws):
        raise ValueError(
            f"OpenSearch refuses the pipeline: all weights must be in range [0.0 ... 1.0], "
            f"submitted weights: {weights}"
        )
    total = _F32(0.0)
    for x in ws:
        total = _F32(total + x)
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
    lo, hi = _F32(s.min()), _F32(s.max())
    if hi == lo:
        return np.ones_like(s)
    v = ((s - lo) / _F32(hi - lo)).astype(_F32)
    v[v == 0] = _F32(0.001)
    return v


def _os_rrf(n: int, k: int) -> NDArray[np.float32]:
    """neural-search ``RRFNormalizationTechnique``: ``1 / (k + position + 1)``, position from 0.

    Rounded to 10 decimals (``BigDecimal``, HALF_UP), then a float.
    """
    from decimal import ROUND_HALF_UP, Decimal

    step = Decimal("1e-10")
    vals = [float((Decimal(1) / Decimal(k + p + 1)).quantize(step, rounding=ROUND_HALF_UP))
            for p in range(n)]  # fmt: skip
    return np.asarray(vals, dtype=np.float64).astype(_F32)


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
        ws = [_F32(1.0)] * len(items)
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
        for q, (docs, s, _) in _by_query(run).items():
            v = _os_rrf(len(docs), k) if technique == "rrf" else _os_minmax(s)
            acc = table.setdefault(q, {})
            for d, x in zip(docs, v.tolist(), strict=True):
                acc.setdefault(d, np.full(n, -1.0, dtype=_F32))[i] = _F32(x)
    out: dict[str, dict[str, float]] = {}
    for q, docs_scores in table.items():
        res = out.setdefault(q, {})
        for d, sc in docs_scores.items():
            total, wsum = _F32(0.0), _F32(0.0)
            for x, w in zip(sc.tolist(), ws, strict=True):
                if x >= 0.0:
                    total = _F32(total + _F32(_F32(x) * w))
                    wsum = _F32(wsum + w)
            res[d] = 0.0 if wsum == 0 else float(_F32(total / wsum) if mean else total)
    return out


def _weighted_sum(
    runs: RunsLike, weights: list[float], values: Any, owner: str
) -> dict[str, dict[str, float]]:
    """``sum_i weights[i] * values(run_i)`` per document (absent: nothing), then float32."""
    items = as_run_list(runs, owner)
    if len(weights) != len(items):
        raise ValueError(
            f"{owner}: the request fuses {len(weights)} lists and {len(items)} runs were given."
        )
    acc: dict[str, dict[str, float]] = {}
    for run, w in zip(items, weights, strict=True):
        srt = run.sorted()
        for q, d, x in zip(srt.qid.tolist(), srt.docid.tolist(), values(srt).tolist(),
                           strict=True):  # fmt: skip
            m = acc.setdefault(q, {})
            m[d] = m.get(d, 0.0) + float(w) * x
    return {q: {d: float(_F32(x)) for d, x in m.items()} for q, m in acc.items()}


def qdrant_scores(runs: RunsLike, body: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Scores Qdrant's local mode gives the runs' documents for a :mod:`._qdrant` request.

    qdrant-client 1.20: each prefetch fuses its one list (``reciprocal_rank_fusion``:
    ``1 / (pos + k)``, pos from 0; ``distribution_based_score_fusion``), then
    ``_rescore_with_formula`` evaluates ``sum(mult(w_i, $score[i]))`` in Python floats with
    the defaults for absent documents, and rounds to float32.
    """
    from .features import normalise_scores

    weights = [float(t["mult"][0]) for t in body["query"]["formula"]["sum"]]
    inner = body["prefetch"][0]["query"]
    if "rrf" in inner:
        k = int(inner["rrf"]["k"])

        def values(r: Run) -> Any:
            return 1.0 / (k - 1 + r.rank.astype(np.float64))
    else:

        def values(r: Run) -> Any:
            return normalise_scores(r, "dbsf")

    return _weighted_sum(runs, weights, values, "qdrant_scores")


def milvus_scores(runs: RunsLike, body: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Scores Milvus Lite's ``hybrid_search`` gives the runs' documents (IP fields).

    milvus-lite 3.2 ``MergeOp``: ``_merge_weighted`` sums ``w_i * (0.5 + atan(s) / pi)``
    (``norm_score=True``, IP) over the lists that returned the document; ``_merge_rrf``
    sums ``1 / (k + rank)``. Returned scores are float32; here times ``score_scale``.
    """
    rr = body["rerank"]
    n = len(body["search"])
    if rr["strategy"] == "weighted":
        weights = [float(x) for x in rr["params"]["weights"]]
        norm = bool(rr["params"].get("norm_score", False))

        def values(r: Run) -> Any:
            return 0.5 + np.arctan(r.score) / np.pi if norm else r.score
    else:
        weights, k = [1.0] * n, int(rr["params"]["k"])

        def values(r: Run) -> Any:
            return 1.0 / (k + r.rank.astype(np.float64))

    out = _weighted_sum(runs, weights, values, "milvus_scores")
    scale = float(body.get("score_scale", 1.0))
    return {q: {d: x * scale for d, x in m.items()} for q, m in out.items()}


def engine_fuse(runs: RunsLike, body: dict[str, Any], engine: str) -> Run:
    """The run an engine returns for ``body`` (ties by document id, as :meth:`Run.from_dict`)."""
    if engine == "elasticsearch":
        return Run.from_dict(elasticsearch_scores(runs, body), name=engine)
    if engine == "opensearch":
        return Run.from_dict(opensearch_scores(runs, body), name=engine)
    if engine == "qdrant":
        return Run.from_dict(qdrant_scores(runs, body), name=engine)
    if engine == "milvus":
        return Run.from_dict(milvus_scores(runs, body), name=engine)
    raise ValueError(f"engine must be one of {ENGINES}; got {engine!r}.")
