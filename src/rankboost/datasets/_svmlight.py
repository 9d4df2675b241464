"""SVMlight / LETOR files with query ids, and LightGBM ``.query`` group files.

Feature indices in these files are 1-based (the LETOR and SVMlight convention): the
value written as ``k:v`` lands in column ``k - 1`` of the dense matrix, and entries that
are absent from a line are 0 (SVMlight semantics). The numeric part of each line is
parsed by a numpy fast path (:func:`_parse_numeric`) that accepts exactly what
:func:`sklearn.datasets.load_svmlight_file` accepts, and gives the same arrays bit for bit
(tests/test_datasets.py compares them on the LETOR files); anything it does not accept goes
to sklearn's parser, whose error is then located to a line. The fast path exists because
importing scikit-learn (scipy, ...) is most of ``rankboost predict``'s time: 1.9 s of a 2.2 s
run on MQ2008's test fold (issue 26; benchmarks/bench_startup.py). This module adds the
query ids, the ``#docid = ...`` comments, LightGBM group files, line numbers in error
messages and an exact, atomic writer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from .._validation import group_sizes_to_qid
from ._dataset import RankingDataset
from ._io import PathLike, auto_query_file, read_bytes
from ._pairs import parse_pairs

__all__ = [
    "load_query_file",
    "load_svmlight",
]

_DOCID = re.compile(rb"docid\s*=\s*(\S+)")
#: The largest feature index a file may use (sklearn's parser stores indices as C ints).
MAX_FEATURE_INDEX = 2**31 - 1
#: Query ids are int64: from ``-2**63`` to ``2**63 - 1``.
QID_RANGE = (-(2**63), 2**63 - 1)


# ---------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------


def _find_bad_line(lines: list[bytes], n_features: int | None) -> tuple[int, str] | None:
    """Replay sklearn's per-line rules in Python to locate the first offending line.

    Only called after sklearn has rejected the file, so speed does not matter here.
    """
    for lineno, raw in enumerate(lines, start=1):
        body = raw.split(b"#", 1)[0]
        parts = body.split()
        if not parts:
            continue
        try:
            float(parts[0])
            features = parts[1:]
            if features and features[0].startswith(b"qid"):
                features = features[1:]
            prev = 0
            for token in features:
                index_text, value_text = token.split(b":", 1)
                index = int(index_text)
                float(value_text)
                if index < 1:
                    return lineno, f"feature index {index} is invalid (indices start at 1)"
                if index > MAX_FEATURE_INDEX:
                    shown = token.decode(errors="replace")
                    return lineno, (
                        f"feature index {index} (token {shown!r}) exceeds the largest "
                        f"supported index {MAX_FEATURE_INDEX} (2**31 - 1)"
                    )
                if index <= prev:
                    return lineno, "feature indices must be increasing and unique"
                if n_features is not None and index > n_features:
                    return lineno, (
                        f"feature index {index} is above the {n_features} features expected"
                    )
                prev = index
        except ValueError as exc:
            return lineno, str(exc)
    return None


def _scan_lines(
    lines: list[bytes], source: str
) -> tuple[NDArray[np.int64] | None, NDArray[np.str_] | None]:
    """Second pass: the query id and docid of every data line.

    Mirrors sklearn's rules: text after ``#`` is a comment, lines with nothing before the
    ``#`` are skipped, and the qid is the first token after the label when it starts
    with ``qid``.
    """
    qids: list[int] = []
    docids: list[str] = []
    any_docid = False
    first_missing = 0  # line number of the first data line without a qid
    n_rows = 0
    for lineno, raw in enumerate(lines, start=1):
        body, _, comment = raw.partition(b"#")
        parts = body.split(None, 2)
        if not parts:
            continue
        n_rows += 1
        if len(parts) > 1 and parts[1].startswith(b"qid"):
            try:
                q = int(parts[1].split(b":", 1)[1])
            except (IndexError, ValueError):
                token = parts[1].decode(errors="replace")
                raise ValueError(
                    f"{source}, line {lineno}: malformed query id {token!r}; expected "
                    "'qid:<integer>'."
                ) from None
            if not QID_RANGE[0] <= q <= QID_RANGE[1]:
                token = parts[1].decode(errors="replace")
                raise ValueError(
                    f"{source}, line {lineno}: query id {token!r} is outside the int64 range "
                    f"[{QID_RANGE[0]}, {QID_RANGE[1]}] of query ids."
                )
            qids.append(q)
        elif not first_missing:
            first_missing = lineno
        match = _DOCID.search(comment) if comment else None
        if match is not None:
            any_docid = True
            docids.append(match.group(1).decode("utf-8", "replace"))
        else:
            docids.append("")
    if qids and len(qids) != n_rows:
        raise ValueError(
            f"{source}, line {first_missing}: this line has no 'qid:' but other lines do; "
            "either every line or no line must carry a query id."
        )
    qid = np.asarray(qids, dtype=np.int64) if qids else None
    return qid, (np.asarray(docids, dtype=str) if any_docid else None)


_Numeric = tuple[
    NDArray[np.float64], NDArray[np.int64], NDArray[np.int64], NDArray[np.float64], int
]


def _parse_numeric(lines: list[bytes], n_features: int | None) -> _Numeric | None:
    """The numbers of the data lines as CSR arrays, or None for sklearn's parser to decide.

    Returns ``(y, indptr, indices, values, width)`` (0-based sorted indices), or None when a
    line is not plain SVMlight: then sklearn's parser decides, and a malformed line is
    reported by :func:`_find_bad_line`.

    The rules are sklearn's: text after ``#`` is a comment, a line with nothing before it is
    skipped, the token after the label is skipped when it starts with ``qid``, every other
    token is ``index:value`` with 1-based indices, increasing along the line. A Python loop
    over lines splits them (``bytes.split``, in C); numpy converts all the numbers at once.
    """
    labels: list[bytes] = []
    tokens: list[bytes] = []
    counts: list[int] = []
    for raw in lines:
        body = raw.split(b"#", 1)[0]
        parts = body.split()
        if not parts:
            continue
        labels.append(parts[0])
        first = 2 if len(parts) > 1 and parts[1].startswith(b"qid") else 1
        counts.append(len(parts) - first)
        tokens += parts[first:]
    if not labels:
        return None
    # NOTE: sklearn converts with Python's float() and int(); numpy's conversion differs on
    # underscores ("1_0"), hexadecimal ("0x1p3") and non-ASCII text: leave those to sklearn
    labels_text = b" ".join(labels)
    if not labels_text.isascii() or b"_" in labels_text or b"x" in labels_text.lower():
        return None
    pairs = parse_pairs(tokens)  # the plain tokens, all at once; else one by one below
    try:
        y = np.array(labels).astype(np.float64)
        if pairs is None:
            indices, values = _convert_pairs(tokens)
        else:
            indices, values = pairs
    except (ValueError, OverflowError):
        return None
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    if indices.size:
        if indices.min() < 1 or indices.max() > MAX_FEATURE_INDEX:
            return None
        step = np.diff(indices)
        new_row = np.full(indices.size, False)
        new_row[indptr[1:-1][indptr[1:-1] < indices.size]] = True  # first token of a row
        if (step[~new_row[1:]] <= 0).any():  # indices must increase along each line
            return None
    width = int(indices.max()) if indices.size else 1  # sklearn's width without features
    if n_features is not None:
        if width > n_features:
            return None
        width = n_features
    return y, indptr, indices - 1, values, width


def _convert_pairs(tokens: list[bytes]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The indices and values of ``index:value`` tokens by numpy's conversion of each one.

    Raises ValueError for what the fast path must leave to sklearn's parser.
    """
    joined = b" ".join(tokens)
    if not joined.isascii() or b"_" in joined or b"x" in joined.lower():
        raise ValueError("not plain numbers")
    pieces = joined.replace(b":", b" ").split()
    if len(pieces) != 2 * len(tokens) or joined.count(b":") != len(tokens):
        raise ValueError("not index:value pairs")
    if not tokens:
        return np.empty(0, np.int64), np.empty(0)
    return np.array(pieces[0::2]).astype(np.int64), np.array(pieces[1::2]).astype(np.float64)


