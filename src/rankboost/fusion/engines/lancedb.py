"""LanceDB: a linear fusion as a hybrid query with a learned reranker, its arithmetic, runs.

LanceDB (embedded, ``lancedb.connect(path)``) answers a hybrid query with one full-text
search (its native BM25 over an FTS index) and one vector search, each cut at the query's
``limit``, and hands both result tables to a reranker. Written from lancedb 0.40.0
(``query.py``, ``LanceHybridQueryBuilder._combine_hybrid_results``): with
``normalize="score"`` it first min-max-normalises, in float32, the FTS ``_score`` and the
vector ``_distance`` of each list (``_normalize_scores``: ``(x - min) / (max - min)``; when
all are equal, ``x - min``, i.e. 0). :class:`LearnedReranker` (shipped here, built only
when lancedb is installed) then computes the model's weighted sum:

* ``normalizer="minmax"``: the text list's normalised score, the vector list's ``1 -
  normalised distance`` (= the min-max of the negated distance), and 1 for every document
  of a list whose scores are all equal (LanceDB's 0 there is ``fuse apply``'s 1);
* ``normalizer="rrf"``: ``1 / (k + position)`` in each list (``RRFReranker`` has no
  weights; these are the model's).

A document one list did not return gets 0 from it, as in ``fuse apply``. The vector run the
model is trained on has the score ``-_distance`` (:func:`lancedb_run`), whose min-max is
the one above for any metric. LanceDB cuts both lists at the hybrid query's limit, so the
request asks for ``rank_window_size`` (the runs' depth) and the reranker keeps the top
``limit``. Other normalisers have no LanceDB expression here and are refused.
:func:`lancedb_scores` is that arithmetic (``fuse export --check-runs``); :func:`lancedb_run`
and :func:`lancedb_fused_run` query a real table (the tests, ``experiments/engine_pipeline.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._compat import require
from ..features import RunsLike, as_run_list
from ..run import Run
from ._base import F32, Engine, Support, one_per_list, run_of_rows

__all__ = [  # and LearnedReranker, built on first use (module __getattr__)
    "ENGINE",
    "check_lancedb_table",
    "lancedb_body",
    "lancedb_fused_run",
    "lancedb_query",
    "lancedb_run",
    "lancedb_scores",
]

#: The two searches of a LanceDB hybrid query, in the body's order.
LEGS = ("text", "vector")
RERANKER = "rankboost.fusion.engines.lancedb.LearnedReranker"


def lancedb_body(
    model: Any,
    weights: Sequence[float],
    *,
    vectors: Sequence[str] | None,
    limit: int,
    rank_window_size: int,
    text_list: str | None,
) -> dict[str, Any]:
    """The hybrid query of a linear fusion: each list's search and weight, and the reranker.

    ``text_list``: the model's list LanceDB's full-text search serves (required: the
    runs' names do not say which is which); the other is its vector search. ``vectors``:
    the table's column of each list in the model's order (the FTS-indexed text column, the
    vector column); None lets LanceDB pick (every FTS-indexed column, the table's one vector
    column).
    """
    names = list(model.list_names_)
    if len(names) != 2:
        raise ValueError(
            f"export lancedb: a LanceDB hybrid query fuses one full-text and one vector "
            f"search, and this model fuses {len(names)} lists ({', '.join(names)}); train it "
            "on two runs, the engine's BM25 and vector runs."
        )
    columns: list[str | None] = list(vectors) if vectors is not None else [None, None]
    if vectors is not None:
        one_per_list(model, list(vectors), "export lancedb", "columns")
    if text_list is None:  # a guess would put each weight on the other search, silently
        raise ValueError(
            f"export lancedb: name the list LanceDB's full-text search serves, text_list= "
            f"(--text-list on the command line): one of {', '.join(names)}; the other is "
            "served by its vector search."
        )
    hits = _find(names, text_list)
    if len(hits) != 1:
        raise ValueError(
            f"export lancedb: text_list {text_list!r} is not {'one' if hits else 'a'} list of "
            f"this model ({', '.join(names)}); name the list LanceDB's full-text search serves."
        )
    text = names[hits[0]]
    if int(limit) > int(rank_window_size):
        raise ValueError(
            f"export lancedb: LanceDB's hybrid query returns at most its limit, which is also "
            f"the depth of both searches: limit ({limit}) must be at most rank_window_size "
            f"({rank_window_size}), the runs' depth."
        )
    order = [names.index(text), 1 - names.index(text)]
    legs = {
        leg: {"list": names[i], "weight": float(weights[i]), "column": columns[i]}
        for leg, i in zip(LEGS, order, strict=True)
    }
    return {
        "query_type": "hybrid",
        "lists": names,
        **legs,
        "normalizer": str(model.normalizer),
        "rank_constant": int(model.rank_constant),
        "rank_window_size": int(rank_window_size),
        "limit": int(limit),
        "reranker": RERANKER,
        "recipe": (
            "table.search(query_type='hybrid', vector_column_name=vector.column, fts_columns="
            "text.column).vector(query_vector).text(query_text).limit(rank_window_size)"
            ".rerank(LearnedReranker.from_request(body), normalize='score')"
        ),
    }


def _find(names: list[str], name: str) -> list[int]:
    """The lists called ``name``, or whose file name (without ``.run``) is ``name``."""
    exact = [i for i, n in enumerate(names) if n == name]
    if exact:
        return exact
    stem = [n.replace("\\", "/").rsplit("/", 1)[-1] for n in names]
    return [i for i, n in enumerate(stem) if n == name or n.split(".run")[0] == name]


# ------------------------------------------------------------------ arithmetic -----------
def _lancedb_minmax(x: NDArray[np.float32]) -> NDArray[np.float32]:
    """``LanceHybridQueryBuilder._normalize_scores`` (pyarrow float32)."""
    lo, hi = x.min(), x.max()
    span = F32(hi - lo)
    if span != 0:
        return ((x - lo) / span).astype(F32)
    return (x - lo).astype(F32) if hi != 0 else x


def _leg_values(
    normalised: NDArray[np.float32], leg: str, normalizer: str, k: int
) -> NDArray[np.float64]:
    """What :class:`LearnedReranker` gives each hit of one list (in the list's order)."""
    if normalizer == "rrf":
        return 1.0 / (k + np.arange(1, normalised.shape[0] + 1, dtype=np.float64))
    x = normalised.astype(np.float64)
    if x.shape[0] and not np.any(x != 0):  # all equal in the list: fuse apply's 1
        return np.ones(x.shape[0])
    return 1.0 - x if leg == "vector" else x


def lancedb_scores(runs: RunsLike, body: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Scores LanceDB gives the runs' documents for a :func:`lancedb_body` hybrid query.

    The runs are the model's lists in its order, the vector run scored ``-_distance``: each
    query's list is min-max-normalised in float32 as lancedb 0.40.0 does (the distances
    ``-score``), then :class:`LearnedReranker`'s sum, rounded to float32.
    """
    items = as_run_list(runs, "lancedb_scores")
    if len(items) != len(body["lists"]):
        raise ValueError(
            f"lancedb_scores: the request fuses {len(body['lists'])} lists and {len(items)} runs "
            "were given."
        )
    leg_of = {body[leg]["list"]: leg for leg in LEGS}
    roles = [leg_of[n] for n in body["lists"]]
    acc: dict[str, dict[str, float]] = {}
    k = int(body["rank_constant"])
    for run, leg in zip(items, roles, strict=True):
        w = float(body[leg]["weight"])
        srt = run.sorted()
        q = srt.qid
        starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]]).tolist()
        for a, b in zip(starts, [*starts[1:], q.shape[0]], strict=True):
            s = srt.score[a:b].astype(F32)
            raw = -s if leg == "vector" else s
            v = _leg_values(_lancedb_minmax(raw), leg, body["normalizer"], k)
            m = acc.setdefault(str(q[a]), {})
            for d, x in zip(srt.docid[a:b].tolist(), v.tolist(), strict=True):
                m[d] = m.get(d, 0.0) + w * x
    return {q: {d: float(F32(x)) for d, x in m.items()} for q, m in acc.items()}


# ------------------------------------------------------------------ the reranker ---------
@cache
def _reranker_class() -> Any:
    require("lancedb", "The LanceDB reranker")
    import pyarrow as pa
    from lancedb.rerankers import Reranker

    class LearnedReranker(Reranker):
        """A learned linear fusion as a LanceDB hybrid reranker (``normalize="score"``).

        Parameters
        ----------
        text_weight, vector_weight : float
            The model's weights of its full-text and vector lists.
        normalizer : {"minmax", "rrf"}, default="minmax"
            The model's normaliser.
        rank_constant : int, default=60
            RRF's ``k``.
        limit : int, default=None
            Documents kept (the request's ``limit``); None keeps every fused one.
        """

        def __init__(
            self,
            text_weight: float,
            vector_weight: float,
            normalizer: str = "minmax",
            rank_constant: int = 60,
            limit: int | None = None,
        ) -> None:
            super().__init__("relevance")
            if normalizer not in ("minmax", "rrf"):
                raise ValueError(
                    f"LearnedReranker: normalizer must be 'minmax' or 'rrf'; got {normalizer!r}."
                )
            self.weights = {"text": float(text_weight), "vector": float(vector_weight)}
            self.normalizer = normalizer
            self.rank_constant = int(rank_constant)
            self.limit = limit

        @classmethod
        def from_request(cls, body: Mapping[str, Any]) -> LearnedReranker:
            """The reranker of a ``fuse export --engine lancedb`` request."""
            return cls(body["text"]["weight"], body["vector"]["weight"], body["normalizer"],
                       body["rank_constant"], body["limit"])  # fmt: skip

        def __str__(self) -> str:
            return (
                f"LearnedReranker(text={self.weights['text']:g}, vector="
                f"{self.weights['vector']:g}, {self.normalizer})"
            )

        def rerank_hybrid(
            self, query: str, vector_results: pa.Table, fts_results: pa.Table
        ) -> pa.Table:
            score: dict[Any, float] = {}
            for leg, tbl, col in (("vector", vector_results, "_distance"),
                                  ("text", fts_results, "_score")):  # fmt: skip
                if tbl is None or tbl.num_rows == 0:
                    continue
                x = np.asarray(tbl[col].to_numpy(zero_copy_only=False), dtype=F32)
                v = _leg_values(x, leg, self.normalizer, self.rank_constant)
                w = self.weights[leg]
                for rid, y in zip(tbl["_rowid"].to_pylist(), v.tolist(), strict=True):
                    score[rid] = score.get(rid, 0.0) + w * y
            merged = self.merge_results(vector_results, fts_results)
            rel = [score[r] for r in merged["_rowid"].to_pylist()]
            merged = merged.append_column("_relevance_score", pa.array(rel, type=pa.float32()))
            merged = merged.sort_by([("_relevance_score", "descending")])
            if self.limit is not None:
                merged = merged.slice(0, int(self.limit))
            return self._keep_relevance_score(merged)

    LearnedReranker.__module__ = __name__
    return LearnedReranker


def __getattr__(name: str) -> Any:
    """``LearnedReranker``: built on first use, when lancedb is installed."""
    if name == "LearnedReranker":
        return _reranker_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ------------------------------------------------------------------ the real table -------
def check_lancedb_table(table: Any, body: Mapping[str, Any], vector: Sequence[float]) -> None:
    """Raise ``ValueError`` for an empty table, no FTS index, or a vector of another size."""
    n = table.count_rows()
    if n == 0:
        raise ValueError(
            f"lancedb table {table.name!r} has no rows; add the documents (and build its FTS "
            "index) before serving."
        )
    fts = [c for i in table.list_indices() if i.index_type == "FTS" for c in i.columns]
    col = body["text"]["column"]
    if not fts or (col is not None and col not in fts):
        raise ValueError(
            f"lancedb table {table.name!r} has no full-text index on "
            f"{repr(col) if col else 'any column'} (FTS-indexed: {', '.join(fts) or 'none'}); "
            f"create one with table.create_index({(col or 'TEXT_COLUMN')!r}, "
            "config=lancedb.index.FTS())."
        )
    import pyarrow as pa  # lancedb's own dependency

    schema = table.schema
    vcols = [f.name for f in schema if pa.types.is_fixed_size_list(f.type)]
    vcol = body["vector"]["column"] or (vcols[0] if len(vcols) == 1 else None)
    if vcol not in vcols:
        raise ValueError(
            f"lancedb table {table.name!r} has no vector column "
            f"{repr(vcol) if vcol else '(it has ' + str(len(vcols)) + ', name one)'} (vector "
            f"columns: {', '.join(vcols) or 'none'}); export with --vectors naming the text "
            "and vector column of each list, in the model's order."
        )
    dim = schema.field(vcol).type.list_size
    if len(vector) != dim:
        raise ValueError(
            f"lancedb table {table.name!r}: vector column {vcol!r} has dimension {dim} but the "
            f"query vector has {len(vector)}; embed the queries with the model that embedded "
            "the documents."
        )


def lancedb_query(
    table: Any, body: Mapping[str, Any], text: str, vector: Any, *, metric: str | None = None
) -> Any:
    """The request's hybrid query for one query (call ``.to_arrow()`` on it)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(
            f"lancedb hybrid query: the query text is empty ({text!r}); a hybrid query needs "
            "words for its full-text search."
        )
    cls = _reranker_class()
    q = table.search(query_type="hybrid", vector_column_name=body["vector"]["column"],
                     fts_columns=body["text"]["column"])  # fmt: skip
    q = q.vector(np.asarray(vector, dtype=np.float32).tolist()).text(text)
    if metric is not None:
        q = q.distance_type(metric)
    q = q.limit(int(body["rank_window_size"]))
    return q.rerank(cls.from_request(body), normalize="score")


def lancedb_run(
    table: Any,
    leg: str,
    queries: Mapping[str, Any],
    depth: int,
    *,
    column: str | None = None,
    metric: str | None = None,
    id_field: str = "docid",
    name: str | None = None,
) -> Run:
    """The engine's own run of one search, top ``depth``, in LanceDB's order.

    ``leg``: "text" (its full-text search, score ``_score``) or "vector" (score
    ``-_distance``); document ids from the column ``id_field``.
    """
    if leg not in LEGS:
        raise ValueError(f"lancedb_run: leg must be one of {LEGS}; got {leg!r}.")
    require("lancedb", "lancedb_run")
    rows: list[tuple[str, str, int, float]] = []
    for q, x in queries.items():
        if leg == "text":
            s = table.search(x, query_type="fts", fts_columns=column)
        else:
            s = table.search(np.asarray(x, dtype=np.float32).tolist(), query_type="vector",
                             vector_column_name=column)  # fmt: skip
            s = s.distance_type(metric) if metric is not None else s
        # the score column named: LanceDB warns (once a query) when "_distance" is left out
        col = "_score" if leg == "text" else "_distance"
        res = s.limit(int(depth)).select([id_field, col]).to_arrow()
        vals = res[col].to_numpy(zero_copy_only=False).astype(np.float64)
        vals = vals if leg == "text" else -vals
        ids = res[id_field].to_pylist()
        rows += [
            (q, str(d), i + 1, float(v)) for i, (d, v) in enumerate(zip(ids, vals, strict=True))
        ]
    return run_of_rows(rows, name or leg, f"lancedb_run ({leg} search)", len(queries))


def lancedb_fused_run(
    table: Any,
    body: Mapping[str, Any],
    queries: Mapping[str, Mapping[str, Any]],
    *,
    metric: str | None = None,
    id_field: str = "docid",
) -> Run:
    """What LanceDB serves for ``body``: ``queries[q]`` = ``{"text": str, "vector": [...]}``."""
    rows: list[tuple[str, str, int, float]] = []
    first = True
    for q, qv in queries.items():
        if first:
            check_lancedb_table(table, body, qv["vector"])
            first = False
        res = lancedb_query(table, body, qv["text"], qv["vector"], metric=metric).to_arrow()
        hits = zip(res[id_field].to_pylist(), res["_relevance_score"].to_pylist(), strict=True)
        rows += [(q, str(d), i + 1, float(s)) for i, (d, s) in enumerate(hits)]
    return run_of_rows(rows, "lancedb", "lancedb_fused_run", len(queries))


ENGINE = Engine(
    name="lancedb",
    label="LanceDB",
    normalizers={
        "minmax": Support(
            "exact",
            "hybrid query (normalize='score': LanceDB's per-query min-max of both lists) "
            "reranked by rankboost's LearnedReranker: w_text * score + w_vector * (1 - "
            "distance), 1 for a list of equal scores",
        ),
        "rrf": Support(
            "exact",
            "the same hybrid query, LearnedReranker summing w_i / (k + position) (LanceDB's "
            "RRFReranker has no weights)",
        ),
    },
    refusal=(
        "export lancedb: a linear model with normalizer {normalizer!r} has no LanceDB "
        "request (its hybrid query min-max-normalises both lists before the reranker); train "
        "with '--normalizer minmax' (the default family's usual choice) or '--normalizer rrf' "
        "for an exact export."
    ),
    request=lancedb_body,
    options=("vectors", "limit", "rank_window_size", "text_list"),
    asks={"text_list": "the run its full-text search serves (the other is its vector search)"},
    scores=lancedb_scores,
    source="lancedb 0.40.0 query.py (LanceHybridQueryBuilder._combine_hybrid_results, "
    "_normalize_scores) and rankboost's LearnedReranker",
    run_for_real='rankboost.fusion.engines.lancedb (lancedb embedded: lancedb.connect("dir"))',
)
