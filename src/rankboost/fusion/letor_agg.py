"""The LETOR 4.0 rank-aggregation format (MQ2008-agg, MQ2007-agg): reading, writing, folds.

``label qid:Q 1:r1 ... K:rK #docid = D ...`` where ``ri`` is the rank (1 = top) input ranker
``i`` gave the document and ``NULL`` means ranker ``i`` did not return it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..datasets._dataset import RankingDataset
from ..datasets._io import open_binary
from ._text import (
    PathLike,
    check_ids,
    once_per_query,
    parse_grade,
    positive_int,
    read_lines,
    write_text,
)
from .run import Qrels, Run

__all__ = ["AggData", "is_letor_agg", "read_letor_agg", "read_letor_agg_folds", "write_letor_agg"]


# ------------------------------------------------------------------ LETOR 4.0 agg --------
@dataclass
class AggData:
    """The content of a LETOR 4.0 aggregation file, one row per (query, document).

    Attributes
    ----------
    ranks : ndarray of shape (n_rows, n_rankers)
        Rank given by each input ranker (1 = top); NaN where it did not return the document.
    labels : ndarray of shape (n_rows,)
        Relevance grade (0, 1, 2 in MQ2008-agg / MQ2007-agg).
    qid : ndarray of str of shape (n_rows,)
        Query id of each row (without the ``qid:`` prefix).
    docid : ndarray of str of shape (n_rows,)
        Document id (from the ``#docid = ...`` comment).
    path : str
        Where it was read from.
    """

    ranks: NDArray[np.float64]
    labels: NDArray[np.int64]
    qid: NDArray[np.str_]
    docid: NDArray[np.str_]
    path: str = ""

    @property
    def n_rankers(self) -> int:
        """Number of input rankers (columns)."""
        return int(self.ranks.shape[1])

    @property
    def ranker_names(self) -> list[str]:
        """``["ranker1", ..., "rankerK"]`` (1-based, as in the file)."""
        return [f"ranker{i + 1}" for i in range(self.n_rankers)]

    def to_runs(self) -> dict[str, Run]:
        """One :class:`Run` per input ranker, ``score = -rank``; NULL entries are left out.

        A ranker that returned no document at all gives no run (a warning-free omission
        would shift list positions, so this raises ``ValueError`` instead).
        """
        out: dict[str, Run] = {}
        for i, name in enumerate(self.ranker_names):
            col = self.ranks[:, i]
            ok = ~np.isnan(col)
            if not ok.any():
                raise ValueError(
                    f"{self.path}: input ranker {i + 1} returned no document (every value is "
                    "NULL); it cannot be read as a run."
                )
            out[name] = Run(
                self.qid[ok], self.docid[ok], col[ok].astype(np.int64), -col[ok], name=name
            )
        return out

    def to_qrels(self) -> Qrels:
        """Every row's label as a judgement (LETOR judges every listed document)."""
        return Qrels(self.qid, self.docid, self.labels)

    def to_dataset(self) -> RankingDataset:
        """The file as a :class:`rankboost.datasets.RankingDataset` for ``rankboost.train``.

        ``X`` holds the ranks as written (1 = top, one column per input ranker) with NaN
        for ``NULL``, which every weak ranker reads as "abstain"; ``y`` the labels; ``qid``
        the query ids (int64 when all are integers, as in LETOR, else str); ``docids``.

        Examples
        --------
        >>> import numpy as np
        >>> from rankboost.fusion import AggData
        >>> agg = AggData(np.array([[2.0, np.nan]]), np.array([1]), np.array(["7"]),
        ...               np.array(["a"]))
        >>> agg.to_dataset().X.tolist(), agg.to_dataset().qid.tolist()
        ([[2.0, nan]], [7])
        """
        try:
            qid: NDArray[Any] = self.qid.astype(np.int64)
        except (ValueError, OverflowError):
            qid = self.qid
        return RankingDataset(
            np.ascontiguousarray(self.ranks, dtype=np.float64),
            self.labels.astype(np.float64),
            qid,
            self.docid,
        )


_NULL_SLOT = re.compile(rb"(?m)^[^#\n]*?\s\d+:NULL(?=\s|$)")


def is_letor_agg(path: PathLike) -> bool:
    r"""Whether a data line of ``path`` has a ``k:NULL`` slot (LETOR 4.0 aggregation format).

    SVMlight values are numbers, so ``NULL`` marks a LETOR aggregation file (``NULL`` = the
    ranker did not return the document). False for a file that cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> from rankboost.fusion import is_letor_agg
    >>> path = os.path.join(tempfile.mkdtemp(), "agg.txt")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write("1 qid:7 1:2 2:NULL #docid = a\n")
    >>> is_letor_agg(path)
    True
    """
    try:
        with open_binary(Path(path)) as fh:
            data = fh.read()
    except (OSError, EOFError, ValueError):
        return False
    return _NULL_SLOT.search(data) is not None


def read_letor_agg(path: PathLike, *, n_rankers: int | None = None) -> AggData:
    r"""Read a LETOR 4.0 rank-aggregation file (``label qid:Q 1:r ... K:NULL #docid = D``).

    Parameters
    ----------
    path : str or path-like
        The file (e.g. ``MQ2008-agg/Fold1/train.txt.gz``).
    n_rankers : int, default=None
        Expected number of input rankers ``K``; None takes it from the first line.

    Returns
    -------
    AggData

    Raises
    ------
    ValueError
        For damaged compressed data or text that is not UTF-8; with the file and line, for
        a malformed line, a slot out of order, a line with a
        different number of rankers, a rank that is neither a positive integer nor ``NULL``,
        a missing ``#docid = ...`` comment, a document listed twice for a query, or an empty
        file.

    Examples
    --------
    >>> import os, tempfile
    >>> from rankboost.fusion import read_letor_agg
    >>> path = os.path.join(tempfile.mkdtemp(), "agg.txt")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write("1 qid:7 1:2 2:NULL #docid = a\n0 qid:7 1:1 2:1 #docid = b\n")
    >>> data = read_letor_agg(path)
    >>> data.ranks.tolist(), data.labels.tolist(), data.docid.tolist()
    ([[2.0, nan], [1.0, 1.0]], [1, 0], ['a', 'b'])
    """
    rows: list[list[float]] = []
    labels: list[int] = []
    qs: list[str] = []
    ds: list[str] = []
    first_line: dict[tuple[str, str], int] = {}
    k = n_rankers
    for no, line in read_lines(path, "LETOR aggregation file"):
        if not line.strip():
            continue
        where = f"{path}:{no}"
        data, hash_, comment = line.partition("#")
        parts = data.split()
        if len(parts) < 3 or not parts[1].startswith("qid:"):
            raise ValueError(
                f"{where}: a LETOR aggregation line is 'label qid:Q 1:r1 ... K:rK #docid = D'; "
                f"got {line.strip()[:80]!r}."
            )
        label = parse_grade(parts[0], where, "label")
        q = parts[1][4:]
        slots = parts[2:]
        if k is None:
            k = len(slots)
        if len(slots) != k:
            raise ValueError(
                f"{where}: {len(slots)} rankers on this line but {k} expected (every line of "
                "a LETOR aggregation file lists all K slots, NULL included)."
            )
        values: list[float] = []
        for j, slot in enumerate(slots, start=1):
            idx, colon, val = slot.partition(":")
            if not colon or idx != str(j):
                raise ValueError(f"{where}: slot {j} should read '{j}:rank'; got {slot!r}.")
            values.append(
                np.nan if val == "NULL" else positive_int(val, where, f"rank of ranker {j}")
            )
        tokens = comment.split()
        if not hash_ or len(tokens) < 3 or tokens[0] != "docid" or tokens[1] != "=":
            raise ValueError(f"{where}: missing '#docid = ...' comment; every row needs one.")
        d = tokens[2]
        once_per_query(first_line, q, d, no, where, "appears twice in")
        rows.append(values)
        labels.append(label)
        qs.append(q)
        ds.append(d)
    if not rows:
        raise ValueError(f"{path}: empty LETOR aggregation file (no lines).")
    return AggData(
        np.asarray(rows, dtype=np.float64),
        np.asarray(labels, dtype=np.int64),
        np.asarray(qs).astype(str),
        np.asarray(ds).astype(str),
        str(path),
    )


def read_letor_agg_folds(
    fold_dir: PathLike, splits: Sequence[str] = ("train", "vali", "test")
) -> dict[str, AggData]:
    """Read the ``{train,vali,test}.txt[.gz]`` files of one LETOR fold and check they match.

    Raises ``ValueError`` naming both files when two splits have different numbers of
    rankers or share a query (the official folds are disjoint by query).

    Examples
    --------
    >>> from rankboost.fusion import read_letor_agg_folds
    >>> read_letor_agg_folds("no/such/Fold1")
    Traceback (most recent call last):
    ...
    FileNotFoundError: no/such/Fold1/train.txt(.gz): no such file
    """
    out: dict[str, AggData] = {}
    for split in splits:
        base = Path(fold_dir) / f"{split}.txt"
        path = base if base.is_file() else Path(str(base) + ".gz")
        if not path.is_file():
            raise FileNotFoundError(f"{base}(.gz): no such file")
        out[split] = read_letor_agg(path)
    names = list(out)
    for a_i, a in enumerate(names):
        for b in names[a_i + 1 :]:
            if out[a].n_rankers != out[b].n_rankers:
                raise ValueError(
                    f"mismatched fold files: {out[a].path} has {out[a].n_rankers} rankers but "
                    f"{out[b].path} has {out[b].n_rankers}."
                )
            shared = np.intersect1d(out[a].qid, out[b].qid)
            if shared.size:
                raise ValueError(
                    f"mismatched fold files: {out[a].path} and {out[b].path} share "
                    f"{shared.size} queries (e.g. qid {shared[0]}); folds must be disjoint."
                )
    return out


def write_letor_agg(path: PathLike, runs: Mapping[str, Run] | Sequence[Run], qrels: Qrels) -> None:
    """Write runs + qrels in the LETOR 4.0 aggregation format (atomic; gz by extension).

    Rows are the judged documents plus any retrieved unjudged ones (label 0, the TREC
    convention), query by query in order of first appearance in ``qrels``; column ``i`` is
    the rank given by ``runs[i]``, ``NULL`` where it did not return the document. Queries
    only in the runs are written after the judged ones.

    Examples
    --------
    >>> import os, tempfile
    >>> from rankboost.fusion import Qrels, Run, read_letor_agg, write_letor_agg
    >>> path = os.path.join(tempfile.mkdtemp(), "agg.txt")
    >>> runs = [Run(["7"], ["a"], [3]), Run(["7"], ["b"], [1])]
    >>> write_letor_agg(path, runs, Qrels(["7", "7"], ["a", "b"], [1, 0]))
    >>> print(open(path).read(), end="")
    1 qid:7 1:3 2:NULL #docid = a
    0 qid:7 1:NULL 2:1 #docid = b
    """
    run_list = list(runs.values()) if isinstance(runs, Mapping) else list(runs)
    check_ids(qrels.qid, qrels.docid, "write_letor_agg: qrels", letor=True)
    for i, run in enumerate(run_list):
        check_ids(run.qid, run.docid, f"write_letor_agg: run {i + 1} ({run.name!r})", letor=True)
    keys: dict[tuple[str, str], int] = {}
    qorder: dict[str, int] = {}
    for q, d in zip(qrels.qid.tolist(), qrels.docid.tolist(), strict=True):
        qorder.setdefault(q, len(qorder))
        keys.setdefault((q, d), len(keys))
    for run in run_list:
        for q, d in zip(run.qid.tolist(), run.docid.tolist(), strict=True):
            qorder.setdefault(q, len(qorder))
            keys.setdefault((q, d), len(keys))
    ranks = np.full((len(keys), len(run_list)), -1, dtype=np.int64)
    for i, run in enumerate(run_list):
        idx = [keys[(q, d)] for q, d in zip(run.qid.tolist(), run.docid.tolist(), strict=True)]
        ranks[idx, i] = run.rank
    grade = qrels.to_dict()
    items = sorted(keys.items(), key=lambda kv: (qorder[kv[0][0]], kv[1]))
    lines = []
    for (q, d), row in items:
        cols = " ".join(
            f"{j + 1}:{'NULL' if r < 0 else r}" for j, r in enumerate(ranks[row].tolist())
        )
        lines.append(f"{grade.get(q, {}).get(d, 0)} qid:{q} {cols} #docid = {d}\n")
    write_text(path, "".join(lines))
