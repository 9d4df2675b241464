"""Metric conventions on the command line and ``rankboost info`` on fusion models (issue 16).

Item 4: ``rankboost evaluate`` and ``rankboost fuse evaluate`` take ``--gain``,
``--discount``, ``--ties`` and ``--empty`` (the values and defaults of ``rankboost.metrics``),
print the conventions used under the table and in ``--json``, and compute what
``rankboost.metrics.evaluate`` computes with the same options. Item 7: ``rankboost info``
reads a ``RankFusion`` model file and states its feature numbering.
"""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest

from rankboost._conventions import CONVENTIONS, DEFAULTS, FEATURE_NUMBERING, MEANINGS
from rankboost.cli import _build_parser, main
from rankboost.datasets import dump_svmlight, load_svmlight
from rankboost.fusion import RankFusion, read_qrels, read_runs, write_qrels, write_run
from rankboost.fusion.evaluation import evaluate_run
from rankboost.metrics import METRICS, conventions, evaluate
from rankboost.model import load_model
from test_fusion import _synthetic


@pytest.fixture(scope="module")
def letor(tmp_path_factory):
    """A small graded LETOR problem (some queries without a relevant row) and a model."""
    tmp = tmp_path_factory.mktemp("conv")
    rng = np.random.default_rng(1)
    n_q, per_q = 30, 8
    X = np.round(rng.random((n_q * per_q, 4)), 1)  # few distinct values: score ties
    y = np.clip(np.round(2 * X[:, 0] + 0.5 * rng.normal(size=X.shape[0])), 0, 3)
    qid = np.repeat(np.arange(n_q), per_q)
    y[qid < 3] = 0  # queries without relevant document: the empty policy matters
    train, test = tmp / "train.txt", tmp / "test.txt"
    dump_svmlight(train, X[qid < 20], y[qid < 20], qid[qid < 20])
    dump_svmlight(test, X[qid >= 20], y[qid >= 20], qid[qid >= 20] - 20)
    model = tmp / "m.json"
    assert main(["train", str(train), "-o", str(model), "--rounds", "8", "-q"]) == 0
    return tmp, model, test


@pytest.fixture(scope="module")
def fusion_files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fuseconv")
    runs, qrels = _synthetic(seed=0, n_queries=20)
    paths = []
    for name, r in runs.items():
        paths.append(str(tmp / f"{name}.run"))
        write_run(paths[-1], r)
    write_qrels(tmp / "qrels.txt", qrels)
    model = str(tmp / "fusion.json")
    argv = ["fuse", "train", "--family", "boost",
            "--runs", *paths, "--qrels", str(tmp / "qrels.txt")]  # fmt: skip
    assert main([*argv, "-o", model, "--rounds", "12", "--no-missing-features"]) == 0
    return tmp, paths, str(tmp / "qrels.txt"), model


def test_issue16_conventions_are_the_metrics_defaults():
    """One definition: the CLI's defaults are the metric functions' signature defaults."""
    for info in METRICS.values():
        params = inspect.signature(info.func).parameters
        for key in CONVENTIONS:
            if key in params:
                assert params[key].default == DEFAULTS[key], (info.func.__name__, key)
    assert set(DEFAULTS) == set(CONVENTIONS)
    assert all(v in MEANINGS for allowed in CONVENTIONS.values() for v in allowed)
    assert conventions("map") == {"ties": "expected", "empty": "zero"}
    with pytest.raises(ValueError, match=r"'gain' convention .* got 'cubic'"):
        conventions("ndcg", gain="cubic")


@pytest.mark.parametrize("command", [["evaluate", "m.json", "d.txt"], ["fuse", "evaluate"]])
def test_issue16_metric_options_parsed(command):
    extra = ["--runs", "a.run", "--qrels", "q.txt"] if command[0] == "fuse" else []
    parser = _build_parser()
    args = parser.parse_args([*command, *extra])
    assert (args.gain, args.discount, args.ties, args.empty) == (None, None, None, None)
    argv = ["--gain", "linear", "--discount", "letor", "--ties", "pessimistic", "--empty", "skip"]
    args = parser.parse_args([*command, *extra, *argv])
    assert (args.gain, args.discount, args.ties, args.empty) == (
        "linear",
        "letor",
        "pessimistic",
        "skip",
    )


@pytest.mark.parametrize(
    "option", [["--gain", "exp"], ["--discount", "log"], ["--ties", "random"], ["--empty", "0"]]
)
@pytest.mark.parametrize("command", [["evaluate", "m.json", "d.txt"], ["fuse", "evaluate"]])
def test_issue16_bad_convention_exits_2(command, option, capsys):
    extra = ["--runs", "a.run", "--qrels", "q.txt"] if command[0] == "fuse" else []
    with pytest.raises(SystemExit) as info:
        main([*command, *extra, *option])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option[0]}: invalid choice" in err
    assert len(err.strip().splitlines()) == 1


