"""Learned rank fusion with RankBoost: meta-search (Freund et al. 2003, section 6.2).

Each input list ``i`` is a ranking feature: for a document ``d`` of query ``q``,
``f_i(d) = g(rank_i(d))`` with ``g`` strictly decreasing (``-rank`` by default, or ``1/rank``),
and ``f_i(d) = ⊥`` (NaN, the feature abstains) when list ``i`` did not return ``d``. A
threshold weak ranker ``[f_i(d) > theta]`` then reads "``d`` is in the top ``k`` of list
``i``" (paper, section 6.2). By default one presence feature per list ("returned by list
``i``": 1, "missing from it": 0) and the number of lists that returned the document are added;
optionally, per-query min-max normalised run scores too.

Feedback: the qrels grades per query (:class:`rankboost.LayeredFeedback`, which is the
bipartite RankBoost.B when grades are binary), or grade >= 1 against the rest
(``feedback="bipartite"``). Documents that a list returned but that the qrels do not judge
get grade 0, the TREC convention. WeakLearn.cum (``positive_cumulative=True``, paper section
4) is the default, as the paper recommends for this task: it makes the fused score
non-decreasing in every feature, so moving a document up in any list (or into it) never
lowers its fused score. The number of rounds is chosen by an inner cross-validation over
the training queries (``n_rounds="auto"``, :func:`cv_rounds`). These defaults were chosen by
cross-validation on training queries of CISI, MQ2008-agg and MQ2007-agg (docs/hybrid.md).
"""

from __future__ import annotations

import json
import os
import reprlib
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..model import RankBoostModel, atomic_write_text, read_json
from ..params import (
    TRAIN_PARAMS,
    ParameterError,
    TrainParams,
    check_param,
    make_params,
    params_of,
)
from ._match import MATCH_MODES, match_by_name
from .run import Qrels, Run

__all__ = [
    "FusionFeatures",
    "FusionWarning",
    "RankFusion",
    "cv_rounds",
    "fusion_features",
    "grades_for",
]

FORMAT_NAME = "rankboost-fusion"
FORMAT_VERSION = 1
_RANK_FEATURES = ("neg_rank", "reciprocal")

RunsLike = Mapping[str, Run] | Sequence[Run]


class FusionWarning(UserWarning):
    """Runs and qrels do not cover the same queries (the message says which and how many)."""


@dataclass
class FusionFeatures:
    """Rank features of the documents of a set of runs, one row per (query, document).

    Attributes
    ----------
    X : ndarray of shape (n_rows, n_features)
        One rank column per list (then one normalised-score column per list if asked);
        NaN where the list did not return the document.
    qid : ndarray of str of shape (n_rows,)
        Query id of each row; rows are grouped by query.
    docid : ndarray of str of shape (n_rows,)
        Document id of each row.
    feature_names : list of str
        ``"rank:<list>"`` and ``"score:<list>"``.
    """

    X: NDArray[np.float64]
    qid: NDArray[np.str_]
    docid: NDArray[np.str_]
    feature_names: list[str]


def _as_run_list(runs: RunsLike, owner: str) -> list[Run]:
    if isinstance(runs, Run):
        raise TypeError(f"{owner}: runs must be a list (or dict) of Run objects; got one Run.")
    items = list(runs.values()) if isinstance(runs, Mapping) else list(runs)
    if not items:
        raise ValueError(f"{owner}: runs is empty; pass at least one input list.")
    for r in items:
        if not isinstance(r, Run):
            raise TypeError(
                f"{owner}: every input list must be a rankboost.fusion.Run (read one with "
                f"read_run); got {type(r).__name__}."
            )
    return items


def _rank_values(rank: NDArray[np.int64], rank_feature: str) -> NDArray[np.float64]:
    if rank_feature == "neg_rank":
        return -rank.astype(np.float64)
    return 1.0 / rank.astype(np.float64)


def _minmax_per_query(qcode: NDArray[np.int64], s: NDArray[np.float64], n_q: int) -> NDArray:
    lo = np.full(n_q, np.inf)
    hi = np.full(n_q, -np.inf)
    np.minimum.at(lo, qcode, s)
    np.maximum.at(hi, qcode, s)
    span = (hi - lo)[qcode]
    out = np.ones(s.shape[0])
    ok = span > 0
    out[ok] = (s[ok] - lo[qcode][ok]) / span[ok]
    return out


