"""Lazy public names of a package: imported from their module on first access, then cached.

Package-internal. A package lists ``{name: relative module}`` and defines two one-line hooks
(PEP 562), so that type checkers still see plain functions::

    def __getattr__(name: str) -> Any:
        return lazy_attribute(__name__, _LAZY, name)

    def __dir__() -> list[str]:
        return lazy_dir(__name__, __all__)

A name that maps to its own submodule (``"fusion": ".fusion"``) gives the submodule.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["lazy_attribute", "lazy_dir"]


def lazy_attribute(package: str, names: Mapping[str, str], name: str) -> Any:
    """Import ``name`` of ``package`` from ``names[name]``, cache it in the package, return it."""
    try:
        target = names[name]
    except KeyError:
        raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
    module = importlib.import_module(target, package)
    value = module if target == "." + name else getattr(module, name)
    setattr(sys.modules[package], name, value)
    return value


def lazy_dir(package: str, public: Iterable[str]) -> list[str]:
    """``dir(package)``: what it holds now and every public name, loaded or not."""
    return sorted(set(vars(sys.modules[package])) | set(public))
