"""The fusion models' descriptions of themselves (``describe``, ``rankboost info``).

:func:`describe_linear`, :func:`describe_boost` and :func:`describe_auto` build the
:class:`rankboost.description.Description` of a fitted
:class:`~rankboost.fusion.linear.LinearFusion`, :class:`~rankboost.fusion.RankFusion` and
:class:`~rankboost.fusion.auto.AutoFusion`. A linear model's formula states its normaliser's
definition from :data:`rankboost.fusion.features.NORMALIZERS` and its targets are the engines
of :data:`rankboost.fusion.engines.ENGINES` that serve that normaliser (with the exact
``fuse export`` command); a boosted model's targets are the ``rankboost export`` formats,
and its advice says what to train for an engine; an auto model adds its selection table to
the chosen model's description.

Feature numbers are 1-based, as in LETOR and the rest of ``rankboost info``; the 0-based
column (``model_.step_functions()`` keys, ``X``) is the number minus 1.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from .._validation import not_fitted
from ..description import Description, Table, Target

__all__ = ["describe_auto", "describe_boost", "describe_linear"]

#: What to do with a model no engine's hybrid query computes.
_TRAIN_LINEAR = (
    "no search engine's hybrid query computes it (steps on the runs' ranks): for an engine "
    "('rankboost fuse export'), train 'rankboost fuse train --family linear' on the same runs"
)


def _check_fitted(model: Any, attr: str) -> None:
    if not hasattr(model, attr):
        raise not_fitted(f"{type(model).__name__}.describe", model)


def describe_linear(lin: Any, path: str) -> Description:
    """A fitted :class:`LinearFusion`: weights, normaliser, and the engines that serve it."""
    _check_fitted(lin, "weights_")
    from .engines import ENGINES, serving
    from .features import NORMALIZERS

    w = [float(x) for x in lin.weights_]
    total = sum(w) or 1.0
    definition = NORMALIZERS[lin.normalizer].describe(lin.rank_constant)
    targets = []
    for engine, how, note in serving(lin.normalizer, lin.weights_):
        option = ""
        if how == "approximate":
            option = "--" + engine.normalizers[lin.normalizer].option.replace("_", "-")
        given = f"{engine.asked()} {option}".strip()
        command = f"rankboost fuse export {path} --engine {engine.name} -o OUT {given}"
        targets.append(
            Target(
                engine.name, "engine", how, note, "" if how == "no" else command.rstrip(), option
            )
        )
    advice = ""
    if all(t.how == "no" for t in targets):
        served = [
            f"{' or '.join(n for n, s in e.normalizers.items() if _always(s))} ({e.name})"
            for e in ENGINES.values()
        ]
        advice = (
            f"no engine serves a linear model of normalizer {lin.normalizer!r}: train "
            f"'rankboost fuse train --family linear --normalizer N' with N {', '.join(served)}"
        )
    formula = (
        f"fused score = sum over lists of weight x the list's {definition}; 0 where the list "
        "did not return the document"
    )
    return Description(
        kind="rankboost-fusion-linear",
        family="linear",
        formula=formula,
        path=path,
        title="linear fusion model",
        facts=(
            f"lists: {lin.n_lists_}, normalizer: {lin.normalizer}, prior scale: "
            f"{lin.prior_scale_:g}, rounds: {lin.n_rounds_}",
        ),
        params=lin.get_params(),
        notes=(formula,),
        normalizer=lin.normalizer,
        normalizer_definition=definition,
        tables=(
            Table(
                "",
                ("list", "name", "weight", "share"),
                tuple((j + 1, lin.list_names_[j], w[j], w[j] / total) for j in range(len(w))),
                top_by=2,
            ),
        ),
        targets=tuple(targets),
        advice=advice,
    )


def _always(support: Any) -> bool:
    """An engine's support that is exact for every model of that normaliser."""
    return bool(support.how == "exact" and support.when is None)