OPTIONS = [
    {},
    {"gain": "linear", "discount": "letor"},
    {"ties": "pessimistic", "empty": "skip"},
    {"ties": "optimistic", "empty": "one", "discount": "letor"},
]


@pytest.mark.parametrize("options", OPTIONS)
def test_issue16_evaluate_equals_metrics_with_same_options(letor, options, capsys):
    tmp, model_path, test = letor
    names = ["ndcg@5", "map", "mrr"]
    argv = ["evaluate", str(model_path), str(test), *(f"--metric={m}" for m in names)]
    flags = [x for k, v in options.items() for x in (f"--{k}", v)]
    assert main([*argv, *flags, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    used = {**DEFAULTS, **options}
    assert got.pop("conventions") == used
    X, y, qid = load_svmlight(test)
    scores = load_model(model_path).decision_function(X)
    assert got == evaluate(y, scores, qid, metrics=names, **used)
    # the table ends with the conventions line
    assert main([*argv, *flags]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith("conventions: ")
    for key, value in used.items():
        assert f"{key}={value} (" in out[-1]
    assert f"{got['map']:.4f}" in "\n".join(out)


def test_issue16_letor_discount_changes_ndcg(letor, capsys):
    """The option is not ignored: LETOR's discount gives another NDCG than log2's."""
    tmp, model_path, test = letor
    argv = ["evaluate", str(model_path), str(test), "--metric", "ndcg@10", "--json"]
    values = []
    for discount in ("log2", "letor"):
        assert main([*argv, "--discount", discount]) == 0
        values.append(json.loads(capsys.readouterr().out)["ndcg@10"])
    assert values[0] != values[1]


def test_issue16_option_no_metric_takes_warns(letor, capsys):
    tmp, model_path, test = letor
    argv = ["evaluate", str(model_path), str(test), "--metric", "map", "--gain", "linear"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "rankboost: warning: --gain does not apply to the metrics map; ignored." in captured.err
    assert captured.out.splitlines()[-1].startswith("conventions: ties=expected")


@pytest.mark.parametrize("options", OPTIONS)
def test_issue16_fuse_evaluate_equals_metrics_with_same_options(fusion_files, options, capsys):
    tmp, runs, qrels, model = fusion_files
    flags = [x for k, v in options.items() for x in (f"--{k}", v)]
    argv = ["fuse", "evaluate", model, "--runs", *runs, "--qrels", qrels]
    assert main([*argv, "--metric", "ndcg@10", "map", *flags, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    used = {**DEFAULTS, **options}
    assert got.pop("conventions") == used
    fused = RankFusion.load(model).fuse(read_runs(runs))
    assert got == {model: evaluate_run(fused, read_qrels(qrels), ["ndcg@10", "map"], **used)}
    # without a model: every run file, and the conventions line under the table
    assert main(["fuse", "evaluate", "--runs", *runs, "--qrels", qrels, *flags]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 + len(runs) + 1
    assert out[-1] == "conventions: " + ", ".join(
        f"{k}={v} ({MEANINGS[v]})" for k, v in used.items()
    )


def test_issue16_info_reads_fusion_model(fusion_files, capsys):
    tmp, runs, qrels, model = fusion_files
    assert main(["info", model, "--top", "0"]) == 0
    out = capsys.readouterr().out
    fusion = RankFusion.load(model)
    assert out.startswith(f"fusion model: {model}\n")
    assert f"lists: 3, features: 3, rounds: {fusion.model_.n_rounds}" in out
    assert FEATURE_NUMBERING in out
    for j, name in enumerate(fusion.list_names_, start=1):
        assert f"{j}  {name}" in out  # the lists table and the importances
    assert "importances per list" in out
    assert "learned step function" in out
    # every used feature's step function is listed, values as model.step_functions()
    steps = fusion.model_.step_functions()
    table = out.split("learned step function")[1].splitlines()[2:]
    for col, step in steps.items():
        rows = [r.split() for r in table if r.split()[0] == str(col + 1)]
        assert len(rows) == step.values.shape[0] + 1  # intervals + missing
        assert [float(r[-1]) for r in rows[:-1]] == pytest.approx(step.values, abs=5e-5)
        assert float(rows[-1][-1]) == pytest.approx(step.missing, abs=5e-5)
    # importances per list: the gains of each list's features
    gain = fusion.model_.feature_importances("gain")
    imp = out.split("importances per list")[1].split("learned step")[0]
    for j, name in enumerate(fusion.list_names_):
        line = next(r for r in imp.splitlines() if f" {name} " in f" {r} ")
        assert float(line.split()[2]) == pytest.approx(gain[j], abs=5e-5)


def test_issue16_info_states_feature_numbering(letor, capsys):
    tmp, model_path, test = letor
    assert main(["info", str(model_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert FEATURE_NUMBERING in out[:5]  # the header, before the tables
    assert "feature = 1-based id" in "\n".join(out)
