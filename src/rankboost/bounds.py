"""Generalization bounds of Freund et al. (2003) for bipartite RankBoost.

:func:`bipartite_generalization_bound` is the theorem's deviation ``eps`` (paper section 5);
:func:`model_bound` evaluates it, round by round, for a trained model on its bipartite
training problem, beside the empirical error it bounds (:func:`bipartite_error_curve`);
:func:`threshold_vc_dim` is the VC-dimension bound of the threshold rankers used for ``d``;
:func:`min_sample_size` answers "how many examples until the bound says anything (< 1)?".

The theorem's setting is a *pooled* bipartite problem: ``m`` negatives drawn i.i.d. from
``D_0`` and ``n`` positives from ``D_1``, and the error of ``H`` is the probability that a
random (negative, positive) pair is misordered, ``H(x0) >= H(x1)`` (ties count as errors).
Learning-to-rank data has queries: pairs never cross queries in training. The pooled error
(every negative against every positive, queries ignored) is what the theorem bounds; the
within-query error (what training minimises) is reported beside it when ``qid`` is given,
but the theorem says nothing about it (the documents of one query are not independent
draws, and a query's pairs are not a sample of ``D_0 x D_1``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import check_feature_matrix

if TYPE_CHECKING:
    from .model import RankBoostModel

__all__ = [
    "ModelBound",
    "bipartite_error_curve",
    "bipartite_generalization_bound",
    "min_sample_size",
    "model_bound",
    "threshold_vc_dim",
]


def _check_int(
    value: Any, name: str, minimum: int, owner: str = "bipartite_generalization_bound"
) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(
            f"The {name!r} parameter of {owner} must be an int >= {minimum}; got {value!r} instead."
        )
    if value < minimum:
        raise ValueError(
            f"The {name!r} parameter of {owner} must be >= {minimum}; got {value!r} instead."
        )
    return int(value)


def bipartite_generalization_bound(
    m: int, n: int, vc_dim: int, n_rounds: int, delta: float
) -> float:
    r"""Uniform deviation bound between training and true bipartite ranking error.

    With probability at least ``1 - delta`` over independent samples of ``m`` negative and
    ``n`` positive instances, every combined ranker ``H = sum_{t=1}^T alpha_t h_t`` built from
    ``T`` weak rankers of a class of VC-dimension ``d >= 2`` satisfies
    ``|empirical error - true error| <= eps``, where

    .. math::

        \varepsilon = 2\sqrt{\frac{d'(\ln(2m/d') + 1) + \ln(18/\delta)}{m}}
                    + 2\sqrt{\frac{d'(\ln(2n/d') + 1) + \ln(18/\delta)}{n}},
        \qquad d' = 2(d + 1)(T + 1)\log_2(e(T + 1)).

    The error is the probability that a random (negative, positive) pair is misordered
    (``H(x) >= H(y)``); the empirical error is the bipartite ranking loss on the
    ``m * n`` training pairs.

    Assumptions (those of the theorem): negatives are drawn i.i.d. from ``D_0`` and positives
    i.i.d. from ``D_1``, the two samples independently of each other; the weak rankers are
    binary (``{0, 1}``-valued) with VC-dimension ``d >= 2``; ``T`` is fixed in advance (the
    bound holds uniformly over all weights ``alpha_t`` and all choices of the ``h_t``). The
    bound is a worst-case guarantee: it exceeds 1 (is vacuous) unless ``m`` and ``n`` are
    large compared with ``d'``.

    Parameters
    ----------
    m : int
        Number of negative training instances, ``>= d'`` (Sauer's lemma, used by the proof,
        needs at least ``d'`` points; smaller samples raise a ``ValueError``).
    n : int
        Number of positive training instances, ``>= d'``.
    vc_dim : int
        VC-dimension ``d`` of the weak-ranker class, ``>= 2``.
    n_rounds : int
        Number of boosting rounds ``T``, ``>= 1``.
    delta : float
        Confidence parameter in ``(0, 1)``.

    Returns
    -------
    float
        The bound ``eps`` (not clipped to ``[0, 1]``).

    References
    ----------
    .. [1] Y. Freund, R. Iyer, R. E. Schapire and Y. Singer, "An efficient boosting algorithm
       for combining preferences", JMLR 4, 2003, section 5 (generalization, Theorem for the
       bipartite case).

    Examples
    --------
    >>> from rankboost.bounds import bipartite_generalization_bound
    >>> round(bipartite_generalization_bound(10**6, 10**6, vc_dim=2, n_rounds=10, delta=0.05), 4)
    0.2246
    """
    m = _check_int(m, "m", 1)
    n = _check_int(n, "n", 1)
    d = _check_int(vc_dim, "vc_dim", 2)
    t = _check_int(n_rounds, "n_rounds", 1)
    if isinstance(delta, bool) or not isinstance(delta, Real):
        raise TypeError(
            "The 'delta' parameter of bipartite_generalization_bound must be a float in "
            f"(0, 1); got {delta!r} instead."
        )
    if not 0.0 < float(delta) < 1.0:
        raise ValueError(
            "The 'delta' parameter of bipartite_generalization_bound must be in (0, 1); got "
            f"{delta!r} instead."
        )
    d_prime = _d_prime(d, t)
    log_term = math.log(18.0 / float(delta))

    for name, size in (("m", m), ("n", n)):
        if size < d_prime:
            # Sauer's lemma (e m / d')^d' behind the bound needs m >= d'.
            raise ValueError(
                f"bipartite_generalization_bound needs {name} >= d' = 2(d+1)(T+1)log2(e(T+1)) "
                f"= {d_prime:.6g} (vc_dim={d}, n_rounds={t}); got {name}={size}. The bound is "
                "vacuous for such small samples."
            )

    def half(size: int) -> float:
        inner = d_prime * (math.log(2.0 * size / d_prime) + 1.0) + log_term
        return 2.0 * math.sqrt(inner / size)

    return half(m) + half(n)


def _d_prime(vc_dim: int, n_rounds: int) -> float:
    """``d' = 2(d + 1)(T + 1) log2(e(T + 1))`` of the theorem."""
    return 2.0 * (vc_dim + 1) * (n_rounds + 1) * math.log2(math.e * (n_rounds + 1))


