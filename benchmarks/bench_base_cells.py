"""The cross-fitting's per-fold cost on MovieLens 100K (issue 35 item 1): fit + scoring.

One fold of the pooled fit's cross-fitting, as ``_pooled.pooled_problem`` builds it with the
defaults: the 80% training part of ``bench_recommend.py``'s split (seed 0), each user's
ratings dealt into 5 folds (``entry_folds``); the base recommenders are fitted without fold
0 (``BaseScores(BASE_RECOMMENDERS, ease_lambda=500, ease_float32=True)``) and score fold 0's
cells: its rated cells, plus 2 unrated per rated and 500 held unrated per user (the inner
CV's), each unrated cell dealt to a fold at random. Timed, CPU seconds, median of
``--repeats``:

* ``fit``: ``BaseScores.fit``;
* ``dense``: ``BaseScores.scores`` of every item for a block of users, read at the cells
  (what ``pooled_problem`` did);
* ``cells``: ``BaseScores.cells`` of the cells only (the same numbers: checked here).

Per base recommender too (each fitted alone). CPU seconds include every thread (numba's
parallel drivers); the machine is shared, so quote the ratio. On a tree without
``BaseScores.cells`` (the code before it, e.g. ``git archive 4471485 src | tar -x -C
/tmp/old``) the cells columns read "-": the before of a before/after.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_base_cells.py --repeats 3
    PYTHONPATH=/tmp/old/src .venv/bin/python benchmarks/bench_base_cells.py --repeats 3
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import data_file  # noqa: E402
from bench_recommend import split  # noqa: E402

from rankboost.datasets import load_movielens  # noqa: E402
from rankboost.recommend._base import BASE_RECOMMENDERS, BaseScores, entry_folds  # noqa: E402
from rankboost.recommend._pooled import HELD_UNRATED, block_size, sample_unrated  # noqa: E402


def fold_cells(R: sp.csr_matrix) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Fold 0's training matrix and its (user, item) cells, as ``pooled_problem`` deals them."""
    rng = np.random.default_rng(0)
    fold = entry_folds(R, 5, rng)
    rows = np.repeat(np.arange(R.shape[0]), np.diff(R.indptr))
    nu, ni, _ = sample_unrated(R, np.arange(R.shape[0]), 2.0, rng, HELD_UNRATED)
    nf = rng.integers(0, 5, size=nu.shape[0])
    users = np.concatenate([rows[fold == 0], nu[nf == 0]])
    items = np.concatenate([R.indices[fold == 0].astype(np.int64), ni[nf == 0]])
    keep = fold != 0
    Rk = sp.csr_matrix((R.data[keep], (rows[keep], R.indices[keep])), shape=R.shape)
    return Rk, users, items


def dense_at(base: BaseScores, users: np.ndarray, items: np.ndarray) -> np.ndarray:
    """``scores`` a block of users at a time, read at the cells (``pooled_problem``'s loop)."""
    order = np.argsort(users, kind="stable")
    uu = users[order]
    out = np.empty((users.shape[0], len(base.names)))
    step = block_size(base._R.shape[1], len(base.names))
    block_users = np.unique(uu)
    for s in range(0, block_users.shape[0], step):
        bu = block_users[s : s + step]
        sel = order[(uu >= bu[0]) & (uu <= bu[-1])]
        out[sel] = base.scores(bu)[np.searchsorted(bu, users[sel]), items[sel]]
    return out


def cpu(fn: Any) -> tuple[float, Any]:
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    R, _, _ = load_movielens(data_file("movielens/ml-100k/u.data.gz")).to_matrix()
    train, _ = split(R, 0.2, seed=0)
    Rk, users, items = fold_cells(sp.csr_matrix(train, dtype=np.float64))
    print(f"fold 0: {users.shape[0]:,} cells of {Rk.shape[0]} x {Rk.shape[1]}, "
          f"{Rk.nnz:,} training ratings")  # fmt: skip
    kw = {"ease_lambda": 500.0, "ease_float32": True}
    has_cells = hasattr(BaseScores, "cells")
    warm = BaseScores(BASE_RECOMMENDERS, **kw).fit(Rk)  # compiles every kernel once
    dense_at(warm, users[:50], items[:50])
    if has_cells:
        warm.cells(users, items)
        warm.cells(users[:50], items[:50])
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.repeats):
        for names in [BASE_RECOMMENDERS, *((n,) for n in BASE_RECOMMENDERS)]:
            tag = "all six" if len(names) > 1 else names[0]
            tf, base = cpu(lambda names=names: BaseScores(names, **kw).fit(Rk))
            td, dense = cpu(lambda base=base: dense_at(base, users, items))
            tc = np.nan
            if has_cells:
                tc, cells = cpu(lambda base=base: base.cells(users, items))
                np.testing.assert_allclose(cells, dense, rtol=1e-10, atol=1e-12)
            for kind, t in (("fit", tf), ("dense", td), ("cells", tc)):
                times.setdefault((tag, kind), []).append(t)
    print("\n| base recommenders | fit | dense scores at the cells | cells | fit + dense | "
          "fit + cells | ratio |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for tag in ["all six", *BASE_RECOMMENDERS]:
        f, d, c = (float(np.median(times[(tag, k)])) for k in ("fit", "dense", "cells"))
        cols = f"{c:.3f} | {f + d:.3f} | {f + c:.3f} | {(f + d) / (f + c):.2f}x"
        print(
            f"| {tag} | {f:.3f} | {d:.3f} | "
            + (cols if has_cells else f"- | {f + d:.3f} | - | -")
            + " |"
        )
    print(
        f"\nCPU seconds per fold, median of {args.repeats}"
        + ("; the cells equal the dense scores (rtol 1e-10)." if has_cells else "; no cells here.")
    )


if __name__ == "__main__":
    main()
