"""The float32 domain: every comparison of a feature value with a threshold is in float32.

A feature value is rounded to float32 (:func:`to_float32`, to nearest) before it is compared
with a threshold or a cut, in training (:mod:`rankboost.binning`), in prediction
(:mod:`rankboost._rounds`) and in every export (:mod:`rankboost.export`); a threshold is
rounded down to float32 (:func:`floor32`) so that it makes the same decision on every float32
value. The ground floor of the package: it imports nothing of it, so the binning, the rounds
and the exports all take it from here (``rankboost.binning.floor32`` is its public name).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["floor32", "to_float32"]


def floor32(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """The largest float32 ``<= x`` for every ``x`` (as float64; NaN stays NaN).

    For a float32 ``v``, ``v > x`` if and only if ``v > floor32(x)``: a threshold rounded
    down this way makes the same decision on every float32 value.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.binning import floor32  # defined here, public there
    >>> floor32(np.array([0.1, 0.5, -np.inf, 1e300])).tolist()
    [0.09999999403953552, 0.5, -inf, 3.4028234663852886e+38]
    """
    b = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore"):
        f = b.astype(np.float32)
    above = f.astype(np.float64) > b  # round-to-nearest went up: step one float32 down
    f[above] = np.nextafter(f[above], np.float32(-np.inf))
    out: NDArray[np.float64] = f.astype(np.float64)
    return out


def to_float32(x: ArrayLike) -> NDArray[np.float64]:
    """``x`` rounded to float32 (to nearest, ties to even), as float64 numbers; NaN stays NaN.

    The one numeric domain of rankboost: every comparison of a feature value with a
    threshold is ``to_float32(x) > theta``, as XGBoost compares ``float(x)``.

    Examples
    --------
    >>> to_float32([0.1, 1.0 + 2**-30]).tolist()
    [0.10000000149011612, 1.0]
    """
    with np.errstate(over="ignore"):
        out: NDArray[np.float64] = (
            np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)
        )
    return out
