"""The engine's models on MQ2008 fold 1 match golden files bit for bit (tests/data/PROVENANCE.md).

The golden models were trained by the engine before the ``Booster`` rewrite (commit 062aba6):
the rewrite must not change one bit of what ``rb.train`` learns or how a model scores.
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
    for k in ("feature", "threshold", "default", "alpha", "r", "z", "rloss", "bound"):
        np.testing.assert_array_equal(model.history[k], old.history[k], err_msg=k)
    scores = model.decision_function(test.X)
    want = np.array([float.fromhex(v) for v in entry["test_scores"]])
    np.testing.assert_array_equal(scores[: want.shape[0]], want)
    # the stored (older format) model loads and scores the same, bit for bit
    np.testing.assert_array_equal(old.decision_function(test.X), scores)
