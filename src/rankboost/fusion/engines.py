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
``"qdrant"``                refused (no per-query min/max in      nested ``rrf`` (k + 1) per
                            Qdrant's formula); ``"dbsf"``:        list + ``FormulaQuery``
                            nested ``dbsf`` + formula (exact)     (exact)
``"milvus"``                refused; ``"atan"``:                  ``RRFRanker(k)`` if the
                            ``WeightedRanker(norm_score=True)``   weights are equal (exact),
                            on IP fields (exact)                  else refused
==========================  ====================================  =========================

Elasticsearch and OpenSearch are *modelled* (evaluators written from their source, below);
Qdrant (qdrant-client local mode) and Milvus Lite are *run* for real in the test suite
(:mod:`rankboost.fusion._qdrant`, :mod:`rankboost.fusion._milvus`), and their evaluators here
serve ``fuse export --check-runs``.

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
from ._engine_eval import (
    ENGINES,
    elasticsearch_scores,
    engine_fuse,
    milvus_scores,
    opensearch_scores,
    qdrant_scores,
)
from .features import RunsLike, as_run_list
from .run import Run

__all__ = [
    "ENGINES",
    "check_export",
    "compare_served",
    "elasticsearch_scores",
    "engine_fuse",
    "export_linear",
    "milvus_scores",
    "opensearch_scores",
    "qdrant_scores",
]


# ------------------------------------------------------------------ export --------------
def export_linear(
    model: Any,
    engine: str,
    path: str | os.PathLike[str] | None = None,
    *,
    retrievers: list[Any] | None = None,
    rank_window_size: int = 100,
    approximate: bool = False,
    vectors: list[str] | None = None,
    limit: int = 10,
) -> dict[str, Any]:
    """The engine request (Elasticsearch, Qdrant, Milvus) or search pipeline (OpenSearch).

    Parameters
    ----------
    model : LinearFusion
        A fitted linear fusion.
    engine : {"elasticsearch", "opensearch", "qdrant", "milvus"}
    path : path-like, default=None
        Also write the JSON there (atomic).
    retrievers : list, default=None
        Elasticsearch: the sub-retriever objects, one per list in the model's order
        (``{"standard": {...}}``, ``{"knn": {...}}``); None writes placeholders naming the
        lists. Unused for OpenSearch, whose ``hybrid`` query lists the sub-queries in the
        model's order.
    rank_window_size : int, default=100
        Documents taken from each retriever (the runs' depth): Elasticsearch's
        ``rank_window_size``, the ``limit`` of Qdrant's prefetches and Milvus's requests.
    approximate : bool, default=False
        OpenSearch with min-max: the ``normalization-processor`` averages over the
        sub-queries that returned a document, not a weighted sum, so it ranks differently;
        True writes it anyway.
    vectors : list of str, default=None
        Qdrant: the collection's vector name of each list; Milvus: its vector field; None
        uses the model's list names.
    limit : int, default=10
        Qdrant and Milvus: documents the fused request returns.

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
    if engine in ("elasticsearch", "opensearch") and model.normalizer not in ("minmax", "rrf"):
        raise ValueError(
            f"export_linear: {engine} normalises with min-max or RRF, not the "
            f"{model.normalizer!r} this model was trained with; train with normalizer='minmax' "
            "or 'rrf' for this engine ('dbsf' is Qdrant's, 'atan' Milvus's)."
        )
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
    elif engine == "qdrant":
        from ._qdrant import qdrant_body

        out = qdrant_body(model, w.tolist(), vectors=vectors, limit=limit,
                          depth=rank_window_size)  # fmt: skip
    elif engine == "milvus":
        from ._milvus import milvus_body

        out = milvus_body(model, w.tolist(), fields=vectors, limit=limit,
                          depth=rank_window_size)  # fmt: skip
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


def compare_served(ours: Run, served: Run, k: int, rtol: float = 1e-6) -> list[str]:
    """Queries where an engine's served top ``k`` is not ``ours``'s; empty when all agree.

    Per query, the served list must have ``min(k, len(ours))`` documents whose scores equal
    ours position by position to ``rtol`` (relative) and whose ids are ours, in order;
    documents with exactly the same served score are a tie, which ``fuse apply`` orders by
    document id and an engine by first appearance, so within a tie the ids are compared as
    a set (a tie cut by the top ``k``: the served ones are among ours with that score).
    Each entry says what differs.

    Examples
    --------
    >>> from rankboost.fusion import Run
    >>> from rankboost.fusion.engines import compare_served
    >>> ours = Run(["q"] * 3, ["a", "b", "c"], [1, 2, 3], [2.0, 1.0, 1.0])
    >>> compare_served(ours, Run(["q"] * 2, ["a", "c"], [1, 2], [2.0, 1.0]), 2)
    []
    >>> compare_served(ours, Run(["q"] * 2, ["b", "a"], [1, 2], [2.0, 1.0]), 2)
    ["query 'q': position 1 serves 'b', not 'a'"]
    """
    a, b = ours.sorted(), served.sorted()
    bad: list[str] = []
    for q in a.queries:
        da, sa = a.docid[a.qid == q].tolist(), a.score[a.qid == q]
        ib, sb = b.docid[b.qid == q].tolist(), b.score[b.qid == q]
        if len(ib) != min(k, len(da)):
            bad.append(f"query {q!r}: {len(ib)} documents served, not {min(k, len(da))}")
            continue
        off = np.abs(sb - sa[: len(ib)]) > rtol * np.abs(sa[: len(ib)])
        if off.any():
            i = int(np.argmax(off))
            bad.append(
                f"query {q!r}: position {i + 1} scores {float(sb[i])!r}, not {float(sa[i])!r}"
            )
            continue
        start, cut = 0, len(ib) < len(da)
        for end in [*(np.flatnonzero(np.diff(sb) != 0) + 1).tolist(), len(ib)]:
            got = set(ib[start:end])
            if end < len(ib) or not cut:
                ok = got == set(da[start:end])
            else:  # the last tie may continue past k in ours
                ok = got <= {d for d, x in zip(da, sa.tolist(), strict=True)
                             if abs(x - sb[start]) <= rtol * abs(x)}  # fmt: skip
            if not ok:
                bad.append(f"query {q!r}: position {start + 1} serves {ib[start]!r}, not "
                           f"{da[start]!r}")  # fmt: skip
                break
            start = end
    for q in sorted(set(b.queries) - set(a.queries)):
        bad.append(f"query {q!r}: served, but not in ours")
    return bad
