"""Model files: which kinds there are, the one loader, the one writer.

Every model rankboost saves is one JSON object whose ``"format"`` field names its kind
(:data:`FORMATS`): ``"rankboost-model"`` (:class:`rankboost.RankBoostModel`, ``rankboost
train``), ``"rankboost-fusion"`` (:class:`rankboost.fusion.RankFusion`, ``rankboost fuse
train --family boost``) and ``"rankboost-fusion-linear"``
(:class:`rankboost.fusion.linear.LinearFusion`, ``--family linear``). A fusion file with a
``"selection"`` object is an :class:`rankboost.fusion.auto.AutoFusion` (``--family auto``,
the default of ``fuse train``) wrapping the family it chose, and reads as that family too.

* :func:`kind_of` works out a file's kind (:class:`FileKind`) without reading it as a model;
* :func:`load` reads any model file, or refuses one of another kind than ``expect`` (or than
  ``command`` takes, :data:`COMMANDS`) with a message that says which command takes it
  (:func:`refusal`, one table of hints: :data:`HINTS`);
* :func:`save` writes a model (``json.dumps(model.to_dict(), indent=1, allow_nan=False)``
  and a newline, atomically); every class's ``save`` calls it;
* :func:`read_json` reads a file's strict JSON with one clear error per problem.

Only the standard library is imported here (the classes are named by their import path and
imported when a file is loaded), so sniffing a file's kind stays light.

Examples
--------
>>> import os, tempfile
>>> import numpy as np
>>> import rankboost as rb
>>> from rankboost import model_files
>>> X = np.random.default_rng(0).normal(size=(20, 2))
>>> model = rb.train(X, rb.BipartiteFeedback(X[:, 0] > 0), 3)
>>> path = os.path.join(tempfile.mkdtemp(), "model.json")
>>> model_files.save(model, path)
>>> model_files.kind_of(path).format
'rankboost-model'
>>> model_files.load(path) == model
True
>>> model_files.load(path, command="fuse apply")
Traceback (most recent call last):
...
ValueError: '...model.json' is a ranking model from 'rankboost train', not a fusion model: ...
"""

from __future__ import annotations

import importlib
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ._atomic import atomic_write_text
from ._tables import by_name

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "AUTO",
    "COMMANDS",
    "FORMATS",
    "HINTS",
    "FileKind",
    "ModelFormat",
    "Saved",
    "kind_of",
    "load",
    "read_json",
    "refusal",
    "save",
]


@dataclass(frozen=True)
class ModelFormat:
    """One kind of model file.

    Attributes
    ----------
    name : str
        The file's ``"format"`` field (``"selection"`` for :data:`AUTO`).
    cls : str
        The class that reads it, ``"module:Class"`` (imported when a file is loaded).
    what : str
        What it is, for messages ("a linear fusion model").
    written_by : str
        The command that writes it.
    loader : str
        The Python call that reads it.
    file_word, kind_word : str
        How the reader's errors name the file ("fusion model file") and the kind ("fusion
        model": "is it a fusion model?").
    missing : str
        The error for a missing file (``{path}``), "" for :func:`read_json`'s.
    looks_like, as_data : str
        What a command that reads data says such a file looks like, and what to do with it
        (``rankboost predict MODEL DATA`` given two models).
    """

    name: str
    cls: str
    what: str
    written_by: str
    loader: str
    file_word: str = "fusion model file"
    kind_word: str = "fusion model"
    missing: str = "{path}: no such file"
    looks_like: str = "a fusion model (JSON)"
    as_data: str = "it fuses runs: 'rankboost fuse apply MODEL --runs'"


#: The kinds of model files, by their ``"format"`` field.
FORMATS: dict[str, ModelFormat] = by_name(
    (
        ModelFormat(
            "rankboost-model",
            "rankboost.model:RankBoostModel",
            "a ranking model",
            "rankboost train",
            "rankboost.load_model",
            file_word="model file",
            kind_word="rankboost model",
            missing="",
            looks_like="a rankboost model (JSON)",
            as_data="it is the MODEL of 'rankboost predict MODEL DATA' (check the argument order)",
        ),
        ModelFormat(
            "rankboost-fusion",
            "rankboost.fusion.learned:RankFusion",
            "a fusion model (steps on the runs' ranks)",
            "rankboost fuse train --family boost",
            "rankboost.fusion.RankFusion.load",
        ),
        ModelFormat(
            "rankboost-fusion-linear",
            "rankboost.fusion.linear:LinearFusion",
            "a linear fusion model (a weighted sum of normalised scores)",
            "rankboost fuse train --family linear",
            "rankboost.fusion.linear.LinearFusion.load",
            kind_word="linear fusion model",
        ),
    )
)
#: A fusion file with a ``"selection"`` object: the family ``--family auto`` chose.
AUTO = ModelFormat(
    "selection",
    "rankboost.fusion.auto:AutoFusion",
    "an auto fusion model (the family --family auto chose)",
    "rankboost fuse train",
    "rankboost.fusion.auto.AutoFusion.load",
)
_FUSION = ("rankboost-fusion", "rankboost-fusion-linear")

