"""Write tests/data/golden_mq2008_fold1.json: models trained by the engine of commit 062aba6."""

import json
import subprocess
import warnings

import numpy as np

import rankboost as rb
from rankboost.datasets import load_mq2008

train, vali, test = load_mq2008(1)
configs = {
    "default": {"n_rounds": 40},
    "cum_exact_pair": {
        "n_rounds": 40,
        "alpha": "exact",
        "positive_cumulative": True,
        "normalize": "pair",
    },
    "both_line_search": {
        "n_rounds": 25,
        "alpha": "line_search",
        "weak_ranker": "both",
        "thresholds": 32,
    },
    "feature_r_bipartite": {"n_rounds": 25, "weak_ranker": "feature", "bipartite": True},
    "pairs_line_search": {"n_rounds": 20, "alpha": "line_search", "pairs": True},
}
out = {
    "provenance": {
        "commit": subprocess.check_output(["git", "rev-parse", "HEAD"], text=True).strip(),
        "command": "python tests/data/make_golden.py (repository root, at the commit above)",
        "data": "rankboost.datasets.load_mq2008(1): bundled LETOR 4.0 MQ2008 Fold1 train/test",
    },
    "models": {},
}
for name, cfg in configs.items():
    cfg = dict(cfg)
    normalize = cfg.pop("normalize", "query")
    bip = cfg.pop("bipartite", False)
    pairs = cfg.pop("pairs", False)
    if pairs:
        # every (lower grade, higher grade) pair of the first 30 queries, weight = grade gap
        q = np.unique(train.qid)[:30]
        rows = np.flatnonzero(np.isin(train.qid, q))
        i0, i1 = np.nonzero(
            (train.qid[rows][:, None] == train.qid[rows][None, :])
            & (train.y[rows][:, None] < train.y[rows][None, :])
        )
        w = train.y[rows][i1] - train.y[rows][i0]
        fb = rb.PairFeedback(np.column_stack([rows[i0], rows[i1]]), w, n_samples=train.n_samples)
    elif bip:
        fb = rb.BipartiteFeedback((train.y > 0).astype(int), train.qid, normalize=normalize)
    else:
        fb = rb.LayeredFeedback(train.y, train.qid, normalize=normalize)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rb.train(train.X, fb, **cfg)
    s = m.decision_function(test.X)
    out["models"][name] = {
        "config": {**cfg, "normalize": normalize, "bipartite": bip, "pairs": pairs},
        "model": m.to_dict(),
        "test_scores": [float(v).hex() for v in s[:200]],
    }
    print(name, m.n_rounds, m.history["rloss"][-1])
with open("tests/data/golden_mq2008_fold1.json", "w") as f:
    json.dump(out, f, indent=None, separators=(",", ":"))
