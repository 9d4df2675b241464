"""rankboost.metrics: conventions, bad input, registry, invariances, LightGBM/XGBoost."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rankboost import metrics as M

Y = np.array([2, 0, 1, 0, 0, 1, 1, 0], dtype=float)
S = np.array([0.9, 0.8, 0.1, 0.5, 0.4, 0.3, 0.7, 0.2])
Q = np.array([1, 1, 1, 2, 2, 2, 3, 3])

ALL_METRICS = [
    M.ndcg_score,
    M.dcg_score,
    M.precision_at_k,
    M.average_precision,
    M.mean_average_precision,
    M.reciprocal_rank,
    M.expected_average_precision,
    M.expected_prot,
    M.expected_coverage,
    M.disagreement,
    M.average_rank,
]


# --------------------------------------------------------------------------------------------
# values computed by hand
# --------------------------------------------------------------------------------------------


def test_ndcg_by_hand():
    # query 1 ranked: labels 2, 0, 1 -> DCG = 3/1 + 0 + 1/log2(4) = 3.5,
    # IDCG = 3 + 1/log2(3); query 2 ranked 0, 0, 1 -> DCG = 1/2, IDCG = 1;
    # query 3 ranked 1, 0 -> 1.
    q1 = 3.5 / (3 + 1 / math.log2(3))
    got = M.ndcg_score(Y, S, Q, k=3, per_query=True)
    np.testing.assert_allclose(got, [q1, 0.5, 1.0], rtol=1e-14)
    assert M.ndcg_score(Y, S, Q, k=3) == pytest.approx((q1 + 1.5) / 3, rel=1e-14)
    # k=1: only the top row counts
    np.testing.assert_allclose(M.ndcg_score(Y, S, Q, k=1, per_query=True), [1, 0, 1])


def test_letor_discount_reproduces_eval_score_4():
    """Eval-Score-4.0.pl: gain 2^r - 1; discount 1 at ranks 1 and 2, then 1/log2(rank)."""
    y, s = [0, 2, 1], [3.0, 2.0, 1.0]  # ranked labels 0, 2, 1
    want = (0 + 3 * 1 + 1 / math.log2(3)) / (3 + 1 + 0)
    assert M.ndcg_score(y, s, k=3, discount="letor") == pytest.approx(want, rel=1e-14)
    assert M.ndcg_score(y, s, k=3) != pytest.approx(want)


def test_precision_ap_rr_by_hand():
    y, s = [0, 1, 1, 0, 1], [5, 4, 3, 2, 1]
    assert M.precision_at_k(y, s, k=3) == pytest.approx(2 / 3)
    assert M.precision_at_k(y, s, k=10) == pytest.approx(3 / 10)  # denominator is k
    assert M.average_precision(y, s) == pytest.approx((1 / 2 + 2 / 3 + 3 / 5) / 3)
    assert M.average_precision(y, s, k=3) == pytest.approx((1 / 2 + 2 / 3) / 3)
    assert M.reciprocal_rank(y, s) == 0.5
    assert M.reciprocal_rank(y, s, k=1) == 0.0
    assert M.expected_coverage(y, s) == pytest.approx(3 / 5)
    assert M.average_rank(y, s) == 2.0
    assert M.average_rank(y, s, cap=1) == 1.0


def test_relevance_threshold():
    y, s = [1, 2, 1], [3, 2, 1]
    assert M.reciprocal_rank(y, s, relevance_threshold=2) == 0.5
    assert M.average_precision(y, s, relevance_threshold=2) == 0.5


def test_disagreement_by_hand():
    y, s = [3, 2, 1, 0], [0.4, 0.1, 0.3, 0.3]
    # 6 crucial pairs; misordered: (2 below 1), (2 below 0); tied: (1, 0) counts w
    assert M.disagreement(y, s, ties="pessimistic") == pytest.approx(3 / 6)
    assert M.disagreement(y, s) == pytest.approx(2.5 / 6)
    assert M.disagreement(y, s, ties="optimistic") == pytest.approx(2 / 6)
    assert M.disagreement(y, s, ties="stable") == pytest.approx(2 / 6)  # row 2 before row 3
    assert M.disagreement(y[::-1], s[::-1], ties="stable") == pytest.approx(3 / 6)


def test_topk_counts_paper_table_shape():
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(50), 30)
    y = np.zeros(1500)
    y[np.arange(50) * 30 + rng.integers(0, 30, 50)] = 1  # one correct URL per query
    y[:30] = 0  # query 0: the correct URL was not retrieved
    s = rng.random(1500)
    counts = M.topk_counts(y, s, qid)
    assert list(counts) == [1, 2, 5, 10, 20, 30]
    assert counts[30] == 49.0
    values = list(counts.values())
    assert values == sorted(values)
    ranks = M.average_rank(y, s, qid, per_query=True)
    assert ranks[0] == 31.0
    assert counts[5] == float(np.sum(ranks <= 5))


# --------------------------------------------------------------------------------------------
# empty queries and one-row queries
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "func",
    [
        M.ndcg_score,
        M.precision_at_k,
        M.average_precision,
        M.reciprocal_rank,
        M.expected_average_precision,
        M.expected_prot,
        M.expected_coverage,
    ],
)
def test_empty_policies(func):
    # query 1 has a relevant row ranked first, query 2 has none
    y, s, qid = [1, 0, 0, 0], [2.0, 1.0, 2.0, 1.0], [1, 1, 2, 2]
    kw = {"k": 1} if func is M.precision_at_k else {}
    assert func(y, s, qid, empty="zero", **kw) == 0.5
    assert func(y, s, qid, empty="one", **kw) == 1.0
    assert func(y, s, qid, empty="skip", **kw) == 1.0
    per = func(y, s, qid, empty="skip", per_query=True, **kw)
    assert per[0] == 1.0
    assert np.isnan(per[1])
    assert func([0, 0], [1.0, 2.0], empty="skip", **kw) == 0.0  # everything skipped


@pytest.mark.parametrize("label", [0.0, 1.0])
@pytest.mark.parametrize("func", ALL_METRICS)
def test_one_row_query_is_documented_not_nan(func, label):
    value = func([label], [0.3])
    assert not math.isnan(value)
    expected = {
        M.dcg_score: label,  # 2**1 - 1 = 1
        M.precision_at_k: label / 10,
        M.disagreement: 0.0,
        M.average_rank: 1.0 if label else 31.0,
    }.get(func, label)
    assert value == expected


# --------------------------------------------------------------------------------------------
# invariances
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("func", ALL_METRICS)
@pytest.mark.parametrize("ties", ["expected", "pessimistic", "optimistic"])
def test_row_permutation_and_qid_relabelling_invariance(func, ties):
    rng = np.random.default_rng(7)
    n = 300
    y = rng.integers(0, 3, n).astype(float)
    s = rng.integers(0, 6, n).astype(float)
    qid = rng.integers(0, 12, n)
    base = func(y, s, qid, ties=ties, per_query=True)
    perm = rng.permutation(n)
    np.testing.assert_allclose(func(y[perm], s[perm], qid[perm], ties=ties, per_query=True), base)
    # string ids that sort in the same order give the same per-query output
    names = np.array([f"q{v:03d}" for v in qid])
    np.testing.assert_allclose(func(y, s, names, ties=ties, per_query=True), base)
    # the mean is the mean of the per-query values (NaN = skipped)
    assert func(y, s, qid, ties=ties) == pytest.approx(np.nanmean(base))
    # a strictly increasing transform of the scores changes nothing
    np.testing.assert_allclose(func(y, np.exp(s), qid, ties=ties, per_query=True), base)


def test_single_query_equals_qid_none():
    assert M.ndcg_score(Y, S) == M.ndcg_score(Y, S, np.zeros(8))


# --------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------


def test_length_mismatch():
    with pytest.raises(ValueError, match=r"y_score must be 1-D with 3 entries"):
        M.ndcg_score([1, 0, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match=r"qid has 2 entries but there are 3 rows"):
        M.average_precision([1, 0, 1], [0.1, 0.2, 0.3], [1, 2])
    with pytest.raises(ValueError, match=r"y_score must be 1-D"):
        M.disagreement([1, 0, 1], [0.1, 0.2])


def test_nan_inputs():
    with pytest.raises(ValueError, match=r"y_true contains NaN or infinity \(first at row 1\)"):
        M.ndcg_score([1, np.nan], [0.1, 0.2])
    with pytest.raises(ValueError, match=r"y_score contains NaN"):
        M.reciprocal_rank([1, 0], [np.nan, 0.2])


def test_empty_input():
    with pytest.raises(ValueError, match=r"ndcg_score needs at least one row"):
        M.ndcg_score([], [])


@pytest.mark.parametrize("k", [0, -3])
def test_k_must_be_positive(k):
    with pytest.raises(ValueError, match=rf"'k' parameter of precision_at_k must be >= 1; got {k}"):
        M.precision_at_k([1, 0], [0.1, 0.2], k=k)
    with pytest.raises(ValueError, match=r"'k' parameter of ndcg_score must be >= 1"):
        M.ndcg_score([1, 0], [0.1, 0.2], k=k)


@pytest.mark.parametrize("k", [2.5, "3", True])
def test_k_must_be_an_int(k):
    with pytest.raises(TypeError, match=r"'k' parameter of ndcg_score must be an int >= 1 or None"):
        M.ndcg_score([1, 0], [0.1, 0.2], k=k)
    with pytest.raises(TypeError, match=r"'k' parameter of precision_at_k must be an int >= 1"):
        M.precision_at_k([1, 0], [0.1, 0.2], k=k)


@pytest.mark.parametrize("func", ALL_METRICS)
def test_unknown_ties(func):
    with pytest.raises(ValueError, match=r"'ties' parameter of .* must be one of .*got 'random'"):
        func([1, 0], [0.1, 0.2], ties="random")


def test_unknown_gain_empty_discount():
    with pytest.raises(ValueError, match=r"'gain' parameter of ndcg_score .*got 'exp'"):
        M.ndcg_score([1, 0], [0.1, 0.2], gain="exp")
    with pytest.raises(ValueError, match=r"'empty' parameter of average_precision .*got 'nan'"):
        M.average_precision([1, 0], [0.1, 0.2], empty="nan")
    with pytest.raises(ValueError, match=r"'discount' parameter of dcg_score .*got 'ln'"):
        M.dcg_score([1, 0], [0.1, 0.2], discount="ln")


def test_negative_labels_rejected_by_ndcg():
    with pytest.raises(ValueError, match=r"non-negative relevance labels .* minimum of -1.0"):
        M.ndcg_score([-1, 0], [0.1, 0.2])


def test_bad_threshold_and_cap_and_ks():
    with pytest.raises(TypeError, match=r"'relevance_threshold' parameter .* got 'high'"):
        M.average_precision([1, 0], [0.1, 0.2], relevance_threshold="high")
    with pytest.raises(ValueError, match=r"'cap' parameter of average_rank must be >= 1"):
        M.average_rank([1, 0], [0.1, 0.2], cap=0)
    with pytest.raises(ValueError, match=r"'ks' parameter of topk_counts must be >= 1; got 0"):
        M.topk_counts([1, 0], [0.1, 0.2], ks=(1, 0))
    with pytest.raises(ValueError, match=r"'ks' parameter of topk_counts must not be empty"):
        M.topk_counts([1, 0], [0.1, 0.2], ks=())


# --------------------------------------------------------------------------------------------
# registry, parser, evaluate
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "func", "kwargs"),
    [
        ("ndcg@10", M.ndcg_score, {"k": 10}),
        ("NDCG", M.ndcg_score, {"k": None}),
        ("dcg@3", M.dcg_score, {"k": 3}),
        ("p@5", M.precision_at_k, {"k": 5}),
        ("precision@5", M.precision_at_k, {"k": 5}),
        ("map", M.mean_average_precision, {"k": None}),
        ("map@10", M.mean_average_precision, {"k": 10}),
        ("ap", M.average_precision, {"k": None}),
        ("mrr", M.reciprocal_rank, {"k": None}),
        ("disagreement", M.disagreement, {}),
        ("expected_ap", M.expected_average_precision, {}),
        ("prot", M.expected_prot, {}),
        ("coverage", M.expected_coverage, {}),
        (" average_rank ", M.average_rank, {}),
    ],
)
def test_parse_metric(name, func, kwargs):
    assert M.parse_metric(name) == (func, kwargs)


def test_parse_metric_errors():
    with pytest.raises(
        ValueError, match=r"Unknown metric 'ndgc@10'; known metrics are: ndcg\[@k\]"
    ):
        M.parse_metric("ndgc@10")
    with pytest.raises(ValueError, match=r"'p' needs a rank cut-off, e.g. 'p@10'"):
        M.parse_metric("p")
    with pytest.raises(ValueError, match=r"cut-off of metric 'ndcg@x' must be a positive integer"):
        M.parse_metric("ndcg@x")
    with pytest.raises(ValueError, match=r"cut-off of metric 'ndcg@0' must be a positive integer"):
        M.parse_metric("ndcg@0")
    with pytest.raises(ValueError, match=r"'prot' takes no '@k' cut-off"):
        M.parse_metric("prot@3")
    with pytest.raises(TypeError, match=r"metric name must be a str"):
        M.parse_metric(10)


def test_registry_directions():
    assert not M.METRICS["disagreement"].greater_is_better
    assert not M.METRICS["average_rank"].greater_is_better
    assert M.METRICS["ndcg"].greater_is_better


def test_evaluate():
    got = M.evaluate(Y, S, Q, ["ndcg@3", "map", "p@1", "disagreement"], ties="pessimistic")
    assert list(got) == ["ndcg@3", "map", "p@1", "disagreement"]
    assert got["ndcg@3"] == M.ndcg_score(Y, S, Q, k=3, ties="pessimistic")
    assert got["map"] == M.mean_average_precision(Y, S, Q, ties="pessimistic")
    assert got["disagreement"] == M.disagreement(Y, S, Q, ties="pessimistic")
    lin = M.evaluate(Y, S, Q, "ndcg@3", gain="linear", empty="one")
    assert lin == {"ndcg@3": M.ndcg_score(Y, S, Q, k=3, gain="linear", empty="one")}
    per = M.evaluate(Y, S, Q, ["mrr"], per_query=True)["mrr"]
    assert per.shape == (3,)


def test_evaluate_errors():
    with pytest.raises(ValueError, match=r"Unknown metric 'auc'; known metrics are"):
        M.evaluate(Y, S, Q, ["ndcg@3", "auc"])
    with pytest.raises(TypeError, match=r"option\(s\) \['gain'\] that none of the metrics"):
        M.evaluate(Y, S, Q, ["map"], gain="linear")
    with pytest.raises(ValueError, match=r"must name at least one metric"):
        M.evaluate(Y, S, Q, [])


# --------------------------------------------------------------------------------------------
# rloss (thin wrapper over the feedback objects of the engine)
# --------------------------------------------------------------------------------------------


def test_rloss_wraps_feedback():
    feedback = pytest.importorskip("rankboost.feedback")
    y, s = np.array([3, 2, 1, 0.0]), np.array([0.4, 0.1, 0.3, 0.3])
    fb = feedback.LayeredFeedback(y)
    # one query, every crucial pair weighted equally: rloss = disagreement
    for ties in ("expected", "pessimistic", "optimistic"):
        assert M.rloss(s, fb, ties=ties) == pytest.approx(M.disagreement(y, s, ties=ties))
    assert M.rloss(s, fb) == pytest.approx(3 / 6)  # default: ties count as errors
    pairs = feedback.PairFeedback([[0, 1], [2, 1]], weights=[3.0, 1.0], n_samples=3)
    # row 1 should be above rows 0 and 2; scores put row 1 above 0 but tied with 2
    assert M.rloss(np.array([0.0, 1.0, 1.0]), pairs) == pytest.approx(1 / 4)
    assert M.rloss(np.array([0.0, 1.0, 1.0]), pairs, ties="expected") == pytest.approx(1 / 8)


def test_rloss_errors():
    class Fake:
        def rloss(self, scores, tie_weight=1.0):
            return tie_weight

    assert M.rloss([0.1], Fake(), ties="optimistic") == 0.0
    with pytest.raises(ValueError, match=r"got 'stable' instead: a feedback object"):
        M.rloss([0.1], Fake(), ties="stable")
    with pytest.raises(ValueError, match=r"'ties' parameter of rloss must be one of"):
        M.rloss([0.1], Fake(), ties="random")
    with pytest.raises(TypeError, match=r"'feedback' parameter of rloss .*got list instead"):
        M.rloss([0.1], [1, 2])


# --------------------------------------------------------------------------------------------
# LightGBM and XGBoost conventions (empty queries score 1, exp2 gain)
# --------------------------------------------------------------------------------------------


def _ranking_data(seed=0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 30, 25)
    qid = np.repeat(np.arange(25), sizes)
    n = qid.shape[0]
    y = rng.integers(0, 4, n) * (rng.random(n) < 0.4)
    y[qid == 0] = 0  # one query without any relevant row
    return y.astype(float), rng.permutation(n) / n, sizes, qid


def test_matches_lightgbm_ndcg():
    """LightGBM (version: importlib.metadata.version("lightgbm")) metric "ndcg", eval_at.

    A lambdarank booster whose single tree cannot split (min_data_in_leaf > n) adds one
    constant to ``init_score``, so the evaluated order is that of our scores. LightGBM gives
    all-zero queries NDCG 1 and uses gain 2**rel - 1: our ``empty="one"``, ``gain="exp2"``.
    """
    lgb = pytest.importorskip("lightgbm")
    y, s, sizes, qid = _ranking_data()
    x = np.zeros((y.shape[0], 1))
    ds = lgb.Dataset(x, y, group=sizes, init_score=s)
    params = {
        "objective": "lambdarank",
        "metric": "ndcg",
        "eval_at": [1, 3, 10],
        "min_data_in_leaf": 10**6,
        "verbose": -1,
    }
    record = {}
    lgb.train(
        params, ds, 1, valid_sets=[ds], valid_names=["t"], callbacks=[lgb.record_evaluation(record)]
    )
    for k in (1, 3, 10):
        ours = M.ndcg_score(y, s, qid, k=k, empty="one")
        assert record["t"][f"ndcg@{k}"][0] == pytest.approx(ours, abs=1e-9)


def test_matches_xgboost_ndcg():
    """XGBoost (version: importlib.metadata.version("xgboost")) eval_metric ndcg@k / ndcg@k-.

    ``ndcg@k`` scores queries without a relevant row 1 (our ``empty="one"``), ``ndcg@k-``
    scores them 0 (``empty="zero"``); gain 2**rel - 1. XGBoost works in float32.
    """
    xgb = pytest.importorskip("xgboost")
    y, s, sizes, qid = _ranking_data(1)
    d = xgb.DMatrix(np.zeros((y.shape[0], 1)), y, base_margin=s)
    d.set_group(sizes)
    for metric, empty in (("ndcg@5", "one"), ("ndcg@5-", "zero")):
        record = {}
        xgb.train(
            {"objective": "rank:ndcg", "eval_metric": metric, "eta": 0.0},
            d,
            1,
            evals=[(d, "t")],
            evals_result=record,
            verbose_eval=False,
        )
        ours = M.ndcg_score(y, s, qid, k=5, empty=empty)
        assert record["t"][metric][0] == pytest.approx(ours, abs=1e-6)


def test_read_only_inputs_score_the_same_with_the_same_machine_code():
    """Read-only arrays (pandas' copy-on-write columns, np.frombuffer) are another numba
    type: the sorting kernel was compiled a second time for them (about 4 s)."""
    from numba.core import types

    from rankboost._kernels import ranking_metrics

    rng = np.random.default_rng(7)
    y, s = rng.integers(0, 3, 40).astype(float), rng.normal(size=40)
    qid = np.repeat(np.arange(4), 10)
    want = {t: M.ndcg_score(y, s, qid=qid, k=5, ties=t) for t in ("expected", "optimistic")}
    y.flags.writeable = False
    s.flags.writeable = False
    for ties, value in want.items():
        assert M.ndcg_score(y, s, qid=qid, k=5, ties=ties) == value
    sigs = ranking_metrics.rank_within_queries.signatures
    read_only = [a for sig in sigs for a in sig if isinstance(a, types.Array) and not a.mutable]
    assert read_only == [], sigs


# ------------------------------------------------------------------ shared docstring entries


@pytest.mark.parametrize("fn", [*ALL_METRICS, M.topk_counts], ids=lambda f: f.__name__)
def test_docstrings_are_filled_and_document_every_parameter_in_order(fn):
    """The shared entries of ``metrics/_docs.py`` leave no placeholder behind, and each metric's
    rendered ``Parameters`` section names its signature's parameters, in order, each once."""
    import inspect
    import re

    doc = inspect.getdoc(fn)
    assert "%(" not in doc
    lines = doc.splitlines()
    section = lines[lines.index("Parameters") + 2 : lines.index("Returns")]
    documented = [m[1] for line in section if (m := re.match(r"(\w+) : ", line))]
    assert documented == list(inspect.signature(fn).parameters)
