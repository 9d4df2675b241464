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

import math
from collections.abc import Sequence

import numpy as np

from ._text import (
    MAX_RANK,
    PathLike,
    check_ids,
    once_per_query,
    parse_grade,
    positive_int,
    trec_lines,
    write_text,
)
from .letor_agg import AggData, is_letor_agg, read_letor_agg, read_letor_agg_folds, write_letor_agg
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


# ------------------------------------------------------------------ TREC runs ------------
_ONCE = "; a run ranks each document once per query"


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
    for no, where, parts in trec_lines(path, "TREC run", "qid Q0 docid rank score tag"):
        q, _, d, rank_text, score_text, _ = parts
        # the common case checked inline (millions of lines); the helpers word the errors
        try:
            rank = int(rank_text)
        except ValueError:
            rank = 0
        if not 1 <= rank <= MAX_RANK:
            positive_int(rank_text, where, "rank")  # raises, with the line
        try:
            score = float(score_text)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise ValueError(f"{where}: score must be a finite number; got {score_text!r}.")
        if (q, d) in first_line:
            once_per_query(first_line, q, d, no, where, "appears twice in", _ONCE)  # raises
        first_line[(q, d)] = no
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
    _expect(run, Run, "format_run", "format_run(run)")
    return _run_text(run, tag, depth, "format_run")


def _expect(value: object, cls: type, caller: str, call: str) -> None:
    """A clear TypeError when ``value`` is not a ``cls`` (``call`` shows the right call)."""
    if not isinstance(value, cls):
        raise TypeError(
            f"{caller} takes a {cls.__name__}, got {type(value).__name__} {value!r:.60}; "
            f"call it as {call}."
        )


def _run_text(run: Run, tag: str | None, depth: int | None, caller: str) -> str:
    """:func:`format_run`'s text; ``caller`` names the public function in errors."""
    label = "_".join((run.name if tag is None else tag).split()) or "run"
    check_ids(run.qid, run.docid, caller)
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

    The text is :func:`format_run`'s: entries grouped by query (in order of first
    appearance) and sorted by rank, scores written with ``repr`` so they read back exactly.

    Parameters
    ----------
    path : str or path-like
        Target file.
    run, tag, depth
        As in :func:`format_run`: the run, the 6th column, the deepest rank written.

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
    _expect(run, Run, "write_run", "write_run(path, run)")
    write_text(path, _run_text(run, tag, depth, "write_run"))


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
    for no, where, parts in trec_lines(path, "TREC qrels", "qid 0 docid rel"):
        q, _, d, g = parts
        grade = parse_grade(g, where, "rel")
        once_per_query(first_line, q, d, no, where, "is judged twice for")
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
    _expect(qrels, Qrels, "write_qrels", "write_qrels(path, qrels)")
    check_ids(qrels.qid, qrels.docid, "write_qrels")
    lines = [
        f"{q} 0 {d} {g}\n"
        for q, d, g in zip(
            qrels.qid.tolist(), qrels.docid.tolist(), qrels.rel.tolist(), strict=True
        )
    ]
    write_text(path, "".join(lines))
