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
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..datasets._io import PathLike, read_bytes
from ._log import ClickLog

__all__ = [
    "EYE_TRACKING",
    "Propensity",
    "estimate_propensity",
    "read_propensity",
]

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


def _cells(log: ClickLog) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[Any], Any]:
    """Aggregate the log into (document, position) cells: impressions and clicks."""
    if log.row is not None:
        doc = log.row
    else:
        key = np.char.add(np.char.add(log.qid, "\x1f"), log.docid)  # type: ignore[arg-type]
        _, doc = np.unique(key, return_inverse=True)
        doc = doc.ravel().astype(np.int64)
    k = int(log.position.max())
    cell = doc * k + (log.position - 1)
    ucell, inv = np.unique(cell, return_inverse=True)
    imp = np.bincount(inv, weights=log.count)
    clk = np.bincount(inv, weights=log.count * log.click)
    return ucell // k, ucell % k, imp, clk


def estimate_propensity(
    log: ClickLog,
    X: ArrayLike | None = None,
    *,
    method: str = "auto",
    max_iter: int = 50,
    tol: float = 1e-5,
    l2: float = 1.0,
) -> Propensity:
    """Estimate ``p_k`` from the clicks by EM or regression-EM (Wang et al., WSDM 2018).

    Parameters
    ----------
    log : ClickLog
        The log (matched to feature rows for ``"regression_em"``).
    X : array-like of shape (n_samples, n_features), default=None
        Features of the rows ``log.row`` indexes; needed by ``"regression_em"``.
    method : {"auto", "em", "regression_em"}, default="auto"
        ``"auto"``: ``"regression_em"`` when ``X`` is given, else ``"em"``.
    max_iter : int, default=50
        EM iterations at most.
    tol : float, default=1e-5
        Stop when no ``p_k`` moves by more than this.
    l2 : float, default=1.0
        Ridge penalty of the regression-EM logistic regression (standardised features).

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
    if method not in ("auto", "em", "regression_em"):
        raise ValueError(
            f"estimate_propensity: method must be 'auto', 'em' or 'regression_em'; got {method!r}."
        )
    if method == "auto":
        method = "em" if X is None else "regression_em"
    doc, pos, imp, clk = _cells(log)
    K = int(pos.max()) + 1
    if clk.sum() == 0:
        raise ValueError(f"{log.source} has no click; propensities cannot be estimated.")
    Xd = None
    if method == "regression_em":
        if X is None or log.row is None:
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
    for it in range(1, max_iter + 1):  # noqa: B007 - n_iter is reported
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
    - l2/2 |b|^2`` with ``x`` standardised plus an intercept; warm-started from the last EM
    iteration's coefficients (``coef``).
    """
    if coef is None:
        mu = X.mean(axis=0)
        sd = X.std(axis=0)
        sd[sd == 0] = 1.0
        Z = np.column_stack([np.ones(X.shape[0]), (X - mu) / sd])
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
