"""The registry of model files (issue 45): kinds, the one loader, the one writer, the hints.

Every kind round-trips through :func:`rankboost.model_files.save` / :func:`load` as the
bytes each class's ``save`` wrote before; :func:`kind_of` tells the kinds apart; a file of
another kind is refused with the message of the command that takes it (one table,
:data:`HINTS`: the texts the commands printed, checked here through the command line);
damaged, truncated, empty, non-JSON files, a folder and a missing file give one clear error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import rankboost as rb
from rankboost import model_files
from rankboost.cli import main
from rankboost.fusion import Qrels, RankFusion, Run, write_qrels, write_run
from rankboost.fusion.auto import AutoFusion
from rankboost.fusion.linear import LinearFusion
from rankboost.model import RankBoostModel, load_model
from rankboost.model_files import COMMANDS, FORMATS, HINTS, FileKind, kind_of, refusal


def _runs(n_q: int = 12, seed: int = 0, names: tuple[str, str] = ("a", "b")):
    """Two runs of ``n_q`` queries (8 of 10 documents each) and graded qrels."""
    rng = np.random.default_rng(seed)
    qs, ds, rel, rows = [], [], [], {names[0]: [], names[1]: []}
    for i in range(n_q):
        grades = rng.integers(0, 3, 10)
        for j, g in enumerate(grades):
            qs.append(f"q{i}")
            ds.append(f"d{j}")
            rel.append(int(g))
        for name, noise in zip(names, (1.0, 1.5), strict=True):
            score = grades + rng.normal(scale=noise, size=10)
            rows[name] += [(f"q{i}", f"d{j}", float(score[j])) for j in np.argsort(-score)[:8]]
    runs = [Run.from_scores(*map(list, zip(*r, strict=True)), name=n) for n, r in rows.items()]
    return runs, Qrels(qs, ds, rel)


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    """One saved model of every kind (auto: one choosing a boosted, one a linear family)."""
    tmp = tmp_path_factory.mktemp("models")
    runs, qrels = _runs()
    X = np.random.default_rng(0).normal(size=(60, 3))
    fitted = {
        "ranking": rb.train(X, rb.LayeredFeedback(np.tile([0, 1, 2], 20), np.repeat(range(6), 10)),
                            5),
        "boost": RankFusion(n_rounds=4).fit(runs, qrels),
        "linear": LinearFusion(n_rounds=3, prior_scale=1.0).fit(runs, qrels),
        "auto_linear": AutoFusion(candidates=("convex", "rrf"), fallback="convex",
                                  cv_folds=3).fit(runs, qrels),
        "auto_boost": AutoFusion(candidates=("boost",), fallback="boost", cv_folds=3,
                                 max_rounds=5).fit(runs, qrels),
    }  # fmt: skip
    paths = {}
    for name, model in fitted.items():
        paths[name] = tmp / f"{name}.json"
        model.save(paths[name])
    write_qrels(tmp / "qrels.txt", qrels)
    for r in runs:
        write_run(tmp / f"{r.name}.run", r)
    return paths


CLASSES = {
    "ranking": RankBoostModel,
    "boost": RankFusion,
    "linear": LinearFusion,
    "auto_linear": AutoFusion,
    "auto_boost": AutoFusion,
}
KINDS = {
    "ranking": FileKind("rankboost-model"),
    "boost": FileKind("rankboost-fusion"),
    "linear": FileKind("rankboost-fusion-linear", normalizer="minmax"),
    "auto_linear": FileKind("rankboost-fusion-linear", auto=True, family="convex",
                            normalizer="minmax"),
    "auto_boost": FileKind("rankboost-fusion", auto=True, family="boost"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CLASSES))
def test_every_kind_round_trips_byte_for_byte(models, name, tmp_path) -> None:
    path = models[name]
    assert kind_of(path) == KINDS[name]
    assert kind_of(json.loads(path.read_text())) == KINDS[name]
    model = model_files.load(path)
    assert type(model) is CLASSES[name]
    # the one writer writes the bytes every save wrote: indent 1, no NaN, a final newline
    text = json.dumps(model.to_dict(), indent=1, allow_nan=False) + "\n"
    assert path.read_text() == text
    model_files.save(model, tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()
    assert (
        type(CLASSES[name].load(path) if name != "ranking" else load_model(path)) is (CLASSES[name])
    )


def test_an_auto_file_reads_as_the_family_it_chose(models) -> None:
    """``fuse apply`` and ``fuse export`` take an auto file as its family's model."""
    assert type(model_files.load(models["auto_linear"], command="fuse export")) is LinearFusion
    assert type(model_files.load(models["auto_boost"], command="fuse apply")) is RankFusion
    assert type(LinearFusion.load(models["auto_linear"])) is LinearFusion
    assert type(model_files.load(models["auto_linear"], command="info")) is AutoFusion


