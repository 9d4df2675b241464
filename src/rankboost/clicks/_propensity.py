"""Examination propensities ``p_k`` of a position-based model, from a table or from the log.

Position-based model (PBM): ``P(click at rank k) = p_k * gamma(q, d)``: a document is
examined with a probability that depends only on its rank, and clicked when examined with
its relevance's probability. The estimates are normalised to ``p_1 = 1`` (only ratios matter
for inverse-propensity weights).

Estimators (no randomised traffic needed):

* ``"em"``: the EM algorithm of the PBM with one relevance per (query, document) (Wang,
  Golbandi, Bendersky, Metzler & Najork, WSDM 2018, section 4.1, eqs. 3-4 -- their E step and
  M step for ``theta_k`` and ``gamma_{q,d}``). It is identifiable only when documents were
  shown at several positions (several logged rankers, reshuffles): with one deterministic
  production ranker every document has one position and it warns.
* ``"regression_em"``: regression-EM (Wang et al. 2018, section 4.2): the same E step, but
  ``gamma`` is a regression of the document's features fit to the E step's posterior
  relevance, so documents with similar features share a relevance across positions. Wang et
  al. fit a GBDT to sampled 0/1 labels; here it is a ridge logistic regression fit to the
  soft labels by Newton steps (deterministic, milliseconds per iteration), a variant.
* ``"intervention_harvesting"``: the AllPairs estimator of Agarwal, Zaitsev, Wang, Li, Najork
  & Joachims (WSDM 2019): a document shown at positions ``k`` and ``k'`` (by several logged
  rankers) is an intervention that swaps them; the weighted click rates of the documents
  shown at both, ``c^k_{k,k'}``, satisfy ``E c^k_{k,k'} = p_k r_{k,k'}`` with a relevance
  ``r_{k,k'} = r_{k',k}`` shared by the pair, and ``p`` is the maximum-likelihood fit of that
  model over every pair of positions. Needs no features and no model of relevance, but
  documents shown at several positions.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..datasets._io import PathLike, read_bytes
from ._counts import ClickCounts
from ._log import ClickLog

__all__ = [
    "EYE_TRACKING",
    "Propensity",
    "estimate_propensity",
    "intervention_counts",
    "read_propensity",
]

#: The estimators of :func:`estimate_propensity`.
METHODS = ("auto", "em", "regression_em", "intervention_harvesting")

#: Examination probabilities at ranks 1-10 from eye tracking (Joachims, Granka, Pan,
#: Hembrooke & Gay, SIGIR 2005), as used by the unbiased-LTR simulation protocol (Ai, Bi, Luo,
#: Guo & Croft, SIGIR 2018; Hu et al. WWW 2019's Unbiased LambdaMART; XGBoost's demo).
EYE_TRACKING = np.array([0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06])


@dataclass(frozen=True, eq=False)
class Propensity:
    """Examination propensity per position, ``values[k - 1] = p_k``, with ``p_1 = 1``.

    Attributes
    ----------
    values : ndarray of shape (n_positions,)
        ``p_1 .. p_K``, positive, ``p_1 = 1``.
    method : str
        ``"table"`` (user-supplied), ``"em"``, ``"regression_em"`` or ``"none"``.
    n_iter : int
        EM iterations run (0 for a table).

    Examples
    --------
    >>> from rankboost.clicks import Propensity
    >>> p = Propensity.from_table([0.5, 0.25, 0.125])
    >>> p.values.tolist(), p.weights([1, 3]).tolist()
    ([1.0, 0.5, 0.25], [1.0, 4.0])
    """

    values: NDArray[np.float64]
    method: str = "table"
    n_iter: int = 0

    @property
    def positions(self) -> NDArray[np.int64]:
        """``1 .. K``."""
        return np.arange(1, self.values.shape[0] + 1)

    @classmethod
    def from_table(cls, values: ArrayLike, method: str = "table", n_iter: int = 0) -> Propensity:
        """A propensity from ``p_1 .. p_K`` (any positive scale; divided by ``p_1``)."""
        v = np.asarray(values, dtype=np.float64).ravel()
        if v.size == 0 or not np.all(np.isfinite(v)) or (v <= 0).any():
            raise ValueError(
                f"propensity: need positive finite values p_1..p_K, one per position; got "
                f"{v.tolist()[:10]}."
            )
        return cls(v / v[0], method, n_iter)

    @classmethod
    def none(cls, n_positions: int) -> Propensity:
        """No correction: ``p_k = 1`` everywhere (the naive estimator)."""
        return cls(np.ones(max(1, n_positions)), "none", 0)

    def weights(self, position: ArrayLike, max_weight: float | None = None) -> NDArray[np.float64]:
        """Inverse-propensity weights ``1 / p_k``, clipped at ``max_weight``.

        Clipping at ``M`` (``min(1/p_k, M)``) trades a bias for a bounded variance (Joachims,
        Swaminathan & Schnabel, WSDM 2017, section 5; Strehl et al. 2010).
        """
        pos = np.asarray(position, dtype=np.int64)
        if pos.size and pos.max() > self.values.shape[0]:
            raise ValueError(
                f"propensity covers positions 1..{self.values.shape[0]} but the log has a click "
                f"at position {int(pos.max())}; give a longer table."
            )
        w = 1.0 / self.values[pos - 1]
        return w if max_weight is None else np.minimum(w, max_weight)

    def to_tsv(self) -> str:
        """``position<TAB>propensity`` lines with a header (what :func:`read_propensity` reads)."""
        body = "".join(f"{k}\t{v:.6g}\n" for k, v in zip(self.positions, self.values, strict=True))
        return "position\tpropensity\n" + body

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Plot ``p_k`` against position (needs matplotlib); returns the Axes.

        ``kwargs`` go to ``Axes.plot`` (default ``label`` = the method, ``marker="o"``).
        """
        from .._compat import require

        plt = require("matplotlib.pyplot", "Propensity.plot")
        if ax is None:
            _, ax = plt.subplots(figsize=(4.5, 3))
        kwargs.setdefault("label", self.method)
        kwargs.setdefault("marker", "o")
        ax.plot(self.positions, self.values, **kwargs)
        ax.set_xlabel("position (1 = top)")
        ax.set_ylabel("examination propensity p_k / p_1")
        ax.set_ylim(0, 1.05)
        return ax


