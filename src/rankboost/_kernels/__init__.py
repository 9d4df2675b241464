"""Numba kernels: private, array-in/array-out, no Python objects (STYLE rules 5 and 6).

Each parallel kernel is written once as a body over one independent unit (a feature, a
query, a chunk of rows) and a driver that loops over the units with ``prange``;
:func:`serial_and_parallel` compiles the driver twice, as a plain loop and with
``parallel=True``. The two give the same result bit for bit (units never share an
accumulator); :func:`use_parallel` picks the parallel one only when the work is large
enough to pay for the thread fork.

What a cold start compiles (``benchmarks/bench_startup.py --cold`` times it): numba types,
lowers, optimises and machine-compiles every dispatcher on its own, with its Python wrapper,
and then once more inside each caller's module. So :func:`serial_and_parallel` compiles the
per-unit body into the serial driver (``inline="always"``): once. A small helper called from
several places is a plain ``njit(cache=True)``: compiled once, and LLVM inlines it where that
pays; ``inline="always"`` on such a helper would re-translate it from bytecode at every call
site. ``tests/test_startup.py`` counts what a first training compiles. What a warm start
reads: each kernel from numba's cache, without numba's compiler set-up
(:class:`~rankboost._kernels._cache.KernelCache`; ``benchmarks/bench_first_fit.py`` times it).

Threads (``n_jobs`` changes the speed, never the model; ``tests/test_n_jobs.py``). The
drivers release the GIL (``nogil``), so several Python threads run kernels at once (the
pooled recommender's cross-fitting folds, Dask workers' threads); a kernel writes only the
arrays its caller passed and owns, never a module-level buffer. Two native thread pools
are process-wide and are therefore set only through this module:

* numba's threading layer must be thread-safe (``tbb`` or ``omp``: :data:`THREADSAFE_LAYERS`,
  the first two numba tries), because the workqueue layer aborts the process when two
  threads launch parallel kernels at once. :func:`use_parallel` checks the layer numba
  loaded at the first parallel launch (not at import: that would start numba's threads in
  every process that imports rankboost, and OpenMP's are not fork-safe); under workqueue
  it gives the parallel driver to the main thread only, and other threads run the serial
  one (same bits, slower). :func:`numba_threads` sets numba's thread count of the calling
  thread only (numba keeps it thread-local).
* BLAS's thread count is one per process (OpenBLAS), its results depend on it
  (``spotrf``/``spotri`` and ``sgemm`` give other bits on 1 and 2 threads), and
  threadpoolctl lets one thread at a time set it (the others' ``threadpool_limits`` are
  ignored meanwhile). So the thread that starts ``n_jobs``' threads takes the count they
  need around them with :func:`blas_threads`, and their own ``blas_threads`` of that count
  join it (setting it for their own thread only where the BLAS keeps one per thread, an
  OpenMP build) instead of each setting the process's: threadpoolctl obeys only the thread
  that set the count, so a thread whose setting overlapped another's would run its BLAS on
  the process's count once the other restored it, and the bits depend on that count.
"""

from __future__ import annotations

import contextlib
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

import numba
import numba.core.event

from . import _cache

_cache.install()  # before any kernel is decorated: caches keyed on every kernel source

#: Work (elements touched) below which the serial driver is used. Measured with
#: ``benchmarks/bench_parallel.py`` (histogram kernel, both drivers side by side, OpenMP layer,
#: 2 cores): idle, the parallel driver takes 0.5-0.7x the serial time at every size from
#: 322k elements; with the other core busy it takes 7x at 322k, 2x at 6.8M and breaks even
#: only near 27M. 2M keeps small problems (LETOR-size fits, per-user models) serial, where a
#: busy machine would otherwise multiply their time, and large ones parallel.
PARALLEL_MIN_WORK = 2_000_000


#: numba threading layers on which several Python threads may launch parallel kernels at
#: once (numba's "threadsafe" choice); numba's default order tries them before workqueue
THREADSAFE_LAYERS = ("tbb", "omp")
_layer: list[str] = []  # the layer numba loaded, found at the first parallel launch
_layer_lock = threading.Lock()


