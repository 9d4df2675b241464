"""``fuse train --family``: the families, the options each takes, and the one builder.

:data:`FAMILIES` names the estimator of each family; an option of ``fuse train`` that is
not about the data or the output (:data:`NOT_MODEL`) is a parameter of one family or more,
with the same name. Its default is the families' own (read from their signatures,
:mod:`rankboost.cli._defaults`): the common default of the families that take it, or None
("the family's default") where they differ. :func:`estimator` builds the chosen family's
estimator from the options given, and only from those: ``fuse train`` with no option is
``AutoFusion()``, the same model as in Python. :func:`check_family_options` refuses (a
usage error, exit status 2) an option the chosen family does not take, so that no option is
silently ignored. Without ``--family``, options that ``auto`` does not take but one family
does (``--rounds 20``, ``--thresholds 4``: written for the earlier default, boost) choose that
family (:func:`infer_family`, with a one-line note on stderr).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Mapping
from typing import Any

from ._common import UsageError
from ._defaults import shown, signature_defaults

__all__ = [
    "DEFAULT_FAMILY",
    "FAMILIES",
    "NOT_MODEL",
    "by_family",
    "check_family_options",
    "estimator",
    "family_parameters",
    "engine_normalizers",
    "for_engine",
    "infer_family",
    "option_defaults",
    "option_text",
]

#: ``--family`` -> the estimator it trains ("module:Class").
FAMILIES = {
    "boost": "rankboost.fusion.learned:RankFusion",
    "linear": "rankboost.fusion.linear:LinearFusion",
    "auto": "rankboost.fusion.auto:AutoFusion",
}
#: The family ``fuse train`` trains without ``--family``: ``AutoFusion()``, which
#: the README's "same in Python" builds.
DEFAULT_FAMILY = "auto"
#: ``fuse train`` options about the data, the output or the command, not the model.
NOT_MODEL = frozenset(
    {
        "help",
        "runs",
        "qrels",
        "output",
        "depth",
        "common_queries",
        "quiet",
        "progress",
        "verbose",
        "plot",
        "family",
        "engine",
        "clicks",
        "click_pairs",
        "propensity",
        "max_weight",
        "logged_by",
        "held_out",
    }
)
#: The families an option of another family chooses when ``--family`` is not given, in order:
#: boost first, the default of earlier releases (``--rounds`` belongs to both).
_INFERRED = ("boost", "linear")
#: The options whose value "none" is the parameter's None (``--prior none``: ``prior=None``).
_NONE_AS_TEXT = frozenset({"prior"})


def family_parameters(family: str) -> Mapping[str, Any]:
    """The constructor parameters of ``family``'s estimator and their defaults."""
    return signature_defaults(FAMILIES[family])


def option_defaults(dests: list[str]) -> dict[str, Any]:
    """Each option's default: the families' common one, or None where they differ."""
    out: dict[str, Any] = {}
    for dest in dests:
        values = [p[dest] for f in FAMILIES if dest in (p := family_parameters(f))]
        if not values or any(v != values[0] for v in values):
            out[dest] = None
        elif values[0] is None and dest in _NONE_AS_TEXT:
            out[dest] = "none"
        else:
            out[dest] = values[0]
    return out


def by_family(dest: str) -> str:
    """``300 for --family boost, 100 for --family linear, ...``: a help text's default."""
    values = {f: family_parameters(f).get(dest) for f in FAMILIES}
    return ", ".join(f"{shown(v)} for --family {f}" for f, v in values.items() if v is not None)


def option_text(action: argparse.Action, value: Any) -> str:
    """The option as the user wrote it: ``--no-score-features``, ``--prior rrf``."""
    if isinstance(action, argparse.BooleanOptionalAction):
        return action.option_strings[0 if value else 1]
    return f"{action.option_strings[0]} {value}"


def _given(args: argparse.Namespace, actions: dict[str, argparse.Action]) -> dict[str, Any]:
    """The model options whose value is not their default (the options given)."""
    return {
        dest: getattr(args, dest)
        for dest, action in actions.items()
        if dest not in NOT_MODEL
        and action.option_strings
        and getattr(args, dest, action.default) != action.default
    }


def estimator(args: argparse.Namespace, actions: dict[str, argparse.Action]) -> Any:
    """The estimator of ``--family``, built from the model options given.

    The options left at their defaults are not passed: the estimator's own apply.
    ``actions``: ``fuse train``'s options by destination.
    """
    module, name = FAMILIES[args.family].split(":")
    cls = getattr(importlib.import_module(module), name)
    kwargs = {
        dest: None if dest in _NONE_AS_TEXT and value == "none" else value
        for dest, value in _given(args, actions).items()
    }
    return cls(**kwargs)


def engine_normalizers(engine: str) -> list[str]:
    """The normalisers ``engine`` serves exactly for every weight, in its row's order.

    Read from :data:`rankboost.fusion.engines.ENGINES` (a normaliser served only
    approximately, or only under a condition on the weights, is left out).
    """
    from ..fusion.engines import ENGINES

    return [
        name
        for name, support in ENGINES[engine].normalizers.items()
        if support.how == "exact" and support.when is None
    ]


