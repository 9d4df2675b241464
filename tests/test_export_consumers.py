"""Exported models scored by the real consumers (issue 12): XGBoost, LightGBM, onnxruntime
and RankLib load the files and score MQ2008 fold 1 test and probe matrices (every break of
every feature, its float32 and float64 neighbours, 0, tiny values, NaN, +-inf).

What each consumer must give (docs/serving.md):

* LightGBM (float64, ``x <= theta``): ``H(x)`` bit for bit, staged scores too (its predictor
  reads ``|x| <= 1e-35`` as 0, which the reference does as well);
* XGBoost and ONNX float32: ``H(float32(x))``, every row reaching exactly the leaves of the
  step functions (XGBoost ``pred_leaf``; ONNX one feature at a time), the score within
  ``(T + 1) 2^-24 sum |leaves|`` of the float64 sum;
* ONNX float64: ``H(x)`` rounded to float32;
* RankLib (``java -jar RankLib-2.14.jar -load ... -rank ... -score ...``, the peer program of
  ``../shared/peers``): the staged sum of ``H(float32(x))``, bit for bit.

Consumer versions: the installed xgboost, lightgbm, onnx / onnxruntime (the ``test`` extra)
and RankLib 2.14 under the installed java; each test skips cleanly without its consumer.
"""

from __future__ import annotations

import json
import lzma
import re
import shutil
import subprocess
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

import rankboost as rb
from rankboost.export import export_bytes, export_model
from rankboost.export._trees import pieces
from test_export import make_model, probe_matrix, random_model, ref_scores, ref_staged, to_f32

U32 = 2.0**-24
RANKLIB = Path(__file__).resolve().parents[2] / "shared" / "peers" / "RankLib-2.14.jar"
SEEDS = range(6)


@pytest.fixture(scope="module")
def mq2008():
    """MQ2008 fold 1; a model trained on it, and one trained with 20% of the training
    values missing (so that q_def = 1 and theta = -inf rounds appear), tested on a test set
    with 20% missing as well."""
    tr, _, te = rb.datasets.load_mq2008(1)
    fb = rb.LayeredFeedback(tr.y, tr.qid)
    plain = rb.train(tr.X, fb, 100, feature_names=tr.feature_names)
    rng = np.random.default_rng(12)
    Xtr, Xte = tr.X.copy(), te.X.copy()
    Xtr[rng.random(Xtr.shape) < 0.2] = np.nan
    Xte[rng.random(Xte.shape) < 0.2] = np.nan
    nan = rb.train(Xtr, fb, 60, feature_names=tr.feature_names)
    assert set(nan.rounds.default.tolist()) == {0.0, 1.0}
    assert np.isneginf(nan.rounds.threshold).any()
    return {"plain": (plain, te.X), "nan": (nan, Xte)}


def float32_bound(model, X32, trees="feature", n_rounds=None):
    """(T + 1) 2^-24 sum_t |w_t(x)|, plus the float64 rounding of the reference."""
    k = model.n_rounds if n_rounds is None else n_rounds
    terms = pieces(model, k, trees)
    total = sum(np.abs(sf(X32[:, i])) for i, sf in terms) if terms else np.zeros(len(X32))
    return (len(terms) + 2) * U32 * total + 1e-300


def lightgbm_input(X):
    """LightGBM's predictor reads |x| <= 1e-35 (kZeroThreshold) as 0."""
    return np.where(np.abs(X) <= 1e-35, 0.0, X)


# ---------------------------------------------------------------------- LightGBM


@pytest.mark.filterwarnings("ignore::rankboost.export.ExportWarning")  # random splits near 0
@pytest.mark.parametrize("seed", SEEDS)
def test_lightgbm_equals_h_bit_for_bit(seed) -> None:
    lgb = pytest.importorskip("lightgbm")
    model = random_model(seed)
    X = probe_matrix(model, seed)
    booster = lgb.Booster(model_str=export_bytes(model, "lightgbm").decode())
    assert np.array_equal(booster.predict(X), ref_scores(model, lightgbm_input(X)))
    # per round: every staged score, bit for bit
    booster = lgb.Booster(model_str=export_bytes(model, "lightgbm", trees="round").decode())
    assert booster.num_trees() == model.n_rounds
    staged = ref_staged(model, lightgbm_input(X))
    for t in (1, 2, 7, model.n_rounds):
        assert np.array_equal(booster.predict(X, num_iteration=t), staged[t - 1])


