"""Time and peak memory of ``DaskRankBoostRecommender`` beside the one-machine fit (issue 49).

A ``make_ratings`` problem of the given shape (ratings in halves) as a dask DataFrame of
shuffled rows; a ``LocalCluster`` of 2 worker processes x 1 thread with a memory limit
each. Fit and ``recommend_all(k=10)`` on Dask, then the same on one machine
(``RankBoostRecommender`` with ``rec.params``) and whether the top 10 of every user agree.

``--local-users/--local-items/--local-ratings`` give the one-machine run another shape (e.g.
MovieLens-10M's beside the Dask run at 20M; then the top 10 are not compared), and
``--mode`` runs one side only (``local``: in this process alone, for a clean peak).
The estimator runs with ``RankBoostRecommender``'s defaults (every base recommender,
``ease_lambda="auto"``, ``inner_folds=2``); ``--base-recommenders`` (names, comma
separated, or ``all``), ``--ease-lambda`` (``auto`` or a number), ``--inner-folds`` (a
number or ``none``), ``--refit`` and ``--prior-scale`` (a number or ``none``) change them.
The fit's compute seconds per kind of task are printed, the time of the pooled models' step
(the inner CV's runs and curves, and the training on every target) apart, and each side's
chosen rounds and multiplier. ``--mode choice`` times EASE's penalty search alone
(``rankboost.dask._ease_auto``, the workers' peaks) beside the one-machine
``choose_ease_lambda`` on the same ratings, and whether they choose the same penalty:

    PYTHONPATH=src .venv/bin/python benchmarks/bench_dask_recommend.py --mode choice \
        --users 30000 --items 6000 --ratings 3000000 --memory-limit 6GB

Memory: each worker process's peak resident set (``VmHWM`` of ``/proc/<pid>/status``, read
from this process: imports and the worker's data included; ``ru_maxrss`` would count the
forked parent's pages), this process's, and, per kind of task, the largest resident set a
worker had while it ran a task of that kind (sampled every ``--sample`` seconds from
``/proc`` and the scheduler's ``processing``): where the memory goes, step by step; and
the fit's compute seconds per kind of task (Dask's task stream, both workers summed).

    PYTHONPATH=src .venv/bin/python benchmarks/bench_dask_recommend.py \
        --users 20000 --items 2000 --ratings 1000000 --rounds 30
    # every base recommender (user_knn and item_knn too), issue 49:
    PYTHONPATH=src .venv/bin/python benchmarks/bench_dask_recommend.py --users 30000 \
        --items 6000 --ratings 3000000 --memory-limit 6GB --partitions 8 --base-recommenders all
    # MovieLens-20M's shape on 2 workers of 6 GB, beside the one-machine run at 10M:
    PYTHONPATH=src .venv/bin/python benchmarks/bench_dask_recommend.py --mode dask \
        --users 138493 --items 20000 --ratings 20000000 --memory-limit 6GB --partitions 8
    PYTHONPATH=src .venv/bin/python benchmarks/bench_dask_recommend.py --mode local \
        --users 70000 --items 10000 --ratings 10000000
"""

from __future__ import annotations

import argparse
import contextlib
import os
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np


def _status_mb(pid: int, field: str) -> float:
    """``VmRSS`` or ``VmHWM`` of process ``pid`` in MB (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


class Sampler(threading.Thread):
    """The workers' resident sets, sampled with the kinds of task they were running."""

    def __init__(self, client: Any, every: float) -> None:
        super().__init__(daemon=True)
        from dask.utils import key_split

        self.client, self.every, self.key_split = client, every, key_split
        self.pids: dict[str, int] = client.run(os.getpid)
        self.by_task: dict[str, dict[str, float]] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                busy = self.client.processing()
            except Exception:  # noqa: BLE001  the cluster is closing
                return
            for addr, pid in self.pids.items():
                rss = _status_mb(pid, "VmRSS")
                for key in busy.get(addr, ()):
                    kind = self.key_split(key)
                    at = self.by_task.setdefault(kind, {})
                    at[addr] = max(at.get(addr, 0.0), rss)
            self.stop.wait(self.every)

    def peaks(self) -> dict[str, int]:
        """Each worker's peak resident set so far (MB, VmHWM)."""
        return {a: round(_status_mb(p, "VmHWM")) for a, p in self.pids.items()}

    def finish(self, limit: str) -> None:
        """Stop sampling; print the workers' peaks against ``limit`` and the per-task table."""
        self.stop.set()
        self.join()
        print(f"workers' peak RSS (MB, VmHWM): {self.peaks()}; limit {limit} each")
        self.report()

    def report(self) -> None:
        names = {a: f"w{i}" for i, a in enumerate(sorted(self.pids))}
        print("largest resident set (MB) of a worker while it ran a task of each kind:")
        for kind, at in sorted(self.by_task.items(), key=lambda kv: -max(kv[1].values())):
            cells = ", ".join(f"{names[a]} {v:.0f}" for a, v in sorted(at.items()))
            print(f"  {kind:28s} {cells}")


