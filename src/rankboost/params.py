"""The training parameters: one definition that every entry point reuses.

:class:`TrainParams` is the one set of boosting parameters (paper Figure 1, sections 3-5).
:func:`rankboost.train`, :class:`rankboost.Booster`, :class:`rankboost.RankBoostRanker`,
:class:`rankboost.RankFusion`, :class:`rankboost.RankBoostRecommender` and both command lines
(``rankboost train`` and ``rankboost fuse train``) validate through it, so a parameter has one
default, one set of allowed values, one help text and one error message everywhere. The
command lines derive their options from :data:`TRAIN_PARAMS` (:func:`add_arguments`), so
their ``--help`` cannot drift from the code.

Each surface has one name per concept: the number of rounds is ``n_rounds`` in the functional
API (``train``, ``Booster``, ``RankFusion``), ``n_estimators`` in the scikit-learn estimators
(scikit-learn's and LightGBM's vocabulary) and ``--rounds`` on the command line.

Examples
--------
>>> from rankboost.params import TrainParams
>>> p = TrainParams(n_rounds=50, learning_rate=0.5)
>>> p.alpha, p.learning_rate
('r', 0.5)
>>> TrainParams(alpha="best")
Traceback (most recent call last):
...
rankboost.params.ParameterError: The 'alpha' parameter of TrainParams must be one of ...
"""

from __future__ import annotations

import argparse
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

__all__ = [
    "FEEDBACK_PARAMS",
    "ParameterError",
    "TRAIN_PARAMS",
    "Param",
    "TrainParams",
    "add_arguments",
    "check_param",
    "make_params",
    "params_of",
    "resolve_params",
]


class ParameterError(ValueError, TypeError):
    """A training parameter is not allowed (scikit-learn's ``InvalidParameterError`` shape).

    Both a ``ValueError`` and a ``TypeError``, so code catching either keeps working.
    """


# --------------------------------------------------------------------------- checkers
# Each returns None when the value is allowed, else the "must be ..." phrase of the message.


def _int_at_least(low: int) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < low:
            return f"an int >= {low}"
        return None

    return check


def _choice(options: tuple[Any, ...]) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        if not isinstance(v, str) or v not in options:
            return f"one of {options}"
        return None

    return check


def _bool(v: Any) -> str | None:
    return None if isinstance(v, bool) or type(v).__name__ == "bool_" else "True or False"


def _learning_rate(v: Any) -> str | None:
    ok = isinstance(v, numbers.Real) and not isinstance(v, bool) and 0.0 < float(v) <= 1.0
    return None if ok and math.isfinite(float(v)) else "a float in (0, 1]"


def _is_bins(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, numbers.Integral) and int(v) >= 2


def _thresholds(v: Any) -> str | None:
    if isinstance(v, str) and v in THRESHOLD_RULES:
        return None
    if isinstance(v, (tuple, list)) and len(v) == 2 and v[0] == "uniform" and _is_bins(v[1]):
        return None
    if not _is_bins(v):
        return "'all' or an int number of bins >= 2, 'midpoints' or ('uniform', B) with B >= 2"
    return None


def _default(v: Any) -> str | None:
    if isinstance(v, str) and v == "learned":
        return None
    if not isinstance(v, bool) and isinstance(v, numbers.Integral) and v in (0, 1):
        return None
    return "'learned', 0 or 1"


def _push(v: Any) -> str | None:
    ok = isinstance(v, numbers.Real) and not isinstance(v, bool)
    if ok and math.isfinite(float(v)) and float(v) >= 1.0:
        return None
    auto = "; 'auto' is RankBoostRanker's and rankboost train's (held-out queries)"
    return "a finite float >= 1" + (auto if isinstance(v, str) and v == "auto" else "")


