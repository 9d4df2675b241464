"""Command-line tests of issue 25: ``rankboost clicks ...`` and ``train --clicks``.

In-process (``rankboost.cli.main``): a round trip simulate -> propensity -> train, and every
bad-input path (exit status 1, one ``rankboost: error:`` line, no traceback, no output file).
"""

from __future__ import annotations

import numpy as np
import pytest

import rankboost as rb
from conftest import letor_like
from rankboost.cli import main
from rankboost.clicks import click_feedback, read_click_log, read_propensity
from rankboost.datasets import dump_svmlight, load_svmlight


@pytest.fixture(scope="module")
def letor(tmp_path_factory):
    """A small LETOR file with '#docid' comments, and one without them."""
    folder = tmp_path_factory.mktemp("clicks_cli")
    X, y, qid = letor_like(n_queries=12, seed=7)
    X = np.nan_to_num(X)
    docids = [f"D{i}" for i in range(len(y))]
    path = folder / "train.txt"
    dump_svmlight(path, X, y, qid, docids=docids)
    bare = folder / "bare.txt"
    dump_svmlight(bare, X, y, qid)
    log = folder / "log.tsv.gz"
    assert main(["clicks", "simulate", str(path), "-o", str(log), "--sessions", "400"]) == 0
    return folder, path, bare, log


def test_simulate_propensity_train_round_trip(letor, capsys, tmp_path):
    _, path, _, log = letor
    parsed = read_click_log(log)
    assert parsed.n_sessions == 400
    assert parsed.position.min() == 1
    table = tmp_path / "p.tsv"
    assert main(["clicks", "propensity", str(log), str(path), "-o", str(table)]) == 0
    prop = read_propensity(table)
    assert prop.values[0] == 1.0
    model = tmp_path / "model.json"
    for propensity in ("auto", "none", str(table)):
        capsys.readouterr()
        argv = ["train", str(path), "--clicks", str(log), "--propensity", propensity]
        assert main([*argv, "--rounds", "5", "-q", "-o", str(model)]) == 0
        err = capsys.readouterr().err
        assert "the labels of" in err
        assert "are ignored" in err
        assert rb.load_model(model).n_rounds == 5
    # the CLI's model is the Python API's: rb.train on click_feedback of the matched log
    data = load_svmlight(path)
    log_rows = read_click_log(log).match(data.qid, data.docids)
    fb = click_feedback(log_rows, read_propensity(table))
    expected = rb.train(data.X, fb, n_rounds=5).decision_function(data.X)
    np.testing.assert_allclose(rb.load_model(model).decision_function(data.X), expected)
    # without FEATURES: EM (warns that positions are not identifiable with one ranker)
    assert main(["clicks", "propensity", str(log)]) == 0
    assert capsys.readouterr().out.startswith("position\tpropensity\n1\t1\n")


def test_propensity_plot(letor, tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    _, path, _, log = letor
    png = tmp_path / "p.png"
    assert (
        main(
            [
                "clicks",
                "propensity",
                str(log),
                str(path),
                "--plot",
                str(png),
                "-o",
                str(tmp_path / "p.tsv"),
            ]
        )
        == 0
    )
    assert png.read_bytes()[:4] == b"\x89PNG"
    # a picture matplotlib cannot write: a usage error before the work (issue 38), the old
    # file kept, no temporary left
    bad = tmp_path / "p.xyz"
    bad.write_bytes(b"old")
    argv = ["clicks", "propensity", str(log), "--plot", str(bad), "-o", str(tmp_path / "q.tsv")]
    assert main(argv) == 2
    assert bad.read_bytes() == b"old"
    assert not (tmp_path / "q.tsv").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def _fails(argv, capsys, match, code=1):
    capsys.readouterr()
    assert main(argv) == code
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert "Traceback" not in err
    assert err.startswith("rankboost: error:")
    assert match in err, err


def test_train_clicks_bad_input(letor, capsys, tmp_path):
    folder, path, bare, log = letor
    out = tmp_path / "m.json"
    _fails(
        ["train", str(path), "--propensity", "none", "-o", str(out)],
        capsys,
        "--propensity needs --clicks LOG",
    )
    _fails(
        ["train", str(bare), "--clicks", str(log), "-o", str(out)],
        capsys,
        "has no '#docid = ...' comments",
    )
    missing = tmp_path / "missing.tsv"
    real = read_click_log(log)
    q, d = real.qid[1], real.docid[1]  # position 2 of the first session: a real document
    missing.write_text(f"qid\tdocid\tposition\tclick\n{q}\tNOPE\t1\t0\n{q}\t{d}\t2\t1\n")
    _fails(
        ["train", str(path), "--clicks", str(missing), "-o", str(out)],
        capsys,
        "1 rows (1 distinct documents) have no row in",
    )
    badprop = tmp_path / "bad.tsv"
    badprop.write_text("position\tpropensity\n1\t1\n1\t0.5\n")
    _fails(
        ["train", str(path), "--clicks", str(log), "--propensity", str(badprop), "-o", str(out)],
        capsys,
        "positions must be 1..K, each once",
    )
    _fails(
        ["train", str(path), "--clicks", str(log), "--max-weight", "0.5", "-o", str(out)],
        capsys,
        "--max-weight must be >= 1",
    )
    _fails(
        ["train", str(path), "--clicks", str(tmp_path / "none.tsv"), "-o", str(out)],
        capsys,
        "does not exist",
    )
    _fails(
        ["clicks", "simulate", str(bare), "-o", str(tmp_path / "x.tsv")],
        capsys,
        "has no '#docid = ...' comments",
    )
    _fails(
        ["clicks", "propensity", str(log), "--method", "regression_em"], capsys, "needs FEATURES"
    )
    # one simulated production ranker: no document changes position
    _fails(
        ["clicks", "propensity", str(log), "--method", "intervention_harvesting"],
        capsys,
        "several logged rankers",
    )
    assert not out.exists()
    assert not (tmp_path / "x.tsv").exists()
    before = log.read_bytes()
    # an output that is an input: a usage error (exit 2), as for every command
    _fails(["train", str(path), "--clicks", str(log), "-o", str(log)], capsys, "is the input", 2)
    _fails(["clicks", "simulate", str(path), "-o", str(path)], capsys, "is the input", 2)
    _fails(["clicks", "propensity", str(log), "-o", str(log)], capsys, "is the input", 2)
    assert log.read_bytes() == before


def test_clicks_usage_errors(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["clicks", "simulate", "a.txt", "-o", "b.tsv", "--sessions", "0"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["train", "a.txt", "--clicks", "l.tsv", "--click-pairs", "skip_below"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
