"""RankBoostModel: scoring, staged scores, JSON persistence (STYLE rule 10)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import rankboost as rb
from conftest import letor_like, train_quiet
from rankboost import model as model_module
from rankboost.model import FORMAT_NAME, FORMAT_VERSION, RankBoostModel, load_model


@pytest.fixture(scope="module")
def trained():
    X, y, qid = letor_like(n_queries=20, seed=21)
    out = {}
    for weak_ranker in ("threshold", "feature", "both"):
        out[weak_ranker] = train_quiet(
            X, rb.LayeredFeedback(y, qid), 40, weak_ranker=weak_ranker, thresholds=16,
            feature_names=[f"f{i}" for i in range(X.shape[1])],
        )  # fmt: skip
    return X, out


def test_compiled_step_functions_equal_staged_sums(trained):
    """decision_function (compiled per-feature step functions) == sum_t alpha_t h_t(x) to
    1e-12, after every round, on training rows and on new rows (NaNs, out-of-range values,
    values exactly at thresholds)."""
    X, models = trained
    rng = np.random.default_rng(0)
    X_new = rng.normal(size=(200, X.shape[1])) * 3
    X_new[rng.random(X_new.shape) < 0.15] = np.nan
    for model in models.values():
        # rows sitting exactly on every threshold / cut the model uses
        at = []
        for h in model.rankers:
            for v in [h.threshold] if h.kind == "threshold" else h.cuts:
                if np.isfinite(v):
                    row = X[len(at) % X.shape[0]].copy()
                    row[h.feature] = v
                    at.append(row)
        at = np.array(at)
        for data in (X, X_new, at):
            manual = np.zeros(data.shape[0])
            for t, H in enumerate(model.staged_decision_function(data), start=1):
                h = model.rankers[t - 1]
                manual = manual + model.alphas[t - 1] * h.predict(data)
                np.testing.assert_allclose(H, manual, rtol=0, atol=1e-12)
                if t % 7 == 0 or t == model.n_rounds:
                    np.testing.assert_allclose(
                        model.decision_function(data, n_rounds=t), H, rtol=0, atol=1e-12
                    )
            np.testing.assert_allclose(model.decision_function(data), manual, rtol=0, atol=1e-12)


def test_feature_function_reproduces_scores(trained):
    X, models = trained
    model = models["both"]
    total = np.zeros(X.shape[0])
    for i in range(X.shape[1]):
        breaks, values, missing = model.feature_function(i)
        col = X[:, i]
        part = values[np.searchsorted(breaks, col, side="left").clip(max=values.size - 1)]
        total += np.where(np.isnan(col), missing, part)
    np.testing.assert_allclose(total, model.decision_function(X), rtol=0, atol=1e-12)


def test_predict_is_decision_function(trained):
    X, models = trained
    np.testing.assert_array_equal(
        models["threshold"].predict(X), models["threshold"].decision_function(X)
    )


@pytest.mark.parametrize("weak_ranker", ["threshold", "feature", "both"])
def test_json_round_trip_is_exact(trained, tmp_path, weak_ranker):
    X, models = trained
    model = models[weak_ranker]
    path = tmp_path / "model.json"
    model.save(path)
    loaded = load_model(path)
    assert loaded == model
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    for a, b in zip(
        loaded.staged_decision_function(X), model.staged_decision_function(X), strict=True
    ):
        np.testing.assert_array_equal(a, b)
    for key in model.history:
        np.testing.assert_array_equal(loaded.history[key], model.history[key], strict=True)
    assert loaded.feature_names == model.feature_names
    assert loaded.params == model.params
    assert loaded.stop_reason == model.stop_reason
    np.testing.assert_array_equal(loaded.feature_importances_, model.feature_importances_)
    # and the file is what it says it is
    data = json.loads(path.read_text())
    assert data["format"] == FORMAT_NAME
    assert data["version"] == FORMAT_VERSION
    assert os.listdir(tmp_path) == ["model.json"]  # no temp file left behind


def test_round_trip_keeps_infinite_thresholds_and_stop_reason(tmp_path):
    """theta = -inf ("the feature is defined") survives JSON, as does a stop reason."""
    X = np.array([[np.nan], [np.nan], [1.0], [2.0]])
    with pytest.warns(rb.TrainingStoppedWarning, match="orders every crucial pair"):
        model = rb.train(X, rb.BipartiteFeedback([0, 0, 1, 1]), 5, thresholds="all")
    assert model.rankers[0].threshold == -np.inf
    model.save(tmp_path / "m.json")
    loaded = load_model(tmp_path / "m.json")
    assert loaded.rankers[0].threshold == -np.inf
    assert loaded.stop_reason == model.stop_reason
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_round_trip_of_an_empty_model(tmp_path):
    X = np.ones((4, 2))
    with pytest.warns(rb.TrainingStoppedWarning, match="no weak ranker"):
        model = rb.train(X, rb.BipartiteFeedback([0, 1, 0, 1]), 5)
    model.save(tmp_path / "m.json")
    loaded = load_model(tmp_path / "m.json")
    assert loaded.n_rounds == 0
    np.testing.assert_array_equal(loaded.predict(X), np.zeros(4))


def test_early_stopping_best_iteration_round_trip(tmp_path):
    X, y, qid = letor_like(n_queries=10, seed=22)

    def stop_at_five(env):
        if env.iteration == 4:
            raise rb.EarlyStopException(best_iteration=3)

    model = rb.train(X, rb.LayeredFeedback(y, qid), 20, callbacks=[stop_at_five])
    assert model.n_rounds == 5
    assert model.best_iteration == 3
    model.save(tmp_path / "m.json")
    assert load_model(tmp_path / "m.json").best_iteration == 3


def test_numpy_integer_parameters_can_be_saved(tmp_path):
    """Non-regression of engine-tests.md bug #3 (fixed in 22a2f06)."""
    X, y, qid = letor_like(n_queries=5, seed=23)
    model = train_quiet(X, rb.LayeredFeedback(y, qid), 3, thresholds=np.int64(16))
    model.save(tmp_path / "m.json")
    assert load_model(tmp_path / "m.json").params["thresholds"] == 16