def threshold_vc_dim(n_features: int) -> int:
    """An upper bound on the VC-dimension of the threshold rankers over ``n_features``.

    The class is ``h(x) = [f_i(x) > theta]`` for any feature ``i``, any real ``theta`` (and
    ``+-inf``), with ``h = q_def in {0, 1}`` where ``f_i`` abstains: the weak rankers of
    :func:`rankboost.train` for every ``thresholds=`` rule (a finite candidate set is a subset,
    and thresholds picked from the data are members of the class fixed in advance). On ``k``
    points one feature gives at most ``k + 1`` threshold labellings of its defined points
    times 2 values of ``q_def`` for its abstaining points, so the growth function is at most
    ``2 n_features (k + 1)``. Shattering ``k`` points needs ``2**k`` labellings, hence

    ``d <= max{k : 2**k <= 2 n_features (k + 1)}``,

    raised to 2 (the theorem needs ``d >= 2``). The bound of the theorem grows with ``d``, so
    an upper bound on ``d`` keeps it valid. Examples: 1 feature gives 3 (the exact value is 2),
    46 features (LETOR MQ2008) give 9.

    Parameters
    ----------
    n_features : int
        Number of features (columns) the weak rankers may use, ``>= 1``.

    Returns
    -------
    int
        The bound on the VC-dimension, ``>= 2``.

    Examples
    --------
    >>> from rankboost.bounds import threshold_vc_dim
    >>> threshold_vc_dim(1), threshold_vc_dim(46), threshold_vc_dim(10**6)
    (3, 9, 25)
    """
    f = _check_int(n_features, "n_features", 1, owner="threshold_vc_dim")
    k = 2
    while 2 ** (k + 1) <= 2 * f * (k + 2):
        k += 1
    return k


