"""Serve what you train: write a model for XGBoost, LightGBM, ONNX, RankLib and search engines.

A RankBoost model ``H(x) = sum_t alpha_t h_t(x)`` is additive in one-feature step functions
(:meth:`rankboost.RankBoostModel.step_functions`), so it is exactly a forest of one-feature
trees, which every serving stack reads. :func:`export_model` (also
:meth:`rankboost.RankBoostModel.export`, :meth:`rankboost.RankBoostRanker.export`,
:meth:`rankboost.RankFusion.export` and ``rankboost export``) writes one of
:data:`FORMATS`:

* ``xgboost``: XGBoost JSON model, ``xgboost.Booster(model_file=path)``;
* ``xgboost-dump``: XGBoost's JSON dump (the ``Booster.get_dump`` layout, feature names);
* ``lightgbm``: LightGBM text model, ``lightgbm.Booster(model_file=path)``;
* ``onnx``: ONNX ``TreeEnsembleRegressor`` (onnxruntime, Vespa, ...; needs ``onnx``);
* ``ranklib``: RankLib RankBoost file, ``java -jar RankLib.jar -load path``;
* ``es-xgboost``: Elasticsearch/OpenSearch LTR ``_createmodel`` body, ``model/xgboost+json``;
* ``es-ranklib``: Elasticsearch/OpenSearch LTR ``_createmodel`` body, ``model/ranklib``;
* ``solr``: Solr LTR ``MultipleAdditiveTreesModel`` (``PUT .../schema/model-store``).

(``elasticsearch`` and ``opensearch`` are aliases of ``es-xgboost``.)

How faithful each format is (docs/serving.md has the details and the tests behind them):
rankboost compares every feature as float32 (training, ``predict`` and the exports share
that one numeric domain), so every export takes ``predict``'s branch at every split for every
input, float64 or float32:

* LightGBM and ONNX with ``dtype="float64"`` compare the float64 ``x``: each split is the
  largest float64 ``T`` whose float32 rounding is at most the float32 split point, so
  ``x <= T`` exactly when ``float32(x)`` is. LightGBM's scores equal ``predict`` bit for bit
  (one tree per feature, added in the same order), ONNX's up to the final float32 rounding.
  LightGBM reads ``|x| <= 1e-35`` as 0: export warns (:class:`ExportWarning`) when a split
  separates such values from 0.
* XGBoost, ONNX (float32), Elasticsearch/OpenSearch, Solr and RankLib read ``float32(x)``;
  their float32 split points decide exactly as ``predict`` does, with leaves rounded to
  float32 and added in float32:
  ``|score - predict(x)| <= (T + 2) 2^-24 sum_t |w_t(x)|`` for ``T`` trees whose leaves
  ``w_t(x)`` the row reaches.
* RankLib, ``es-ranklib`` and Solr have no missing values (they read a missing feature as
  0): they are faithful only when ``H_i(0) == H_i(NaN)`` for every used feature; otherwise
  export raises, unless ``missing_as_zero=True`` asks for that approximation.

Examples
--------
>>> import json
>>> import numpy as np
>>> import rankboost as rb
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(200, 3))
>>> model = rb.train(X, rb.BipartiteFeedback(X[:, 0] + rng.normal(size=200) > 0), 20,
...                  feature_names=["bm25", "pagerank", "age"])
>>> booster = json.loads(export_bytes(model, "xgboost"))
>>> booster["learner"]["gradient_booster"]["model"]["gbtree_model_param"]["num_trees"]
'3'
>>> print(export_bytes(model, "ranklib", missing_as_zero=True).decode()[:42])
## RankBoost
## Iteration = 20
## No. of ...
>>> export_model(model, "model.lgb.txt", "lightgbm")  # lightgbm.Booster(model_file=...)
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._atomic import atomic_write_bytes
from ..description import Target
from ..model import RankBoostModel
from ._search import ExportWarning

__all__ = ["ALIASES", "FORMATS", "ExportWarning", "export_bytes", "export_model", "export_targets"]

#: The export formats and what reads them.
FORMATS: dict[str, str] = {
    "xgboost": "XGBoost JSON model (xgboost.Booster(model_file=...))",
    "xgboost-dump": "XGBoost JSON dump with feature names (Booster.get_dump layout)",
    "lightgbm": "LightGBM text model (lightgbm.Booster(model_file=...))",
    "onnx": "ONNX TreeEnsembleRegressor (onnxruntime, Vespa; needs rankboost[onnx])",
    "ranklib": "RankLib RankBoost model file (java -jar RankLib.jar -load ...)",
    "es-xgboost": "Elasticsearch/OpenSearch LTR _createmodel body, model/xgboost+json",
    "es-ranklib": "Elasticsearch/OpenSearch LTR _createmodel body, model/ranklib",
    "solr": "Solr LTR MultipleAdditiveTreesModel (PUT .../schema/model-store)",
}
#: Other names accepted for a format.
ALIASES = {"elasticsearch": "es-xgboost", "opensearch": "es-xgboost"}
TREES = ("feature", "round")
DTYPES = ("float32", "float64")
#: Formats that read a missing feature as 0 (no abstention).
NO_MISSING = ("ranklib", "es-ranklib", "solr")
#: Formats that refer to features by name.
NEEDS_NAMES = ("es-xgboost", "solr")
_XGBOOST_FORBIDDEN = ("[", "]", "<")
#: Formats whose leaves are float32.
FLOAT32_VALUES = ("xgboost", "xgboost-dump", "onnx", "es-xgboost", "solr")
FLT_MAX = float(np.finfo(np.float32).max)


def _check_format(format: Any) -> str:
    if not isinstance(format, str):
        raise TypeError(f"format must be a str, one of {sorted(FORMATS)}; got {format!r}.")
    key = ALIASES.get(format.lower(), format.lower())
    if key not in FORMATS:
        raise ValueError(
            f"unknown export format {format!r}; the formats are {', '.join(FORMATS)} "
            f"(and the aliases {', '.join(ALIASES)})."
        )
    return key


def _check_n_rounds(model: RankBoostModel, n_rounds: Any) -> int:
    if n_rounds is None:
        return model.n_rounds
    if isinstance(n_rounds, bool) or not isinstance(n_rounds, (int, np.integer)):
        raise TypeError(f"n_rounds must be an int or None; got {n_rounds!r}.")
    if not 0 <= n_rounds <= model.n_rounds:
        raise ValueError(
            f"n_rounds must be between 0 and {model.n_rounds} (the rounds in the model); got "
            f"{n_rounds}."
        )
    return int(n_rounds)


def _check_names(model: RankBoostModel, names: Any, format: str) -> list[str] | None:
    if names is None:
        names = model.feature_names
    elif isinstance(names, str) or not isinstance(names, Sequence):
        raise TypeError(f"feature_names must be a list of str; got {names!r}.")
    if names is None:
        if format in NEEDS_NAMES:
            raise ValueError(
                f"format {format!r} refers to features by name, and the model has no feature "
                "names: pass feature_names=[...] (--feature-names), one per column, the names "
                "of the features in your feature store."
            )
        return None
    names = list(names)
    if len(names) != model.n_features or not all(isinstance(s, str) and s for s in names):
        raise ValueError(
            f"feature_names must be {model.n_features} non-empty strings, one per feature of "
            f"the model; got {len(names)}: {names[:5]!r}{'...' if len(names) > 5 else ''}."
        )
    seen: dict[str, int] = {}
    for i, s in enumerate(names):
        if s in seen:
            raise ValueError(f"feature_names must be unique; {s!r} names features {seen[s]}, {i}.")
        seen[s] = i
    if format in ("es-xgboost", "es-ranklib", "solr"):
        for i, s in enumerate(names):
            if any(ord(c) < 32 or c == "\x7f" for c in s):
                raise ValueError(
                    f"feature name {s!r} (feature {i}) holds a control character (newline, "
                    "tab, ...), which a search engine's feature store cannot name a feature "
                    "by. Pass feature_names=[...] to export."
                )
    if format in ("xgboost", "xgboost-dump", "es-xgboost"):
        for i, s in enumerate(names):
            if any(c in s for c in _XGBOOST_FORBIDDEN):
                raise ValueError(
                    f"XGBoost cannot hold feature name {s!r} (feature {i}): its names have none "
                    "of [ ] <. Pass feature_names=[...] to export."
                )
    return names


def _check_finite(model: RankBoostModel, n_rounds: int, format: str) -> None:
    alpha = model.rounds.alpha[:n_rounds]
    bad = np.flatnonzero(~np.isfinite(alpha))
    if bad.size:
        t = int(bad[0])
        raise ValueError(
            f"round {t} has alpha = {float(alpha[t])!r}; a non-finite weight cannot be "
            f"exported (export the rounds before it with n_rounds={t})."
        )
    limit = FLT_MAX if format in FLOAT32_VALUES else math.inf
    for i, sf in model.step_functions(n_rounds).items():
        top = max(float(np.max(np.abs(sf.values))), abs(sf.missing))
        if not top < limit:
            raise ValueError(
                f"the function of feature {i} reaches {top!r}, beyond float32, which format "
                f"{format!r} stores its leaves in; cannot export."
                if math.isfinite(top)
                else f"the function of feature {i} overflows to infinity; cannot export."
            )


def export_bytes(
    model: RankBoostModel,
    format: str,
    *,
    n_rounds: int | None = None,
    trees: str = "feature",
    feature_names: Sequence[str] | None = None,
    name: str = "rankboost",
    missing_as_zero: bool = False,
    dtype: str = "float32",
    store: str | None = None,
) -> bytes:
    """The content of the file :func:`export_model` writes.

    Parameters
    ----------
    model : RankBoostModel
        The model to export.
    format : str
        One of :data:`FORMATS` (or :data:`ALIASES`), case-insensitive.
    n_rounds : int, default=None
        Export the first ``n_rounds`` rounds (None = all, as ``decision_function``; pass
        ``model.best_iteration`` for the early-stopping choice).
    trees : {"feature", "round"}, default="feature"
        One tree per used feature (compact; the exact ``H_i`` of each feature), or one tree
        per round (its partial sums are the staged scores: XGBoost's ``iteration_range``,
        LightGBM's ``num_iteration``). RankLib files always hold one ranker per round.
    feature_names : list of str, default=None
        Names of the model's features (None = ``model.feature_names``). Needed by
        ``es-xgboost`` and ``solr``, which refer to features by name: the names of the
        features in the feature store.
    name : str, default="rankboost"
        The model's name in ``es-xgboost``, ``es-ranklib`` and ``solr``.
    missing_as_zero : bool, default=False
        ``ranklib``, ``es-ranklib`` and ``solr`` only: write the model even when a feature's
        value where it is missing differs from its value at 0 (those consumers read a
        missing feature as 0).
    dtype : {"float32", "float64"}, default="float32"
        ``onnx`` only: the input and split precision.
    store : str, default=None
        ``solr`` only: the feature store (None = Solr's default store).

    Returns
    -------
    content : bytes
        UTF-8 text, or the serialized ONNX protobuf.

    Raises
    ------
    TypeError
        If ``model`` is not a RankBoostModel or an option has the wrong type.
    ValueError
        For an unknown format or option value, feature names the format needs but the model
        lacks (or cannot hold), a non-finite alpha, or a model that a consumer without
        missing values would change (see ``missing_as_zero``).
    ImportError
        For ``onnx`` without the ``onnx`` package.

    Examples
    --------
    >>> import numpy as np
    >>> from rankboost.model import RankBoostModel
    >>> model = RankBoostModel.from_arrays(
    ...     {"feature": [0, 1], "kind": [0, 0], "threshold": [0.5, 2.0],
    ...      "default": [0.0, 0.0], "alpha": [1.0, 0.25]},
    ...     {"r": [0.5, 0.2], "z": [0.8, 0.9], "rloss": [0.2, 0.1], "bound": [0.8, 0.72]},
    ...     n_features=2,
    ... )
    >>> print(export_bytes(model, "ranklib").decode())
    ## RankBoost
    ## Iteration = 2
    ## No. of threshold candidates = 0
    1:0.5:1.0 2:2.0:0.25
    >>> text = export_bytes(model, "lightgbm").decode()
    >>> [line for line in text.splitlines() if line.startswith(("threshold", "leaf_value"))]
    ... # doctest: +NORMALIZE_WHITESPACE
    ['threshold=0.5000000298023224', 'leaf_value=0.0 1.0',
     'threshold=2.0000001192092896', 'leaf_value=0.0 0.25']

    (LightGBM compares the float64 ``x``: ``x <= 0.5000000298023224`` exactly when
    ``float32(x) <= 0.5``.)
    """
    if not isinstance(model, RankBoostModel):
        hint = (
            " (a fitted estimator exports with its own .export method)"
            if hasattr(model, "fit")
            else ""
        )
        raise TypeError(f"export needs a RankBoostModel; got {type(model).__name__}{hint}.")
    fmt = _check_format(format)
    k = _check_n_rounds(model, n_rounds)
    if trees not in TREES:
        raise ValueError(f"trees must be one of {TREES}; got {trees!r}.")
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}; got {dtype!r}.")
    if dtype != "float32" and fmt != "onnx":
        raise ValueError(f"dtype={dtype!r} applies to format 'onnx' only; got format {fmt!r}.")
    if not isinstance(missing_as_zero, (bool, np.bool_)):
        raise TypeError(f"missing_as_zero must be a bool; got {missing_as_zero!r}.")
    if missing_as_zero and fmt not in NO_MISSING:
        raise ValueError(
            "missing_as_zero applies to the formats without missing values "
            f"({', '.join(NO_MISSING)}); format {fmt!r} keeps NaN as 'abstain'."
        )
    if store is not None and fmt != "solr":
        raise ValueError(f"store applies to format 'solr' only; got format {fmt!r}.")
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty str; got {name!r}.")
    if model.n_features < 1:
        raise ValueError("the model has no features; there is nothing to export.")
    names = _check_names(model, feature_names, fmt)
    _check_finite(model, k, fmt)
    if fmt in NO_MISSING and not missing_as_zero:
        from ._ranklib import check_missing_as_zero

        consumer = {"ranklib": "RankLib", "es-ranklib": "RankLib (model/ranklib)"}
        check_missing_as_zero(model, k, consumer.get(fmt, "Solr LTR"), names)
    return _serialize(model, fmt, k, trees, names, name, dtype, store)


def _serialize(
    model: RankBoostModel,
    fmt: str,
    k: int,
    trees: str,
    names: list[str] | None,
    name: str,
    dtype: str,
    store: str | None,
) -> bytes:
    if fmt == "xgboost":
        from ._xgboost import model_json

        # a split on missingness has the condition -inf, which XGBoost reads as -Infinity
        doc: Any = model_json(model, k, trees=trees, feature_names=names)
        # UTF-8, not \uXXXX escapes: XGBoost's JSON reader keeps escapes undecoded in names
        return json.dumps(doc, allow_nan=True, ensure_ascii=False).encode()
    if fmt == "xgboost-dump":
        from ._xgboost import dump

        doc = dump(model, k, trees=trees, feature_names=names)
        return (json.dumps(doc, indent=2, allow_nan=False, ensure_ascii=False) + "\n").encode()
    if fmt == "lightgbm":
        from ._lightgbm import model_text

        return model_text(model, k, trees=trees, feature_names=names).encode()
    if fmt == "onnx":
        from ._onnx import model_bytes

        return model_bytes(model, k, trees=trees, feature_names=names, dtype=dtype)
    if fmt == "ranklib":
        from ._ranklib import model_text as ranklib_text

        return ranklib_text(model, k).encode()
    from ._search import es_ranklib_body, es_xgboost_body, solr_model

    if fmt == "es-xgboost":
        assert names is not None  # checked: the format needs names
        doc = es_xgboost_body(model, k, trees=trees, feature_names=names, name=name)
    elif fmt == "es-ranklib":
        doc = es_ranklib_body(model, k, name=name)
    else:
        assert names is not None
        doc = solr_model(model, k, trees=trees, feature_names=names, name=name, store=store)
    return (json.dumps(doc, indent=2, allow_nan=False) + "\n").encode()


def export_model(
    model: RankBoostModel, path: str | os.PathLike[str], format: str, **options: Any
) -> None:
    """Write ``model`` to ``path`` in ``format``, atomically (temp file + rename).

    Parameters
    ----------
    model : RankBoostModel
        The model to export.
    path : str or path-like
        The file to write (replaced only once the whole content is written).
    format : str
        One of :data:`FORMATS` (or :data:`ALIASES`).
    **options
        ``n_rounds``, ``trees``, ``feature_names``, ``name``, ``missing_as_zero``,
        ``dtype``, ``store``: see :func:`export_bytes`.

    Raises
    ------
    TypeError, ValueError, ImportError
        See :func:`export_bytes`; nothing is written then.

    Examples
    --------
    >>> import json
    >>> from pathlib import Path
    >>> from rankboost.model import RankBoostModel
    >>> model = RankBoostModel.from_arrays(
    ...     {"feature": [0], "kind": [0], "threshold": [0.5], "default": [1.0],
    ...      "alpha": [2.0]},
    ...     {"r": [0.5], "z": [0.8], "rloss": [0.2], "bound": [0.8]},
    ...     n_features=1, feature_names=["bm25"],
    ... )
    >>> export_model(model, "dump.json", "xgboost-dump")
    >>> tree = json.loads(Path("dump.json").read_text())[0]
    >>> tree["split"], tree["split_condition"], tree["missing"] == tree["no"]
    ('bm25', 0.5000000596046448, True)
    """
    atomic_write_bytes(path, export_bytes(model, format, **options))


def export_targets(model: RankBoostModel, path: str = "MODEL") -> tuple[Target, ...]:
    """Every format of :data:`FORMATS` and how it serves ``model`` (``describe``'s targets).

    ``"exact"``: the export takes ``predict``'s branch at every split (scores up to float32
    rounding, see above); ``"approximate"``: a format without missing values
    (:data:`NO_MISSING`) for a model that scores a missing feature otherwise than 0, written
    only with ``--missing-as-zero``. ``path`` is the model file the commands name.

    Examples
    --------
    >>> import numpy as np
    >>> import rankboost as rb
    >>> X = np.random.default_rng(0).normal(size=(50, 2))
    >>> model = rb.train(X, rb.BipartiteFeedback(X[:, 0] > 0), 5)
    >>> [t.name for t in export_targets(model) if t.how == "exact"][:3]
    ['xgboost', 'xgboost-dump', 'lightgbm']
    """
    from ._ranklib import unfaithful_features

    bad = unfaithful_features(model.step_functions())
    out = []
    for fmt, reader in FORMATS.items():
        command = f"rankboost export {path} --format {fmt} -o OUT"
        if fmt in NO_MISSING and bad:
            note = (
                f"{len(bad)} used feature{'s' if len(bad) > 1 else ''} score a missing value "
                "otherwise than 0"
            )
            out.append(Target(fmt, "format", "approximate", note, command + " --missing-as-zero",
                              "--missing-as-zero"))  # fmt: skip
        else:
            out.append(Target(fmt, "format", "exact", reader, command))
    return tuple(out)
