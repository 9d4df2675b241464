"""Tests for the ``rankboost`` command line (``rankboost.cli``, ``python -m rankboost``).

Round trips train -> predict -> evaluate against the Python API, every error path (exit
status 1 for errors, 2 for usage, one line, never a traceback) and the ``demo`` command.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rankboost
from rankboost.cli import main
from rankboost.datasets import dump_svmlight, load_svmlight
from rankboost.metrics import evaluate
from rankboost.model import load_model
from rankboost.sklearn import RankBoostRanker

SRC = Path(rankboost.__file__).resolve().parents[1]
MQ2008_FOLD1 = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "letor4" / "MQ2008" / "Fold1"
)


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m rankboost ARGS`` in a subprocess, with this source tree importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "rankboost", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def letor(tmp_path_factory):
    """A small graded LETOR problem written with dump_svmlight (test file gzipped)."""
    tmp = tmp_path_factory.mktemp("letor")
    rng = np.random.default_rng(0)
    n_q, per_q, d = 40, 10, 5
    X = rng.random((n_q * per_q, d))
    y = np.clip(np.round(2 * X[:, 0] + 0.4 * rng.normal(size=X.shape[0])), 0, 2)
    qid = np.repeat(np.arange(100, 100 + n_q), per_q)
    tr, va, te = qid < 120, (qid >= 120) & (qid < 130), qid >= 130
    paths = {
        "train": tmp / "train.txt",
        "valid": tmp / "vali.txt",
        "test": tmp / "test.txt.gz",
    }
    for name, mask in (("train", tr), ("valid", va), ("test", te)):
        dump_svmlight(paths[name], X[mask], y[mask], qid[mask])
    return tmp, paths


def _one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("rankboost: error: "), err
    assert "Traceback" not in err
    return lines[0]


# ---------------------------------------------------------------------- round trips


def test_train_predict_evaluate_round_trip(letor, capsys):
    tmp, paths = letor
    model_path, scores_path = tmp / "m.json", tmp / "scores.txt"
    argv = ["train", str(paths["train"]), "-o", str(model_path), "--rounds", "30", "-q"]
    assert main([*argv, "--normalize", "query", "--thresholds", "all"]) == 0
    out = capsys.readouterr().out
    assert "trained 30 rounds on 200 rows, 20 queries, 5 features" in out

    X, y, qid = load_svmlight(paths["train"])
    est = RankBoostRanker(n_estimators=30, normalize="query", thresholds="all").fit(X, y, qid=qid)
    assert load_model(model_path) == est.model_

    assert main(["predict", str(model_path), str(paths["test"]), "-o", str(scores_path)]) == 0
    Xt, yt, qt = load_svmlight(paths["test"])
    scores = np.loadtxt(scores_path)
    np.testing.assert_array_equal(scores, est.predict(Xt))  # repr: exact round trip

    assert main(["predict", str(model_path), str(paths["test"])]) == 0  # to stdout
    np.testing.assert_array_equal(np.array(capsys.readouterr().out.split(), float), scores)

    argv = ["evaluate", str(model_path), str(paths["test"]), "--metric", "ndcg@10"]
    assert main([*argv, "--metric", "map", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got.pop("conventions")["discount"] == "log2"
    assert got == evaluate(yt, scores, qt, metrics=["ndcg@10", "map"])

    assert main(["evaluate", str(model_path), str(paths["test"])]) == 0
    table = capsys.readouterr().out
    for name in ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map"):
        assert name in table
    assert f"{got['map']:.4f}" in table


def test_train_with_validation_and_early_stopping(letor, capsys):
    tmp, paths = letor
    model_path = tmp / "es.json"
    argv = ["train", str(paths["train"]), "--valid", str(paths["valid"]), "-o", str(model_path)]
    assert main([*argv, "--early-stopping", "5", "--metric", "map", "-q"]) == 0
    out = capsys.readouterr().out
    model = load_model(model_path)
    assert model.best_iteration is not None
    assert f"valid  {model.best_iteration:>10}" in out

    X, y, qid = load_svmlight(paths["train"])
    Xv, yv, qv = load_svmlight(paths["valid"])
    est = RankBoostRanker().fit(
        X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv], eval_metric="map",
        early_stopping_rounds=5,
    )  # fmt: skip
    assert est.best_iteration_ == model.best_iteration
    # predict uses the best round by default, --rounds overrides it
    assert main(["predict", str(model_path), str(paths["valid"])]) == 0
    scores = np.array(capsys.readouterr().out.split(), float)
    np.testing.assert_array_equal(scores, est.predict(Xv))
    assert main(["predict", str(model_path), str(paths["valid"]), "--rounds", "1"]) == 0
    scores = np.array(capsys.readouterr().out.split(), float)
    np.testing.assert_array_equal(scores, est.predict(Xv, n_rounds=1))


def test_info_prints_rounds_and_importances(letor, capsys):
    tmp, paths = letor
    model_path = tmp / "info.json"
    assert main(["train", str(paths["train"]), "-o", str(model_path), "--rounds", "12", "-q"]) == 0
    capsys.readouterr()
    assert main(["info", str(model_path), "--head", "0"]) == 0
    out = capsys.readouterr().out
    assert "rounds: 12 (best iteration: -), features: 5" in out
    assert "feature  name" in out
    round_lines = [line for line in out.splitlines() if line.split()[:1] == ["12"]]
    assert round_lines  # all 12 rounds are listed with --head 0
    # feature 1 (1-based) carries the signal, so it leads the importance table
    first_row = out.split("feature  name")[1].splitlines()[1].split()
    assert first_row[:2] == ["1", "f1"]


@pytest.mark.skipif(not MQ2008_FOLD1.is_dir(), reason="../shared data absent")
def test_round_trip_on_letor_mq2008(tmp_path, capsys):
    """LETOR 4.0 MQ2008 Fold1 from ../shared/data (see its README for provenance)."""
    model_path = tmp_path / "mq.json"
    train, test = MQ2008_FOLD1 / "train.txt.gz", MQ2008_FOLD1 / "test.txt.gz"
    assert main(["train", str(train), "-o", str(model_path), "--rounds", "10", "-q"]) == 0
    assert main(["evaluate", str(model_path), str(test), "--json"]) == 0
    got = json.loads(capsys.readouterr().out.splitlines()[-1])
    got.pop("conventions")
    X, y, qid = load_svmlight(train)
    Xt, yt, qt = load_svmlight(test, n_features=X.shape[1])
    est = RankBoostRanker(n_estimators=10).fit(X, y, qid=qid)
    assert got == evaluate(yt, est.predict(Xt), qt, metrics=list(got))


def test_issue16_train_without_qid_says_so_once(tmp_path):
    """A file without qid: one note per file, no second OneQueryWarning line (issue 16)."""
    rng = np.random.default_rng(0)
    X = rng.random((60, 3))
    y = np.round(2 * X[:, 0])
    dump_svmlight(tmp_path / "t.txt", X, y, None)
    dump_svmlight(tmp_path / "v.txt", X[:20], y[:20], None)
    out = _run("train", str(tmp_path / "t.txt"), "--valid", str(tmp_path / "v.txt"),
               "--rounds", "3", "-q", "-o", str(tmp_path / "m.json"))  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 2
    for line, name in zip(lines, ["t.txt", "v.txt"], strict=True):
        note = f"rankboost: note: {str(tmp_path / name)!r} has no qid: all rows form one query."
        assert line.startswith(note)
        assert "--query-file" in line  # and how to give the queries (issue 26)
    one = RankBoostRanker(n_estimators=3).fit(X, y, qid=np.zeros(60))
    np.testing.assert_array_equal(load_model(tmp_path / "m.json").decision_function(X),
                                  one.predict(X))  # fmt: skip


def test_help_has_examples_and_python_m_works():
    res = _run("--help")
    assert res.returncode == 0
    assert "examples:" in res.stdout
    assert "rankboost train train.txt --valid vali.txt" in res.stdout
    res = _run("train", "--help")
    assert res.returncode == 0
    assert "--positive-cumulative" in res.stdout
    assert "example:" in res.stdout


# ---------------------------------------------------------------------- error paths


@pytest.fixture(scope="module")
def bad_files(letor):
    tmp, paths = letor
    model_path = tmp / "good.json"
    assert main(["train", str(paths["train"]), "-o", str(model_path), "--rounds", "3", "-q"]) == 0
    (tmp / "malformed.txt").write_text("2 qid:1 1:0.5\nthis is not svmlight\n")
    (tmp / "not_json.json").write_text("{ not json")
    (tmp / "other.json").write_text('{"hello": 1}')
    (tmp / "binary.json").write_bytes(b"\xff\xfe\x00garbage")
    with gzip.open(tmp / "corrupt.txt.gz", "wb") as fh:
        fh.write(b"1 qid:1 1:x\n")
    dump_svmlight(tmp / "wide.txt", np.ones((4, 9)), np.array([0, 1, 0, 1]), np.zeros(4, int))
    dump_svmlight(tmp / "flat.txt", np.eye(4), np.ones(4), np.zeros(4, int))
    return tmp, model_path


ERRORS = [
    # (argv template, expected exit status, regex on the one-line message)
    (["train", "{tmp}/missing.txt"], 1, r"training file '.*missing.txt' does not exist"),
    (["train", "{tmp}/malformed.txt"], 1, r"cannot read training file .*line 2"),
    (["train", "{tmp}/corrupt.txt.gz"], 1, r"cannot read training file .*line 1"),
    (["train", "{tmp}"], 1, r"is a directory"),
    (["train", "{train}", "--early-stopping", "5"], 2, r"--early-stopping needs a validation"),
    (["train", "{train}", "--valid", "{tmp}/wide.txt"], 1, r"more features than the model's 5"),
    (
        ["train", "{train}", "-o", "{tmp}/no/such/dir/m.json", "--rounds", "1"],
        1,
        "folder .* does not exist",
    ),
    (["train", "{tmp}/flat.txt", "-o", "{tmp}/x.json"], 1, r"no crucial pair"),
    (["predict", "{model}", "{train}", "-o", "{tmp}"], 1, r"it is a directory"),
    (["predict", "{tmp}/missing.json", "{train}"], 1, r"model file .* does not exist; train one"),
    (["predict", "{tmp}/not_json.json", "{train}"], 1, r"cannot read model file .*not valid JSON"),
    (["predict", "{tmp}/other.json", "{train}"], 1, r"not a rankboost model"),
    (["predict", "{tmp}/binary.json", "{train}"], 1, r"cannot read model file"),
    (["predict", "{model}", "{tmp}/wide.txt"], 1, r"more features than the model's 5"),
    (["predict", "{model}", "{tmp}/missing.txt"], 1, r"data file .* does not exist"),
    (["predict", "{model}", "{train}", "--rounds", "99"], 1, r"--rounds 99 exceeds the 3 rounds"),
    (["evaluate", "{model}", "{train}", "--metric", "ndgc@10"], 2, r"Unknown metric 'ndgc@10'"),
    (["evaluate", "{model}", "{train}", "--metric", "p"], 2, r"needs a rank cut-off"),
    (["info", "{tmp}/not_json.json"], 1, r"not valid JSON"),
    (["train", "{train}", "--rounds", "0"], 2, r"--rounds: must be an int >= 1; got '0'"),
    (
        ["train", "{train}", "--thresholds", "1"],
        2,
        r"--thresholds: must be 'all' or an int number of bins >= 2, .*; got '1'",
    ),
    (["train", "{train}", "--alpha", "best"], 2, r"invalid choice: 'best'"),
    (["train"], 2, r"the following arguments are required: DATA"),
    (["frobnicate"], 2, r"invalid choice: 'frobnicate'"),
    ([], 2, r"the following arguments are required: COMMAND"),
    (["demo", "--fold", "7"], 2, r"--fold: invalid choice"),
]


@pytest.mark.parametrize(("argv", "status", "match"), ERRORS)
def test_error_paths_in_process(bad_files, letor, capsys, argv, status, match):
    tmp, model = bad_files
    args = [a.format(tmp=tmp, model=model, train=letor[1]["train"]) for a in argv]
    try:  # a usage error found by argparse exits; one found after parsing is returned
        got = main(args)
    except SystemExit as exc:
        got = exc.code
    assert got == status
    line = _one_line_error(capsys.readouterr().err)
    import re

    assert re.search(match, line), line


@pytest.mark.parametrize(
    ("argv", "status"),
    [
        (["predict", "{tmp}/not_json.json", "{train}"], 1),
        (["evaluate", "{model}", "{train}", "--metric", "foo"], 2),
        (["train", "{tmp}/malformed.txt"], 1),
    ],
)
def test_error_paths_in_a_subprocess(bad_files, letor, argv, status):
    tmp, model = bad_files
    res = _run(*[a.format(tmp=tmp, model=model, train=letor[1]["train"]) for a in argv])
    assert res.returncode == status
    _one_line_error(res.stderr)
    assert res.stdout == ""


def test_no_half_written_files_on_error(bad_files, letor):
    tmp, model = bad_files
    before = sorted(p.name for p in tmp.iterdir())
    assert main(["predict", str(model), str(tmp / "wide.txt"), "-o", str(tmp / "s.txt")]) == 1
    assert sorted(p.name for p in tmp.iterdir()) == before


def _package_imports(path: Path) -> set[str]:
    """The rankboost modules ``path`` imports, lazy (in-function) imports included."""
    import ast

    src = Path(rankboost.__file__).parent
    parts = list(path.relative_to(src.parent).with_suffix("").parts)
    package = parts if path.name == "__init__.py" else parts[:-1]
    if package[-1] == "__init__":
        package = package[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            names = [mod] + [f"{mod}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found |= {n for n in names if n.startswith("rankboost")}
    return found


def test_no_module_imports_the_cli_and_the_shared_helpers_import_no_command():
    """Issue 21 item 4: the command modules share rankboost._cli_common, and only
    ``python -m rankboost`` imports rankboost.cli, so no import circle goes through it."""
    src = Path(rankboost.__file__).parent
    importers = sorted(
        str(p.relative_to(src))
        for p in src.rglob("*.py")
        if "rankboost.cli" in _package_imports(p) and p.name != "cli.py"
    )
    assert importers == ["__main__.py"]
    common = _package_imports(src / "_cli_common.py")
    assert common <= {"rankboost.metrics", "rankboost.metrics.parse_metric"}, common
    # cli.py registers the command modules; they import none of each other
    commands = ["fusion/cli.py", "fusion/convert.py", "fusion/_info.py", "export/cli.py"]
    for name in commands:
        others = {"rankboost." + c[:-3].replace("/", ".") for c in commands if c != name}
        assert not _package_imports(src / name) & others, name


@pytest.mark.skipif(os.name != "posix", reason="device nodes")
def test_issue26_output_to_a_device(bad_files, letor, tmp_path, capsys):
    """``-o /dev/null`` works and leaves a device; ``-o /dev/full`` says the disk is full (a
    node made here: the real ones must not be at stake if the writer replaced them)."""
    import stat

    tmp, model = bad_files
    nodes = {}
    for name, minor in (("null", 3), ("full", 7)):
        nodes[name] = tmp_path / name
        try:
            os.mknod(nodes[name], stat.S_IFCHR | 0o666, os.makedev(1, minor))
        except OSError:
            pytest.skip("creating a device node needs root (the containers' case)")
    test = str(letor[1]["test"])
    assert main(["predict", str(model), test, "-o", str(nodes["null"])]) == 0
    assert (
        main(["train", str(letor[1]["train"]), "--rounds", "2", "-q", "-o", str(nodes["null"])])
        == 0
    )
    capsys.readouterr()
    assert main(["predict", str(model), test, "-o", str(nodes["full"])]) == 1
    line = _one_line_error(capsys.readouterr().err)
    assert f"cannot write {str(nodes['full'])!r}: No space left on device" in line
    for node in nodes.values():
        assert stat.S_ISCHR(os.stat(node).st_mode)
