"""The on-disk cache of the kernels, keyed on every kernel source, not only the function's file.

numba files a compiled function under the source file that defines it and reloads it while
that file's content is unchanged. A driver's machine code also holds the kernels it calls
from *other* files (``layered._binary_update_serial`` calls ``pairwise.counting_merge``), so
an upgrade that changes only ``pairwise.py`` would reload a ``layered`` driver built from the
old merge: stale code, silently. Here every kernel's cache stamp is its file's stamp plus a
digest of all the ``.py`` files of this package: a change to any kernel recompiles them all,
once. Installed by :mod:`rankboost._kernels` before any kernel is decorated; functions outside
this package keep numba's own locators. Reading and hashing the sources costs about 1 ms.

Loading, not compiling. Before it reads a cached function numba sets up its whole
CPU target (``BaseContext.refresh``: it imports numba's implementations of Python and numpy,
``numba.np.linalg`` to ``numba.experimental.jitclass``, and registers their typing templates),
which only the compiler needs: 0.3 s of CPU with numba's bytecode compiled, 0.7 s without,
against 0.04 s for loading all eight kernels of a training (``benchmarks/bench_startup.py
--first-fit`` prints each piece). :class:`KernelCache` reads the kernels of this package with
only what their machine code needs, numba's runtime (NRT); a kernel that is not in the cache is
compiled as before, after the set-up that numba's own load does first (so that the time a
``numba:compile`` event reports, which ``benchmarks/bench_startup.py --cold`` sums per kernel,
is the kernel's compile, not the one-time set-up; 0.2-0.3 s of CPU that the first compiled
kernel counted otherwise).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from numba.core import caching, dispatcher
from numba.core.runtime import nrt

_DIR = os.path.dirname(os.path.abspath(__file__))


def sources_digest(directory: str = _DIR) -> str:
    """SHA-256 of the names and contents of the ``.py`` files of ``directory``, sorted."""
    h = hashlib.sha256()
    for name in sorted(os.listdir(directory)):
        if name.endswith(".py"):
            h.update(name.encode())
            with open(os.path.join(directory, name), "rb") as f:
                h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()


DIGEST = sources_digest()


def _keyed(base: type) -> type:
    """``base`` (a numba cache locator) for the kernels of this package, stamped with DIGEST."""

    class Locator(base):
        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            if os.path.dirname(os.path.abspath(py_file)) != _DIR:
                return None
            return super().from_function(py_func, py_file)

        def get_source_stamp(self) -> Any:
            return (super().get_source_stamp(), DIGEST)

    Locator.__name__ = Locator.__qualname__ = "Kernels" + base.__name__.lstrip("_")
    return Locator


class KernelCache(caching.FunctionCache):
    """numba's cache of one kernel, read without setting up numba's compiler (module docstring).

    numba's ``Cache.load_overload`` refreshes the target context first (its registries of
    implementations and typing templates, for the compiler); loaded machine code needs only
    numba's runtime, initialised here as numba's refresh does. The bytes read, the checks of
    the index (source stamp, signature, CPU, numba version) and the rebuilt function are
    numba's own.
    """

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        nrt.rtsys.initialize(target_context)
        with self._guard_against_spurious_io_errors():
            cres = self._load_overload(sig, target_context)
        if cres is None:  # not in the cache: numba compiles it next, and sets up its compiler
            target_context.refresh()  # here, as numba's own load does: before the compile
        return cres


def _enable_caching(self: Any) -> None:
    """``Dispatcher.enable_caching``: :class:`KernelCache` for this package's kernels."""
    if in_package(self.py_func):
        self._cache = KernelCache(self.py_func)
    else:
        _numba_enable_caching(self)


def in_package(py_func: Any) -> bool:
    """Whether ``py_func`` is defined in this package (a kernel), by its code's file."""
    code = getattr(py_func, "__code__", None)
    return code is not None and os.path.dirname(os.path.abspath(code.co_filename)) == _DIR


_numba_enable_caching = dispatcher.Dispatcher.enable_caching


def install() -> None:
    """Put the kernel locators first in numba's list; read the kernels with KernelCache.

    Once per process; numba >= 0.58 names.
    """
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # type: ignore[attr-defined]
    locators = impl._locator_classes
    if any(getattr(c, "__module__", "") == __name__ for c in locators):
        return
    dispatcher.Dispatcher.enable_caching = _enable_caching  # type: ignore[method-assign]
    names = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")
    bases = [getattr(caching, n, None) or getattr(caching, "_" + n) for n in names]
    locators[:0] = [_keyed(b) for b in bases]
