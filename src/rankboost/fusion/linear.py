"""The linear fusion family: RankBoost over normalised retriever scores, an engine's own formula.

``F(d) = sum_i w_i n_i(d)`` with ``n_i`` list ``i``'s score normalised within the query
(``"minmax"``: ``(s - min) / (max - min)``, 1 when all are equal; or ``"rrf"``: ``1 / (k +
rank)``) and ``n_i(d) = 0`` where list ``i`` did not return ``d``. That is Elasticsearch's
``linear`` retriever (``normalizer`` + ``weight`` per retriever) and weighted RRF (the
``rrf`` retriever's ``weight``, OpenSearch's ``score-ranker-processor``), so a trained model
hands its weights to the engine (:mod:`rankboost.fusion.engines`).

Training is RankBoost (Freund et al. 2003) with one real-valued weak ranker per list,
``h_i = n_i / max n_i`` in [0, 1] (section 3.2: ``r = sum_x pi(x) h(x)`` and ``alpha = 1/2
ln((1 + r) / (1 - r))``, times the learning rate), started from a prior ``F_0 = c sum_i h_i``
(CombSUM of the normalised scores: the 50/50 convex combination of two retrievers) and only
weak rankers with ``r > 0`` (every weight stays >= 0, as the engines require). The prior's
scale ``c`` and the number of rounds (0 allowed: the prior alone) are chosen together by
cross-validation over the training queries, NDCG@10 of the held-out queries
(:mod:`rankboost.model_selection`; a fold's method: the weight path of its queries). The
feedback is :class:`rankboost.LayeredFeedback`'s (every higher grade above every lower
one, each query with a crucial pair the same mass), computed here in closed form: the loss
of a layered feedback factorises over grade levels, so a round costs O(rows x lists).
"""

from __future__ import annotations

import os
import reprlib
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import model_files
from .._validation import ParamsMixin, forget_fit, keep_params
from ..description import Description
from ..model_selection import (
    LINEAR_PRIOR_SCALES,
    cross_validate,
    first_best_grid,
    held_out_curve,
    query_folds,
)
from ..params import ParameterError
from ._match import fitted_lists
from .features import (
    RRF_K,
    RunsLike,
    as_run_list,
    coverage_warnings,
    fused_run,
    grades_for,
    normalise_scores,
)
from .run import Qrels, Run

__all__ = ["LINEAR_NORMALIZERS", "LinearFusion", "keep_common_queries", "linear_features"]

FORMAT_NAME = "rankboost-fusion-linear"
FORMAT_VERSION = 1
#: ``"dbsf"`` and ``"atan"`` are the engines' own (Qdrant's DBSF, Milvus's arctan): a model
#: trained with one is served exactly by that engine (:mod:`rankboost.fusion.engines`).
LINEAR_NORMALIZERS = ("minmax", "rrf", "dbsf", "atan")


def linear_features(
    runs: RunsLike, normalizer: str, k: int = RRF_K
) -> tuple[NDArray[np.float64], NDArray[np.str_], NDArray[np.str_]]:
    """``(N, qid, docid)``: ``N[d, i]`` = list ``i``'s normalised score of row ``d``, 0 if absent.

    Rows are the union of the documents the runs return, per query, in the order of
    :func:`rankboost.fusion.fusion_features`.

    Examples
    --------
    >>> from rankboost.fusion import Run
    >>> from rankboost.fusion.linear import linear_features
    >>> a = Run(["q", "q"], ["d1", "d2"], [1, 2], [2.0, 1.0], name="a")
    >>> b = Run(["q"], ["d2"], [1], [0.3], name="b")
    >>> N, qid, docid = linear_features([a, b], "minmax")
    >>> docid.tolist(), N.tolist()
    (['d1', 'd2'], [[1.0, 0.0], [0.0, 1.0]])
    """
    from .features import layout

    if normalizer not in LINEAR_NORMALIZERS:
        raise ValueError(f"normalizer must be one of {LINEAR_NORMALIZERS}; got {normalizer!r}.")
    items = as_run_list(runs, "linear_features")
    lay = layout(items)
    N = np.zeros((lay.qid.shape[0], len(items)))
    for i, (r, rows) in enumerate(zip(items, lay.rows, strict=True)):
        N[rows, i] = normalise_scores(r, normalizer, k=k)
    return N, lay.qid, lay.docid


