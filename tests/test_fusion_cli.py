"""The ``rankboost fuse`` command line (rankboost.cli.fuse and its subcommand modules)."""

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
from rankboost.cli.fuse import register, run
from rankboost.fusion import Qrels, RankFusion, Run, read_run, write_qrels, write_run
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
    argv = ["fuse", "train", "--family", "boost",
            "--runs", *runs, "--qrels", qrels, "-o", model, "--n-rounds", "15"]  # fmt: skip
    assert _call(argv) == 0
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
    assert _call(["fuse", "train", "--family", "boost",
                  "--runs", *runs, "--qrels", qrels, "-o", model]) == 0  # fmt: skip
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
                "--family",
                "boost",
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

    done = rb("fuse", "train", "--family", "boost",
              "--runs", *runs, "--qrels", qrels, "-o", model, "--n-rounds", "10")  # fmt: skip
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


# ---------------------------------------------------------------------- issue 39
def _main(argv: list[str], capsys) -> tuple[int, str]:
    from rankboost.cli import main

    capsys.readouterr()
    status = main(argv)
    return status, capsys.readouterr().err


#: A value other than the default for every ``fuse train`` option that takes a free value;
#: options with choices or on/off switches get theirs from the parser. A new option without
#: choices needs an entry here (the test below says so): it cannot slip through untested.
_OTHER_VALUE = {
    "n_rounds": "3",
    "max_rounds": "7",
    "cv_folds": "3",
    "learning_rate": "0.5",
    "thresholds": "4",
    "default": "0",
    "prior_scale": "2",
}
#: Options about the data or the output, tested on their own (not model parameters).
_DATA_OPTIONS = {
    "help", "runs", "qrels", "output", "depth", "common_queries", "quiet", "progress", "plot",
    "clicks", "click_pairs", "propensity", "max_weight",  # tests/test_fusion_clicks.py (issue 51)
    "logged_by", "held_out",  # tests/test_fusion_clicks_logged.py (issue 51)
    "verbose",  # test_issue46_fuse_train_says_the_inner_folds_conventions_with_verbose_only
}  # fmt: skip
#: What every family is trained with here (small, so that the ~40 trainings take seconds).
_BASE = {
    "boost": ["--max-rounds", "5", "--cv-folds", "2"],
    "linear": ["--max-rounds", "5"],
    "auto": ["--max-rounds", "5", "--cv-folds", "2"],
}


def _variants(family: str) -> list[tuple[str, list[str]]]:
    from rankboost.cli.fuse_train import train_options

    out = []
    for dest, action in train_options().items():
        if dest in _DATA_OPTIONS or dest in ("family", "engine"):  # engine: tested on its own
            continue
        if isinstance(action, argparse.BooleanOptionalAction):
            argv = [action.option_strings[1 if action.default else 0]]
        elif action.choices:
            argv = [
                action.option_strings[0],
                next(c for c in action.choices if c != action.default),
            ]
        else:
            assert dest in _OTHER_VALUE, (
                f"fuse train has a new option {action.option_strings[0]}: add a non-default "
                "value for it to _OTHER_VALUE (or, for a data/output option, to _DATA_OPTIONS "
                "with a test of its own)"
            )
            argv = [action.option_strings[0], _OTHER_VALUE[dest]]
        out.append((dest, argv))
    return out


@pytest.mark.parametrize("family", ["boost", "linear", "auto"])
def test_issue39_every_fuse_train_option_changes_the_model_or_is_refused(
    files, tmp_path, capsys, family
):
    """Generated from the parser: each option, given a non-default value, either changes the
    saved model file or is refused as a usage error naming the option and the family. Before
    the fix --family linear ignored --prior, --prior-scale, --learning-rate, --rank-feature,
    --thresholds, ... (byte-identical models, exit 0)."""
    from rankboost.cli.fuse_train import train_options

    variants = _variants(family)
    # the options left out are exactly the data/output ones (each tested on its own)
    assert set(train_options()) - {d for d, _ in variants} == _DATA_OPTIONS | {"family", "engine"}
    _, runs, qrels = files
    head = ["fuse", "train", "--runs", *runs, "--qrels", qrels, "--family", family, *_BASE[family]]
    base = tmp_path / "base.json"
    assert _main([*head, "-o", str(base)], capsys)[0] == 0
    used, refused = [], []
    for dest, argv in variants:
        out = tmp_path / f"{dest}.json"
        status, err = _main([*head, *argv, "-o", str(out)], capsys)
        if status == 0:
            assert out.read_bytes() != base.read_bytes(), f"{argv} was ignored by --family {family}"
            used.append(dest)
        else:
            line = err.strip()
            assert status == 2, err
            assert "\n" not in line, err
            assert line.startswith("rankboost: error: "), err
            assert argv[0] in line, line
            assert f"--family {family}" in line, line
            assert not out.exists()
            refused.append(dest)
    if family == "linear":
        assert sorted(used) == sorted(
            ["normalizer", "prior_scale", "n_rounds", "max_rounds", "learning_rate", "cv_folds"]
        )
    elif family == "auto":  # before: --learning-rate, --thresholds, ... ignored (exit 0)
        assert sorted(used) == ["cv_folds", "max_rounds"]
    else:
        assert refused == ["normalizer", "prior_scale"]  # --prior-scale needs --prior


