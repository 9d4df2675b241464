"""Issue 22: the effect of the float32 numeric domain on quality and memory, MQ2008 5 folds.

For every fold: ``rb.train`` with its defaults (layered feedback, 255 thresholds) for 300
rounds on the float64 features as read, the round count ``k`` chosen on the validation fold
(first maximum of NDCG@10 over the staged scores), then test NDCG@10 and MAP of
``decision_function(X_test, n_rounds=k)`` (``rankboost.metrics``: gain ``2**rel - 1``,
pessimistic ties, a query without a relevant document scores 0), and at the fixed 100 and
300 rounds. Memory: tracemalloc's peak of the training call and of one ``decision_function``
on the test fold (numpy buffers are traced), fold 1.

Run it once on the code before the change and once after (same data, same command):

    PYTHONPATH=src NUMBA_NUM_THREADS=1 .venv/bin/python benchmarks/bench_float32_domain.py

It prints one JSON object per fold and the means.
"""

from __future__ import annotations

import argparse
import json
import sys
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from letor import load_split  # noqa: E402

import rankboost as rb  # noqa: E402
from rankboost.metrics import evaluate  # noqa: E402

METRICS = ["ndcg@10", "map"]


def metrics(y, s, qid):
    r = evaluate(y, s, qid, metrics=METRICS, ties="pessimistic", empty="zero")
    return {k: round(float(r[k]), 4) for k in METRICS}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--smoke", action="store_true", help="fold 1, 5 rounds (tests)")
    args = p.parse_args()
    n_folds, n_rounds = (1, 5) if args.smoke else (5, 300)
    rows = []
    for fold in range(1, n_folds + 1):
        Xtr, ytr, qtr = load_split(fold, "train")
        Xva, yva, qva = load_split(fold, "vali")
        Xte, yte, qte = load_split(fold, "test")
        tracemalloc.start()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = rb.train(Xtr, rb.LayeredFeedback(ytr, qtr), n_rounds=n_rounds)
        train_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        tracemalloc.start()
        model.decision_function(Xte)
        predict_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        vals = [metrics(yva, s, qva)["ndcg@10"] for s in model.staged_decision_function(Xva)]
        k = int(np.argmax(vals)) + 1
        row = {
            "fold": fold,
            "k": k,
            "chosen": metrics(yte, model.decision_function(Xte, n_rounds=k), qte),
            "100": metrics(yte, model.decision_function(Xte, n_rounds=min(100, n_rounds)), qte),
            "300": metrics(yte, model.decision_function(Xte), qte),
            "train_peak_mb": round(train_peak / 2**20, 1),
            "predict_peak_mb": round(predict_peak / 2**20, 2),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    mean = {
        key: {m: round(float(np.mean([r[key][m] for r in rows])), 4) for m in METRICS}
        for key in ("chosen", "100", "300")
    }
    print(json.dumps({"mean": mean}))


if __name__ == "__main__":
    main()
