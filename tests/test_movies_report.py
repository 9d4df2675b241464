"""experiments/movies_report.py's per-seed table (issue 35): paired tests within each seed.

Synthetic per-target disagreements with hand-computed answers, so the table's mean
difference, Wilcoxon p, detectable difference and the closing counts are checked without
running the (minutes-long) experiment.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = "RankBoost (pooled, default)"


@pytest.fixture(scope="module")
def report():
    pytest.importorskip("scipy")
    sys.path.insert(0, str(ROOT / "experiments"))
    try:
        spec = importlib.util.spec_from_file_location(
            "movies_report_under_test", ROOT / "experiments" / "movies_report.py"
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(ROOT / "experiments"))


def _seed(default: np.ndarray, vsim: np.ndarray) -> tuple[dict, dict]:
    per = {"F=400": {DEFAULT: {"disagreement": default}, "VSIM": {"disagreement": vsim}}}
    rows = {
        "F=400": {
            m: {"disagreement": float(np.nanmean(v["disagreement"]))}
            for m, v in per["F=400"].items()
        }
    }
    return rows, per


def test_per_seed_table_tests_within_each_seed(report) -> None:
    vsim = np.array([0.30, 0.30, 0.30, 0.30, 0.30])
    # seed 0: the default is worse on 3 of 4 scored targets (the NaN target has no crucial
    # pair and is left out): d = 0, .02, .04, .06 -> mean .03, sd .02582, n = 4
    worse = vsim + np.array([0.0, 0.02, 0.04, 0.06, np.nan])
    better = vsim - 0.01 * np.arange(1, 6)  # seed 1: better on every target
    text = report.per_seed_table({0: _seed(worse, vsim), 1: _seed(better, vsim)}, 5, DEFAULT)
    row0 = next(line for line in text.splitlines() if line.startswith("| F=400 | 0 |"))
    row1 = next(line for line in text.splitlines() if line.startswith("| F=400 | 1 |"))
    # exact Wilcoxon over the 3 non-zero differences, all positive: p = 2 / 2**3
    assert "+0.0300 (0.25)" in row0
    assert "| 0.0361 |" in row0  # 2.80 * 0.02582 / sqrt(4)
    assert "-0.0300 (0.062)" in row1  # 5 negative differences: p = 2 / 2**5
    assert "Default below VSIM in 1 of 2 (configuration, seed) cells." in text
    assert "KNN" not in text  # a peer missing from the run gets no columns
