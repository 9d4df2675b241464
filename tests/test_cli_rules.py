"""The shared rules of the command line, each checked for every command (issue 45).

* Files (``rankboost.cli._rules``): an output that is any input of its command (through a
  symbolic or a hard link too), or another output, is refused (exit status 2, one line, the
  input unchanged) before any work; an output whose folder cannot be written is refused
  before the work (exit status 1, the writer's own message, as for a missing folder).
* Progress bars: on a terminal or with ``--progress``, never in a pipe unless asked, never
  with ``-q``: one decision (``show_progress``) for every command that has bars.
* Defaults: every option that sets a parameter of what its command calls shows that
  parameter's default (read from the signature), and an option left at its default is not
  passed; ``fuse train`` with no option writes ``AutoFusion()``'s model, the README's
  "same in Python".
"""

from __future__ import annotations

import argparse
import inspect
import io
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import rankboost as rb
import rankboost._compat as compat
from conftest import letor_like
from rankboost.cli import _build_parser, main
from rankboost.datasets import dump_svmlight
from rankboost.fusion import read_qrels, read_runs, write_letor_agg, write_qrels, write_run
from test_atomic import _read_only_folder
from test_fusion import _synthetic

posix = pytest.mark.skipif(os.name != "posix", reason="symbolic and hard links")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Every kind of input file a command reads, small: ``{key: path}``."""
    tmp = tmp_path_factory.mktemp("rules")
    X, y, qid = letor_like(n_queries=12, seed=45)
    X = np.nan_to_num(X)
    docids = [f"D{i}" for i in range(len(y))]
    paths = {k: tmp / n for k, n in [
        ("d", "d.txt"), ("v", "v.txt"), ("e", "e.txt"), ("equery", "e.txt.query"),
        ("g", "g.txt"), ("g2", "g2.txt"), ("names", "names.txt"), ("m", "m.json"),
        ("q", "qrels.txt"), ("clicks", "clicks.tsv.gz"), ("prop", "prop.tsv"),
        ("lin", "lin.json"), ("agg", "agg.txt"),
    ]}  # fmt: skip
    dump_svmlight(paths["d"], X, y, qid, docids=docids)
    dump_svmlight(paths["v"], X[:40], y[:40], qid[:40])
    dump_svmlight(paths["e"], X[:40], y[:40], None)
    paths["equery"].write_text("20\n20\n")
    paths["g"].write_text(f"{len(y)}\n")
    paths["g2"].write_text("40\n")
    paths["names"].write_text("".join(f"f{j}\n" for j in range(X.shape[1])))
    rb.train(X, rb.LayeredFeedback(y, qid), 3).save(paths["m"])
    runs, qrels = _synthetic(seed=45, n_queries=10, n_docs=12)
    for key, (name, run) in zip("abc", runs.items(), strict=True):
        paths[key] = tmp / f"{name}.run"
        write_run(paths[key], run)
    write_qrels(paths["q"], qrels)
    write_letor_agg(paths["agg"], runs, qrels)
    from rankboost.fusion.linear import LinearFusion

    on_disk = read_runs([str(paths[k]) for k in "ab"])  # two retrievers, as in the issue
    LinearFusion(normalizer="dbsf", n_rounds=5, prior_scale=1.0).fit(
        on_disk, read_qrels(paths["q"])
    ).save(paths["lin"])
    paths["prop"].write_text("position\tpropensity\n1\t1\n2\t0.5\n3\t0.4\n")
    argv = ["clicks", "simulate", str(paths["d"]), "-o", str(paths["clicks"]), "--sessions", "300"]
    assert main(argv) == 0
    return paths


def _run(capsys, argv: list[str]) -> tuple[int, str]:
    """``main(argv)``: ``(exit status, the one line on stderr)``; no traceback."""
    capsys.readouterr()
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's usage errors
        status = int(exc.code or 0)
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [line for line in err.strip().splitlines() if "warning" not in line]
    assert len(lines) == 1, err
    assert lines[0].startswith("rankboost: error: "), err
    return status, lines[0]


def _contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


# ---------------------------------------------------------------------- 1. an output is an input

#: Every command that writes a file: its arguments (every input it can read, named by the
#: keys of ``world``), its output options, the inputs those arguments name.
WRITERS = {
    "train": (
        ["train", "{d}", "--valid", "{v}", "--query-file", "{g}", "--valid-query-file", "{g2}",
         "--feature-names", "{names}", "--clicks", "{clicks}", "--propensity", "{prop}"],
        ["-o", "--plot"],
    ),
    "train (DATA.query found)": (["train", "{e}"], ["-o"]),
    "predict": (["predict", "{m}", "{d}", "--query-file", "{g}"], ["-o"]),
    "predict (DATA.query found)": (["predict", "{m}", "{e}"], ["-o"]),
    "info": (["info", "{m}"], ["--plot"]),
    "fuse train": (["fuse", "train", "--runs", "{a}", "{b}", "--qrels", "{q}"], ["-o", "--plot"]),
    "fuse apply": (["fuse", "apply", "{lin}", "--runs", "{a}", "{b}"], ["-o"]),
    "fuse export": (
        ["fuse", "export", "{lin}", "--engine", "qdrant", "--check-runs", "{a}", "{b}"],
        ["-o"],
    ),
    "convert --to letor": (["convert", "{a}", "{b}", "--qrels", "{q}", "--to", "letor"], ["-o"]),
    "export": (["export", "{m}", "--format", "xgboost", "--feature-names", "@{names}"], ["-o"]),
    "clicks simulate": (["clicks", "simulate", "{d}"], ["-o"]),
    "clicks propensity": (["clicks", "propensity", "{clicks}", "{d}"], ["-o", "--plot"]),
}  # fmt: skip


def _inputs(command: str) -> list[str]:
    """The keys of ``world`` that a writer's arguments name (DATA.query: found beside e.txt)."""
    argv, _ = WRITERS[command]
    keys = [a.strip("{}@") for a in argv if "{" in a]
    return ["equery"] if "found" in command else keys


