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

**Policy-aware weights** (:func:`policy_weights`). In a log of several fusions served A/B, a
document one fusion shows and the other does not is shown in a share of the sessions only:
weighting its clicks by ``1 / p_k`` alone would give it that share of the pair mass of a
document every session shows. Its clicks are weighted instead by ``1 / rho``, ``rho`` its
expected examination over the fusions served for its query, ``sum_i pi_i(q) p_{rank_i(d)}``
(``pi_i(q)`` the share of the query's sessions fusion ``i`` served, ``p`` 0 below the
deepest position the log shows): the policy-aware estimator of Oosterhuis & de Rijke (SIGIR
2020), which is ``1 / p_k`` when one fusion served the log.
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
    "policy_weights",
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
    #: per fusion, ``(n_entries, 2)``: the first and last rank it serves each log entry's
    #: document at (:func:`served_ranks`)
    ranks: list[NDArray[np.int64]]


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
        return Served(labels, served.astype(np.int64), n, ranks)
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


def policy_weights(
    log: Any, served: Served, values: NDArray[np.float64], max_weight: float | None
) -> NDArray[np.float64]:
    """``(n_entries,)``: ``min(1 / rho, max_weight)`` of each log entry (module docstring).

    ``rho`` of an entry is ``sum_i pi_i(q) pbar_i``: over the declared fusions, the share of
    the query's sessions fusion ``i`` served times the mean of ``p_k`` over the ranks it
    serves the document at (its block of tied scores), ``p_k = values[k - 1]``, 0 below the
    deepest position the log shows (a fusion shows as many results as the log's lists).
    Entries with ``rho = 0`` (no fusion served for the query shows the document) get 0; a
    clicked entry always has ``rho > 0``.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.clicks import ClickLog
    >>> log = ClickLog.from_arrays(qid=["q"] * 4, docid=["a", "b", "a", "c"],
    ...                            position=[1, 2, 1, 2], click=[0, 1, 0, 1], session=[0, 0, 1, 1])
    >>> ranks = [np.array([[1, 1], [2, 2], [1, 1], [3, 3]]),  # fusion 0 serves a, b, c
    ...          np.array([[1, 1], [3, 3], [1, 1], [2, 2]])]  # fusion 1 serves a, c, b
    >>> served = Served(["f0", "f1"], np.array([0, 1]), np.array([1.0, 1.0]), ranks)
    >>> policy_weights(log, served, np.array([1.0, 0.5]), None).tolist()  # b, c: 1 / (0.5 * 0.5)
    [1.0, 4.0, 1.0, 4.0]
    """
    K = min(values.shape[0], int(log.position.max()))
    cum = np.r_[0.0, np.cumsum(values)]
    first = log.starts[:-1]
    q_of_session = log.qid_code[first]
    n_q = int(log.qid_code.max()) + 1
    weight = log.session_count
    total = np.bincount(q_of_session, weights=weight, minlength=n_q)
    rho = np.zeros(log.n_entries)
    for i, r in enumerate(served.ranks):
        mine = served.session == i
        share = np.bincount(q_of_session[mine], weights=weight[mine], minlength=n_q)
        share = np.divide(share, total, out=np.zeros(n_q), where=total > 0)
        lo, hi = r[:, 0], r[:, 1]
        top = np.minimum(hi, K)
        shown = np.where(top >= lo, cum[top] - cum[np.minimum(lo, K + 1) - 1], 0.0)
        rho += share[log.qid_code] * shown / (hi - lo + 1)
    out = np.zeros(log.n_entries)
    on = rho > 0
    out[on] = 1.0 / rho[on]
    if max_weight is not None:
        np.minimum(out, max_weight, out=out)
    return out
