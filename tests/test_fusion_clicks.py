"""Issue 51: a fusion learned from a click log (``fit_clicks``, ``fuse train --clicks``)."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

from rankboost.cli import main
from rankboost.clicks import ClickLog, click_counts, simulate_clicks, write_click_log
from rankboost.fusion import AutoFusion, LinearFusion, Qrels, RankFusion, Run, write_run
from rankboost.fusion.clicks import PairPotential, click_targets, fit_clicks
from rankboost.fusion.features import FusionFeatures, FusionWarning, grades_for
from rankboost.fusion.linear import linear_features, weight_path

N_Q, N_D = 30, 12


@pytest.fixture(scope="module")
def hybrid():
    """Two runs of 30 queries: ``good`` ranks the 3 relevant documents high, ``noise`` not."""
    rng = np.random.default_rng(3)
    qs, ds, rel, good_rank, noise_rank = [], [], [], [], []
    for i in range(N_Q):
        docs = [f"d{j}" for j in range(N_D)]
        r = np.zeros(N_D, dtype=int)
        r[rng.choice(N_D, 3, replace=False)] = 1
        g = np.argsort(np.argsort(-(r * 2.0 + rng.normal(size=N_D)))) + 1
        n = rng.permutation(N_D) + 1
        qs += [f"q{i}"] * N_D
        ds += docs
        rel += r.tolist()
        good_rank += g.tolist()
        noise_rank += n.tolist()
    qs, ds = np.array(qs), np.array(ds)
    good_rank, noise_rank = np.array(good_rank), np.array(noise_rank)
    good = Run(qs, ds, good_rank, -good_rank.astype(float), name="good")
    noise = Run(qs, ds, noise_rank, -noise_rank.astype(float), name="noise")
    qrels = Qrels(qs, ds, np.array(rel))
    return [good, noise], qrels


def _log(runs, qrels, weights=(0.5, 0.5), n=3000, eta=1.0, seed=0):
    """A simulated log on the top 10 of a weighted sum of the runs' min-max scores."""
    N, qid, docid = linear_features(runs, "minmax")
    y = grades_for(FusionFeatures(np.empty((qid.size, 0)), qid, docid, []), qrels)
    return simulate_clicks(
        y, qid, N @ np.asarray(weights), n, eta=eta, docids=docid, random_state=seed
    )


def _ndcg(model, runs, qrels):
    from rankboost.fusion import evaluate_run

    return evaluate_run(model.fuse(runs), qrels, metrics=["ndcg@10"])["ndcg@10"]


# ------------------------------------------------------------------ the potential ---------
def test_issue51_pair_potential_is_the_layered_one_on_a_single_query():
    """All (lower grade, higher grade) pairs of one query, weight 1: the same ``pi`` and the
    same weight path as LinearFusion's closed-form layered feedback (the oracle)."""
    from rankboost.fusion.linear import boost_path

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 15)
    H = rng.random((15, 2))
    lo, up = np.nonzero(y[:, None] < y[None, :])
    fb = PairPotential(np.column_stack([lo, up]), np.ones(lo.size), 15)
    q = np.zeros(15, dtype=np.int64)
    np.testing.assert_allclose(
        boost_path(H, fb, 0.5, 10, 0.3), weight_path(H, y, q, 0.5, 10, 0.3), rtol=1e-10
    )