# ------------------------------------------------------------------ the booster ---------
class _Layered:
    """Closed-form layered RankBoost loss pieces for rows grouped by query and grade."""

    def __init__(self, y: NDArray[np.int64], qcode: NDArray[np.int64]) -> None:
        n_q = int(qcode.max()) + 1
        order = np.lexsort((y, qcode))
        qs, ys = qcode[order], y[order]
        new_block = np.ones(order.shape[0], dtype=bool)
        new_block[1:] = (qs[1:] != qs[:-1]) | (ys[1:] != ys[:-1])
        block = np.cumsum(new_block) - 1
        self.block_of_row = np.empty_like(block)
        self.block_of_row[order] = block
        self.block_q = qs[new_block]
        self.n_blocks = int(block[-1]) + 1
        levels = np.bincount(self.block_q, minlength=n_q)
        # every query with two grades has the same mass (normalize="query")
        self.mass_q = np.where(levels >= 2, 1.0, 0.0)
        self.mass_q /= max(self.mass_q.sum(), 1.0)
        self.first_block = np.searchsorted(self.block_q, np.arange(n_q))
        self.qcode = qcode

    def potential(self, F: NDArray[np.float64]) -> NDArray[np.float64]:
        """``pi(x)`` = D-mass of pairs with ``x`` above minus those with ``x`` below (sums to 0)."""
        shift = np.full(self.mass_q.shape[0], -np.inf)
        np.maximum.at(shift, self.qcode, F)
        shift = np.where(np.isfinite(shift), shift, 0.0)
        f = F - shift[self.qcode]  # exp(F_a - F_b) is unchanged by a per-query shift
        ep, em = np.exp(f), np.exp(-f)
        Ep = np.bincount(self.block_of_row, ep, minlength=self.n_blocks)
        Em = np.bincount(self.block_of_row, em, minlength=self.n_blocks)
        # within a query, blocks are in increasing grade: sums of the blocks below / above
        cp = np.cumsum(Ep) - Ep
        below = cp - cp[self.first_block[self.block_q]]
        cm = np.cumsum(Em[::-1])[::-1] - Em
        last = np.r_[self.first_block[1:], self.n_blocks] - 1
        above = cm - cm[last[self.block_q]]
        Zq = np.bincount(self.block_q, Em * below, minlength=self.mass_q.shape[0])
        scale = np.divide(self.mass_q, Zq, out=np.zeros_like(Zq), where=Zq > 0)
        b = self.block_of_row
        s = scale[self.qcode]
        return s * (em * below[b] - ep * above[b])


def boost_path(
    H: NDArray[np.float64], fb: Any, prior: float, n_rounds: int, learning_rate: float
) -> NDArray[np.float64]:
    """Weights after each round: row ``t`` = ``w`` after ``t`` rounds (row 0 = the prior).

    ``fb.potential(F)`` gives ``pi``, the D-mass of the pairs with each row above minus
    those with it below: the layered grades (:func:`layered`) or weighted click pairs
    (:class:`rankboost.fusion.clicks.PairPotential`).
    """
    m = H.shape[1]
    w = np.full(m, float(prior))
    out = np.empty((n_rounds + 1, m))
    out[0] = w
    for t in range(1, n_rounds + 1):
        pi = fb.potential(H @ w)
        r = H.T @ pi
        i = int(np.argmax(r))
        if not r[i] > 1e-12:  # no list orders the remaining mass better than at random
            out[t:] = w
            break
        ri = min(float(r[i]), 1.0 - 1e-12)
        w = w.copy()
        w[i] += learning_rate * 0.5 * np.log((1.0 + ri) / (1.0 - ri))
        out[t] = w
    return out


