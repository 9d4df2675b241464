"""Issue 51, item 4: the fusion that served a click log, declared and checked (``logged_by``)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from rankboost.clicks import ClickLog, write_click_log
from rankboost.fusion import LinearFusion
from rankboost.fusion.clicks import click_targets, fit_clicks, simple_fusion, simulate_served
from rankboost.fusion.features import FusionWarning
from test_fusion_clicks import _cli, files, hybrid  # noqa: F401  (fixtures)

NAMES = ["good", "noise"]


def _served(spec, runs, qrels, n=600, seed=0, **options):
    return simulate_served(simple_fusion(spec, NAMES), runs, qrels, n, random_state=seed, **options)


def _concat(a, b):
    """Two logs as one (an A/B log): b's sessions after a's."""
    sa = np.repeat(np.arange(a.n_sessions), np.diff(a.starts))
    sb = a.n_sessions + np.repeat(np.arange(b.n_sessions), np.diff(b.starts))
    return ClickLog.from_arrays(
        qid=np.r_[a.qid, b.qid],
        docid=np.r_[a.docid, b.docid],
        position=np.r_[a.position, b.position],
        click=np.r_[a.click, b.click],
        session=np.r_[sa, sb],
    )


# ------------------------------------------------------------------ agreeing logs ---------
@pytest.mark.parametrize("spec", ["rrf", "sum", "wsum:0.7,0.3"])
def test_issue51_a_log_checks_against_the_fusion_that_served_it(hybrid, spec):  # noqa: F811
    runs, qrels = hybrid
    log = _served(spec, runs, qrels).log
    t = click_targets(runs, log, logged_by=spec)
    assert t.served.labels == [spec]
    np.testing.assert_array_equal(t.served.session, np.zeros(log.n_sessions))
    assert t.served.n_sessions.tolist() == [600.0]
    # the same pairs, weights and propensity as without the declaration
    plain = click_targets(runs, log)
    np.testing.assert_array_equal(t.pairs, plain.pairs)
    np.testing.assert_array_equal(t.weights, plain.weights)
    # a fitted fusion object and a saved model file declare the same fusion
    model = simple_fusion(spec, NAMES)
    assert click_targets(runs, log, logged_by=model).served.labels == ["LinearFusion"]


def test_issue51_logged_by_a_model_file(hybrid, tmp_path):  # noqa: F811
    runs, qrels = hybrid
    path = tmp_path / "served.json"
    simple_fusion("wsum:0.2,0.8", NAMES).save(path)
    log = _served("wsum:0.2,0.8", runs, qrels).log
    assert click_targets(runs, log, logged_by=path).served.labels == [str(path)]
    with pytest.raises(ValueError, match=r"is not the lists .*served\.json serves"):
        click_targets(runs, _served("rrf", runs, qrels).log, logged_by=str(path))


def test_issue51_tied_fused_scores_may_be_served_in_either_order(hybrid):  # noqa: F811
    """RRF of two runs ties documents (ranks 1 + 3 and 3 + 1): a log that broke the tie the
    other way is still RRF's."""
    runs, qrels = hybrid
    log = _served("rrf", runs, qrels).log
    fused = simple_fusion("rrf", NAMES).fuse(runs)
    key = {(q, d): s for q, d, s in zip(fused.qid, fused.docid, fused.score, strict=True)}
    score = np.array([key[(q, d)] for q, d in zip(log.qid, log.docid, strict=True)])
    tied = np.flatnonzero(
        (score[:-1] == score[1:]) & (log.qid[:-1] == log.qid[1:]) & (np.diff(log.position) == 1)
    )
    assert tied.size  # the fixture has ties on RRF's top 10
    i = int(tied[0])
    pos = log.position.copy()
    pos[i], pos[i + 1] = pos[i + 1], pos[i]  # that session shows the two the other way
    swapped = ClickLog.from_arrays(
        qid=log.qid,
        docid=log.docid,
        position=pos,
        click=log.click,
        session=np.repeat(np.arange(log.n_sessions), np.diff(log.starts)),
    )
    assert click_targets(runs, swapped, logged_by="rrf").served.n_sessions.sum() == 600


