"""ONNX: one ``TreeEnsembleRegressor`` node (domain ``ai.onnx.ml``), for onnxruntime, Vespa, ...

The graph has one input ``"input"`` of shape ``(N, n_features)`` and one output ``"score"``
of shape ``(N, 1)``, float32 (the operator's output type). Every split is ``BRANCH_LEQ``
(``x <= value`` takes the true branch) with ``nodes_missing_value_tracks_true`` sending NaN
the right way; a split on missingness is ``x <= +inf`` (true for every present value) with
NaN on the false branch.

``dtype="float32"`` (default): input, split values and leaf weights are float32, with the
caveats of XGBoost (the split value of break ``theta`` is the largest float32 ``<= theta``,
exact for float32 inputs; leaves rounded to float32, summed in float32).
``dtype="float64"``: a double input, and split values and weights as double tensors
(``nodes_values_as_tensor``, ``target_weights_as_tensor``, ai.onnx.ml opset 3), compared
and added in float64 like LightGBM; only the output is rounded to float32.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .._compat import require
from ..model import RankBoostModel
from ._trees import LEAF, MISSING, forest

__all__ = ["model_bytes"]

#: Opsets: ai.onnx.ml 3 has the double-tensor attributes; IR 8 loads in onnxruntime >= 1.10.
ML_OPSET, ONNX_OPSET, IR_VERSION = 3, 17, 8


def model_bytes(
    model: RankBoostModel,
    n_rounds: int,
    *,
    trees: str = "feature",
    feature_names: list[str] | None = None,
    dtype: str = "float32",
) -> bytes:
    """The serialized ONNX model (needs the ``onnx`` package: ``pip install rankboost[onnx]``)."""
    onnx = require("onnx", "export to ONNX")
    from onnx import TensorProto, helper, numpy_helper

    double = dtype == "float64"
    ts = forest(model, n_rounds, trees=trees, precision=dtype)
    cols: dict[str, Any] = {
        k: []
        for k in (
            "nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "values",
            "nodes_truenodeids", "nodes_falsenodeids", "nodes_missing_value_tracks_true",
            "target_treeids", "target_nodeids", "target_ids", "weights",
        )
    }  # fmt: skip
    for k, tree in enumerate(ts):
        for i in range(tree.n_nodes):
            cols["nodes_treeids"].append(k)
            cols["nodes_nodeids"].append(i)
            cols["nodes_featureids"].append(tree.feature)
            if tree.kind[i] == LEAF:
                cols["nodes_modes"].append("LEAF")
                cols["values"].append(0.0)
                cols["nodes_truenodeids"].append(0)
                cols["nodes_falsenodeids"].append(0)
                cols["nodes_missing_value_tracks_true"].append(0)
                cols["target_treeids"].append(k)
                cols["target_nodeids"].append(i)
                cols["target_ids"].append(0)
                cols["weights"].append(tree.value[i])
                continue
            cols["nodes_modes"].append("BRANCH_LEQ")
            if tree.kind[i] == MISSING:  # present x <= +inf: true, to the present side
                cols["values"].append(np.inf)
                cols["nodes_truenodeids"].append(tree.right[i])
                cols["nodes_falsenodeids"].append(tree.left[i])
                cols["nodes_missing_value_tracks_true"].append(0)
                continue
            cols["values"].append(tree.point[i])
            cols["nodes_truenodeids"].append(tree.left[i])
            cols["nodes_falsenodeids"].append(tree.right[i])
            cols["nodes_missing_value_tracks_true"].append(int(tree.nan_left[i]))
    np_type = np.float64 if double else np.float32
    values, weights = cols.pop("values"), cols.pop("weights")
    if double:
        cols["nodes_values_as_tensor"] = numpy_helper.from_array(
            np.array(values, dtype=np.float64), "nodes_values"
        )
        cols["target_weights_as_tensor"] = numpy_helper.from_array(
            np.array(weights, dtype=np.float64), "target_weights"
        )
    else:
        cols["nodes_values"] = np.array(values, dtype=np_type).tolist()
        cols["target_weights"] = np.array(weights, dtype=np_type).tolist()
    node = helper.make_node(
        "TreeEnsembleRegressor",
        ["input"],
        ["score"],
        domain="ai.onnx.ml",
        n_targets=1,
        aggregate_function="SUM",
        post_transform="NONE",
        base_values=[0.0],
        **cols,
    )
    elem = TensorProto.DOUBLE if double else TensorProto.FLOAT
    graph = helper.make_graph(
        [node],
        "rankboost",
        [helper.make_tensor_value_info("input", elem, ["N", model.n_features])],
        [helper.make_tensor_value_info("score", TensorProto.FLOAT, ["N", 1])],
    )
    from .. import __version__

    onnx_model = helper.make_model(
        graph,
        opset_imports=[
            helper.make_opsetid("", ONNX_OPSET),
            helper.make_opsetid("ai.onnx.ml", ML_OPSET),
        ],
        producer_name="rankboost",
        producer_version=__version__,
        doc_string=(
            f"RankBoost model: {n_rounds} rounds as {len(ts)} trees ({trees}); score = H(x), "
            "higher ranks higher; NaN = the feature abstains."
        ),
    )
    onnx_model.ir_version = IR_VERSION
    meta = {"feature_names": json.dumps(feature_names), "n_rounds": str(n_rounds)}
    helper.set_model_props(onnx_model, meta)
    onnx.checker.check_model(onnx_model)
    data: bytes = onnx_model.SerializeToString()
    return data
