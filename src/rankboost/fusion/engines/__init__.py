"""Hand a linear fusion to a search engine, and evaluate it as the engine would.

:data:`ENGINES` is the table of the engines: engine name -> :class:`Engine`, the normalisers
of a :class:`~rankboost.fusion.linear.LinearFusion` it expresses and how exactly
(:class:`Support`: exact, approximate, or under a condition on the weights), its request
writer, its reference evaluator (the engine's arithmetic in float32, written from its
source) and where it is run for real. One module per engine holds its row and everything
behind it:

=====================  =====================================  ==================================
engine                 ``normalizer`` it serves                module
=====================  =====================================  ==================================
``"elasticsearch"``    ``minmax`` (``linear`` retriever),      :mod:`.elasticsearch` (modelled)
                       ``rrf`` (``rrf`` retriever): exact
``"opensearch"``       ``rrf`` (``score-ranker-processor``):   :mod:`.opensearch` (modelled)
                       exact; ``minmax``: approximate, only
                       with ``approximate=True``
``"qdrant"``           ``dbsf``, ``rrf`` (nested prefetches    :mod:`.qdrant` (run: qdrant-client
                       + ``FormulaQuery``): exact              local mode)
``"milvus"``           ``atan`` (``WeightedRanker``), ``rrf``  :mod:`.milvus` (run: Milvus Lite)
                       (``RRFRanker``, equal weights only):
                       exact
``"lancedb"``          ``minmax``, ``rrf`` (hybrid query +     :mod:`.lancedb` (run: lancedb
                       rankboost's ``LearnedReranker``):       embedded)
                       exact
=====================  =====================================  ==================================

:func:`export_linear` writes a model as the engine's own hybrid request or pipeline,
:func:`check_export` verifies that the engine ranks given runs exactly as ``fuse apply``
does, :func:`serving` says which engines serve a model (``rankboost info``). Adding an
engine is one module with its ``ENGINE`` row, and that row in :data:`ENGINES`.

Engines compute in 32-bit floats; the evaluators do too (numpy ``float32`` arithmetic is
IEEE-754 single precision, as Java's ``float``), and the model keeps float32 weights.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._atomic import atomic_write_text
from ..._tables import by_name
from ..features import RunsLike, as_run_list
from ..run import Run
from . import elasticsearch, lancedb, milvus, opensearch, qdrant
from ._base import Engine, Support, rankings
from .elasticsearch import elasticsearch_scores
from .lancedb import lancedb_scores
from .milvus import milvus_scores
from .opensearch import opensearch_scores
from .qdrant import qdrant_scores

__all__ = [
    "ENGINES",
    "Engine",
    "Support",
    "check_export",
    "compare_served",
    "elasticsearch_scores",
    "engine_fuse",
    "export_linear",
    "lancedb_scores",
    "milvus_scores",
    "opensearch_scores",
    "qdrant_scores",
    "serving",
]

#: The engines: name -> :class:`Engine` (iterating gives the names, in this order).
ENGINES: Mapping[str, Engine] = MappingProxyType(
    by_name((elasticsearch.ENGINE, opensearch.ENGINE, qdrant.ENGINE, milvus.ENGINE, lancedb.ENGINE))
)


def _engine(engine: str) -> Engine:
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {tuple(ENGINES)}; got {engine!r}.")
    return ENGINES[engine]


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
    text_list: str | None = None,
    **opts: Any,
) -> dict[str, Any]:
    """The engine request (Elasticsearch, Qdrant, Milvus, LanceDB) or search pipeline (OpenSearch).

    Parameters
    ----------
    model : LinearFusion
        A fitted linear fusion.
    engine : {"elasticsearch", "opensearch", "qdrant", "milvus", "lancedb"}
        A key of :data:`ENGINES`.
    path : path-like, default=None
        Also write the JSON there (atomic).
    retrievers : list, default=None
        Elasticsearch: the sub-retriever objects, one per list in the model's order
        (``{"standard": {...}}``, ``{"knn": {...}}``); None writes placeholders naming the
        lists. OpenSearch's ``hybrid`` query lists the sub-queries in the model's order.
    rank_window_size : int, default=100
        Documents taken from each retriever (the runs' depth): Elasticsearch's
        ``rank_window_size``, the ``limit`` of Qdrant's prefetches and Milvus's requests.
    approximate : bool, default=False
        OpenSearch with min-max: the ``normalization-processor`` averages over the
        sub-queries that returned a document, not a weighted sum, so it ranks differently;
        True writes it anyway.
    vectors : list of str, default=None
        Qdrant: the collection's vector name of each list; Milvus: its vector field; None
        uses the model's list names. LanceDB: the table's column of each list (the
        FTS-indexed text column, the vector column); None lets LanceDB pick them.
    limit : int, default=10
        Qdrant, Milvus and LanceDB: documents the fused request returns.
    text_list : str, default=None
        LanceDB: the model's list its full-text search serves (the other is its vector
        search); required there, since the lists' names do not say which is which.
    **opts
        The options of an engine's request beyond these (:attr:`Engine.options`). Each
        engine takes the options its row lists and ignores the others.

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
    opts.update(retrievers=retrievers, rank_window_size=rank_window_size,
                approximate=approximate, vectors=vectors, limit=limit,
                text_list=text_list)  # fmt: skip
    known = {o for e in ENGINES.values() for o in e.options}
    known |= {s.option for e in ENGINES.values() for s in e.normalizers.values() if s.option}
    unknown = sorted(set(opts) - known)
    if unknown:
        raise TypeError(
            f"export_linear got an unexpected keyword argument {unknown[0]!r}; the options are "
            f"{sorted(known)}."
        )
    w = _model_weights(model)
    row = _engine(engine)
    support = row.normalizers.get(model.normalizer)
    if support is None:
        raise ValueError(row.refusal.format(engine=engine, normalizer=model.normalizer))
    if support.how == "approximate" and not opts.get(support.option):
        raise ValueError(support.refusal)
    if support.when is not None and not support.when(w):
        raise ValueError(support.refuse(w))
    out = row.request(model, w, **{k: v for k, v in opts.items() if k in row.options})
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


