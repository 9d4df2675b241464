"""Tests of rankboost.clicks (issue 25): the log reader, pair extraction, propensities.

Pair extraction is checked against a slow pure-Python reference written from the
definitions (Joachims 2002; Joachims et al. 2005; Joachims, Swaminathan & Schnabel 2017) on
random logs (hypothesis); the EM estimator must recover known propensities on a seeded
simulated log.
"""

from __future__ import annotations

import gzip
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankboost as rb
from rankboost.clicks import (
    ClickLog,
    Propensity,
    click_feedback,
    click_pairs,
    estimate_propensity,
    examination,
    intervention_counts,
    read_click_log,
    read_propensity,
    simulate_clicks,
)

HEADER = "qid\tdocid\tposition\tclick\n"


def _write(tmp_path, text, name="clicks.tsv", compress=False):
    path = tmp_path / name
    data = text.encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


# ------------------------------------------------------------------------------------------
# reader
# ------------------------------------------------------------------------------------------


def test_reader_tsv_csv_gzip_agree(tmp_path):
    tsv = HEADER + "7\td2\t2\t1\n7\td1\t1\t0\n8\tx\t1\t1\n"
    csv_text = tsv.replace("\t", ",")
    logs = [
        read_click_log(_write(tmp_path, tsv)),
        read_click_log(_write(tmp_path, csv_text, "c.csv")),
        read_click_log(_write(tmp_path, tsv, "c.tsv.gz", compress=True)),
    ]
    for log in logs:
        assert log.n_sessions == 2
        assert log.qid.tolist() == ["7", "7", "8"]
        assert log.docid.tolist() == ["d1", "d2", "x"]  # sorted by position in the session
        assert log.position.tolist() == [1, 2, 1]
        assert log.click.tolist() == [0, 1, 1]
        assert log.line.tolist() == [3, 2, 4]  # file lines, header = 1


def test_reader_session_and_count(tmp_path):
    text = (
        "qid\tdocid\tposition\tclick\tsession\tcount\n"
        "1\ta\t1\t0\ts1\t3\n1\tb\t2\t1\ts1\t3\n1\tb\t1\t1\ts2\t1\n1\ta\t2\t0\ts2\t1\n"
    )
    log = read_click_log(_write(tmp_path, text))
    assert log.n_sessions == 2
    assert log.session_count.tolist() == [3.0, 1.0]
    assert log.n_clicks == 4.0


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ("1\ta\t0\t1\n", r"position must be >= 1 .*line 2 \(position 0\).*add 1"),
        ("1\ta\t1\t2\n", r"click must be 0 or 1; line 2 has 2"),
        ("1\ta\t1.5\t0\n", r"position must be an integer; line 2 has"),
        ("1\ta\tx\t0\n", r"line 2: position must be a number; got 'x'"),
        (
            "1\ta\t1\t0\n1\tb\t3\t1\n",
            r"click at position 3 \(line 3, qid 1\) is on a position "
            r"not shown: the session does not show position 2",
        ),
        (
            "1\ta\t1\t0\n1\tb\t1\t1\n",
            r"duplicate rows: 1 entries repeat a position.*lines 2 "
            r"and 3 \(qid 1, position 1\)",
        ),
        ("1\ta\t1\t0\n1\ta\t2\t1\n", r"duplicate rows: docid a is shown twice"),
        ("1\ta\t1\n", r"line 2: 3 fields but the header has 4"),
    ],
)
def test_reader_bad_rows(tmp_path, body, match):
    with pytest.raises(ValueError, match=match):
        read_click_log(_write(tmp_path, HEADER + body))


def test_reader_bad_header_and_empty(tmp_path):
    with pytest.raises(ValueError, match=r"lacks position, click"):
        read_click_log(_write(tmp_path, "qid\tdocid\n1\ta\n"))
    with pytest.raises(ValueError, match="empty or has no header"):
        read_click_log(_write(tmp_path, ""))
    with pytest.raises(ValueError, match="has no entries"):
        read_click_log(_write(tmp_path, HEADER))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_click_log(tmp_path / "nope.tsv")
    bad = tmp_path / "bad.gz"
    bad.write_bytes(gzip.compress(b"qid\tdocid\tposition\tclick\n1\ta\t1\t1\n")[:-8])
    with pytest.raises(ValueError, match="damaged or truncated gzip"):
        read_click_log(bad)


def test_reader_count_must_be_constant_and_positive(tmp_path):
    head = "qid\tdocid\tposition\tclick\tcount\n"
    with pytest.raises(ValueError, match="count differs within one session"):
        read_click_log(_write(tmp_path, head + "1\ta\t1\t0\t2\n1\tb\t2\t1\t3\n"))
    with pytest.raises(ValueError, match="count must be a positive number; line 2"):
        read_click_log(_write(tmp_path, head + "1\ta\t1\t0\t0\n"))


def test_match_reports_missing_documents():
    log = ClickLog.from_arrays(
        qid=[1, 1, 1, 2], docid=["a", "b", "zz", "yy"], position=[1, 2, 3, 1], click=[0, 1, 0, 1]
    )
    with pytest.raises(
        ValueError,
        match=r"2 rows \(2 distinct documents\) have no row in F: \(qid 1, docid zz\), "
        r"\(qid 2, docid yy\)",
    ):
        log.match([1, 1, 2], ["a", "b", "c"], what="F")
    with pytest.raises(ValueError, match=r"hold \(qid 1, docid a\) twice \(rows 0 and 2\)"):
        log.match([1, 1, 1], ["a", "b", "a"])
    rows = log.match([2, 1, 1, 1, 2], ["yy", "zz", "b", "a", "q"]).row
    assert rows.tolist() == [3, 2, 1, 0]


def test_match_int_and_float_qids_agree():
    log = ClickLog.from_arrays(qid=["10"], docid=["a"], position=[1], click=[1])
    assert log.match(np.array([10.0]), ["a"]).row.tolist() == [0]


# ------------------------------------------------------------------------------------------
# pair extraction vs a pure-Python reference
# ------------------------------------------------------------------------------------------


def reference_pairs(sessions, propensity, mode, max_weight):
    """Phi(lower, upper) from the definitions, one session and one click at a time.

    ``sessions``: list of (rows by position, clicks by position, count).
    """
    phi = defaultdict(float)
    for rows, clicks, count in sessions:
        clicked_at = [k for k, c in enumerate(clicks) if c]
        for k in clicked_at:
            w = count
            if propensity is not None:
                w *= min(1.0 / propensity[k], max_weight)
            if mode == "skip_above":  # Joachims 2002: click > skip above
                others = range(k)
            elif mode == "skip_next":  # Joachims et al. 2005: click > no-click next
                others = range(k + 1, min(k + 2, len(rows)))
            elif mode == "last_click_skip_above":  # Joachims et al. 2005
                others = range(k) if k == clicked_at[-1] else range(0)
            else:  # all_*: Joachims, Swaminathan & Schnabel 2017 on the shown list
                others = [s for s in range(len(rows)) if s != k]
            for s in others:
                if not clicks[s] or mode == "all_shown":
                    phi[(rows[s], rows[k])] += w
    return phi