#: Command -> the kinds it takes (``"selection"``: an auto model as itself, not as the
#: family it chose).
COMMANDS: dict[str, tuple[str, ...]] = {
    "predict": ("rankboost-model",),
    "evaluate": ("rankboost-model",),
    "info": ("rankboost-model", *_FUSION, "selection"),
    "info --plot": ("rankboost-model", "rankboost-fusion"),
    "export": ("rankboost-model", "rankboost-fusion"),
    "fuse apply": _FUSION,
    "fuse evaluate": _FUSION,
    "fuse export": ("rankboost-fusion-linear",),
}

#: What to say when ``command`` is given a file of another kind: ``(command, kind)`` ->
#: message; ``kind`` is a format, or ``"auto:<format>"`` for an auto model (which falls back
#: to its format's message). ``{name}``: the path quoted, ``{path}``: as given,
#: ``{family}``: the family --family auto chose, ``{engines}``: the ``fuse export`` command
#: of the engines that serve the model's normaliser.
HINTS: dict[tuple[str, str], str] = {
    ("fuse export", "auto:rankboost-fusion"): (
        "{name} is a model of 'rankboost fuse train --family auto', which chose {family} "
        "(steps on the runs' ranks) for these runs; no engine's hybrid query computes it. "
        "'fuse export' writes a weighted sum of scores: train one with 'rankboost fuse train "
        "--family linear' on the same runs ('rankboost info {path}' shows how each family "
        "scored in the choice)."
    ),
    ("fuse export", "rankboost-fusion"): (
        "{name} is a fusion model of 'rankboost fuse train' (--family boost: steps on the "
        "runs' ranks), which no engine's hybrid query computes: 'fuse export' writes a model "
        "of 'rankboost fuse train --family linear' (train one); this one is written for an "
        "LTR plugin by 'rankboost export {path} --format es-xgboost -o OUT'."
    ),
    ("fuse export", "rankboost-model"): (
        "{name} is a ranking model of 'rankboost train', not a fusion model: write it for an "
        "LTR plugin with 'rankboost export {path} --format es-xgboost -o OUT'; 'fuse export' "
        "writes a model of 'rankboost fuse train --family linear'."
    ),
    **{
        (command, "rankboost-model"): (
            "{name} is a ranking model from 'rankboost train', not a fusion model: score data "
            "with it by 'rankboost predict {path} DATA'; 'fuse' needs a model from "
            "'rankboost fuse train'."
        )
        for command in ("fuse apply", "fuse evaluate")
    },
    **{
        (command, kind): (
            f"{{name}} is a fusion model from 'rankboost fuse train{family}', not a ranking "
            "model: fuse TREC runs with it by 'rankboost fuse apply {path} --runs RUN ...'"
            f"{also}; a model for this command comes from 'rankboost train'."
        )
        for command in ("predict", "evaluate")
        for kind, family, also in (
            ("rankboost-fusion", "", ""),
            (
                "rankboost-fusion-linear",
                " --family linear",
                " or export it by 'rankboost fuse export'",
            ),
        )  # fmt: skip
    },
    ("export", "rankboost-fusion-linear"): (
        "{name} is a linear fusion model of 'rankboost fuse train --family linear' (a "
        "weighted sum of normalised scores, no boosting rounds to export): write it as a "
        "search engine's hybrid query with {engines}."
    ),
    ("info --plot", "rankboost-fusion-linear"): (
        "{name} is a linear fusion model, which has no boosting rounds to plot; leave out --plot."
    ),
}


@dataclass(frozen=True)
class FileKind:
    """What :func:`kind_of` finds in a model file.

    Attributes
    ----------
    format : str
        A key of :data:`FORMATS`.
    auto : bool
        The file has a ``"selection"`` object (``fuse train --family auto``).
    family : str or None
        The family ``--family auto`` chose (None when not said).
    normalizer : str or None
        A linear model's ``normalizer`` parameter (None when not said).
    """

    format: str
    auto: bool = False
    family: str | None = None
    normalizer: str | None = None

    @property
    def entry(self) -> ModelFormat:
        """The :data:`FORMATS` row, or :data:`AUTO` for an auto model."""
        return AUTO if self.auto else FORMATS[self.format]

    def takes(self, kinds: tuple[str, ...]) -> bool:
        """Whether a reader of ``kinds`` (formats, or ``"selection"``) takes this file."""
        return self.format in kinds or (self.auto and AUTO.name in kinds)