def threading_layer() -> str:
    """The threading layer numba runs parallel kernels on (loaded now if not yet).

    ``NUMBA_THREADING_LAYER`` chooses it as numba documents; unset, numba takes tbb, then
    omp, then workqueue, whichever loads first.
    """
    if not _layer:
        with _layer_lock:
            if not _layer:
                from numba.np.ufunc import parallel

                # what numba does before its first parallel launch; without it (a numba that
                # renamed it) the layer stays unknown, which use_parallel treats as unsafe
                launch = getattr(parallel, "_launch_threads", None)
                if launch is not None:
                    launch()
                try:
                    _layer.append(numba.threading_layer())
                except ValueError:  # no parallel launch yet: numba has not chosen
                    return "unknown"
    return _layer[0]


def use_parallel(work: int) -> bool:
    """Whether a kernel touching ``work`` elements should run its parallel driver.

    Under a thread-safe layer (:data:`THREADSAFE_LAYERS`) from any thread; under workqueue
    from the main thread only (module docstring): the serial driver gives the same bits.
    """
    if work < PARALLEL_MIN_WORK or numba.get_num_threads() <= 1:
        return False
    return (
        threading_layer() in THREADSAFE_LAYERS
        or threading.current_thread() is threading.main_thread()
    )


@contextlib.contextmanager
def numba_threads(n: int) -> Iterator[None]:
    """Run numba kernels with ``n`` threads inside the block (thread-local, then restored).

    For code that already runs in parallel at another level (joblib workers, Dask workers):
    there, the kernels must not use every core of the machine as well. numba keeps the
    count per thread, so other threads keep theirs; in a joblib (loky) worker process,
    joblib has set ``NUMBA_NUM_THREADS`` to the cores / ``n_jobs``, the most ``n`` can be.
    """
    old = numba.get_num_threads()
    numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))  # type: ignore[attr-defined]
    try:
        yield
    finally:
        numba.set_num_threads(old)


class _BlasCount:
    """The BLAS thread count of the blocks inside :func:`blas_threads`: one at a time.

    The first block (the owner) sets the count with threadpoolctl in its own thread, and
    restores it when it ends, after every block that joined it. A block asking for the
    count being held joins it: it sets the count in its own thread too, which changes only
    a BLAS that keeps one per thread (an OpenMP build of OpenBLAS; threadpoolctl ignores it
    for a process-wide one, held by the owner). A block asking for another count waits
    until the holders have ended, as do new blocks once the owner is ending. A thread's
    nested block of the same count is the outer one.
    """

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.limit: int | None = None
        self.holders = 0
        self.ending = False
        self.mine = threading.local()  # the count this thread holds, if any

    @contextlib.contextmanager
    def __call__(self, limit: int | None) -> Iterator[None]:
        held = getattr(self.mine, "limit", _NONE)
        if held is not _NONE:
            if held != limit:
                raise RuntimeError(
                    f"blas_threads({limit!r}) inside blas_threads({held!r}) in one thread would "
                    "wait for itself: take one count for the whole block."
                )
            yield
            return
        stack = contextlib.ExitStack()
        with self.changed:
            while self.holders and (self.ending or self.limit != limit):
                self.changed.wait()
            owner = not self.holders
            if owner:
                _set_blas_threads(stack, limit)  # before any other block may join
            self.limit = limit
            self.holders += 1
        self.mine.limit = limit
        try:
            if not owner:
                _set_blas_threads(stack, limit)
            yield
        finally:
            if not owner:
                stack.close()
            del self.mine.limit
            with self.changed:
                if owner:
                    self.ending = True
                    while self.holders > 1:
                        self.changed.wait()
                    stack.close()
                    self.ending = False
                self.holders -= 1
                self.changed.notify_all()


def _set_blas_threads(stack: contextlib.ExitStack, limit: int | None) -> None:
    if limit is not None:
        from threadpoolctl import threadpool_limits

        stack.enter_context(threadpool_limits(limits=limit, user_api="blas"))


_NONE = object()
_blas_count = _BlasCount()


def blas_threads(limit: int | None) -> contextlib.AbstractContextManager[None]:
    """Run the block's BLAS calls on ``limit`` threads (None: the process's own count).

    The count holds for the whole block whatever other threads do (module docstring):
    blocks of several threads asking for one count share it, one asking for another waits
    until they end. For a BLAS call whose bits depend on the thread count: a thread that
    starts ``n_jobs``' threads takes the count they need around them (threadpoolctl lets
    only one thread set it: the others' requests are ignored), and their own blocks of that
    count join it, so that their calls run on the count a ``n_jobs=1`` run's do.
    """
    return _blas_count(limit)