# --------------------------------------------------------------------------- bad files


def saved_dict(trained):
    _, models = trained
    return models["both"].to_dict()


def write_json(path, data):
    path.write_text(json.dumps(data))
    return path


def test_not_json(tmp_path):
    path = tmp_path / "m.json"
    path.write_text("this is not {json")
    with pytest.raises(ValueError, match=r"is not valid JSON"):
        load_model(path)


@pytest.mark.parametrize("data", [[1, 2, 3], {"format": "xgboost"}, {"version": 1}, "model"])
def test_wrong_format(tmp_path, data):
    with pytest.raises(ValueError, match=r'not a rankboost model: the JSON has no "format"'):
        load_model(write_json(tmp_path / "m.json", data))


def test_future_version(tmp_path, trained):
    data = saved_dict(trained)
    data["version"] = FORMAT_VERSION + 1
    with pytest.raises(ValueError, match=r"newer than the 1 this rankboost reads; upgrade"):
        load_model(write_json(tmp_path / "m.json", data))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.__setitem__("version", "1"), r"version is '1', not an int"),
        (lambda d: d.pop("rounds"), r"malformed model file: missing or bad field 'rounds'"),
        (lambda d: d["history"].pop("alpha"), r"malformed model file: missing or bad field"),
        (lambda d: d["rounds"][0].__setitem__("kind", "tree"), r"unknown kind 'tree'"),
        (lambda d: d["rounds"][0].__setitem__("feature", 99), r"uses feature 99 of"),
        (lambda d: d["history"]["alpha"].__setitem__(0, "big"), r"history.alpha is the string"),
        (lambda d: d["history"]["z"].pop(), r"rounds and history have different lengths"),
        (lambda d: d["history"].__setitem__("r", [None]), r"history.r is None, not a number"),
        (lambda d: d.__setitem__("n_features", "many"), r"malformed model file"),
    ],
)
def test_malformed_file(tmp_path, trained, mutate, message):
    data = saved_dict(trained)
    mutate(data)
    with pytest.raises(ValueError, match=message):
        load_model(write_json(tmp_path / "m.json", data))


def test_from_dict_rejects_non_dict():
    with pytest.raises(ValueError, match=r"not a rankboost model"):
        RankBoostModel.from_dict(None)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "absent.json")


# --------------------------------------------------------------------------- atomic write


def test_failed_serialisation_keeps_existing_file(tmp_path, trained, monkeypatch):
    _, models = trained
    path = tmp_path / "m.json"
    models["threshold"].save(path)
    before = path.read_bytes()

    def boom(self):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(RankBoostModel, "to_dict", boom)
    with pytest.raises(RuntimeError, match="disk on fire"):
        models["both"].save(path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.json"]


def test_failed_write_keeps_existing_file_and_removes_temp(tmp_path, trained, monkeypatch):
    """A failure after the temp file is written (at the rename) leaves the old model intact
    and no temp file behind."""
    _, models = trained
    path = tmp_path / "m.json"
    models["threshold"].save(path)
    before = path.read_bytes()
    seen = []

    def failing_replace(src, dst):
        seen.append(os.path.basename(src))
        assert os.path.exists(src)  # the new content was written to a temp file first
        raise OSError("rename failed")

    monkeypatch.setattr(model_module.os, "replace", failing_replace)
    with pytest.raises(OSError, match="rename failed"):
        models["both"].save(path)
    monkeypatch.undo()
    assert seen
    assert seen[0] != "m.json"
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.json"]
    assert load_model(path) == models["threshold"]


def test_save_accepts_str_path(tmp_path, trained):
    _, models = trained
    models["feature"].save(str(tmp_path / "m.json"))
    assert load_model(str(tmp_path / "m.json")) == models["feature"]
