"""A click log summed into what training needs: :class:`ClickCounts` (pairs and cells).

RankBoost from clicks uses the sessions only through two sums: per pair ``(lower row,
upper row, position of the clicked one)`` the summed session counts (the pair's weight is
that sum times the inverse propensity of the position, added over positions), and per
``(row, position)`` the impressions and clicks (what EM and regression-EM estimate the
propensities from). :func:`click_counts` sums a :class:`ClickLog`; the streaming reader
(:func:`rankboost.clicks.read_click_counts`) sums a file chunk by chunk, so its memory grows
with the distinct pairs and documents, not with the sessions. Both add with the same kernel
(``_kernels/click_sessions.py``, ``add_sessions``): for integral counts the sums are exact, so the
two give the same counts, pairs and models bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .._kernels import click_sessions as _s

if TYPE_CHECKING:
    from ._log import ClickLog

__all__ = ["PAIR_EXTRACTIONS", "ClickCounts", "SessionSums", "check_pairs", "click_counts"]

#: Pair extractions and their kernel codes (module docstring of ``_kernels/clicks.py``).
PAIR_EXTRACTIONS = {
    "skip_above": 0,
    "skip_next": 1,
    "last_click_skip_above": 2,
    "all_unclicked": 3,
    "all_shown": 4,
}


@dataclass(frozen=True, eq=False)
class ClickCounts:
    """A matched click log summed over its sessions (see the module docstring).

    Attributes
    ----------
    pairs : str
        The pair extraction summed (a key of ``PAIR_EXTRACTIONS``).
    pair_lower, pair_upper, pair_position : ndarray of int64 of shape (n_keys,)
        Each distinct (non-clicked or other row, clicked row, position of the clicked row),
        sorted.
    pair_count : ndarray of float64 of shape (n_keys,)
        Summed session counts of each.
    cell_row, cell_position : ndarray of int64 of shape (n_cells,)
        Each distinct (row, position) shown, sorted.
    cell_impressions, cell_clicks : ndarray of float64 of shape (n_cells,)
        Summed counts of its impressions and of its clicks.
    n_samples, n_sessions, n_entries : int
        Feature rows; sessions and rows of the log.
    n_clicks : float
        Clicks, each counted ``count`` times.
    max_click_position : int
        Deepest clicked position (0 without clicks).
    source : str
        Name used in error messages.
    """

    pairs: str
    pair_lower: NDArray[np.int64]
    pair_upper: NDArray[np.int64]
    pair_position: NDArray[np.int64]
    pair_count: NDArray[np.float64]
    cell_row: NDArray[np.int64]
    cell_position: NDArray[np.int64]
    cell_impressions: NDArray[np.float64]
    cell_clicks: NDArray[np.float64]
    n_samples: int
    n_sessions: int
    n_entries: int
    n_clicks: float
    max_click_position: int
    source: str = "click log"

    @property
    def max_position(self) -> int:
        """Deepest position shown."""
        return int(self.cell_position.max(initial=1))

    def pair_weights(
        self, propensity: Any = None, max_weight: float | None = 100.0
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The crucial pairs ``(lower, upper)``, sorted, and their weights.

        ``propensity``: a :class:`rankboost.clicks.Propensity`, or None (no correction).

        A pair's weight is ``sum_k count_k * min(1 / p_k, max_weight)`` over the positions
        ``k`` its clicked row was shown at (``count_k`` its summed session counts).
        """
        if propensity is not None and self.max_click_position:
            propensity.weights([self.max_click_position])  # a table long enough (its error)
        if self.pair_lower.shape[0] == 0:
            return np.empty((0, 2), dtype=np.int64), np.empty(0, dtype=np.float64)
        w = self.pair_count
        if propensity is not None:
            w = w * propensity.weights(self.pair_position, max_weight)
        lower, upper = self.pair_lower, self.pair_upper
        new = np.r_[True, (lower[1:] != lower[:-1]) | (upper[1:] != upper[:-1])]
        group = np.cumsum(new) - 1
        weight = np.bincount(group, weights=w).astype(np.float64)  # positions in order
        at = np.flatnonzero(new)
        return np.column_stack([lower[at], upper[at]]).astype(np.int64), weight


