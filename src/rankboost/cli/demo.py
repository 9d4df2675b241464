"""``rankboost demo``: train on the bundled MQ2008 fold and print validation and test scores.

``RankBoostRanker(n_estimators=...).fit(...)`` with the round count chosen on validation MAP,
through :func:`rankboost._fit.fit_ranker` (no scikit-learn import); nothing is written.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from ._common import PROG, add_parser, table
from ._defaults import default_of
from ._rules import Files, add_progress_options, show_progress
from ._training import DEFAULT_METRICS, add_train_options, check_eval, check_training

__all__ = ["register"]

LOAD = "rankboost.datasets._bundled:load_mq2008"


def register(sub: Any) -> None:
    """Add ``rankboost demo`` to the ``subparsers`` of the command line."""
    p = add_parser(
        sub,
        "demo",
        "train on the bundled MQ2008 fold and print validation/test scores",
        "rankboost demo --fold 1",
        func=run,
        files=Files(),  # bundled data, nothing written
    )
    fold = default_of(LOAD, "fold")
    p.add_argument(
        "--fold", type=int, choices=range(1, 6), default=fold, help=f"fold (default {fold})"
    )
    add_train_options(p, only=1)
    add_progress_options(p)


def run(args: argparse.Namespace) -> int:
    """Handle ``rankboost demo``; return the exit status (0)."""
    from .._fit import fit_ranker
    from ..datasets import load_mq2008
    from ..metrics import evaluate
    from ..params import params_of

    train, vali, test = load_mq2008(args.fold)
    out = sys.stdout
    out.write(
        f"RankBoost on LETOR 4.0 MQ2008 fold {args.fold} (bundled): train {train.n_samples} "
        f"rows / {train.n_queries} queries, {train.n_features} features\n"
    )
    X, y = check_training(train, f"MQ2008 fold {args.fold} train")
    start = time.perf_counter()
    fitted = fit_ranker(  # RankBoostRanker(n_estimators=...).fit(...), without scikit-learn
        X,
        y,
        train.qid,
        params_of(args, f"{PROG} demo"),
        eval_set=[(vali.X, vali.y)],
        eval_qid=[vali.qid],
        eval_metric="map",
        early_stopping_rounds=args.n_rounds,  # patience = all rounds: argmax of validation MAP
        verbose=show_progress(args),
        prepare_eval=check_eval(f"MQ2008 fold {args.fold} vali"),
    )
    seconds = time.perf_counter() - start
    model, best = fitted.model, fitted.best_iteration
    out.write(
        f"trained {model.n_rounds} rounds in {seconds:.1f} s; round count chosen on "
        f"validation MAP: {best}\n\n"
    )
    rows = []
    for split, data in (("vali", vali), ("test", test)):
        scores = model.decision_function(data.X, n_rounds=best)
        res = evaluate(data.y, scores, data.qid, metrics=list(DEFAULT_METRICS))
        rows.append([split, best, *(float(v) for v in res.values())])
    out.write(table(["split", "rounds", "NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "MAP"], rows))
    out.write(
        "\n\nmetrics: rankboost.metrics defaults (exp2 gain, log2 discount, ties = expected "
        "value, queries without a relevant document score 0)\n"
    )
    return 0
