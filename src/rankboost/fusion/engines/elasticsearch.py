"""Elasticsearch: the ``linear`` and ``rrf`` retrievers, and their arithmetic in float32.

``normalizer="minmax"``: a ``linear`` retriever, one ``{"retriever", "weight",
"normalizer": "minmax"}`` per list (exact); ``normalizer="rrf"``: an ``rrf`` retriever with a
``weight`` per retriever and ``rank_constant`` (exact; Elasticsearch 9.1+). Elasticsearch is
*modelled*: :func:`elasticsearch_scores` is written from its source (no server is in the
registries), and :func:`explain` names the one case where it ranks otherwise than
``fuse apply``: runs whose scores are all <= 0 (Elasticsearch's own scores never are).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..features import RunsLike, as_run_list
from ..run import Run
from ._base import F32, MINMAX_OR_RRF, Engine, Support, by_query, one_per_list, rankings

__all__ = ["ENGINE", "elasticsearch_scores", "explain", "request"]

# Java's Float.MIN_VALUE: the smallest positive float, which Elasticsearch's minmax
# normaliser starts its running maximum from.
_JAVA_FLOAT_MIN_VALUE = np.float32(1.4e-45)


def request(
    model: Any,
    weights: NDArray[np.float64],
    *,
    retrievers: list[Any] | None,
    rank_window_size: int,
) -> dict[str, Any]:
    """The search request's ``retriever`` object; ``retrievers``: one sub-retriever per list.

    None writes placeholders naming the lists (``{"standard": {"query": "<the query of
    NAME>"}}``).
    """
    names = list(model.list_names_)
    subs = (
        retrievers
        if retrievers is not None
        else [{"standard": {"query": f"<the query of {n}>"}} for n in names]
    )
    one_per_list(model, subs, "export_linear", "retrievers", show=False)
    if model.normalizer == "minmax":
        items = [{"retriever": r, "weight": float(x), "normalizer": "minmax"}
                 for r, x in zip(subs, weights, strict=True)]  # fmt: skip
        body = {"linear": {"retrievers": items, "rank_window_size": int(rank_window_size)}}
    else:
        items = [{"retriever": r, "weight": float(x)} for r, x in zip(subs, weights, strict=True)]
        body = {"rrf": {"retrievers": items, "rank_constant": int(model.rank_constant),
                        "rank_window_size": int(rank_window_size)}}  # fmt: skip
    return {"retriever": body}


def _es_minmax(s: NDArray[np.float32]) -> NDArray[np.float32]:
    """Elasticsearch ``MinMaxScoreNormalizer.normalizeScores`` (x-pack/plugin/rank-rrf, 9.x).

    ``min`` starts at ``Float.MAX_VALUE`` and ``max`` at ``Float.MIN_VALUE`` (the smallest
    *positive* float, so a list of scores all <= 0 keeps that max); ``|min - max| < 1e-6``
    gives every document 1; else ``(s - min) / (max - min)`` in float.
    """
    lo = F32(min(float(s.min()), float(np.finfo(F32).max)))
    hi = F32(max(float(s.max()), float(_JAVA_FLOAT_MIN_VALUE)))
    if abs(F32(lo - hi)) < F32(1e-6):
        return np.ones_like(s)
    return ((s - lo) / F32(hi - lo)).astype(F32)


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
    weights = [F32(c.get("weight", 1.0)) for c in comps]
    for w in weights:
        if w < 0 or not np.isfinite(w):
            raise ValueError(f"Elasticsearch refuses the request: [weight] must be non-negative, "
                             f"found [{float(w)}]")  # fmt: skip
    out: dict[str, dict[str, Any]] = {}
    for run, comp, w in zip(items, comps, weights, strict=True):
        for q, (docs, s, _ranks) in by_query(run).items():
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
                v = (F32(1.0) / (F32(k) + np.arange(1, len(docs) + 1).astype(F32))).astype(F32)
            else:
                raise ValueError(f"elasticsearch_scores: retriever {kind!r} is not modelled.")
            acc = out.setdefault(q, {})
            for d, x in zip(docs, v.tolist(), strict=True):
                acc[d] = F32(acc.get(d, F32(0.0)) + F32(w * F32(x)))
    return {q: {d: float(x) for d, x in m.items()} for q, m in out.items()}


def explain(model: Any, runs: RunsLike, body: dict[str, Any], bad: list[str]) -> str:
    """The cause of the differences when it is Elasticsearch's min-max of scores <= 0.

    ``MinMaxScoreNormalizer`` starts its maximum at ``Float.MIN_VALUE`` (> 0): a list whose
    scores are all <= 0 is not scaled to [0, 1] (a one-document list scores 0, where it
    scores 1 with positive scores, in OpenSearch and in ``fuse apply``). Min-max is unchanged
    by adding a constant to a query's scores, so the runs shifted to scores >= 1 show whether
    this is the whole difference.
    """
    if getattr(model, "normalizer", None) != "minmax":
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
    a = rankings(model.fuse(shifted).sorted())
    b = rankings(Run.from_dict(elasticsearch_scores(shifted, body), name=ENGINE.name).sorted())
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


ENGINE = Engine(
    name="elasticsearch",
    label="Elasticsearch",
    normalizers={
        "minmax": Support(
            "exact",
            "linear retriever: one {retriever, weight, normalizer: minmax} per list, "
            "rank_window_size = the runs' depth",
        ),
        "rrf": Support("exact", "rrf retriever with a weight per retriever and rank_constant"),
    },
    refusal=MINMAX_OR_RRF,
    request=request,
    options=("retrievers", "rank_window_size"),
    scores=elasticsearch_scores,
    source="Elasticsearch 9.x x-pack/plugin/rank-rrf (LinearRetrieverBuilder, "
    "MinMaxScoreNormalizer, RRFRetrieverBuilder)",
    explain=explain,
)