class SessionSums:
    """The two open-addressing tables ``add_sessions`` adds into, grown as they fill."""

    def __init__(self, mode: int) -> None:
        self.mode = mode
        self.state = np.zeros(3, dtype=np.int64)
        self.pair = self._empty(1 << 12)
        self.cell = self._empty(1 << 12)
        self.n_sessions = 0
        self.n_entries = 0
        self.n_clicks = 0.0
        self.max_click = 0

    @staticmethod
    def _empty(size: int) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
        return (
            np.full(size, -1, dtype=np.int64),
            np.empty((size // 2, 3), dtype=np.int64),
            np.zeros((size // 2, 2), dtype=np.float64),
        )

    def _grow(self, which: str, n_keys: int, need: int) -> None:
        slots, keys, values = getattr(self, which)
        size = slots.shape[0]
        while size // 2 < n_keys + need:
            size *= 2
        new = self._empty(size)
        new[1][:n_keys] = keys[:n_keys]
        new[2][:n_keys] = values[:n_keys]
        _s.table_rehash(new[1], n_keys, new[0])
        setattr(self, which, new)

    def add(
        self,
        starts: NDArray[np.int64],
        rows: NDArray[np.int64],
        position: NDArray[np.int64],
        clicked: NDArray[np.uint8],
        count: NDArray[np.float64],
    ) -> None:
        """Add the sessions ``[starts[s], starts[s + 1])`` (rows sorted by position)."""
        n = starts.shape[0] - 1
        state = self.state
        state[2] = 0
        while True:
            _s.add_sessions(
                starts, rows, position, clicked, count, self.mode, int(state[2]),
                *self.pair, *self.cell, state,
            )  # fmt: skip
            s = int(state[2])
            if s >= n:
                break
            m = int(starts[s + 1] - starts[s])
            self._grow("pair", int(state[0]), m * m)
            self._grow("cell", int(state[1]), m)
        lo, hi = int(starts[0]), int(starts[-1])
        self.n_sessions += n
        self.n_entries += hi - lo
        self.n_clicks += float(np.dot(clicked[lo:hi], count[lo:hi]))
        on = np.flatnonzero(clicked[lo:hi])
        if on.size:
            self.max_click = max(self.max_click, int(position[lo:hi][on].max()))

    def counts(self, pairs: str, n_samples: int, source: str) -> ClickCounts:
        """The sums, each table's keys sorted."""
        n_p, n_c = int(self.state[0]), int(self.state[1])
        pk, pv = self.pair[1][:n_p], self.pair[2][:n_p]
        order = np.lexsort((pk[:, 2], pk[:, 1], pk[:, 0]))
        ck, cv = self.cell[1][:n_c], self.cell[2][:n_c]
        corder = np.lexsort((ck[:, 1], ck[:, 0]))
        return ClickCounts(
            pairs=pairs,
            pair_lower=np.ascontiguousarray(pk[order, 0]),
            pair_upper=np.ascontiguousarray(pk[order, 1]),
            pair_position=np.ascontiguousarray(pk[order, 2]),
            pair_count=np.ascontiguousarray(pv[order, 0]),
            cell_row=np.ascontiguousarray(ck[corder, 0]),
            cell_position=np.ascontiguousarray(ck[corder, 1]),
            cell_impressions=np.ascontiguousarray(cv[corder, 0]),
            cell_clicks=np.ascontiguousarray(cv[corder, 1]),
            n_samples=int(n_samples),
            n_sessions=self.n_sessions,
            n_entries=self.n_entries,
            n_clicks=self.n_clicks,
            max_click_position=self.max_click,
            source=source,
        )


def check_pairs(pairs: str) -> int:
    """The kernel code of a pair extraction, or a ValueError naming the choices."""
    if pairs not in PAIR_EXTRACTIONS:
        raise ValueError(
            f"pairs must be one of {', '.join(map(repr, PAIR_EXTRACTIONS))}; got {pairs!r}."
        )
    return PAIR_EXTRACTIONS[pairs]


def click_counts(log: ClickLog, pairs: str = "all_shown") -> ClickCounts:
    """Sum a matched :class:`ClickLog` into :class:`ClickCounts` for one pair extraction.

    Parameters
    ----------
    log : ClickLog
        Matched to feature rows (:meth:`ClickLog.match`).
    pairs : str, default="all_shown"
        The pair extraction (:func:`rankboost.clicks.click_pairs`).

    Returns
    -------
    counts : ClickCounts

    Examples
    --------
    >>> from rankboost.clicks import ClickLog, click_counts
    >>> log = ClickLog.from_arrays(qid=[1, 1, 1], docid=None, position=[1, 2, 3],
    ...                            click=[0, 0, 1], row=[0, 1, 2])
    >>> c = click_counts(log)
    >>> c.pair_lower.tolist(), c.pair_upper.tolist(), c.pair_position.tolist()
    ([0, 1], [2, 2], [3, 3])
    """
    mode = check_pairs(pairs)
    if log.row is None or log.n_samples is None:
        raise ValueError(
            f"{log.source} is not matched to feature rows; call log.match(qid, docid) first."
        )
    tables = SessionSums(mode)
    tables.add(
        log.starts,
        log.row,
        log.position,
        np.ascontiguousarray(log.click, dtype=np.uint8),
        log.count,
    )
    return tables.counts(pairs, log.n_samples, log.source)


def as_counts(log: Any) -> ClickCounts | None:
    """``log`` if it is a :class:`ClickCounts`, else None."""
    return log if isinstance(log, ClickCounts) else None
