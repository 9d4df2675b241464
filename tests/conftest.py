"""Shared fixtures and helpers of the engine tests.

``tests/reference.py`` is the slow oracle (plain numpy, no rankboost import); the helpers
here build small random ranking problems and LETOR-like synthetic data.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
MQ2008_FOLD1_TRAIN = SHARED_DATA / "letor4" / "MQ2008" / "Fold1" / "train.txt.gz"
ML100K = SHARED_DATA / "movielens" / "ml-100k" / "u.data.gz"


def kill_a_worker_at(client: Any, iteration: int) -> tuple[Any, list[Any]]:
    """A training callback that SIGKILLs one worker of ``client``'s cluster, once, at round
    ``iteration`` (0-based), and the list it appends the killed nanny to (the Dask tests'
    lost-worker recovery: the test asserts the list is not empty)."""
    killed: list[Any] = []

    def kill(env: Any) -> None:
        if env.iteration == iteration and not killed:
            nanny = next(iter(client.cluster.workers.values()))
            nanny.process.process.kill()  # SIGKILL
            killed.append(nanny)

    return kill, killed


def ratings_frame(R: Any, seed: int = 0, users: Any = None, items: Any = None) -> Any:
    """A ratings matrix as shuffled (user, item, rating) rows, so that a user's rows straddle
    the partitions of ``dd.from_pandas``; labels: the positions, or ``users``/``items``."""
    import pandas as pd

    coo = R.tocoo()
    u = coo.row if users is None else np.asarray(users)[coo.row]
    i = coo.col if items is None else np.asarray(items)[coo.col]
    df = pd.DataFrame({"user": u, "item": i, "rating": coo.data})
    return df.sample(frac=1.0, random_state=seed).reset_index(drop=True)


@contextlib.contextmanager
def two_worker_client() -> Iterator[Any]:
    """A ``distributed.Client`` of a real ``LocalCluster``: 2 worker processes, 1 thread each.

    The Dask tests' module fixtures share it (one cluster per module). The workers too wait
    for a kernel another process is compiling (:func:`_compile_each_cached_kernel_in_one_worker`).
    """
    import distributed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
    c = distributed.Client(cluster)
    try:
        c.run(_compile_each_cached_kernel_in_one_worker)
        yield c
    finally:
        c.close()
        cluster.close()


def _compile_each_cached_kernel_in_one_worker() -> None:
    """Under pytest-xdist, one worker compiles a disk-cached numba function; the others wait
    for it and load the result from numba's cache.

    numba's on-disk cache has no inter-process lock, so on a cold cache every make-test worker
    that reaches a kernel before another worker has saved it compiles it too: in a cold run
    most of rankboost's kernels were compiled by both workers. A file lock per function
    around ``Dispatcher.compile`` (which looks in the disk cache before compiling) makes the
    second worker find the first one's result. Functions without a disk cache (numba's own
    helpers) are not locked. The lock is taken inside numba's in-process compiler lock, so
    threads of one worker cannot deadlock on it; compiles nest along the (acyclic) call graph
    only, so workers cannot either. Nothing else changes: the same machine code, cached the
    same way.
    """
    import hashlib
    import tempfile

    from numba.core import caching, dispatcher
    from numba.core.compiler_lock import global_compiler_lock

    try:
        import fcntl

        lock_dir = Path(tempfile.gettempdir()) / "rankboost-tests-numba-compile-locks"
        lock_dir.mkdir(exist_ok=True)
    except (ImportError, OSError):  # no flock here, or no temporary folder: compile as usual
        return
    compile_ = dispatcher.Dispatcher.compile
    if getattr(compile_, "compiles_once", False):  # installed already (conftest imported twice)
        return

    def compile_once(self, sig):
        if isinstance(self._cache, caching.NullCache):
            return compile_(self, sig)
        code = self.py_func.__code__
        key = f"{code.co_filename}:{self.py_func.__qualname__}".encode()
        with global_compiler_lock, open(lock_dir / hashlib.sha1(key).hexdigest(), "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)  # released when f closes
            return compile_(self, sig)

    compile_once.compiles_once = True  # type: ignore[attr-defined]
    dispatcher.Dispatcher.compile = compile_once


def _one_share_of_the_blas_threads_per_worker() -> None:
    """Under pytest-xdist, each worker's BLAS (OpenBLAS) gets its share of the cores.

    ``make test`` runs one worker per core; OpenBLAS starts a thread per core in each, and
    its threads spin while they wait for a core another worker holds: on these 2-core
    machines the README's recommender example (EASE: LAPACK inverses) took 14 s instead of
    4 s, and 17 s of CPU instead of 7 s. scikit-learn's own conftest limits its threads per
    xdist worker the same way. Set in the environment too, for the command-line
    subprocesses the tests start (Dask's worker processes get one BLAS thread from Dask).
    """
    from threadpoolctl import threadpool_limits

    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    share = max(1, (os.cpu_count() or 1) // workers)
    threadpool_limits(share, user_api="blas")
    os.environ["OPENBLAS_NUM_THREADS"] = str(share)


if os.environ.get("PYTEST_XDIST_WORKER"):
    _compile_each_cached_kernel_in_one_worker()
    _one_share_of_the_blas_threads_per_worker()


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator (each test gets a fresh one)."""
    return np.random.default_rng(20030101)


def letor_like(
    n_queries: int = 30,
    docs_per_query: tuple[int, int] = (8, 30),
    n_features: int = 6,
    n_grades: int = 3,
    missing: float = 0.1,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Synthetic graded ranking data: a latent relevance, noisy monotone features with
    random missingness (NaN), a few ties, query ids in shuffled order.

    Returns ``(X, y, qid)``.
    """
    rng = np.random.default_rng(seed)
    sizes = rng.integers(docs_per_query[0], docs_per_query[1] + 1, n_queries)
    qid = np.repeat(rng.permutation(np.arange(100, 100 + n_queries)), sizes)
    n = qid.shape[0]
    latent = rng.normal(size=n)
    y = np.digitize(latent + 0.5 * rng.normal(size=n), np.linspace(-0.8, 0.8, n_grades - 1))
    X = np.empty((n, n_features))
    for i in range(n_features):
        noise = rng.uniform(0.3, 3.0)
        col = latent + noise * rng.normal(size=n)
        if i % 3 == 2:
            col = np.round(col, 1)  # coarse feature: many ties
        if i % 2 == 1:
            col = np.exp(col)  # another monotone scale
        col[rng.random(n) < missing] = np.nan
        X[:, i] = col
    perm = rng.permutation(n)
    return X[perm], y[perm].astype(float), qid[perm]


def two_round_model():
    """A two-round model over 3 features, built from arrays (no training): for the tests of
    the commands that read a model, where what it learned does not matter."""
    from rankboost.model import RankBoostModel

    z = np.array([0.9, 0.8])
    return RankBoostModel.from_arrays(
        {
            "feature": np.array([0, 1]),
            "kind": np.zeros(2, dtype=np.int8),
            "threshold": np.array([0.5, 0.3]),
            "default": np.zeros(2),
            "alpha": np.array([0.7, 0.2]),
        },
        {"r": z - 0.5, "z": z, "rloss": z / 2, "bound": np.cumprod(z)},
        n_features=3,
    )


def train_quiet(*args, **kwargs):
    """``rankboost.train`` with TrainingStoppedWarning silenced (tests that check the
    warning call ``train`` directly)."""
    import rankboost as rb

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
        return rb.train(*args, **kwargs)


def step(state, h, alpha, binary=False):
    """One round on a single feedback block, as ``Booster`` runs it: the block's update,
    then the new global mass (its own, for one block); returns the exact ``Z_t``."""
    new = state.update(h, alpha, binary=binary)
    z = float(np.exp(new - state.log_total))
    state.set_log_total(new)
    return z