@st.composite
def random_logs(draw):
    n_rows = draw(st.integers(2, 12))
    n_sessions = draw(st.integers(1, 8))
    sessions = []
    for _ in range(n_sessions):
        m = draw(st.integers(1, min(n_rows, 6)))
        rows = draw(st.permutations(range(n_rows)))[:m]
        clicks = draw(st.lists(st.booleans(), min_size=m, max_size=m))
        count = draw(st.sampled_from([1.0, 2.0, 0.5]))
        sessions.append((list(rows), clicks, count))
    return n_rows, sessions


def _log_of(n_rows, sessions, shuffle_seed):
    qid, pos, clk, row, sess, cnt = [], [], [], [], [], []
    for s, (rows, clicks, count) in enumerate(sessions):
        for k, (r, c) in enumerate(zip(rows, clicks, strict=True)):
            qid.append(0)
            pos.append(k + 1)
            clk.append(int(c))
            row.append(r)
            sess.append(s)
            cnt.append(count)
    perm = np.random.default_rng(shuffle_seed).permutation(len(pos))  # any input order
    arr = [np.asarray(a)[perm] for a in (qid, pos, clk, sess, cnt, row)]
    return ClickLog.from_arrays(
        qid=arr[0],
        docid=None,
        position=arr[1],
        click=arr[2],
        session=arr[3],
        count=arr[4],
        row=arr[5],
        n_samples=n_rows,
    )


@settings(max_examples=60, deadline=None)
@given(
    problem=random_logs(),
    mode=st.sampled_from(
        ["skip_above", "skip_next", "last_click_skip_above", "all_unclicked", "all_shown"]
    ),
    weighted=st.booleans(),
    seed=st.integers(0, 100),
)
def test_pairs_match_reference(problem, mode, weighted, seed):
    n_rows, sessions = problem
    log = _log_of(n_rows, sessions, seed)
    prop = Propensity.from_table(np.linspace(1.0, 0.05, 6)) if weighted else None
    pairs, weights = click_pairs(log, prop, pairs=mode, max_weight=7.0)
    expected = reference_pairs(
        sessions, None if prop is None else prop.values, mode, max_weight=7.0
    )
    got = {(int(a), int(b)): float(w) for (a, b), w in zip(pairs, weights, strict=True)}
    assert got.keys() == expected.keys()
    for key, w in expected.items():
        assert got[key] == pytest.approx(w, rel=1e-12)
    # without aggregation: one row per pair per session, the same total
    raw, raw_w = click_pairs(log, prop, pairs=mode, max_weight=7.0, aggregate=False)
    assert raw_w.sum() == pytest.approx(sum(expected.values()), rel=1e-12)


def test_click_feedback_is_pair_feedback_and_refuses_no_pairs():
    log = ClickLog.from_arrays(
        qid=[1, 1, 1, 1],
        docid=None,
        position=[1, 2, 1, 2],
        click=[0, 1, 0, 1],
        session=[1, 1, 2, 2],
        row=[0, 1, 0, 1],
    )
    fb = click_feedback(log, propensity=[1.0, 0.25])
    assert isinstance(fb, rb.PairFeedback)
    assert fb.pairs.tolist() == [[0, 1]]
    assert fb.weights.tolist() == [8.0]
    naive = click_feedback(log, propensity="none")
    assert naive.weights.tolist() == [2.0]
    top = ClickLog.from_arrays(qid=[1, 1], docid=None, position=[1, 2], click=[1, 0], row=[0, 1])
    with pytest.raises(ValueError, match="yields no skip_above pair"):
        click_feedback(top, propensity="none", pairs="skip_above")
    with pytest.raises(
        ValueError, match="covers positions 1..1 but the log has a click at position 2"
    ):
        click_feedback(log, propensity=[1.0])
    with pytest.raises(ValueError, match="pairs must be one of"):
        click_feedback(log, propensity="none", pairs="skip_below")
    with pytest.raises(ValueError, match="not matched to feature rows"):
        click_pairs(ClickLog.from_arrays(qid=[1], docid=["a"], position=[1], click=[1]))


def test_propensity_table_file(tmp_path):
    path = _write(tmp_path, "position\tpropensity\n2\t0.3\n1\t0.6\n", "p.tsv")
    assert read_propensity(path).values.tolist() == [1.0, 0.5]
    with pytest.raises(ValueError, match=r"positions must be 1..K, each once; got \[1, 3\]"):
        read_propensity(_write(tmp_path, "position,propensity\n1,1\n3,0.5\n", "q.csv"))
    with pytest.raises(ValueError, match="must name the columns 'position' and 'propensity'"):
        read_propensity(_write(tmp_path, "rank\tp\n1\t1\n", "r.tsv"))
    with pytest.raises(ValueError, match="need positive finite values"):
        Propensity.from_table([1.0, 0.0])


# ------------------------------------------------------------------------------------------
# propensity estimation
# ------------------------------------------------------------------------------------------


def _reshuffled_log(n_sessions, true_p, seed):
    """PBM clicks on lists reshuffled every session (documents seen at every position)."""
    rng = np.random.default_rng(seed)
    n_docs, K = 20, true_p.size
    gamma = rng.uniform(0.05, 0.95, n_docs)
    docs = np.argsort(rng.random((n_sessions, n_docs)), axis=1)[:, :K]
    clicks = rng.random((n_sessions, K)) < true_p * gamma[docs]
    return ClickLog.from_arrays(
        qid=np.zeros(n_sessions * K, int),
        docid=docs.ravel(),
        position=np.tile(np.arange(1, K + 1), n_sessions),
        click=clicks.ravel().astype(int),
        session=np.repeat(np.arange(n_sessions), K),
    )


@pytest.mark.parametrize("seed", [1, 2])
def test_em_recovers_known_propensities(seed):
    # 20000 sessions x 6 positions, mean relevance 0.5: position k has ~20000 impressions and
    # ~10000 p_k clicks; the click rate's relative standard error is about
    # sqrt((1 - 0.5 p_k) / (10000 p_k)) <= 0.023 at p_6 = 0.2, and the ratio p_k / p_1 adds
    # p_1's (0.008): 3 standard errors of the ratio at the deepest position is 0.075 relative.
    true_p = 0.9 / np.arange(1, 7)  # (1/k)^1, not normalised: EM must find p_1 = 1 scale
    est = estimate_propensity(_reshuffled_log(20000, true_p, seed), method="em")
    assert est.values[0] == 1.0
    assert est.method == "em"
    np.testing.assert_allclose(est.values, true_p / true_p[0], rtol=0.075)


