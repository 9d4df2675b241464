"""Distributed training on a real ``distributed.LocalCluster`` with 2 worker processes.

The Dask model equals the one-machine model on the same rows and bins (same rankers,
alphas and Z to 1e-12, scores to 1e-12) for every feedback kind and alpha rule; a split
query is a clear error and ``repartition=True`` fixes it; a worker killed mid-training is
survived and the model equals the uninterrupted one.
"""

from __future__ import annotations

import importlib.util
import pickle
import re
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankboost as rb
from conftest import kill_a_worker_at, letor_like, two_worker_client

if any(importlib.util.find_spec(m) is None for m in ("dask", "distributed")):
    pytest.skip("dask and distributed are not installed", allow_module_level=True)
# Imported by the ``client`` fixture, which every test here takes: when the module runs, in
# one make-test worker, not at collection in each (about 3 s of CPU each on a cold start).
da: Any = None
distributed: Any = None
rbd: Any = None

# One make-test worker runs this module: one LocalCluster (the module's fixture), not one per
# xdist worker, each with its own Dask worker processes importing and loading the kernels.
pytestmark = pytest.mark.xdist_group("dask")


@pytest.fixture(scope="module")
def client():
    global da, distributed, rbd  # noqa: PLW0603  the module's imports, made when it runs
    import dask.array as da
    import distributed

    import rankboost.dask as rbd

    with two_worker_client() as c:
        yield c


def _sorted(X, y, qid):
    order = np.argsort(qid, kind="stable")
    return X[order], y[order], qid[order]


def _chunks_at_queries(qid, k):
    """Row chunk sizes that cut only between queries, about n / k rows each."""
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    cuts = np.unique(starts[np.searchsorted(starts, np.arange(1, k) * len(qid) / k)])
    edges = np.concatenate([[0], cuts[cuts > 0], [len(qid)]])
    return tuple(int(v) for v in np.diff(edges))


def _dask(X, y, qid, k=3):
    import dask.array as da  # here too: tests/test_exact_z.py calls it without the fixture

    chunks = _chunks_at_queries(qid, k)
    return (
        da.from_array(X, chunks=(chunks, X.shape[1])),
        da.from_array(y, chunks=(chunks,)),
        da.from_array(qid, chunks=(chunks,)),
    )


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
        return fn(*a, **kw)


def assert_same_model(one, dist, X):
    assert one.n_rounds == dist.n_rounds
    h1, h2 = one.history, dist.history
    np.testing.assert_array_equal(h1["feature"], h2["feature"])
    np.testing.assert_array_equal(h1["threshold"], h2["threshold"])
    np.testing.assert_array_equal(h1["default"], h2["default"])
    for k in ("alpha", "z", "r", "rloss", "bound"):
        np.testing.assert_allclose(h2[k], h1[k], rtol=1e-12, atol=1e-12, err_msg=k)
    np.testing.assert_allclose(
        dist.decision_function(X), one.decision_function(X), rtol=1e-12, atol=1e-12
    )


CONFIGS = [
    {},
    {"alpha": "exact", "positive_cumulative": True},
    {"alpha": "line_search", "weak_ranker": "both", "thresholds": 16},
    {"weak_ranker": "feature", "learning_rate": 0.3},
    {"thresholds": "all", "learning_rate": 0.5, "positive_cumulative": True},
]


@pytest.mark.parametrize("feedback", ["layered", "bipartite"])
@pytest.mark.parametrize("normalize", ["query", "pair"])
@pytest.mark.parametrize("cfg", CONFIGS)
def test_dask_equals_one_machine(client, feedback, normalize, cfg):
    X, y, qid = _sorted(*letor_like(n_queries=30, seed=5))
    if feedback == "bipartite":
        y = (y >= 1).astype(float)
    cls = rb.BipartiteFeedback if feedback == "bipartite" else rb.LayeredFeedback
    one = _quiet(rb.train, X, cls(y, qid, normalize=normalize), n_rounds=25, **cfg)
    dist = _quiet(
        rbd.train, client, *_dask(X, y, qid), feedback=feedback, normalize=normalize,
        n_rounds=25, **cfg,
    )  # fmt: skip
    assert_same_model(one, dist, X)


@pytest.mark.parametrize("cfg", CONFIGS[:3])
def test_dask_explicit_pairs(client, cfg):
    X, y, qid = _sorted(*letor_like(n_queries=24, seed=8))
    i0, i1 = np.nonzero((qid[:, None] == qid[None, :]) & (y[:, None] < y[None, :]))
    w = y[i1] - y[i0]
    one = _quiet(rb.train, X, rb.PairFeedback(np.c_[i0, i1], w, n_samples=len(y)), 20, **cfg)
    chunks = _chunks_at_queries(qid, 3)
    ends = np.cumsum(chunks)
    part = np.searchsorted(ends, i0, side="right")  # pairs never cross queries
    order = np.argsort(part, kind="stable")
    pchunks = tuple(int(v) for v in np.bincount(part, minlength=3))
    pairs = da.from_array(np.c_[i0, i1][order], chunks=(pchunks, 2))
    weights = da.from_array(w[order], chunks=(pchunks,))
    Xd = da.from_array(X, chunks=(chunks, X.shape[1]))
    dist = _quiet(rbd.train, client, Xd, pairs=pairs, pair_weights=weights, n_rounds=20, **cfg)
    assert_same_model(one, dist, X)