# ------------------------------------------------------------------ fitting ---------------
@pytest.mark.parametrize("est", [LinearFusion(), RankFusion(max_rounds=30), AutoFusion()])
def test_issue51_every_pair_family_learns_the_good_run_from_clicks(hybrid, est):
    runs, qrels = hybrid
    sim = _log(runs, qrels, weights=(0.5, 0.5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FusionWarning)
        model = fit_clicks(est, runs, sim.log)
    assert type(model) is type(est)
    assert not hasattr(est, "list_names_")  # the estimator given is not changed
    assert model.list_names_ == ["good", "noise"]
    logger = LinearFusion.from_weights(["good", "noise"], [0.5, 0.5])
    assert _ndcg(model, runs, qrels) > _ndcg(logger, runs, qrels) + 0.05


def test_issue51_naive_and_debiased_differ_and_oracle_propensity_is_used(hybrid):
    runs, qrels = hybrid
    sim = _log(runs, qrels, eta=2.0)
    t_none = click_targets(runs, sim.log, propensity="none")
    t_true = click_targets(runs, sim.log, propensity=sim.propensity)
    assert t_none.propensity.method == "none"
    np.testing.assert_allclose(t_true.propensity.values, sim.propensity.values)
    # the same pairs, weighted by 1/p_k of the clicked position
    np.testing.assert_array_equal(t_none.pairs, t_true.pairs)
    assert np.all(t_true.weights >= t_none.weights)
    assert np.any(t_true.weights > t_none.weights)
    # the held-out gains are click-through rates: raw, then divided by p_k
    assert t_none.gain.max() <= 1.0
    assert t_true.gain.max() > 1.0


def test_issue51_propensity_auto_harvests_interventions_from_two_loggers(hybrid):
    """Two fusions served A/B: documents move between positions, so ``"auto"`` takes the
    intervention-harvesting estimator (Agarwal et al. 2019)."""
    runs, qrels = hybrid
    a = _log(runs, qrels, weights=(0.9, 0.1), n=4000, seed=1).log
    b = _log(runs, qrels, weights=(0.1, 0.9), n=4000, seed=2).log
    both = ClickLog.from_arrays(
        qid=np.r_[a.qid, b.qid],
        docid=np.r_[a.docid, b.docid],
        position=np.r_[a.position, b.position],
        click=np.r_[a.click, b.click],
        session=np.r_[np.repeat(np.arange(a.n_sessions), np.diff(a.starts)),
                      a.n_sessions + np.repeat(np.arange(b.n_sessions), np.diff(b.starts))],
    )  # fmt: skip
    t = click_targets(runs, both)
    assert t.propensity.method == "intervention_harvesting"
    one = click_targets(runs, a)
    assert one.propensity.method == "regression_em"


def test_issue51_fixed_rounds_and_a_prior_need_no_cross_validation(hybrid):
    runs, qrels = hybrid
    sim = _log(runs, qrels, n=300)
    lin = fit_clicks(LinearFusion(n_rounds=3, prior_scale=1.0), runs, sim.log)
    assert lin.n_rounds_ == 3
    assert lin.prior_scale_ == 1.0
    rf = fit_clicks(RankFusion(prior="combsum", n_rounds=0, prior_scale=2.0), runs, sim.log)
    assert rf.n_rounds_ == 0
    assert rf.prior_scale_ == 2.0
    rf = fit_clicks(RankFusion(prior="combsum", n_rounds=5, prior_scale=1.0), runs, sim.log)
    assert rf.n_rounds_ == 5


def test_issue51_a_click_trained_model_saves_loads_and_exports(hybrid, tmp_path):
    """Item 5: the model goes to the engines as any linear model does."""
    from rankboost.fusion.engines import export_linear

    runs, qrels = hybrid
    lin = fit_clicks(LinearFusion(), runs, _log(runs, qrels).log)
    lin.save(tmp_path / "lin.json")
    again = LinearFusion.load(tmp_path / "lin.json")
    np.testing.assert_array_equal(again.weights_, lin.weights_)
    request = export_linear(again, "elasticsearch")
    weights = [r["weight"] for r in request["retriever"]["linear"]["retrievers"]]
    np.testing.assert_allclose(weights, lin.weights_, rtol=1e-6)


# ------------------------------------------------------------------ bad input -------------
def test_issue51_log_documents_not_in_the_runs_are_named_and_counted(hybrid):
    runs, qrels = hybrid
    log = ClickLog.from_arrays(
        qid=["q0", "q0", "q0", "q1", "q1"],
        docid=["d0", "zz1", "zz2", "d0", "zz1"],
        position=[1, 2, 3, 1, 2],
        click=[1, 0, 0, 0, 1],
    )
    with pytest.raises(ValueError, match=r"3 rows \(3 distinct documents\) have no row in the "
                       r"runs: \(qid q0, docid zz1\), \(qid q0, docid zz2\), \(qid q1, "
                       r"docid zz1\).*pass the runs the logged fusion fused"):  # fmt: skip
        fit_clicks(LinearFusion(), runs, log)


def test_issue51_a_log_without_clicks_and_queries_without_one(hybrid):
    runs, _ = hybrid
    silent = ClickLog.from_arrays(
        qid=["q0", "q0", "q1", "q1"], docid=["d0", "d1", "d0", "d1"], position=[1, 2, 1, 2],
        click=[0, 0, 0, 0],
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"has no click \(2 sessions\)"):
        fit_clicks(LinearFusion(), runs, silent)
    some = ClickLog.from_arrays(
        qid=["q0", "q0", "q1", "q1"], docid=["d0", "d1", "d0", "d1"], position=[1, 2, 1, 2],
        click=[1, 0, 0, 0],
    )  # fmt: skip
    with pytest.warns(FusionWarning, match=r"1 of the 2 queries of click log have no click "
                      r"\(q1\); they give no pair"):  # fmt: skip
        fit_clicks(LinearFusion(n_rounds=2, prior_scale=0.0), runs, some)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FusionWarning)
        with pytest.raises(ValueError, match=r"needs at least 5 of them; the log has 1"):
            fit_clicks(LinearFusion(), runs, some)


