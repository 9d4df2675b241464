"""Click logs counted on a Dask cluster: :func:`read_click_counts` over shards of a log.

Each shard (one file of the format ``rankboost train --clicks`` reads) is summed on a worker
by the one-machine streaming reader (:func:`rankboost.clicks.read_click_counts`), into a
:class:`~rankboost.clicks.ClickCounts` over the same feature rows; the workers then add
those sums in a tree (:func:`sum_click_counts`, ``_FAN_IN`` at a time), so only the total
comes back to the client. The sums are sums of session counts: for integral counts (the
simulator's, and every log without a ``count`` column) they are exact in any order, so the
total equals, bit for bit, what the one-machine reader gives for the shards written one after
the other in one file.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._compat import require
from ..clicks._counts import ClickCounts, check_pairs

__all__ = ["read_click_counts", "shard_paths", "sum_click_counts"]

_FAN_IN = 8  # counts added per task of the tree (a worker holds this many at once)
_MAGIC = ("*", "?", "[")


def read_click_counts(  # noqa: PLR0913  the one-machine reader's keywords, plus the client
    client: Any,
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    qid: ArrayLike,
    docid: ArrayLike,
    *,
    pairs: str = "all_shown",
    delimiter: str | None = None,
    what: str = "the feature rows",
) -> ClickCounts:
    r"""Count click-log shards on a Dask cluster into one :class:`~rankboost.clicks.ClickCounts`.

    Each shard is read on a worker by :func:`rankboost.clicks.read_click_counts` (streamed:
    one 8 MiB chunk of text at a time) and the shards' sums are added on the workers in a
    tree, 8 at a time, so the client receives only the total. For integral session counts
    the result equals, bit for bit, ``rankboost.clicks.read_click_counts`` of the shards
    written one after the other in one file (same counts, so the same propensities and
    model): pass it to ``RankBoostRanker.fit(X, None, clicks=counts)`` or to
    :func:`rankboost.clicks.click_feedback` and
    :func:`rankboost.clicks.estimate_propensity` as the one-machine counts.

    Parameters
    ----------
    client : distributed.Client
        The cluster. Every worker must be able to open every shard under the path the client
        gives (a shared file system, or the same files on each machine).
    paths : str, path-like, or list of them
        The shards: a glob pattern (``"logs/*.tsv.gz"``, expanded on the client, sorted), one
        file, or a list of files and patterns. Each is a click log with its own header
        (TSV or CSV, optionally gzip/bzip2/xz-compressed; :func:`rankboost.clicks.read_click_log`)
        and at least one row. A session (a qid with a session id, or a qid without a session
        column) must lie in one shard: a session cut between two shards counts as two.
    qid, docid : array-like of shape (n_samples,)
        Query and document id of every feature row (:meth:`rankboost.clicks.ClickLog.match`).
    pairs : str, default="all_shown"
        The pair extraction to sum (:func:`rankboost.clicks.click_pairs`).
    delimiter : str, default=None
        As :func:`rankboost.clicks.read_click_log`.
    what : str, default="the feature rows"
        Name of the features in error messages.

    Returns
    -------
    counts : ClickCounts
        The shards' sums; its ``source`` names the shards.

    Raises
    ------
    ValueError
        A pattern that matches no file, an empty or repeated path, and every error of the
        one-machine reader, which names the shard and the line (``click log
        'logs/part-07.tsv.gz', line 1234: ...``).
    FileNotFoundError
        A shard that does not exist (on the worker that opens it).

    Notes
    -----
    Memory: a worker counting a shard holds what the one-machine reader holds for that file:
    the feature rows' keys, one chunk of text and its tokens (about 60 MB), the distinct
    documents, pairs and (row, position) cells met so far, and 11 to 21 bytes per session of the
    shard (to notice a session that comes back). It never holds the shard's rows, unless the
    shard is not written session by session (rows of a session apart, positions out of
    order): then that shard is read whole, as on one machine. A worker runs one such count
    per thread at a time. A lost worker's tasks (counts and partial sums) are run again
    elsewhere by Dask, from the files. See docs/distributed.md.

    Examples
    --------
    >>> import rankboost.dask as rbd                                 # doctest: +SKIP
    >>> counts = rbd.read_click_counts(client, "logs/*.tsv.gz", data.qid, data.docids)
    ...                                                              # doctest: +SKIP
    >>> rb.RankBoostRanker(n_estimators=300).fit(data.X, None, clicks=counts)
    ...                                                              # doctest: +SKIP
    """
    require("distributed", "rankboost.dask.read_click_counts")
    check_pairs(pairs)
    files, source = shard_paths(paths)
    qid, docid = np.asarray(qid), np.asarray(docid)
    # the feature rows in the graph (not scattered): a lost copy is made again
    rows = client.submit(_rows, qid, docid, pure=False)
    futures = [
        client.submit(_count_shard, f, rows, pairs, delimiter, what, pure=False) for f in files
    ]
    level = futures
    try:
        while len(level) > 1:
            level = [
                client.submit(sum_click_counts, *level[i : i + _FAN_IN], pure=False)
                for i in range(0, len(level), _FAN_IN)
            ]
            futures += level
        total: ClickCounts = level[0].result()
    finally:
        client.cancel([rows, *futures])
    return _with_source(total, source)


def shard_paths(paths: Any) -> tuple[list[str], str]:
    """The shard files of ``paths`` (patterns expanded, sorted) and their name in messages."""
    given = [paths] if isinstance(paths, (str, os.PathLike)) else paths
    if not isinstance(given, Sequence) or isinstance(given, bytes):
        raise TypeError(
            "read_click_counts: paths must be a path, a glob pattern or a list of "
            f"them; got {type(paths).__name__}."
        )
    files: list[str] = []
    for item in given:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(
                "read_click_counts: each entry of paths must be a path or a glob "
                f"pattern; got {type(item).__name__} ({item!r})."
            )
        name = os.fspath(item)
        if any(c in name for c in _MAGIC):
            found = sorted(glob.glob(os.path.expanduser(name), recursive=True))
            found = [f for f in found if not os.path.isdir(f)]
            if not found:
                raise ValueError(
                    f"read_click_counts: no file matches {name!r} (on the "
                    "client, where patterns are expanded); pass a pattern that matches the "
                    "shards, or a list of their paths."
                )
            files += found
        else:
            files.append(name)
    if not files:
        raise ValueError(
            "read_click_counts: paths is empty; pass the click-log shards "
            "(a glob pattern or a list of paths)."
        )
    seen: set[str] = set()
    for f in files:
        key = os.path.abspath(f)
        if key in seen:
            raise ValueError(
                f"read_click_counts: the shard {f!r} is given twice; its "
                "sessions would be counted twice. Pass each shard once."
            )
        seen.add(key)
    if len(given) == 1 and len(files) > 1:
        source = f"click logs {os.fspath(given[0])!r} ({len(files)} shards)"
    elif len(files) == 1:
        source = f"click log {files[0]!r}"
    else:
        source = f"click logs {files[0]!r} and {len(files) - 1} more"
    return files, source


def _rows(qid: NDArray[Any], docid: NDArray[Any]) -> tuple[NDArray[Any], NDArray[Any]]:
    """The feature rows' ids, as a task: on the cluster once, recomputable from the graph."""
    return qid, docid


