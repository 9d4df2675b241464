"""The click options of ``rankboost train`` and what the ``clicks`` commands share.

:func:`add_train_arguments` adds ``--clicks LOG``, ``--click-pairs``, ``--propensity``,
``--max-weight`` and ``--scheduler`` (the log's shards counted on a Dask cluster) to
``train`` (defaults: :func:`rankboost.clicks.click_feedback`'s);
:func:`click_fit_kwargs` turns them into the ``fit`` arguments. numpy and the click modules
(numba) are imported when a command runs, so building the parser stays fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ._common import PROG
from ._defaults import changed, default_of, shown
from ._rules import say_step, show_progress

__all__ = [
    "BAR_ENTRIES",
    "BAR_LOG_BYTES",
    "FEEDBACK",
    "LINE_ENTRIES",
    "LINE_LOG_BYTES",
    "add_click_options",
    "add_train_arguments",
    "click_fit_kwargs",
    "click_inputs",
    "click_options",
    "log_bar",
    "matched_counts",
    "propensity_bar",
    "propensity_table",
]

#: What ``train --clicks`` calls with the click options.
FEEDBACK = "rankboost.clicks._pairs:click_feedback"
COUNTS = "rankboost.clicks._stream:read_click_counts"

# progress bars only where a step can take seconds (small inputs stay quiet on stderr)
#: a click log file larger than this (bytes): a bar while reading
BAR_LOG_BYTES = 4 << 20
#: a log with this many rows: a bar over the EM iterations
BAR_ENTRIES = 1_000_000
# below a bar's size, or without bars (not a terminal), a step that takes seconds says what
# runs in one line (README's log: 2.8 MB, 870,678 rows; reading it and its regression-EM
# take about 5 s each)
#: a click log file larger than this (bytes): a line before reading it
LINE_LOG_BYTES = 1 << 20
#: a log with this many rows: a line before estimating its propensities
LINE_ENTRIES = 100_000


def _size(path: str) -> int:
    return os.path.getsize(path) if os.path.isfile(path) else 0


def log_bar(args: argparse.Namespace, path: str, matched: str = "") -> bool:
    """A bar while reading the click log ``path``: a large file, and bars shown.

    A file above :data:`LINE_LOG_BYTES` without its bar gets a line saying what runs
    (``matched``: what the log is matched to, if it is).
    """
    size = _size(path)
    bar = size > BAR_LOG_BYTES and show_progress(args)
    if size > LINE_LOG_BYTES:
        to = f", matched to {matched} by (qid, docid)" if matched else ""
        say_step(args, f"reading the click log {path!r} ({size / 1e6:.1f} MB{to})", bar=bar)
    return bar


def propensity_bar(args: argparse.Namespace, log: Any, method: str, hint: str = "") -> bool:
    """A bar over the EM iterations of ``log``: a large log, and bars shown.

    A log of :data:`LINE_ENTRIES` rows or more without its bar gets a line saying what runs
    (and ``hint``, in parentheses).
    """
    bar = show_progress(args) and log.n_entries >= BAR_ENTRIES
    if log.n_entries >= LINE_ENTRIES and method != "intervention_harvesting":
        how = {"auto": "EM", "em": "EM", "regression_em": "regression-EM"}.get(method, method)
        say_step(
            args,
            f"estimating the position propensities by {how} over {log.n_entries:,} log rows"
            + (f" ({hint})" if hint else ""),
            bar=bar,
        )
    return bar


def matched_counts(args: argparse.Namespace, path: str, data: Any, **options: Any) -> Any:
    """The click log ``path`` summed while streaming, matched to the rows of ``data``.

    Documents are matched by (qid, docid); memory grows with the documents and pairs, not
    the sessions (:func:`rankboost.clicks.read_click_counts`, with ``options``). With
    ``--scheduler`` the shards ``path`` names (a path or a glob pattern) are counted on that
    Dask cluster (:func:`rankboost.dask.read_click_counts`).
    """
    from ..clicks._stream import read_click_counts

    what = repr(args.data)
    if getattr(args, "scheduler", None) is not None:
        from .._compat import require
        from ..dask import read_click_counts as on_cluster

        client = require("distributed", "--scheduler").Client(args.scheduler)
        with client:
            return on_cluster(client, path, data.qid, data.docids, what=what, **options)
    verbose = log_bar(args, path, matched=what)
    return read_click_counts(path, data.qid, data.docids, what=what, verbose=verbose, **options)


def propensity_table(prop: Any) -> str:
    """``p1=1, p2=0.6, ...``: a propensity per position, as the notes print it."""
    return ", ".join(f"p{k}={v:.3g}" for k, v in zip(prop.positions, prop.values, strict=True))


def add_train_arguments(p: argparse.ArgumentParser) -> None:
    """``--clicks LOG`` and its options for ``rankboost train``."""
    add_click_options(
        p,
        "clicks (docs/clicks.md): train on a click log; the labels of DATA are then ignored",
        "click log (qid, docid, position, click[, session, count]) matched to DATA by "
        "(qid, '#docid = ...')",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="with --clicks: count the click log on this Dask scheduler (tcp://host:8786), "
        "LOG then being a path or a glob pattern of shards ('logs/*.tsv.gz') that every "
        "worker can read (docs/distributed.md; needs rankboost[dask])",
    )


def add_click_options(p: argparse.ArgumentParser, title: str, clicks_help: str) -> Any:
    """``--clicks LOG``, ``--click-pairs``, ``--propensity`` and ``--max-weight`` on ``p``.

    Shared by ``train`` and ``fuse train``; the defaults are
    :func:`rankboost.clicks.click_feedback`'s. Returns their argument group.
    """
    g = p.add_argument_group(title)
    g.add_argument("--clicks", metavar="LOG", help=clicks_help)
    pairs = default_of(FEEDBACK, "pairs")
    g.add_argument(
        "--click-pairs",
        default=pairs,
        metavar="KIND",
        choices=["all_shown", "all_unclicked", "skip_above", "skip_next", "last_click_skip_above"],
        help="with --clicks: all_shown = each click above every other shown document "
        "(unbiased with propensities), all_unclicked, skip_above, skip_next, "
        f"last_click_skip_above (default {pairs})",
    )
    prop = default_of(FEEDBACK, "propensity")
    g.add_argument(
        "--propensity",
        default=prop,
        metavar="auto|none|FILE",
        help="with --clicks: auto = estimate from the log by regression-EM, none = no "
        f"position-bias correction, FILE = a 'position propensity' table (default {prop})",
    )
    weight = default_of(FEEDBACK, "max_weight")
    g.add_argument(
        "--max-weight",
        type=float,
        default=weight,
        metavar="M",
        help=f"with --clicks: clip inverse propensities at M (default {shown(weight)})",
    )
    return g


def click_options(args: argparse.Namespace) -> dict[str, Any]:
    """The click options given (not at their defaults), as ``click_feedback``'s keywords.

    Raises a ValueError when one is given without ``--clicks``, or ``--max-weight`` < 1.
    """
    options = {"click_pairs": "pairs", "propensity": "propensity", "max_weight": "max_weight"}
    given = changed(args, FEEDBACK, options)
    if args.clicks is None:
        if given:
            flags = ", ".join("--" + k.replace("_", "-") for k in options if options[k] in given)
            raise ValueError(f"{flags} needs --clicks LOG; pass the click log too.")
        return {}
    if not args.max_weight >= 1:
        raise ValueError(f"--max-weight must be >= 1; got {args.max_weight}.")
    return given


def click_inputs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The propensity table ``--propensity FILE`` reads (an input of ``train``)."""
    given = getattr(args, "propensity", None)
    if given in (None, "auto", "none"):
        return []
    return [("input propensity table", given)]


