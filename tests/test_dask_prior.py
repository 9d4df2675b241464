"""Issue 49 item 1: boosting from a prior ``F0`` (``init_score``) on Dask.

On a real ``distributed.LocalCluster`` with 2 worker processes, ``rankboost.dask.train(...,
init_score=F0)`` gives the model of ``rankboost.train(..., init_score=F0)`` on one machine
(rankers equal, alphas, Z, r, rloss and bound to 1e-12, as tests/test_dask.py) for layered,
bipartite, explicit-pair and weighted feedback, re-chunked or repartitioned priors, and the
estimator; a lost worker is recovered to the same model; bad priors are clear errors.
"""

from __future__ import annotations

import importlib.util
import warnings
from typing import Any

import numpy as np
import pytest

import rankboost as rb
from conftest import kill_a_worker_at, letor_like, two_worker_client

if any(importlib.util.find_spec(m) is None for m in ("dask", "distributed")):
    pytest.skip("dask and distributed are not installed", allow_module_level=True)
da: Any = None
rbd: Any = None

pytestmark = pytest.mark.xdist_group("dask")


@pytest.fixture(scope="module")
def client():
    global da, rbd  # noqa: PLW0603  the module's imports, made when it runs
    import dask.array as da

    import rankboost.dask as rbd

    with two_worker_client() as c:
        yield c


def _problem(seed: int, n_queries: int = 30) -> tuple[np.ndarray, ...]:
    """Rows sorted by query, and a prior on the alpha scale: a noisy score of feature 0."""
    X, y, qid = letor_like(n_queries=n_queries, seed=seed)
    order = np.argsort(qid, kind="stable")
    X, y, qid = X[order], y[order], qid[order]
    rng = np.random.default_rng(seed)
    f0 = 0.4 * np.nan_to_num(X[:, 0]) + 0.3 * rng.normal(size=len(y))
    return X, y, qid, f0


def _chunks_at_queries(qid, k):
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    cuts = np.unique(starts[np.searchsorted(starts, np.arange(1, k) * len(qid) / k)])
    edges = np.concatenate([[0], cuts[cuts > 0], [len(qid)]])
    return tuple(int(v) for v in np.diff(edges))


def _dask(X, *rows, k=3, qid=None):
    chunks = _chunks_at_queries(rows[1] if qid is None else qid, k)
    return (
        da.from_array(X, chunks=(chunks, X.shape[1])),
        *(da.from_array(a, chunks=(chunks,)) for a in rows),
    )


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
        return fn(*a, **kw)


def assert_same_model(one, dist, X):
    assert one.n_rounds == dist.n_rounds
    h1, h2 = one.history, dist.history
    for k in ("feature", "threshold", "default"):
        np.testing.assert_array_equal(h1[k], h2[k], err_msg=k)
    for k in ("alpha", "z", "r", "rloss", "bound"):
        np.testing.assert_allclose(h2[k], h1[k], rtol=1e-12, atol=1e-12, err_msg=k)
    np.testing.assert_allclose(
        dist.decision_function(X), one.decision_function(X), rtol=1e-12, atol=1e-12
    )


CONFIGS = [
    {},
    {"alpha": "exact", "positive_cumulative": True},
    {"alpha": "line_search", "weak_ranker": "both", "thresholds": 16},
    {"criterion": "exact_z", "learning_rate": 0.5},
]


@pytest.mark.parametrize("feedback", ["layered", "bipartite"])
@pytest.mark.parametrize("cfg", CONFIGS)
def test_issue49_prior_equals_one_machine(client, feedback, cfg):
    X, y, qid, f0 = _problem(5)
    if feedback == "bipartite":
        y = (y >= 1).astype(float)
    cls = rb.BipartiteFeedback if feedback == "bipartite" else rb.LayeredFeedback
    one = _quiet(rb.train, X, cls(y, qid), n_rounds=20, init_score=f0, **cfg)
    Xd, yd, qd, fd = _dask(X, y, qid, f0)
    dist = _quiet(
        rbd.train, client, Xd, yd, qd, init_score=fd, feedback=feedback, n_rounds=20, **cfg
    )
    assert_same_model(one, dist, X)
    plain = _quiet(rb.train, X, cls(y, qid), n_rounds=20, **cfg)
    assert plain.history["alpha"][0] != pytest.approx(one.history["alpha"][0])  # F0 matters


