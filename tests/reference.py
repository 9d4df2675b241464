"""A deliberately slow, obviously correct RankBoost: the oracle of the engine tests.

Straight from the pseudocode of Freund, Iyer, Schapire & Singer, "An Efficient Boosting
Algorithm for Combining Preferences", JMLR 4 (2003) 933-969 (Figure 1 = Knowl 1 of
``../shared/seed-paper-summary.txt``; step sizes = Knowl 4; WeakLearn = Knowl 5 / Figure 2;
WeakLearn.cum = Knowl 6), with the conventions the engine documents (SPEC sections 1-5):

* the pair distribution ``D`` is a dense ``n x n`` matrix, ``D[x0, x1] > 0`` meaning "``x1``
  above ``x0``", built from the feedback definition (duplicates add, ``D = Phi / sum Phi``);
* ``h(x) = 1 if f(x) > theta, 0 if f(x) <= theta, q_def if f(x) is NaN``; candidate
  thresholds: every distinct value of the feature over the support rows (rows in a crucial
  pair) except the largest, in decreasing order, then ``-inf``; for each, ``q_def = 0`` then
  ``1``; features in index order; with ``weak_ranker="both"`` a feature's real-valued
  candidates (``q_def = 0`` then ``1``) follow its threshold candidates;
  ``thresholds="midpoints"``: ``(a + b) / 2`` for consecutive distinct values ``a < b``;
  ``thresholds=("uniform", B)``: ``lo + k (hi - lo) / B`` for ``k = 1 .. B-1`` (``lo``,
  ``hi`` the feature's min and max over the support rows; repeats dropped);
* ``r = sum D(x0, x1) (h(x1) - h(x0))`` computed *from the pairs* (the potential is only used
  for a cross-check), ``|r|`` maximised, candidates within ``TIE_TOLERANCE`` of the best tied,
  first in order wins; ``criterion="r"``: only candidates with ``r > 0`` take part (then
  ``|r| = r``); ``default=0`` or ``1``: only candidates with that ``q_def`` take part;
* alpha rules "r", "exact" (``W_-, W_0, W_+`` from the pairs) and "line_search" (bisection on
  dZ/dalpha over ``[-MAX_ALPHA, MAX_ALPHA]`` to 1e-13);
* ``Z = sum D exp(alpha (h(x0) - h(x1)))``, ``D <- D exp(alpha (h(x0) - h(x1))) / Z``.

Plain numpy and Python loops; it imports nothing from ``rankboost`` on purpose.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

ALPHA_EPS = 1e-10
MAX_ALPHA = 0.5 * math.log((2.0 - ALPHA_EPS) / ALPHA_EPS)
TIE_TOLERANCE = 1e-10
PERFECT = 1.0 - 1e-12


# --------------------------------------------------------------------------- feedback -> D


def pair_matrix(n: int, pairs: Any, weights: Any = None) -> np.ndarray:
    """Dense D from explicit pairs ``(i, j)`` = "row j above row i"; duplicates add."""
    D = np.zeros((n, n))
    pairs = list(pairs)
    if weights is None:
        weights = [1.0] * len(pairs)
    for (i, j), w in zip(pairs, weights, strict=True):
        D[int(i), int(j)] += float(w)
    return D / D.sum()


def layered_pairs(y: Any, qid: Any = None, normalize: str = "pair") -> tuple[list, list]:
    """Every crucial pair (x0, x1) of graded feedback and its initial weight.

    Pairs: same query, ``y[x1] > y[x0]``. ``normalize="pair"``: weight 1 / #pairs;
    ``"query"``: 1 / (#queries with a pair * #pairs of the pair's query).
    """
    y = [float(v) for v in y]
    n = len(y)
    q = [0] * n if qid is None else list(qid)
    by_query: dict[Any, list[tuple[int, int]]] = {}
    for a in range(n):
        for b in range(n):
            if q[a] == q[b] and y[b] > y[a]:
                by_query.setdefault(q[a], []).append((a, b))
    n_pairs = sum(len(v) for v in by_query.values())
    pairs: list[tuple[int, int]] = []
    weights: list[float] = []
    for key in sorted(by_query):
        for p in by_query[key]:
            pairs.append(p)
            if normalize == "pair":
                weights.append(1.0 / n_pairs)
            else:
                weights.append(1.0 / (len(by_query) * len(by_query[key])))
    return pairs, weights


def layered_matrix(y: Any, qid: Any = None, normalize: str = "pair") -> np.ndarray:
    """Dense D of graded (layered) feedback; bipartite feedback is the 0/1 case."""
    pairs, weights = layered_pairs(y, qid, normalize)
    return pair_matrix(len(y), pairs, weights)


def support(D: np.ndarray) -> np.ndarray:
    """Rows that appear in a crucial pair."""
    return np.flatnonzero((D > 0).any(axis=0) | (D > 0).any(axis=1))


# --------------------------------------------------------------------------- weak rankers


@dataclass
class Ranker:
    kind: str  # "threshold" or "feature"
    feature: int
    threshold: float  # NaN for a real-valued ranker
    default: float
    cuts: np.ndarray = field(default_factory=lambda: np.empty(0))

    def predict(self, X: np.ndarray) -> np.ndarray:
        out = np.empty(X.shape[0])
        for k in range(X.shape[0]):
            v = _f32(X[k, self.feature])  # features are compared as float32 (issue 22)
            if math.isnan(v):
                out[k] = self.default
            elif self.kind == "threshold":
                out[k] = 1.0 if v > self.threshold else 0.0
            else:
                below = sum(1 for c in self.cuts if c < v)  # training bin - 1
                out[k] = below / len(self.cuts)
        return out

    def key(self) -> tuple:
        return (self.kind, self.feature, self.threshold, self.default)


def _f32(v: float) -> float:
    """``v`` rounded to float32 (to nearest, ties to even): rankboost's numeric domain."""
    return float(np.float32(v))


def _floor32(v: float) -> float:
    """The largest float32 ``<= v``."""
    f = np.float32(v)
    return float(np.nextafter(f, np.float32(-np.inf)) if float(f) > v else f)


def distinct_values(X: np.ndarray, rows: np.ndarray, feature: int) -> list[float]:
    """The distinct float32 values of the feature (issue 22: training sees float32(x))."""
    return sorted({_f32(X[k, feature]) for k in rows if not math.isnan(X[k, feature])})


def quantile_cuts(values: list[float], n_bins: int) -> list[float]:
    """The engine's documented quantile rule, written out: for k = 1..B-1 the smallest
    distinct value v with #{x <= v} >= n k / B, excluding the largest distinct value."""
    vals = sorted(values)
    distinct = sorted(set(vals))
    if len(distinct) <= n_bins:
        return distinct[:-1]
    n = len(vals)
    chosen = set()
    for k in range(1, n_bins):
        target = n * k / n_bins
        for v in distinct:
            if sum(1 for x in vals if x <= v) >= target:
                if v != distinct[-1]:
                    chosen.add(v)
                break
    return sorted(chosen)


def midpoints(values: list[float]) -> list[float]:
    """Halfway between consecutive distinct values."""
    distinct = sorted(set(values))
    # rounded to the nearest float32, or the lower value where that reaches the upper one
    mids = [(a, _f32(a / 2 + b / 2), b) for a, b in zip(distinct[:-1], distinct[1:], strict=True)]
    return [m if a <= m < b else a for a, m, b in mids]


def uniform_edges(values: list[float], n_bins: int) -> list[float]:
    """The inner edges of ``n_bins`` equal-width bins between min and max."""
    lo, hi = min(values), max(values)
    edges = {_floor32(lo + k * (hi - lo) / n_bins) for k in range(1, n_bins)}
    return sorted(e for e in edges if lo <= e < hi) if hi > lo else []


def candidates(
    X: np.ndarray, rows: np.ndarray, weak_ranker: str = "threshold", thresholds: Any = "all"
) -> list[Ranker]:
    """All candidate weak rankers in the canonical (tie-break) order."""
    out: list[Ranker] = []
    for i in range(X.shape[1]):
        if isinstance(thresholds, str) and thresholds == "all":
            cuts = distinct_values(X, rows, i)[:-1]
        elif isinstance(thresholds, str) and thresholds == "midpoints":
            cuts = midpoints(distinct_values(X, rows, i))
        elif isinstance(thresholds, tuple):
            values = distinct_values(X, rows, i)
            cuts = uniform_edges(values, thresholds[1]) if values else []
        else:
            defined = [_f32(X[k, i]) for k in rows if not math.isnan(X[k, i])]
            cuts = quantile_cuts(defined, int(thresholds)) if defined else []
        has_value = bool(distinct_values(X, rows, i))
        if weak_ranker in ("threshold", "both") and has_value:
            for theta in [*sorted(cuts, reverse=True), -math.inf]:
                for q in (0.0, 1.0):
                    out.append(Ranker("threshold", i, theta, q))
        if weak_ranker in ("feature", "both") and len(cuts) >= 1:
            for q in (0.0, 1.0):
                out.append(Ranker("feature", i, math.nan, q, np.array(cuts, dtype=float)))
    return out


# --------------------------------------------------------------------------- round statistics


def potential(D: np.ndarray) -> np.ndarray:
    """pi(x) = sum_x' D(x', x) - D(x, x')."""
    return D.sum(axis=0) - D.sum(axis=1)


def r_from_pairs(D: np.ndarray, h: np.ndarray) -> float:
    """r = sum_{x0, x1} D(x0, x1) (h(x1) - h(x0)) over the pair matrix."""
    return float(np.sum(D * (h[None, :] - h[:, None])))


def binary_stats(D: np.ndarray, h: np.ndarray) -> tuple[float, float, float]:
    """(W_-, W_0, W_+): mass of pairs with h(x0) - h(x1) = -1, 0, +1 (NaN if h not binary)."""
    if not np.isin(h, (0.0, 1.0)).all():
        return math.nan, math.nan, math.nan
    diff = h[:, None] - h[None, :]
    return float(D[diff == -1].sum()), float(D[diff == 0].sum()), float(D[diff == 1].sum())


def z_value(D: np.ndarray, h: np.ndarray, alpha: float) -> float:
    diff = h[:, None] - h[None, :]
    return float(np.sum(D * np.exp(alpha * diff)))


def dz_value(D: np.ndarray, h: np.ndarray, alpha: float) -> float:
    diff = h[:, None] - h[None, :]
    return float(np.sum(D * diff * np.exp(alpha * diff)))


def alpha_r(r: float) -> float:
    rc = min(max(r, -1.0 + ALPHA_EPS), 1.0 - ALPHA_EPS)
    return 0.5 * math.log((1.0 + rc) / (1.0 - rc))


def alpha_exact(w_minus: float, w_plus: float) -> float:
    return 0.5 * math.log(max(w_minus, ALPHA_EPS) / max(w_plus, ALPHA_EPS))


def alpha_line_search(D: np.ndarray, h: np.ndarray) -> float:
    """Minimiser of the convex Z on [-MAX_ALPHA, MAX_ALPHA] by bisection on dZ/dalpha."""
    diff = h[:, None] - h[None, :]
    if not np.any((D > 0) & (diff != 0)):
        return 0.0  # Z does not depend on alpha
    lo, hi = -MAX_ALPHA, MAX_ALPHA
    if dz_value(D, h, lo) >= 0:
        return lo
    if dz_value(D, h, hi) <= 0:
        return hi
    while hi - lo > 1e-13:
        mid = 0.5 * (lo + hi)
        if dz_value(D, h, mid) > 0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def choose_alpha(method: str, D: np.ndarray, h: np.ndarray, r: float) -> float:
    if method == "r":
        return alpha_r(r)
    if method == "exact":
        w_minus, _, w_plus = binary_stats(D, h)
        return alpha_exact(w_minus, w_plus)
    if method == "line_search":
        return alpha_line_search(D, h)
    raise ValueError(method)


def rloss(D1: np.ndarray, H: np.ndarray) -> float:
    """sum D(x0, x1) [H(x1) <= H(x0)] (ties count as errors)."""
    return float(np.sum(D1 * (H[None, :] <= H[:, None])))


# --------------------------------------------------------------------------- the loop


@dataclass
class Round:
    ranker: Ranker
    alpha: float
    r: float
    z: float
    w_minus: float
    w_zero: float
    w_plus: float
    D: np.ndarray  # D_t, the distribution this round's weak ranker was chosen on
    rloss: float
    bound: float
    rloss_ambiguous: bool  # a pair's |H(x1) - H(x0)| < 1e-9 though its h histories differ


@dataclass
class Result:
    rounds: list[Round]
    stop: str | None  # None, "no_ranker" or "perfect"
    H: np.ndarray  # final scores of every row
    # First round whose outcome hangs on float noise (a |r| within NOISE of the stopping
    # tolerance, of the tie window's edge or of a perfect ranker; a cumulative weight
    # within NOISE_ALPHA of 0): two correct implementations may differ from there on.
    ambiguous_from: int | None = None


NOISE = 1e-13  # a generous bound on the float error of r (sums of <= n^2 terms <= 1)
NOISE_ALPHA = 1e-9


def _near(a: float, b: float, eps: float = NOISE) -> bool:
    return abs(a - b) < eps


def _weak_learn(alive, absr, tol, alpha_of, cumulative_of):
    """Pick among ``alive``: repeatedly the first candidate within TIE_TOLERANCE of the best
    remaining |r|; without the constraint (``cumulative_of`` returns None) take it, with it
    take it only if its cumulative weight stays > 0, else drop it and go on.

    Returns (chosen index or None, its alpha, the |r| anchoring the window, ambiguous flag).
    """
    alive = list(alive)
    rejected: list[int] = []
    ambiguous = False
    top = 0.0
    while alive:
        top = max(absr[k] for k in alive)
        window = top - TIE_TOLERANCE
        ambiguous |= any(_near(absr[k], window) for k in alive)
        k = next(k for k in alive if absr[k] >= window)
        ambiguous |= _near(absr[k], tol)
        if absr[k] <= tol:
            break
        a = alpha_of(k)
        c = cumulative_of(k)
        if c is None:
            return k, a, top, ambiguous
        ambiguous |= _near(c + a, 0.0, NOISE_ALPHA) or (c + a <= 0 and _near(a, 0.0, NOISE_ALPHA))
        if c + a > 0:
            # a rejected candidate that set the tie window of this pick
            ambiguous |= any(top + NOISE < absr[j] <= top + TIE_TOLERANCE + NOISE for j in rejected)
            return k, a, top, ambiguous
        alive.remove(k)
        rejected.append(k)
    return None, 0.0, top, ambiguous


def train(
    X: Any,
    D: np.ndarray,
    n_rounds: int = 10,
    *,
    alpha: str = "r",
    weak_ranker: str = "threshold",
    positive_cumulative: bool = False,
    thresholds: Any = "all",
    tol: float = 1e-10,
    learning_rate: float = 1.0,
    criterion: str = "abs_r",
    default: Any = "learned",
) -> Result:
    """RankBoost (Figure 1 of the paper) on a dense pair distribution.

    ``learning_rate`` (shrinkage nu) multiplies the rule's alpha; Z is taken at the result.
    ``criterion="r"`` keeps the candidates with ``r > 0``; ``default=q`` those with
    ``q_def = q``.
    """
    X = np.asarray(X, dtype=float)
    D1 = np.asarray(D, dtype=float)
    D1 = D1 / D1.sum()
    rows = support(D1)
    cands = candidates(X, rows, weak_ranker, thresholds)
    values = [c.predict(X) for c in cands]
    Dt = D1.copy()
    H = np.zeros(X.shape[0])
    cumulative: dict[tuple, float] = {}
    bound = 1.0
    rounds: list[Round] = []
    stop = None
    ambiguous = False
    same_history = np.ones((X.shape[0], X.shape[0]), dtype=bool)
    result = Result(rounds, None, H)
    for t in range(n_rounds):
        pi = potential(Dt)
        rs = []
        for h in values:
            r = r_from_pairs(Dt, h)
            r_pi = float(np.dot(pi, h))
            if abs(r - r_pi) > 1e-12:
                raise AssertionError(f"r from pairs {r} != r from the potential {r_pi}")
            rs.append(r)
        absr = [abs(v) for v in rs]

        # WeakLearn (.cum): candidates in decreasing |r|, ties -> first in order; with the
        # constraint, the first whose alpha keeps its cumulative weight > 0
        def alpha_of(k: int, Dt: np.ndarray = Dt, rs: list = rs) -> float:
            a = choose_alpha(alpha, Dt, values[k], rs[k])
            return a if learning_rate == 1.0 else learning_rate * a

        def cumulative_of(k: int) -> float:
            return cumulative.get(cands[k].key(), 0.0)

        allowed = [
            k for k in range(len(cands))
            if (criterion == "abs_r" or rs[k] > 0)
            and (default == "learned" or cands[k].default == float(default))
        ]  # fmt: skip
        chosen, a, top, flags = _weak_learn(
            allowed, absr, tol, alpha_of,
            cumulative_of if positive_cumulative else (lambda k: None),
        )  # fmt: skip
        ambiguous |= flags
        if positive_cumulative:
            # The tie window (|r| within TIE_TOLERANCE of the best) is anchored at the best
            # candidate; whether candidates the constraint rejects anyway (a new ranker with
            # r <= 0) may anchor it is not specified. When the two readings pick different
            # rankers (|r| differences ~ TIE_TOLERANCE), the round is ambiguous.
            eligible = [
                k for k in allowed
                if rs[k] > 0 or cumulative.get(cands[k].key(), 0.0) > 0
            ]  # fmt: skip
            other, _, _, flags2 = _weak_learn(eligible, absr, tol, alpha_of, cumulative_of)
            ambiguous |= flags2 or other != chosen
        if ambiguous and result.ambiguous_from is None:
            result.ambiguous_from = t
        if chosen is None:
            stop = "no_ranker"
            break
        h = values[chosen]
        w_minus, w_zero, w_plus = binary_stats(Dt, h)
        z = z_value(Dt, h, a)
        H = H + a * h
        bound *= z
        if positive_cumulative:
            key = cands[chosen].key()
            cumulative[key] = cumulative.get(key, 0.0) + a
        # rows with the same h_1..h_t have bit-identical H in any implementation that adds
        # alpha_t h_t in round order; other near-equal scores are ties or not by float noise
        same_history &= h[:, None] == h[None, :]
        near = np.abs(H[None, :] - H[:, None]) < 1e-9
        rloss_ambiguous = bool(np.any(near & ~same_history & (D1 > 0)))
        rounds.append(
            Round(
                cands[chosen],
                a,
                rs[chosen],
                z,
                w_minus,
                w_zero,
                w_plus,
                Dt,
                rloss(D1, H),
                bound,
                rloss_ambiguous,
            )  # fmt: skip
        )
        diff = h[:, None] - h[None, :]
        Dt = Dt * np.exp(a * diff) / z
        if _near(absr[chosen], PERFECT) and result.ambiguous_from is None:
            result.ambiguous_from = t + 1
        if absr[chosen] >= PERFECT:
            if t + 1 < n_rounds:
                stop = "perfect"
            break
    result.stop = stop
    result.H = H
    return result


def distribution_from_scores(D1: np.ndarray, H: np.ndarray) -> np.ndarray:
    """D_t(x0, x1) proportional to D_1(x0, x1) exp(H(x0) - H(x1)), normalised."""
    logits = np.where(D1 > 0, H[:, None] - H[None, :], -np.inf)
    m = logits[D1 > 0].max()
    w = np.where(D1 > 0, D1 * np.exp(logits - m), 0.0)
    return w / w.sum()


# --------------------------------------------------------------------------- criterion="exact_z"


def exact_z_score(D: np.ndarray, h: np.ndarray) -> float:
    """``|sqrt(W_-) - sqrt(W_+)|``: the larger, the smaller ``Z = W_0 + 2 sqrt(W_- W_+)``
    (``Z = 1 - score^2`` as ``D`` sums to 1)."""
    w_minus, _, w_plus = binary_stats(D, h)
    return abs(math.sqrt(w_minus) - math.sqrt(w_plus))


def train_exact_z(
    X: Any,
    D: np.ndarray,
    n_rounds: int = 10,
    *,
    alpha: str = "r",
    positive_cumulative: bool = False,
    thresholds: Any = "all",
    tol: float = 1e-10,
    learning_rate: float = 1.0,
    default: Any = "learned",
) -> Result:
    """:func:`train` with WeakLearn minimising the exact ``Z = W_0 + 2 sqrt(W_- W_+)``.

    Binary threshold candidates only. Candidates with ``|r| <= tol`` never compete (they
    order the pairs no better than chance); among the others the largest
    ``|sqrt W_- - sqrt W_+|`` wins, ties within ``TIE_TOLERANCE`` to the first in order;
    then the alpha rule and WeakLearn.cum exactly as in :func:`train`.
    """
    X = np.asarray(X, dtype=float)
    D1 = np.asarray(D, dtype=float)
    D1 = D1 / D1.sum()
    cands = candidates(X, support(D1), "threshold", thresholds)
    values = [c.predict(X) for c in cands]
    Dt = D1.copy()
    H = np.zeros(X.shape[0])
    cumulative: dict[tuple, float] = {}
    bound = 1.0
    rounds: list[Round] = []
    stop = None
    same_history = np.ones((X.shape[0], X.shape[0]), dtype=bool)
    result = Result(rounds, None, H)
    for t in range(n_rounds):
        rs = [r_from_pairs(Dt, h) for h in values]
        scores = [exact_z_score(Dt, h) for h in values]

        def alpha_of(k: int, Dt: np.ndarray = Dt, rs: list = rs) -> float:
            a = choose_alpha(alpha, Dt, values[k], rs[k])
            return a if learning_rate == 1.0 else learning_rate * a

        def cumulative_of(k: int) -> float:
            return cumulative.get(cands[k].key(), 0.0)

        allowed = [
            k for k in range(len(cands))
            if abs(rs[k]) > tol and (default == "learned" or cands[k].default == float(default))
        ]  # fmt: skip
        ambiguous = any(_near(abs(rs[k]), tol) for k in range(len(cands)))
        if positive_cumulative:
            allowed = [k for k in allowed if rs[k] > 0 or cumulative_of(k) > 0]
        chosen, a, _, flags = _weak_learn(
            allowed, scores, -1.0, alpha_of,
            cumulative_of if positive_cumulative else (lambda k: None),
        )  # fmt: skip
        if (ambiguous or flags) and result.ambiguous_from is None:
            result.ambiguous_from = t
        if chosen is None:
            stop = "no_ranker"
            break
        h = values[chosen]
        w_minus, w_zero, w_plus = binary_stats(Dt, h)
        z = z_value(Dt, h, a)
        H = H + a * h
        bound *= z
        if positive_cumulative:
            key = cands[chosen].key()
            cumulative[key] = cumulative.get(key, 0.0) + a
        same_history &= h[:, None] == h[None, :]
        near = np.abs(H[None, :] - H[:, None]) < 1e-9
        rloss_ambiguous = bool(np.any(near & ~same_history & (D1 > 0)))
        rounds.append(
            Round(
                cands[chosen],
                a,
                rs[chosen],
                z,
                w_minus,
                w_zero,
                w_plus,
                Dt,
                rloss(D1, H),
                bound,
                rloss_ambiguous,
            )  # fmt: skip
        )
        Dt = Dt * np.exp(a * (h[:, None] - h[None, :])) / z
        absr = abs(rs[chosen])
        if _near(absr, PERFECT) and result.ambiguous_from is None:
            result.ambiguous_from = t + 1
        if absr >= PERFECT:
            if t + 1 < n_rounds:
                stop = "perfect"
            break
    result.stop = stop
    result.H = H
    return result