def kind_of(source: str | os.PathLike[str] | Any) -> FileKind | None:
    """The kind of a model file (a path, or its parsed JSON), or None if it is none.

    None for a file that cannot be read, is not JSON, or has no ``"format"`` this rankboost
    knows; the loader then says what is wrong with it.

    Examples
    --------
    >>> from rankboost.model_files import kind_of
    >>> kind_of({"format": "rankboost-fusion-linear", "params": {"normalizer": "dbsf"}})
    FileKind(format='rankboost-fusion-linear', auto=False, family=None, normalizer='dbsf')
    >>> kind_of({"format": "rankboost-fusion", "selection": {"family": "boost"}}).auto
    True
    >>> kind_of({"format": "xgboost"}) is None
    True
    """
    data: Any = source
    if isinstance(source, (str, os.PathLike)):
        try:
            data = json.loads(Path(source).read_bytes().decode("utf-8"))
        except (OSError, ValueError, RecursionError):
            return None  # the loader reports the problem
    fmt = data.get("format") if isinstance(data, Mapping) else None
    if not isinstance(fmt, str) or fmt not in FORMATS:  # a list or a dict is no format
        return None
    sel = data.get("selection")
    params = data.get("params")
    family = sel.get("family") if isinstance(sel, Mapping) else None
    norm = params.get("normalizer") if isinstance(params, Mapping) else None
    return FileKind(
        format=fmt,
        auto=isinstance(sel, Mapping),
        family=family if isinstance(family, str) else None,
        normalizer=norm if isinstance(norm, str) else None,
    )


def refusal(path: str | os.PathLike[str], kind: FileKind, command: str) -> str:
    """What ``command`` says when given ``path``, a model of ``kind`` it does not take.

    The :data:`HINTS` message, else one built from :data:`FORMATS` and :data:`COMMANDS`.

    Examples
    --------
    >>> from rankboost.model_files import FileKind, refusal
    >>> print(refusal("lin.json", FileKind("rankboost-fusion-linear", normalizer="dbsf"),
    ...               "export"))  # doctest: +NORMALIZE_WHITESPACE
    'lin.json' is a linear fusion model of 'rankboost fuse train --family linear' (a weighted
    sum of normalised scores, no boosting rounds to export): write it as a search engine's
    hybrid query with 'rankboost fuse export lin.json --engine qdrant -o OUT --vectors
    VECTORS'.
    """
    text = HINTS.get((command, f"auto:{kind.format}")) if kind.auto else None
    text = text or HINTS.get((command, kind.format))
    if text is None:
        entry = kind.entry
        takers = [c for c, kinds in COMMANDS.items() if kind.takes(kinds) and "--" not in c]
        text = (
            f"{{name}} is {entry.what} of '{entry.written_by}', which 'rankboost {command}' "
            f"does not take; it goes to {', '.join(f'rankboost {c}' for c in takers)}."
        )
    fields = {"name": repr(str(path)), "path": str(path), "family": kind.family or "?"}
    if "{engines}" in text:
        fields["engines"] = _export_command(str(path), kind.normalizer)
    return text.format(**fields)


def _export_command(path: str, normalizer: str | None) -> str:
    """``'rankboost fuse export PATH --engine E -o OUT' (or --engine F)`` for the engines.

    The engines that serve ``normalizer`` (exactly, or approximately when asked), from
    :data:`rankboost.fusion.engines.ENGINES`; the ones with a condition on the weights are
    left out.
    """
    from .fusion.engines import ENGINES  # this error path only

    engines = [
        e
        for e in ENGINES.values()
        if (s := e.normalizers.get(normalizer or "")) is not None and s.when is None
    ] or [ENGINES["elasticsearch"]]
    first, *others = (f"--engine {e.name} -o OUT {e.asked()}".strip() for e in engines)
    more = f" (or {', '.join(o.replace(' -o OUT', '') for o in others)})" if others else ""
    return f"'rankboost fuse export {path} {first}'{more}"


