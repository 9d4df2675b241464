"""Readers and writers: TREC runs, TREC qrels and the LETOR 4.0 rank-aggregation format.

* TREC run: ``qid Q0 docid rank score tag``, whitespace separated, one entry per line.
* TREC qrels: ``qid iteration docid rel`` (the iteration column is ignored, written as 0).
* LETOR 4.0 aggregation (MQ2008-agg, MQ2007-agg): ``label qid:Q 1:r1 ... K:rK #docid = D ...``
  where ``ri`` is the rank (1 = top) input ranker ``i`` gave the document and ``NULL`` means
  ranker ``i`` did not return it.

Reading undoes gzip, bzip2 and xz (detected by the file's magic bytes; damaged or truncated
compressed data is a ``ValueError`` naming the file); a path ending in ``.gz`` is written
gzip-compressed (``mtime = 0``, so the bytes are reproducible). Every writer is atomic: the text
goes to a temporary file in the target folder that is then renamed over the target. Blank
lines and lines starting with ``#`` are skipped by the TREC readers. Errors name the file and
the line.
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._atomic import atomic_write_bytes, atomic_write_text
from ..datasets._dataset import RankingDataset
from ..datasets._io import compression, decompression_errors, open_binary
from .run import Qrels, Run

__all__ = [
    "AggData",
    "format_run",
    "is_letor_agg",
    "read_letor_agg",
    "read_letor_agg_folds",
    "read_qrels",
    "read_run",
    "read_runs",
    "write_letor_agg",
    "write_qrels",
    "write_run",
]

PathLike = str | os.PathLike[str]


# ------------------------------------------------------------------ low level ------------
def _lines(path: PathLike, what: str) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)``; gzip, bzip2 and xz are detected from the magic bytes.

    Damaged compressed data and text that is not UTF-8 are ``ValueError``s naming the file.
    """
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"{path}: is a directory; pass a {what}.")
    if not p.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    kind = compression(p)
    # NOTE: decompress everything before parsing: a corrupt stream is then reported as
    # such, not as a garbage line (gzip checks its CRC only at the end).
    with decompression_errors(path, what, kind), open_binary(p) as fh:
        data = fh.read()
    for no, raw in enumerate(data.split(b"\n"), start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{path}:{no}: not UTF-8 text ({exc.reason} at byte {exc.start}); is it a {what}?"
            ) from None
        yield no, text


def _write(path: PathLike, text: str) -> None:
    """Atomic write; gzip when ``path`` ends in ``.gz``."""
    if not str(path).endswith(".gz"):
        atomic_write_text(path, text)
        return
    atomic_write_bytes(path, gzip.compress(text.encode("utf-8"), mtime=0))


def _check_ids(qid: Any, docid: Any, what: str) -> None:
    """Refuse ids that a TREC file cannot hold: they would not read back as written."""
    for name, ids in (("qid", qid), ("docid", docid)):
        for i, v in enumerate(ids.tolist()):
            if not v or any(c.isspace() for c in v) or (name == "qid" and v.startswith("#")):
                why = "empty" if not v else "starts with '#'" if v[0] == "#" else "has whitespace"
                raise ValueError(
                    f"{what}: {name} {v!r} (entry {i}) cannot be written to a TREC file: it is "
                    f"{why}; ids must be non-empty, without whitespace, and a qid must not "
                    "start with '#' (a comment line). Rename it first."
                )


#: The largest rank a file may give (ranks are exact in float64 up to 2**53).
MAX_RANK = 2**53
_INT64 = (-(2**63), 2**63 - 1)