def test_issue51_too_few_queries_to_rank_says_which_are_missing_and_why():
    """Queries whose every document was clicked have nothing to rank below a click: the
    error counts them apart from the queries the inner folds can use."""
    qs = np.repeat([f"q{i}" for i in range(6)], 2)
    ds = np.tile(["a", "b"], 6)
    runs = [
        Run(qs, ds, np.tile([1, 2], 6), np.tile([2.0, 1.0], 6), name="one"),
        Run(qs, ds, np.tile([2, 1], 6), np.tile([1.0, 2.0], 6), name="two"),
    ]
    log = ClickLog.from_arrays(
        qid=qs, docid=ds, position=np.tile([1, 2], 6),
        click=[1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1],
    )  # fmt: skip
    want = (
        r"^LinearFusion fit_clicks: the rounds and the prior's scale are chosen by 5-fold "
        r"cross-validation over the queries with a click and a document without, which needs "
        r"at least 5 of them; the log has 2 \(4 other clicked queries have a click on every "
        r"document the runs return, which leaves nothing to rank below it\)\. Pass an int "
        r"number of rounds"
    )
    with pytest.raises(ValueError, match=want):
        fit_clicks(LinearFusion(), runs, log)
    # with fixed rounds and prior scale nothing is chosen: the same log trains
    lin = fit_clicks(LinearFusion(n_rounds=3, prior_scale=0.0), runs, log)
    assert lin.n_rounds_ == 3


def test_issue51_wrong_types_and_the_options_of_train_clicks(hybrid):
    runs, qrels = hybrid
    log = _log(runs, qrels, n=200).log
    with pytest.raises(TypeError, match="estimator must be a LinearFusion, RankFusion or "):
        fit_clicks(object(), runs, log)
    with pytest.raises(TypeError, match="clicks= must be a rankboost.clicks.ClickLog"):
        fit_clicks(LinearFusion(), runs, [1, 2, 3])
    with pytest.raises(TypeError, match="click counts are matched to feature rows"):
        fit_clicks(LinearFusion(), runs, click_counts(log))
    with pytest.raises(ValueError, match="max_weight must be >= 1"):
        fit_clicks(LinearFusion(), runs, log, max_weight=0.5)
    with pytest.raises(ValueError, match="pairs must be one of"):
        fit_clicks(LinearFusion(), runs, log, pairs="everything")
    with pytest.raises(ValueError, match="propensity covers positions 1..2 but the log"):
        fit_clicks(LinearFusion(), runs, log, propensity=[1.0, 0.5])


# ------------------------------------------------------------------ the command line ------
@pytest.fixture(scope="module")
def files(hybrid, tmp_path_factory):
    runs, qrels = hybrid
    tmp = tmp_path_factory.mktemp("fuse_clicks")
    paths = []
    for r in runs:
        write_run(tmp / f"{r.name}.run", r)
        paths.append(str(tmp / f"{r.name}.run"))
    write_click_log(tmp / "clicks.tsv.gz", _log(runs, qrels).log)
    return tmp, paths


def _cli(capsys, argv):
    capsys.readouterr()
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exc:
        status = int(exc.code or 0)
    err = capsys.readouterr().err
    return status, err


@pytest.mark.parametrize("family", ["linear", "boost", "auto"])
def test_issue51_fuse_train_clicks_then_export(files, capsys, family):
    tmp, runs = files
    out = tmp / f"{family}.json"
    argv = ["fuse", "train", "--family", family, "--runs", *runs,
            "--clicks", tmp / "clicks.tsv.gz", "-o", out]  # fmt: skip
    if family == "boost":
        argv += ["--max-rounds", "30"]
    status, err = _cli(capsys, argv)
    assert status == 0, err
    assert "--clicks: learning from" in err
    assert "propensity regression_em: p1=1" in err
    assert json.loads(out.read_text())["list_names"]
    if family == "linear":
        status, err = _cli(capsys, ["fuse", "export", out, "--engine", "elasticsearch", "-o",
                                    tmp / "es.json"])  # fmt: skip
        assert status == 0, err
        assert "linear" in json.loads((tmp / "es.json").read_text())["retriever"]