def fusion_features(
    runs: RunsLike,
    *,
    rank_feature: str = "neg_rank",
    score_features: bool = False,
    missing_features: bool = False,
) -> FusionFeatures:
    """Build the fusion feature matrix of a set of runs.

    Rows are the union of the documents the runs return, per query; queries appear in order
    of first appearance across the runs, and documents within a query in order of first
    appearance too.

    Parameters
    ----------
    runs : list of Run or dict of str to Run
        The input lists, in a fixed order (column ``i`` = list ``i``).
    rank_feature : {"neg_rank", "reciprocal"}, default="neg_rank"
        ``-rank`` or ``1/rank``. Both are strictly decreasing in the rank, so threshold
        rankers (and hence RankBoost with threshold weak rankers) learn the same model with
        either; the choice matters only for real-valued learners.
    score_features : bool, default=False
        Add, per list, the run's score min-max normalised within each query (1 when all
        the query's scores are equal), NaN where the list did not return the document.
    missing_features : bool, default=False
        Add, per list, ``in:<list>``: 1 where the list returned the document and 0 where it
        is missing from that list (never NaN), then one column ``n_in``: how many lists
        returned it (CombMNZ's count). Present = 1, so that WeakLearn.cum's monotonicity
        reads "being returned never lowers the fused score".

    Returns
    -------
    FusionFeatures

    Examples
    --------
    >>> from rankboost.fusion import Run, fusion_features
    >>> a = Run(["q", "q"], ["d1", "d2"], [1, 2], name="a")
    >>> b = Run(["q"], ["d2"], [1], name="b")
    >>> f = fusion_features([a, b])
    >>> f.docid.tolist(), f.X.tolist(), f.feature_names
    (['d1', 'd2'], [[-1.0, nan], [-2.0, -1.0]], ['rank:a', 'rank:b'])
    >>> g = fusion_features([a, b], missing_features=True)
    >>> g.feature_names
    ['rank:a', 'rank:b', 'in:a', 'in:b', 'n_in']
    >>> g.X.tolist()
    [[-1.0, nan, 1.0, 0.0, 1.0], [-2.0, -1.0, 1.0, 1.0, 2.0]]
    """
    if rank_feature not in _RANK_FEATURES:
        raise ValueError(
            f"rank_feature must be one of {_RANK_FEATURES}; got {rank_feature!r} instead."
        )
    items = _as_run_list(runs, "fusion_features")
    qids = np.concatenate([r.qid for r in items])
    docs = np.concatenate([r.docid for r in items])
    # first appearance order of queries, then of (query, document) keys
    uq, q_first, q_inv = np.unique(qids, return_index=True, return_inverse=True)
    q_rank = np.empty(uq.shape[0], dtype=np.int64)
    q_rank[np.argsort(q_first, kind="stable")] = np.arange(uq.shape[0])
    qcode_all = q_rank[q_inv.reshape(-1)]
    keys = np.char.add(np.char.add(qids, "\x00"), docs)
    uk, k_first, k_inv = np.unique(keys, return_index=True, return_inverse=True)
    k_inv = k_inv.reshape(-1)
    order = np.lexsort((k_first, qcode_all[k_first]))  # unique keys: by query, then first seen
    row_of_key = np.empty(uk.shape[0], dtype=np.int64)
    row_of_key[order] = np.arange(uk.shape[0])
    rows = row_of_key[k_inv]
    n_lists = len(items)
    n_feat = n_features_of(n_lists, score_features, missing_features)
    X = np.full((uk.shape[0], n_feat), np.nan)
    start = 0
    for i, r in enumerate(items):
        stop = start + len(r)
        idx = rows[start:stop]
        X[idx, i] = _rank_values(r.rank, rank_feature)
        if score_features:
            X[idx, n_lists + i] = _minmax_per_query(qcode_all[start:stop], r.score, uq.shape[0])
        start = stop
    first = k_first[order]
    names = [f"rank:{r.name}" for r in items]
    if score_features:
        names += [f"score:{r.name}" for r in items]
    if missing_features:
        col = n_lists * (2 if score_features else 1)
        present = ~np.isnan(X[:, :n_lists])
        X[:, col : col + n_lists] = present
        X[:, col + n_lists] = present.sum(axis=1)
        names += [f"in:{r.name}" for r in items] + ["n_in"]
    return FusionFeatures(X, qids[first], docs[first], names)


def n_features_of(n_lists: int, score_features: bool, missing_features: bool) -> int:
    """Number of feature columns :func:`fusion_features` builds for ``n_lists`` lists."""
    return n_lists * (2 if score_features else 1) + (n_lists + 1 if missing_features else 0)


