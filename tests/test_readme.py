"""Every example of README.md runs as written.

Each ```python block runs in a fresh temporary directory, with the files it names prepared
there: the bundled MQ2008 data needs nothing, the fusion example's runs are what the README's
``rankboost convert`` writes from a small synthetic MQ2008-agg, MovieLens 100K comes from
``../shared/data`` (skipped when absent) and a block that imports an optional extra is
skipped when the extra is missing.

Each command of the ```sh blocks is parsed with the real command-line parser
(``rankboost.cli._build_parser``); every block runs: ``--help``, the command-line quickstart
on the bundled MQ2008 fold that ``rankboost datasets write`` copies out, and
the rank-fusion pipeline on a synthetic MQ2008-agg.
"""

from __future__ import annotations

import gzip
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rankboost.cli import _build_parser, main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
ML100K = ROOT.parent / "shared" / "data" / "movielens" / "ml-100k" / "u.data.gz"
ML100K_ITEMS = ML100K.with_name("u.item.gz")
EXTRAS = ("pandas", "matplotlib", "tqdm", "dask", "onnx", "onnxruntime")

_FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _blocks(lang: str) -> list[tuple[int, str]]:
    """(first line number, code) of every fenced block of ``lang`` in README.md."""
    text = README.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start()) + 2, m.group(2))
        for m in _FENCE.finditer(text)
        if m.group(1) == lang
    ]


def _commands(code: str) -> list[tuple[str, list[str]]]:
    """(line, argv) of every shell command of a block, comments removed."""
    out = []
    for line in code.replace("\\\n", "").splitlines():  # a line ending in \ continues
        argv = shlex.split(line, comments=True)
        if argv:
            out.append((line, argv))
    return out


# ----------------------------------------------------------------------------- fixtures


def _write_movielens(tmp: Path) -> None:
    """``ml-100k/u.data`` cut to the ratings of users 1-300 on movies 1-800 (27k of the 100k,
    the same file format): the README example fits on all of it in about 16 s on a quiet
    machine, on this cut in about 3 s, and every line of it runs the same."""
    if not ML100K.is_file():
        pytest.skip(f"MovieLens 100K absent ({ML100K}; ../shared data)")
    lines = gzip.decompress(ML100K.read_bytes()).splitlines(keepends=True)
    cut = [line for line in lines if int(line.split()[0]) <= 300 and int(line.split()[1]) <= 800]
    (tmp / "ml-100k").mkdir()  # gzipped, as the project's copy the README links
    (tmp / "ml-100k" / "u.data.gz").write_bytes(gzip.compress(b"".join(cut)))
    (tmp / "ml-100k" / "u.item.gz").write_bytes(ML100K_ITEMS.read_bytes())


# ----------------------------------------------------------------------------- python


PYTHON = _blocks("python")
# The recommender example fits all of MovieLens 100K: it runs once, in
# test_recommendation_example_returns_movie_ids, which also checks what it returns.
OTHER_PYTHON = [(n, c) for n, c in PYTHON if "RankBoostRecommender" not in c]


def test_readme_has_python_examples():
    assert len(PYTHON) >= 3
    assert len(PYTHON) - len(OTHER_PYTHON) == 1


@pytest.mark.parametrize(
    "code", [c for _, c in OTHER_PYTHON], ids=[f"line{n}" for n, _ in OTHER_PYTHON]
)
def test_python_example_runs(code, tmp_path, monkeypatch):
    for mod in EXTRAS:
        if re.search(rf"^\s*(import|from) {mod}\b", code, re.MULTILINE):
            pytest.importorskip(mod, reason=f"the example needs the optional {mod!r}")
    if "read_runs" in code:
        _write_converted_runs(tmp_path)
    if "ml-100k" in code:
        _write_movielens(tmp_path)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    exec(compile(code, str(README), "exec"), namespace)  # noqa: S102 - the README's own code


def test_recommendation_example_returns_movie_ids(tmp_path, monkeypatch, capsys):
    """The README's recommender example gives MovieLens movie ids (1-based), not columns,
    and prints their titles from ``u.item`` (issue 38: not bare ids)."""
    pytest.importorskip("pandas")
    (code,) = [c for _, c in PYTHON if "RankBoostRecommender" in c]
    _write_movielens(tmp_path)
    monkeypatch.chdir(tmp_path)
    ns: dict[str, object] = {}
    exec(compile(code, str(README), "exec"), ns)  # noqa: S102
    items, ml = ns["items"], ns["ml"]
    titles = {}
    item = gzip.decompress((tmp_path / "ml-100k" / "u.item.gz").read_bytes())
    for line in item.decode("latin-1").splitlines():
        movie, title = line.split("|")[:2]
        titles[int(movie)] = title
    printed = capsys.readouterr().out
    assert printed.strip() == repr([titles[int(i)] for i in items])
    assert len(items) == 10
    rated = set(ml.item[ml.user == 1].tolist())
    assert set(items.tolist()) <= set(ml.item.tolist()) - rated
    users, top = ns["users"], ns["top"]
    assert top.shape == (len(users), 10) == (len(np.unique(ml.user)), 10)
    assert top[list(users).index(1)].tolist() == items.tolist()  # recommend_all = recommend


