"""``push="auto"`` (issue 48): the P-Norm Push's p chosen on held-out queries.

``RankBoostRanker(push="auto")`` and ``rankboost train --push auto`` try
``model_selection.PUSH_EXPONENTS`` on the validation set (else inner folds of the training
queries) and keep p = 1 unless another p beats it by more than
``model_selection.PUSH_THRESHOLD_SE`` standard errors (``standard_error_rule``). Here: the
choice on problems where the answer is known (every p ranks alike: 1; spam documents on top
of every query that one feature tells apart: p > 1), its record in the model, the estimator
and ``rankboost info``, determinism, and the refusals.
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

import rankboost as rb
from rankboost.cli import main
from rankboost.datasets import dump_svmlight
from rankboost.model_selection import PUSH_EXPONENTS, PUSH_THRESHOLD_SE
from rankboost.params import ParameterError

pytestmark = pytest.mark.filterwarnings("ignore::rankboost.TrainingStoppedWarning")


def _spam(seed: int, n_q: int = 60, n: int = 30):
    """Queries of 3 relevant and 27 other documents, 2 of them spam.

    Feature 0 is relevance plus noise, but the spam scores highest on it; feature 1 is
    uniform, and below every other document for the spam. In a few rounds RankBoost's
    pairs (the spam's are 2 in 10 of a query's lower items) keep feature 0's order and the
    spam on top, while the push weighs the lower items of largest loss (the spam) first.
    """
    rng = np.random.default_rng(seed)
    X = np.empty((n_q * n, 2))
    y = np.zeros(n_q * n)
    for q in range(n_q):
        rows = slice(q * n, (q + 1) * n)
        rel = np.zeros(n)
        rel[:3] = 1.0
        a = rel + rng.normal(size=n) * 0.8
        a[3:5] = 3.0 + rng.random(2)
        b = rng.random(n)
        b[3:5] = -1.0 + 0.1 * rng.random(2)
        X[rows, 0], X[rows, 1], y[rows] = a, b, rel
    return X, y, np.repeat(np.arange(n_q), n)


def _separable(seed: int, n_q: int = 20, n: int = 8):
    """One feature orders every query perfectly: every p stops after one round, alike."""
    rng = np.random.default_rng(seed)
    y = (np.arange(n_q * n) % 3 == 0).astype(float)  # one relevant in three
    X = np.c_[y + rng.random(y.shape[0]) * 0.5, rng.normal(size=y.shape[0])]
    return X, y, np.repeat(np.arange(n_q), n)


def _fit(X, y, qid, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
        return rb.RankBoostRanker(push="auto", **kw).fit(X, y, qid=qid)


def test_issue48_auto_keeps_1_when_every_p_ranks_alike():
    X, y, qid = _separable(0)
    est = _fit(X, y, qid, n_estimators=5)
    sel = est.push_selection_
    assert est.push_ == 1.0
    assert est.model_.push == 1.0
    assert "push" not in est.model_.params  # RankBoost's model, as push=1 writes it
    assert sel["held_out"] == "5 inner folds"
    assert sel["n_queries"] == 20
    assert sel["grid"] == list(PUSH_EXPONENTS)
    assert set(sel["diff"].values()) == {0.0}  # the same held-out ranking for every p
    plain = rb.RankBoostRanker(n_estimators=5).fit(X, y, qid=qid)
    np.testing.assert_array_equal(est.predict(X), plain.predict(X))


def test_issue48_auto_keeps_1_when_the_push_hurts():
    """LETOR-like graded data (no spam): larger p do worse, p = 1 stays."""
    rng = np.random.default_rng(48)
    X = rng.normal(size=(600, 4))
    qid = np.repeat(np.arange(60), 10)
    y = np.clip(np.round(X[:, 0] + rng.normal(size=600) * 0.8), 0, 2)
    est = _fit(X, y, qid, n_estimators=20)
    assert est.push_ == 1.0
    table = est.push_selection_
    assert all(table["diff"][k] <= PUSH_THRESHOLD_SE * table["se"][k] for k in table["diff"])


def test_issue48_auto_pushes_when_spam_tops_every_query():
    X, y, qid = _spam(0)
    est = _fit(X, y, qid, n_estimators=3)
    sel = est.push_selection_
    assert est.push_ > 1.0
    assert est.model_.push == est.push_ == sel["chosen"]
    best = f"{est.push_:g}"
    assert sel["diff"][best] > PUSH_THRESHOLD_SE * sel["se"][best]
    # and it carries over to new queries of the same kind
    Xt, yt, qt = _spam(1)
    plain = rb.RankBoostRanker(n_estimators=3).fit(X, y, qid=qid)
    assert est.score(Xt, yt, qid=qt) > plain.score(Xt, yt, qid=qt) + 0.05


def test_issue48_auto_chooses_on_the_validation_set():
    X, y, qid = _spam(0, n_q=40)
    Xv, yv, qv = _spam(2, n_q=20)
    est = rb.RankBoostRanker(n_estimators=3, push="auto").fit(
        X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv]
    )
    sel = est.push_selection_
    assert sel["held_out"] == "validation set"
    assert sel["n_queries"] == 20
    assert est.push_ > 1.0
    assert sel["rounds"] == {f"{p:g}": 3 for p in PUSH_EXPONENTS}
    stop = rb.RankBoostRanker(n_estimators=3, push="auto").fit(
        X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv], early_stopping_rounds=3
    )  # each p at its first best round
    assert all(1 <= t <= 3 for t in stop.push_selection_["rounds"].values())


def test_issue48_auto_is_saved_and_shown_by_info(tmp_path, capsys):
    X, y, qid = _spam(0, n_q=30)
    est = _fit(X, y, qid, n_estimators=3)
    path = tmp_path / "m.json"
    est.model_.save(path)
    back = rb.load_model(path)
    assert back.push == est.push_
    assert back.params["push_auto"] == est.push_selection_
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"push: auto chose p = {est.push_:g} by held-out NDCG@10 on the 5 inner folds" in out
    params_line = next(line for line in out.splitlines() if line.startswith("params:"))
    assert f"push={est.push_}" in params_line
    assert "push_auto" not in params_line


def test_issue48_auto_same_seed_same_model():
    X, y, qid = _spam(3, n_q=30)
    a, b = _fit(X, y, qid, n_estimators=4), _fit(X, y, qid, n_estimators=4)
    assert a.push_selection_ == b.push_selection_
    assert a.model_.to_dict() == b.model_.to_dict()


def test_issue48_auto_is_a_parameter_like_any_other():
    from sklearn.base import clone

    est = rb.RankBoostRanker(push="auto")
    assert clone(est).get_params()["push"] == "auto"
    X, y, qid = _separable(1)
    fixed = rb.RankBoostRanker(n_estimators=3, push=2.0).fit(X, y, qid=qid)
    assert fixed.push_ == 2.0
    assert fixed.push_selection_ is None


def test_issue48_cli_push_auto(tmp_path, capsys):
    X, y, qid = _spam(0, n_q=40)
    Xv, yv, qv = _spam(2, n_q=20)
    dump_svmlight(tmp_path / "train.txt", X, y, qid)
    dump_svmlight(tmp_path / "vali.txt", Xv, yv, qv + 1000)
    models = []
    for k in range(2):  # the same input twice: the same file
        out = tmp_path / f"m{k}.json"
        argv = ["train", str(tmp_path / "train.txt"), "--valid", str(tmp_path / "vali.txt")]
        assert main([*argv, "--rounds", "3", "--push", "auto", "-q", "-o", str(out)]) == 0
        models.append(out.read_bytes())
    text = capsys.readouterr().out
    assert "push auto chose p = " in text
    assert "on the validation set (20 queries" in text
    assert models[0] == models[1]
    params = json.loads(models[0])["params"]
    assert params["push"] > 1.0
    assert params["push_auto"]["chosen"] == params["push"]


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("bad", ["foo", "Auto", 0.5])
def test_issue48_bad_push_is_refused_by_the_ranker(bad):
    X, y, qid = _separable(0)
    with pytest.raises(
        ParameterError, match=r"'push' parameter of RankBoostRanker must be a finite float >= 1"
    ):
        rb.RankBoostRanker(push=bad).fit(X, y, qid=qid)


def test_issue48_auto_is_the_adapters_not_trains():
    X, y, qid = _separable(0)
    fb = rb.LayeredFeedback(y, qid)
    expected = r"must be a finite float >= 1; 'auto' is RankBoostRanker's and rankboost train's"
    with pytest.raises(ParameterError, match=r"'push' parameter of rankboost.train " + expected):
        rb.train(X, fb, n_rounds=2, push="auto")
    with pytest.raises(ParameterError, match=r"'push' parameter of Booster " + expected):
        rb.Booster(X, fb, {"push": "auto"})


def test_issue48_auto_refuses_rankboost_only_rules():
    X, y, qid = _separable(0)
    with pytest.raises(
        ParameterError, match=r"push='auto' tries p in .* alpha='exact' .* or a float push"
    ):
        rb.RankBoostRanker(push="auto", alpha="exact").fit(X, y, qid=qid)


def test_issue48_auto_refuses_clicks():
    X, y, qid = _separable(0)
    clicks = rb.PairFeedback([[0, 1], [3, 4]], n_samples=X.shape[0])
    with pytest.raises(
        ValueError,
        match=r"RankBoostRanker.fit: push='auto' chooses p by the held-out NDCG@10 of graded "
        r"labels, and clicks= has none; pass a float push \(push=1.0\)",
    ):
        rb.RankBoostRanker(push="auto").fit(X, None, qid=qid, clicks=clicks)


def test_issue48_auto_needs_five_queries_or_a_validation_set():
    X, y, qid = _separable(0, n_q=4)
    with pytest.raises(
        ValueError,
        match=r"push='auto' chooses p by 5-fold cross-validation .* there are 4\. Pass a "
        r"float push \(push=1.0, --push 1\)",
    ):
        rb.RankBoostRanker(push="auto").fit(X, y, qid=qid)
    Xv, yv, qv = _separable(1, n_q=2)  # with a validation set it needs no inner folds
    est = rb.RankBoostRanker(n_estimators=2, push="auto").fit(
        X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv]
    )
    assert est.push_ == 1.0


@pytest.mark.parametrize(
    ("value", "status", "match"),
    [
        ("0.5", 2, r"--push: must be a finite float >= 1; got '0.5'"),
        ("foo", 2, r"--push: must be a finite float >= 1; got 'foo'"),
        ("AUTO", 2, r"--push: must be a finite float >= 1; got 'AUTO'"),
    ],
)
def test_issue48_cli_bad_push(tmp_path, capsys, value, status, match):
    X, y, qid = _separable(0)
    dump_svmlight(tmp_path / "train.txt", X, y, qid)
    argv = ["train", str(tmp_path / "train.txt"), "-o", str(tmp_path / "m.json")]
    try:
        got = main([*argv, "--push", value])
    except SystemExit as exc:
        got = exc.code
    assert got == status
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("rankboost: error: ")
    assert re.search(match, err[0]), err[0]
    assert not (tmp_path / "m.json").exists()


def test_issue48_cli_push_auto_with_too_few_queries(tmp_path, capsys):
    X, y, qid = _separable(0, n_q=3)
    dump_svmlight(tmp_path / "train.txt", X, y, qid)
    argv = ["train", str(tmp_path / "train.txt"), "-o", str(tmp_path / "m.json"), "-q"]
    assert main([*argv, "--push", "auto"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("rankboost: error: --push auto chooses p by 5-fold"), err[0]
    assert "Pass a float push (--push 1.0, --push 1)" in err[0]
    assert "Traceback" not in err[0]
    assert "RankBoostRanker" not in err[0]


def test_issue48_dask_ranker_refuses_auto():
    rbd = pytest.importorskip("rankboost.dask")
    pytest.importorskip("distributed")
    est = rbd.DaskRankBoostRanker(push="auto")
    with pytest.raises(
        ParameterError,
        match=r"'push' parameter of DaskRankBoostRanker must be a finite float >= 1; 'auto'",
    ):
        est._params()
