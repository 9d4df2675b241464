"""``rankboost predict --format trec``: a TREC run of the scores (issue 16, item 5).

The run read back by ``rankboost.fusion.read_run`` (and by ranx's ``Run.from_file`` when ranx
is installed) must give, per query, the documents in the order of decreasing score, with
equal scores in input order; docids come from ``#docid = ...`` comments or row numbers.
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest

import ranx_reference
from rankboost.cli import main
from rankboost.datasets import dump_svmlight, load_svmlight
from rankboost.fusion import Run, read_run
from rankboost.model import load_model


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A model, a test file with docids and one without (queries out of order)."""
    tmp = tmp_path_factory.mktemp("trec")
    rng = np.random.default_rng(3)
    n = 60
    X = rng.random((n, 4))
    y = np.clip(np.round(2 * X[:, 0] + 0.3 * rng.normal(size=n)), 0, 2)
    qid = np.repeat([30, 10, 20], n // 3)  # not sorted: the run keeps file order
    docids = [f"D{i:03d}" for i in range(n)]
    paths = {"train": tmp / "train.txt", "test": tmp / "test.txt", "bare": tmp / "bare.txt"}
    dump_svmlight(paths["train"], X, y, qid, docids=docids)
    dump_svmlight(paths["test"], X[::-1], y[::-1], qid[::-1], docids=docids[::-1])
    dump_svmlight(paths["bare"], X, y, qid)
    model = tmp / "model.json"
    assert main(["train", str(paths["train"]), "--rounds", "20", "-q", "-o", str(model)]) == 0
    return tmp, model, paths


def _expected_order(path, model_path, docid):
    data = load_svmlight(path)
    scores = load_model(model_path).decision_function(data.X)
    out: dict[str, list[str]] = {}
    for q in dict.fromkeys(data.qid.tolist()):
        rows = np.flatnonzero(data.qid == q)
        order = rows[np.argsort(-scores[rows], kind="stable")]
        out[str(q)] = [docid[i] for i in order]
    return out, scores


def _order(run: Run) -> dict[str, list[str]]:
    srt = run.sorted()
    out: dict[str, list[str]] = {}
    for q, d in zip(srt.qid.tolist(), srt.docid.tolist(), strict=True):
        out.setdefault(q, []).append(d)
    return out


def test_default_output_is_unchanged(trained, capsys):
    tmp, model, paths = trained
    assert main(["predict", str(model), str(paths["test"])]) == 0
    lines = capsys.readouterr().out.splitlines()
    scores = load_model(model).decision_function(load_svmlight(paths["test"]).X)
    assert [float(v) for v in lines] == scores.tolist()


def test_trec_docids_from_comments_read_back(trained, capsys):
    tmp, model, paths = trained
    out = tmp / "test.run"
    assert (
        main(["predict", str(model), str(paths["test"]), "--format", "trec", "-o", str(out)]) == 0
    )
    assert "wrote a TREC run of 60 rows, 3 queries" in capsys.readouterr().err
    docids = load_svmlight(paths["test"]).docids.tolist()
    expected, scores = _expected_order(paths["test"], model, docids)
    run = read_run(out)
    assert _order(run) == expected
    assert list(_order(run)) == ["20", "10", "30"]  # the file's query order
    for q in run.queries:  # ranks 1..n per query, scores exact (repr)
        assert sorted(run.rank[run.qid == q].tolist()) == list(range(1, 21))
    back = dict(zip(run.docid.tolist(), run.score.tolist(), strict=True))
    assert [back[d] for d in docids] == scores.tolist()
    assert {line.split()[5] for line in out.read_text().splitlines()} == {"rankboost"}


def test_trec_docids_from_row_numbers_on_stdout(trained, capsys):
    tmp, model, paths = trained
    assert main(["predict", str(model), str(paths["bare"]), "--format", "trec", "--tag", "rb"]) == 0
    text = capsys.readouterr().out
    (tmp / "bare.run").write_text(text)
    run = read_run(tmp / "bare.run")
    rows = [str(i) for i in range(1, 61)]
    expected, _ = _expected_order(paths["bare"], model, rows)
    assert _order(run) == expected
    assert {line.split()[5] for line in text.splitlines()} == {"rb"}
    # --docid row ignores the comments
    assert (
        main(["predict", str(model), str(paths["test"]), "--format", "trec", "--docid", "row"]) == 0
    )
    assert capsys.readouterr().out.split()[2].isdigit()


def test_ties_keep_input_order(tmp_path, capsys):
    """A model of 0 useful rounds scores all rows equal: ranks follow the row order."""
    path = tmp_path / "flat.txt"
    X = np.ones((6, 2))
    dump_svmlight(path, X, [1, 0, 1, 0, 1, 0], [1, 1, 1, 2, 2, 2], docids=list("abcdef"))
    model = tmp_path / "m.json"
    assert main(["train", str(path), "--rounds", "1", "-q", "-o", str(model)]) == 0
    out = tmp_path / "flat.run.gz"
    assert main(["predict", str(model), str(path), "--format", "trec", "-o", str(out)]) == 0
    lines = gzip.decompress(out.read_bytes()).decode().splitlines()
    assert [(ln.split()[0], ln.split()[2], ln.split()[3]) for ln in lines] == [
        ("1", "a", "1"),
        ("1", "b", "2"),
        ("1", "c", "3"),
        ("2", "d", "1"),
        ("2", "e", "2"),
        ("2", "f", "3"),
    ]


def test_file_without_qid_is_query_0(tmp_path, trained, capsys):
    _, model, _ = trained
    path = tmp_path / "noqid.txt"
    dump_svmlight(path, np.random.default_rng(0).random((5, 4)), [0, 1, 0, 1, 2], None)
    assert main(["predict", str(model), str(path), "--format", "trec"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5
    assert {ln.split()[0] for ln in lines} == {"0"}


def test_duplicate_docid_is_one_line_error(tmp_path, trained, capsys):
    _, model, _ = trained
    path = tmp_path / "dup.txt"
    X = np.random.default_rng(1).random((3, 4))
    dump_svmlight(path, X, [0, 1, 0], [5, 5, 5], docids=["x", "x", "y"])
    assert main(["predict", str(model), str(path), "--format", "trec"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "appears twice" in err
    assert "--docid row" in err
    assert main(["predict", str(model), str(path), "--format", "trec", "--docid", "row"]) == 0


def test_bad_format_is_usage_error(trained, capsys):
    _, model, paths = trained
    with pytest.raises(SystemExit, match="2"):
        main(["predict", str(model), str(paths["test"]), "--format", "csv"])
    assert "invalid choice" in capsys.readouterr().err


def test_output_that_is_an_input_is_refused(trained, capsys):
    _, model, paths = trained
    args = ["predict", str(model), str(paths["test"]), "--format", "trec", "-o", str(paths["test"])]
    assert main(args) == 2
    assert "would destroy the input" in capsys.readouterr().err


@pytest.mark.skipif(not ranx_reference.HAVE_RANX, reason="ranx is not installed")
def test_ranx_reads_the_same_order(trained):
    tmp, model, paths = trained
    out = tmp / "ranx.run"
    assert (
        main(["predict", str(model), str(paths["test"]), "--format", "trec", "-o", str(out)]) == 0
    )
    docids = load_svmlight(paths["test"]).docids.tolist()
    expected, scores = _expected_order(paths["test"], model, docids)
    run = ranx_reference.read_run(str(out))
    assert set(run) == set(expected)
    by_docid = dict(zip(docids, scores.tolist(), strict=True))
    for q, order in expected.items():
        assert run[q] == {d: by_docid[d] for d in order}  # same documents, exact scores
        got = [run[q][d] for d in order]
        assert got == sorted(got, reverse=True)  # our order = decreasing ranx score