def test_issue51_an_ab_log_of_two_fusions_attributes_sessions_and_harvests(hybrid):  # noqa: F811
    runs, qrels = hybrid
    a = _served("rrf", runs, qrels, n=2000, seed=1).log
    b = _served("wsum:0.9,0.1", runs, qrels, n=1000, seed=2).log
    both = _concat(a, b)
    t = click_targets(runs, both, logged_by=["rrf", "wsum:0.9,0.1"])
    assert t.served.labels == ["rrf", "wsum:0.9,0.1"]
    # a session both lists agree on counts for the first; the rest are b's
    assert t.served.n_sessions.sum() == 3000
    assert t.served.n_sessions[0] >= 2000
    assert t.served.n_sessions[1] > 0
    assert t.served.session.shape == (3000,)
    assert t.propensity.method == "intervention_harvesting"
    assert t.propensity.values[0] == 1.0
    assert np.all(np.diff(t.propensity.values[:4]) < 0)
    lin = fit_clicks(LinearFusion(), runs, both, logged_by=["rrf", "wsum:0.9,0.1"])
    assert lin.weights_[0] > lin.weights_[1]


def test_issue51_two_declared_fusions_that_never_move_a_document_warn(hybrid):  # noqa: F811
    """Declared twice but only one fusion's lists in the log: nothing to harvest."""
    runs, qrels = hybrid
    log = _served("sum", runs, qrels).log
    want = r"2 logging fusions are declared \(sessions served: sum 600, rrf 0\), but their lists"
    with pytest.warns(FusionWarning, match=want + " give no intervention to harvest"):
        t = click_targets(runs, log, logged_by=["sum", "rrf"])
    assert t.propensity.method == "regression_em"
    # without "auto" nothing is estimated, nothing warned
    with warnings.catch_warnings():
        warnings.simplefilter("error", FusionWarning)
        t = click_targets(runs, log, logged_by=["sum", "rrf"], propensity="none")
    assert t.propensity.method == "none"


# ------------------------------------------------------------------ bad input -------------
def test_issue51_a_log_of_another_fusion_counts_what_disagrees_and_says_what_to_do(hybrid):  # noqa: F811
    runs, qrels = hybrid
    log = _served("wsum:0.9,0.1", runs, qrels).log
    fused = simple_fusion("rrf", NAMES).fuse(runs)
    rank = {(q, d): r for q, d, r in zip(fused.qid, fused.docid, fused.rank, strict=True)}
    with pytest.raises(ValueError, match="is not the lists rrf serves") as err:
        fit_clicks(LinearFusion(), runs, log, logged_by="rrf")
    msg = str(err.value)
    assert "\n" not in msg
    m = re.search(
        r"^LinearFusion fit_clicks: simulated click log is not the lists rrf serves on these "
        r"runs: (\d+) of 600 sessions \((\d+) of 30 queries\) show another list, ([\d,]+) of "
        r"6,000 impressions at a position rrf does not serve them at \(e\.g\. query (\S+), "
        r"document (\S+): logged at (\d+), served at (\d+)(?:-\d+ \(tied\))? by rrf\)\. "
        r"Declare the fusion that served the log, with the runs it fused, as deep as it fused "
        r"them; for several fusions served A/B, each \(logged_by=\['rrf', 'sum'\]\); for lists "
        r"interleaved within a session, none\.$",
        msg,
    )
    assert m, msg
    # the counts and the example are the facts of the log
    pos = log.position
    served = np.array([rank[(q, d)] for q, d in zip(log.qid, log.docid, strict=True)])
    assert int(m.group(3).replace(",", "")) <= int((served != pos).sum())
    assert int(m.group(3).replace(",", "")) > 0
    assert rank[(m.group(4), m.group(5))] != int(m.group(6))
    assert int(m.group(1)) <= 600


def test_issue51_runs_other_than_the_served_ones_disagree(hybrid):  # noqa: F811
    """The right fusion, but one of its runs is not the one it fused (here: reversed)."""
    from rankboost.fusion import Run

    runs, qrels = hybrid
    log = _served("sum", runs, qrels).log
    noise = runs[1]
    flipped = Run(noise.qid, noise.docid, noise.rank, -noise.score, name="noise")
    with pytest.raises(ValueError, match=r"is not the lists sum serves on these runs"):
        click_targets([runs[0], flipped], log, logged_by="sum")


