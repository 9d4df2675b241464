"""Fusion features: one row per (query, document) of a set of runs (Freund et al. 2003, 6.2).

Each input list ``i`` is a ranking feature: for a document ``d`` of query ``q``,
``f_i(d) = g(rank_i(d))`` with ``g`` strictly decreasing (``-rank`` by default, or ``1/rank``),
and ``f_i(d) = ⊥`` (NaN, the feature abstains) when list ``i`` did not return ``d``. Optional
columns: the run's scores normalised per query (min-max, z-score, or RRF's ``1/(k + rank)``),
one presence feature per list and the number of lists that returned the document.
:data:`NORMALIZERS` is the one table of the per-query normalisations (name -> values and
the one-line definition ``rankboost info`` prints), read by :func:`normalise_scores` and so
shared by the learned fusion, the linear family (:mod:`rankboost.fusion.linear`), its engine
exports and the models' descriptions.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from .._tables import by_name
from .run import Qrels, Run

__all__ = [
    "FusionFeatures",
    "FusionWarning",
    "ENGINE_NORMS",
    "NORMALIZERS",
    "Normalizer",
    "SCORE_NORMS",
    "fusion_features",
    "grades_for",
    "n_features_of",
    "normalise_scores",
    "score_norms_of",
]

RANK_FEATURES = ("neg_rank", "reciprocal")

RunsLike = Mapping[str, Run] | Sequence[Run]


@dataclass
class FusionFeatures:
    """Rank features of the documents of a set of runs, one row per (query, document).

    Attributes
    ----------
    X : ndarray of shape (n_rows, n_features)
        One rank column per list (then one normalised-score column per list if asked);
        NaN where the list did not return the document.
    qid : ndarray of str of shape (n_rows,)
        Query id of each row; rows are grouped by query.
    docid : ndarray of str of shape (n_rows,)
        Document id of each row.
    feature_names : list of str
        ``"rank:<list>"`` and ``"score:<list>"``.
    """

    X: NDArray[np.float64]
    qid: NDArray[np.str_]
    docid: NDArray[np.str_]
    feature_names: list[str]


def as_run_list(runs: RunsLike, owner: str) -> list[Run]:
    if isinstance(runs, Run):
        raise TypeError(f"{owner}: runs must be a list (or dict) of Run objects; got one Run.")
    items = list(runs.values()) if isinstance(runs, Mapping) else list(runs)
    if not items:
        raise ValueError(f"{owner}: runs is empty; pass at least one input list.")
    for r in items:
        if not isinstance(r, Run):
            raise TypeError(
                f"{owner}: every input list must be a rankboost.fusion.Run (read one with "
                f"read_run); got {type(r).__name__}."
            )
    return items


def _rank_values(rank: NDArray[np.int64], rank_feature: str) -> NDArray[np.float64]:
    if rank_feature == "neg_rank":
        return -rank.astype(np.float64)
    return 1.0 / rank.astype(np.float64)


#: Per-query score normalisations (:func:`normalise_scores`).
SCORE_NORMS = ("minmax", "zscore", "rrf")
#: The engines' own normalisations, for the linear family (:func:`normalise_scores`):
#: Qdrant's DBSF and Milvus's arctan (``WeightedRanker(norm_score=True)`` on IP scores).
ENGINE_NORMS = ("dbsf", "atan")
RRF_K = 60


def _query_codes(qid: NDArray[np.str_]) -> tuple[NDArray[np.int64], int]:
    _, inv = np.unique(qid, return_inverse=True)
    inv = inv.reshape(-1).astype(np.int64)
    return inv, int(inv.max()) + 1 if inv.size else 0


def _minmax_per_query(qcode: NDArray[np.int64], s: NDArray[np.float64], n_q: int) -> NDArray:
    lo = np.full(n_q, np.inf)
    hi = np.full(n_q, -np.inf)
    np.minimum.at(lo, qcode, s)
    np.maximum.at(hi, qcode, s)
    span = (hi - lo)[qcode]
    out = np.ones(s.shape[0])
    ok = span > 0
    out[ok] = (s[ok] - lo[qcode][ok]) / span[ok]
    return out


def _dbsf_per_query(qcode: NDArray[np.int64], s: NDArray[np.float64], n_q: int) -> NDArray:
    """Qdrant's DBSF: ``(s - (mean - 3 sd)) / (6 sd)``, sample sd; 0.5 for one or equal scores.

    qdrant-client 1.20 ``hybrid/fusion.py`` ``distribution_based_score_fusion.normalize``
    (``variance = sum((s - mean)**2) / (n - 1)``; ``n == 1`` or ``variance == 0``: 0.5; no
    clipping, so a score beyond 3 sd falls outside [0, 1]).
    """
    cnt = np.bincount(qcode, minlength=n_q).astype(np.float64)
    mean = np.bincount(qcode, s, minlength=n_q) / np.maximum(cnt, 1)
    dev = s - mean[qcode]
    var = (np.bincount(qcode, dev * dev, minlength=n_q) / np.maximum(cnt - 1, 1))[qcode]
    out = np.full(s.shape[0], 0.5)
    ok = (cnt[qcode] > 1) & (var > 0)
    sd = np.sqrt(var[ok])
    out[ok] = (s[ok] - (mean[qcode][ok] - 3 * sd)) / (6 * sd)
    return out


def _zscore_per_query(qcode: NDArray[np.int64], s: NDArray[np.float64], n_q: int) -> NDArray:
    cnt = np.bincount(qcode, minlength=n_q).astype(np.float64)
    mean = np.bincount(qcode, s, minlength=n_q) / np.maximum(cnt, 1)
    dev = s - mean[qcode]
    sd = np.sqrt(np.bincount(qcode, dev * dev, minlength=n_q) / np.maximum(cnt, 1))[qcode]
    out = np.zeros(s.shape[0])
    ok = sd > 0
    out[ok] = dev[ok] / sd[ok]
    return out


def _rrf_values(run: Run, k: int) -> NDArray[np.float64]:
    return 1.0 / (k + run.rank.astype(np.float64))


def _atan_values(run: Run, k: int) -> NDArray[np.float64]:
    return 0.5 + np.arctan(run.score.astype(np.float64)) / np.pi


def _per_query(
    fn: Callable[[NDArray[np.int64], NDArray[np.float64], int], NDArray[np.float64]],
) -> Callable[[Run, int], NDArray[np.float64]]:
    """``fn(qcode, scores, n_queries)`` as a function of ``(run, k)``."""

    def values(run: Run, k: int) -> NDArray[np.float64]:
        qcode, n_q = _query_codes(run.qid)
        return fn(qcode, run.score, n_q)

    return values


@dataclass(frozen=True)
class Normalizer:
    """One per-query normalisation: its values and its definition, side by side.

    ``definition`` is the one line ``rankboost info`` prints for a model trained with it
    (``{k}``: RRF's rank constant), so a normaliser cannot be described otherwise than it
    computes.
    """

    name: str
    definition: str
    values: Callable[[Run, int], NDArray[np.float64]]

    def describe(self, k: int = RRF_K) -> str:
        """The definition, with RRF's ``k`` filled in."""
        return self.definition.format(k=k)


#: Every per-query normalisation (:func:`normalise_scores`), name -> values and definition.
NORMALIZERS: dict[str, Normalizer] = by_name(
    (
        Normalizer(
            "minmax",
            "min-max normalised score in the query (1 when all are equal)",
            _per_query(_minmax_per_query),
        ),
        Normalizer(
            "zscore",
            "z-score in the query, (s - mean) / sd with the population sd (0 when all are equal)",
            _per_query(_zscore_per_query),
        ),
        Normalizer("rrf", "1 / ({k} + rank)", _rrf_values),
        Normalizer(
            "dbsf",
            "DBSF score in the query (Qdrant's distribution-based score fusion), "
            "(s - mean + 3 sd) / (6 sd) with the sample sd (0.5 when the query has one score "
            "or all are equal)",
            _per_query(_dbsf_per_query),
        ),
        Normalizer(
            "atan",
            "0.5 + arctan(score) / pi (Milvus's WeightedRanker norm_score on IP scores)",
            _atan_values,
        ),
    )
)


def normalise_scores(run: Run, method: str, *, k: int = RRF_K) -> NDArray[np.float64]:
    """One normalised value per entry of ``run``, computed within each query.

    Parameters
    ----------
    run : Run
        The list whose scores (or ranks) are normalised.
    method : {"minmax", "zscore", "rrf", "dbsf", "atan"}
        ``"minmax"``: ``(s - min) / (max - min)`` over the query's entries, 1 for every entry
        when all the query's scores are equal (the value Elasticsearch's ``minmax``
        normaliser and OpenSearch's ``min_max`` technique give a single result);
        ``"zscore"``: ``(s - mean) / std`` (population std), 0 when all are equal;
        ``"rrf"``: ``1 / (k + rank)``, the run's rank, as RRF (Cormack et al. 2009);
        ``"dbsf"``: Qdrant's distribution-based score fusion, ``(s - mean + 3 sd) / (6 sd)``
        with the sample sd, 0.5 when the query has one score or all are equal;
        ``"atan"``: ``0.5 + arctan(s) / pi``, Milvus's ``WeightedRanker(norm_score=True)`` on
        IP scores (milvus-lite 3.2 ``function/ops/merge_op.py`` ``_normalize_func``).
    k : int, default=60
        RRF's rank constant.

    Examples
    --------
    >>> from rankboost.fusion import Run
    >>> from rankboost.fusion.features import normalise_scores
    >>> run = Run(["q", "q", "q", "r"], ["a", "b", "c", "a"], [1, 2, 3, 1], [3.0, 2.0, 1.0, 5.0])
    >>> normalise_scores(run, "minmax").tolist()
    [1.0, 0.5, 0.0, 1.0]
    >>> normalise_scores(run, "rrf", k=1).tolist()
    [0.5, 0.3333333333333333, 0.25, 0.5]
    """
    if method not in NORMALIZERS:
        raise ValueError(f"method must be one of {SCORE_NORMS + ENGINE_NORMS}; got {method!r}.")
    return NORMALIZERS[method].values(run, k)


def score_norms_of(score_features: Any) -> tuple[str, ...]:
    """The normalisations a ``score_features`` value asks for (True = ``("minmax",)``).

    Examples
    --------
    >>> from rankboost.fusion.features import score_norms_of
    >>> score_norms_of(True), score_norms_of(False), score_norms_of("minmax+zscore")
    (('minmax',), (), ('minmax', 'zscore'))
    """
    if isinstance(score_features, (bool, np.bool_)):
        return ("minmax",) if score_features else ()
    if isinstance(score_features, str):
        names = tuple(n.strip() for n in score_features.split("+") if n.strip())
    elif isinstance(score_features, (tuple, list)):
        names = tuple(str(n) for n in score_features)
    else:
        names = ("?",)
    bad = [n for n in names if n not in SCORE_NORMS]
    if bad or not names or len(set(names)) != len(names):
        raise ValueError(
            f"score_features must be True, False, or normalisations of {SCORE_NORMS} joined "
            f"by '+' (e.g. 'minmax+zscore'), each at most once; got {score_features!r}."
        )
    return names


class Layout(NamedTuple):
    """The rows of a set of runs (:func:`layout`): what every fusion feature matrix shares."""

    #: query id of each row; rows grouped by query, queries in order of first appearance
    qid: NDArray[np.str_]
    #: document id of each row (within a query, in order of first appearance)
    docid: NDArray[np.str_]
    #: per run, the row of each of its entries
    rows: list[NDArray[np.int64]]


def _codes(values: NDArray[np.str_], table: dict[str, int], ordered: bool) -> NDArray[np.int32]:
    """Integer codes of ``values``; a value not in ``table`` gets the next code.

    ``ordered``: new values are numbered in their order of first appearance in ``values``
    (else in sorted order). One :func:`numpy.unique` of the strings and a dict lookup per
    distinct value, never one per entry; equal neighbours (a run's entries grouped by query)
    are coded once.
    """
    head = np.ones(values.shape[0], dtype=bool)
    head[1:] = values[1:] != values[:-1]
    heads = values[head]
    if ordered:
        uniq, first, inv = np.unique(heads, return_index=True, return_inverse=True)
        seen = np.argsort(first, kind="stable").tolist()
    else:
        uniq, inv = np.unique(heads, return_inverse=True)
        seen = range(uniq.shape[0])
    code = np.empty(uniq.shape[0], dtype=np.int64)
    names = uniq.tolist()
    for j in seen:
        code[j] = table.setdefault(names[j], len(table))
    sizes = np.diff(np.r_[np.flatnonzero(head), head.shape[0]])
    return np.repeat(code[inv.reshape(-1)], sizes).astype(np.int32)


def layout(items: list[Run]) -> Layout:
    """The rows of :func:`fusion_features`: one per (query, document) the runs return.

    Queries are numbered in order of first appearance across the runs (run 0's entries,
    then run 1's, ...) and a row's key is ``(query, document)`` as integers (never a joined
    string, whose bytes would grow with the id lengths). Rows are grouped by query, and
    within a query ordered by the first appearance of their key. The strings are coded run
    by run (:func:`_codes`), so the cost grows with the entries, and no array of every
    entry's strings is built; the keys' first appearances come from a table over every
    (query, document) code pair when it is no larger than the entries, else from one sort
    of the keys.
    """
    qmap: dict[str, int] = {}
    dmap: dict[str, int] = {}
    qcodes = [_codes(r.qid, qmap, True) for r in items]
    dcodes = [_codes(r.docid, dmap, False) for r in items]
    n_docs = max(len(dmap), 1)
    n_entries = sum(len(r) for r in items)
    if len(qmap) * n_docs <= max(n_entries, 1 << 16):  # dense: first appearance per key
        first_at = np.full(len(qmap) * n_docs, -1, dtype=np.int64)
        start = 0
        for qc, dc in zip(qcodes, dcodes, strict=True):
            k = qc.astype(np.int64) * n_docs + dc  # distinct in a run (it ranks a document once)
            new = first_at[k] < 0
            first_at[k[new]] = start + np.flatnonzero(new)
            start += k.shape[0]
        uk = np.flatnonzero(first_at >= 0)
        k_first = first_at[uk]
    else:
        keys = np.concatenate(
            [qc.astype(np.int64) * n_docs + dc for qc, dc in zip(qcodes, dcodes, strict=True)]
        )
        uk, k_first = np.unique(keys, return_index=True)
        del keys
    q_of_key = uk // n_docs
    order = np.lexsort((k_first, q_of_key))  # by query, then key, in order of first appearance
    row_of_key = np.empty(uk.shape[0], dtype=np.int64)
    row_of_key[order] = np.arange(uk.shape[0])
    rows = []
    for i, (qc, dc) in enumerate(zip(qcodes, dcodes, strict=True)):
        rows.append(row_of_key[np.searchsorted(uk, qc.astype(np.int64) * n_docs + dc)])
        qcodes[i] = dcodes[i] = qc[:0]  # freed as the rows are made
    qtype = np.result_type(*(r.qid.dtype for r in items))
    dtype = np.result_type(*(r.docid.dtype for r in items))
    qnames = np.asarray(list(qmap), dtype=qtype)
    dnames = np.asarray(list(dmap), dtype=dtype)
    return Layout(qnames[q_of_key[order]], dnames[(uk % n_docs)[order]], rows)


def fusion_features(
    runs: RunsLike,
    *,
    rank_feature: str = "neg_rank",
    score_features: bool | str | Sequence[str] = False,
    missing_features: bool = False,
) -> FusionFeatures:
    """Build the fusion feature matrix of a set of runs.

    Rows are the union of the documents the runs return, per query; queries appear in order
    of first appearance across the runs, and documents within a query in order of first
    appearance too.

    Parameters
    ----------
    runs : list of Run or dict of str to Run
        The input lists, in a fixed order (column ``i`` = list ``i``).
    rank_feature : {"neg_rank", "reciprocal"}, default="neg_rank"
        ``-rank`` or ``1/rank``. Both are strictly decreasing in the rank, so threshold
        rankers (and hence RankBoost with threshold weak rankers) learn the same model with
        either; the choice matters only for real-valued learners.
    score_features : bool or str, default=False
        Add, per list and per normalisation, the run's score normalised within each query
        (:func:`normalise_scores`), NaN where the list did not return the document: True =
        ``"minmax"`` (1 when all the query's scores are equal); a string joins several with
        ``+`` (``"minmax+zscore+rrf"``), one block of columns per normalisation, named
        ``"score:<list>"`` for min-max and ``"<norm>:<list>"`` for the others.
    missing_features : bool, default=False
        Add, per list, ``in:<list>``: 1 where the list returned the document and 0 where it
        is missing from that list (never NaN), then one column ``n_in``: how many lists
        returned it (CombMNZ's count). Present = 1, so that WeakLearn.cum's monotonicity
        reads "being returned never lowers the fused score".

    Returns
    -------
    FusionFeatures

    Examples
    --------
    >>> from rankboost.fusion import Run, fusion_features
    >>> a = Run(["q", "q"], ["d1", "d2"], [1, 2], name="a")
    >>> b = Run(["q"], ["d2"], [1], name="b")
    >>> f = fusion_features([a, b])
    >>> f.docid.tolist(), f.X.tolist(), f.feature_names
    (['d1', 'd2'], [[-1.0, nan], [-2.0, -1.0]], ['rank:a', 'rank:b'])
    >>> g = fusion_features([a, b], missing_features=True)
    >>> g.feature_names
    ['rank:a', 'rank:b', 'in:a', 'in:b', 'n_in']
    >>> g.X.tolist()
    [[-1.0, nan, 1.0, 0.0, 1.0], [-2.0, -1.0, 1.0, 1.0, 2.0]]
    """
    if rank_feature not in RANK_FEATURES:
        raise ValueError(
            f"rank_feature must be one of {RANK_FEATURES}; got {rank_feature!r} instead."
        )
    norms = score_norms_of(score_features)
    items = as_run_list(runs, "fusion_features")
    lay = layout(items)
    n_lists = len(items)
    n_feat = n_features_of(n_lists, score_features, missing_features)
    X = np.full((lay.qid.shape[0], n_feat), np.nan)
    for i, (r, idx) in enumerate(zip(items, lay.rows, strict=True)):
        X[idx, i] = _rank_values(r.rank, rank_feature)
        for b, norm in enumerate(norms):
            X[idx, n_lists * (1 + b) + i] = normalise_scores(r, norm)
    names = [f"rank:{r.name}" for r in items]
    for norm in norms:
        label = "score" if norm == "minmax" else norm
        names += [f"{label}:{r.name}" for r in items]
    if missing_features:
        col = n_lists * (1 + len(norms))
        present = ~np.isnan(X[:, :n_lists])
        X[:, col : col + n_lists] = present
        X[:, col + n_lists] = present.sum(axis=1)
        names += [f"in:{r.name}" for r in items] + ["n_in"]
    return FusionFeatures(X, lay.qid, lay.docid, names)


def rows_of(
    runs: list[Run], qid: NDArray[np.str_], docid: NDArray[np.str_]
) -> list[NDArray[np.int64]]:
    """Per run, the row of ``(qid, docid)`` (the rows of :func:`fusion_features`) of each entry.

    Every (query, document) of the runs must be a row. Vectorised (integer keys, one sort),
    so its cost grows as the entries times their logarithm, not a Python loop per entry.

    Examples
    --------
    >>> from rankboost.fusion import Run, fusion_features
    >>> from rankboost.fusion.features import rows_of
    >>> a = Run(["q", "q"], ["d1", "d2"], [1, 2], name="a")
    >>> b = Run(["q"], ["d2"], [1], name="b")
    >>> f = fusion_features([a, b])
    >>> [r.tolist() for r in rows_of([a, b], f.qid, f.docid)]
    [[0, 1], [1]]
    """
    qs = np.concatenate([qid, *(r.qid for r in runs)])
    ds = np.concatenate([docid, *(r.docid for r in runs)])
    _, qc = np.unique(qs, return_inverse=True)
    _, dc = np.unique(ds, return_inverse=True)
    keys = qc.reshape(-1).astype(np.int64) * (int(dc.max()) + 1 if dc.size else 1)
    keys += dc.reshape(-1)
    n = qid.shape[0]
    order = np.argsort(keys[:n], kind="stable")
    at = order[np.searchsorted(keys[:n], keys[n:], sorter=order)]
    out, start = [], 0
    for r in runs:
        out.append(at[start : start + len(r)].astype(np.int64))
        start += len(r)
    return out


def n_features_of(n_lists: int, score_features: Any, missing_features: bool) -> int:
    """Number of feature columns :func:`fusion_features` builds for ``n_lists`` lists."""
    n_norms = len(score_norms_of(score_features))
    return n_lists * (1 + n_norms) + (n_lists + 1 if missing_features else 0)


def grades_for(features: FusionFeatures, qrels: Qrels) -> NDArray[np.int64]:
    """Grade of every feature row from the qrels; 0 when unjudged (the TREC convention).

    Examples
    --------
    >>> from rankboost.fusion import Qrels, Run, fusion_features, grades_for
    >>> f = fusion_features([Run(["q", "q"], ["d1", "d2"], [1, 2])])
    >>> grades_for(f, Qrels(["q"], ["d2"], [2])).tolist()
    [0, 2]
    """
    table = qrels.to_dict()
    return np.asarray(
        [
            table.get(q, {}).get(d, 0)
            for q, d in zip(features.qid.tolist(), features.docid.tolist(), strict=True)
        ],
        dtype=np.int64,
    )


class FusionWarning(UserWarning):
    """Runs and qrels do not cover the same queries (the message says which and how many)."""


def coverage_warnings(items: list[Run], qrels: Qrels) -> None:
    judged = set(qrels.queries)
    in_runs: set[str] = set()
    for r in items:
        qs = set(r.queries)
        in_runs |= qs
        extra = sorted(qs - judged)
        if extra:
            warnings.warn(
                f"run {r.name}: {len(extra)} queries are not in the qrels (e.g. {extra[0]!r}); "
                "they give no training signal and are ignored for training.",
                FusionWarning,
                stacklevel=3,
            )
    missing = sorted(judged - in_runs)
    if missing:
        warnings.warn(
            f"qrels: {len(missing)} judged queries are in none of the runs (e.g. "
            f"{missing[0]!r}); there is nothing to fuse for them, they are ignored.",
            FusionWarning,
            stacklevel=3,
        )


def fused_run(
    qid: NDArray[np.str_], docid: NDArray[np.str_], scores: NDArray[np.float64], depth: int | None
) -> Run:
    """The fused run ``"rankboost"``: the top ``depth`` of each query (None = all).

    Ranks follow the decreasing scores, equal scores ordered by document id.
    """
    run = Run.from_scores(qid, docid, scores, name="rankboost", ties="docid")
    if depth is None:
        return run
    keep = run.rank <= depth
    return Run(run.qid[keep], run.docid[keep], run.rank[keep], run.score[keep], name=run.name)
