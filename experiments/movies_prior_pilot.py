"""Pilot: the EASE prior's multiplier of the pooled top-N model, on training ratings only.

For each seed, the training ratings of ``movies_topn.py``'s split are split again (seed +
1000, as its baselines' hyper-parameters are chosen); the default recommender is fitted
on the inner training part with each ``prior_scale`` (and None = chosen by the inner CV
over users) and evaluated on the inner held-out part (NDCG@10, Recall@20). No test rating
of ``movies_topn.py`` is seen.

    PYTHONPATH=src python experiments/movies_prior_pilot.py --seeds 0,1
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from rankboost.datasets import load_movielens
from rankboost.recommend import RankBoostRecommender

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _data import data_file  # noqa: E402
from movies_topn import per_user_metrics, split  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--scales", default="0.1,0.25,0.5,cv")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    R, _, _ = load_movielens(data_file("movielens/ml-100k/u.data.gz")).to_matrix()
    scales = [None if s == "cv" else float(s) for s in args.scales.split(",")]
    res = {s: [] for s in scales}
    for seed in [int(s) for s in args.seeds.split(",")]:
        Rtr, _ = split(R, seed)
        inner_tr, inner_va = split(Rtr, seed + 1000)
        for c in scales:
            t = time.perf_counter()
            rec = RankBoostRecommender(rating_range=(1, 5), prior_scale=c).fit(inner_tr)
            S = rec._base.scores(np.arange(R.shape[0]))
            H = rec._fits[0].score(S.reshape(-1, S.shape[2])).reshape(S.shape[:2])
            nd, rc = per_user_metrics(H, inner_tr, inner_va)
            res[c].append((np.nanmean(nd), np.nanmean(rc)))
            took = time.perf_counter() - t
            print(f"seed {seed} prior_scale {c} (chosen {rec.prior_scale_}, rounds "
                  f"{rec.report_['n_rounds']}): NDCG@10 {np.nanmean(nd):.4f} Recall@20 "
                  f"{np.nanmean(rc):.4f} ({took:.0f} s)", flush=True)  # fmt: skip
    print("\n| prior_scale | NDCG@10 | Recall@20 |\n|---|---:|---:|")
    for c, v in res.items():
        print(f"| {'inner CV' if c is None else c} | {np.mean([a for a, _ in v]):.4f} | "
              f"{np.mean([b for _, b in v]):.4f} |")  # fmt: skip


if __name__ == "__main__":
    with threadpool_limits(limits=1):
        main()