def min_sample_size(
    vc_dim: int, n_rounds: int, delta: float, *, epsilon: float = 1.0, ratio: float = 1.0
) -> int:
    """The smallest number ``m`` of negatives for which the bound falls below ``epsilon``.

    The positives number ``n = ceil(ratio * m)`` (``ratio = 1``: as many positives as
    negatives). Both terms of :func:`bipartite_generalization_bound` decrease in the sample
    size once it is ``>= d'``, so the answer is found by bisection.

    Parameters
    ----------
    vc_dim : int
        VC-dimension ``d >= 2`` of the weak rankers (:func:`threshold_vc_dim`).
    n_rounds : int
        Number of rounds ``T >= 1``.
    delta : float
        Confidence parameter in ``(0, 1)``.
    epsilon : float, default=1.0
        Target bound; ``1`` is the point where the bound stops being vacuous.
    ratio : float, default=1.0
        Positives per negative, ``> 0``.

    Returns
    -------
    int
        The smallest ``m`` with ``bipartite_generalization_bound(m, ceil(ratio m), ...) <
        epsilon``.

    Examples
    --------
    >>> from rankboost.bounds import bipartite_generalization_bound, min_sample_size
    >>> m = min_sample_size(vc_dim=2, n_rounds=10, delta=0.05)
    >>> m
    32764
    >>> bipartite_generalization_bound(m, m, 2, 10, 0.05) < 1.0
    True
    >>> bipartite_generalization_bound(m - 1, m - 1, 2, 10, 0.05) < 1.0
    False
    """
    for name, value in (("epsilon", epsilon), ("ratio", ratio)):
        if isinstance(value, bool) or not isinstance(value, Real) or not float(value) > 0.0:
            raise ValueError(
                f"The {name!r} parameter of min_sample_size must be a float > 0; got "
                f"{value!r} instead."
            )
    d = _check_int(vc_dim, "vc_dim", 2, owner="min_sample_size")
    t = _check_int(n_rounds, "n_rounds", 1, owner="min_sample_size")
    bipartite_generalization_bound(10**18, 10**18, d, t, delta)  # checks delta
    d_prime = _d_prime(d, t)

    def eps(m: int) -> float:
        return bipartite_generalization_bound(m, math.ceil(ratio * m), d, t, delta)

    # both sizes must be >= d' for the bound to be defined
    lo = math.ceil(max(d_prime, d_prime / float(ratio)))
    while math.ceil(ratio * lo) < d_prime:
        lo += 1
    if eps(lo) < epsilon:
        return lo
    hi = 2 * lo
    while eps(hi) >= epsilon:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:  # eps(lo) >= epsilon > eps(hi)
        mid = (lo + hi) // 2
        if eps(mid) < epsilon:
            hi = mid
        else:
            lo = mid
    return hi


def _binary_labels(y: ArrayLike, relevance_threshold: float, owner: str) -> NDArray[np.bool_]:
    labels = np.asarray(y, dtype=np.float64)
    if labels.ndim != 1:
        raise ValueError(f"{owner}: y must be 1-D (one label per row); got shape {labels.shape}.")
    if not np.all(np.isfinite(labels)):
        raise ValueError(
            f"{owner}: y has {int(np.sum(~np.isfinite(labels)))} NaN or infinite labels; "
            "give every row a finite label (drop unlabelled rows first)."
        )
    return labels >= relevance_threshold