def _ratings(users: int, items: int, ratings: int) -> Any:
    import pandas as pd

    from rankboost.datasets import make_ratings

    t0 = time.perf_counter()
    R = make_ratings(users, items, ratings, scale="half", random_state=0)
    coo = R.tocoo()
    df = pd.DataFrame({"user": coo.row, "item": coo.col, "rating": coo.data})
    df = df.sample(frac=1.0, random_state=0).reset_index(drop=True)
    print(f"shape: {users} users x {items} items x {R.nnz} ratings "
          f"(generated in {time.perf_counter() - t0:.1f} s)", flush=True)  # fmt: skip
    return df


@contextlib.contextmanager
def _cluster(memory_limit: str) -> Iterator[Any]:
    """A client of a ``LocalCluster`` of 2 worker processes x 1 thread, ``memory_limit`` each."""
    import distributed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
            memory_limit=memory_limit,
        )  # fmt: skip
    client = distributed.Client(cluster)
    print(f"scheduler: {cluster.scheduler_address}", flush=True)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def _scattered(client: Any, df: Any, partitions: int) -> Any:
    """``df`` as a dask DataFrame of ``partitions`` parts scattered to the workers.

    Not ``from_pandas``, which embeds the ratings in the task graph the scheduler receives
    (Dask warned of a 305 MiB graph at the 20M shape).
    """
    import dask.dataframe as dd
    import distributed

    parts = [df.iloc[idx] for idx in np.array_split(np.arange(len(df)), partitions)]
    futures = client.scatter(parts)
    distributed.wait(futures)
    return dd.from_delayed(futures, meta=df.iloc[:0], verify_meta=False)


def run_dask(args: argparse.Namespace, df: Any) -> tuple[dict[str, Any], Any]:
    import distributed

    from rankboost.dask import DaskRankBoostRecommender

    with _cluster(args.memory_limit) as client:
        ddf = _scattered(client, df, args.partitions)
        sampler = Sampler(client, args.sample)
        base = sampler.peaks()
        print(f"workers' peak RSS before the fit (MB; imports, the ratings): {base}", flush=True)
        sampler.start()
        t0 = time.perf_counter()
        rec = DaskRankBoostRecommender(client=client, **_params(args))
        with distributed.get_task_stream(client) as stream, _timed_pooled_models() as spent:
            rec.fit(ddf)
        t1 = time.perf_counter()
        each = [round(x, 1) for x in spent]
        print(f"dask fit: {t1 - t0:.1f} s, of which the pooled models (inner CV and training) "
              f"{sum(spent):.1f} s {each}; {_choice(rec)}", flush=True)  # fmt: skip
        _task_seconds(stream.data)
        _, items, _ = rec.recommend_all(k=10)
        items = items.compute()
        t2 = time.perf_counter()
        print(f"dask recommend_all(k=10): {t2 - t1:.1f} s; load {os.getloadavg()}")
        sampler.finish(args.memory_limit)
        params = dict(rec.params)
    return params, items


def _task_seconds(tasks: list[dict[str, Any]]) -> None:
    """Compute seconds per kind of task (both workers summed), the largest first."""
    from dask.utils import key_split

    total: dict[str, float] = {}
    for t in tasks:
        for ss in t.get("startstops", ()):
            if ss["action"] == "compute":
                kind = key_split(t["key"])
                total[kind] = total.get(kind, 0.0) + ss["stop"] - ss["start"]
    print("fit's compute seconds per kind of task (workers summed):")
    for kind, sec in sorted(total.items(), key=lambda kv: -kv[1])[:14]:
        print(f"  {kind:28s} {sec:8.1f}")


def run_choice(args: argparse.Namespace, df: Any) -> None:
    """EASE's penalty search alone on Dask, then on one machine, on the same ratings."""
    import distributed
    import scipy.sparse as sp

    from rankboost.dask._ease_auto import choose_ease_lambda as dask_choice
    from rankboost.dask._ratings import user_blocks
    from rankboost.recommend._base import choose_ease_lambda

    with _cluster(args.memory_limit) as client:
        ddf = _scattered(client, df, args.partitions)
        ub = user_blocks(client, ddf, ("user", "item", "rating"))
        distributed.wait(ub.blocks)
        sampler = Sampler(client, args.sample)
        base = sampler.peaks()
        print(f"workers' peak RSS before the choice (MB; imports, the ratings): {base}")
        sampler.start()
        t0 = time.perf_counter()
        got = dask_choice(client, ub, 0)
        t1 = time.perf_counter()
        print(f"dask choice: {t1 - t0:.1f} s -> {got}; load {os.getloadavg()}")
        sampler.finish(args.memory_limit)
    users, u = np.unique(df["user"].to_numpy(), return_inverse=True)
    items, i = np.unique(df["item"].to_numpy(), return_inverse=True)
    R = sp.csr_matrix((df["rating"].to_numpy(), (u, i)), shape=(users.size, items.size))
    R.sort_indices()
    t0 = time.perf_counter()
    want = choose_ease_lambda(R, 0)
    t1 = time.perf_counter()
    print(f"one machine choice: {t1 - t0:.1f} s -> {want}; load {os.getloadavg()}")
    print(f"the same penalty and values: {got == want}")


