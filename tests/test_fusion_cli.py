"""The ``rankboost fuse`` command line (rankboost.fusion.cli)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rankboost.cli import UsageError
from rankboost.fusion import RankFusion, read_run, write_qrels, write_run
from rankboost.fusion.cli import register, run
from test_fusion import _synthetic

SRC = Path(__file__).resolve().parents[1] / "src"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rankboost")
    register(parser.add_subparsers(dest="command"))
    return parser


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fuse")
    runs, qrels = _synthetic(seed=0, n_queries=20)
    paths = []
    for name, r in runs.items():
        paths.append(str(tmp / f"{name}.run.gz"))
        write_run(paths[-1], r)
    write_qrels(tmp / "qrels.txt", qrels)
    return tmp, paths, str(tmp / "qrels.txt")


def _call(argv: list[str]) -> int:
    return run(_parser().parse_args(argv))


def test_cli_train_apply_evaluate_in_process(files, capsys) -> None:
    tmp, runs, qrels = files
    model = str(tmp / "fusion.json")
    assert (
        _call(["fuse", "train", "--runs", *runs, "--qrels", qrels, "-o", model, "--n-rounds", "15"])
        == 0
    )
    fusion = RankFusion.load(model)
    assert fusion.n_lists_ == 3
    assert fusion.model_.n_rounds == 15
    out = str(tmp / "fused.run")
    assert (
        _call(["fuse", "apply", model, "--runs", *runs, "-o", out, "--depth", "5", "--tag", "fz"])
        == 0
    )
    fused = read_run(out)
    assert fused.rank.max() == 5
    rows, queries = len(fused), len(fused.queries)
    wrote = f"wrote a fused TREC run of {rows} rows, {queries} queries to {out}"
    assert wrote in capsys.readouterr().err  # as predict says what it wrote (issue 26)
    assert Path(out).read_text().split("\n")[0].endswith(" fz")
    capsys.readouterr()
    assert (
        _call(
            [
                "fuse",
                "evaluate",
                model,
                "--runs",
                *runs,
                "--qrels",
                qrels,
                "--metric",
                "ndcg@10",
                "map",
                "--json",
            ]
        )
        == 0
    )
    scores = json.loads(capsys.readouterr().out)
    assert set(scores[model]) == {"ndcg@10", "map"}
    # evaluate run files themselves: one row per file
    assert _call(["fuse", "evaluate", "--runs", *runs, out, "--qrels", qrels]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["run", "ndcg@10", "map"]
    assert len(table) == 6  # header, 4 runs, the conventions line
    assert table[-1].startswith("conventions: gain=exp2")


def test_issue16_cli_apply_matches_run_files_by_name(files, tmp_path: Path, capsys) -> None:
    """fuse apply / evaluate with the run files in another order: the same fused run."""
    tmp, runs, qrels = files
    model = str(tmp_path / "fusion.json")
    assert _call(["fuse", "train", "--runs", *runs, "--qrels", qrels, "-o", model]) == 0
    outs = []
    for i, order in enumerate((runs, runs[::-1], [runs[1], runs[2], runs[0]])):
        outs.append(tmp_path / f"fused{i}.run")
        assert _call(["fuse", "apply", model, "--runs", *order, "-o", str(outs[-1])]) == 0
    assert outs[1].read_bytes() == outs[0].read_bytes()
    assert outs[2].read_bytes() == outs[0].read_bytes()
    # the same files copied to another folder match by file name
    moved = tmp_path / "moved"
    moved.mkdir()
    copies = []
    for p in runs[::-1]:
        copies.append(str(moved / Path(p).name))
        Path(copies[-1]).write_bytes(Path(p).read_bytes())
    out = tmp_path / "fused_moved.run"
    assert _call(["fuse", "apply", model, "--runs", *copies, "-o", str(out)]) == 0
    assert out.read_bytes() == outs[0].read_bytes()
    capsys.readouterr()
    evaluate = ["fuse", "evaluate", model, "--qrels", qrels, "--json", "--runs"]
    assert _call([*evaluate, *runs]) == 0
    assert _call([*evaluate, *runs[::-1]]) == 0
    first, second = capsys.readouterr().out.split("}\n{")
    assert json.loads(first + "}") == json.loads("{" + second)
    # a file the model was not trained on: an error naming it; --by-order takes the order
    other = tmp_path / "other.run.gz"
    other.write_bytes(Path(runs[2]).read_bytes())
    with pytest.raises(ValueError, match=r"unknown \[.*other\.run\.gz'\]"):
        _call(["fuse", "apply", model, "--runs", runs[0], runs[1], str(other), "-o", str(out)])
    argv = ["fuse", "apply", model, "--by-order", "--runs", runs[0], runs[1], str(other)]
    assert _call([*argv, "-o", str(out)]) == 0
    assert out.read_bytes() == outs[0].read_bytes()  # the same data in the trained positions


def test_cli_unconstrained_and_thresholds(files) -> None:
    tmp, runs, qrels = files
    model = str(tmp / "free.json")
    assert (
        _call(
            [
                "fuse",
                "train",
                "--runs",
                *runs,
                "--qrels",
                qrels,
                "-o",
                model,
                "--n-rounds",
                "5",
                "--unconstrained",
                "--thresholds",
                "16",
                "--score-features",
            ]
        )
        == 0
    )
    fusion = RankFusion.load(model)
    assert fusion.positive_cumulative is False
    assert fusion.thresholds == 16
    assert fusion.score_features is True


def test_cli_errors(files, tmp_path: Path) -> None:
    _, runs, qrels = files
    with pytest.raises(SystemExit):  # a usage error: argparse exits with status 2
        _call(
            [
                "fuse",
                "train",
                "--runs",
                *runs,
                "--qrels",
                qrels,
                "-o",
                str(tmp_path / "m.json"),
                "--thresholds",
                "many",
            ]
        )
    with pytest.raises(FileNotFoundError, match="missing.run: no such file"):
        _call(
            [
                "fuse",
                "train",
                "--runs",
                str(tmp_path / "missing.run"),
                "--qrels",
                qrels,
                "-o",
                str(tmp_path / "m.json"),
            ]
        )
    with pytest.raises(FileNotFoundError, match="nomodel.json: no such file"):
        _call(
            [
                "fuse",
                "apply",
                str(tmp_path / "nomodel.json"),
                "--runs",
                *runs,
                "-o",
                str(tmp_path / "f.run"),
            ]
        )
    with pytest.raises(UsageError, match=r"rankboost fuse needs a subcommand"):
        _call(["fuse"])  # no sub-subcommand: a usage error (exit status 2 from main)


@pytest.mark.skipif(
    importlib.util.find_spec("rankboost.cli") is None
    or importlib.util.find_spec("rankboost.__main__") is None,
    reason="rankboost.cli / rankboost.__main__ not written yet",
)
def test_cli_subprocess_round_trip(files, tmp_path: Path) -> None:
    _, runs, qrels = files
    env = {**os.environ, "PYTHONPATH": str(SRC), "NUMBA_NUM_THREADS": "1"}
    model = str(tmp_path / "fusion.json")
    fused = str(tmp_path / "fused.run.gz")

    def rb(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "rankboost", *argv],
            env=env,
            capture_output=True,
            check=False,
            text=True,
            timeout=300,
        )

    done = rb("fuse", "train", "--runs", *runs, "--qrels", qrels, "-o", model, "--n-rounds", "10")
    assert done.returncode == 0, done.stderr
    done = rb("fuse", "apply", model, "--runs", *runs, "-o", fused)
    assert done.returncode == 0, done.stderr
    assert len(read_run(fused).queries) == 20
    done = rb("fuse", "evaluate", model, "--runs", *runs, "--qrels", qrels, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[model]["ndcg@10"] > 0.5
    done = rb("fuse", "apply", model, "--runs", runs[0], "-o", fused)
    assert done.returncode == 1
    assert "rankboost: error: " in done.stderr
    assert "trained on 3 input lists" in done.stderr