def parse_svmlight_bytes(
    data: bytes, source: str, *, n_features: int | None = None
) -> RankingDataset:
    """Parse the bytes of an SVMlight/LETOR file; ``source`` names it in errors."""
    lines = data.split(b"\n")
    qid, docids = _scan_lines(lines, source)
    numeric = _parse_numeric(lines, n_features)
    if numeric is None:
        numeric = _parse_numeric_sklearn(lines, source, n_features)
    y, indptr, indices, values, width = numeric
    if y.shape[0] == 0:
        raise ValueError(f"{source} contains no data lines.")
    # NOTE: not a sparse matrix's toarray(): scipy accumulates into zeros, which turns -0.0
    # into 0.0. Assignment keeps every value bit-exact (the indices are unique per row).
    try:
        X = np.zeros((y.shape[0], width), dtype=np.float64)
    except (MemoryError, ValueError):
        n, d = y.shape[0], width
        line = _widest_line(lines, indptr, indices, width)
        raise ValueError(
            f"{source}: the dense X of {n} rows x {d} features (the largest feature index, "
            f"at line {line}) needs {n * d * 8 / 2**30:.1f} GiB, more than this machine can "
            "allocate; check that feature index, or pass a smaller file."
        ) from None
    rows = np.repeat(np.arange(X.shape[0]), np.diff(indptr))
    X[rows, indices] = values
    return RankingDataset(X, np.ascontiguousarray(y, dtype=np.float64), qid, docids)


