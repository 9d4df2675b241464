"""The P-Norm Push (issue 48): the kernels replay the brute-force reference; p = 1 is RankBoost.

The reference (``tests/push_reference.py``) sums every crucial pair in every round, straight
from ``R_p = sum_k L_k^p``; the booster's potential, ``r``, alpha and ``log R_p`` must agree
with it to 1e-10 on random tiny problems (bipartite, layered, explicit pairs, abstaining
weak rankers, real-valued rankers, shrinkage, a prior), and ``R_p`` must go down every round.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankboost as rb
from push_reference import best_alpha, layered_pairs, log_objective, potential
from rankboost.booster import PushBooster
from rankboost.params import ParameterError

ROOT = Path(__file__).resolve().parents[1]


def _problem(seed: int, kind: str, nan_rate: float):
    rng = np.random.default_rng(seed)
    n_q = int(rng.integers(1, 4))
    sizes = rng.integers(2, 7, size=n_q)
    qid = np.repeat(np.arange(n_q), sizes)
    n = qid.shape[0]
    X = rng.normal(size=(n, 3)).round(1)  # ties among values: shared bins
    X[rng.random(X.shape) < nan_rate] = np.nan
    if kind == "pairs":
        cand = [(i, j) for i in range(n) for j in range(n) if i != j]
        pick = rng.choice(
            len(cand), size=min(len(cand), int(rng.integers(1, 3 * n))), replace=False
        )
        pairs = np.array([cand[c] for c in pick], dtype=np.int64)
        w = rng.uniform(0.5, 2.0, size=pairs.shape[0])
        fb = rb.PairFeedback(pairs, w, n_samples=n)
        return X, fb, pairs[:, 1], pairs[:, 0], w / w.sum()
    levels = 2 if kind == "bipartite" else 4
    y = rng.integers(0, levels, size=n)
    y[qid == 0] = np.arange(sizes[0]) % levels  # at least one crucial pair
    y = y.astype(float)
    normalize = "pair" if seed % 2 else "query"
    if kind == "bipartite":
        fb = rb.BipartiteFeedback(y, qid, normalize=normalize)
    else:
        fb = rb.LayeredFeedback(y, qid, normalize=normalize)
    up, lo, d = layered_pairs(y, qid, normalize)
    return X, fb, up, lo, d


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    kind=st.sampled_from(["bipartite", "layered", "pairs"]),
    p=st.sampled_from([1.5, 2.0, 4.0, 8.0, 16.0]),
    weak_ranker=st.sampled_from(["threshold", "feature", "both"]),
    nan_rate=st.sampled_from([0.0, 0.3]),
    learning_rate=st.sampled_from([1.0, 0.5]),
    prior=st.booleans(),
)
def test_issue48_kernels_replay_the_brute_force_reference(
    seed, kind, p, weak_ranker, nan_rate, learning_rate, prior
):
    X, fb, up, lo, d = _problem(seed, kind, nan_rate)
    n = X.shape[0]
    F = np.random.default_rng(seed + 1).normal(size=n) if prior else np.zeros(n)
    params = {"push": p, "weak_ranker": weak_ranker, "learning_rate": learning_rate}
    bst = rb.Booster(X, fb, params, init_score=F if prior else None)
    assert isinstance(bst, PushBooster)
    F = F.copy()
    R = log_objective(F, up, lo, d, p)
    assert bst.log_objective[0] == pytest.approx(R, rel=1e-10, abs=1e-10)
    for t in range(6):
        pi = bst.potential()
        np.testing.assert_allclose(pi, potential(F, up, lo, d, p), rtol=0, atol=1e-10)
        rec = bst.update()
        if rec is None:
            break
        h = rec.ranker.predict(X)
        assert rec.r == pytest.approx(float(pi @ h), abs=1e-10)
        want = learning_rate * best_alpha(F, h, up, lo, d, p)
        if abs(rec.alpha - want) > 1e-10 * max(1.0, abs(want)):
            # R_p flat in alpha (a nearly separating h far out): the argmin is ill-posed
            # at double precision, so both alphas must give the same R_p to 1e-10
            mine = log_objective(F + rec.alpha * h, up, lo, d, p)
            theirs = log_objective(F + want * h, up, lo, d, p)
            assert mine == pytest.approx(theirs, abs=1e-10), t
        F = F + rec.alpha * h
        R_next = log_objective(F, up, lo, d, p)
        assert R_next <= R + 1e-12, "R_p went up"
        assert bst.log_objective[-1] == pytest.approx(R_next, rel=1e-10, abs=1e-10)
        assert rec.z == pytest.approx(np.exp(R_next - R), rel=1e-9)
        assert rec.rloss == pytest.approx(fb.rloss(F), abs=1e-12)
        R = R_next


@pytest.mark.parametrize("kind", ["bipartite", "layered", "pairs"])
def test_issue48_objective_goes_down_every_round_on_a_larger_problem(kind):
    X, fb, *_ = _problem(3, kind, 0.1)
    rng = np.random.default_rng(0)
    n_q = 20
    qid = np.repeat(np.arange(n_q), 15)
    X = rng.normal(size=(qid.shape[0], 5))
    y = np.clip(np.round(X[:, 0] + rng.normal(size=qid.shape[0])), -1, 2) + 1
    fb = (
        rb.BipartiteFeedback((y > 1).astype(float), qid)
        if kind == "bipartite"
        else (rb.LayeredFeedback(y, qid))
    )
    if kind == "pairs":
        fb = rb.LayeredFeedback(y, qid).with_sample_weight(rng.uniform(0.5, 2, size=y.shape[0]))
    bst = rb.Booster(X, fb, {"push": 4.0})
    for _ in range(40):
        if bst.update() is None:
            break
    assert np.all(np.diff(bst.log_objective) <= 1e-12)
    assert bst.log_objective[-1] < bst.log_objective[0]


def test_issue48_blocks_give_the_same_model():
    rng = np.random.default_rng(1)
    qid = np.repeat(np.arange(12), 10)
    X = rng.normal(size=(120, 4))
    y = np.clip(np.round(X[:, 1] + rng.normal(size=120)), 0, 3)
    fb = rb.LayeredFeedback(y, qid)
    one = rb.Booster(X, fb, {"push": 2.0})
    three = rb.Booster(X, fb, {"push": 2.0}, n_blocks=3)
    assert three.n_blocks == 3
    for _ in range(15):
        a, b = one.update(), three.update()
        assert a is not None
        assert b is not None
        assert a.ranker.key() == b.ranker.key()
        assert a.alpha == pytest.approx(b.alpha, rel=1e-10, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    p=st.sampled_from([1.5, 2.0, 4.0, 16.0]),
    r=st.floats(-0.999, 0.999),
    ordered=st.booleans(),
)
def test_issue48_one_call_newton_is_the_python_search_bit_for_bit(seed, p, r, ordered):
    """``split_alpha`` on one block (the search in one kernel call) returns ``newton_alpha``'s
    alpha on the same split sums to the bit: Newton steps, bisections, and the bracket's far
    end when ``h`` misorders no pair (``ordered``: the minimiser is beyond ``MAX_ALPHA``)."""
    from rankboost.push import PushBlock, newton_alpha, split_alpha, split_line

    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(int(rng.integers(1, 6))), 8)
    y = rng.integers(0, 3, size=qid.shape[0]).astype(float)
    y[:3] = [0.0, 1.0, 2.0]  # a crucial pair
    fb = rb.LayeredFeedback(y, qid)
    block = fb._blocks(1)[0]
    block.log_c[:] = np.log(rng.uniform(0.1, 1.0, size=block.log_c.shape[0]))
    block.H[:] = rng.normal(size=block.H.shape[0]).round(1)
    pb = PushBlock(block, p)
    pb.refresh()
    if ordered:  # h = 1 on the rows above each query's lowest level: no misordered pair
        h = (block.level > 0).astype(np.uint8)
    else:
        h = (rng.random(block.H.shape[0]) < 0.5).astype(np.uint8)
    split = pb.split_sums(h)
    assert split is not None
    want = newton_alpha(split_line([split], p), r)
    got = split_alpha([split], p, r)
    assert np.float64(got).tobytes() == np.float64(want).tobytes(), (got, want)


# --------------------------------------------------------------------------- p = 1


def _fixed_problem():
    rng = np.random.default_rng(48)
    X = rng.normal(size=(300, 4))
    X[rng.random((300, 4)) < 0.1] = np.nan
    qid = np.repeat(np.arange(30), 10)
    y = np.nan_to_num(np.clip(np.round(X[:, 0] + rng.normal(size=300) * 0.7), -1, 1) + 1)
    return X, rb.LayeredFeedback(y, qid)


def test_issue48_push_1_is_rankboost_bit_for_bit(tmp_path):
    """The saved model of ``push=1`` is the file of before issue 48, byte for byte.

    The sha1 was recorded on main at 06aa85d (before ``push`` existed) with this problem
    and ``rb.train(X, fb, n_rounds=25)``, ``model.save``.
    """
    X, fb = _fixed_problem()
    default = rb.train(X, fb, n_rounds=25)
    explicit = rb.train(X, fb, n_rounds=25, push=1.0)
    assert "push" not in default.params
    assert default.push == 1.0
    for name, m in (("default", default), ("explicit", explicit)):
        m.save(tmp_path / f"{name}.json")
    data = [(tmp_path / f"{k}.json").read_bytes() for k in ("default", "explicit")]
    assert data[0] == data[1]
    assert hashlib.sha1(data[0]).hexdigest() == "dd1634c5001bb7cafba8086d1737ca28514aa986"
    assert type(rb.Booster(X, fb, {"push": 1})) is rb.Booster


def test_issue48_push_is_saved_and_loaded(tmp_path):
    X, fb = _fixed_problem()
    m = rb.train(X, fb, n_rounds=5, push=4)
    assert m.params["push"] == 4.0
    assert m.push == 4.0
    m.save(tmp_path / "m.json")
    back = rb.load_model(tmp_path / "m.json")
    assert back.push == 4.0
    np.testing.assert_array_equal(back.predict(X), m.predict(X))
    old = json.loads((tmp_path / "m.json").read_text())
    del old["params"]["push"]  # a file of before issue 48
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert rb.load_model(tmp_path / "old.json").push == 1.0


def test_issue48_ranker_and_train_take_push():
    X, fb = _fixed_problem()
    y = fb.y
    qid = np.repeat(np.arange(30), 10)
    ranker = rb.RankBoostRanker(n_estimators=10, push=2.0).fit(X, y, qid=qid)
    assert ranker.model_.push == 2.0
    direct = rb.train(X, fb, n_rounds=10, push=2.0)
    np.testing.assert_allclose(ranker.predict(X), direct.predict(X), rtol=0, atol=1e-12)
    assert rb.RankBoostRanker(push=3.0).get_params()["push"] == 3.0


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("bad", [0.5, 0.0, -2.0, float("nan"), float("inf"), "2", True, None])
def test_issue48_bad_push_is_refused_everywhere(bad):
    X, fb = _fixed_problem()
    with pytest.raises(
        ParameterError,
        match=r"'push' parameter of rankboost.train must be a finite float >= 1; got",
    ):
        rb.train(X, fb, n_rounds=2, push=bad)
    with pytest.raises(
        ParameterError, match=r"'push' parameter of Booster must be a finite float >= 1"
    ):
        rb.Booster(X, fb, {"push": bad})
    with pytest.raises(
        ParameterError, match=r"'push' parameter of RankBoostRanker must be a finite"
    ):
        rb.RankBoostRanker(push=bad).fit(X, fb.y, qid=np.repeat(np.arange(30), 10))


@pytest.mark.parametrize(
    "params",
    [{"alpha": "exact"}, {"alpha": "rbplus"}, {"criterion": "exact_z"}],
)
def test_issue48_push_refuses_rankboost_only_rules(params):
    with pytest.raises(ParameterError, match=r"push=2.0 minimises R_p; .* or push=1"):
        rb.params.TrainParams(push=2.0, **params)


def test_issue48_cli_push(tmp_path):
    X, fb = _fixed_problem()
    qid = np.repeat(np.arange(30), 10)
    lines = [
        f"{int(y)} qid:{q} " + " ".join(f"{j + 1}:{v:.3f}" for j, v in enumerate(np.nan_to_num(x)))
        for y, q, x in zip(fb.y, qid, X, strict=True)
    ]
    data = tmp_path / "train.txt"
    data.write_text("\n".join(lines) + "\n")
    env_py = [sys.executable, "-m", "rankboost", "train", str(data), "--rounds", "5", "-q"]
    ok = subprocess.run(
        [*env_py, "--push", "4", "-o", str(tmp_path / "m.json")],
        check=False, capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=300,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert json.loads((tmp_path / "m.json").read_text())["params"]["push"] == 4.0
    bad = subprocess.run(
        [*env_py, "--push", "0.5", "-o", str(tmp_path / "b.json")],
        check=False, capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=300,
    )  # fmt: skip
    assert bad.returncode == 2
    assert "--push: must be a finite float >= 1; got '0.5'" in bad.stderr
    assert "Traceback" not in bad.stderr


def _env():
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    return env