def test_em_warns_when_not_identifiable():
    log = ClickLog.from_arrays(qid=[1, 1], docid=["a", "b"], position=[1, 2], click=[0, 1])
    with pytest.warns(UserWarning, match="every document was shown at one position only"):
        estimate_propensity(log, method="em")
    with pytest.raises(ValueError, match="needs X and a log matched"):
        estimate_propensity(log, method="regression_em")


def _rankers_log(n_sessions, true_p, seed, n_q=30, n_docs=12, n_rankers=3, count=False):
    """PBM clicks under several logged rankers: each session draws a query and a ranker."""
    rng = np.random.default_rng(seed)
    K = true_p.size
    gamma = rng.uniform(0.05, 0.95, (n_q, n_docs))
    rankings = np.argsort(rng.random((n_rankers, n_q, n_docs)), axis=2)[:, :, :K]
    q = rng.integers(0, n_q, n_sessions)
    docs = rankings[rng.integers(0, n_rankers, n_sessions), q]
    clicks = rng.random((n_sessions, K)) < true_p * gamma[q[:, None], docs]
    return ClickLog.from_arrays(
        qid=np.repeat(q, K),
        docid=docs.ravel(),
        position=np.tile(np.arange(1, K + 1), n_sessions),
        click=clicks.ravel().astype(int),
        session=np.repeat(np.arange(n_sessions), K),
        count=np.repeat(rng.integers(1, 4, n_sessions), K) if count else None,
    )


def _reference_intervention_counts(log):
    """Agarwal et al. (WSDM 2019)'s c^k_{k,k'} and not-c^k_{k,k'}, loops over the entries.

    A click (non-click) of (q, d) at k adds N_q / (N imp(q, d, k)) to c[k, k'] (nc[k, k']) for
    every other position k' at which (q, d) was shown (the interventional set S_{k,k'}), with
    the rankers' traffic replaced by the observed sessions (intervention_counts' docstring).
    """
    K = int(log.position.max())
    n_q, imp, shown = defaultdict(float), defaultdict(float), defaultdict(set)
    for s in range(log.n_sessions):
        a, b = log.starts[s], log.starts[s + 1]
        n_q[log.qid[a]] += log.count[a]
        for i in range(a, b):
            key = (log.qid[i], log.docid[i])
            imp[key, log.position[i]] += log.count[i]
            shown[key].add(int(log.position[i]))
    total = sum(n_q.values())
    c, nc = np.zeros((K, K)), np.zeros((K, K))
    for i in range(log.n_entries):
        key, k = (log.qid[i], log.docid[i]), int(log.position[i])
        w = n_q[log.qid[i]] / (total * imp[key, k])
        for k2 in shown[key] - {k}:
            if log.click[i]:
                c[k - 1, k2 - 1] += w * log.count[i]
            else:
                nc[k - 1, k2 - 1] += w * log.count[i]
    return c, nc


