"""experiments/variants.py: its statistics, and its quick mode on a tiny slice of real data.

The quick mode (fold 1, 6 rounds, the first 30 queries of each MQ2008 split, 3 MovieLens
users) reads ``../shared/data`` (override with ``RANKBOOST_DATA``); the test is skipped when
the data folder is absent.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def variants():
    path = ROOT / "experiments" / "variants.py"
    spec = importlib.util.spec_from_file_location("variants_experiment", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def test_paired_tests_against_exact_enumeration(variants):
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=8), rng.normal(size=8) + 0.5
    d = a - b
    mean, p_t, p_rand = variants.paired(a, b, n_perm=20000, seed=1)
    assert mean == pytest.approx(d.mean(), abs=1e-15)
    assert p_t == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-12)
    # every one of the 2^8 sign flips: the exact two-sided randomisation p-value
    sums = [abs(np.dot(s, d)) for s in itertools.product((-1, 1), repeat=8)]
    exact = np.mean([s >= abs(d.sum()) - 1e-12 for s in sums])
    assert p_rand == pytest.approx(exact, abs=0.015)  # 20000 draws: s.e. < 0.004
    assert variants.paired(a, a.copy(), n_perm=10, seed=0) == (0.0, 1.0, 1.0)
    with_nan = np.append(a, np.nan)
    assert variants.paired(with_nan, np.append(b, 0.0), 10, 0)[0] == pytest.approx(d.mean())


def test_missing_options_are_detected(variants):
    assert variants.missing_reason({"alpha": "r"}) is None
    assert "alpha" in variants.missing_reason({"alpha": "no-such-rule"})


def test_quick_mode_on_a_slice(variants, tmp_path, capsys):
    data = variants.DATA
    if not (data / "letor4" / "MQ2008" / "Fold1" / "train.txt.gz").is_file():
        pytest.skip(f"no shared data at {data}")
    out = tmp_path / "summary.json"
    assert variants.main(["--quick", "--datasets", "mq2008,movielens,bound", "--json",
                          str(out)]) == 0  # fmt: skip
    text = capsys.readouterr().out
    summary = json.loads(out.read_text())
    assert set(summary) == {"MQ2008", "MovieLens"}
    for name, options in variants.VARIANTS.items():
        assert f"| {name} |" in text
        reason = variants.missing_reason(options)
        row = summary["MQ2008"][name]
        if reason is None:
            assert 0.0 < row["ndcg@10"] <= 1.0
            assert 0.0 < row["map"] <= 1.0
            assert all(1 <= t <= 6 for t in row["rounds"])
            assert 0.0 <= summary["MovieLens"][name]["disagreement"] <= 1.0
        else:  # never a number for an option the library does not have
            assert reason in row["missing"]
            assert "ndcg@10" not in row
    # for binary weak rankers the exact minimiser of Z is Rb-d's alpha: same models
    ls, rbd = summary["MQ2008"]["line search"], summary["MQ2008"]["Rb-d"]
    assert ls["rounds"] == rbd["rounds"]
    assert ls["ndcg@10"] == pytest.approx(rbd["ndcg@10"], abs=1e-9)
    assert ls["map"] == pytest.approx(rbd["map"], abs=1e-9)
    assert "Connamacher" in text
    assert "d = threshold_vc_dim(46) = 9" in text


def test_write_docs_refused_in_quick_mode(variants):
    with pytest.raises(SystemExit):
        variants.main(["--quick", "--write-docs"])