def read_propensity(path: PathLike) -> Propensity:
    """Read a propensity table: ``position`` and ``propensity`` columns (TSV/CSV, header).

    Positions must be exactly ``1..K``; values are divided by ``p_1``.
    """
    p, raw = read_bytes(path, "propensity file")
    lines = [ln for ln in raw.decode("utf-8-sig", "replace").splitlines() if ln.strip()]
    sep = "\t" if lines and "\t" in lines[0] else ","
    header = [h.strip().lower() for h in lines[0].split(sep)] if lines else []
    if "position" not in header or "propensity" not in header:
        raise ValueError(
            f"propensity file {str(p)!r}: the first line must name the columns 'position' and "
            f"'propensity'; got {header}."
        )
    ip, iv = header.index("position"), header.index("propensity")
    pos, val = [], []
    for n, ln in enumerate(lines[1:], start=2):
        f = ln.split(sep)
        try:
            pos.append(int(f[ip]))
            val.append(float(f[iv]))
        except (ValueError, IndexError):
            raise ValueError(
                f"propensity file {str(p)!r}, line {n}: expected an integer position and a "
                f"number; got {ln!r}."
            ) from None
    order = np.argsort(pos)
    if [pos[i] for i in order] != list(range(1, len(pos) + 1)):
        raise ValueError(
            f"propensity file {str(p)!r}: positions must be 1..K, each once; got {sorted(pos)}."
        )
    return Propensity.from_table(np.asarray(val)[order])