def _fill(argv: list[str], world: dict[str, Path]) -> list[str]:
    return [a.format(**{k: str(v) for k, v in world.items()}) for a in argv]


OUTPUT_IS_INPUT = [
    (command, option, key, link)
    for command, (_, options) in WRITERS.items()
    for option in options
    for key in _inputs(command)
    for link in ("same path", "symbolic link", "hard link")
]


@posix
@pytest.mark.parametrize(("command", "option", "key", "link"), OUTPUT_IS_INPUT)
def test_issue45_an_output_that_is_any_input_is_refused_before_any_work(
    world, tmp_path, capsys, command, option, key, link
):
    """Every command, every output option, every input (model, data, runs, qrels,
    --check-runs, group files found or given, feature names, click logs, propensity
    tables), through links too: exit 2, one line, every file unchanged, nothing written."""
    argv, options = WRITERS[command]
    target = world[key]
    if link == "symbolic link":
        (tmp_path / "link").symlink_to(target)
        target = tmp_path / "link"
    elif link == "hard link":
        os.link(world[key], tmp_path / "hard")
        target = tmp_path / "hard"
    others = [[o, str(tmp_path / f"new{i}.png")] for i, o in enumerate(options) if o != option]
    before, made = _contents(world["d"].parent), sorted(os.listdir(tmp_path))
    status, line = _run(capsys, [*_fill(argv, world), option, target, *sum(others, [])])
    assert status == 2, line
    assert f"the output {str(target)!r} is the " in line
    assert "writing it would destroy the input" in line
    assert f"Pass another path for {option}." in line
    assert _contents(world["d"].parent) == before
    assert sorted(os.listdir(tmp_path)) == made


def test_issue45_fuse_export_check_runs_output_is_refused(world, capsys):
    """Issue 45, defect 1: ``fuse export lin.json --engine qdrant --check-runs run0.txt
    run1.txt -o run0.txt`` exited 0 and overwrote the input run with the request (only the
    model was checked)."""
    run0 = world["a"]
    before = run0.read_bytes()
    argv = ["fuse", "export", world["lin"], "--engine", "qdrant",
            "--check-runs", run0, world["b"], "-o", run0]  # fmt: skip
    capsys.readouterr()
    status = main([str(a) for a in argv])
    assert (status, run0.read_bytes() == before) == (2, True)  # was (0, False): data lost
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("rankboost: error: ")
    assert "Traceback" not in err
    assert "is the run file" in err
    assert "writing it would destroy the input" in err


