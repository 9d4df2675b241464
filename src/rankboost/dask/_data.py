"""Dask inputs of distributed training: partitions of whole queries, checked or moved there.

The rows are the row chunks of a dask array ``X`` (or the partitions of a dask DataFrame);
``y``, ``qid``, ``sample_weight`` are re-chunked to the same rows. A query must live in one
partition (:func:`check_whole_queries`); :func:`repartition_by_query` moves rows so that it
does, as XGBoost's ``allow_group_split=False`` does, without ever splitting a query.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._compat import require

__all__ = ["check_partitions", "check_whole_queries", "repartition_by_query"]


def _dask() -> Any:
    return require("dask.array", "rankboost.dask")


def is_dask_collection(obj: Any) -> bool:
    """Whether ``obj`` is a dask array, DataFrame or Series."""
    return hasattr(obj, "dask") and hasattr(obj, "__dask_graph__")


def as_dask_array(
    obj: Any, name: str, chunks: Any = None, client: Any = None, of: str = "X"
) -> Any:
    """A 1-D or 2-D dask array from a dask array / Series / DataFrame (or numpy, if chunks).

    ``chunks``: the row chunks of ``X`` (``obj`` must have as many rows, then it is
    re-chunked to them; ``of`` names what they are the rows of). ``client`` counts a
    DataFrame's partition lengths (dask's default client may be another cluster, without the
    DataFrame's data); None: dask's default.
    """
    da = _dask()
    if obj is None:
        return None
    if hasattr(obj, "to_dask_array"):  # dask DataFrame / Series
        lengths: Any = True
        if client is not None:
            lengths = tuple(int(n) for n in client.compute(obj.map_partitions(len)).result())
        obj = obj.to_dask_array(lengths=lengths)
    elif not is_dask_collection(obj):
        if chunks is None:
            raise TypeError(
                f"{name} must be a dask array or dask DataFrame/Series; got {type(obj).__name__}. "
                "Use rankboost.train for in-memory data, or dask.array.from_array(...)."
            )
        obj = da.from_array(np.asarray(obj), chunks=chunks)
    if chunks is not None:
        n_rows = sum(chunks)
        if obj.ndim > 0 and np.isnan(obj.shape[0]):
            raise unknown_rows(name)
        if obj.ndim == 0 or obj.shape[0] != n_rows:
            shape = tuple(obj.shape)
            raise ValueError(
                f"{name} has shape {shape} but {of} has {n_rows} rows; pass one entry of "
                f"{name} per row of {of}."
            )
        if obj.chunks[0] != chunks:
            obj = obj.rechunk({0: chunks})
    return obj


def unknown_rows(name: str) -> ValueError:
    """The error for a dask array whose row chunk sizes are unknown (NaN)."""
    return ValueError(
        f"{name} has unknown chunk sizes (NaN rows, e.g. after boolean indexing); training "
        f"needs each partition's row count: call {name}.compute_chunk_sizes() first (or "
        "pass a dask DataFrame, whose partition lengths are counted)."
    )


def _unique_with_counts(q: NDArray[Any]) -> tuple[NDArray[Any], NDArray[np.int64]]:
    values, counts = np.unique(np.asarray(q), return_counts=True)
    return values, counts.astype(np.int64)


_ROW = re.compile(r"\bat row (\d+)")


_CELL = re.compile(r"\[(\d+), (\d+)\] is ")


def _global_rows(text: str, start: int) -> str:
    """An error naming a row of a partition, made to name the row of the whole data."""
    text = _ROW.sub(lambda m: f"at row {int(m.group(1)) + start}", text)
    return _CELL.sub(lambda m: f"[{int(m.group(1)) + start}, {m.group(2)}] is ", text)


def _check_partition(
    k: int, start: int, n_rows: int, n_features: int, X: Any, y: Any = None, **rows: Any
) -> None:
    """Check partition ``k`` (global rows from ``start``) on its worker.

    The checks of ``rankboost.train`` (:mod:`rankboost._validation`, and the float32 range
    its binning checks), with global row numbers; ``rows`` are more per-row arrays (e.g.
    ``sample_weight``) whose chunk must hold ``n_rows`` entries.
    """
    from .._validation import check_feature_matrix, check_float32_range, check_labels

    where = f"partition {k} of %s (global rows {start} to {start + n_rows - 1}) computes to "
    shape = np.shape(X)
    if shape != (n_rows, n_features):
        raise ValueError(
            f"{where % 'X'}shape {shape}, but X declares ({n_rows}, {n_features}) for it; make "
            "each chunk compute to the shape the dask array declares (e.g. da.from_delayed's "
            "shape=, or a DataFrame's meta)."
        )
    for name, a in {"y": y, **rows}.items():
        if a is not None and np.shape(a)[:1] != (n_rows,):
            raise ValueError(
                f"{where % name}shape {np.shape(a)}, but X declares {n_rows} rows for it; "
                f"make each chunk of {name} compute to the rows of X's chunk."
            )
    try:
        check_float32_range(check_feature_matrix(X))
        if y is not None:
            check_labels(y, n_samples=n_rows)
    except ValueError as exc:
        raise ValueError(_global_rows(str(exc), start)) from None


def check_partitions(
    client: Any, parts: Sequence[dict[str, Any]], rows: Sequence[int], n_features: int
) -> None:
    """Run ``rankboost.train``'s input checks on every partition, on the workers.

    ``parts`` are the partitions' futures (``"X"``, and ``"y"`` when given) and ``rows``
    their declared row counts; an error names the global row, as ``rankboost.train`` would
    on the concatenated arrays (+inf in ``X``, a value beyond the float32 range, a NaN
    label, a chunk of another shape).
    """
    starts = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
    futures = [
        client.submit(
            _check_partition, k, int(starts[k]), int(rows[k]), n_features, part["X"],
            part.get("y"), qid=part.get("qid"), sample_weight=part.get("sample_weight"),
            pure=False,
        )
        for k, part in enumerate(parts)
        if int(rows[k]) > 0
    ]  # fmt: skip
    client.gather(futures)


def check_whole_queries(client: Any, qid_parts: Sequence[Any]) -> None:
    """Raise a ValueError naming a query and two partitions when a query is split.

    Parameters
    ----------
    client : distributed.Client
        The client.
    qid_parts : list of futures
        Each partition's query ids.
    """
    uniq = client.gather(client.map(np.unique, list(qid_parts), pure=False))
    seen: dict[Any, int] = {}
    for p, values in enumerate(uniq):
        for q in values.tolist():
            first = seen.setdefault(q, p)
            if first != p:
                raise ValueError(
                    f"query {q!r} has rows in partitions {first} and {p}: a query must live in "
                    "one partition (its crucial pairs are only formed inside a partition). "
                    "Pass repartition=True, or move the rows first with "
                    "rankboost.dask.repartition_by_query(X, y, qid)."
                )


def _split_by_target(
    uniq: NDArray[Any], target: NDArray[np.int64], n_out: int, qid: NDArray[Any], *arrays: Any
) -> tuple[Any, ...]:
    """One source chunk split into the rows of each target partition (row order kept)."""
    t = target[np.searchsorted(uniq, np.asarray(qid))]
    out = []
    for p in range(n_out):
        sel = np.flatnonzero(t == p)
        out.append(tuple(np.asarray(a)[sel] for a in (qid, *arrays)))
    return tuple(out)


def _concat(pieces: Sequence[tuple[NDArray[Any], ...]], k: int) -> NDArray[Any]:
    return np.concatenate([piece[k] for piece in pieces])


def repartition_by_query(
    X: Any,
    y: Any,
    qid: Any,
    *arrays: Any,
    npartitions: int | None = None,
    client: Any = None,
) -> tuple[Any, ...]:
    """Move rows so that each query lives in exactly one partition (never split).

    Queries are dealt to ``npartitions`` partitions (default: as many as ``X`` has) in
    sorted order of their ids, in contiguous runs of about equal row counts; within a
    partition the rows keep their original relative order. Deterministic.

    Parameters
    ----------
    X : dask array of shape (n_samples, n_features)
        Features.
    y, qid : dask arrays of shape (n_samples,)
        Labels and query ids (ints or strings).
    *arrays : dask arrays of shape (n_samples,) or (n_samples, k)
        More per-row arrays to move along (e.g. ``sample_weight``).
    npartitions : int, default=None
        Number of output partitions.
    client : distributed.Client, default=None
        The client that computes the query counts; None uses dask's default scheduler.

    Returns
    -------
    X, y, qid, *arrays : dask arrays
        The same rows, each query in one partition.

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da  # doctest: +SKIP
    >>> from rankboost.dask import repartition_by_query  # doctest: +SKIP
    >>> X = da.from_array(np.arange(12.0).reshape(6, 2), chunks=(3, 2))  # doctest: +SKIP
    >>> qid = da.from_array(np.array([0, 1, 0, 1, 2, 2]), chunks=3)  # doctest: +SKIP
    >>> X2, y2, q2 = repartition_by_query(X, qid, qid)  # doctest: +SKIP
    >>> [np.unique(c).tolist() for c in q2.to_delayed()]  # doctest: +SKIP
    """
    da = _dask()
    import dask

    X = as_dask_array(X, "X", client=client)
    X = X.rechunk({1: -1})
    rows = X.chunks[0]
    y = as_dask_array(y, "y", rows, client)
    qid = as_dask_array(qid, "qid", rows, client)
    extra = [as_dask_array(a, "array", rows, client) for a in arrays]
    n_out = int(npartitions or len(rows))
    if n_out < 1:
        raise ValueError(f"npartitions must be an int >= 1; got {npartitions!r}.")
    q_chunks = qid.to_delayed().ravel().tolist()
    counted = [dask.delayed(_unique_with_counts)(q) for q in q_chunks]
    if client is not None:  # that client, never the default one (another cluster, maybe)
        per_chunk = client.gather(client.compute(counted))
    else:
        per_chunk = dask.compute(*counted)
    uniq, inv = np.unique(np.concatenate([u for u, _ in per_chunk]), return_inverse=True)
    totals = np.bincount(inv, weights=np.concatenate([c for _, c in per_chunk]))
    edges = np.arange(1, n_out) * (totals.sum() / n_out)
    target = np.searchsorted(np.cumsum(totals), edges, side="left")
    target_of = np.zeros(uniq.shape[0], dtype=np.int64)
    for b in target:
        target_of[int(b) + 1 :] += 1
    target_of = np.minimum(target_of, n_out - 1)
    # rows per (source chunk, target), for the output shapes
    sizes = np.zeros((len(q_chunks), n_out), dtype=np.int64)
    for s, (u, c) in enumerate(per_chunk):
        np.add.at(sizes[s], target_of[np.searchsorted(uniq, u)], c)
    sources = [X.to_delayed()[:, 0], y.to_delayed().ravel(), qid.to_delayed().ravel()]
    sources += [a.to_delayed().reshape(len(rows), -1)[:, 0] for a in extra]
    split = [
        dask.delayed(_split_by_target, nout=n_out)(
            uniq, target_of, n_out, sources[2][s], sources[0][s], sources[1][s],
            *[src[s] for src in sources[3:]],
        )
        for s in range(len(rows))
    ]  # fmt: skip
    # a piece is (qid, X, y, *extra): where each output takes its rows from
    layout = [(X, 1), (y, 2), (qid, 0), *[(a, 3 + j) for j, a in enumerate(extra)]]
    outputs: list[list[Any]] = [[] for _ in layout]
    for p in range(n_out):
        pieces = [split[s][p] for s in range(len(rows))]
        n_p = int(sizes[:, p].sum())
        for out, (ref, k) in zip(outputs, layout, strict=True):
            out.append(
                da.from_delayed(
                    dask.delayed(_concat)(pieces, k), shape=(n_p, *ref.shape[1:]), dtype=ref.dtype
                )
            )
    return tuple(da.concatenate(o, axis=0) for o in outputs)
