"""The progress bar of ``verbose=True`` (issue 16, item 11)."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
import warnings

import numpy as np
import pytest

import rankboost as rb
import rankboost._compat as compat
from rankboost.callback import EvaluationMonitor, early_stopping
from rankboost.sklearn import RankBoostRanker


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    y = np.clip(np.round(X[:, 0] + 0.7 * rng.normal(size=300)), 0, 2).astype(int)
    qid = np.repeat(np.arange(30), 10)
    return X, y, qid


class _Recorder:
    def __init__(self) -> None:
        self.postfixes: list[str] = []
        self.updates = 0
        self.closed = False

    def update(self, n: int = 1) -> None:
        self.updates += n

    def close(self) -> None:
        self.closed = True

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        self.postfixes.append(s)


@pytest.fixture
def recorder(monkeypatch):
    bars: list[_Recorder] = []

    def fake(total: int, disable: bool, desc: str, **kwargs) -> _Recorder:
        bar = _Recorder()
        bars.append(bar)
        return bar

    monkeypatch.setattr(compat, "progress_bar", fake)
    return bars


def test_bar_shows_the_metric_and_the_best_round(data, recorder):
    X, y, qid = data
    est = RankBoostRanker(n_estimators=12, verbose=True)
    est.fit(X[:200], y[:200], qid=qid[:200], eval_set=[(X[200:], y[200:])], eval_qid=[qid[200:]])
    (bar,) = recorder
    values = est.evals_result_["valid_0"]["ndcg@10"]
    assert len(bar.postfixes) == 12
    assert bar.updates == 12
    assert bar.closed
    for t, text in enumerate(bar.postfixes):
        best = int(np.argmax(values[: t + 1])) + 1
        assert text == f"ndcg@10={values[t]:.4g} best={best}"


def test_bar_with_early_stopping_shows_one_summary(data, recorder):
    X, y, qid = data
    monitor = EvaluationMonitor([(X[200:], y[200:], qid[200:])], metrics=["map", "ndcg@5"])
    cbs = [monitor, early_stopping(monitor, 3)]
    model = rb.train(
        X[:200], rb.LayeredFeedback(y[:200], qid[:200]), 40, callbacks=cbs, verbose=True
    )
    (bar,) = recorder
    assert bar.postfixes, "no postfix was set"
    last = bar.postfixes[-1]
    assert last.count("best=") == 1
    assert last.startswith("map=")
    # the bar counts the round that raised EarlyStopException too
    assert bar.updates == len(monitor.results["valid_0"]["map"]) == model.n_rounds


def test_bar_postfix_loss_is_lower_is_better(data, recorder):
    X, y, qid = data

    def loss(y_true, y_score, qid):  # a metric where lower is better: the summary must follow
        return float(-np.corrcoef(y_true, y_score)[0, 1]) if np.std(y_score) > 0 else 0.0

    monitor = EvaluationMonitor([(X, y, qid)], metrics=[loss])
    monitor.greater_is_better["loss"] = False
    rb.train(X, rb.LayeredFeedback(y, qid), 8, callbacks=[monitor], verbose=True)
    values = monitor.results["valid_0"]["loss"]
    assert recorder[0].postfixes[-1].endswith(f"best={int(np.argmin(values)) + 1}")


def test_no_postfix_without_summary_callbacks(data, recorder):
    X, y, qid = data
    rb.train(X, rb.LayeredFeedback(y, qid), 5, callbacks=[lambda env: None], verbose=True)
    assert recorder[0].postfixes == []
    assert recorder[0].updates == 5


def test_real_tqdm_bar_gets_the_postfix(data, monkeypatch):
    tqdm = pytest.importorskip("tqdm")
    real, bars = compat.progress_bar, []

    def keep(*args, **kwargs):
        bars.append(real(*args, **kwargs))
        return bars[-1]

    monkeypatch.setattr(compat, "progress_bar", keep)
    X, y, qid = data
    est = RankBoostRanker(n_estimators=6, verbose=True)
    est.fit(X, y, qid=qid, eval_set=[(X, y)], eval_qid=[qid], eval_metric="map")
    (bar,) = bars
    assert isinstance(bar, tqdm.tqdm)
    assert bar.n == 6
    assert bar.postfix.startswith("map=")
    assert "best=" in bar.postfix


@pytest.fixture
def without_tqdm(monkeypatch):
    """``rankboost._compat`` re-imported with ``import tqdm`` failing."""
    warning = compat.ProgressBarWarning  # keep the class others (rb.ProgressBarWarning) hold
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    module = importlib.reload(compat)
    module.ProgressBarWarning = warning
    assert not module.TQDM_INSTALLED
    yield module
    monkeypatch.undo()
    importlib.reload(compat).ProgressBarWarning = warning
    assert compat.TQDM_INSTALLED == (importlib.util.find_spec("tqdm") is not None)


def test_without_tqdm_verbose_warns_once(data, without_tqdm):
    X, y, qid = data
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            rb.train(X, rb.LayeredFeedback(y, qid), 3, verbose=True)
        RankBoostRanker(n_estimators=3, verbose=True).fit(X, y, qid=qid)
    mine = [w for w in caught if issubclass(w.category, rb.ProgressBarWarning)]
    assert len(mine) == 1
    assert "pip install 'rankboost[progress]'" in str(mine[0].message)
    assert mine[0].filename == __file__  # points at the caller's code, not at rankboost


def test_without_tqdm_quiet_training_does_not_warn(data, without_tqdm):
    X, y, qid = data
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rb.train(X, rb.LayeredFeedback(y, qid), 3)
    assert not [w for w in caught if issubclass(w.category, rb.ProgressBarWarning)]


# ---------------------------------------------------------------------- issue 38, item 6


class _Clock:
    """A clock the test moves: tqdm reads time through ``bar._time``."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_issue38_first_round_says_compiling_and_gives_no_eta_from_it(data, monkeypatch):
    """Round 1 (numba compiles) took 100 s, the next 1 s each: the time left is ~1 s a round
    (it was 100 s a round: a 36-minute ETA for a 3-second training); the bar says it is
    compiling while numba compiles (faked here; a real cold cache: test_startup), and then
    'rankboost'."""
    pytest.importorskip("tqdm")
    import rankboost.engine as engine

    compiles = [True]  # a fresh process: numba compiles in the first training's round 1

    @contextlib.contextmanager
    def on_compile(callback):  # numba's compile event, as a cold cache raises it
        if compiles:
            compiles.pop()
            callback()
        yield

    monkeypatch.setattr(engine, "on_compile", on_compile)
    real, bars, clock = compat.progress_bar, [], _Clock()

    def keep(*args, **kwargs):
        bar = real(*args, **kwargs)
        bar._time = clock  # tqdm's clock, read by update, reset and format_dict
        bar.start_t = bar.last_print_t = clock()
        bar.mininterval = 0  # every update refreshes the rate
        bars.append(bar)
        return bar

    seen: list[str] = []

    def step(env) -> None:  # after each round, before the bar counts it
        (bar,) = bars
        seen.append(bar.desc)
        clock.now += 1.0  # the time of a round after the first

    monkeypatch.setattr(compat, "progress_bar", keep)
    X, y, qid = data
    clock.now += 100.0  # round 1
    rb.train(X, rb.LayeredFeedback(y, qid), 6, callbacks=[step], verbose=True)
    assert seen == ["rankboost (compiling kernels)"] + ["rankboost"] * 5
    (bar,) = bars
    assert bar.n == 6
    assert bar.initial == 1  # the rate counts rounds 2..6 only
    d = bar.format_dict
    rate = (d["n"] - d["initial"]) / d["elapsed"]
    assert rate > 0.5, d  # about 1 round/s (100 s of round 1 left out): not 0.01 round/s
    # a second training in the process: no 'compiling'
    bars.clear()
    seen.clear()
    rb.train(X, rb.LayeredFeedback(y, qid), 3, callbacks=[step], verbose=True)
    assert seen == ["rankboost"] * 3