def for_engine(args: argparse.Namespace, actions: dict[str, argparse.Action]) -> str:
    """``--engine NAME``: train what the engine serves; the note that says what that is.

    ``--family`` becomes ``linear`` (``auto`` restricted to the one family an engine
    computes; ``boost`` is refused) and ``--normalizer`` the first normaliser the engine
    serves exactly (:func:`engine_normalizers`), or the one given if the engine serves it.
    Returns "" without ``--engine``. ``actions``: ``fuse train``'s options by destination.
    """
    from ..fusion.engines import ENGINES

    engine = getattr(args, "engine", None)
    if engine is None:
        return ""
    label, usable = ENGINES[engine].label, engine_normalizers(engine)
    if getattr(args, "family_given", False) and args.family not in ("auto", "linear"):
        raise UsageError(
            f"--engine {engine} trains --family linear ({label} computes a weighted sum of "
            f"normalised scores, not --family {args.family}'s steps on the ranks): drop "
            f"--family {args.family}, or drop --engine."
        )
    given = args.normalizer != actions["normalizer"].default
    if given and args.normalizer not in usable:
        raise UsageError(
            f"--normalizer {args.normalizer} is not one that {label} serves exactly; --engine "
            f"{engine} takes {' or '.join(usable)}: drop --normalizer, or pass one of those."
        )
    args.family, args.family_given = "linear", True
    args.normalizer = args.normalizer if given else usable[0]
    others = [n for n in usable if n != args.normalizer]
    also = f"; also --normalizer {' or '.join(others)}" if others and not given else ""
    return (
        f"rankboost fuse train: --engine {engine}: training --family linear --normalizer "
        f"{args.normalizer}, which {label} serves exactly{also}\n"
    )


def infer_family(args: argparse.Namespace, actions: dict[str, argparse.Action]) -> str:
    """Without ``--family``: the family the options given belong to; the note that says so.

    ``args.family`` is set to the first family of boost, linear that takes every model
    option given, when :data:`DEFAULT_FAMILY` does not take one of them; returns the note
    ("" when nothing changes: ``--family`` given, or every option is the default family's).
    """
    if getattr(args, "family_given", True):
        return ""
    given = _given(args, actions)
    takes = family_parameters(args.family)
    foreign = [d for d in given if d not in takes]
    if not foreign:
        return ""
    for family in _INFERRED:
        if all(d in family_parameters(family) for d in given):
            args.family = family
            flags = " ".join(option_text(actions[d], given[d]) for d in foreign)
            verb = "is an option" if len(foreign) == 1 else "are options"
            return (
                f"rankboost fuse train: {flags} {verb} "
                f"of --family {family}, not of the default --family {DEFAULT_FAMILY}: training "
                f"--family {family} (add --family {family} to say so)\n"
            )
    owners = [
        f"{option_text(actions[d], given[d])} (--family "
        f"{' or '.join(f for f in _INFERRED if d in family_parameters(f))})"
        for d in foreign
    ]
    raise UsageError(
        f"the options {', '.join(owners)} belong to different families, and the default "
        f"--family {DEFAULT_FAMILY} takes none of them: choose one family with --family and "
        "drop the options of the other."
    )


def check_family_options(args: argparse.Namespace, actions: dict[str, argparse.Action]) -> None:
    """Refuse (usage error, exit 2) a model option the chosen family does not take.

    ``actions``: ``fuse train``'s options by destination
    (:func:`rankboost.cli.fuse_train.train_options`).
    """
    family = args.family
    takes = family_parameters(family)

    def its_options() -> str:
        return ", ".join(
            a.option_strings[0] for d, a in actions.items() if d in takes and a.option_strings
        )

    for dest, value in _given(args, actions).items():
        if dest in takes:
            continue
        flag = option_text(actions[dest], value)
        if family == "auto":
            raise UsageError(
                f"{flag} is not an option of --family auto, which compares the families at "
                f"their defaults by inner cross-validation (its options: {its_options()}); "
                f"drop {flag}, or choose the family yourself: --family boost or --family linear."
            )
        if family == "linear" and dest == "prior":
            raise UsageError(
                f"{flag} is not an option of --family linear: it always starts from the sum of "
                "its normalised scores (CombSUM for --normalizer minmax, RRF for rrf) times "
                "--prior-scale (0 = no prior, auto = chosen by inner cross-validation); drop "
                f"{flag}, or use --family boost."
            )
        if dest == "normalizer":
            raise UsageError(
                f"{flag} is not an option of --family {family}: it normalises the scores of "
                "--family linear (--family boost uses the ranks; see --score-features); drop "
                f"{flag}, or add --family linear."
            )
        raise UsageError(
            f"{flag} is not an option of --family {family}, a weighted sum of normalised "
            f"scores (its options: {its_options()}); drop {flag}, or use --family boost."
        )
    if family != "boost":
        return
    if args.prior == "none" and args.prior_scale != "auto":
        raise UsageError(
            f"--prior-scale {args.prior_scale} with --family {family} scales --prior, which is "
            "none: add --prior combsum or --prior rrf, or drop --prior-scale."
        )
    if args.prior != "none" and args.prior_scale == "auto" and args.n_rounds != "auto":
        raise UsageError(
            f"--prior-scale auto (the default) with --family {family} is chosen with the "
            f"rounds by inner cross-validation (--rounds auto); with --rounds "
            f"{args.n_rounds} pass a scale, e.g. --prior-scale 1."
        )
