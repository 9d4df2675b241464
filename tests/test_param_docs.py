"""Each adapter documents the training parameters as :mod:`rankboost.params` defines them.

After scikit-learn's ``test_docstring_parameters.py``: the ``Parameters`` section of every
surface that trains (``rankboost.train``, ``Booster``'s ``TrainParams``,
``RankBoostRanker``, ``DaskRankBoostRanker``, ``RankFusion``, ``RankBoostRecommender``) is
parsed, and for every parameter of ``params.TRAIN_PARAMS`` / ``FEEDBACK_PARAMS`` it
documents: the ``{...}`` choices must be exactly the table's allowed values (less what the
surface refuses, listed here with the reason), and the documented default must be the
surface's real default (its signature's).
"""

from __future__ import annotations

import ast
import inspect
import re
from typing import Any

import pytest

import rankboost as rb
from rankboost import params as P

_ENTRY = re.compile(r"^(?P<names>\w+(?:, \w+)*) : (?P<type>.*)$")


def documented(obj: Any) -> dict[str, tuple[set[Any] | None, Any]]:
    """``name -> (choices or None, default or ...)`` from a numpydoc Parameters section."""
    doc = inspect.getdoc(obj) or ""
    lines = doc.splitlines()
    try:
        start = lines.index("Parameters") + 2
    except ValueError:
        return {}
    out: dict[str, tuple[set[Any] | None, Any]] = {}
    for line in lines[start:]:
        if line and not line.startswith(" ") and " : " not in line:
            break  # the next section
        m = _ENTRY.match(line)
        if not m:
            continue
        kind = m["type"]
        choices = None
        default: Any = ...
        if kind.startswith("{"):
            inner = kind[1 : kind.index("}")]
            choices = set(ast.literal_eval("[" + inner + "]"))
        if "default=" in kind:
            text = kind.split("default=", 1)[1]
            try:
                default = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                default = text
        for name in m["names"].split(", "):
            out[name] = (choices, default)
    return out


def _signature_defaults(fn: Any) -> dict[str, Any]:
    return {
        k: v.default
        for k, v in inspect.signature(fn).parameters.items()
        if v.default is not inspect.Parameter.empty
    }


def _dask() -> tuple[Any, ...]:
    """DaskRankBoostRanker: its own entries over RankBoostRanker's ("As RankBoostRanker")."""
    pytest.importorskip("distributed")
    from rankboost.dask import DaskRankBoostRanker

    docs = {**documented(rb.RankBoostRanker), **documented(DaskRankBoostRanker)}
    # RankBoost+ keeps a factor per explicit pair: rankboost.dask refuses it
    return docs, DaskRankBoostRanker.__init__, {"n_rounds": "n_estimators"}, {"alpha": {"rbplus"}}


# surface -> (its documented parameters, the callable whose defaults are real, the
#             adapter's names of parameters, values it refuses by parameter)
SURFACES: dict[str, Any] = {
    "train": lambda: (documented(rb.train), rb.train, {}, {}),
    "TrainParams": lambda: (documented(rb.TrainParams), rb.TrainParams, {}, {}),
    "RankBoostRanker": lambda: (
        documented(rb.RankBoostRanker), rb.RankBoostRanker.__init__,
        {"n_rounds": "n_estimators"}, {},
    ),
    "DaskRankBoostRanker": _dask,
    "RankFusion": lambda: (documented(rb.RankFusion), rb.RankFusion.__init__, {}, {}),
    # its own feedback= ("ratings", "rated", "both": what the pooled model learns from) is
    # not the engine's feedback kind, which it picks itself: not compared with the table
    "RankBoostRecommender": lambda: (
        documented(rb.RankBoostRecommender),
        rb.RankBoostRecommender.__init__,
        {"feedback": "<the recommender's own feedback=>"},
        {},
    ),
}  # fmt: skip

PARAMS = list(P.TRAIN_PARAMS + P.FEEDBACK_PARAMS)


def _cases() -> list[Any]:
    out = []
    for surface in SURFACES:
        marks: list[Any] = []
        out.append(pytest.param(surface, marks=marks, id=surface))
    return out


@pytest.mark.parametrize("surface", _cases())
def test_documented_choices_are_the_table_s(surface: str) -> None:
    docs, _, aliases, refused = SURFACES[surface]()
    checked = 0
    for p in PARAMS:
        name = aliases.get(p.name, p.name)
        if p.choices is None or name not in docs or docs[name][0] is None:
            continue
        want = set(p.choices) - refused.get(p.name, set())
        assert docs[name][0] == want, f"{surface} documents {name} as {docs[name][0]}, not {want}"
        checked += 1
    assert checked >= 2 if surface != "TrainParams" else checked >= 3


@pytest.mark.parametrize("surface", list(SURFACES))
def test_documented_defaults_are_the_real_ones(surface: str) -> None:
    docs, fn, aliases, _ = SURFACES[surface]()
    real = _signature_defaults(fn)
    checked = 0
    for p in PARAMS:
        name = aliases.get(p.name, p.name)
        if name not in docs or docs[name][1] is ... or name not in real:
            continue
        assert docs[name][1] == real[name], (
            f"{surface} documents {name} default={docs[name][1]!r}; it is {real[name]!r}"
        )
        checked += 1
    assert checked >= 5


def test_train_s_defaults_are_the_table_s() -> None:
    """The functional API's defaults are the one table's (params.TRAIN_PARAMS)."""
    real = _signature_defaults(rb.train)
    for p in P.TRAIN_PARAMS:
        assert real[p.name] == p.default, p.name


def test_the_parser_reads_a_known_entry() -> None:
    docs = documented(rb.train)
    assert docs["alpha"] == ({"r", "exact", "line_search", "rbplus"}, "r")
    assert docs["n_rounds"] == (None, 300)


@pytest.mark.parametrize("name", ["alpha", "criterion", "weak_ranker", "feedback", "normalize"])
def test_every_documented_choice_of_the_ranker_fits(name: str) -> None:
    """What RankBoostRanker documents, it accepts and trains with (a tiny problem)."""
    import warnings

    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    qid = np.repeat([0, 1], 20)
    choices = documented(rb.RankBoostRanker)[name][0]
    assert choices
    for value in sorted(choices):
        kw = {name: value}
        if value in ("exact_z", "rbplus"):
            kw["weak_ranker"] = "threshold"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rb.TrainingStoppedWarning)
            est = rb.RankBoostRanker(n_estimators=2, **kw).fit(X, y, qid=qid)
        assert est.model_.n_rounds >= 1, (name, value)