def load(
    path: str | os.PathLike[str],
    *,
    expect: str | tuple[str, ...] | None = None,
    command: str | None = None,
) -> Any:
    """Read a model file of any kind (or of the kinds ``expect`` or ``command`` takes).

    Parameters
    ----------
    path : path-like
        The JSON file.
    expect : str or tuple of str, default=None
        The kinds to take: keys of :data:`FORMATS` (an auto model of that format reads as
        that format's class), or ``"selection"`` (an auto model, as
        :class:`~rankboost.fusion.auto.AutoFusion`). None: any kind, as its own class.
    command : str, default=None
        A key of :data:`COMMANDS`: take what it takes, and refuse another kind with the
        command's hint (:func:`refusal`).

    Returns
    -------
    RankBoostModel, RankFusion, LinearFusion or AutoFusion

    Raises
    ------
    FileNotFoundError, IsADirectoryError
        If ``path`` does not exist or is a folder.
    ValueError
        If the file is not valid JSON, not a model of the kinds taken (the message names the
        command that takes it), malformed, or of a newer format version.
    """
    kinds: tuple[str, ...] = ()
    if command is not None:
        kinds = COMMANDS[command]
    elif expect is not None:
        kinds = (expect,) if isinstance(expect, str) else tuple(expect)
    first = FORMATS.get(kinds[0], AUTO) if kinds else FORMATS["rankboost-model"]
    if first.missing and not Path(path).exists():
        raise FileNotFoundError(first.missing.format(path=path))
    data = read_json(path, first.file_word, first.kind_word)
    kind = kind_of(data)
    if kind is None:
        return _class(first).from_dict(data)  # its reader says what is wrong
    if kinds and not kind.takes(kinds):
        if command is not None:
            raise ValueError(refusal(path, kind, command))
        return _other_kind(first, data, kind)
    entry = AUTO if kind.auto and (not kinds or AUTO.name in kinds) else FORMATS[kind.format]
    return _class(entry).from_dict(data)


def _other_kind(expected: ModelFormat, data: Any, kind: FileKind) -> Any:
    """The expected class's reader on a file of another kind: its error, and what reads it."""
    try:
        return _class(expected).from_dict(data)
    except ValueError as exc:
        other = kind.entry
        raise ValueError(
            f"{exc} It is {other.what} of '{other.written_by}': read it with {other.loader}."
        ) from None


def _class(entry: ModelFormat) -> Any:
    module, name = entry.cls.split(":")
    return getattr(importlib.import_module(module), name)


def save(model: Any, path: str | os.PathLike[str]) -> None:
    """Write ``model.to_dict()`` as JSON, atomically (temp file + rename).

    The text is ``json.dumps(model.to_dict(), indent=1, allow_nan=False)`` and a newline:
    the bytes every model's ``save`` writes.
    """
    atomic_write_text(path, json.dumps(model.to_dict(), indent=1, allow_nan=False) + "\n")


class Saved:
    """``save`` and ``load`` of a model class, through :func:`save` and :func:`load`.

    ``_FORMAT``: the format name of the class's files (:data:`FORMATS`).
    """

    _FORMAT: ClassVar[str]

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model as versioned JSON, atomically (:func:`rankboost.model_files.save`)."""
        save(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Self:
        """Load a model written by :meth:`save`.

        Raises ``FileNotFoundError`` for a missing file and ``ValueError`` for one that is
        not of this kind (a model of another kind: the message says what reads it).
        """
        model: Self = load(path, expect=cls._FORMAT)
        return model


# ------------------------------------------------------------------ strict JSON ----------
def _reject_constant(name: str) -> Any:
    raise ValueError(
        f"the non-standard JSON constant {name} (rankboost writes non-finite numbers as the "
        'strings "nan", "inf" and "-inf")'
    )


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:30]} is beyond the float64 range")
    return value


def read_json(
    path: str | os.PathLike[str], what: str = "model file", kind: str = "rankboost model"
) -> Any:
    """The strict JSON content of a model file; every problem is one clear error.

    Standard JSON only: the constants ``NaN`` / ``Infinity`` and numbers beyond the float64
    range (``1e999``) are refused, as is nesting too deep for the parser.

    Raises
    ------
    FileNotFoundError, IsADirectoryError
        If ``path`` does not exist or is a folder (the message names it).
    ValueError
        If the file is not UTF-8 or not valid JSON.
    """
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"{what} {str(p)!r} is a directory; pass the path of a file.")
    if not p.exists():
        raise FileNotFoundError(f"{what} {str(p)!r} does not exist.")
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path} is not valid JSON (not UTF-8 text: {exc.reason} at byte {exc.start}); is "
            f"it a {kind}?"
        ) from None
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except RecursionError:
        raise ValueError(
            f"{path} is not valid JSON for rankboost: its lists or objects are nested too "
            f"deeply; is it a {kind}?"
        ) from None
    except ValueError as exc:  # json.JSONDecodeError, and the two hooks above
        raise ValueError(f"{path} is not valid JSON ({exc}); is it a {kind}?") from None