def weight_path(
    H: NDArray[np.float64],
    y: NDArray[np.int64],
    qcode: NDArray[np.int64],
    prior: float,
    n_rounds: int,
    learning_rate: float,
) -> NDArray[np.float64]:
    """The weights after each round of :class:`LinearFusion`'s boosting (row 0 = the prior).

    ``H`` = the unit scores of the rows (min-max values as they are), ``y`` their grades,
    ``qcode`` their query codes ``0..n_q-1``; row ``t`` is ``weights_`` before the "no weight
    > 0" rule of a fit with ``n_rounds=t`` and ``prior_scale=prior`` on these rows.
    """
    return boost_path(H, _Layered(y, qcode), prior, n_rounds, learning_rate)


def layered(y: NDArray[np.int64], qcode: NDArray[np.int64]) -> Any:
    """The layered feedback of the rows in closed form: its ``potential(F)`` is ``pi``."""
    return _Layered(y, qcode)


# ------------------------------------------------------------------ the model -----------
class LinearFusion(ParamsMixin, model_files.Saved):
    """A weighted sum of normalised retriever scores, learned with RankBoost.

    Parameters
    ----------
    normalizer : {"minmax", "rrf", "dbsf", "atan"}, default="minmax"
        Per-query normalisation of every list (see :mod:`rankboost.fusion.linear` and
        :func:`rankboost.fusion.features.normalise_scores`): ``"dbsf"`` is Qdrant's, ``"atan"``
        Milvus's (IP scores), so ``fuse export`` hands those engines what was trained.
    rank_constant : int, default=60
        RRF's ``k`` (``normalizer="rrf"``).
    n_rounds : int or "auto", default="auto"
        Boosting rounds after the prior; ``"auto"``: chosen with ``prior_scale`` by inner
        cross-validation, from 0 to ``max_rounds``.
    max_rounds : int, default=100
        The largest round count tried.
    prior_scale : float or "auto", default="auto"
        ``c`` of the prior ``F_0 = c sum_i h_i``; ``"auto"`` tries
        :data:`rankboost.model_selection.LINEAR_PRIOR_SCALES`.
    learning_rate : float, default=0.3
        Shrinkage of every round's alpha.
    cv_folds : int, default=5
        Inner folds over the training queries.

    Attributes
    ----------
    weights_ : ndarray of shape (n_lists,)
        ``w_i`` of ``F = sum_i w_i n_i`` (>= 0), as float32 values (the engines' precision).
    list_names_ : list of str
    n_rounds_, prior_scale_ : the chosen values.
    cv_results_ : dict or None
        ``"mean"``: held-out NDCG@10 per (prior scale, rounds), ``"scales"``.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.fusion import Qrels, Run
    >>> from rankboost.fusion.linear import LinearFusion
    >>> qs = np.repeat([f"q{i}" for i in range(10)], 4)
    >>> ds = np.tile(["a", "b", "c", "d"], 10)
    >>> good = Run(qs, ds, np.tile([1, 2, 3, 4], 10), np.tile([4.0, 3, 2, 1], 10), name="good")
    >>> bad = Run(qs, ds, np.tile([4, 3, 2, 1], 10), np.tile([1.0, 2, 3, 4], 10), name="bad")
    >>> qrels = Qrels(qs, ds, np.tile([1, 1, 0, 0], 10))
    >>> lin = LinearFusion(n_rounds=5, prior_scale=0.0).fit([good, bad], qrels)
    >>> bool(lin.weights_[0] > 0), float(lin.weights_[1])
    (True, 0.0)
    """

    _FORMAT = FORMAT_NAME
    _PARAMS = (
        "normalizer",
        "rank_constant",
        "n_rounds",
        "max_rounds",
        "prior_scale",
        "learning_rate",
        "cv_folds",
    )

    normalizer: str
    rank_constant: int
    n_rounds: int | str
    max_rounds: int
    prior_scale: float | str
    learning_rate: float
    cv_folds: int

    def __init__(
        self,
        *,
        normalizer: str = "minmax",
        rank_constant: int = RRF_K,
        n_rounds: int | str = "auto",
        max_rounds: int = 100,
        prior_scale: float | str = "auto",
        learning_rate: float = 0.3,
        cv_folds: int = 5,
    ) -> None:
        keep_params(self, locals())

    def _check(self) -> None:
        own = "LinearFusion"
        if self.normalizer not in LINEAR_NORMALIZERS:
            raise ParameterError(
                f"The 'normalizer' parameter of {own} must be one of {LINEAR_NORMALIZERS}; got "
                f"{self.normalizer!r} instead."
            )
        for name, lo in (("rank_constant", 1), ("max_rounds", 1), ("cv_folds", 2)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise ParameterError(
                    f"The {name!r} parameter of {own} must be an int >= {lo}; got {v!r} instead."
                )
        n = self.n_rounds
        if not (n == "auto" or (isinstance(n, (int, np.integer)) and not isinstance(n, bool)
                                and n >= 0)):  # fmt: skip
            raise ParameterError(
                f"The 'n_rounds' parameter of {own} must be 'auto' or an int >= 0; got {n!r}."
            )
        c = self.prior_scale
        if not (c == "auto" or (isinstance(c, (int, float)) and not isinstance(c, bool)
                                and np.isfinite(c) and c >= 0)):  # fmt: skip
            raise ParameterError(
                f"The 'prior_scale' parameter of {own} must be 'auto' or a finite float >= 0; "
                f"got {c!r}."
            )
        lr = self.learning_rate
        if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not 0 < lr <= 1:
            raise ParameterError(
                f"The 'learning_rate' parameter of {own} must be a float in (0, 1]; got {lr!r}."
            )

    def _unit(self, N: NDArray[np.float64]) -> NDArray[np.float64]:
        """``h_i`` in [-1, 1]: rrf values times ``k + 1`` (min-max and atan values already are).

        DBSF values fall outside [0, 1] for a score beyond 3 sd of its query's mean: they are
        divided by their largest magnitude when it exceeds 1 (one factor for every list, so
        the weights keep their meaning and ``F = N @ w`` ranks as ``H @ w``).
        """
        if self.normalizer == "rrf":
            return N * (self.rank_constant + 1.0)
        if self.normalizer == "dbsf" and N.size:
            return N / max(1.0, float(np.abs(N).max()))
        return N

    def fit(
        self, runs: RunsLike, qrels: Qrels | Mapping[str, Any], *, verbose: bool = False
    ) -> LinearFusion:
        """Learn the weights from input lists and relevance judgements.

        ``verbose=True`` shows a progress bar over the inner cross-validation folds (tqdm).
        """
        forget_fit(self)  # a fit that raises leaves an unfitted LinearFusion, not a half state
        self._check()
        items = as_run_list(runs, "LinearFusion.fit")
        if isinstance(qrels, Mapping):
            qrels = Qrels.from_dict(qrels)
        if not isinstance(qrels, Qrels):
            raise TypeError(f"LinearFusion.fit: qrels must be a Qrels; got {type(qrels).__name__}.")
        check_same_queries(items, "LinearFusion.fit")
        coverage_warnings(items, qrels)
        N, qid, docid = linear_features(items, self.normalizer, self.rank_constant)
        y = _grades(qid, docid, qrels)
        judged = np.isin(qid, np.asarray(qrels.queries))
        return self._fit_rows(N, y, qid, judged, [r.name for r in items], verbose)

    def _fit_rows(  # noqa: PLR0917  (private; fit's pieces, and AutoFusion's refit)
        self,
        N: NDArray[np.float64],
        y: NDArray[np.int64],
        qid: NDArray[np.str_],
        judged: NDArray[np.bool_],
        names: list[str],
        verbose: bool = False,
    ) -> LinearFusion:
        """Fit on rows already built: ``N`` (:func:`linear_features`), grades, queries.

        ``judged`` marks the rows of judged queries (all True: no copy of ``N``).
        """
        H = self._unit(N)
        if not judged.all():
            H, y, qid = H[judged], y[judged], qid[judged]
        _, qcode = np.unique(qid, return_inverse=True)
        qcode = qcode.reshape(-1).astype(np.int64)
        auto_scale = self.prior_scale == "auto"
        scales = LINEAR_PRIOR_SCALES if auto_scale else (float(self.prior_scale),)
        T = self.max_rounds if self.n_rounds == "auto" else int(self.n_rounds)
        self.cv_results_: dict[str, Any] | None = None
        scale = scales[0]
        if self.n_rounds == "auto" or auto_scale:
            curves = self._cross_validate(H, y, qcode, scales, T, verbose)
            s_best, t_best = first_best_grid(curves)
            self.cv_results_ = {"mean": curves, "scales": list(scales)}
            scale, T = scales[s_best], t_best
        W = boost_path(H, _Layered(y, qcode), scale, T, self.learning_rate)
        w = W[-1]
        if not np.any(w > 0):  # no list helps and no prior: every list counts the same
            w = np.ones_like(w)
        self.weights_ = w.astype(np.float32).astype(np.float64)
        self.prior_scale_ = float(scale)
        self.n_rounds_ = int(T)
        self.list_names_ = list(names)
        self.n_lists_ = len(names)
        return self

    def _cross_validate(  # noqa: PLR0917  (private; fit's pieces)
        self,
        H: NDArray[np.float64],
        y: NDArray[np.int64],
        qcode: NDArray[np.int64],
        scales: tuple[float, ...],
        T: int,
        verbose: bool,
    ) -> NDArray[np.float64]:
        """Held-out NDCG@10 per (scale, rounds 0..T): :mod:`rankboost.model_selection`'s CV."""
        from .. import _compat

        fold = self._folds(y, qcode)
        memo: dict[str, Any] = {}

        def curve(train: NDArray[np.bool_], valid: NDArray[np.bool_], c: float) -> Any:
            if memo.get("train") is not train:  # one feedback per fold, for every scale
                codes = np.unique(qcode[train], return_inverse=True)[1].reshape(-1)
                memo.update(train=train, fb=_Layered(y[train], codes))
            W = boost_path(H[train], memo["fb"], c, T, self.learning_rate)
            return held_out_curve((H[valid] @ W.T).T, y[valid], qcode[valid])

        bar = _compat.progress_bar(
            total=self.cv_folds, disable=not verbose, desc="inner CV folds", stacklevel=3
        )
        try:
            return cross_validate(fold, self.cv_folds, scales, curve, progress=bar).mean(axis=0)
        finally:
            bar.close()

    def _folds(self, y: NDArray[np.int64], qcode: NDArray[np.int64]) -> NDArray[np.int64]:
        """The inner folds; too few usable queries is an error naming what is chosen by CV."""
        try:
            return query_folds(y, qcode, self.cv_folds)
        except ValueError:
            grades = np.unique(np.column_stack([qcode, y]), axis=0)  # (query, grade) pairs
            n_usable = int(np.sum(np.bincount(grades[:, 0]) > 1))
            chosen, fixes = [], []
            if self.n_rounds == "auto":
                chosen.append("the rounds (n_rounds='auto', --rounds auto)")
                fixes.append("an int number of rounds (n_rounds=20, --rounds 20)")
            if self.prior_scale == "auto":
                chosen.append("the prior's scale (prior_scale='auto', --prior-scale auto)")
                fixes.append("a prior scale (prior_scale=1.0, --prior-scale 1)")
            verb = "are" if len(chosen) > 1 else "is"
            raise ValueError(
                f"LinearFusion.fit: {' and '.join(chosen)} {verb} chosen by {self.cv_folds}-fold "
                f"cross-validation over the training queries, which needs at least "
                f"{self.cv_folds} judged queries with two different grades among the returned "
                f"documents; there are {n_usable}. Pass {' and '.join(fixes)}, or "
                "fewer folds (cv_folds, --cv-folds)."
            ) from None

    @classmethod
    def from_weights(
        cls, list_names: list[str], weights: Any, *, normalizer: str = "minmax"
    ) -> LinearFusion:
        """A fitted model that fuses with the given weights: ``F = sum_i w_i n_i``, no boosting.

        The weights (one finite value >= 0 per list) are kept as float32 values, as
        :meth:`fit` keeps its own; ``n_rounds_`` is 0 and ``prior_scale_`` 1 (the weights are
        the prior). ``AutoFusion``'s ``convex`` and ``rrf`` families are such models.

        Examples
        --------
        >>> from rankboost.fusion.linear import LinearFusion
        >>> lin = LinearFusion.from_weights(["bm25", "dense"], [0.3, 0.7])
        >>> lin.weights_.round(6).tolist(), lin.n_rounds_
        ([0.3, 0.7], 0)
        """
        names = list(list_names)
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (len(names),) or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError(
                f"LinearFusion.from_weights: weights must be one finite value >= 0 per list "
                f"({len(names)}: {reprlib.repr(names)}); got {reprlib.repr(weights)}."
            )
        lin = cls(normalizer=normalizer, n_rounds=0, prior_scale=1.0)
        lin._check()
        lin.weights_ = w.astype(np.float32).astype(np.float64)
        lin.prior_scale_, lin.n_rounds_, lin.cv_results_ = 1.0, 0, None
        lin.list_names_, lin.n_lists_ = names, len(names)
        return lin

    # ------------------------------------------------------------------ apply -------------
    def _check_fitted(self, runs: RunsLike, owner: str, match: str) -> list[Run]:
        items = fitted_lists(self, runs, owner, match, "weights_")
        check_same_queries(items, owner)
        return items

    def decision_function(
        self, runs: RunsLike, *, match: str = "name"
    ) -> tuple[NDArray[np.str_], NDArray[np.str_], NDArray[np.float64]]:
        """``(qid, docid, F)`` of every document the runs return."""
        items = self._check_fitted(runs, "LinearFusion.decision_function", match)
        N, qid, docid = linear_features(items, self.normalizer, self.rank_constant)
        return qid, docid, N @ self.weights_

    def fuse(self, runs: RunsLike, *, depth: int | None = None, match: str = "name") -> Run:
        """Fuse the lists: one run ranked by ``F`` (ties by document id), top ``depth``."""
        qid, docid, F = self.decision_function(runs, match=match)
        return fused_run(qid, docid, F, depth)

    # ------------------------------------------------------------------ persistence -------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        if not hasattr(self, "weights_"):
            raise ValueError("LinearFusion.to_dict: this LinearFusion is not fitted yet.")
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "params": self.get_params(),
            "list_names": self.list_names_,
            "weights": self.weights_.tolist(),
            "prior_scale": self.prior_scale_,
            "n_rounds": self.n_rounds_,
        }

    @classmethod
    def from_dict(cls, data: Any) -> LinearFusion:
        """Rebuild a fitted model from :meth:`to_dict` output."""
        if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
            raise ValueError(f'not a linear fusion model: no "format": "{FORMAT_NAME}" field.')
        if data.get("version") != FORMAT_VERSION:
            raise ValueError(
                f"linear fusion model version {reprlib.repr(data.get('version'))} is not one this "
                f"rankboost reads ({FORMAT_VERSION})."
            )
        try:
            fusion = cls(**{k: v for k, v in data["params"].items() if k in cls._PARAMS})
            fusion._check()
            names, w = data["list_names"], data["weights"]
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise ValueError("malformed linear fusion model: list_names is not a list of str.")
            arr = np.asarray(w, dtype=np.float64)
            if arr.shape != (len(names),) or not np.all(np.isfinite(arr)) or np.any(arr < 0):
                raise ValueError(
                    "malformed linear fusion model: weights must be one finite value >= 0 per "
                    f"list ({len(names)}); got {reprlib.repr(w)}."
                )
            fusion.weights_ = arr
            fusion.list_names_ = list(names)
            fusion.n_lists_ = len(names)
            fusion.prior_scale_ = float(data["prior_scale"])
            fusion.n_rounds_ = int(data["n_rounds"])
            fusion.cv_results_ = None
        except (KeyError, TypeError) as exc:
            raise ValueError(
                f"malformed linear fusion model: missing or bad field {exc}."
            ) from None
        except ParameterError as exc:
            raise ValueError(f"malformed linear fusion model: {exc}") from None
        return fusion

    def describe(self, path: str | os.PathLike[str] = "MODEL") -> Description:
        """How it scores and where it can be served, for ``path`` (:mod:`rankboost.description`)."""
        from ._describe import describe_linear

        return describe_linear(self, str(path))

    def __repr__(self) -> str:
        return "LinearFusion(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self._PARAMS) + ")"