def test_issue49_prior_loss_and_zero_rounds(client):
    """The booster's prior loss is the one machine's; before a round the model scores 0."""
    X, y, qid, f0 = _problem(6)
    one = rb.Booster(X, rb.LayeredFeedback(y, qid), init_score=f0)
    bst = rbd.make_booster(client, *_dask(X, y, qid, f0)[:3], init_score=_dask(X, y, qid, f0)[3])
    try:
        assert bst.prior_loss == pytest.approx(one.prior_loss, rel=1e-12)
        assert bst.prior_loss != pytest.approx(1.0)
        assert bst.n_rounds == 0
        for _ in range(3):
            one.update()
            bst.update()
        assert_same_model(one.model(), bst.model(), X)
    finally:
        bst.close()


def test_issue49_constant_prior_is_no_prior_bit_for_bit(client):
    X, y, qid, _ = _problem(7)
    parts = _dask(X, y, qid)
    plain = _quiet(rbd.train, client, *parts, n_rounds=15)
    const = da.full(len(y), 3.25, chunks=parts[1].chunks)
    assert _quiet(rbd.train, client, *parts, init_score=const, n_rounds=15).to_dict() == (
        plain.to_dict()
    )


def test_issue49_prior_chunks_rechunked_numpy_and_series(client):
    """A prior chunked otherwise than X is re-chunked to X's rows (as y is); a numpy array
    is cut at them; a dask Series works too."""
    X, y, qid, f0 = _problem(8)
    one = _quiet(rb.train, X, rb.LayeredFeedback(y, qid), n_rounds=15, init_score=f0)
    Xd, yd, qd = _dask(X, y, qid)
    for prior in (da.from_array(f0, chunks=7), f0, f0[:, None]):
        assert_same_model(
            one, _quiet(rbd.train, client, Xd, yd, qd, init_score=prior, n_rounds=15), X
        )
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    series = dd.from_pandas(pd.Series(f0), npartitions=4)
    assert_same_model(one, _quiet(rbd.train, client, Xd, yd, qd, init_score=series, n_rounds=15), X)


