"""Issue 33, goal "pooled above the tuned convex combination with p < 0.05": why it is not met.

Two pieces of evidence, from the committed BM25 + all-MiniLM-L6-v2 runs of the four
collections and the ``--loco`` fold results:

* **Headroom of any query-adaptive convex fusion**: per query, the NDCG@10 of the *best*
  weight of the grid 0, 0.05, ..., 1 chosen with that query's own judgements (an oracle: no
  fusion that sets the weight from query-level signals can do better), beside the tuned
  convex combination (one weight per training set) and the best *single* weight chosen on all
  queries of the collection in hindsight (what tuning could reach with no noise).
* **What the pooled queries can detect**: from the per-query differences of ``auto`` and the
  tuned convex combination, the smallest difference a paired t-test detects (80 % power,
  5 %), and the number of queries at which the observed mean difference would be detected.

Run: part of ``experiments/hybrid.py --loco`` (the table after the per-collection ones).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .methods import CC_GRID, _convex, _normalised
from .protocol import detectable, per_query


def weight_curves(runs: dict, qrels: dict) -> np.ndarray:
    """``C[i, j]`` = NDCG@10 of query ``j`` (sorted ids) under BM25 weight ``CC_GRID[i]``."""
    queries = sorted(qrels)
    na, nb = _normalised(runs["bm25"], False), _normalised(runs["minilm"], False)
    return np.array([per_query(qrels, _convex(na, nb, float(a)), queries)["ndcg@10"]
                     for a in CC_GRID])  # fmt: skip


def headroom(pq: dict, curves: dict[str, np.ndarray], collections: tuple) -> str:
    """The markdown table of the oracle bounds and of what the queries can detect.

    ``pq`` is :func:`hybridlib.loco.pooled`'s output (test-fold per-query values, queries in
    the order of the sorted fold concatenation), ``curves`` :func:`weight_curves` per
    collection; the means do not depend on the query order.
    """
    from scipy import stats

    lines = [
        "",
        "**How much room is there above the tuned convex combination?** (NDCG@10; "
        "`oracle per query` = each query's best BM25 weight of 0, 0.05, ..., 1 chosen with its "
        "own judgements, an upper bound of every query-adaptive convex fusion; `best weight in "
        "hindsight` = the one weight best on all the collection's queries)",
        "",
        "| collection | queries | tuned convex | `auto` | best weight in hindsight | "
        "oracle per query | oracle - convex | `auto` - convex (detectable) | queries to "
        "detect it |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    rows: dict[str, tuple[np.ndarray, ...]] = {}
    for c in collections:
        C = curves[c]
        rows[c] = (pq[c]["convex"]["ndcg@10"], pq[c]["auto"]["ndcg@10"], C)
    every = (np.concatenate([rows[c][0] for c in collections]),
             np.concatenate([rows[c][1] for c in collections]),
             None)  # fmt: skip
    for c in [*collections, "pooled"]:
        conv, auto, C = rows[c] if c != "pooled" else every
        if C is None:
            oracle = np.concatenate([rows[x][2].max(axis=0) for x in collections])
            hind = np.concatenate([rows[x][2][int(np.argmax(rows[x][2].mean(axis=1)))]
                                   for x in collections])  # fmt: skip
        else:
            oracle = C.max(axis=0)
            hind = C[int(np.argmax(C.mean(axis=1)))]
        d = auto - conv
        n = d.shape[0]
        det = detectable(auto, conv)
        z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
        need: Any = (f"{int(np.ceil((z * d.std(ddof=1) / d.mean()) ** 2)):,}"
                     if d.mean() > 0 else "never (not above)")  # fmt: skip
        lines.append(
            f"| {c.upper() if c != 'pooled' else '**pooled**'} | {n} | {conv.mean():.4f} | "
            f"{auto.mean():.4f} | {hind.mean():.4f} | {oracle.mean():.4f} | "
            f"{oracle.mean() - conv.mean():+.4f} | {d.mean():+.4f} (±{det:.4f}) | {need} |"
        )
    return "\n".join(lines)
