"""Tests for the ``rankboost`` command line (``rankboost.cli``, ``python -m rankboost``).

Round trips train -> predict -> evaluate against the Python API, every error path (exit
status 1 for errors, 2 for usage, one line, never a traceback) and the ``demo`` command.
"""

from __future__ import annotations

import gzip
import json
import os
import re
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
    flags = ["--query-file", "--valid-query-file"]  # how to give each file's queries (issue 26)
    for line, name, flag in zip(lines, ["t.txt", "v.txt"], flags, strict=True):
        note = f"rankboost: note: {str(tmp_path / name)!r} has no qid: all rows form one query."
        assert line.startswith(note)
        assert f"or {flag} FILE" in line
    one = RankBoostRanker(n_estimators=3).fit(X, y, qid=np.zeros(60))
    np.testing.assert_array_equal(load_model(tmp_path / "m.json").decision_function(X),
                                  one.predict(X))  # fmt: skip
    # one query, one round: counted in the singular (issue 26: "1 queries")
    out = _run("train", str(tmp_path / "t.txt"), "--rounds", "1", "-o", str(tmp_path / "o.json"))
    assert "trained 1 round on 60 rows, 1 query, 3 features" in out.stdout, out.stdout
    res = _run("evaluate", str(tmp_path / "o.json"), str(tmp_path / "t.txt"))
    assert "(1 query, 60 rows, 1 round)" in res.stdout, res.stdout