def _cells(
    log: ClickLog | ClickCounts,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[Any], Any, NDArray[np.int64] | None]:
    """Aggregate the log into (document, position) cells: impressions and clicks.

    Returns the cells' document codes, 0-based positions, impressions, clicks, and the
    document code of every entry (a feature row, or a (qid, docid) number; None for
    :class:`ClickCounts`, whose cells are summed already, by feature row).
    """
    if isinstance(log, ClickCounts):
        return (
            log.cell_row,
            log.cell_position - 1,
            log.cell_impressions,
            log.cell_clicks,
            None,
        )
    doc = _entry_docs(log)
    k = int(log.position.max())
    cell = doc * k + (log.position - 1)
    ucell, inv = np.unique(cell, return_inverse=True)
    imp = np.bincount(inv, weights=log.count)
    clk = np.bincount(inv, weights=log.count * log.click)
    return ucell // k, ucell % k, imp, clk, doc


def _entry_docs(log: ClickLog) -> NDArray[np.int64]:
    """The document code of every entry: its feature row, else a number per (qid, docid)."""
    if log.row is not None:
        return np.asarray(log.row, dtype=np.int64)
    if log.docid_code is None or log.docid_names is None:
        raise ValueError(f"{log.source} has neither feature rows nor docids.")
    # (qid, docid) pairs numbered in the order of their "qid\x1fdocid" strings: the codes are
    # ranks of the sorted ids, so (qid code, docid code) sorts as those strings do
    key = log.qid_code.astype(np.int64) * max(int(log.docid_names.shape[0]), 1) + log.docid_code
    _, doc = np.unique(key, return_inverse=True)
    return doc.ravel().astype(np.int64)