@pytest.mark.parametrize(
    "options",
    [
        ["--prior-scale", "0"],
        ["--prior-scale", "3"],
        ["--learning-rate", "0.9", "--max-rounds", "20"],
        ["--rounds", "4", "--cv-folds", "3", "--normalizer", "rrf"],
    ],
)
def test_issue39_fuse_train_linear_is_the_python_model(files, tmp_path, capsys, options) -> None:
    """fuse train --family linear builds LinearFusion with every option given (it dropped
    --prior-scale, --learning-rate and --max-rounds, and wrote the default model)."""
    from rankboost.fusion import read_qrels, read_runs
    from rankboost.fusion.linear import LinearFusion

    _, runs, qrels = files
    out = tmp_path / "lin.json"
    argv = ["fuse", "train", "--family", "linear", "--runs", *runs, "--qrels", qrels, *options]
    assert _main([*argv, "-o", str(out)], capsys)[0] == 0
    names = {"--prior-scale": "prior_scale", "--learning-rate": "learning_rate",
             "--max-rounds": "max_rounds", "--rounds": "n_rounds", "--cv-folds": "cv_folds",
             "--normalizer": "normalizer"}  # fmt: skip
    kwargs = {}
    for flag, value in zip(options[::2], options[1::2], strict=True):
        kind = str if flag == "--normalizer" else float if "." in value or "scale" in flag else int
        kwargs[names[flag]] = kind(value)
    want = LinearFusion(**kwargs).fit(read_runs(runs), read_qrels(qrels))
    got = LinearFusion.load(out)
    assert got.get_params() == want.get_params()
    assert got.weights_.tolist() == want.weights_.tolist()
    assert (got.prior_scale_, got.n_rounds_) == (want.prior_scale_, want.n_rounds_)


def test_issue39_linear_int_rounds_on_one_document_queries_names_the_prior_scale(
    tmp_path, capsys
) -> None:
    """Queries of one document: --rounds 10 was refused asking for "an int number of rounds";
    the scale (auto) is what the inner folds choose, and --prior-scale makes it train."""
    qs = [f"q{i}" for i in range(8)]  # q3..q7: one document
    a = Run(qs + qs[:3], ["d"] * 8 + ["e"] * 3, [1] * 8 + [2] * 3, name="a")
    b = Run(qs[:3] * 2 + qs[3:], ["d"] * 3 + ["e"] * 3 + ["d"] * 5, [1] * 3 + [2] * 3 + [1] * 5,
            name="b")  # fmt: skip
    write_run(tmp_path / "a.run", a)
    write_run(tmp_path / "b.run", b)
    write_qrels(tmp_path / "q.txt", Qrels(qs[:3] * 2, ["d"] * 3 + ["e"] * 3, [1] * 3 + [0] * 3))
    paths = [str(tmp_path / "a.run"), str(tmp_path / "b.run")]
    argv = ["fuse", "train", "--family", "linear", "--runs", *paths, "--qrels",
            str(tmp_path / "q.txt"), "--rounds", "10"]  # fmt: skip
    status, err = _main([*argv, "-o", str(tmp_path / "m.json")], capsys)
    assert status == 1
    assert "int number of rounds" not in err
    assert "the prior's scale (prior_scale='auto', --prior-scale auto) is chosen by 5-fold" in err
    assert "there are 3" in err
    assert "--prior-scale 1" in err
    assert _main([*argv, "--prior-scale", "1", "-o", str(tmp_path / "m.json")], capsys)[0] == 0