def test_a_reader_that_closes_the_pipe_ends_the_command_quietly(tmp_path):
    """``rankboost info m.json | head -1``: exit 141 (128 + SIGPIPE), nothing on stderr (it
    ended in "rankboost: error: Broken pipe", issue 26)."""
    X = np.random.default_rng(0).random((30, 3))
    dump_svmlight(tmp_path / "t.txt", X, np.round(2 * X[:, 0]), np.repeat([1, 2, 3], 10))
    assert _run("train", str(tmp_path / "t.txt"), "--rounds", "3", "-q",
                "-o", str(tmp_path / "m.json")).returncode == 0  # fmt: skip
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    try:
        done = subprocess.run(
            [sys.executable, "-m", "rankboost", "info", str(tmp_path / "m.json")],
            stdout=write, stderr=subprocess.PIPE, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip
    finally:
        os.close(write)
    assert done.returncode == 141, done.stderr
    assert done.stderr == ""


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
    (tmp / "inf.txt").write_text("1 qid:1 1:0.5\n0 qid:1 1:0.1 3:inf\n")  # the reader takes it
    (tmp / "nan_label.txt").write_text("1 qid:1 1:0.5\n0 qid:1 1:0.1\nnan qid:1 1:0.2\n")
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
    (  # the command's own checks (it no longer imports scikit-learn's)
        ["train", "{tmp}/inf.txt", "-o", "{tmp}/x.json"],
        1,
        r"X of training file '.*inf.txt' contains infinity \(first at row 1, column 2\)",
    ),
    (
        ["train", "{tmp}/nan_label.txt", "-o", "{tmp}/x.json"],
        1,
        r"y of training file '.*nan_label.txt' contains NaN or infinity \(first at row 2\)",
    ),
    (
        ["train", "{train}", "--valid", "{tmp}/inf.txt", "-o", "{tmp}/x.json"],
        1,
        r"X of validation file '.*inf.txt' contains infinity",
    ),
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
    """Issue 21 item 4, issue 45 item 4: the command modules of ``rankboost/cli/`` share its
    ``_`` modules; no library module imports the CLI (only ``python -m rankboost`` does), so
    no import circle goes through it; ``cli/_common`` imports the metrics' parser and the
    install hint, leaves; no command module imports another (the ``fuse`` group its own
    subcommands), and no shared module imports a command."""
    src = Path(rankboost.__file__).parent
    importers = sorted(
        str(p.relative_to(src))
        for p in src.rglob("*.py")
        if any(n == "rankboost.cli" or n.startswith("rankboost.cli.") for n in _package_imports(p))
        and p.parent.name != "cli"
    )
    assert importers == ["__main__.py"]
    common = _package_imports(src / "cli" / "_common.py")
    allowed = {"rankboost.metrics", "rankboost.metrics.parse_metric"}
    allowed |= {"rankboost._compat", "rankboost._compat.install_hint"}  # missing packages
    assert common <= allowed, common
    assert _package_imports(src / "_atomic.py") == set()  # a leaf: no circle through it
    assert _package_imports(src / "_compat.py") == set()
    modules = sorted(p.stem for p in (src / "cli").glob("*.py") if p.stem != "__init__")
    commands = [m for m in modules if not m.startswith("_")]
    assert {"train", "predict", "evaluate", "info", "demo", "fuse", "convert"} <= set(commands)
    for name in modules:
        imported = _package_imports(src / "cli" / f"{name}.py")
        others = {f"rankboost.cli.{c}" for c in commands if c != name}
        if name == "fuse":  # the group registers its subcommands
            others = {o for o in others if not o.startswith("rankboost.cli.fuse_")}
        assert not imported & others, (name, imported & others)


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


# ---------------------------------------------------------------------- issue 26, frictions


def test_issue26_user_text_drops_the_python_caller_and_keeps_file_names():
    """The library's messages start with their Python caller (``RankFusion.fit:``); the
    command line drops it, and only it: a file name or a word before a colon stays."""
    import rankboost.fusion  # noqa: F401 - the callers are looked up in imported modules
    from rankboost.cli._common import user_text

    assert user_text("RankFusion.decision_function: the model was trained on 3") == (
        "the model was trained on 3"
    )
    assert user_text("cannot read 'd.txt': load_svmlight: query_file='g' was given") == (
        "cannot read 'd.txt': query_file='g' was given"
    )
    for kept in (
        "lin.json: no such file",
        "Lin.json: no such file",
        "runs.txt:1: a TREC run line has 6 columns",
        "note: the model has 3 rounds",
        "qrels: 156 judged queries are in none of the runs",
        "RankFusion.no_such_method: x",
    ):
        assert user_text(kept) == kept


def _write_runs(tmp: Path) -> tuple[list[str], str]:
    from rankboost.fusion import write_qrels, write_run
    from test_fusion import _synthetic

    runs, qrels = _synthetic(seed=26, n_queries=8, n_docs=12)
    paths = []
    for name, run in runs.items():
        paths.append(str(tmp / f"{name}.run"))
        write_run(paths[-1], run)
    write_qrels(tmp / "qrels.txt", qrels)
    return paths, str(tmp / "qrels.txt")


def test_issue26_cli_errors_name_no_python_internals(letor, tmp_path, capsys):
    """``rankboost fuse apply`` said ``RankFusion.decision_function: ...``, ``fuse train
    --family linear`` ``LinearFusion.fit: ...``, ``train --query-file`` on a file with qid
    ``load_svmlight: query_file=... pass query_file=None``: Python, not the command line."""
    runs, qrels = _write_runs(tmp_path)
    fusion = str(tmp_path / "f.json")
    train = ["fuse", "train", "--family", "boost",
             "--runs", *runs, "--qrels", qrels, "--rounds", "3", "-o", fusion]  # fmt: skip
    assert main(train) == 0
    capsys.readouterr()
    lines = []
    assert main(["fuse", "apply", fusion, "--runs", runs[0], "-o", str(tmp_path / "o")]) == 1
    lines.append(_one_line_error(capsys.readouterr().err))
    assert "trained on 3 input lists" in lines[-1]
    # a run of other queries than the others: the linear family's check
    (tmp_path / "few.run").write_text("q0 Q0 d1 1 2.0 t\nq0 Q0 d2 2 1.0 t\n")
    argv = ["fuse", "train", "--family", "linear", "--runs", runs[0], str(tmp_path / "few.run")]
    assert main([*argv, "--qrels", qrels, "-o", str(tmp_path / "lin.json")]) == 1
    lines.append(_one_line_error(capsys.readouterr().err))
    assert "cover different queries" in lines[-1]
    _, paths = letor
    (tmp_path / "groups.txt").write_text("10\n" * 20)
    argv = ["train", str(paths["train"]), "--query-file", str(tmp_path / "groups.txt")]
    assert main([*argv, "-q", "-o", str(tmp_path / "m.json")]) == 1
    lines.append(_one_line_error(capsys.readouterr().err))
    assert "has 'qid:' on its lines" in lines[-1]
    assert "drop --query-file" in lines[-1]
    for line in lines:
        for internal in ("RankFusion", "LinearFusion", "load_svmlight", "query_file=", ".fit"):
            assert internal not in line, line
        assert "decision_function" not in line, line


def _without_qid(tmp: Path, src: Path, name: str) -> tuple[Path, Path, np.ndarray]:
    """``src`` written again without qid, and its LightGBM group file under another name."""
    X, y, qid = load_svmlight(src)
    dump_svmlight(tmp / name, X, y, None)
    sizes = np.unique(qid, return_counts=True)[1]
    groups = tmp / f"{name}-groups.txt"
    groups.write_text("".join(f"{n}\n" for n in sizes))
    return tmp / name, groups, qid


def test_issue26_valid_file_groups_and_notes(letor, tmp_path, capsys):
    """A --valid file without qid: the note named --query-file, which gives the training
    file's groups, not its: --valid-query-file does, and the note names it."""
    _, paths = letor
    vali, groups, _ = _without_qid(tmp_path, paths["valid"], "vali.txt")
    head = ["train", str(paths["train"]), "--rounds", "4", "-q", "--metric", "map"]
    assert main([*head, "--valid", str(vali), "-o", str(tmp_path / "a.json")]) == 0
    err = capsys.readouterr().err
    assert "'vali.txt' has no qid" not in err  # the path as given
    assert f"{str(vali)!r} has no qid: all rows form one query" in err
    assert "--valid-query-file FILE" in err
    assert "vali.txt.query is found by itself" in err
    argv = [*head, "--valid", str(vali), "--valid-query-file", str(groups)]
    assert main([*argv, "-o", str(tmp_path / "b.json")]) == 0
    grouped = capsys.readouterr()
    assert "no qid" not in grouped.err
    assert main([*head, "--valid", str(paths["valid"]), "-o", str(tmp_path / "c.json")]) == 0
    with_qid = capsys.readouterr()
    assert grouped.out.splitlines()[-1] == with_qid.out.splitlines()[-1]  # the same metric
    b, c = load_model(tmp_path / "b.json"), load_model(tmp_path / "c.json")
    assert b.evals_result == c.evals_result
    # without --valid: a usage error
    try:
        status = main([*head, "--valid-query-file", str(groups), "-o", str(tmp_path / "d.json")])
    except SystemExit as exc:  # pragma: no cover - argparse
        status = int(exc.code)
    assert status == 2
    assert "pass --valid FILE" in _one_line_error(capsys.readouterr().err)


def test_issue26_trec_run_of_a_file_without_qid_says_so(letor, bad_files, tmp_path, capsys):
    """``predict --format trec`` ranks per query: a file without qid was silently one query."""
    _, paths = letor
    _, model = bad_files
    test = tmp_path / "test.txt"
    X, y, qid = load_svmlight(paths["test"])
    dump_svmlight(test, X, y, None)
    argv = ["predict", str(model), str(test), "--format", "trec", "-o", str(tmp_path / "a.run")]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "has no qid: all rows form one query" in err
    assert "--query-file FILE" in err
    sizes = np.unique(qid, return_counts=True)[1]
    (tmp_path / "test.txt.query").write_text("".join(f"{n}\n" for n in sizes))  # found
    argv[-1] = str(tmp_path / "b.run")
    assert main(argv) == 0
    assert "no qid" not in capsys.readouterr().err
    queries = {line.split()[0] for line in (tmp_path / "b.run").read_text().splitlines()}
    assert len(queries) == len(sizes)


def test_issue26_evaluate_says_a_missing_file_before_importing_the_metrics(tmp_path):
    """Errors paid the start-up too: ``evaluate`` imported numba and scipy (the metric
    kernels) before saying that its data file does not exist."""
    code = (
        "import contextlib, io, sys\n"
        "from rankboost.cli import main\n"
        "with contextlib.redirect_stderr(io.StringIO()) as err:\n"
        f"    status = main(['evaluate', 'm.json', {str(tmp_path / 'none.txt')!r}])\n"
        "print(status, sorted(m for m in ('numba', 'scipy', 'sklearn') if m in sys.modules))\n"
        "print(err.getvalue().strip())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    status, heavy = done.stdout.splitlines()[0].split(" ", 1)
    assert status == "1"
    assert "does not exist" in done.stdout
    assert heavy == "[]"


def test_issue26_a_fusion_model_given_to_a_ranking_command_says_what_it_is(letor, tmp_path, capsys):
    """The mirror of ``fuse apply``'s hint for a ranking model: ``predict``, ``evaluate`` and
    ``info`` given a model of ``rankboost fuse train`` (either family) said only "not a
    rankboost model ... Pass a model written by 'rankboost train'"."""
    runs, qrels = _write_runs(tmp_path)
    models = {"": tmp_path / "f.json", " --family linear": tmp_path / "lin.json"}
    head = ["fuse", "train", "--family", "boost", "--runs", *runs, "--qrels", qrels]
    assert main([*head, "--rounds", "3", "-o", str(models[""])]) == 0
    assert main([*head, "--family", "linear", "-o", str(models[" --family linear"])]) == 0
    capsys.readouterr()
    test = str(letor[1]["test"])
    for family, model in models.items():
        for argv in (["predict", str(model), test], ["evaluate", str(model), test]):
            assert main(argv) == 1
            line = _one_line_error(capsys.readouterr().err)
            assert f"{str(model)!r} is a fusion model from 'rankboost fuse train{family}'" in line
            assert f"'rankboost fuse apply {model} --runs RUN ...'" in line
            assert ("'rankboost fuse export'" in line) == bool(family)
    assert main(["info", str(models[" --family linear"])]) == 0  # its weights (issue 38.4)
    assert "linear fusion model: " in capsys.readouterr().out
    assert main(["info", str(models[""])]) == 0  # info describes the rank-feature family


@pytest.mark.parametrize(
    ("groups", "match"),
    [
        ("10\n10\n", r"group sizes summing to 20, but '.*test.txt' has 100 rows; they must match"),
        ("50\n-1\n51\n", r"line 2: expected a positive integer group size; got '-1'"),
        ("50\n25.5\n24.5\n", r"line 2: expected a positive integer group size; got '25.5'"),
        ("", r"contains no group sizes"),
        (None, r"Query file '.*nothing.txt' does not exist .* Check the --query-file path"),
    ],
)
@pytest.mark.parametrize("command", ["train", "predict", "evaluate"])
def test_issue26_bad_group_files_are_one_clear_error(
    letor, bad_files, tmp_path, capsys, command, groups, match
):
    """``--query-file`` (LightGBM's group file) on the three commands that read data: a file
    whose sizes do not add up to the rows, a negative or fractional size, an empty or a
    missing file is one line naming the group file (and line), exit 1, nothing written."""
    _, paths = letor
    _, model = bad_files
    data, _, _ = _without_qid(tmp_path, paths["test"], "test.txt")
    group_file = tmp_path / ("nothing.txt" if groups is None else "groups.txt")
    if groups is not None:
        group_file.write_text(groups)
    out = tmp_path / "out"
    argv = {
        "train": ["train", str(data), "-q", "--rounds", "2", "-o", str(out)],
        "predict": ["predict", str(model), str(data), "--format", "trec", "-o", str(out)],
        "evaluate": ["evaluate", str(model), str(data)],
    }[command]
    assert main([*argv, "--query-file", str(group_file)]) == 1
    line = _one_line_error(capsys.readouterr().err)
    assert re.search(match, line), line
    assert not out.exists()


def test_issue26_a_group_file_named_data_query_is_found_by_train(letor, tmp_path, capsys):
    """LightGBM's layout (``rank.train`` + ``rank.train.query``): train finds the groups."""
    _, paths = letor
    data, groups, qid = _without_qid(tmp_path, paths["train"], "rank.train")
    groups.rename(tmp_path / "rank.train.query")
    assert main(["train", str(data), "-q", "--rounds", "3", "-o", str(tmp_path / "m.json")]) == 0
    out, err = capsys.readouterr()
    assert "no qid" not in err
    assert f"{len(np.unique(qid))} queries" in out


def test_issue26_fuse_without_a_subcommand_names_every_subcommand(capsys):
    """``rankboost fuse`` listed train, apply and evaluate, not export."""
    assert main(["fuse"]) == 2
    line = _one_line_error(capsys.readouterr().err)
    choices = "train, apply, evaluate or export"
    assert f"rankboost fuse needs a subcommand: {choices}" in line
    from rankboost.cli import _build_parser

    with pytest.raises(SystemExit):
        _build_parser().parse_args(["fuse", "--help"])
    listed = capsys.readouterr().out.split("{", 1)[1].split("}", 1)[0].split(",")
    assert sorted(listed) == sorted(choices.replace(" or ", ", ").split(", "))


def test_issue26_training_parameters_are_named_as_options(letor, tmp_path, capsys):
    """rankboost.params' messages serve the API and the command line: ``alpha='exact'``,
    ``weak_ranker='feature'`` and ``positive_cumulative=True`` read as the options."""
    from rankboost.cli._common import user_text

    assert user_text("x (positive_cumulative=False, tol=1e-09, feedback='layered')") == (
        "x (--no-positive-cumulative, --tol 1e-09, --feedback layered)"
    )
    assert user_text("my_alpha='r' and alpha_=2") == "my_alpha='r' and alpha_=2"
    _, paths = letor
    argv = ["train", str(paths["train"]), "-q", "-o", str(tmp_path / "m.json")]
    assert main([*argv, "--alpha", "exact", "--weak-ranker", "feature"]) == 1
    line = _one_line_error(capsys.readouterr().err)
    assert "--alpha exact needs binary weak rankers (--weak-ranker threshold)" in line
    assert "=" not in line
    assert main([*argv, "--alpha", "rbplus", "--positive-cumulative"]) == 1
    line = _one_line_error(capsys.readouterr().err)
    assert "--alpha rbplus with --positive-cumulative is not defined" in line


# ---------------------------------------------------------------------- issue 38: frictions


def _status(argv: list[str]) -> int:
    """The exit status of ``main(argv)``, argparse's usage errors (SystemExit) included."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


@pytest.mark.parametrize(
    ("argv", "meant", "see"),
    [
        (["trian", "x.txt"], "'train'", "rankboost --help"),
        (["predcit", "m.json", "x.txt"], "'predict'", "rankboost --help"),
        (["train", "{train}", "--vaild", "v.txt"], "'--valid'", "rankboost train --help"),
        (["predict", "m.json", "d.txt", "--fromat", "trec"], "'--format'", "predict --help"),
        (["info", "m.json", "--hed=3"], "'--head'", "rankboost info --help"),
        (["fuse", "trian"], "'train'", "rankboost fuse --help"),
        (
            ["fuse", "train", "--runs", "a", "--qrels", "q", "-o", "m", "--famly", "linear"],
            "'--family'",
            "rankboost fuse train --help",
        ),
        (["datasets", "wrte", "mq2008", "d"], "'write'", "rankboost datasets --help"),
    ],
)
def test_issue38_typos_get_did_you_mean(letor, capsys, argv, meant, see):
    """A mistyped command or option: status 2, the name meant and the help of its command."""
    args = [a.format(train=letor[1]["train"]) for a in argv]
    assert _status(args) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert f"(did you mean {meant}?)" in line
    assert f"{see}')" in line


def test_issue38_no_suggestion_for_a_word_far_from_every_name(capsys):
    assert _status(["xyzzy"]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert "invalid choice: 'xyzzy'" in line
    assert "did you mean" not in line


def test_issue38_long_error_lines_are_cut_saying_how_much(tmp_path, capsys):
    """A 1 KB message keeps its start and its end (what to do) and says what was cut."""
    from rankboost.cli._common import MAX_ERROR_CHARS

    missing = tmp_path.joinpath(*["d" * 100] * 12, "m.json")  # named twice in the message
    assert main(["info", str(missing)]) == 1
    line = _one_line_error(capsys.readouterr().err)
    cut = re.search(r"\.\.\. \[(\d+) characters cut\] \.\.\.", line)
    assert cut is not None, line
    assert len(line) <= len("rankboost: error: ") + MAX_ERROR_CHARS + len(cut.group(0))
    assert line.startswith(f"rankboost: error: model file '{tmp_path}")
    assert line.endswith("m.json'.")  # the fix, 'train one with ... -o PATH', ends it
    full = f"model file {str(missing)!r} does not exist; train one with 'rankboost train DATA -o"
    assert int(cut.group(1)) == len(f"{full} {str(missing)}'.") - MAX_ERROR_CHARS


WRONG_FILES = {
    # name: (content, what the message says it looks like)
    "u.data": ("196\t242\t3\t881250949\n186\t302\t3\t891717742\n", "MovieLens ratings"),
    "ratings.dat": ("1::1193::5::978300760\n", "MovieLens ratings"),
    "ratings.csv": ("userId,movieId,rating,timestamp\n1,2,3.5,1112486027\n", "MovieLens"),
    "qrels.txt": ("101 0 GX000-00-0000000 1\n101 0 GX000-01-0000000 0\n", "TREC qrels"),
    "a.run": ("101 Q0 GX000-00-0000000 1 2.5 bm25\n", "a TREC run"),
    "x.csv": ("f1,f2,label\n0.1,0.2,1\n", "a CSV file"),
    "clicks.tsv": ("qid\tdocid\tposition\tclick\n1\tD1\t1\t0\n", "a click log"),
    "other.json": ('{"hello": 1}\n', "a JSON file"),
}


@pytest.fixture(scope="module")
def wrong_files(tmp_path_factory, bad_files):
    tmp = tmp_path_factory.mktemp("wrong")
    for name, (content, _) in WRONG_FILES.items():
        (tmp / name).write_text(content)
    return tmp, bad_files[1]


@pytest.mark.parametrize("name", [*WRONG_FILES, "model"])
def test_issue38_a_wrong_file_type_says_the_format_and_what_it_looks_like(
    wrong_files, capsys, tmp_path, name
):
    """``train`` given another kind of file: the guess, the SVMlight line expected, status 1."""
    tmp, model = wrong_files
    path = model if name == "model" else tmp / name
    looks = "a rankboost model (JSON)" if name == "model" else WRONG_FILES[name][1]
    assert main(["train", str(path), "-o", str(tmp_path / "m.json"), "-q"]) == 1
    line = _one_line_error(capsys.readouterr().err)
    assert f"training file {str(path)!r} looks like {looks}" in line
    assert "SVMlight/LETOR lines such as '2 qid:10 1:0.5 2:0.1 #docid = D'" in line
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("name", ["u.data", "qrels.txt", "a.run", "data"])
def test_issue38_a_wrong_file_as_model_says_what_it_looks_like(wrong_files, letor, capsys, name):
    tmp, _ = wrong_files
    data = letor[1]["train"]
    path = data if name == "data" else tmp / name
    for argv in (["predict", str(path), str(data)], ["info", str(path)]):
        assert main(argv) == 1
        line = _one_line_error(capsys.readouterr().err)
        assert f"model file {str(path)!r} looks like " in line
        assert "not a model (the JSON file 'rankboost train' writes)" in line
    if name == "data":  # the arguments swapped
        assert "an SVMlight/LETOR data file" in line
        assert "check the argument order" in line


def test_issue38_malformed_data_states_the_expected_format(bad_files, capsys, tmp_path):
    tmp, _ = bad_files
    assert main(["train", str(tmp / "malformed.txt"), "-o", str(tmp_path / "m.json")]) == 1
    line = _one_line_error(capsys.readouterr().err)
    assert "line 2" in line
    assert "Expected SVMlight/LETOR lines such as '2 qid:10 1:0.5 2:0.1 #docid = D'" in line


def test_issue38_plot_of_train_and_info(letor, tmp_path, capsys):
    """``train --valid --plot`` and ``info --plot``: the learning curve, a real PNG."""
    pytest.importorskip("matplotlib")
    _, paths = letor
    model, png = tmp_path / "m.json", tmp_path / "curve.png"
    argv = ["train", str(paths["train"]), "--valid", str(paths["valid"]), "--rounds", "4"]
    assert main([*argv, "-q", "-o", str(model), "--plot", str(png)]) == 0
    assert f"wrote the plot to {png}" in capsys.readouterr().err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = tmp_path / "bound.svg"
    assert main(["info", str(model), "--plot", str(svg), "--head", "1"]) == 0
    out = capsys.readouterr().out
    assert "rounds: 4" in out
    text = svg.read_text()
    assert "<svg" in text
    assert "bound prod Z_t" in text
    assert "ndcg@10" in text  # the validation panel of a model from train --valid


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "{tmp}/missing.txt", "-o", "{tmp}/m.json", "--plot", "{tmp}/p.png"],
        ["info", "{tmp}/missing.json", "--plot", "{tmp}/p.png"],
        ["clicks", "propensity", "{tmp}/missing.tsv", "--plot", "{tmp}/p.png"],
    ],
)
def test_issue38_plot_without_matplotlib_is_a_usage_error_before_the_work(
    tmp_path, capsys, monkeypatch, argv
):
    """Without matplotlib, ``--plot`` is refused first (status 2, the install lines); the
    missing input is not even looked at. ``sys.modules[name] = None`` is how Python marks a
    package as not importable."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert _status([a.format(tmp=tmp_path) for a in argv]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert "--plot needs the optional package 'matplotlib'" in line
    assert "pip install 'rankboost[plot]'" in line
    assert ".venv/bin/pip install -e '.[plot]'" in line
    assert list(tmp_path.iterdir()) == []


def test_issue38_plot_to_a_file_type_matplotlib_cannot_write(letor, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    _, paths = letor
    argv = ["train", str(paths["train"]), "-o", str(tmp_path / "m.json"), "-q"]
    assert main([*argv, "--plot", str(tmp_path / "curve.xyz")]) == 2
    assert "matplotlib cannot write .xyz files" in _one_line_error(capsys.readouterr().err)
    assert list(tmp_path.iterdir()) == []