@pytest.mark.parametrize("seed", [3, 4])
def test_intervention_counts_match_reference(seed):
    log = _rankers_log(300, np.array([0.9, 0.6, 0.4, 0.3]), seed, n_q=5, n_docs=6, count=True)
    c, nc = intervention_counts(log)
    ref_c, ref_nc = _reference_intervention_counts(log)
    assert c.sum() > 0
    assert nc.sum() > 0
    np.testing.assert_allclose(c, ref_c, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(nc, ref_nc, rtol=1e-12, atol=1e-15)


def test_all_pairs_recovers_propensities_from_expected_counts():
    # noise-free counts of the model: c = m p_k r_kk', nc = m (1 - p_k r_kk'); the maximum
    # likelihood is then exactly the truth (every term is at its own optimum)
    from rankboost.clicks._propensity import _all_pairs

    rng = np.random.default_rng(0)
    K = 6
    p = np.array([0.95, 0.7, 0.5, 0.35, 0.2, 0.1])
    r = rng.uniform(0.1, 0.9, (K, K))
    r = (r + r.T) / 2
    m = rng.uniform(1, 5, (K, K))
    m = (m + m.T) / 2
    links = np.ones((K, K), dtype=bool)
    links[0, 3:] = links[3:, 0] = False  # position 1 meets 4-6 only through 2 and 3
    np.fill_diagonal(links, False)
    c = np.where(links, m * p[:, None] * r, 0.0)
    nc = np.where(links, m * (1 - p[:, None] * r), 0.0)
    np.testing.assert_allclose(_all_pairs(c, nc), p / p[0], rtol=1e-5)


def test_intervention_harvesting_recovers_known_propensities():
    # 20000 sessions, 30 queries x 12 documents, 3 random rankers, 6 positions: over six
    # seeds the relative error of p_k / p_1 had a standard deviation of about 0.037 at the
    # deepest positions; 0.12 is a bit over three of them
    true_p = 0.9 / np.arange(1, 7)
    est = estimate_propensity(_rankers_log(20000, true_p, 1), method="intervention_harvesting")
    assert est.method == "intervention_harvesting"
    assert est.values[0] == 1.0
    np.testing.assert_allclose(est.values, true_p / true_p[0], rtol=0.12)


def test_intervention_harvesting_bad_input():
    # one deterministic ranker: no document changes position, nothing to compare
    log = ClickLog.from_arrays(
        qid=[1, 1, 1, 1],
        docid=["a", "b", "a", "b"],
        position=[1, 2, 1, 2],
        click=[1, 0, 0, 1],
        session=[1, 1, 2, 2],
    )
    with pytest.raises(ValueError, match=r"position\(s\) \[2\].*several logged rankers"):
        estimate_propensity(log, method="intervention_harvesting")
    # position 3 shares documents only with itself: positions 1-2 are linked, 3 is not
    log = ClickLog.from_arrays(
        qid=[1] * 6,
        docid=["a", "b", "c", "b", "a", "c"],
        position=[1, 2, 3, 1, 2, 3],
        click=[1, 0, 0, 0, 1, 1],
        session=[1, 1, 1, 2, 2, 2],
    )
    with pytest.raises(ValueError, match=r"position\(s\) \[3\]"):
        estimate_propensity(log, method="intervention_harvesting")
    with pytest.raises(ValueError, match="'intervention_harvesting'; got 'harvest'"):
        estimate_propensity(log, method="harvest")


# ------------------------------------------------------------------------------------------
# simulator
# ------------------------------------------------------------------------------------------


def test_simulator_positions_are_ranks_of_the_production_scores():
    y = np.array([0, 1, 2, 0, 1, 2, 0, 1.0])
    qid = np.array([5, 5, 5, 5, 9, 9, 9, 9])
    scores = np.array([0.1, 0.9, 0.5, 0.3, 2.0, 1.0, 3.0, 0.0])
    sim = simulate_clicks(y, qid, scores, 500, n_shown=3, eta=1.0, random_state=3)
    log = sim.log
    for s in range(log.n_sessions):
        sl = slice(log.starts[s], log.starts[s + 1])
        rows = log.row[sl].tolist()
        assert rows in ([1, 2, 3], [6, 4, 5])  # descending production score, positions 1..3
        assert log.position[sl].tolist() == [1, 2, 3]
    assert np.allclose(sim.propensity.values, examination(3, 1.0) / examination(3, 1.0)[0])
    # both queries drawn (independent uniform draws: 500 sessions, P(one missing) ~ 2^-499)
    assert set(log.qid.tolist()) == {"5", "9"}


def test_simulator_click_rates_follow_the_model():
    y = np.zeros(10)  # every document of grade 0: click prob = epsilon when examined
    y[0] = 1  # ymax = 1
    qid = np.zeros(10)
    scores = -np.arange(10.0)
    sim = simulate_clicks(y, qid, scores, 20000, eta=2.0, epsilon=0.5, random_state=0)
    log = sim.log
    rate = np.bincount(log.position - 1, weights=log.click) / np.bincount(log.position - 1)
    expect = examination(10, 2.0) * np.where(np.arange(10) == 0, 1.0, 0.5)
    # 20000 Bernoulli draws per position: standard error <= sqrt(0.25 / 20000) = 0.0035;
    # 4 of them
    np.testing.assert_allclose(rate, expect, atol=0.014)
    cascade = simulate_clicks(y, qid, scores, 2000, model="cascade", epsilon=0.5).log
    per_session = np.add.reduceat(cascade.click, cascade.starts[:-1])
    assert per_session.max() == 1  # the cascade user stops at the first click


def test_debiased_training_runs_on_a_simulated_log(rng):
    from conftest import letor_like

    X, y, qid = letor_like(n_queries=20, seed=4)
    sim = simulate_clicks(y, qid, X[:, 0] * 0 + rng.random(len(y)), 3000, random_state=1)
    fb = click_feedback(sim.log, sim.propensity)
    model = rb.train(X, fb, n_rounds=20)
    assert model.n_rounds == 20
    est = rb.RankBoostRanker(n_estimators=20).fit(
        X, None, clicks=sim.log, propensity=sim.propensity
    )
    np.testing.assert_array_equal(est.predict(X), model.decision_function(X))
    assert est.propensity_ is sim.propensity
    with pytest.raises(ValueError, match="not matched to X's rows"):
        rb.RankBoostRanker().fit(X, None, clicks=ClickLog.from_arrays([1], ["a"], [1], [1]))
    with pytest.raises(TypeError, match="clicks= must be a rankboost.clicks.ClickLog"):
        rb.RankBoostRanker().fit(X, None, clicks="log.tsv")
    # the log's sums (what read_click_counts streams): the same model
    from rankboost.clicks import click_counts

    counts = click_counts(sim.log)
    by_counts = rb.RankBoostRanker(n_estimators=20).fit(
        X, None, clicks=counts, propensity=sim.propensity
    )
    np.testing.assert_array_equal(by_counts.predict(X), model.decision_function(X))
    with pytest.raises(ValueError, match="click counts were matched to"):
        rb.RankBoostRanker().fit(X[:5], None, clicks=counts)


# --------------------------------------------------------------------------- streaming reader
# issue 40: the numba reader must give what the csv reader gave (tests/reference_click_log.py,
# the code before it): the same arrays, rows, pairs, models and error messages.


def _random_log_text(rng, n_sessions, *, sep="\t", shuffle=False, extras=True):
    """A log with repeated queries and documents, sessions without clicks, counts."""
    lines = []
    for s in range(n_sessions):
        q = int(rng.integers(0, 6))
        m = int(rng.integers(1, 7))
        docs = rng.choice(12, size=m, replace=False)
        clicks = rng.random(m) < (0.0 if s % 5 == 0 else 0.4)  # every 5th: no click
        count = int(rng.integers(1, 4))
        for k in range(m):
            lines.append(
                [str(q), f"d{q}_{docs[k]}", str(k + 1), str(int(clicks[k])), f"s{s}", str(count)]
            )
    if shuffle:
        lines = [lines[i] for i in rng.permutation(len(lines))]
    body = [sep.join(r) for r in lines]
    if extras:  # blank lines, spaces around fields, a CRLF line
        body.insert(len(body) // 2, "")
        body.insert(len(body) // 3, "   ")
        body[1] = body[1].replace(sep, f" {sep} ") + "\r"
    return (
        sep.join(["qid", "docid", "position", "click", "session", "count"])
        + "\n"
        + "\n".join(body)
        + "\n"
    )


def _same_log(new, old):
    for name in ("qid", "docid", "position", "click", "count", "starts", "line"):
        a, b = getattr(new, name), getattr(old, name)
        assert a.dtype.kind == b.dtype.kind, name
        np.testing.assert_array_equal(a, b, err_msg=name)


@pytest.mark.parametrize(
    ("sep", "shuffle", "suffix"),
    [("\t", False, ".tsv"), ("\t", True, ".tsv.gz"), (",", True, ".csv"), (",", False, ".csv.bz2")],
)
def test_reader_matches_the_csv_reader(tmp_path, sep, shuffle, suffix):
    import bz2

    import reference_click_log as old

    rng = np.random.default_rng(len(suffix) + shuffle)
    text = _random_log_text(rng, 300, sep=sep, shuffle=shuffle)
    path = tmp_path / f"log{suffix}"
    data = text.encode()
    if suffix.endswith(".gz"):
        data = gzip.compress(data)
    elif suffix.endswith(".bz2"):
        data = bz2.compress(data)
    path.write_bytes(data)
    new_log, old_log = read_click_log(path), old.read_click_log(path)
    _same_log(new_log, old_log)
    # matched to feature rows in a shuffled order, then pairs, propensities and a model
    keys = sorted(set(zip(old_log.qid.tolist(), old_log.docid.tolist(), strict=True)))
    keys = [keys[i] for i in rng.permutation(len(keys))] + [("77", "extra")]
    fq, fd = [k[0] for k in keys], [k[1] for k in keys]
    new_m, old_m = new_log.match(fq, fd), old_log.match(fq, fd)
    np.testing.assert_array_equal(new_m.row, old_m.row)
    X = rng.normal(size=(len(keys), 4))
    prop = Propensity.from_table([1.0, 0.8, 0.5, 0.4, 0.3, 0.2])
    for kind in ("all_shown", "skip_above", "last_click_skip_above"):
        a, b = click_pairs(new_m, prop, pairs=kind), click_pairs(old_m, prop, pairs=kind)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])  # bit for bit: same summation order
    m_new = rb.train(X, click_feedback(new_m, prop), 8)
    m_old = rb.train(X, click_feedback(old_m, prop), 8)
    np.testing.assert_array_equal(m_new.decision_function(X), m_old.decision_function(X))
    em = estimate_propensity(new_log, method="em")  # documents by (qid, docid) codes
    em_old = estimate_propensity(
        ClickLog.from_arrays(
            old_log.qid,
            old_log.docid,
            old_log.position,
            old_log.click,
            session=np.repeat(np.arange(old_log.n_sessions), np.diff(old_log.starts)),
            count=old_log.count,
        ),
        method="em",
    )
    np.testing.assert_array_equal(em.values, em_old.values)


def test_reader_in_several_chunks_and_quoted_fields(tmp_path, monkeypatch):
    import rankboost.clicks._read as log_module
    import reference_click_log as old

    rng = np.random.default_rng(7)
    text = _random_log_text(rng, 200, shuffle=True)
    path = tmp_path / "log.tsv"
    path.write_text(text)
    monkeypatch.setattr(log_module, "_CHUNK", 97)  # lines cut across reads, ids seen again
    _same_log(read_click_log(path), old.read_click_log(path))
    quoted = tmp_path / "quoted.csv"  # quotes: the csv module reads it
    quoted.write_text('qid,docid,position,click\n"1","a, b",1,0\n1,"c",2,1\n')
    log = read_click_log(quoted)
    assert log.docid.tolist() == ["a, b", "c"]
    _same_log(log, old.read_click_log(quoted))


def test_reader_numbers_like_numpy(tmp_path):
    """Numbers the fast parser leaves to Python (exponents, +, long) read as before."""
    import reference_click_log as old

    path = tmp_path / "log.tsv"
    path.write_text(
        "qid\tdocid\tposition\tclick\tcount\n"
        "1\ta\t1.0\t0\t2.5e0\n1\tb\t+2\t1\t2.5\n"
        "2\ta\t1\t1\t0.30000000000000004441\n2\tb\t2\t0\t0.30000000000000004441\n"
    )
    new, ref = read_click_log(path), old.read_click_log(path)
    _same_log(new, ref)
    assert new.count.tolist() == [2.5, 2.5, 0.30000000000000004, 0.30000000000000004]


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("1\ta\t1\t0\n1\tb\t2\n", "line 3: 3 fields but the header has 4"),
        ("1\ta\t1\t0\n\n1\tb\tx\t1\n", "line 4: position must be a number; got 'x'"),
        ("1\ta\t1\t0\n1\tb\t2.5\t1\n", "position must be an integer; line 3 has '2.5'"),
        ("1\ta\t0\t0\n", "position must be >= 1"),
        ("1\ta\t1\t2\n", "click must be 0 or 1; line 2 has 2"),
        (
            "1\ta\t1\t0\n1\ta\t2\t1\n",
            "docid a is shown twice in one session of qid 1 (lines 2 and 3",
        ),
        ("1\ta\t1\t0\n1\tb\t1\t1\n", "repeat a position of their session, first lines 2 and 3"),
        (
            "1\ta\t1\t0\n1\tb\t3\t1\n",
            "a click at position 3 (line 3, qid 1) is on a position not shown",
        ),
        ("", "has no entries"),
    ],
)
def test_reader_errors_as_before(tmp_path, body, needle):
    import reference_click_log as old

    path = tmp_path / "log.tsv.gz"
    path.write_bytes(gzip.compress(("qid\tdocid\tposition\tclick\n" + body).encode()))
    with pytest.raises(ValueError, match="click log") as new_err:
        read_click_log(path)
    with pytest.raises(ValueError, match="click log") as old_err:
        old.read_click_log(path)
    assert needle in str(new_err.value)
    assert str(new_err.value) == str(old_err.value)


