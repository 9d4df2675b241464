"""``AutoFusion`` / ``fuse train --family auto``: the family chosen by inner CV (issue 33)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rankboost.cli import main as cli_main
from rankboost.fusion import FusionWarning, Qrels, Run, read_run, write_qrels, write_run
from rankboost.fusion.auto import CANDIDATES, AutoFusion, convex_weights
from rankboost.fusion.linear import LinearFusion, linear_features
from rankboost.metrics import ndcg_score
from rankboost.params import ParameterError
from test_fusion_linear import _toy


def _brute_convex(runs: list[Run], qrels: Qrels) -> tuple[float, float]:
    """The first best weight of run a on the grid 0.5 +- k/20 (nearest to 0.5 first)."""
    from rankboost.fusion.auto import _rows
    from rankboost.fusion.features import grades_for

    N, qid, docid = linear_features(runs, "minmax")
    y = grades_for(_rows(qid, docid), qrels)
    grid = sorted((k / 20 for k in range(21)), key=lambda a: abs(a - 0.5))
    scores = [ndcg_score(y, N @ np.array([a, 1 - a]), qid, k=10) for a in grid]
    return grid[int(np.argmax(scores))], float(max(scores))


def test_convex_weights_are_the_grid_best() -> None:
    runs, qrels = _toy(n_q=12, seed=7)
    a, best = _brute_convex(runs, qrels)
    from rankboost.fusion.auto import _rows
    from rankboost.fusion.features import grades_for

    N, qid, docid = linear_features(runs, "minmax")
    w, s = convex_weights(N, grades_for(_rows(qid, docid), qrels), qid)
    assert w.tolist() == pytest.approx([a, 1 - a], abs=1e-12)
    assert s == pytest.approx(best, abs=1e-12)


def test_auto_keeps_convex_unless_a_family_wins_by_one_se() -> None:
    runs, qrels = _toy(n_q=20, seed=3)
    auto = AutoFusion(candidates=("convex", "rrf", "linear"), fallback="convex", cv_folds=4,
                      threshold_se=1.0).fit(runs, qrels)  # fmt: skip
    table = auto.selection_["candidates"]
    assert set(table) == {"convex", "rrf", "linear"}
    assert table["convex"]["diff"] == 0.0
    best = max(table, key=lambda c: table[c]["mean"])
    won = best != "convex" and table[best]["diff"] > 1.0 * table[best]["se"]
    assert auto.family_ == (best if won else "convex")
    # the final model is the chosen family refitted on all queries
    if auto.family_ == "convex":
        a, _ = _brute_convex(runs, qrels)
        assert auto.model_.weights_.tolist() == pytest.approx([a, 1 - a], abs=1e-6)


def test_auto_switches_when_a_family_clearly_wins() -> None:
    # a perfect run and a reversed one: the convex weight 1 on the perfect run wins every
    # query, RRF (equal weights) ties them; with rrf as the fallback, convex must replace it
    qs = np.repeat([f"q{i}" for i in range(12)], 6)
    ds = np.tile([f"d{j}" for j in range(6)], 12)
    rel = np.tile([1, 1, 0, 0, 0, 0], 12)
    good = Run.from_scores(qs, ds, np.tile([6.0, 5, 4, 3, 2, 1], 12), name="good")
    bad = Run.from_scores(qs, ds, np.tile([1.0, 2, 3, 4, 5, 6], 12), name="bad")
    qrels = Qrels(qs, ds, rel)
    auto = AutoFusion(candidates=("rrf", "convex"), fallback="rrf", cv_folds=3, threshold_se=2.0)
    auto.fit([good, bad], qrels)
    assert auto.family_ == "convex"
    w = auto.model_.weights_  # the weight nearest 50/50 that orders every query perfectly
    assert w.tolist() == pytest.approx([0.55, 0.45], abs=1e-6)
    fused = auto.fuse([good, bad])
    assert fused.docid[(fused.qid == "q0") & (fused.rank <= 2)].tolist() == ["d0", "d1"]


def test_save_load_round_trip_and_cli(tmp_path: Path, capsys) -> None:
    runs, qrels = _toy(n_q=12, seed=5)
    paths = []
    for r in runs:
        paths.append(str(tmp_path / f"{r.name}.run"))
        write_run(paths[-1], r)
    write_qrels(tmp_path / "q.txt", qrels)
    model = str(tmp_path / "auto.json")
    qrels_path = str(tmp_path / "q.txt")
    argv = ["fuse", "train", "--family", "auto", "--runs", *paths, "--qrels", qrels_path,
            "-o", model, "--cv-folds", "3", "--max-rounds", "10"]  # fmt: skip
    assert cli_main(argv) == 0
    err = capsys.readouterr().err
    assert "--family auto chose" in err
    auto = AutoFusion.load(model)
    assert auto.family_ in err
    data = json.loads(Path(model).read_text())
    assert data["selection"]["family"] == auto.family_
    assert set(data["selection"]["candidates"]) == {
        "convex", "linear", "boost", "boost_combsum", "rrf"}  # fmt: skip
    again = AutoFusion.from_dict(auto.to_dict())
    read = [read_run(p) for p in paths]
    assert again.fuse(read, match="order").docid.tolist() == auto.fuse(
        read, match="order").docid.tolist()  # fmt: skip
    assert again.max_rounds == 10
    assert again.cv_folds == 3
    # fuse apply reads the file as the chosen family's model
    out = str(tmp_path / "fused.run")
    assert cli_main(["fuse", "apply", model, "--runs", *paths, "-o", out]) == 0
    assert read_run(out).docid.tolist() == auto.fuse(read, match="order").docid.tolist()


def test_cli_auto_refuses_boost_options(tmp_path: Path, capsys) -> None:
    runs, qrels = _toy(n_q=6, seed=1)
    paths = []
    for r in runs:
        paths.append(str(tmp_path / f"{r.name}.run"))
        write_run(paths[-1], r)
    write_qrels(tmp_path / "q.txt", qrels)
    base = ["fuse", "train", "--family", "auto", "--runs", *paths, "--qrels",
            str(tmp_path / "q.txt"), "-o", str(tmp_path / "m.json")]  # fmt: skip
    for extra in (["--prior", "combsum"], ["--rounds", "20"]):
        assert cli_main(base + extra) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1
        assert err[0].startswith("rankboost: error:")
        assert "--family auto" in err[0]
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"candidates": ("convex", "magic")}, "candidates"),
        ({"candidates": ()}, "candidates"),
        ({"candidates": "convex"}, "candidates"),
        ({"fallback": "boost", "candidates": ("convex", "rrf")}, "fallback"),
        ({"cv_folds": 1}, "cv_folds"),
        ({"max_rounds": 0}, "max_rounds"),
        ({"threshold_se": -1.0}, "threshold_se"),
        ({"threshold_se": float("nan")}, "threshold_se"),
    ],
)
def test_bad_parameters(params, match) -> None:
    runs, qrels = _toy(n_q=6)
    with pytest.raises(ParameterError, match=match):
        AutoFusion(**params).fit(runs, qrels)


def test_bad_inputs() -> None:
    runs, qrels = _toy(n_q=6)
    # runs of different queries, and only candidates that need the same queries
    a, b = runs
    keep = a.qid != "q0"
    cut = Run(a.qid[keep], a.docid[keep], a.rank[keep], a.score[keep], name="a")
    with pytest.raises(ValueError, match="cover different queries.*--common-queries"):
        AutoFusion(candidates=("convex", "linear", "rrf")).fit([cut, b], qrels)
    # no judged query
    with (
        pytest.raises(ValueError, match="no query of the runs is judged"),
        pytest.warns(FusionWarning),
    ):
        AutoFusion().fit(runs, Qrels(["x"], ["d0"], [1]))
    # fewer usable queries than folds
    with pytest.raises(ValueError, match="at least 10"):
        AutoFusion(cv_folds=10).fit(runs, qrels)
    with pytest.raises(ValueError, match="not fitted"):
        AutoFusion().fuse(runs)
    with pytest.raises(ValueError, match="selection"):
        AutoFusion.from_dict(LinearFusion(n_rounds=2, prior_scale=1.0).fit(runs, qrels).to_dict())


def test_issue33_runs_of_other_queries_leave_out_the_weighted_sums() -> None:
    """Runs that miss queries (meta-search: LETOR aggregation runs) made AutoFusion raise;
    now the candidates that need every run to answer every query (convex, linear, rrf) are
    left out with a warning, the fallback becomes boost, and every query is fused."""
    from rankboost.fusion.learned import RankFusion

    runs, qrels = _toy(n_q=12, seed=5)
    a, b = runs
    keep = ~np.isin(a.qid, ["q0", "q1"])
    cut = Run(a.qid[keep], a.docid[keep], a.rank[keep], a.score[keep], name="a")
    with pytest.warns(FusionWarning, match="convex, linear, rrf .* left out .* fallback is boost"):
        auto = AutoFusion(cv_folds=3, max_rounds=5).fit([cut, b], qrels)
    sel = auto.selection_
    assert sel["left_out"] == ["convex", "linear", "rrf"]
    assert list(sel["candidates"]) == ["boost", "boost_combsum"]
    assert sel["fallback"] == "boost"
    assert auto.family_ in ("boost", "boost_combsum")
    assert isinstance(auto.model_, RankFusion)
    assert sorted(auto.fuse([cut, b]).queries) == sorted(b.queries)  # q0, q1: from b alone
    again = AutoFusion.from_dict(json.loads(json.dumps(auto.to_dict())))
    assert again.selection_["left_out"] == ["convex", "linear", "rrf"]
    assert again.fallback == "linear"  # the parameter; the fallback used is in selection_
    # a fallback among the learned families stays; runs of the same queries leave none out
    with pytest.warns(FusionWarning, match="fallback is boost_combsum"):
        auto = AutoFusion(fallback="boost_combsum", cv_folds=3, max_rounds=5).fit([cut, b], qrels)
    assert auto.selection_["fallback"] == "boost_combsum"
    auto = AutoFusion(candidates=("convex", "rrf"), fallback="convex", cv_folds=3).fit(runs, qrels)
    assert auto.selection_["left_out"] == []


# ------------------------------------------------------------------ the cheap family choice
def _ref_per_query(family: str, scale: float, t: int, tr: list[Run], va: list[Run], qrels):
    """Held-out per-query NDCG@10 of ``family`` fitted on ``tr`` with a fixed scale and rounds
    (the public classes, no inner CV), scoring ``va``."""
    import warnings

    from rankboost import TrainingStoppedWarning
    from rankboost.fusion.auto import _rows
    from rankboost.fusion.features import grades_for
    from rankboost.fusion.learned import RankFusion

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (FusionWarning, TrainingStoppedWarning))
        if family == "linear":
            lin = LinearFusion(n_rounds=t, prior_scale=scale).fit(tr, qrels)
            qid, docid, F = lin.decision_function(va)
        elif family == "boost":
            feats, F = RankFusion(n_rounds=t).fit(tr, qrels).decision_function(va)
            qid, docid = feats.qid, feats.docid
        else:  # 0 rounds = the prior alone
            fus = RankFusion(prior="combsum", n_rounds=max(t, 1), prior_scale=scale)
            feats, F = fus.fit(tr, qrels).decision_function(va, n_rounds=t)
            qid, docid = feats.qid, feats.docid
    y = np.maximum(grades_for(_rows(qid, docid), qrels), 0)
    return np.asarray(ndcg_score(y, F, qid, k=10, per_query=True))


def test_issue33_cheap_family_choice_equals_the_slow_reference() -> None:
    """The family choice fits each learned family once per inner fold (and prior scale) and
    reads every round count off its staged scores. Reference: every (scale, rounds) fitted
    anew on each fold's training queries; fold ``f`` scored with the configuration the other
    folds' mean held-out NDCG@10 prefers (first best); the refit with the best over all."""
    from rankboost.fusion._select import LEARNED, candidate_configs
    from rankboost.fusion.auto import _cut, _rows
    from rankboost.fusion.features import grades_for
    from rankboost.model_selection import query_folds

    runs, qrels = _toy(n_q=15, seed=11)
    folds, T = 3, 3
    auto = AutoFusion(cv_folds=folds, max_rounds=T, threshold_se=0.0).fit(runs, qrels)
    N, qid, docid = linear_features(runs, "minmax")
    y = grades_for(_rows(qid, docid), qrels)
    uq, qcode = np.unique(qid, return_inverse=True)
    fold_q = np.full(uq.shape[0], -1)
    fold_q[qcode] = query_folds((y >= 1).astype(np.int64), qcode.reshape(-1), folds)
    sel = auto.selection_
    for fam in LEARNED:
        configs = candidate_configs(fam, T)
        P = []  # P[f][k] = per-query values of fold f under config k
        for f in range(folds):
            tr = _cut(runs, {str(q) for q, g in zip(uq, fold_q, strict=True) if g >= 0 and g != f})
            va = _cut(runs, {str(q) for q, g in zip(uq, fold_q, strict=True) if g == f})
            P.append([_ref_per_query(fam, s, t, tr, va, qrels) for s, t in configs])
        M = np.array([[v.mean() for v in Pf] for Pf in P])
        held = []
        for f in range(folds):
            k = int(np.argmax(np.delete(M, f, axis=0).mean(axis=0)))
            held.append(P[f][k])
        assert sel["candidates"][fam]["mean"] == pytest.approx(
            np.concatenate(held).mean(), abs=1e-12)  # fmt: skip
        s, t = configs[int(np.argmax(M.mean(axis=0)))]
        assert sel["configs"][fam] == {"prior_scale": s, "n_rounds": t}
    assert auto.family_ == max(sel["candidates"], key=lambda c: sel["candidates"][c]["mean"])