def run_local(df: Any, params: dict[str, Any]) -> Any:
    from rankboost.recommend import RankBoostRecommender

    t0 = time.perf_counter()
    one = RankBoostRecommender(**params).fit(df)
    t1 = time.perf_counter()
    _, items, _ = one.recommend_all(k=10)
    t2 = time.perf_counter()
    print(f"one machine fit: {t1 - t0:.1f} s, recommend_all(k=10): {t2 - t1:.1f} s; "
          f"load {os.getloadavg()}; {_choice(one)}")  # fmt: skip
    print(f"this process's peak RSS (MB, VmHWM): {_status_mb(os.getpid(), 'VmHWM'):.0f}")
    return items


def _params(args: argparse.Namespace) -> dict[str, Any]:
    """The recommender's parameters of the command line."""
    from rankboost.recommend._base import BASE_RECOMMENDERS

    out: dict[str, Any] = {"n_estimators": args.rounds, "refit": args.refit}
    if args.base_recommenders:
        names = args.base_recommenders
        out["base_recommenders"] = BASE_RECOMMENDERS if names == "all" else tuple(names.split(","))
    if args.ease_lambda is not None:
        out["ease_lambda"] = "auto" if args.ease_lambda == "auto" else float(args.ease_lambda)
    if args.inner_folds is not None:
        out["inner_folds"] = None if args.inner_folds == "none" else int(args.inner_folds)
    if args.prior_scale is not None:
        out["prior_scale"] = None if args.prior_scale == "none" else float(args.prior_scale)
    return out


def _choice(rec: Any) -> str:
    """What the inner CV chose (rounds of both models, the prior's multiplier)."""
    r = rec.report_
    return (f"rounds {r['n_rounds']} (rating model {r['n_rounds_rating_model']}), "
            f"prior_scale_ {rec.prior_scale_}")  # fmt: skip


class _timed_pooled_models:  # noqa: N801  a context manager used like a function
    """Seconds spent in each pooled model's step of the Dask fit (``_inner.fit_kind``)."""

    def __enter__(self) -> list[float]:
        from rankboost.dask import _recommend

        self.module, self.spent = _recommend, []
        self.original = _recommend.fit_kind

        def timed(*a: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return self.original(*a, **kw)
            finally:
                self.spent.append(time.perf_counter() - t0)

        _recommend.fit_kind = timed
        return self.spent

    def __exit__(self, *exc: Any) -> None:
        self.module.fit_kind = self.original


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=20_000)
    ap.add_argument("--items", type=int, default=2_000)
    ap.add_argument("--ratings", type=int, default=1_000_000)
    ap.add_argument("--local-users", type=int, default=None)
    ap.add_argument("--local-items", type=int, default=None)
    ap.add_argument("--local-ratings", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--memory-limit", default="3GB")
    ap.add_argument("--sample", type=float, default=0.5, help="seconds between samples")
    ap.add_argument("--mode", choices=("both", "dask", "local", "choice"), default="both")
    ap.add_argument("--ease-lambda", default=None, help='"auto" or a number (default: Dask\'s)')
    ap.add_argument("--no-local", action="store_true", help="as --mode dask")
    ap.add_argument("--base-recommenders", default=None, help="comma separated, or 'all'")
    ap.add_argument("--inner-folds", default=None, help="a number, or none")
    ap.add_argument("--refit", action="store_true", help="refit=True (with --inner-folds)")
    ap.add_argument("--prior-scale", default=None, help="a number, or none (inner CV)")
    args = ap.parse_args()
    mode = "dask" if args.no_local else args.mode

    from rankboost.dask import DaskRankBoostRecommender

    params: dict[str, Any] = dict(DaskRankBoostRecommender(**_params(args)).params)
    shape = (args.users, args.items, args.ratings)
    df, items = None, None
    if mode == "choice":
        run_choice(args, _ratings(*shape))
        return
    if mode in ("both", "dask"):
        df = _ratings(*shape)
        params, items = run_dask(args, df)
    if mode == "dask":
        return
    local = (args.local_users or shape[0], args.local_items or shape[1],
             args.local_ratings or shape[2])  # fmt: skip
    if df is None or local != shape:
        df = _ratings(*local)
    items1 = run_local(df, params)
    if items is not None and local == shape:
        print(f"top 10 of every user equal: {bool(np.array_equal(items, items1))}")


if __name__ == "__main__":
    main()