def test_reader_truncated_gzip_and_empty(tmp_path):
    path = tmp_path / "log.tsv.gz"
    text = _random_log_text(np.random.default_rng(1), 2000)
    data = gzip.compress(text.encode())
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="damaged or truncated gzip"):
        read_click_log(path)
    empty = tmp_path / "empty.tsv"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="is empty or has no header"):
        read_click_log(empty)
    header_only = tmp_path / "head.tsv"
    header_only.write_text("\ufeffqid\tdocid\tposition\tclick\n\n")
    with pytest.raises(ValueError, match="has no entries"):
        read_click_log(header_only)


def test_reader_and_estimator_progress(tmp_path, monkeypatch):
    import rankboost._compat as compat

    bars = []

    class Bar:
        def __init__(self, total, desc):
            self.total, self.desc, self.n, self.closed = total, desc, 0, False

        def update(self, n=1):
            self.n += n

        def close(self):
            self.closed = True

    def fake(total, disable, desc, **kwargs):
        bars.append(Bar(total, desc))
        return bars[-1]

    monkeypatch.setattr(compat, "progress_bar", fake)
    path = tmp_path / "log.tsv.gz"
    path.write_bytes(gzip.compress(_random_log_text(np.random.default_rng(2), 300).encode()))
    log = read_click_log(path, verbose=True)
    estimate_propensity(log, method="em", verbose=True, max_iter=5)
    read_bar, em_bar = bars
    assert read_bar.desc == "reading click log"
    assert read_bar.closed
    assert read_bar.n == read_bar.total == path.stat().st_size
    assert em_bar.closed
    assert 1 <= em_bar.n <= 5


