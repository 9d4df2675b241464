"""One parameter set (issue 10): every surface takes its defaults, choices and help text from
``rankboost.params``, so the command lines' ``--help`` cannot drift from the code."""

from __future__ import annotations

import argparse
import inspect

import numpy as np
import pytest

import rankboost as rb
from rankboost.cli import _build_parser
from rankboost.params import (
    FEEDBACK_PARAMS,
    TRAIN_PARAMS,
    ParameterError,
    TrainParams,
    check_param,
    make_params,
)

# each adapter's own name for a parameter, and the defaults it documents as its own
SURFACES = {
    "train": (rb.train, {}, {}),
    "RankBoostRanker": (rb.RankBoostRanker, {"n_rounds": "n_estimators"}, {}),
    "RankFusion": (
        rb.RankFusion,
        {},
        {"n_rounds": "auto", "positive_cumulative": True, "thresholds": "all"},
    ),
    "RankBoostRecommender": (
        rb.RankBoostRecommender,
        {"n_rounds": "n_estimators"},
        {"n_rounds": 100, "thresholds": None},
    ),
}


def _actions(parser: argparse.ArgumentParser, *path: str) -> dict[str, argparse.Action]:
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return {a.dest: a for a in parser._actions if a.help != argparse.SUPPRESS}


def test_train_params_defaults_are_the_table():
    p = TrainParams()
    for q in TRAIN_PARAMS:
        assert getattr(p, q.name) == q.default, q.name
    assert [q.name for q in TRAIN_PARAMS] == list(p.to_dict())


def _dask_surfaces():
    try:
        import rankboost.dask as rbd
    except ImportError:  # the [dask] extra is not installed
        return {}
    return {
        "DaskRankBoostRanker": (rbd.DaskRankBoostRanker, {"n_rounds": "n_estimators"}, {}),
        "dask.make_booster": (rbd.make_booster, {}, {}),
    }


SURFACES.update(_dask_surfaces())


@pytest.mark.parametrize("surface", list(SURFACES))
def test_every_adapter_takes_every_training_parameter_with_the_table_default(surface):
    obj, aliases, own = SURFACES[surface]
    sig = inspect.signature(obj).parameters
    names = [q.name for q in TRAIN_PARAMS]
    if surface == "RankBoostRecommender":  # no weak_ranker / tol / push on this surface (yet)
        names = [n for n in names if n not in ("weak_ranker", "tol", "push")]
    if surface == "RankFusion":  # no push (issue 48: its files keep their bytes)
        names = [n for n in names if n not in ("tol", "push")]
    for name in names:
        shown = aliases.get(name, name)
        assert shown in sig, (surface, shown)
        expected = own.get(name, next(q.default for q in TRAIN_PARAMS if q.name == name))
        assert sig[shown].default == expected, (surface, shown)


def test_feedback_defaults_are_the_table():
    normalize = next(q for q in FEEDBACK_PARAMS if q.name == "normalize")
    for cls in (rb.LayeredFeedback, rb.BipartiteFeedback, rb.RankBoostRanker, rb.RankFusion):
        assert inspect.signature(cls).parameters["normalize"].default == normalize.default
    feedback = next(q for q in FEEDBACK_PARAMS if q.name == "feedback")
    assert inspect.signature(rb.RankBoostRanker).parameters["feedback"].default == "layered"
    assert feedback.default == "layered"


@pytest.mark.parametrize(
    ("path", "own"),
    [
        (("train",), {}),
        (
            ("fuse", "train"),
            # learning_rate: the family's default (issue 39), named for both in the help
            {
                "n_rounds": "auto",
                "positive_cumulative": True,
                "thresholds": "all",
                "learning_rate": None,
            },
        ),  # fmt: skip
    ],
)
def test_cli_options_are_derived_from_the_table(path, own):
    actions = _actions(_build_parser(), *path)
    params = TRAIN_PARAMS + FEEDBACK_PARAMS
    if path == ("fuse", "train"):  # RankFusion's parameters only
        sig = inspect.signature(rb.RankFusion).parameters
        params = tuple(q for q in params if q.name in sig)
    for q in params:
        action = actions[q.name]
        assert q.cli in action.option_strings
        assert action.default == own.get(q.name, q.default), q.name
        assert (tuple(action.choices) if action.choices else None) == q.choices, q.name
        assert q.help in action.help, q.name
        shown = own.get(q.name, q.default)
        if shown is None:
            assert "(default: 1 for --family boost, 0.3 for --family linear)" in action.help
        elif isinstance(shown, bool):
            assert f"(default: {'on' if shown else 'off'})" in action.help
        else:
            assert (
                f"(default: {shown:g})" in action.help
                if isinstance(shown, float)
                else (f"(default: {shown})" in action.help)
            )


def test_one_name_per_concept_on_the_cli():
    for path in (("train",), ("fuse", "train"), ("demo",)):
        actions = _actions(_build_parser(), *path)
        strings = [s for a in actions.values() for s in a.option_strings]
        assert "--rounds" in strings, path
        assert "--n-rounds" not in strings, path


def test_hidden_aliases_of_the_fuse_cli_still_parse():
    args = _build_parser().parse_args(
        ["fuse", "train", "--runs", "a", "--qrels", "q", "-o", "m", "--n-rounds", "7",
         "--unconstrained"]
    )  # fmt: skip
    assert args.n_rounds == 7
    assert args.positive_cumulative is False


