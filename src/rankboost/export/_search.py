"""Search-engine LTR formats: Elasticsearch/OpenSearch LTR and Solr LTR.

* Elasticsearch/OpenSearch LTR (the o19s plugin and its OpenSearch fork): the body of
  ``POST _ltr/_featureset/{featureset}/_createmodel``, ``{"model": {"name": ..., "model":
  {"type": ..., "definition": "..."}}}``, with the definition as a string. Type
  ``model/xgboost+json`` holds the XGBoost JSON dump (:func:`rankboost.export._xgboost.dump`:
  ``split`` names a feature of the feature set, ``x < split_condition`` goes to ``yes``, in
  float32, NaN to ``missing``); type ``model/ranklib`` holds the RankLib file, whose 1-based
  feature ids are positions in the feature set.
* Solr LTR: the ``MultipleAdditiveTreesModel`` JSON that ``PUT
  /solr/{collection}/schema/model-store`` takes. A node goes left when ``x <= threshold +
  1e-6`` (``NODE_SPLIT_SLACK``, added in float32 when Solr reads the model), so the
  threshold written is the float32 ``s`` with ``float32(s + 1e-6f)`` equal to the split point
  (:func:`solr_threshold`). Solr has no missing values: a feature that does not match takes
  the feature's ``defaultValue`` (0 unless set).
"""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

import numpy as np

from ..model import RankBoostModel
from ._ranklib import model_text as ranklib_text
from ._trees import LEAF, ExportWarning, Tree, forest
from ._xgboost import dump

__all__ = ["ExportWarning", "es_ranklib_body", "es_xgboost_body", "solr_model", "solr_threshold"]

SOLR_CLASS = "org.apache.solr.ltr.model.MultipleAdditiveTreesModel"
#: Solr's ``RegressionTreeNode.NODE_SPLIT_SLACK``.
SOLR_SLACK = np.float32(1e-6)


def _es_body(name: str, kind: str, definition: str) -> dict[str, Any]:
    return {"model": {"name": name, "model": {"type": kind, "definition": definition}}}


def es_xgboost_body(
    model: RankBoostModel, n_rounds: int, *, trees: str, feature_names: list[str], name: str
) -> dict[str, Any]:
    """The ``_createmodel`` body of a ``model/xgboost+json`` model."""
    definition = json.dumps(
        dump(model, n_rounds, trees=trees, feature_names=feature_names), allow_nan=False
    )
    return _es_body(name, "model/xgboost+json", definition)


def es_ranklib_body(model: RankBoostModel, n_rounds: int, *, name: str) -> dict[str, Any]:
    """The ``_createmodel`` body of a ``model/ranklib`` model."""
    return _es_body(name, "model/ranklib", ranklib_text(model, n_rounds))


def solr_threshold(point: float) -> tuple[float, float]:
    """``(s, effective)``: the threshold to write and ``float32(s + 1e-6f)``, Solr's split.

    ``s`` is the largest float32 whose effective split does not pass ``point``; usually the
    effective split equals ``point``. Where float32 addition cannot reach ``point`` (points
    within a few 1e-6 of 0, and negative points just above a power of two, where
    ``s = point - 1e-6`` has a coarser float32 spacing than ``point``), it is the closest
    value below, less than the float32 spacing of ``s`` away (about 1e-13 near 0): the
    float32 values in ``(effective, point]`` then go right, and export warns.

    Examples
    --------
    >>> import numpy as np
    >>> s, eff = solr_threshold(0.5)
    >>> bool(np.float32(s) + np.float32(1e-6) == np.float32(0.5)), eff
    (True, 0.5)
    """
    p = np.float32(point)
    if not np.isfinite(p):
        return float(p), float(p)
    up, down = np.float32(np.inf), np.float32(-np.inf)
    with np.errstate(over="ignore"):  # next to the largest float32 is +inf: not <= p
        s = np.float32(p - SOLR_SLACK)
        while np.float32(s + SOLR_SLACK) > p:
            s = np.nextafter(s, down)
        while np.float32(np.nextafter(s, up) + SOLR_SLACK) <= p:
            s = np.nextafter(s, up)
    return float(s), float(np.float32(s + SOLR_SLACK))


def _java_float(x: float) -> str:
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return repr(float(np.float32(x)))


def _solr_node(tree: Tree, i: int, name: str, inexact: list[tuple[float, float]]) -> Any:
    if tree.kind[i] == LEAF:
        return {"value": _java_float(tree.value[i])}
    s, effective = solr_threshold(tree.point[i])
    if effective != tree.point[i]:
        inexact.append((tree.point[i], effective))
    return {
        "feature": name,
        "threshold": _java_float(s),
        "left": _solr_node(tree, tree.left[i], name, inexact),
        "right": _solr_node(tree, tree.right[i], name, inexact),
    }


def solr_model(
    model: RankBoostModel,
    n_rounds: int,
    *,
    trees: str,
    feature_names: list[str],
    name: str,
    store: str | None = None,
) -> dict[str, Any]:
    """The ``MultipleAdditiveTreesModel`` JSON (the caller has checked missing values).

    ``features`` lists the used features in column order; each tree has weight 1.
    """
    ts = forest(model, n_rounds, trees=trees, precision="float32", nan=False)
    used = sorted({t.feature for t in ts if t.n_nodes > 1}) or [0]
    out_trees = []
    for tree in ts:
        inexact: list[tuple[float, float]] = []
        root = _solr_node(tree, 0, feature_names[tree.feature], inexact)
        for point, effective in inexact:
            warnings.warn(
                f"Solr cannot split feature {tree.feature} ({feature_names[tree.feature]!r}) "
                f"exactly at {point!r}: threshold + 1e-6 rounds to {effective!r} in float32, "
                f"so the float32 values in ({effective!r}, {point!r}] go right instead of left.",
                ExportWarning,
                stacklevel=4,
            )
        out_trees.append({"weight": "1", "root": root})
    body: dict[str, Any] = {
        "class": SOLR_CLASS,
        "name": name,
        "features": [{"name": feature_names[i]} for i in used],
        "params": {"trees": out_trees},
    }
    if store is not None:
        body = {"store": store, **body}
    return body