def _prior_text(fusion: Any) -> str:
    """``c x F_0 + `` and ``F_0``'s definition for a model boosted from a prior ("" if none)."""
    from .features import NORMALIZERS, RRF_K

    if fusion.prior is None or not fusion.prior_scale_ > 0:
        return ""
    if fusion.prior == "combsum":
        f0 = f"the sum over lists of the list's {NORMALIZERS['minmax'].describe()}"
    else:
        f0 = f"the sum over lists of {RRF_K + 1} x the list's {NORMALIZERS['rrf'].describe()}"
    return f"{fusion.prior_scale_:g} x F_0 + sum of H, F_0 = {f0}"


def describe_boost(fusion: Any, path: str) -> Description:
    """A fitted :class:`RankFusion`: lists, importances, step functions, export formats.

    The fused score is ``sum_i H_i(feature_i)`` (plus ``c F_0`` for a model boosted from a
    prior), each ``H_i`` a learned step function (:meth:`RankBoostModel.step_functions`).
    """
    import numpy as np

    from .._conventions import FEATURE_NUMBERING

    _check_fitted(fusion, "model_")
    model = fusion.model_
    names = fusion.feature_names_
    n_lists = fusion.n_lists_
    best = "-" if model.best_iteration is None else str(model.best_iteration)
    # rank features first, then score features, then presence features; "n_in" (the number
    # of lists that returned the document) belongs to no single list: -1
    owner = [col % n_lists if col < n_lists * (len(names) // n_lists) else -1
             for col in range(model.n_features)]  # fmt: skip
    ids: list[list[int]] = [[] for _ in range(n_lists)]
    for col, j in enumerate(owner):
        if j >= 0:
            ids[j].append(col + 1)
    shared = [col for col, j in enumerate(owner) if j < 0]
    rows: list[tuple[Any, ...]] = [
        (j + 1, fusion.list_names_[j], " ".join(map(str, ids[j]))) for j in range(n_lists)
    ]
    rows += [("-", names[col], str(col + 1)) for col in shared]
    tables = [Table("lists (feature ids of each list)", ("list", "name", "features"), tuple(rows))]
    prior = _prior_text(fusion)
    formula = f"fused score = {prior or 'sum of H'}"
    if model.n_rounds:
        gain = model.feature_importances("gain")
        split = np.bincount(model.rounds.feature, minlength=model.n_features)
        n_rows = n_lists + len(shared)
        per_list = np.zeros(n_rows)
        rounds = np.zeros(n_rows, dtype=np.int64)
        for col, j in enumerate(owner):
            row = j if j >= 0 else n_lists + shared.index(col)
            per_list[row] += gain[col]
            rounds[row] += split[col]
        labels = [(str(j + 1), fusion.list_names_[j]) for j in range(n_lists)]
        labels += [("-", names[col]) for col in shared]
        order = [int(j) for j in np.argsort(-per_list, kind="stable")]
        steps: list[tuple[Any, ...]] = []
        for col, step in model.step_functions().items():
            neg_rank = col < n_lists and fusion.rank_feature == "neg_rank"
            steps += _interval_rows(col + 1, names[col], step, neg_rank)
        tables += [
            Table(
                "importances per list (gain = share of -sum ln Z_t; rounds = rounds on the list)",
                ("list", "name", "gain", "rounds"),
                tuple((*labels[j], float(per_list[j]), int(rounds[j])) for j in order),
                top_by=2,
            ),
            Table(
                "learned step function of each used feature: H(x) on each interval of x "
                f"({formula}; x = the {fusion.rank_feature} value of the rank)",
                ("feature", "name", "x in", "rank", "H(x)"),
                tuple(steps),
            ),
        ]
    return Description(
        kind="rankboost-fusion",
        family="boost",
        formula=f"{formula}, H = the sum over lists of the learned step function of the "
        f"list's {fusion.rank_feature} value",
        path=path,
        title="fusion model",
        facts=(
            f"lists: {n_lists}, features: {model.n_features}, rounds: {model.n_rounds} "
            f"(best iteration: {best})",
        ),
        params=fusion.get_params(),
        notes=(FEATURE_NUMBERING,),
        tables=tuple(tables),
        targets=model.describe(path).targets,  # the rankboost export formats
        advice=_TRAIN_LINEAR,
    )


def _ranks(low: float, high: float) -> str:
    """The integer ranks r with ``low < -r <= high`` (the ``neg_rank`` feature), as text."""
    first = 1 if math.isinf(high) else max(1, math.ceil(-high))
    if math.isinf(low):
        return f">= {first}"
    last = math.ceil(-low) - 1
    return f"{first}" if first == last else f"{first}-{last}" if first < last else "-"


def _interval_rows(feature: int, name: str, step: Any, neg_rank: bool) -> list[tuple[Any, ...]]:
    breaks = [-math.inf, *step.breaks.tolist(), math.inf]
    rows: list[tuple[Any, ...]] = []
    for k, value in enumerate(step.values.tolist()):
        low, high = breaks[k], breaks[k + 1]
        rank = _ranks(low, high) if neg_rank else ""
        rows.append((feature, name, f"({low:g}, {high:g}]", rank, float(value)))
    rows.append((feature, name, "missing", "not returned", float(step.missing)))
    return rows


def describe_auto(auto: Any, path: str) -> Description:
    """A fitted :class:`AutoFusion`: the family it chose, how each scored, the chosen model.

    Its targets and advice are the chosen model's. A selection without its table of
    candidates (a damaged file) describes the chosen model alone.
    """
    _check_fitted(auto, "model_")
    chosen = auto.model_.describe(path)
    sel = auto.selection_
    if not isinstance(sel, dict) or not isinstance(sel.get("candidates"), dict):
        return chosen
    family, fallback = sel.get("family"), sel.get("fallback")
    rows = tuple(
        (name, v.get("mean"), v.get("diff"), v.get("se"), "chosen" if name == family else "")
        for name, v in sel["candidates"].items()
        if isinstance(v, dict)
    )
    facts = [
        f"--family auto chose {family}: {fallback} is kept unless another family's held-out "
        f"NDCG@10 beats it by more than {sel.get('rule', '?')} ({sel.get('cv_folds')} inner "
        f"folds, {sel.get('n_queries')} queries)"
    ]
    if sel.get("left_out"):
        facts.append(f"left out (the runs cover different queries): {', '.join(sel['left_out'])}")
    if sel.get("left_out_wide"):
        facts.append(
            f"left out (more runs than the boosted families are scored on; --family boost "
            f"trains one): {', '.join(sel['left_out_wide'])}"
        )
    from .._conventions import INNER_FOLDS, INNER_FOLDS_NOTE, format_conventions

    conventions = format_conventions(INNER_FOLDS)
    facts.append(f"held-out NDCG@10: the inner folds' {conventions}; {INNER_FOLDS_NOTE}")
    headers = ("family", "held-out NDCG@10", f"- {fallback}", "SE", "")
    advice = chosen.advice
    no = [t.name for t in chosen.targets if t.kind == "engine" and t.how == "no"]
    if not any(t.kind == "engine" for t in chosen.targets):  # a boosted family
        from .engines import ENGINES

        advice = (
            f"--family auto chose {family}, which no search engine's hybrid query computes: "
            f"for an engine, train one it serves with 'rankboost fuse train --engine ENGINE' "
            f"on the same runs (ENGINE: {', '.join(ENGINES)})"
        )
    elif no:
        advice = "; ".join(
            filter(None, [advice, f"for {' or '.join(no)}, train one it serves with "
                                  "'rankboost fuse train --engine ENGINE' on the same runs"])
        )  # fmt: skip
    chosen = replace(chosen, advice=advice)  # printed under the chosen model's targets
    return Description(
        kind=chosen.kind,
        family="auto",
        formula=chosen.formula,
        path=path,
        title="auto fusion model",
        facts=tuple(facts),
        normalizer=chosen.normalizer,
        normalizer_definition=chosen.normalizer_definition,
        tables=(Table("", headers, rows),),
        targets=chosen.targets,
        advice=advice,
        selection=sel,
        chosen=chosen,
    )