# ------------------------------------------------------------------ the hints -----------
@pytest.mark.parametrize(
    ("command", "name", "says"),
    [
        ("fuse export", "boost", "--family boost: steps on the runs' ranks"),
        ("fuse export", "ranking", "is a ranking model of 'rankboost train', not a fusion"),
        ("fuse export", "auto_boost", "'rankboost fuse train --family auto', which chose boost"),
        ("fuse apply", "ranking", "score data with it by 'rankboost predict"),
        ("fuse evaluate", "ranking", "'fuse' needs a model from 'rankboost fuse train'"),
        ("predict", "boost", "is a fusion model from 'rankboost fuse train', not a ranking"),
        ("predict", "linear", "from 'rankboost fuse train --family linear', not a ranking"),
        ("evaluate", "auto_linear", "or export it by 'rankboost fuse export'"),
        ("export", "linear",
         "--engine elasticsearch -o OUT' (or --engine opensearch, --engine lancedb "
         "--text-list TEXT_LIST)"),
        ("export", "auto_linear", "hybrid query with 'rankboost fuse export"),
        ("info --plot", "linear", "has no boosting rounds to plot; leave out --plot"),
    ],
)  # fmt: skip
def test_issue45_a_file_of_another_kind_names_the_command_that_takes_it(
    models, command, name, says
) -> None:
    path = models[name]
    with pytest.raises(ValueError, match=re.escape(says)) as err:
        model_files.load(path, command=command)
    assert str(err.value) == refusal(path, kind_of(path), command)
    assert str(err.value).startswith(repr(str(path)))


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["fuse", "export", "{m}", "--engine", "elasticsearch", "-o", "{o}"], "boost"),
        (["fuse", "export", "{m}", "--engine", "elasticsearch", "-o", "{o}"], "ranking"),
        (["fuse", "export", "{m}", "--engine", "elasticsearch", "-o", "{o}"], "auto_boost"),
        (["fuse", "apply", "{m}", "--runs", "{d}/a.run", "{d}/b.run", "-o", "{o}"], "ranking"),
        (["predict", "{m}", "{d}/a.run"], "boost"),
        (["predict", "{m}", "{d}/a.run"], "linear"),
        (["export", "{m}", "--format", "lightgbm", "-o", "{o}"], "linear"),
        (["info", "{m}", "--plot", "{o}.png"], "linear"),
    ],
)  # fmt: skip
def test_the_hints_are_the_commands_messages(models, argv, name, tmp_path, capsys) -> None:
    """Each hint is what the command says for that file, one ``rankboost: error:`` line."""
    if "--plot" in argv:
        pytest.importorskip("matplotlib")
    path = models[name]
    args = [a.format(m=path, o=tmp_path / "out", d=path.parent) for a in argv]
    status = main(args)
    err = capsys.readouterr().err.strip().splitlines()
    command = " ".join(a for a in argv[:2] if not a.startswith("{"))
    command = "info --plot" if argv[0] == "info" else command
    assert status in (1, 2)
    assert err[-1] == f"rankboost: error: {refusal(path, kind_of(path), command)}", err


def test_the_export_hint_names_the_engine_of_the_normaliser() -> None:
    for norm, engine in (("dbsf", "qdrant"), ("atan", "milvus")):
        text = refusal("m.json", FileKind("rankboost-fusion-linear", normalizer=norm), "export")
        assert f"'rankboost fuse export m.json --engine {engine} -o OUT --vectors VECTORS'." in text
    text = refusal("m.json", FileKind("rankboost-fusion-linear", normalizer="rrf"), "export")
    # milvus: equal weights only
    assert (
        "(or --engine opensearch, --engine qdrant --vectors VECTORS, --engine lancedb "
        "--text-list TEXT_LIST)"
    ) in text


def test_every_command_and_kind_has_a_hint() -> None:
    """A pair without its own text says what the file is and which commands take it."""
    for command, kinds in COMMANDS.items():
        for fmt in FORMATS:
            kind = FileKind(fmt)
            if kind.takes(kinds):
                continue
            text = refusal("m.json", kind, command)
            assert text.startswith("'m.json' is "), (command, fmt)
            if (command, fmt) not in HINTS:
                assert f"which 'rankboost {command}' does not take" in text


