"""Readers and writers of rankboost.fusion.io: TREC runs, TREC qrels, LETOR 4.0 aggregation.

Real data (``../shared/data/letor4/MQ2008-agg``, see its README for provenance) is used when
present; those tests skip otherwise.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from rankboost.fusion import (
    Qrels,
    Run,
    format_run,
    fusion_features,
    read_letor_agg,
    read_letor_agg_folds,
    read_qrels,
    read_run,
    read_runs,
    write_letor_agg,
    write_qrels,
    write_run,
)

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
AGG = SHARED / "letor4" / "MQ2008-agg"
needs_agg = pytest.mark.skipif(not AGG.is_dir(), reason="../shared data absent")


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _run() -> Run:
    return Run(
        ["10", "10", "10", "7", "7"],
        ["d1", "d2", "d3", "d1", "d9"],
        [1, 2, 2, 1, 5],
        [3.25, 0.1, 0.1, 1e-17, -4.0],
        name="sys",
    )


# ------------------------------------------------------------------ round trips ----------
@pytest.mark.parametrize("suffix", [".run", ".run.gz"])
def test_run_round_trip(tmp_path: Path, suffix: str) -> None:
    run = _run()
    path = tmp_path / f"a{suffix}"
    write_run(path, run)
    back = read_run(path, name="sys")
    assert back == run
    assert back.name == "sys"
    if suffix.endswith(".gz"):
        with open(path, "rb") as fh:
            assert fh.read(2) == b"\x1f\x8b"
        # reproducible bytes (mtime = 0)
        first = path.read_bytes()
        write_run(path, run)
        assert path.read_bytes() == first
    lines = (gzip.open(path, "rt") if suffix.endswith(".gz") else open(path)).read().splitlines()
    assert lines[0] == "10 Q0 d1 1 3.25 sys"


def test_run_reader_gzip_by_content_not_name(tmp_path: Path) -> None:
    path = tmp_path / "plain_name.txt"
    path.write_bytes(gzip.compress(b"1 Q0 d 1 0.5 t\n"))
    assert read_run(path).docid.tolist() == ["d"]


@pytest.mark.parametrize("suffix", [".txt", ".txt.gz"])
def test_qrels_round_trip(tmp_path: Path, suffix: str) -> None:
    qrels = Qrels(["1", "1", "2"], ["a", "b", "a"], [2, 0, -2])
    path = tmp_path / f"q{suffix}"
    write_qrels(path, qrels)
    assert read_qrels(path) == qrels


def test_read_run_depth_and_comments(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.run", "# comment\n\n1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 c 3 1 t\n")
    assert read_run(path, depth=2).docid.tolist() == ["a", "b"]


def test_write_run_tag_and_depth(tmp_path: Path) -> None:
    path = tmp_path / "a.run"
    write_run(path, _run(), tag="my tag", depth=1)
    assert path.read_text().splitlines() == ["10 Q0 d1 1 3.25 my_tag", "7 Q0 d1 1 1e-17 my_tag"]


def test_run_from_dict_orders_by_score_then_docid() -> None:
    run = Run.from_dict({"q": {"b": 1.0, "a": 1.0, "c": 2.0}})
    assert run.docid.tolist() == ["c", "a", "b"]
    assert run.rank.tolist() == [1, 2, 3]
    assert Run.from_dict(run.to_dict()) == run


def test_letor_agg_round_trip(tmp_path: Path) -> None:
    text = (
        "2 qid:5 1:3 2:NULL 3:1 #docid = x inc = 1 prob = 0.5\n"
        "0 qid:5 1:NULL 2:NULL 3:NULL #docid = y\n"
        "1 qid:4 1:1 2:2 3:NULL #docid = z\n"
    )
    src = _write(tmp_path / "agg.txt", text)
    data = read_letor_agg(src)
    assert data.n_rankers == 3
    assert data.qid.tolist() == ["5", "5", "4"]
    np.testing.assert_array_equal(data.ranks[0], [3, np.nan, 1])
    out = tmp_path / "agg2.txt.gz"
    write_letor_agg(out, data.to_runs(), data.to_qrels())
    back = read_letor_agg(out)
    np.testing.assert_array_equal(back.ranks, data.ranks)
    np.testing.assert_array_equal(back.labels, data.labels)
    np.testing.assert_array_equal(back.qid, data.qid)
    np.testing.assert_array_equal(back.docid, data.docid)


@needs_agg
def test_letor_agg_reader_agrees_with_trec_runs(tmp_path: Path) -> None:
    """LETOR-agg rows vs the same data written as TREC runs + qrels and read back.

    Data: LETOR 4.0 MQ2008-agg Fold1/vali (../shared/data/README.md, section 2).
    """
    data = read_letor_agg(AGG / "Fold1" / "vali.txt.gz")
    paths = []
    for name, run in data.to_runs().items():
        paths.append(tmp_path / f"{name}.run.gz")
        write_run(paths[-1], run)
    write_qrels(tmp_path / "qrels.txt", data.to_qrels())
    runs = read_runs(paths)
    qrels = read_qrels(tmp_path / "qrels.txt")
    assert qrels == data.to_qrels()
    feats = fusion_features(runs)
    # every row some ranker returned, with the same ranks
    returned = ~np.isnan(data.ranks).all(axis=1)
    key = {(q, d): i for i, (q, d) in enumerate(zip(data.qid, data.docid, strict=True))}
    rows = np.array([key[(q, d)] for q, d in zip(feats.qid, feats.docid, strict=True)])
    assert sorted(rows.tolist()) == np.flatnonzero(returned).tolist()
    np.testing.assert_array_equal(-feats.X, data.ranks[rows])
    # and back to the LETOR format, all-NULL judged documents included
    write_letor_agg(tmp_path / "agg.txt", runs, qrels)
    back = read_letor_agg(tmp_path / "agg.txt")
    np.testing.assert_array_equal(back.ranks, data.ranks)
    np.testing.assert_array_equal(back.labels, data.labels)


@needs_agg
def test_read_letor_agg_folds_real() -> None:
    folds = read_letor_agg_folds(AGG / "Fold1")
    assert {k: v.n_rankers for k, v in folds.items()} == {"train": 25, "vali": 25, "test": 25}
    assert folds["test"].ranks.shape[0] == 3073 or folds["test"].ranks.shape[0] > 0


# ------------------------------------------------------------------ bad input ------------
@pytest.mark.parametrize(
    ("text", "match"),
    [
        (
            "1 Q0 a 1 3 t\n1 Q0 a 2 2 t\n",
            r"a\.run:2: document 'a' appears twice in query '1' "
            r"\(first at line 1\)",
        ),
        ("1 Q0 a 0 3 t\n", r"a\.run:1: rank must be a positive integer .*got '0'"),
        ("1 Q0 a -2 3 t\n", r"a\.run:1: rank must be a positive integer .*got '-2'"),
        ("1 Q0 a 1.5 3 t\n", r"a\.run:1: rank must be a positive integer .*got '1.5'"),
        ("1 Q0 a x 3 t\n", r"a\.run:1: rank must be a positive integer"),
        ("1 Q0 a 1 nan t\n", r"a\.run:1: score must be a finite number"),
        ("1 Q0 a 1 3\n", r"a\.run:1: a TREC run line has 6 columns"),
        ("", r"a\.run: empty run"),
        ("# only a comment\n\n", r"a\.run: empty run"),
    ],
)
def test_read_run_bad_input(tmp_path: Path, text: str, match: str) -> None:
    path = _write(tmp_path / "a.run", text)
    with pytest.raises(ValueError, match=match):
        read_run(path)


def test_read_run_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"nope\.run: no such file"):
        read_run(tmp_path / "nope.run")


def test_read_runs_same_file_twice(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.run", "1 Q0 a 1 3 t\n")
    with pytest.raises(ValueError, match="is given twice"):
        read_runs([path, path])
    with pytest.raises(ValueError, match="at least one run file"):
        read_runs([])


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("1 0 a 1\n1 0 a 0\n", r"q\.txt:2: document 'a' is judged twice for query '1'"),
        ("1 0 a x\n", r"q\.txt:1: rel must be an integer grade; got 'x'"),
        ("1 0 a\n", r"q\.txt:1: a TREC qrels line has 4 columns"),
        ("", r"q\.txt: empty qrels"),
    ],
)
def test_read_qrels_bad_input(tmp_path: Path, text: str, match: str) -> None:
    path = _write(tmp_path / "q.txt", text)
    with pytest.raises(ValueError, match=match):
        read_qrels(path)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (
            "1 qid:1 1:1 2:2 #docid = a\n0 qid:1 1:1 #docid = b\n",
            r"agg\.txt:2: 1 rankers on this line but 2 expected",
        ),
        ("1 qid:1 1:1 3:2 #docid = a\n", r"agg\.txt:1: slot 2 should read '2:rank'"),
        ("1 qid:1 1:0 2:2 #docid = a\n", r"agg\.txt:1: rank of ranker 1 must be a positive"),
        ("1 qid:1 1:1 2:2\n", r"agg\.txt:1: missing '#docid = \.\.\.' comment"),
        (
            "1 qid:1 1:1 #docid = a\n0 qid:1 1:2 #docid = a\n",
            r"agg\.txt:2: document 'a' appears twice in query '1' \(first at line 1\)",
        ),
        ("x qid:1 1:1 #docid = a\n", r"agg\.txt:1: label must be an integer"),
        ("1 1:1 #docid = a\n", r"agg\.txt:1: a LETOR aggregation line is"),
        ("\n", r"agg\.txt: empty LETOR aggregation file"),
    ],
)
def test_read_letor_agg_bad_input(tmp_path: Path, text: str, match: str) -> None:
    path = _write(tmp_path / "agg.txt", text)
    with pytest.raises(ValueError, match=match):
        read_letor_agg(path)


def test_read_letor_agg_folds_mismatched(tmp_path: Path) -> None:
    fold = tmp_path / "Fold1"
    fold.mkdir()
    _write(fold / "train.txt", "1 qid:1 1:1 2:2 #docid = a\n")
    _write(fold / "vali.txt", "1 qid:2 1:1 #docid = a\n")
    _write(fold / "test.txt", "1 qid:3 1:1 2:2 #docid = a\n")
    with pytest.raises(
        ValueError,
        match=r"mismatched fold files: .*train\.txt has 2 rankers but "
        r".*vali\.txt has 1",
    ):
        read_letor_agg_folds(fold)
    _write(fold / "vali.txt", "1 qid:1 1:1 2:3 #docid = b\n")
    with pytest.raises(ValueError, match=r"share 1 queries \(e\.g\. qid 1\)"):
        read_letor_agg_folds(fold)
    (fold / "test.txt").unlink()
    with pytest.raises(FileNotFoundError, match=r"test\.txt\(\.gz\): no such file"):
        read_letor_agg_folds(fold)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"qid": ["1", "1"], "docid": ["a", "a"], "rank": [1, 2]},
            "document 'a' appears twice in query '1'",
        ),
        ({"qid": ["1"], "docid": ["a"], "rank": [0]}, "rank must be a positive integer"),
        ({"qid": ["1"], "docid": ["a"], "rank": [1.5]}, "rank must be a 1-D array of positive"),
        ({"qid": [], "docid": [], "rank": []}, "is empty"),
        ({"qid": ["1"], "docid": ["a", "b"], "rank": [1]}, "same length"),
        ({"qid": ["1"], "docid": ["a"], "rank": [1], "score": [np.nan]}, "score must be finite"),
    ],
)
def test_run_constructor_bad_input(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Run(**kwargs, name="x")


def test_qrels_constructor_bad_input() -> None:
    with pytest.raises(ValueError, match="judged twice"):
        Qrels(["1", "1"], ["a", "a"], [1, 0])
    with pytest.raises(ValueError, match="integer grades"):
        Qrels(["1"], ["a"], [0.5])
    with pytest.raises(ValueError, match="Qrels is empty"):
        Qrels([], [], [])


# ------------------------------------------- ids a TREC file cannot hold (issue 26) ----------
#: (qid, docid, the reason the writers give); each would not read back as written
UNWRITABLE_IDS = [
    ("1", "d 1", "has whitespace"),
    ("1", "d\t1", "has whitespace"),
    ("1", "d\n1", "has whitespace"),
    ("1", "d\r1", "has whitespace"),
    ("1", "d\u00a01", "has whitespace"),  # str.split() splits there: the readers would too
    ("1", "d\u20281", "has whitespace"),
    ("1", "d\x1c1", "has whitespace"),
    ("1", "", "is empty"),
    ("", "d", "is empty"),
    ("a b", "d", "has whitespace"),
    ("#1", "d", "starts with '#'"),
    ("1", "d\udcff", "is not encodable as UTF-8"),
]
#: a LETOR aggregation line's comment starts at its first '#': a qid may hold none
UNWRITABLE_LETOR_IDS = [("q#2", "d", "has a '#'")]


def _writers():
    return {
        "write_run": lambda path, q, d: write_run(path, Run(q, d, [1] * len(q), name="sys")),
        "write_qrels": lambda path, q, d: write_qrels(path, Qrels(q, d, [1] * len(q))),
        "write_letor_agg": lambda path, q, d: write_letor_agg(
            path, [Run(q, d, [1] * len(q), name="sys")], Qrels(q, d, [1] * len(q))
        ),
    }


@pytest.mark.parametrize(
    ("writer", "qid", "docid", "why"),
    [(w, *case) for w in ("write_run", "write_qrels", "write_letor_agg") for case in UNWRITABLE_IDS]
    + [("write_letor_agg", *case) for case in UNWRITABLE_LETOR_IDS],
)
def test_issue26_writers_refuse_ids_a_file_cannot_hold(tmp_path, writer, qid, docid, why):
    """Refused before anything is written, naming the id, its entry and the reason."""
    path = tmp_path / "out.txt"
    qids, docids = ["1", qid], ["ok", docid]  # the bad id is entry 1, not the first
    which = "qid" if qid != "1" else "docid"
    bad = qid if which == "qid" else docid
    with pytest.raises(ValueError, match="cannot be written to a") as err:
        _writers()[writer](path, qids, docids)
    message = str(err.value)
    assert message.startswith(f"{writer}: ")  # the function called (write_run said format_run)
    assert f"{which} {bad!r} (entry 1) cannot be written" in message
    assert f"it {why}" in message
    assert not path.exists()


@pytest.mark.parametrize("writer", ["write_run", "write_qrels", "write_letor_agg"])
def test_issue26_unusual_ids_that_can_be_held_read_back_identically(tmp_path, writer):
    """The edge of what is allowed: '#' inside ids and in a docid, NUL, non-ASCII, 'Q0'."""
    qid = ["1", "q#2" if writer != "write_letor_agg" else "q2", "é", "1"]
    docid = ["#d", "d#", "Q0", "x\x00y"]
    path = tmp_path / "out.txt"
    _writers()[writer](path, qid, docid)
    if writer == "write_run":
        got = read_run(path)
    elif writer == "write_qrels":
        got = read_qrels(path)
    else:
        got = read_letor_agg(path)
    pairs = sorted(zip(got.qid.tolist(), got.docid.tolist(), strict=True))
    assert pairs == sorted(zip(qid, docid, strict=True))


def test_writers_with_swapped_arguments_say_how_to_call_them(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    run, qrels = _run(), Qrels(["1"], ["d1"], [1])
    swapped = r"takes a {}, got str 'x\.run'; call it as {}\(path, {}\)"
    with pytest.raises(TypeError, match="write_run " + swapped.format("Run", "write_run", "run")):
        write_run(run, "x.run")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"format_run takes a Run, got str 'x\.run'"):
        format_run("x.run")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=swapped.format("Qrels", "write_qrels", "qrels")):
        write_qrels(qrels, "x.run")  # type: ignore[arg-type]
    assert not list(tmp_path.iterdir())  # nothing was written
