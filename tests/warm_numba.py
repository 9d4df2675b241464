"""Compile, and cache on disk, the numba code most tests share before make test's workers start.

numba compiles a kernel in every process that calls it before its cache file exists: from a
fresh clone each pytest-xdist worker, CLI subprocess and Dask worker compiled the same
kernels again (about 4.5 of the suite's 10.5 CPU minutes on 2 cores). ``make test`` runs this
script as two processes side by side, one per part, then the suite, whose processes load the
cached machine code. What it calls here is only a warm-up: nothing is asserted (the suite
checks every one of these paths); a kernel or signature it misses is compiled by the first
test that needs it, as before.

Run by hand: ``python tests/warm_numba.py graded`` (or ``pairs_and_metrics``).
"""

from __future__ import annotations

import sys
import warnings

import numpy as np


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(12), 15)
    X = rng.normal(size=(qid.size, 5))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = rng.integers(0, 3, qid.size).astype(float)
    return X, y, qid


RUNS = [
    {},
    {"weak_ranker": "both"},
    {"weak_ranker": "feature"},
    {"alpha": "exact"},
    {"alpha": "line_search"},
    {"criterion": "exact_z"},
    {"positive_cumulative": True},
    {"thresholds": "all"},
    {"thresholds": 1000},  # uint16 bin codes
]


def graded() -> None:
    """Training on layered and bipartite feedback: every weak ranker, alpha rule, criterion."""
    import rankboost as rb

    X, y, qid = _data()
    for fb in (rb.LayeredFeedback(y, qid), rb.BipartiteFeedback(y > 0, qid)):
        for kw in RUNS:
            rb.train(X, fb, 4, **kw).predict(X)


def pairs_and_metrics() -> None:
    """Explicit pairs, RankBoost+, a prior, the estimator, and the metrics' kernels.

    ranx's numba code is not warmed here: its tests run in one worker (an xdist group), which
    compiles it once while the other worker runs other tests.
    """
    import rankboost as rb
    from rankboost.metrics import evaluate

    X, y, qid = _data(1)
    fb = rb.PairFeedback(np.array([[0, 1], [2, 3], [4, 5]]), n_samples=X.shape[0])
    for kw in RUNS:
        rb.train(X, fb, 4, **kw).predict(X)
    rb.train(X, rb.LayeredFeedback(y, qid), 4, alpha="rbplus").predict(X)
    rb.train(X, rb.LayeredFeedback(y, qid), 4, init_score=np.linspace(0.0, 1.0, y.size))
    rb.RankBoostRanker(n_estimators=4).fit(X, y, qid=qid).predict(X)
    s = np.random.default_rng(2).normal(size=y.size)
    s[::7] = 0.0  # ties
    names = ["ndcg@10", "map", "mrr", "p@5", "disagreement", "expected_ap", "prot", "coverage"]
    evaluate(y, s, qid, names)


if __name__ == "__main__":
    warnings.simplefilter("ignore")  # stopped-early and similar warnings: not the point here
    {"graded": graded, "pairs_and_metrics": pairs_and_metrics}[sys.argv[1]]()
