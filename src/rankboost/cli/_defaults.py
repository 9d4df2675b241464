"""Each option's default, read from the function or class it is passed to (never restated).

An option that sets a parameter of what a command calls (``--eta`` of ``clicks simulate`` is
``simulate_to_file(eta=...)``) takes that parameter's default from the signature:
:func:`default_of` reads it from the source of the module that defines it, without
importing the module (``rankboost --help`` and building the parser stay fast: the click
modules import numba), and :func:`changed` gives the keyword arguments of the options whose
value is not that default: an option left at its default is not passed, so the callee's own
default applies. The training parameters take theirs from :mod:`rankboost.params`.

Examples
--------
>>> default_of("rankboost.fusion.auto:AutoFusion", "cv_folds")
5
>>> import argparse
>>> changed(argparse.Namespace(eta=1.0, shown=5), "rankboost.clicks._simulate:simulate_to_file",
...         {"eta": "eta", "shown": "n_shown"})
{'n_shown': 5}
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import importlib.util
import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["changed", "default_of", "shown", "signature_defaults"]

_EMPTY = object()


@functools.cache
def signature_defaults(target: str) -> dict[str, Any]:
    """``{parameter: default}`` of ``"module:name"`` (a function, or a class's ``__init__``).

    Read from the module's source; a default that is not a literal (a module constant) is
    read from the imported object instead.
    """
    module, name = target.split(":")
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ImportError(f"no module {module!r}")
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    node = next(
        n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name
    )
    if isinstance(node, ast.ClassDef):
        node = next(n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    assert isinstance(node, ast.FunctionDef)
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    pairs = list(zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True))
    pairs += [(arg, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None]
    out: dict[str, Any] = {}
    for arg, expr in pairs:
        try:
            out[arg.arg] = ast.literal_eval(expr)
        except ValueError:  # a name or a call: the imported object knows its value
            obj = getattr(importlib.import_module(module), name)
            out[arg.arg] = inspect.signature(obj).parameters[arg.arg].default
    return out


def default_of(target: str, parameter: str) -> Any:
    """The default of ``parameter`` of ``target`` (``"module:function"`` or ``"module:Class"``).

    Raises ``KeyError`` when the parameter has no default (the command must give one).
    """
    return signature_defaults(target)[parameter]


def shown(value: Any) -> str:
    """A default as ``--help`` prints it: ``on``/``off``, ``0.3``, ``none``, ``auto``."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None:
        return "none"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def changed(args: argparse.Namespace, target: str, names: Mapping[str, str]) -> dict[str, Any]:
    """The keyword arguments of ``target`` that the options ``names`` change.

    ``names``: option destination -> ``target``'s parameter. An option whose value is the
    parameter's default (the option was not given) is left out.
    """
    defaults = signature_defaults(target)
    out = {}
    for dest, parameter in names.items():
        value = getattr(args, dest)
        if value != defaults.get(parameter, _EMPTY):
            out[parameter] = value
    return out