def serving(normalizer: str, weights: Any) -> list[tuple[Engine, str, str]]:
    """Every engine and how it serves a linear model: ``(engine, how, note)``.

    ``how`` is ``"exact"``, ``"approximate"`` or ``"no"`` (:meth:`Engine.serves`); ``note``
    says what an approximate request does, or the condition on the weights the model does
    not meet.

    Examples
    --------
    >>> from rankboost.fusion.engines import serving
    >>> [(e.name, how) for e, how, _ in serving("dbsf", [0.5, 0.75])]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('elasticsearch', 'no'), ('opensearch', 'no'), ('qdrant', 'exact'), ('milvus', 'no'),
     ('lancedb', 'no')]
    """
    w = np.asarray(weights, dtype=np.float64)
    return [(e, *e.serves(normalizer, w)) for e in ENGINES.values()]


def engine_fuse(runs: RunsLike, body: dict[str, Any], engine: str) -> Run:
    """The run an engine returns for ``body`` (ties by document id, as :meth:`Run.from_dict`)."""
    return Run.from_dict(_engine(engine).scores(runs, body), name=engine)


def check_export(model: Any, runs: RunsLike, engine: str, body: dict[str, Any]) -> int:
    """Check that the engine serves ``runs`` as ``model.fuse`` ranks them; return #queries.

    What the request serves is compared: its top ``body["limit"]`` (the whole list for a
    request without one), where two documents the engine scores equal (its float32
    arithmetic) are a tie, in either order. Raises ``ValueError`` naming the first query
    served differently, and how many are.
    """
    a = rankings(model.fuse(runs).sorted())
    served = engine_fuse(runs, body, engine).sorted()
    b = rankings(served)
    scores: dict[str, dict[str, float]] = {}
    for q, d, x in zip(served.qid.tolist(), served.docid.tolist(), served.score.tolist(),
                       strict=True):  # fmt: skip
        scores.setdefault(q, {})[d] = x
    limit = body.get("limit")
    firsts = {
        q: _first_difference(a.get(q, []), b.get(q, []), scores.get(q, {}), limit)
        for q in set(a) | set(b)
    }
    bad = sorted(q for q, k in firsts.items() if k is not None)
    if bad:
        q = bad[0]
        ours, theirs = a.get(q, []), b.get(q, [])
        k = firsts[q] or 0
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


def _first_difference(
    ours: list[str], theirs: list[str], engine_score: dict[str, float], limit: int | None
) -> int | None:
    """The first served position where the lists differ other than by a tie, or None.

    A tie: the engine gives both documents the same score, so either order is its own.
    """
    n = len(ours) if limit is None else min(int(limit), len(ours))
    m = len(theirs) if limit is None else min(int(limit), len(theirs))
    if m != n:  # one serves fewer documents: they differ where the shorter list ends
        return min(m, n)
    for k in range(n):
        x, y = ours[k], theirs[k]
        if x != y and engine_score.get(x) != engine_score[y]:
            return k
    return None


def _why_different(
    model: Any, runs: RunsLike, engine: str, body: dict[str, Any], bad: list[str]
) -> str:
    """The cause of the differences: rank gaps (RRF), or the engine's own (its ``explain``)."""
    if getattr(model, "normalizer", None) == "rrf":
        return _rank_gaps(model, runs, engine, body, bad)
    explain = ENGINES[engine].explain
    return "" if explain is None else explain(model, runs, body, bad)


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
    a = rankings(model.fuse(renumbered).sorted())
    b = rankings(engine_fuse(renumbered, body, engine).sorted())
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
