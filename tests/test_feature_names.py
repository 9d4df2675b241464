"""Issue 22: feature names end to end (fit, the CLI, the saved model, DataFrames, every
export), the examples of ``rankboost export --help`` run as written, and the estimator's
state after a fit that raised."""

from __future__ import annotations

import json
import shlex
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import rankboost as rb
from rankboost.cli import main
from rankboost.datasets import MQ2008_FEATURE_NAMES, dump_svmlight, load_feature_names
from rankboost.export import export_bytes
from rankboost.sklearn import RankBoostRanker

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture(scope="module")
def mq():
    tr, _, te = rb.datasets.load_mq2008(1)
    return tr, te


def test_fit_takes_feature_names(mq):
    tr, te = mq
    est = RankBoostRanker(n_estimators=5).fit(
        tr.X, tr.y, qid=tr.qid, feature_names=tr.feature_names
    )
    assert est.model_.feature_names == list(MQ2008_FEATURE_NAMES)
    assert set(est.history_["feature_label"]) <= set(MQ2008_FEATURE_NAMES)
    assert not hasattr(est, "feature_names_in_")  # a numpy X: no sklearn name checks
    with pytest.raises(ValueError, match="46 unique names"):
        RankBoostRanker(n_estimators=2).fit(tr.X, tr.y, qid=tr.qid, feature_names=["a"])


def test_predict_after_a_fit_that_raised_is_not_fitted(mq):
    tr, _ = mq
    est = RankBoostRanker(n_estimators=3)
    with pytest.raises(ValueError, match="unique names"):
        est.fit(tr.X, tr.y, qid=tr.qid, feature_names=["a", "b"])
    with pytest.raises(NotFittedError):
        est.predict(tr.X)
    est.fit(tr.X, tr.y, qid=tr.qid)
    with pytest.raises(ValueError, match="unique names"):
        est.fit(tr.X, tr.y, qid=tr.qid, feature_names=["a"])
    with pytest.raises(NotFittedError):  # no stale model from the fit before
        est.predict(tr.X)


def test_saved_model_scores_a_dataframe_by_column_name(mq, tmp_path):
    pd = pytest.importorskip("pandas")
    tr, te = mq
    model = rb.train(tr.X, rb.LayeredFeedback(tr.y, tr.qid), 10, feature_names=tr.feature_names)
    model.save(tmp_path / "m.json")
    loaded = rb.load_model(tmp_path / "m.json")
    df = pd.DataFrame(te.X, columns=tr.feature_names)
    shuffled = df[list(np.random.default_rng(0).permutation(df.columns))]
    want = model.decision_function(te.X)
    np.testing.assert_array_equal(loaded.decision_function(shuffled), want)
    np.testing.assert_array_equal(loaded.predict(df.assign(extra=1.0)), want)
    with pytest.raises(ValueError, match=r"no column named 'pagerank'.*Rename the columns"):
        loaded.decision_function(df.drop(columns=["pagerank"]))


def _letor_files(tmp_path, mq, n=400):
    tr, _ = mq
    dump_svmlight(tmp_path / "train.txt", tr.X[:n], tr.y[:n], tr.qid[:n])
    (tmp_path / "names.txt").write_text("\n".join(MQ2008_FEATURE_NAMES) + "\n")