@pytest.mark.parametrize("which", ["plain", "nan"])
def test_lightgbm_mq2008(mq2008, which, tmp_path) -> None:
    lgb = pytest.importorskip("lightgbm")
    model, X = mq2008[which]
    export_model(model, tmp_path / "m.txt", "lightgbm")
    booster = lgb.Booster(model_file=str(tmp_path / "m.txt"))
    assert booster.feature_name() == model.feature_names
    assert np.array_equal(booster.predict(X), model.decision_function(X))
    booster = lgb.Booster(model_str=export_bytes(model, "lightgbm", trees="round").decode())
    staged = list(model.staged_decision_function(X))
    for t in range(1, model.n_rounds + 1, 9):
        assert np.array_equal(booster.predict(X, num_iteration=t), staged[t - 1])


@pytest.mark.filterwarnings("ignore::rankboost.export.ExportWarning")  # random splits near 0
@pytest.mark.parametrize("field", ["max_feature_idx", "feature_names", "feature_infos"])
def test_lightgbm_header_fields_are_required(field) -> None:
    """Issue 12 names these header fields: LightGBM refuses the model without each."""
    lgb = pytest.importorskip("lightgbm")
    text = export_bytes(random_model(0), "lightgbm").decode()
    lgb.Booster(model_str=text)
    cut = re.sub(rf"^{field}=.*\n", "", text, flags=re.MULTILINE)
    assert cut != text
    with pytest.raises(lgb.basic.LightGBMError, match="doesn't"):
        lgb.Booster(model_str=cut)


# ---------------------------------------------------------------------- XGBoost


def _xgb(model, **options):
    xgb = pytest.importorskip("xgboost")
    doc = json.loads(export_bytes(model, "xgboost", **options))
    return xgb.Booster(model_file=bytearray(json.dumps(doc).encode())), doc


def _leaf_sum(doc, leaves):
    """The float32 leaf values that XGBoost's pred_leaf says each row reached, added in
    float64 in tree order."""
    trees = doc["learner"]["gradient_booster"]["model"]["trees"]
    out = np.zeros(leaves.shape[0])
    for k, tree in enumerate(trees):
        out += np.asarray(tree["split_conditions"])[leaves[:, k].astype(int)]
    return out


def feature_models(model):
    """``(i, H_i, model of feature i's rounds alone)`` for every used feature: a consumer
    scores such a model with one tree, so its score is that tree's leaf, with no sum."""
    r = model.rounds
    for i, sf in model.step_functions().items():
        keep = r.feature == i
        sub = make_model(
            {"feature": r.feature[keep], "kind": r.kind[keep], "threshold": r.threshold[keep],
             "default": r.default[keep], "alpha": r.alpha[keep],
             "cuts": np.concatenate([r.cuts_of(t) for t in np.flatnonzero(keep)] + [[]]),
             "cut_offsets": np.concatenate([[0], np.cumsum(np.diff(r.cut_offsets)[keep])])},
            model.n_features,
        )  # fmt: skip
        yield i, sf, sub


@pytest.mark.parametrize("trees", ["feature", "round"])
@pytest.mark.parametrize("seed", SEEDS)
def test_xgboost_reaches_the_exact_leaves(seed, trees) -> None:
    """pred_leaf: every finite or NaN row (values at and next to every float32 split point)
    reaches the leaf holding float32(H_i(float32(x))); the score is within the bound (also
    with +-inf, which only inplace_predict takes)."""
    xgb = pytest.importorskip("xgboost")
    model = random_model(seed)
    X = probe_matrix(model, seed)
    X32 = to_f32(X)
    booster, doc = _xgb(model, trees=trees)
    finite = ~np.isinf(X32).any(axis=1)  # DMatrix refuses +-inf and values beyond float32
    leaves = booster.predict(xgb.DMatrix(X[finite], feature_names=model.feature_names),
                             pred_leaf=True)  # fmt: skip
    expected = np.zeros(X.shape[0])
    for i, sf in pieces(model, model.n_rounds, trees):
        expected += sf(X32[:, i]).astype(np.float32)
    assert np.array_equal(_leaf_sum(doc, leaves), expected[finite])
    score = booster.inplace_predict(X)
    ref = ref_scores(model, X32)
    assert np.all(np.abs(score - ref) <= float32_bound(model, X32, trees))


