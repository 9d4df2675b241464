"""Issue 22: every export scores every input as ``predict`` does, float64 or float32 input.

Models are trained by ``rb.train`` on float64 features (MQ2008 fold 1 as read, LightGBM's
lambdarank example as read, random problems), and each consumer scores float64 and float32
copies of test matrices that hold every threshold, its float64 and float32 neighbours, the
float32 midpoints on either side of it and their float64 neighbours (where round half to
even decides), 0 and NaN. For every row, every tree must give the leaf of ``predict``'s
branch (``float32(H_i(float32(x)))`` for the tree of feature ``i``, bit for bit, where the
consumer shows its trees), and the score must be ``predict(x)`` (LightGBM: bit for bit) or
within the consumer's float32 accumulation, ``(T + 2) 2^-24 sum_i |H_i(x)|`` for ``T`` trees.

Consumers: the installed xgboost, lightgbm and onnxruntime; RankLib 2.14 under java (one
small model: java is slow); Elasticsearch/OpenSearch LTR and Solr LTR cannot run here and
are scored by reference evaluators written from their source (see :func:`es_xgboost_scores`
and :func:`solr_scores`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

import rankboost as rb
from rankboost.export import ExportWarning, export_bytes
from rankboost.export._trees import pieces

U32 = 2.0**-24
ROOT = Path(__file__).resolve().parents[2]
RANKLIB = ROOT / "shared" / "peers" / "RankLib-2.14.jar"
LAMBDARANK = ROOT / "shared" / "data" / "lightgbm_lambdarank"


# ---------------------------------------------------------------------- problems


def neighbours(values: np.ndarray, midpoints: bool = True) -> np.ndarray:
    """Every value, its float64 and float32 neighbours, and (``midpoints``) the float32
    midpoints on either side with their float64 neighbours."""
    v = np.unique(values[np.isfinite(values)])
    v32 = v.astype(np.float32)
    up = np.nextafter(v32, np.float32(np.inf)).astype(np.float64)
    down = np.nextafter(v32, np.float32(-np.inf)).astype(np.float64)
    parts = [v, np.nextafter(v, np.inf), np.nextafter(v, -np.inf), up, down, [0.0]]
    if midpoints:
        mids = np.concatenate([(v32 + up) / 2, (v32 + down) / 2])
        parts += [mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf)]
    out = np.concatenate(parts)
    return out[np.isfinite(out) & (np.abs(out) < 3e38)]


def probe_rows(model, X: np.ndarray, seed: int, midpoints: bool = True, nan: bool = True):
    """Test rows: ``X``, then rows whose every column runs through the neighbours of every
    threshold and cut of the model (cycled), 10% NaN when ``nan``."""
    rng = np.random.default_rng(seed)
    r = model.rounds
    cols = []
    for i in range(model.n_features):
        used = r.feature == i
        pts = np.concatenate(
            [r.threshold[used & (r.kind == 0)]]
            + [r.cuts_of(t) for t in np.flatnonzero(used & (r.kind == 1))]
        )
        cols.append(neighbours(pts, midpoints) if pts.size else np.zeros(1))
    n = max(len(c) for c in cols)
    P = np.column_stack([np.resize(rng.permutation(c), n) for c in cols])
    out = np.vstack([X, P])
    if nan:
        out[rng.random(out.shape) < 0.1] = np.nan
    return out


@pytest.fixture(scope="module")
def problems():
    """(name, model, test matrix): float64 training data as read, every kind of round."""
    out = []
    tr, _, te = rb.datasets.load_mq2008(1)
    m = rb.train(tr.X, rb.LayeredFeedback(tr.y, tr.qid), 40, feature_names=tr.feature_names)
    out.append(("mq2008", m, probe_rows(m, te.X, 0)))
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4)) * np.array([1.0, 1e-3, 1e3, 7.0])
    X[:, 3] = np.round(X[:, 3], 1)  # many ties, thresholds that float32 rounds up and down
    X[rng.random(X.shape) < 0.15] = np.nan
    y = (X[:, 0] + np.nan_to_num(X[:, 3]) / 7 + rng.normal(size=300) > 0).astype(int)
    qid = np.repeat(np.arange(30), 10)
    fb = rb.BipartiteFeedback(y, qid)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
        for wr in ("threshold", "both"):
            m = rb.train(X, fb, 30, weak_ranker=wr, thresholds=16)
            out.append((f"random-{wr}", m, probe_rows(m, X, 1)))
    return out


@pytest.fixture(scope="module")
def lambdarank():
    """LightGBM's examples/lambdarank, trained and tested as read (float64)."""
    if not (LAMBDARANK / "rank.train.gz").exists():
        pytest.skip("LightGBM's lambdarank example is not in ../shared/data")
    tr = rb.datasets.load_svmlight(LAMBDARANK / "rank.train.gz")
    te = rb.datasets.load_svmlight(LAMBDARANK / "rank.test.gz", n_features=tr.X.shape[1])
    qid = np.repeat(np.arange(len(s := rb.datasets.load_query_file(
        LAMBDARANK / "rank.train.query.gz"))), s)  # fmt: skip
    model = rb.train(tr.X, rb.LayeredFeedback(tr.y, qid), 15)
    return model, te.X


