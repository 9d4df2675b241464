"""Export to search engines (issue 12): Elasticsearch/OpenSearch LTR and Solr LTR.

No server can run here, so the bodies are checked against the rules of the formats' own
parsers: the o19s / OpenSearch LTR ``XGBoostJsonParser`` (and strict JSON, which both
engines require) and Solr's ``MultipleAdditiveTreesModel`` (``validate``, ``validateNode``,
the float32 ``NODE_SPLIT_SLACK`` it adds to every threshold). That the
``model/xgboost+json`` definition is xgboost's own reading of the exported trees is checked
against the installed xgboost in ``tests/test_export_consumers.py``.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from rankboost.export import ExportWarning, export_bytes
from rankboost.export._search import SOLR_CLASS, solr_threshold
from rankboost.export._trees import LEAF, forest, leq_point32
from test_export import F32, make_model, random_model

# ---------------------------------------------------------------------- search engines


def _strict_json(text: str):
    """json.loads that refuses NaN / Infinity (not JSON; Elasticsearch and Solr refuse them)."""

    def refuse(name: str):
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def check_es_dump_node(node: dict, names: set[str], depth: int = 0) -> int:
    """The o19s / OpenSearch LTR ``XGBoostJsonParser`` rules; returns the number of leaves."""
    if "leaf" in node:
        assert set(node) == {"nodeid", "leaf"}
        assert isinstance(node["nodeid"], int)
        assert isinstance(node["leaf"], float)
        return 1
    assert set(node) == {"nodeid", "depth", "split", "split_condition", "yes", "no", "missing",
                         "children"}  # fmt: skip
    assert node["depth"] == depth
    assert node["split"] in names
    assert isinstance(node["split_condition"], float)
    assert np.isfinite(node["split_condition"])
    yes, no = node["children"]
    assert (node["yes"], node["no"]) == (yes["nodeid"], no["nodeid"])
    assert node["missing"] in (node["yes"], node["no"])
    return check_es_dump_node(yes, names, depth + 1) + check_es_dump_node(no, names, depth + 1)


@pytest.mark.parametrize("trees", ["feature", "round"])
def test_es_xgboost_body_follows_the_plugin_schema(trees) -> None:
    model = random_model(3)
    names = set(model.feature_names or [])
    body = _strict_json(export_bytes(model, "es-xgboost", trees=trees, name="my_model").decode())
    assert set(body) == {"model"}
    assert body["model"]["name"] == "my_model"
    assert body["model"]["model"]["type"] == "model/xgboost+json"
    definition = _strict_json(body["model"]["model"]["definition"])  # a string of JSON
    assert isinstance(definition, list)
    for tree in definition:
        check_es_dump_node(tree, names)
    assert export_bytes(model, "elasticsearch", trees=trees, name="my_model") == export_bytes(
        model, "opensearch", trees=trees, name="my_model"
    )


def test_es_ranklib_body_holds_the_ranklib_file() -> None:
    model = random_model(4, real=False, defaults=(0.0,))
    body = _strict_json(export_bytes(model, "es-ranklib", missing_as_zero=True).decode())
    assert body["model"]["model"]["type"] == "model/ranklib"
    definition = body["model"]["model"]["definition"]
    assert definition == export_bytes(model, "ranklib", missing_as_zero=True).decode()


def _solr_nodes(node: dict, features: set[str]):
    """Solr's MultipleAdditiveTreesModel.validateNode rules; yields the split nodes."""
    if "feature" not in node:
        assert set(node) == {"value"}
        float(node["value"])  # Float.parseFloat
        return
    assert set(node) == {"feature", "threshold", "left", "right"}
    assert node["feature"] in features
    float(node["threshold"].replace("Infinity", "inf"))
    yield node
    yield from _solr_nodes(node["left"], features)
    yield from _solr_nodes(node["right"], features)


def test_solr_model_follows_the_schema_and_its_slack() -> None:
    """Every threshold t has float32(t + 1e-6f) == the split point: Solr goes left when
    x <= t + NODE_SPLIT_SLACK, added in float32."""
    model = random_model(5, defaults=(0.0,), names=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExportWarning)  # tiny negative points: tested below
        body = _strict_json(export_bytes(model, "solr", missing_as_zero=True, store="s").decode())
    assert body["class"] == SOLR_CLASS
    assert body["store"] == "s"
    features = {f["name"] for f in body["features"]}
    assert features <= set(model.feature_names or [])
    points = {}
    for tree in forest(model, model.n_rounds, precision="float32", nan=False):
        for i in range(tree.n_nodes):
            if tree.kind[i] != LEAF:
                points[tree.point[i]] = True
    n_split = 0
    for tree in body["params"]["trees"]:
        assert tree["weight"] == "1"
        for node in _solr_nodes(tree["root"], features):
            n_split += 1
            t = F32(float(node["threshold"].replace("Infinity", "inf")))
            effective = float(F32(t + F32(1e-6)))
            assert effective in points or any(
                effective < p and p - effective < 1e-12 for p in points
            )
    assert n_split > 0


def test_solr_threshold_is_exact_or_warns() -> None:
    rng = np.random.default_rng(2)
    tiny = rng.normal(size=300) * 1e-6
    points = leq_point32(np.concatenate([rng.normal(size=300), tiny, -(2.0**-12) + tiny]))
    n_exact = 0
    for p in points:
        s, effective = solr_threshold(p)
        assert float(F32(F32(s) + F32(1e-6))) == effective <= p
        assert p - effective <= abs(np.spacing(F32(s)))  # at worst the float32 spacing of s
        # s is the largest such float32: the next one passes the point
        assert F32(np.nextafter(F32(s), F32(np.inf)) + F32(1e-6)) > p
        n_exact += effective == p
    assert all(solr_threshold(p)[1] == p for p in points[:300])  # |p| >> 1e-6: exact
    assert n_exact > 500
    model = make_model(
        {"feature": [0], "kind": [0], "threshold": [1e-10], "default": [0.0], "alpha": [1.0]},
        1,
        ["x"],
    )
    with pytest.warns(ExportWarning, match="Solr cannot split feature 0"):
        export_bytes(model, "solr", missing_as_zero=True)