# ---------------------------------------------------------------------- issue 38
def _runs_of_other_queries(tmp_path: Path) -> tuple[list[str], str]:
    """Three runs; 'short' lacks q0 and q1 (as the MQ2008-agg runs of rankboost convert)."""
    runs, qrels = _synthetic(seed=1, n_queries=12)
    paths = []
    for name, r in runs.items():
        if name == "short":
            m = ~((r.qid == "q0") | (r.qid == "q1"))
            r = Run(r.qid[m], r.docid[m], r.rank[m], r.score[m], name=name)
        paths.append(str(tmp_path / f"{name}.run"))
        write_run(paths[-1], r)
    write_qrels(tmp_path / "qrels.txt", qrels)
    return paths, str(tmp_path / "qrels.txt")


def test_issue38_common_queries_cuts_runs_of_other_queries(tmp_path, capsys) -> None:
    """fuse train --family linear on runs of different query sets failed with no way out;
    --common-queries keeps the queries every run covers and says how many it dropped, in
    train, apply, evaluate and export --check-runs."""
    from rankboost.fusion import FusionWarning, read_qrels, read_runs
    from rankboost.fusion.linear import LinearFusion, keep_common_queries

    runs, qrels = _runs_of_other_queries(tmp_path)
    model = str(tmp_path / "lin.json")
    train = ["fuse", "train", "--family", "linear", "--runs", *runs, "--qrels", qrels]
    status, err = _main([*train, "-o", model], capsys)
    assert status == 1
    assert "cover different queries" in err
    assert "--common-queries" in err
    status, err = _main([*train, "--common-queries", "-o", model], capsys)
    assert status == 0, err
    said = "--common-queries kept the 10 queries every run covers and dropped 2 queries (e.g. 'q0')"
    assert f"rankboost fuse train: {said}" in err
    kept, dropped = keep_common_queries(list(read_runs(runs).values()))
    assert dropped == ["q0", "q1"]
    with pytest.warns(FusionWarning, match="2 judged queries are in none of the runs"):
        want = LinearFusion().fit(kept, read_qrels(qrels))
    assert LinearFusion.load(model).weights_.tolist() == want.weights_.tolist()
    out = str(tmp_path / "fused.run")
    status, err = _main(["fuse", "apply", model, "--runs", *runs, "-o", out], capsys)
    assert status == 1
    assert "--common-queries" in err
    status, err = _main(["fuse", "apply", model, "--common-queries", "--runs", *runs, "-o", out],
                        capsys)  # fmt: skip
    assert status == 0
    assert f"rankboost fuse apply: {said}" in err
    assert read_run(out).queries == [f"q{i}" for i in range(2, 12)]
    argv = ["fuse", "evaluate", model, "--common-queries", "--runs", *runs, "--qrels", qrels]
    status, err = _main([*argv, "--json"], capsys)
    assert status == 0
    assert "warning" not in err  # the qrels are cut too: no "judged queries not in the run"
    body = str(tmp_path / "es.json")
    argv = ["fuse", "export", model, "--engine", "elasticsearch", "-o", body, "--check-runs"]
    status, err = _main([*argv, *runs, "--common-queries"], capsys)
    assert status == 0, err
    assert "elasticsearch ranks the 10 queries as fuse apply" in err


def test_issue38_common_queries_of_runs_without_a_common_query(tmp_path, capsys) -> None:
    write_run(tmp_path / "a.run", Run(["q1"], ["d"], [1], name="a"))
    write_run(tmp_path / "b.run", Run(["q2"], ["d"], [1], name="b"))
    write_qrels(tmp_path / "q.txt", Qrels(["q1", "q2"], ["d", "d"], [1, 1]))
    argv = ["fuse", "train", "--family", "linear", "--common-queries", "--qrels",
            str(tmp_path / "q.txt"), "-o", str(tmp_path / "m.json"), "--runs",
            str(tmp_path / "a.run"), str(tmp_path / "b.run")]  # fmt: skip
    status, err = _main(argv, capsys)
    assert status == 1
    assert "the runs share no query (queries per run: 'a.run' 1, 'b.run' 1)" in err.replace(
        str(tmp_path) + "/", ""
    )
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("family", ["boost", "linear"])
def test_issue38_fuse_train_names_the_convention_of_its_held_out_ndcg(files, capsys, family):
    """ "held-out NDCG@10 0.7179" was under another convention than fuse evaluate's default
    (queries without a relevant document skipped, not counted 0): the line names it."""
    tmp, runs, qrels = files
    argv = ["fuse", "train", "--family", family, "--runs", *runs, "--qrels", qrels, "--verbose"]
    status, err = _main([*argv, "--max-rounds", "5", "-o", str(tmp / f"cv_{family}.json")], capsys)
    assert status == 0
    assert "held-out NDCG@10 " in err
    assert "the inner folds' conventions: gain=exp2 (2^rel - 1), discount=log2" in err
    assert "empty=skip (queries without relevant document left out)" in err
    assert "'fuse evaluate' counts a query without relevant document as 0 (--empty zero)" in err