def test_issue51_an_interleaved_session_matches_no_single_fusion(hybrid):  # noqa: F811
    """One session that shows rrf's top k then wsum's ranks k+1 to 10: each position is one a
    declared fusion serves, but the session is neither's list."""
    runs, _ = hybrid
    tops = []
    for spec in ("rrf", "wsum:0.9,0.1"):
        f = simple_fusion(spec, NAMES).fuse(runs, depth=10)
        tops.append({q: f.docid[f.qid == q][np.argsort(f.rank[f.qid == q])] for q in f.queries})
    a, b = tops
    q, k = next(
        (q, k)
        for q in a
        for k in range(9, 0, -1)
        if not set(a[q][:k]) & set(b[q][k:]) and set(a[q][:k]) != set(b[q][:k])
    )
    docs = np.r_[a[q][:k], b[q][k:]]
    mixed = ClickLog.from_arrays(
        qid=[q] * 10, docid=docs, position=np.arange(1, 11), click=[1] + [0] * 9
    )
    with pytest.raises(ValueError, match=r"1 of 1 sessions \(1 of 1 queries\) show another list"):
        click_targets(runs, mixed, logged_by=["rrf", "wsum:0.9,0.1"], propensity="none")
    for spec in ("rrf", "wsum:0.9,0.1"):
        with pytest.raises(ValueError, match=f"is not the lists {re.escape(spec)} serves"):
            click_targets(runs, mixed, logged_by=spec, propensity="none")


def test_issue51_logged_by_wrong_types_and_specs(hybrid):  # noqa: F811
    runs, qrels = hybrid
    log = _served("sum", runs, qrels, n=300).log
    with pytest.raises(TypeError, match=r"logged_by must be 'rrf', 'sum', 'wsum:W1,W2,...', a "):
        click_targets(runs, log, logged_by=[3])
    with pytest.raises(ValueError, match=r"logged_by is empty"):
        click_targets(runs, log, logged_by=[])
    with pytest.raises(ValueError, match=r"wsum needs one weight per run \(2: good, noise\)"):
        click_targets(runs, log, logged_by="wsum:1")
    with pytest.raises(FileNotFoundError):
        click_targets(runs, log, logged_by="no_such_model.json")
    other = LinearFusion.from_weights(["a", "b"], [1.0, 1.0])
    with pytest.raises(ValueError, match=r"the declared logging fusion LinearFusion cannot fuse "
                       r"these runs"):  # fmt: skip
        click_targets(runs, log, logged_by=other)


# ------------------------------------------------------------------ the command line ------
def test_issue51_fuse_train_logged_by(files, hybrid, capsys, tmp_path):  # noqa: F811
    from rankboost.fusion import read_runs, write_qrels

    _, runs_paths = files
    _, qrels = hybrid
    named = read_runs(runs_paths)  # the runs as the command reads them, named by their files
    names = list(named)
    write_qrels(tmp_path / "qrels.txt", qrels)
    a = simulate_served(simple_fusion("rrf", names), named, qrels, 400, random_state=5).log
    b = simulate_served(simple_fusion("wsum:0.9,0.1", names), named, qrels, 400,
                        random_state=6).log  # fmt: skip
    write_click_log(tmp_path / "rrf.tsv", a)
    write_click_log(tmp_path / "ab.tsv", _concat(a, b))
    base = ["fuse", "train", "--family", "linear", "--runs", *runs_paths, "-o", tmp_path / "m.json"]
    status, err = _cli(capsys, [*base, "--clicks", tmp_path / "rrf.tsv", "--logged-by", "rrf"])
    assert status == 0, err
    assert "--logged-by: every session of" in err
    assert "(400 by rrf)" in err
    status, err = _cli(capsys, [*base, "--clicks", tmp_path / "ab.tsv", "--logged-by", "rrf",
                                "--logged-by", "wsum:0.9,0.1"])  # fmt: skip
    assert status == 0, err
    assert "propensity intervention_harvesting" in err
    # bad input: one line each, no traceback
    for extra, status_want, match in (
        (["--clicks", tmp_path / "ab.tsv", "--logged-by", "rrf"], 1,
         r"is not the lists rrf serves on these runs: \d+ of 800 sessions .* each "
         r"\(--logged-by rrf --logged-by sum\); for lists interleaved within a session, none\."),
        (["--clicks", tmp_path / "rrf.tsv", "--logged-by", tmp_path / "nope.json"], 1,
         r"nope\.json"),
        (["--qrels", tmp_path / "qrels.txt", "--logged-by", "rrf"], 2,
         r"--logged-by declares the fusion that served --clicks LOG"),
    ):  # fmt: skip
        got, err = _cli(capsys, [*base, *extra])
        lines = [ln for ln in err.splitlines() if ln.startswith("rankboost: error:")]
        assert got == status_want, err
        assert len(lines) == 1, err
        assert "Traceback" not in err
        assert re.search(match, lines[0]), lines[0]