def click_fit_kwargs(args: argparse.Namespace, data: Any) -> dict[str, Any]:
    """The ``RankBoostRanker.fit`` arguments of ``--clicks`` (empty without it)."""
    given = click_options(args)
    if args.clicks is None:
        if args.scheduler is not None:
            raise ValueError("--scheduler needs --clicks LOG; pass the click log too.")
        return {}
    from ..clicks._pairs import click_feedback, resolve_propensity

    if data.docids is None:
        raise ValueError(
            f"{args.data!r} has no '#docid = ...' comments; --clicks matches the log to the "
            "features by (qid, docid). Add the comments (rankboost.datasets.dump_svmlight)."
        )
    if data.qid is None:
        raise ValueError(f"{args.data!r} has no qid; --clicks matches the log by (qid, docid).")
    log = matched_counts(args, args.clicks, data, **changed(args, COUNTS, {"click_pairs": "pairs"}))
    hint = "--propensity FILE reads a table instead"
    verbose = args.propensity == "auto" and propensity_bar(args, log, "regression_em", hint)
    prop = resolve_propensity(log, args.propensity, data.X, verbose=verbose)
    given.pop("propensity", None)  # resolved above: the table itself is passed
    fb = click_feedback(log, prop, **given)
    sys.stderr.write(
        f"{PROG}: note: --clicks: the labels of {args.data!r} are ignored; training on "
        f"{fb.n_pairs} {args.click_pairs} pairs from {log.n_sessions} sessions and "
        f"{int(log.n_clicks)} clicks of {args.clicks!r}; propensity {prop.method}: "
        + propensity_table(prop)
        + "\n"
    )
    return {"clicks": fb}