@pytest.mark.parametrize("model", ["pbm", "cascade"])
def test_simulate_to_file_in_chunks_is_simulate_clicks(tmp_path, model):
    from rankboost.clicks import simulate_to_file

    rng = np.random.default_rng(4)
    y = rng.integers(0, 3, 120)
    qid = np.repeat(np.arange(12), 10)
    scores = rng.normal(size=120)
    docids = np.array([f"doc{i}" for i in range(120)])
    sim = simulate_clicks(y, qid, scores, 500, model=model, docids=docids, random_state=3)
    path = tmp_path / "log.tsv.gz"
    n, rows, clicks, truth = simulate_to_file(
        path, y, qid, scores, 500, model=model, docids=docids, random_state=3, chunk_sessions=64
    )
    assert (n, rows, clicks) == (sim.log.n_sessions, sim.log.n_entries, int(sim.log.n_clicks))
    np.testing.assert_array_equal(truth.values, sim.propensity.values)
    log = read_click_log(path)

    def sessions(lg):
        return sorted(
            tuple(
                zip(
                    lg.qid[a:b].tolist(),
                    lg.docid[a:b].tolist(),
                    lg.click[a:b].tolist(),
                    strict=True,
                )
            )
            for a, b in zip(lg.starts[:-1], lg.starts[1:], strict=True)
        )

    assert sessions(log) == sessions(sim.log)


def test_simulate_to_file_parts_of_one_log(tmp_path):
    """``first_session`` shifts the session numbers, ``header=False`` writes the rows only,
    ``compresslevel`` changes the bytes, not the text: a header member followed by two parts
    (each its own seed and range of sessions) is one log of both parts' sessions."""
    from rankboost.clicks import read_click_counts, simulate_to_file
    from rankboost.clicks._simulate import HEADER

    rng = np.random.default_rng(4)
    y = rng.integers(0, 3, 120)
    qid = np.repeat(np.arange(12), 10)
    scores = rng.normal(size=120)
    docids = np.array([f"doc{i}" for i in range(120)])
    a, b, c = (tmp_path / f"{n}.tsv.gz" for n in "abc")
    simulate_to_file(a, y, qid, scores, 300, docids=docids, random_state=3)
    simulate_to_file(
        b, y, qid, scores, 300, docids=docids, random_state=3, compresslevel=1, first_session=700
    )
    text_a, text_b = gzip.decompress(a.read_bytes()), gzip.decompress(b.read_bytes())
    assert a.read_bytes() != b.read_bytes()
    lines_a, lines_b = text_a.splitlines(), text_b.splitlines()
    assert lines_a[0] == lines_b[0] == HEADER.rstrip()
    for la, lb in zip(lines_a[1:], lines_b[1:], strict=True):  # the same rows, sessions + 700
        fa, fb = la.split(b"\t"), lb.split(b"\t")
        assert fa[:4] + fa[5:] == fb[:4] + fb[5:]
        assert int(fb[4]) == int(fa[4]) + 700
    simulate_to_file(c, y, qid, scores, 200, docids=docids, random_state=9, header=False)
    assert not gzip.decompress(c.read_bytes()).startswith(b"qid")
    parts = tmp_path / "parts.tsv.gz"
    simulate_to_file(
        c, y, qid, scores, 200, docids=docids, random_state=9, header=False, first_session=300
    )
    parts.write_bytes(a.read_bytes() + c.read_bytes())
    counts = read_click_counts(parts, qid, docids)
    assert counts.n_sessions == 500
    assert counts.n_entries == len(gzip.decompress(parts.read_bytes()).splitlines()) - 1
    with pytest.raises(ValueError, match=r"first_session must be >= 0 .* got -1"):
        simulate_to_file(c, y, qid, scores, 5, docids=docids, first_session=-1)
    with pytest.raises(ValueError, match=r"compresslevel must be a gzip level 0-9; got 10"):
        simulate_to_file(c, y, qid, scores, 5, docids=docids, compresslevel=10)


def test_reader_falls_back_to_the_csv_module_on_a_hash_collision(tmp_path, monkeypatch):
    """Two ids with one 64-bit hash (forced here) must not merge: the csv path reads it."""
    import rankboost.clicks._read as read_module
    import reference_click_log as old

    path = tmp_path / "log.tsv"
    path.write_text(_random_log_text(np.random.default_rng(3), 50))
    calls = []

    def collide(*args):
        calls.append(1)
        return -1  # "two different ids with one hash"

    monkeypatch.setattr(read_module._k, "intern_spans", collide)
    _same_log(read_click_log(path), old.read_click_log(path))
    assert calls


def test_intern_spans_compares_the_bytes_of_equal_hashes():
    """The kernel's own check: a known id with the hash of another is told apart (-1)."""
    from rankboost._kernels import clicks as kern

    buf = np.frombuffer(b"b", dtype=np.uint8)
    s, e = np.array([0]), np.array([1])
    h = np.empty(1, dtype=np.uint64)
    kern.hash_spans(buf, s, e, h)
    slots = np.full(8, -1, dtype=np.int64)
    keys = np.zeros(4, dtype=np.uint64)
    keys[0] = h[0]  # code 0 holds the hash of "b" but the bytes "a": a forced collision
    kern.rehash(keys, 1, slots)
    blob, blob_at = np.frombuffer(b"a", dtype=np.uint8), np.array([0, 1])
    codes, new_at = np.empty(1, dtype=np.int32), np.empty(1, dtype=np.int64)
    assert kern.intern_spans(buf, s, e, slots, keys, 1, blob, blob_at, codes, new_at) == -1
    blob = np.frombuffer(b"b", dtype=np.uint8)  # the same bytes: code 0, nothing new
    assert kern.intern_spans(buf, s, e, slots, keys, 1, blob, blob_at, codes, new_at) == 0
    assert codes.tolist() == [0]


# --------------------------------------------------------------------------- streamed counts
# issue 40: read_click_counts sums a log chunk by chunk; it must give the counts (so the
# pairs, propensities and models) click_counts gives for the whole log, bit for bit.

_COUNT_FIELDS = (
    "pair_lower",
    "pair_upper",
    "pair_position",
    "pair_count",
    "cell_row",
    "cell_position",
    "cell_impressions",
    "cell_clicks",
)


def _same_counts(a, b):
    for name in _COUNT_FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype, name
        np.testing.assert_array_equal(x, y, err_msg=name)
    for name in ("n_samples", "n_sessions", "n_entries", "n_clicks", "max_click_position"):
        assert getattr(a, name) == getattr(b, name), name


def _features_of(log, rng):
    """Feature ids (shuffled) for every (qid, docid) of the log, plus one the log lacks."""
    keys = sorted(set(zip(log.qid.tolist(), log.docid.tolist(), strict=True)))
    keys = [keys[i] for i in rng.permutation(len(keys))] + [("77", "extra")]
    return np.array([k[0] for k in keys]), np.array([k[1] for k in keys])


