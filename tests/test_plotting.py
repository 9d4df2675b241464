"""Tests for ``rankboost.plotting`` (Agg backend) and the estimator's plot methods."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rankboost as rb
from rankboost.plotting import (
    plot_feature_function,
    plot_importance,
    plot_training,
)
from rankboost.sklearn import RankBoostRanker

if importlib.util.find_spec("matplotlib") is None:
    pytest.skip("matplotlib is not installed", allow_module_level=True)
# Imported by the autouse fixture when a test runs, not at collection in every make-test
# worker (about 2.6 s of CPU each on a cold start).
matplotlib: Any = None
plt: Any = None


@pytest.fixture(autouse=True)
def _close_figures(request):
    global matplotlib, plt  # noqa: PLW0603  the module's imports, made when it runs
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield
    # RANKBOOST_PLOT_DIR=dir saves every figure a test drew as <test>-<n>.png, to look at them
    out = os.environ.get("RANKBOOST_PLOT_DIR")
    if out:
        for k, num in enumerate(plt.get_fignums()):
            name = re.sub(r"[^\w.-]+", "_", request.node.name)
            plt.figure(num).savefig(Path(out) / f"{name}-{k}.png", dpi=80)
    plt.close("all")


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 4))
    X[rng.random(X.shape) < 0.1] = np.nan  # some abstentions
    y = np.digitize(np.nan_to_num(X[:, 0]) + 0.5 * rng.normal(size=240), [-0.3, 0.8])
    qid = np.repeat(np.arange(24), 10)
    est = RankBoostRanker(n_estimators=25).fit(
        X, y, qid=qid, eval_set=[(X, y)], eval_qid=[qid], early_stopping_rounds=50
    )
    est.model_.feature_names = ["bm25", "pagerank", "tf", "idf"]
    return est, X


def test_plot_importance_orders_bars(fitted):
    est, _ = fitted
    ax = plot_importance(est, max_num_features=2)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    imp = est.model_.feature_importances("gain")
    expected = [est.model_.feature_names[i] for i in np.argsort(-imp)[:2]]
    assert labels == expected  # the largest bar on top
    widths = sorted((p.get_width() for p in ax.patches), reverse=True)
    np.testing.assert_allclose(widths, np.sort(imp)[::-1][:2])
    assert ax.get_xlabel() == "gain: share of -sum ln Z_t"


def test_plot_importance_on_a_given_axes_and_split_type(fitted):
    est, _ = fitted
    _, ax = plt.subplots()
    assert plot_importance(est.model_, ax=ax, importance_type="split", title=None) is ax
    assert ax.get_title() == ""
    with pytest.raises(ValueError, match="importance_type must be 'gain', 'split' or 'alpha'"):
        plot_importance(est, importance_type="cover")


def test_plot_training_shows_loss_bound_and_validation(fitted):
    est, _ = fitted
    ax = est.plot_training()
    lines = {line.get_label(): line for line in ax.get_lines()}
    np.testing.assert_array_equal(lines["training rloss"].get_ydata(), est.history_["rloss"])
    np.testing.assert_array_equal(lines["bound prod Z_t"].get_ydata(), est.history_["bound"])
    assert np.all(est.history_["rloss"] <= est.history_["bound"] + 1e-12)
    # issue 22: the validation metric has a panel (and a y scale) of its own, under the loss
    vax = ax.figure.axes[-1]
    assert vax is not ax
    assert vax.get_ylabel() == "validation metric"
    assert vax.get_yscale() == "linear"
    assert ax.get_yscale() == "log"
    assert vax.get_shared_x_axes().joined(ax, vax)
    legend = [t.get_text() for t in vax.get_legend().get_texts()]
    assert "valid_0 ndcg@10" in legend
    assert f"best iteration {est.best_iteration_}" in legend
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "training rloss",
        "bound prod Z_t",
    ]
    # above the training panel, not beside it: the panels do not overlap
    a, b = ax.get_position(), vax.get_position()
    assert b.y1 <= a.y0


def test_plot_training_of_a_bare_model_has_no_twin(fitted):
    est, _ = fitted
    ax = plot_training(est.model_, log_scale=False)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "training rloss",
        "bound prod Z_t",
    ]
    assert ax.get_yscale() == "linear"


def test_plot_feature_function_matches_the_model(fitted):
    est, X = fitted
    ax = est.plot_feature_function("bm25")
    breaks, values, missing = est.model_.feature_function(0)
    stairs = [p for p in ax.patches if hasattr(p, "get_data")][0]
    np.testing.assert_array_equal(stairs.get_data().values, values)
    np.testing.assert_array_equal(stairs.get_data().edges[1:-1], breaks)
    assert ax.get_lines()[0].get_ydata()[0] == missing
    assert ax.get_xlabel() == "bm25"
    # the model is additive: H = sum of the per-feature functions
    total = np.zeros(X.shape[0])
    for i in range(X.shape[1]):
        b, v, miss = est.model_.feature_function(i)
        col = X[:, i].astype(np.float32)  # the float32 domain (issue 22)
        total += np.where(np.isnan(col), miss, v[np.searchsorted(b, col, side="left")])
    np.testing.assert_allclose(total, est.model_.decision_function(X), atol=1e-12)


def test_plot_feature_function_of_an_unused_feature():
    X = np.random.default_rng(1).normal(size=(60, 2))
    with pytest.warns(rb.TrainingStoppedWarning, match="orders every crucial pair correctly"):
        model = rb.train(X, rb.BipartiteFeedback(X[:, 0] > 0), 2)
    ax = plot_feature_function(model, 1)
    assert ax.get_xlabel() == "f2 (column 1)"  # unnamed: the label of rankboost info
    # no x ticks on a meaningless range; the legend says why the line is flat
    assert list(ax.get_xticks()) == []
    assert ax.get_legend().get_texts()[0].get_text().startswith("H_i(x): constant")


def test_plot_errors(fitted):
    est, _ = fitted
    with pytest.raises(ValueError, match="feature 'bm42' is not a feature label"):
        plot_feature_function(est, "bm42")
    with pytest.raises(ValueError, match=r"an index in \[0, 4\); got 4"):
        plot_feature_function(est, 4)
    with pytest.raises(TypeError, match="Expected a RankBoostModel or a fitted RankBoostRanker"):
        plot_importance("model.json")


def test_plot_feature_function_with_an_infinite_threshold():
    """theta = -inf ("the feature is defined") splits off no drawable interval."""
    X = np.array([[np.nan], [np.nan], [1.0], [2.0]])
    with pytest.warns(rb.TrainingStoppedWarning, match="orders every crucial pair"):
        model = rb.train(X, rb.BipartiteFeedback([0, 0, 1, 1]), 5, thresholds="all")
    sf = model.step_functions()[0]
    assert sf.breaks.tolist() == [-np.inf]
    ax = plot_feature_function(model, 0)
    stairs = [p for p in ax.patches if hasattr(p, "get_data")][0]
    np.testing.assert_array_equal(stairs.get_data().values, sf.values[1:])
    assert np.all(np.isfinite(stairs.get_data().edges))
    assert ax.get_lines()[0].get_ydata()[0] == sf.missing


def test_plots_accept_any_fitted_estimator_with_a_model():
    from sklearn.exceptions import NotFittedError

    from rankboost.fusion import Qrels, RankFusion, Run

    qs = np.repeat([f"q{i}" for i in range(6)], 5)
    ds = np.tile([f"d{j}" for j in range(5)], 6)
    rel = (np.tile(np.arange(5), 6) < 2).astype(int)
    runs = [
        Run(qs, ds, np.tile([1, 3, 2, 4, 5], 6), name="a"),
        Run(qs, ds, 6 - np.tile(np.arange(1, 6), 6), name="b"),
    ]
    fusion = RankFusion(n_rounds=4).fit(runs, Qrels(qs, ds, rel))
    ax = plot_importance(fusion)
    assert len(ax.patches) >= 1
    ax = plot_training(fusion)  # 4 rounds
    ax.figure.canvas.draw()
    assert all(float(t).is_integer() for t in ax.get_xticks())  # no round 2.5
    with pytest.raises(NotFittedError, match="RankBoostRanker instance is not fitted yet"):
        plot_importance(RankBoostRanker())
    with pytest.raises(NotFittedError, match="RankFusion instance is not fitted yet"):
        plot_training(RankFusion())

    class Impostor:
        model_ = "not a model"

    with pytest.raises(TypeError, match="Expected a RankBoostModel or a fitted RankBoostRanker"):
        plot_importance(Impostor())


def test_plotting_does_not_import_the_estimators_at_runtime():
    """rankboost.sklearn imports rankboost.plotting lazily; plotting must not import it back."""
    import ast
    import inspect

    import rankboost.plotting

    tree = ast.parse(inspect.getsource(rankboost.plotting))
    runtime = [
        node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.level == 1
    ]
    assert runtime == ["_compat", "model"]


# ------------------------------------------------------------------ what a reader sees (item 12)


@pytest.fixture(scope="module")
def letor():
    """A model on 46 features with the LETOR (MQ2008) names, one of them very long."""
    from rankboost.datasets import MQ2008_FEATURE_NAMES

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 46))
    y = np.digitize(X[:, 39] + 0.6 * X[:, 20] + 0.4 * X[:, 4] + rng.normal(size=400), [0.3, 1.3])
    qid = np.repeat(np.arange(40), 10)
    names = list(MQ2008_FEATURE_NAMES)
    names[39] = "LMIR.DIR of whole document (LETOR 4.0 feature 40)"
    est = RankBoostRanker(n_estimators=60).fit(
        X[:300], y[:300], qid=qid[:300], eval_set=[(X[300:], y[300:])], eval_qid=[qid[300:]],
        eval_metric=["ndcg@10", "map"], early_stopping_rounds=100,
    )  # fmt: skip
    est.model_.feature_names = names
    return est


def _drawn_ticklabels(axis):
    """The tick labels of ``axis`` inside its view limits (the ones matplotlib draws)."""
    lo, hi = sorted(axis.get_view_interval())
    i = 0 if axis.axis_name == "x" else 1
    return [t for t in axis.get_ticklabels() if lo <= t.get_position()[i] <= hi]


def _inside_figure(fig, artists):
    """Every non-empty text / legend of ``artists`` lies inside the figure (not clipped)."""
    fig.canvas.draw()
    box = fig.bbox
    for artist in artists:
        if hasattr(artist, "get_text") and not artist.get_text():
            continue
        ext = artist.get_window_extent()
        assert ext.x0 >= box.x0 - 0.5, (artist, ext, box)
        assert ext.y0 >= box.y0 - 0.5, (artist, ext, box)
        assert ext.x1 <= box.x1 + 0.5, (artist, ext, box)
        assert ext.y1 <= box.y1 + 0.5, (artist, ext, box)


def test_split_importance_plot_shows_integer_counts(letor):
    model = letor.model_
    ax = plot_importance(letor, importance_type="split", max_num_features=None)
    counts = np.bincount(model.rounds.feature, minlength=model.n_features)
    widths = [p.get_width() for p in ax.patches]
    assert all(float(w).is_integer() for w in widths)
    assert sorted(widths, reverse=True) == sorted(counts[counts > 0].tolist(), reverse=True)
    assert sum(widths) == model.n_rounds
    shown = [model.feature_names.index(t.get_text()) for t in ax.get_yticklabels()]
    assert [counts[i] for i in shown] == widths  # each bar is its feature's count
    # the value labels are the counts, and the x ticks are whole numbers
    labels = [t.get_text() for t in ax.texts]
    assert labels == [str(int(w)) for w in widths]
    ax.figure.canvas.draw()
    assert all(float(t).is_integer() for t in ax.get_xticks())
    assert ax.get_xlabel() == "split: number of rounds"
    # and the model's own split importance is the same as shares
    np.testing.assert_allclose(model.feature_importances("split"), counts / counts.sum())


def test_gain_importance_bars_carry_their_values(letor):
    ax = plot_importance(letor)
    widths = [p.get_width() for p in ax.patches]
    assert [t.get_text() for t in ax.texts] == [f"{w:.3f}" for w in widths]


def test_importance_labels_are_not_clipped(letor):
    ax = plot_importance(letor, max_num_features=None)
    texts = [*ax.get_yticklabels(), ax.xaxis.label, ax.title, *ax.texts]
    assert "LMIR.DIR of whole document (LETOR 4.0 feature 40)" in [
        t.get_text() for t in ax.get_yticklabels()
    ]
    _inside_figure(ax.figure, texts)
    # the tick labels do not overlap one another (46 bars: the figure grows)
    boxes = [t.get_window_extent() for t in ax.get_yticklabels()]
    for a, b in zip(boxes, boxes[1:], strict=False):
        assert not a.overlaps(b)


def test_training_plot_labels_and_legend_are_not_clipped_nor_over_the_curves(letor):
    ax = plot_training(letor)
    fig = ax.figure
    fig.canvas.draw()
    vax = [other for other in fig.axes if other is not ax][0]
    _inside_figure(fig, [ax.yaxis.label, vax.yaxis.label, vax.xaxis.label, ax.title])
    _inside_figure(fig, [*_drawn_ticklabels(ax.yaxis), *_drawn_ticklabels(vax.yaxis)])
    _inside_figure(fig, [ax.get_legend(), vax.get_legend()])
    # no two curves share a colour (the validation curves used to repeat rloss/bound's)
    lines = [*ax.get_lines(), *vax.get_lines()[:-1]]  # the last one is the best-round mark
    colours = [matplotlib.colors.to_hex(line.get_color()) for line in lines]
    assert len(lines) == 4
    assert len(set(colours)) == 4


def test_training_plot_on_a_given_axes_appends_the_validation_panel(letor):
    _, ax = plt.subplots()
    assert plot_training(letor, ax=ax) is ax
    assert ax.figure.legends == []
    vax = [other for other in ax.figure.axes if other is not ax][0]
    legend = vax.get_legend()
    assert legend is not None
    assert legend.get_frame().get_alpha() == 0.9
    assert "valid_0 map" in [t.get_text() for t in legend.get_texts()]
    ax.figure.canvas.draw()  # the divider places the panels when drawn
    a, b = ax.get_window_extent(), vax.get_window_extent()
    assert b.y1 <= a.y0 + 1e-6
    assert not a.overlaps(b)


def test_training_plot_of_a_cli_trained_model_draws_its_validation_curve(tmp_path, capsys):
    """Issue 26: a model trained by 'rankboost train --valid' keeps its validation curves."""
    from rankboost.cli import main
    from rankboost.datasets import dump_svmlight

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    qid = np.repeat(np.arange(20), 10)
    dump_svmlight(tmp_path / "t.txt", X, y, qid)
    out = tmp_path / "m.json"
    argv = ["train", str(tmp_path / "t.txt"), "--valid", str(tmp_path / "t.txt"), "-o", str(out)]
    assert main([*argv, "--rounds", "8", "-q"]) == 0
    model = rb.load_model(out)
    assert list(model.evals_result) == ["valid_0"]
    ax = plot_training(model)
    vax = ax.figure.axes[-1]
    assert vax is not ax
    (curve,) = [line for line in vax.get_lines() if line.get_label() == "valid_0 ndcg@10"]
    assert len(curve.get_ydata()) == 8


def test_feature_function_labels_are_not_clipped(letor):
    ax = plot_feature_function(letor, 39)
    texts = [ax.xaxis.label, ax.yaxis.label, ax.title, *_drawn_ticklabels(ax.yaxis)]
    _inside_figure(ax.figure, texts)
    assert ax.get_legend().get_frame().get_alpha() == 0.9


# ------------------------------------------------------------------ one numbering (item 7)


def _info_tables(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[list[Any], list[Any]]:
    """``rankboost info``'s (1-based id, label) rows: the importance table's (top to bottom)
    and the rounds table's (one per round)."""
    from rankboost.cli import main

    capsys.readouterr()
    assert main(["info", str(path), "--top", "0", "--head", "0"]) == 0
    out = capsys.readouterr().out
    imp_part, rounds_part = out.split("feature importances")[1].split("\nrounds (first")
    imp_rows = [r.split() for r in imp_part.splitlines()[2:] if r.strip()]
    round_rows = [r.split() for r in rounds_part.splitlines()[2:] if r.strip()]
    return [(int(r[0]), r[1]) for r in imp_rows], [(int(r[1]), r[2]) for r in round_rows]


