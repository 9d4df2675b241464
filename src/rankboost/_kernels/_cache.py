"""The on-disk cache of the kernels, keyed on every kernel source, not only the function's file.

numba files a compiled function under the source file that defines it and reloads it while
that file's content is unchanged. A driver's machine code also holds the kernels it calls
from *other* files (``layered._binary_update_serial`` calls ``pairwise.counting_merge``), so
an upgrade that changes only ``pairwise.py`` would reload a ``layered`` driver built from the
old merge: stale code, silently. Here every kernel's cache stamp is its file's stamp plus a
digest of all the ``.py`` files of this package: a change to any kernel recompiles them all,
once. Installed by :mod:`rankboost._kernels` before any kernel is decorated; functions outside
this package keep numba's own locators. Reading and hashing the sources costs about 1 ms.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from numba.core import caching

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


def install() -> None:
    """Put the kernel locators first in numba's list (once; numba >= 0.58 names)."""
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # type: ignore[attr-defined]
    locators = impl._locator_classes
    if any(getattr(c, "__module__", "") == __name__ for c in locators):
        return
    names = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")
    bases = [getattr(caching, n, None) or getattr(caching, "_" + n) for n in names]
    locators[:0] = [_keyed(b) for b in bases]