def _non_negative(v: Any) -> str | None:
    ok = isinstance(v, numbers.Real) and not isinstance(v, bool)
    return None if ok and math.isfinite(float(v)) and float(v) >= 0 else "a number >= 0"


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Param:
    """One parameter: its name, default, allowed values and the help text shown everywhere.

    Attributes
    ----------
    name : str
        Name in the functional API (``train``, ``Booster``, ``TrainParams``).
    default : object
        Default of ``train`` (an adapter may document its own, e.g. ``RankFusion``).
    help : str
        One-line description; the command lines show it in ``--help``.
    check : callable
        ``check(value)`` is None for an allowed value, else the "must be ..." phrase.
    choices : tuple or None
        The allowed values of a choice parameter.
    cli : str
        The command-line option.
    metavar : str or None
        Placeholder of the option's value in ``--help``.
    """

    name: str
    default: Any
    help: str
    check: Callable[[Any], str | None]
    choices: tuple[Any, ...] | None = None
    cli: str = ""
    metavar: str | None = None

    def parse(self, text: str) -> Any:
        """The value of a command-line string (argparse ``type=``); raises ArgumentTypeError."""
        if self.choices is not None or (self.name == "push" and text == "auto"):
            return text  # argparse checks choices ("invalid choice"); train chooses push auto
        value: Any = text
        if self.name == "thresholds" and text.startswith("uniform:"):
            bins = text.partition(":")[2]
            value = ("uniform", int(bins)) if bins.isdigit() else text
        elif self.name == "default" and text in ("0", "1"):
            value = int(text)
        elif not (
            self.name in ("thresholds", "default") and text in THRESHOLD_RULES + ("learned",)
        ):
            try:
                num = float(text)
            except ValueError:
                num = math.nan
            integral = self.check not in (_learning_rate, _non_negative, _push)
            if integral and math.isfinite(num) and num == int(num) and "." not in text:
                value = int(num)
            elif not integral:
                value = num
        why = self.check(value)
        if why is not None:
            raise argparse.ArgumentTypeError(f"must be {why}; got {text!r}")
        return value


ALPHA_RULES = ("r", "exact", "line_search", "rbplus")
WEAK_RANKERS = ("threshold", "feature", "both")
NORMALIZE = ("query", "pair")
FEEDBACKS = ("layered", "bipartite")
CRITERIA = ("abs_r", "r", "exact_z")
THRESHOLD_RULES = ("all", "midpoints")

#: The training parameters, in the order of :class:`TrainParams`.
TRAIN_PARAMS: tuple[Param, ...] = (
    Param("n_rounds", 300, "boosting rounds T", _int_at_least(1), cli="--rounds", metavar="T"),
    Param(
        "alpha",
        "r",
        "alpha rule: r = Rb-c 1/2 ln((1+r)/(1-r)), exact = Rb-d (binary rankers), "
        "line_search = argmin Z, rbplus = RankBoost+ (binary rankers, explicit pairs)",
        _choice(ALPHA_RULES),
        choices=ALPHA_RULES,
        cli="--alpha",
    ),
    Param(
        "learning_rate",
        1.0,
        "shrinkage nu in (0, 1]: alpha_t = nu * the rule's alpha (1 = the paper)",
        _learning_rate,
        cli="--learning-rate",
        metavar="NU",
    ),
    Param(
        "positive_cumulative",
        False,
        "WeakLearn.cum: keep the ranking function non-decreasing in every feature",
        _bool,
        cli="--positive-cumulative",
    ),
    Param(
        "thresholds",
        255,
        "candidate thresholds per feature: B quantile bins, 'all' distinct values, "
        "'midpoints' between them, or uniform:B equal-width bins",
        _thresholds,
        cli="--thresholds",
        metavar="B|all|midpoints|uniform:B",
    ),
    Param(
        "criterion",
        "abs_r",
        "WeakLearn's objective: abs_r = max |r| (the paper; r < 0 gives alpha < 0), "
        "r = max r over r > 0 (RankLib, no sign reversal), exact_z = min W_0 + 2 sqrt(W_- W_+) "
        "(binary rankers)",
        _choice(CRITERIA),
        choices=CRITERIA,
        cli="--criterion",
    ),
    Param(
        "default",
        "learned",
        "q_def where a feature abstains: learned (WeakLearn picks 0 or 1, the paper), or fixed "
        "0 or 1",
        _default,
        cli="--default",
        metavar="learned|0|1",
    ),
    Param(
        "weak_ranker",
        "threshold",
        "weak rankers: threshold [x > theta] (the paper), feature (real-valued), or both",
        _choice(WEAK_RANKERS),
        choices=WEAK_RANKERS,
        cli="--weak-ranker",
    ),
    Param(
        "tol",
        1e-9,
        "stop when no weak ranker has |r| > tol",
        _non_negative,
        cli="--tol",
        metavar="TOL",
    ),
    Param(
        "push",
        1.0,
        "P-Norm Push exponent p >= 1 (Rudin 2009): minimise sum_k L_k^p over the lower items "
        "k; 1 = RankBoost, larger p concentrates on the top of the list; auto: chosen among "
        "1, 2, 4, 8, 16 on --valid (else inner folds), 1 unless another is 2 SE better",
        _push,
        cli="--push",
        metavar="P|auto",
    ),
)

