"""Clicks -> crucial pairs: a :class:`rankboost.PairFeedback` of (non-clicked, clicked, weight).

Each session yields pairs by one of the extractions of :mod:`rankboost._kernels.clicks`
(``all_shown``, the default, ``all_unclicked``, ``skip_above``, ``skip_next``,
``last_click_skip_above``); every pair of a
session weighs the clicked document's inverse propensity ``min(1 / p_k, max_weight)`` times
the session's count (Joachims, Swaminathan & Schnabel, WSDM 2017), and pairs repeated over
sessions add up: ``Phi(x0, x1) = sum of weights`` (SPEC 7.2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._kernels import clicks as _k
from .._kernels import use_parallel
from ._counts import PAIR_EXTRACTIONS, ClickCounts, check_pairs, click_counts
from ._log import ClickLog
from ._propensity import Propensity, estimate_propensity, read_propensity

if TYPE_CHECKING:
    from ..feedback import PairFeedback

__all__ = ["PAIR_EXTRACTIONS", "click_feedback", "click_pairs", "resolve_propensity"]


def resolve_propensity(
    log: ClickLog | ClickCounts,
    propensity: Any,
    X: ArrayLike | None = None,
    *,
    verbose: bool = False,
) -> Propensity:
    """A :class:`Propensity` from ``"auto"``, ``"none"``, a file path, a table or an object.

    ``"auto"`` estimates it from ``log`` (:func:`estimate_propensity`; regression-EM when
    ``X`` is given).
    """
    n_pos = log.max_position if isinstance(log, ClickCounts) else int(log.position.max())
    if isinstance(propensity, Propensity):
        return propensity
    if isinstance(propensity, str):
        if propensity == "none":
            return Propensity.none(n_pos)
        if propensity == "auto":
            return estimate_propensity(log, X, verbose=verbose)
        return read_propensity(propensity)
    if hasattr(propensity, "__fspath__"):
        return read_propensity(propensity)
    return Propensity.from_table(propensity)


def click_pairs(
    log: ClickLog | ClickCounts,
    propensity: Propensity | None = None,
    *,
    pairs: str = "all_shown",
    max_weight: float | None = 100.0,
    aggregate: bool = True,
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The crucial pairs of a matched click log and their weights.

    Parameters
    ----------
    log : ClickLog or ClickCounts
        Matched to feature rows (``log.row`` set), or summed (:func:`click_counts`,
        :func:`read_click_counts`: then ``pairs`` must be the extraction it summed).
    propensity : Propensity, default=None
        Examination propensities; None = no correction (every click weighs its count).
    pairs : str, default="all_shown"
        "skip_above", "skip_next", "last_click_skip_above", "all_unclicked" or "all_shown"
        (see the module docstring of :mod:`rankboost._kernels.clicks`).
    max_weight : float, default=100.0
        Clip inverse propensities at this value; None: no clipping.
    aggregate : bool, default=True
        Sum the weights of repeated pairs (sorted by ``(lower, upper)``): per pair,
        ``sum_k count_k * min(1 / p_k, max_weight)`` over the positions ``k`` of its
        clicked row, ``count_k`` the summed session counts (:func:`click_counts`). False:
        one row per pair per session, in session order (a :class:`ClickLog` only).

    Returns
    -------
    pairs : ndarray of int64 of shape (n_pairs, 2)
        Rows ``(non-clicked row, clicked row)``: the second should rank above the first.
    weights : ndarray of float64 of shape (n_pairs,)
    """
    mode = check_pairs(pairs)
    if max_weight is not None and not (max_weight >= 1.0):
        raise ValueError(f"max_weight must be >= 1 (or None); got {max_weight!r}.")
    if isinstance(log, ClickCounts):
        if pairs != log.pairs or not aggregate:
            raise ValueError(
                f"these click counts hold {log.pairs} pairs, summed; got pairs={pairs!r}, "
                f"aggregate={aggregate}. Sum the log again with pairs={pairs!r}."
            )
        return log.pair_weights(propensity, max_weight)
    if log.row is None or log.n_samples is None:
        raise ValueError(
            f"{log.source} is not matched to feature rows; call log.match(qid, docid) first."
        )
    if aggregate:
        return click_counts(log, pairs).pair_weights(propensity, max_weight)
    w = log.count.copy()
    if propensity is not None:
        on_click = log.click == 1
        w[on_click] *= propensity.weights(log.position[on_click], max_weight)
    clicked = np.ascontiguousarray(log.click, dtype=np.uint8)
    counts = np.empty(log.n_sessions, dtype=np.int64)
    par = use_parallel(log.n_entries * 8)
    _k.count_pairs(log.starts, log.row, clicked, w, mode, counts, par)
    offsets = np.zeros(log.n_sessions + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    m = int(offsets[-1])
    lower = np.empty(m, dtype=np.int64)
    upper = np.empty(m, dtype=np.int64)
    weight = np.empty(m, dtype=np.float64)
    _k.fill_pairs(log.starts, log.row, clicked, w, mode, offsets, (lower, upper, weight), par)
    return np.column_stack([lower, upper]).astype(np.int64), weight


def click_feedback(
    log: ClickLog | ClickCounts,
    propensity: Any = "auto",
    *,
    X: ArrayLike | None = None,
    pairs: str = "all_shown",
    max_weight: float | None = 100.0,
) -> PairFeedback:
    """RankBoost's feedback from a click log: ``PairFeedback(non-clicked, clicked, weight)``.

    Parameters
    ----------
    log : ClickLog or ClickCounts
        Matched to the rows of the feature matrix (:meth:`ClickLog.match`), or summed
        (:func:`read_click_counts`, :func:`click_counts`; for the same ``pairs``).
    propensity : "auto", "none", path, array-like or Propensity, default="auto"
        ``"auto"``: estimated from the log (:func:`estimate_propensity`, regression-EM when
        ``X`` is given, else EM); ``"none"``: no correction (naive); a file
        (:func:`read_propensity`), ``p_1..p_K`` values, or a :class:`Propensity`.
    X : array-like of shape (n_samples, n_features), default=None
        Features, for ``propensity="auto"`` (regression-EM).
    pairs : str, default="all_shown"
        Pair extraction (:func:`click_pairs`): the default, every clicked document above
        every other shown one, is the one inverse-propensity weights make unbiased;
        ``"skip_above"`` pairs all contradict the logged ranking (docs/clicks.md).
    max_weight : float, default=100.0
        Clip of the inverse propensity weights.

    Returns
    -------
    feedback : PairFeedback
        ``n_samples = log.n_samples``; pass it to :func:`rankboost.train` with the features.

    References
    ----------
    .. [1] T. Joachims, "Optimizing Search Engines using Clickthrough Data", KDD 2002.
    .. [2] T. Joachims, L. Granka, B. Pan, H. Hembrooke and G. Gay, "Accurately Interpreting
       Clickthrough Data as Implicit Feedback", SIGIR 2005.
    .. [3] T. Joachims, A. Swaminathan and T. Schnabel, "Unbiased Learning-to-Rank with
       Biased Feedback", WSDM 2017.

    Examples
    --------
    >>> import rankboost as rb
    >>> from rankboost.clicks import ClickLog, click_feedback
    >>> log = ClickLog.from_arrays(qid=[1, 1, 1], docid=None, position=[1, 2, 3],
    ...                            click=[0, 0, 1], row=[0, 1, 2])
    >>> fb = click_feedback(log, propensity=[1.0, 0.5, 0.25])
    >>> fb.pairs.tolist(), fb.weights.tolist()
    ([[0, 2], [1, 2]], [4.0, 4.0])
    """
    from ..feedback import PairFeedback

    prop = resolve_propensity(log, propensity, X)
    p, w = click_pairs(log, prop, pairs=pairs, max_weight=max_weight)
    if p.shape[0] == 0:
        raise ValueError(
            f"{log.source} yields no {pairs} pair; RankBoost needs at least one (a click "
            "and another shown document). Check the click column."
        )
    return PairFeedback(p, w, n_samples=int(log.n_samples or 0))