@pytest.mark.parametrize("family", ["boost", "linear", "auto"])
def test_issue46_fuse_train_says_the_inner_folds_conventions_with_verbose_only(
    files, capsys, family
):
    """Issue 46 item 12: the 400-character conventions line followed every ``fuse train``; it
    is printed with ``--verbose`` (once), and an auto model's ``info`` shows it."""
    tmp, runs, qrels = files
    model = str(tmp / f"v_{family}.json")
    argv = ["fuse", "train", "--family", family, "--runs", *runs, "--qrels", qrels]
    argv += ["--max-rounds", "5", "-o", model]
    status, quiet = _main(argv, capsys)
    assert status == 0
    assert "held-out NDCG@10 " in quiet
    assert "conventions" not in quiet
    assert "'fuse evaluate' counts" not in quiet
    status, verbose = _main([*argv, "--verbose"], capsys)
    assert status == 0
    *same, last = verbose.splitlines()
    assert same == quiet.splitlines()  # one line more, the last
    assert last.startswith("rankboost fuse train: the inner folds' conventions: gain=exp2")
    assert "'fuse evaluate' counts a query without relevant document as 0" in last
    if family == "auto":
        from rankboost.cli import main

        assert main(["info", model]) == 0
        out = capsys.readouterr().out
        assert "held-out NDCG@10: the inner folds' conventions: gain=exp2 (2^rel - 1)" in out
        assert "empty=skip (queries without relevant document left out)" in out


def test_issue38_a_model_of_the_wrong_family_says_which_command_takes_it(files, tmp_path, capsys):
    """fuse export given a boost fusion or a ranking model, export given a linear fusion: the
    error names the command for that model; info shows a linear fusion's learned weights."""
    import numpy as np

    import rankboost as rb
    from rankboost.fusion.linear import LinearFusion

    _, runs, qrels = files
    boost, lin = str(tmp_path / "boost.json"), str(tmp_path / "lin.json")
    head = ["fuse", "train", "--family", "boost", "--runs", *runs, "--qrels", qrels]
    assert _main([*head, "--rounds", "3", "-o", boost], capsys)[0] == 0
    assert _main([*head, "--family", "linear", "-o", lin], capsys)[0] == 0
    ranking = str(tmp_path / "ranking.json")
    X = np.arange(12.0).reshape(6, 2)
    rb.train(X, rb.LayeredFeedback([0, 1, 2] * 2, [0, 0, 0, 1, 1, 1]), 2).save(ranking)
    out = str(tmp_path / "es.json")
    for model, says in (
        (boost, f"'rankboost export {boost} --format es-xgboost -o OUT'"),
        (ranking, "is a ranking model of 'rankboost train', not a fusion model"),
    ):
        status, err = _main(["fuse", "export", model, "--engine", "elasticsearch", "-o", out],
                            capsys)  # fmt: skip
        assert status == 1
        assert says in err
        assert "'rankboost fuse train --family linear'" in err
    status, err = _main(["export", lin, "--format", "lightgbm", "-o", str(tmp_path / "m.txt")],
                        capsys)  # fmt: skip
    assert status == 1
    assert f"'rankboost fuse export {lin} --engine elasticsearch -o OUT'" in err
    from rankboost.cli import main

    assert main(["info", lin, "--top", "0"]) == 0
    shown = capsys.readouterr().out
    fitted = LinearFusion.load(lin)
    assert f"lists: 3, normalizer: minmax, prior scale: {fitted.prior_scale_:g}" in shown
    for j, (name, w) in enumerate(zip(fitted.list_names_, fitted.weights_, strict=True)):
        row = next(line for line in shown.splitlines() if name in line).split()
        assert row[0] == str(j + 1)
        assert float(row[2]) == pytest.approx(float(w), abs=1e-4)