def test_cli_train_feature_names_reach_info_and_exports(mq, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _letor_files(tmp_path, mq)
    assert main(["train", "train.txt", "--feature-names", "names.txt", "--rounds", "10",
                 "-q", "-o", "model.json"]) == 0  # fmt: skip
    model = rb.load_model("model.json")
    assert model.feature_names == list(MQ2008_FEATURE_NAMES)
    capsys.readouterr()
    assert main(["info", "model.json"]) == 0
    info = capsys.readouterr().out
    assert any(name in info for name in model.history["feature_label"])
    (tmp_path / "bad.txt").write_text("a\nb\n")
    assert main(["train", "train.txt", "--feature-names", "bad.txt", "-q", "-o", "m2.json"]) == 1
    assert "2 feature names but the data has 46" in capsys.readouterr().err


def test_export_help_examples_run_as_written(mq, tmp_path, monkeypatch, capsys):
    """Every 'rankboost ...' line of 'rankboost export --help' and of docs/serving.md's
    shell blocks, in a folder holding train.txt and names.txt."""
    pytest.importorskip("onnx")
    from rankboost.cli.export import _EPILOG

    monkeypatch.chdir(tmp_path)
    _letor_files(tmp_path, mq)
    (tmp_path / "mq2008").mkdir()  # docs/serving.md: the README's mq2008/ (datasets write)
    _letor_files(tmp_path / "mq2008", mq)
    (tmp_path / "mq2008" / "names.txt").replace(tmp_path / "mq2008" / "feature_names.txt")
    lines = [s.strip() for s in _EPILOG.splitlines() if s.strip().startswith("rankboost ")]
    text = (DOCS / "serving.md").read_text()
    blocks = [b.split("```")[0] for b in text.split("```sh\n")[1:]]
    lines += [s.strip() for b in blocks for s in b.splitlines() if s.startswith("rankboost ")]
    train = [s for s in lines if s.startswith("rankboost train")]
    assert train
    assert len(lines) >= 8
    for line in train + [s for s in lines if not s.startswith("rankboost train")]:
        argv = shlex.split(line.rstrip(":)"))[1:]
        if argv[0] == "train":
            argv += ["-q", "--rounds", "10"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rb.export.ExportWarning)
            assert main(argv) == 0, line
    body = json.loads((tmp_path / "body.json").read_text())
    tree = json.loads(body["model"]["model"]["definition"])[0]
    assert tree["split"] in MQ2008_FEATURE_NAMES


def test_export_reads_a_deeply_nested_file_with_a_clean_error(tmp_path, capsys):
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    out = str(tmp_path / "x.json")
    assert main(["export", str(tmp_path / "deep.json"), "--format", "xgboost", "-o", out]) == 1
    err = capsys.readouterr().err
    assert "nested too deeply" in err
    assert "Traceback" not in err


def _model(names):
    return rb.RankBoostModel.from_arrays(
        {"feature": [0, 1], "kind": [0, 0], "threshold": [0.5, 1.0], "default": [0.0, 0.0],
         "alpha": [1.0, 2.0]},
        {"r": [0.5, 0.5], "z": [0.8, 0.8], "rloss": [0.2, 0.2], "bound": [0.8, 0.64]},
        n_features=2, feature_names=names,
    )  # fmt: skip


def test_xgboost_reads_non_ascii_names_back(tmp_path):
    xgb = pytest.importorskip("xgboost")
    names = ["prix_é", "日本"]
    _model(names).export(tmp_path / "m.json", format="xgboost")
    booster = xgb.Booster(model_file=str(tmp_path / "m.json"))
    assert booster.feature_names == names
    dump = json.loads(export_bytes(_model(names), "xgboost-dump"))
    assert {t["split"] for t in dump} == set(names)


@pytest.mark.parametrize("fmt", ["es-xgboost", "es-ranklib", "solr"])
def test_search_engine_names_read_back_or_refused(fmt):
    quoted = ['say "hi"', "back\\slash"]
    doc = json.loads(export_bytes(_model(quoted), fmt))
    if fmt == "solr":
        assert [f["name"] for f in doc["features"]] == quoted
    elif fmt == "es-xgboost":
        trees = json.loads(doc["model"]["model"]["definition"])
        assert {t["split"] for t in trees} == set(quoted)
    for bad in ("new\nline", "tab\there"):
        with pytest.raises(ValueError, match="control character"):
            export_bytes(_model([bad, "b"]), fmt)


def test_load_feature_names(tmp_path):
    (tmp_path / "n.txt").write_text("# comment\n a \n\nb\n")
    assert load_feature_names(tmp_path / "n.txt") == ["a", "b"]
    (tmp_path / "d.txt").write_text("a\na\n")
    with pytest.raises(ValueError, match="appears twice"):
        load_feature_names(tmp_path / "d.txt")
    with pytest.raises(FileNotFoundError):
        load_feature_names(tmp_path / "none.txt")