def _parse_numeric_sklearn(lines: list[bytes], source: str, n_features: int | None) -> _Numeric:
    """:func:`_parse_numeric` by sklearn's parser: the files the fast path leaves, and errors."""
    from sklearn.datasets import load_svmlight_file

    # NOTE: query_id=False on purpose. sklearn's query_id=True path grows its qid array
    # with np.append once per line, which is quadratic in the number of rows (1 s for
    # 80k rows, minutes for MSLR-size files); _scan_lines reads the same qids linearly.
    try:
        X_sparse, y = load_svmlight_file(
            _BytesReader(lines), n_features=n_features, zero_based=False, dtype=np.float64
        )
    except (ValueError, OverflowError) as exc:  # OverflowError: an index above 2**31 - 1
        bad = _find_bad_line(lines, n_features)
        where = f"{source}, line {bad[0]}: {bad[1]}" if bad else f"{source}: {exc}"
        raise ValueError(f"Malformed SVMlight/LETOR data in {where}.") from None
    return (
        np.asarray(y, dtype=np.float64),
        X_sparse.indptr.astype(np.int64),
        X_sparse.indices.astype(np.int64),
        X_sparse.data,
        int(X_sparse.shape[1]),
    )


def _widest_line(
    lines: list[bytes], indptr: NDArray[np.int64], indices: NDArray[np.int64], width: int
) -> int:
    """Line number (1-based) of the data line holding the largest feature index."""
    row = int(np.argmax(indices == width - 1))
    row = int(np.searchsorted(indptr, row, side="right")) - 1
    seen = -1
    for lineno, raw in enumerate(lines, start=1):
        if raw.split(b"#", 1)[0].split():
            seen += 1
            if seen == row:
                return lineno
    return 0  # pragma: no cover - every row comes from a line


class _BytesReader:
    """Minimal binary file-like object iterating over already-split lines."""

    def __init__(self, lines: list[bytes]) -> None:
        self._lines = lines

    def read(self, size: int = -1) -> bytes:  # pragma: no cover - sklearn only iterates
        return b"\n".join(self._lines)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._lines)


def load_query_file(path: PathLike) -> NDArray[np.int64]:
    r"""Read a LightGBM ``.query`` file: the size of each query group, in row order.

    Parameters
    ----------
    path : str or path-like
        Text file with one positive integer per line (blank lines are ignored);
        gzip, bzip2 or xz compression is detected and undone transparently.

    Returns
    -------
    group : ndarray of shape (n_queries,), dtype int64
        Number of consecutive rows in each query.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If a line is not a positive integer, or the file holds no group size.

    See Also
    --------
    load_svmlight : Uses this to attach query ids to files without ``qid:``.

    Examples
    --------
    >>> import tempfile, os
    >>> from rankboost.datasets import load_query_file
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "train.query")
    ...     with open(path, "w") as fh:
    ...         _ = fh.write("3\n2\n")
    ...     load_query_file(path)
    array([3, 2])
    """
    p, data = read_bytes(path, "Query file")
    sizes: list[int] = []
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        text = raw.strip()
        if not text:
            continue
        try:
            size = int(text)
        except ValueError:
            size = 0
        if size <= 0:
            raise ValueError(
                f"Query file {str(p)!r}, line {lineno}: expected a positive integer group "
                f"size; got {text.decode(errors='replace')!r}."
            )
        sizes.append(size)
    if not sizes:
        raise ValueError(f"Query file {str(p)!r} contains no group sizes.")
    return np.asarray(sizes, dtype=np.int64)


