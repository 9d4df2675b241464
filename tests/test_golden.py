"""The engine's models on MQ2008 fold 1 match golden files (tests/data/PROVENANCE.md).

The golden models were trained by the engine before the ``Booster`` rewrite (commit 062aba6):
a rewrite must not change what ``rb.train`` learns or how a model scores.

What is exact on every machine, and what is not:

* every discrete choice of every round (the feature, the threshold, the default, the number
  of rounds) is compared exactly, and so is the scoring of a stored model (sums of stored
  float64 values in a fixed order: no transcendental function, the same bits on any CPU);
* the continuous statistics of training (``r``, ``alpha``, ``Z``, the loss and the bound) go
  through ``exp``/``log``/``sqrt`` of the distribution. numpy evaluates float64 ``exp`` and
  ``log`` with AVX-512F kernels where the CPU has them and with the C library elsewhere, and
  the two differ by an ulp here and there; the golden file was written on an AVX-512 machine.
  Measured on an AMD EPYC (AVX2, no AVX-512; numpy 2.4.6, numba 0.68.1): every discrete choice
  identical, the largest relative difference 3.1e-15 (``alpha``) and the largest absolute
  difference of a test score 1.8e-15. The history is therefore compared to ``rtol=1e-13`` and
  the retrained model's scores to ``atol=1e-13``: a real change of the engine moves them by
  orders of magnitude more (one different ranker in one round changes scores by ~1e-2).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import rankboost as rb
from rankboost.datasets import load_mq2008

GOLDEN = Path(__file__).parent / "data" / "golden_mq2008_fold1.json"


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(GOLDEN.read_text())


@pytest.fixture(scope="module")
def fold1():
    train, _, test = load_mq2008(1)
    return train, test


def _feedback(cfg: dict, train) -> object:
    if cfg["pairs"]:
        q = np.unique(train.qid)[:30]
        rows = np.flatnonzero(np.isin(train.qid, q))
        i0, i1 = np.nonzero(
            (train.qid[rows][:, None] == train.qid[rows][None, :])
            & (train.y[rows][:, None] < train.y[rows][None, :])
        )
        w = train.y[rows][i1] - train.y[rows][i0]
        return rb.PairFeedback(np.column_stack([rows[i0], rows[i1]]), w, n_samples=train.n_samples)
    if cfg["bipartite"]:
        return rb.BipartiteFeedback(
            (train.y > 0).astype(int), train.qid, normalize=cfg["normalize"]
        )
    return rb.LayeredFeedback(train.y, train.qid, normalize=cfg["normalize"])


NAMES = [
    "default",
    "cum_exact_pair",
    "both_line_search",
    "feature_r_bipartite",
    "pairs_line_search",
]


@pytest.mark.parametrize("name", NAMES)
def test_train_reproduces_golden_model(golden, fold1, name):
    train, test = fold1
    entry = golden["models"][name]
    cfg = entry["config"]
    kw = {k: v for k, v in cfg.items() if k not in ("normalize", "bipartite", "pairs")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
        model = rb.train(train.X, _feedback(cfg, train), **kw)
    old = rb.RankBoostModel.from_dict(entry["model"])
    assert model.n_rounds == old.n_rounds
    for k in ("feature", "threshold", "default"):
        np.testing.assert_array_equal(model.history[k], old.history[k], err_msg=k)
    for k in ("alpha", "r", "z", "rloss", "bound"):
        np.testing.assert_allclose(model.history[k], old.history[k], rtol=1e-13, err_msg=k)
    want = np.array([float.fromhex(v) for v in entry["test_scores"]])
    # the stored (older format) model loads and scores as it did, bit for bit
    np.testing.assert_array_equal(old.decision_function(test.X)[: want.shape[0]], want)
    scores = model.decision_function(test.X)
    np.testing.assert_allclose(scores[: want.shape[0]], want, rtol=0, atol=1e-13)