def estimate_propensity(
    log: ClickLog | ClickCounts,
    X: ArrayLike | None = None,
    *,
    method: str = "auto",
    max_iter: int = 50,
    tol: float = 1e-5,
    l2: float = 1.0,
    verbose: bool = False,
) -> Propensity:
    """Estimate ``p_k`` from the clicks by EM or regression-EM (Wang et al., WSDM 2018).

    Parameters
    ----------
    log : ClickLog or ClickCounts
        The log (matched to feature rows for ``"regression_em"``), or its sums
        (:func:`read_click_counts`: "em" and "regression_em").
    X : array-like of shape (n_samples, n_features), default=None
        Features of the rows ``log.row`` indexes; needed by ``"regression_em"``. A missing
        value (NaN) counts as its column's mean in the regression.
    method : {"auto", "em", "regression_em", "intervention_harvesting"}, default="auto"
        ``"auto"``: ``"regression_em"`` when ``X`` is given, else ``"em"``.
        ``"intervention_harvesting"``: Agarwal et al. (2019)'s AllPairs estimator (no ``X``;
        documents must have been shown at several positions, see :func:`intervention_counts`).
    max_iter : int, default=50
        EM iterations at most (EM and regression-EM).
    tol : float, default=1e-5
        Stop when no ``p_k`` moves by more than this.
    l2 : float, default=1.0
        Ridge penalty of the regression-EM logistic regression (standardised features).
    verbose : bool, default=False
        Show a progress bar over the EM iterations (tqdm).

    Returns
    -------
    propensity : Propensity
        ``p_1 .. p_K`` for the positions of the log, ``p_1 = 1``.

    Notes
    -----
    E step (Wang et al. 2018, eq. 3), for a non-click at rank ``k`` on document ``d``:
    ``P(E=1, R=0 | C=0) = theta_k (1 - gamma_d) / (1 - theta_k gamma_d)`` and
    ``P(E=0, R=1 | C=0) = (1 - theta_k) gamma_d / (1 - theta_k gamma_d)``; a click means
    ``E = R = 1``. M step (eq. 4): ``theta_k`` = mean posterior examination over the
    impressions at ``k``; ``gamma`` = mean posterior relevance per document ("em") or a
    logistic regression of the features fit to it ("regression_em").

    References
    ----------
    .. [1] X. Wang, N. Golbandi, M. Bendersky, D. Metzler and M. Najork, "Position Bias
       Estimation for Unbiased Learning to Rank in Personal Search", WSDM 2018.
    .. [2] A. Agarwal, I. Zaitsev, X. Wang, C. Li, M. Najork and T. Joachims, "Estimating
       Position Bias without Intrusive Interventions", WSDM 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.clicks import ClickLog, estimate_propensity
    >>> rng = np.random.default_rng(0)
    >>> n, K = 4000, 3
    >>> docs = np.array([rng.permutation(6)[:K] for _ in range(n)])  # reshuffled lists
    >>> rel = np.linspace(0.2, 0.9, 6)[docs]
    >>> clicks = rng.random((n, K)) < rel * np.array([1.0, 0.5, 0.25])
    >>> log = ClickLog.from_arrays(
    ...     qid=np.zeros(n * K, int), docid=docs.ravel(), position=np.tile([1, 2, 3], n),
    ...     click=clicks.ravel().astype(int), session=np.repeat(np.arange(n), K))
    >>> bool(np.allclose(estimate_propensity(log).values, [1.0, 0.5, 0.25], atol=0.05))
    True
    """
    if method not in METHODS:
        raise ValueError(
            f"estimate_propensity: method must be one of {', '.join(map(repr, METHODS))}; got "
            f"{method!r}."
        )
    if method == "auto":
        method = "em" if X is None else "regression_em"
    if method == "intervention_harvesting":
        if isinstance(log, ClickCounts):
            raise ValueError(
                "estimate_propensity(method='intervention_harvesting') needs the sessions' "
                "queries: pass the ClickLog (read_click_log), not its counts."
            )
        c, nc = intervention_counts(log)
        return Propensity.from_table(_all_pairs(c, nc), method=method, n_iter=1)
    doc, pos, imp, clk, _ = _cells(log)
    K = int(pos.max()) + 1
    if clk.sum() == 0:
        raise ValueError(f"{log.source} has no click; propensities cannot be estimated.")
    Xd = None
    if method == "regression_em":
        if X is None or (isinstance(log, ClickLog) and log.row is None):
            raise ValueError(
                "estimate_propensity(method='regression_em') needs X and a log matched to its "
                "rows (ClickLog.match); pass X or use method='em'."
            )
        Xd = np.asarray(X, dtype=np.float64)[doc]
    elif np.unique(doc).size == doc.size:
        warnings.warn(
            "estimate_propensity(method='em'): every document was shown at one position only, "
            "so position and relevance cannot be told apart and the estimate depends on the "
            "start; use method='regression_em' with the features, or a propensity table.",
            UserWarning,
            stacklevel=2,
        )
    n_doc = int(doc.max()) + 1
    theta = np.full(K, 0.5)
    gamma = np.full(doc.size, 0.5)
    model = None
    it = 0
    from .._compat import progress_bar

    bar = progress_bar(max_iter, disable=not verbose, desc=f"propensity ({method})")
    for it in range(1, max_iter + 1):  # noqa: B007 - n_iter is reported
        bar.update(1)
        t, g = theta[pos], gamma
        denom = np.maximum(1.0 - t * g, 1e-12)
        no = imp - clk
        e_post = clk + no * (t * (1.0 - g) / denom)  # expected examinations (eq. 3)
        r_post = clk + no * ((1.0 - t) * g / denom)  # expected relevant impressions
        new_theta = np.bincount(pos, weights=e_post, minlength=K) / np.maximum(
            np.bincount(pos, weights=imp, minlength=K), 1e-12
        )
        new_theta = np.clip(new_theta, 1e-6, 1.0)
        if Xd is None:
            num = np.bincount(doc, weights=r_post, minlength=n_doc)
            den = np.bincount(doc, weights=imp, minlength=n_doc)
            gamma = np.clip(num[doc] / np.maximum(den[doc], 1e-12), 1e-6, 1 - 1e-6)
        else:
            gamma, model = _regress(Xd, r_post / imp, imp, model, l2)
        done = np.max(np.abs(new_theta / new_theta[0] - theta / theta[0])) < tol
        theta = new_theta
        if done:
            break
    bar.close()
    return Propensity.from_table(theta, method=method, n_iter=it)