def test_issue49_prior_moves_with_repartition(client):
    X, y, qid, f0 = _problem(2)
    rng = np.random.default_rng(2)
    shuffle = rng.permutation(len(y))  # every query's rows scattered over the partitions
    X, y, qid, f0 = X[shuffle], y[shuffle], qid[shuffle], f0[shuffle]
    one = _quiet(rb.train, X, rb.LayeredFeedback(y, qid), n_rounds=15, init_score=f0)
    Xd, yd, qd, fd = (da.from_array(a, chunks=len(a) // 3 + 1) for a in (X, y, qid, f0))
    Xd = Xd.rechunk({1: -1})
    dist = _quiet(rbd.train, client, Xd, yd, qd, init_score=fd, n_rounds=15, repartition=True)
    assert_same_model(one, dist, X)


def test_issue49_prior_with_pairs_and_sample_weight(client):
    """Explicit pairs and row weights (pair blocks): the rloss is normalised by D's own mass,
    without the prior's factors, as on one machine."""
    X, y, qid, f0 = _problem(9, n_queries=24)
    i0, i1 = np.nonzero((qid[:, None] == qid[None, :]) & (y[:, None] < y[None, :]))
    w = y[i1] - y[i0]
    fb = rb.PairFeedback(np.c_[i0, i1], w, n_samples=len(y))
    one = _quiet(rb.train, X, fb, 15, init_score=f0)
    chunks = _chunks_at_queries(qid, 3)
    part = np.searchsorted(np.cumsum(chunks), i0, side="right")
    order = np.argsort(part, kind="stable")
    pchunks = tuple(int(v) for v in np.bincount(part, minlength=3))
    pairs = da.from_array(np.c_[i0, i1][order], chunks=(pchunks, 2))
    weights = da.from_array(w[order], chunks=(pchunks,))
    Xd = da.from_array(X, chunks=(chunks, X.shape[1]))
    fd = da.from_array(f0, chunks=(chunks,))
    dist = _quiet(
        rbd.train, client, Xd, pairs=pairs, pair_weights=weights, init_score=fd, n_rounds=15
    )
    assert_same_model(one, dist, X)
    sw = np.random.default_rng(9).integers(1, 4, size=len(y)).astype(float)
    fbw = rb.LayeredFeedback(y, qid).with_sample_weight(sw)
    one = _quiet(rb.train, X, fbw, 15, init_score=f0)
    Xd, yd, qd, wd, fd = _dask(X, y, qid, sw, f0)
    dist = _quiet(rbd.train, client, Xd, yd, qd, sample_weight=wd, init_score=fd, n_rounds=15)
    assert_same_model(one, dist, X)


def test_issue49_estimator_init_score(client):
    X, y, qid, f0 = _problem(4)
    Xd, yd, qd, fd = _dask(X, y, qid, f0)
    est = rbd.DaskRankBoostRanker(client=client, n_estimators=20).fit(Xd, yd, qid=qd, init_score=fd)
    local = rb.RankBoostRanker(n_estimators=20).fit(X, y, qid=qid, init_score=f0)
    assert_same_model(local.model_, est.model_, X)
    np.testing.assert_allclose(est.to_local().predict(X), local.predict(X), atol=1e-12)


def test_issue49_killed_worker_with_a_prior(client):
    """kill -9 a worker at round 6 of a fit from a prior: the rebuilt blocks start from their
    prior again (it travels with their partition) and the model equals the uninterrupted one."""
    X, y, qid, f0 = _problem(11, n_queries=40)
    parts = _dask(X, y, qid, f0, k=4)
    client.wait_for_workers(2, timeout=60)
    whole = _quiet(rbd.train, client, *parts[:3], init_score=parts[3], n_rounds=20)
    client.wait_for_workers(2, timeout=60)
    kill, killed = kill_a_worker_at(client, 5)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        survived = rbd.train(client, *parts[:3], init_score=parts[3], n_rounds=20, callbacks=[kill])
    assert killed
    assert survived.to_dict() == whole.to_dict()
    client.wait_for_workers(2, timeout=60)


# --------------------------------------------------------------------------- bad input


def test_issue49_bad_prior(client):
    X, y, qid, f0 = _problem(1, n_queries=8)
    Xd, yd, qd = _dask(X, y, qid, k=2)
    n = len(y)
    with pytest.raises(
        ValueError, match=rf"init_score must have shape \({n},\).*got shape \({n - 1},\)"
    ):
        rbd.train(client, Xd, yd, qd, init_score=da.from_array(f0[:-1], chunks=5))
    with pytest.raises(
        ValueError, match=rf"init_score must have shape \({n},\).*got shape \({n}, 2\)"
    ):
        rbd.train(client, Xd, yd, qd, init_score=np.c_[f0, f0])
    unknown = da.from_array(f0, chunks=5)
    unknown = unknown[unknown > -np.inf]
    with pytest.raises(
        ValueError, match=r"init_score has unknown chunk sizes.*compute_chunk_sizes"
    ):
        rbd.train(client, Xd, yd, qd, init_score=unknown)
    bad = f0.copy()
    bad[n - 2] = np.nan
    with pytest.raises(
        ValueError, match=rf"partition 1 of init_score .*init_score\[{n - 2}\] = nan"
    ):
        rbd.train(client, Xd, yd, qd, init_score=da.from_array(bad, chunks=Xd.chunks[0]))
    bad[n - 2] = np.inf
    with pytest.raises(ValueError, match=r"init_score must be finite"):
        rbd.train(client, Xd, yd, qd, init_score=bad)
    with pytest.raises(ValueError, match="init_score must be an array of numbers"):
        rbd.train(client, Xd, yd, qd, init_score=np.array(["a"] * n, dtype=object))
    est = rbd.DaskRankBoostRanker(client=client, n_estimators=3)
    with pytest.raises(ValueError, match="init_score= with eval_set="):
        est.fit(Xd, yd, qid=qd, init_score=f0, eval_set=[(Xd, yd)], eval_qid=[qd])


def test_issue49_push_with_a_prior_is_refused_on_dask(client):
    """The P-Norm Push from a prior runs on one machine only: Dask says so, naming both."""
    X, y, qid, f0 = _problem(2, n_queries=8)
    Xd, yd, qd, fd = _dask(X, y, qid, f0, k=2)
    with pytest.raises(ValueError, match=r"push=2\.0 with init_score=.*one machine"):
        rbd.train(client, Xd, yd, qd, init_score=fd, push=2.0, n_rounds=5)
