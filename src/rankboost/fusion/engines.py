"""Hand a linear fusion to a search engine, and evaluate it as the engine would.

:func:`export_linear` writes a :class:`~rankboost.fusion.linear.LinearFusion` as the
engine's own hybrid request or pipeline; ``engine_scores`` functions reproduce the engine's
arithmetic on TREC runs (written from the engines' source, cited per function), so
:func:`check_export` can verify that the engine ranks exactly as ``fuse apply`` does.

==========================  ====================================  =========================
engine / target             ``normalizer="minmax"``               ``normalizer="rrf"``
==========================  ====================================  =========================
``"elasticsearch"``         ``linear`` retriever, ``minmax``      ``rrf`` retriever with
                            normaliser and ``weight`` per          ``weight`` per retriever
                            retriever (exact)                      and ``rank_constant``
                                                                   (exact)
``"opensearch"``            ``normalization-processor``:           ``score-ranker-processor``:
                            ``min_max`` + ``arithmetic_mean``      ``rrf`` with ``weights``
                            (a weighted *mean* over the            summing to 1 (exact)
                            sub-queries that returned the
                            document, lowest score 0.001: not
                            the same ranking; refused unless
                            ``approximate=True``)
==========================  ====================================  =========================

Engines compute in 32-bit floats; the evaluators do too (numpy ``float32`` arithmetic is
IEEE-754 single precision, as Java's ``float``), and the model keeps float32 weights.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._atomic import atomic_write_text
from .features import RunsLike, as_run_list
from .run import Run

__all__ = [
    "ENGINES",
    "check_export",
    "elasticsearch_scores",
    "engine_fuse",
    "export_linear",
    "opensearch_scores",
]

ENGINES = ("elasticsearch", "opensearch")
_F32 = np.float32
# Java's Float.MIN_VALUE: the smallest positive float, which Elasticsearch's minmax
# normaliser starts its running maximum from.
_JAVA_FLOAT_MIN_VALUE = np.float32(1.4e-45)


# ------------------------------------------------------------------ export --------------
def export_linear(
    model: Any,
    engine: str,
    path: str | os.PathLike[str] | None = None,
    *,
    retrievers: list[Any] | None = None,
    rank_window_size: int = 100,
    approximate: bool = False,
) -> dict[str, Any]:
    """The engine request (Elasticsearch) or search pipeline (OpenSearch) of a linear fusion.

    Parameters
    ----------
    model : LinearFusion
        A fitted linear fusion.
    engine : {"elasticsearch", "opensearch"}
    path : path-like, default=None
        Also write the JSON there (atomic).
    retrievers : list, default=None
        Elasticsearch: the sub-retriever objects, one per list in the model's order
        (``{"standard": {...}}``, ``{"knn": {...}}``); None writes placeholders naming the
        lists. Unused for OpenSearch, whose ``hybrid`` query lists the sub-queries in the
        model's order.
    rank_window_size : int, default=100
        Elasticsearch: documents taken from each retriever (the runs' depth).
    approximate : bool, default=False
        OpenSearch with min-max: the ``normalization-processor`` averages over the
        sub-queries that returned a document, not a weighted sum, so it ranks differently;
        True writes it anyway.

    Returns
    -------
    dict
        The JSON body.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.fusion.linear import LinearFusion
    >>> from rankboost.fusion.engines import export_linear
    >>> lin = LinearFusion(normalizer="rrf")
    >>> lin.weights_, lin.list_names_ = np.array([3.0, 1.0]), ["bm25", "dense"]
    >>> body = export_linear(lin, "opensearch")
    >>> body["phase_results_processors"][0]["score-ranker-processor"]["combination"]
    {'technique': 'rrf', 'rank_constant': 60, 'parameters': {'weights': [0.75, 0.25]}}
    """
    w = _model_weights(model)
    names = list(model.list_names_)
    if engine == "elasticsearch":
        subs = (
            retrievers
            if retrievers is not None
            else [{"standard": {"query": f"<the query of {n}>"}} for n in names]
        )
        if len(subs) != len(names):
            raise ValueError(
                f"export_linear: {len(subs)} retrievers given for a model of {len(names)} lists "
                f"({', '.join(names)}); pass one per list, in that order."
            )
        if model.normalizer == "minmax":
            items = [{"retriever": r, "weight": float(x), "normalizer": "minmax"}
                     for r, x in zip(subs, w, strict=True)]  # fmt: skip
            body = {"linear": {"retrievers": items, "rank_window_size": int(rank_window_size)}}
        else:
            items = [{"retriever": r, "weight": float(x)} for r, x in zip(subs, w, strict=True)]
            body = {"rrf": {"retrievers": items, "rank_constant": int(model.rank_constant),
                            "rank_window_size": int(rank_window_size)}}  # fmt: skip
        out: dict[str, Any] = {"retriever": body}
    elif engine == "opensearch":
        ws = _sum_to_one(w)
        if model.normalizer == "rrf":
            proc = {"score-ranker-processor": {"combination": {
                "technique": "rrf", "rank_constant": int(model.rank_constant),
                "parameters": {"weights": ws}}}}  # fmt: skip
        else:
            if not approximate:
                raise ValueError(
                    "export_linear: OpenSearch's normalization-processor (min_max + "
                    "arithmetic_mean) divides by the weights of the sub-queries that returned "
                    "each document and scores a sub-query's lowest document 0.001, so it does "
                    "not rank as this weighted sum; train with normalizer='rrf' for an exact "
                    "OpenSearch export (score-ranker-processor), or pass approximate=True "
                    "(check the ranking with check_export)."
                )
            proc = {
                "normalization-processor": {
                    "normalization": {"technique": "min_max"},
                    "combination": {"technique": "arithmetic_mean", "parameters": {"weights": ws}},
                }
            }
        out = {"description": f"rankboost linear fusion of {', '.join(names)}",
               "phase_results_processors": [proc]}  # fmt: skip
    else:
        raise ValueError(f"engine must be one of {ENGINES}; got {engine!r}.")
    if path is not None:
        atomic_write_text(path, json.dumps(out, indent=1, allow_nan=False) + "\n")
    return out


def _model_weights(model: Any) -> NDArray[np.float64]:
    if not hasattr(model, "weights_"):
        raise ValueError("export_linear: the model is not fitted (no weights_); call fit first.")
    w = np.asarray(model.weights_, dtype=np.float64)
    if not np.all(np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
        raise ValueError(
            f"export_linear: the engines take finite weights >= 0, not all 0; got {w.tolist()}."
        )
    return w


def _sum_to_one(w: NDArray[np.float64]) -> list[float]:
    """Weights divided by their sum, as float32 values (OpenSearch checks |sum - 1| <= 0.01)."""
    return [float(np.float32(x)) for x in w / w.sum()]


# ------------------------------------------------------------------ evaluators ----------
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


def engine_fuse(runs: RunsLike, body: dict[str, Any], engine: str) -> Run:
    """The run an engine returns for ``body`` (ties by document id, as :meth:`Run.from_dict`)."""
    if engine == "elasticsearch":
        return Run.from_dict(elasticsearch_scores(runs, body), name=engine)
    if engine == "opensearch":
        return Run.from_dict(opensearch_scores(runs, body), name=engine)
    raise ValueError(f"engine must be one of {ENGINES}; got {engine!r}.")


def check_export(model: Any, runs: RunsLike, engine: str, body: dict[str, Any]) -> int:
    """Check that the engine ranks ``runs`` exactly as ``model.fuse`` does; return #queries.

    Raises ``ValueError`` naming the first query whose ranking differs, and how many do.
    """
    a = _rankings(model.fuse(runs).sorted())
    b = _rankings(engine_fuse(runs, body, engine).sorted())
    bad = sorted(q for q in set(a) | set(b) if a.get(q) != b.get(q))
    if bad:
        q = bad[0]
        ours, theirs = a.get(q, []), b.get(q, [])
        k = next((i for i, (x, y) in enumerate(zip(ours, theirs, strict=False)) if x != y), 0)
        where = (
            f"e.g. query {q!r}, rank {k + 1}: fuse apply puts {ours[k]!r} there, {engine} "
            f"{theirs[k]!r}"
            if k < min(len(ours), len(theirs))
            else f"e.g. query {q!r}: {len(ours)} documents fused, {len(theirs)} by {engine}"
        )
        raise ValueError(
            f"check_export: {engine} ranks {len(bad)} of {len(a)} queries differently from "
            f"fuse apply ({where}).{_why_different(model, runs, engine, body, bad)}"
        )
    return len(a)


def _why_different(
    model: Any, runs: RunsLike, engine: str, body: dict[str, Any], bad: list[str]
) -> str:
    """The cause of the differences when it is Elasticsearch's min-max of scores <= 0.

    ``MinMaxScoreNormalizer`` starts its maximum at ``Float.MIN_VALUE`` (> 0): a list whose
    scores are all <= 0 is not scaled to [0, 1] (a one-document list scores 0, where it
    scores 1 with positive scores, in OpenSearch and in ``fuse apply``). Min-max is unchanged
    by adding a constant to a query's scores, so the runs shifted to scores >= 1 show whether
    this is the whole difference.
    """
    if getattr(model, "normalizer", None) == "rrf":
        return _rank_gaps(model, runs, engine, body, bad)
    if engine != "elasticsearch" or getattr(model, "normalizer", None) != "minmax":
        return ""
    items = as_run_list(runs, "check_export")
    nonpositive = []
    shifted = []
    for r in items:
        q = r.qid
        order = np.argsort(q, kind="stable")
        starts = np.flatnonzero(np.r_[True, q[order][1:] != q[order][:-1]])
        top = np.maximum.reduceat(r.score[order], starts)
        low = np.minimum.reduceat(r.score[order], starts)
        if np.any(top <= 0):
            nonpositive.append((r.name, int(np.sum(top <= 0)), len(starts)))
        lift = np.empty_like(r.score)
        lift[order] = np.repeat(1.0 - low, np.diff(np.r_[starts, len(q)]))
        shifted.append(Run(r.qid, r.docid, r.rank, r.score + lift, name=r.name))
    if not nonpositive:
        return ""
    a = _rankings(model.fuse(shifted).sorted())
    b = _rankings(engine_fuse(shifted, body, engine).sorted())
    still = sum(a.get(q) != b.get(q) for q in bad)
    name, n_bad, n_q = nonpositive[0]
    cause = (
        f" Every one of these differences comes from scores <= 0 (the run {name!r} has only "
        f"scores <= 0 in {n_bad} of its {n_q} queries"
        if still == 0
        else f" {len(bad) - still} of them come from scores <= 0 (the run {name!r} has only "
        f"scores <= 0 in {n_bad} of its {n_q} queries"
    )
    return (
        f"{cause}): Elasticsearch's minmax normaliser starts its maximum at Float.MIN_VALUE, "
        "so such a list is not scaled to [0, 1] there (a one-document list scores 0 instead "
        "of 1). Elasticsearch's own scores are never negative (Lucene requires scores >= 0), "
        "so this comes from runs made elsewhere, such as 'rankboost convert' (score = -rank): "
        "check the export with runs of the engine's retrievers, or add a constant to every "
        "score of the runs so that they are > 0 (min-max does not change)."
    )


def _rank_gaps(
    model: Any, runs: RunsLike, engine: str, body: dict[str, Any], bad: list[str]
) -> str:
    """The cause of the differences when the runs' ranks are not the positions 1..n.

    ``fuse apply`` computes RRF from the rank column; the engines from the position of the
    hit in the retriever's results, which is the rank column of a run an engine wrote.
    """
    items = as_run_list(runs, "check_export")
    renumbered = []
    gap = None
    for r in items:
        srt = r.sorted()
        q = srt.qid
        starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
        first = np.repeat(starts, np.diff(np.r_[starts, len(q)]))
        position = np.arange(len(q)) - first + 1
        if gap is None and np.any(position != srt.rank):
            k = int(np.flatnonzero(position != srt.rank)[0])
            gap = (r.name, str(q[k]), srt.rank[first[k] : k + 1].tolist())
        renumbered.append(Run(srt.qid, srt.docid, position, srt.score, name=r.name))
    if gap is None:
        return ""
    a = _rankings(model.fuse(renumbered).sorted())
    b = _rankings(engine_fuse(renumbered, body, engine).sorted())
    still = sum(a.get(q) != b.get(q) for q in bad)
    share = "Every one of these differences" if still == 0 else f"{len(bad) - still} of them"
    return (
        f" {share} comes from ranks that are not the positions 1, 2, 3, ... of the query's "
        f"results (run {gap[0]!r}, query {gap[1]!r}: ranks {gap[2]}): the engine's RRF counts "
        "the position of a hit among the retriever's results, 'fuse apply' the run's rank "
        "column. A run written from an engine's results has ranks 1..n; these (such as "
        "'rankboost convert' runs, which keep the LETOR ranks) do not: check the export with "
        "runs of the engine's retrievers."
    )


def _rankings(run: Run) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for q, d in zip(run.qid.tolist(), run.docid.tolist(), strict=True):
        out.setdefault(q, []).append(d)
    return out