def _regress(
    X: NDArray[np.float64],
    target: NDArray[np.float64],
    weight: NDArray[np.float64],
    coef: Any,
    l2: float,
) -> tuple[NDArray[np.float64], Any]:
    """Regression step: weighted logistic regression of the soft labels on the features.

    Newton (IRLS) steps on ``sum_i w_i [t_i log s(x_i b) + (1 - t_i) log(1 - s(x_i b))]
    - l2/2 |b|^2`` with ``x`` standardised (a NaN: 0, the column's mean) plus an
    intercept; warm-started from the last EM iteration's coefficients (``coef``).
    """
    if coef is None:
        missing = np.isnan(X)
        if missing.any():  # a missing value is the column's mean: 0 once standardised
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column
                mu, sd = np.nanmean(X, axis=0), np.nanstd(X, axis=0)
            mu[np.isnan(mu)] = 0.0
            sd[np.isnan(sd) | (sd == 0)] = 1.0
            scaled = np.where(missing, 0.0, (X - mu) / sd)
        else:
            mu = X.mean(axis=0)
            sd = X.std(axis=0)
            sd[sd == 0] = 1.0
            scaled = (X - mu) / sd
        Z = np.column_stack([np.ones(X.shape[0]), scaled])
        coef = (Z, np.zeros(Z.shape[1]))
    Z, b = coef
    reg = np.full(Z.shape[1], l2)
    reg[0] = 0.0
    for _ in range(3):
        p = 1.0 / (1.0 + np.exp(-np.clip(Z @ b, -30, 30)))
        grad = Z.T @ (weight * (target - p)) - reg * b
        hess = (Z * (weight * p * (1 - p))[:, None]).T @ Z + np.diag(reg + 1e-9)
        b = b + np.linalg.solve(hess, grad)
    p = 1.0 / (1.0 + np.exp(-np.clip(Z @ b, -30, 30)))
    return np.clip(p, 1e-6, 1 - 1e-6), (Z, b)


