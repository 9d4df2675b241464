"""The pooled default's top-N quality per user, saved, to compare two versions of the code.

``experiments/movies_topn.py``'s protocol (its splits, per-user NDCG@10 and Recall@20 of
the top-N model) for the default ``RankBoostRecommender`` only, one fit per seed; the
per-user values go to ``--save NPZ``. ``--compare OLD.npz NEW.npz`` pairs two saved runs
(users with a relevant held-out item, all seeds pooled): the means, how many users moved,
and the Wilcoxon signed-rank p-value. Used for issue 35's item-item pruning tie rule
(docs/movies.md, "Third round")::

    git archive 4471485 src | tar -x -C /tmp/old   # main before the tie rule
    PYTHONPATH=/tmp/old/src python experiments/movies_topn_paired.py --save old.npz
    PYTHONPATH=src python experiments/movies_topn_paired.py --save new.npz
    python experiments/movies_topn_paired.py --compare old.npz new.npz
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def run(seeds: list[int], save: Path | None) -> None:
    from _data import data_file
    from movies_topn import per_user_metrics, rankboost_scores, split

    from rankboost.datasets import load_movielens

    R, _, _ = load_movielens(data_file("movielens/ml-100k/u.data.gz")).to_matrix()
    out = {}
    for seed in seeds:
        train, test = split(R, seed)
        (S, *_), fit_s, _ = rankboost_scores(train, {"random_state": seed})
        ndcg, recall = per_user_metrics(S, train, test)
        out[f"ndcg_{seed}"], out[f"recall_{seed}"] = ndcg, recall
        print(f"seed {seed}: NDCG@10 {np.nanmean(ndcg):.4f}  Recall@20 {np.nanmean(recall):.4f}  "
              f"(fit {fit_s:.1f} s wall)")  # fmt: skip
    if save is not None:
        np.savez(save, **out)


def compare(old: Path, new: Path) -> None:
    from scipy.stats import wilcoxon

    a, b = np.load(old), np.load(new)
    seeds = sorted(k.split("_")[1] for k in a.files if k.startswith("ndcg_"))
    for metric in ("ndcg", "recall"):
        x = np.concatenate([a[f"{metric}_{s}"] for s in seeds])
        y = np.concatenate([b[f"{metric}_{s}"] for s in seeds])
        ok = ~np.isnan(x)
        x, y = x[ok], y[ok]
        moved = int((x != y).sum())
        p = wilcoxon(y, x).pvalue if moved else 1.0
        diff = y.mean() - x.mean()
        print(f"{metric}: old {x.mean():.4f}  new {y.mean():.4f}  diff {diff:+.4f}  users moved "
              f"{moved} of {x.size} (seeds {','.join(seeds)})  Wilcoxon p {p:.3g}")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--save", type=Path, metavar="NPZ")
    ap.add_argument("--compare", type=Path, nargs=2, metavar=("OLD", "NEW"))
    args = ap.parse_args(argv)
    if args.compare:
        compare(*args.compare)
    else:
        run([int(s) for s in args.seeds.split(",")], args.save)


if __name__ == "__main__":
    main()