def bipartite_error_curve(
    model: RankBoostModel,
    X: ArrayLike,
    y: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    relevance_threshold: float = 1,
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """Empirical bipartite error of ``H_t`` after every round ``t = 1..T``.

    The pooled error is the theorem's empirical error: the fraction of the ``m * n``
    (negative, positive) pairs with ``H_t(x0) >= H_t(x1)`` (ties count as errors), every
    negative against every positive, queries ignored. Graded labels are made bipartite by
    ``positive = y >= relevance_threshold`` (LETOR grades 0, 1, 2 with the default 1:
    relevant = label > 0, as MAP counts them). With ``qid``, the within-query error is
    returned too: the fraction of crucial pairs (negative and positive of one query, every
    pair the same weight) with ``H_t(x0) >= H_t(x1)``, the loss training minimises
    (:meth:`rankboost.BipartiteFeedback.rloss`, ``normalize="pair"``, ``tie_weight=1``).

    Counting is ``O(N log N)`` per round (sort the negatives' scores, binary-search the
    positives'), no pair is materialised.

    Parameters
    ----------
    model : RankBoostModel
        A trained model.
    X : array-like of shape (n_samples, n_features)
        Features of the rows to evaluate (training or test rows).
    y : array-like of shape (n_samples,)
        Labels; ``y >= relevance_threshold`` is a positive.
    qid : array-like of shape (n_samples,), default=None
        Query ids; when given, the within-query error is returned as well.
    relevance_threshold : float, default=1
        Labels ``>=`` this value are positives.

    Returns
    -------
    pooled : ndarray of shape (n_rounds,)
        The pooled bipartite error after each round.
    within_query : ndarray of shape (n_rounds,) or None
        The within-query error after each round (None without ``qid``).

    Examples
    --------
    >>> import numpy as np
    >>> import rankboost as rb
    >>> from rankboost.bounds import bipartite_error_curve
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array([0, 1, 0, 1])
    >>> model = rb.train(X, rb.BipartiteFeedback(y), n_rounds=1)
    >>> model.rankers
    [ThresholdRanker(feature=0, threshold=2.0, default=0.0)]
    >>> pooled, _ = bipartite_error_curve(model, X, y)  # (0, 1) and (2, 1) tie: errors
    >>> pooled.tolist()
    [0.5]
    """
    owner = "bipartite_error_curve"
    pos = _binary_labels(y, relevance_threshold, owner)
    m, n = int(np.sum(~pos)), int(np.sum(pos))
    if m == 0 or n == 0:
        raise ValueError(
            f"{owner}: the labels give {n} positives (y >= {relevance_threshold}) and {m} "
            "negatives; both must be present for a bipartite error. Check y and "
            "relevance_threshold."
        )
    Xc = check_feature_matrix(X, n_features=model.n_features)
    if Xc.shape[0] != pos.shape[0]:
        raise ValueError(
            f"{owner}: X must have one row per label; got X of shape {Xc.shape} and "
            f"{pos.shape[0]} labels."
        )
    fb = None
    if qid is not None:
        from .feedback import BipartiteFeedback

        fb = BipartiteFeedback(pos.astype(np.int64), qid, normalize="pair")
    pooled = np.empty(model.n_rounds)
    within = np.empty(model.n_rounds) if fb is not None else None
    for t, scores in enumerate(model.staged_decision_function(Xc)):
        neg_sorted = np.sort(scores[~pos])
        # negatives strictly below each positive are ordered correctly; the rest misorder it
        correct = np.searchsorted(neg_sorted, scores[pos], side="left")
        pooled[t] = (m * n - float(np.sum(correct))) / (float(m) * n)
        if fb is not None and within is not None:
            within[t] = fb.rloss(scores, tie_weight=1.0)
    return pooled, within


@dataclass(frozen=True)
class ModelBound:
    """The bound of a trained model on its bipartite training problem (:func:`model_bound`).

    Attributes
    ----------
    n_negatives : int
        ``m``, the training negatives (``y < relevance_threshold``).
    n_positives : int
        ``n``, the training positives.
    vc_dim : int
        ``d`` used for the weak rankers.
    delta : float
        Confidence parameter.
    error : ndarray of shape (n_rounds,)
        Pooled empirical bipartite error after rounds ``1..T`` (:func:`bipartite_error_curve`).
    epsilon : ndarray of shape (n_rounds,)
        The theorem's deviation bound for ``T = t`` rounds; NaN where ``m`` or ``n`` is
        below ``d'`` (the theorem says nothing there).
    query_error : ndarray of shape (n_rounds,) or None
        Within-query error after each round (with ``qid``), not covered by the theorem.
    """

    n_negatives: int
    n_positives: int
    vc_dim: int
    delta: float
    error: NDArray[np.float64]
    epsilon: NDArray[np.float64]
    query_error: NDArray[np.float64] | None = None

    @property
    def rounds(self) -> NDArray[np.int64]:
        """The round numbers ``1..T``."""
        return np.arange(1, self.error.shape[0] + 1)

    @property
    def upper(self) -> NDArray[np.float64]:
        """``error + epsilon``: with probability ``>= 1 - delta`` the true error is below."""
        return self.error + self.epsilon


def model_bound(
    model: RankBoostModel,
    X: ArrayLike,
    y: ArrayLike,
    qid: ArrayLike | None = None,
    *,
    delta: float = 0.05,
    vc_dim: int | None = None,
    relevance_threshold: float = 1,
) -> ModelBound:
    """Evaluate the bipartite generalization bound for a trained model, round by round.

    On the training rows ``(X, y)``: ``m`` = number of negatives, ``n`` = number of
    positives, where graded labels are made bipartite by ``positive = y >=
    relevance_threshold`` (LETOR MQ2008 grades 0/1/2 with the default: relevant = label > 0).
    For every ``t = 1..T`` it returns the empirical pooled error of ``H_t``
    (:func:`bipartite_error_curve`) and ``eps_t = bipartite_generalization_bound(m, n, d, t,
    delta)``, so that the true pooled error of ``H_t`` is at most ``error + eps_t`` with
    probability ``>= 1 - delta``. ``d`` is :func:`threshold_vc_dim` of the model's number of
    features unless given.

    Caveats, all from the theorem: each ``eps_t`` holds for that ``t`` fixed in advance
    (for every round at once, pass ``delta / T``, a union bound); the rows must be i.i.d.
    draws of each class (queries of LETOR are not, see the module docstring); and the bound
    is defined only when ``m, n >= d'`` (NaN otherwise). It is a worst-case guarantee and
    usually vacuous (``> 1``) on data sets of a few thousand rows: see
    :func:`min_sample_size` for the size where it drops below 1.

    Parameters
    ----------
    model : RankBoostModel
        A model of binary threshold rankers (``weak_ranker="threshold"``).
    X : array-like of shape (n_samples, n_features)
        Training features.
    y : array-like of shape (n_samples,)
        Training labels (binary or graded).
    qid : array-like of shape (n_samples,), default=None
        Training query ids; when given, :attr:`ModelBound.query_error` holds the
        within-query error (the training loss), for comparison only.
    delta : float, default=0.05
        Confidence parameter in ``(0, 1)``.
    vc_dim : int, default=None
        VC-dimension ``d >= 2`` of the weak-ranker class; None = ``threshold_vc_dim(
        model.n_features)``.
    relevance_threshold : float, default=1
        Labels ``>=`` this value are positives.

    Returns
    -------
    ModelBound

    Raises
    ------
    ValueError
        If the model has a real-valued weak ranker (the theorem is for binary ones), the
        labels have no positive or no negative, or ``delta`` / ``vc_dim`` are out of range.

    References
    ----------
    .. [1] Y. Freund, R. Iyer, R. E. Schapire and Y. Singer, "An efficient boosting algorithm
       for combining preferences", JMLR 4, 2003, section 5.

    Examples
    --------
    >>> import rankboost as rb
    >>> from rankboost.bounds import min_sample_size, model_bound
    >>> from rankboost.datasets import make_ranking
    >>> X, y, _ = make_ranking(4000, 2, threshold=1.0)
    >>> model = rb.train(X, rb.BipartiteFeedback(y), n_rounds=3)
    >>> b = model_bound(model, X, y, delta=0.05)
    >>> b.n_negatives, b.n_positives, b.vc_dim
    (3033, 967, 4)
    >>> b.error.round(3).tolist(), b.epsilon.round(3).tolist()  # vacuous: eps > 1
    ([0.402, 0.296, 0.254], [1.604, 2.039, 2.385])
    >>> min_sample_size(b.vc_dim, n_rounds=3, delta=0.05, ratio=967 / 3033)  # m for eps < 1
    26438
    """
    owner = "model_bound"
    if np.any(model.rounds.kind != 0):
        raise ValueError(
            f"{owner}: the theorem is for binary weak rankers; this model has "
            f"{int(np.sum(model.rounds.kind != 0))} real-valued rounds. Train it with "
            "weak_ranker='threshold'."
        )
    if model.n_rounds == 0:
        raise ValueError(f"{owner}: the model has no rounds; train it for at least one.")
    d = threshold_vc_dim(model.n_features) if vc_dim is None else vc_dim
    d = _check_int(d, "vc_dim", 2, owner=owner)
    # checks delta once, on sizes where the bound is defined
    bipartite_generalization_bound(10**18, 10**18, d, 1, delta)
    error, within = bipartite_error_curve(model, X, y, qid, relevance_threshold=relevance_threshold)
    pos = _binary_labels(y, relevance_threshold, owner)
    m, n = int(np.sum(~pos)), int(np.sum(pos))
    eps = np.full(model.n_rounds, np.nan)
    for t in range(1, model.n_rounds + 1):
        if min(m, n) < _d_prime(d, t):
            break  # d' grows with t: undefined from here on
        eps[t - 1] = bipartite_generalization_bound(m, n, d, t, delta)
    return ModelBound(m, n, d, float(delta), error, eps, within)