# ----------------------------------------------------------------------------- shell


SH = _blocks("sh")


def test_every_rankboost_command_parses():
    parser = _build_parser()
    seen = 0
    for _, code in SH:
        for line, argv in _commands(code):
            if argv[0] != "rankboost":
                continue
            if "--help" in argv:  # exits; runs in test_help_commands_run
                continue
            seen += 1
            try:
                parser.parse_args(argv[1:])
            except SystemExit as exc:  # pragma: no cover - the failure message
                pytest.fail(f"README command does not parse ({exc.code}): {line}")
    assert seen >= 9


def test_help_commands_run():
    helps = [argv for _, c in SH for _, argv in _commands(c) if "--help" in argv]
    assert helps
    for argv in [["rankboost", "--help"], *helps]:
        done = subprocess.run(
            [sys.executable, "-m", "rankboost", *argv[1:]],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "usage: rankboost" in done.stdout


def test_command_line_quickstart_runs(tmp_path, monkeypatch, capsys):
    """Every line of the command-line quickstart, as written, in an empty folder: the
    bundled MQ2008 fold 1 written out by ``rankboost datasets write``, then trained on."""
    (code,) = [c for _, c in SH if "rankboost predict" in c]
    monkeypatch.chdir(tmp_path)
    ran = 0
    for line, argv in _commands(code):
        assert argv[0] == "rankboost", line
        if "--help" in argv:
            continue
        assert main(argv[1:]) == 0, line
        ran += 1
    out = capsys.readouterr().out
    assert ran >= 5
    assert (tmp_path / "model.json").is_file()
    run = (tmp_path / "test.run").read_text().splitlines()
    assert len(run) == 2874  # MQ2008-S5: fold 1's test subset
    assert run[0].split()[1] == "Q0"
    assert "ndcg@10" in out.lower()


def test_make_targets_and_pip_extras_exist():
    makefile = (ROOT / "Makefile").read_text()
    pyproject = (ROOT / "pyproject.toml").read_text()
    section = pyproject.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    extras = set(re.findall(r"^([\w-]+)\s*=", section, re.MULTILINE))
    assert {"plot", "pandas"} <= extras
    for _, code in SH:
        for line, argv in _commands(code):
            if argv[0] == "make":
                for target in argv[1:]:
                    assert re.search(rf"^{target}:", makefile, re.MULTILINE), line
            elif argv[:2] == ["pip", "install"]:
                spec = argv[-1]
                assert spec.startswith("."), line
                m = re.fullmatch(r"\.(?:\[(.*)\])?", spec)
                assert m, line
                for extra in filter(None, (m.group(1) or "").split(",")):
                    assert extra in extras, line
            elif argv[0] == "ln":  # the shared data folder linked beside the clone's files
                assert argv[1:3] == ["-s", "../shared/data/letor4/MQ2008-agg"], line
                if (ROOT.parent / "shared" / "data").is_dir():
                    assert (ROOT / argv[2]).is_dir(), line
            else:
                assert argv[0] == "rankboost", f"unchecked README command: {line}"


def test_issue26_readme_states_setup_facts_and_history_keys():
    """The README says the commands assume the activated venv, what ``make test`` costs, and
    names ``model.history``'s keys as the code spells them (``history["Z"]`` was wrong)."""
    import rankboost as rb

    text = README.read_text(encoding="utf-8")
    assert ". .venv/bin/activate" in text
    assert ".venv/bin/python benchmarks/letor.py" in text
    for fact in ("make test", "GB", "compiles the numba kernels"):
        assert fact in text, fact
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 2)), np.tile([0, 1], 10)
    history = rb.train(X, rb.LayeredFeedback(y), n_rounds=2).history
    named = re.findall(r'history\["(\w+)"\]|`\["(\w+)"\]`', text)
    keys = {a or b for a, b in named}
    assert keys >= {"z", "alpha"}
    assert keys <= set(history), keys - set(history)


