"""RankLib's RankBoost model file, which Elasticsearch/OpenSearch LTR read as ``model/ranklib``.

The file is ``## RankBoost``, ``## Iteration = T``, ``## No. of threshold candidates = K``
and one line of space-separated ``fid:threshold:alpha`` triples, one per weak ranker, with
1-based feature ids; RankLib scores ``sum alpha [x[fid] > threshold]``, reading a feature as
float32 and the threshold and alpha as double, so on float32 inputs the score is exact up to
the order of the additions. A real-valued round ``alpha * #{c in cuts : c < x} / n`` is
written as ``n`` threshold rankers of weight ``alpha / n``, one per cut.

RankLib has no abstention: a feature missing from a data row reads as 0. The file is
faithful when every used feature's function has the same value at 0 as where the feature
abstains, ``H_i(0) == H_i(NaN)`` (for instance all ``q_def = 0`` and all thresholds
``>= 0``); :func:`unfaithful_features` lists the others.
"""

from __future__ import annotations

import math

import numpy as np

from ..model import RankBoostModel, StepFunction

__all__ = ["check_missing_as_zero", "model_text", "unfaithful_features"]


def java_double(x: float) -> str:
    """``x`` as a string Java's ``Double.parseDouble`` reads back exactly."""
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return repr(float(x))


def unfaithful_features(
    steps: dict[int, StepFunction], value: float = 0.0
) -> list[tuple[int, float, float]]:
    """``(feature, H_i(value), H_i(NaN))`` of every feature where the two differ."""
    out = []
    for i, sf in steps.items():
        at = float(sf(np.array([value]))[0])
        if at != sf.missing:
            out.append((i, at, sf.missing))
    return out


def check_missing_as_zero(
    model: RankBoostModel, n_rounds: int, consumer: str, names: list[str] | None
) -> None:
    """Raise ValueError when a consumer that reads a missing feature as 0 would change ``H``."""
    bad = unfaithful_features(model.step_functions(n_rounds))
    if not bad:
        return
    i, at_zero, at_nan = bad[0]
    label = f"feature {i}" + (f" ({names[i]!r})" if names else "")
    more = f" ({len(bad) - 1} more features differ)" if len(bad) > 1 else ""
    raise ValueError(
        f"{consumer} reads a missing feature as 0 and has no abstention, but the model's "
        f"{label} scores 0 as {at_zero!r} and a missing value as {at_nan!r}{more}. Pass "
        "missing_as_zero=True (--missing-as-zero) to export it anyway: rows where such a "
        "feature is missing then score as if it were 0 (exact when your data never has "
        "missing values)."
    )


def weak_rankers(model: RankBoostModel, n_rounds: int) -> list[tuple[int, float, float]]:
    """``(feature, threshold, alpha)`` of every binary weak ranker of the first rounds."""
    r = model.rounds
    out = []
    for t in range(n_rounds):
        f, a = int(r.feature[t]), float(r.alpha[t])
        if r.kind[t] == 0:
            out.append((f, float(r.threshold[t]), a))
        else:
            cuts = r.cuts_of(t)
            out.extend((f, float(c), a / cuts.shape[0]) for c in cuts.tolist())
    return out


def model_text(model: RankBoostModel, n_rounds: int) -> str:
    """The RankLib model file (no final newline, as RankLib writes it)."""
    triples = [
        f"{f + 1}:{java_double(theta)}:{java_double(a)}"
        for f, theta, a in weak_rankers(model, n_rounds)
    ]
    if not triples:  # RankLib cannot load an empty line of rankers: [x > +inf] scores 0
        triples = ["1:Infinity:0.0"]
    k = model.params.get("thresholds")
    candidates = k if isinstance(k, int) and not isinstance(k, bool) else 0
    return (
        "## RankBoost\n"
        f"## Iteration = {n_rounds}\n"
        f"## No. of threshold candidates = {candidates}\n" + " ".join(triples)
    )
