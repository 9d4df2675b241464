"""The metrics' shared docstring text: each shared entry written once, filled in at import.

A metric's docstring names a shared entry by a placeholder alone on its line, ``%(qid)s``;
:func:`fill_doc` replaces the line by the entry, indented as the placeholder was, so the
rendered ``__doc__`` (``help()``, the doctests, the docs) reads as if written in full. The
same idea as pandas' ``Substitution`` and matplotlib's ``_docstring.interpd``. An entry is
shared here only when its words are the same in every metric that uses it; a metric whose
parameter means something of its own writes it in its own docstring.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable

__all__ = ["ENTRIES", "fill_doc"]

#: name -> the entry's text, its first line unindented, the others indented relative to it.
ENTRIES = {
    # -- the parameters of (almost) every metric
    "y_true": """\
y_true : array-like of shape (n_samples,)
    Relevance labels; a row is relevant when ``y_true >= relevance_threshold``.""",
    "y_score": """\
y_score : array-like of shape (n_samples,)
    Predicted scores; higher ranks first.""",
    "qid": """\
qid : array-like of shape (n_samples,), default=None
    Query id of each row, in any order. ``None`` means one query.""",
    "k_none": """\
k : int or None, default=None
    Rank cut-off; ``None`` uses the whole list.""",
    "k_10": """\
k : int or None, default=10
    Rank cut-off; ``None`` uses the whole list.""",
    "relevance_threshold": """\
relevance_threshold : float, default=1
    Labels ``>=`` this value are relevant.""",
    "per_query": """\
per_query : bool, default=False
    Return one value per query (sorted by query id) instead of the mean.""",
    # -- DCG and NDCG
    "ties_labels": """\
ties : {"expected", "pessimistic", "optimistic", "stable"}, default="expected"
    Equal scores: exact expectation under uniformly random tie-breaking, the worst or best
    order of the tied labels, or input order (earlier row first).""",
    "discount": """\
discount : {"log2", "letor"}, default="log2"
    ``1 / log2(1 + i)``, or LETOR 4.0's ``Eval-Score-4.0.pl`` (1 for ranks 1 and 2, then
    ``1 / log2(i)``).""",
    # -- the paper's movie-recommendation measures (good items of a user)
    "y_true_good": """\
y_true : array-like of shape (n_samples,)
    Ratings or relevance labels; an item is good when ``y_true >= relevance_threshold``.""",
    "qid_user": """\
qid : array-like of shape (n_samples,), default=None
    Query (user) id of each row, in any order. ``None`` means one query.""",
    "ties_good": """\
ties : {"expected", "pessimistic", "optimistic", "stable"}, default="expected"
    ``"expected"`` is the paper's exact expectation under uniformly random tie-breaking;
    the others put good items last or first in their tie block, or keep input order.""",
    "relevance_threshold_good": """\
relevance_threshold : float, default=1
    Labels ``>=`` this value are good. For the paper's "top rating" choice pass the
    user's highest rating (per query, e.g. via a transformed ``y_true``).""",
    "empty_good": """\
empty : {"zero", "one", "skip"}, default="zero"
    Value of a query without any good item: 0, 1, or left out of the mean (NaN per
    query; the mean is 0.0 if every query is left out).""",
    "returns_good": """\
float or ndarray of shape (n_queries,)
    The mean over queries, or the per-query values.""",
    "freund_2003": """\
.. [1] Y. Freund, R. Iyer, R. E. Schapire and Y. Singer, "An efficient boosting algorithm
   for combining preferences", JMLR 4, 2003, section 6.3 and Appendix A.""",
}

_PLACEHOLDER = re.compile(r"^( *)%\((\w+)\)s$", re.MULTILINE)


def fill_doc(*functions: Callable[..., object]) -> None:
    """Replace each ``%(name)s`` line of the functions' docstrings by ``ENTRIES[name]``.

    Called once at the end of a metric module, with its public metrics. An unknown name is a
    ``KeyError`` at import, so a typo cannot reach the docs.
    """
    for func in functions:
        if func.__doc__ is not None:  # None under ``python -OO``
            func.__doc__ = _PLACEHOLDER.sub(
                lambda m: textwrap.indent(ENTRIES[m[2]], m[1]), func.__doc__
            )
