"""A prior ``F0`` (``init_score``) on Dask: one score per row of ``X``, checked per partition.

The prior is a dask array (or Series, or numpy array) of shape ``(n_samples,)``, re-chunked
to ``X``'s row chunks as ``y`` is; each partition's chunk goes to its block, which starts
from ``H = F0`` exactly as :class:`rankboost.Booster` does (SPEC 7.2; the formulas are the
blocks' :meth:`~rankboost._blocks.Block.set_prior`, in :mod:`rankboost._blocks`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._data import as_dask_array, is_dask_collection, unknown_rows

__all__ = ["add_prior", "prior_array"]

_CELL = re.compile(r"init_score\[(\d+)\]")


def prior_array(init_score: Any, rows: Sequence[int], client: Any) -> Any:
    """``init_score`` as a 1-D dask array chunked like ``X``'s rows ``rows`` (None: None).

    A ValueError names the expected shape ``(n_samples,)`` when the length or the number
    of dimensions differ, and asks for known chunk sizes when they are unknown.
    """
    if init_score is None:
        return None
    n = int(sum(rows))
    if is_dask_collection(init_score):  # a Series' partition lengths are counted here
        init_score = as_dask_array(init_score, "init_score", client=client)
    else:
        init_score = np.asarray(init_score)
    shape = tuple(init_score.shape)
    if len(shape) and np.isnan(shape[0]):
        raise unknown_rows("init_score")
    if not (len(shape) == 1 or (len(shape) == 2 and shape[1] == 1)) or shape[0] != n:
        raise ValueError(
            f"init_score must have shape ({n},), one prior score per row of X (chunked like "
            f"X's rows, or re-chunked to them); got shape {shape}."
        )
    if len(shape) == 2:
        init_score = init_score[:, 0]
    return as_dask_array(init_score, "init_score", tuple(rows), client)


def _check_chunk(k: int, start: int, n_rows: int, f0: Any) -> None:
    """Partition ``k``'s prior: ``n_rows`` finite numbers (an error names the global row)."""
    from .._validation import check_init_score

    try:
        check_init_score(f0, n_rows)
    except ValueError as exc:
        text = _CELL.sub(lambda m: f"init_score[{int(m[1]) + start}]", str(exc))
        raise ValueError(
            f"partition {k} of init_score (global rows {start} to {start + n_rows - 1}): {text}"
        ) from None


def add_prior(client: Any, parts: list[dict[str, Any]], fd: Any, rows: Sequence[int]) -> None:
    """Give every partition's dict its chunk of the prior ``fd`` (futures), checked first."""
    if fd is None:
        return
    chunks = fd.to_delayed().ravel().tolist()
    futures = client.compute(chunks)
    starts = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
    checks = [
        client.submit(_check_chunk, k, int(starts[k]), int(rows[k]), fut, pure=False)
        for k, fut in enumerate(futures)
        if int(rows[k]) > 0
    ]
    client.gather(checks)
    for part, fut in zip(parts, futures, strict=True):
        part["init_score"] = fut