def _write_letor_agg(tmp: Path) -> None:
    """MQ2008-agg/Fold1/{train,test}.txt.gz: 10 rankers (``ranker01.run`` ... as in the
    README; each returns a top 20 of 30 documents, so NULLs), 6 queries."""
    from rankboost.fusion import Qrels, Run, write_letor_agg

    rng = np.random.default_rng(2)
    grades = rng.integers(0, 3, size=(6, 30))
    qid = np.repeat([f"q{q}" for q in range(6)], 20)
    runs = []
    for k in range(10):
        docs, ranks = [], []
        for q in range(6):
            score = grades[q] + (0.5 + k) * rng.normal(size=30)
            docs += [f"d{d}" for d in np.argsort(-score, kind="stable")[:20]]
            ranks += list(range(1, 21))
        runs.append(Run(qid, docs, ranks))
    qrels = Qrels(
        np.repeat([f"q{q}" for q in range(6)], 30),
        [f"d{d}" for _ in range(6) for d in range(30)],
        grades.ravel(),
    )
    (tmp / "MQ2008-agg" / "Fold1").mkdir(parents=True)
    for split in ("train", "test"):
        write_letor_agg(tmp / "MQ2008-agg" / "Fold1" / f"{split}.txt.gz", runs, qrels)


def _argv_as_a_shell_runs_it(argv: list[str], cwd: Path) -> list[str]:
    """The words of a README command with its globs expanded in ``cwd``, as ``sh`` does."""
    out = []
    for word in argv:
        matches = sorted(str(p.relative_to(cwd)) for p in cwd.glob(word)) if "*" in word else []
        out.extend(matches or [word])
    return out


def _write_converted_runs(tmp: Path) -> None:
    """``train/`` and ``test/`` as the README's ``rankboost convert`` lines write them."""
    _write_letor_agg(tmp)
    for split in ("train", "test"):
        source = tmp / "MQ2008-agg" / "Fold1" / f"{split}.txt.gz"
        assert main(["convert", str(source), "--to", "trec", "-o", str(tmp / split)]) == 0


def test_rank_fusion_command_line_runs_as_written(tmp_path, monkeypatch, capsys):
    """Issue 26: every line of the README's LETOR-aggregation pipeline (convert, fuse train,
    apply, evaluate) runs in order, as written; a synthetic MQ2008-agg stands in for the
    shared data folder that its first line links."""
    (code,) = [c for _, c in SH if "rankboost convert" in c]
    _write_letor_agg(tmp_path)
    monkeypatch.chdir(tmp_path)
    ran = 0
    for line, argv in _commands(code):
        if argv[0] == "ln":
            continue
        assert argv[0] == "rankboost", line
        words = _argv_as_a_shell_runs_it(argv[1:], tmp_path)
        if words[:2] == ["fuse", "train"]:
            words += ["--cv-folds", "2", "--max-rounds", "5"]  # small: the defaults are slow
        assert main(words) == 0, line
        ran += 1
    assert ran == 8
    assert len(list((tmp_path / "train").glob("ranker*.run"))) == 10
    assert (tmp_path / "es.json").is_file()  # the linear model's Elasticsearch retriever
    assert (tmp_path / "fused.run").read_text().split()[1] == "Q0"
    assert "fused.run" in capsys.readouterr().out
    assert (tmp_path / "fusion.json").is_file()


def test_real_rank_fusion_data_is_where_the_readme_says():
    """The README's MQ2008-agg link points at the shared data folder's LETOR 4.0 files."""
    shared = ROOT.parent / "shared" / "data" / "letor4" / "MQ2008-agg"
    if not shared.is_dir():
        pytest.skip(f"no shared data at {shared}")
    for split in ("train", "test"):
        assert (shared / "Fold1" / f"{split}.txt.gz").is_file()


def test_commands_quoted_in_the_text_exist():
    """Commands in the README's prose (not in a block): scripts that exist, rankboost
    commands that parse, the pip extras that pyproject.toml defines."""
    text = README.read_text(encoding="utf-8")
    for script in re.findall(r"`(?:\.venv/bin/)?python ((?:benchmarks|experiments)/\w+\.py)", text):
        assert (ROOT / script).is_file(), script
    parser = _build_parser()
    inline = re.findall(r"`(rankboost [^`]+)`", text)
    blocks = [c for _, code in _blocks("sh") for c, _ in _commands(code)]
    assert any("--clicks" in c for c in inline + blocks)  # training from clicks is shown
    for command in inline:
        argv = shlex.split(command)
        if len(argv) > 2 and not argv[1].startswith("-") and "..." not in command:
            parser.parse_args(argv[1:])
    pyproject = (ROOT / "pyproject.toml").read_text()
    for extras in re.findall(r'pip install -e "\.\[([\w,]+)\]"', text):
        for extra in extras.split(","):
            assert re.search(rf"^{extra}\s*=", pyproject, re.MULTILINE), extra