@pytest.mark.parametrize(("pairs", "suffix"), [("all_shown", ".tsv.gz"), ("skip_above", ".tsv")])
def test_read_click_counts_streams_what_the_whole_log_gives(tmp_path, monkeypatch, pairs, suffix):
    import rankboost.clicks._read as read_module
    import rankboost.clicks._stream as stream_module
    from rankboost.clicks import click_counts, read_click_counts

    rng = np.random.default_rng(11)
    text = _random_log_text(rng, 400)  # session by session, blank lines, spaces, CRLF
    path = tmp_path / f"log{suffix}"
    path.write_bytes(gzip.compress(text.encode()) if suffix.endswith(".gz") else text.encode())
    whole = read_click_log(path)
    fq, fd = _features_of(whole, rng)
    expected = click_counts(whole.match(fq, fd), pairs)

    def no_whole_read(*args, **kwargs):
        raise AssertionError("the streamed reader read the whole log")

    monkeypatch.setattr(read_module, "_CHUNK", 101)  # sessions cut across many chunks
    monkeypatch.setattr(stream_module, "read_click_log", no_whole_read)
    got = read_click_counts(path, fq, fd, pairs=pairs)
    _same_counts(got, expected)
    # the same propensities, pairs and model, bit for bit
    X = rng.normal(size=(fq.size, 3))
    for method in ("em", "regression_em"):
        a = estimate_propensity(got, X, method=method)
        b = estimate_propensity(expected, X, method=method)
        np.testing.assert_array_equal(a.values, b.values)
    prop = Propensity.from_table([1.0, 0.8, 0.5, 0.4, 0.3, 0.2])
    fa, fb = click_feedback(got, prop, pairs=pairs), click_feedback(expected, prop, pairs=pairs)
    np.testing.assert_array_equal(fa.pairs, fb.pairs)
    np.testing.assert_array_equal(fa.weights, fb.weights)
    np.testing.assert_array_equal(
        rb.train(X, fa, 6).decision_function(X), rb.train(X, fb, 6).decision_function(X)
    )
    with pytest.raises(ValueError, match="hold all_shown pairs|hold skip_above pairs"):
        click_pairs(got, pairs="skip_next")


def test_click_pairs_is_the_sum_over_sessions():
    """click_pairs' summed weights are the raw per-session pairs' weights, added."""
    rng = np.random.default_rng(5)
    n = 300
    docs = np.array([rng.permutation(8)[:4] for _ in range(n)])
    log = ClickLog.from_arrays(
        qid=np.zeros(n * 4, int),
        docid=None,
        position=np.tile([1, 2, 3, 4], n),
        click=(rng.random(n * 4) < 0.3).astype(int),
        session=np.repeat(np.arange(n), 4),
        count=np.repeat(rng.integers(1, 4, n), 4),
        row=docs.ravel(),
    )
    prop = Propensity.from_table([1.0, 0.6, 0.3, 0.1])
    pairs, w = click_pairs(log, prop, max_weight=5.0)
    raw, raw_w = click_pairs(log, prop, max_weight=5.0, aggregate=False)
    key = raw[:, 0] * 8 + raw[:, 1]
    total = np.bincount(key, weights=raw_w, minlength=64)
    np.testing.assert_allclose(w, total[pairs[:, 0] * 8 + pairs[:, 1]], rtol=1e-13)
    assert set(key.tolist()) == set((pairs[:, 0] * 8 + pairs[:, 1]).tolist())


def test_read_click_counts_reads_a_shuffled_log_whole(tmp_path, monkeypatch):
    """Sessions spread over the file: the whole read, the same counts as a sorted file."""
    import rankboost.clicks._stream as stream_module
    from rankboost.clicks import click_counts, read_click_counts

    rng = np.random.default_rng(12)
    text = _random_log_text(rng, 200, shuffle=True)
    path = tmp_path / "log.tsv"
    path.write_text(text)
    whole = read_click_log(path)
    fq, fd = _features_of(whole, rng)
    calls = []
    real = stream_module.read_click_log

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(stream_module, "read_click_log", counted)
    _same_counts(read_click_counts(path, fq, fd), click_counts(whole.match(fq, fd)))
    assert calls == [1]


@pytest.mark.parametrize(
    ("replace", "needle"),
    [
        (lambda f: f[:3], "line {n}: 3 fields but the header has 6"),
        (lambda f: [f[0], f[1], "x", *f[3:]], "line {n}: position must be a number; got 'x'"),
        (lambda f: [f[0], f[1], "0", *f[3:]], "position must be >= 1 (1 = top of the shown "
         "list); line {n} has position 0"),
        (lambda f: [*f[:3], "2", *f[4:]], "click must be 0 or 1; line {n} has 2"),
    ],
)  # fmt: skip
def test_read_click_counts_names_the_line_of_a_later_chunk(tmp_path, monkeypatch, replace, needle):
    import rankboost.clicks._read as read_module
    from rankboost.clicks import read_click_counts

    text = _random_log_text(np.random.default_rng(13), 300, extras=False)
    lines = text.split("\n")
    n = len(lines) - 40  # far past the first chunk
    lines[n - 1] = "\t".join(replace(lines[n - 1].split("\t")))
    path = tmp_path / "log.tsv.gz"
    path.write_bytes(gzip.compress("\n".join(lines).encode()))
    whole = read_click_log(_write(tmp_path, text, "good.tsv"))
    fq, fd = _features_of(whole, np.random.default_rng(0))
    monkeypatch.setattr(read_module, "_CHUNK", 4096)
    with pytest.raises(ValueError, match="click log") as err:
        read_click_counts(path, fq, fd)
    assert needle.format(n=n) in str(err.value)


def test_read_click_counts_bad_files(tmp_path):
    from rankboost.clicks import read_click_counts

    text = _random_log_text(np.random.default_rng(14), 2000)
    good = read_click_log(_write(tmp_path, text, "good.tsv"))
    fq, fd = _features_of(good, np.random.default_rng(0))
    data = gzip.compress(text.encode())
    truncated = tmp_path / "cut.tsv.gz"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="damaged or truncated gzip"):
        read_click_counts(truncated, fq, fd)
    with pytest.raises(ValueError, match="is empty or has no header"):
        read_click_counts(_write(tmp_path, "", "empty.tsv"), fq, fd)
    with pytest.raises(ValueError, match="has no entries"):
        read_click_counts(_write(tmp_path, "qid\tdocid\tposition\tclick\n\n", "h.tsv"), fq, fd)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_click_counts(tmp_path / "none.tsv", fq, fd)
    with pytest.raises(ValueError, match="pairs must be one of"):
        read_click_counts(_write(tmp_path, text, "x.tsv"), fq, fd, pairs="nope")
    # documents the features lack: how many rows, which, and the first line
    lines = text.split("\n")
    fields = lines[5].split("\t")
    lines[5] = "\t".join([fields[0], "NOPE", *fields[2:]])
    missing = _write(tmp_path, "\n".join(lines), "missing.tsv")
    with pytest.raises(ValueError, match="click log") as err:
        read_click_counts(missing, fq, fd)
    assert (
        f"1 rows (1 distinct documents) have no row in the feature rows: (qid "
        f"{fields[0].strip()}, docid NOPE) (first at line 6)" in str(err.value)
    )
    # a feature file with one (qid, docid) twice
    with pytest.raises(ValueError, match="twice"):
        read_click_counts(_write(tmp_path, text, "y.tsv"), [1, 1], ["a", "a"])