@pytest.mark.parametrize("family", ["boost", "linear"])
def test_issue38_fuse_train_shows_progress_over_its_inner_folds(files, tmp_path, capsys,
                                                                monkeypatch, family):  # fmt: skip
    """fuse train was silent for ~7 s (the inner folds of --rounds auto): a bar over the folds
    (rankboost._compat.progress_bar, tqdm), none with --quiet."""
    import rankboost._compat as compat

    bars: list[dict] = []

    class Bar:
        def __init__(self, **kwargs) -> None:
            self.record = {**kwargs, "updates": 0, "closed": False}
            bars.append(self.record)

        def update(self, n: int = 1) -> None:
            self.record["updates"] += n

        def close(self) -> None:
            self.record["closed"] = True

        def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
            pass

    monkeypatch.setattr(compat, "progress_bar", Bar)
    _, runs, qrels = files
    argv = [
        "fuse",
        "train",
        "--family",
        family,
        "--runs",
        *runs,
        "--qrels",
        qrels,
        "--max-rounds",
        "4",
        "--cv-folds",
        "3",
        "-o",
        str(tmp_path / "m.json"),
        "--progress",
    ]  # fmt: skip  (issue 45: bars off the terminal only when asked)
    assert _main(argv, capsys)[0] == 0
    folds = [b for b in bars if b["desc"].startswith("inner CV folds")]
    assert len(folds) == 1
    assert folds[0]["total"] == 3
    assert folds[0]["updates"] == 3
    assert folds[0]["closed"]
    assert not folds[0]["disable"]
    bars.clear()
    assert _main([*argv, "--quiet"], capsys)[0] == 0
    assert bars
    assert all(b["disable"] for b in bars)


def test_issue38_every_fuse_help_has_examples_that_parse(capsys) -> None:
    """No fuse subcommand's --help had examples; each now has, and every example parses."""
    import shlex

    from rankboost.cli._fuse import EXAMPLES

    parser = _parser()
    for command in ("fuse", "train", "apply", "evaluate", "export"):
        argv = ["fuse", "--help"] if command == "fuse" else ["fuse", command, "--help"]
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
        shown = capsys.readouterr().out
        assert "\nexamples:\n" in shown
        assert EXAMPLES[command] in shown  # as written: no re-wrapping of the lines
        lines = EXAMPLES[command].replace("\\\n", " ").splitlines()
        commands = [shlex.split(x)[1:] for x in lines if x.strip().startswith("rankboost fuse")]
        assert commands
        for example in commands:
            assert parser.parse_args(example).fuse_command == example[1]


def test_issue38_fuse_train_plot(files, tmp_path, capsys, monkeypatch) -> None:
    """fuse train --plot draws the inner CV curve; without a CV or without matplotlib it is a
    usage error before the work (no model written)."""
    pytest.importorskip("matplotlib")
    _, runs, qrels = files
    head = ["fuse", "train", "--family", "boost",
            "--runs", *runs, "--qrels", qrels, "-q", "--max-rounds", "4"]  # fmt: skip
    for family in ("boost", "linear"):
        model, plot = tmp_path / f"{family}.json", tmp_path / f"{family}.png"
        argv = [*head, "--family", family, "-o", str(model), "--plot", str(plot)]
        assert _main(argv, capsys)[0] == 0
        assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    model = tmp_path / "m.json"
    status, err = _main([*head, "--rounds", "3", "-o", str(model), "--plot", "x.png"], capsys)
    assert status == 2
    assert "--plot draws the inner cross-validation curve" in err
    assert "--rounds 3 does not compute" in err
    status, err = _main([*head, "-o", str(model), "--plot", str(tmp_path / "cv.txt")], capsys)
    assert status == 2
    assert "--plot" in err
    assert "(e.g. --plot cv.png)" in err
    status, err = _main([*head, "-o", str(model), "--plot", qrels], capsys)
    assert status == 2  # the plot would overwrite an input
    assert "qrels" in err
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    status, err = _main([*head, "-o", str(model), "--plot", str(tmp_path / "p.png")], capsys)
    assert status == 2
    assert "--plot needs the optional package matplotlib" in err
    assert not model.exists()


@pytest.mark.parametrize("family", ["boost", "linear"])
def test_fuse_train_depth_trains_on_the_top_of_each_run(files, tmp_path, capsys, family) -> None:
    """--depth (a data option of the test above): the model of the runs cut to their top K."""
    from rankboost.fusion import read_qrels, read_runs
    from rankboost.fusion.linear import LinearFusion

    _, runs, qrels = files
    out = tmp_path / "m.json"
    argv = ["fuse", "train", "--family", family, "--runs", *runs, "--qrels", qrels, "-q"]
    assert _main([*argv, "--rounds", "4", "--prior-scale", "1" if family == "linear" else "auto",
                  "--depth", "5", "-o", str(out)], capsys)[0] == 0  # fmt: skip
    cut = read_runs(runs, depth=5)
    if family == "linear":
        want = LinearFusion(n_rounds=4, prior_scale=1.0).fit(cut, read_qrels(qrels))
        assert LinearFusion.load(out).weights_.tolist() == want.weights_.tolist()
    else:
        want = RankFusion(n_rounds=4).fit(cut, read_qrels(qrels))
        assert RankFusion.load(out).to_dict() == json.loads(json.dumps(want.to_dict()))