def test_dask_mq2008_fold1(client):
    train, _, test = rb.datasets.load_mq2008(1)
    X, y, qid = _sorted(train.X, train.y, train.qid)
    one = _quiet(rb.train, X, rb.LayeredFeedback(y, qid), n_rounds=40)
    dist = _quiet(rbd.train, client, *_dask(X, y, qid, k=4), n_rounds=40)
    assert_same_model(one, dist, X)
    np.testing.assert_allclose(
        dist.decision_function(test.X), one.decision_function(test.X), rtol=1e-12, atol=1e-12
    )


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 4), cfg=st.sampled_from(CONFIGS))
def test_dask_random_problems(client, seed, k, cfg):
    X, y, qid = _sorted(*letor_like(n_queries=12, docs_per_query=(3, 12), n_grades=4, seed=seed))
    try:
        fb = rb.LayeredFeedback(y, qid)
    except ValueError:
        return
    one = _quiet(rb.train, X, fb, n_rounds=10, **cfg)
    assert_same_model(one, _quiet(rbd.train, client, *_dask(X, y, qid, k), n_rounds=10, **cfg), X)


def test_split_query_is_an_error_and_repartition_fixes_it(client):
    X, y, qid = letor_like(n_queries=20, seed=2)  # rows of each query scattered
    Xd, yd, qd = (da.from_array(a, chunks=len(a) // 3 + 1) for a in (X, y, qid))
    Xd = Xd.rechunk({1: -1})
    with pytest.raises(
        ValueError, match=r"query \d+ has rows in partitions \d and \d.*repartition"
    ):
        rbd.train(client, Xd, yd, qd, n_rounds=5)
    one = _quiet(rb.train, X, rb.LayeredFeedback(y, qid), n_rounds=20)
    dist = _quiet(rbd.train, client, Xd, yd, qd, n_rounds=20, repartition=True)
    assert_same_model(one, dist, X)
    X2, y2, q2 = rbd.repartition_by_query(Xd, yd, qd)
    parts = [set(np.asarray(c.compute()).tolist()) for c in q2.to_delayed().ravel()]
    assert sum(len(p) for p in parts) == len(set(qid.tolist()))  # each query in one partition
    assert X2.shape == X.shape


def test_killed_worker_mid_training(client):
    """kill -9 the process of a worker holding blocks at round 6: the lost blocks are rebuilt
    from their rows and the rounds so far, and the model equals the uninterrupted one."""
    X, y, qid = _sorted(*letor_like(n_queries=40, seed=9))
    parts = _dask(X, y, qid, k=4)
    # both trainings deal the partitions to the same 2 workers (the model is bit for bit the
    # same on the same number of workers): on a loaded machine a worker can be away a moment
    client.wait_for_workers(2, timeout=60)
    whole = _quiet(rbd.train, client, *parts, n_rounds=20)
    client.wait_for_workers(2, timeout=60)
    kill, killed = kill_a_worker_at(client, 5)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        survived = rbd.train(client, *parts, n_rounds=20, callbacks=[kill])
    assert killed
    assert survived.to_dict() == whole.to_dict()  # the same model, bit for bit
    client.wait_for_workers(2, timeout=60)


def test_estimator_fit_predict_to_local_pickle(client):
    X, y, qid = _sorted(*letor_like(n_queries=30, seed=4))
    Xd, yd, qd = _dask(X, y, qid)
    est = rbd.DaskRankBoostRanker(client=client, n_estimators=30).fit(
        Xd, yd, qid=qd, eval_set=[(Xd, yd)], eval_qid=[qd], early_stopping_rounds=5
    )
    local = rb.RankBoostRanker(n_estimators=30).fit(
        X, y, qid=qid, eval_set=[(X, y)], eval_qid=[qid], early_stopping_rounds=5
    )
    assert est.best_iteration_ == local.best_iteration_
    scores = est.predict(Xd)
    assert isinstance(scores, da.Array)
    np.testing.assert_allclose(scores.compute(), local.predict(X), rtol=1e-12, atol=1e-12)
    back = est.to_local()
    assert type(back) is rb.RankBoostRanker
    np.testing.assert_allclose(back.predict(X), local.predict(X), rtol=1e-12, atol=1e-12)
    clone = pickle.loads(pickle.dumps(est))
    assert clone.client is None
    np.testing.assert_array_equal(
        clone.model_.decision_function(X), est.model_.decision_function(X)
    )


def test_issue16_estimator_without_qid_warns_one_query(client):
    X, y, _ = letor_like(n_queries=4, seed=2)
    Xd, yd = da.from_array(X, chunks=(len(y), -1)), da.from_array(y, chunks=len(y))
    est = rbd.DaskRankBoostRanker(client=client, n_estimators=3)
    with pytest.warns(rb.OneQueryWarning, match="DaskRankBoostRanker.fit: X has no query ids"):
        _quiet(est.fit, Xd, yd)
    local = _quiet(rb.RankBoostRanker(n_estimators=3).fit, X, y, qid=np.zeros(len(y)))
    np.testing.assert_allclose(est.model_.decision_function(X), local.predict(X), atol=1e-12)


def test_estimator_sample_weight_and_dataframe(client):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y, qid = _sorted(*letor_like(n_queries=20, seed=6))
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    local = rb.RankBoostRanker(n_estimators=15).fit(X, y, qid=qid, sample_weight=w)
    chunks = _chunks_at_queries(qid, 2)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]).assign(qid=qid)
    ddf = dd.from_pandas(frame, npartitions=1).repartition(divisions=None) if False else None
    del ddf
    Xd = dd.from_dask_array(
        da.from_array(frame.to_numpy(), chunks=(chunks, -1)), columns=list(frame.columns)
    )
    est = rbd.DaskRankBoostRanker(client=client, n_estimators=15).fit(
        Xd, da.from_array(y, chunks=(chunks,)), sample_weight=da.from_array(w, chunks=(chunks,))
    )
    assert list(est.feature_names_in_) == [f"f{i}" for i in range(X.shape[1])]
    # columns in another order are refused, as RankBoostRanker refuses them (issue 26)
    reordered = [f"f{i}" for i in reversed(range(X.shape[1]))]
    fitted = rb.RankBoostRanker(n_estimators=1).fit(frame.drop(columns="qid"), y, qid=qid)
    with pytest.raises(ValueError, match="The feature names should match"):
        fitted.predict(frame[reordered])
    with pytest.raises(ValueError, match=r"The feature names should match.*X has columns \['f5'"):
        est.predict(Xd[reordered])
    # the functional predict reads a DataFrame by the model's names, as decision_function
    np.testing.assert_allclose(
        rbd.predict(est.model_, Xd[reordered]).compute(),
        est.model_.decision_function(frame[reordered]),
        rtol=1e-12,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        est.model_.decision_function(X), local.predict(X), rtol=1e-12, atol=1e-12
    )


