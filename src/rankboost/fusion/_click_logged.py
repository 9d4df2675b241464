"""The fusions that served a click log: declared, checked against the log, sessions attributed.

``logged_by`` (``fuse train --logged-by``) names the fusion that served the logged lists:
``"rrf"``, ``"sum"``, ``"wsum:W1,W2,..."`` (:func:`rankboost.fusion.clicks.simple_fusion`),
the path of a model file of ``rankboost fuse train``, or a fitted fusion; a list of them when
several fusions served the log in an A/B fashion (each session shown one fusion's list).

Each fusion fuses the runs given, and every session of the log must be the top of one of
their lists: each logged position is a rank that fusion serves the document at (any rank of
its block of tied scores, since a tie may be broken either way). A log that disagrees is an
error that counts the impressions, sessions and queries that no declared fusion serves where
they were logged, with an example and what to fix. A session the lists of several fusions
agree on is counted for the first of them.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "SIMPLE_FUSIONS",
    "Served",
    "check_logged",
    "logging_fusions",
    "served_ranks",
    "simple_fusion",
]

#: The fusions :func:`simple_fusion` names (``rankboost clicks simulate --fusion``): RRF with
#: k = 60, the equal-weight sum of min-max scores, or ``wsum:W1,W2,...`` (one weight per run).
SIMPLE_FUSIONS = ("rrf", "sum", "wsum:W1,W2,...")


class Served(NamedTuple):
    """Which declared fusion served each session of a log (:func:`check_logged`)."""

    #: the declared fusions' labels (their spec, path or class name)
    labels: list[str]
    #: ``(n_sessions,)`` index into ``labels`` of the fusion whose list each session shows
    session: NDArray[np.int64]
    #: sessions (times their ``count``) each fusion served
    n_sessions: NDArray[np.float64]


def simple_fusion(spec: str, names: list[str]) -> Any:
    """The LinearFusion ``spec`` names for runs ``names``, or None when it names none.

    ``"rrf"``: reciprocal rank fusion (k = 60); ``"sum"``: the equal-weight sum of min-max
    scores; ``"wsum:0.7,0.3"``: a weighted sum of min-max scores, one weight per run.

    Examples
    --------
    >>> simple_fusion("wsum:0.7,0.3", ["bm25", "dense"]).weights_.round(2).tolist()
    [0.7, 0.3]
    >>> simple_fusion("model.json", ["bm25", "dense"]) is None
    True
    """
    from .linear import LinearFusion

    if spec == "rrf":
        return LinearFusion.from_weights(names, np.ones(len(names)), normalizer="rrf")
    if spec == "sum":
        return LinearFusion.from_weights(names, np.ones(len(names)))
    if not spec.startswith("wsum:"):
        return None
    try:
        w = [float(x) for x in spec[5:].split(",")]
    except ValueError:
        w = []
    if len(w) != len(names):
        raise ValueError(
            f"fusion {spec!r}: wsum needs one weight per run ({len(names)}: "
            f"{', '.join(names)}), comma-separated, e.g. wsum:{','.join(['0.5'] * len(names))}."
        )
    return LinearFusion.from_weights(names, w)


def logging_fusions(logged_by: Any, names: list[str], owner: str) -> list[tuple[str, Any]]:
    """``(label, fitted fusion)`` of each fusion ``logged_by`` declares, for runs ``names``."""
    one = isinstance(logged_by, (str, os.PathLike)) or hasattr(logged_by, "fuse")
    specs = [logged_by] if one else list(logged_by)
    if not specs:
        raise ValueError(f"{owner}: logged_by is empty; name the fusion that served the log.")
    out: list[tuple[str, Any]] = []
    for spec in specs:
        if hasattr(spec, "fuse"):
            label = type(spec).__name__
            if any(lab == label for lab, _ in out):
                label = f"{label} #{len(out) + 1}"
            out.append((label, spec))
            continue
        if not isinstance(spec, (str, os.PathLike)):
            raise TypeError(
                f"{owner}: logged_by must be 'rrf', 'sum', 'wsum:W1,W2,...', a model file or "
                f"a fitted fusion (or a list of them); got {type(spec).__name__}."
            )
        model = simple_fusion(str(spec), names)
        if model is None:
            from .. import model_files

            model = model_files.load(spec, command="fuse apply")
        out.append((str(spec), model))
    return out


def served_ranks(
    model: Any, items: list[Any], log: Any, label: str, owner: str = "logged_by"
) -> NDArray[np.int64]:
    """``(n_entries, 2)``: the first and last rank ``model`` serves each log entry's document at.

    The two differ where the document's fused score ties with others of its query.
    """
    try:
        fused = model.fuse(items)
    except (KeyError, ValueError) as exc:
        raise ValueError(
            f"{owner}: the declared logging fusion {label} cannot fuse these runs: {exc}"
        ) from None
    qid, score, rank = fused.qid, fused.score, fused.rank
    order = np.lexsort((rank, qid))
    q, s, r = qid[order], score[order], rank[order]
    new = np.r_[True, (q[1:] != q[:-1]) | (s[1:] != s[:-1])]
    start = np.flatnonzero(new)
    group = np.cumsum(new) - 1
    lo = np.empty(rank.shape[0], dtype=np.int64)
    hi = np.empty(rank.shape[0], dtype=np.int64)
    lo[order] = np.minimum.reduceat(r, start)[group]
    hi[order] = np.maximum.reduceat(r, start)[group]
    row = log.match(fused.qid, fused.docid, what=f"the list {label} serves").row
    return np.column_stack([lo[row], hi[row]])


def _at(lo_hi: NDArray[np.int64]) -> str:
    lo, hi = int(lo_hi[0]), int(lo_hi[1])
    return f"{lo}" if lo == hi else f"{lo}-{hi} (tied)"


def check_logged(log: Any, logged_by: Any, items: list[Any], owner: str) -> Served:
    """The fusion of ``logged_by`` that served each session of ``log``, or a ValueError.

    Parameters
    ----------
    log : ClickLog
        The log (its ``qid``, ``docid`` and ``position`` of every shown result).
    logged_by : str, path, fusion or list of them
        See the module docstring.
    items : list of Run
        The runs the fusions fuse.
    owner : str
        Named by the messages.

    Raises
    ------
    ValueError
        When a session shows a document at a position none of the declared fusions serves
        it at: how many impressions, sessions and queries, one example, what to fix.
    """
    fusions = logging_fusions(logged_by, [r.name for r in items], owner)
    labels = [label for label, _ in fusions]
    ranks = [served_ranks(m, items, log, label, owner) for label, m in fusions]
    pos = log.position
    ok = np.array([(r[:, 0] <= pos) & (pos <= r[:, 1]) for r in ranks])  # (n_fusions, n)
    first = log.starts[:-1]
    session_ok = np.minimum.reduceat(ok.astype(np.uint8), first, axis=1).astype(bool)
    served = np.where(session_ok.any(axis=0), session_ok.argmax(axis=0), -1)
    counts = log.session_count
    if (served >= 0).all():
        n = np.bincount(served, weights=counts, minlength=len(labels)).astype(np.float64)
        return Served(labels, served.astype(np.int64), n)
    bad_s = served < 0
    in_bad = np.repeat(bad_s, np.diff(log.starts))
    bad = in_bad & ~ok.any(axis=0)  # the impressions no declared fusion serves there
    example = bad if bad.any() else in_bad & ~ok[0]  # else a session mixing their lists
    e = int(np.flatnonzero(example)[0])
    where = " and ".join(f"{_at(r[e])} by {label}" for label, r in zip(labels, ranks, strict=True))
    bad_q = np.unique(log.qid_code[first[bad_s]]).size
    n_q = np.unique(log.qid_code).size
    if len(labels) == 1:
        who, it = f"{labels[0]} serves", f"{labels[0]} does not serve"
    else:
        who, it = f"{', '.join(labels[:-1])} and {labels[-1]} serve", "none of them serves"
    both = (
        "--logged-by rrf --logged-by sum" if owner.startswith("--") else "logged_by=['rrf', 'sum']"
    )
    raise ValueError(
        f"{owner}: {log.source} is not the lists {who} on these runs: "
        f"{counts[bad_s].sum():,.0f} of {counts.sum():,.0f} sessions ({bad_q} of {n_q} queries) "
        f"show another list, {log.count[bad].sum():,.0f} of {log.count.sum():,.0f} impressions "
        f"at a position {it} them at (e.g. query {log.qid[e]}, document {log.docid[e]}: logged "
        f"at {int(pos[e])}, served at {where}). Declare the fusion that served the log, with "
        "the runs it fused, as deep as it fused them; for several fusions served A/B, each "
        f"({both}); for lists interleaved within a session, none."
    )