def test_issue45_convert_to_trec_into_the_folder_of_its_input(world, tmp_path, capsys):
    """``convert --to trec -o DIR`` writes DIR/qrels.txt and DIR/rankerN.run: an input that
    is one of them (or a link to one) is refused before anything is read."""
    out = tmp_path / "runs"
    assert main(["convert", str(world["agg"]), "--to", "trec", "-o", str(out)]) == 0
    shutil.copy(world["agg"], out / "ranker2.run")
    (out / "ranker3.run").unlink()
    (out / "ranker3.run").symlink_to(out / "ranker2.run")
    before = _contents(out)
    for given in ("ranker2.run", "ranker3.run"):
        status, line = _run(capsys, ["convert", out / given, "--to", "trec", "-o", out])
        assert status == 2
        assert "writing it would destroy the input" in line
    assert _contents(out) == before


TWO_OUTPUTS = {
    "train": ["train", "{d}", "--rounds", "1"],
    "fuse train": ["fuse", "train", "--runs", "{a}", "{b}", "--qrels", "{q}"],
    "clicks propensity": ["clicks", "propensity", "{clicks}"],
}


@posix
@pytest.mark.parametrize("command", list(TWO_OUTPUTS))
@pytest.mark.parametrize("link", ["same path", "symbolic link"])
def test_issue45_two_outputs_that_are_one_file_are_refused(world, tmp_path, capsys, command, link):
    out = tmp_path / "out.png"
    plot = out
    if link == "symbolic link":
        plot = tmp_path / "link.png"
        plot.symlink_to(out)
    argv = [*_fill(TWO_OUTPUTS[command], world), "-o", out, "--plot", plot]
    status, line = _run(capsys, argv)
    assert status == 2
    assert "one would overwrite the other. Pass two paths." in line
    assert not out.exists()


# ---------------------------------------------------------------------- 2. unwritable folders

#: Every command that writes, with inputs that do not exist: the first error must be the
#: output's (before the work, which would start by reading them).
UNWRITABLE = {
    "train": (["train", "{missing}.txt"], "-o"),
    "predict": (["predict", "{missing}.json", "{missing}.txt"], "-o"),
    "info": (["info", "{missing}.json"], "--plot"),
    "fuse train": (["fuse", "train", "--runs", "{missing}.run", "--qrels", "{missing}.q"], "-o"),
    "fuse apply": (["fuse", "apply", "{missing}.json", "--runs", "{missing}.run"], "-o"),
    "fuse export": (["fuse", "export", "{missing}.json", "--engine", "qdrant"], "-o"),
    "convert --to letor": (
        ["convert", "{missing}.run", "--qrels", "{missing}.q", "--to", "letor"], "-o"
    ),
    "convert --to trec": (["convert", "{missing}.txt", "--to", "trec"], "-o"),
    "export": (["export", "{missing}.json", "--format", "xgboost"], "-o"),
    "clicks simulate": (["clicks", "simulate", "{missing}.txt"], "-o"),
    "clicks propensity": (["clicks", "propensity", "{missing}.tsv"], "-o"),
    "datasets write": (["datasets", "write", "mq2008"], ""),
}  # fmt: skip