def test_issue16_integer_sample_weight_bins_equal_repeated_rows(client):
    """Weighted value counts: with integer weights at the default 255 bins the Dask model is
    the one-machine model of the rows repeated w times (issue 16)."""
    X, y, qid = _sorted(*letor_like(n_queries=40, seed=8))
    w = np.random.default_rng(8).integers(0, 4, size=len(y)).astype(float)
    assert len(np.unique(X[:, 0])) > 255  # quantile bins, not every distinct value
    rep = np.repeat(np.arange(len(y)), w.astype(int))
    one = _quiet(rb.train, X[rep], rb.LayeredFeedback(y[rep], qid[rep]), n_rounds=15)
    Xd, yd, qd = _dask(X, y, qid, 3)
    wd = da.from_array(w, chunks=yd.chunks)
    dist = _quiet(rbd.train, client, Xd, yd, qd, sample_weight=wd, n_rounds=15)
    np.testing.assert_array_equal(dist.history["threshold"], one.history["threshold"])
    np.testing.assert_allclose(dist.decision_function(X), one.decision_function(X), atol=1e-12)


def test_bad_dask_input(client):
    X, y, qid = _sorted(*letor_like(n_queries=6, seed=1))
    Xd, yd, qd = _dask(X, y, qid, 2)
    with pytest.raises(TypeError, match="X must be a dask array"):
        rbd.train(client, X, yd, qd)
    with pytest.raises(ValueError, match="'alpha' parameter of rankboost.dask.train"):
        rbd.train(client, Xd, yd, qd, alpha="best")
    with pytest.raises(ValueError, match="needs y"):
        rbd.train(client, Xd)
    with pytest.raises(ValueError, match="bins must be 'auto', 'exact', 'sketch'"):
        rbd.train(client, Xd, yd, qd, bins="fast")


def test_given_bins_and_sketch(client):
    X, y, qid = _sorted(*letor_like(n_queries=30, seed=12))
    parts = _dask(X, y, qid)
    fb = rb.LayeredFeedback(y, qid)
    # bins fitted elsewhere (here: on all rows) are used as given: the one-machine model
    bins = rb.binning.BinMapper(8).fit(X, fb._rows)
    one = _quiet(rb.train, X, fb, n_rounds=15, thresholds=8)
    dist = _quiet(rbd.train, client, *parts, n_rounds=15, thresholds=8, bins=bins)
    assert_same_model(one, dist, X)
    # the sketch: deterministic, every cut a training value, near the exact quantile cuts
    a = rbd.make_booster(client, *parts, thresholds=8, bins="sketch")
    b = rbd.make_booster(client, *parts, thresholds=8, bins="sketch")
    for i, (ca, cb) in enumerate(zip(a.binner.cuts_, b.binner.cuts_, strict=True)):
        np.testing.assert_array_equal(ca, cb)
        col = X[fb._rows, i]
        col = col[~np.isnan(col)]
        assert np.isin(ca, col.astype(np.float32)).all()  # float32 training values (issue 22)
        exact = bins.cuts_[i]
        if exact.shape[0] == ca.shape[0]:  # same number of cuts: ranks within 1/points
            ranks = np.searchsorted(np.sort(col), ca) / col.shape[0]
            exact_ranks = np.searchsorted(np.sort(col), exact) / col.shape[0]
            assert np.max(np.abs(ranks - exact_ranks)) < 0.02
    a.close()
    b.close()
    with pytest.raises(ValueError, match="bins='sketch' needs an int number of thresholds"):
        rbd.make_booster(client, *parts, thresholds="all", bins="sketch")


def test_one_actor_per_worker_and_bytes_per_round(client):
    X, y, qid = _sorted(*letor_like(n_queries=40, seed=13))
    bst = rbd.make_booster(client, *_dask(X, y, qid, k=6), thresholds=16)
    try:
        assert bst.n_blocks == 6
        assert len(bst._hubs) <= len(client.scheduler_info()["workers"])
        bst.update()
        hist_bytes = X.shape[1] * bst.binner.n_codes * 8
        # one summed histogram per worker (not per partition) and a few floats
        assert bst.last_step["bytes_received"] < (len(bst._hubs) + 0.5) * hist_bytes
    finally:
        bst.close()


