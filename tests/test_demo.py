"""Tests for ``rankboost demo`` (what ``make demo`` runs): bundled MQ2008 fold 1."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import rankboost
from rankboost.cli import main
from rankboost.datasets import load_mq2008
from rankboost.metrics import evaluate
from rankboost.sklearn import RankBoostRanker

SRC = Path(rankboost.__file__).resolve().parents[1]
HEADER = ["split", "rounds", "NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "MAP"]


def _rows(stdout: str) -> dict[str, list[str]]:
    lines = stdout.splitlines()
    assert any(line.split() == HEADER for line in lines), stdout
    return {
        line.split()[0]: line.split()[1:]
        for line in lines
        if line.split()[:1] in (["vali"], ["test"])
    }


def test_demo_numbers_match_the_python_api(capsys):
    """The demo picks the round count by validation MAP and reports both splits."""
    assert main(["demo", "--rounds", "25", "--quiet"]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    # the one fold's numbers are not the README's 5-fold table, and the demo says so
    assert "one fold (1 of 5) at the default parameters" in out
    train, vali, test = load_mq2008(1)
    est = RankBoostRanker(n_estimators=25).fit(
        train.X, train.y, qid=train.qid, eval_set=[(vali.X, vali.y)], eval_qid=[vali.qid],
        eval_metric="map", early_stopping_rounds=25,
    )  # fmt: skip
    curve = est.evals_result_["valid_0"]["map"]
    assert est.best_iteration_ == int(np.argmax(curve)) + 1
    metrics = ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map"]
    for name, data in (("vali", vali), ("test", test)):
        res = evaluate(data.y, est.predict(data.X), data.qid, metrics=metrics)
        assert rows[name] == [str(est.best_iteration_), *(f"{v:.4f}" for v in res.values())]


def test_python_m_rankboost_demo_prints_the_table():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    start = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-m", "rankboost", "demo", "--quiet"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    rows = _rows(res.stdout)
    assert set(rows) == {"vali", "test"}
    for rounds, *values in rows.values():
        assert 1 <= int(rounds) <= 300
        assert all(0.2 < float(v) < 0.8 for v in values)  # MQ2008 scores live here
    assert "round count chosen on validation MAP" in res.stdout
    if seconds > 60:  # a loaded machine can be slow; say so instead of failing
        pytest.skip(f"demo took {seconds:.0f} s (> 60 s): machine overloaded?")
