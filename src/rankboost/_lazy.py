"""Lazy public names of a package: imported from their module on first access, then cached.

Package-internal. A package writes its public names twice, as scientific-python's
``lazy_loader.attach_stub`` has them: the imports under ``if TYPE_CHECKING:`` (what type
checkers and readers see) and ``__all__``; one line makes the PEP 562 hooks::

    if TYPE_CHECKING:
        from . import fusion
        from .model import RankBoostModel

    __getattr__, __dir__ = attach(__name__, __all__)

The hooks read the ``TYPE_CHECKING`` imports of the package's own source on the first lookup
(not at import, which stays light): ``from .model import RankBoostModel`` puts
``RankBoostModel`` in ``.model``; ``from . import fusion`` gives the submodule (no ``as`` in
that block).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

__all__ = ["attach", "lazy_names"]


def attach(
    package: str, public: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` of ``package``, whose lazy names are its typing imports."""

    def __getattr__(name: str) -> Any:
        """Import a public name on first access; cache it in the package (rankboost._lazy)."""
        try:
            target = lazy_names(package)[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        module = importlib.import_module(target, package)
        value = module if target == "." + name else getattr(module, name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        """What the package holds now and every public name, loaded or not."""
        return sorted(set(vars(sys.modules[package])) | set(public))

    return __getattr__, __dir__


@cache
def lazy_names(package: str) -> dict[str, str]:
    """``{name: relative module}`` of the imports under ``if TYPE_CHECKING:`` in ``package``."""
    spec = sys.modules[package].__spec__
    get_source = getattr(spec.loader, "get_source", None) if spec is not None else None
    source = get_source(package) if get_source is not None else None
    if source is None:
        raise ImportError(f"{package}: its source is needed to find its lazy public names.")
    import ast  # here, not at the package's import

    names: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                if isinstance(imp, ast.ImportFrom) and imp.level == 1:
                    for alias in imp.names:
                        names[alias.name] = "." + (imp.module or alias.name)
    return names
