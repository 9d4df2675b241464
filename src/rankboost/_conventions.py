"""The metric conventions and their allowed values: the one definition (docs/metrics.md).

``rankboost.metrics`` checks its arguments against these tuples and re-exports them as
:data:`rankboost.metrics.CONVENTIONS`; the command line builds its ``--gain`` / ``--discount``
/ ``--ties`` / ``--empty`` options from them. This module imports nothing, so that building
the ``rankboost`` parser does not load numpy or numba.
"""

from __future__ import annotations

__all__ = [
    "CONVENTIONS", "DEFAULTS", "DISCOUNTS", "EMPTY", "FEATURE_NUMBERING", "GAINS",
    "INNER_FOLDS", "INNER_FOLDS_NOTE", "MEANINGS", "TIES", "format_conventions",
]  # fmt: skip

#: Gain of a label ``rel``: ``2**rel - 1`` (LETOR / Burges) or ``rel`` (trec_eval).
GAINS = ("exp2", "linear")
#: Discount of rank ``i``: ``1 / log2(1 + i)``, or LETOR 4.0's ``Eval-Score-4.0.pl`` (1 for
#: ranks 1 and 2, then ``1 / log2(i)``).
DISCOUNTS = ("log2", "letor")
#: Order of equal scores: the expectation under random tie-breaking, worst or best labels
#: first, or input order.
TIES = ("expected", "pessimistic", "optimistic", "stable")
#: Value of a query without a relevant document: 0, 1, or left out of the mean.
EMPTY = ("zero", "one", "skip")

CONVENTIONS: dict[str, tuple[str, ...]] = {
    "gain": GAINS,
    "discount": DISCOUNTS,
    "ties": TIES,
    "empty": EMPTY,
}
#: The defaults of the metric functions' signatures (a test checks that they agree).
DEFAULTS: dict[str, str] = {"gain": "exp2", "discount": "log2", "ties": "expected", "empty": "zero"}
#: One phrase per value, for help texts and the line the CLI prints under its results.
MEANINGS: dict[str, str] = {
    "exp2": "2^rel - 1",
    "linear": "rel",
    "log2": "1/log2(1 + rank)",
    "letor": "LETOR 4.0: 1 for ranks 1-2, then 1/log2(rank)",
    "expected": "expectation over random tie-breaking",
    "pessimistic": "worst labels first",
    "optimistic": "best labels first",
    "stable": "input order",
    "zero": "a query without relevant document scores 0",
    "one": "a query without relevant document scores 1",
    "skip": "queries without relevant document left out",
}

#: How features without names are labelled, stated wherever they are shown (``rankboost
#: info``, the plots, ``RankBoostModel.history["feature_label"]``): ``f<id>`` with the 1-based
#: id of LETOR files, ``f1`` being column 0 of ``X``.
FEATURE_NUMBERING = "feature numbering: 1-based ids as in LETOR; 0-based column = id - 1"

#: How fusion's inner folds score their held-out NDCG@10 (``fuse train``, ``info``): the
#: metric's defaults, over the queries that can train (a relevant document), so as "skip".
INNER_FOLDS: dict[str, str] = {
    "gain": "exp2", "discount": "log2", "ties": "expected", "empty": "skip",
}  # fmt: skip
#: What the inner folds' held-out NDCG@10 is not: ``fuse evaluate``'s number.
INNER_FOLDS_NOTE = (
    "over the documents the runs return. 'fuse evaluate' counts a query without relevant "
    "document as 0 (--empty zero) and ranks the judged documents no run returned last, so "
    "it prints another number for the same ranking"
)


def format_conventions(used: dict[str, str]) -> str:
    """``conventions: gain=exp2 (2^rel - 1), ...``: the line printed under the results.

    Examples
    --------
    >>> format_conventions({"gain": "exp2", "empty": "skip"})
    'conventions: gain=exp2 (2^rel - 1), empty=skip (queries without relevant document left out)'
    """
    parts = [f"{k}={v} ({MEANINGS.get(v, v)})" for k, v in used.items()]
    return "conventions: " + ", ".join(parts)
