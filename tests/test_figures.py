"""The scripts behind the README's figures (issue 37): benchmarks/time_to_quality.py and
experiments/movies_topn.py's chart. Small: 5 iterations on MQ2008 fold 1 (``../shared/data``,
skipped when absent), the chart from the committed results file."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ttq():
    yield _load(ROOT / "benchmarks" / "time_to_quality.py", "time_to_quality")
    sys.modules.pop("time_to_quality", None)


def test_reached_is_the_first_iteration_within_the_tolerance(ttq):
    vali = np.array([0.30, 0.45, 0.499, 0.50, 0.47, 0.498])
    assert ttq.reached(vali, 0.002) == 2
    assert ttq.reached(vali, 0.0) == 3
    assert ttq.reached(vali, 0.1) == 1


@pytest.mark.parametrize("name", ["rankboost", "lightgbm", "xgboost"])
def test_staged_scores_are_the_models_scores(ttq, name):
    """The curve's last staged scores rank the rows as the trained model does (a tree
    learner's staged scores are sums of single trees' outputs)."""
    _, fit, package, _ = ttq.LEARNERS[name]
    pytest.importorskip(package)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = np.clip(np.round(X[:, 0] + rng.normal(scale=0.5, size=120) + 1), 0, 2)
    qid = np.repeat(np.arange(12), 10)
    curve = fit((X, y, qid), 5, 1)
    staged = curve.staged(X)
    assert len(staged) == len(curve.seconds) == 5
    assert np.all(np.diff(curve.seconds) >= 0)
    assert curve.seconds[0] > 0
    # the scores of 1 and 5 iterations differ: each stage adds its own tree / round
    assert not np.allclose(staged[0], staged[-1])
    # the sum of the stages is the model's own score, up to a constant (XGBoost adds its
    # base score to every tree's margin: the same shift for every row, no change in ranking)
    shift = staged[-1] - curve.predict(X)
    np.testing.assert_allclose(shift, shift[0], rtol=0, atol=1e-5)
    if name != "xgboost":
        assert abs(shift[0]) < 1e-5
    ndcg = ttq.ndcg10(y, staged[-1], qid)
    assert 0.0 < ndcg <= 1.0


def test_one_fold_of_mq2008(ttq, capsys):
    if not (ttq.DATA / "letor4" / "MQ2008" / "Fold1" / "train.txt.gz").is_file():
        pytest.skip(f"no MQ2008 in {ttq.DATA}")
    names = [n for n in ("rankboost", "lightgbm") if importlib.util.find_spec(n)]
    out = ttq.run_fold("mq2008", 1, names, {"rounds": 5, "trees": 5}, 0.002, 1)
    for name in names:
        r = out[name]
        v = np.asarray(r["vali_ndcg10"])
        assert v.shape == (5,)
        assert len(r["seconds"]) == 5
        i = r["reached_iteration"] - 1
        assert v[i] >= v.max() - 0.002
        assert np.all(v[:i] < v.max() - 0.002)
        assert r["reached_seconds"] == r["seconds"][i]
        assert 0.0 < r["test_ndcg10_there"] < 1.0
    table = ttq.report("mq2008", {1: out}, names, 0.002)
    assert table.startswith("LETOR 4.0 MQ2008, folds [1]")
    assert "| RankBoost (defaults) |" in table


@pytest.fixture(scope="module")
def topn():
    pytest.importorskip("threadpoolctl")
    sys.path.insert(0, str(ROOT / "experiments"))
    yield _load(ROOT / "experiments" / "movies_topn.py", "movies_topn_experiment")
    sys.modules.pop("movies_topn_experiment", None)
    sys.path.remove(str(ROOT / "experiments"))


def test_movies_topn_chart_from_the_saved_results(topn, tmp_path):
    pytest.importorskip("matplotlib")
    saved = ROOT / "experiments" / "results" / "movies_topn.json"
    png = tmp_path / "topn.png"
    topn.main(["--plot", str(png), "--from-json", str(saved)])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads(saved.read_text())["summary"]
    assert set(topn.PLOT_ROWS) <= set(summary)  # every bar of the chart is in the results


def test_movies_topn_plot_usage_errors(topn, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        topn.main(["--from-json", "x.json"])
    assert exc.value.code == 2
    assert "--from-json needs --plot PNG" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(SystemExit) as exc:
        topn.main(["--plot", str(tmp_path / "x.png"), "--from-json", str(bad)])
    assert exc.value.code == 2
    assert "not a saved --json run" in capsys.readouterr().err