@pytest.mark.parametrize("feedback", ["layered", "bipartite"])
@pytest.mark.parametrize(
    "cfg",
    [{"thresholds": "midpoints", "criterion": "r"},
     {"thresholds": ("uniform", 7), "default": 0, "alpha": "exact"},
     {"thresholds": ("uniform", 10), "default": 1, "criterion": "r", "weak_ranker": "both"}],
)  # fmt: skip
def test_issue13_new_options_equal_one_machine(client, feedback, cfg):
    """criterion=, default= and the midpoint / uniform thresholds (issue 13): the Dask merge
    of the partitions' value counts gives the one-machine cuts, and the rounds are equal."""
    X, y, qid = _sorted(*letor_like(n_queries=30, seed=21))
    if feedback == "bipartite":
        y = (y >= 1).astype(float)
    cls = rb.BipartiteFeedback if feedback == "bipartite" else rb.LayeredFeedback
    one = _quiet(rb.train, X, cls(y, qid), n_rounds=20, **cfg)
    dist = _quiet(rbd.train, client, *_dask(X, y, qid), feedback=feedback, n_rounds=20, **cfg)
    assert_same_model(one, dist, X)
    Xd, yd, qd = _dask(X, y, qid)
    est = _quiet(
        rbd.DaskRankBoostRanker(client=client, n_estimators=20, feedback=feedback, **cfg).fit,
        Xd, yd, qid=qd,
    )  # fmt: skip
    assert est.model_.params["criterion"] == cfg.get("criterion", "abs_r")
    np.testing.assert_allclose(
        est.model_.history["alpha"], one.history["alpha"], rtol=1e-12, atol=1e-12
    )
    with pytest.raises(ValueError, match="bins='sketch' needs an int number of thresholds"):
        rbd.make_booster(client, *_dask(X, y, qid), bins="sketch", **cfg)


# ------------------------------------------------------------------ issue 26
def test_issue26_partitions_get_the_one_machine_input_checks(client):
    """+inf in X, a NaN label (named by its global row, as rb.train names it) and a chunk
    that computes to another shape than declared are errors before training."""
    X, y, qid = _sorted(*letor_like(n_queries=30, seed=3))
    chunks = _chunks_at_queries(qid, 3)
    row = chunks[0] + 5  # in the second partition
    X_inf = X.copy()
    X_inf[row, 1] = np.inf
    Xd, yd, qd = _dask(X_inf, y, qid)
    with pytest.raises(ValueError, match=rf"infinity \(first at row {row}, column 1\)"):
        rb.train(X_inf, rb.LayeredFeedback(y, qid), n_rounds=2)
    with pytest.raises(ValueError, match=rf"infinity \(first at row {row}, column 1\)"):
        rbd.train(client, Xd, yd, qd, n_rounds=2)
    y_nan = y.copy()
    y_nan[row] = np.nan
    Xd, yd, qd = _dask(X, y_nan, qid)
    with pytest.raises(ValueError, match=rf"NaN or infinity \(first at row {row}\)"):
        rbd.train(client, Xd, yd, qd, n_rounds=2)
    # a partition narrower than the dask array declares
    import dask

    Xd, yd, qd = _dask(X, y, qid)
    blocks = [b[:, :-1] if k == 1 else b for k, b in enumerate(Xd.to_delayed()[:, 0])]
    narrow = da.concatenate(
        [
            da.from_delayed(dask.delayed(np.asarray)(b), shape=(n, X.shape[1]), dtype=float)
            for b, n in zip(blocks, chunks, strict=True)
        ]
    )
    with pytest.raises(ValueError, match=r"partition 1 of X .* computes to shape"):
        rbd.train(client, narrow, yd, qd, n_rounds=2)


def test_issue26_more_one_machine_checks(client):
    """What rb.train refuses, rbd.train refuses with the same words: a value float32 rounds
    to infinity (named by its global row), a sample_weight chunk shorter than declared (not
    an IndexError on a worker), a y of another length than X (not dask's chunk error)."""
    import dask

    X, y, qid = _sorted(*letor_like(n_queries=12, seed=3))
    chunks = _chunks_at_queries(qid, 2)
    row = chunks[0] + 3
    X_big = X.copy()
    X_big[row, 2] = -1e39
    msg = rf"X\[{row}, 2\] is -1e\+39, beyond the float32 range"
    with pytest.raises(ValueError, match=msg):
        rb.train(X_big, rb.LayeredFeedback(y, qid), n_rounds=2)
    with pytest.raises(ValueError, match=msg):
        rbd.train(client, *_dask(X_big, y, qid, 2), n_rounds=2)
    Xd, yd, qd = _dask(X, y, qid, 2)
    w = np.r_[2.0, np.ones(len(y) - 1)]
    pieces = da.from_array(w, chunks=(chunks,)).to_delayed()
    short = da.concatenate(
        [
            da.from_delayed(dask.delayed(np.asarray)(b[:-1] if k == 1 else b), (n,), float)
            for k, (b, n) in enumerate(zip(pieces, chunks, strict=True))
        ]
    )
    with pytest.raises(ValueError, match=r"partition 1 of sample_weight .* computes to shape"):
        rbd.train(client, Xd, yd, qd, sample_weight=short, n_rounds=2)
    with pytest.raises(ValueError, match=rf"y has shape \({len(y) - 1},\) but X has {len(y)} rows"):
        rbd.train(client, Xd, da.from_array(y[1:]), qd, n_rounds=2)
    pairs = da.from_array(np.array([[0, 1], [0, 2], [0, 3]]), chunks=((1, 2), 2))
    with pytest.raises(ValueError, match=r"pair_weights has shape \(2,\) but pairs has 3 rows"):
        rbd.train(client, Xd, pairs=pairs, pair_weights=da.from_array(np.ones(2)), n_rounds=2)
    keep = yd > -1  # all rows, but dask no longer knows how many per chunk
    with pytest.raises(ValueError, match=r"X has unknown chunk sizes .*compute_chunk_sizes"):
        rbd.train(client, Xd[keep], yd[keep], qd[keep], n_rounds=2)
    with pytest.raises(ValueError, match=r"y has unknown chunk sizes .*compute_chunk_sizes"):
        rbd.train(client, Xd, yd[keep], qd, n_rounds=2)


