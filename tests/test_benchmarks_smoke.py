"""Every benchmark and experiment the README and docs cite runs, at a tiny size.

A script that no test runs breaks silently when a name it uses changes. Each script here runs
as a user runs it, ``python <script> <tiny options>`` in a subprocess (never its internals, so
a script may be split into modules freely), and the test asserts on what it prints. The fast
ones run in every ``make test`` (seconds each); the ones that take 10 s to minutes even at
their smallest size are marked ``slow`` and run only with ``RANKBOOST_SLOW_SMOKE=1`` (their
commands are listed below, so a skipped one is visible).

The data scripts need ``../shared/data`` (see its README.md); without it they must stop with
one line saying which file is missing and where it comes from, which the last tests check.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("RANKBOOST_DATA", ROOT.parent / "shared" / "data"))
SLOW = os.environ.get("RANKBOOST_SLOW_SMOKE") == "1"


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _run(args: list[str], env: dict[str, str] | None = None, timeout: float = 600) -> str:
    """Run ``python <args>`` from the repository root; return stdout (fail with stderr)."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **(env or {})}
    done = subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}:\n{done.stderr}"
    return done.stdout


needs_data = pytest.mark.skipif(
    not (DATA / "letor4" / "MQ2008" / "Fold1" / "train.txt.gz").is_file(),
    reason="needs ../shared/data (its README.md says where it comes from)",
)
slow = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not SLOW, reason="10 s to minutes even at its smallest size: RANKBOOST_SLOW_SMOKE=1"
    ),
]

# (script and tiny options, a line its output must contain, marks)
FAST = [
    (
        "benchmarks/bench_engine.py --rows 3000 --features 5 --rounds 2 --passes 1 "
        "--no-lightgbm --no-memory",
        "| threads | s/round | s/pass | round / pass | s/scatter floor |",
    ),
    ("benchmarks/bench_parallel.py --smoke", "| features x rows | elements |"),
    ("benchmarks/bench_round_levers.py --smoke", "| histogram, shipped (words, 4 features"),
    ("benchmarks/bench_metrics.py --smoke", "ndcg_score k=10 ties=expected"),
    ("benchmarks/bench_startup.py --repeats 1", "rankboost --help"),
    ("benchmarks/bench_recommend_scale.py --scale 0.002 --items 300", "| pooled total |"),
]
FAST_DATA = [
    ("benchmarks/letor.py --smoke", "## Per fold (test NDCG@10 / MAP)"),
    ("benchmarks/bench_float32_domain.py --smoke", '{"mean": {"chosen"'),
    ("benchmarks/bench_variants_round.py --rounds 1 --repeats 1", "ms/round"),
    ("benchmarks/bench_push_round.py --rounds 1 --repeats 1 --ps 2", "x p=1"),
    ("benchmarks/bench_base_cells.py --repeats 1", "the cells equal the dense scores"),
    (
        "experiments/clicks.py --datasets mq2008 --folds 1 --sessions 1e3 --eta 1 "
        "--methods rb_debiased rb_naive",
        "'method': 'rb_debiased'",
    ),
]
SLOW_DATA = [
    ("benchmarks/bench_gridsearch.py --queries 20 --features 3 --repeats 1", "n_jobs"),
    (
        "benchmarks/bench_dask.py --rows 4000 --features 4 --rounds 1 --partitions 2",
        "Dask",
    ),
    ("benchmarks/bench_dask_clicks.py --smoke", "array by array: yes"),
    (
        "benchmarks/bench_dask_recommend.py --users 60 --items 30 --ratings 900 --rounds 2",
        "top 10 of every user equal: True",
    ),
    (
        "experiments/metasearch.py --datasets MQ2008-agg --folds 1 --rounds 100 --workers 1",
        "RankBoost",
    ),
    ("experiments/movies_topn.py --seeds 0", "seed"),
    ("experiments/movies_topn_paired.py --seeds 0", "seed 0: NDCG@10"),
    ("experiments/movies_prior_pilot.py --seeds 0 --scales 0.1", "0.1"),
    (
        "experiments/movies.py --pilot --n-targets 5 --no-surprise --n-jobs 1",
        "Pilot (disagreement / E[AP])",
    ),
    ("experiments/hybrid.py --select cisi --no-ranx", "cisi"),
    ("experiments/variants.py --quick", "Made by `PYTHONPATH=src .venv/bin/python experiments/"),
    ("experiments/ttq_paired.py --rows 3000 --rounds 20 --seed 3", "Wilcoxon p ="),
    ("benchmarks/cold_compile_ab.py src --repeats 1", "compile CPU min"),
]