class _CompileListener(numba.core.event.Listener):
    """Calls ``callback()`` when numba starts compiling a kernel of this package."""

    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback = callback

    def on_start(self, event: Any) -> None:
        py_func = getattr(event.data.get("dispatcher"), "py_func", None)
        if py_func is not None and _cache.in_package(py_func):
            self.callback()

    def on_end(self, event: Any) -> None:
        pass


@contextlib.contextmanager
def on_compile(callback: Callable[[], None]) -> Iterator[None]:
    """Call ``callback()`` each time numba starts compiling one of these kernels in the block.

    Only a compile calls it, not a kernel read back from numba's on-disk cache (numba's
    ``numba:compile`` event): what lets a progress bar say "compiling" only when it is.
    numba's listeners are process-wide, so a compile started by another
    thread meanwhile calls it too.
    """
    with numba.core.event.install_listener("numba:compile", _CompileListener(callback)):
        yield


def _renamed(
    func: Callable[..., Any], suffix: str, globals_: dict[str, Any] | None = None
) -> Callable[..., Any]:
    """A copy of ``func`` named ``func.__name__ + suffix`` (its globals, or ``globals_``)."""
    copy = types.FunctionType(
        func.__code__,
        func.__globals__ if globals_ is None else globals_,
        func.__name__ + suffix,
        func.__defaults__,
    )
    copy.__qualname__ = func.__qualname__ + suffix
    copy.__doc__ = func.__doc__
    return copy


def serial_and_parallel(driver: Callable[..., Any]) -> tuple[Any, Any]:
    """``(serial, parallel)`` dispatchers compiled from one driver, both ``cache=True``.

    ``driver`` is a plain module-level function whose loop over the units is a ``prange``:
    compiled without ``parallel`` it is a ``range`` (numba's documented behaviour, and
    ``umap/layouts.py``'s pattern), with ``parallel=True`` a parallel loop. Each variant is
    compiled from its own copy, named ``<driver>_serial`` and ``<driver>_parallel``, because
    numba's on-disk cache files a function under its qualified name and first line and keys
    the entry on signature, CPU and bytecode only, not on ``parallel``: two dispatchers of
    one function (or two closures of one factory) find each other's entries and one then
    runs the other's machine code. A closure is refused: its key hashes the captured
    values, and a captured dispatcher pickles with a fresh uuid in every process, so the
    cache would never hit. ``tests/test_kernels.py`` checks that no two cached kernels share
    an index file.

    A driver passes its loop index to the per-unit helper as ``np.int64(q)``: with
    ``parallel=True`` numba types a ``prange`` index as ``uint64`` (``int64`` in the serial
    copy), and the helper, the bulk of the code, would be compiled a second time for it
    (``_binary_update_query``: 4.6 s of CPU). ``tests/test_kernels.py`` checks every driver.
    """
    if driver.__closure__ is not None:
        raise TypeError(
            f"serial_and_parallel needs a module-level function without a closure; "
            f"{driver.__qualname__} closes over {driver.__code__.co_freevars}."
        )
    # the serial copy sees each kernel it calls (its per-unit body) as an inline="always"
    # copy: compiled once, into the driver; the parallel copy calls the kernels themselves
    # (their body inlined into a prange loop broke the binary update's error counts)
    inlined = dict(driver.__globals__)
    for name in driver.__code__.co_names:
        kernel = inlined.get(name)
        if isinstance(kernel, numba.core.registry.CPUDispatcher):
            copy = _renamed(kernel.py_func, "_inlined")
            inlined[name] = numba.njit(cache=True, inline="always")(copy)
    # nogil: a driver called from several Python threads runs in each at once (a pooled
    # recommender's cross-fitting folds, ``n_jobs``); the drivers touch no Python object
    serial = numba.njit(cache=True, nogil=True)(_renamed(driver, "_serial", inlined))
    parallel = numba.njit(cache=True, parallel=True, nogil=True)(_renamed(driver, "_parallel"))
    return serial, parallel
