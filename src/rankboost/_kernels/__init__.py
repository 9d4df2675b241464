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
site. ``tests/test_startup.py`` counts what a first training compiles.
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Callable, Iterator
from typing import Any

import numba

from . import _cache

_cache.install()  # before any kernel is decorated: caches keyed on every kernel source

#: Work (elements touched) below which the serial driver is used. Measured with
#: ``benchmarks/bench_parallel.py`` (histogram kernel, both drivers side by side, OpenMP layer,
#: 2 cores): idle, the parallel driver takes 0.5-0.7x the serial time at every size from
#: 322k elements; with the other core busy it takes 7x at 322k, 2x at 6.8M and breaks even
#: only near 27M. 2M keeps small problems (LETOR-size fits, per-user models) serial, where a
#: busy machine would otherwise multiply their time, and large ones parallel.
PARALLEL_MIN_WORK = 2_000_000


def use_parallel(work: int) -> bool:
    """Whether a kernel touching ``work`` elements should run its parallel driver."""
    return work >= PARALLEL_MIN_WORK and numba.get_num_threads() > 1


@contextlib.contextmanager
def numba_threads(n: int) -> Iterator[None]:
    """Run numba kernels with ``n`` threads inside the block (thread-local, then restored).

    For code that already runs in parallel at another level (joblib workers, Dask workers):
    there, the kernels must not use every core of the machine as well.
    """
    old = numba.get_num_threads()
    numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))  # type: ignore[attr-defined]
    try:
        yield
    finally:
        numba.set_num_threads(old)


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