#: Feedback parameters shared by the adapters and the command lines.
FEEDBACK_PARAMS: tuple[Param, ...] = (
    Param(
        "feedback",
        "layered",
        "layered: every higher grade above every lower one in a query; bipartite: labels 0/1",
        _choice(FEEDBACKS),
        choices=FEEDBACKS,
        cli="--feedback",
    ),
    Param(
        "normalize",
        "query",
        "query: every query with a crucial pair weighs the same; pair: every crucial pair does "
        "(the paper's D)",
        _choice(NORMALIZE),
        choices=NORMALIZE,
        cli="--normalize",
    ),
)

_BY_NAME = {p.name: p for p in TRAIN_PARAMS + FEEDBACK_PARAMS}


def check_param(name: str, value: Any, owner: str, *, alias: str | None = None) -> None:
    """Raise the one error of parameter ``name`` when ``value`` is not allowed.

    Parameters
    ----------
    name : str
        A name of :data:`TRAIN_PARAMS` or :data:`FEEDBACK_PARAMS`.
    value : object
        The value given.
    owner : str
        Who received it (``"rankboost.train"``, ``"RankBoostRanker"``, ...).
    alias : str, default=None
        The parameter's name on the owner's surface (``"n_estimators"``), if not ``name``.

    Raises
    ------
    ParameterError
        A ``ValueError`` and ``TypeError`` naming the parameter, its owner, what is allowed
        and what was given.
    """
    why = _BY_NAME[name].check(value)
    if why is None:
        return
    shown = alias or name
    raise ParameterError(
        f"The {shown!r} parameter of {owner} must be {why}; got {value!r} instead."
    )


