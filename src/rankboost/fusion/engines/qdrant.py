"""Qdrant: a linear fusion as a Query API request, its arithmetic, and Qdrant's own runs.

The request fuses one prefetch per list with a ``FormulaQuery`` ``sum_i w_i * $score[i]``
(``defaults`` 0: a list that did not return a document gives it nothing, as ``fuse apply``).
Each list's normalisation is a fusion over that list alone, nested in its prefetch:

* ``normalizer="rrf"``: ``{"rrf": {"k": k + 1}}``. qdrant-client 1.20 (``hybrid/fusion.py``
  ``reciprocal_rank_fusion``) scores position ``pos`` (from 0) ``1 / (pos + 1 + k' - 1)``,
  so ``k' = k + 1`` gives ``1 / (k + rank)``. Its own ``weights`` would give
  ``1 / (rank / w + k' - 1)``, not ``w / (k + rank)``: weights go in the formula instead.
* ``normalizer="dbsf"``: ``{"fusion": "dbsf"}``, ``distribution_based_score_fusion``: the
  list's scores mapped by its mean +- 3 sample sd (``normalise_scores(..., "dbsf")``).

Min-max and arctan have no Qdrant expression (the formula language has no per-query min or
max, and no arctan), so those models are refused. What was run for real: qdrant-client's
local mode (``QdrantClient(":memory:")`` or a path), which evaluates the same request the
REST API takes (``POST /collections/{name}/points/query``); scores come back as float32.
:func:`qdrant_scores` is that arithmetic (``fuse export --check-runs``); :func:`qdrant_run`
and :func:`qdrant_fused_run` query a real collection (the test suite, the pipeline of
``experiments/engine_pipeline.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..._compat import require
from ..features import RunsLike, normalise_scores
from ..run import Run
from ._base import Engine, Support, run_of_rows, vector_names, weighted_sum

__all__ = [
    "ENGINE",
    "body_vectors",
    "check_qdrant_collection",
    "qdrant_body",
    "qdrant_fused_run",
    "qdrant_query_args",
    "qdrant_run",
    "qdrant_scores",
]

_VERSION_HELP = (
    "the formula export needs qdrant-client >= 1.16 (FormulaQuery and RrfQuery with k; "
    "checked with 1.20): pip install 'rankboost[engines]'"
)


def qdrant_body(
    model: Any,
    weights: Sequence[float],
    *,
    vectors: Sequence[str] | None,
    limit: int,
    rank_window_size: int,
) -> dict[str, Any]:
    """The JSON body of ``POST /collections/{name}/points/query`` for a linear fusion.

    ``"query"`` of every inner prefetch is ``"<query vector of NAME>"``: fill it with
    :func:`qdrant_query_args` (or by hand for the REST API). ``rank_window_size`` is the
    ``limit`` of every prefetch (the runs' depth).
    """
    names = list(model.list_names_)
    using = vector_names(model, vectors, "export qdrant", "vector names")
    inner: dict[str, Any] = (
        {"rrf": {"k": int(model.rank_constant) + 1}}
        if model.normalizer == "rrf"
        else {"fusion": "dbsf"}
    )
    prefetch = [
        {
            "prefetch": [
                {"query": f"<query vector of {u}>", "using": u, "limit": int(rank_window_size)}
            ],
            "query": inner,
            "limit": int(rank_window_size),
        }
        for u in using
    ]
    terms = [{"mult": [float(w), f"$score[{i}]"]} for i, w in enumerate(weights)]
    return {
        "prefetch": prefetch,
        "query": {
            "formula": {"sum": terms},
            "defaults": {f"$score[{i}]": 0.0 for i in range(len(names))},
        },
        "limit": int(limit),
    }


def qdrant_scores(runs: RunsLike, body: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Scores Qdrant's local mode gives the runs' documents for a :func:`qdrant_body` request.

    qdrant-client 1.20: each prefetch fuses its one list (``reciprocal_rank_fusion``:
    ``1 / (pos + k)``, pos from 0; ``distribution_based_score_fusion``), then
    ``_rescore_with_formula`` evaluates ``sum(mult(w_i, $score[i]))`` in Python floats with
    the defaults for absent documents, and rounds to float32.
    """
    weights = [float(t["mult"][0]) for t in body["query"]["formula"]["sum"]]
    inner = body["prefetch"][0]["query"]
    if "rrf" in inner:
        k = int(inner["rrf"]["k"])

        def values(r: Run) -> Any:
            return 1.0 / (k - 1 + r.rank.astype(np.float64))
    else:

        def values(r: Run) -> Any:
            return normalise_scores(r, "dbsf")

    return weighted_sum(runs, weights, values, "qdrant_scores")


def _models() -> Any:
    qc = require("qdrant_client", "Qdrant export")
    from qdrant_client import models

    if not (hasattr(models, "FormulaQuery") and hasattr(models, "RrfQuery")):
        version = getattr(qc, "__version__", "?")
        raise ImportError(
            f"qdrant-client {version} lacks FormulaQuery or RrfQuery: {_VERSION_HELP}."
        )
    return models


def body_vectors(body: Mapping[str, Any]) -> list[str]:
    """The vector names (``using``) of a request written by :func:`qdrant_body`, in order."""
    return [p["prefetch"][0]["using"] for p in body["prefetch"]]


def qdrant_query_args(
    body: Mapping[str, Any], query_vectors: Mapping[str, Any], *, limit: int | None = None
) -> dict[str, Any]:
    """``client.query_points(collection, **args)`` for one query: the body with its vectors.

    ``query_vectors`` maps each vector name to the query's vector: a list of floats (dense)
    or ``{"indices": [...], "values": [...]}`` / ``models.SparseVector`` (sparse).
    """
    models = _models()
    using = body_vectors(body)
    missing = [u for u in using if u not in query_vectors]
    if missing:
        raise ValueError(
            f"qdrant request: no query vector for {', '.join(map(repr, missing))} (the request "
            f"fuses {', '.join(using)}); pass one per vector name."
        )
    prefetch = []
    for p in body["prefetch"]:
        sub = dict(p["prefetch"][0])
        sub["query"] = _vector(query_vectors[sub["using"]])
        prefetch.append(models.Prefetch.model_validate({**p, "prefetch": [sub]}))
    return {
        "prefetch": prefetch,
        "query": models.FormulaQuery.model_validate(body["query"]),
        "limit": int(body["limit"] if limit is None else limit),
    }


def check_qdrant_collection(
    client: Any, collection: str, body: Mapping[str, Any], query_vectors: Mapping[str, Any]
) -> None:
    """Raise ``ValueError`` if ``collection`` lacks a vector of the request or its dimension."""
    info = client.get_collection(collection)
    dense = info.config.params.vectors
    dense = dense if isinstance(dense, dict) else ({"": dense} if dense is not None else {})
    sparse = info.config.params.sparse_vectors or {}
    have = sorted(dense) + sorted(sparse)
    for u in body_vectors(body):
        if u not in dense and u not in sparse:
            raise ValueError(
                f"qdrant collection {collection!r} has no vector named {u!r} (it has "
                f"{', '.join(map(repr, have)) or 'none'}); export with --vectors naming the "
                "collection's vector of each list, in the model's order."
            )
        if u in dense and u in query_vectors:
            n = len(query_vectors[u])
            if n != dense[u].size:
                raise ValueError(
                    f"qdrant collection {collection!r}: vector {u!r} has dimension "
                    f"{dense[u].size} but the query vector has {n}; embed the queries with the "
                    "model that embedded the documents."
                )


def qdrant_run(
    client: Any,
    collection: str,
    using: str,
    queries: Mapping[str, Any],
    depth: int,
    *,
    name: str | None = None,
    id_field: str | None = None,
) -> Run:
    """The engine's own run of one vector: the top ``depth`` points of each query.

    Ranks are the engine's order (ties as the engine returns them). Document ids are
    ``str(point.id)``, or the payload's ``id_field``.
    """
    _models()
    rows: list[tuple[str, str, int, float]] = []
    for q, vec in queries.items():
        vec = _vector(vec)
        pts = client.query_points(
            collection, query=vec, using=using, limit=int(depth),
            with_payload=[id_field] if id_field else False,
        ).points  # fmt: skip
        rows += [(q, _docid(p, id_field), i + 1, float(p.score)) for i, p in enumerate(pts)]
    return run_of_rows(rows, name or using, f"qdrant_run ({using})", len(queries))


def qdrant_fused_run(
    client: Any,
    collection: str,
    body: Mapping[str, Any],
    queries: Mapping[str, Mapping[str, Any]],
    *,
    limit: int | None = None,
    id_field: str | None = None,
) -> Run:
    """What Qdrant serves for ``body``: one fused list per query (``queries[q][vector]``)."""
    first = True
    rows: list[tuple[str, str, int, float]] = []
    for q, vecs in queries.items():
        if first:
            check_qdrant_collection(client, collection, body, vecs)
            first = False
        args = qdrant_query_args(body, vecs, limit=limit)
        pts = client.query_points(
            collection, **args, with_payload=[id_field] if id_field else False
        ).points
        rows += [(q, _docid(p, id_field), i + 1, float(p.score)) for i, p in enumerate(pts)]
    return run_of_rows(rows, "qdrant", "qdrant_fused_run", len(queries))


def _vector(vec: Any) -> Any:
    """A dense vector as a list, a sparse ``{"indices", "values"}`` as ``models.SparseVector``."""
    if isinstance(vec, np.ndarray):
        return vec.tolist()
    if isinstance(vec, Mapping):
        return _models().SparseVector(**vec)
    return vec


def _docid(point: Any, id_field: str | None) -> str:
    if id_field is None:
        return str(point.id)
    return str((point.payload or {})[id_field])


ENGINE = Engine(
    name="qdrant",
    label="Qdrant",
    normalizers={
        "dbsf": Support(
            "exact",
            'one prefetch per list, each a {"fusion": "dbsf"} over that list alone, then '
            "FormulaQuery sum(mult(w_i, $score[i])) with defaults 0",
        ),
        "rrf": Support(
            "exact",
            'the same with {"rrf": {"k": k + 1}} per list (the weights go in the formula)',
        ),
    },
    refusal=(
        "export qdrant: a linear model with normalizer {normalizer!r} has no Qdrant request "
        "(Qdrant's score formula has no per-query min/max nor arctan); train with "
        "'--normalizer dbsf' (Qdrant's DBSF) or '--normalizer rrf' for an exact export."
    ),
    request=qdrant_body,
    options=("vectors", "limit", "rank_window_size"),
    asks={"vectors": "the collection's vector name of each run, in the model's order"},
    scores=qdrant_scores,
    source="qdrant-client 1.20 hybrid/fusion.py (reciprocal_rank_fusion, "
    "distribution_based_score_fusion) and _rescore_with_formula",
    run_for_real="rankboost.fusion.engines.qdrant (qdrant-client local mode: "
    'QdrantClient(":memory:") or a path)',
)