@pytest.mark.parametrize("seed", SEEDS)
def test_xgboost_one_feature_at_a_time(seed) -> None:
    """A single tree's score is its leaf: float32(H_i(float32(x))) exactly, +-inf included."""
    model = random_model(seed)
    X = probe_matrix(model, seed)
    for i, sf, sub in feature_models(model):
        booster, _ = _xgb(sub)
        assert np.array_equal(booster.inplace_predict(X), sf(to_f32(X)[:, i]).astype(np.float32))


@pytest.mark.parametrize("which", ["plain", "nan"])
def test_xgboost_mq2008(mq2008, which, tmp_path) -> None:
    """XGBoost scores H(float32(x)) within the float32 bound, staged scores too."""
    xgb = pytest.importorskip("xgboost")
    model, X = mq2008[which]
    export_model(model, tmp_path / "m.json", "xgboost")
    booster = xgb.Booster(model_file=str(tmp_path / "m.json"))
    assert booster.feature_names == model.feature_names
    X32 = to_f32(X)
    ref = model.decision_function(X32)
    score = booster.predict(xgb.DMatrix(X, feature_names=model.feature_names))
    assert np.all(np.abs(score - ref) <= float32_bound(model, X32))
    booster, _ = _xgb(model, trees="round")
    staged = list(model.staged_decision_function(X32))
    for t in (1, 10, 33, model.n_rounds):
        s = booster.inplace_predict(X, iteration_range=(0, t))
        assert np.all(np.abs(s - staged[t - 1]) <= float32_bound(model, X32, "round", t))


#: Fields issue 12 lists as checked by the loader ("verify each against the installed
#: xgboost"): deleting any of them makes xgboost.Booster refuse the model.
XGB_REQUIRED = [
    ("learner", "attributes"),
    ("learner", "objective"),
    ("learner", "learner_model_param"),
    ("learner", "learner_model_param", "base_score"),
    ("learner", "learner_model_param", "num_feature"),
    ("learner", "gradient_booster", "model", "gbtree_model_param"),
    ("learner", "gradient_booster", "model", "tree_info"),
]
XGB_TREE_REQUIRED = [
    "tree_param", "left_children", "right_children", "parents", "split_indices",
    "split_conditions", "default_left", "base_weights", "loss_changes", "sum_hessian",
]  # fmt: skip


@pytest.mark.parametrize("path", XGB_REQUIRED + [("tree", k) for k in XGB_TREE_REQUIRED])
def test_xgboost_required_fields(path) -> None:
    xgb = pytest.importorskip("xgboost")
    doc = json.loads(export_bytes(random_model(0), "xgboost"))
    xgb.Booster(model_file=bytearray(json.dumps(doc).encode()))
    if path[0] == "tree":
        for tree in doc["learner"]["gradient_booster"]["model"]["trees"]:
            del tree[path[1]]
    else:
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        del parent[path[-1]]
    with pytest.raises(xgb.core.XGBoostError):
        xgb.Booster(model_file=bytearray(json.dumps(doc).encode()))


def test_xgboost_version_field() -> None:
    """``version`` is written ([2, 0, 0]); the installed xgboost does not require it, and
    reads ``base_score`` "0" with it as with its own version."""
    xgb = pytest.importorskip("xgboost")
    model = random_model(1)
    X = probe_matrix(model, 1)
    doc = json.loads(export_bytes(model, "xgboost"))
    assert doc["version"] == [2, 0, 0]
    assert doc["learner"]["learner_model_param"]["base_score"] == "0"
    scores = []
    for version in ([2, 0, 0], [int(v) for v in xgb.__version__.split(".")[:3]], None):
        if version is None:
            del doc["version"]
        else:
            doc["version"] = version
        booster = xgb.Booster(model_file=bytearray(json.dumps(doc).encode()))
        scores.append(booster.inplace_predict(X))
    assert np.array_equal(scores[0], scores[1])
    assert np.array_equal(scores[0], scores[2])


