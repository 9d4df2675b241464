"""The alpha rules of the paper's section 3.2, and their guard: every ``alpha_t`` formula.

Imported by :class:`rankboost.Booster` (``alpha="r"``, ``"exact"``, ``"line_search"``) and
by RankBoost+ (:mod:`rankboost.rbplus`, whose alpha is Rb-c's formula at its own score).
Every rule returns the rule's alpha *before* the shrinkage ``learning_rate``, which the
booster applies once per round (:meth:`rankboost.Booster._shrink`).

* ``"r"`` (Rb-c, default): ``alpha = 1/2 ln((1 + r) / (1 - r))``, minimising the bound
  ``Z <= sqrt(1 - r^2)`` (valid for any ``h`` in [0, 1]). Guard: ``r`` is clipped to
  ``[-1 + ALPHA_EPS, 1 - ALPHA_EPS]``, so ``|alpha| <= MAX_ALPHA`` (about 11.86).
* ``"exact"`` (Rb-d, binary rankers only):
  ``alpha = 1/2 ln(max(W_-, eps) / max(W_+, eps))`` with ``eps = ALPHA_EPS``: exactly the
  minimiser ``1/2 ln(W_- / W_+)`` of ``Z = W_- e^-a + W_0 + W_+ e^a`` whenever both ``W`` are
  at least ``eps``, and finite (``|alpha| <= 1/2 ln(1/eps)``, about 11.5) when ``W_+ = 0``
  or ``W_- = 0``.
* ``"line_search"``: the minimiser of the convex ``Z(alpha)`` over
  ``[-MAX_ALPHA, MAX_ALPHA]``; the paper's method 1, valid for real-valued rankers. Found
  as the root of dZ/dalpha (Brent, tolerance 1e-14), since Z is flat at its minimum.

References
----------
.. [1] Y. Freund, R. Iyer, R. E. Schapire and Y. Singer, "An Efficient Boosting Algorithm
   for Combining Preferences", JMLR 4 (2003) 933-969, section 3.2.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import brentq

__all__ = [
    "ALPHA_EPS",
    "MAX_ALPHA",
    "PERFECT",
    "alpha_exact",
    "alpha_from_r",
    "alpha_line_search",
]

#: Guard of the alpha rules against a perfect weak ranker (see the module docstring).
ALPHA_EPS = 1e-10
#: Largest |alpha| any rule returns: 1/2 ln((2 - ALPHA_EPS) / ALPHA_EPS).
MAX_ALPHA = 0.5 * float(np.log((2.0 - ALPHA_EPS) / ALPHA_EPS))
#: A weak ranker with ``|r|`` at least this orders every crucial pair correctly.
PERFECT = 1.0 - 1e-12


def alpha_from_r(r: float) -> float:
    """Rb-c: ``1/2 ln((1 + r) / (1 - r))``, with ``r`` clipped to ``±(1 - ALPHA_EPS)``.

    Examples
    --------
    >>> from rankboost.alpha_rules import alpha_from_r
    >>> round(alpha_from_r(0.5), 6)
    0.549306
    """
    rc = min(max(float(r), -1.0 + ALPHA_EPS), 1.0 - ALPHA_EPS)
    return 0.5 * float(np.log((1.0 + rc) / (1.0 - rc)))


def alpha_exact(w_minus: float, w_plus: float) -> float:
    """Rb-d: ``1/2 ln(max(W_-, eps) / max(W_+, eps))`` with ``eps = ALPHA_EPS``.

    Examples
    --------
    >>> from rankboost.alpha_rules import alpha_exact
    >>> round(alpha_exact(0.6, 0.2), 6)
    0.549306
    """
    return 0.5 * float(np.log(max(w_minus, ALPHA_EPS) / max(w_plus, ALPHA_EPS)))


def alpha_line_search(log_slopes: Callable[[float], tuple[float, float]]) -> float:
    """Argmin of the convex Z(alpha) on [-MAX_ALPHA, MAX_ALPHA].

    dZ/dalpha = (S_0 - S_1) / M, with S_0, S_1 >= 0 the sums of the blocks' parts
    (``log_slopes(alpha) = (log S_0, log S_1)``), so the root of
    ``phi(alpha) = ln S_0 - ln S_1`` (increasing in alpha) is the minimiser. Root-finding on
    the slope pins alpha to ~1e-14, where minimising Z's values could only reach ~1e-8.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.alpha_rules import alpha_line_search
    >>> # Z = 0.6 e^-a + 0.2 e^a: dZ/da = S_0 - S_1 with S_0 = 0.2 e^a, S_1 = 0.6 e^-a
    >>> a = alpha_line_search(lambda a: (np.log(0.2) + a, np.log(0.6) - a))
    >>> round(a, 6)
    0.549306
    """

    def phi(a: float) -> float:
        s0, s1 = log_slopes(a)
        return s0 - s1

    s0, s1 = log_slopes(-MAX_ALPHA)
    if s0 == s1 == -np.inf:  # no pair is ordered by h either way: Z does not depend on alpha
        return 0.0
    lo = s0 - s1
    if lo >= 0:  # Z increases on the whole range (or is flat at its left end)
        return -MAX_ALPHA
    hi = phi(MAX_ALPHA)
    if hi <= 0:
        return MAX_ALPHA
    return float(brentq(phi, -MAX_ALPHA, MAX_ALPHA, xtol=1e-14, rtol=4 * np.finfo(float).eps))
