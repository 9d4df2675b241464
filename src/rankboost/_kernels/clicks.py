"""Click-log kernels (numba): preference pairs from shown lists, one session per unit.

A click log enters as contiguous arrays grouped by session, each session sorted by position
(``rankboost.clicks`` builds them):

* ``starts`` (int64, ``n_sessions + 1``): offsets of each session's entries;
* ``rows`` (int64, ``n_entries``): the feature row of each shown document;
* ``clicked`` (uint8, ``n_entries``): 1 where the document was clicked;
* ``entry_weight`` (float64, ``n_entries``): the weight a pair *inherits from its clicked
  document*, ``count / p_k`` clipped (or ``count`` without correction), computed outside.

Pair extractions (``mode``), each pair ``(lower, upper)`` = (non-clicked, clicked):

* 0 ``skip_above``: a clicked document above every non-clicked one shown above it
  (Joachims 2002, "Click > Skip Above");
* 1 ``skip_next``: a clicked document above the non-clicked one shown just below it
  (Joachims et al. 2005, "Click > No-Click Next");
* 2 ``last_click_skip_above``: skip-above from the last click of the session only
  (Joachims et al. 2005, "Last Click > Skip Above");
* 3 ``all_unclicked``: a clicked document above every non-clicked one of the list, above or
  below it (the pairs of Propensity SVM-Rank, Joachims, Swaminathan & Schnabel 2017, on the
  shown list);
* 4 ``all_shown``: a clicked document above every other document of the list, clicked or
  not (Propensity SVM-Rank's constraints exactly, on the shown list: with weights ``1/p_k``
  an unbiased estimate of the summed rank of the relevant documents under the
  position-based model, Joachims, Swaminathan & Schnabel 2017, eq. 12).

Every pair of a session weighs the clicked document's ``entry_weight``. The driver runs in two
passes over sessions (count, then fill at the counted offsets), each a ``prange``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import serial_and_parallel


@njit(cache=True)
def _session_pairs(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    lo: int,
    hi: int,
    rows: np.ndarray,
    clicked: np.ndarray,
    entry_weight: np.ndarray,
    mode: int,
    out_lower: np.ndarray,
    out_upper: np.ndarray,
    out_weight: np.ndarray,
    at: int,
    fill: bool,
) -> int:
    """Pairs of one session ``[lo, hi)`` (sorted by position); written at ``at`` when ``fill``.

    Returns the number of pairs of the session.
    """
    last = -1
    if mode == 2:
        for e in range(hi - 1, lo - 1, -1):
            if clicked[e]:
                last = e
                break
    n = 0
    for c in range(lo, hi):
        if not clicked[c]:
            continue
        if mode == 2 and c != last:
            continue
        if mode == 1:
            first = c + 1
            stop = min(c + 2, hi)
        elif mode >= 3:
            first = lo
            stop = hi
        else:
            first = lo
            stop = c
        for s in range(first, stop):
            if s == c or (clicked[s] and mode != 4):
                continue
            if fill:
                out_lower[at + n] = rows[s]
                out_upper[at + n] = rows[c]
                out_weight[at + n] = entry_weight[c]
            n += 1
    return n


def _count_pairs(
    starts: np.ndarray,
    rows: np.ndarray,
    clicked: np.ndarray,
    entry_weight: np.ndarray,
    mode: int,
    counts: np.ndarray,
) -> None:
    """``counts[s]`` = number of pairs of session ``s``."""
    dummy_i = np.empty(0, dtype=np.int64)
    dummy_w = np.empty(0, dtype=np.float64)
    for s in prange(starts.shape[0] - 1):
        counts[s] = _session_pairs(
            starts[s],
            starts[s + 1],
            rows,
            clicked,
            entry_weight,
            mode,
            dummy_i,
            dummy_i,
            dummy_w,
            0,
            False,
        )


def _fill_pairs(  # noqa: PLR0917  numba helper over one unit: its arrays and bounds, unpacked by the driver
    starts: np.ndarray,
    rows: np.ndarray,
    clicked: np.ndarray,
    entry_weight: np.ndarray,
    mode: int,
    offsets: np.ndarray,
    out_lower: np.ndarray,
    out_upper: np.ndarray,
    out_weight: np.ndarray,
) -> None:
    """Write the pairs of session ``s`` at ``offsets[s]`` (offsets from ``_count_pairs``)."""
    for s in prange(starts.shape[0] - 1):
        _session_pairs(
            starts[s],
            starts[s + 1],
            rows,
            clicked,
            entry_weight,
            mode,
            out_lower,
            out_upper,
            out_weight,
            offsets[s],
            True,
        )


_count_pairs_serial, _count_pairs_parallel = serial_and_parallel(_count_pairs)
_fill_pairs_serial, _fill_pairs_parallel = serial_and_parallel(_fill_pairs)
