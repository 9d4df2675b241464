"""A RankBoost model as a forest of one-feature trees, in a consumer's number format.

Every exporter starts here. ``H(x) = sum_i H_i(f_i(x))`` and each ``H_i`` is a step function
(:meth:`rankboost.RankBoostModel.step_functions`), so the model is exactly a forest with one
tree per used feature (``trees="feature"``), or one tree per round (``trees="round"``, whose
partial sums are the staged scores). A tree is a balanced binary search over the step
function's breaks, with the value of every interval at its leaves.

rankboost compares ``float32(x)`` with every threshold (its numeric domain,
:mod:`rankboost.binning`), and so must every consumer. For a break ``theta`` the float32
point is ``P = floor32(theta)``, the largest float32 ``<= theta``: for a float32 ``v``,
``v <= P`` if and only if ``v <= theta``. Two breaks with the same ``P`` enclose no float32
value, so the interval between them is dropped. Then, per consumer:

* ``"float32"`` (XGBoost, ONNX, Elasticsearch/OpenSearch, Solr, RankLib read ``float32(x)``):
  the split is ``P`` (``x <= P`` left); a consumer that sends ``x < c`` left uses
  ``c = nextafter32(P, +inf)``, the smallest float32 strictly greater than ``theta``
  (:func:`lt_condition`);
* ``"float64"`` (LightGBM, ONNX with ``dtype="float64"``): the consumer compares the float64
  ``x`` itself, so the split is ``T = leq_point64(P)``, the largest float64 whose float32
  rounding is ``<= P``: ``x <= T`` if and only if ``float32(x) <= P``, for every float64
  ``x``. ``T`` is the midpoint between ``P`` and the next float32 when round-half-to-even
  sends that midpoint down to ``P`` (``P``'s last significand bit is 0), else the float64
  just below the midpoint.

A break at ``+inf`` separates nothing (no ``x`` is above it) and is dropped. The value where
the feature abstains (NaN) is reached by following the NaN direction of every split to the
leaf that holds it, when some interval has that exact value; otherwise a first split on
missingness sends NaN to a leaf of its own (``kind == MISSING``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from .._float32 import floor32  # not ..binning: its numba kernels stay unimported
from ..model import RankBoostModel, StepFunction

__all__ = [
    "LEAF",
    "MISSING",
    "SPLIT",
    "ExportWarning",
    "Tree",
    "forest",
    "leq_point32",
    "leq_point64",
    "lt_condition",
]

SPLIT, MISSING, LEAF = 0, 1, 2


class ExportWarning(UserWarning):
    """The exported model differs from ``H`` on a few inputs (the message says where)."""


PRECISIONS = ("float32", "float64")


@dataclass
class Tree:
    """One tree of the forest, nodes in breadth-first order (node 0 is the root).

    A ``SPLIT`` node sends a present ``x`` left when ``x <= point`` and NaN left when
    ``nan_left``; a ``MISSING`` node sends NaN left and every present ``x`` right (XGBoost's
    ``x < -inf`` with NaN to the default side; XGBoost wants a right child numbered after
    its left sibling). ``cover`` counts the leaves under a node (a neutral stand-in for the
    training counts that some consumers' explanation tools read).
    """

    feature: int
    kind: list[int] = field(default_factory=list)
    point: list[float] = field(default_factory=list)
    left: list[int] = field(default_factory=list)
    right: list[int] = field(default_factory=list)
    nan_left: list[bool] = field(default_factory=list)
    value: list[float] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)
    cover: list[int] = field(default_factory=list)

    @property
    def n_nodes(self) -> int:
        """Number of nodes, leaves included."""
        return len(self.kind)

    def parents(self) -> list[int]:
        """The parent of every node (-1 for the root)."""
        out = [-1] * self.n_nodes
        for i in range(self.n_nodes):
            if self.kind[i] != LEAF:
                out[self.left[i]] = i
                out[self.right[i]] = i
        return out


# ---------------------------------------------------------------------- number formats


def leq_point32(breaks: NDArray[np.float64]) -> NDArray[np.float64]:
    """The largest float32 ``<= b`` for every break ``b`` (as float64 numbers).

    :func:`rankboost.binning.floor32`.

    Examples
    --------
    >>> import numpy as np
    >>> p = leq_point32(np.array([0.1, 0.5, -np.inf, 1e300]))
    >>> p.tolist()  # float32(0.1) = 0.10000000149... is above 0.1: one float32 lower
    [0.09999999403953552, 0.5, -inf, 3.4028234663852886e+38]
    """
    return floor32(breaks)


#: 2**128: the float32 number after the largest float32 (were the exponent range wider).
_F32_BEYOND = 2.0**128


def leq_point64(points: NDArray[np.float64]) -> NDArray[np.float64]:
    """``T``, the largest float64 with ``float32(T) <= P``, for every float32 point ``P``.

    A float64 consumer that sends ``x <= T`` left decides ``float32(x) <= P``, for every
    float64 ``x``, exactly. ``+inf`` stays ``+inf``; for ``P = -inf``, ``T`` is the largest
    float64 that rounds to ``-inf`` in float32.

    Examples
    --------
    >>> import numpy as np
    >>> t = leq_point64(np.array([0.5, 1.0 + 2.0**-23]))
    >>> t.tolist()  # 0.5 is even: the midpoint rounds down to it; 1 + 2**-23 is odd
    [0.5000000298023224, 1.000000178813934]
    >>> x = np.array([t[0], np.nextafter(t[0], 1.0)])
    >>> x.astype(np.float32).tolist()
    [0.5, 0.5000000596046448]
    """
    p = np.asarray(points, dtype=np.float64)
    p32 = p.astype(np.float32)
    with np.errstate(over="ignore"):
        nxt = np.nextafter(p32, np.float32(np.inf)).astype(np.float64)
    nxt[p32 == np.finfo(np.float32).max] = _F32_BEYOND
    lo = np.where(p == -np.inf, -_F32_BEYOND, p)
    nxt[p == -np.inf] = -float(np.finfo(np.float32).max)
    mid = lo / 2.0 + nxt / 2.0  # exact: two float32 numbers, one float32 step apart
    with np.errstate(over="ignore"):
        down = mid.astype(np.float32).astype(np.float64) <= p
    out = np.where(down, mid, np.nextafter(mid, -np.inf))
    out[p == np.inf] = np.inf
    return out


def lt_condition(points: NDArray[np.float64]) -> NDArray[np.float64]:
    """``c`` with ``x < c <=> x <= P`` for float32 ``x``: the next float32 above ``P``.

    For a float32 point ``P = leq_point32(theta)`` this is the smallest float32 strictly
    greater than ``theta``.

    Examples
    --------
    >>> import numpy as np
    >>> theta = 0.1  # float32(0.1) = 0.10000000149..., above theta
    >>> c = lt_condition(leq_point32(np.array([theta])))[0]
    >>> float(c), bool(c == np.float32(theta)), bool(c > theta)
    (0.10000000149011612, True, True)
    """
    p = np.asarray(points, dtype=np.float64).astype(np.float32)
    with np.errstate(over="ignore"):  # above the largest float32 is +inf
        return np.nextafter(p, np.float32(np.inf)).astype(np.float64)


def consumer_function(
    sf: StepFunction, precision: str
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(points, values)``: the step function as the consumer's split points see it.

    ``values[j]`` holds on ``points[j-1] < x <= points[j]`` for every ``x`` the consumer
    reads (float32, or float64 for ``"float64"``), and equals ``H_i(float32(x))`` there;
    adjacent equal values are merged and a point at ``+inf`` is dropped.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}; got {precision!r}")
    p = leq_point32(sf.breaks)
    v = sf.values
    # equal points enclose no float32 value: keep the interval above the last of them
    u = np.unique(p)
    v = v[np.concatenate([[0], np.searchsorted(p, u, side="right")])]
    p = u
    if p.shape[0] and p[-1] == np.inf:  # nothing lies above +inf
        p, v = p[:-1], v[:-1]
    keep = v[1:] != v[:-1]  # a split between equal values decides nothing
    p, v = p[keep], np.concatenate([v[:1], v[1:][keep]])
    if precision == "float64":
        p = leq_point64(p)
    return p, v


# ---------------------------------------------------------------------- the pieces of H


def round_function(model: RankBoostModel, t: int) -> StepFunction:
    """``alpha_t h_t`` as a step function: the float64 numbers the staged scores add."""
    r = model.rounds
    a = float(r.alpha[t])
    missing = a * float(r.default[t])
    if r.kind[t] == 0:
        return StepFunction(np.array([r.threshold[t]]), np.array([a * 0.0, a * 1.0]), missing)
    cuts = r.cuts_of(t)
    u = np.unique(cuts)
    counts = np.concatenate([[0], np.searchsorted(cuts, u, side="right")])
    return StepFunction(u, a * (counts / float(cuts.shape[0])), missing)


def pieces(model: RankBoostModel, n_rounds: int, trees: str) -> list[tuple[int, StepFunction]]:
    """The additive terms of ``H``: one per used feature, or one per round, in scoring order.

    ``trees="feature"`` leaves out features whose function is identically 0 (adding 0
    changes no sum); ``trees="round"`` keeps every round, so that tree ``t`` is round ``t``.
    """
    if trees == "round":
        return [(int(model.rounds.feature[t]), round_function(model, t)) for t in range(n_rounds)]
    out = []
    for i, sf in model.step_functions(n_rounds).items():
        if sf.missing != 0.0 or np.any(sf.values != 0.0):
            out.append((i, sf))
    return out


# ---------------------------------------------------------------------- trees


def build_tree(
    feature: int, points: NDArray[np.float64], values: NDArray[np.float64], missing: float | None
) -> Tree:
    """A balanced tree over ``points`` with ``values`` at its leaves.

    ``missing`` is the value where the feature is NaN (None: the consumer has no NaN, build
    no missing branch).
    """
    tree = Tree(feature)
    target = None  # the leaf that NaN reaches
    if missing is not None:
        hits = np.flatnonzero(values == missing)
        target = int(hits[0]) if hits.size else None
    nan_value = 0.0 if missing is None else float(missing)
    last = values.shape[0] - 1

    def add(kind: int, depth: int, point: float = np.nan, value: float = np.nan) -> int:
        tree.kind.append(kind)
        tree.point.append(float(point))
        tree.left.append(-1)
        tree.right.append(-1)
        tree.nan_left.append(True)
        tree.value.append(float(value))
        tree.depth.append(depth)
        tree.cover.append(1)
        return tree.n_nodes - 1

    # Breadth-first, so that ids grow level by level and two siblings get consecutive ids,
    # left first, as in XGBoost's own trees (its predictor relies on it). A queue item is
    # (what, lo, hi, depth, parent, is_right): "range" is the subtree over leaves lo..hi,
    # "missing" the split on missingness above it, "nan" the leaf NaN reaches under it.
    root = "missing" if missing is not None and target is None else "range"
    queue: deque[tuple[str, int, int, int, int, bool]] = deque([(root, 0, last, 0, -1, False)])
    while queue:
        what, lo, hi, depth, parent, is_right = queue.popleft()
        children: list[tuple[str, int, int]] = []
        if what == "nan":
            node = add(LEAF, depth, value=nan_value)
        elif what == "missing":
            node = add(MISSING, depth)
            children = [("nan", 0, 0), ("range", lo, hi)]
        elif lo == hi:
            node = add(LEAF, depth, value=float(values[lo]))
        else:
            mid = (lo + hi) // 2
            node = add(SPLIT, depth, point=float(points[mid]))
            tree.nan_left[node] = target is None or target <= mid
            children = [("range", lo, mid), ("range", mid + 1, hi)]
        if parent >= 0:
            (tree.right if is_right else tree.left)[parent] = node
        for k, (w, a, b) in enumerate(children):
            queue.append((w, a, b, depth + 1, node, k == 1))
    for i in reversed(range(tree.n_nodes)):  # children have larger ids than their parent
        if tree.kind[i] != LEAF:
            tree.cover[i] = tree.cover[tree.left[i]] + tree.cover[tree.right[i]]
    return tree


def forest(
    model: RankBoostModel,
    n_rounds: int,
    *,
    trees: str = "feature",
    precision: str = "float64",
    nan: bool = True,
) -> list[Tree]:
    """The model as trees (at least one: a single leaf 0 for a model without rounds).

    Parameters
    ----------
    model : RankBoostModel
    n_rounds : int
        Rounds to export.
    trees : {"feature", "round"}, default="feature"
        One tree per used feature, or one per round.
    precision : {"float64", "float32"}, default="float64"
        The consumer's comparison precision (module docstring).
    nan : bool, default=True
        Whether the consumer has missing values; False builds no missing branches (the
        caller has checked that the missing value is not needed).

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.model import RankBoostModel
    >>> model = RankBoostModel.from_arrays(
    ...     {"feature": [0, 0], "kind": [0, 0], "threshold": [0.0, 1.0],
    ...      "default": [0.0, 1.0], "alpha": [1.0, 0.5]},
    ...     {"r": [0.5, 0.2], "z": [0.8, 0.9], "rloss": [0.2, 0.1], "bound": [0.8, 0.72]},
    ...     n_features=1,
    ... )
    >>> model.step_functions()[0]  # H(NaN) = 0.5 is no interval's value
    StepFunction(breaks=array([0., 1.]), values=array([0. , 1. , 1.5]), missing=0.5)
    >>> [tree] = forest(model, 2)
    >>> tree.kind  # 0 = split, 1 = missing, 2 = leaf: a split on missingness first
    [1, 2, 0, 0, 2, 2, 2]
    >>> tree.left, tree.right  # NaN to leaf 1, the rest to the tree over the breaks
    ([1, -1, 3, 5, -1, -1, -1], [2, -1, 4, 6, -1, -1, -1])
    >>> tree.point  # float64 points T: x <= T exactly when float32(x) <= theta
    [nan, nan, 1.0000000596046448, 7.006492321624085e-46, nan, nan, nan]
    >>> tree.value
    [nan, 0.5, nan, nan, 1.5, 0.0, 1.0]
    """
    out = []
    for feature, sf in pieces(model, n_rounds, trees):
        points, values = consumer_function(sf, precision)
        out.append(build_tree(feature, points, values, sf.missing if nan else None))
    if not out:
        out.append(build_tree(0, np.empty(0), np.zeros(1), None))
    return out
