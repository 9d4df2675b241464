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
import inspect
import re
import textwrap
import tokenize
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = ["changed", "default_of", "shown", "signature_defaults"]

_EMPTY = object()


#: The folder of the ``rankboost`` package (its modules' sources are read from there).
_PACKAGE = Path(__file__).resolve().parents[1]


def _module_path(module: str) -> Path:
    """The source file of ``rankboost`` module ``module``, found without importing it."""
    base = _PACKAGE.joinpath(*module.split(".")[1:])
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def _signature_node(module: str, name: str) -> ast.FunctionDef:
    """The ``def`` of function ``name``, or of class ``name``'s ``__init__``, in ``module``.

    Only the signature is parsed (from ``def`` to its ``:``), not the whole module.
    """
    text = _module_path(module).read_text(encoding="utf-8")
    start = None
    found = re.search(rf"^class {re.escape(name)}\b", text, re.MULTILINE)
    if found is not None:
        end = re.search(r"^(?:class|def) ", text[found.end() :], re.MULTILINE)
        body = text[found.end() : found.end() + end.start() if end else len(text)]
        init = re.search(r"^    def __init__\(", body, re.MULTILINE)
        start = None if init is None else found.end() + init.start()
    else:
        found = re.search(rf"^def {re.escape(name)}\(", text, re.MULTILINE)
        start = None if found is None else found.start()
    if start is None:
        raise LookupError(f"{module} has no function or class {name!r} with a signature")
    depth, stop = 0, len(text) - start
    lines = text[start:].splitlines(keepends=True)
    for token in tokenize.generate_tokens(iter(lines).__next__):
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        elif token.type == tokenize.OP and token.string == ":" and depth == 0:
            row, col = token.end
            stop = sum(len(line) for line in lines[: row - 1]) + col
            break
    node = ast.parse(textwrap.dedent(text[start : start + stop]) + " ...\n").body[0]
    if not isinstance(node, ast.FunctionDef):  # pragma: no cover - the expressions above
        raise LookupError(f"{module}.{name}: no signature found")
    return node


class _Defaults(Mapping[str, Any]):
    """``{parameter: default}`` of one signature, read from the source.

    A default that is not a literal (a module constant) is read from the imported object
    when it is asked for.
    """

    def __init__(self, target: str, literal: dict[str, Any], named: set[str]) -> None:
        self.target, self.literal, self.named = target, literal, named

    def __getitem__(self, key: str) -> Any:
        if key in self.literal:
            return self.literal[key]
        if key not in self.named:
            raise KeyError(key)
        module, name = self.target.split(":")
        obj = getattr(importlib.import_module(module), name)
        return inspect.signature(obj).parameters[key].default

    def __iter__(self) -> Iterator[str]:
        return iter([*self.literal, *sorted(self.named)])

    def __len__(self) -> int:
        return len(self.literal) + len(self.named)


@functools.cache
def signature_defaults(target: str) -> Mapping[str, Any]:
    """``{parameter: default}`` of ``"module:name"`` (a function, or a class's ``__init__``).

    Read from the module's source, without importing it; a default that is not a literal (a
    module constant) is read from the imported object when it is asked for.
    """
    module, name = target.split(":")
    a = _signature_node(module, name).args
    positional = [*a.posonlyargs, *a.args]
    pairs = list(zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True))
    pairs += [(arg, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None]
    literal: dict[str, Any] = {}
    named = set()
    for arg, expr in pairs:
        try:
            literal[arg.arg] = ast.literal_eval(expr)
        except ValueError:  # a name or a call: the imported object knows its value
            named.add(arg.arg)
    return _Defaults(target, literal, named)


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