def all_problems(problems, lambdarank):
    return [*problems, ("lambdarank", *lambdarank)]


def bound(model, X, n_trees=None) -> np.ndarray:
    terms = pieces(model, model.n_rounds, "feature")
    total = sum(np.abs(sf(X[:, i])) for i, sf in terms) if terms else np.zeros(len(X))
    return ((n_trees or len(terms)) + 2) * U32 * total + 1e-30


def expected_leaves(model, X) -> np.ndarray:
    """``float32(H_i(float32(x)))`` for the tree of every used feature, in tree order."""
    return np.column_stack(
        [sf(X[:, i]).astype(np.float32) for i, sf in pieces(model, model.n_rounds, "feature")]
    )


def precisions(X):
    return [("float64", X), ("float32", X.astype(np.float32))]


# ---------------------------------------------------------------------- LightGBM


def test_lightgbm_equals_predict_bit_for_bit(problems, lambdarank, tmp_path) -> None:
    lgb = pytest.importorskip("lightgbm")
    for name, model, X in all_problems(problems, lambdarank):
        path = tmp_path / f"{name}.txt"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.export(path, format="lightgbm")
        tiny = [w for w in caught if issubclass(w.category, ExportWarning)]
        splits = [
            float(v)
            for line in path.read_text().splitlines()
            if line.startswith("threshold=")
            for v in line[len("threshold=") :].split()
        ]
        has_zero_split = any(-1e-35 <= v < 1e-35 for v in splits)
        assert bool(tiny) == has_zero_split, name  # warns exactly when 1e-35 can matter
        assert all("\n" not in str(w.message) for w in tiny)
        booster = lgb.Booster(model_file=str(path))
        for prec, Xp in precisions(X):
            # LightGBM reads 0 < |x| <= 1e-35 as 0 (warned above); such rows are not probed
            keep = ~np.any((np.abs(Xp) <= 1e-35) & (Xp != 0), axis=1)
            got = booster.predict(Xp[keep])
            np.testing.assert_array_equal(got, model.predict(Xp[keep]), err_msg=f"{name} {prec}")


