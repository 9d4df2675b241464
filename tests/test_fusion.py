"""Learned rank fusion (rankboost.fusion.RankFusion) and run evaluation."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from rankboost import TrainingStoppedWarning
from rankboost.fusion import (
    FusionWarning,
    Qrels,
    RankFusion,
    Run,
    evaluate_run,
    fusion_features,
    run_arrays,
)


def _synthetic(seed: int = 0, n_queries: int = 40, n_docs: int = 30):
    """Three lists: 'good' ranks by a noisy relevance, 'noise' at random, 'short' a top-10."""
    rng = np.random.default_rng(seed)
    qs, ds, rel = [], [], []
    good_rank, noise_rank = [], []
    short = ([], [], [])
    for q in range(n_queries):
        grades = rng.choice([0, 0, 0, 1, 2], size=n_docs)
        latent = grades + rng.normal(scale=0.6, size=n_docs)
        g_order = np.argsort(-latent, kind="stable")
        g_rank = np.empty(n_docs, dtype=np.int64)
        g_rank[g_order] = np.arange(1, n_docs + 1)
        n_rank = rng.permutation(n_docs) + 1
        for j in range(n_docs):
            qs.append(f"q{q}")
            ds.append(f"d{j}")
            rel.append(int(grades[j]))
            good_rank.append(g_rank[j])
            noise_rank.append(n_rank[j])
            if n_rank[j] <= 10:
                short[0].append(f"q{q}")
                short[1].append(f"d{j}")
                short[2].append(n_rank[j])
    runs = {
        "noise": Run(qs, ds, noise_rank, name="noise"),
        "good": Run(qs, ds, good_rank, name="good"),
        "short": Run(*short, name="short"),
    }
    return runs, Qrels(qs, ds, rel)


@pytest.fixture(scope="module")
def data():
    return _synthetic()


@pytest.fixture(scope="module")
def fitted(data):
    runs, qrels = data
    return RankFusion(n_rounds=60).fit(runs, qrels)


def test_fusion_recovers_the_good_list(data, fitted) -> None:
    runs, qrels = data
    test_runs, test_qrels = _synthetic(seed=1)
    fused = fitted.fuse(test_runs)
    good = evaluate_run(test_runs["good"], test_qrels, ["ndcg@10", "map"])
    got = evaluate_run(fused, test_qrels, ["ndcg@10", "map"])
    noise = evaluate_run(test_runs["noise"], test_qrels, ["ndcg@10", "map"])
    # step functions of the rank tie neighbouring documents, hence a small tolerance
    assert got["ndcg@10"] >= good["ndcg@10"] - 0.03
    assert got["map"] >= good["map"] - 0.03
    assert got["ndcg@10"] > noise["ndcg@10"] + 0.2
    imp = fitted.model_.feature_importances_
    assert int(np.argmax(imp)) == 1  # the "good" list
    assert imp[1] > 0.8
    # with only the good list, the fused score never contradicts the good list's order
    solo = RankFusion(n_rounds=20).fit([runs["good"]], qrels)
    feats, scores = solo.decision_function([test_runs["good"]])
    assert np.corrcoef(feats.X[:, 0], scores)[0, 1] > 0.7
    for q in ("q0", "q3"):
        sel = feats.qid == q
        order = np.argsort(-feats.X[sel, 0])
        assert np.all(np.diff(scores[sel][order]) <= 1e-12)


def test_fuse_output_is_a_ranked_run(data, fitted) -> None:
    runs, _ = data
    fused = fitted.fuse(runs, depth=7)
    assert fused.name == "rankboost"
    for q in fused.queries:
        sel = fused.qid == q
        assert fused.rank[sel].tolist() == list(range(1, 8))
        assert np.all(np.diff(fused.score[sel]) <= 0)
    assert len(fitted.fuse(runs, n_rounds=1).queries) == 40


@pytest.mark.parametrize("rank_feature", ["neg_rank", "reciprocal"])
def test_monotone_with_positive_cumulative(data, rank_feature: str) -> None:
    """Moving a document up in any list never lowers its fused score (WeakLearn.cum)."""
    runs, qrels = data
    fusion = RankFusion(n_rounds=80, rank_feature=rank_feature).fit(runs, qrels)
    items = list(runs.values())
    base_feats, base = fusion.decision_function(items)
    index = {
        (q, d): i for i, (q, d) in enumerate(zip(base_feats.qid, base_feats.docid, strict=True))
    }
    rng = np.random.default_rng(3)
    for _ in range(60):
        li = int(rng.integers(len(items)))
        run = items[li]
        e = int(rng.integers(len(run)))
        if run.rank[e] == 1:
            continue
        new_rank = run.rank.copy()
        new_rank[e] = int(rng.integers(1, run.rank[e]))  # strictly better position
        moved = list(items)
        moved[li] = Run(run.qid, run.docid, new_rank, name=run.name)
        feats, scores = fusion.decision_function(moved)
        key = (run.qid[e], run.docid[e])
        j = {(q, d): i for i, (q, d) in enumerate(zip(feats.qid, feats.docid, strict=True))}[key]
        assert scores[j] >= base[index[key]] - 1e-12


def test_unconstrained_option_and_alpha_signs(data) -> None:
    runs, qrels = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        free = RankFusion(n_rounds=40, positive_cumulative=False).fit(runs, qrels)
        cum = RankFusion(n_rounds=40).fit(runs, qrels)
    assert free.model_.params["positive_cumulative"] is False
    assert cum.model_.params["positive_cumulative"] is True
    # cumulative weight of every distinct weak ranker stays positive under WeakLearn.cum
    totals: dict[tuple, float] = {}
    for h, a in zip(cum.model_.rankers, cum.model_.alphas, strict=True):
        totals[h.key()] = totals.get(h.key(), 0.0) + float(a)
    assert all(v > 0 for v in totals.values())


def test_score_features(data) -> None:
    runs, qrels = data
    f = fusion_features(runs, score_features=True)
    assert f.X.shape[1] == 6
    assert f.feature_names[3:] == ["score:noise", "score:good", "score:short"]
    s = f.X[:, 3:]
    ok = ~np.isnan(s)
    assert s[ok].min() == 0.0
    assert s[ok].max() == 1.0
    np.testing.assert_array_equal(np.isnan(f.X[:, :3]), np.isnan(s))
    model = RankFusion(n_rounds=10, score_features=True, missing_features=False).fit(runs, qrels)
    assert model.model_.n_features == 6
    model = RankFusion(n_rounds=10, score_features=True).fit(runs, qrels)  # + presence
    assert model.model_.n_features == 10
    assert model.feature_names_[6:] == ["in:noise", "in:good", "in:short", "n_in"]


def test_save_load_round_trip(tmp_path: Path, data, fitted) -> None:
    runs, _ = data
    path = tmp_path / "fusion.json"
    fitted.save(path)
    back = RankFusion.load(path)
    assert back.get_params() == fitted.get_params()
    assert back.list_names_ == ["noise", "good", "short"]
    assert back.model_ == fitted.model_
    assert back.fuse(runs) == fitted.fuse(runs)
    data_json = json.loads(path.read_text())
    assert data_json["format"] == "rankboost-fusion"
    assert data_json["model"]["format"] == "rankboost-model"


def test_issue16_fuse_matches_the_runs_to_the_trained_lists_by_name(data, fitted) -> None:
    """Runs in another order than at training: the same fused run, not a silent wrong one."""
    runs, _ = data
    trained = [runs["noise"], runs["good"], runs["short"]]  # the order of fit
    reordered = [runs["short"], runs["noise"], runs["good"]]
    expected = fitted.fuse(trained)
    assert fitted.fuse(reordered) == expected
    assert fitted.fuse({"s": runs["short"], "g": runs["good"], "n": runs["noise"]}) == expected
    f1, s1 = fitted.decision_function(trained)
    f2, s2 = fitted.decision_function(reordered)
    np.testing.assert_array_equal(f2.X, f1.X)
    np.testing.assert_array_equal(s2, s1)
    # the old behaviour only on request: the positions are taken as given
    assert fitted.fuse(reordered, match="order") != expected
    other = Run(runs["short"].qid, runs["short"].docid, runs["short"].rank, name="other")
    with pytest.raises(ValueError, match=r"missing \['short'\], unknown \['other'\]"):
        fitted.fuse([runs["good"], other, runs["noise"]])
    with pytest.raises(ValueError, match="match must be one of"):
        fitted.fuse(trained, match="names")


def test_issue16_fuse_matches_file_names_and_keeps_the_order_of_unnamed_runs(data) -> None:
    runs, qrels = data

    def renamed(prefix, names=("noise", "good", "short")):
        return [Run(r.qid, r.docid, r.rank, r.score, name=f"{prefix}{n}.run")
                for n, r in ((n, runs[n]) for n in names)]  # fmt: skip

    fusion = RankFusion(n_rounds=20).fit(renamed("train/"), qrels)
    expected = fusion.fuse(renamed("test/"))  # the same files in another folder
    assert fusion.fuse(renamed("test/", ("good", "short", "noise"))) == expected
    assert fusion.fuse(renamed("/abs/test/", ("short", "good", "noise"))) == expected
    # unnamed runs (the default name "run"): no names to match, the order is kept
    unnamed = [Run(r.qid, r.docid, r.rank) for r in renamed("")]
    assert fusion.fuse(unnamed) == expected
    free = RankFusion(n_rounds=20).fit(unnamed, qrels)
    assert free.list_names_ == ["run", "run", "run"]
    assert free.fuse(unnamed[1:] + unnamed[:1]) != free.fuse(unnamed)  # taken as given


def test_unjudged_documents_are_grade_zero() -> None:
    runs = [Run(["q", "q", "q"], ["a", "b", "x"], [1, 2, 3], name="r")]
    qrels = Qrels(["q", "q"], ["a", "b"], [0, 1])
    y, s, q = run_arrays(runs[0], qrels)
    assert y.tolist() == [0, 1, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        fusion = RankFusion(n_rounds=3).fit(runs, qrels)
    assert "LayeredFeedback" in fusion.model_.params["feedback"]


def test_evaluate_run_unretrieved_relevant_is_tied_last() -> None:
    run = Run(["q"], ["x"], [1])
    qrels = Qrels(["q", "q", "q"], ["a", "b", "c"], [1, 0, 0])
    # a is unretrieved: tied with b, c below x -> expected rank of a is 3, rr = 1/3 avg ...
    got = evaluate_run(run, qrels, ["mrr"])["mrr"]
    assert got == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)


# ------------------------------------------------------------------ bad input ------------
def test_query_coverage_warnings(data) -> None:
    runs, qrels = data
    extra = Run(["zz", "q0"], ["d0", "d1"], [1, 1], name="extra.run")
    with pytest.warns(FusionWarning, match=r"run extra\.run: 1 queries are not in the qrels"):
        RankFusion(n_rounds=2).fit([runs["good"], extra], qrels)
    more = Qrels(
        np.concatenate([qrels.qid, ["lonely"]]),
        np.concatenate([qrels.docid, ["d0"]]),
        np.concatenate([qrels.rel, [1]]),
    )
    with pytest.warns(FusionWarning, match=r"qrels: 1 judged queries are in none of the runs"):
        RankFusion(n_rounds=2).fit([runs["good"]], more)


def test_fit_without_any_judged_query() -> None:
    run = Run(["q"], ["a"], [1], name="r")
    with (
        pytest.warns(FusionWarning, match="not in the qrels"),
        pytest.warns(FusionWarning, match="in none of the runs"),
        pytest.raises(ValueError, match="no query of the runs is judged"),
    ):
        RankFusion().fit([run], Qrels(["other"], ["a"], [1]))


def test_fit_without_crucial_pair() -> None:
    run = Run(["q", "q"], ["a", "b"], [1, 2], name="r")
    with pytest.raises(ValueError, match="no judged query has two different grades"):
        RankFusion().fit([run], Qrels(["q", "q"], ["a", "b"], [1, 1]))


def test_fuse_wrong_number_of_lists(data, fitted) -> None:
    runs, _ = data
    with pytest.raises(ValueError, match=r"trained on 3 input lists \(noise, good, short\) but 2"):
        fitted.fuse([runs["good"], runs["noise"]])
    with pytest.raises(ValueError, match="not fitted yet"):
        RankFusion().fuse([runs["good"]])


@pytest.mark.parametrize(
    ("runs", "err", "match"),
    [
        ([], ValueError, "runs is empty"),
        (["x.run"], TypeError, "must be a rankboost.fusion.Run"),
    ],
)
def test_fit_bad_runs(runs, err, match) -> None:
    with pytest.raises(err, match=match):
        RankFusion().fit(runs, Qrels(["q"], ["a"], [1]))


def test_bad_params(data) -> None:
    runs, qrels = data
    with pytest.raises(ValueError, match="'rank_feature' parameter of RankFusion must be one of"):
        RankFusion(rank_feature="rank").fit(runs, qrels)
    with pytest.raises(ValueError, match="'normalize' parameter of RankFusion must be one of"):
        RankFusion(normalize="none").fit(runs, qrels)
    with pytest.raises(ValueError, match="has no parameter 'n_estimators'"):
        RankFusion().set_params(n_estimators=3)


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        RankFusion.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ValueError, match="is not valid JSON"):
        RankFusion.load(bad)
    bad.write_text('{"format": "rankboost-model"}')
    with pytest.raises(ValueError, match="not a rankboost fusion model"):
        RankFusion.load(bad)
    bad.write_text('{"format": "rankboost-fusion", "version": 1}')
    with pytest.raises(ValueError, match="malformed fusion model"):
        RankFusion.load(bad)


@pytest.mark.parametrize(
    "options",
    [{"thresholds": ("uniform", 5), "default": 0}, {"thresholds": "midpoints", "criterion": "r"}],
)
def test_issue13_new_options_save_and_load(tmp_path: Path, data, options) -> None:
    """criterion=, default= and the new threshold rules survive a fusion model file."""
    runs, qrels = data
    fusion = RankFusion(n_rounds=15, **options).fit(runs, qrels)
    if "default" in options:  # "absent = worst": q_def fixed at 0
        assert (fusion.model_.history["default"] == 0).all()
    fusion.save(tmp_path / "fusion.json")
    back = RankFusion.load(tmp_path / "fusion.json")
    assert back.get_params() == fusion.get_params()
    assert back.model_ == fusion.model_
    assert back.fuse(runs) == fusion.fuse(runs)


def test_from_scores_with_docid_ties_equals_from_dict_entry_for_entry():
    """``fuse`` builds its run with ``Run.from_scores(..., ties="docid")``: the same entries,
    in the same order, as ``Run.from_dict`` (ranks by score, equal scores by document id)."""
    rng = np.random.default_rng(3)
    qid = rng.choice(["q2", "q10", "q1"], size=300)
    docid = np.array([f"d{i}" for i in rng.permutation(300)])
    score = rng.integers(0, 5, size=300).astype(float)  # many ties
    nested: dict[str, dict[str, float]] = {}
    for q, d, s in zip(qid.tolist(), docid.tolist(), score.tolist(), strict=True):
        nested.setdefault(q, {})[d] = s
    want = Run.from_dict(nested, name="rankboost")
    got = Run.from_scores(qid, docid, score, name="rankboost", ties="docid")
    for field in ("qid", "docid", "rank", "score"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)
    with pytest.raises(ValueError, match="ties must be 'input' or 'docid'"):
        Run.from_scores(qid, docid, score, ties="name")
