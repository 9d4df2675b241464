"""LightGBM: the text model format (``lightgbm.Booster(model_str=...)``, ``model_file=``).

LightGBM sends ``x <= threshold`` left, in float64, which is exactly ``not [x > theta]``:
a split on break ``theta`` has ``threshold = theta`` and the leaves hold the float64 values
of the step function, so the trees give ``H`` bit for bit (LightGBM adds the trees' outputs
in order, starting from 0, as :meth:`~rankboost.RankBoostModel.decision_function` adds the
features' functions). ``decision_type`` says "missing type NaN" (``8``) plus the
default-left bit (``2``) where NaN goes left; a split on missingness has threshold ``+inf``
(every present value goes left, to the present side) and sends NaN right.

rankboost compares ``float32(x)`` with its thresholds; LightGBM compares the float64 ``x``,
so each split is written as ``T``, the largest float64 whose float32 rounding is at most the
float32 split point (:func:`rankboost.export._trees.leq_point64`): ``x <= T`` if and only if
``float32(x) <= P``, for every float64 ``x``, and LightGBM takes the branch ``predict`` takes.

One place cannot be exact: LightGBM's predictor reads an input with ``|x| <= 1e-35`` (its
``kZeroThreshold``, ``c_api.cpp`` ``RowFunctionFromDenseMatric``) as 0. A split ``T`` with
``-1e-35 <= T < 1e-35`` (a threshold at 0 is one) separates 0 from some of those tiny values,
which LightGBM then scores as 0: :func:`model_text` warns (:class:`ExportWarning`) in one line.
"""

from __future__ import annotations

import math
import re
import warnings

from ..model import RankBoostModel
from ._trees import LEAF, MISSING, SPLIT, ExportWarning, Tree, forest

#: LightGBM's ``kZeroThreshold``: its predictor reads ``|x| <= 1e-35`` as 0.
ZERO_THRESHOLD = 1e-35

__all__ = ["check_names", "model_text"]

#: LightGBM's decision_type bits: default-left, and missing type NaN (2 << 2).
DEFAULT_LEFT, MISSING_NAN = 2, 8
#: Characters a LightGBM model cannot hold in a feature name: its model string is
#: space-separated, and ``Booster.dump_model`` writes the names into JSON strings unescaped.
_BAD_NAME = re.compile(r'[\s"\\]')


def check_names(names: list[str]) -> None:
    """Raise ValueError for a feature name that LightGBM cannot hold."""
    for i, name in enumerate(names):
        if not name or _BAD_NAME.search(name):
            raise ValueError(
                f"LightGBM cannot hold feature name {name!r} (feature {i}): its names have no "
                "white space, quotes or backslashes. Pass feature_names=[...] to export."
            )


def _num(x: float) -> str:
    return repr(float(x))  # shortest round-trip repr; LightGBM reads "inf" and "-inf"


def tree_text(tree: Tree, k: int) -> str:
    """One ``Tree=k`` block."""
    internal = [i for i in range(tree.n_nodes) if tree.kind[i] != LEAF]
    leaves = [i for i in range(tree.n_nodes) if tree.kind[i] == LEAF]
    if not internal:
        return "\n".join(
            [f"Tree={k}", "num_leaves=1", "num_cat=0", f"leaf_value={_num(tree.value[0])}",
             "is_linear=0", "shrinkage=1"]
        )  # fmt: skip
    pos = {node: j for j, node in enumerate(internal)}
    pos.update({node: ~j for j, node in enumerate(leaves)})  # a leaf child is ~leaf_index
    threshold, decision, left, right = [], [], [], []
    for i in internal:
        if tree.kind[i] == MISSING:
            # every present x <= inf goes left, to the present side; NaN alone goes right
            threshold.append(_num(float("inf")))
            decision.append(str(MISSING_NAN))
            left.append(str(pos[tree.right[i]]))
            right.append(str(pos[tree.left[i]]))
        else:
            threshold.append(_num(tree.point[i]))
            decision.append(str(MISSING_NAN | (DEFAULT_LEFT if tree.nan_left[i] else 0)))
            left.append(str(pos[tree.left[i]]))
            right.append(str(pos[tree.right[i]]))

    def row(key: str, items: list[str]) -> str:
        return f"{key}={' '.join(items)}"

    return "\n".join(
        [
            f"Tree={k}",
            f"num_leaves={len(leaves)}",
            "num_cat=0",
            row("split_feature", [str(tree.feature)] * len(internal)),
            row("split_gain", ["0"] * len(internal)),
            row("threshold", threshold),
            row("decision_type", decision),
            row("left_child", left),
            row("right_child", right),
            row("leaf_value", [_num(tree.value[i]) for i in leaves]),
            row("leaf_weight", [str(tree.cover[i]) for i in leaves]),
            row("leaf_count", [str(tree.cover[i]) for i in leaves]),
            row("internal_value", ["0"] * len(internal)),
            row("internal_weight", [str(tree.cover[i]) for i in internal]),
            row("internal_count", [str(tree.cover[i]) for i in internal]),
            "is_linear=0",
            "shrinkage=1",
        ]
    )


def model_text(
    model: RankBoostModel,
    n_rounds: int,
    *,
    trees: str = "feature",
    feature_names: list[str] | None = None,
) -> str:
    """The LightGBM text model of the forest (objective ``lambdarank``: raw scores).

    ``feature_names`` default to LightGBM's ``Column_0``, ``Column_1``, ... With
    ``trees="round"`` each round is one iteration, so ``predict(..., num_iteration=t)``
    gives the staged score after ``t`` rounds.
    """
    ts = forest(model, n_rounds, trees=trees, precision="float64")
    names = feature_names or [f"Column_{i}" for i in range(model.n_features)]
    check_names(names)
    lo: dict[int, float] = {}
    hi: dict[int, float] = {}
    for t in ts:
        for i in range(t.n_nodes):
            p = t.point[i]
            if t.kind[i] == SPLIT and math.isfinite(p):
                lo[t.feature] = min(lo.get(t.feature, p), p)
                hi[t.feature] = max(hi.get(t.feature, p), p)
    infos = [
        f"[{_num(lo[i])}:{_num(hi[i])}]" if i in lo else "none" for i in range(model.n_features)
    ]
    tiny = sorted(
        {
            (t.feature, t.point[i])
            for t in ts
            for i in range(t.n_nodes)
            if t.kind[i] == SPLIT and -ZERO_THRESHOLD <= t.point[i] < ZERO_THRESHOLD
        }
    )
    if tiny:
        f, point = tiny[0]
        more = f" (and {len(tiny) - 1} more splits)" if len(tiny) > 1 else ""
        warnings.warn(
            f"LightGBM reads inputs with |x| <= 1e-35 as 0, and feature {f} "
            f"({names[f]!r}) splits at {point!r}{more}: nonzero inputs within 1e-35 of 0 on "
            "the other side of the split from 0 score as 0 there; exact everywhere else.",
            ExportWarning,
            stacklevel=4,
        )
    header = [
        "tree",
        "version=v4",
        "num_class=1",
        "num_tree_per_iteration=1",
        "label_index=0",
        f"max_feature_idx={model.n_features - 1}",
        "objective=lambdarank",
        f"feature_names={' '.join(names)}",
        f"feature_infos={' '.join(infos)}",
    ]
    blocks = [tree_text(t, k) for k, t in enumerate(ts)]
    return (
        "\n".join(header)
        + "\n\n"
        + "\n\n".join(blocks)
        + "\n\n\nend of trees\n\npandas_categorical:null\n"
    )