@pytest.mark.parametrize(
    ("extra", "status", "match"),
    [
        (["CLICKS", "QRELS"], 2, r"--qrels FILE or from --clicks LOG: pass one of them, not both"),
        ([], 2, r"from --qrels FILE or from --clicks LOG: pass one of them\."),
        (["QRELS", "--propensity", "none"], 1, r"--propensity needs --clicks LOG"),
        (["CLICKS", "--plot", "cv.png"], 2, r"a fit on --clicks does not keep its curves"),
        (["CLICKS", "--max-weight", "0.5"], 1, r"--max-weight must be >= 1; got 0.5"),
        (["CLICKS", "--propensity", "missing.tsv"], 1, r"missing\.tsv"),
    ],
)
def test_issue51_fuse_train_clicks_bad_input(files, capsys, extra, status, match):
    tmp, runs = files
    (tmp / "q.txt").write_text("q0 0 d0 1\n")
    named = {"CLICKS": ["--clicks", tmp / "clicks.tsv.gz"], "QRELS": ["--qrels", tmp / "q.txt"]}
    argv = ["fuse", "train", "--family", "linear", "--runs", *runs, "-o", tmp / "bad.json"]
    for word in extra:
        argv += named.get(word, [word])
    got, err = _cli(capsys, argv)
    assert got == status
    lines = [ln for ln in err.splitlines() if ln.startswith("rankboost: error:")]
    assert len(lines) == 1
    assert "Traceback" not in err
    assert re.search(match, lines[0]), lines[0]


def test_issue51_fuse_train_clicks_unknown_documents_exit_1(files, capsys):
    tmp, runs = files
    bad = ClickLog.from_arrays(qid=["q0", "q0"], docid=["d0", "nope"], position=[1, 2],
                               click=[0, 1])  # fmt: skip
    write_click_log(tmp / "bad.tsv", bad)
    status, err = _cli(capsys, ["fuse", "train", "--runs", *runs, "--clicks", tmp / "bad.tsv",
                                "-o", tmp / "m.json"])  # fmt: skip
    assert status == 1
    assert "1 rows (1 distinct documents) have no row in the runs: (qid q0, docid nope)" in err
    assert "Traceback" not in err


# ------------------------------------------------------------------ simulating a fusion ---
def test_issue51_simulate_served_shows_the_fusions_top_and_clicks_by_grade(hybrid):
    from rankboost.clicks import simulate_clicks
    from rankboost.fusion.clicks import served_rows, simple_fusion, simulate_served

    runs, qrels = hybrid
    rrf = simple_fusion("rrf", ["good", "noise"])
    sim = simulate_served(rrf, runs, qrels, 500, eta=2.0, model="cascade", random_state=4)
    y, qid, docid, score = served_rows(rrf, runs, qrels)
    same = simulate_clicks(y, qid, score, 500, eta=2.0, model="cascade", docids=docid,
                           random_state=4)  # fmt: skip
    np.testing.assert_array_equal(sim.log.docid, same.log.docid)
    np.testing.assert_array_equal(sim.log.click, same.log.click)
    fused = rrf.fuse(runs)
    top = {(q, d) for q, d, r in zip(fused.qid, fused.docid, fused.rank, strict=True) if r == 1}
    first = sim.log.position == 1
    assert set(zip(sim.log.qid[first], sim.log.docid[first], strict=True)) <= top
    # cascade: at most one click per session
    assert np.bincount(np.repeat(np.arange(sim.log.n_sessions), np.diff(sim.log.starts)),
                       weights=sim.log.click).max() == 1  # fmt: skip
    with pytest.raises(ValueError, match=r"wsum needs one weight per run \(2: good, noise\)"):
        simple_fusion("wsum:1", ["good", "noise"])


def test_issue51_clicks_simulate_on_a_fusion_then_fuse_train(files, hybrid, capsys):
    """Item 2 end to end: simulate on a model's lists, learn from them, export."""
    tmp, runs = files
    _, qrels = hybrid
    from rankboost.fusion import write_qrels

    write_qrels(tmp / "qrels.txt", qrels)
    model = tmp / "sum.json"
    LinearFusion.from_weights(runs, [0.5, 0.5]).save(model)
    for spec, log in ((model, "m.tsv.gz"), ("wsum:0.2,0.8", "w.tsv.gz")):
        status, err = _cli(capsys, ["clicks", "simulate", "--runs", *runs, "--qrels",
                                    tmp / "qrels.txt", "--fusion", spec, "--sessions", "800",
                                    "-o", tmp / log])  # fmt: skip
        assert status == 0, err
    out = tmp / "from_sim.json"
    status, err = _cli(capsys, ["fuse", "train", "--family", "linear", "--runs", *runs,
                                "--clicks", tmp / "m.tsv.gz", "-o", out])  # fmt: skip
    assert status == 0, err
    assert "800 sessions" in err
    lin = LinearFusion.load(out)
    assert lin.weights_[0] > lin.weights_[1]  # 'good' learned from the clicks