@dataclass(frozen=True)
class TrainParams:
    """The boosting parameters of :func:`rankboost.train` and :class:`rankboost.Booster`.

    Validated when built (the error names the parameter, what is allowed and what was
    given). :func:`make_params` builds one on behalf of an adapter, so that the message names
    the adapter and its own parameter names.

    Parameters
    ----------
    n_rounds : int, default=300
        Number of boosting rounds ``T`` (paper Figure 1).
    alpha : {"r", "exact", "line_search", "rbplus"}, default="r"
        How ``alpha_t`` is chosen (:mod:`rankboost.alpha_rules`; paper section 3.2): Rb-c,
        Rb-d (binary rankers only), the minimiser of ``Z`` (the paper's method 1), or
        RankBoost+ (:mod:`rankboost.rbplus`; binary rankers, its own selection score and
        tied-pair update; layered feedback is expanded to explicit pairs).
    learning_rate : float, default=1.0
        Shrinkage ``nu`` in (0, 1]: the applied weight is ``nu`` times the rule's alpha.
        ``1`` is the paper. The recorded ``Z_t`` is the exact ``Z`` at the applied alpha, so
        ``rloss <= prod Z_t`` still holds.
    positive_cumulative : bool, default=False
        WeakLearn.cum (paper section 4).
    thresholds : int, "all", "midpoints" or ("uniform", B), default=255
        Candidate thresholds per feature (:mod:`rankboost.binning`): quantile bins, every
        distinct value, the midpoints between consecutive distinct values, or ``B``
        equal-width bins between the training min and max.
    criterion : {"abs_r", "r", "exact_z"}, default="abs_r"
        WeakLearn's objective (:mod:`rankboost.weak_rankers`): the largest ``|r|`` (the
        paper; a candidate with ``r < 0`` gets a negative alpha), the largest ``r``
        among candidates with ``r > 0`` (RankLib; no sign reversal), or the smallest exact
        ``Z = W_0 + 2 sqrt(W_- W_+)`` (binary rankers only).
    default : {"learned", 0, 1}, default="learned"
        ``q_def``, the value of a weak ranker where its feature abstains: chosen by WeakLearn
        (the paper), or fixed (only the candidates with that ``q_def``).
    weak_ranker : {"threshold", "feature", "both"}, default="threshold"
        Binary threshold rankers (the paper's), real-valued rankers in [0, 1], or both.
    tol : float, default=1e-9
        Stop when no candidate has ``|r| > tol``.
    push : float, default=1.0
        The P-Norm Push's ``p >= 1`` (:mod:`rankboost.push`); 1 is RankBoost, bit for bit.
        With ``p > 1`` alpha minimises ``R_p`` whether ``alpha`` is 'r' or 'line_search'.

    Examples
    --------
    >>> from rankboost.params import TrainParams
    >>> TrainParams(n_rounds=10).replace(alpha="exact").alpha
    'exact'
    """

    n_rounds: int = 300
    alpha: str = "r"
    learning_rate: float = 1.0
    positive_cumulative: bool = False
    thresholds: int | str | tuple[str, int] = 255
    criterion: str = "abs_r"
    default: str | int = "learned"
    weak_ranker: str = "threshold"
    tol: float = 1e-9
    push: float = 1.0

    def __post_init__(self) -> None:
        self._validate("TrainParams", {})

    def _validate(self, owner: str, aliases: Mapping[str, str]) -> None:
        for f in fields(self):
            check_param(f.name, getattr(self, f.name), owner, alias=aliases.get(f.name))
        if self.alpha == "exact" and self.weak_ranker != "threshold":
            raise ParameterError(
                f"{owner}: alpha='exact' needs binary weak rankers (weak_ranker='threshold'); "
                f"real-valued rankers (weak_ranker={self.weak_ranker!r}) need alpha='r' or "
                "'line_search'."
            )
        if self.criterion == "exact_z" and self.weak_ranker != "threshold":
            raise ParameterError(
                f"{owner}: criterion='exact_z' minimises Z = W_0 + 2 sqrt(W_- W_+), which holds "
                f"for binary weak rankers only (weak_ranker='threshold'); with "
                f"weak_ranker={self.weak_ranker!r} use criterion='abs_r' or 'r'."
            )
        if self.push != 1.0 and (self.alpha in ("exact", "rbplus") or self.criterion == "exact_z"):
            raise ParameterError(
                f"{owner}: push={self.push!r} minimises R_p; alpha={self.alpha!r} with "
                f"criterion={self.criterion!r} is for RankBoost's Z only. Use alpha='r' or "
                "'line_search' and criterion='abs_r' or 'r', or push=1."
            )
        if self.alpha == "rbplus":
            if self.weak_ranker != "threshold":
                raise ParameterError(
                    f"{owner}: alpha='rbplus' (RankBoost+) needs binary weak rankers "
                    f"(weak_ranker='threshold'): its tied-pair factors cosh(eta) are defined "
                    f"for h in {{0, 1}}; with weak_ranker={self.weak_ranker!r} use alpha='r' "
                    "or 'line_search'."
                )
            if self.positive_cumulative:
                raise ParameterError(
                    f"{owner}: alpha='rbplus' with positive_cumulative=True is not defined "
                    "(RankBoost+ selects by its own gradient score, WeakLearn.cum by |r|); use "
                    "one of the two."
                )
            if self.criterion != "abs_r":
                raise ParameterError(
                    f"{owner}: alpha='rbplus' selects the weak ranker by its own score "
                    f"|W_- - W_+ - W_0 tanh(eta)| (SPEC 5.4), so criterion={self.criterion!r} "
                    "does not apply; leave criterion='abs_r'."
                )

    def replace(self, **changes: Any) -> TrainParams:
        """A copy with some parameters changed (validated)."""
        return make_params("TrainParams.replace", **{**asdict(self), **changes})

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (stored in a model's ``params``)."""
        d = asdict(self)
        d["n_rounds"] = int(d["n_rounds"])
        d["learning_rate"] = float(d["learning_rate"])
        d["positive_cumulative"] = bool(d["positive_cumulative"])
        d["tol"] = float(d["tol"])
        d["push"] = float(d["push"])
        if isinstance(d["thresholds"], (tuple, list)):  # ("uniform", B): a JSON list
            d["thresholds"] = [str(d["thresholds"][0]), int(d["thresholds"][1])]
        elif not isinstance(d["thresholds"], str):
            d["thresholds"] = int(d["thresholds"])
        if not isinstance(d["default"], str):
            d["default"] = int(d["default"])
        return d


def make_params(owner: str, aliases: Mapping[str, str] | None = None, **values: Any) -> TrainParams:
    """Validate ``values`` on behalf of ``owner`` and return them as :class:`TrainParams`.

    Parameters
    ----------
    owner : str
        Named in error messages (``"RankBoostRanker"``).
    aliases : dict, default=None
        The owner's names of parameters, e.g. ``{"n_rounds": "n_estimators"}``.
    **values
        Parameters by their :class:`TrainParams` names; missing ones take its defaults.

    Returns
    -------
    params : TrainParams

    Examples
    --------
    >>> from rankboost.params import make_params
    >>> make_params("RankBoostRanker", {"n_rounds": "n_estimators"}, n_rounds=0)
    Traceback (most recent call last):
    ...
    rankboost.params.ParameterError: The 'n_estimators' parameter of RankBoostRanker must be ...
    """
    aliases = dict(aliases or {})
    known = {f.name for f in fields(TrainParams)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ParameterError(
            f"{owner} got unknown training parameter(s) {unknown}; valid ones: {sorted(known)}."
        )
    for name, value in values.items():
        check_param(name, value, owner, alias=aliases.get(name))
    # every value is valid: build without re-checking, then the cross-parameter rule
    params = object.__new__(TrainParams)
    for f in fields(TrainParams):
        object.__setattr__(params, f.name, values.get(f.name, f.default))
    if isinstance(params.thresholds, list):  # ("uniform", B) read back from JSON
        object.__setattr__(params, "thresholds", tuple(params.thresholds))
    params._validate(owner, aliases)
    return params


def params_of(obj: Any, owner: str, aliases: Mapping[str, str] | None = None) -> TrainParams:
    """The training parameters an adapter holds as attributes, validated on its behalf.

    Every parameter of :data:`TRAIN_PARAMS` that ``obj`` has (under its own name, or under
    ``aliases[name]``, e.g. ``n_estimators``) is read; the others take their defaults. So an
    adapter that gains a parameter in its constructor passes it on without another list.

    Parameters
    ----------
    obj : object
        The adapter (an estimator, ``RankFusion``, ...).
    owner : str
        Named in error messages.
    aliases : dict, default=None
        The adapter's names of parameters, e.g. ``{"n_rounds": "n_estimators"}``.

    Returns
    -------
    params : TrainParams
    """
    aliases = dict(aliases or {})
    values = {
        q.name: getattr(obj, aliases.get(q.name, q.name))
        for q in TRAIN_PARAMS
        if hasattr(obj, aliases.get(q.name, q.name))
    }
    return make_params(owner, aliases, **values)


def resolve_params(
    owner: str, values: Mapping[str, Any], params: TrainParams | None
) -> TrainParams:
    """The parameters of a function that takes them as keywords *or* as ``params=``.

    ``values`` holds the keyword values under their :class:`TrainParams` names, and may hold
    more: the function passes its ``locals()``, of which only those names are read. With
    ``params`` they must all keep their defaults (the parameters are passed once), else a
    ValueError names the ones that were changed.
    """
    given = {f.name: values[f.name] for f in fields(TrainParams)}
    if params is None:
        return make_params(owner, None, **given)
    if not isinstance(params, TrainParams):
        raise TypeError(
            f"{owner}: params must be a rankboost.params.TrainParams; got {type(params).__name__}."
        )
    changed = [k for k, v in given.items() if v != getattr(TrainParams, k)]
    if changed:
        raise ValueError(
            f"{owner} got params= and also {changed}; pass the training parameters only "
            "once (inside params, e.g. params.replace(...))."
        )
    return params


def add_arguments(
    parser: Any,
    *,
    params: Iterable[Param] = TRAIN_PARAMS,
    defaults: Mapping[str, Any] | None = None,
) -> None:
    """Add one command-line option per parameter, derived from its :class:`Param`.

    Parameters
    ----------
    parser : argparse.ArgumentParser or argument group
        Where to add the options.
    params : iterable of Param, default=TRAIN_PARAMS
        Which parameters.
    defaults : dict, default=None
        Defaults that differ from :class:`TrainParams` (the adapter's, e.g. RankFusion's).

    Examples
    --------
    >>> import argparse
    >>> from rankboost.params import add_arguments
    >>> p = argparse.ArgumentParser()
    >>> add_arguments(p)
    >>> args = p.parse_args(["--rounds", "20", "--learning-rate", "0.1"])
    >>> args.n_rounds, args.learning_rate, args.alpha
    (20, 0.1, 'r')
    """
    defaults = dict(defaults or {})
    for p in params:
        default = defaults.get(p.name, p.default)
        shown = f"{default:g}" if isinstance(default, float) else str(default)
        if isinstance(p.default, bool):
            parser.add_argument(
                p.cli,
                dest=p.name,
                action=argparse.BooleanOptionalAction,
                default=default,
                help=f"{p.help} (default: {'on' if default else 'off'})",
            )
            continue
        parser.add_argument(
            p.cli,
            dest=p.name,
            type=p.parse,
            choices=p.choices,
            default=default,
            metavar=p.metavar,
            help=f"{p.help} (default: {shown})",
        )
