"""Writing SVMlight/LETOR files: :func:`dump_svmlight` (atomic, optionally compressed)."""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._atomic import atomic_open
from .._validation import check_feature_matrix, check_labels
from ._io import PathLike

__all__ = ["dump_svmlight"]

_COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".lzma")


def _format_label(value: float) -> str:
    # Integral labels are written as integers ("2", not "2.0"), as LETOR does; both
    # read back to the same float64.
    if value.is_integer() and abs(value) < 2.0**53:
        return str(int(value))
    return repr(value)


def _check_dump_inputs(
    X: ArrayLike,
    y: ArrayLike,
    qid: ArrayLike | None,
    docids: Sequence[str] | ArrayLike | None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], list[int] | None, list[str] | None]:
    try:
        dense = X.toarray() if hasattr(X, "toarray") else X
        Xf = np.asarray(dense, dtype=np.float64)
    except (TypeError, ValueError):
        Xf = None  # check_feature_matrix below reports the problem
    if Xf is not None and Xf.ndim == 2 and not np.isfinite(Xf).all():
        row, col = np.argwhere(~np.isfinite(Xf))[0]
        raise ValueError(
            f"dump_svmlight: X contains NaN or infinity (first at row {row}, column {col}); "
            "the SVMlight format cannot represent them (an absent entry means 0). Impute or "
            "drop these values before writing."
        )
    X_arr = check_feature_matrix(X)
    n = X_arr.shape[0]
    y_arr = check_labels(y, n_samples=n)
    qid_list: list[int] | None = None
    if qid is not None:
        q = np.asarray(qid)
        if q.ndim != 1 or q.shape[0] != n:
            raise ValueError(
                f"dump_svmlight: qid must be 1-D with one query id per row ({n}); got shape "
                f"{q.shape}."
            )
        if q.dtype.kind == "f" and np.isfinite(q).all() and (q == np.round(q)).all():
            q = q.astype(np.int64)
        if q.dtype.kind not in "iu":
            raise ValueError(
                "dump_svmlight: the SVMlight format needs integer query ids; got qid of "
                f"dtype {q.dtype}. Map other ids to integers first, e.g. "
                "np.unique(qid, return_inverse=True)[1]."
            )
        qid_list = [int(v) for v in q]
    docid_list: list[str] | None = None
    if docids is not None:
        docid_list = [str(d) for d in np.asarray(docids, dtype=object).ravel()]
        if len(docid_list) != n:
            raise ValueError(
                f"dump_svmlight: docids has {len(docid_list)} entries but X has {n} rows; "
                "pass one docid per row."
            )
        for i, d in enumerate(docid_list):
            if not d or any(c.isspace() for c in d) or "#" in d:
                raise ValueError(
                    f"dump_svmlight: docids[{i}] = {d!r} cannot be written; docids must be "
                    "non-empty and contain no whitespace or '#'."
                )
    return X_arr, y_arr, qid_list, docid_list


def _iter_lines(
    X: NDArray[np.float64],
    y: NDArray[np.float64],
    qid: list[int] | None,
    docids: list[str] | None,
) -> Iterator[str]:
    for i, (label, row) in enumerate(zip(y.tolist(), X.tolist(), strict=True)):
        # repr() of a Python float is the shortest string that reads back bit-exactly.
        parts = [_format_label(label)]
        if qid is not None:
            parts.append(f"qid:{qid[i]}")
        parts.extend(f"{j}:{v!r}" for j, v in enumerate(row, start=1))
        if docids is not None:
            parts.append(f"#docid = {docids[i]}")
        yield " ".join(parts) + "\n"


class _Writable(Protocol):
    def write(self, data: bytes, /) -> int: ...


def _compressor(raw: IO[bytes], suffix: str) -> contextlib.AbstractContextManager[_Writable]:
    """Wrap ``raw`` in the compressor named by ``suffix``; closing it leaves ``raw`` open."""
    if suffix == ".gz":
        return gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6)
    if suffix == ".bz2":
        return bz2.BZ2File(raw, "wb")
    if suffix in (".xz", ".lzma"):
        return lzma.LZMAFile(raw, "wb")
    return contextlib.nullcontext(raw)


def dump_svmlight(
    path: PathLike,
    X: ArrayLike,
    y: ArrayLike,
    qid: ArrayLike | None,
    *,
    docids: Sequence[str] | ArrayLike | None = None,
    comment: str | None = None,
) -> None:
    """Write a ranking dataset as an SVMlight/LETOR file that loads back exactly.

    Lines read ``label qid:Q 1:v1 2:v2 ... [#docid = D]``: every feature is written
    (LETOR style, 1-based indices, so the width survives a round trip), with
    ``repr``-exact floats, so that ``load_svmlight(path)`` returns the same arrays bit
    for bit. Rows are written in the given order. The file is written to a temporary
    file in the same directory and moved into place with :func:`os.replace`, so readers
    never see a half-written file. A name ending in ``.gz``, ``.bz2`` or ``.xz`` selects
    that compression.

    Parameters
    ----------
    path : str or path-like
        Destination; replaced if it exists.
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Features; must be finite (SVMlight cannot represent NaN or infinity).
    y : array-like of shape (n_samples,)
        Labels.
    qid : array-like of shape (n_samples,) of int, or None
        Query ids, written as ``qid:Q``; ``None`` writes no query ids.
    docids : sequence of str of shape (n_samples,), default=None
        Written as ``#docid = D`` comments; no whitespace or ``#`` allowed inside.
    comment : str, default=None
        Header text, written before the data as lines starting with ``# ``.

    Raises
    ------
    ValueError
        If ``X`` holds NaN or infinity, shapes disagree, ``qid`` is not integer or a
        docid cannot be written.

    See Also
    --------
    load_svmlight : The inverse operation.

    Examples
    --------
    >>> import tempfile, os
    >>> import numpy as np
    >>> from rankboost.datasets import dump_svmlight, load_svmlight
    >>> X = np.array([[0.1, 0.0], [1 / 3, 2.5]])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "data.txt")
    ...     dump_svmlight(path, X, [1, 0], [5, 5], docids=["d1", "d2"])
    ...     with open(path) as fh:
    ...         print(fh.read(), end="")
    ...     back = load_svmlight(path)
    1 qid:5 1:0.1 2:0.0 #docid = d1
    0 qid:5 1:0.3333333333333333 2:2.5 #docid = d2
    >>> bool(np.array_equal(back.X, X))
    True
    """
    X_arr, y_arr, qid_list, docid_list = _check_dump_inputs(X, y, qid, docids)
    target = Path(path)
    with atomic_open(target) as raw, _compressor(raw, target.suffix.lower()) as sink:
        if comment is not None:
            for text in comment.splitlines() or [""]:
                sink.write(f"# {text}\n".encode())
        chunk: list[str] = []
        for line in _iter_lines(X_arr, y_arr, qid_list, docid_list):
            chunk.append(line)
            if len(chunk) >= 4096:
                sink.write("".join(chunk).encode())
                chunk.clear()
        sink.write("".join(chunk).encode())
