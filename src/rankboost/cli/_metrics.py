"""The metric-convention options of ``rankboost evaluate`` and ``rankboost fuse evaluate``.

``--gain``, ``--discount``, ``--ties`` and ``--empty`` take their allowed values and defaults
from :mod:`rankboost._conventions` (the definition :mod:`rankboost.metrics` checks against);
:func:`metric_options` resolves them for the requested metrics with
:func:`rankboost.metrics.conventions`, and :func:`format_conventions` is the line printed
under the results. Only the handlers import :mod:`rankboost.metrics` (numpy, numba).
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Sequence

from .._conventions import CONVENTIONS, DEFAULTS, MEANINGS, format_conventions

__all__ = ["add_metric_argument", "add_metric_options", "format_conventions", "metric_options"]

_WHAT = {
    "gain": "gain of a label rel (ndcg, dcg)",
    "discount": "rank discount (ndcg, dcg)",
    "ties": "order of equal scores (every metric)",
    "empty": "a query without relevant document (ndcg, map, ap, mrr, p@k, ...)",
}


def add_metric_argument(p: argparse.ArgumentParser, help: str) -> None:
    """``--metric``, one syntax for every command: ``--metric a b`` and ``--metric a --metric b``.

    Every name given is kept, in order (``args.metric`` is None when none is given: the
    command's default applies). Names are checked by the parser (exit status 2).
    """
    from ._common import metric_name

    p.add_argument(
        "--metric", action="extend", nargs="+", type=metric_name, metavar="METRIC", help=help
    )


def add_metric_options(p: argparse.ArgumentParser) -> None:
    """Add ``--gain/--discount/--ties/--empty`` (default: the metrics' defaults)."""
    g = p.add_argument_group("metric conventions (rankboost.metrics; printed with the results)")
    for name, allowed in CONVENTIONS.items():
        values = ", ".join(f"{v} = {MEANINGS.get(v, v)}" for v in allowed)
        g.add_argument(
            f"--{name}",
            choices=allowed,
            default=None,
            help=f"{_WHAT.get(name, name)}: {values} (default {DEFAULTS[name]})",
        )


def metric_options(args: argparse.Namespace, metrics: Sequence[str]) -> dict[str, str]:
    """The conventions in effect for ``metrics``, to pass to ``rankboost.metrics.evaluate``.

    An option given on the command line that none of the metrics takes is ignored with a
    warning (``--gain`` with only ``map``).
    """
    from ..metrics import conventions

    given = {k: getattr(args, k) for k in CONVENTIONS if getattr(args, k, None) is not None}
    used = conventions(metrics, **given)
    for key in given:
        if key not in used:
            warnings.warn(
                f"--{key} does not apply to the metrics {', '.join(metrics)}; ignored.",
                UserWarning,
                stacklevel=2,
            )
    return used
