"""``n_rounds="auto"`` / ``--rounds auto``, presence features and bipartite feedback (issue 17)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import rankboost as rb
from rankboost import TrainingStoppedWarning
from rankboost.cli import main as cli_main
from rankboost.fusion import (
    Qrels,
    RankFusion,
    Run,
    fusion_features,
    grades_for,
    write_qrels,
    write_run,
)
from rankboost.metrics import ndcg_score
from rankboost.params import ParameterError
from test_fusion import _synthetic


@pytest.fixture(scope="module")
def small():
    return _synthetic(seed=3, n_queries=12, n_docs=10)


def _brute_force_curve(fusion: RankFusion, runs, qrels, max_rounds: int) -> np.ndarray:
    """Mean held-out NDCG@10 per T, one fresh rankboost.train of T rounds per fold and T."""
    feats = fusion.features(list(runs.values()))
    y = grades_for(feats, qrels)
    fold_of = fusion.cv_results_["fold_of_query"]
    fold = np.array([fold_of[q] for q in feats.qid.tolist()])
    k = int(fold.max()) + 1
    curve = np.zeros(max_rounds)
    for T in range(1, max_rounds + 1):
        scores = []
        for f in range(k):
            tr, va = (fold >= 0) & (fold != f), fold == f
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TrainingStoppedWarning)
                model = rb.train(
                    feats.X[tr],
                    rb.LayeredFeedback(y[tr], feats.qid[tr], normalize="query"),
                    n_rounds=T,
                    positive_cumulative=fusion.positive_cumulative,
                    thresholds="all",
                    learning_rate=fusion.learning_rate,
                )
            scores.append(ndcg_score(y[va], model.decision_function(feats.X[va]), feats.qid[va]))
        curve[T - 1] = np.mean(scores)
    return curve


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"positive_cumulative": False, "learning_rate": 0.5, "missing_features": True},
    ],
)
def test_auto_rounds_is_the_brute_force_cv_best(small, params) -> None:
    runs, qrels = small
    fusion = RankFusion(max_rounds=12, cv_folds=3, **params).fit(runs, qrels)
    curve = _brute_force_curve(fusion, runs, qrels, 12)
    np.testing.assert_allclose(fusion.cv_results_["mean"], curve, rtol=0, atol=1e-12)
    best = int(np.argmax(curve)) + 1  # the first of the best
    assert fusion.n_rounds_ == best == fusion.cv_results_["best_n_rounds"]
    assert fusion.model_.n_rounds == best
    # every query that can train is in exactly one fold; the folds have (nearly) equal sizes
    sizes = np.bincount(list(fusion.cv_results_["fold_of_query"].values()))
    assert sizes.sum() == 12
    assert sizes.max() - sizes.min() <= 1
    # the final model is the one an int n_rounds gives
    fixed = RankFusion(n_rounds=best, **params).fit(runs, qrels)
    np.testing.assert_array_equal(
        fusion.decision_function(runs)[1], fixed.decision_function(runs)[1]
    )
    assert fixed.cv_results_ is None
    assert fixed.n_rounds_ == best


def test_auto_rounds_errors(small) -> None:
    runs, qrels = small
    few = Qrels.from_dict({q: d for q, d in qrels.to_dict().items() if q in ("q0", "q1", "q2")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=r"needs at least 5 judged queries .* there are 3"):
            RankFusion().fit(runs, few)
        RankFusion(n_rounds=5).fit(runs, few)  # an int needs no inner folds
        RankFusion(cv_folds=3, max_rounds=5).fit(runs, few)
    for kw, msg in [
        ({"n_rounds": "many"}, "'n_rounds' parameter of RankFusion must be 'auto' or an int"),
        ({"n_rounds": 0}, "'n_rounds' parameter of RankFusion must be an int >= 1"),
        ({"n_rounds": True}, "'n_rounds' parameter of RankFusion must be 'auto' or an int"),
        ({"max_rounds": 0}, "'max_rounds' parameter of RankFusion must be an int >= 1"),
        ({"cv_folds": 1}, "'cv_folds' parameter of RankFusion must be an int >= 2"),
        ({"missing_features": "yes"}, "'missing_features' parameter of RankFusion must be"),
        ({"feedback": "pairs"}, "'feedback' parameter of RankFusion must be one of"),
    ]:
        with pytest.raises(ParameterError, match=msg):
            RankFusion(**kw).fit(runs, qrels)


def test_missing_features_columns() -> None:
    rng = np.random.default_rng(0)
    runs = []
    for name in ("a", "b", "c"):
        keep = rng.random(60) < 0.6
        qs = np.repeat([f"q{i}" for i in range(6)], 10)[keep]
        ds = np.tile([f"d{j}" for j in range(10)], 6)[keep]
        runs.append(Run.from_scores(qs, ds, rng.normal(size=int(keep.sum())), name=name))
    plain = fusion_features(runs, score_features=True)
    f = fusion_features(runs, score_features=True, missing_features=True)
    assert f.feature_names == [
        *plain.feature_names,
        "in:a",
        "in:b",
        "in:c",
        "n_in",
    ]
    np.testing.assert_array_equal(f.X[:, :6], plain.X)
    present = ~np.isnan(plain.X[:, :3])
    np.testing.assert_array_equal(f.X[:, 6:9], present.astype(float))
    np.testing.assert_array_equal(f.X[:, 9], present.sum(axis=1))
    assert not np.isnan(f.X[:, 6:]).any()
    assert (f.X[:, 9] >= 1).all()
    # row by row, from the runs themselves
    for i, (q, d) in enumerate(zip(f.qid.tolist(), f.docid.tolist(), strict=True)):
        for j, r in enumerate(runs):
            assert f.X[i, 6 + j] == float(d in r.to_dict().get(q, {}))


def test_bipartite_feedback_is_grade_at_least_one(small) -> None:
    runs, qrels = small
    fusion = RankFusion(n_rounds=10, feedback="bipartite").fit(runs, qrels)
    feats = fusion.features(list(runs.values()))
    y = grades_for(feats, qrels)
    model = rb.train(
        feats.X,
        rb.BipartiteFeedback((y >= 1).astype(int), feats.qid),
        n_rounds=10,
        positive_cumulative=True,
        thresholds="all",
    )
    np.testing.assert_array_equal(fusion.model_.decision_function(feats.X),
                                  model.decision_function(feats.X))  # fmt: skip
    layered = RankFusion(n_rounds=10).fit(runs, qrels)
    assert not np.array_equal(layered.model_.decision_function(feats.X),
                              model.decision_function(feats.X))  # fmt: skip


def test_save_load_auto_and_old_files(small, tmp_path: Path) -> None:
    runs, qrels = small
    fusion = RankFusion(max_rounds=6, cv_folds=3, missing_features=True).fit(runs, qrels)
    fusion.save(tmp_path / "f.json")
    back = RankFusion.load(tmp_path / "f.json")
    assert back.n_rounds == "auto"
    assert back.n_rounds_ == fusion.n_rounds_
    assert back.missing_features is True
    np.testing.assert_array_equal(back.fuse(runs).score, fusion.fuse(runs).score)
    # a file of an earlier release: no missing_features / feedback / max_rounds fields
    old = RankFusion(n_rounds=4, missing_features=False).fit(runs, qrels).to_dict()
    for key in ("missing_features", "feedback", "max_rounds", "cv_folds"):
        del old["params"][key]
    (tmp_path / "old.json").write_text(json.dumps(old))
    loaded = RankFusion.load(tmp_path / "old.json")
    assert loaded.missing_features is False
    assert loaded.n_rounds_ == 4


@pytest.fixture(scope="module")
def files(tmp_path_factory, small):
    tmp = tmp_path_factory.mktemp("fuse_auto")
    runs, qrels = small
    paths = []
    for name, r in runs.items():
        paths.append(str(tmp / f"{name}.run"))
        write_run(paths[-1], r)
    write_qrels(tmp / "qrels.txt", qrels)
    return tmp, paths, str(tmp / "qrels.txt")


def test_cli_defaults_are_auto(files, small, capsys) -> None:
    tmp, paths, qrels = files
    model = str(tmp / "auto.json")
    argv = ["fuse", "train", "--family", "boost", "--runs", *paths, "--qrels", qrels, "-o", model]
    assert cli_main([*argv, "--max-rounds", "12", "--cv-folds", "3"]) == 0
    err = capsys.readouterr().err
    fusion = RankFusion.load(model)
    assert fusion.n_rounds == "auto"
    assert fusion.max_rounds == 12
    assert fusion.cv_folds == 3
    assert f"--rounds auto chose {fusion.n_rounds_} rounds" in err
    # the same as the Python API at the same settings (runs named by their paths)
    runs, q = small
    named = {
        p: Run(r.qid, r.docid, r.rank, r.score, name=p)
        for p, r in zip(paths, runs.values(), strict=True)
    }
    api = RankFusion(max_rounds=12, cv_folds=3).fit(named, q)
    assert api.n_rounds_ == fusion.n_rounds_
    np.testing.assert_allclose(api.cv_results_["mean"][api.n_rounds_ - 1],
                               float(err.split("NDCG@10 ")[1].split()[0]), atol=5e-5)  # fmt: skip
    assert cli_main([*argv, "--rounds", "7", "--missing-features", "--no-positive-cumulative"]) == 0
    fixed = RankFusion.load(model)
    assert fixed.n_rounds_ == 7
    assert fixed.missing_features
    assert not fixed.positive_cumulative
    assert "chose" not in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["garbage", "0", "-3", "2.5", ""])
def test_cli_bad_rounds(files, bad, capsys) -> None:
    tmp, paths, qrels = files
    with pytest.raises(SystemExit) as exc:
        cli_main(["fuse", "train", "--family", "boost",
                  "--runs", *paths, "--qrels", qrels, "-o", str(tmp / "x.json"),
                  "--rounds", bad])  # fmt: skip
    assert exc.value.code == 2
    assert "--rounds: must be 'auto' or an int >= 1" in capsys.readouterr().err


def test_cli_too_few_queries_for_the_inner_cv(files, small, tmp_path: Path, capsys) -> None:
    _, paths, _ = files
    _, qrels = small
    few = Qrels.from_dict({q: d for q, d in qrels.to_dict().items() if q in ("q0", "q1")})
    write_qrels(tmp_path / "few.txt", few)
    argv = ["fuse", "train", "--family", "boost",
            "--runs", *paths, "--qrels", str(tmp_path / "few.txt"),
            "-o", str(tmp_path / "m.json")]  # fmt: skip
    assert cli_main(argv) == 1
    err = capsys.readouterr().err
    assert "needs at least 5 judged queries" in err
    assert "--rounds 100" in err
    with pytest.raises(SystemExit):
        cli_main([*argv, "--cv-folds", "1"])
    assert "--cv-folds" in capsys.readouterr().err
    assert cli_main([*argv, "--cv-folds", "2", "--max-rounds", "3"]) == 0


def test_info_lists_presence_features(files, capsys) -> None:
    tmp, paths, qrels = files
    model = str(tmp / "info.json")
    argv = ["fuse", "train", "--family", "boost",
            "--runs", *paths, "--qrels", qrels, "-o", model, "--rounds", "15"]  # fmt: skip
    assert cli_main(argv) == 0
    capsys.readouterr()
    assert cli_main(["info", model]) == 0
    out = capsys.readouterr().out
    fusion = RankFusion.load(model)
    assert "lists: 3, features: 7, rounds: 15" in out
    gain = fusion.model_.feature_importances("gain")
    lists = out.split("lists (feature ids of each list)")[1].split("importances")[0]
    imp = out.split("importances per list")[1].split("learned step")[0]
    for j, name in enumerate(fusion.list_names_):
        row = next(r.split() for r in lists.splitlines() if f" {name} " in f" {r} ")
        assert row == [str(j + 1), name, str(j + 1), str(j + 4)]  # rank:<list>, in:<list>
        line = next(r for r in imp.splitlines() if f" {name} " in f" {r} ")
        assert float(line.split()[2]) == pytest.approx(gain[j] + gain[j + 3], abs=5e-5)
    assert ["-", "n_in", "7"] in [r.split() for r in lists.splitlines()]
    line = next(r for r in imp.splitlines() if " n_in " in f" {r} ")
    assert float(line.split()[2]) == pytest.approx(gain[6], abs=5e-5)