@pytest.mark.parametrize("trees", ["feature", "round"])
def test_xgboost_dump_is_xgboosts_own_dump(trees) -> None:
    """The ``xgboost-dump`` / ``es-xgboost`` definition is what xgboost itself dumps from the
    exported model (``get_dump(dump_format="json")``, which names the features), node for
    node; the one difference is that xgboost prints a condition of -inf, which is not JSON."""
    model = random_model(2)
    booster, _ = _xgb(model, trees=trees)
    theirs = [
        json.loads(re.sub(r'"split_condition": (-?)inf', r'"split_condition": \1Infinity', d))
        for d in booster.get_dump(dump_format="json")
    ]
    ours = json.loads(export_bytes(model, "xgboost-dump", trees=trees))
    es = json.loads(json.loads(export_bytes(model, "es-xgboost", trees=trees))["model"]["model"]
                    ["definition"])  # fmt: skip
    assert es == ours
    assert len(ours) == len(theirs)

    def same(a, b):
        assert {k for k in a if k != "children"} == {k for k in b if k != "children"}
        for k in ("nodeid", "depth", "split", "yes", "no", "missing"):
            assert a.get(k) == b.get(k)
        if "leaf" in a:
            assert np.float32(a["leaf"]) == np.float32(b["leaf"])
            return
        ca, cb = np.float32(a["split_condition"]), np.float32(b["split_condition"])
        assert ca == cb or (np.isinf(cb) and ca == np.copysign(np.finfo(np.float32).max, cb))
        for x, y in zip(a["children"], b["children"], strict=True):
            same(x, y)

    for a, b in zip(ours, theirs, strict=True):
        same(a, b)


# ---------------------------------------------------------------------- ONNX


def _onnx_session(model, **options):
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    data = export_bytes(model, "onnx", **options)
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"])


def _onnx_run(session, X, dtype="float32"):
    with np.errstate(over="ignore"):  # beyond float32 is +-inf, as to_f32 has it
        X = X.astype(dtype)
    return session.run(None, {"input": X})[0].ravel().astype(np.float64)


@pytest.mark.parametrize("seed", SEEDS)
def test_onnx_float32(seed) -> None:
    """Each feature's tree alone gives float32(H_i(float32(x))) exactly (no sum to round);
    the whole model is within the float32 bound."""
    model = random_model(seed)
    X = probe_matrix(model, seed)
    X32 = to_f32(X)
    score = _onnx_run(_onnx_session(model), X)
    assert np.all(np.abs(score - ref_scores(model, X32)) <= float32_bound(model, X32))
    for i, sf, sub in feature_models(model):
        single = _onnx_run(_onnx_session(sub), X)
        assert np.array_equal(single, sf(X32[:, i]).astype(np.float32))


@pytest.mark.parametrize("seed", SEEDS)
def test_onnx_float64_is_h_rounded_to_float32(seed) -> None:
    model = random_model(seed)
    X = probe_matrix(model, seed)
    ref = ref_scores(model, X)
    score = _onnx_run(_onnx_session(model, dtype="float64"), X, "float64")
    # the float64 sum (in onnxruntime's order) rounded once to float32
    total = sum(np.abs(sf(X[:, i])) for i, sf in model.step_functions().items())
    assert np.all(np.abs(score - ref) <= U32 * np.abs(ref) + 64 * 2.0**-53 * total)
    assert np.mean(score == ref.astype(np.float32)) > 0.95


