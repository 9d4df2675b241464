"""``rankboost info`` for a fusion model file: the model's description of itself, printed.

Each function loads the file (:func:`rankboost.model_files.load`) and prints the model's
:meth:`describe` (:meth:`rankboost.description.Description.lines`): a linear model's weights,
formula and the engines that serve it; a boosted model's lists, importances and step
functions; an auto model's choice, then its chosen model. :func:`file_format` and
:func:`is_fusion_file` are :func:`rankboost.model_files.kind_of`.
"""

from __future__ import annotations

from typing import Any

from .. import model_files

__all__ = [
    "auto_selection_lines",
    "file_format",
    "fusion_info_lines",
    "is_fusion_file",
    "linear_info_lines",
]

_FUSION = ("rankboost-fusion", "rankboost-fusion-linear")


def file_format(path: str) -> str | None:
    """The format of the model file ``path`` (None: unreadable, or not a model file)."""
    kind = model_files.kind_of(path)
    return None if kind is None else kind.format


def is_fusion_file(path: str) -> bool:
    """``True`` if ``path`` is a fusion model of either family (auto ones included)."""
    return file_format(path) in _FUSION


def fusion_info_lines(path: str, table: Any, top: int) -> list[str]:
    """The lines ``rankboost info`` prints for the fusion model at ``path``.

    ``table(headers, rows)`` formats a table; ``top`` limits the weight or importance rows
    (0 = all). A model of ``fuse train --family auto`` starts with the family it chose and
    how every candidate scored.
    """
    model = model_files.load(path, expect=(*_FUSION, model_files.AUTO.name))
    lines: list[str] = model.describe(path).lines(table, top)
    return lines


def linear_info_lines(path: str, table: Any, top: int) -> list[str]:
    """The lines ``rankboost info`` prints for a linear fusion model: its learned weights.

    ``top`` limits the rows (the largest weights first; 0 = every list, in the model's order).
    """
    model = model_files.load(path, expect="rankboost-fusion-linear")
    lines: list[str] = model.describe(path).lines(table, top)
    return lines


def auto_selection_lines(path: str, table: Any) -> list[str]:
    """The family ``fuse train --family auto`` chose and its selection table (else no line)."""
    kind = model_files.kind_of(path)
    if kind is None or not kind.auto:
        return []
    desc = model_files.load(path, expect=model_files.AUTO.name).describe(path)
    if desc.chosen is None:  # no table of candidates
        return []
    lines: list[str] = desc.lines(table)
    return lines[: len(lines) - len(desc.chosen.lines(table))]