def test_issue33_family_choice_trains_once_per_fold_and_scale(monkeypatch) -> None:
    """Regression: each learned candidate ran its own inner CV inside every selection fold
    (cv_folds + 1 trainings per fold and prior scale: 60 + the refit's here); now one
    training per fold and prior scale, and one refit (3 x (1 + 5) + 1 = 19)."""
    import rankboost.engine as engine

    calls = []
    real = engine.train_checked

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "train_checked", counting)
    runs, qrels = _toy(n_q=12, seed=2)
    AutoFusion(candidates=("boost", "boost_combsum"), fallback="boost", cv_folds=3,
               max_rounds=4).fit(runs, qrels)  # fmt: skip
    assert len(calls) == 3 * (1 + 5) + 1


def test_simplex_grid_of_many_runs_is_the_product_grid() -> None:
    """Regression: the grid of 25 runs enumerated 3 ** 25 tuples (metasearch_auto.py's tuned
    convex combination on MQ2008-agg never finished); the compositions, same order."""
    import itertools

    from rankboost.fusion.auto import _simplex_grid
    from rankboost.model_selection import CONVEX_GRID_STEPS

    for m in range(1, 8):
        steps = CONVEX_GRID_STEPS.get(m, 2)
        ref = [c for c in itertools.product(range(steps + 1), repeat=m) if sum(c) == steps]
        np.testing.assert_array_equal(_simplex_grid(m), np.asarray(ref, float) / steps)
    grid = _simplex_grid(25)
    assert grid.shape == (325, 25)  # 25 vertices + 300 equal pairs
    assert np.all(grid.sum(axis=1) == 1.0)