def _count_shard(
    path: str,
    rows: tuple[NDArray[Any], NDArray[Any]],
    pairs: str,
    delimiter: str | None,
    what: str,
) -> ClickCounts:
    """One shard summed on a worker by the one-machine streaming reader."""
    from ..clicks._stream import read_click_counts as read_one

    return read_one(path, rows[0], rows[1], pairs=pairs, delimiter=delimiter, what=what)


def sum_click_counts(*parts: ClickCounts) -> ClickCounts:
    """The sums of several :class:`ClickCounts` over the same feature rows and pair extraction.

    Keys (pairs and cells) are merged and their counts added; sessions, rows and clicks
    added; the deepest click is the deepest of all. Exact for integral counts in any order.

    Examples
    --------
    >>> from rankboost.clicks import ClickLog, click_counts
    >>> from rankboost.dask._clicks import sum_click_counts
    >>> def log(click):
    ...     return click_counts(ClickLog.from_arrays(
    ...         qid=[1, 1], docid=None, position=[1, 2], click=click, row=[0, 1]))
    >>> both = sum_click_counts(log([0, 1]), log([1, 0]))
    >>> both.n_sessions, both.pair_lower.tolist(), both.pair_upper.tolist()
    (2, [0, 1], [1, 0])
    >>> both.cell_clicks.tolist()
    [1.0, 1.0]
    """
    first = parts[0]
    for p in parts[1:]:
        if p.n_samples != first.n_samples or p.pairs != first.pairs:
            raise ValueError(
                f"sum_click_counts: {p.source} holds {p.pairs} pairs over {p.n_samples} rows "
                f"but {first.source} {first.pairs} pairs over {first.n_samples}; add counts "
                "of one extraction over the same feature rows."
            )
    if len(parts) == 1:
        return first
    pair_keys, pair_values = _merge(
        [(p.pair_lower, p.pair_upper, p.pair_position) for p in parts],
        [(p.pair_count,) for p in parts],
    )
    cell_keys, cell_values = _merge(
        [(p.cell_row, p.cell_position) for p in parts],
        [(p.cell_impressions, p.cell_clicks) for p in parts],
    )
    return ClickCounts(
        pairs=first.pairs,
        pair_lower=pair_keys[0],
        pair_upper=pair_keys[1],
        pair_position=pair_keys[2],
        pair_count=pair_values[0],
        cell_row=cell_keys[0],
        cell_position=cell_keys[1],
        cell_impressions=cell_values[0],
        cell_clicks=cell_values[1],
        n_samples=first.n_samples,
        n_sessions=sum(p.n_sessions for p in parts),
        n_entries=sum(p.n_entries for p in parts),
        n_clicks=float(sum(p.n_clicks for p in parts)),
        max_click_position=max(p.max_click_position for p in parts),
        source=first.source,
    )


def _merge(
    keys: list[tuple[NDArray[np.int64], ...]], values: list[tuple[NDArray[np.float64], ...]]
) -> tuple[list[NDArray[np.int64]], list[NDArray[np.float64]]]:
    """Distinct keys (columns, sorted as ``ClickCounts`` keeps them) and their summed values."""
    k = [np.concatenate([part[c] for part in keys]) for c in range(len(keys[0]))]
    v = [np.concatenate([part[c] for part in values]) for c in range(len(values[0]))]
    order = np.lexsort(k[::-1])  # the first column most significant
    k = [c[order] for c in k]
    new = np.ones(order.shape[0], dtype=bool)
    if order.shape[0]:
        same = np.ones(order.shape[0] - 1, dtype=bool)
        for c in k:
            same &= c[1:] == c[:-1]
        new[1:] = ~same
    at = np.flatnonzero(new)
    group = np.cumsum(new) - 1
    summed = [
        np.bincount(group, weights=c[order], minlength=at.shape[0]).astype(np.float64, copy=False)
        for c in v
    ]
    return [np.ascontiguousarray(c[at]) for c in k], summed


def _with_source(counts: ClickCounts, source: str) -> ClickCounts:
    """``counts`` named ``source`` in later messages."""
    from dataclasses import replace

    return replace(counts, source=source)
