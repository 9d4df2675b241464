"""Reading and writing the files of a ``rankboost`` command, with errors that say what to do.

Package-internal: :mod:`rankboost.cli` and its command handlers use these; a missing or
unreadable input is a :class:`~rankboost._cli_common.CLIError` naming the file and the fix.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._cli_common import PROG, CLIError, os_error_text
from ._cli_common import one_line as _one_line

if TYPE_CHECKING:
    from .datasets import RankingDataset
    from .model import RankBoostModel

__all__ = [
    "check_exists",
    "check_width",
    "load_data",
    "load_model_file",
    "query_ids",
    "write_file",
]


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
    from .datasets import load_svmlight

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
        if looks_like_trec_run(path):
            raise CLIError(
                f"{what} {path!r} is a TREC run (qid Q0 docid rank score tag), not SVMlight/"
                "LETOR features; to learn from runs use 'rankboost fuse train --runs RUN ... "
                "--qrels QRELS'."
            ) from None
        if n_features is not None and ("n_features" in msg or "feature index" in msg):
            raise CLIError(
                f"{what} {path!r} has more features than the model's {n_features}: {msg} "
                "Use data with the model's features, or retrain on it."
            ) from None
        raise CLIError(f"cannot read {what} {path!r}: {msg}") from None


def looks_like_trec_run(path: str) -> bool:
    """Whether the first data line of ``path`` reads ``qid Q0 docid rank score tag``."""
    from .datasets._io import open_binary

    try:
        with open_binary(path) as fh:
            for raw in fh:
                parts = raw.split()
                if parts and not parts[0].startswith(b"#"):
                    return len(parts) == 6 and parts[1].upper() == b"Q0"
    except (OSError, ValueError):
        pass
    return False


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
        from .fusion import is_letor_agg
    except ImportError:  # pragma: no cover - the fusion subpackage is optional
        return False
    return is_letor_agg(path)


def load_agg(path: str, n_features: int | None, what: str) -> RankingDataset:
    """A LETOR-agg file (``k:NULL`` values) as ranks, NaN for NULL (the rankers abstain)."""
    from .fusion import read_letor_agg

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


def load_model_file(path: str) -> RankBoostModel:
    from .model import load_model

    try:
        return load_model(path)
    except FileNotFoundError:
        raise CLIError(
            f"model file {path!r} does not exist; train one with 'rankboost train DATA -o {path}'."
        ) from None
    except IsADirectoryError:
        raise CLIError(f"model file {path!r} is a directory; pass a model file.") from None
    except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        from .fusion._info import file_format  # this error path only

        kind = file_format(path)
        if kind is not None and kind.startswith("rankboost-fusion"):
            family = " --family linear" if kind.endswith("-linear") else ""
            raise CLIError(
                f"{path!r} is a fusion model from 'rankboost fuse train{family}', not a ranking "
                f"model: fuse TREC runs with it by 'rankboost fuse apply {path} --runs RUN ...'"
                f"{' or export it by ' + repr('rankboost fuse export') if family else ''}; a model "
                "for this command comes from 'rankboost train'."
            ) from None
        raise CLIError(
            f"cannot read model file {path!r}: {_one_line(str(exc))} "
            "Pass a model written by 'rankboost train' or RankBoostModel.save."
        ) from None


def check_width(data: RankingDataset, model: RankBoostModel, path: str) -> None:
    if data.n_features != model.n_features:  # pragma: no cover - load_svmlight pads
        raise CLIError(
            f"data file {path!r} has {data.n_features} features but the model expects "
            f"{model.n_features}; use data with the model's features."
        )


def write_file(path: str, text: str) -> None:
    from ._atomic import atomic_write_text

    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise CLIError(os_error_text(exc)) from None