@pytest.mark.parametrize("which", ["plain", "nan"])
def test_onnx_mq2008(mq2008, which, tmp_path) -> None:
    onnx = pytest.importorskip("onnx")
    model, X = mq2008[which]
    export_model(model, tmp_path / "m.onnx", "onnx")
    loaded = onnx.load(str(tmp_path / "m.onnx"))
    onnx.checker.check_model(loaded)
    props = {p.key: p.value for p in loaded.metadata_props}
    assert json.loads(props["feature_names"]) == model.feature_names
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    X32 = to_f32(X)
    score = _onnx_run(session, X)
    assert np.all(np.abs(score - model.decision_function(X32)) <= float32_bound(model, X32))
    score = _onnx_run(_onnx_session(model, dtype="float64"), X, "float64")
    ref = model.decision_function(X)
    assert np.all(np.abs(score - ref) <= U32 * np.abs(ref) + 1e-13)


# ---------------------------------------------------------------------- RankLib


def _ranklib(model_path: Path, data_path: Path, tmp_path: Path) -> np.ndarray:
    if shutil.which("java") is None:
        pytest.skip("RankLib needs java, which is not installed")
    if not RANKLIB.is_file():
        pytest.skip(f"RankLib jar not found at {RANKLIB}")
    out = tmp_path / "scores.txt"
    cmd = ["java", "-jar", str(RANKLIB), "-load", str(model_path), "-rank", str(data_path),
           "-score", str(out)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line.split("\t") for line in out.read_text().splitlines() if line.strip()]
    return np.array([float(parts[2]) for parts in lines])


def test_ranklib_scores_mq2008(mq2008, tmp_path) -> None:
    """RankLib 2.14 scores the bundled MQ2008 S5 file (fold 1 test) as rankboost scores its
    float32 values: the round-by-round sum, bit for bit."""
    model, X = mq2008["plain"]
    export_model(model, tmp_path / "model.txt", "ranklib")
    data = tmp_path / "test.txt"
    xz = resources.files("rankboost.datasets") / "data" / "MQ2008-S5.txt.xz"
    data.write_bytes(lzma.decompress(xz.read_bytes()))
    scores = _ranklib(tmp_path / "model.txt", data, tmp_path)
    X32 = to_f32(X)
    assert np.array_equal(scores, list(model.staged_decision_function(X32))[-1])
    ref = model.decision_function(X32)
    assert np.allclose(scores, ref, rtol=0, atol=1e-12)


def test_ranklib_reads_missing_as_zero_and_real_valued_rounds(tmp_path) -> None:
    """A model whose abstain values equal its values at 0 (q_def = [0 > theta], and the
    rank of 0 for real-valued rounds), scored on a sparse SVMlight file where missing
    features are left out: RankLib's scores equal H with those features NaN."""
    model = random_model(7, real=True)
    r = model.rounds
    default = np.where(r.threshold < 0, 1.0, 0.0)
    for t in np.flatnonzero(r.kind == 1):
        cuts = r.cuts_of(t)
        default[t] = np.searchsorted(cuts, 0.0, side="left") / cuts.shape[0]
    model = make_model(
        {"feature": r.feature, "kind": r.kind, "threshold": r.threshold, "default": default,
         "alpha": r.alpha, "cuts": r.cuts, "cut_offsets": r.cut_offsets},
        model.n_features,
    )  # fmt: skip
    X = to_f32(probe_matrix(model, 7, inf=False))
    X = X[~np.isinf(X).any(axis=1)]  # beyond float32: RankLib reads no "inf"
    lines = []
    last = X.shape[1] - 1
    for row in X:
        # RankLib sizes each row by its last feature id, so the last one is always written
        # (a 0 for a missing one, which is what RankLib reads for the others)
        feats = [f"{j + 1}:{float(v)!r}" for j, v in enumerate(row[:-1]) if not np.isnan(v)]
        feats.append(f"{last + 1}:{0.0 if np.isnan(row[-1]) else float(row[-1])!r}")
        lines.append(f"0 qid:1 {' '.join(feats)}")
    assert np.isnan(X[:, :-1]).any()
    (tmp_path / "data.txt").write_text("\n".join(lines) + "\n")
    export_model(model, tmp_path / "model.txt", "ranklib")
    scores = _ranklib(tmp_path / "model.txt", tmp_path / "data.txt", tmp_path)
    ref = ref_scores(model, X)
    assert np.allclose(scores, ref, rtol=1e-12, atol=1e-12)