@pytest.mark.parametrize(
    ("argv", "status", "match"),
    [
        (["DATA", "--fusion", "rrf"], 2, r"takes DATA or a fusion's lists .*got DATA and --fusion"),
        (["RUNS", "QRELS"], 2, r"--runs, --qrels and --fusion together; missing --fusion"),
        (["RUNS", "QRELS", "--fusion", "rrf", "--production-share", "0.5"], 2,
         r"drop --production-share"),
        (["RUNS", "QRELS", "--fusion", "wsum:1,2,3"], 1, r"wsum needs one weight per run"),
        (["RUNS", "QRELS", "--fusion", "nope.json"], 1, r"nope\.json"),
    ],
)  # fmt: skip
def test_issue51_clicks_simulate_fusion_bad_input(files, capsys, argv, status, match):
    tmp, runs = files
    (tmp / "q.txt").write_text("q0 0 d0 1\n")
    named = {
        "DATA": [tmp / "q.txt"],
        "RUNS": ["--runs", *runs],
        "QRELS": ["--qrels", tmp / "q.txt"],
    }
    full = ["clicks", "simulate", "-o", tmp / "bad.tsv"]
    for word in argv:
        full += named.get(word, [word])
    got, err = _cli(capsys, full)
    assert got == status
    lines = [ln for ln in err.splitlines() if ln.startswith("rankboost: error:")]
    assert len(lines) == 1
    assert re.search(match, lines[0]), lines[0]


# ------------------------------------------------------------------ held_out="shown" ------
def test_issue51_held_out_shown_ranks_the_shown_documents_only(hybrid):
    runs, qrels = hybrid
    sim = _log(runs, qrels, n=400)
    t_all = click_targets(runs, sim.log)
    t = click_targets(runs, sim.log, held_out="shown")
    assert t_all.scored is None
    shown = np.zeros(t.qid.size, dtype=bool)
    shown[sim.log.match(t.qid, t.docid).row] = True
    np.testing.assert_array_equal(t.scored, shown)
    assert 0 < shown.sum() < shown.size  # the top 10 of 12 documents: some never shown
    rows = np.ones(t.qid.size, dtype=bool)
    np.testing.assert_array_equal(t.held(rows), shown)
    np.testing.assert_array_equal(t_all.held(rows), rows)
    # the same pairs and gains: only what the inner folds rank changes
    np.testing.assert_array_equal(t.pairs, t_all.pairs)
    np.testing.assert_array_equal(t.gain, t_all.gain)
    with pytest.raises(ValueError, match=r"held_out must be 'all' or 'shown'; got 'some'"):
        click_targets(runs, sim.log, held_out="some")


@pytest.mark.parametrize("est", [LinearFusion(), RankFusion(max_rounds=30), AutoFusion()])
def test_issue51_every_pair_family_fits_with_held_out_shown(hybrid, est):
    runs, qrels = hybrid
    sim = _log(runs, qrels, weights=(0.5, 0.5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FusionWarning)
        model = fit_clicks(est, runs, sim.log, held_out="shown")
    logger = LinearFusion.from_weights(["good", "noise"], [0.5, 0.5])
    assert _ndcg(model, runs, qrels) > _ndcg(logger, runs, qrels) + 0.05


def test_issue51_fuse_train_held_out(files, capsys):
    tmp, runs = files
    base = ["fuse", "train", "--family", "linear", "--runs", *runs, "-o", tmp / "h.json"]
    status, err = _cli(capsys, [*base, "--clicks", tmp / "clicks.tsv.gz", "--held-out", "shown"])
    assert status == 0, err
    (tmp / "q.txt").write_text("q0 0 d0 1\n")
    status, err = _cli(capsys, [*base, "--qrels", tmp / "q.txt", "--held-out", "shown"])
    assert status == 2
    assert "--held-out chooses what the inner folds of --clicks rank; pass the log." in err
    status, err = _cli(capsys, [*base, "--clicks", tmp / "clicks.tsv.gz", "--held-out", "x"])
    assert status == 2
    assert "invalid choice: 'x'" in err
