"""``n_jobs`` changes the speed, never the model (issue 52).

Issue 52: a pooled ``RankBoostRecommender(n_jobs=2)`` trained another model now and then
(3 fits in 60 under load). Its cross-fitting folds run in threads, and each fold inverts
EASE's Gram matrix with LAPACK on one BLAS thread, a count that
``threadpoolctl.threadpool_limits`` set for the whole process: when two folds' inverses
overlapped, the first one to finish restored the count while the second was still inside,
so that one's ``spotri`` ran on two threads, which gives other bits (and the second left the
process on one thread). Nothing in the numba kernels raced.

The tests force the interleaving that raced instead of waiting for it (threads step through
it on events; a timeout is a safety net that fails the test, never a condition of passing),
and check the invariants that exclude the race everywhere ``n_jobs`` runs code at once:
every BLAS call of a fold sees the count an ``n_jobs=1`` fit's sees, numba's thread count
and threading layer are per thread and thread-safe, and every estimator that takes
``n_jobs`` (or runs in threads) trains the same model bit for bit while other threads run
parallel kernels. The Dask workers' threads: ``tests/test_dask.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.linalg import lapack
from sklearn.base import clone
from threadpoolctl import threadpool_info, threadpool_limits

import rankboost._kernels as kernels
from conftest import letor_like
from rankboost import RankBoostRanker, TrainingStoppedWarning
from rankboost._kernels import blas_threads, numba_threads
from rankboost._kernels.histogram import _histograms_parallel, _histograms_serial
from rankboost.fusion import AutoFusion, LinearFusion, RankFusion
from rankboost.recommend import RankBoostRecommender
from test_fusion_linear import _toy

SAFETY_NET = 120.0  # seconds an event may take before the test fails (never reached)


def _blas_counts(per_thread: bool = False) -> set[int]:
    """The BLAS libraries' thread counts: the process-wide ones (OpenBLAS on pthreads), and
    with ``per_thread`` those a BLAS keeps per thread too (an OpenMP build: this thread's)."""
    return {
        lib["num_threads"]
        for lib in threadpool_info()
        if lib["user_api"] == "blas" and (per_thread or lib.get("threading_layer") != "openmp")
    }


@pytest.fixture
def blas3() -> Iterator[int]:
    """The process's BLAS on 3 threads for the test, so a count of 1 taken by the code shows.

    The test's (main) thread holds the count (``with threadpool_limits``), as a script or
    a make-test worker (conftest) that has set it does: threadpoolctl then ignores other
    threads' limits.
    """
    with threadpool_limits(3, user_api="blas"):
        if _blas_counts() != {3}:
            pytest.skip(f"the BLAS libraries here report {_blas_counts()} threads, not 3")
        yield 3


@pytest.fixture(params=["held", "free"])
def blas3_held_or_free(request) -> Iterator[str]:
    """3 BLAS threads, the count held by the main thread or by no thread (a plain script)."""
    import threadpoolctl

    before = {lib["filepath"]: lib["num_threads"] for lib in threadpool_info()}
    threadpool_limits(3, user_api="blas")
    if _blas_counts() != {3}:
        pytest.skip(f"the BLAS libraries here report {_blas_counts()} threads, not 3")
    controller = getattr(threadpoolctl, "OpenBLASController", None)
    free = request.param == "free"
    if free and controller is not None and hasattr(controller, "clear_controlling_thread"):
        controller.clear_controlling_thread(force=True)
    try:
        yield request.param
    finally:
        threadpool_limits(before)  # as it was (conftest's count in a make-test worker)


def _ratings(seed: int, n_users: int = 40, n_items: int = 60) -> sp.csr_matrix:
    """Two taste groups plus noise, ratings 1..5, every user with at least 3 ratings."""
    rng = np.random.default_rng(seed)
    taste = rng.integers(1, 6, size=n_items).astype(float)
    group = rng.integers(0, 2, size=n_users)
    dense = np.where(group[:, None] == 0, taste, 6 - taste)
    dense = np.clip(dense + rng.integers(-1, 2, size=dense.shape), 1, 5)
    mask = rng.random(dense.shape) < 0.4
    mask[:, :3] = True
    rows, cols = np.nonzero(mask)
    return sp.csr_matrix((dense[rows, cols], (rows, cols)), shape=dense.shape)


class _Threads:
    """Threads whose exceptions are raised again by :meth:`join`."""

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        self.errors: list[BaseException] = []

    def start(self, target: Callable[[], Any], name: str) -> None:
        def run() -> None:
            try:
                target()
            except BaseException as exc:  # noqa: BLE001  re-raised by join
                self.errors.append(exc)

        t = threading.Thread(target=run, name=name, daemon=True)
        self.threads.append(t)
        t.start()

    def join(self) -> None:
        for t in self.threads:
            t.join(SAFETY_NET)
            assert not t.is_alive(), f"thread {t.name} still runs after {SAFETY_NET} s"
        if self.errors:
            raise self.errors[0]


def _wait(event: threading.Event, what: str) -> None:
    assert event.wait(SAFETY_NET), f"{what} did not happen within {SAFETY_NET} s"


# ----------------------------------------------------------------- the race, forced


def test_issue52_fold_threads_invert_on_the_fits_blas_count(blas3_held_or_free, monkeypatch):
    """A pooled fit's two cross-fitting folds, in two threads (``n_jobs=2``), invert EASE's
    Gram matrix at once, stepping through LAPACK in this order: A factors, B factors, A
    inverts, B inverts. Each fold set the BLAS count itself: threadpoolctl ignored the
    second fold (or both, when the main thread held the count), whose calls then ran on
    the process's 3 threads instead of the 1 of an ``n_jobs=1`` fit. Every call of both
    folds now runs on 1 thread, the count is 3 again afterwards, and the model is the
    ``n_jobs=1`` one."""
    R = _ratings(5, n_users=30, n_items=40)
    kw = {"n_estimators": 5, "n_folds": 2, "inner_folds": None, "ease_lambda": 20.0}
    expected = _models(RankBoostRecommender(n_jobs=1, **kw).fit(R))
    seen: list[tuple[str, str, set[int]]] = []
    arrived: list[threading.Thread] = []
    a_factored, b_factored, a_inverted = threading.Event(), threading.Event(), threading.Event()

    lock = threading.Lock()

    def role() -> str:
        me = threading.current_thread()
        if me is threading.main_thread():
            return "main"
        with lock:
            if me not in arrived:
                arrived.append(me)
            return "AB"[arrived.index(me)] if arrived.index(me) < 2 else "later"

    def wrap(name: str) -> None:
        real = getattr(lapack, name)

        def call(*args: Any, **kw: Any) -> Any:
            who, step = role(), name[1:]
            if (who, step) == ("B", "potrf"):
                _wait(a_factored, "A's factorisation")
            elif (who, step) == ("B", "potri"):
                _wait(a_inverted, "A's inversion")
            seen.append((who, step, _blas_counts(per_thread=True)))
            out = real(*args, **kw)
            if (who, step) == ("A", "potrf"):
                a_factored.set()
                _wait(b_factored, "B's factorisation")
            elif (who, step) == ("B", "potrf"):
                b_factored.set()
            elif (who, step) == ("A", "potri"):
                a_inverted.set()
            return out

        monkeypatch.setattr(lapack, name, call)

    for name in ("spotrf", "spotri", "dpotrf", "dpotri"):
        wrap(name)
    got = _models(RankBoostRecommender(n_jobs=2, **kw).fit(R))
    folds = [(who, step) for who, step, _ in seen if who in ("A", "B")]
    assert folds == [("A", "potrf"), ("B", "potrf"), ("A", "potri"), ("B", "potri")]
    assert [counts for who, _, counts in seen if who != "main"] == [{1}] * 4
    assert _blas_counts() == {3}
    assert got == expected


def test_blas_threads_of_another_count_waits_for_the_holders(blas3):
    """A block asking for another count (B, in a thread) enters only after the holder (the
    main thread) has left, so it sees the process's own count; the count is restored."""
    seen: list[tuple[str, set[int]]] = []
    b_started = threading.Event()

    def b() -> None:
        b_started.set()
        with blas_threads(None):
            seen.append(("B in", _blas_counts()))

    threads = _Threads()
    with blas_threads(1):
        seen.append(("main in", _blas_counts()))
        threads.start(b, "B")
        _wait(b_started, "B's start")
        seen.append(("main out", _blas_counts()))
    threads.join()
    assert seen == [("main in", {1}), ("main out", {1}), ("B in", {3})]
    assert _blas_counts() == {3}


def test_blas_threads_joined_by_threads_restored_after_the_last(blas3):
    """Threads asking for the held count join it (their BLAS calls run on it); the owner
    restores the process's count only after the last of them has left."""
    seen: list[tuple[str, set[int]]] = []
    joined, owner_leaving = threading.Event(), threading.Event()

    def fold() -> None:
        with blas_threads(1):
            joined.set()
            _wait(owner_leaving, "the owner's end")
            seen.append(("fold", _blas_counts(per_thread=True)))

    threads = _Threads()
    with blas_threads(1):
        threads.start(fold, "fold")
        _wait(joined, "the fold's join")
        owner_leaving.set()  # the owner's block ends now: it waits for the fold first
    seen.append(("after", _blas_counts()))
    threads.join()
    assert seen == [("fold", {1}), ("after", {3})]


def test_blas_threads_nested_with_another_count_is_an_error():
    with blas_threads(1):
        with blas_threads(1):  # the same count nests
            pass
        with pytest.raises(RuntimeError, match=r"blas_threads\(None\) inside blas_threads\(1\)"):
            with blas_threads(None):
                pass


def test_numba_threads_sets_the_calling_thread_only():
    """``numba_threads(1)`` in one thread leaves another thread's count alone."""
    import numba

    full = numba.get_num_threads()
    inside, outside = threading.Event(), threading.Event()
    counts: dict[str, int] = {}

    def fold() -> None:
        with numba_threads(1):
            counts["fold"] = numba.get_num_threads()
            inside.set()
            _wait(outside, "the main thread's look")

    threads = _Threads()
    threads.start(fold, "fold")
    _wait(inside, "the fold's numba_threads(1)")
    counts["main"] = numba.get_num_threads()
    outside.set()
    threads.join()
    assert counts == {"fold": 1, "main": full}


def test_the_threading_layer_is_thread_safe():
    """numba loads tbb or omp here, on which threads may launch parallel kernels at once."""
    if os.environ.get("NUMBA_THREADING_LAYER", "default") not in ("default", "threadsafe"):
        pytest.skip("NUMBA_THREADING_LAYER chooses the layer")
    assert kernels.threading_layer() in kernels.THREADSAFE_LAYERS


_WORKQUEUE = """
import threading
import numba
import rankboost._kernels as k
out = {"layer": k.threading_layer(), "main": k.use_parallel(10**12)}
t = threading.Thread(target=lambda: out.update(thread=k.use_parallel(10**12)))
t.start(); t.join()
print(out["layer"], out["main"], out["thread"], numba.get_num_threads())
"""


def test_under_workqueue_only_the_main_thread_runs_parallel_drivers():
    """The workqueue layer aborts the process when two threads launch parallel kernels at
    once: under it, other threads run the serial drivers (the same bits)."""
    src = Path(kernels.__file__).resolve().parents[2]
    env = {
        **os.environ,
        "NUMBA_THREADING_LAYER": "workqueue",
        "NUMBA_NUM_THREADS": "2",
        "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]),
    }
    out = subprocess.run(
        [sys.executable, "-c", _WORKQUEUE], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["workqueue", "True", "False", "2"], out.stderr


# ----------------------------------------------------------- every estimator, stressed


class _KernelNoise:
    """Threads launching a parallel kernel all along (numba's threads, the GIL released),
    each checking its bits against the serial driver's. The kernel is small and a short
    pause separates launches: many concurrent launches at little CPU, the cores left to
    the fits. (Under a layer that is not thread-safe, the serial driver: the package's
    code runs no parallel driver outside the main thread there.)"""

    def __init__(self, n_threads: int = 2) -> None:
        rng = np.random.default_rng(3)
        self.codes = rng.integers(0, 16, size=(8, 4_000)).astype(np.uint8)
        self.pi = rng.random(self.codes.shape[1])
        self.expected = np.zeros((8, 16))
        _histograms_serial(self.codes, self.pi, 1.0, self.expected)
        safe = kernels.threading_layer() in kernels.THREADSAFE_LAYERS
        self.driver = _histograms_parallel if safe else _histograms_serial
        self.stop = threading.Event()
        self.launches = 0
        self.threads = _Threads()
        for i in range(n_threads):
            self.threads.start(self.run, f"noise-{i}")

    def run(self) -> None:
        out = np.zeros_like(self.expected)
        while not self.stop.wait(0.001):
            out[:] = 0.0
            with numba_threads(2):
                self.driver(self.codes, self.pi, 1.0, out)
            np.testing.assert_array_equal(out, self.expected)
            self.launches += 1

    def close(self) -> None:
        self.stop.set()
        self.threads.join()


@pytest.fixture
def noise() -> Iterator[_KernelNoise]:
    n = _KernelNoise()
    try:
        yield n
    finally:
        n.close()


def _record_blas(monkeypatch: pytest.MonkeyPatch, module: Any, names: tuple[str, ...]) -> list:
    """Every call of ``module.<name>`` (LAPACK routines, VSIM's products), with the BLAS
    count it runs on and whether it ran on the main thread."""
    seen: list[tuple[str, bool, set[int]]] = []
    for name in names:
        real = getattr(module, name)

        def call(*args: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            main = threading.current_thread() is threading.main_thread()
            seen.append((_name, main, _blas_counts(per_thread=True)))
            return _real(*args, **kw)

        monkeypatch.setattr(module, name, call)
    return seen


def _models(rec: RankBoostRecommender) -> dict[str, Any]:
    out = {f"user {u}": m.to_dict() for u, m in rec.models_.items()}
    for name in ("model_", "rating_model_"):
        if getattr(rec, name, None) is not None:
            out[name] = getattr(rec, name).to_dict()
    return out


def _same_top(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> None:
    for got, want in zip(a, b, strict=True):
        np.testing.assert_array_equal(got, want)


def test_issue52_pooled_fits_same_model_for_every_n_jobs(blas3, noise, monkeypatch):
    """Pooled fits with ``n_jobs`` 1, 2 and 4 (folds in threads), repeated, while other
    threads launch parallel kernels: every model bit-identical to ``n_jobs=1``'s, and every
    LAPACK call of a fold thread on the 1 BLAS thread an ``n_jobs=1`` fit's runs on."""
    R = _ratings(1)
    kw = {"n_estimators": 8, "n_folds": 4, "ease_lambda": 20.0, "random_state": 0}
    seen = _record_blas(monkeypatch, lapack, ("spotrf", "spotri", "dpotrf", "dpotri"))
    expected = _models(RankBoostRecommender(n_jobs=1, **kw).fit(R))
    fits = (2, 4, 1, 2, 4, 2, 4)
    for n_jobs in fits:
        assert _models(RankBoostRecommender(n_jobs=n_jobs, **kw).fit(R)) == expected, n_jobs
    threaded = [counts for _, main, counts in seen if not main]
    assert len(threaded) >= 2 * 4 * (len(fits) - 1)  # potrf + potri of every fold
    assert {frozenset(c) for _, _, c in seen} == {frozenset({1})}  # n_jobs=1's too
    assert _blas_counts() == {3}
    assert noise.launches > 0


@pytest.mark.xdist_group("loky")  # one make-test worker starts joblib's processes for these
def test_issue52_worker_processes_same_model_for_every_n_jobs(blas3, noise, monkeypatch):
    """The paths in joblib's worker processes, with ``n_jobs`` 1, 2 and 4 while other
    threads launch kernels: per-user fits with VSIM (BLAS products, other bits on other
    thread counts: joblib gives each worker cores / ``n_jobs`` BLAS threads) on ratings that
    are not integers, and both kinds' ``recommend_all``: bit-identical; VSIM's products run
    on 1 BLAS thread here too."""
    from rankboost.recommend import _per_user, _pooled

    R = _ratings(2, n_users=30)
    R.data += np.random.default_rng(0).uniform(-0.4, 0.4, R.nnz).round(3)
    kw = {
        "mode": "per_user",
        "n_estimators": 6,
        "feature_users": np.arange(10, 30),
        "extra_features": ("vsim", "centred_mean"),
        "unrated": "user_mean",
    }
    targets = np.arange(8)
    seen = _record_blas(monkeypatch, _per_user, ("_vsim_weights", "_vsim_scores"))
    pooled_kw = {"n_estimators": 6, "n_folds": 3, "ease_lambda": 20.0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingStoppedWarning)
        ref = RankBoostRecommender(n_jobs=1, **kw).fit(R, target_users=targets)
        pooled = RankBoostRecommender(n_jobs=1, **pooled_kw).fit(R)
        monkeypatch.setattr(_pooled, "_BLOCK_CELLS", 600)  # blocks of users to share out
        expected, top, pooled_top = _models(ref), ref.recommend_all(k=5), pooled.recommend_all(k=5)
        assert seen
        assert {frozenset(c) for _, _, c in seen} == {frozenset({1})}
        for n_jobs in (2, 4):
            rec = RankBoostRecommender(n_jobs=n_jobs, **kw).fit(R, target_users=targets)
            assert _models(rec) == expected, n_jobs
            _same_top(rec.recommend_all(k=5), top)
            pooled.set_params(n_jobs=n_jobs)
            _same_top(pooled.recommend_all(k=5), pooled_top)
    assert noise.launches > 0


def _saved(model: Any) -> bytes:
    """The bytes ``model.save`` writes (every fitted number, as the file keeps it)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.json"
        model.save(path)
        return path.read_bytes()


def _fits_in_threads(
    monkeypatch: pytest.MonkeyPatch, fit: Callable[[], bytes], parallel: bool = True
) -> list[bytes]:
    """``fit()``'s saved bytes from 3 threads at once, twice each, every kernel on its
    parallel driver (2 numba threads, launched concurrently); with ``parallel``, checks
    that every thread ran parallel drivers."""
    n_threads, repeats = 3, 2
    got: list[bytes] = []
    chose: set[str] = set()
    layer = kernels.threading_layer()

    def counted() -> str:  # use_parallel asks for the layer when it would run in parallel
        chose.add(threading.current_thread().name)
        return layer

    monkeypatch.setattr(kernels, "PARALLEL_MIN_WORK", 0)
    monkeypatch.setattr(kernels, "threading_layer", counted)

    def run() -> None:
        for _ in range(repeats):
            with numba_threads(2):
                got.append(fit())

    threads = _Threads()
    for i in range(n_threads):
        threads.start(run, f"fit-{i}")
    threads.join()
    assert len(got) == n_threads * repeats
    if parallel:
        assert {f"fit-{i}" for i in range(n_threads)} <= chose
    return got


@pytest.mark.xdist_group("parallel_drivers")  # compiles the parallel drivers (test_kernels)
def test_rankers_in_threads_with_parallel_drivers_same_model(noise, monkeypatch):
    """RankBoostRanker (which runs numba's threads, not ``n_jobs``) fitted in 3 threads at
    once, every kernel on its parallel driver, while other threads launch kernels too: the
    serial fit's model, saved byte for byte."""
    X, y, qid = letor_like(n_queries=20, seed=7)
    params = {"n_estimators": 12}
    with numba_threads(1):
        expected = _saved(RankBoostRanker(**params).fit(X, y, qid=qid).model_)
    ranker = RankBoostRanker(**params)  # cloned per fit: every thread its own estimator
    got = _fits_in_threads(monkeypatch, lambda: _saved(clone(ranker).fit(X, y, qid=qid).model_))
    assert got == [expected] * len(got)
    assert noise.launches > 0


@pytest.mark.xdist_group("parallel_drivers")
@pytest.mark.parametrize(
    "make",
    [
        lambda: RankFusion(n_rounds=8),
        lambda: RankFusion(n_rounds="auto", prior="combsum", cv_folds=3, max_rounds=8),
        lambda: LinearFusion(max_rounds=8, cv_folds=3),
        lambda: AutoFusion(cv_folds=3, max_rounds=8),
    ],
    ids=["boost", "boost_prior_auto", "linear", "auto"],
)
def test_fusion_in_threads_with_parallel_drivers_same_model(make, noise, monkeypatch):
    """The fusion estimators take no ``n_jobs``; an application fits them in its own
    threads (a server, a Dask worker): 3 threads at once, every kernel on its parallel
    driver, other threads launching kernels too, save the serial fit's file byte for byte.
    (LinearFusion's search runs no kernel that has a parallel driver.)"""
    runs, qrels = _toy(n_q=10, seed=3)
    with numba_threads(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few toy queries: the estimators say so
        expected = _saved(make().fit(runs, qrels))
        parallel = not isinstance(make(), LinearFusion)
        got = _fits_in_threads(monkeypatch, lambda: _saved(make().fit(runs, qrels)), parallel)
    assert got == [expected] * len(got)
    assert noise.launches > 0