@pytest.mark.parametrize("named", [False, True])
def test_info_plots_and_history_label_features_alike_issue16(named, tmp_path, capsys):
    """One convention everywhere: names, else ``f<id>`` (1-based, stated)."""
    from rankboost._conventions import FEATURE_NUMBERING
    from rankboost.plotting import _UNNAMED_AXIS_LABEL

    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 6))
    y = np.digitize(X[:, 4] + 0.7 * X[:, 1] + 0.5 * rng.normal(size=200), [0.0, 1.0])
    names = ["bm25", "pagerank", "tf", "idf", "lmir", "urlLen"] if named else None
    model = rb.train(X, rb.LayeredFeedback(y, np.repeat(np.arange(20), 10)), n_rounds=15,
                     feature_names=names)  # fmt: skip
    labels = names or [f"f{i + 1}" for i in range(6)]
    assert model.feature_labels == labels
    assert [model.feature_label(i) for i in range(6)] == labels
    path = tmp_path / "model.json"
    model.save(path)
    imp_rows, round_rows = _info_tables(path, capsys)
    # info prints the 1-based id next to each label: id = column + 1
    assert all(labels[i - 1] == label for i, label in imp_rows + round_rows)
    info_imp = [label for _, label in imp_rows]
    # history: the column (0-based) and its label, as the info rounds table prints them
    hist = model.history
    assert [i + 1 for i in hist["feature"]] == [i for i, _ in round_rows]
    assert list(hist["feature_label"]) == [labels[i] for i in hist["feature"]]
    assert list(hist["feature_label"]) == [label for _, label in round_rows]
    # importance plot: the same labels in the same order as info's importance table
    ax = plot_importance(model, max_num_features=None)
    assert [t.get_text() for t in ax.get_yticklabels()] == info_imp
    assert ax.get_ylabel() == ("feature" if named else _UNNAMED_AXIS_LABEL)
    # feature function: the label as title, selectable by it; unnamed: the column stated
    top = info_imp[0]
    column = labels.index(top)
    ax = plot_feature_function(model, top)
    assert ax.get_title() == top
    assert ax.get_xlabel() == (top if named else f"{top} (column {column})")
    assert plot_feature_function(model, column).get_title() == top
    # training plot: no feature labels, the same rloss and bound as the history
    ax = plot_training(model)
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), hist["rloss"])
    capsys.readouterr()
    from rankboost.cli import main

    main(["info", str(path)])
    assert FEATURE_NUMBERING in capsys.readouterr().out