# ---------------------------------------------------------------------- issue 33 (--family auto)
def test_issue33_auto_max_rounds_is_not_capped(files, tmp_path, capsys) -> None:
    """--family auto silently capped --max-rounds at 100: 150 trained the candidates with 100."""
    from rankboost.fusion.auto import AutoFusion

    _, runs, qrels = files
    out = tmp_path / "m.json"
    argv = ["fuse", "train", "--family", "auto", "--runs", *runs, "--qrels", qrels, "-q"]
    assert _main([*argv, "--cv-folds", "2", "--max-rounds", "150", "-o", str(out)], capsys)[0] == 0
    auto = AutoFusion.load(out)
    assert auto.max_rounds == 150
    assert auto.selection_["params"]["max_rounds"] == 150
    assert auto.model_.max_rounds == 150  # the chosen family was fitted with it


def test_issue33_auto_info_export_progress_and_plot(files, tmp_path, capsys, monkeypatch):
    """rankboost info shows the family --family auto chose, every candidate's held-out NDCG@10
    and the weights; fuse export takes a linear choice; --plot draws the choice; a progress
    bar counts the candidate fits (none with --quiet)."""
    import rankboost._compat as compat
    from rankboost.cli import main
    from rankboost.fusion.auto import AutoFusion

    bars: list[dict] = []

    class Bar:
        def __init__(self, total, disable, desc, stacklevel=2) -> None:
            self.total = total
            self.record = {"total": total, "disable": disable, "desc": desc, "updates": 0}
            bars.append(self.record)

        def update(self, n: int = 1) -> None:
            self.record["updates"] += n

        def close(self) -> None:
            self.record["closed"] = True

        def set_description_str(self, desc: str = "", refresh: bool = True) -> None:
            pass

        def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
            pass

    monkeypatch.setattr(compat, "progress_bar", Bar)
    _, runs, qrels = files
    model, plot = str(tmp_path / "auto.json"), tmp_path / "auto.png"
    argv = [
        "fuse",
        "train",
        "--family",
        "auto",
        "--runs",
        *runs,
        "--qrels",
        qrels,
        "--max-rounds",
        "5",
        "--cv-folds",
        "3",
        "-o",
        model,
        "--progress",
    ]  # fmt: skip  (issue 45: bars off the terminal only when asked)
    has_plot = importlib.util.find_spec("matplotlib") is not None
    status, err = _main([*argv, *(["--plot", str(plot)] if has_plot else [])], capsys)
    assert status == 0, err
    choice = [b for b in bars if b["desc"] == "family choice"]
    assert len(choice) == 1
    assert choice[0]["total"] == choice[0]["updates"] == 3 * 5 + 1
    assert not choice[0]["disable"]
    assert choice[0]["closed"]
    if has_plot:
        assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    auto = AutoFusion.load(model)
    assert f"--family auto chose {auto.family_} (mean held-out NDCG@10 over 3 inner folds" in err
    capsys.readouterr()
    assert main(["info", model, "--top", "0"]) == 0
    shown = capsys.readouterr().out
    assert f"--family auto chose {auto.family_}: linear is kept unless" in shown
    for name, row in auto.selection_["candidates"].items():
        line = next(x for x in shown.splitlines() if x.split()[:1] == [name]).split()
        assert float(line[1]) == pytest.approx(row["mean"], abs=1e-4)
    assert auto.family_ == "linear"  # these runs: one list is good, the others noise
    for name, w in zip(auto.list_names_, auto.model_.weights_, strict=True):
        row = next(x for x in shown.splitlines() if name in x).split()
        assert float(row[2]) == pytest.approx(float(w), abs=1e-4)
    body = tmp_path / "es.json"
    status, err = _main(["fuse", "export", model, "--engine", "elasticsearch", "-o", str(body)],
                        capsys)  # fmt: skip
    assert status == 0, err
    assert "retriever" in body.read_text()
    bars.clear()
    assert _main([*argv, "-q"], capsys)[0] == 0
    assert bars
    assert all(b["disable"] for b in bars)