def _grades(qid: NDArray[np.str_], docid: NDArray[np.str_], qrels: Qrels) -> NDArray[np.int64]:
    from .features import FusionFeatures

    return grades_for(FusionFeatures(np.empty((qid.shape[0], 0)), qid, docid, []), qrels)


def keep_common_queries(runs: list[Run]) -> tuple[list[Run], list[str]]:
    """The runs cut to the queries every one covers, and the dropped query ids (sorted).

    Examples
    --------
    >>> from rankboost.fusion import Run
    >>> from rankboost.fusion.linear import keep_common_queries
    >>> a = Run(["q1", "q2", "q3"], ["d", "d", "d"], [1, 1, 1], name="a")
    >>> b = Run(["q2", "q3", "q4"], ["d", "e", "d"], [1, 1, 1], name="b")
    >>> kept, dropped = keep_common_queries([a, b])
    >>> [r.queries for r in kept], dropped
    ([['q2', 'q3'], ['q2', 'q3']], ['q1', 'q4'])
    """
    common = set(runs[0].queries)
    for r in runs[1:]:
        common &= set(r.queries)
    dropped = sorted(set().union(*(r.queries for r in runs)) - common)
    if not common:
        sizes = ", ".join(f"{r.name!r} {len(r.queries)}" for r in runs)
        raise ValueError(
            f"the runs share no query (queries per run: {sizes}); --common-queries would keep "
            "none: pass runs of the same queries."
        )
    if not dropped:
        return list(runs), []
    keep = np.asarray(sorted(common))
    out = []
    for r in runs:
        m = np.isin(r.qid, keep)
        out.append(Run(r.qid[m], r.docid[m], r.rank[m], r.score[m], name=r.name))
    return out, dropped


def check_same_queries(items: list[Run], owner: str) -> None:
    """Every list must cover the same queries: a query one retriever skipped is an error.

    A query missing from a list would be fused as if that retriever returned nothing, which
    an engine never sees (it runs every retriever on every query); pass an empty result
    explicitly by leaving the query out of every list instead.
    """
    first = set(items[0].queries)
    for r in items[1:]:
        qs = set(r.queries)
        if qs != first:
            only_a, only_b = sorted(first - qs), sorted(qs - first)
            q, side = (only_a[0], items[0].name) if only_a else (only_b[0], r.name)
            raise ValueError(
                f"{owner}: the runs {items[0].name!r} and {r.name!r} cover different queries "
                f"({len(only_a)} only in the first, {len(only_b)} only in the second; e.g. "
                f"{q!r} only in {side!r}). Every retriever of a hybrid search answers every "
                "query: pass runs of the same queries (cut them with the same query list; "
                "'rankboost fuse' keeps the queries every run covers with --common-queries)."
            )