def _positive_int(text: str, where: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_RANK:
        raise ValueError(
            f"{where}: {what} must be a positive integer (1 = top) of at most 2**53 = "
            f"{MAX_RANK}; got {text!r}."
        )
    return value


def _grade(text: str, where: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{where}: {what} must be an integer grade; got {text!r}.") from None
    if not _INT64[0] <= value <= _INT64[1]:
        raise ValueError(
            f"{where}: {what} {text!r} is outside the int64 range [{_INT64[0]}, {_INT64[1]}]."
        )
    return value


# ------------------------------------------------------------------ TREC runs ------------
def read_run(path: PathLike, *, name: str | None = None, depth: int | None = None) -> Run:
    r"""Read a TREC run file (``qid Q0 docid rank score tag``), gzipped or not.

    Parameters
    ----------
    path : str or path-like
        The run file.
    name : str, default=None
        Name of the returned run; None uses ``str(path)``.
    depth : int, default=None
        Keep only entries with ``rank <= depth`` (the top ``depth`` of each list).

    Returns
    -------
    Run

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        For damaged compressed data or text that is not UTF-8; with the file and line, for
        a line without 6 columns, a rank that is not a positive
        integer, a score that is not a finite number, a document listed twice for a query,
        or a file without entries.

    Notes
    -----
    The rank column is kept as given and defines the list's order (``trec_eval`` ignores it
    and re-sorts by score; the two agree for a well-formed run).

    Examples
    --------
    >>> import os, tempfile
    >>> from rankboost.fusion import read_run
    >>> path = os.path.join(tempfile.mkdtemp(), "a.run")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write("1 Q0 d3 1 2.5 bm25\n1 Q0 d1 2 1.5 bm25\n")
    >>> run = read_run(path, name="bm25")
    >>> run.docid.tolist(), run.rank.tolist(), run.score.tolist()
    (['d3', 'd1'], [1, 2], [2.5, 1.5])
    """
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise ValueError(f"depth must be a positive int or None; got {depth!r}.")
    qs: list[str] = []
    ds: list[str] = []
    rs: list[int] = []
    ss: list[float] = []
    first_line: dict[tuple[str, str], int] = {}
    for no, line in _lines(path, "TREC run file"):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        where = f"{path}:{no}"
        if len(parts) != 6:
            raise ValueError(
                f"{where}: a TREC run line has 6 columns (qid Q0 docid rank score tag); got "
                f"{len(parts)}: {line.strip()!r}."
            )
        q, _, d, rank_text, score_text, _ = parts
        rank = _positive_int(rank_text, where, "rank")
        try:
            score = float(score_text)
        except ValueError:
            score = float("nan")
        if not np.isfinite(score):
            raise ValueError(f"{where}: score must be a finite number; got {score_text!r}.")
        key = (q, d)
        if key in first_line:
            raise ValueError(
                f"{where}: document {d!r} appears twice in query {q!r} (first at line "
                f"{first_line[key]}); a run ranks each document once per query."
            )
        first_line[key] = no
        if depth is not None and rank > depth:
            continue
        qs.append(q)
        ds.append(d)
        rs.append(rank)
        ss.append(score)
    if not qs:
        raise ValueError(f"{path}: empty run (no 'qid Q0 docid rank score tag' lines).")
    return Run(qs, ds, np.asarray(rs, dtype=np.int64), ss, name=str(path) if name is None else name)


def read_runs(paths: Sequence[PathLike], *, depth: int | None = None) -> dict[str, Run]:
    """Read several run files; returns ``{str(path): run}`` in the order given.

    Examples
    --------
    >>> from rankboost.fusion import read_runs
    >>> read_runs([])
    Traceback (most recent call last):
    ...
    ValueError: read_runs needs at least one run file; got none.
    """
    if len(paths) == 0:
        raise ValueError("read_runs needs at least one run file; got none.")
    out: dict[str, Run] = {}
    for p in paths:
        key = str(p)
        if key in out:
            raise ValueError(f"run file {key} is given twice; each input list must be distinct.")
        out[key] = read_run(p, depth=depth)
    return out


def format_run(run: Run, *, tag: str | None = None, depth: int | None = None) -> str:
    """The text of a TREC run file (``qid Q0 docid rank score tag`` lines), as written.

    Entries are grouped by query (in order of first appearance) and sorted by rank; scores
    are written with ``repr`` so they read back exactly. :func:`write_run` writes this text.

    Parameters
    ----------
    run : Run
        The run to format.
    tag : str, default=None
        The 6th column; None uses the run's name (whitespace replaced by ``_``).
    depth : int, default=None
        Keep only entries with ``rank <= depth``.

    Examples
    --------
    >>> from rankboost.fusion import Run, format_run
    >>> print(format_run(Run(["1", "1"], ["d2", "d1"], [2, 1], [0.25, 0.5]), tag="x"), end="")
    1 Q0 d1 1 0.5 x
    1 Q0 d2 2 0.25 x
    """
    label = "_".join((run.name if tag is None else tag).split()) or "run"
    _check_ids(run.qid, run.docid, "format_run")
    srt = run.sorted()
    keep = np.ones(len(srt), dtype=bool) if depth is None else srt.rank <= depth
    return "".join(
        f"{q} Q0 {d} {r} {s!r} {label}\n"
        for q, d, r, s in zip(
            srt.qid[keep].tolist(),
            srt.docid[keep].tolist(),
            srt.rank[keep].tolist(),
            srt.score[keep].tolist(),
            strict=False,
        )
    )


def write_run(
    path: PathLike, run: Run, *, tag: str | None = None, depth: int | None = None
) -> None:
    """Write a run as a TREC run file (atomic; gzip if ``path`` ends in ``.gz``).

    Entries are grouped by query (in order of first appearance) and sorted by rank; scores
    are written with ``repr`` so they read back exactly (the text of :func:`format_run`).

    Parameters
    ----------
    path : str or path-like
        Target file.
    run : Run
        The run to write.
    tag : str, default=None
        The 6th column; None uses the run's name (whitespace replaced by ``_``).
    depth : int, default=None
        Write only entries with ``rank <= depth``.

    Examples
    --------
    >>> import os, tempfile
    >>> from rankboost.fusion import Run, read_run, write_run
    >>> path = os.path.join(tempfile.mkdtemp(), "a.run.gz")
    >>> run = Run(["1", "1"], ["d1", "d2"], [1, 2], [0.5, 0.25], name="x")
    >>> write_run(path, run)
    >>> read_run(path, name="x") == run
    True
    """
    _write(path, format_run(run, tag=tag, depth=depth))


# ------------------------------------------------------------------ TREC qrels -----------
def read_qrels(path: PathLike) -> Qrels:
    r"""Read a TREC qrels file (``qid iteration docid rel``), gzipped or not.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        For damaged compressed data or text that is not UTF-8; with the file and line, for
        a line without 4 columns, a grade that is not an
        integer, a document judged twice for a query, or a file without judgements.

    Examples
    --------
    >>> import os, tempfile
    >>> from rankboost.fusion import read_qrels
    >>> path = os.path.join(tempfile.mkdtemp(), "q.txt")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write("1 0 d1 2\n1 0 d2 0\n")
    >>> read_qrels(path).to_dict()
    {'1': {'d1': 2, 'd2': 0}}
    """
    qs: list[str] = []
    ds: list[str] = []
    gs: list[int] = []
    first_line: dict[tuple[str, str], int] = {}
    for no, line in _lines(path, "TREC qrels file"):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        where = f"{path}:{no}"
        if len(parts) != 4:
            raise ValueError(
                f"{where}: a TREC qrels line has 4 columns (qid 0 docid rel); got "
                f"{len(parts)}: {line.strip()!r}."
            )
        q, _, d, g = parts
        grade = _grade(g, where, "rel")
        if (q, d) in first_line:
            raise ValueError(
                f"{where}: document {d!r} is judged twice for query {q!r} (first at line "
                f"{first_line[(q, d)]})."
            )
        first_line[(q, d)] = no
        qs.append(q)
        ds.append(d)
        gs.append(grade)
    if not qs:
        raise ValueError(f"{path}: empty qrels (no 'qid 0 docid rel' lines).")
    return Qrels(qs, ds, np.asarray(gs, dtype=np.int64))


def write_qrels(path: PathLike, qrels: Qrels) -> None:
    """Write qrels as a TREC qrels file (atomic; gzip if ``path`` ends in ``.gz``).

    Examples
    --------
    >>> import os, tempfile
    >>> from rankboost.fusion import Qrels, read_qrels, write_qrels
    >>> path = os.path.join(tempfile.mkdtemp(), "q.txt.gz")
    >>> qrels = Qrels(["1", "1"], ["d1", "d2"], [1, 0])
    >>> write_qrels(path, qrels)
    >>> read_qrels(path) == qrels
    True
    """
    _check_ids(qrels.qid, qrels.docid, "write_qrels")
    lines = [
        f"{q} 0 {d} {g}\n"
        for q, d, g in zip(
            qrels.qid.tolist(), qrels.docid.tolist(), qrels.rel.tolist(), strict=True
        )
    ]
    _write(path, "".join(lines))


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
    for no, line in _lines(path, "LETOR aggregation file"):
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
        label = _grade(parts[0], where, "label")
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
                np.nan if val == "NULL" else _positive_int(val, where, f"rank of ranker {j}")
            )
        tokens = comment.split()
        if not hash_ or len(tokens) < 3 or tokens[0] != "docid" or tokens[1] != "=":
            raise ValueError(f"{where}: missing '#docid = ...' comment; every row needs one.")
        d = tokens[2]
        if (q, d) in first_line:
            raise ValueError(
                f"{where}: document {d!r} appears twice in query {q!r} (first at line "
                f"{first_line[(q, d)]})."
            )
        first_line[(q, d)] = no
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
    _write(path, "".join(lines))