def test_lightgbm_tiny_values_are_the_documented_exception(tmp_path) -> None:
    """A threshold at 0: 1e-40 goes right in predict, to 0's side in LightGBM; export said so."""
    lgb = pytest.importorskip("lightgbm")
    model = rb.RankBoostModel.from_arrays(
        {"feature": [0], "kind": [0], "threshold": [0.0], "default": [0.0], "alpha": [1.0]},
        {"r": [0.5], "z": [0.8], "rloss": [0.2], "bound": [0.8]},
        n_features=1,
    )
    with pytest.warns(ExportWarning, match=r"\|x\| <= 1e-35 as 0.*splits at 7\.0"):
        model.export(tmp_path / "m.txt", format="lightgbm")
    X = np.array([[1e-40], [1e-30], [0.0], [-1e-40]])
    got = lgb.Booster(model_file=str(tmp_path / "m.txt")).predict(X)
    np.testing.assert_array_equal(model.predict(X), [1.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(got, [0.0, 1.0, 0.0, 0.0])


# ---------------------------------------------------------------------- XGBoost


def test_xgboost_takes_predicts_branch_and_sums_within_float32(problems, lambdarank, tmp_path):
    xgb = pytest.importorskip("xgboost")
    for name, model, X in all_problems(problems, lambdarank):
        path = tmp_path / f"{name}.json"
        model.export(path, format="xgboost")
        booster = xgb.Booster(model_file=str(path))
        doc = json.loads(path.read_text())
        trees = doc["learner"]["gradient_booster"]["model"]["trees"]
        want = expected_leaves(model, X)
        for prec, Xp in precisions(X):
            dm = xgb.DMatrix(Xp, missing=np.nan, feature_names=model.feature_names)
            leaves = booster.predict(dm, pred_leaf=True).astype(int).reshape(len(Xp), -1)
            got = np.column_stack(
                [np.asarray(t["split_conditions"], np.float32)[leaves[:, k]]
                 for k, t in enumerate(trees)]
            )  # fmt: skip
            np.testing.assert_array_equal(got, want, err_msg=f"{name} {prec}: a branch")
            H = model.predict(Xp)
            np.testing.assert_array_equal(H, model.predict(X))  # one domain: same scores
            err = np.abs(booster.predict(dm).astype(np.float64) - H)
            assert np.all(err <= bound(model, X)), f"{name} {prec}: {err.max()}"


# ---------------------------------------------------------------------- ONNX


def test_onnx_equals_predict(problems, lambdarank, tmp_path) -> None:
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    for name, model, X in all_problems(problems, lambdarank):
        H = model.predict(X)
        for dtype in ("float32", "float64"):
            path = tmp_path / f"{name}-{dtype}.onnx"
            model.export(path, format="onnx", dtype=dtype)
            sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
            feeds = [X.astype(np.float32)] if dtype == "float32" else [X, X.astype(np.float32)]
            for Xp in feeds:
                got = sess.run(None, {"input": Xp.astype(dtype)})[0][:, 0].astype(np.float64)
                if dtype == "float64":  # compared and added in float64, output float32
                    np.testing.assert_array_equal(got, H.astype(np.float32), err_msg=name)
                else:
                    err = np.abs(got - H)
                    assert np.all(err <= bound(model, X)), f"{name}: {err.max()}"


# ---------------------------------------------------------------------- Elasticsearch


def es_xgboost_scores(body: dict, feature_names: list[str], X: np.ndarray) -> np.ndarray:
    """Elasticsearch/OpenSearch LTR scoring a ``model/xgboost+json`` model, per tree.

    Written from o19s/elasticsearch-learning-to-rank, ``XGBoostJsonParser.java`` (commit
    0331fe57, ``split_condition`` and ``leaf`` read with ``declareFloat``: float32; the
    ``missing`` field is parsed and ignored) and ``NaiveAdditiveDecisionTree.java`` (commit
    a3c8a49c: ``Split.eval`` goes left when ``threshold > scores[feature]``, else right, on
    the float32 feature vector; ``score`` adds ``weights[i] * tree.eval`` into a float
    ``sum`` from 0, weights 1). The feature vector holds the logged float32 features; a
    feature that does not match is 0 there, so NaN (a missing feature) is passed as 0.
    Returns (per-tree leaves, float32 sum).
    """
    trees = json.loads(body["model"]["model"]["definition"])
    col = {n: i for i, n in enumerate(feature_names)}
    x32 = np.nan_to_num(X, nan=0.0).astype(np.float32)
    leaves = np.empty((len(X), len(trees)), dtype=np.float32)

    def walk(node, rows, k):
        if "leaf" in node:
            leaves[rows, k] = np.float32(node["leaf"])
            return
        c = np.float32(node["split_condition"])
        left = c > x32[rows, col[node["split"]]]
        yes, no = node["children"]  # [yes, no], as the parser checks
        walk(yes, rows[left], k)
        walk(no, rows[~left], k)

    for k, tree in enumerate(trees):
        walk(tree, np.arange(len(X)), k)
    total = np.zeros(len(X), dtype=np.float32)
    for k in range(len(trees)):
        total = total + np.float32(1.0) * leaves[:, k]
    return leaves, total


def test_elasticsearch_reference_takes_predicts_branch(problems, lambdarank) -> None:
    for name, model, X in all_problems(problems, lambdarank):
        names = model.feature_names or [f"f{i}" for i in range(model.n_features)]
        body = json.loads(export_bytes(model, "es-xgboost", feature_names=names))
        # the plugin reads a missing feature as 0: exact where H_i(0) == H_i(NaN)
        X0 = X if _nan_is_zero(model) else np.where(np.isnan(X), 0.0, X)
        for prec, Xp in precisions(X0):
            leaves, total = es_xgboost_scores(body, names, Xp)
            np.testing.assert_array_equal(leaves, expected_leaves(model, Xp), err_msg=name)
            H = model.predict(Xp)
            err = np.abs(total.astype(np.float64) - H)
            assert np.all(err <= bound(model, X0)), f"{name} {prec}: {err.max()}"


def _nan_is_zero(model) -> bool:
    from rankboost.export._ranklib import unfaithful_features

    return not unfaithful_features(model.step_functions())


# ---------------------------------------------------------------------- Solr


def solr_scores(doc: dict, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Solr LTR scoring a ``MultipleAdditiveTreesModel``, per tree.

    Written from apache/solr ``solr/modules/ltr/src/java/org/apache/solr/ltr/model/
    MultipleAdditiveTreesModel.java`` (commit b5a11798): ``setThreshold(String)`` stores
    ``Float.parseFloat(threshold) + NODE_SPLIT_SLACK`` (``1E-6f``, a float addition);
    ``scoreNode`` goes left when ``featureVector[i] <= threshold``; a leaf is
    ``Float.parseFloat(value)``; ``RegressionTree.score`` is ``weight * scoreNode`` and
    ``score`` adds the trees into a float from 0. Features are floats; a feature that does
    not match takes its default value, 0, so NaN is passed as 0.
    """
    trees = doc["params"]["trees"]
    col = {f["name"]: None for f in doc["features"]}
    names = list(col)
    x32 = np.nan_to_num(X, nan=0.0).astype(np.float32)
    leaves = np.empty((len(X), len(trees)), dtype=np.float32)
    slack = np.float32(1e-6)

    def walk(node, rows, k):
        if "feature" not in node:
            leaves[rows, k] = np.float32(float(node["value"]))
            return
        t = np.float32(np.float32(float(node["threshold"])) + slack)
        left = x32[rows, feature_index[node["feature"]]] <= t
        walk(node["left"], rows[left], k)
        walk(node["right"], rows[~left], k)

    feature_index = {n: SOLR_COLUMNS[n] for n in names}
    for k, tree in enumerate(trees):
        walk(tree["root"], np.arange(len(X)), k)
    total = np.zeros(len(X), dtype=np.float32)
    for k, tree in enumerate(trees):
        total = total + np.float32(float(tree["weight"])) * leaves[:, k]
    return leaves, total


SOLR_COLUMNS: dict[str, int] = {}


def test_solr_reference_takes_predicts_branch(problems, lambdarank) -> None:
    for name, model, X in all_problems(problems, lambdarank):
        names = model.feature_names or [f"f{i}" for i in range(model.n_features)]
        SOLR_COLUMNS.clear()
        SOLR_COLUMNS.update({n: i for i, n in enumerate(names)})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            doc = json.loads(export_bytes(model, "solr", feature_names=names, missing_as_zero=True))
        gaps = [w for w in caught if issubclass(w.category, ExportWarning)]
        X0 = X if _nan_is_zero(model) else np.where(np.isnan(X), 0.0, X)
        for prec, Xp in precisions(X0):
            leaves, total = solr_scores(doc, Xp)
            want = expected_leaves(model, Xp)
            if gaps:  # the warned splits near 0: only rows within 1e-12 of 0 may differ
                near0 = np.any((np.abs(Xp) < 1e-12) & (Xp != 0), axis=1)
                leaves, want, Xp, total = leaves[~near0], want[~near0], Xp[~near0], total[~near0]
            np.testing.assert_array_equal(leaves, want, err_msg=f"{name} {prec}")
            err = np.abs(total.astype(np.float64) - model.predict(Xp))
            assert np.all(err <= bound(model, Xp)), f"{name} {prec}: {err.max()}"


# ---------------------------------------------------------------------- RankLib


@pytest.mark.skipif(shutil.which("java") is None or not RANKLIB.exists(), reason="no java")
def test_ranklib_equals_predict_on_a_small_model(tmp_path) -> None:
    """One small model (java is slow). RankLib parses the text with ``Float.parseFloat``
    and compares with the double threshold; values are written as the shortest repr of the
    double (for float32 inputs: of the float32), so ``Float.parseFloat`` reads
    ``float32(x)`` except next to a float32 midpoint, where decimal->float and
    decimal->double->float may round apart: midpoints are not probed here (docs/serving.md)."""
    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(120, 3)), 3) * np.array([1.0, 0.1, 10.0])
    y = (X[:, 0] + X[:, 1] * 10 + rng.normal(size=120) > 0).astype(int)
    qid = np.repeat(np.arange(12), 10)
    model = rb.train(X, rb.BipartiteFeedback(y, qid), 12, thresholds="midpoints")
    T = probe_rows(model, X, 2, midpoints=False, nan=False)
    (tmp_path / "m.txt").write_bytes(export_bytes(model, "ranklib", missing_as_zero=True))
    for prec, Xp in precisions(T):
        lines = [
            "0 qid:1 " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row))
            for row in Xp.tolist()
        ]
        (tmp_path / "t.txt").write_text("\n".join(lines) + "\n")
        subprocess.run(
            ["java", "-jar", str(RANKLIB), "-load", str(tmp_path / "m.txt"), "-rank",
             str(tmp_path / "t.txt"), "-score", str(tmp_path / "s.txt")],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        got = np.array(
            [float(s.split("\t")[2]) for s in (tmp_path / "s.txt").read_text().split("\n") if s]
        )
        staged = list(model.staged_decision_function(Xp))[-1]
        np.testing.assert_array_equal(got, staged, err_msg=prec)  # the same sums, in order
        np.testing.assert_allclose(got, model.predict(Xp), rtol=0, atol=1e-12)
        np.testing.assert_array_equal(model.predict(Xp), model.predict(T))