def load_svmlight(
    path: PathLike,
    *,
    n_features: int | None = None,
    query_file: PathLike | Literal["auto"] | None = "auto",
) -> RankingDataset:
    r"""Load an SVMlight/LETOR ranking file (with ``qid:``) into dense arrays.

    Each line reads ``label [qid:Q] k:v k:v ... [# comment]``. Feature ``k`` (1-based, as
    in LETOR and SVMlight) goes to column ``k - 1``; features absent from a line are 0.
    A comment ``#docid = D ...`` (as ending every LETOR line) yields the docid ``D``.
    gzip, bzip2 and xz files are decompressed transparently (detected from content).

    Parameters
    ----------
    path : str or path-like
        The data file.
    n_features : int, default=None
        Number of columns of ``X``. ``None`` uses the largest feature index in the file;
        pass it to pad ``X`` so that train and test files get the same width.
    query_file : str, path-like, "auto" or None, default="auto"
        LightGBM group file (one query size per line) giving the queries of a file without
        ``qid:``; the resulting ``qid`` is ``0 .. n_queries - 1`` in row order. ``"auto"``
        looks for ``path + ".query"`` (and ``.query.gz``, also next to ``path`` without
        its compression suffix: ``rank.train.gz`` finds ``rank.train.query.gz``) and uses
        it only if the file has no ``qid:``. ``None`` never reads a group file.

    Returns
    -------
    dataset : RankingDataset
        ``X`` (float64, dense), ``y`` (float64), ``qid`` (int64 as in the file, or
        ``None`` if the file has no query information), ``docids`` (str, or ``None``
        without ``#docid`` comments; rows lacking one get ``""``).
        It unpacks as ``X, y, qid``.

    Raises
    ------
    FileNotFoundError
        If ``path`` or an explicit ``query_file`` does not exist.
    ValueError
        On a malformed line (the message gives the file and line number), a file with
        no data lines, a feature index above ``n_features`` or above ``2**31 - 1``, a query
        id outside the int64 range, lines that mix presence and absence of ``qid:``, damaged
        or truncated compressed data, a dense ``X`` too large to allocate, or an explicit
        ``query_file`` that conflicts with ``qid:`` in the file or whose sizes do not add
        up to the number of rows.

    See Also
    --------
    dump_svmlight : The inverse operation.
    sklearn.datasets.load_svmlight_file : The sparse parser used underneath.

    Examples
    --------
    >>> import tempfile, os
    >>> from rankboost.datasets import load_svmlight
    >>> text = "2 qid:1 1:0.5 3:1 #docid = GX01\n0 qid:1 2:0.25 #docid = GX02\n"
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "train.txt")
    ...     with open(path, "w") as fh:
    ...         _ = fh.write(text)
    ...     X, y, qid = data = load_svmlight(path)
    >>> X
    array([[0.5 , 0.  , 1.  ],
           [0.  , 0.25, 0.  ]])
    >>> y, qid, data.docids
    (array([2., 0.]), array([1, 1]), array(['GX01', 'GX02'], dtype='<U4'))
    """
    if n_features is not None and (
        isinstance(n_features, bool)
        or not isinstance(n_features, int | np.integer)
        or not 1 <= n_features <= MAX_FEATURE_INDEX
    ):
        raise ValueError(
            "load_svmlight: n_features must be a positive int or None (at most "
            f"{MAX_FEATURE_INDEX}, the largest feature index); got {n_features!r}."
        )
    p, data = read_bytes(path, "SVMlight file")
    dataset = parse_svmlight_bytes(
        data, repr(str(p)), n_features=None if n_features is None else int(n_features)
    )
    if query_file is None:
        return dataset
    if isinstance(query_file, str) and query_file == "auto":
        if dataset.qid is not None:
            return dataset
        found = auto_query_file(p)
        if found is None:
            return dataset
        group_path = found
    else:
        group_path = Path(query_file)
        if dataset.qid is not None:
            raise ValueError(
                f"load_svmlight: query_file={str(group_path)!r} was given but "
                f"{str(p)!r} already has 'qid:' on its lines; pass query_file=None (or "
                "'auto') to use the file's own query ids."
            )
    sizes = load_query_file(group_path)
    try:
        qid = group_sizes_to_qid(sizes, dataset.n_samples)
    except ValueError:
        raise ValueError(
            f"Query file {str(group_path)!r} has group sizes summing to {int(sizes.sum())}, "
            f"but {str(p)!r} has {dataset.n_samples} rows; they must match."
        ) from None
    return RankingDataset(dataset.X, dataset.y, qid, dataset.docids, dataset.feature_names)


# ---------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------
