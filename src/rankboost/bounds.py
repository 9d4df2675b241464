"""Generalization bounds of Freund et al. (2003) for bipartite RankBoost."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

__all__ = ["bipartite_generalization_bound"]


def _check_int(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(
            f"The {name!r} parameter of bipartite_generalization_bound must be an int >= "
            f"{minimum}; got {value!r} instead."
        )
    if value < minimum:
        raise ValueError(
            f"The {name!r} parameter of bipartite_generalization_bound must be >= {minimum}; "
            f"got {value!r} instead."
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
    d_prime = 2.0 * (d + 1) * (t + 1) * math.log2(math.e * (t + 1))
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
