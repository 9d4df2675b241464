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

import os
from collections.abc import Mapping
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from .. import model_files
from .._validation import ParamsMixin, forget_fit, not_fitted
from ..description import Description
from ..params import (
    TRAIN_PARAMS,
    ParameterError,
    TrainParams,
    check_param,
    make_params,
    params_of,
)
from ._match import MATCH_MODES, match_by_name
from ._persist import FORMAT_NAME, FORMAT_VERSION, FUSION_PARAMS, read_fusion_dict
from .cv import cv_rounds
from .features import (
    RANK_FEATURES,
    FusionFeatures,
    FusionWarning,
    RunsLike,
    as_run_list,
    coverage_warnings,
    fused_run,
    fusion_features,
    grades_for,
    score_norms_of,
)
from .run import Qrels, Run

__all__ = [
    "FusionFeatures",
    "FusionWarning",
    "RankFusion",
    "cv_rounds",
    "fusion_features",
    "grades_for",
]


class RankFusion(ParamsMixin):
    """Learn to combine ranked lists with RankBoost (meta-search).

    The boost family: ``rankboost fuse train --family boost``. The default of ``fuse
    train`` (``--family auto``) is :class:`~rankboost.fusion.AutoFusion`, which chooses
    among this family, :class:`~rankboost.fusion.LinearFusion` and the others by inner
    cross-validation: ``AutoFusion()`` is the model ``fuse train`` writes without options.

    Parameters
    ----------
    n_rounds : int or "auto", default="auto"
        Boosting rounds (0 with a ``prior``: the prior's ranking, SPEC 7.2). ``"auto"``:
        chosen by an inner ``cv_folds``-fold cross-validation over the training queries
        (the queries are split, never a query's documents; :mod:`rankboost.model_selection`):
        one model of ``max_rounds`` rounds per inner fold, NDCG@10 (:func:`rankboost.metrics.
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
    score_features : bool or str, default=False
        Also use each list's per-query normalised scores: True = min-max; a string joins
        normalisations of ``("minmax", "zscore", "rrf")`` by ``+`` (see
        :func:`fusion_features`).
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
    alpha : {"r", "exact", "line_search", "rbplus"}, default="r"
        Step-size rule of :func:`rankboost.train`.
    learning_rate : float, default=1.0
        Shrinkage ``nu`` in (0, 1]: ``alpha_t = nu`` times the rule's alpha (1 = the paper).
    thresholds : int, "all", "midpoints" or ("uniform", B), default="all"
        Candidate thresholds per feature; ``"all"`` tries "top ``k`` of list ``i``" for
        every rank ``k`` seen in training (:mod:`rankboost.binning` for the others).
    criterion : {"abs_r", "r", "exact_z"}, default="abs_r"
        WeakLearn's objective: the largest ``|r|`` (the paper), the largest ``r > 0``, or the
        smallest exact ``Z`` (:func:`rankboost.train`).
    default : {"learned", 0, 1}, default="learned"
        ``q_def`` where a list does not return the document: picked by WeakLearn, or fixed
        (``0``: "absent = worst").
    weak_ranker : {"threshold", "feature", "both"}, default="threshold"
        Weak rankers of :func:`rankboost.train`.
    prior : {None, "combsum", "rrf"}, default=None
        Boost from a prior ranking function ``c F_0`` (:mod:`rankboost.fusion.prior`):
        CombSUM of min-max scores, or RRF; the fused score is ``c F_0 + H``.
    prior_scale : float or "auto", default="auto"
        ``c``; ``"auto"`` chooses it among
        :data:`rankboost.model_selection.FUSION_PRIOR_SCALES` with the rounds (0 allowed) by
        the inner cross-validation (``n_rounds="auto"`` only).

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

    _PARAMS = FUSION_PARAMS

    def __init__(
        self,
        *,
        n_rounds: int | str = "auto",
        max_rounds: int = 300,
        cv_folds: int = 5,
        positive_cumulative: bool = True,
        rank_feature: str = "neg_rank",
        score_features: bool | str = False,
        missing_features: bool = True,
        feedback: str = "layered",
        normalize: str = "query",
        alpha: str = "r",
        learning_rate: float = 1.0,
        thresholds: int | str | tuple[str, int] = "all",
        criterion: str = "abs_r",
        default: str | int = "learned",
        weak_ranker: str = "threshold",
        prior: str | None = None,
        prior_scale: float | str = "auto",
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
        self.prior = prior
        self.prior_scale = prior_scale

    def features(self, runs: RunsLike) -> FusionFeatures:
        """The feature matrix this fusion uses for ``runs`` (see :func:`fusion_features`)."""
        return fusion_features(
            runs,
            rank_feature=self.rank_feature,
            score_features=self.score_features,
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
        forget_fit(self)  # a fit that raises leaves an unfitted RankFusion, not a half state
        items = as_run_list(runs, "RankFusion.fit")
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
        coverage_warnings(items, qrels)
        feats = self.features(items)
        y = grades_for(feats, qrels)
        judged = np.isin(feats.qid, np.asarray(qrels.queries))
        if not judged.any():
            raise ValueError(
                "RankFusion.fit: no query of the runs is judged in the qrels; check that the "
                "query ids of the run files and the qrels file match."
            )
        X, yj, qj = feats.X[judged], y[judged], feats.qid[judged]
        self.cv_results_: dict[str, Any] | None = None
        self.prior_scale_ = 0.0
        from .. import _compat

        verbose = bool(train_kwargs.get("verbose", False))
        folds_bar = _compat.progress_bar(  # the inner folds of n_rounds="auto", then the fit's
            total=int(self.cv_folds),
            disable=not verbose or self.n_rounds != "auto",
            desc="inner CV folds (--rounds auto)",
            stacklevel=2,
        )
        try:
            self._fit_judged(items, feats, judged, X, yj, qj, params, train_kwargs, folds_bar)
        finally:
            folds_bar.close()
        return self

    def _fit_judged(  # type: ignore[no-untyped-def]  # noqa: PLR0917  fit's validated pieces
        self, items, feats, judged, X, yj, qj, params, train_kwargs, folds_bar
    ) -> None:
        # NOTE: imported here so that importing this module (the ``fuse train`` options read
        # RankFusion's signature) does not import numba: ``rankboost --help`` stays light.
        from ..engine import train_checked

        if self.prior is not None:
            from .prior import fit_prior

            fit = fit_prior(self, items, feats, judged, X, yj, qj, params, train_kwargs, folds_bar)
            self.model_, self.n_rounds_, self.prior_scale_, self.cv_results_ = fit
            self.list_names_ = [r.name for r in items]
            self.feature_names_ = list(feats.feature_names)
            self.n_lists_ = len(items)
            return
        feedback = self._feedback(yj, qj)
        if self.n_rounds == "auto":
            self.cv_results_ = cv_rounds(
                X,
                yj,
                qj,
                params,
                self._feedback,
                cv_folds=int(self.cv_folds),
                pair_labels=(yj >= 1) if self.feedback == "bipartite" else None,
                progress=folds_bar,
            )
            folds_bar.close()  # before the final model's own bar
            params = params.replace(n_rounds=int(self.cv_results_["best_n_rounds"]))
        self.model_ = train_checked(
            X,
            feedback,
            params,
            callbacks=train_kwargs.get("callbacks"),
            feature_names=feats.feature_names,
            verbose=bool(train_kwargs.get("verbose", False)),
            stacklevel=4,
        )
        self.n_rounds_ = int(self.model_.n_rounds)
        self.list_names_ = [r.name for r in items]
        self.feature_names_ = list(feats.feature_names)
        self.n_lists_ = len(items)

    def _params(self) -> TrainParams:
        """The training parameters, validated (the one definition of rankboost.params).

        With ``n_rounds="auto"`` the rounds are ``max_rounds`` (the inner cross-validation's
        longest models); :meth:`fit` then replaces them by the chosen count. With a prior
        and ``n_rounds=0`` they are 1, checked as any round's parameters: no round is run.
        """
        check_param("normalize", self.normalize, "RankFusion")
        check_param("feedback", self.feedback, "RankFusion")
        auto = isinstance(self.n_rounds, str) and self.n_rounds == "auto"
        prior_alone = self.prior is not None and self.n_rounds == 0  # SPEC 7.2
        if auto or (prior_alone and not isinstance(self.n_rounds, bool)):
            if auto:
                check_param("n_rounds", self.max_rounds, "RankFusion", alias="max_rounds")
            values = {q.name: getattr(self, q.name) for q in TRAIN_PARAMS if hasattr(self, q.name)}
            values["n_rounds"] = self.max_rounds if auto else 1
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
        try:
            score_norms_of(self.score_features)
        except ValueError as exc:
            raise ParameterError(f"The 'score_features' parameter of RankFusion: {exc}") from None
        for name in ("missing_features",):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ParameterError(
                    f"The {name!r} parameter of RankFusion must be True or False; got "
                    f"{getattr(self, name)!r} instead."
                )
        if self.prior not in (None, "combsum", "rrf"):
            raise ParameterError(
                "The 'prior' parameter of RankFusion must be None, 'combsum' or 'rrf'; got "
                f"{self.prior!r} instead."
            )
        c = self.prior_scale
        if not (c == "auto" or (isinstance(c, (int, float)) and not isinstance(c, bool)
                                and np.isfinite(c) and c >= 0)):  # fmt: skip
            raise ParameterError(
                "The 'prior_scale' parameter of RankFusion must be 'auto' or a finite float "
                f">= 0; got {c!r} instead."
            )
        if self.rank_feature not in RANK_FEATURES:
            raise ParameterError(
                f"The 'rank_feature' parameter of RankFusion must be one of {RANK_FEATURES}; "
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
            raise not_fitted(owner, self)
        if match not in MATCH_MODES:
            raise ValueError(f"{owner}: match must be one of {MATCH_MODES}; got {match!r}.")
        items = as_run_list(runs, owner)
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
        if self.prior is None:
            return feats, self.model_.decision_function(feats.X, n_rounds=n_rounds)
        from .prior import prior_scores

        t = self.n_rounds_ if n_rounds is None else min(int(n_rounds), self.n_rounds_)
        H = self.model_.decision_function(feats.X, n_rounds=t) if t > 0 else 0.0
        return feats, self.prior_scale_ * prior_scores(items, feats, self.prior) + H

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
        return fused_run(feats.qid, feats.docid, scores, depth)

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: parameters, list names, feature spec and the RankBoost model."""
        if not hasattr(self, "model_"):
            raise ValueError("RankFusion.to_dict: this RankFusion is not fitted yet.")
        out = {
            "format": FORMAT_NAME,
            # NOTE: a model with a prior is version 2, which earlier releases refuse (they
            # would drop the prior and rank by H alone); every other model stays version 1
            "version": 1 if self.prior is None else FORMAT_VERSION,
            "params": self.get_params(),
            "list_names": self.list_names_,
            "feature_names": self.feature_names_,
            "model": self.model_.to_dict(),
        }
        if self.prior is not None:
            out["prior_scale"] = self.prior_scale_
            out["n_rounds"] = self.n_rounds_
        return out

    @classmethod
    def from_dict(cls, data: Any) -> RankFusion:
        """Rebuild a fitted fusion from :meth:`to_dict` output."""
        read = read_fusion_dict(cls, data)
        fusion = cls(**read.params)
        fusion.model_, fusion.n_rounds_ = read.model, read.n_rounds
        fusion.prior_scale_, fusion.cv_results_ = read.prior_scale, None
        fusion.list_names_, fusion.feature_names_ = read.list_names, read.feature_names
        fusion.n_lists_ = len(read.list_names)
        return fusion

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the fitted fusion as versioned JSON, atomically (:func:`.model_files.save`)."""
        model_files.save(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> RankFusion:
        """Load a fusion saved by :meth:`save`.

        Raises ``FileNotFoundError`` for a missing file and ``ValueError`` for one that is
        not a fusion model (a model of another kind: the message says what reads it).
        """
        return cast(RankFusion, model_files.load(path, expect=FORMAT_NAME))

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

    def describe(self, path: str | os.PathLike[str] = "MODEL") -> Description:
        """How it scores and where it can be served, for ``path`` (:mod:`rankboost.description`)."""
        from ._describe import describe_boost

        return describe_boost(self, str(path))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={getattr(self, k)!r}" for k in FUSION_PARAMS)
        return f"RankFusion({args})"