@posix
@pytest.mark.parametrize("command", list(UNWRITABLE))
def test_issue45_an_output_folder_that_cannot_be_written_is_refused_before_the_work(
    tmp_path, capsys, command
):
    """Issue 45, defect 4: ``fuse train -o DIR/f.json`` into a folder that cannot be written
    ran the inner folds and failed at the end (``_atomic.check_target`` checked that the
    folder exists, not that it can be written). Every command now says so first: exit 1,
    the writer's own message naming the output, before even looking at the inputs."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    argv, option = UNWRITABLE[command]
    out = folder / ("new" if command.endswith(("trec", "write")) else "out.png")
    argv = [a.format(missing=tmp_path / "missing") for a in argv]
    with _read_only_folder(folder):
        status, line = _run(capsys, [*argv, *([option] if option else []), str(out)])
        assert sorted(os.listdir(folder)) == []
    assert status == 1, line
    assert line.startswith(f"rankboost: error: cannot write {str(out)!r}: "), line
    assert "missing" not in line
    assert ".tmp" not in line


@posix
def test_issue45_check_target_tries_the_folder_as_the_writer_does(tmp_path):
    """The early check raises what the write raises, for a folder that cannot be written
    too, and leaves nothing behind."""
    from rankboost import _atomic

    folder = tmp_path / "ro"
    folder.mkdir()
    with _read_only_folder(folder):
        with pytest.raises(OSError, match="cannot write") as early:
            _atomic.check_target(folder / "m.json")
        with pytest.raises(OSError, match="cannot write") as late:
            _atomic.atomic_write_text(folder / "m.json", "x")
    assert (type(early.value), early.value.strerror) == (type(late.value), late.value.strerror)
    _atomic.check_target(tmp_path / "new.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ro"]


# ---------------------------------------------------------------------- 3. progress bars


class _Bar(compat._NoBar):
    """A stand-in for tqdm (the silent bar's methods) that records whether it was shown."""

    def __init__(self, total, disable, desc, stacklevel=2, **kwargs) -> None:
        self.total, self.disable, self.desc = total, disable, desc


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


#: Every command with progress bars, run small (the bars' size thresholds set to 0).
WITH_BARS = {
    "train": ["train", "{d}", "--rounds", "2", "-o", "{out}"],
    "train --clicks": ["train", "{d}", "--clicks", "{clicks}", "--rounds", "2", "-o", "{out}"],
    "demo": ["demo", "--rounds", "2"],
    "fuse train": ["fuse", "train", "--family", "boost", "--runs", "{a}", "{b}", "--qrels",
                   "{q}", "--max-rounds", "3", "--cv-folds", "2", "-o", "{out}"],
    "clicks simulate": ["clicks", "simulate", "{d}", "--sessions", "20", "-o", "{out}"],
    "clicks propensity": ["clicks", "propensity", "{clicks}", "-o", "{out}"],
}  # fmt: skip


@pytest.mark.parametrize("command", list(WITH_BARS))
@pytest.mark.parametrize(
    ("flags", "terminal", "shown"),
    [
        ([], False, False),  # a pipe or a log: clean
        ([], True, True),  # a terminal: bars, as tqdm's disable=None
        (["--progress"], False, True),  # asked
        (["--progress", "-q"], True, False),  # -q wins
        (["-q"], True, False),
    ],
)
def test_issue45_progress_bars_on_a_terminal_or_when_asked(
    world, tmp_path, capsys, monkeypatch, command, flags, terminal, shown
):
    bars: list[_Bar] = []

    def record(*args, **kwargs):
        bars.append(_Bar(*args, **kwargs))
        return bars[-1]

    monkeypatch.setattr(compat, "progress_bar", record)
    if "clicks" in command:  # bars there only for long steps: every step is long here
        monkeypatch.setattr("rankboost.cli._clicks.BAR_LOG_BYTES", 0)
        monkeypatch.setattr("rankboost.cli._clicks.BAR_ENTRIES", 0)
        monkeypatch.setattr("rankboost.cli.clicks.BAR_SESSIONS", 0)
    if terminal:
        monkeypatch.setattr("sys.stderr", _Terminal())
    names = {k: str(v) for k, v in world.items()}
    argv = [a.format(out=tmp_path / "out", **names) for a in WITH_BARS[command]]
    assert main([*argv, *flags]) == 0
    assert bars, "no progress bar was made"
    assert any(not b.disable for b in bars) == shown, [(b.desc, b.disable) for b in bars]


#: The lines ``train --clicks`` and ``clicks propensity`` say before their long steps.
STEP_LINES = {
    "train --clicks": [
        "rankboost train: reading the click log '{clicks}' (",
        "rankboost train: estimating the position propensities by regression-EM over ",
    ],
    "clicks propensity": [
        "rankboost clicks propensity: reading the click log '{clicks}' (",
        "rankboost clicks propensity: estimating the position propensities by EM over ",
    ],
}


@pytest.mark.parametrize("command", list(STEP_LINES))
@pytest.mark.parametrize(
    ("flags", "terminal", "big", "bars", "said"),
    [
        ([], False, True, False, True),  # a pipe or a log: a line says what runs
        ([], True, True, False, True),  # a terminal, below the bars' size: the line too
        ([], True, True, True, False),  # a terminal with bars: the bars say it
        (["--progress"], False, True, True, False),  # bars asked: the bars say it
        (["-q"], False, True, False, False),  # -q: nothing
        ([], False, False, False, False),  # a small log: quiet
    ],
)
def test_issue46_long_click_steps_say_what_runs_where_no_bar_does(
    world, tmp_path, capsys, monkeypatch, command, flags, terminal, big, bars, said
):
    """Issue 46 item 10: ``train --clicks`` was silent for seconds (reading the log, then
    regression-EM) under a pipe; each long step now says what runs, in one line, unless a
    bar shows it or ``-q`` is given."""
    if big:  # the lines' size thresholds set to 0: every step is long
        monkeypatch.setattr("rankboost.cli._clicks.LINE_LOG_BYTES", 0)
        monkeypatch.setattr("rankboost.cli._clicks.LINE_ENTRIES", 0)
    if bars:
        monkeypatch.setattr("rankboost.cli._clicks.BAR_LOG_BYTES", 0)
        monkeypatch.setattr("rankboost.cli._clicks.BAR_ENTRIES", 0)
    monkeypatch.setattr(compat, "progress_bar", _Bar)
    err = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    names = {k: str(v) for k, v in world.items()}
    argv = [a.format(out=tmp_path / "out", **names) for a in WITH_BARS[command]]
    assert main([*argv, *flags]) == 0
    lines = [line for line in err.getvalue().splitlines() if "click log" in line or "EM" in line]
    steps = [line for line in lines if "note:" not in line]
    if not said:
        assert steps == [], steps
        return
    expected = [text.format(**names) for text in STEP_LINES[command]]
    assert len(steps) == len(expected), steps
    for line, start in zip(steps, expected, strict=True):
        assert line.startswith(start), (line, start)


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """``(command words, parser)`` of every command that runs (no subcommand of its own)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, sub in subs[0].choices.items():
        yield from _leaves(sub, (*path, name))


def test_issue45_every_command_declares_its_files_and_bars_follow_one_rule():
    """Each command's parser carries its handler and its files (checked before it runs);
    every command with ``-q`` has ``--progress``, and no handler reads ``-q`` itself."""
    from rankboost.cli._rules import Files

    leaves = dict(_leaves(_build_parser()))
    assert len(leaves) == 14, sorted(leaves)
    for path, parser in leaves.items():
        defaults = parser._defaults  # set_defaults(func=..., files=...)
        assert callable(defaults.get("func")), path
        assert isinstance(defaults.get("files"), Files), path
        options = {s for a in parser._actions for s in a.option_strings}
        assert ("-q" in options) == ("--progress" in options), path
    src = Path(rb.__file__).parent / "cli"
    readers = [p.name for p in src.glob("*.py") if ".quiet" in p.read_text()]
    assert readers == [], readers  # only rankboost.cli._rules.show_progress reads -q


# ---------------------------------------------------------------------- 4. defaults


def test_issue45_fuse_train_default_is_autofusion(world, tmp_path, capsys):
    """``fuse train`` with no option writes exactly ``AutoFusion().fit(runs, qrels)``: the
    estimator is built from the options given only, so its defaults are the class's."""
    from rankboost.fusion import AutoFusion

    runs = [str(world[k]) for k in "abc"]
    out = tmp_path / "auto.json"
    assert main(["fuse", "train", "--runs", *runs, "--qrels", str(world["q"]), "-o", str(out)]) == 0
    want = AutoFusion().fit(read_runs(runs), read_qrels(world["q"]))
    assert json.loads(out.read_text()) == json.loads(json.dumps(want.to_dict()))


def _family_estimators():
    from rankboost.cli._family import estimator
    from rankboost.cli.fuse_train import train_options
    from rankboost.fusion import AutoFusion, LinearFusion, RankFusion

    actions = train_options()
    base = ["--runs", "a", "--qrels", "q", "-o", "m"]
    parser = argparse.ArgumentParser()
    from rankboost.cli.fuse_train import add_arguments

    add_arguments(parser)
    for family, cls in (("auto", AutoFusion), ("boost", RankFusion), ("linear", LinearFusion)):
        args = parser.parse_args([*base, "--family", family])
        yield family, cls, estimator(args, actions)


def test_issue45_each_family_without_options_is_its_class_at_its_defaults():
    for family, cls, est in _family_estimators():
        assert type(est) is cls, family
        assert est.get_params() == cls().get_params(), family


def test_issue45_readme_fusion_in_python_is_what_fuse_train_builds(tmp_path, monkeypatch):
    """Issue 45, defect 3: ``fuse train`` defaults to ``--family auto`` while the README's
    "same in Python" was ``RankFusion()``, the boost family: two different models (on CISI
    BM25 + MiniLM, NDCG@10 0.4387 against 0.4476). The README's Python snippet and its
    ``fuse train`` line, run on the same converted runs, now write the same model."""
    from test_readme import PYTHON, SH, _argv_as_a_shell_runs_it, _commands, _write_converted_runs

    (code,) = [c for _, c in PYTHON if "read_runs" in c and ".fit(" in c]
    (shell,) = [c for _, c in SH if "rankboost fuse train" in c]
    command = next(a for _, a in _commands(shell) if a[1:3] == ["fuse", "train"])
    _write_converted_runs(tmp_path)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - the README's own code
    fusion = namespace["fusion"]
    words = _argv_as_a_shell_runs_it(command[1:], tmp_path)
    out = words[words.index("-o") + 1]
    assert main([*words, "-q"]) == 0
    assert json.loads(Path(out).read_text()) == json.loads(json.dumps(fusion.to_dict()))


def _shown_default(action: argparse.Action) -> str:
    """The default ``--help`` prints for an option: the text after 'default'."""
    import re

    match = re.search(r"\(default:? ([^)]*)\)|default ([^;)]*)", action.help or "")
    assert match is not None, action.option_strings
    return (match.group(1) or match.group(2)).strip()


def _subparser(*words: str) -> dict[str, argparse.Action]:
    """The options of a command by destination (the first of each: not a hidden alias)."""
    parser = _build_parser()
    for word in words:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    out: dict[str, argparse.Action] = {}
    for action in parser._actions:
        out.setdefault(action.dest, action)
    return out


def _callee(target: str):
    import importlib

    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


#: (command words, option destination, "module:callable", parameter): each option passed to
#: a parameter of what its command calls.
PASSED = [
    (("clicks", "simulate"), "eta", "rankboost.clicks:simulate_to_file", "eta"),
    (("clicks", "simulate"), "model", "rankboost.clicks:simulate_to_file", "model"),
    (("clicks", "simulate"), "table", "rankboost.clicks:simulate_to_file", "table"),
    (("clicks", "simulate"), "shown", "rankboost.clicks:simulate_to_file", "n_shown"),
    (("clicks", "simulate"), "epsilon", "rankboost.clicks:simulate_to_file", "epsilon"),
    (("clicks", "simulate"), "seed", "rankboost.clicks:simulate_to_file", "random_state"),
    (("clicks", "simulate"), "seed", "rankboost.clicks:production_ranker", "random_state"),
    (("clicks", "simulate"), "production_share", "rankboost.clicks:production_ranker", "share"),
    (("clicks", "propensity"), "method", "rankboost.clicks:estimate_propensity", "method"),
    (("train",), "click_pairs", "rankboost.clicks:click_feedback", "pairs"),
    (("train",), "click_pairs", "rankboost.clicks:read_click_counts", "pairs"),
    (("train",), "propensity", "rankboost.clicks:click_feedback", "propensity"),
    (("train",), "max_weight", "rankboost.clicks:click_feedback", "max_weight"),
    (("datasets", "write"), "fold", "rankboost.datasets._bundled:mq2008_fold_files", "fold"),
    (("demo",), "fold", "rankboost.datasets:load_mq2008", "fold"),
    (("export",), "trees", "rankboost.export:export_bytes", "trees"),
    (("export",), "name", "rankboost.export:export_bytes", "name"),
    (("export",), "dtype", "rankboost.export:export_bytes", "dtype"),
    (("export",), "store", "rankboost.export:export_bytes", "store"),
    (("export",), "missing_as_zero", "rankboost.export:export_bytes", "missing_as_zero"),
    (("fuse", "export"), "rank_window_size", "rankboost.fusion.engines:export_linear",
     "rank_window_size"),
    (("fuse", "export"), "limit", "rankboost.fusion.engines:export_linear", "limit"),
    (("fuse", "export"), "vectors", "rankboost.fusion.engines:export_linear", "vectors"),
    (("fuse", "export"), "approximate", "rankboost.fusion.engines:export_linear", "approximate"),
]  # fmt: skip


def test_issue45_defaults_read_from_the_source_are_the_signatures():
    """The CLI reads defaults from the source (no import: the click modules import numba);
    what it reads is ``inspect.signature``'s, for every callee it reads."""
    import rankboost.cli._clicks as clicks_options
    import rankboost.cli.clicks as clicks_commands
    import rankboost.cli.datasets as datasets_command
    import rankboost.cli.demo as demo_command
    import rankboost.cli.export as export_command
    import rankboost.cli.fuse_export as fuse_export_command
    from rankboost.cli._defaults import signature_defaults
    from rankboost.cli._family import FAMILIES

    targets = {
        *FAMILIES.values(),
        clicks_options.FEEDBACK,
        clicks_options.COUNTS,
        clicks_commands.SIMULATE,
        clicks_commands.PRODUCTION,
        clicks_commands.ESTIMATE,
        datasets_command.WRITE,
        demo_command.LOAD,
        export_command.EXPORT,
        fuse_export_command.EXPORT,
    }
    for target in sorted(targets):
        empty = inspect.Parameter.empty
        params = inspect.signature(_callee(target)).parameters.items()
        want = {k: p.default for k, p in params if p.default is not empty}
        assert dict(signature_defaults(target)) == want, target


@pytest.mark.parametrize(("words", "dest", "target", "parameter"), PASSED)
def test_issue45_each_option_default_is_the_signature_default(words, dest, target, parameter):
    """The default the parser holds, and the one ``--help`` prints, is the default of the
    parameter the option is passed to (read from the signature, never restated)."""
    from rankboost.cli._defaults import shown

    action = _subparser(*words)[dest]
    want = inspect.signature(_callee(target)).parameters[parameter].default
    assert action.default == want, (words, dest)
    if action.help and "default" in action.help and want is not None:
        assert _shown_default(action).startswith(shown(want)), (action.help, want)


def test_issue45_fuse_train_option_defaults_are_the_families():
    """Each model option of ``fuse train`` shows the default of every family that takes it:
    their common default, or (where they differ) None, the help naming each family's."""
    from rankboost.cli._defaults import shown
    from rankboost.cli._family import FAMILIES, NOT_MODEL

    actions = _subparser("fuse", "train")
    sigs = {f: inspect.signature(_callee(t)).parameters for f, t in FAMILIES.items()}
    model_options = [d for d, a in actions.items() if a.option_strings and d not in NOT_MODEL]
    assert model_options
    for dest in model_options:
        values = {f: s[dest].default for f, s in sigs.items() if dest in s}
        assert values, f"--{dest} is a parameter of no family"
        action = actions[dest]
        want = next(iter(values.values()))
        if all(v == want for v in values.values()):
            assert action.default == ("none" if want is None else want), dest
        else:
            assert action.default is None, dest
            for family, value in values.items():
                assert f"{shown(value)} for --family {family}" in action.help, (dest, family)


@pytest.mark.parametrize(
    ("module", "argv", "target", "options"),
    [
        ("clicks", ["clicks", "simulate", "d.txt", "-o", "x"], "SIMULATE", "SIMULATE_OPTIONS"),
        ("clicks", ["clicks", "simulate", "d.txt", "-o", "x"], "PRODUCTION", "PRODUCTION_OPTIONS"),
        ("export", ["export", "m.json", "-f", "xgboost", "-o", "x"], "EXPORT", "OPTIONS"),
        ("fuse_export", ["fuse", "export", "m.json", "--engine", "qdrant", "-o", "x"], "EXPORT",
         "OPTIONS"),
        ("_clicks", ["train", "d.txt"], "FEEDBACK", None),
    ],
)  # fmt: skip
def test_issue45_an_option_left_at_its_default_is_not_passed(module, argv, target, options):
    """Parsed without the options, a command passes none of them: the callee's defaults."""
    import importlib

    from rankboost.cli._defaults import changed

    mod = importlib.import_module(f"rankboost.cli.{module}")
    names = (
        {"click_pairs": "pairs", "propensity": "propensity", "max_weight": "max_weight"}
        if options is None
        else getattr(mod, options)
    )
    args = _build_parser().parse_args(argv)
    assert changed(args, getattr(mod, target), names) == {}
    assert names  # the table is not empty
