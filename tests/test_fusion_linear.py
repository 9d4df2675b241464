"""The linear fusion family, its engine exports and the prior (issue 23).

The closed-form layered potential is checked against explicit crucial pairs written from the
paper (section 3.1: D(x0, x1) ∝ Phi exp(F(x0) - F(x1)), pi(x) = sum_x' D(x', x) - D(x, x')),
and every export against a reference evaluator of the engine's own formula.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rankboost.fusion import Qrels, Run
from rankboost.fusion.engines import (
    check_export,
    elasticsearch_scores,
    engine_fuse,
    export_linear,
    opensearch_scores,
)
from rankboost.fusion.engines.elasticsearch import _es_minmax
from rankboost.fusion.linear import LinearFusion, _Layered, boost_path, linear_features

ROOT = Path(__file__).resolve().parents[1]
DENSE = ROOT / "experiments" / "data" / "cisi_minilm.run.gz"


def _pairs_potential(F, y, q):
    """pi(x) from every crucial pair, each query the same total mass (LayeredFeedback 'query')."""
    n = y.shape[0]
    pi = np.zeros(n)
    queries = [k for k in np.unique(q) if np.unique(y[q == k]).shape[0] >= 2]
    for k in queries:
        rows = np.flatnonzero(q == k)
        pairs = [(a, b) for a in rows for b in rows if y[a] < y[b]]  # b above a
        d = np.array([np.exp(F[a] - F[b]) for a, b in pairs])
        d *= (1.0 / len(queries)) / d.sum()
        for (a, b), w in zip(pairs, d, strict=True):
            pi[b] += w
            pi[a] -= w
    return pi


@pytest.mark.parametrize("seed", range(6))
def test_layered_potential_matches_the_pairs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 40
    q = np.sort(rng.integers(0, 5, n))
    y = rng.integers(0, 3, n)
    F = rng.normal(scale=2.0, size=n)
    got = _Layered(y, q).potential(F)
    np.testing.assert_allclose(got, _pairs_potential(F, y, q), rtol=1e-12, atol=1e-15)


def test_boost_round_is_rankboost_with_real_valued_rankers() -> None:
    rng = np.random.default_rng(3)
    n = 30
    q = np.repeat(np.arange(3), 10)
    y = rng.integers(0, 2, n)
    H = rng.random((n, 3))
    W = boost_path(H, _Layered(y, q), 0.5, 2, 1.0)
    np.testing.assert_array_equal(W[0], [0.5, 0.5, 0.5])
    for t in (1, 2):
        r = H.T @ _pairs_potential(H @ W[t - 1], y, q)
        i = int(np.argmax(r))
        step = np.zeros(3)
        step[i] = 0.5 * np.log((1 + r[i]) / (1 - r[i]))  # the paper's section 3.2 alpha
        np.testing.assert_allclose(W[t], W[t - 1] + step, rtol=1e-12)


def _toy(n_q: int = 12, seed: int = 0):
    rng = np.random.default_rng(seed)
    qs, ds, rel = [], [], []
    a_rows, b_rows = [], []
    for i in range(n_q):
        docs = [f"d{j}" for j in range(12)]
        grades = rng.integers(0, 3, 12)
        for d, g in zip(docs, grades, strict=True):
            qs.append(f"q{i}")
            ds.append(d)
            rel.append(int(g))
        a_score = grades + rng.normal(scale=1.0, size=12)
        b_score = grades + rng.normal(scale=1.5, size=12)
        keep_a = np.argsort(-a_score)[:9]  # each list returns 9 of the 12 documents
        keep_b = np.argsort(-b_score)[:8]
        a_rows += [(f"q{i}", docs[j], float(a_score[j])) for j in keep_a]
        b_rows += [(f"q{i}", docs[j], float(b_score[j]) * 10 + 3) for j in keep_b]

    def run(rows, name):
        return Run.from_scores([r[0] for r in rows], [r[1] for r in rows],
                               [r[2] for r in rows], name=name)  # fmt: skip

    return [run(a_rows, "a"), run(b_rows, "b")], Qrels(qs, ds, rel)


@pytest.mark.parametrize("normalizer", ["minmax", "rrf"])
def test_fit_save_load_and_exports_reproduce_fuse_apply(normalizer: str, tmp_path: Path) -> None:
    runs, qrels = _toy()
    lin = LinearFusion(normalizer=normalizer, max_rounds=20, cv_folds=3).fit(runs, qrels)
    assert np.all(lin.weights_ >= 0)
    assert np.any(lin.weights_ > 0)
    assert lin.cv_results_ is not None
    assert lin.cv_results_["mean"].shape[1] == 21
    lin.save(tmp_path / "m.json")
    back = LinearFusion.load(tmp_path / "m.json")
    assert back.fuse(runs) == lin.fuse(runs)
    for engine in ("elasticsearch", "opensearch"):
        body = export_linear(lin, engine, tmp_path / f"{engine}.json", approximate=True)
        assert json.loads((tmp_path / f"{engine}.json").read_text()) == body
        if engine == "opensearch" and normalizer == "minmax":
            # OpenSearch's arithmetic mean over the sub-queries that returned the document
            with pytest.raises(ValueError, match="ranks .* differently"):
                check_export(lin, runs, engine, body)
        else:
            assert check_export(lin, runs, engine, body) == 12


def test_es_linear_by_hand() -> None:
    a = Run(["q"] * 3, ["x", "y", "z"], [1, 2, 3], [4.0, 2.0, 1.0], name="a")
    b = Run(["q"] * 2, ["z", "w"], [1, 2], [0.9, 0.5], name="b")
    body = {"retriever": {"linear": {"retrievers": [
        {"retriever": {}, "weight": 2.0, "normalizer": "minmax"},
        {"retriever": {}, "weight": 1.0, "normalizer": "minmax"}]}}}  # fmt: skip
    got = elasticsearch_scores([a, b], body)["q"]
    # a: x 1, y 1/3, z 0; b: z 1, w 0
    assert got == pytest.approx({"x": 2.0, "y": 2 / 3, "z": 1.0, "w": 0.0}, rel=1e-6)
    os_rrf = {
        "phase_results_processors": [
            {
                "score-ranker-processor": {
                    "combination": {
                        "technique": "rrf",
                        "rank_constant": 60,
                        "parameters": {"weights": [0.5, 0.5]},
                    }
                }
            }
        ]
    }
    got = opensearch_scores([a, b], os_rrf)["q"]
    assert got["z"] == pytest.approx(0.5 / 63 + 0.5 / 61, rel=1e-6)
    assert got["w"] == pytest.approx(0.5 / 62, rel=1e-6)
    os_mm = {
        "phase_results_processors": [
            {
                "normalization-processor": {
                    "normalization": {"technique": "min_max"},
                    "combination": {
                        "technique": "arithmetic_mean",
                        "parameters": {"weights": [0.6, 0.4]},
                    },
                }
            }
        ]
    }
    got = opensearch_scores([a, b], os_mm)["q"]
    # z: a gives 0 -> MIN_SCORE 0.001; mean over both; w: only b returned it, 0 -> 0.001
    assert got["z"] == pytest.approx((0.6 * 0.001 + 0.4 * 1.0) / 1.0, rel=1e-6)
    assert got["w"] == pytest.approx(0.001, rel=1e-6)
    assert got["x"] == pytest.approx(1.0, rel=1e-6)


def test_all_equal_scores_and_negative_scores() -> None:
    # all equal: every engine and our min-max give 1 (a single result is 'the best')
    assert _es_minmax(np.array([2.0, 2.0], dtype=np.float32)).tolist() == [1.0, 1.0]
    from rankboost.fusion.features import normalise_scores

    run = Run(["q", "q"], ["a", "b"], [1, 2], [2.0, 2.0])
    assert normalise_scores(run, "minmax").tolist() == [1.0, 1.0]
    # all <= 0: Elasticsearch's running max starts at Float.MIN_VALUE, not the true max
    v = _es_minmax(np.array([-1.0, -3.0], dtype=np.float32))
    assert v.tolist() != [1.0, 0.0]
    assert v[0] == pytest.approx(2 / 3, rel=1e-6)


def test_negative_scores_are_caught_not_silently_misranked() -> None:
    a = Run(["q", "q"], ["x", "p"], [1, 2], [-1.0, -3.0], name="a")
    b = Run(["q", "q"], ["y", "r"], [1, 2], [-10.0, -11.0], name="b")
    lin = LinearFusion()
    lin.weights_, lin.list_names_, lin.n_lists_ = np.array([1.0, 1.2]), ["a", "b"], 2
    assert lin.fuse([a, b]).docid[:2].tolist() == ["y", "x"]  # true min-max: y 1.2, x 1
    body = export_linear(lin, "elasticsearch")
    # Elasticsearch: x (-1 + 3) / (0 + 3) = 2/3, y (-10 + 11) / (0 + 11) * 1.2 = 0.11
    assert engine_fuse([a, b], body, "elasticsearch").docid[:2].tolist() == ["x", "y"]
    with pytest.raises(ValueError, match="ranks 1 of 1 queries differently"):
        check_export(lin, [a, b], "elasticsearch", body)


def test_engine_refusals() -> None:
    runs, _ = _toy()
    lin = LinearFusion(normalizer="minmax")
    lin.weights_, lin.list_names_ = np.array([1.0, 2.0]), ["a", "b"]
    with pytest.raises(ValueError, match="approximate=True"):
        export_linear(lin, "opensearch")
    with pytest.raises(ValueError, match="engine must be one of"):
        export_linear(lin, "solr")
    with pytest.raises(ValueError, match="2 lists"):
        export_linear(lin, "elasticsearch", retrievers=[{}])
    lin.weights_ = np.array([-1.0, 2.0])
    with pytest.raises(ValueError, match="weights >= 0"):
        export_linear(lin, "elasticsearch")
    es = {
        "retriever": {
            "linear": {
                "retrievers": [{"retriever": {}, "weight": -0.5}, {"retriever": {}, "weight": 1.0}]
            }
        }
    }
    with pytest.raises(ValueError, match="must be non-negative"):
        elasticsearch_scores(runs, es)
    for ws, msg in (([0.7, 0.7], "sum of weights"), ([1.5, -0.5], "range"), ([1.0], "number")):
        pipe = {
            "phase_results_processors": [
                {
                    "score-ranker-processor": {
                        "combination": {"technique": "rrf", "parameters": {"weights": ws}}
                    }
                }
            ]
        }
        with pytest.raises(ValueError, match=msg):
            engine_fuse(runs, pipe, "opensearch")


def test_bad_input() -> None:
    runs, qrels = _toy()
    other = Run(["zz"], ["d1"], [1], name="b")
    with pytest.raises(ValueError, match="cover different queries"):
        LinearFusion(n_rounds=2, prior_scale=1.0).fit([runs[0], other], qrels)
    lin = LinearFusion(n_rounds=2, prior_scale=1.0).fit(runs, qrels)
    cut = Run(runs[1].qid[runs[1].qid != "q3"], runs[1].docid[runs[1].qid != "q3"],
              runs[1].rank[runs[1].qid != "q3"], name="b")  # fmt: skip
    with pytest.raises(ValueError, match="'q3' only in 'a'"):
        lin.fuse([runs[0], cut])
    with pytest.raises(ValueError, match="score must be finite"):
        Run(["q", "q"], ["a", "b"], [1, 2], [0.5, float("nan")], name="dense")
    with pytest.raises(ValueError, match="score must be finite"):
        Run(["q"], ["a"], [1], [float("inf")], name="dense")
    for bad, msg in (({"normalizer": "l2"}, "normalizer"), ({"n_rounds": -1}, "n_rounds"),
                     ({"prior_scale": -1.0}, "prior_scale"), ({"learning_rate": 0}, "learning"),
                     ({"cv_folds": 1}, "cv_folds")):  # fmt: skip
        with pytest.raises(ValueError, match=msg):
            LinearFusion(**bad).fit(runs, qrels)
    with pytest.raises(ValueError, match="not fitted"):
        LinearFusion().fuse(runs)
    with pytest.raises(ValueError, match="not a linear fusion model"):
        LinearFusion.from_dict({"format": "x"})
    good = lin.to_dict()
    with pytest.raises(ValueError, match="weights must be"):
        LinearFusion.from_dict({**good, "weights": [1.0, -2.0]})


def test_get_and_set_params_as_scikit_learn() -> None:
    """``set_params`` (it had only ``get_params``): what a grid search over it sets."""
    lin = LinearFusion()
    assert lin.set_params(max_rounds=7, normalizer="rrf") is lin
    assert lin.get_params()["max_rounds"] == 7
    assert lin.get_params()["normalizer"] == "rrf"
    assert LinearFusion(**lin.get_params()).get_params() == lin.get_params()
    with pytest.raises(ValueError, match="LinearFusion has no parameter 'rounds'"):
        lin.set_params(rounds=3)


def test_linear_features_rows() -> None:
    a = Run(["q", "q"], ["d1", "d2"], [1, 2], [2.0, 1.0], name="a")
    b = Run(["q"], ["d3"], [1], [7.0], name="b")
    N, qid, docid = linear_features([a, b], "rrf", k=1)
    assert docid.tolist() == ["d1", "d2", "d3"]
    np.testing.assert_allclose(N, [[0.5, 0], [1 / 3, 0], [0, 0.5]])


@pytest.mark.skipif(not DENSE.is_file(), reason="the committed dense run is missing")
def test_committed_dense_run() -> None:
    """The committed MiniLM run: 76 judged CISI queries, top 100, cosines in [-1, 1]."""
    from rankboost.fusion import read_run

    run = read_run(DENSE, name="minilm")
    assert len(run.queries) == 76
    assert run.rank.max() == 100
    assert len(run) == 7600
    assert np.all(np.abs(run.score) <= 1.0 + 1e-6)


def test_prior_scale_zero_is_plain_rankboost_and_the_prior_alone() -> None:
    from rankboost.fusion import RankFusion

    runs, qrels = _toy(seed=2)
    plain = RankFusion(n_rounds=5, missing_features=False).fit(runs, qrels)
    zero = RankFusion(n_rounds=5, missing_features=False, prior="combsum", prior_scale=0.0)
    zero.fit(runs, qrels)
    np.testing.assert_allclose(zero.decision_function(runs)[1],
                               plain.decision_function(runs)[1], rtol=1e-9)  # fmt: skip
    big = RankFusion(n_rounds=3, prior="rrf", prior_scale=2.0).fit(runs, qrels)
    _, f0 = big.decision_function(runs, n_rounds=0)
    k = 60
    feats = big.features(runs)
    expect = np.zeros(feats.X.shape[0])
    for i in range(2):
        rank = -feats.X[:, i]
        expect += np.where(np.isnan(rank), 0.0, (k + 1) / (k + rank))
    np.testing.assert_allclose(f0, 2.0 * expect, rtol=1e-12)


def test_prior_model_round_trip(tmp_path: Path) -> None:
    from rankboost.fusion import RankFusion

    runs, qrels = _toy(seed=5)
    fus = RankFusion(max_rounds=6, cv_folds=3, prior="combsum").fit(runs, qrels)
    assert fus.cv_results_ is not None
    assert fus.cv_results_["mean"].shape == (5, 7)
    fus.save(tmp_path / "p.json")
    data = json.loads((tmp_path / "p.json").read_text())
    assert data["version"] == 2
    assert data["params"]["prior"] == "combsum"
    back = RankFusion.load(tmp_path / "p.json")
    assert back.fuse(runs) == fus.fuse(runs)
    with pytest.raises(ValueError, match="prior_scale"):
        RankFusion.from_dict({**data, "prior_scale": "big"})
    with pytest.raises(ValueError, match="prior"):
        RankFusion(prior="bm25").fit(runs, qrels)


def test_cli_linear_train_apply_export(tmp_path: Path, capsys) -> None:
    import argparse

    from rankboost.cli.fuse import register, run
    from rankboost.fusion import read_run, write_qrels, write_run

    parser = argparse.ArgumentParser(prog="rankboost")
    register(parser.add_subparsers(dest="command"))
    runs, qrels = _toy(seed=7)
    paths = []
    for r in runs:
        paths.append(str(tmp_path / f"{r.name}.run"))
        write_run(paths[-1], r)
    write_qrels(tmp_path / "q.txt", qrels)
    model = str(tmp_path / "lin.json")
    argv = [
        "fuse",
        "train",
        "--runs",
        *paths,
        "--qrels",
        str(tmp_path / "q.txt"),
        "-o",
        model,
        "--family",
        "linear",
        "--normalizer",
        "rrf",
        "--max-rounds",
        "10",
        "--cv-folds",
        "3",
    ]
    assert run(parser.parse_args(argv)) == 0
    lin = LinearFusion.load(model)
    assert lin.normalizer == "rrf"
    assert "linear weights" in capsys.readouterr().err
    out = str(tmp_path / "fused.run")
    assert run(parser.parse_args(["fuse", "apply", model, "--runs", *paths, "-o", out])) == 0
    assert (
        read_run(out).docid.tolist()
        == lin.fuse([read_run(p) for p in paths], match="order").docid.tolist()
    )
    for engine in ("elasticsearch", "opensearch"):
        body = str(tmp_path / f"{engine}.json")
        argv = ["fuse", "export", model, "--engine", engine, "-o", body, "--check-runs", *paths]
        assert run(parser.parse_args(argv)) == 0
        assert "ranks the 12 queries as fuse apply" in capsys.readouterr().err
        assert check_export(lin, [read_run(p) for p in paths], engine,
                            json.loads(Path(body).read_text())) == 12  # fmt: skip
    with pytest.raises(ValueError, match="not valid JSON.*linear fusion model"):
        run(parser.parse_args(["fuse", "export", paths[0], "--engine", "opensearch",
                               "-o", str(tmp_path / "x.json")]))  # fmt: skip


# the prior leaves nothing to learn on the toy
@pytest.mark.filterwarnings("ignore::rankboost.TrainingStoppedWarning")
def test_prior_init_score_equals_the_prior_weighted_pairs() -> None:
    """RankFusion's prior (the engine's init_score) == the SPEC 7.2 distribution as pairs."""
    from rankboost.engine import train_checked as _train
    from rankboost.feedback import LayeredFeedback
    from rankboost.fusion import RankFusion, grades_for
    from rankboost.fusion.prior import prior_feedback, prior_scores
    from rankboost.params import TrainParams

    runs, qrels = _toy(seed=8)
    fus = RankFusion(n_rounds=6, prior="combsum", prior_scale=3.0).fit(runs, qrels)
    feats = fus.features(runs)
    y = grades_for(feats, qrels)
    _, qcode = np.unique(feats.qid, return_inverse=True)
    F0 = prior_scores(runs, feats, "combsum")
    p = TrainParams(n_rounds=6, positive_cumulative=True)
    pairs = _train(feats.X, prior_feedback(y, qcode.astype(np.int64), F0, 3.0), p)
    layered = _train(feats.X, LayeredFeedback(y, qcode), p, init_score=3.0 * F0)
    got = fus.decision_function(runs)[1]
    np.testing.assert_allclose(got, 3.0 * F0 + layered.decision_function(feats.X), rtol=1e-12)
    np.testing.assert_allclose(
        pairs.decision_function(feats.X), layered.decision_function(feats.X), rtol=1e-9, atol=1e-9
    )


def test_query_and_document_ids_that_concatenate_alike_stay_apart() -> None:
    """(q "1", d "1383") and (q "11", d "383") are two rows (a string key merged them)."""
    from rankboost.fusion import fusion_features

    a = Run(["1", "11"], ["1383", "383"], [1, 1], name="a")
    f = fusion_features([a])
    assert f.qid.tolist() == ["1", "11"]
    assert f.docid.tolist() == ["1383", "383"]
    assert f.X[:, 0].tolist() == [-1.0, -1.0]


def test_cli_prior_options(tmp_path: Path) -> None:
    import argparse

    from rankboost.cli.fuse import register, run
    from rankboost.fusion import RankFusion, write_qrels, write_run

    parser = argparse.ArgumentParser(prog="rankboost")
    register(parser.add_subparsers(dest="command"))
    runs, qrels = _toy(seed=9)
    paths = []
    for r in runs:
        paths.append(str(tmp_path / f"{r.name}.run"))
        write_run(paths[-1], r)
    write_qrels(tmp_path / "q.txt", qrels)
    model = str(tmp_path / "p.json")
    base = ["fuse", "train", "--family", "boost",
            "--runs", *paths, "--qrels", str(tmp_path / "q.txt"), "-o", model]  # fmt: skip
    argv = [*base, "--prior", "rrf", "--prior-scale", "2", "--rounds", "3"]
    assert run(parser.parse_args(argv)) == 0
    fus = RankFusion.load(model)
    assert (fus.prior, fus.prior_scale_, fus.n_rounds_) == ("rrf", 2.0, 3)
    with pytest.raises(SystemExit):
        parser.parse_args([*base, "--prior-scale", "-1"])
    from rankboost.cli import UsageError

    with pytest.raises(UsageError, match="--prior-scale auto .* with --rounds 3 pass a scale"):
        run(parser.parse_args([*base, "--prior", "combsum", "--rounds", "3"]))


def _one_document_runs(shift: float) -> tuple[list[Run], Qrels]:
    """Two retrievers; 'b' returns one document for q0 (its min-max is 1 in fuse apply)."""
    qs = ["q0"] * 3 + ["q1"] * 3
    ds = ["x", "y", "z"] * 2
    a = Run.from_scores(qs, ds, [shift - 1.0, shift - 2.0, shift - 3.0] * 2, name="a")
    b = Run.from_scores(["q0", "q1", "q1", "q1"], ["z", "z", "y", "x"],
                        [shift - 5.0, shift - 1.0, shift - 2.0, shift - 3.0], name="b")  # fmt: skip
    return [a, b], Qrels(qs, ds, [1, 0, 1, 1, 0, 1])


def test_issue38_check_export_says_why_scores_below_zero_rank_differently() -> None:
    """A one-document list with a score <= 0 (rankboost convert writes -rank): Elasticsearch's
    minmax gives it 0 (its running maximum starts at Float.MIN_VALUE), fuse apply 1; the check
    failed with "ranks 1 of 2 queries differently" and no reason. It now names the cause and
    what to do; with scores > 0 (what Elasticsearch returns) the two agree."""
    from rankboost.fusion.engines import check_export, export_linear

    lin = LinearFusion(normalizer="minmax")
    lin.weights_, lin.list_names_, lin.n_lists_ = np.array([1.0, 0.75]), ["a", "b"], 2
    body = export_linear(lin, "elasticsearch")
    runs, _ = _one_document_runs(shift=0.0)
    with pytest.raises(ValueError, match="ranks 1 of 2 queries differently") as err:
        check_export(lin, runs, "elasticsearch", body)
    text = str(err.value)
    assert "query 'q0', rank 2: fuse apply puts 'z' there, elasticsearch 'y'" in text
    assert "Every one of these differences comes from scores <= 0" in text
    assert "Float.MIN_VALUE" in text
    assert "add a constant to every score" in text
    runs, _ = _one_document_runs(shift=10.0)
    assert check_export(lin, runs, "elasticsearch", body) == 2


def test_issue38_check_export_says_why_ranks_with_gaps_rank_differently() -> None:
    """RRF: the engines count positions 1..n; runs that keep other ranks (LETOR-agg's) differ."""
    from rankboost.fusion.engines import check_export, export_linear

    lin = LinearFusion(normalizer="rrf", rank_constant=1)
    lin.weights_, lin.list_names_, lin.n_lists_ = np.array([1.0, 1.0]), ["a", "b"], 2
    a = Run(["q"] * 3, ["x", "y", "z"], [1, 2, 3], name="a")
    b = Run(["q"] * 2, ["z", "y"], [1, 40], name="b")  # y: rank 40, the engine's position 2
    for engine in ("elasticsearch", "opensearch"):
        with pytest.raises(ValueError, match="ranks 1 of 1 queries differently") as err:
            check_export(lin, [a, b], engine, export_linear(lin, engine))
        assert "ranks that are not the positions 1, 2, 3" in str(err.value)
        assert "run 'b', query 'q': ranks [1, 40]" in str(err.value)
        b2 = Run(["q"] * 2, ["z", "y"], [1, 2], name="b")
        assert check_export(lin, [a, b2], engine, export_linear(lin, engine)) == 1


def test_issue38_fuse_train_and_export_warn_on_a_degenerate_model(tmp_path, capsys) -> None:
    """A zero weight, a ranking that is one list's, a model of 0 or 1 round: a warning."""
    from rankboost.cli import main
    from rankboost.fusion import write_qrels, write_run

    runs, qrels = _toy(seed=3)
    paths = []
    for r in runs:
        paths.append(str(tmp_path / f"{r.name}.run"))
        write_run(paths[-1], r)
    write_qrels(tmp_path / "q.txt", qrels)
    model = str(tmp_path / "lin.json")
    head = ["fuse", "train", "--family", "linear", "--runs", *paths, "--qrels"]
    argv = [*head, str(tmp_path / "q.txt"), "-o", model, "--prior-scale", "0", "--rounds", "1"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "rankboost: warning: degenerate fusion model: every weight is 0 but that of" in err
    assert "the model has 1 round: one step on one list" in err
    assert main(["fuse", "export", model, "--engine", "elasticsearch", "-o",
                 str(tmp_path / "es.json")]) == 0  # fmt: skip
    assert "the fused ranking is the ranking of" in capsys.readouterr().err
    argv = [*head, str(tmp_path / "q.txt"), "-o", model, "--prior-scale", "1", "--rounds", "8"]
    assert main(argv) == 0
    assert "degenerate" not in capsys.readouterr().err
    boost = ["fuse", "train", "--family", "boost",
             "--runs", *paths, "--qrels", str(tmp_path / "q.txt"), "--rounds"]  # fmt: skip
    assert main([*boost, "1", "-o", str(tmp_path / "b.json")]) == 0
    err = capsys.readouterr().err
    assert "degenerate fusion model: the model has 1 round: one weak ranker" in err
    assert "or set --rounds" not in err  # the user set it
