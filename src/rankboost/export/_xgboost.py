"""XGBoost: the JSON model (``xgboost.Booster(model_file=...)``) and the JSON dump.

XGBoost sends ``x < split_condition`` left, in float32 (the input is rounded to float32
first), and NaN to the ``default_left`` side; a leaf's value is its ``split_conditions``
entry (float32). The model is the forest of :func:`rankboost.export._trees.forest` at float32
precision: a split on break ``theta`` has the condition ``c`` = the smallest float32
strictly greater than ``theta``, so ``x32 < c <=> x32 <= theta``, exact for every float32
``x``. A split on missingness has ``c = -inf`` (no present value goes left) and sends NaN
left.

The dump (``Booster.get_dump(dump_format="json")``, nested nodes with feature names and
``yes`` / ``no`` / ``missing`` children) is what Elasticsearch/OpenSearch LTR reads as
``model/xgboost+json``. JSON has no infinities, so :func:`dump` writes a condition of
``-inf`` (a split on missingness) as ``-3.4028234663852886e+38``, minus the largest
float32: a feature value of ``-inf`` then counts as missing there, and nothing else changes
(a condition of ``+inf``, for a threshold beyond the float32 range, likewise becomes the
largest float32).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..model import RankBoostModel
from ._trees import LEAF, MISSING, Tree, forest, lt_condition

__all__ = ["dump", "model_json"]

#: Written in ``version``; the format has been stable since XGBoost 2.0.
XGBOOST_VERSION = [2, 0, 0]
#: The parent of the root in XGBoost's ``parents`` array.
NO_PARENT = 2147483647
FLT_MAX = float(np.finfo(np.float32).max)


def _f32(x: float) -> float:
    """``x`` rounded to float32, as the float64 that holds it exactly (repr round-trips)."""
    return float(np.float32(x))


def tree_arrays(tree: Tree, tree_id: int, n_features: int) -> dict[str, Any]:
    """One tree in XGBoost's JSON layout (the field names of ``RegTree::SaveModel``)."""
    n = tree.n_nodes
    left, right = [-1] * n, [-1] * n
    index, cond, default_left, weight = [0] * n, [0.0] * n, [0] * n, [0.0] * n
    for i in range(n):
        if tree.kind[i] == LEAF:
            cond[i] = weight[i] = _f32(tree.value[i])
            continue
        index[i] = tree.feature
        left[i], right[i], default_left[i] = tree.left[i], tree.right[i], int(tree.nan_left[i])
        if tree.kind[i] == MISSING:
            cond[i] = -math.inf  # x < -inf for no present x: they go right, NaN (default) left
        else:
            cond[i] = float(lt_condition(np.array([tree.point[i]]))[0])
    parents = [NO_PARENT] * n
    for i in range(n):
        if left[i] >= 0:
            parents[left[i]] = parents[right[i]] = i
    return {
        "base_weights": weight,
        "categories": [],
        "categories_nodes": [],
        "categories_segments": [],
        "categories_sizes": [],
        "default_left": default_left,
        "id": tree_id,
        "left_children": left,
        "loss_changes": [0.0] * n,
        "parents": parents,
        "right_children": right,
        "split_conditions": cond,
        "split_indices": index,
        "split_type": [0] * n,
        "sum_hessian": [float(c) for c in tree.cover],
        "tree_param": {
            "num_deleted": "0",
            "num_feature": str(n_features),
            "num_nodes": str(n),
            "size_leaf_vector": "1",
        },
    }


def model_json(
    model: RankBoostModel,
    n_rounds: int,
    *,
    trees: str = "feature",
    feature_names: list[str] | None = None,
) -> dict[str, Any]:
    """The XGBoost JSON model: a ``gbtree`` of the forest, ``base_score`` 0.

    The objective is ``rank:pairwise``, whose prediction is the raw sum of the leaves. With
    ``trees="round"`` each round is one boosting iteration, so
    ``predict(..., iteration_range=(0, t))`` gives the staged score after ``t`` rounds.
    """
    ts = forest(model, n_rounds, trees=trees, precision="float32")
    n = len(ts)
    names = feature_names or []
    return {
        "learner": {
            "attributes": {},
            "feature_names": list(names),
            "feature_types": ["float"] * len(names),
            "gradient_booster": {
                "model": {
                    "gbtree_model_param": {"num_parallel_tree": "1", "num_trees": str(n)},
                    "iteration_indptr": list(range(n + 1)),
                    "tree_info": [0] * n,
                    "trees": [tree_arrays(t, k, model.n_features) for k, t in enumerate(ts)],
                },
                "name": "gbtree",
            },
            "learner_model_param": {
                "base_score": "0",
                "boost_from_average": "0",
                "num_class": "0",
                "num_feature": str(model.n_features),
                "num_target": "1",
            },
            "objective": {
                "name": "rank:pairwise",
                "lambdarank_param": {
                    "lambdarank_num_pair_per_sample": "1",
                    "lambdarank_pair_method": "mean",
                    "lambdarank_unbiased": "0",
                    "lambdarank_bias_norm": "1",
                    "ndcg_exp_gain": "1",
                },
            },
        },
        "version": XGBOOST_VERSION,
    }


def dump(
    model: RankBoostModel,
    n_rounds: int,
    *,
    trees: str = "feature",
    feature_names: list[str] | None = None,
) -> list[dict[str, Any]]:
    """The forest in XGBoost's JSON dump format (one nested object per tree).

    Split nodes name their feature (``f{i}`` without names, as XGBoost does) and carry
    ``yes`` (``x < split_condition``), ``no`` and ``missing`` (the child NaN goes to), with
    ``children`` in the order ``[yes, no]``; leaves are ``{"nodeid": i, "leaf": v}``.
    """
    out = []
    for k, tree in enumerate(forest(model, n_rounds, trees=trees, precision="float32")):
        arrays = tree_arrays(tree, k, model.n_features)
        name = feature_names[tree.feature] if feature_names else f"f{tree.feature}"
        out.append(_dump_node(arrays, tree, 0, name))
    return out


def _dump_node(arrays: dict[str, Any], tree: Tree, i: int, name: str) -> dict[str, Any]:
    left, right = arrays["left_children"][i], arrays["right_children"][i]
    if left < 0:
        return {"nodeid": i, "leaf": arrays["split_conditions"][i]}
    cond = arrays["split_conditions"][i]
    return {
        "nodeid": i,
        "depth": tree.depth[i],
        "split": name,
        "split_condition": cond if math.isfinite(cond) else math.copysign(FLT_MAX, cond),
        "yes": left,
        "no": right,
        "missing": left if arrays["default_left"][i] else right,
        "children": [_dump_node(arrays, tree, left, name), _dump_node(arrays, tree, right, name)],
    }