# ------------------------------------------------------------------ bad input (issue 33)
def test_issue33_auto_qrels_and_runs_that_miss_each_others_queries_warn() -> None:
    """A judged query no run returns, and a run query without judgements: the same
    FusionWarnings as the other families, and both are left out of the choice."""
    runs, qrels = _toy(n_q=9, seed=4)
    a, b = runs
    extra = Run.from_scores(["zz", "zz"], ["d0", "d1"], [2.0, 1.0], name="a")
    a2 = Run(np.r_[a.qid, extra.qid], np.r_[a.docid, extra.docid], np.r_[a.rank, extra.rank],
             np.r_[a.score, extra.score], name="a")  # fmt: skip
    b2 = Run(np.r_[b.qid, extra.qid], np.r_[b.docid, extra.docid], np.r_[b.rank, extra.rank],
             np.r_[b.score, extra.score], name="b")  # fmt: skip
    more = Qrels(np.r_[qrels.qid, ["gone", "gone"]], np.r_[qrels.docid, ["x", "y"]],
                 np.r_[qrels.rel, [1, 0]])  # fmt: skip
    with (
        pytest.warns(FusionWarning, match=r"run a: 1 queries are not in the qrels \(e.g. 'zz'\)"),
        pytest.warns(FusionWarning, match=r"run b: 1 queries are not in the qrels"),
        pytest.warns(FusionWarning, match=r"1 judged queries are in none of the runs"),
    ):
        auto = AutoFusion(cv_folds=3, max_rounds=3).fit([a2, b2], more)
    plain = AutoFusion(cv_folds=3, max_rounds=3).fit(runs, qrels)
    assert auto.selection_["candidates"] == plain.selection_["candidates"]
    assert "zz" in auto.fuse([a2, b2]).queries  # fused, as every family fuses it