def test_issue33_auto_on_runs_of_other_queries(tmp_path, capsys) -> None:
    """Runs that miss queries (MQ2008-agg converted by rankboost convert): --family auto
    failed; now it leaves out the weighted sums with a note and chooses among the boosted
    families; fuse export then says the model is not a weighted sum and what to do; with
    --common-queries every family is in the choice."""
    from rankboost.cli import main
    from rankboost.fusion.auto import AutoFusion

    runs, qrels = _runs_of_other_queries(tmp_path)
    model = str(tmp_path / "auto.json")
    argv = ["fuse", "train", "--family", "auto", "--runs", *runs, "--qrels", qrels, "-q",
            "--max-rounds", "5", "--cv-folds", "3"]  # fmt: skip
    status, err = _main([*argv, "-o", model], capsys)
    assert status == 0, err
    assert (
        "rankboost: warning: the runs cover different queries: convex, linear, rrf (weighted "
        "sums that need every run to answer every query) are left out of the family choice "
        "and the fallback is boost; cut the runs to the queries every one covers "
        "(--common-queries) to keep them." in err
    )
    auto = AutoFusion.load(model)
    assert auto.selection_["left_out"] == ["convex", "linear", "rrf"]
    assert auto.family_ in ("boost", "boost_combsum")
    assert "boost is kept unless another family beats it" in err
    fused = str(tmp_path / "fused.run")
    assert _main(["fuse", "apply", model, "--runs", *runs, "-o", fused], capsys)[0] == 0
    assert sorted(read_run(fused).queries) == sorted(f"q{i}" for i in range(12))
    assert main(["info", model]) == 0
    assert "left out (the runs cover different queries): convex, linear, rrf" in (
        capsys.readouterr().out
    )
    status, err = _main(["fuse", "export", model, "--engine", "elasticsearch", "-o",
                         str(tmp_path / "es.json")], capsys)  # fmt: skip
    assert status == 1
    assert f"is a model of 'rankboost fuse train --family auto', which chose {auto.family_}" in err
    assert "train one with 'rankboost fuse train --family linear' on the same runs" in err
    status, err = _main([*argv, "--common-queries", "-o", model], capsys)
    assert status == 0, err
    assert "cover different queries" not in err
    assert AutoFusion.load(model).selection_["left_out"] == []


# ------------------------------------------------------------------ issue 46 --------------
@pytest.mark.parametrize(
    ("options", "family", "cls"),
    [
        (["--rounds", "3"], "boost", "RankFusion"),  # boost's and linear's: boost first
        (["--thresholds", "4", "--max-rounds", "5"], "boost", "RankFusion"),
        (["--normalizer", "rrf", "--max-rounds", "5"], "linear", "LinearFusion"),
    ],
)
def test_issue46_options_of_one_family_without_family_train_that_family(
    files, tmp_path, capsys, options, family, cls
):
    """Scripts written for the earlier default (boost) stopped with exit 2 under the default
    --family auto: the options now choose their family, with one note on stderr, and the
    model is the one --family FAMILY trains with the same options."""
    from rankboost.fusion.auto import AutoFusion
    from rankboost.model_files import load

    _, runs, qrels = files
    head = ["fuse", "train", "--runs", *runs, "--qrels", qrels, "--cv-folds", "2", *options]
    status, err = _main([*head, "-o", str(tmp_path / "a.json")], capsys)
    assert status == 0, err
    notes = [line for line in err.splitlines() if "not of the default --family auto" in line]
    assert len(notes) == 1
    assert notes[0].startswith(f"rankboost fuse train: {options[0]} ")
    assert f"training --family {family} (add --family {family} to say so)" in notes[0]
    assert type(load(tmp_path / "a.json")).__name__ == cls
    assert not isinstance(load(tmp_path / "a.json"), AutoFusion)
    status, err = _main([*head, "--family", family, "-o", str(tmp_path / "b.json")], capsys)
    assert status == 0, err
    assert "not of the default" not in err
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_issue46_explicit_family_auto_and_mixed_families_are_still_refused(files, tmp_path, capsys):
    """--family auto given: a boost option is refused as before; options of two families
    without --family: refused, naming each option's family; no model written."""
    _, runs, qrels = files
    head = ["fuse", "train", "--runs", *runs, "--qrels", qrels, "-o", str(tmp_path / "m.json")]
    status, err = _main([*head, "--family", "auto", "--rounds", "3"], capsys)
    assert status == 2
    assert "--rounds 3 is not an option of --family auto" in err
    status, err = _main([*head, "--thresholds", "4", "--normalizer", "rrf"], capsys)
    assert status == 2
    assert err.count("\n") == 1
    assert err.startswith(
        "rankboost: error: the options --thresholds 4 (--family boost), --normalizer rrf "
        "(--family linear) belong to different families"
    )
    assert not (tmp_path / "m.json").exists()
    # the options auto takes keep auto, with no note
    status, err = _main([*head, "--max-rounds", "3", "--cv-folds", "2"], capsys)
    assert status == 0, err
    assert "not of the default" not in err
    assert "--family auto chose" in err


