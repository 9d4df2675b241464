"""In-memory ranked lists (TREC runs) and relevance judgements (TREC qrels).

Both are stored column-wise (one NumPy array per TREC column), so that building fusion
features stays vectorised. Query and document ids are strings, as in TREC files.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["Qrels", "Run"]


def _str_array(values: ArrayLike, name: str, owner: str) -> NDArray[np.str_]:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{owner}: {name} must be 1-D; got shape {arr.shape}.")
    return arr.astype(str)


def _duplicates(qid: NDArray[np.str_], docid: NDArray[np.str_]) -> tuple[int, int] | None:
    """Rows ``(first, second)`` of the first repeated (qid, docid) pair, if any."""
    if qid.shape[0] < 2:
        return None
    order = np.lexsort((docid, qid))
    same = (qid[order][1:] == qid[order][:-1]) & (docid[order][1:] == docid[order][:-1])
    if not same.any():
        return None
    dup_rows = np.flatnonzero(same)
    # report the duplicate that occurs first in the input
    firsts = order[dup_rows]
    seconds = order[dup_rows + 1]
    lo, hi = np.minimum(firsts, seconds), np.maximum(firsts, seconds)
    j = int(np.argmin(hi))
    return int(lo[j]), int(hi[j])


def _first_appearance(values: NDArray[np.str_]) -> list[str]:
    uniq, first = np.unique(values, return_index=True)
    return [str(u) for u in uniq[np.argsort(first, kind="stable")]]


def _columns(
    owner: str, qid: ArrayLike, docid: ArrayLike, values: ArrayLike, name: str, what: str
) -> tuple[NDArray[np.str_], NDArray[np.str_], NDArray[np.int64]]:
    """``qid`` and ``docid`` as 1-D strings and ``values`` (``name``: ``what``) as int64.

    Whole floats are integers; the three columns must have one length.
    """
    q = _str_array(qid, "qid", owner)
    d = _str_array(docid, "docid", owner)
    v = np.asarray(values)
    if v.dtype.kind == "f" and v.size and np.all(np.isfinite(v)) and np.all(v == np.round(v)):
        v = v.astype(np.int64)
    if v.ndim != 1 or (v.size and v.dtype.kind not in "iu"):
        raise ValueError(
            f"{owner}: {name} must be a 1-D array of {what}; got dtype {v.dtype} and shape "
            f"{v.shape}."
        )
    v = v.astype(np.int64)
    if not q.shape[0] == d.shape[0] == v.shape[0]:
        raise ValueError(
            f"{owner}: qid, docid and {name} must have the same length; got {q.shape[0]}, "
            f"{d.shape[0]} and {v.shape[0]}."
        )
    return q, d, v


def _check_once(
    owner: str, q: NDArray[np.str_], d: NDArray[np.str_], twice: str, why: str = ""
) -> None:
    """Refuse a (qid, docid) pair given twice; ``twice`` and ``why`` are the class's words."""
    dup = _duplicates(q, d)
    if dup is not None:
        raise ValueError(
            f"{owner}: document {str(d[dup[1]])!r} {twice} query {str(q[dup[1]])!r} "
            f"(entries {dup[0]} and {dup[1]}){why}."
        )


class _ByQuery:
    """What a run and qrels share: one entry per (qid, docid) pair, columns as arrays."""

    qid: NDArray[np.str_]
    docid: NDArray[np.str_]

    @property
    def queries(self) -> list[str]:
        """Query ids in order of first appearance."""
        return _first_appearance(self.qid)

    def __len__(self) -> int:
        return int(self.qid.shape[0])

    def _nested(self, values: list[Any]) -> dict[str, dict[str, Any]]:
        """``{qid: {docid: value}}`` of one value per entry."""
        out: dict[str, dict[str, Any]] = {}
        for q, d, v in zip(self.qid.tolist(), self.docid.tolist(), values, strict=True):
            out.setdefault(q, {})[d] = v
        return out


