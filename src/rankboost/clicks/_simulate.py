"""A click simulator from the standard unbiased-LTR protocol, for benchmarks and tests.

Protocol (Joachims, Swaminathan & Schnabel, WSDM 2017, section 6; Ai et al., SIGIR 2018,
section 5.1; Hu et al., WWW 2019):

1. A weak *production ranker* is trained on a small share of the training queries (1% by
   default) with their true labels: :func:`production_ranker`.
2. Each session draws one query uniformly at random, independently of every other session,
   and shows its top ``n_shown`` documents by the production ranker's score; a document's
   *position* is its rank in that shown list (1 = top), not an index into the file.
3. Clicks:

   * ``"pbm"`` (position-based): examination at rank ``k`` with ``p_k = table_k ** eta``
     (``table`` = the eye-tracking values :data:`EYE_TRACKING`, or ``1/k``), and a click on an
     examined document of grade ``y`` with ``eps + (1 - eps) (2^y - 1) / (2^ymax - 1)``
     (noisy clicks by grade; ``eps = 0.1``); examinations and clicks drawn independently.
   * ``"cascade"`` (Craswell, Zoeter, Taylor & Ramsey, WSDM 2008): the user reads from the top
     and stops at the first click, clicking an examined document with the same probability.

Everything is vectorised over sessions (a ``(n_sessions, n_shown)`` array per draw).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._kernels import clicks as _k
from ._log import ClickLog
from ._propensity import EYE_TRACKING, Propensity

__all__ = [
    "SimulatedClicks",
    "examination",
    "production_ranker",
    "simulate_clicks",
    "simulate_to_file",
    "write_click_log",
]

#: The first line of a simulated log (``simulate_to_file``, ``write_click_log``)
HEADER = b"qid\tdocid\tposition\tclick\tsession\tcount\n"


def examination(n_shown: int, eta: float = 1.0, table: str = "eye") -> NDArray[np.float64]:
    """True examination probabilities ``p_1..p_n`` of the simulator (not normalised).

    ``table="eye"``: :data:`EYE_TRACKING` (10 ranks; deeper ranks keep the last value) to the
    power ``eta``; ``table="inverse"``: ``(1/k) ** eta``.
    """
    if table == "eye":
        base = EYE_TRACKING[np.minimum(np.arange(n_shown), EYE_TRACKING.size - 1)]
    elif table == "inverse":
        base = 1.0 / np.arange(1, n_shown + 1)
    else:
        raise ValueError(f"table must be 'eye' or 'inverse'; got {table!r}.")
    return np.asarray(base**eta, dtype=np.float64)


def production_ranker(
    X: ArrayLike,
    y: ArrayLike,
    qid: ArrayLike,
    *,
    share: float = 0.01,
    n_rounds: int = 50,
    random_state: int | None = 0,
) -> Any:
    """A weak production ranker: RankBoost on ``share`` of the queries' labels.

    At least one query with two different grades is used. Returns the
    :class:`rankboost.RankBoostModel`; its ``decision_function(X)`` ranks the shown lists.
    """
    from ..engine import train
    from ..feedback import LayeredFeedback

    Xa = np.asarray(X, dtype=np.float64)
    ya = np.asarray(y, dtype=np.float64)
    q = np.asarray(qid)
    uq, code = np.unique(q, return_inverse=True)
    rng = np.random.default_rng(random_state)
    n_pick = max(1, int(round(share * uq.size)))
    spread = np.array([np.ptp(ya[code == i]) > 0 for i in range(uq.size)])
    candidates = rng.permutation(np.flatnonzero(spread))
    if candidates.size == 0:
        raise ValueError("production_ranker: no query has two different grades.")
    keep = np.isin(code, candidates[:n_pick])
    return train(Xa[keep], LayeredFeedback(ya[keep], code[keep]), n_rounds=n_rounds)


@dataclass(frozen=True, eq=False)
class SimulatedClicks:
    """A simulated log with what generated it.

    Attributes
    ----------
    log : ClickLog
        Matched to the rows of the labelled data (``row`` set; ``docid`` from ``docids`` or
        the row number).
    propensity : Propensity
        The true examination probabilities, normalised to ``p_1 = 1`` (for ``"pbm"``).
    """

    log: ClickLog
    propensity: Propensity


def simulate_clicks(
    y: ArrayLike,
    qid: ArrayLike,
    scores: ArrayLike,
    n_sessions: int,
    *,
    eta: float = 1.0,
    model: str = "pbm",
    table: str = "eye",
    n_shown: int = 10,
    epsilon: float = 0.1,
    docids: ArrayLike | None = None,
    random_state: int | None = 0,
) -> SimulatedClicks:
    """Simulate ``n_sessions`` sessions of clicks on the top ``n_shown`` of each query.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        True grades (``ymax`` = their maximum).
    qid : array-like of shape (n_samples,)
        Query of each row.
    scores : array-like of shape (n_samples,)
        Production ranker scores (:func:`production_ranker`); ties keep row order.
    n_sessions : int
        Sessions; each draws a query uniformly, independently.
    eta : float, default=1.0
        Severity of position bias: ``p_k = table_k ** eta``.
    model : {"pbm", "cascade"}, default="pbm"
    table : {"eye", "inverse"}, default="eye"
    n_shown : int, default=10
    epsilon : float, default=0.1
        Click noise: an examined grade-0 document is clicked with this probability.
    docids : array-like of shape (n_samples,), default=None
        Document ids for the log; None: the row number.
    random_state : int, default=0

    Returns
    -------
    SimulatedClicks

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.clicks import simulate_clicks
    >>> y = np.array([0, 1, 2, 0, 1]); qid = np.array([1, 1, 1, 2, 2])
    >>> sim = simulate_clicks(y, qid, scores=-np.arange(5), n_sessions=3, n_shown=2)
    >>> sim.log.n_sessions, sorted(set(sim.log.position.tolist()))
    (3, [1, 2])
    """
    setup = _Setup(y, qid, scores, n_sessions, eta, model, table, n_shown, epsilon, random_state)
    draws = setup.draws(0, n_sessions)
    rows, clicks = setup.chunk(draws, 0, n_sessions)
    valid = rows >= 0
    clicks &= valid
    sess = np.repeat(np.arange(n_sessions), n_shown).reshape(rows.shape)
    pos = np.broadcast_to(np.arange(1, n_shown + 1), rows.shape)
    r = rows[valid]
    ids = np.arange(setup.n) if docids is None else np.asarray(docids)
    log = ClickLog.from_arrays(
        qid=setup.q[r],
        docid=ids[r],
        position=pos[valid],
        click=clicks[valid].astype(np.uint8),
        session=sess[valid],
        row=r,
        n_samples=setup.n,
        source="simulated click log",
    )
    return SimulatedClicks(log, Propensity.from_table(setup.exam, method="true"))


class _Setup:
    """What every session of a simulation shares, and the draws of a range of sessions.

    The random stream is the one of a single vectorised draw: the query of every session,
    then (pbm) the examination uniforms of all sessions, then their click uniforms (cascade:
    the click uniforms only). A range of sessions reads its slice of each by advancing copies
    of the generator, so a simulation in chunks writes the log a single draw would.
    """

    def __init__(  # noqa: PLR0917  private: simulate_clicks' arguments, validated here
        self,
        y: ArrayLike,
        qid: ArrayLike,
        scores: ArrayLike,
        n_sessions: int,
        eta: float,
        model: str,
        table: str,
        n_shown: int,
        epsilon: float,
        random_state: int | None,
    ) -> None:
        ya = np.asarray(y, dtype=np.float64)
        q = np.asarray(qid)
        s = np.asarray(scores, dtype=np.float64)
        n = ya.shape[0]
        if q.shape != (n,) or s.shape != (n,):
            raise ValueError("simulate_clicks: y, qid and scores need one entry per row.")
        if n_sessions < 1 or n_shown < 1:
            raise ValueError("simulate_clicks: n_sessions and n_shown must be >= 1.")
        if model not in ("pbm", "cascade"):
            raise ValueError(f"model must be 'pbm' or 'cascade'; got {model!r}.")
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must lie in [0, 1]; got {epsilon!r}.")
        rng = np.random.default_rng(random_state)
        _, code = np.unique(q, return_inverse=True)
        code = code.ravel()
        # rows grouped by query, best production score first (stable: ties keep row order)
        order = np.lexsort((np.arange(n), -s, code))
        qsorted = code[order]
        first = np.flatnonzero(np.r_[True, qsorted[1:] != qsorted[:-1]])
        sizes = np.diff(np.r_[first, n])
        top = np.full((first.size, n_shown), -1, dtype=np.int64)
        col = np.arange(n) - np.repeat(first, sizes)
        ok = col < n_shown
        top[qsorted[ok], col[ok]] = order[ok]
        ymax = max(float(ya.max()), 1.0)
        self.attract = epsilon + (1.0 - epsilon) * (2.0**ya - 1.0) / (2.0**ymax - 1.0)
        self.pick = rng.integers(0, first.size, size=n_sessions)  # an independent query each
        self.state: Any = rng.bit_generator.state  # where the uniforms start
        self.top, self.q, self.n, self.model = top, q, n, model
        self.n_sessions, self.n_shown = n_sessions, n_shown
        self.exam = examination(n_shown, eta, table)

    def _uniforms(self, matrix: int, lo: int, hi: int) -> NDArray[np.float64]:
        """Uniforms of sessions ``[lo, hi)`` of the ``matrix``-th (n_sessions, n_shown) draw."""
        bg = np.random.PCG64()
        bg.state = self.state
        bg.advance((matrix * self.n_sessions + lo) * self.n_shown)  # one 64-bit draw each
        return np.random.Generator(bg).random((hi - lo, self.n_shown))

    def draws(self, lo: int, hi: int) -> tuple[NDArray[np.float64], ...]:
        if self.model == "pbm":
            return self._uniforms(0, lo, hi), self._uniforms(1, lo, hi)
        return (self._uniforms(0, lo, hi),)

    def chunk(
        self, draws: tuple[NDArray[np.float64], ...], lo: int, hi: int
    ) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
        """Shown rows (-1 past a short list) and clicks of sessions ``[lo, hi)``."""
        rows = self.top[self.pick[lo:hi]]
        valid = rows >= 0
        att = np.where(valid, self.attract[np.maximum(rows, 0)], 0.0)
        if self.model == "pbm":
            clicks = (draws[0] < self.exam) & (draws[1] < att)
        else:
            hit = draws[0] < att
            firsthit = np.where(hit.any(axis=1), hit.argmax(axis=1), self.n_shown)
            clicks = np.arange(self.n_shown)[None, :] == firsthit[:, None]
        return rows, clicks & valid


def simulate_to_file(  # noqa: PLR0913  simulate_clicks' keywords, plus the file and its chunks
    path: Any,
    y: ArrayLike,
    qid: ArrayLike,
    scores: ArrayLike,
    n_sessions: int,
    *,
    eta: float = 1.0,
    model: str = "pbm",
    table: str = "eye",
    n_shown: int = 10,
    epsilon: float = 0.1,
    docids: ArrayLike | None = None,
    random_state: int | None = 0,
    chunk_sessions: int = 100_000,
    first_session: int = 0,
    header: bool = True,
    compresslevel: int = 6,
    verbose: bool = False,
) -> tuple[int, int, int, Propensity]:
    """:func:`simulate_clicks` written to a TSV file chunk by chunk (memory: one chunk).

    The sessions and clicks are those of :func:`simulate_clicks` with the same arguments
    (``session`` = ``first_session`` + the session's number), written ``chunk_sessions`` at
    a time, each chunk's sessions grouped by query (repeated lists compress well); the file
    is replaced atomically, ``.gz`` gzip-compressed.

    Parameters
    ----------
    path : str or path-like
        The log to write (``.gz``: gzip).
    y, qid, scores, n_sessions, eta, model, table, n_shown, epsilon, docids, random_state
        As :func:`simulate_clicks`.
    chunk_sessions : int, default=100_000
        Sessions drawn and written at a time (memory: one chunk).
    first_session : int, default=0
        The ``session`` of the first session; the others follow it. Shards of one large log
        simulated apart (each its own ``random_state``) get ranges of session numbers of
        their own, so that the shards written one after the other are one log in which no
        session comes back.
    header : bool, default=True
        Write the header line. ``False`` writes the rows only: a part to append to a log
        (gzip members may follow one another in one file).
    compresslevel : int, default=6
        The gzip level of a ``.gz`` file (1: about 4 times as fast, 10% larger). The text is
        the same at every level.
    verbose : bool, default=False
        Show a progress bar over the sessions (tqdm).

    Returns
    -------
    n_sessions, n_rows, n_clicks : int
    propensity : Propensity
        The true examination probabilities.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from rankboost.clicks import read_click_log, simulate_to_file
    >>> y = np.array([0, 1, 2, 0, 1]); qid = np.array([1, 1, 1, 2, 2])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "log.tsv")
    ...     n, rows, clicks, _ = simulate_to_file(path, y, qid, -np.arange(5), 3, n_shown=2)
    ...     log = read_click_log(path)
    >>> (n, rows) == (log.n_sessions, log.n_entries)
    True
    """
    import gzip

    from .._atomic import atomic_open
    from .._compat import progress_bar
    from ._log import key_strings

    setup = _Setup(y, qid, scores, n_sessions, eta, model, table, n_shown, epsilon, random_state)
    ids = np.arange(setup.n) if docids is None else np.asarray(docids)
    if ids.shape != (setup.n,):
        raise ValueError("simulate_to_file: docids needs one entry per row.")
    if not 0 <= first_session <= np.iinfo(np.int64).max - n_sessions:
        raise ValueError(
            f"simulate_to_file: first_session must be >= 0 (and leave room for {n_sessions} "
            f"session numbers in 64 bits); got {first_session}."
        )
    if not 0 <= compresslevel <= 9:
        raise ValueError(
            f"simulate_to_file: compresslevel must be a gzip level 0-9; got {compresslevel}."
        )
    parts = [
        f"{a}\t{b}\t".encode() for a, b in zip(key_strings(setup.q), key_strings(ids), strict=True)
    ]
    prefix = np.frombuffer(b"".join(parts), dtype=np.uint8)
    prefix_at = np.zeros(setup.n + 1, dtype=np.int64)
    np.cumsum([len(x) for x in parts], out=prefix_at[1:])
    longest = int(np.max(np.diff(prefix_at), initial=0))
    n_rows = n_clicks = 0
    bar = progress_bar(n_sessions, disable=not verbose, desc="simulating sessions", stacklevel=3)
    with atomic_open(path) as fh:
        out: Any = fh
        if str(path).endswith(".gz"):
            out = gzip.GzipFile(
                filename="", mode="wb", fileobj=fh, compresslevel=compresslevel, mtime=0
            )
        if header:
            out.write(HEADER)
        for lo in range(0, n_sessions, chunk_sessions):
            hi = min(lo + chunk_sessions, n_sessions)
            rows, clicks = setup.chunk(setup.draws(lo, hi), lo, hi)
            # the chunk's sessions grouped by query: repeated lists compress well
            order = np.argsort(setup.pick[lo:hi], kind="stable")
            rows, clicks = rows[order], clicks[order]
            buf = np.empty(rows.size * (longest + 48), dtype=np.uint8)
            m = _k.format_log(prefix, prefix_at, rows, clicks, first_session + lo + order, buf)
            out.write(buf[:m].data)
            n_rows += int(np.count_nonzero(rows >= 0))
            n_clicks += int(np.count_nonzero(clicks))
            bar.update(hi - lo)
        if out is not fh:
            out.close()
    bar.close()
    return n_sessions, n_rows, n_clicks, Propensity.from_table(setup.exam, method="true")


def write_click_log(path: Any, log: ClickLog) -> None:
    """Write ``log`` as TSV (header ``qid docid position click session count``), atomically.

    A ``.gz`` name is gzip-compressed.
    """
    import gzip
    import io

    from .._atomic import atomic_open

    if log.docid is None:
        raise ValueError("write_click_log: the log has no docids to write.")
    session = np.repeat(np.arange(log.n_sessions), np.diff(log.starts))
    buf = io.StringIO()
    buf.write(HEADER.decode())
    cnt = log.count
    cnt_txt = np.where(
        cnt == np.round(cnt), np.round(cnt).astype(np.int64).astype(str), cnt.astype(str)
    )
    cols = [
        log.qid,
        log.docid,
        log.position.astype(str),
        log.click.astype(str),
        session.astype(str),
        cnt_txt,
    ]
    lines = np.char.add(cols[0].astype(str), "\t")
    for c in cols[1:-1]:
        lines = np.char.add(np.char.add(lines, c.astype(str)), "\t")
    lines = np.char.add(lines, cols[-1])
    buf.write("\n".join(lines.tolist()))
    buf.write("\n")
    data = buf.getvalue().encode()
    if str(path).endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    with atomic_open(path) as fh:
        fh.write(data)
