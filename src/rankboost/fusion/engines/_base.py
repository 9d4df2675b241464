"""What every engine module shares: the row of the engines table and the float32 helpers.

:class:`Engine` is one row of :data:`rankboost.fusion.engines.ENGINES`: everything
``fuse export``, ``rankboost info`` (through the models' ``describe``) and the docs need
about one engine. :class:`Support` says how exactly the engine serves a linear model of one
normaliser. The helpers evaluate requests as the engines do, in 32-bit floats (numpy
``float32`` arithmetic is IEEE-754 single precision, as Java's ``float``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..features import RunsLike, as_run_list
from ..run import Run

__all__ = [
    "F32",
    "Engine",
    "Support",
    "by_query",
    "one_per_list",
    "rankings",
    "run_of_rows",
    "vector_names",
    "weighted_sum",
]

F32 = np.float32

#: An evaluator's result: query -> document -> the score the engine gives it.
Scores = dict[str, dict[str, float]]


@dataclass(frozen=True)
class Support:
    """How an engine serves a linear model trained with one normaliser.

    Attributes
    ----------
    how : {"exact", "approximate"}
        ``"exact"``: the engine ranks as ``fuse apply``; ``"approximate"``: it ranks
        otherwise, and the request is written only when ``option`` is passed.
    writes : str
        What the request does, in one line (the docs, ``rankboost info``).
    condition : str, default=""
        A condition on the model's weights, in words ("" = none).
    when : callable, default=None
        That condition: ``when(weights) -> bool``.
    refusal : str, default=""
        The error when the condition fails (``{weights}``: the weights) or when an
        approximate request is not asked for.
    option : str, default=""
        The ``export_linear`` option that asks for an approximate request
        (``--approximate`` on the command line).
    """

    how: str
    writes: str
    condition: str = ""
    when: Callable[[NDArray[np.float64]], bool] | None = None
    refusal: str = ""
    option: str = ""

    def refuse(self, weights: NDArray[np.float64]) -> str:
        """The refusal, with the weights filled in."""
        return self.refusal.format(weights=", ".join(f"{x:g}" for x in weights))


@dataclass(frozen=True)
class Engine:
    """One engine: what it expresses, its request, its arithmetic, where it was run.

    Attributes
    ----------
    name : str
        ``--engine NAME``.
    label : str
        The engine's own name ("Elasticsearch").
    normalizers : mapping of str to Support
        The normalisers of a linear model the engine expresses, and how exactly.
    refusal : str
        The error for any other normaliser (``{engine}``, ``{normalizer}``).
    request : callable
        ``request(model, weights, **options) -> dict``: the JSON body of the request (or
        search pipeline); ``weights`` are the model's checked weights. The options
        ``export_linear`` names take their defaults from its signature (keyword-only here,
        without defaults); an option only a new engine has keeps its default here and
        reaches it through ``export_linear(**opts)``.
    options : tuple of str
        The ``export_linear`` options ``request`` takes (``rank_window_size``, ...).
    scores : callable
        ``scores(runs, body) -> {query: {document: score}}``: the reference evaluator, the
        engine's fusion arithmetic in float32 (``check_export``, ``fuse export
        --check-runs``).
    source : str
        What the evaluator is written from (release, file, function).
    run_for_real : str
        Where the engine is run for real ("" when it is only modelled): the module whose
        helpers query it, and the client.
    explain : callable, default=None
        ``explain(model, runs, body, bad) -> str``: the engine's own cause of a ranking
        that differs from ``fuse apply`` ("" when it is not the cause).
    asks : mapping of str to str, default={}
        Options of ``options`` that ``fuse export`` must be given, each with what it names
        (the model's list names are run file names, which no collection uses).
    """

    name: str
    label: str
    normalizers: Mapping[str, Support]
    refusal: str
    request: Callable[..., dict[str, Any]]
    options: tuple[str, ...]
    scores: Callable[[RunsLike, dict[str, Any]], Scores]
    source: str
    run_for_real: str = ""
    explain: Callable[[Any, RunsLike, dict[str, Any], list[str]], str] | None = None
    asks: Mapping[str, str] = field(default_factory=dict)

    def asked(self) -> str:
        """The options ``fuse export`` needs for this engine, as a command shows them.

        >>> from rankboost.fusion.engines import ENGINES
        >>> ENGINES["qdrant"].asked(), ENGINES["elasticsearch"].asked()
        ('--vectors VECTORS', '')
        """
        return " ".join(f"--{o.replace('_', '-')} {o.upper()}" for o in self.asks)

    def serves(self, normalizer: str, weights: NDArray[np.float64]) -> tuple[str, str]:
        """``(how, note)`` for a linear model: "exact", "approximate" or "no", and a note.

        The note says what an approximate request does, or the condition a model of a
        normaliser the engine expresses does not meet; "" otherwise.
        """
        support = self.normalizers.get(normalizer)
        if support is None:
            return "no", ""
        if support.when is not None and not support.when(weights):
            return "no", f"only when {support.condition}"
        return support.how, support.writes if support.how != "exact" else ""


#: The refusal of the engines that normalise with min-max or RRF only.
MINMAX_OR_RRF = (
    "export_linear: {engine} normalises with min-max or RRF, not the {normalizer!r} this model "
    "was trained with; train with normalizer='minmax' or 'rrf' for this engine ('dbsf' is "
    "Qdrant's, 'atan' Milvus's)."
)


def one_per_list(model: Any, items: list[Any], owner: str, what: str, show: bool = True) -> None:
    """Raise ``ValueError`` unless ``items`` has one entry per list of ``model``."""
    names = list(model.list_names_)
    if len(items) != len(names):
        given = f" ({', '.join(items)})" if show else ""
        raise ValueError(
            f"{owner}: {len(items)} {what} given{given} for a model of {len(names)} lists "
            f"({', '.join(names)}); pass one per list, in that order."
        )


def vector_names(model: Any, vectors: Sequence[str] | None, owner: str, what: str) -> list[str]:
    """The engine's vector of each list of ``model`` (``vectors``; None: the list names)."""
    using = list(vectors) if vectors is not None else list(model.list_names_)
    one_per_list(model, using, owner, what)
    return using


def by_query(run: Run) -> dict[str, tuple[list[str], NDArray[np.float32], NDArray[np.int64]]]:
    """Per query: (documents in rank order, float32 scores, ranks), as an engine returns hits."""
    srt = run.sorted()
    out: dict[str, Any] = {}
    q = srt.qid
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    ends = np.r_[starts[1:], q.shape[0]]
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        out[str(q[a])] = (srt.docid[a:b].tolist(), srt.score[a:b].astype(F32), srt.rank[a:b])
    return out


def weighted_sum(runs: RunsLike, weights: list[float], values: Any, owner: str) -> Scores:
    """``sum_i weights[i] * values(run_i)`` per document (absent: nothing), then float32."""
    items = as_run_list(runs, owner)
    if len(weights) != len(items):
        raise ValueError(
            f"{owner}: the request fuses {len(weights)} lists and {len(items)} runs were given."
        )
    acc: dict[str, dict[str, float]] = {}
    for run, w in zip(items, weights, strict=True):
        srt = run.sorted()
        for q, d, x in zip(srt.qid.tolist(), srt.docid.tolist(), values(srt).tolist(),
                           strict=True):  # fmt: skip
            m = acc.setdefault(q, {})
            m[d] = m.get(d, 0.0) + float(w) * x
    return {q: {d: float(F32(x)) for d, x in m.items()} for q, m in acc.items()}


def rankings(run: Run) -> dict[str, list[str]]:
    """Per query, the document ids in the run's order."""
    out: dict[str, list[str]] = {}
    for q, d in zip(run.qid.tolist(), run.docid.tolist(), strict=True):
        out.setdefault(q, []).append(d)
    return out


def run_of_rows(
    rows: Sequence[tuple[str, str, int, float]], name: str, owner: str, n_queries: int
) -> Run:
    """The run of an engine's hits, ``(qid, docid, rank, score)`` rows (``owner`` searched).

    A query without hits is absent from the run; no hit for any query is an error (a run
    needs an entry), the same for every engine.
    """
    if not rows:
        raise ValueError(
            f"{owner}: the engine returned no document for any of the {n_queries} queries; a "
            "run needs at least one (does the collection hold the documents, and do the "
            "queries share terms or a vector space with them?)."
        )
    q, d, r, s = zip(*rows, strict=True)
    return Run(list(q), list(d), list(r), list(s), name=name)
