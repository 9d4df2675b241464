"""Is RankBoost's test NDCG@10 gap to LightGBM on the synthetic problem significant?

The protocol of ``benchmarks/time_to_quality.py`` on its ``synthetic`` data set (``--rows``
training rows, seed ``--seed``): RankBoost at its defaults for ``--rounds`` rounds and
LightGBM lambdarank for 300 trees, each cut at the first iteration within 0.002 of its own
best validation NDCG@10; then, over the test queries, the per-query NDCG@10 differences
(RankBoost - LightGBM): mean, paired t-test, Wilcoxon signed-rank test and a bootstrap 95 %
interval (5,000 resamples of the queries). It also prints each learner's validation curve.

Run::

    python experiments/ttq_paired.py --rows 1000000 --rounds 300 --seed 1   # the benchmark's data
    python experiments/ttq_paired.py --rows 200000 --rounds 900 --seed 2    # another draw
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


def main(argv: list[str] | None = None) -> int:
    """Train both learners, print their cut points and the paired comparison."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000, help="training rows (1,000,000)")
    p.add_argument("--rounds", type=int, default=300, help="RankBoost rounds (300)")
    p.add_argument("--seed", type=int, default=1, help="the generator's seed (1)")
    args = p.parse_args(argv)
    import time_to_quality as ttq
    from scipy import stats

    from rankboost.metrics import ndcg_score

    ttq.warm_up()
    train, vali, test = ttq.load_synthetic(args.seed, args.rows)
    per_query = {}
    for name, fit, budget in (
        ("rankboost", ttq.fit_rankboost, args.rounds),
        ("lightgbm", ttq.fit_lightgbm, 300),
    ):
        curve = fit(train, budget, 1)
        v = np.array([ttq.ndcg10(vali[1], s, vali[2]) for s in curve.staged(vali[0])])
        i = ttq.reached(v, ttq.WITHIN)
        s_test = curve.staged(test[0])[i]
        per_query[name] = np.asarray(
            ndcg_score(
                test[1], s_test, test[2], k=10, gain="exp2", ties="pessimistic", empty="zero",
                per_query=True,
            )
        )  # fmt: skip
        step = max(1, len(v) // 12)
        points = ", ".join(f"{k + 1}: {v[k]:.4f}" for k in range(0, len(v), step))
        print(
            f"{name}: best vali {v.max():.4f} at iteration {int(np.argmax(v)) + 1}; within "
            f"{ttq.WITHIN} at {i + 1} ({curve.seconds[i]:.1f} s), test there "
            f"{per_query[name].mean():.4f}\n  vali curve: {points}",
            flush=True,
        )
    d = per_query["rankboost"] - per_query["lightgbm"]
    rng = np.random.default_rng(0)
    boot = np.array([d[rng.integers(0, d.size, d.size)].mean() for _ in range(5000)])
    print(
        f"{d.size} test queries; mean RankBoost - LightGBM {d.mean():+.4f}; paired t "
        f"p = {stats.ttest_rel(per_query['rankboost'], per_query['lightgbm']).pvalue:.3f}; "
        f"Wilcoxon p = {stats.wilcoxon(d).pvalue:.3f}; bootstrap 95% interval "
        f"[{np.quantile(boot, 0.025):+.4f}, {np.quantile(boot, 0.975):+.4f}]"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
