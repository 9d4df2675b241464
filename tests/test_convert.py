"""LETOR 4.0 aggregation files in the command line (issue 16, item 6).

``rankboost train/predict/evaluate`` read LETOR-agg files (``NULL`` = NaN = abstain), and
``rankboost convert`` turns them into TREC runs + qrels and back. Synthetic files written
here; one optional test reads the shared MQ2008-agg fold (skipped when absent).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import rankboost._atomic
from rankboost import RankBoostRanker
from rankboost.cli import main
from rankboost.fusion import read_letor_agg, read_qrels, read_run
from rankboost.metrics import evaluate

MQ2008_AGG = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "letor4" / "MQ2008-agg" / "Fold1"
)


def _write_agg(path: Path, n_q: int, seed: int, k: int = 3, qid0: int = 1) -> None:
    """``k`` rankers over ``n_q`` queries of 8 documents; about a third of the slots NULL."""
    rng = np.random.default_rng(seed)
    lines = []
    for q in range(qid0, qid0 + n_q):
        labels = rng.integers(0, 3, size=8)
        ranks = []
        for _ in range(k):  # each ranker: noisy order of the labels, some docs not returned
            order = np.argsort(-(labels + rng.normal(scale=1.0, size=8)), kind="stable")
            r = np.empty(8, dtype=int)
            r[order] = np.arange(1, 9)
            ranks.append(r)
        for i in range(8):
            slots = []
            for j in range(k):
                null = rng.random() < 0.35 and i != 0  # document 0 is returned by all
                slots.append(f"{j + 1}:{'NULL' if null else ranks[j][i]}")
            lines.append(f"{labels[i]} qid:{q} {' '.join(slots)} #docid = q{q}d{i} inc = 1\n")
    path.write_text("".join(lines))


@pytest.fixture
def agg(tmp_path):
    _write_agg(tmp_path / "train.txt", 12, seed=0)
    _write_agg(tmp_path / "test.txt", 5, seed=1, qid0=100)
    return tmp_path


def _one_line_error(capsys, *parts: str) -> None:
    err = capsys.readouterr().err
    assert err.startswith("rankboost: error: ")
    assert err.count("\n") == 1
    for part in parts:
        assert part in err


# ------------------------------------------------------------ train / predict / evaluate
def test_train_predict_evaluate_read_null_as_abstain(agg, capsys):
    model = agg / "model.json"
    argv = ["train", str(agg / "train.txt"), "--valid", str(agg / "test.txt")]
    assert main([*argv, "--rounds", "15", "-q", "-o", str(model)]) == 0
    capsys.readouterr()
    train = read_letor_agg(agg / "train.txt").to_dataset()
    assert np.isnan(train.X).any()
    est = RankBoostRanker(n_estimators=15, verbose=False).fit(train.X, train.y, qid=train.qid)
    saved = json.loads(model.read_text())
    assert list(saved.pop("evals_result")) == ["valid_0"]  # the --valid curves (issue 22)
    assert saved == json.loads(json.dumps(est.model_.to_dict()))  # the same model
    test = read_letor_agg(agg / "test.txt").to_dataset()
    assert main(["predict", str(model), str(agg / "test.txt")]) == 0
    scores = [float(v) for v in capsys.readouterr().out.split()]
    assert scores == est.predict(test.X).tolist()
    assert main(["evaluate", str(model), str(agg / "test.txt"), "--metric", "map", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["map"] == pytest.approx(
        evaluate(test.y, est.predict(test.X), test.qid, metrics=["map"])["map"]
    )
    out = agg / "test.run"
    assert (
        main(["predict", str(model), str(agg / "test.txt"), "--format", "trec", "-o", str(out)])
        == 0
    )
    assert set(read_run(out).docid.tolist()) == set(test.docids.tolist())


def test_agg_with_other_width_or_bad_line_is_error(agg, capsys):
    model = agg / "model.json"
    assert main(["train", str(agg / "train.txt"), "--rounds", "3", "-q", "-o", str(model)]) == 0
    capsys.readouterr()
    _write_agg(agg / "wide.txt", 2, seed=2, k=4)
    assert main(["predict", str(model), str(agg / "wide.txt")]) == 1
    _one_line_error(capsys, "4 rankers", "3 are expected")
    (agg / "bad.txt").write_text("1 qid:1 1:NULL 2:3 3:1\n")  # no #docid comment
    assert main(["train", str(agg / "bad.txt"), "-q", "-o", str(agg / "m2.json")]) == 1
    _one_line_error(capsys, "LETOR aggregation format", "#docid")
    assert not (agg / "m2.json").exists()


# ------------------------------------------------------------ convert --to trec
def test_convert_to_trec(agg, capsys):
    out = agg / "runs"
    assert main(["convert", str(agg / "train.txt"), "--to", "trec", "-o", str(out)]) == 0
    assert "wrote 3 runs" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == [
        "qrels.txt",
        "ranker1.run",
        "ranker2.run",
        "ranker3.run",
    ]
    data = read_letor_agg(agg / "train.txt")
    for i, (name, run) in enumerate(data.to_runs().items(), start=1):
        back = read_run(out / f"ranker{i}.run", name=name)
        assert back == run
        assert {ln.split()[5] for ln in (out / f"ranker{i}.run").read_text().splitlines()} == {
            f"ranker{i}"
        }
    assert read_qrels(out / "qrels.txt") == data.to_qrels()


def test_convert_pads_ranker_names_for_glob_order(tmp_path):
    _write_agg(tmp_path / "agg.txt", 2, seed=0, k=11)
    assert main(["convert", str(tmp_path / "agg.txt"), "--to", "trec", "-o", str(tmp_path)]) == 0
    runs = sorted(p.name for p in tmp_path.glob("ranker*.run"))
    assert runs == [f"ranker{i:02d}.run" for i in range(1, 12)]


def test_convert_round_trip_trec_letor(agg, capsys):
    """AGG -> runs + qrels -> AGG gives the same ranks (NULL where not returned) and labels."""
    out = agg / "runs"
    assert main(["convert", str(agg / "train.txt"), "--to", "trec", "-o", str(out)]) == 0
    runs = [str(p) for p in sorted(out.glob("ranker*.run"))]
    back = agg / "back.txt.gz"
    argv = ["convert", *runs, "--qrels", str(out / "qrels.txt"), "--to", "letor", "-o", str(back)]
    assert main(argv) == 0
    assert "columns 1:" in capsys.readouterr().err
    a, b = read_letor_agg(agg / "train.txt"), read_letor_agg(back)
    np.testing.assert_array_equal(a.ranks, b.ranks)  # NaN at the same places
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.docid, b.docid)
    np.testing.assert_array_equal(a.qid, b.qid)
    # and the converted file trains like the original
    m1, m2 = agg / "m1.json", agg / "m2.json"
    assert main(["train", str(agg / "train.txt"), "--rounds", "5", "-q", "-o", str(m1)]) == 0
    assert main(["train", str(back), "--rounds", "5", "-q", "-o", str(m2)]) == 0
    assert json.loads(m1.read_text())["rounds"] == json.loads(m2.read_text())["rounds"]


# ------------------------------------------------------------ errors and exit codes
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--to", "trec", "--qrels", "q.txt"], "takes no --qrels"),
        (["--to", "letor"], "needs --qrels"),
    ],
)
def test_convert_usage_errors(agg, capsys, extra, message):
    assert main(["convert", str(agg / "train.txt"), *extra, "-o", str(agg / "o")]) == 2
    _one_line_error(capsys, message)


def test_convert_to_trec_takes_one_input(agg, capsys):
    argv = ["convert", str(agg / "train.txt"), str(agg / "test.txt"), "--to", "trec", "-o", "x"]
    assert main(argv) == 2
    _one_line_error(capsys, "takes one LETOR aggregation file; got 2")


def test_convert_refuses_output_that_is_an_input(agg, capsys):
    out = agg / "runs"
    assert main(["convert", str(agg / "train.txt"), "--to", "trec", "-o", str(out)]) == 0
    capsys.readouterr()
    before = (out / "ranker1.run").read_bytes()
    run, qrels = str(out / "ranker1.run"), str(out / "qrels.txt")
    for target in (run, qrels):
        argv = ["convert", run, "--qrels", qrels, "--to", "letor", "-o", target]
        assert main(argv) == 2
        _one_line_error(capsys, "would destroy the input")
    assert (out / "ranker1.run").read_bytes() == before
    # --to trec into the folder that holds the input as qrels.txt
    (out / "qrels.txt").write_bytes((agg / "train.txt").read_bytes())
    argv = ["convert", str(out / "qrels.txt"), "--to", "trec", "-o", str(out)]
    assert main(argv) == 2
    _one_line_error(capsys, "would destroy the input")
    assert main(["convert", str(agg / "train.txt"), "--to", "trec", "-o", run]) == 2
    _one_line_error(capsys, "is a file")


def test_convert_data_errors_exit_1(agg, capsys):
    assert main(["convert", str(agg / "nope.txt"), "--to", "trec", "-o", str(agg / "o")]) == 1
    _one_line_error(capsys, "nope.txt")
    (agg / "bad.txt").write_text("1 qid:1 1:x #docid = a\n")
    assert main(["convert", str(agg / "bad.txt"), "--to", "trec", "-o", str(agg / "o")]) == 1
    _one_line_error(capsys, "bad.txt:1")
    assert not (agg / "o").exists()  # nothing written for bad input
    (agg / "a.run").write_text("1 Q0 d1 1 2.0 x\n")
    (agg / "q.txt").write_text("1 0 d1 x\n")
    argv = ["convert", str(agg / "a.run"), "--qrels", str(agg / "q.txt"), "--to", "letor"]
    assert main([*argv, "-o", str(agg / "out.txt")]) == 1
    _one_line_error(capsys, "integer grade")
    assert not (agg / "out.txt").exists()


def test_convert_writes_atomically(agg, capsys, monkeypatch):
    """A failing rename (disk full, killed) leaves no run file and no temporary file."""

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(rankboost._atomic.os, "replace", fail)
    out = agg / "runs"
    assert main(["convert", str(agg / "train.txt"), "--to", "trec", "-o", str(out)]) == 1
    _one_line_error(capsys, "No space left on device")
    assert list(out.iterdir()) == []
    (agg / "a.run").write_text("1 Q0 d1 1 2.0 x\n")
    (agg / "q.txt").write_text("1 0 d1 1\n")
    argv = ["convert", str(agg / "a.run"), "--qrels", str(agg / "q.txt"), "--to", "letor"]
    assert main([*argv, "-o", str(agg / "out.txt")]) == 1
    _one_line_error(capsys, "No space left on device")
    assert sorted(p.name for p in agg.iterdir()) == [
        "a.run",
        "q.txt",
        "runs",
        "test.txt",
        "train.txt",
    ]


@pytest.mark.skipif(not MQ2008_AGG.is_dir(), reason="shared MQ2008-agg data not available")
def test_mq2008_agg_quickstart(tmp_path, capsys):
    """The README fusion quickstart on MQ2008-agg Fold1 (25 rankers, 156 test queries)."""
    for split in ("train", "test"):
        src = str(MQ2008_AGG / f"{split}.txt.gz")
        assert main(["convert", src, "--to", "trec", "-o", str(tmp_path / split)]) == 0
    runs = sorted((tmp_path / "test").glob("ranker*.run"))
    assert len(runs) == 25
    assert len(read_qrels(tmp_path / "test" / "qrels.txt")) == 2874
    model = tmp_path / "m.json"
    argv = ["train", str(MQ2008_AGG / "train.txt.gz"), "--rounds", "20", "-q", "-o", str(model)]
    assert main(argv) == 0
    out = tmp_path / "test.run"
    test = str(MQ2008_AGG / "test.txt.gz")
    assert main(["predict", str(model), test, "--format", "trec", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(model), test, "--metric", "ndcg@10", "--json"]) == 0
    direct = json.loads(capsys.readouterr().out)["ndcg@10"]
    argv = ["fuse", "evaluate", "--runs", str(out), "--qrels", str(tmp_path / "test/qrels.txt")]
    assert main([*argv, "--metric", "ndcg@10", "--json"]) == 0
    via_run = json.loads(capsys.readouterr().out)[str(out)]["ndcg@10"]
    assert via_run == pytest.approx(direct, abs=1e-12)