def test_issue33_auto_runs_of_different_depths_all_equal_scores_no_relevant_document() -> None:
    """Runs of different depths (10 and 3 documents a query), a query whose scores are all
    equal in one run (min-max gives every document 1, as the engines do), and queries without
    a relevant document (no pair to learn from, a constant NDCG: left out of the inner folds,
    still fused): AutoFusion fits every candidate and fuses every query with finite scores."""
    rng = np.random.default_rng(8)
    qs, ds, rel, sa, sb = [], [], [], [], []
    for i in range(14):
        g = rng.integers(0, 2, 10) if i >= 2 else np.zeros(10, dtype=int)  # q0, q1: none
        for j in range(10):
            qs.append(f"q{i}")
            ds.append(f"d{j}")
            rel.append(int(g[j]))
            sa.append(7.0 if i == 5 else float(g[j] + rng.normal()))  # q5: all equal in a
            sb.append(float(g[j] + rng.normal(scale=2.0)))
    qs_, ds_ = np.array(qs), np.array(ds)
    a = Run.from_scores(qs_, ds_, np.array(sa), name="a")
    b = Run.from_scores(qs_, ds_, np.array(sb), name="b")
    b = Run(b.qid[b.rank <= 3], b.docid[b.rank <= 3], b.rank[b.rank <= 3],
            b.score[b.rank <= 3], name="b")  # fmt: skip
    qrels = Qrels(qs_, ds_, np.array(rel))
    auto = AutoFusion(cv_folds=3, max_rounds=4, threshold_se=0.0).fit([a, b], qrels)
    sel = auto.selection_
    assert sel["n_queries"] == 12 - sum(  # q0, q1 and any query with one grade: left out
        len(set(np.array(rel)[qs_ == f"q{i}"].tolist())) < 2 for i in range(2, 14)
    )
    assert set(sel["candidates"]) == {"convex", "linear", "boost", "boost_combsum", "rrf"}
    assert all(np.isfinite(v["mean"]) for v in sel["candidates"].values())
    fused = auto.fuse([a, b])
    assert sorted(fused.queries) == sorted({f"q{i}" for i in range(14)})
    assert np.all(np.isfinite(fused.score))
    assert len(fused) == 140  # every document of the deeper run, each query