def grades_for(features: FusionFeatures, qrels: Qrels) -> NDArray[np.int64]:
    """Grade of every feature row from the qrels; 0 when unjudged (the TREC convention).

    Examples
    --------
    >>> from rankboost.fusion import Qrels, Run, fusion_features, grades_for
    >>> f = fusion_features([Run(["q", "q"], ["d1", "d2"], [1, 2])])
    >>> grades_for(f, Qrels(["q"], ["d2"], [2])).tolist()
    [0, 2]
    """
    table = qrels.to_dict()
    return np.asarray(
        [
            table.get(q, {}).get(d, 0)
            for q, d in zip(features.qid.tolist(), features.docid.tolist(), strict=True)
        ],
        dtype=np.int64,
    )


def cv_rounds(
    X: NDArray[np.float64],
    y: NDArray[np.int64],
    qid: NDArray[Any],
    params: TrainParams,
    make_feedback: Callable[[NDArray[np.int64], NDArray[Any]], Any],
    *,
    cv_folds: int = 5,
    seed: int = 0,
    pair_labels: NDArray[Any] | None = None,
) -> dict[str, Any]:
    """Choose the number of boosting rounds by cross-validation over queries.

    The queries that can train (two different labels under ``make_feedback``) are split
    into ``cv_folds`` folds (a permutation seeded by ``seed``; query ``i`` of the permuted
    order goes to fold ``i mod cv_folds``). For each fold one model of ``params.n_rounds``
    rounds is trained on the other folds' queries, and the NDCG@10 of the held-out queries
    (:func:`rankboost.metrics.ndcg_score`, defaults: exp2 gain, log2 discount, expected ties)
    is computed after every round. A model that stops early (no weak ranker left) keeps its
    last value. The chosen count is the first with the highest mean over the folds.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features)
        Feature rows (NaN = abstain), grouped or not by query.
    y : ndarray of int of shape (n_rows,)
        Grades.
    qid : ndarray of shape (n_rows,)
        Query of each row.
    params : TrainParams
        Training parameters; ``params.n_rounds`` is the largest count tried.
    make_feedback : callable
        ``make_feedback(y, qid)`` builds the feedback of a subset of rows.
    cv_folds : int, default=5
        Number of folds, at least 2 and at most the number of usable queries.
    seed : int, default=0
        Seed of the permutation of the queries.
    pair_labels : ndarray of shape (n_rows,), default=None
        The labels ``make_feedback`` orders (a query can train when they differ within it);
        None = ``y``. Bipartite feedback on grades passes ``y >= 1``.

    Returns
    -------
    dict
        ``"n_rounds"`` (1..T), ``"mean"`` and ``"per_fold"`` (held-out NDCG@10 per round
        count), ``"best_n_rounds"``, ``"best_score"`` and ``"fold_of_query"`` ({qid: fold}).

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost import LayeredFeedback
    >>> from rankboost.fusion import cv_rounds
    >>> from rankboost.params import TrainParams
    >>> rng = np.random.default_rng(0)
    >>> qid = np.repeat(np.arange(20), 8)
    >>> y = rng.integers(0, 2, 160)
    >>> X = (y + rng.normal(size=160))[:, None]
    >>> cv = cv_rounds(X, y, qid, TrainParams(n_rounds=10), LayeredFeedback, cv_folds=4)
    >>> cv["mean"].shape, 1 <= cv["best_n_rounds"] <= 10
    ((10,), True)
    """
    from ..booster import TrainingStoppedWarning, _train
    from ..metrics import ndcg_score

    uq, first, qcode = np.unique(np.asarray(qid), return_index=True, return_inverse=True)
    qcode = qcode.reshape(-1)
    n_q = uq.shape[0]
    lo = np.full(n_q, np.iinfo(np.int64).max)
    hi = np.full(n_q, np.iinfo(np.int64).min)
    yy = np.asarray(y, dtype=np.int64)
    gain = np.maximum(yy, 0)  # scored as trec_eval: a grade <= 0 is not relevant
    pl = yy if pair_labels is None else np.asarray(pair_labels, dtype=np.int64)
    np.minimum.at(lo, qcode, pl)
    np.maximum.at(hi, qcode, pl)
    usable_q = lo < hi
    # NOTE: a query without two grades gives no pairs to train on, and a constant NDCG
    # whatever the model, so it takes no part in the choice.
    order = np.argsort(first, kind="stable")  # queries in order of first appearance
    usable = order[usable_q[order]]
    if isinstance(cv_folds, bool) or not isinstance(cv_folds, (int, np.integer)) or cv_folds < 2:
        raise ParameterError(f"cv_rounds: cv_folds must be an int >= 2; got {cv_folds!r}.")
    if usable.shape[0] < cv_folds:
        raise ValueError(
            f"n_rounds='auto' chooses the rounds by {cv_folds}-fold cross-validation over the "
            f"training queries, which needs at least {cv_folds} judged queries with two "
            f"different grades among the returned documents; there are {usable.shape[0]}. "
            "Pass an int number of rounds (n_rounds=100, --rounds 100), or fewer folds "
            "(cv_folds, --cv-folds)."
        )
    perm = np.random.default_rng(seed).permutation(usable.shape[0])
    fold_q = np.full(n_q, -1, dtype=np.int64)
    fold_q[usable[perm]] = np.arange(usable.shape[0]) % cv_folds
    fold = fold_q[qcode]
    T = int(params.n_rounds)
    curves = np.empty((cv_folds, T))
    for f in range(cv_folds):
        tr = (fold >= 0) & (fold != f)
        va = fold == f
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrainingStoppedWarning)
            model = _train(np.ascontiguousarray(X[tr]), make_feedback(yy[tr], qcode[tr]), params)
        t = 0
        for t, h in enumerate(model.staged_decision_function(X[va])):
            curves[f, t] = ndcg_score(gain[va], h, qcode[va], k=10)
        if model.n_rounds == 0:
            curves[f, :] = ndcg_score(gain[va], np.zeros(int(va.sum())), qcode[va], k=10)
        else:
            curves[f, t + 1 :] = curves[f, t]
    mean = curves.mean(axis=0)
    best = int(np.argmax(mean))
    return {
        "n_rounds": np.arange(1, T + 1),
        "mean": mean,
        "per_fold": curves,
        "best_n_rounds": best + 1,
        "best_score": float(mean[best]),
        "fold_of_query": {str(uq[i]): int(fold_q[i]) for i in range(n_q)},
    }