@pytest.mark.parametrize(
    ("loader", "name", "says"),
    [
        (RankFusion.load, "linear", r"not a rankboost fusion model.* It is a linear fusion "
         r"model .* read it with rankboost\.fusion\.linear\.LinearFusion\.load\."),
        (LinearFusion.load, "ranking", r"not a linear fusion model.* It is a ranking model of "
         r"'rankboost train': read it with rankboost\.load_model\."),
        (load_model, "boost", r"not a rankboost model: the JSON has no \"format\".* It is a "
         r"fusion model .*RankFusion\.load\."),
        (AutoFusion.load, "linear", r"no \"selection\" object\. It is a linear fusion model"),
        (AutoFusion.load, "ranking", r"no \"selection\" object\. It is a ranking model"),
    ],
)  # fmt: skip
def test_issue45_a_class_given_another_kind_says_what_reads_it(models, loader, name, says):
    with pytest.raises(ValueError, match=says):
        loader(models[name])


# ------------------------------------------------------------------ bad files -----------
LOADERS = [
    (load_model, r"model file '.*' does not exist", r"model file '.*' is a directory",
     "rankboost model"),
    (RankFusion.load, r"missing\.json: no such file", r"fusion model file '.*' is a directory",
     "fusion model"),
    (LinearFusion.load, r"missing\.json: no such file",
     r"fusion model file '.*' is a directory", "linear fusion model"),
    (AutoFusion.load, r"missing\.json: no such file", r"fusion model file '.*' is a directory",
     "fusion model"),
]  # fmt: skip


@pytest.mark.parametrize(("loader", "missing", "folder", "kind"), LOADERS)
def test_bad_files_give_one_clear_error(models, tmp_path, loader, missing, folder, kind):
    with pytest.raises(FileNotFoundError, match=missing):
        loader(tmp_path / "missing.json")
    with pytest.raises(IsADirectoryError, match=folder):
        loader(tmp_path)
    good = models["auto_boost"].read_bytes()
    for content, says in (
        (b"", "is not valid JSON"),
        (good[: len(good) // 2], "is not valid JSON"),  # truncated
        (b"\xff\xfe{}", "not UTF-8 text"),
        (b"qid docid rank\nq1 d1 1\n", "is not valid JSON"),
        (b'{"a": NaN}', "non-standard JSON constant NaN"),
        (b"[" * 100_000, "nested too deeply"),
    ):
        bad = tmp_path / "bad.json"
        bad.write_bytes(content)
        with pytest.raises(ValueError, match=f"{says}.*is it a {kind}\\?"):
            loader(bad)
        assert kind_of(bad) is None


@pytest.mark.parametrize(
    "data", [{}, [1, 2], {"format": "xgboost"}, "model", {"format": 3}, {"format": []}]
)
def test_kind_of_a_json_that_is_no_model(tmp_path, data) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data))
    assert kind_of(path) is None
    assert kind_of(data) is None
    with pytest.raises(ValueError, match="not a rankboost model"):
        model_files.load(path)
    assert kind_of(tmp_path / "missing.json") is None
    assert kind_of(tmp_path) is None


def test_damaged_fields_are_the_classes_own_errors(models, tmp_path) -> None:
    for name, says in (("linear", "malformed linear fusion model"),
                       ("boost", "malformed fusion model"), ("ranking", "malformed model file"),
                       ("auto_linear", "malformed AutoFusion model")):  # fmt: skip
        data = json.loads(models[name].read_text())
        if name == "auto_linear":
            data["selection"]["family"] = "nope"
        else:
            data.pop(next(k for k in ("weights", "model", "rounds") if k in data))
        bad = tmp_path / f"{name}.json"
        bad.write_text(json.dumps(data))
        with pytest.raises(ValueError, match=says):
            model_files.load(bad)


def test_sniffing_a_kind_imports_no_numpy() -> None:
    """``model_files`` imports the standard library only (and ``_atomic``)."""
    import subprocess
    import sys

    code = ("import sys, rankboost.model_files as m; m.kind_of('x.json'); "
            "print('numpy' in sys.modules)")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("name", list(CLASSES))
def test_what_a_model_given_as_data_looks_like(models, name) -> None:
    """The registry's ``looks_like`` and ``as_data`` are what a data-reading command says."""
    from rankboost.cli._inputs import guess_format

    entry = FORMATS[kind_of(models[name]).format]
    assert guess_format(str(models[name])) == (entry.looks_like, entry.as_data)