@pytest.mark.parametrize("blank_at", [None, 0.1, 0.9])
def test_reader_line_numbers_with_and_without_blank_lines(tmp_path, monkeypatch, blank_at):
    """Without blank lines the reader stores no line numbers (row i is line i + 2); a blank
    line in a later chunk makes it store them from there: the lines are the csv reader's."""
    import rankboost.clicks._read as read_module
    import reference_click_log as old

    text = _random_log_text(np.random.default_rng(8), 150, shuffle=True, extras=False)
    lines = text.split("\n")
    if blank_at is not None:
        lines.insert(int(blank_at * len(lines)), "")
    path = tmp_path / "log.tsv"
    path.write_text("\n".join(lines))
    monkeypatch.setattr(read_module, "_CHUNK", 97)
    new, ref = read_click_log(path), old.read_click_log(path)
    _same_log(new, ref)
    assert (new.line.min(), new.line.max()) == (2, len(lines) - 1)  # the text ends in "\n"


def test_reader_gzip_members_padding_and_garbage(tmp_path):
    """The threaded gunzip reads as gzip does: members one after the other, zero padding;
    bytes that are not gzip after a member are damaged data, a file cut short truncated."""
    import reference_click_log as old

    text = _random_log_text(np.random.default_rng(9), 300, extras=False).encode()
    cut = text.index(b"\n", len(text) // 2) + 1
    path = tmp_path / "log.tsv.gz"
    path.write_bytes(gzip.compress(text[:cut]) + gzip.compress(text[cut:]) + b"\0" * 16)
    _same_log(read_click_log(path), old.read_click_log(path))
    path.write_bytes(gzip.compress(text) + b"not gzip")
    with pytest.raises(ValueError, match="damaged or truncated gzip"):
        read_click_log(path)
    path.write_bytes(gzip.compress(text)[:-5])  # the trailer cut
    with pytest.raises(ValueError, match="damaged or truncated gzip"):
        read_click_log(path)
    path.write_bytes(b"")
    with pytest.raises(ValueError, match="is empty or has no header"):
        read_click_log(path)


def test_read_click_counts_notices_a_session_that_comes_back(tmp_path, monkeypatch):
    """A session shown again later in the file (a whole valid run) is one session to the
    whole-log reader: the streamed one notices it and reads the log whole (its error here)."""
    import rankboost.clicks._read as read_module
    from rankboost.clicks import read_click_counts

    text = _random_log_text(np.random.default_rng(15), 200, extras=False)
    lines = text.rstrip("\n").split("\n")
    first = [ln for ln in lines[1:] if ln.split("\t")[4] == "s3"]  # session s3, all its rows
    path = _write(tmp_path, "\n".join([*lines, *first]) + "\n", "again.tsv")
    whole = read_click_log(_write(tmp_path, text, "good.tsv"))
    fq, fd = _features_of(whole, np.random.default_rng(0))
    monkeypatch.setattr(read_module, "_CHUNK", 512)
    with pytest.raises(ValueError, match="click log") as err:
        read_click_counts(path, fq, fd)
    with pytest.raises(ValueError, match="click log") as err_whole:
        read_click_log(path)
    assert "repeat a position of their session" in str(err.value)
    assert str(err.value) == str(err_whole.value)


def test_read_click_counts_without_a_session_column(tmp_path, monkeypatch):
    """No session column: each qid's rows are one list, as for the whole log (CSV here)."""
    import rankboost.clicks._read as read_module
    import rankboost.clicks._stream as stream_module
    from rankboost.clicks import click_counts, read_click_counts

    rng = np.random.default_rng(16)
    rows = ["qid,docid,position,click"]
    for q in range(40):
        m = int(rng.integers(1, 9))
        for k in range(m):
            rows.append(f"q{q},d{q}_{k},{k + 1},{int(rng.random() < 0.4)}")
    path = _write(tmp_path, "\n".join(rows) + "\n", "noses.csv")
    whole = read_click_log(path)
    fq, fd = _features_of(whole, rng)

    def no_whole_read(*args, **kwargs):
        raise AssertionError("the streamed reader read the whole log")

    monkeypatch.setattr(read_module, "_CHUNK", 64)
    monkeypatch.setattr(stream_module, "read_click_log", no_whole_read)
    got = read_click_counts(path, fq, fd, pairs="all_unclicked")
    _same_counts(got, click_counts(whole.match(fq, fd), "all_unclicked"))
    assert got.n_sessions == 40


def test_regression_em_with_missing_features():
    """NaN features count as the column mean: regression-EM still recovers the propensities.

    Relevance is a logistic function of the first feature; the documents are reshuffled each
    session (as in test_em_recovers_known_propensities, whose tolerance this reuses), and a
    fifth of the feature values are missing (one column entirely).
    """
    rng = np.random.default_rng(3)
    n_sessions, n_docs, true_p = 20000, 20, 0.9 / np.arange(1, 7)
    K = true_p.size
    X = rng.normal(size=(n_docs, 3))
    gamma = 1.0 / (1.0 + np.exp(-1.5 * X[:, 0]))
    docs = np.argsort(rng.random((n_sessions, n_docs)), axis=1)[:, :K]
    clicks = rng.random((n_sessions, K)) < true_p * gamma[docs]
    log = ClickLog.from_arrays(
        qid=np.zeros(n_sessions * K, int),
        docid=docs.ravel(),
        position=np.tile(np.arange(1, K + 1), n_sessions),
        click=clicks.ravel().astype(int),
        session=np.repeat(np.arange(n_sessions), K),
    ).match(np.zeros(n_docs, int), np.arange(n_docs))
    Xm = X.copy()
    Xm[rng.random(X.shape) < 0.2] = np.nan
    Xm[:, 2] = np.nan
    est = estimate_propensity(log, Xm, method="regression_em")
    assert est.method == "regression_em"
    assert np.isfinite(est.values).all()
    np.testing.assert_allclose(est.values, true_p / true_p[0], rtol=0.075)
    # the complete features take the plain standardisation (mean and std) and agree
    full = estimate_propensity(log, X, method="regression_em")
    np.testing.assert_allclose(full.values, true_p / true_p[0], rtol=0.075)
