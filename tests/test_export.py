"""Export (issue 12), without the consumers: the API, bad input, the trees, the file formats.

The real consumers (XGBoost, LightGBM, onnxruntime, RankLib) load the exported files in
``tests/test_export_consumers.py``, and ``tests/test_export_search.py`` checks the
Elasticsearch/OpenSearch and Solr bodies against those formats' schemas. This file checks
what needs no consumer: the number formats (float32 split points against brute force), the
tree structure, the RankLib file, the errors, atomic writes and the command line. Its
helpers that build random models and probe matrices are shared with the other two.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import rankboost as rb
from rankboost.cli import main
from rankboost.export import ALIASES, FORMATS, export_bytes, export_model
from rankboost.export._trees import LEAF, MISSING, build_tree, forest, leq_point32, lt_condition
from rankboost.model import RankBoostModel

F32 = np.float32
STATS = ("r", "z", "rloss", "bound")

# ---------------------------------------------------------------------- shared helpers


def make_model(rounds: dict, n_features: int, names: list[str] | None = None) -> RankBoostModel:
    """A model from its round arrays (the training records are filler)."""
    n = len(rounds["feature"])
    history = {k: np.full(n, 0.5) for k in STATS}
    return RankBoostModel.from_arrays(rounds, history, n_features, feature_names=names)


def random_model(
    seed: int,
    n_features: int = 4,
    n_rounds: int = 40,
    *,
    real: bool = True,
    defaults: tuple[float, ...] = (0.0, 1.0, 0.5, 0.3),
    names: bool = True,
) -> RankBoostModel:
    """Threshold and real-valued rounds with awkward thresholds: values that float32 rounds
    up and down, exact float32 values, repeats, 0, +-inf, tiny and huge ones."""
    rng = np.random.default_rng(seed)
    pool = np.concatenate(
        [
            rng.normal(size=10),
            rng.normal(size=5).astype(F32).astype(np.float64),
            [0.0, 0.1, 0.3, -0.7, 1e-7, -1e-7, 1e-30, 2.5e38, 1e300, -np.inf, np.inf],
        ]
    )
    feature, kind, threshold, cuts, offsets = [], [], [], [], [0]
    for _ in range(n_rounds):
        feature.append(int(rng.integers(n_features)))
        if real and rng.random() < 0.3:
            kind.append(1)
            threshold.append(np.nan)
            c = np.sort(rng.choice(pool[np.isfinite(pool)], size=int(rng.integers(1, 5))))
            cuts.extend(c.tolist())
        else:
            kind.append(0)
            threshold.append(float(rng.choice(pool)))
        offsets.append(len(cuts))
    alpha = rng.choice([-1, 1], n_rounds) * rng.uniform(0.3, 2.0, n_rounds)
    rounds = {
        "feature": feature,
        "kind": kind,
        "threshold": threshold,
        "default": rng.choice(defaults, n_rounds),
        "alpha": alpha,
        "cuts": cuts,
        "cut_offsets": offsets,
    }
    return make_model(
        rounds, n_features, [f"feat_{i}" for i in range(n_features)] if names else None
    )


def probe_matrix(model: RankBoostModel, seed: int, *, inf: bool = True) -> np.ndarray:
    """Every break of every feature, its float32 neighbours and float64 neighbours, 0, tiny
    values, NaN (and +-inf), in random rows; unused features get random values."""
    rng = np.random.default_rng(seed)
    cols = []
    for i in range(model.n_features):
        b = np.unique(
            np.concatenate(
                [model.rounds.threshold[model.rounds.feature == i]]
                + [
                    model.rounds.cuts_of(t)
                    for t in np.flatnonzero(model.rounds.feature == i)
                    if model.rounds.kind[t] == 1
                ]
            )
        )
        b = b[np.isfinite(b)]
        p = leq_point32(b)
        p32 = p.astype(F32)
        values = [
            b,
            p,
            lt_condition(p),
            np.nextafter(p32, F32(-np.inf)).astype(np.float64),
            np.nextafter(b, np.inf),
            np.nextafter(b, -np.inf),
            [0.0, -0.0, 1e-40, -1e-40, np.nan, np.nan],
            rng.normal(size=10),
        ]
        if inf:
            values.append([np.inf, -np.inf])
        col = np.concatenate(values)
        cols.append(col[np.isfinite(col) | np.isnan(col) | inf])
    n = max(len(c) for c in cols) + 20
    X = np.empty((n, model.n_features))
    for i, col in enumerate(cols):
        X[:, i] = rng.permutation(np.concatenate([col, rng.choice(col, n - len(col))]))
    return X


def ref_scores(model: RankBoostModel, X: np.ndarray, n_rounds: int | None = None) -> np.ndarray:
    """``H(x)`` from the step functions (the numbers decision_function adds; +-inf allowed)."""
    out = np.zeros(X.shape[0])
    for i, sf in model.step_functions(n_rounds).items():
        out += sf(X[:, i])
    return out


def ref_staged(model: RankBoostModel, X: np.ndarray) -> list[np.ndarray]:
    """``H_t(x)`` after every round (staged_decision_function, +-inf allowed)."""
    out, staged = np.zeros(X.shape[0]), []
    for t in range(model.n_rounds):
        out = out + model.rounds.alpha[t] * model.rounds.predict(t, X)
        staged.append(out)
    return staged


def to_f32(X: np.ndarray) -> np.ndarray:
    """What a float32 consumer reads."""
    with np.errstate(over="ignore"):
        return X.astype(F32).astype(np.float64)


@pytest.fixture
def small_model() -> RankBoostModel:
    """Two features: H_0 has an abstain value no interval has; feature 2 is unused."""
    return make_model(
        {
            "feature": [0, 0, 1],
            "kind": [0, 0, 0],
            "threshold": [0.1, 1.0, -np.inf],
            "default": [0.0, 1.0, 0.0],
            "alpha": [1.0, 0.5, 0.25],
        },
        3,
        ["bm25", "pagerank", "age"],
    )


# ---------------------------------------------------------------------- number formats


def test_leq_point32_is_the_largest_float32_not_above_theta() -> None:
    rng = np.random.default_rng(0)
    theta = np.concatenate(
        [rng.normal(size=2000) * 10.0 ** rng.integers(-40, 38, 2000), [0.1, 1 / 3, 0.0, -0.0]]
    )
    p = leq_point32(theta)
    assert np.array_equal(p.astype(F32).astype(np.float64), p)  # float32 numbers
    assert np.all(p <= theta)
    assert np.all(np.nextafter(p.astype(F32), F32(np.inf)).astype(np.float64) > theta)


def test_lt_condition_is_not_nextafter_of_float32_theta() -> None:
    """Issue 12: nextafter(float32(theta)) is wrong when float32(theta) rounds above theta."""
    theta = np.array([0.1])  # float32(0.1) = 0.10000000149... > 0.1
    c = lt_condition(leq_point32(theta))[0]
    assert c == float(F32(0.1))
    assert c != float(np.nextafter(F32(0.1), F32(1)))
    x = np.array([np.float32(0.1), np.nextafter(F32(0.1), F32(0))], dtype=F32)
    assert ((x < c) == ~(x.astype(np.float64) > 0.1)).all()


def test_float32_points_decide_every_float32_input_exactly() -> None:
    """Brute force on every float32 in a window around each break."""
    rng = np.random.default_rng(1)
    theta = np.concatenate([rng.normal(size=200), [0.1, 0.0, 1e-30, -2.5]])
    p, c = leq_point32(theta), lt_condition(leq_point32(theta))
    for t, pt, ct in zip(theta, p, c, strict=True):
        x = F32(pt) + np.arange(-3, 4) * np.spacing(F32(pt))
        x = x.astype(F32).astype(np.float64)
        assert np.array_equal(x <= pt, ~(x > t))
        assert np.array_equal(x < ct, ~(x > t))


# ---------------------------------------------------------------------- trees


def _walk(tree, x: float) -> float:
    i = 0
    while tree.kind[i] != LEAF:
        if np.isnan(x):
            i = tree.left[i] if tree.nan_left[i] else tree.right[i]
        elif tree.kind[i] == MISSING:
            i = tree.right[i]
        else:
            i = tree.left[i] if x <= tree.point[i] else tree.right[i]
    return tree.value[i]


@pytest.mark.parametrize("seed", range(5))
def test_trees_are_the_step_functions(seed) -> None:
    """The forest (walked in float64 by the definition of its nodes) equals H_i; ids are
    breadth-first, children after their parent, covers add up, trees are balanced."""
    model = random_model(seed)
    steps = model.step_functions()
    trees = forest(model, model.n_rounds)
    assert [t.feature for t in trees] == [i for i, sf in steps.items()]
    X = probe_matrix(model, seed)
    for tree in trees:
        got = np.array([_walk(tree, x) for x in X[:, tree.feature]])
        assert np.array_equal(got, steps[tree.feature](X[:, tree.feature]))
        parents = tree.parents()
        assert parents[0] == -1
        assert all(0 <= parents[i] < i for i in range(1, tree.n_nodes))
        assert tree.depth == sorted(tree.depth)
        n_leaves = tree.kind.count(LEAF)
        assert tree.cover[0] == n_leaves
        assert max(tree.depth) <= 1 + int(np.ceil(np.log2(n_leaves)))


def test_missing_value_reuses_an_interval_when_it_can() -> None:
    tree = build_tree(0, np.array([1.0, 2.0]), np.array([0.0, 3.0, 5.0]), 3.0)
    assert MISSING not in tree.kind
    assert _walk(tree, np.nan) == 3.0
    tree = build_tree(0, np.array([1.0, 2.0]), np.array([0.0, 3.0, 5.0]), 4.0)
    assert tree.kind[0] == MISSING
    assert _walk(tree, np.nan) == 4.0


def test_round_trees_are_the_rounds(small_model) -> None:
    trees = forest(small_model, 3, trees="round")
    assert [t.feature for t in trees] == [0, 0, 1]
    assert trees[1].kind == [0, LEAF, LEAF]
    assert trees[1].value[1:] == [0.0, 0.5]
    assert _walk(trees[1], np.nan) == 0.5  # q_def = 1


def test_empty_model_is_one_zero_leaf(small_model) -> None:
    [tree] = forest(small_model, 0)
    assert tree.kind == [LEAF]
    assert tree.value == [0.0]


# ---------------------------------------------------------------------- RankLib file


def test_ranklib_file_format() -> None:
    model = make_model(
        {
            "feature": [2, 0, 1],
            "kind": [0, 1, 0],
            "threshold": [0.25, np.nan, -np.inf],
            "default": [0.0, 0.0, 1.0],
            "alpha": [0.5, 0.75, 1e-5],
            "cuts": [1.0, 2.0, 3.0],
            "cut_offsets": [0, 0, 3, 3],
        },
        3,
    )
    text = export_bytes(model, "ranklib").decode()
    lines = text.split("\n")
    assert lines[:3] == [
        "## RankBoost",
        "## Iteration = 3",
        "## No. of threshold candidates = 0",
    ]
    assert not text.endswith("\n")  # as RankLib writes it
    # 1-based ids; the real-valued round is 3 threshold rankers of alpha / 3; Java's -Infinity
    assert lines[3] == "3:0.25:0.5 1:1.0:0.25 1:2.0:0.25 1:3.0:0.25 2:-Infinity:1e-05"


def test_ranklib_refuses_a_model_whose_missing_value_is_not_its_value_at_zero() -> None:
    model = make_model(
        {"feature": [1], "kind": [0], "threshold": [0.5], "default": [1.0], "alpha": [2.0]},
        2,
        ["bm25", "pagerank"],
    )
    with pytest.raises(ValueError, match=r"feature 1 \('pagerank'\).*0 as 0.0 and a missing"):
        export_bytes(model, "ranklib")
    for fmt in ("es-ranklib", "solr"):
        with pytest.raises(ValueError, match="missing_as_zero=True"):
            export_bytes(model, fmt)
    assert export_bytes(model, "ranklib", missing_as_zero=True).endswith(b"2:0.5:2.0")


def test_ranklib_accepts_abstentions_that_match_zero() -> None:
    """q_def = [0 > theta]: a missing feature read as 0 gives the same H."""
    model = make_model(
        {
            "feature": [0, 0],
            "kind": [0, 0],
            "threshold": [0.5, -0.5],
            "default": [0.0, 1.0],
            "alpha": [1.0, 2.0],
        },
        1,
    )
    assert export_bytes(model, "ranklib").endswith(b"1:0.5:1.0 1:-0.5:2.0")


# ---------------------------------------------------------------------- API and bad input


def test_formats_and_aliases(small_model) -> None:
    assert set(FORMATS) == {
        "xgboost", "xgboost-dump", "lightgbm", "onnx", "ranklib", "es-xgboost", "es-ranklib",
        "solr",
    }  # fmt: skip
    assert set(ALIASES.values()) <= set(FORMATS)
    assert export_bytes(small_model, "XGBoost") == export_bytes(small_model, "xgboost")


def test_export_model_writes_export_bytes(small_model, tmp_path) -> None:
    for fmt in ("xgboost", "lightgbm", "xgboost-dump", "es-xgboost"):
        path = tmp_path / f"m.{fmt}"
        small_model.export(path, format=fmt)
        assert path.read_bytes() == export_bytes(small_model, fmt)
        assert (path.stat().st_mode & 0o777) == 0o644


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"format": "pmml"}, ValueError, "unknown export format 'pmml'"),
        ({"format": 3}, TypeError, "format must be a str"),
        ({"format": "xgboost", "n_rounds": 4}, ValueError, "n_rounds must be between 0 and 3"),
        ({"format": "xgboost", "n_rounds": 1.0}, TypeError, "n_rounds must be an int"),
        ({"format": "xgboost", "trees": "depth"}, ValueError, "trees must be one of"),
        ({"format": "xgboost", "dtype": "float64"}, ValueError, "applies to format 'onnx' only"),
        ({"format": "onnx", "dtype": "int8"}, ValueError, "dtype must be one of"),
        ({"format": "lightgbm", "missing_as_zero": True}, ValueError, "keeps NaN as 'abstain'"),
        ({"format": "xgboost", "store": "s"}, ValueError, "store applies to format 'solr'"),
        ({"format": "solr", "name": ""}, ValueError, "name must be a non-empty str"),
        ({"format": "xgboost", "feature_names": ["a"]}, ValueError, "must be 3 non-empty"),
        ({"format": "xgboost", "feature_names": "abc"}, TypeError, "must be a list of str"),
        ({"format": "xgboost", "feature_names": ["a", "b", "a"]}, ValueError, "must be unique"),
        ({"format": "xgboost", "feature_names": ["a", "b[1]", "c"]}, ValueError, "XGBoost"),
        ({"format": "lightgbm", "feature_names": ["a", "b c", "d"]}, ValueError, "LightGBM"),
    ],
)
def test_bad_options(small_model, options, error, match) -> None:
    with pytest.raises(error, match=match):
        export_bytes(small_model, **options)


@pytest.mark.parametrize("fmt", ["es-xgboost", "solr"])
def test_formats_that_need_names_say_so(small_model, fmt) -> None:
    small_model.feature_names = None
    with pytest.raises(ValueError, match=f"format '{fmt}' refers to features by name"):
        export_bytes(small_model, fmt)
    options = {"missing_as_zero": True} if fmt == "solr" else {}
    assert export_bytes(small_model, fmt, feature_names=["a", "b", "c"], **options)


@pytest.mark.filterwarnings("ignore::rankboost.export.ExportWarning")  # a split at 0
def test_non_finite_alpha_is_refused(small_model) -> None:
    model = make_model(
        {"feature": [0, 0], "kind": [0, 0], "threshold": [0.0, 1.0], "default": [0.0, 0.0],
         "alpha": [1.0, np.inf]},
        1,
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"round 1 has alpha = inf.*n_rounds=1"):
        export_bytes(model, "lightgbm")
    assert export_bytes(model, "lightgbm", n_rounds=1)


@pytest.mark.filterwarnings("ignore::rankboost.export.ExportWarning")  # a split at 0
def test_a_value_beyond_float32_is_refused_by_float32_formats() -> None:
    model = make_model(
        {"feature": [0], "kind": [0], "threshold": [0.0], "default": [0.0], "alpha": [1e300]},
        1,
    )
    with pytest.raises(ValueError, match="beyond float32"):
        export_bytes(model, "xgboost")
    assert export_bytes(model, "lightgbm")  # float64 holds it


def test_not_a_model() -> None:
    with pytest.raises(TypeError, match=r"RankBoostModel; got RankBoostRanker \(a fitted"):
        export_bytes(rb.RankBoostRanker(), "xgboost")


def test_unfitted_estimators(tmp_path) -> None:
    with pytest.raises(NotFittedError):
        rb.RankBoostRanker().export(tmp_path / "m.json", "xgboost")
    with pytest.raises(ValueError, match="RankFusion.export: this RankFusion is not fitted"):
        rb.RankFusion().export(tmp_path / "m.json", "xgboost")
    assert not list(tmp_path.iterdir())


def test_estimators_delegate(tmp_path) -> None:
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(120, 3)), columns=["bm25", "pagerank", "age"])
    y = (X["bm25"] + rng.normal(size=120) > 0).astype(int)
    est = rb.RankBoostRanker(n_estimators=10).fit(X, y, qid=np.repeat(np.arange(12), 10))
    est.export(tmp_path / "d.json", format="xgboost-dump")
    splits = {tree.get("split") for tree in json.loads((tmp_path / "d.json").read_text())}
    assert splits <= {"bm25", "pagerank", "age", None}
    assert (tmp_path / "d.json").read_bytes() == export_bytes(est.model_, "xgboost-dump")


def test_fusion_delegates_with_its_feature_names(tmp_path) -> None:
    from rankboost.fusion import Qrels, Run

    qs = np.repeat([f"q{i}" for i in range(10)], 5)
    ds = np.tile([f"d{j}" for j in range(5)], 10)
    rel = (np.tile(np.arange(5), 10) < 2).astype(int)
    runs = [Run(qs, ds, np.tile([1, 3, 2, 4, 5], 10), name="a"),
            Run(qs, ds, np.tile([5, 4, 3, 2, 1], 10), name="b")]  # fmt: skip
    fusion = rb.RankFusion(n_rounds=5).fit(runs, Qrels(qs, ds, rel))
    fusion.export(tmp_path / "f.txt", "lightgbm")
    text = (tmp_path / "f.txt").read_text()
    assert f"feature_names={' '.join(fusion.feature_names_)}" in text


def test_failed_export_leaves_the_old_file(small_model, tmp_path) -> None:
    path = tmp_path / "model.txt"
    path.write_text("old")
    with pytest.raises(ValueError, match="unknown export format"):
        export_model(small_model, path, "pmml")
    small_model.feature_names = None
    with pytest.raises(ValueError, match="refers to features by name"):
        small_model.export(path, "solr")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["model.txt"]  # no temporary file left


def test_onnx_without_onnx_names_the_extra(small_model, monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match=r"pip install 'rankboost\[onnx\]'"):
        export_bytes(small_model, "onnx")


def test_core_import_stays_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, rankboost, rankboost.export, rankboost.cli; "
        "heavy = ('onnx', 'xgboost', 'lightgbm', 'onnxruntime'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------------- command line


@pytest.fixture
def saved(tmp_path, small_model) -> Path:
    small_model.best_iteration = 2
    path = tmp_path / "model.json"
    small_model.save(path)
    return path


def test_cli_export(saved, tmp_path, small_model, capsys) -> None:
    out = tmp_path / "m.txt"
    assert main(["export", str(saved), "--format", "lightgbm", "-o", str(out)]) == 0
    assert out.read_bytes() == export_bytes(small_model, "lightgbm", n_rounds=2)  # best
    assert "wrote" in capsys.readouterr().err
    argv = ["export", str(saved), "-f", "xgboost", "--rounds", "3", "--trees", "round",
            "-o", str(out)]  # fmt: skip
    assert main(argv) == 0
    assert out.read_bytes() == export_bytes(small_model, "xgboost", n_rounds=3, trees="round")


def test_cli_feature_names_and_search_options(saved, tmp_path, small_model) -> None:
    names = tmp_path / "names.txt"
    names.write_text("x\ny\nz\n")
    out = tmp_path / "solr.json"
    argv = ["export", str(saved), "--format", "solr", "--feature-names", f"@{names}",
            "--name", "m1", "--store", "st", "--missing-as-zero", "-o", str(out)]  # fmt: skip
    assert main(argv) == 0
    body = json.loads(out.read_text())
    assert (body["name"], body["store"]) == ("m1", "st")
    assert {f["name"] for f in body["features"]} <= {"x", "y", "z"}
    argv = ["export", str(saved), "--format", "onnx", "--dtype", "float64", "-o", str(out)]
    if pytest.importorskip("onnx"):
        assert main(argv) == 0


def test_cli_exports_a_fusion_model(tmp_path) -> None:
    from rankboost.fusion import Qrels, Run

    qs = np.repeat([f"q{i}" for i in range(10)], 5)
    ds = np.tile([f"d{j}" for j in range(5)], 10)
    rel = (np.tile(np.arange(5), 10) < 2).astype(int)
    runs = [Run(qs, ds, np.tile([1, 3, 2, 4, 5], 10), name="a")]
    fusion = rb.RankFusion(n_rounds=5).fit(runs, Qrels(qs, ds, rel))
    fusion.save(tmp_path / "fusion.json")
    out = tmp_path / "dump.json"
    assert (
        main(["export", str(tmp_path / "fusion.json"), "-f", "xgboost-dump", "-o", str(out)]) == 0
    )
    assert json.loads(out.read_text())[0]["split"] == fusion.feature_names_[0]


@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        (["--format", "solr", "--missing-as-zero", "--feature-names", "a,b"], 1, "must be 3"),
        (["--format", "ranklib"], 1, "missing_as_zero=True"),
        (["--format", "xgboost", "--rounds", "9"], 1, "--rounds 9 is not between 0 and the 3"),
        (["--format", "xgboost", "--feature-names", "a,b"], 1, "must be 3 non-empty"),
        (["--format", "xgboost", "--feature-names", "@nope.txt"], 1, "does not exist"),
    ],
)
def test_cli_errors(saved, tmp_path, capsys, argv, status, message) -> None:
    out = tmp_path / "out.txt"
    assert main(["export", str(saved), "-o", str(out), *argv]) == status
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert not out.exists()


def test_cli_unknown_format_is_a_usage_error(saved, tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["export", str(saved), "-f", "pmml", "-o", str(tmp_path / "o")])
    assert exc.value.code == 2
    assert "invalid choice: 'pmml'" in capsys.readouterr().err


def test_cli_refuses_to_overwrite_the_model(saved, capsys) -> None:
    before = saved.read_bytes()
    assert main(["export", str(saved), "-f", "xgboost", "-o", str(saved)]) == 2  # usage
    assert "is the model file" in capsys.readouterr().err
    assert saved.read_bytes() == before


def test_cli_missing_model(tmp_path, capsys) -> None:
    argv = ["export", str(tmp_path / "no.json"), "-f", "xgboost", "-o", str(tmp_path / "o")]
    assert main(argv) == 1
    assert "does not exist" in capsys.readouterr().err