# ------------------------------------------------------------------ many runs (issue 46) --
def _wide(n_runs: int, n_q: int = 12, n_d: int = 6, seed: int = 0) -> tuple[list[Run], Qrels]:
    """``n_runs`` runs of the same ``n_q`` queries x ``n_d`` documents; a few good runs."""
    rng = np.random.default_rng(seed)
    qs = np.repeat([f"q{i}" for i in range(n_q)], n_d)
    ds = np.tile([f"d{j}" for j in range(n_d)], n_q)
    rel = rng.integers(0, 3, n_q * n_d)
    runs = [Run.from_scores(qs, ds, (i % 5 == 0) * rel + rng.normal(size=rel.size), name=f"r{i}")
            for i in range(n_runs)]  # fmt: skip
    return runs, Qrels(qs, ds, rel)


def test_issue46_convex_of_many_runs_builds_no_grid(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past CONVEX_GRID_MAX_RUNS runs the weights come from coordinate ascent: the simplex
    grid (m (m + 1) / 2 points x m weights, 4 GB for 1,000 runs) is never built, and the
    weights are a valid convex combination whose score is the NDCG@10 they give."""
    import rankboost.fusion.auto as auto_mod
    from rankboost.fusion.auto import _rows
    from rankboost.fusion.features import grades_for
    from rankboost.model_selection import CONVEX_GRID_MAX_RUNS

    def no_grid(m: int) -> None:
        raise AssertionError(f"the simplex grid of {m} runs was built")

    monkeypatch.setattr(auto_mod, "_simplex_grid", no_grid)
    runs, qrels = _wide(CONVEX_GRID_MAX_RUNS + 1)
    N, qid, docid = linear_features(runs, "minmax")
    y = grades_for(_rows(qid, docid), qrels)
    w, s = convex_weights(N, y, qid)
    assert w.shape == (len(runs),)
    assert np.all(w >= 0)
    assert w.sum() == pytest.approx(1.0)
    assert s == ndcg_score(np.maximum(y, 0), N @ w, qid, k=10)
    # coordinate ascent starts at the equal weights and keeps only improvements
    assert s >= ndcg_score(np.maximum(y, 0), N.mean(axis=1), qid, k=10)
    auto = AutoFusion(candidates=("convex",), fallback="convex", cv_folds=3).fit(runs, qrels)
    assert auto.family_ == "convex"
    assert auto.model_.weights_.sum() == pytest.approx(1.0, abs=1e-6)
    assert auto.fuse(runs).queries == runs[0].queries


def test_issue46_convex_memory_is_linear_in_the_runs() -> None:
    """Regression: 200 runs built a 20,100 x 200 grid (32 MB) before scoring any point;
    coordinate ascent holds a few score rows (here well under 4 MB beyond the input)."""
    import tracemalloc

    from rankboost.fusion.auto import _rows
    from rankboost.fusion.features import grades_for

    runs, qrels = _wide(200, n_q=6, n_d=5, seed=1)
    N, qid, docid = linear_features(runs, "minmax")
    y = grades_for(_rows(qid, docid), qrels)
    tracemalloc.start()
    try:
        convex_weights(N, y, qid)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20


def test_issue46_convex_of_few_runs_is_still_the_grid() -> None:
    """Up to CONVEX_GRID_MAX_RUNS runs the grid search is unchanged (the first best point)."""
    from rankboost.fusion.auto import _rows, _simplex_grid
    from rankboost.fusion.features import grades_for
    from rankboost.model_selection import CONVEX_GRID_MAX_RUNS

    runs, qrels = _wide(CONVEX_GRID_MAX_RUNS, n_q=6, n_d=5, seed=2)
    N, qid, docid = linear_features(runs, "minmax")
    y = grades_for(_rows(qid, docid), qrels)
    w, s = convex_weights(N, y, qid)
    grid = _simplex_grid(N.shape[1])
    grid = grid[np.argsort(np.abs(grid - 1.0 / N.shape[1]).sum(axis=1), kind="stable")]
    scores = [ndcg_score(np.maximum(y, 0), N @ g, qid, k=10) for g in grid]
    assert w.tolist() == grid[int(np.argmax(scores))].tolist()
    assert s == max(scores)


def test_issue46_auto_of_many_runs_is_linear_in_the_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: ``fuse train`` (auto) on 1,000 runs rebuilt the rows from the runs' strings
    for every fold, candidate and prior scale, and boosted 2,001 features 3,000 times. Now the
    rows are built once (and once more by the refit), the weighted sums' candidates scored by
    coordinate ascent are linear in the runs, no simplex grid is built and, past
    AUTO_BOOSTED_MAX_RUNS runs, the boosted candidates are left out with a note."""
    import rankboost.engine as engine
    import rankboost.fusion.auto as auto_mod
    import rankboost.fusion.features as features_mod
    import rankboost.model_selection as ms

    n_runs, folds = 300, 3
    runs, qrels = _wide(n_runs, n_q=12, n_d=6, seed=4)
    scored, layouts = [], []
    real_curve, real_layout = ms.held_out_curve, features_mod.layout

    def counting_curve(HT, *args, **kwargs):
        scored.append(HT.shape[0])
        return real_curve(HT, *args, **kwargs)

    def counting_layout(items):
        layouts.append(len(items))
        return real_layout(items)

    def no_grid(m: int) -> None:
        raise AssertionError(f"the simplex grid of {m} runs was built")

    def no_boosting(*args, **kwargs) -> None:
        raise AssertionError("a boosted candidate was fitted")

    monkeypatch.setattr(ms, "held_out_curve", counting_curve)
    monkeypatch.setattr(features_mod, "layout", counting_layout)
    monkeypatch.setattr(auto_mod, "_simplex_grid", no_grid)
    monkeypatch.setattr(engine, "train_checked", no_boosting)
    with pytest.warns(FusionWarning, match=r"300 runs, more than 32: boost, boost_combsum .* "
                      r"left out of the family choice and the fallback is linear"):  # fmt: skip
        auto = AutoFusion(cv_folds=folds).fit(runs, qrels)
    sel = auto.selection_
    assert sel["left_out_wide"] == ["boost", "boost_combsum"]
    assert any("left out (more runs" in fact for fact in auto.describe().facts)
    assert set(sel["candidates"]) == {"convex", "linear", "rrf"}
    assert auto.family_ in sel["candidates"]
    # convex: per fit (folds + the refit) one score of the start, then per pass and run the
    # factors of one weight: linear in the runs (the grid has n (n + 1) / 2 points)
    per_fit = 1 + ms.CONVEX_ASCENT_PASSES * n_runs * len(ms.CONVEX_ASCENT_FACTORS)
    assert 0 < sum(scored) <= (folds + 1) * per_fit
    assert len(layouts) <= 2  # the rows of every fold sliced from one table (+ a linear refit)
    w = auto.model_.weights_
    assert w.shape == (n_runs,)
    assert np.all(np.isfinite(w))
    assert np.all(w >= 0)
    assert auto.fuse(runs).queries == runs[0].queries


def test_issue46_boosted_candidates_kept_up_to_the_width_and_alone() -> None:
    """Up to AUTO_BOOSTED_MAX_RUNS runs the boosted candidates stay in the choice (no note in
    the selection); past it, boosted candidates alone (no weighted sum asked for) are kept."""
    from rankboost.model_selection import AUTO_BOOSTED_MAX_RUNS

    runs, qrels = _wide(AUTO_BOOSTED_MAX_RUNS, n_q=9, n_d=4, seed=5)
    auto = AutoFusion(cv_folds=3, max_rounds=2).fit(runs, qrels)
    assert "left_out_wide" not in auto.selection_
    assert set(auto.selection_["candidates"]) == set(CANDIDATES)
    runs, qrels = _wide(AUTO_BOOSTED_MAX_RUNS + 1, n_q=9, n_d=4, seed=5)
    auto = AutoFusion(candidates=("boost",), fallback="boost", cv_folds=3, max_rounds=2)
    assert auto.fit(runs, qrels).family_ == "boost"
    assert "left_out_wide" not in auto.selection_


def test_issue46_weighted_sums_on_sliced_rows_equal_the_runs_cut_per_fold() -> None:
    """The weighted sums read each fold's rows off one table: the same held-out values as
    the runs cut to the fold's queries, fitted and fused anew (the reference)."""
    from rankboost.fusion.auto import _cut, _fit_one, _rows
    from rankboost.fusion.features import grades_for
    from rankboost.model_selection import query_folds

    runs, qrels = _toy(n_q=15, seed=3)
    folds = 3
    auto = AutoFusion(candidates=("convex", "rrf"), fallback="convex", cv_folds=folds,
                      threshold_se=0.0).fit(runs, qrels)  # fmt: skip
    N, qid, docid = linear_features(runs, "minmax")
    y = grades_for(_rows(qid, docid), qrels)
    uq, qcode = np.unique(qid, return_inverse=True)
    fold_q = np.full(uq.shape[0], -1)
    fold_q[qcode] = query_folds((y >= 1).astype(np.int64), qcode.reshape(-1), folds)
    for fam in ("convex", "rrf"):
        values = []
        for f in range(folds):
            tr = _cut(runs, {str(q) for q, g in zip(uq, fold_q, strict=True) if g >= 0 and g != f})
            va = _cut(runs, {str(q) for q, g in zip(uq, fold_q, strict=True) if g == f})
            fused = _fit_one(fam, tr, qrels).fuse(va)
            yv = np.maximum(grades_for(_rows(fused.qid, fused.docid), qrels), 0)
            values.append(ndcg_score(yv, fused.score, fused.qid, k=10, per_query=True))
        assert auto.selection_["candidates"][fam]["mean"] == pytest.approx(
            np.concatenate(values).mean(), abs=1e-12)  # fmt: skip


def test_issue46_weight_paths_of_every_scale_at_once_equal_one_by_one() -> None:
    """The wide linear curves boost every prior scale in one pass over the rows per round:
    the same rounds as weight_path scale by scale, to rounding. (Scales up to 2 here: with 40
    lists at scale 8, exp(F) reaches 1e130 and the potential's sums across queries turn a
    last-bit difference of F into one of 1e-4 in r, for weight_path itself as well.)"""
    from rankboost.fusion._select import weight_paths
    from rankboost.fusion.linear import weight_path

    scales = (0.0, 0.5, 1.0, 2.0)

    rng = np.random.default_rng(6)
    qcode = np.repeat(np.arange(20), 15)
    y = rng.integers(0, 3, qcode.size)
    H = np.clip(rng.random((qcode.size, 40)) + 0.3 * y[:, None] * (rng.random(40) < 0.2), 0, 1)
    got = weight_paths(H, y, qcode, scales, 30, 0.3)
    for s, c in enumerate(scales):
        np.testing.assert_allclose(got[s], weight_path(H, y, qcode, c, 30, 0.3), rtol=1e-9)


def test_issue46_bad_input_of_many_runs_is_refused_as_before() -> None:
    """Past the width, the refusals are those of a few runs: qrels of another type, and
    weighted-sum candidates on runs of different queries."""
    runs, qrels = _wide(40, n_q=6, n_d=4, seed=7)
    with pytest.raises(TypeError, match=r"AutoFusion.fit: qrels must be a Qrels; got list"):
        AutoFusion().fit(runs, [qrels])
    short = [*runs[:-1], Run(runs[-1].qid[4:], runs[-1].docid[4:], runs[-1].rank[4:], name="x")]
    with pytest.raises(ValueError, match=r"the runs cover different queries, and the candidates "
                       r"\['convex', 'rrf'\] are weighted sums"):  # fmt: skip
        AutoFusion(candidates=("convex", "rrf"), fallback="convex").fit(short, qrels)