@pytest.mark.parametrize(("command", "expected"), FAST, ids=[c.split()[0] for c, _ in FAST])
def test_script_runs(command: str, expected: str) -> None:
    assert expected in _run(command.split())


@needs_data
@pytest.mark.parametrize(
    ("command", "expected"), FAST_DATA, ids=[c.split()[0] for c, _ in FAST_DATA]
)
def test_data_script_runs(command: str, expected: str) -> None:
    assert expected in _run(command.split())


@needs_data
@pytest.mark.skipif(not _has("pandas"), reason="bench_clicks compares with pandas.read_csv")
def test_bench_clicks_smoke() -> None:
    out = _run(["benchmarks/bench_clicks.py", "--smoke"])
    assert "| ours: read_click_log + match + click_pairs |" in out
    assert "ours / pandas:" in out
    assert "simulated 2000 sessions" in out


@needs_data
@pytest.mark.parametrize(
    ("command", "expected"),
    [pytest.param(c, e, marks=slow, id=c.split()[0]) for c, e in SLOW_DATA],
)
def test_slow_script_runs(command: str, expected: str) -> None:
    assert expected in _run(command.split(), timeout=3600)


@pytest.mark.parametrize(
    ("script", "missing"),
    [
        ("benchmarks/bench_variants_round.py", "letor4/MQ2008/Fold1/train.txt.gz"),
        ("experiments/clicks.py", "letor4/MQ2008/Fold1/train.txt.gz"),
        ("experiments/movies_topn.py", "movielens/ml-100k/u.data.gz"),
    ],
)
def test_missing_data_is_one_line(tmp_path: Path, script: str, missing: str) -> None:
    """No traceback: one line naming the file, its data set and where the folder comes from."""
    done = subprocess.run(
        [sys.executable, script],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "RANKBOOST_DATA": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    name = Path(script).name
    assert lines[0].startswith(f"{name}: error: needs {tmp_path / missing}, part of ")
    assert "../shared/data" in lines[0]
    assert "README.md" in lines[0]


_IMPORT_ALL = r"""
import importlib, sys, warnings
from pathlib import Path
root = Path(sys.argv[1])
ours = {p.stem for d in ("benchmarks", "experiments") for p in (root / d).glob("*.py")}
ours |= {"hybridlib", "rankboost"}
missing, broken = [], []
for folder in ("benchmarks", "experiments"):
    sys.path.insert(0, str(root / folder))
    for path in sorted((root / folder).glob("*.py")):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                importlib.import_module(path.stem)
        except ModuleNotFoundError as exc:  # an optional peer (surprise, implicit) is fine
            top = (exc.name or "").split(".")[0]
            (broken if top in ours or not top else missing).append(f"{folder}/{path.name}: {exc}")
        except ImportError as exc:  # a name one of our scripts no longer defines
            broken.append(f"{folder}/{path.name}: {exc}")
    sys.path.remove(str(root / folder))
print("BROKEN", broken)
"""


def test_every_script_imports() -> None:
    """Every script of benchmarks/ and experiments/ imports (its ``main`` is not run): a
    name that one script takes from another (``DATA`` from ``experiments/metasearch.py``,
    say), or from rankboost, still exists, including in scripts no other smoke test runs."""
    out = _run(["-c", _IMPORT_ALL, str(ROOT)])
    assert "BROKEN []" in out, out


def test_issue35_bench_recommend_levers_without_speed_is_a_usage_error() -> None:
    """``--levers`` times its configurations beside ``--speed``'s run: alone it is refused
    (argparse's exit status 2, one usage line and the reason), before any data is read."""
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_recommend.py", "--levers"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2
    assert "error: --levers needs --speed" in done.stderr
    assert "Traceback" not in done.stderr
