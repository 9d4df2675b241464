"""Milvus: a linear fusion as a ``hybrid_search`` (ranker and parameters), its arithmetic, runs.

The request has the shape of Milvus's RESTful ``advanced_search`` body (``"search"``: one
ANN request per list, ``"rerank"``: the ranker, ``"limit"``); :func:`milvus_search_args`
turns it into pymilvus ``AnnSearchRequest`` objects and a ranker. Written from milvus-lite
3.2 (``function/ops/merge_op.py``; pymilvus 3.0 ``WeightedRanker``/``RRFRanker``):

* ``normalizer="atan"``: ``WeightedRanker(*w, norm_score=True)``, which sums
  ``w_i * (0.5 + atan(s) / pi)`` over the lists that returned the document on **IP**
  fields (COSINE is ``(1 + s) / 2``, BM25 ``2 atan(s) / pi``, L2 ``1 - 2 atan(s) / pi``:
  the fields must be indexed with IP, checked by :func:`check_milvus_collection`).
  Milvus takes weights in [0, 1], so they are divided by the largest: the served scores
  are ``fuse apply``'s divided by ``"score_scale"``, the same ranking.
* ``normalizer="rrf"``: ``RRFRanker(k)``, ``sum 1 / (k + rank)``, unweighted: exact only
  when the model's weights are all equal (then scores are ``fuse apply``'s divided by the
  weight); other weights are refused.

Min-max and DBSF have no Milvus ranker and are refused. What was run for real: milvus-lite
through ``MilvusClient("file.db")``. :func:`milvus_scores` is that arithmetic (``fuse export
--check-runs``); :func:`milvus_run` and :func:`milvus_fused_run` query a real collection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._compat import require
from ..features import RunsLike
from ..run import Run
from ._base import Engine, Support, run_of_rows, vector_names, weighted_sum

__all__ = [
    "ENGINE",
    "body_fields",
    "check_milvus_collection",
    "milvus_body",
    "milvus_fused_run",
    "milvus_run",
    "milvus_scores",
    "milvus_search_args",
    "milvus_sparse",
]

#: The term id a document without terms carries (Milvus refuses an all-zero sparse vector):
#: the last id Milvus accepts, which no query's vector holds, so every score is unchanged.
NO_TERMS = 2**32 - 2


def milvus_sparse(indices: Sequence[int], values: Sequence[float]) -> dict[int, float]:
    """A sparse vector as Milvus takes it, ``{term id: weight}`` (zero weights left out).

    A document without terms (an empty text: Cranfield has two) gets ``{NO_TERMS: 1.0}``:
    Milvus refuses an all-zero sparse vector ("must contain at least one nonzero float32
    weight"), and no query holds that term, so the document is in the collection for its
    other fields and scores nothing on this one.

    >>> milvus_sparse([3, 7], [0.5, 0.0]), milvus_sparse([], [])
    ({3: 0.5}, {4294967294: 1.0})
    """
    row = {int(i): float(v) for i, v in zip(indices, values, strict=True) if v != 0.0}
    return row or {NO_TERMS: 1.0}


def milvus_body(
    model: Any,
    weights: Sequence[float],
    *,
    vectors: Sequence[str] | None,
    limit: int,
    rank_window_size: int,
) -> dict[str, Any]:
    """The hybrid search of a linear fusion (RESTful ``advanced_search`` shape).

    ``vectors``: the collection's vector field of each list (None: the list names);
    ``rank_window_size``: the ``limit`` of every ANN request (the runs' depth).
    """
    using = vector_names(model, vectors, "export milvus", "fields")
    w = np.asarray(weights, dtype=np.float64)
    if model.normalizer == "atan":
        top = float(w.max())
        rerank: dict[str, Any] = {
            "strategy": "weighted",
            "params": {"weights": [float(x / top) for x in w], "norm_score": True},
        }
        scale = top
    else:  # "rrf", with equal weights (ENGINE's condition, checked by export_linear)
        rerank = {"strategy": "rrf", "params": {"k": int(model.rank_constant)}}
        scale = float(w[0])
    search = [
        {"annsField": f, "data": [f"<query vector of {f}>"], "limit": int(rank_window_size),
         "searchParams": {"metric_type": "IP"}}
        for f in using
    ]  # fmt: skip
    return {"search": search, "rerank": rerank, "limit": int(limit), "score_scale": scale}


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

    out = weighted_sum(runs, weights, values, "milvus_scores")
    scale = float(body.get("score_scale", 1.0))
    return {q: {d: x * scale for d, x in m.items()} for q, m in out.items()}


def body_fields(body: Mapping[str, Any]) -> list[str]:
    """The vector fields of a request written by :func:`milvus_body`, in order."""
    return [s["annsField"] for s in body["search"]]


def milvus_search_args(
    body: Mapping[str, Any], query_vectors: Mapping[str, Sequence[Any]]
) -> dict[str, Any]:
    """``client.hybrid_search(collection, **args)``; ``query_vectors[field]``: one per query."""
    require("pymilvus", "Milvus export")
    from pymilvus import AnnSearchRequest, RRFRanker, WeightedRanker

    fields = body_fields(body)
    missing = [f for f in fields if f not in query_vectors]
    if missing:
        raise ValueError(
            f"milvus request: no query vectors for {', '.join(map(repr, missing))} (the request "
            f"fuses {', '.join(fields)}); pass them for every field."
        )
    reqs = [
        AnnSearchRequest(
            [_plain(v) for v in query_vectors[s["annsField"]]],
            s["annsField"],
            dict(s.get("searchParams", {})),
            limit=int(s["limit"]),
        )
        for s in body["search"]
    ]
    rr = body["rerank"]
    if rr["strategy"] == "weighted":
        ranker: Any = WeightedRanker(
            *rr["params"]["weights"], norm_score=rr["params"]["norm_score"]
        )
    elif rr["strategy"] == "rrf":
        ranker = RRFRanker(int(rr["params"]["k"]))
    else:
        raise ValueError(
            f"milvus request: rerank strategy {rr['strategy']!r} is not one rankboost writes."
        )
    return {"reqs": reqs, "ranker": ranker, "limit": int(body["limit"])}


def _plain(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, Mapping) and set(v) == {"indices", "values"}:  # Qdrant's sparse form
        return {int(k): float(x) for k, x in zip(v["indices"], v["values"], strict=True)}
    if isinstance(v, Mapping):
        return {int(k): float(x) for k, x in v.items()}
    return v


def check_milvus_collection(
    client: Any, collection: str, body: Mapping[str, Any], query_vectors: Mapping[str, Any]
) -> None:
    """Raise ``ValueError`` if a field is missing, a dimension differs or a metric is not IP."""
    desc = client.describe_collection(collection)
    fields = {f["name"]: f for f in desc["fields"]}
    for name in body_fields(body):
        if name not in fields:
            raise ValueError(
                f"milvus collection {collection!r} has no field {name!r} (it has "
                f"{', '.join(map(repr, fields))}); export with --vectors naming the "
                "collection's field of each list, in the model's order."
            )
        dim = fields[name].get("params", {}).get("dim")
        vecs = query_vectors.get(name)
        if dim is not None and vecs and not isinstance(vecs[0], Mapping):
            n = len(vecs[0])
            if n != int(dim):
                raise ValueError(
                    f"milvus collection {collection!r}: field {name!r} has dimension {dim} but "
                    f"the query vector has {n}; embed the queries with the model that embedded "
                    "the documents."
                )
        if body["rerank"]["strategy"] == "weighted":
            metric = str(client.describe_index(collection, name).get("metric_type", "?"))
            if metric.upper() != "IP":
                raise ValueError(
                    f"milvus collection {collection!r}: field {name!r} is indexed with metric "
                    f"{metric}, which WeightedRanker normalises otherwise than arctan (the "
                    "trained 'atan'); index it with metric_type='IP' (IP on unit vectors is "
                    "cosine)."
                )


def milvus_run(
    client: Any,
    collection: str,
    field: str,
    queries: Mapping[str, Any],
    depth: int,
    *,
    name: str | None = None,
) -> Run:
    """The engine's own run of one vector field (IP), top ``depth``, primary keys as ids."""
    qids = list(queries)
    res = client.search(
        collection, [_plain(queries[q]) for q in qids], anns_field=field, limit=int(depth),
        search_params={"metric_type": "IP"},
    )  # fmt: skip
    return _run(qids, res, name or field, f"milvus_run ({field})")


def milvus_fused_run(
    client: Any,
    collection: str,
    body: Mapping[str, Any],
    queries: Mapping[str, Mapping[str, Any]],
    *,
    rescale: bool = True,
) -> Run:
    """What Milvus serves for ``body`` (``queries[q][field]``), scores times ``score_scale``."""
    qids = list(queries)
    per_field = {f: [queries[q][f] for q in qids] for f in body_fields(body)}
    check_milvus_collection(client, collection, body, {f: v[:1] for f, v in per_field.items()})
    res = client.hybrid_search(collection, **milvus_search_args(body, per_field))
    scale = float(body.get("score_scale", 1.0)) if rescale else 1.0
    return _run(qids, res, "milvus", "milvus_fused_run", scale)


def _run(qids: list[str], res: Any, name: str, owner: str, scale: float = 1.0) -> Run:
    rows = [
        (q, str(h["id"]), i + 1, float(h["distance"]) * scale)
        for q, hits in zip(qids, res, strict=True)
        for i, h in enumerate(hits)
    ]
    return run_of_rows(rows, name, owner, len(qids))


def _equal(w: NDArray[np.float64]) -> bool:
    return bool(np.allclose(w, w[0], rtol=1e-6, atol=0))


ENGINE = Engine(
    name="milvus",
    label="Milvus",
    normalizers={
        "atan": Support(
            "exact",
            "WeightedRanker(*w / max w, norm_score=True) on IP fields; score_scale = max w",
        ),
        "rrf": Support(
            "exact",
            "RRFRanker(k), which has no weights",
            condition="the weights are all equal",
            when=_equal,
            refusal=(
                "export milvus: Milvus's RRFRanker is unweighted, and this rrf model's weights "
                "differ ({weights}); train with '--normalizer atan' (Milvus's WeightedRanker "
                "with norm_score) for an exact Milvus export."
            ),
        ),
    },
    refusal=(
        "export milvus: a linear model with normalizer {normalizer!r} has no Milvus ranker "
        "(WeightedRanker normalises with arctan, RRFRanker uses ranks); train with "
        "'--normalizer atan' or '--normalizer rrf' for an exact export."
    ),
    request=milvus_body,
    options=("vectors", "limit", "rank_window_size"),
    asks={"vectors": "the collection's vector field of each run, in the model's order"},
    scores=milvus_scores,
    source="milvus-lite 3.2 function/ops/merge_op.py (MergeOp._merge_weighted, _merge_rrf); "
    "pymilvus 3.0 WeightedRanker, RRFRanker",
    run_for_real='rankboost.fusion.engines.milvus (milvus-lite: MilvusClient("file.db"))',
)
