"""The scripts behind the README's figures (issue 37): benchmarks/time_to_quality.py and
experiments/movies_topn.py's chart. Small: 5 iterations on MQ2008 fold 1 (``../shared/data``,
skipped when absent), the LightGBM example and a 2,000-row synthetic problem at a few
iterations (issue 36), the chart from the committed results file."""

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


def test_split_queries_holds_out_whole_queries_seeded(ttq):
    qid = np.repeat(np.arange(50), np.arange(50) % 4 + 1)
    X = np.arange(len(qid), dtype=np.float64)[:, None]
    y = (qid % 3).astype(np.float64)
    (Xr, yr, qr), (Xh, yh, qh) = ttq.split_queries((X, y, qid), 0.2, seed=1)
    assert len(np.unique(qh)) == 10
    assert len(np.unique(qr)) == 40
    assert not set(qh) & set(qr)  # no query on both sides
    assert len(qr) + len(qh) == len(qid)
    assert np.all(np.diff(Xr[:, 0]) > 0)
    assert np.all(np.diff(Xh[:, 0]) > 0)
    np.testing.assert_array_equal(qid[Xh[:, 0].astype(int)], qh)  # rows stay with their labels
    again = ttq.split_queries((X, y, qid), 0.2, seed=1)[1][2]
    np.testing.assert_array_equal(again, qh)  # seeded: the same split every run
    other = ttq.split_queries((X, y, qid), 0.2, seed=2)[1][2]
    assert set(other) != set(qh)


def test_synthetic_splits_are_whole_queries(ttq):
    train, vali, test = ttq.load_synthetic(1, 2050)  # rounded down to whole queries of 100
    assert [len(s[1]) for s in (train, vali, test)] == [2000, 200, 200]
    assert all(s[0].shape[1] == 136 for s in (train, vali, test))
    assert not set(train[2]) & set(vali[2])
    assert not set(vali[2]) & set(test[2])
    assert all(np.all(np.unique(s[2], return_counts=True)[1] == 100) for s in (train, vali, test))
    assert set(np.unique(train[1])) <= {0.0, 1.0, 2.0, 3.0, 4.0}
    np.testing.assert_array_equal(ttq.load_synthetic(1, 2000)[0][0], train[0])  # seeded


def test_lightgbm_example_fold(ttq):
    if not (ttq.DATA / "lightgbm_lambdarank" / "rank.train.gz").is_file():
        pytest.skip(f"no LightGBM example in {ttq.DATA}")
    train, vali, test = ttq.load_lightgbm_example(1, 0)
    assert len(np.unique(train[2])) == 161
    assert len(np.unique(vali[2])) == 40
    assert len(train[1]) + len(vali[1]) == 3005
    assert len(test[1]) == 768
    assert train[0].shape[1] == vali[0].shape[1] == test[0].shape[1] == 300


def test_every_dataset_end_to_end_tiny(ttq, tmp_path, capsys):
    """The script as a user runs it, on all three data sets at tiny sizes (seconds)."""
    if not (ttq.DATA / "lightgbm_lambdarank" / "rank.train.gz").is_file():
        pytest.skip(f"no LightGBM example in {ttq.DATA}")
    learners = [n for n in ("rankboost", "lightgbm") if importlib.util.find_spec(n)]
    png = tmp_path / "ttq.png"
    argv = ["--dataset", "lightgbm-example", "synthetic", "--folds", "1", "--rows", "2000"]
    argv += ["--rounds", "4", "--trees", "4", "--learners", *learners]
    if importlib.util.find_spec("matplotlib"):
        argv += ["--plot", str(png)]
    ttq.main(argv)
    out = capsys.readouterr().out
    assert "LightGBM lambdarank example" in out
    assert "Synthetic (bench_engine.make_data), 136 features, folds [1] (rows: 2,000 train" in out
    assert out.count("| RankBoost (defaults) |") == 2
    if importlib.util.find_spec("matplotlib"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--rows", "0"], "--rows must be at least 1, got 0"),
        (["--rounds", "-1"], "--rounds must be at least 1, got -1"),
        (["--folds", "6"], "MQ2008 has folds 1-5"),
        (["--folds", "0"], "--folds must be 1 or more"),
        (["--dataset", "nope"], "invalid choice: 'nope'"),
    ],
)
def test_usage_errors(ttq, capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        ttq.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


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
