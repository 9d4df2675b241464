"""Match the runs given to a fitted fusion model to its lists by name (every family).

:func:`fitted_lists` makes the checks of ``RankFusion`` and ``LinearFusion`` on the runs they
are given after ``fit`` (fitted, ``match``, the number of lists), then :func:`match_by_name`.

A fusion model's feature ``i`` is "the rank in list ``i``": runs given in another order than
at training would be fused silently with the wrong weights. The model stores each list's
name (:attr:`RankFusion.list_names_`, the :attr:`Run.name` seen by ``fit``: the file path
for runs read by :func:`~rankboost.fusion.read_run` and the command line), so the runs are
put in the trained order by name:

1. by the full name, when the given names are exactly the trained ones;
2. else by the file name (last path component), when those are distinct on both sides and
   the same, so the same run files read from another folder match;
3. else it is an error naming the lists missing and the lists unknown.

Names are *not available* when a side has a duplicate name or the default name ``"run"``
(unnamed :class:`Run` objects): the runs are then used in the order given.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any, TypeVar

from .._validation import not_fitted
from .features import RunsLike, as_run_list
from .run import Run

__all__ = ["MATCH_MODES", "fitted_lists", "match_by_name"]

#: Values of the ``match`` parameter of ``RankFusion.fuse`` / ``decision_function``.
MATCH_MODES = ("name", "order")
#: :class:`~rankboost.fusion.Run`'s default name: a run without a name of its own.
_UNNAMED = "run"

T = TypeVar("T")


def _named(names: list[str]) -> bool:
    return len(set(names)) == len(names) and _UNNAMED not in names


def _file_name(name: str) -> str:
    return PurePath(name).name or name


def match_by_name(trained: list[str], given: list[str], items: list[T], owner: str) -> list[T]:
    """``items`` (named ``given``) in the order of ``trained``; see the module docstring.

    Examples
    --------
    >>> match_by_name(["a.run", "b.run"], ["test/b.run", "test/a.run"], ["B", "A"], "fuse")
    ['A', 'B']
    >>> match_by_name(["run", "run"], ["run", "run"], ["x", "y"], "fuse")  # unnamed: order
    ['x', 'y']
    """
    if not (_named(trained) and _named(given)) or given == trained:
        return list(items)
    for key in (str, _file_name):
        t, g = [key(n) for n in trained], [key(n) for n in given]
        if _named(t) and _named(g) and set(t) == set(g):
            return [items[g.index(n)] for n in t]
    t_files = {_file_name(n) for n in trained}
    g_files = {_file_name(n) for n in given}
    missing = [n for n in trained if n not in given and _file_name(n) not in g_files]
    unknown = [n for n in given if n not in trained and _file_name(n) not in t_files]
    why = (
        f"missing {missing or 'none'}, unknown {unknown or 'none'}"
        if missing or unknown
        else f"the file names of {given} are not distinct, so they match no list for sure"
    )
    raise ValueError(
        f"{owner}: the runs given do not match the lists the model was trained on "
        f"({', '.join(trained)}): {why}. Pass the runs it was trained on, with the same "
        "names (Run(name=...), or the same file names), or match='order' (command line: "
        "--by-order) to use them in the order given."
    )


def fitted_lists(
    model: Any, runs: RunsLike, owner: str, match: str, fitted: str, why: str = ""
) -> list[Run]:
    """The runs given to a fitted fusion ``model``, in the order of its lists.

    ``model`` is fitted when it has the attribute ``fitted``; it has ``n_lists_`` and
    ``list_names_``. ``why`` ends the message of a wrong number of lists.
    """
    if not hasattr(model, fitted):
        raise not_fitted(owner, model)
    if match not in MATCH_MODES:
        raise ValueError(f"{owner}: match must be one of {MATCH_MODES}; got {match!r}.")
    items = as_run_list(runs, owner)
    if len(items) != model.n_lists_:
        raise ValueError(
            f"{owner}: the model was trained on {model.n_lists_} input lists "
            f"({', '.join(model.list_names_)}) but {len(items)} were given{why}."
        )
    if match == "order":
        return items
    return match_by_name(model.list_names_, [r.name for r in items], items, owner)
