"""Reading and writing the files of a ``rankboost`` command, with errors that say what to do.

Package-internal: the command modules of :mod:`rankboost.cli` use these; a missing or
unreadable input is a :class:`~rankboost.cli._common.CLIError` naming the file and the fix,
and a file of another kind says what it looks like (:func:`guess_format`). ``--plot``:
:func:`check_plot` before the work, :func:`save_plot` after it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._common import (
    PROG,
    CLIError,
    UsageError,
    int_at_least,
    os_error_text,
    require_option_package,
)
from ._common import one_line as _one_line

if TYPE_CHECKING:
    from ..datasets import RankingDataset
    from ..model import RankBoostModel

__all__ = [
    "SVMLIGHT_FORMAT",
    "add_model_and_data",
    "add_query_file",
    "add_rounds",
    "rounds_to_use",
    "check_exists",
    "check_plot",
    "check_width",
    "guess_format",
    "load_data",
    "load_model_and_data",
    "load_model_file",
    "query_ids",
    "refuse_other_format",
    "save_plot",
    "write_file",
]


#: What a data file of ``train``, ``predict`` and ``evaluate`` holds, said by their errors.
#: (label, qid:QUERY, FEATURE:VALUE pairs numbered from 1, an optional comment)
SVMLIGHT_FORMAT = "SVMlight/LETOR lines such as '2 qid:10 1:0.5 2:0.1 #docid = D'"

_RATINGS_HINT = "ratings train rankboost.recommend.RankBoostRecommender (docs/movies.md)"


def _first_lines(path: str, n: int = 5, size: int = 1 << 14) -> list[str]:
    """The first ``n`` non-empty lines of ``path`` (decompressed; ``[]`` if unreadable)."""
    from ..datasets._io import open_binary

    try:
        with open_binary(path) as fh:
            head = fh.read(size)
    except (OSError, ValueError, EOFError):
        return []
    text = head.decode("utf-8", errors="replace")
    lines = text.splitlines()
    if len(head) == size and lines:
        lines.pop()  # cut by the read
    return [line.strip() for line in lines if line.strip()][:n]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def guess_format(path: str) -> tuple[str, str] | None:
    r"""``(what path looks like, what to do with it)`` from its first lines; None: no guess.

    The one place the commands tell file types apart when a file does not read as they
    expect: a rankboost model or fusion model (JSON), another JSON file, a TREC run, TREC
    qrels, MovieLens ratings (``u.data``, ``ratings.dat``, ``ratings.csv``), a click log, a
    CSV file, or SVMlight/LETOR data (given where a model was expected).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "u.data")
    >>> with open(path, "w") as f:
    ...     _ = f.write("196\t242\t3\t881250949\n")
    >>> guess_format(path)[0]
    'MovieLens ratings (user item rating timestamp)'
    """
    lines = _first_lines(path)
    if not lines:
        return None
    first = lines[0]
    if first[0] in "{[":
        from ..model_files import kind_of  # JSON files only; stdlib only

        kind = kind_of(path)
        if kind is not None:  # what a model file given as data looks like: the registry's words
            return kind.entry.looks_like, kind.entry.as_data
        return "a JSON file", "write the data as SVMlight (rankboost.datasets.dump_svmlight)"
    fields = first.split()
    lower = first.lower()
    header = {w.strip("\"'") for w in lower.replace(",", " ").split()}
    if len(fields) == 6 and fields[1].upper() == "Q0":
        return (
            "a TREC run (qid Q0 docid rank score tag)",
            "runs are fused by 'rankboost fuse train --runs RUN ... --qrels QRELS'",
        )
    if "::" in first and len(first.split("::")) in (3, 4):
        return "MovieLens ratings (user::item::rating::timestamp)", _RATINGS_HINT
    if {"userid", "movieid", "rating"} <= header:
        return "MovieLens ratings (CSV: userId,movieId,rating,...)", _RATINGS_HINT
    if {"qid", "docid", "position", "click"} <= header:
        return "a click log (qid docid position click)", "use it as 'rankboost train --clicks LOG'"
    if len(fields) == 4 and all(f.isdigit() for f in fields) and "\t" in first:
        if int(fields[3]) > 10**8 and len(fields[2]) <= 2:  # a Unix time, a small rating
            return "MovieLens ratings (user item rating timestamp)", _RATINGS_HINT
    if len(fields) == 4 and fields[1] in ("0", "Q0") and _is_number(fields[3]):
        return (
            "TREC qrels (qid 0 docid relevance)",
            "judgments go with runs: 'rankboost fuse train --runs RUN ... --qrels QRELS'",
        )
    if "," in first and ":" not in first:
        return "a CSV file", "write it as SVMlight with rankboost.datasets.dump_svmlight"
    pairs = first.split("#", 1)[0].split()
    if len(pairs) > 1 and _is_number(pairs[0]) and all(":" in f for f in pairs[1:]):
        return (
            "an SVMlight/LETOR data file",
            "it is the DATA of 'rankboost predict MODEL DATA' (check the argument order)",
        )
    return None


def refuse_other_format(path: str, what: str) -> None:
    """Refuse a data file of another kind from its first line, before numpy is imported.

    Only when no SVMlight reader would take that line (its label is not a number, or a token
    after it has no ``:``; scikit-learn's parser refuses such a line too) and
    :func:`guess_format` names what the file is: then the error is the one :func:`load_data`
    gives after the readers failed, in a fraction of the time (importing numpy, and
    scikit-learn for its parser, took 1.25 s of the 1.3 s of ``rankboost train data.csv``).
    Anything else goes to the readers.
    """
    line = _first_data_line(path)
    if line is None or _svmlight_shaped(line):
        return
    guess = guess_format(path)
    if guess is not None and not guess[0].startswith("an SVMlight"):
        raise CLIError(f"{what} {path!r} looks like {guess[0]}, not {SVMLIGHT_FORMAT}: {guess[1]}.")


def _first_data_line(path: str, size: int = 1 << 14) -> bytes | None:
    """The first line of ``path`` with data before any ``#`` (decompressed), if read whole."""
    from ..datasets._io import open_binary  # standard library only

    try:
        with open_binary(path) as fh:
            head = fh.read(size)
    except (OSError, ValueError, EOFError):
        return None
    lines = head.split(b"\n")
    if len(head) == size:
        lines.pop()  # cut by the read
    return next((ln for ln in lines if ln.split(b"#", 1)[0].split()), None)


def _svmlight_shaped(line: bytes) -> bool:
    """Whether an SVMlight reader could take ``line``: a number, then ``key:value`` tokens."""
    label, *tokens = line.split(b"#", 1)[0].split()
    try:
        float(label)
    except ValueError:
        return False
    return all(b":" in t for t in tokens)


def add_query_file(p: argparse.ArgumentParser) -> None:
    """``--query-file``: LightGBM's group file of a DATA without qid (train, predict, evaluate)."""
    p.add_argument(
        "--query-file",
        metavar="FILE",
        help="the queries of a DATA without qid: LightGBM's group file, one query size per "
        "line, rows in order (default: DATA.query when it exists)",
    )


def add_model_and_data(p: argparse.ArgumentParser, data_help: str) -> None:
    """``MODEL DATA [--query-file FILE]`` of ``predict`` and ``evaluate``."""
    p.add_argument("model", metavar="MODEL", help="model file from 'rankboost train'")
    p.add_argument("data", metavar="DATA", help=data_help)
    add_query_file(p)


def add_rounds(p: argparse.ArgumentParser) -> None:
    """``--rounds N`` of ``predict`` and ``evaluate`` (:func:`rounds_to_use`)."""
    p.add_argument(
        "--rounds", type=int_at_least(1), help="use the first N rounds (default: best or all)"
    )


def rounds_to_use(model: RankBoostModel, rounds: int | None) -> int | None:
    """``--rounds N`` of ``predict`` and ``evaluate``: N, at most the model's (None: the best)."""
    if rounds is None:
        return model.best_iteration
    if rounds > model.n_rounds:
        raise CLIError(
            f"--rounds {rounds} exceeds the {model.n_rounds} rounds in the model; pass at most "
            f"{model.n_rounds}."
        )
    return rounds


def check_exists(path: str, what: str) -> None:
    """A missing input is said before anything is read or imported (errors are fast too)."""
    if not Path(path).exists():
        raise CLIError(f"{what} {path!r} does not exist; check the path.")


def load_data(
    path: str,
    n_features: int | None = None,
    what: str = "data file",
    query_file: Any = "auto",
    query_flag: str = "--query-file",
) -> Any:
    if Path(path).is_dir():
        raise CLIError(f"{what} {path!r} is a directory; pass an SVMlight/LETOR file.")
    refuse_other_format(path, what)
    from ..datasets import load_svmlight

    try:
        return load_svmlight(path, n_features=n_features, query_file=query_file or "auto")
    except FileNotFoundError as exc:
        if not Path(path).is_file():
            raise CLIError(f"{what} {path!r} does not exist; check the path.") from None
        raise CLIError(f"{_one_line(str(exc))} Check the {query_flag} path.") from None
    except ValueError as exc:
        msg = _one_line(str(exc))
        if query_file not in (None, "auto") and "already has 'qid:'" in msg:
            raise CLIError(
                f"{what} {path!r} has 'qid:' on its lines and {query_flag} {query_file!r} "
                f"gives its queries too; drop {query_flag} (the file's own query ids are "
                "used)."
            ) from None
        if is_letor_agg_file(path):  # LETOR 4.0 aggregation: NULL = not returned = abstain
            return load_agg(path, n_features, what)
        guess = guess_format(path)
        if guess is not None and not guess[0].startswith("an SVMlight"):
            raise CLIError(
                f"{what} {path!r} looks like {guess[0]}, not {SVMLIGHT_FORMAT}: {guess[1]}."
            ) from None
        if n_features is not None and ("n_features" in msg or "feature index" in msg):
            raise CLIError(
                f"{what} {path!r} has more features than the model's {n_features}: {msg} "
                "Use data with the model's features, or retrain on it."
            ) from None
        raise CLIError(f"cannot read {what} {path!r}: {msg} Expected {SVMLIGHT_FORMAT}.") from None


def query_ids(data: RankingDataset, path: str, query_flag: str = "--query-file") -> Any:
    """The query ids of ``data``; a file without any is one query, and the user is told so.

    ``query_flag`` is the option that gives this file's LightGBM group file (``--query-file``
    for the command's data, ``--valid-query-file`` for ``train --valid``).
    """
    import numpy as np

    if data.qid is not None:
        return data.qid
    sys.stderr.write(
        f"{PROG}: note: {path!r} has no qid: all rows form one query. Give the queries with "
        f"'qid:Q' on each line, or {query_flag} FILE (LightGBM's group file: one query size "
        f"per line; {Path(path).name}.query is found by itself).\n"
    )
    return np.zeros(data.n_samples, dtype=np.int64)  # one query on purpose: no OneQueryWarning


def is_letor_agg_file(path: str) -> bool:
    try:
        from ..fusion import is_letor_agg
    except ImportError:  # pragma: no cover - the fusion subpackage is optional
        return False
    return is_letor_agg(path)


def load_agg(path: str, n_features: int | None, what: str) -> RankingDataset:
    """A LETOR-agg file (``k:NULL`` values) as ranks, NaN for NULL (the rankers abstain)."""
    from ..fusion import read_letor_agg

    try:
        data = read_letor_agg(path).to_dataset()
    except ValueError as exc:
        raise CLIError(
            f"cannot read {what} {path!r} (LETOR aggregation format, found from its NULL "
            f"values): {_one_line(str(exc))}"
        ) from None
    if n_features is not None and data.n_features != n_features:
        raise CLIError(
            f"{what} {path!r} has {data.n_features} rankers (columns) but {n_features} are "
            "expected; use data with the model's (or training file's) columns."
        )
    return data


def load_model_file(path: str, command: str = "predict") -> Any:
    """The model ``command`` takes from ``path`` (:func:`rankboost.model_files.load`).

    A model of another kind is refused with the registry's hint (which command takes it); a
    missing, unreadable or damaged file, or one that is no model (data, runs, qrels given in
    its place), is a :class:`CLIError` saying what it is and what to pass.
    """
    from .. import model_files

    kinds = model_files.COMMANDS[command]
    writer = "rankboost train" if kinds[0] == "rankboost-model" else "rankboost fuse train"
    try:
        return model_files.load(path, command=command)
    except FileNotFoundError:
        if kinds[0] != "rankboost-model":
            raise  # the fusion reader's message
        raise CLIError(
            f"model file {path!r} does not exist; train one with 'rankboost train DATA -o {path}'."
        ) from None
    except IsADirectoryError:
        raise CLIError(f"model file {path!r} is a directory; pass a model file.") from None
    except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        kind = model_files.kind_of(path)
        if kind is not None and not kind.takes(kinds):
            raise CLIError(str(exc)) from None  # the refusal: which command takes it
        if kinds[0] != "rankboost-model":
            raise  # the fusion reader says what is wrong
        guess = guess_format(path) if kind is None else None
        if guess is not None and not guess[0].startswith(("a rankboost model", "a JSON")):
            hint = f": {guess[1]}" if guess[0].startswith("an SVMlight") else ""
            raise CLIError(
                f"model file {path!r} looks like {guess[0]}, not a model (the JSON file "
                f"'{writer}' writes){hint}."
            ) from None
        raise CLIError(
            f"cannot read model file {path!r}: {_one_line(str(exc))} "
            "Pass a model written by 'rankboost train' or RankBoostModel.save."
        ) from None


def load_model_and_data(args: argparse.Namespace) -> tuple[RankBoostModel, RankingDataset]:
    """The model and the data of ``predict`` and ``evaluate``, the data read at its width."""
    check_exists(args.data, "data file")
    model = load_model_file(args.model)
    data = load_data(args.data, n_features=model.n_features, query_file=args.query_file)
    check_width(data, model, args.data)
    return model, data


def check_width(data: RankingDataset, model: RankBoostModel, path: str) -> None:
    if data.n_features != model.n_features:  # pragma: no cover - load_svmlight pads
        raise CLIError(
            f"data file {path!r} has {data.n_features} features but the model expects "
            f"{model.n_features}; use data with the model's features."
        )


def write_file(path: str, text: str) -> None:
    from .._atomic import atomic_write_text

    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise CLIError(os_error_text(exc)) from None


def check_plot(path: str, option: str = "--plot") -> None:
    """The checks of a ``--plot FILE`` output of their own, before any work (status 2).

    matplotlib is installed (else the install line, :func:`rankboost._compat.install_hint`)
    and the file type is one matplotlib writes (its suffix; none = PNG); that the path is
    no input and can be written is :mod:`rankboost.cli._rules`' (every output's check).
    """
    require_option_package("matplotlib", option)
    check_plot_suffix(path, option)


def check_plot_suffix(path: str, option: str = "--plot") -> None:
    """Refuse (status 2) a picture file type matplotlib cannot write (none = PNG)."""
    suffix = Path(path).suffix[1:].lower()
    if not suffix:
        return
    from matplotlib.backend_bases import FigureCanvasBase

    kinds = FigureCanvasBase.get_supported_filetypes()
    if suffix not in kinds:
        example = Path(path).with_suffix(".png").name
        raise UsageError(
            f"{option} {path!r}: matplotlib cannot write .{suffix} files; end the name with "
            f"one of {', '.join('.' + k for k in sorted(kinds))} (e.g. {option} {example})."
        )


def save_plot(figure: Any, path: str, say: bool = True) -> None:
    """Save ``figure`` to ``path`` atomically (type from the suffix; none = PNG), then close it.

    ``say``: write ``wrote the plot to PATH`` on standard error.
    """
    from .._atomic import atomic_open

    kind = Path(path).suffix[1:].lower() or "png"
    try:
        with atomic_open(path) as fh:  # all of the picture or nothing, as every output
            figure.savefig(fh, dpi=120, format=kind)
    except OSError as exc:
        raise CLIError(os_error_text(exc)) from None
    finally:
        if "matplotlib.pyplot" in sys.modules:  # a pyplot figure stays open until closed
            sys.modules["matplotlib.pyplot"].close(figure)
    if say:
        sys.stderr.write(f"wrote the plot to {path}\n")


def pyplot_offscreen() -> None:
    """Draw without a window (the Agg backend) unless pyplot is imported already."""
    if "matplotlib.pyplot" not in sys.modules:
        import matplotlib

        matplotlib.use("Agg")
