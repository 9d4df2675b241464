"""Tables of named entries: :func:`by_name`, the one way a table is keyed by its entries' names.

The model file formats (:data:`rankboost.model_files.FORMATS`), the fusion normalisers
(:data:`rankboost.fusion.features.NORMALIZERS`) and the search engines
(:data:`rankboost.fusion.engines.ENGINES`) are each written as a tuple of entries that carry
their own ``name``; the table maps each name to its entry, in the order written. Imports
nothing (:mod:`rankboost.params`, which imports nothing either, keys its own table).

Examples
--------
>>> from collections import namedtuple
>>> Entry = namedtuple("Entry", "name value")
>>> by_name([Entry("a", 1), Entry("b", 2)])
{'a': Entry(name='a', value=1), 'b': Entry(name='b', value=2)}
>>> by_name([Entry("a", 1), Entry("a", 2)])
Traceback (most recent call last):
...
ValueError: two entries of one table are named 'a'; each name must be distinct.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

__all__ = ["by_name"]


class _Named(Protocol):
    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=_Named)


def by_name(entries: Iterable[T]) -> dict[str, T]:
    """``{entry.name: entry}`` in the order of ``entries``; a repeated name is a ValueError."""
    table: dict[str, T] = {}
    for entry in entries:
        if entry.name in table:
            raise ValueError(
                f"two entries of one table are named {entry.name!r}; each name must be distinct."
            )
        table[entry.name] = entry
    return table