def intervention_counts(log: ClickLog) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Click and non-click counts of the interventional sets (Agarwal et al., WSDM 2019).

    The interventional set ``S_{k,k'}`` holds the (query, document) pairs shown at position
    ``k`` in some sessions and at ``k'`` in others. The paper weighs a click of ranker
    ``i`` on ``d`` at ``k`` by ``1 / w(q, d, k)``, ``w(q, d, k) = sum_i n_i [rank_i(d|q) =
    k]`` with ``n_i`` the queries ranker ``i`` served. A log records sessions, not rankers:
    the traffic share of the rankers that showed ``d`` at ``k`` for ``q`` is replaced by its
    observed value ``imp(q, d, k) / N_q`` (``N_q`` sessions of ``q``, ``N`` in all), so
    ``w(q, d, k) = N imp(q, d, k) / N_q`` and

    ``c[k-1, k'-1] = sum_{(q,d) in S_{k,k'}} N_q clicks(q, d, k) / (N imp(q, d, k))``,

    ``nc`` the same with non-clicks (``k != k'``; the diagonal is 0). Under a position-based
    model ``E c[k, k'] = p_k r_{k,k'}`` and ``E c[k', k] = p_k' r_{k,k'}`` with one
    ``r_{k,k'} = sum_{(q,d) in S_{k,k'}} P(q) gamma(q, d)``: their ratio is ``p_k / p_k'``.

    Returns
    -------
    c, nc : ndarray of shape (K, K)
        ``K`` = the deepest position of the log.
    """
    doc, pos, imp, clk, entry_doc = _cells(log)
    assert entry_doc is not None  # a ClickLog's cells
    K = int(log.position.max())
    # sessions per query, each counted `count` times; a (query, document) key -> its query
    qcode = log.qid_code.astype(np.int64)  # ranks of the sorted qid strings
    first = log.starts[:-1]
    n_q = np.bincount(qcode[first], weights=log.count[first])
    doc_query = np.zeros(int(entry_doc.max()) + 1, dtype=np.int64)
    doc_query[entry_doc] = qcode
    share = n_q[doc_query[doc]] / n_q.sum()  # N_q / N of each cell's query
    rate_c = share * clk / imp
    rate_n = share * (imp - clk) / imp
    # pairs of cells of one document at two positions: cells are sorted by (doc, position)
    order = np.lexsort((pos, doc))
    doc, pos, rate_c, rate_n = doc[order], pos[order], rate_c[order], rate_n[order]
    start = np.flatnonzero(np.r_[True, doc[1:] != doc[:-1]])
    size = np.diff(np.r_[start, doc.size])
    c = np.zeros((K, K))
    nc = np.zeros((K, K))
    # every ordered pair (a, b) of cells of one document: at most K cells per document, so
    # a loop over the K^2 offsets (not over documents or pairs) builds all of them
    for da in range(int(size.max(initial=1))):
        for db in range(int(size.max(initial=1))):
            if da == db:
                continue
            ok = (da < size) & (db < size)
            a, b = start[ok] + da, start[ok] + db
            np.add.at(c, (pos[a], pos[b]), rate_c[a])
            np.add.at(nc, (pos[a], pos[b]), rate_n[a])
    return c, nc


def _all_pairs(c: NDArray[np.float64], nc: NDArray[np.float64]) -> NDArray[np.float64]:
    """The AllPairs estimate of ``p / p_1`` (Agarwal et al. 2019) from the interventional counts.

    Maximises ``sum_{k != k'} c[k, k'] log(p_k r_{k,k'}) + nc[k, k'] log(1 - p_k r_{k,k'})``
    over ``p`` and a symmetric ``r`` (L-BFGS over their logits; a pair of positions whose
    interventional set is empty drops out).
    """
    from scipy.optimize import minimize
    from scipy.sparse.csgraph import breadth_first_order

    K = c.shape[0]
    seen = (c + nc) > 0
    both = seen & seen.T
    # positions linked to position 1 through interventional sets: the others are unknown
    linked = np.zeros(K, dtype=bool)
    linked[breadth_first_order(both, 0, directed=False, return_predecessors=False)] = True
    if not linked.all():
        missing = (np.flatnonzero(~linked) + 1).tolist()
        raise ValueError(
            "estimate_propensity(method='intervention_harvesting'): no document was shown both "
            f"at position(s) {missing} and at a position linked to position 1, so their "
            "examination cannot be compared; intervention harvesting needs documents shown at "
            "several positions (several logged rankers). Use method='regression_em' with the "
            "features, or a propensity table."
        )
    iu, ju = np.nonzero(np.triu(both, 1))
    pair = np.full((K, K), -1, dtype=np.int64)
    pair[iu, ju] = np.arange(iu.size)
    pair[ju, iu] = np.arange(iu.size)
    ka, kb = np.nonzero(both)
    cw, nw, pr = c[ka, kb], nc[ka, kb], pair[ka, kb]
    total = float(cw.sum() + nw.sum())

    def loss(z: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        p = 1.0 / (1.0 + np.exp(-z[:K]))
        r = 1.0 / (1.0 + np.exp(-z[K:]))
        u = np.clip(p[ka] * r[pr], 1e-12, 1 - 1e-12)
        f = -(cw * np.log(u) + nw * np.log1p(-u)).sum() / total
        du = -(cw - nw * u / (1.0 - u)) / total  # d f / d log u
        g = np.zeros_like(z)
        np.add.at(g, ka, du * (1.0 - p[ka]))
        np.add.at(g[K:], pr, du * (1.0 - r[pr]))
        return float(f), g

    z0 = np.zeros(K + iu.size)
    res = minimize(
        loss,
        z0,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 10000, "ftol": 1e-15, "gtol": 1e-12},
    )
    p = 1.0 / (1.0 + np.exp(-res.x[:K]))
    return np.asarray(p / p[0], dtype=np.float64)