def test_issue26_a_client_that_is_not_the_default_one(client):
    """Another Client created later is dask's default: training on ``client`` must use
    ``client`` for everything (it waited forever on the actors before)."""
    import threading

    X, y, qid = _sorted(*letor_like(n_queries=12, seed=5))
    Xd, yd, qd = _dask(X, y, qid, 2)
    one = _quiet(rb.train, X, rb.LayeredFeedback(y, qid), n_rounds=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        other = distributed.Client(
            distributed.LocalCluster(
                n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
            )
        )
    dd = pytest.importorskip("dask.dataframe")
    frame = dd.from_dask_array(
        da.concatenate([Xd, qd[:, None]], axis=1), columns=[*"abcdef", "qid"]
    )
    frame = client.persist(frame)  # the data on ``client``'s cluster only
    y_series = client.persist(dd.from_dask_array(yd))
    results = {}

    def fit():
        try:
            results["train"] = _quiet(rbd.train, client, Xd, yd, qd, n_rounds=4)
            est = rbd.DaskRankBoostRanker(client=client, n_estimators=4)
            results["ranker"] = _quiet(est.fit, Xd, yd, qid=qd, repartition=True)
            # a DataFrame's partition lengths are counted by ``client`` (not the default one,
            # which has not got its data): fit, predict and score
            est = _quiet(
                rbd.DaskRankBoostRanker(client=client, n_estimators=4).fit, frame, y_series
            )
            with warnings.catch_warnings():  # nor dask's warning on mixed collections
                warnings.simplefilter("error", UserWarning)
                results["frame"] = (est, est.predict(frame), est.score(frame, y_series))
        except Exception as exc:  # reported below, with the thread's traceback
            results["error"] = exc

    try:
        assert distributed.default_client() is other
        worker = threading.Thread(target=fit, daemon=True)
        worker.start()
        worker.join(timeout=600)  # a safety net only: it takes seconds once fixed
        assert not worker.is_alive(), "training on a client that is not the default hangs"
    finally:
        other.close()
        other.cluster.close()
    if "error" in results:
        raise results["error"]
    assert_same_model(one, results["train"], X)
    assert_same_model(one, results["ranker"].model_, X)
    est, scores, score = results["frame"]
    assert_same_model(one, est.model_, X)
    np.testing.assert_allclose(
        client.compute(scores).result(), one.decision_function(X), atol=1e-12
    )
    assert score == pytest.approx(rb.metrics.ndcg_score(y, one.decision_function(X), qid, k=10))


def test_issue26_clone_and_grid_search(client):
    """sklearn.clone keeps the client (by reference); GridSearchCV and cross_validate over
    the Dask ranker give the scores of the one-machine ranker's."""
    import sklearn
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate

    params = {"n_estimators": 3, "learning_rate": 0.5}
    est = rbd.DaskRankBoostRanker(client=client, **params)
    copy = clone(est)
    assert copy.client is client
    assert copy.get_params()["learning_rate"] == 0.5
    assert not hasattr(copy, "model_")
    X, y, qid = _sorted(*letor_like(n_queries=12, seed=7))
    Xd, yd, qd = _dask(X, y, qid, 2)
    grid = {"n_estimators": [2, 4]}
    with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
        warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
        dist = GridSearchCV(est, grid, cv=GroupKFold(2), error_score="raise")
        dist.fit(Xd, yd, qid=qd, groups=qid)
        local = GridSearchCV(rb.RankBoostRanker(learning_rate=0.5), grid, cv=GroupKFold(2))
        local.fit(X, y, qid=qid, groups=qid)
        cv = [
            cross_validate(e, Xv, yv, params={"qid": q, "groups": qid}, cv=GroupKFold(2))
            for e, Xv, yv, q in [(est, Xd, yd, qd), (rb.RankBoostRanker(**params), X, y, qid)]
        ]
    np.testing.assert_allclose(
        dist.cv_results_["mean_test_score"], local.cv_results_["mean_test_score"], atol=1e-12
    )
    assert dist.best_estimator_.client is client
    np.testing.assert_allclose(cv[0]["test_score"], cv[1]["test_score"], atol=1e-12)


def test_issue52_workers_threads_with_parallel_drivers_same_model(client, monkeypatch):
    """Two in-process workers of 2 threads each: their blocks run every kernel on its
    parallel driver (2 numba threads, launched from both workers' threads at once, while
    other threads of the process launch kernels too) and train the model of the serial
    drivers bit for bit, three times; the one-machine model to 1e-12 (issue 52: the
    worker's threads change the speed, never the model)."""
    import threading

    import rankboost._kernels as kernels
    from rankboost._kernels import histogram
    from test_n_jobs import _KernelNoise

    X, y, qid = _sorted(*letor_like(n_queries=16, seed=11))
    one = _quiet(rb.train, X, rb.LayeredFeedback(y, qid), n_rounds=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=2, processes=False, dashboard_address=None
        )
    try:
        with distributed.Client(cluster) as threaded:
            assert set(threaded.nthreads().values()) == {2}
            data = _dask(X, y, qid, 4)
            serial = _quiet(rbd.train, threaded, *data, n_rounds=10).to_dict()
            monkeypatch.setattr(kernels, "PARALLEL_MIN_WORK", 0)  # the workers share the module
            launched = []
            parallel = histogram._histograms_parallel

            def counted(*args):
                launched.append(threading.current_thread().name)
                return parallel(*args)

            monkeypatch.setattr(histogram, "_histograms_parallel", counted)
            noise = _KernelNoise()
            try:
                for _ in range(3):
                    assert _quiet(rbd.train, threaded, *data, n_rounds=10).to_dict() == serial
            finally:
                noise.close()
    finally:
        cluster.close()
    assert len(set(launched)) >= 2  # from several workers' threads
    assert noise.launches > 0
    assert_same_model(one, rb.RankBoostModel.from_dict(serial), X)


def test_what_a_worker_unpickles_imports_no_sklearn():
    """A Dask worker imports ``rankboost.dask`` to run the blocks, checks and scoring the
    client ships: without scikit-learn (2 s of CPU per worker process; the estimator is
    imported on first use)."""
    import subprocess
    import sys

    from rankboost.dask import _block, _data, _train

    shipped = pickle.dumps([_block.WorkerBlocks, _data._check_partition, _train._score_chunk])
    probe = (
        "import pickle, sys; pickle.loads(sys.stdin.buffer.read()); "
        "print(' '.join(m for m in ('sklearn', 'scipy.stats', 'pandas') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], input=shipped, capture_output=True, check=True
    )
    assert out.stdout.split() == []


def _group_data(seed=5):
    """Small sorted letor-like data, its dask form (3 partitions at query boundaries), and
    the group sizes: all, and per partition."""
    X, y, qid = _sorted(*letor_like(n_queries=12, seed=seed))
    Xd, yd, qd = _dask(X, y, qid)
    _, sizes = np.unique(qid, return_counts=True)  # qid sorted: sizes in row order
    per_part = [
        np.unique(c, return_counts=True)[1] for c in np.split(qid, np.cumsum(Xd.chunks[0])[:-1])
    ]
    return X, y, qid, Xd, yd, qd, sizes, per_part


def test_group_dask_and_numpy_equal_qid(client):
    X, y, qid, Xd, yd, qd, sizes, per_part = _group_data()
    by_qid = rbd.DaskRankBoostRanker(client=client, n_estimators=8).fit(Xd, yd, qid=qd)
    gd = da.concatenate([da.from_array(p, chunks=len(p)) for p in per_part])
    assert gd.numblocks[0] == Xd.numblocks[0]
    for group in (gd, sizes, sizes.tolist()):
        est = rbd.DaskRankBoostRanker(client=client, n_estimators=8).fit(Xd, yd, group=group)
        assert est.model_.to_dict() == by_qid.model_.to_dict()
    # a dask DataFrame X: its partition lengths are counted, its feature names kept
    dd, pd = pytest.importorskip("dask.dataframe"), pytest.importorskip("pandas")
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    bounds = np.cumsum((0, *Xd.chunks[0]))
    parts = [
        dd.from_pandas(df.iloc[a:b], npartitions=1)
        for a, b in zip(bounds[:-1], bounds[1:], strict=True)
    ]
    est = rbd.DaskRankBoostRanker(client=client, n_estimators=8).fit(dd.concat(parts), yd, group=gd)
    assert list(est.feature_names_in_) == list(df.columns)
    np.testing.assert_array_equal(
        est.model_.decision_function(X), by_qid.model_.decision_function(X)
    )
    local = rb.RankBoostRanker(n_estimators=8).fit(X, y, group=sizes)
    np.testing.assert_allclose(est.predict(Xd).compute(), local.predict(X), rtol=1e-12, atol=1e-12)


def test_group_straddling_numpy_and_repartition(client):
    X, y, qid, Xd, yd, qd, sizes, _ = _group_data(seed=6)
    # cut X inside query 1: its rows straddle partitions 0 and 1
    cut = int(sizes[0]) + 2
    Xs = da.from_array(X, chunks=((cut, len(y) - cut), X.shape[1]))
    ys = da.from_array(y, chunks=((cut, len(y) - cut),))
    est = rbd.DaskRankBoostRanker(client=client, n_estimators=5)
    msg = rf"group: query 1 \(rows {sizes[0]} to .*\) straddles partitions 0 and 1 of X "
    with pytest.raises(ValueError, match=msg):
        est.fit(Xs, ys, group=sizes)
    moved = est.fit(Xs, ys, group=sizes, repartition=True)
    by_qid = rbd.DaskRankBoostRanker(client=client, n_estimators=5).fit(
        Xs,
        ys,
        qid=da.from_array(np.repeat(np.arange(len(sizes)), sizes), chunks=((cut, len(y) - cut),)),
        repartition=True,
    )
    assert moved.model_.to_dict() == by_qid.model_.to_dict()


def test_eval_group_early_stopping_equals_eval_qid(client):
    X, y, qid, Xd, yd, qd, sizes, per_part = _group_data(seed=7)
    Xv, yv, qv = _sorted(*letor_like(n_queries=6, seed=8))
    _, sv = np.unique(qv, return_counts=True)
    kw = {"eval_set": [(Xv, yv)], "early_stopping_rounds": 3}
    a = rbd.DaskRankBoostRanker(client=client, n_estimators=10).fit(
        Xd, yd, qid=qd, eval_qid=[qv], **kw
    )
    b = rbd.DaskRankBoostRanker(client=client, n_estimators=10).fit(
        Xd, yd, group=sizes, eval_group=[da.from_array(sv, chunks=3)], **kw
    )
    assert a.best_iteration_ == b.best_iteration_
    assert a.evals_result_ == b.evals_result_
    assert a.model_.to_dict() == b.model_.to_dict()


def test_bad_dask_group(client):
    X, y, qid, Xd, yd, qd, sizes, per_part = _group_data()
    est = rbd.DaskRankBoostRanker(client=client, n_estimators=3)
    with pytest.raises(ValueError, match="got both qid= and group="):
        est.fit(Xd, yd, qid=qd, group=sizes)
    with pytest.raises(ValueError, match="got both eval_qid= and eval_group="):
        est.fit(Xd, yd, group=sizes, eval_set=[(X, y)], eval_qid=[qid], eval_group=[sizes])
    # a row of partition 1 counted in chunk 0 of group: chunk 0 sums to one row too many
    bad = [p.copy() for p in per_part]
    bad[0][0] += 1
    bad[1][0] -= 1
    gd = da.concatenate([da.from_array(p, chunks=len(p)) for p in bad])
    rows = Xd.chunks[0]
    msg = rf"the sizes in chunk 0 sum to {rows[0] + 1} but partition 0 of X has {rows[0]} rows"
    with pytest.raises(ValueError, match=msg):
        est.fit(Xd, yd, group=gd)
    with pytest.raises(ValueError, match="group is a dask array of 1 chunks .* 3 row partitions"):
        est.fit(Xd, yd, group=da.from_array(sizes, chunks=len(sizes)))
    with pytest.raises(ValueError, match=f"group sizes sum to {len(y) - 1} but there are {len(y)}"):
        est.fit(Xd, yd, group=np.r_[sizes[:-1], sizes[-1] - 1])
    one_machine = rb.RankBoostRanker(n_estimators=3)
    for g in (np.r_[sizes[:-1], 0], np.r_[sizes[:-2], -1, sizes[-1] + sizes[-2] + 1], sizes + 0.5):
        with pytest.raises(ValueError, match="group") as expected:
            one_machine.fit(X, y, group=g)
        with pytest.raises(ValueError, match=re.escape(str(expected.value))):  # the same error
            est.fit(Xd, yd, group=g)
    with pytest.raises(ValueError, match="group sizes must all be positive"):  # a dask chunk
        est.fit(
            Xd,
            yd,
            group=da.concatenate([da.from_array(np.r_[p, 0], chunks=len(p) + 1) for p in per_part]),
        )
    with pytest.raises(ValueError, match="group must be a 1-D array of positive integers"):
        est.fit(Xd, yd, group=["a", "b"])
    with pytest.raises(
        ValueError, match=r"eval_group\[0\] \(eval_set\[0\] has \d+ rows\): group sizes"
    ):
        est.fit(Xd, yd, group=sizes, eval_set=[(X, y)], eval_group=[sizes[:-1]])
    assert not hasattr(est, "model_")


# ------------------------------------------------------------------ issue 48: the P-Norm Push
def _blocks_model(X, fb, chunks, n_rounds, params):
    """The one-machine push model trained on the blocks the Dask partitions hold."""
    bst = rb.Booster(X, fb, params, n_blocks=len(chunks))
    ends = np.cumsum(chunks)
    for k, b in enumerate(bst._blocks):  # the same blocks: block k's rows are partition k's
        assert ends[k] - chunks[k] <= b.rows.min() <= b.rows.max() < ends[k]
    for _ in range(n_rounds):
        if bst.update() is None:
            break
    return bst


def assert_push_model(X, fb, chunks, dist, n_rounds, params):
    """``dist`` is the one-machine push model: of the same blocks to 1e-12 (as RankBoost's
    Dask model is the one-machine model), of one block with the same rankers and alphas to
    1e-10 (the push's alpha is a Newton root of a sum of the blocks' slopes: another order
    of the sums moves it by up to ~1e-11, as ``test_issue48_blocks_give_the_same_model``)."""
    blocks = _blocks_model(X, fb, chunks, n_rounds, params)
    assert_same_model(blocks.model(), dist, X)
    one = _quiet(rb.train, X, fb, n_rounds=n_rounds, **params)
    assert one.n_rounds == dist.n_rounds
    for k in ("feature", "threshold", "default"):
        np.testing.assert_array_equal(dist.history[k], one.history[k], err_msg=k)
    for k in ("alpha", "z", "r", "rloss", "bound"):
        np.testing.assert_allclose(dist.history[k], one.history[k], rtol=1e-10, atol=1e-12)
    return blocks


PUSH_CONFIGS = [
    {"push": 2.0},
    {"push": 4.0, "weak_ranker": "both", "learning_rate": 0.5, "thresholds": 16},
    {"push": 16.0, "alpha": "line_search", "weak_ranker": "feature"},
]


@pytest.mark.parametrize("feedback", ["layered", "bipartite"])
@pytest.mark.parametrize("normalize", ["query", "pair"])
@pytest.mark.parametrize("cfg", PUSH_CONFIGS)
def test_issue48_push_on_dask_equals_one_machine(client, feedback, normalize, cfg):
    X, y, qid = _sorted(*letor_like(n_queries=30, seed=5))
    if feedback == "bipartite":
        y = (y >= 1).astype(float)
    cls = rb.BipartiteFeedback if feedback == "bipartite" else rb.LayeredFeedback
    fb = cls(y, qid, normalize=normalize)
    parts = _dask(X, y, qid)
    bst = rbd.make_booster(client, *parts, feedback=feedback, normalize=normalize, **cfg)
    try:
        for _ in range(25):
            if _quiet(bst.update) is None:
                break
        dist = bst.model()
        log_objective = bst.log_objective
    finally:
        bst.close()
    assert dist.push == cfg["push"]
    blocks = assert_push_model(X, fb, parts[0].chunks[0], dist, 25, cfg)
    np.testing.assert_allclose(log_objective, blocks.log_objective, rtol=1e-12, atol=1e-12)
    assert np.all(np.diff(log_objective) <= 1e-12)  # R_p never goes up


def test_issue48_push_on_dask_explicit_pairs(client):
    X, y, qid = _sorted(*letor_like(n_queries=24, seed=8))
    i0, i1 = np.nonzero((qid[:, None] == qid[None, :]) & (y[:, None] < y[None, :]))
    w = y[i1] - y[i0]
    fb = rb.PairFeedback(np.c_[i0, i1], w, n_samples=len(y))
    one = _quiet(rb.train, X, fb, n_rounds=20, push=4.0)
    chunks = _chunks_at_queries(qid, 3)
    part = np.searchsorted(np.cumsum(chunks), i0, side="right")
    order = np.argsort(part, kind="stable")
    pchunks = tuple(int(v) for v in np.bincount(part, minlength=3))
    pairs = da.from_array(np.c_[i0, i1][order], chunks=(pchunks, 2))
    weights = da.from_array(w[order], chunks=(pchunks,))
    Xd = da.from_array(X, chunks=(chunks, X.shape[1]))
    dist = _quiet(rbd.train, client, Xd, pairs=pairs, pair_weights=weights, n_rounds=20, push=4.0)
    # explicit pairs: the one-machine blocks are its connected groups, not these partitions
    np.testing.assert_array_equal(dist.history["feature"], one.history["feature"])
    np.testing.assert_array_equal(dist.history["threshold"], one.history["threshold"])
    for k in ("alpha", "z", "r", "rloss", "bound"):
        np.testing.assert_allclose(dist.history[k], one.history[k], rtol=1e-10, atol=1e-12)


def test_issue48_push_on_dask_mq2008_fold1(client):
    train, _, test = rb.datasets.load_mq2008(1)
    X, y, qid = _sorted(train.X, train.y, train.qid)
    fb = rb.LayeredFeedback(y, qid)
    # partitions cut after the last row of each one-machine block (whole queries)
    cuts = [int(b.rows.max()) + 1 for b in rb.Booster(X, fb, n_blocks=4)._blocks[:-1]]
    chunks = tuple(int(v) for v in np.diff([0, *cuts, len(y)]))
    parts = tuple(
        da.from_array(a, chunks=(chunks, *a.shape[1:])) for a in (X, y.astype(float), qid)
    )
    dist = _quiet(rbd.train, client, *parts, n_rounds=30, push=4.0)
    blocks = assert_push_model(X, fb, chunks, dist, 30, {"push": 4.0})
    np.testing.assert_allclose(
        dist.decision_function(test.X), blocks.model().decision_function(test.X), atol=1e-12
    )


def test_issue48_push_killed_worker_mid_training(client):
    """A worker killed at round 6 of a push: its blocks (and their push state) are rebuilt
    from their rows and the rounds so far, and the model is the uninterrupted one, bit for
    bit (as ``test_killed_worker_mid_training`` for RankBoost)."""
    X, y, qid = _sorted(*letor_like(n_queries=40, seed=9))
    parts = _dask(X, y, qid, k=4)
    client.wait_for_workers(2, timeout=60)
    whole = _quiet(rbd.train, client, *parts, n_rounds=15, push=4.0)
    client.wait_for_workers(2, timeout=60)
    kill, killed = kill_a_worker_at(client, 5)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        survived = rbd.train(client, *parts, n_rounds=15, push=4.0, callbacks=[kill])
    assert killed
    assert survived.to_dict() == whole.to_dict()
    assert survived.push == 4.0
    client.wait_for_workers(2, timeout=60)


def test_issue48_dask_ranker_push(client):
    X, y, qid = _sorted(*letor_like(n_queries=30, seed=4))
    Xd, yd, qd = _dask(X, y, qid)
    est = _quiet(
        rbd.DaskRankBoostRanker(client=client, n_estimators=20, push=2.0).fit, Xd, yd, qid=qd
    )
    assert est.model_.push == 2.0
    local = _quiet(rb.RankBoostRanker(n_estimators=20, push=2.0).fit, X, y, qid=qid)
    assert_push_model(X, rb.LayeredFeedback(y, qid), Xd.chunks[0], est.model_, 20, {"push": 2.0})
    np.testing.assert_allclose(est.predict(Xd).compute(), local.predict(X), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("bad", [0.5, 0.0, float("nan"), float("inf"), "2", True])
def test_issue48_bad_push_on_dask_is_the_one_machine_error(client, bad):
    X, y, qid = _sorted(*letor_like(n_queries=6, seed=1))
    Xd, yd, qd = _dask(X, y, qid, 2)
    fb = rb.LayeredFeedback(y, qid)
    for one_machine, dask_fit in (
        (lambda: rb.train(X, fb, n_rounds=2, push=bad),
         lambda: rbd.train(client, Xd, yd, qd, n_rounds=2, push=bad)),
        (lambda: rb.RankBoostRanker(push=bad).fit(X, y, qid=qid),
         lambda: rbd.DaskRankBoostRanker(client=client, push=bad).fit(Xd, yd, qid=qd)),
    ):  # fmt: skip
        with pytest.raises(rb.params.ParameterError) as expected:
            one_machine()
        # the same sentence, naming the Dask surface instead of the one-machine one
        msg = str(expected.value).replace("rankboost.train", "rankboost.dask.train")
        msg = msg.replace("RankBoostRanker", "DaskRankBoostRanker")
        with pytest.raises(rb.params.ParameterError, match=re.escape(msg)):
            dask_fit()
    with pytest.raises(rb.params.ParameterError, match=r"push=2.0 minimises R_p; .* or push=1"):
        rbd.train(client, Xd, yd, qd, n_rounds=2, push=2.0, alpha="exact")