def _coverage_warnings(items: list[Run], qrels: Qrels) -> None:
    judged = set(qrels.queries)
    in_runs: set[str] = set()
    for r in items:
        qs = set(r.queries)
        in_runs |= qs
        extra = sorted(qs - judged)
        if extra:
            warnings.warn(
                f"run {r.name}: {len(extra)} queries are not in the qrels (e.g. {extra[0]!r}); "
                "they give no training signal and are ignored for training.",
                FusionWarning,
                stacklevel=3,
            )
    missing = sorted(judged - in_runs)
    if missing:
        warnings.warn(
            f"qrels: {len(missing)} judged queries are in none of the runs (e.g. "
            f"{missing[0]!r}); there is nothing to fuse for them, they are ignored.",
            FusionWarning,
            stacklevel=3,
        )


class RankFusion:
    """Learn to combine ranked lists with RankBoost (meta-search).

    Parameters
    ----------
    n_rounds : int or "auto", default="auto"
        Boosting rounds. ``"auto"``: chosen by an inner ``cv_folds``-fold cross-validation
        over the training queries (the queries are split, never a query's documents): one
        model of ``max_rounds`` rounds per inner fold, NDCG@10 (:func:`rankboost.metrics.
        ndcg_score`, exp2 gain, log2 discount, over the documents the runs return) of its
        held-out queries after every round, averaged over the folds; the first round count
        with the highest mean wins (:attr:`n_rounds_`, the curve in :attr:`cv_results_`),
        then the model is refitted on all training queries with it.
    max_rounds : int, default=300
        The largest round count ``n_rounds="auto"`` tries (unused otherwise).
    cv_folds : int, default=5
        Inner folds of ``n_rounds="auto"``; it needs at least ``cv_folds`` usable queries
        (judged, with two different grades among the returned documents).
    positive_cumulative : bool, default=True
        WeakLearn.cum (paper section 4): the fused score is non-decreasing in every
        feature. ``False`` = unconstrained WeakLearn.
    rank_feature : {"neg_rank", "reciprocal"}, default="neg_rank"
        Strictly decreasing function of the rank used as the feature (see
        :func:`fusion_features`).
    score_features : bool, default=False
        Also use each list's per-query min-max normalised scores.
    missing_features : bool, default=True
        Also use, per list, "returned by this list" (1) or "missing from it" (0), and the
        number of lists that returned the document (see :func:`fusion_features`). Chosen
        by cross-validation on training queries (docs/hybrid.md); ``False`` = the paper's
        rank features only.
    feedback : {"layered", "bipartite"}, default="layered"
        ``"layered"``: every higher grade above every lower one (:class:`rankboost.
        LayeredFeedback`); ``"bipartite"``: grade >= 1 above grade <= 0 only.
    normalize : {"query", "pair"}, default="query"
        Feedback normalisation (:class:`rankboost.LayeredFeedback`): every query with a
        crucial pair gets the same mass (``"query"``), or every crucial pair does.
    alpha : {"r", "exact", "line_search"}, default="r"
        Step-size rule of :func:`rankboost.train`.
    learning_rate : float, default=1.0
        Shrinkage ``nu`` in (0, 1]: ``alpha_t = nu`` times the rule's alpha (1 = the paper).
    thresholds : int, "all", "midpoints" or ("uniform", B), default="all"
        Candidate thresholds per feature; ``"all"`` tries "top ``k`` of list ``i``" for
        every rank ``k`` seen in training (:mod:`rankboost.binning` for the others).
    criterion : {"abs_r", "r"}, default="abs_r"
        WeakLearn's objective: the largest ``|r|`` (the paper) or the largest ``r > 0``.
    default : {"learned", 0, 1}, default="learned"
        ``q_def`` where a list does not return the document: picked by WeakLearn, or fixed
        (``0``: "absent = worst").
    weak_ranker : {"threshold", "feature", "both"}, default="threshold"
        Weak rankers of :func:`rankboost.train`.

    Attributes
    ----------
    model_ : RankBoostModel
        The fitted ranking function over :attr:`feature_names_`.
    n_rounds_ : int
        The rounds of :attr:`model_` (chosen by the inner cross-validation when
        ``n_rounds="auto"``).
    cv_results_ : dict or None
        ``n_rounds="auto"`` only: ``"n_rounds"`` (1..max_rounds), ``"mean"`` (mean held-out
        NDCG@10 per round count) and ``"per_fold"`` (one row per inner fold); None for an
        int ``n_rounds``.
    list_names_ : list of str
        Names of the input lists seen in :meth:`fit` (their :attr:`Run.name`), in order;
        :meth:`fuse` matches the runs it is given to them by name.
    feature_names_ : list of str
        Names of the feature columns.
    n_lists_ : int
        Number of input lists; :meth:`fuse` needs the same number.

    References
    ----------
    .. [1] Y. Freund, R. Iyer, R. E. Schapire and Y. Singer, "An efficient boosting algorithm
       for combining preferences", JMLR 4 (2003) 933-969, sections 4 (WeakLearn.cum) and
       6.2 (meta-search).

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.fusion import Qrels, RankFusion, Run
    >>> rng = np.random.default_rng(0)
    >>> qs = np.repeat([f"q{i}" for i in range(20)], 10)
    >>> ds = np.tile([f"d{j}" for j in range(10)], 20)
    >>> rel = (np.tile(np.arange(10), 20) < 3).astype(int)  # d0, d1, d2 are relevant
    >>> ranks = np.tile([1, 2, 4, 3, 5, 6, 7, 8, 9, 10], 20)  # d3 above d2: not perfect
    >>> good = Run(qs, ds, ranks, name="good")
    >>> noise = Run(qs, ds, np.concatenate([rng.permutation(10) + 1 for _ in range(20)]),
    ...             name="noise")
    >>> fusion = RankFusion(n_rounds=20).fit([good, noise], Qrels(qs, ds, rel))
    >>> fusion.feature_names_
    ['rank:good', 'rank:noise', 'in:good', 'in:noise', 'n_in']
    >>> fusion.model_.feature_importances_.round(1).tolist()
    [1.0, 0.0, 0.0, 0.0, 0.0]
    >>> fused = fusion.fuse([good, noise])
    >>> fused.docid[(fused.qid == "q0") & (fused.rank <= 2)].tolist()
    ['d0', 'd1']
    """

    def __init__(
        self,
        *,
        n_rounds: int | str = "auto",
        max_rounds: int = 300,
        cv_folds: int = 5,
        positive_cumulative: bool = True,
        rank_feature: str = "neg_rank",
        score_features: bool = False,
        missing_features: bool = True,
        feedback: str = "layered",
        normalize: str = "query",
        alpha: str = "r",
        learning_rate: float = 1.0,
        thresholds: int | str | tuple[str, int] = "all",
        criterion: str = "abs_r",
        default: str | int = "learned",
        weak_ranker: str = "threshold",
    ) -> None:
        self.n_rounds = n_rounds
        self.max_rounds = max_rounds
        self.cv_folds = cv_folds
        self.positive_cumulative = positive_cumulative
        self.rank_feature = rank_feature
        self.score_features = score_features
        self.missing_features = missing_features
        self.feedback = feedback
        self.normalize = normalize
        self.alpha = alpha
        self.learning_rate = learning_rate
        self.thresholds = thresholds
        self.criterion = criterion
        self.default = default
        self.weak_ranker = weak_ranker

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor parameters (scikit-learn convention)."""
        return {k: getattr(self, k) for k in _PARAMS}

    def set_params(self, **params: Any) -> RankFusion:
        """Set constructor parameters (scikit-learn convention)."""
        for k, v in params.items():
            if k not in _PARAMS:
                raise ValueError(f"RankFusion has no parameter {k!r}; valid ones: {_PARAMS}.")
            setattr(self, k, v)
        return self

    def features(self, runs: RunsLike) -> FusionFeatures:
        """The feature matrix this fusion uses for ``runs`` (see :func:`fusion_features`)."""
        return fusion_features(
            runs,
            rank_feature=self.rank_feature,
            score_features=bool(self.score_features),
            missing_features=bool(self.missing_features),
        )

    def fit(self, runs: RunsLike, qrels: Qrels, **train_kwargs: Any) -> RankFusion:
        """Learn the fusion from input lists and relevance judgements.

        Parameters
        ----------
        runs : list of Run or dict of str to Run
            The input lists (their order is the model's feature order).
        qrels : Qrels or dict
            Grades per query; unjudged retrieved documents get grade 0. Queries of the runs
            without judgements, and judged queries no run returns, raise a
            :class:`FusionWarning` and are ignored.
        **train_kwargs
            ``callbacks`` and ``verbose`` of :func:`rankboost.train`.

        Returns
        -------
        self : RankFusion
        """
        items = _as_run_list(runs, "RankFusion.fit")
        if isinstance(qrels, Mapping):
            qrels = Qrels.from_dict(qrels)
        if not isinstance(qrels, Qrels):
            raise TypeError(
                f"RankFusion.fit: qrels must be a Qrels (see read_qrels) or a "
                f"{{qid: {{docid: rel}}}} dict; got {type(qrels).__name__}."
            )
        params = self._params()
        self._check_fusion_params()
        extra = sorted(set(train_kwargs) - {"callbacks", "verbose"})
        if extra:
            raise TypeError(
                f"RankFusion.fit got unexpected keyword argument(s) {extra}; training "
                "parameters are set on RankFusion itself (RankFusion(n_rounds=...)), and fit "
                "takes only callbacks= and verbose=."
            )
        # NOTE: imported here so that importing this module (the ``fuse train`` options read
        # RankFusion's signature) does not import numba (issue 16, item 10).
        from ..booster import _train

        _coverage_warnings(items, qrels)
        feats = self.features(items)
        y = grades_for(feats, qrels)
        judged = np.isin(feats.qid, np.asarray(qrels.queries))
        if not judged.any():
            raise ValueError(
                "RankFusion.fit: no query of the runs is judged in the qrels; check that the "
                "query ids of the run files and the qrels file match."
            )
        X, yj, qj = feats.X[judged], y[judged], feats.qid[judged]
        feedback = self._feedback(yj, qj)
        self.cv_results_: dict[str, Any] | None = None
        if self.n_rounds == "auto":
            self.cv_results_ = cv_rounds(
                X,
                yj,
                qj,
                params,
                self._feedback,
                cv_folds=int(self.cv_folds),
                pair_labels=(yj >= 1) if self.feedback == "bipartite" else None,
            )
            params = params.replace(n_rounds=int(self.cv_results_["best_n_rounds"]))
        self.model_ = _train(
            X,
            feedback,
            params,
            callbacks=train_kwargs.get("callbacks"),
            feature_names=feats.feature_names,
            verbose=bool(train_kwargs.get("verbose", False)),
            stacklevel=3,
        )
        self.n_rounds_ = int(self.model_.n_rounds)
        self.list_names_ = [r.name for r in items]
        self.feature_names_ = list(feats.feature_names)
        self.n_lists_ = len(items)
        return self

    def _params(self) -> TrainParams:
        """The training parameters, validated (the one definition of rankboost.params).

        With ``n_rounds="auto"`` the rounds are ``max_rounds`` (the inner cross-validation's
        longest models); :meth:`fit` then replaces them by the chosen count.
        """
        check_param("normalize", self.normalize, "RankFusion")
        check_param("feedback", self.feedback, "RankFusion")
        if isinstance(self.n_rounds, str) and self.n_rounds == "auto":
            check_param("n_rounds", self.max_rounds, "RankFusion", alias="max_rounds")
            values = {q.name: getattr(self, q.name) for q in TRAIN_PARAMS if hasattr(self, q.name)}
            values["n_rounds"] = self.max_rounds
            return make_params("RankFusion", None, **values)
        if isinstance(self.n_rounds, str) or isinstance(self.n_rounds, bool):
            raise ParameterError(
                "The 'n_rounds' parameter of RankFusion must be 'auto' or an int >= 1; got "
                f"{self.n_rounds!r} instead."
            )
        return params_of(self, "RankFusion")

    def _check_fusion_params(self) -> None:
        if isinstance(self.cv_folds, bool) or not isinstance(self.cv_folds, (int, np.integer)):
            raise ParameterError(
                f"The 'cv_folds' parameter of RankFusion must be an int >= 2; got "
                f"{self.cv_folds!r} instead."
            )
        if self.cv_folds < 2:
            raise ParameterError(
                f"The 'cv_folds' parameter of RankFusion must be an int >= 2; got "
                f"{self.cv_folds!r} instead."
            )
        for name in ("score_features", "missing_features"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ParameterError(
                    f"The {name!r} parameter of RankFusion must be True or False; got "
                    f"{getattr(self, name)!r} instead."
                )
        if self.rank_feature not in _RANK_FEATURES:
            raise ParameterError(
                f"The 'rank_feature' parameter of RankFusion must be one of {_RANK_FEATURES}; "
                f"got {self.rank_feature!r} instead."
            )

    def _feedback(self, y: NDArray[np.int64], qid: NDArray[np.str_]) -> Any:
        """The feedback of judged rows: layered over the grades, or bipartite (grade >= 1)."""
        from ..feedback import BipartiteFeedback, LayeredFeedback

        try:
            if self.feedback == "bipartite":
                return BipartiteFeedback((y >= 1).astype(np.int64), qid, normalize=self.normalize)
            return LayeredFeedback(y, qid, normalize=self.normalize)
        except ValueError as exc:
            raise ValueError(
                "RankFusion.fit: no judged query has two different grades among the "
                f"documents the runs return ({exc})"
            ) from None

    def _check_fitted(self, runs: RunsLike, owner: str, match: str = "name") -> list[Run]:
        if not hasattr(self, "model_"):
            raise ValueError(f"{owner}: this RankFusion is not fitted yet; call fit first.")
        if match not in MATCH_MODES:
            raise ValueError(f"{owner}: match must be one of {MATCH_MODES}; got {match!r}.")
        items = _as_run_list(runs, owner)
        if len(items) != self.n_lists_:
            raise ValueError(
                f"{owner}: the model was trained on {self.n_lists_} input lists "
                f"({', '.join(self.list_names_)}) but {len(items)} were given; pass the same "
                "lists."
            )
        if match == "order":
            return items
        return match_by_name(self.list_names_, [r.name for r in items], items, owner)

    def decision_function(
        self, runs: RunsLike, *, n_rounds: int | None = None, match: str = "name"
    ) -> tuple[FusionFeatures, NDArray[np.float64]]:
        """Fused scores of every document the runs return.

        Parameters
        ----------
        runs : list of Run or dict of str to Run
            The lists of :meth:`fit` (see :meth:`fuse` for how they are matched).
        n_rounds : int, default=None
            Use only the first ``n_rounds`` weak rankers (None = all).
        match : {"name", "order"}, default="name"
            See :meth:`fuse`.

        Returns
        -------
        features : FusionFeatures
            The rows (``qid``, ``docid``) that were scored.
        scores : ndarray of shape (n_rows,)
            ``H`` of each row (higher = better).
        """
        items = self._check_fitted(runs, "RankFusion.decision_function", match)
        feats = self.features(items)
        return feats, self.model_.decision_function(feats.X, n_rounds=n_rounds)

    def fuse(
        self,
        runs: RunsLike,
        *,
        n_rounds: int | None = None,
        depth: int | None = None,
        match: str = "name",
    ) -> Run:
        """Fuse input lists into one ranked list per query.

        Parameters
        ----------
        runs : list of Run or dict of str to Run
            The lists of :meth:`fit`, on any queries, in any order: each is matched to the
            trained list of the same :attr:`Run.name` (:attr:`list_names_`), or of the same
            file name (last path component, so the same run files read from another
            folder match). Names that match no trained list are a ``ValueError`` naming
            the missing and unknown lists. When names are not available (a duplicate name,
            or unnamed runs: the default name ``"run"``, on either side) the runs are used
            in the order given, which must then be the order of :meth:`fit`.
        n_rounds : int, default=None
            Use only the first ``n_rounds`` weak rankers (None = all).
        depth : int, default=None
            Keep the top ``depth`` documents per query (None = all).
        match : {"name", "order"}, default="name"
            ``"name"``: match the runs to the trained lists by name as above; ``"order"``:
            use them in the order given, whatever their names (runs of other files for the
            same systems, e.g. another year's runs).

        Returns
        -------
        Run
            Named ``"rankboost"``; ranks ``1..n`` per query by decreasing fused score,
            equal scores ordered by document id.
        """
        feats, scores = self.decision_function(runs, n_rounds=n_rounds, match=match)
        run = Run.from_dict(_nested(feats.qid, feats.docid, scores), name="rankboost")
        if depth is not None:
            keep = run.rank <= depth
            run = Run(
                run.qid[keep], run.docid[keep], run.rank[keep], run.score[keep], name=run.name
            )
        return run

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: parameters, list names, feature spec and the RankBoost model."""
        if not hasattr(self, "model_"):
            raise ValueError("RankFusion.to_dict: this RankFusion is not fitted yet.")
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "params": self.get_params(),
            "list_names": self.list_names_,
            "feature_names": self.feature_names_,
            "model": self.model_.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Any) -> RankFusion:
        """Rebuild a fitted fusion from :meth:`to_dict` output."""
        if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
            raise ValueError(
                f'not a rankboost fusion model: the JSON has no "format": "{FORMAT_NAME}" field.'
            )
        version = data.get("version")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ValueError(
                f"malformed fusion model: version is {reprlib.repr(version)}, not an int >= 1."
            )
        if version > FORMAT_VERSION:
            raise ValueError(
                f"fusion model format version {version!r} is not one this rankboost reads "
                f"(<= {FORMAT_VERSION}); upgrade rankboost."
            )
        try:
            params = {k: v for k, v in data["params"].items() if k in _PARAMS}
            # NOTE: files of earlier releases have no such fields: their values then
            params.setdefault("missing_features", False)
            params.setdefault("feedback", "layered")
            if isinstance(params.get("thresholds"), list):  # ("uniform", B) in JSON
                params["thresholds"] = tuple(params["thresholds"])
            fusion = cls(**params)
            if fusion.rank_feature not in _RANK_FEATURES or not isinstance(
                fusion.score_features, bool
            ):
                raise ValueError(
                    f"malformed fusion model: rank_feature {reprlib.repr(fusion.rank_feature)} "
                    f"or score_features {reprlib.repr(fusion.score_features)} is not allowed."
                )
            try:
                fusion._params()
                fusion._check_fusion_params()
            except ValueError as exc:
                raise ValueError(f"malformed fusion model: {exc}") from None
            fusion.model_ = RankBoostModel.from_dict(data["model"])
            for key in ("list_names", "feature_names"):
                names = data[key]
                if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                    raise ValueError(f"malformed fusion model: {key} is not a list of strings.")
            fusion.list_names_ = list(data["list_names"])
            fusion.feature_names_ = list(data["feature_names"])
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed fusion model: missing or bad field {exc}.") from None
        except (RecursionError, OverflowError):
            raise ValueError(
                "malformed fusion model: a field holds lists nested too deeply or a number "
                "too large."
            ) from None
        fusion.n_lists_ = len(fusion.list_names_)
        fusion.n_rounds_ = int(fusion.model_.n_rounds)
        fusion.cv_results_ = None
        n_expected = n_features_of(
            fusion.n_lists_, bool(fusion.score_features), bool(fusion.missing_features)
        )
        if fusion.model_.n_features != n_expected:
            raise ValueError(
                f"malformed fusion model: {fusion.n_lists_} lists need {n_expected} features "
                f"but the model has {fusion.model_.n_features}."
            )
        return fusion

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the fitted fusion as versioned JSON (atomic)."""
        text = json.dumps(self.to_dict(), indent=1, allow_nan=False)
        atomic_write_text(path, text + "\n")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> RankFusion:
        """Load a fusion saved by :meth:`save`.

        Raises ``FileNotFoundError`` for a missing file and ``ValueError`` for one that is
        not a fusion model.
        """
        p = Path(path)
        if not p.exists():
            raise FileNotFoundError(f"{path}: no such file")
        return cls.from_dict(read_json(p, "fusion model file", "fusion model"))

    def export(self, path: str | os.PathLike[str], format: str, **options: Any) -> None:
        """Write the fitted fusion model for another consumer (XGBoost, LightGBM, ONNX, ...).

        The exported function scores rows of :meth:`features` (one rank column per input
        list, NaN where the list did not return the document), whose names
        (:attr:`feature_names_`) are the default feature names. See
        :func:`rankboost.export.export_model` and docs/serving.md.
        """
        if not hasattr(self, "model_"):
            raise ValueError("RankFusion.export: this RankFusion is not fitted yet; call fit.")
        options.setdefault("feature_names", self.feature_names_)
        self.model_.export(path, format, **options)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={getattr(self, k)!r}" for k in _PARAMS)
        return f"RankFusion({args})"


_PARAMS = (
    "n_rounds",
    "max_rounds",
    "cv_folds",
    "positive_cumulative",
    "rank_feature",
    "score_features",
    "missing_features",
    "feedback",
    "normalize",
    "alpha",
    "learning_rate",
    "thresholds",
    "criterion",
    "default",
    "weak_ranker",
)


def _nested(
    qid: NDArray[np.str_], docid: NDArray[np.str_], scores: NDArray[np.float64]
) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for q, d, s in zip(qid.tolist(), docid.tolist(), scores.tolist(), strict=True):
        out.setdefault(q, {})[d] = s
    return out