class Run(_ByQuery):
    """One ranked list per query: a TREC run (``qid Q0 docid rank score tag``).

    Parameters
    ----------
    qid : array-like of str of shape (n_entries,)
        Query id of each entry.
    docid : array-like of str of shape (n_entries,)
        Document id of each entry; a document appears at most once per query.
    rank : array-like of int of shape (n_entries,)
        Position of the document in its query's list, a positive integer (1 = top). Equal
        ranks are ties; gaps are allowed (e.g. the ranks of a sub-list).
    score : array-like of float of shape (n_entries,), default=None
        Retrieval score (higher = better); None uses ``-rank``.
    name : str, default="run"
        Name of the list (the file it came from, or the system's tag).

    Attributes
    ----------
    queries : list of str
        Query ids in order of first appearance.

    Examples
    --------
    >>> from rankboost.fusion import Run
    >>> run = Run(["q1", "q1", "q2"], ["d1", "d2", "d1"], [1, 2, 1], name="bm25")
    >>> run.queries, len(run)
    (['q1', 'q2'], 3)
    >>> run.to_dict()["q1"]
    {'d1': -1.0, 'd2': -2.0}
    """

    def __init__(
        self,
        qid: ArrayLike,
        docid: ArrayLike,
        rank: ArrayLike,
        score: ArrayLike | None = None,
        *,
        name: str = "run",
    ) -> None:
        owner = f"Run {name!r}"
        q, d, r = _columns(owner, qid, docid, rank, "rank", "positive integers")
        if q.shape[0] == 0:
            raise ValueError(f"{owner} is empty: a run needs at least one (qid, docid) entry.")
        if (r < 1).any():
            k = int(np.flatnonzero(r < 1)[0])
            raise ValueError(
                f"{owner}: rank must be a positive integer (1 = top); entry {k} "
                f"(qid {str(q[k])!r}, docid {str(d[k])!r}) has rank {int(r[k])}."
            )
        if score is None:
            s = -r.astype(np.float64)
        else:
            s = np.asarray(score, dtype=np.float64)
            if s.shape != r.shape:
                raise ValueError(
                    f"{owner}: score must have one value per entry ({r.shape[0]}); got shape "
                    f"{s.shape}."
                )
            if not np.isfinite(s).all():
                k = int(np.flatnonzero(~np.isfinite(s))[0])
                raise ValueError(
                    f"{owner}: score must be finite; entry {k} (qid {str(q[k])!r}, docid "
                    f"{str(d[k])!r}) has score {s[k]}."
                )
        _check_once(owner, q, d, "appears twice in", "; a list ranks each document once")
        self.qid = q
        self.docid = d
        self.rank = r
        self.score = s
        self.name = str(name)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{qid: {docid: score}}``, the format of ranx and pytrec_eval."""
        return self._nested(self.score.tolist())

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, float]], *, name: str = "run") -> Run:
        """Build a run from ``{qid: {docid: score}}``; ranks follow the scores.

        Within a query, rank 1 goes to the highest score; equal scores are ordered by
        document id (ascending), so ranks are ``1..n`` without ties.

        Examples
        --------
        >>> from rankboost.fusion import Run
        >>> run = Run.from_dict({"q1": {"a": 0.5, "b": 2.0}})
        >>> run.docid.tolist(), run.rank.tolist()
        (['b', 'a'], [1, 2])
        """
        qs: list[str] = []
        ds: list[str] = []
        rs: list[int] = []
        ss: list[float] = []
        for q, docs in data.items():
            items = sorted(docs.items(), key=lambda kv: (-float(kv[1]), str(kv[0])))
            for pos, (d, s) in enumerate(items, start=1):
                qs.append(str(q))
                ds.append(str(d))
                rs.append(pos)
                ss.append(float(s))
        return cls(qs, ds, np.asarray(rs, dtype=np.int64), ss, name=name)

    @classmethod
    def from_scores(
        cls,
        qid: ArrayLike,
        docid: ArrayLike,
        score: ArrayLike,
        *,
        name: str = "run",
        ties: str = "input",
    ) -> Run:
        """Build a run from one score per (query, document) row; ranks follow the scores.

        Within a query, rank 1 goes to the highest score and ranks are ``1..n`` without
        ties: equal scores keep their input order (``ties="input"``, a stable sort) or are
        ordered by document id (``ties="docid"``, as :meth:`from_dict`). Queries keep their
        order of first appearance.

        Examples
        --------
        >>> from rankboost.fusion import Run
        >>> run = Run.from_scores(["q", "q", "q"], ["a", "b", "c"], [0.5, 2.0, 0.5])
        >>> run.docid.tolist(), run.rank.tolist()
        (['b', 'a', 'c'], [1, 2, 3])
        """
        if ties not in ("input", "docid"):
            raise ValueError(f"ties must be 'input' or 'docid'; got {ties!r}.")
        q = _str_array(qid, "qid", f"Run {name!r}")
        s = np.asarray(score, dtype=np.float64)
        if s.shape != q.shape:
            raise ValueError(
                f"Run {name!r}: score must have one value per qid ({q.shape[0]}); got shape "
                f"{s.shape}."
            )
        _, first, inv = np.unique(q, return_index=True, return_inverse=True)
        qpos = np.argsort(np.argsort(first, kind="stable"), kind="stable")[inv.reshape(-1)]
        d = _str_array(docid, "docid", f"Run {name!r}")
        if d.shape != q.shape:
            raise ValueError(
                f"Run {name!r}: docid must have one value per qid ({q.shape[0]}); got shape "
                f"{d.shape}."
            )
        # sort keys, last = primary: query (first appearance), decreasing score, then the tie
        # order (input order, or document id)
        tie = np.arange(q.shape[0]) if ties == "input" else d
        order = np.lexsort((tie, -s, qpos))
        grouped = qpos[order]
        starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
        sizes = np.diff(np.r_[starts, grouped.shape[0]])
        rank = np.arange(grouped.shape[0]) - np.repeat(starts, sizes) + 1
        return cls(q[order], d[order], rank.astype(np.int64), s[order], name=name)

    def sorted(self) -> Run:
        """The same run with entries grouped by query (first appearance), then by rank.

        Equal ranks are ordered by decreasing score, then document id.
        """
        order_q = {q: i for i, q in enumerate(self.queries)}
        qpos = np.array([order_q[q] for q in self.qid.tolist()], dtype=np.int64)
        order = np.lexsort((self.docid, -self.score, self.rank, qpos))
        return Run(
            self.qid[order], self.docid[order], self.rank[order], self.score[order], name=self.name
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Run):
            return NotImplemented
        a, b = self.sorted(), other.sorted()
        return (
            len(a) == len(b)
            and bool(np.array_equal(a.qid, b.qid))
            and bool(np.array_equal(a.docid, b.docid))
            and bool(np.array_equal(a.rank, b.rank))
            and bool(np.array_equal(a.score, b.score))
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Run(name={self.name!r}, n_queries={len(self.queries)}, n_entries={len(self)})"


class Qrels(_ByQuery):
    """Relevance judgements: a TREC qrels (``qid 0 docid rel``).

    Parameters
    ----------
    qid : array-like of str of shape (n_judgements,)
        Query id of each judgement.
    docid : array-like of str of shape (n_judgements,)
        Judged document; at most one judgement per (query, document).
    rel : array-like of int of shape (n_judgements,)
        Relevance grade (higher = more relevant; 0 = judged not relevant; negative grades,
        e.g. TREC's spam -2, are allowed and rank below 0).

    Examples
    --------
    >>> from rankboost.fusion import Qrels
    >>> qrels = Qrels(["q1", "q1"], ["d1", "d2"], [2, 0])
    >>> qrels.to_dict()
    {'q1': {'d1': 2, 'd2': 0}}
    """

    def __init__(self, qid: ArrayLike, docid: ArrayLike, rel: ArrayLike) -> None:
        owner = "Qrels"
        q, d, g = _columns(owner, qid, docid, rel, "rel", "integer grades")
        if q.shape[0] == 0:
            raise ValueError("Qrels is empty: pass at least one judgement.")
        _check_once(owner, q, d, "is judged twice for")
        self.qid = q
        self.docid = d
        self.rel = g

    def to_dict(self) -> dict[str, dict[str, int]]:
        """``{qid: {docid: rel}}``, the format of ranx and pytrec_eval."""
        return self._nested(self.rel.tolist())

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, Any]]) -> Qrels:
        """Build qrels from ``{qid: {docid: rel}}``."""
        qs = [str(q) for q, docs in data.items() for _ in docs]
        ds = [str(d) for docs in data.values() for d in docs]
        gs = [int(g) for docs in data.values() for g in docs.values()]
        return cls(qs, ds, np.asarray(gs, dtype=np.int64))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Qrels):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Qrels(n_queries={len(self.queries)}, n_judgements={len(self)})"
