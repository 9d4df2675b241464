"""``rankboost info`` for a fusion model file of either family.

A linear one (``"format": "rankboost-fusion-linear"``): its learned weights
(:func:`linear_info_lines`). A boost one (``"format": "rankboost-fusion"``): the lines below.

It prints the input lists, the importance of each list (the gain shares of its features) and
each list's learned step function ``H_i`` (:meth:`RankBoostModel.step_functions`): the
fused score is ``sum_i H_i(feature_i)``. Feature numbers are 1-based, as in LETOR and the
rest of ``rankboost info``; the 0-based column (``model_.step_functions()`` keys, ``X``) is
the number minus 1.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ._persist import FORMAT_NAME

#: ``LinearFusion``'s file format (rankboost.fusion.linear.FORMAT_NAME; not imported here,
#: so that reading a file's format stays light).
LINEAR_FORMAT = "rankboost-fusion-linear"

__all__ = [
    "auto_selection_lines",
    "file_format",
    "fusion_info_lines",
    "is_fusion_file",
    "linear_info_lines",
]


def file_format(path: str) -> str | None:
    """The ``"format"`` field of the JSON file ``path`` (None: unreadable, or none there)."""
    try:
        with Path(path).open(encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError, RecursionError):
        return None  # the model reader reports the problem
    kind = data.get("format") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) else None


def is_fusion_file(path: str) -> bool:
    """``True`` if ``path`` is a JSON fusion model of either family.

    That is ``"format": "rankboost-fusion"`` or ``"rankboost-fusion-linear"``.
    """
    return file_format(path) in (FORMAT_NAME, LINEAR_FORMAT)


def linear_info_lines(path: str, table: Any, top: int) -> list[str]:
    """The lines ``rankboost info`` prints for a linear fusion model: its learned weights.

    ``top`` limits the rows (the largest weights first; 0 = every list, in the model's order).
    """
    from .linear import LinearFusion

    lin = LinearFusion.load(path)
    w = [float(x) for x in lin.weights_]
    total = sum(w) or 1.0
    norm = (
        "min-max normalised score in the query (1 when all are equal)"
        if lin.normalizer == "minmax"
        else f"1 / ({lin.rank_constant} + rank)"
    )
    params = " ".join(f"{k}={v}" for k, v in lin.get_params().items())
    out = [
        f"linear fusion model: {path}",
        f"lists: {lin.n_lists_}, normalizer: {lin.normalizer}, prior scale: "
        f"{lin.prior_scale_:g}, rounds: {lin.n_rounds_}",
        f"params: {params}",
        f"fused score = sum over lists of weight x the list's {norm}; 0 where the list did not "
        "return the document",
        "",
    ]
    shown = list(range(lin.n_lists_))
    if top:
        shown = sorted(shown, key=lambda j: -w[j])[:top]
    rows = [[j + 1, lin.list_names_[j], w[j], w[j] / total] for j in shown]
    out.append(table(["list", "name", "weight", "share"], rows))
    out += ["", f"export it: rankboost fuse export {path} --engine elasticsearch -o OUT"]
    return out


def _ranks(low: float, high: float) -> str:
    """The integer ranks r with ``low < -r <= high`` (the ``neg_rank`` feature), as text."""
    first = 1 if math.isinf(high) else max(1, math.ceil(-high))
    if math.isinf(low):
        return f">= {first}"
    last = math.ceil(-low) - 1
    return f"{first}" if first == last else f"{first}-{last}" if first < last else "-"


def _interval_rows(feature: int, name: str, step: Any, neg_rank: bool) -> list[list[Any]]:
    breaks = [-math.inf, *step.breaks.tolist(), math.inf]
    rows: list[list[Any]] = []
    for k, value in enumerate(step.values.tolist()):
        low, high = breaks[k], breaks[k + 1]
        rank = _ranks(low, high) if neg_rank else ""
        rows.append([feature, name, f"({low:g}, {high:g}]", rank, float(value)])
    rows.append([feature, name, "missing", "not returned", float(step.missing)])
    return rows


def fusion_info_lines(path: str, table: Any, top: int) -> list[str]:
    """The lines ``rankboost info`` prints for the fusion model at ``path``.

    ``table(headers, rows)`` formats a table; ``top`` limits the importance rows (0 = all).
    A model of ``fuse train --family auto`` starts with the family it chose and how every
    candidate scored (:func:`auto_selection_lines`).
    """
    head = auto_selection_lines(path, table)
    if file_format(path) == LINEAR_FORMAT:
        return head + linear_info_lines(path, table, top)
    return head + _boost_info_lines(path, table, top)


def auto_selection_lines(path: str, table: Any) -> list[str]:
    """The family ``fuse train --family auto`` chose and its selection table (else no line)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return []  # the model reader reports the problem
    sel = data.get("selection") if isinstance(data, dict) else None
    if not isinstance(sel, dict) or not isinstance(sel.get("candidates"), dict):
        return []
    family, fallback = sel.get("family"), sel.get("fallback")
    rows = [
        [name, v.get("mean"), v.get("diff"), v.get("se"), "chosen" if name == family else ""]
        for name, v in sel["candidates"].items()
        if isinstance(v, dict)
    ]
    out = [
        f"auto fusion model: {path}",
        f"--family auto chose {family}: {fallback} is kept unless another family's held-out "
        f"NDCG@10 beats it by more than {sel.get('rule', '?')} ({sel.get('cv_folds')} inner "
        f"folds, {sel.get('n_queries')} queries)",
    ]
    if sel.get("left_out"):
        out.append(f"left out (the runs cover different queries): {', '.join(sel['left_out'])}")
    out += ["", table(["family", "held-out NDCG@10", f"- {fallback}", "SE", ""], rows), ""]
    out.append(f"the chosen model ({family}):")
    return out


def _boost_info_lines(path: str, table: Any, top: int) -> list[str]:
    import numpy as np

    from .._conventions import FEATURE_NUMBERING
    from .learned import RankFusion

    fusion = RankFusion.load(path)
    model = fusion.model_
    names = fusion.feature_names_
    n_lists = fusion.n_lists_
    best = "-" if model.best_iteration is None else str(model.best_iteration)
    params = " ".join(f"{k}={v}" for k, v in fusion.get_params().items())
    out = [
        f"fusion model: {path}",
        f"lists: {n_lists}, features: {model.n_features}, rounds: {model.n_rounds} "
        f"(best iteration: {best})",
        f"params: {params}",
        FEATURE_NUMBERING,
        "",
        "lists (feature ids of each list)",
    ]
    # rank features first, then score features, then presence features; "n_in" (the number
    # of lists that returned the document) belongs to no single list: -1
    owner = [col % n_lists if col < n_lists * (len(names) // n_lists) else -1
             for col in range(model.n_features)]  # fmt: skip
    ids: list[list[int]] = [[] for _ in range(n_lists)]
    for col, j in enumerate(owner):
        if j >= 0:
            ids[j].append(col + 1)
    rows = [
        [j + 1, fusion.list_names_[j], " ".join(str(i) for i in ids[j])] for j in range(n_lists)
    ]
    shared = [col for col, j in enumerate(owner) if j < 0]
    rows += [["-", names[col], str(col + 1)] for col in shared]
    out.append(table(["list", "name", "features"], rows))
    if model.n_rounds == 0:
        return out
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
    shown = order if top == 0 else order[:top]
    out += ["", "importances per list (gain = share of -sum ln Z_t; rounds = rounds on the list)"]
    rows = [[*labels[j], float(per_list[j]), int(rounds[j])] for j in shown]
    out.append(table(["list", "name", "gain", "rounds"], rows))
    out += [
        "",
        "learned step function of each used feature: H(x) on each interval of x "
        f"(fused score = sum of H; x = the {fusion.rank_feature} value of the rank)",
    ]
    rows = []
    for col, step in model.step_functions().items():
        neg_rank = col < n_lists and fusion.rank_feature == "neg_rank"
        rows += _interval_rows(col + 1, names[col], step, neg_rank)
    out.append(table(["feature", "name", "x in", "rank", "H(x)"], rows))
    return out
