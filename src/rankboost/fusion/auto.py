"""Choose the fusion family by inner cross-validation over the training queries.

:class:`AutoFusion` (``rankboost fuse train --family auto``) fits every candidate family on
the training queries of each inner fold and scores the held-out queries (NDCG@10 over the
documents the runs return, as :func:`rankboost.fusion.cv_rounds`). The candidates
(:data:`CANDIDATES`) are

* ``"convex"``: the convex combination of min-max normalised scores, its weights tuned on
  the training queries over a grid of the simplex (:func:`convex_weights`); with two runs
  ``w, 1 - w`` for ``w`` in 0, 0.05, ..., 1, which includes each run alone; beyond
  :data:`~rankboost.model_selection.CONVEX_GRID_MAX_RUNS` runs by coordinate ascent, whose
  time and memory grow linearly with the runs (the grid's grow as their square);
* ``"linear"``: :class:`LinearFusion` (RankBoost over min-max scores from the 50/50 convex
  prior; its own inner cross-validation may keep the prior alone, 0 rounds);
* ``"boost"``: :class:`RankFusion` (boosted rank features);
* ``"boost_combsum"``: :class:`RankFusion` boosting from the CombSUM prior (0 rounds
  allowed, so it can stay the prior);
* ``"rrf"``: reciprocal rank fusion, ``k = 60`` (nothing learned).

**Many runs.** The weighted sums' rows are built once and sliced by each inner fold
(:func:`~rankboost.fusion._select.sum_rows`). Past
:data:`~rankboost.model_selection.AUTO_BOOSTED_MAX_RUNS` runs the boosted candidates are left
out with a :class:`FusionWarning` (``selection_["left_out_wide"]``; their inner fits grow
as rounds x rows x runs), unless no weighted sum is among the candidates.

**How a learned candidate is scored** (``linear``, ``boost``, ``boost_combsum``: each,
fitted alone, chooses its prior scale and rounds by its own inner cross-validation). In the
family choice it is fitted once per inner fold and prior scale, with ``max_rounds`` rounds,
and the held-out NDCG@10 of every round count is read off its staged scores (boosting is
greedy: the first ``t`` rounds are the ``t``-round model). Inner fold ``f`` is scored with
the (scale, rounds) that the *other* folds' mean held-out NDCG@10 prefers, so none of its
queries is evaluated in choosing them, and the chosen family is refitted on all training
queries with the (scale, rounds) best over every fold (``selection_["configs"]``). One fit
per fold and scale instead of a nested inner CV's ``cv_folds + 1``: an MQ2008-agg training
fold (471 queries, 25 runs) takes 4.1 CPU seconds instead of 12.8.

The choice is ``fallback`` unless another candidate beats it by more than ``threshold_se``
standard errors of the per-query differences over the held-out queries: an inner
cross-validation over a few dozen queries is noisy, and a family that wins it by noise loses
on the next collection. The chosen family is then refitted on all training queries.

**Runs that do not cover the same queries** (meta-search: a LETOR aggregation run, or a
search engine that answered only some queries): ``convex``, ``linear`` and ``rrf`` are
weighted sums that an engine computes from every retriever's answer to every query, and
:class:`LinearFusion` refuses such runs. :class:`AutoFusion` then leaves them out of the
choice (:data:`SAME_QUERIES`; ``selection_["left_out"]`` and a :class:`FusionWarning` say
so), and a ``fallback`` among them becomes ``"boost"`` (boosted rank features handle a list
that did not answer a query as one that returned nothing). Cut the runs to the queries every
one covers first (``--common-queries``) to keep every family in the choice.

The defaults (``fallback="linear"``, ``threshold_se=2``) were chosen on four collections
(CISI, MED, CACM, LISA; BM25 + all-MiniLM-L6-v2) and checked leave-one-collection-out
(docs/hybrid.md, ``experiments/hybrid.py --loco``): with them the choice stayed ``linear`` in
all 20 outer folds; with ``fallback="convex"`` and one standard error it switched family in
7 of 20 folds and scored 0.003 NDCG@10 below the tuned convex combination (p = 0.40). On
MQ2008-agg / MQ2007-agg it keeps ``boost`` in every fold (``experiments/metasearch_auto.py``),
so it is the default of ``rankboost fuse train`` (``--family auto``).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import model_files
from .._validation import ParamsMixin, forget_fit, keep_params, not_fitted
from ..description import Description
from ..model_selection import (
    AUTO_BOOSTED_MAX_RUNS,
    CONVEX_GRID_MAX_RUNS,
    CONVEX_GRID_STEPS,
    cross_fitted_choice,
    query_folds,
    standard_error_rule,
)
from ..params import ParameterError
from ._select import (
    LEARNED,
    SumRows,
    candidate_configs,
    fit_config,
    held_out_curves,
    linear_curves,
    per_query_ndcg,
    sum_rows,
)
from ._select import cut_runs as _cut
from ._select import rows as _rows
from .features import RunsLike, as_run_list, grades_for
from .run import Qrels, Run

__all__ = ["CANDIDATES", "SAME_QUERIES", "AutoFusion", "convex_weights"]

#: The families :class:`AutoFusion` chooses among, in order of preference on equal scores.
CANDIDATES = ("convex", "linear", "boost", "boost_combsum", "rrf")
#: The candidates that need runs of the same queries (left out when the runs differ).
SAME_QUERIES = ("convex", "linear", "rrf")
#: The boosted candidates, left out past :data:`~rankboost.model_selection.AUTO_BOOSTED_MAX_RUNS`
#: runs when a weighted sum can run (:func:`_width_rule`).
BOOSTED = ("boost", "boost_combsum")


def _simplex_grid(m: int) -> NDArray[np.float64]:
    """Weights ``w >= 0`` summing to 1 on a grid (every vertex, i.e. each run alone, included).

    The points are the compositions of ``steps`` into ``m`` parts (stars and bars:
    ``C(steps + m - 1, m - 1)`` of them, 325 for 25 runs), in the lexicographic order of
    ``itertools.product`` (which the tie rule of :func:`convex_weights` keeps); enumerating
    the ``(steps + 1) ** m`` tuples of the product and filtering them never ends for 25 runs.
    """
    steps = CONVEX_GRID_STEPS.get(m, 2)
    pts = []
    for combo in itertools.combinations_with_replacement(range(m), steps):
        c = [0] * m
        for i in combo:
            c[i] += 1
        pts.append(tuple(c))
    pts.sort()
    return np.asarray(pts, dtype=np.float64).reshape(-1, m) / steps


def convex_weights(
    N: NDArray[np.float64], y: NDArray[np.int64], qid: NDArray[Any]
) -> tuple[NDArray[np.float64], float]:
    """The convex weights of the normalised score columns ``N`` with the best mean NDCG@10.

    ``N[d, i]`` is run ``i``'s min-max normalised score of row ``d`` (0 where it did not return
    the document), ``y`` the grades, ``qid`` the query of each row. Up to
    :data:`~rankboost.model_selection.CONVEX_GRID_MAX_RUNS` runs the weights are searched on a
    grid of the simplex (step 1/20 for two runs, 1/10 for three, coarser beyond); ties go to
    the weights closest to equal. Wider, the grid's ``m (m + 1) / 2`` points would cost time
    and memory quadratic in the runs: the weights are found by coordinate ascent from the
    equal weights instead (:func:`_ascent`), linear in the runs.

    Returns
    -------
    weights : ndarray of shape (n_runs,)
    score : float
        Their mean NDCG@10 over the queries.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.fusion.auto import convex_weights
    >>> N = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    >>> w, s = convex_weights(N, np.array([1, 0, 0]), np.zeros(3))
    >>> bool(w[0] > w[1]), s
    (True, 1.0)
    """
    from ..metrics import ndcg_score

    if N.shape[1] > CONVEX_GRID_MAX_RUNS:
        w = _ascent(N, y, qid)
        return w, float(ndcg_score(np.maximum(y, 0), N @ w, qid, k=10))
    grid = _simplex_grid(N.shape[1])
    # ties: the weights nearest the uniform ones first (the 50/50 sum of two runs)
    grid = grid[np.argsort(np.abs(grid - 1.0 / N.shape[1]).sum(axis=1), kind="stable")]
    scores = np.array([ndcg_score(np.maximum(y, 0), N @ w, qid, k=10) for w in grid])
    best = int(np.argmax(scores))
    return grid[best], float(scores[best])


def _ascent(N: NDArray[np.float64], y: NDArray[np.int64], qid: NDArray[Any]) -> NDArray[np.float64]:
    """Convex weights by coordinate ascent over the simplex, from the equal weights.

    A pass visits the runs in order and tries each one's weight times every factor of
    :data:`~rankboost.model_selection.CONVEX_ASCENT_FACTORS` (the others unchanged; the
    weights are divided by their sum at the end, which leaves the ranking as it is); a change
    is kept only when it raises the mean NDCG@10 of the rows (the factors of one run are
    scored together, :func:`rankboost.model_selection.held_out_curve`); a run dropped to 0
    stays out, and the last run with a weight is never dropped. At most
    :data:`~rankboost.model_selection.CONVEX_ASCENT_PASSES` passes, fewer when one changes
    nothing: ``O(passes x runs x rows)`` time and ``O(rows x factors)`` memory beyond ``N``.
    """
    from ..model_selection import CONVEX_ASCENT_FACTORS, CONVEX_ASCENT_PASSES, held_out_curve

    qcode = np.unique(qid, return_inverse=True)[1].reshape(-1)
    head = np.r_[True, qcode[1:] != qcode[:-1]]
    if np.unique(qcode[head]).size == int(head.sum()):  # each query's rows together: no copy
        Ns, labels, qs = N, np.maximum(y, 0), np.cumsum(head) - 1
    else:
        order = np.argsort(qcode, kind="stable")  # rows grouped by query, once
        Ns, labels, qs = N[order], np.maximum(y[order], 0), qcode[order]
    factors = np.asarray(CONVEX_ASCENT_FACTORS, dtype=np.float64)
    u = np.ones(N.shape[1])
    S = Ns @ u
    best = float(held_out_curve(S[None, :], labels, qs)[0])
    for _ in range(CONVEX_ASCENT_PASSES):
        changed = False
        for i in range(N.shape[1]):
            col = Ns[:, i]
            steps = (factors - 1.0) * u[i]  # the change of u[i] under each factor
            if u[i] == 0.0 or u.sum() == u[i]:  # dropped, or the last run kept: no move
                continue
            HT = S[None, :] + steps[:, None] * col[None, :]
            scores = held_out_curve(HT, labels, qs)
            k = int(np.argmax(scores))
            if scores[k] > best:
                best, u[i], S = float(scores[k]), u[i] * factors[k], HT[k].copy()
                changed = True
        if not changed:
            break
    return u / u.sum()


def _fit_one(
    name: str, items: list[Run], qrels: Qrels, max_rounds: int = 100, cv_folds: int = 5
) -> Any:
    """Fit candidate ``name`` on ``items`` (cut to the judged training queries) and ``qrels``.

    A learned candidate chooses its prior scale and rounds by its own inner CV here (the
    classes' defaults); :meth:`AutoFusion.fit` reads them off its selection folds instead.
    """
    import warnings

    from .features import FusionWarning
    from .learned import RankFusion
    from .linear import LinearFusion, linear_features

    names = [r.name for r in items]
    if name == "rrf":
        return LinearFusion.from_weights(names, np.ones(len(items)), normalizer="rrf")
    if name == "convex":
        N, qid, docid = linear_features(items, "minmax")
        y = grades_for(_rows(qid, docid), qrels)
        w, _ = convex_weights(N, y, qid)
        return LinearFusion.from_weights(names, w)
    model: Any
    if name == "linear":
        model = LinearFusion(max_rounds=max_rounds, cv_folds=cv_folds)
    else:
        prior = "combsum" if name == "boost_combsum" else None
        model = RankFusion(prior=prior, max_rounds=max_rounds, cv_folds=cv_folds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FusionWarning)
        return model.fit(items, qrels)


def _sum_fold(
    name: str, S: SumRows, train: NDArray[np.bool_], valid: NDArray[np.bool_], qrels: Qrels
) -> dict[str, float]:
    """Held-out NDCG@10 per query of ``convex`` (weights tuned on ``train``) or ``rrf``.

    The rows of ``S`` (:func:`~rankboost.fusion._select.sum_rows`), sliced by the fold; the
    weights as ``LinearFusion.from_weights`` keeps them (float32).
    """
    from .linear import LinearFusion

    if name == "rrf" and S.rrf is not None:  # every weight 1
        return per_query_ndcg(S.qid[valid], S.docid[valid], S.rrf[valid], qrels)
    N = S.N["minmax"]
    w, _ = convex_weights(N[train], S.y[train], S.qid[train])
    w = LinearFusion.from_weights([str(i) for i in range(N.shape[1])], w).weights_
    return per_query_ndcg(S.qid[valid], S.docid[valid], N[valid] @ w, qrels)


def _same_query_rule(
    cands: list[str], fallback: str, covered: list[set[str]]
) -> tuple[list[str], str, list[str]]:
    """``(candidates, fallback, left out)``: :data:`SAME_QUERIES` out when the runs differ."""
    import warnings

    from .features import FusionWarning

    if all(qs == covered[0] for qs in covered[1:]):
        return cands, fallback, []
    left_out = [c for c in cands if c in SAME_QUERIES]
    cands = [c for c in cands if c not in SAME_QUERIES]
    if not cands:
        raise ValueError(
            f"AutoFusion.fit: the runs cover different queries, and the candidates "
            f"{left_out} are weighted sums that need runs of the same queries; add "
            "'boost' or 'boost_combsum' to the candidates, or cut the runs to the "
            "queries every one covers ('rankboost fuse train --common-queries')."
        )
    if fallback in left_out:
        fallback = "boost" if "boost" in cands else cands[0]
    warnings.warn(
        f"the runs cover different queries: {', '.join(left_out)} (weighted sums that need "
        "every run to answer every query) are left out of the family choice and the "
        f"fallback is {fallback}; cut the runs to the queries every one covers "
        "(--common-queries) to keep them.",
        FusionWarning,
        stacklevel=3,  # AutoFusion.fit's caller
    )
    return cands, fallback, left_out


def _width_rule(cands: list[str], fallback: str, n_runs: int) -> tuple[list[str], str, list[str]]:
    """``(candidates, fallback, left out)``: :data:`BOOSTED` out past a width, with a note.

    Past :data:`~rankboost.model_selection.AUTO_BOOSTED_MAX_RUNS` runs, and when a weighted
    sum is among the candidates, the boosted candidates are left out: their inner fits cost
    rounds x rows x runs each, minutes where the weighted sums take seconds. A fallback among
    them becomes ``"linear"`` (else the first candidate left).
    """
    import warnings

    from .features import FusionWarning

    wide = [c for c in cands if c in BOOSTED]
    if n_runs <= AUTO_BOOSTED_MAX_RUNS or not wide or len(wide) == len(cands):
        return cands, fallback, []
    cands = [c for c in cands if c not in BOOSTED]
    if fallback in wide:
        fallback = "linear" if "linear" in cands else cands[0]
    warnings.warn(
        f"{n_runs} runs, more than {AUTO_BOOSTED_MAX_RUNS}: {', '.join(wide)} (boosted rank "
        "features, whose inner fits grow as rounds x rows x runs) are left out of the family "
        f"choice and the fallback is {fallback}; train that family alone with --family boost "
        "(RankFusion) to fit it.",
        FusionWarning,
        stacklevel=3,  # AutoFusion.fit's caller
    )
    return cands, fallback, wide


def _inner_folds(  # noqa: PLR0917  (private; AutoFusion.fit's pieces)
    cands: list[str],
    items: list[Run],
    qrels: Qrels,
    S: SumRows,
    folds: int,
    max_rounds: int,
    steps: Any,
) -> tuple[dict[str, dict[str, float]], dict[str, list[tuple[list[str], NDArray[np.float64]]]]]:
    """Each candidate on each inner fold: held-out values per query, or curves per config.

    The weighted sums slice the rows of ``S`` by the fold's queries; the boosted candidates
    fit the runs cut to them.
    """
    uq, qcode = np.unique(S.qid, return_inverse=True)
    qcode = qcode.reshape(-1).astype(np.int64)
    fold_row = query_folds((S.y >= 1).astype(np.int64), qcode, folds)
    fold_q = np.full(uq.shape[0], -1)
    fold_q[qcode] = fold_row
    row_fold = fold_q[qcode]
    per_q: dict[str, dict[str, float]] = {c: {} for c in cands}
    curves: dict[str, list[tuple[list[str], NDArray[np.float64]]]] = {c: [] for c in cands}
    for f in range(folds):
        train, valid = (row_fold >= 0) & (row_fold != f), row_fold == f
        if any(c in BOOSTED for c in cands):  # the boosted candidates fit runs
            tr = {str(q) for q, g in zip(uq, fold_q, strict=True) if g >= 0 and g != f}
            va = {str(q) for q, g in zip(uq, fold_q, strict=True) if g == f}
            tr_items, va_items = _cut(items, tr), _cut(items, va)
        for c in cands:
            steps.start(f"fold {f + 1}/{folds}, {c}")
            if c == "linear":  # every round count's held-out NDCG, per prior scale
                curves[c].append(linear_curves(S, train, valid, max_rounds))
            elif c in LEARNED:  # one fit per prior scale: every round count's held-out NDCG
                curves[c].append(held_out_curves(c, tr_items, va_items, qrels, max_rounds))
            else:
                per_q[c].update(_sum_fold(c, S, train, valid, qrels))
            steps.done()
    return per_q, curves


class AutoFusion(ParamsMixin, model_files.Saved):
    """Pick the fusion family by inner cross-validation over the training queries.

    Parameters
    ----------
    candidates : sequence of str, default=CANDIDATES
        Families to choose among (see :mod:`rankboost.fusion.auto`); must include
        ``fallback``.
    fallback : str, default="linear"
        The family kept unless another beats it by more than ``threshold_se`` standard
        errors of the per-query differences of held-out NDCG@10. When the runs do not cover
        the same queries and ``fallback`` is one of :data:`SAME_QUERIES`, ``"boost"``.
    cv_folds : int, default=5
        Inner folds over the judged training queries (queries with a relevant and a
        non-relevant returned document); the learned candidates' prior scale and rounds
        are chosen on the same folds.
    threshold_se : float, default=2.0
        A candidate replaces ``fallback`` only when its mean held-out NDCG@10 exceeds the
        fallback's by more than ``threshold_se`` standard errors of the per-query differences.
    max_rounds : int, default=100
        The most rounds of the learned candidates (the family choice reads every count up
        to it off one fit per inner fold and prior scale). 100, not :class:`RankFusion`'s
        300: the setting measured leave-one-collection-out (docs/hybrid.md).

    Attributes
    ----------
    family_ : str
        The chosen family.
    model_ : LinearFusion or RankFusion
        The chosen family refitted on all training queries (it does the fusing).
    selection_ : dict
        ``"candidates"``: ``"mean"``, ``"diff"`` and ``"se"`` (held-out NDCG@10, its
        difference to the fallback and that difference's standard error) per candidate;
        ``"configs"``: the ``"prior_scale"`` and ``"n_rounds"`` of each learned candidate's
        refit; ``"n_queries"``, ``"cv_folds"``, ``"family"``,
        ``"fallback"`` (the one used) and ``"left_out"`` (the candidates of
        :data:`SAME_QUERIES` left out because the runs cover different queries); with
        more runs than ``AUTO_BOOSTED_MAX_RUNS``, ``"left_out_wide"`` (:data:`BOOSTED`).

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.fusion import Qrels, Run
    >>> from rankboost.fusion.auto import AutoFusion
    >>> qs = np.repeat([f"q{i}" for i in range(10)], 4)
    >>> ds = np.tile(["a", "b", "c", "d"], 10)
    >>> good = Run(qs, ds, np.tile([1, 2, 3, 4], 10), np.tile([4.0, 3, 2, 1], 10), name="good")
    >>> bad = Run(qs, ds, np.tile([4, 3, 2, 1], 10), np.tile([1.0, 2, 3, 4], 10), name="bad")
    >>> auto = AutoFusion(candidates=("convex", "rrf"), fallback="convex").fit([good, bad],
    ...                   Qrels(qs, ds, np.tile([1, 1, 0, 0], 10)))
    >>> auto.family_, auto.model_.weights_.round(2).tolist()  # ties: nearest to 50/50
    ('convex', [0.55, 0.45])
    """

    _FORMAT = model_files.AUTO.name
    _PARAMS = ("candidates", "fallback", "cv_folds", "max_rounds", "threshold_se")

    candidates: tuple[str, ...] | list[str]
    fallback: str
    cv_folds: int
    max_rounds: int
    threshold_se: float

    def __init__(
        self,
        *,
        candidates: tuple[str, ...] | list[str] = CANDIDATES,
        fallback: str = "linear",
        cv_folds: int = 5,
        max_rounds: int = 100,
        threshold_se: float = 2.0,
    ) -> None:
        keep_params(self, locals())

    def _check(self) -> list[str]:
        cands = list(self.candidates) if not isinstance(self.candidates, str) else []
        bad = [c for c in cands if c not in CANDIDATES]
        if not cands or bad:
            raise ParameterError(
                f"The 'candidates' parameter of AutoFusion must be a non-empty list of "
                f"{CANDIDATES}; got {self.candidates!r} instead."
            )
        if self.fallback not in cands:
            raise ParameterError(
                f"The 'fallback' parameter of AutoFusion must be one of the candidates "
                f"{cands}; got {self.fallback!r} instead."
            )
        t = self.threshold_se
        if (
            isinstance(t, bool)
            or not isinstance(t, (int, float))
            or not (np.isfinite(t) and t >= 0)
        ):
            raise ParameterError(
                f"The 'threshold_se' parameter of AutoFusion must be a finite float >= 0; got "
                f"{t!r} instead."
            )
        for name, lo in (("cv_folds", 2), ("max_rounds", 1)):
            k = getattr(self, name)
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < lo:
                raise ParameterError(
                    f"The {name!r} parameter of AutoFusion must be an int >= {lo}; got {k!r} "
                    "instead."
                )
        return list(dict.fromkeys(cands))

    def fit(
        self, runs: RunsLike, qrels: Qrels | Mapping[str, Any], *, verbose: bool = False
    ) -> AutoFusion:
        """Choose the family on inner folds of the training queries, then refit it on all.

        ``verbose=True`` shows a progress bar over the candidate fits (tqdm).
        """
        from .. import _compat
        from .features import coverage_warnings

        forget_fit(self)
        cands = self._check()
        items = as_run_list(runs, "AutoFusion.fit")
        if isinstance(qrels, Mapping):
            qrels = Qrels.from_dict(qrels)
        if not isinstance(qrels, Qrels):
            raise TypeError(f"AutoFusion.fit: qrels must be a Qrels; got {type(qrels).__name__}.")
        covered = [set(r.queries) for r in items]
        cands, fallback, left_out = _same_query_rule(cands, self.fallback, covered)
        cands, fallback, left_wide = _width_rule(cands, fallback, len(items))
        coverage_warnings(items, qrels)
        judged_q = set().union(*covered) & set(qrels.queries)
        if not judged_q:
            raise ValueError(
                "AutoFusion.fit: no query of the runs is judged in the qrels; check that the "
                "query ids of the run files and the qrels file match."
            )
        items = _cut(items, judged_q)
        norms = tuple(n for n, c in (("minmax", "convex"), ("minmax", "linear"), ("rrf", "rrf"))
                      if c in cands)  # fmt: skip
        S = sum_rows(items, qrels, tuple(dict.fromkeys(norms)))  # every fold slices its rows
        folds, max_rounds = int(self.cv_folds), int(self.max_rounds)
        steps = _compat.Steps(folds * len(cands) + 1, disable=not verbose, desc="family choice")
        per_q, curves = _inner_folds(cands, items, qrels, S, folds, max_rounds, steps)
        chosen: dict[str, dict[str, Any]] = {}
        for c in (c for c in cands if c in LEARNED):  # each fold scored by the others' choice
            values, k = cross_fitted_choice(curves[c])
            per_q[c].update(values)
            scale, rounds = candidate_configs(c, max_rounds)[k]
            chosen[c] = {"prior_scale": scale, "n_rounds": rounds}
        table, family = standard_error_rule(per_q, cands, fallback, float(self.threshold_se))
        self.family_ = family
        self.selection_: dict[str, Any] = {
            "family": family,
            "rule": f"{self.threshold_se} standard errors over the fallback",
            "fallback": fallback,
            "left_out": left_out,
            **({"left_out_wide": left_wide} if left_wide else {}),
            "cv_folds": folds,
            "n_queries": len(per_q[fallback]),
            "candidates": table,
            "configs": chosen,
            "params": {
                k: (list(v) if isinstance(v, tuple) else v) for k, v in self.get_params().items()
            },  # fmt: skip
        }
        steps.start(f"refit {family} on all queries")
        if family == "linear":  # fit_config's LinearFusion, on the rows built once
            from .linear import LinearFusion

            cfg = chosen[family]
            self.model_ = LinearFusion(
                n_rounds=cfg["n_rounds"], prior_scale=cfg["prior_scale"], cv_folds=folds,
                max_rounds=max_rounds,
            )._fit_rows(S.N["minmax"], S.y, S.qid, np.ones(S.y.shape[0], dtype=bool),
                        [r.name for r in items])  # fmt: skip
        elif family in LEARNED:
            cfg = chosen[family]
            self.model_ = fit_config(
                family, items, qrels, cfg["prior_scale"], cfg["n_rounds"], folds, max_rounds
            )
        elif family == "convex":  # the rows of every query, as _fit_one would build them
            from .linear import LinearFusion

            w, _ = convex_weights(S.N["minmax"], S.y, S.qid)
            self.model_ = LinearFusion.from_weights([r.name for r in items], w)
        else:
            self.model_ = _fit_one(family, items, qrels, max_rounds, folds)
        steps.close()
        self.list_names_ = list(self.model_.list_names_)
        return self

    def _fitted(self, owner: str) -> Any:
        if not hasattr(self, "model_"):
            raise not_fitted(owner, self)
        return self.model_

    def fuse(self, runs: RunsLike, *, depth: int | None = None, match: str = "name") -> Run:
        """Fuse the lists with the chosen family (see its ``fuse``)."""
        return self._fitted("AutoFusion.fuse").fuse(runs, depth=depth, match=match)

    def to_dict(self) -> dict[str, Any]:
        """The chosen model's dict, with the selection table under ``"selection"``."""
        out = dict(self._fitted("AutoFusion.to_dict").to_dict())
        out["selection"] = self.selection_
        return out

    @classmethod
    def from_dict(cls, data: Any) -> AutoFusion:
        """Rebuild from :meth:`to_dict` output (a linear or boosted fusion model)."""
        from .learned import RankFusion
        from .linear import FORMAT_NAME, LinearFusion

        if not isinstance(data, dict) or not isinstance(data.get("selection"), dict):
            raise ValueError('not an AutoFusion model: the JSON has no "selection" object.')
        sel = data["selection"]
        kind = model_files.kind_of(data)
        model: Any
        if kind is not None and kind.format == FORMAT_NAME:
            model = LinearFusion.from_dict(data)
        else:
            model = RankFusion.from_dict(data)
        family = sel.get("family")
        if family not in CANDIDATES:
            raise ValueError(f"malformed AutoFusion model: family {family!r} is not one of "
                             f"{CANDIDATES}.")  # fmt: skip
        auto = cls(fallback=str(sel.get("fallback", "linear")))
        if isinstance(sel.get("params"), dict):
            auto.set_params(**{k: v for k, v in sel["params"].items() if k in auto._PARAMS})
        auto.family_, auto.selection_, auto.model_ = family, sel, model
        auto.list_names_ = list(model.list_names_)
        return auto

    def describe(self, path: str | os.PathLike[str] = "MODEL") -> Description:
        """How it scores and where it can be served, for ``path`` (:mod:`rankboost.description`)."""
        from ._describe import describe_auto

        return describe_auto(self, str(path))

    def __repr__(self) -> str:
        return "AutoFusion(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self._PARAMS) + ")"