@pytest.mark.parametrize(("text", "value"), [("20", 20), ("1e3", 1000), ("all", "all"), ("64", 64)])
def test_parse_integers_and_all(text, value):
    q = {p.name: p for p in TRAIN_PARAMS}["thresholds" if text in ("all", "64") else "n_rounds"]
    assert q.parse(text) == value


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [("thresholds", "midpoints", "midpoints"), ("thresholds", "uniform:10", ("uniform", 10)),
     ("default", "learned", "learned"), ("default", "0", 0), ("default", "1", 1),
     ("criterion", "r", "r")],
)  # fmt: skip
def test_issue13_parse_new_values(name, text, value):
    q = {p.name: p for p in TRAIN_PARAMS}[name]
    assert q.parse(text) == value
    assert TrainParams(**{name: value}).to_dict()[name] == (
        list(value) if isinstance(value, tuple) else value
    )


def test_issue13_cli_options():
    args = _build_parser().parse_args(
        ["train", "data.txt", "--thresholds", "uniform:10", "--criterion", "r", "--default", "0"]
    )
    assert (args.thresholds, args.criterion, args.default) == (("uniform", 10), "r", 0)
    with pytest.raises(SystemExit):
        _build_parser().parse_args(["train", "data.txt", "--criterion", "min_z"])


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [("criterion", "min_z", r"one of \('abs_r', 'r', 'exact_z'\)"),
     ("criterion", None, r"one of \('abs_r', 'r', 'exact_z'\)"),
     ("default", 2, r"'learned', 0 or 1"), ("default", True, r"'learned', 0 or 1"),
     ("default", "0", r"'learned', 0 or 1"), ("default", 0.5, r"'learned', 0 or 1"),
     ("thresholds", ("uniform", 1), r"'midpoints' or \('uniform', B\)"),
     ("thresholds", ("uniform", 2.0), r"'midpoints' or \('uniform', B\)"),
     ("thresholds", ("quantile", 8), r"'midpoints' or \('uniform', B\)"),
     ("thresholds", "midpoint", r"'midpoints' or \('uniform', B\)")],
)  # fmt: skip
def test_issue13_bad_values_raise_the_template(name, value, allowed):
    pattern = rf"^The {name!r} parameter of rankboost.train must be .*{allowed}.*; got "
    with pytest.raises(ParameterError, match=pattern):
        rb.train(np.zeros((2, 1)), rb.BipartiteFeedback([0, 1]), **{name: value})
    with pytest.raises(ParameterError, match=rf"parameter of RankBoostRanker must be .*{allowed}"):
        rb.RankBoostRanker(**{name: value}).fit(np.zeros((2, 1)), [0, 1], qid=[0, 0])


@pytest.mark.parametrize("thresholds", ["midpoints", ("uniform", 10), ["uniform", 10]])
def test_issue13_params_round_trip_json(thresholds, tmp_path):
    """A model trained with the new values saves and loads (JSON lists become tuples)."""
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    model = rb.train(
        X, rb.BipartiteFeedback([0, 1, 0, 1]), 3, thresholds=thresholds, criterion="r",
        default=1,
    )  # fmt: skip
    model.save(tmp_path / "m.json")
    back = rb.load_model(tmp_path / "m.json")
    assert back.params["thresholds"] == (
        list(thresholds) if not isinstance(thresholds, str) else thresholds
    )
    assert (back.params["criterion"], back.params["default"]) == ("r", 1)
    np.testing.assert_array_equal(back.decision_function(X), model.decision_function(X))


@pytest.mark.parametrize(
    ("name", "text"),
    [("n_rounds", "2.5"), ("n_rounds", "0"), ("learning_rate", "0"), ("learning_rate", "1.5"),
     ("learning_rate", "nan"), ("thresholds", "1"), ("thresholds", "many"), ("tol", "-1")],
)  # fmt: skip
def test_parse_rejects_with_the_table_message(name, text):
    q = {p.name: p for p in TRAIN_PARAMS}[name]
    with pytest.raises(argparse.ArgumentTypeError, match=rf"must be .*; got {text!r}"):
        q.parse(text)


def test_one_error_template():
    with pytest.raises(ParameterError, match=r"^The 'learning_rate' parameter of X must be a "):
        check_param("learning_rate", 2.0, "X")
    err = pytest.raises(ParameterError, make_params, "Y", {"n_rounds": "n_estimators"}, n_rounds=-1)
    assert isinstance(err.value, ValueError)
    assert isinstance(err.value, TypeError)
    assert "'n_estimators' parameter of Y must be an int >= 1; got -1 instead." in str(err.value)
    with pytest.raises(ParameterError, match="alpha='exact' needs binary weak rankers"):
        TrainParams(alpha="exact", weak_ranker="both")
    with pytest.raises(ParameterError, match=r"unknown training parameter\(s\) \['rounds'\]"):
        make_params("Z", rounds=3)


def test_replace_validates():
    p = TrainParams().replace(learning_rate=0.25)
    assert p.learning_rate == 0.25
    with pytest.raises(ValueError, match="'learning_rate' parameter of TrainParams.replace"):
        p.replace(learning_rate=-1)
