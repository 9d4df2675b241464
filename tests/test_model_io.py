"""RankBoostModel: arrays, step functions, scoring, staged scores, JSON persistence (STYLE
rule 10)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankboost as rb
from conftest import letor_like, train_quiet
from rankboost import model as model_module
from rankboost._validation import FLOAT32_OVERFLOW
from rankboost.model import (
    FORMAT_NAME,
    FORMAT_VERSION,
    HISTORY_KEYS,
    RankBoostModel,
    Rounds,
    StepFunction,
    load_model,
    to_float32,
)
from rankboost.weak_rankers import FeatureRanker, ThresholdRanker

GOLDEN = Path(__file__).parent / "data" / "golden_mq2008_fold1.json"


def interleave(a: RankBoostModel, b: RankBoostModel) -> RankBoostModel:
    """A mixed model: the rounds of ``a`` and ``b`` alternately (training never mixes the
    kinds: a real-valued ranker's r is the mean of threshold rankers' r at its cuts)."""
    ra, rb_ = a.rankers, b.rankers
    ha, hb = a.history, b.history
    rankers, hist = [], {k: [] for k in HISTORY_KEYS}
    for t in range(max(len(ra), len(rb_))):
        for rk, h in ((ra, ha), (rb_, hb)):
            if t < len(rk):
                rankers.append(rk[t])
                for k in HISTORY_KEYS:
                    hist[k].append(h[k][t])
    return RankBoostModel(
        rankers,
        {k: np.array(v) for k, v in hist.items()},
        a.n_features,
        feature_names=a.feature_names,
        params={"mixed": True},
    )


@pytest.fixture(scope="module")
def trained():
    X, y, qid = letor_like(n_queries=20, seed=21)
    out = {}
    for weak_ranker in ("threshold", "feature", "both"):
        out[weak_ranker] = train_quiet(
            X, rb.LayeredFeedback(y, qid), 40, weak_ranker=weak_ranker, thresholds=16,
            feature_names=[f"f{i}" for i in range(X.shape[1])],
        )  # fmt: skip
    out["mixed"] = interleave(out["threshold"], out["feature"])
    assert set(out["mixed"].rounds.kind.tolist()) == {0, 1}
    return X, out


# --------------------------------------------------------------------------- brute force


def brute_h(kind: int, threshold: float, cuts, default: float, x: np.ndarray) -> np.ndarray:
    """``h_t(x)`` from the definitions by elementwise comparison (no searchsorted, no step
    function), with ``x`` rounded to float32 first: the numeric domain of rankboost
    (``rankboost.binning``). A real-valued ranker is the fraction of its cuts below ``x``."""
    with np.errstate(over="ignore"):
        x32 = np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)
    if kind == 0:
        h = np.where(x32 > threshold, 1.0, 0.0)
    else:
        below = np.asarray(cuts, dtype=np.float64)[None, :] < x32[:, None]
        h = np.count_nonzero(below, axis=1) / len(cuts)
    return np.where(np.isnan(x32), default, h)


def brute_feature(rounds: Rounds, n_rounds: int, feature: int, x: np.ndarray) -> np.ndarray:
    """``sum_{t < n_rounds, f_t = feature} alpha_t h_t(x)`` in round order."""
    out = np.zeros(x.shape[0])
    for t in range(n_rounds):
        if rounds.feature[t] == feature:
            h = brute_h(
                int(rounds.kind[t]),
                float(rounds.threshold[t]),
                rounds.cuts_of(t).tolist(),
                float(rounds.default[t]),
                x,
            )
            out += float(rounds.alpha[t]) * h
    return out


def probe_points(rounds: Rounds, rng: np.random.Generator) -> np.ndarray:
    """Every threshold and cut, the float64 and float32 numbers just above and below it, the
    float32 midpoints on either side and their float64 neighbours, NaN, +-inf, randoms."""
    pts = [rounds.threshold[rounds.kind == 0], rounds.cuts]
    base = np.concatenate(pts)
    base = base[~np.isnan(base)]
    with np.errstate(over="ignore"):
        b32 = base.astype(np.float32)
        up32 = np.nextafter(b32, np.float32(np.inf)).astype(np.float64)
        down32 = np.nextafter(b32, np.float32(-np.inf)).astype(np.float64)
        mids = np.concatenate([(b32 + up32) / 2, (b32 + down32) / 2])
    mids = mids[np.isfinite(mids)]
    return np.concatenate(
        [
            base,
            np.nextafter(base, np.inf),
            np.nextafter(base, -np.inf),
            up32,
            down32,
            mids,
            np.nextafter(mids, np.inf),
            np.nextafter(mids, -np.inf),
            [np.nan, np.inf, -np.inf, 0.0],
            rng.normal(size=20) * 3,
        ]
    )


def check_step_functions(model: RankBoostModel, n_rounds: int, seed: int = 0) -> None:
    """step_functions(n_rounds) == brute force, bit for bit, at every probe point; the
    model's scores == the sum of the step functions, bit for bit, and == the naive sum over
    rounds to 1e-12."""
    rng = np.random.default_rng(seed)
    rounds = model.rounds
    steps = model.step_functions(n_rounds)
    used = sorted(set(rounds.feature[:n_rounds].tolist()))
    assert list(steps) == used
    x = probe_points(rounds, rng)
    for i, sf in steps.items():
        assert isinstance(sf, StepFunction)
        assert np.all(np.diff(sf.breaks) > 0)
        assert sf.values.shape == (sf.breaks.shape[0] + 1,)
        want = brute_feature(rounds, n_rounds, i, x)
        np.testing.assert_array_equal(sf(x), want, err_msg=f"feature {i}")
        # the documented convention, spelled out
        idx = np.searchsorted(sf.breaks, to_float32(x), side="left")
        manual = np.where(np.isnan(x), sf.missing, sf.values[np.minimum(idx, len(sf.breaks))])
        np.testing.assert_array_equal(manual, want)
        assert sf.missing == brute_feature(rounds, n_rounds, i, np.array([np.nan]))[0]
    # a matrix whose columns run through the probe points (cycled; X may not hold +-inf, nor
    # values that float32 rounds to +-inf)
    x = x[np.isnan(x) | (np.abs(x) < FLOAT32_OVERFLOW)]
    X = np.column_stack([np.roll(x, 3 * j) for j in range(model.n_features)])
    total = np.zeros(X.shape[0])
    for i in used:
        total += brute_feature(rounds, n_rounds, i, X[:, i])
    np.testing.assert_array_equal(model.decision_function(X, n_rounds=n_rounds), total)
    naive = np.zeros(X.shape[0])
    for t in range(n_rounds):
        col = X[:, rounds.feature[t]]
        cuts = rounds.cuts_of(t).tolist()
        h = brute_h(int(rounds.kind[t]), rounds.threshold[t], cuts, rounds.default[t], col)
        naive += rounds.alpha[t] * h
    np.testing.assert_allclose(total, naive, rtol=0, atol=1e-12)


_VALUES = [-np.inf, -1.5, -0.1, 0.0, 0.3, 1.0, 2.5, np.inf]


@st.composite
def random_models(draw, kinds=(0, 1)):
    """Models built from arrays: few distinct values (shared breaks), infinite thresholds
    and cuts, duplicate cuts, any mix of kinds."""
    n_features = draw(st.integers(1, 3))
    n_rounds = draw(st.integers(0, 8))
    value = st.one_of(st.sampled_from(_VALUES), st.floats(-10, 10, allow_nan=False))
    feature, kind, threshold, default, alpha, cuts, offsets = [], [], [], [], [], [], [0]
    for _ in range(n_rounds):
        feature.append(draw(st.integers(0, n_features - 1)))
        k = draw(st.sampled_from(kinds))
        kind.append(k)
        if k == 0:
            threshold.append(draw(value))
        else:
            threshold.append(np.nan)
            cuts.extend(sorted(draw(st.lists(value, min_size=1, max_size=5))))
        offsets.append(len(cuts))
        default.append(draw(st.sampled_from([0.0, 1.0, 0.5])))
        alpha.append(draw(st.floats(-3, 3, allow_nan=False)))
    z = np.full(n_rounds, 0.9)
    return RankBoostModel.from_arrays(
        {
            "feature": np.array(feature, dtype=np.int64),
            "kind": np.array(kind, dtype=np.int8),
            "threshold": threshold,
            "default": default,
            "alpha": alpha,
            "cuts": cuts,
            "cut_offsets": offsets,
        },
        {"r": z - 0.5, "z": z, "rloss": z / 2, "bound": np.cumprod(z)},
        n_features,
    )


@pytest.mark.parametrize("kinds", [(0,), (1,), (0, 1)], ids=["threshold", "feature", "mixed"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_step_functions_equal_brute_force_on_built_models(kinds, data):
    model = data.draw(random_models(kinds))
    for k in sorted({0, model.n_rounds // 2, model.n_rounds}):
        check_step_functions(model, k)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    weak_ranker=st.sampled_from(["threshold", "feature"]),
    thresholds=st.sampled_from([4, 16, "all"]),
)
def test_step_functions_equal_brute_force_on_trained_models(seed, weak_ranker, thresholds):
    X, y, qid = letor_like(n_queries=6, n_features=4, seed=seed)
    model = train_quiet(
        X, rb.LayeredFeedback(y, qid), 12, weak_ranker=weak_ranker, thresholds=thresholds
    )
    check_step_functions(model, model.n_rounds, seed)
    check_step_functions(model, model.n_rounds // 2, seed)
    if weak_ranker == "threshold":  # and mixed with a real-valued model of the same data
        other = train_quiet(X, rb.LayeredFeedback(y, qid), 12, weak_ranker="feature")
        check_step_functions(interleave(model, other), model.n_rounds, seed)


@pytest.mark.parametrize("name", ["threshold", "feature", "mixed"])
def test_step_functions_equal_brute_force_on_fixture_models(trained, name):
    _, models = trained
    for k in (1, 17, models[name].n_rounds):
        check_step_functions(models[name], k)


def test_step_function_interval_convention():
    """values[k] on breaks[k-1] < x <= breaks[k]: a value on a threshold is below it."""
    model = RankBoostModel([ThresholdRanker(0, 0.5, 1.0)], _stats(1, alpha=[2.0]), 1)
    (sf,) = model.step_functions().values()
    assert sf.breaks.tolist() == [0.5]
    assert sf.values.tolist() == [0.0, 2.0]
    assert sf.missing == 2.0
    # compared as float32: the next float64 above 0.5 rounds to 0.5, the next float32 is above
    up32 = float(np.nextafter(np.float32(0.5), np.float32(1.0)))
    x = [0.5, np.nextafter(0.5, 1.0), up32, -np.inf, np.inf, np.nan]
    assert sf(x).tolist() == [0.0, 0.0, 2.0, 0.0, 2.0, 2.0]
    assert model.feature_function(0)[1].tolist() == [0.0, 2.0]
    with pytest.raises(AttributeError):
        sf.missing = 1.0  # frozen
    with pytest.raises(ValueError, match="read-only"):
        sf.values[0] = 1.0
    assert sf == StepFunction(np.array([0.5]), np.array([0.0, 2.0]), 2.0)
    assert sf != StepFunction(np.array([0.5]), np.array([0.0, 2.5]), 2.0)


def test_step_functions_checks_n_rounds(trained):
    _, models = trained
    model = models["mixed"]
    assert model.step_functions(0) == {}
    with pytest.raises(ValueError, match="n_rounds must be between 0 and 80"):
        model.step_functions(81)
    with pytest.raises(TypeError, match="n_rounds must be an int or None"):
        model.step_functions(2.0)
    # a fresh dict every call: the cache cannot be emptied from outside
    model.step_functions().clear()
    assert model.step_functions()


def _stats(n, alpha=None):
    out = {k: np.full(n, 0.5) for k in ("r", "z", "rloss", "bound")}
    out["alpha"] = np.ones(n) if alpha is None else np.asarray(alpha, dtype=float)
    return out


# --------------------------------------------------------------------------- the arrays


def test_state_is_arrays_and_views_are_rebuilt(trained):
    _, models = trained
    model = models["mixed"]
    r = model.rounds
    assert r.feature.dtype == np.int64
    assert r.kind.dtype == np.int8
    for name in ("threshold", "default", "alpha", "cuts"):
        assert getattr(r, name).dtype == np.float64
    assert r.cut_offsets.dtype == np.int64
    assert r.cut_offsets.shape == (len(r) + 1,)
    assert np.all(np.isnan(r.threshold[r.kind == 1]))
    assert np.all(np.diff(r.cut_offsets)[r.kind == 0] == 0)
    assert np.all(np.diff(r.cut_offsets)[r.kind == 1] > 0)
    for a in (r.feature, r.kind, r.threshold, r.alpha, r.cuts, r.cut_offsets):
        assert not a.flags.writeable
    # history: the public dict of 8 keys and the labels, rebuilt from the arrays, copies
    h = model.history
    assert list(h) == [*HISTORY_KEYS, "feature_label"]
    np.testing.assert_array_equal(h["feature"], r.feature)
    np.testing.assert_array_equal(h["threshold"], r.threshold)
    h["alpha"][:] = 0.0
    np.testing.assert_array_equal(model.history["alpha"], r.alpha)
    assert model.alphas is not r.alpha
    np.testing.assert_array_equal(model.alphas, r.alpha)
    # rankers: rebuilt objects, the same as the rounds
    rankers = model.rankers
    assert len(rankers) == model.n_rounds == len(r)
    for t, h_t in enumerate(rankers):
        assert h_t.feature == r.feature[t]
        if r.kind[t] == 0:
            assert h_t == ThresholdRanker(int(r.feature[t]), r.threshold[t], r.default[t])
        else:
            assert isinstance(h_t, FeatureRanker)
            np.testing.assert_array_equal(h_t.cuts, r.cuts_of(t))
    rankers.clear()
    assert len(model.rankers) == model.n_rounds
    with pytest.raises(AttributeError):
        model.history = {}  # a read-only view


def test_pickle_keeps_the_arrays_read_only(trained):
    import pickle

    X, models = trained
    model = models["mixed"]
    model.decision_function(X)  # fills the step-function cache
    loaded = pickle.loads(pickle.dumps(model))
    assert loaded == model
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    assert not loaded.rounds.cuts.flags.writeable
    assert not next(iter(loaded.step_functions().values())).values.flags.writeable


def test_from_arrays_equals_the_ranker_constructor(trained):
    _, models = trained
    model = models["mixed"]
    r = model.rounds
    h = model.history
    again = RankBoostModel.from_arrays(
        r, {k: h[k] for k in ("r", "z", "rloss", "bound")}, model.n_features,
        feature_names=model.feature_names, params=model.params,
    )  # fmt: skip
    assert again == model
    assert again.rounds == r
    from_mapping = RankBoostModel.from_arrays(
        {k: getattr(r, k) for k in ("feature", "kind", "threshold", "default", "alpha",
                                    "cuts", "cut_offsets")},
        h, model.n_features, feature_names=model.feature_names, params=model.params,
    )  # fmt: skip
    assert from_mapping == model
    by_name = Rounds(
        feature=r.feature, kind=[("threshold", "feature")[k] for k in r.kind],
        threshold=r.threshold, default=r.default, alpha=r.alpha, cuts=r.cuts,
        cut_offsets=r.cut_offsets,
    )  # fmt: skip
    assert by_name == r


def test_rounds_from_rankers_and_ranker():
    rankers = [ThresholdRanker(1, -np.inf, 0.0), FeatureRanker(0, np.array([1.0, 2.0]), 1.0)]
    r = Rounds.from_rankers(rankers, [0.5, 0.25])
    assert r.kind.tolist() == [0, 1]
    assert r.cut_offsets.tolist() == [0, 0, 2]
    assert r.ranker(0) == rankers[0]
    assert r.ranker(1).cuts.tolist() == [1.0, 2.0]
    X = np.array([[0.5, 3.0], [1.5, np.nan], [9.0, -1.0]])
    for t in range(2):
        np.testing.assert_array_equal(r.predict(t, X), rankers[t].predict(X))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"feature": [0, 1, 2]}, r"different lengths"),
        ({"feature": [0.0, 1.0]}, r"feature must hold integers"),
        ({"feature": [0, -1]}, r"round 1 has a negative feature"),
        ({"kind": [0, 2]}, r"round 1 has unknown kind 2"),
        ({"kind": ["threshold", "tree"]}, r"round 1 has unknown kind 'tree'"),
        ({"threshold": [np.nan, np.nan]}, r"round 0 is a threshold ranker with threshold nan"),
        ({"threshold": [0.0, 0.5]}, r"round 1 is a real-valued ranker but its threshold"),
        ({"cut_offsets": [0, 1, 2]}, r"round 0 is a threshold ranker but has 1 cuts"),
        ({"cut_offsets": [0, 0, 0], "cuts": []}, r"round 1 is a real-valued ranker with no"),
        ({"cut_offsets": [0, 0, 1]}, r"cut_offsets must rise from 0 to len\(cuts\) = 2"),
        ({"cuts": [2.0, 1.0]}, r"round 1 has cuts that are not sorted"),
        ({"cuts": [1.0, np.nan]}, r"round 1 has nan among its cuts"),
        ({"alpha": [[1.0], [2.0]]}, r"alpha must be 1-D"),
        ({"default": ["a", "b"]}, r"default must hold numbers"),
    ],
)
def test_rounds_rejects_inconsistent_arrays(change, message):
    good = {
        "feature": [0, 1], "kind": [0, 1], "threshold": [0.5, np.nan], "default": [0.0, 1.0],
        "alpha": [1.0, 0.5], "cuts": [1.0, 2.0], "cut_offsets": [0, 0, 2],
    }  # fmt: skip
    Rounds(**good)
    with pytest.raises(ValueError, match=message):
        Rounds(**{**good, **change})


def test_constructors_reject_disagreeing_history(trained):
    _, models = trained
    model = models["threshold"]
    h = model.history
    RankBoostModel(model.rankers, h, model.n_features)
    bad = {**h, "threshold": h["threshold"] + 1.0}
    with pytest.raises(ValueError, match=r"rounds\[0\] disagrees with history \(threshold\)"):
        RankBoostModel(model.rankers, bad, model.n_features)
    bad = {**h, "z": h["z"][:-1]}
    with pytest.raises(ValueError, match="rounds and history have different lengths"):
        RankBoostModel(model.rankers, bad, model.n_features)
    with pytest.raises(ValueError, match=r"history has no \['bound'\]"):
        RankBoostModel.from_arrays(model.rounds, {k: h[k] for k in ("r", "z", "rloss")}, 6)
    with pytest.raises(ValueError, match=r"uses feature \d of 1"):
        RankBoostModel(model.rankers, h, 1)


# --------------------------------------------------------------------------- scoring


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
        rankers = model.rankers
        for data in (X, X_new, at):
            manual = np.zeros(data.shape[0])
            for t, H in enumerate(model.staged_decision_function(data), start=1):
                h = rankers[t - 1]
                manual = manual + model.alphas[t - 1] * h.predict(data)
                np.testing.assert_array_equal(H, manual)  # the same sums in the same order
                if t % 7 == 0 or t == model.n_rounds:
                    np.testing.assert_allclose(
                        model.decision_function(data, n_rounds=t), H, rtol=0, atol=1e-12
                    )
            np.testing.assert_allclose(model.decision_function(data), manual, rtol=0, atol=1e-12)


def test_feature_function_reproduces_scores(trained):
    X, models = trained
    model = models["mixed"]
    total = np.zeros(X.shape[0])
    for i in range(X.shape[1]):
        breaks, values, missing = model.feature_function(i)
        col = X[:, i]
        idx = np.searchsorted(breaks, to_float32(col), side="left")
        part = values[idx.clip(max=values.size - 1)]
        total += np.where(np.isnan(col), missing, part)
    np.testing.assert_array_equal(total, model.decision_function(X))
    # feature_function is step_functions, as copies; an unused feature is 0
    sf = model.step_functions()[int(model.rounds.feature[0])]
    breaks, values, missing = model.feature_function(int(model.rounds.feature[0]))
    np.testing.assert_array_equal(breaks, sf.breaks)
    assert values.flags.writeable
    assert missing == sf.missing
    breaks, values, missing = model.feature_function(model.n_features + 3)
    assert breaks.size == 0
    assert values.tolist() == [0.0]
    assert missing == 0.0


def test_predict_is_decision_function(trained):
    X, models = trained
    np.testing.assert_array_equal(
        models["threshold"].predict(X), models["threshold"].decision_function(X)
    )


def test_feature_importances_read_the_rounds(trained):
    _, models = trained
    model = models["mixed"]
    h = model.history
    gain = np.bincount(h["feature"], -np.log(h["z"]), minlength=model.n_features)
    np.testing.assert_allclose(model.feature_importances("gain"), gain / gain.sum())
    split = np.bincount(h["feature"], minlength=model.n_features)
    np.testing.assert_allclose(model.feature_importances("split"), split / split.sum())
    alpha = np.bincount(h["feature"], np.abs(h["alpha"]), minlength=model.n_features)
    np.testing.assert_allclose(model.feature_importances("alpha"), alpha / alpha.sum())


# --------------------------------------------------------------------------- JSON round trips


def _j(x: float):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def to_v1(model: RankBoostModel) -> dict:
    """The format-version-1 dict of a model, as rankboost <= 062aba6 wrote it (one object
    per round, the history repeating feature/threshold/default/alpha)."""
    rounds = []
    for h, a in zip(model.rankers, model.alphas, strict=True):
        entry = {"kind": h.kind, "feature": int(h.feature), "default": _j(h.default),
                 "alpha": _j(a)}  # fmt: skip
        if h.kind == "threshold":
            entry["threshold"] = _j(h.threshold)
        else:
            entry["cuts"] = [_j(c) for c in h.cuts]
        rounds.append(entry)
    history = {k: [_j(v) for v in model.history[k]] for k in HISTORY_KEYS if k != "feature"}
    history["feature"] = [int(v) for v in model.history["feature"]]
    return {
        "format": FORMAT_NAME, "version": 1, "n_features": model.n_features,
        "feature_names": model.feature_names, "params": model.params,
        "stop_reason": model.stop_reason, "best_iteration": model.best_iteration,
        "rounds": rounds, "history": history,
    }  # fmt: skip


@pytest.fixture(scope="module")
def golden_v1() -> dict:
    return {k: v["model"] for k, v in json.loads(GOLDEN.read_text())["models"].items()}


def test_version_1_files_load_exactly(golden_v1, tmp_path):
    """The golden (version 1) models load with every field; written again as version 1 they
    give back the very same JSON, and as version 2 the same model."""
    for name, data in golden_v1.items():
        assert data["version"] == 1
        model = RankBoostModel.from_dict(data)
        assert to_v1(model) == data, name
        assert model.n_rounds == len(data["rounds"])
        path = tmp_path / f"{name}.json"
        model.save(path)
        again = load_model(path)
        assert json.loads(path.read_text())["version"] == FORMAT_VERSION == 2
        assert again == model
        assert to_v1(again) == data


@pytest.mark.parametrize("weak_ranker", ["threshold", "feature", "mixed"])
def test_version_1_round_trip(trained, weak_ranker):
    X, models = trained
    model = models[weak_ranker]
    v1 = json.loads(json.dumps(to_v1(model)))
    loaded = RankBoostModel.from_dict(v1)
    assert loaded == model
    assert loaded.rounds == model.rounds
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    for key in HISTORY_KEYS:
        np.testing.assert_array_equal(loaded.history[key], model.history[key], strict=True)


@pytest.mark.parametrize("weak_ranker", ["threshold", "feature", "both", "mixed"])
def test_json_round_trip_is_exact(trained, tmp_path, weak_ranker):
    X, models = trained
    model = models[weak_ranker]
    path = tmp_path / "model.json"
    model.save(path)
    loaded = load_model(path)
    assert loaded == model
    assert loaded.rounds == model.rounds
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    for a, b in zip(
        loaded.staged_decision_function(X), model.staged_decision_function(X), strict=True
    ):
        np.testing.assert_array_equal(a, b)
    for key in model.history:
        np.testing.assert_array_equal(loaded.history[key], model.history[key], strict=True)
    for (i, a), (j, b) in zip(
        loaded.step_functions().items(), model.step_functions().items(), strict=True
    ):
        assert i == j
        assert a == b
    assert loaded.feature_names == model.feature_names
    assert loaded.params == model.params
    assert loaded.stop_reason == model.stop_reason
    np.testing.assert_array_equal(loaded.feature_importances_, model.feature_importances_)
    # and the file is what it says it is: columns of rounds, the four training records
    data = json.loads(path.read_text())
    assert data["format"] == FORMAT_NAME
    assert data["version"] == FORMAT_VERSION == 2
    assert set(data["rounds"]) == {"feature", "kind", "threshold", "default", "alpha", "cuts"}
    assert set(data["history"]) == {"r", "z", "rloss", "bound"}
    assert {len(v) for v in data["rounds"].values()} == {model.n_rounds}
    assert os.listdir(tmp_path) == ["model.json"]  # no temp file left behind


@settings(max_examples=40, deadline=None)
@given(model=random_models())
def test_json_round_trip_of_built_models(model):
    """Infinite thresholds and cuts, any float: the same bits after a round trip (v2, v1)."""
    text = json.dumps(model.to_dict(), allow_nan=False)
    loaded = RankBoostModel.from_dict(json.loads(text))
    assert loaded.rounds == model.rounds
    assert loaded == model
    via_v1 = RankBoostModel.from_dict(json.loads(json.dumps(to_v1(model), allow_nan=False)))
    assert via_v1.rounds == model.rounds
    x = probe_points(model.rounds, np.random.default_rng(1))
    x = x[np.isnan(x) | (np.abs(x) < FLOAT32_OVERFLOW)]
    X = x[:, None].repeat(model.n_features, axis=1)
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))


def test_round_trip_keeps_infinite_thresholds_and_stop_reason(tmp_path):
    """theta = -inf ("the feature is defined") survives JSON, as does a stop reason."""
    X = np.array([[np.nan], [np.nan], [1.0], [2.0]])
    with pytest.warns(rb.TrainingStoppedWarning, match="orders every crucial pair"):
        model = rb.train(X, rb.BipartiteFeedback([0, 0, 1, 1]), 5, thresholds="all")
    assert model.rankers[0].threshold == -np.inf
    model.save(tmp_path / "m.json")
    loaded = load_model(tmp_path / "m.json")
    assert loaded.rankers[0].threshold == -np.inf
    assert loaded.rounds.threshold[0] == -np.inf
    assert loaded.stop_reason == model.stop_reason
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_round_trip_of_an_empty_model(tmp_path):
    X = np.ones((4, 2))
    with pytest.warns(rb.TrainingStoppedWarning, match="no weak ranker"):
        model = rb.train(X, rb.BipartiteFeedback([0, 1, 0, 1]), 5)
    model.save(tmp_path / "m.json")
    loaded = load_model(tmp_path / "m.json")
    assert loaded.n_rounds == 0
    assert loaded.step_functions() == {}
    np.testing.assert_array_equal(loaded.predict(X), np.zeros(4))
    assert RankBoostModel.from_dict(to_v1(model)).n_rounds == 0


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
    return models["mixed"].to_dict()


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
    with pytest.raises(ValueError, match=rf"newer than the {FORMAT_VERSION} this rankboost reads"):
        load_model(write_json(tmp_path / "m.json", data))


def _first(data: dict, kind: str) -> int:
    return data["rounds"]["kind"].index(kind)


def _set(column: str, kind: str, value):
    def mutate(d):
        d["rounds"][column][_first(d, kind)] = value

    return mutate


V2_CASES = [
    (lambda d: d.__setitem__("version", "2"), r"version is '2', not an int"),
    (lambda d: d.__setitem__("version", 0), r"unknown format version 0"),
    (lambda d: d.pop("rounds"), r"malformed model file: missing or bad field 'rounds'"),
    (lambda d: d.__setitem__("rounds", [1, 2]), r"rounds is list, not an object of columns"),
    (lambda d: d["rounds"].pop("cuts"), r"missing or bad field 'cuts'"),
    (lambda d: d["rounds"].__setitem__("alpha", 3.0), r"rounds.alpha is float, not a list"),
    (lambda d: d["rounds"]["default"].pop(), r"the rounds columns have different lengths"),
    (_set("kind", "threshold", "tree"), r"round 0 has unknown kind 'tree'"),
    (_set("feature", "threshold", 1.5), r"rounds.feature\[0\] is 1.5, not an int"),
    (_set("feature", "threshold", True), r"rounds.feature\[0\] is True, not an int"),
    (_set("feature", "feature", 99), r"round 1 uses feature 99 of 6"),
    (_set("feature", "feature", -1), r"round 1 has a negative feature"),
    (_set("threshold", "threshold", "nan"), r"round 0 is a threshold ranker with threshold"),
    (_set("threshold", "feature", 0.5), r"round 1 is a real-valued ranker but its threshold"),
    (_set("threshold", "feature", "big"), r"rounds.threshold\[1\] is the string 'big'"),
    (_set("alpha", "threshold", None), r"rounds.alpha\[0\] is None, not a number"),
    (_set("cuts", "threshold", [0.5]), r"round 0 is a threshold ranker but has 1 cuts"),
    (_set("cuts", "feature", []), r"round 1 is a real-valued ranker with no cuts"),
    (_set("cuts", "feature", [2.0, 1.0]), r"round 1 has cuts that are not sorted"),
    (_set("cuts", "feature", [1.0, "nan"]), r"round 1 has nan among its cuts"),
    (_set("cuts", "feature", [1.0, "x"]), r"rounds.cuts\[1\]\[1\] is the string 'x'"),
    (_set("cuts", "feature", 1.0), r"rounds.cuts\[1\] is float, not a list"),
    (lambda d: d.__setitem__("history", []), r"history is list, not an object of columns"),
    (lambda d: d["history"].pop("bound"), r"missing or bad field 'bound'"),
    (lambda d: d["history"]["z"].pop(), r"rounds and history have different lengths"),
    (lambda d: d["history"]["r"].__setitem__(0, None), r"history.r\[0\] is None, not a number"),
    (lambda d: d.__setitem__("n_features", "many"), r"n_features is 'many', not an int"),
    (lambda d: d.__setitem__("n_features", -1), r"n_features is -1"),
    (lambda d: d.__setitem__("feature_names", ["a"]), r"feature_names is not a list of 6"),
    (lambda d: d.__setitem__("params", [1]), r"params is list, not an object"),
    (lambda d: d.__setitem__("stop_reason", 3), r"stop_reason is 3, not a string"),
    (lambda d: d.__setitem__("best_iteration", "3"), r"best_iteration is '3', not an int"),
]


@pytest.mark.parametrize(("mutate", "message"), V2_CASES)
def test_malformed_version_2_file(tmp_path, trained, mutate, message):
    data = saved_dict(trained)
    assert data["rounds"]["kind"][:2] == ["threshold", "feature"]
    mutate(data)
    with pytest.raises(ValueError, match=message) as info:
        load_model(write_json(tmp_path / "m.json", data))
    assert str(info.value).startswith(("malformed model file: ", "not a rankboost model"))
    assert not str(info.value).endswith("..")


V1_CASES = [
    (lambda d: d.__setitem__("version", "1"), r"version is '1', not an int"),
    (lambda d: d.pop("rounds"), r"malformed model file: missing or bad field 'rounds'"),
    (lambda d: d.__setitem__("rounds", {}), r"rounds is dict, not a list \(version 1\)"),
    (lambda d: d["history"].pop("alpha"), r"malformed model file: missing or bad field"),
    (lambda d: d["rounds"][0].__setitem__("kind", "tree"), r"unknown kind 'tree'"),
    (lambda d: d["rounds"][0].__setitem__("feature", 99), r"uses feature 99 of"),
    (lambda d: d["rounds"][1].pop("cuts"), r"missing or bad field 'cuts'"),
    (lambda d: d["rounds"][1].__setitem__("cuts", [2.0, 1.0]), r"cuts that are not sorted"),
    (lambda d: d["history"]["alpha"].__setitem__(0, "big"), r"history.alpha\[0\] is the string"),
    (lambda d: d["history"]["z"].pop(), r"rounds and history have different lengths"),
    (lambda d: d["history"].__setitem__("r", [None]), r"history.r\[0\] is None, not a number"),
    (lambda d: d.__setitem__("n_features", "many"), r"malformed model file"),
    (lambda d: d["history"]["alpha"].__setitem__(1, 0.125), r"rounds\[1\] disagrees"),
    (lambda d: d["history"]["threshold"].__setitem__(0, 7.0), r"rounds\[0\] disagrees"),
    (lambda d: d["history"]["default"].__setitem__(1, 0.5), r"rounds\[1\] disagrees"),
]


@pytest.mark.parametrize(("mutate", "message"), V1_CASES)
def test_malformed_version_1_file(tmp_path, trained, mutate, message):
    _, models = trained
    data = to_v1(models["mixed"])
    assert [e["kind"] for e in data["rounds"][:2]] == ["threshold", "feature"]
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