@pytest.mark.parametrize("engine", ["elasticsearch", "opensearch", "qdrant", "milvus"])
def test_issue46_fuse_train_engine_trains_what_the_engine_serves(files, tmp_path, capsys, engine):
    """--engine NAME trains --family linear with the first normaliser the engine serves
    exactly (read from ENGINES), the same model as --family linear --normalizer N, and the
    engine takes it: one command, not two errors."""
    from rankboost.cli._family import engine_normalizers
    from rankboost.fusion.engines import ENGINES, export_linear
    from rankboost.fusion.linear import LinearFusion

    _, runs, qrels = files
    head = ["fuse", "train", "--runs", *runs, "--qrels", qrels, "--max-rounds", "5"]
    norm = engine_normalizers(engine)[0]
    assert ENGINES[engine].normalizers[norm].how == "exact"
    status, err = _main([*head, "--engine", engine, "-o", str(tmp_path / "e.json")], capsys)
    assert status == 0, err
    assert (f"--engine {engine}: training --family linear --normalizer {norm}, which "
            f"{ENGINES[engine].label} serves exactly") in err  # fmt: skip
    assert f"rankboost fuse export {tmp_path / 'e.json'} --engine {engine}" in err
    model = LinearFusion.load(tmp_path / "e.json")
    assert model.normalizer == norm
    export_linear(model, engine)  # the engine takes it
    argv = [*head, "--family", "linear", "--normalizer", norm, "-o", str(tmp_path / "l.json")]
    assert _main(argv, capsys)[0] == 0
    assert (tmp_path / "e.json").read_bytes() == (tmp_path / "l.json").read_bytes()
    # --family auto with --engine: auto restricted to the family the engine serves
    argv = [*head, "--family", "auto", "--engine", engine, "-o", str(tmp_path / "a.json")]
    assert _main(argv, capsys)[0] == 0
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "e.json").read_bytes()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--engine", "solr"], "argument --engine: invalid choice: 'solr' (choose from"),
        (["--engine", "qdrant", "--family", "boost"],
         "--engine qdrant trains --family linear (Qdrant computes a weighted sum"),
        (["--engine", "qdrant", "--normalizer", "atan"],
         "--normalizer atan is not one that Qdrant serves exactly; --engine qdrant takes dbsf "
         "or rrf"),
        (["--engine", "milvus", "--normalizer", "rrf"],  # only with equal weights
         "--normalizer rrf is not one that Milvus serves exactly; --engine milvus takes atan"),
    ],
)  # fmt: skip
def test_issue46_fuse_train_engine_bad_input(files, tmp_path, capsys, options, message):
    """An unknown engine, a family or a normaliser the engine cannot serve: a usage error
    (exit 2), one line, no model written."""
    _, runs, qrels = files
    out = tmp_path / "m.json"
    argv = ["fuse", "train", "--runs", *runs, "--qrels", qrels, "-o", str(out), *options]
    try:
        status, err = _main(argv, capsys)
    except SystemExit as exc:  # argparse's own errors
        status, err = exc.code, capsys.readouterr().err
    assert status == 2
    assert err.startswith("rankboost: error: ")
    assert err.count("\n") == 1
    assert message in err
    assert not out.exists()


def test_issue46_info_of_an_auto_model_no_engine_serves_names_the_command(files, tmp_path, capsys):
    """An auto model whose family no engine computes (boost) says so in info, with the one
    command that trains one an engine serves; an auto model that chose a min-max family
    names the engines that cannot serve it and the same command."""
    from rankboost.cli import main
    from rankboost.fusion.auto import AutoFusion
    from rankboost.fusion.engines import ENGINES
    from rankboost.fusion.io import read_qrels

    _, runs, qrels = files
    items, judged = [read_run(p) for p in runs], read_qrels(qrels)
    for cands, fallback in ((("boost",), "boost"), (("convex",), "convex")):
        auto = AutoFusion(candidates=cands, fallback=fallback, cv_folds=2, max_rounds=3)
        auto.fit(items, judged).save(tmp_path / f"{fallback}.json")
        capsys.readouterr()
        assert main(["info", str(tmp_path / f"{fallback}.json")]) == 0
        text = capsys.readouterr().out
        assert "train one it serves with 'rankboost fuse train --engine ENGINE'" in text
        if fallback == "boost":
            assert "--family auto chose boost, which no search engine's hybrid query" in text
            assert f"(ENGINE: {', '.join(ENGINES)})" in text
        else:
            assert "for qdrant or milvus, train one it serves" in text
