"""The learned ranking function ``H(x) = sum_t alpha_t h_t(x)`` (paper section 3.1).

A model is plain arrays, one entry per boosting round (:class:`Rounds`, in ``_rounds.py``):
the feature, the kind of weak ranker, its threshold or cuts, its default ``q_def`` and its
weight ``alpha``; plus the training records ``r``, ``Z``, rloss and bound. Every weak ranker
is a step function of one feature, so ``H`` is additive: ``H(x) = sum_i H_i(f_i(x))``. The
model compiles each ``H_i`` once into sorted breakpoints and the value of ``H_i`` on every
interval, plus its value where the feature abstains (:meth:`RankBoostModel.step_functions`),
and scores with one ``searchsorted`` per used feature: never a Python loop over rows.

Features are compared as float32 (the package's numeric domain, :mod:`rankboost.binning`):
``decision_function`` rounds every value to float32 before it meets a threshold, as
training did, so a float64 and a float32 copy of the same features score the same, and so
does every export (docs/serving.md). The file format lives in ``_model_io.py``.
"""

from __future__ import annotations

import os
import reprlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import model_files
from ._atomic import atomic_write_text
from ._conventions import FEATURE_NUMBERING
from ._float32 import to_float32
from ._model_io import (
    FORMAT_NAME,
    FORMAT_VERSION,
    MAX_FEATURES,
    model_from_dict,
    model_to_dict,
)
from ._rounds import (
    HISTORY_KEYS,
    KINDS,
    STAT_KEYS,
    Rounds,
    StepFunction,
    compile_steps,
    float_array,
    frozen_array,
)
from ._validation import check_feature_matrix, check_float32_range, check_n_rounds
from .model_files import read_json
from .weak_rankers import WeakRanker

if TYPE_CHECKING:
    from .description import Description

__all__ = [
    "FEATURE_NUMBERING",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "HISTORY_KEYS",
    "KINDS",
    "MAX_FEATURES",
    "STAT_KEYS",
    "RankBoostModel",
    "Rounds",
    "StepFunction",
    "atomic_write_text",
    "load_model",
    "read_json",
    "to_float32",
]


def _check_agrees(rounds: Rounds, history: Mapping[str, Any], *keys: str) -> None:
    """Raise ValueError if a column of ``history`` differs from the rounds' (NaN == NaN)."""
    for k in keys:
        if k not in history:
            continue
        mine = getattr(rounds, k)
        theirs = np.asarray(history[k])
        if theirs.shape != mine.shape:
            raise ValueError(
                f"rounds and history have different lengths ({len(rounds)} rounds, "
                f"history[{k!r}] of shape {theirs.shape})"
            )
        same = np.asarray(theirs == mine, dtype=bool)
        if mine.dtype.kind == "f" and theirs.dtype.kind in "fiu":
            same |= np.isnan(mine) & np.isnan(theirs.astype(np.float64))
        bad = np.flatnonzero(~same) if same.shape == mine.shape else [0]
        if len(bad):
            raise ValueError(f"rounds[{bad[0]}] disagrees with history ({k})")


class RankBoostModel:
    """A trained RankBoost ranking function ``H(x) = sum_t alpha_t h_t(x)``.

    Built by :func:`rankboost.train`; load a saved one with :func:`rankboost.load_model`.
    The state is plain arrays (:attr:`rounds` and the training records); :attr:`history`,
    :attr:`rankers` and :attr:`alphas` are views built from them.

    Parameters
    ----------
    rankers : list of ThresholdRanker or FeatureRanker
        The weak rankers, one per round.
    history : dict of array-like
        Per-round records with at least ``alpha``, ``r``, ``z``, ``rloss`` and ``bound``
        (``feature``, ``threshold`` and ``default``, when present, must agree with
        ``rankers``). Other keys are ignored.
    n_features : int
        Number of features the model expects.
    feature_names, params, stop_reason, best_iteration
        See the attributes. :meth:`from_arrays` builds a model from the arrays directly.

    Attributes
    ----------
    rounds : Rounds
        The weak rankers and their weights, one (read-only) array entry per round.
    n_features : int
        Number of features the model expects.
    feature_names : list of str or None
        Names of the features, when known.
    params : dict
        The training parameters.
    stop_reason : str or None
        Why training stopped before ``n_rounds``, if it did.
    best_iteration : int or None
        Number of rounds chosen by early stopping (``decision_function`` uses them all
        unless ``n_rounds`` is given).
    """

    def __init__(
        self,
        rankers: list[WeakRanker],
        history: Mapping[str, ArrayLike],
        n_features: int,
        *,
        feature_names: list[str] | None = None,
        params: dict[str, Any] | None = None,
        stop_reason: str | None = None,
        best_iteration: int | None = None,
    ) -> None:
        if "alpha" not in history:
            raise ValueError("history has no 'alpha': the weights of the rounds are needed")
        rounds = Rounds.from_rankers(rankers, history["alpha"])
        self._init(rounds, history, n_features, feature_names, params, stop_reason, best_iteration)

    @classmethod
    def from_arrays(
        cls,
        rounds: Rounds | Mapping[str, ArrayLike],
        history: Mapping[str, ArrayLike],
        n_features: int,
        *,
        feature_names: list[str] | None = None,
        params: dict[str, Any] | None = None,
        stop_reason: str | None = None,
        best_iteration: int | None = None,
    ) -> RankBoostModel:
        """Build a model from its arrays.

        Parameters
        ----------
        rounds : Rounds or mapping of array-like
            The rounds, or the keyword arguments of :class:`Rounds` (``feature``, ``kind``,
            ``threshold``, ``default``, ``alpha``, and ``cuts`` / ``cut_offsets`` when some
            round is real-valued).
        history : mapping of array-like
            ``r``, ``z``, ``rloss`` and ``bound`` per round. ``feature``, ``threshold``,
            ``default`` and ``alpha``, when present, must agree with ``rounds``; other keys
            are ignored.
        n_features : int
            Number of features the model expects.
        feature_names, params, stop_reason, best_iteration
            See :class:`RankBoostModel`.

        Returns
        -------
        model : RankBoostModel

        Raises
        ------
        ValueError
            If the arrays are inconsistent (see :class:`Rounds`), a round uses a feature
            outside ``[0, n_features)``, or the history is missing a key, has another length
            or disagrees with the rounds.

        Examples
        --------
        >>> import numpy as np
        >>> from rankboost.model import RankBoostModel
        >>> model = RankBoostModel.from_arrays(
        ...     {"feature": [0, 0], "kind": [0, 0], "threshold": [0.0, 1.0],
        ...      "default": [0.0, 0.0], "alpha": [1.0, 0.5]},
        ...     {"r": [0.5, 0.2], "z": [0.8, 0.9], "rloss": [0.2, 0.1], "bound": [0.8, 0.72]},
        ...     n_features=1,
        ... )
        >>> model.decision_function([[-1.0], [0.5], [2.0], [np.nan]])
        array([0. , 1. , 1.5, 0. ])
        """
        if not isinstance(rounds, Rounds):
            rounds = Rounds(**cast(Mapping[str, Any], rounds))
        self = cls.__new__(cls)
        self._init(rounds, history, n_features, feature_names, params, stop_reason, best_iteration)
        return self

    def _init(
        self,
        rounds: Rounds,
        history: Mapping[str, ArrayLike],
        n_features: int,
        feature_names: list[str] | None,
        params: dict[str, Any] | None,
        stop_reason: str | None,
        best_iteration: int | None,
    ) -> None:
        n_features = int(n_features)
        outside = np.flatnonzero(rounds.feature >= n_features)
        if outside.size:
            t = int(outside[0])
            raise ValueError(f"round {t} uses feature {rounds.feature[t]} of {n_features}")
        missing = [k for k in STAT_KEYS if k not in history]
        if missing:
            raise ValueError(f"history has no {missing} (it needs {list(STAT_KEYS)})")
        stats = {k: float_array(history[k], f"history[{k!r}]") for k in STAT_KEYS}
        for k, v in stats.items():
            if v.shape[0] != len(rounds):
                raise ValueError(
                    f"rounds and history have different lengths ({len(rounds)} rounds, "
                    f"{v.shape[0]} values of history[{k!r}])"
                )
        _check_agrees(rounds, history, "feature", "threshold", "default", "alpha")
        self._rounds = rounds
        self._stats = {k: frozen_array(v) for k, v in stats.items()}
        self.n_features = n_features
        self.feature_names = None if feature_names is None else [str(f) for f in feature_names]
        self.params = dict(params or {})
        self.stop_reason = stop_reason
        self.best_iteration = best_iteration
        #: Validation curves ``{set: {metric: [value per round]}}`` of the fit, saved with
        #: the model so that ``plot_training`` draws them for a loaded model too.
        self.evals_result: dict[str, dict[str, list[float]]] | None = None
        self._steps: dict[int, dict[int, StepFunction]] = {}
        self._rankers: tuple[WeakRanker, ...] | None = None

    # ------------------------------------------------------------------ views of the arrays
    @property
    def rounds(self) -> Rounds:
        """The weak rankers and their weights: one read-only array entry per round."""
        return self._rounds

    @property
    def n_rounds(self) -> int:
        """Number of boosting rounds (weak rankers) in the model."""
        return len(self.rounds)

    @property
    def push(self) -> float:
        """The P-Norm Push's ``p`` of training (``params["push"]``; absent: 1, RankBoost)."""
        return float(self.params.get("push", 1.0))

    @property
    def alphas(self) -> NDArray[np.float64]:
        """The weights ``alpha_t`` (a copy of ``rounds.alpha``)."""
        return self.rounds.alpha.copy()

    @property
    def history(self) -> dict[str, NDArray[Any]]:
        """One entry per round (a new dict of copies, built from the arrays on every access).

        ``feature`` (the 0-based column of ``X``), ``threshold`` (NaN for a real-valued
        ranker), ``default`` (``q_def``), ``alpha``, ``r``, ``z`` (the exact ``Z_t``),
        ``rloss`` (training loss of ``H_t``, ties counted as errors), ``bound``
        (``prod Z_s``), and ``feature_label``: the feature as ``rankboost info`` and the plots
        show it (:attr:`feature_labels`: its name, else ``f<column + 1>``).

        Examples
        --------
        >>> import numpy as np
        >>> import rankboost as rb
        >>> X = np.array([[0.0, 1.0], [0.0, 3.0], [0.0, 2.0]])
        >>> model = rb.train(X, rb.BipartiteFeedback([0, 1, 1]), n_rounds=1)
        >>> int(model.history["feature"][0]), str(model.history["feature_label"][0])
        (1, 'f2')
        """
        r = self.rounds
        out: dict[str, NDArray[Any]] = {
            "feature": r.feature.copy(),
            "threshold": r.threshold.copy(),
            "default": r.default.copy(),
            "alpha": r.alpha.copy(),
        }
        out.update((k, v.copy()) for k, v in self._stats.items())
        labels = self.feature_labels
        out["feature_label"] = np.array([labels[i] for i in r.feature.tolist()], dtype=object)
        return {k: out[k] for k in (*HISTORY_KEYS, "feature_label")}

    def feature_label(self, i: int) -> str:
        """The label of column ``i`` (0-based) in ``rankboost info``, the plots and the history.

        Its name when the model has ``feature_names``, else ``f<i + 1>``: the 1-based id of
        a LETOR file (``FEATURE_NUMBERING``, which every place that shows such labels states).

        Examples
        --------
        >>> import numpy as np
        >>> import rankboost as rb
        >>> X = np.array([[0.0, 1.0], [0.0, 3.0], [0.0, 2.0]])
        >>> model = rb.train(X, rb.BipartiteFeedback([0, 1, 1]), n_rounds=1)
        >>> model.feature_label(0), model.feature_labels
        ('f1', ['f1', 'f2'])
        """
        if not 0 <= int(i) < self.n_features:
            raise IndexError(f"feature_label: column {i} is not in [0, {self.n_features}).")
        return self.feature_names[int(i)] if self.feature_names else f"f{int(i) + 1}"

    @property
    def feature_labels(self) -> list[str]:
        """:meth:`feature_label` of every column (``feature_names`` when the model has them)."""
        if self.feature_names:
            return list(self.feature_names)
        return [f"f{i + 1}" for i in range(self.n_features)]

    @property
    def rankers(self) -> list[WeakRanker]:
        """The weak rankers as :class:`ThresholdRanker` / :class:`FeatureRanker` objects."""
        if self._rankers is None:
            self._rankers = tuple(self.rounds.ranker(t) for t in range(self.n_rounds))
        return list(self._rankers)

    # ------------------------------------------------------------------ scoring
    def _check_X(self, X: Any) -> NDArray[np.float64]:
        """``X`` checked; a DataFrame is read by column name when the model has names."""
        columns = getattr(X, "columns", None)
        if columns is not None and self.feature_names and hasattr(X, "iloc"):
            have = [str(c) for c in columns]
            where: dict[str, int] = {}
            for j, c in enumerate(have):
                where.setdefault(c, j)
            missing = [n for n in self.feature_names if n not in where]
            if missing:
                raise ValueError(
                    f"X has no column named {missing[0]!r}"
                    + (
                        f" (nor {len(missing) - 1} more of the model's features)"
                        if len(missing) > 1
                        else ""
                    )
                    + f"; the model scores a DataFrame by its feature names "
                    f"({reprlib.repr(self.feature_names)}), and X has columns "
                    f"{reprlib.repr(have)}. Rename the columns, or pass a numpy array in the "
                    "model's column order."
                )
            dup = (
                [n for n in self.feature_names if have.count(n) > 1]
                if len(set(have)) < len(have)
                else []
            )
            if dup:
                raise ValueError(
                    f"X has two columns named {dup[0]!r}; the model reads columns by name."
                )
            X = X.iloc[:, [where[n] for n in self.feature_names]]
        Xc = check_feature_matrix(X, n_features=self.n_features)
        check_float32_range(Xc)
        return Xc

    def _compiled(self, n_rounds: int) -> dict[int, StepFunction]:
        if n_rounds not in self._steps:
            self._steps[n_rounds] = compile_steps(self.rounds, n_rounds)
        return self._steps[n_rounds]

    def step_functions(self, n_rounds: int | None = None) -> dict[int, StepFunction]:
        """The learned function ``H_i`` of every used feature, as exact step functions.

        Every weak ranker looks at one feature, so ``H(x) = sum_i H_i(f_i(x))``, and each
        ``H_i`` is a step function: ``values[k]`` on ``breaks[k-1] < x <= breaks[k]``
        (``values[np.searchsorted(breaks, x, side="left")]``; the rankers are
        ``[x > theta]``, so a value on a break takes the value below it), ``missing`` where
        the feature is NaN. These are the float64 numbers :meth:`decision_function` adds up:
        ``H(x) = sum_i step_functions()[i](x[:, i])``, bit for bit, where calling a step
        function rounds ``x`` to float32 first (the numeric domain of training).

        Parameters
        ----------
        n_rounds : int, default=None
            Use only the first ``n_rounds`` rounds (None = all).

        Returns
        -------
        functions : dict of int to StepFunction
            One read-only :class:`StepFunction` per feature used by those rounds, keyed by
            the 0-based feature index in increasing order. An unused feature contributes 0.

        Examples
        --------
        >>> import rankboost as rb
        >>> from rankboost.datasets import make_ranking
        >>> X, y, _ = make_ranking(100)
        >>> model = rb.train(X, rb.BipartiteFeedback(y), 10)
        >>> steps = model.step_functions()
        >>> sf = steps[0]
        >>> sf.values.shape == (sf.breaks.shape[0] + 1,)
        True
        >>> bool(sf(sf.breaks[0]) == sf.values[0])  # a break belongs to the interval below
        True
        >>> H = sum(f(X[:, i]) for i, f in steps.items())
        >>> bool(np.array_equal(H, model.decision_function(X)))
        True
        """
        return dict(self._compiled(check_n_rounds(n_rounds, self.n_rounds)))

    def decision_function(self, X: ArrayLike, n_rounds: int | None = None) -> NDArray:
        """Return ``H(x)`` for every row of ``X`` (higher = ranked higher).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Features; NaN where a feature abstains. Every value is rounded to float32 before
            it meets a threshold (as in training and in every export), so ``X`` and
            ``X.astype(np.float32)`` score the same. A pandas DataFrame is read by column
            name when the model has feature names (its columns in any order; a missing name
            is an error).
        n_rounds : int, default=None
            Use only the first ``n_rounds`` weak rankers (None = all).

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        Xc = self._check_X(X)
        k = check_n_rounds(n_rounds, self.n_rounds)
        out = np.zeros(Xc.shape[0])
        for i, sf in self._compiled(k).items():
            out += sf(Xc[:, i])
        return out

    predict = decision_function

    def staged_decision_function(self, X: ArrayLike) -> Iterator[NDArray[np.float64]]:
        """Yield ``H_t(x)`` after every round ``t = 1..T``."""
        Xc = self._check_X(X)
        out = np.zeros(Xc.shape[0])
        for t in range(self.n_rounds):
            out = out + self.rounds.alpha[t] * self.rounds.predict(t, Xc)
            yield out

    def feature_function(self, feature: int) -> tuple[NDArray, NDArray, float]:
        """The learned step function ``H_i`` of one feature, as copies.

        Returns ``(breaks, values, missing)`` of :meth:`step_functions` for ``feature``:
        ``H_i(x) = values[k]`` for ``breaks[k-1] < x <= breaks[k]`` and ``missing`` where
        the feature is NaN; ``(empty, [0.0], 0.0)`` for an unused feature.
        """
        sf = self._compiled(self.n_rounds).get(int(feature))
        if sf is None:
            return np.empty(0), np.zeros(1), 0.0
        return sf.breaks.copy(), sf.values.copy(), sf.missing

    # ------------------------------------------------------------------ importances
    def feature_importances(self, importance_type: str = "gain") -> NDArray[np.float64]:
        """Importance of every feature, normalised to sum to 1.

        ``"gain"`` (default): the share of the training-loss bound's reduction owed to the
        feature, ``sum_{t: f_t = i} -ln Z_t`` (RankBoost greedily minimises ``prod Z_t``, so
        this is how much each feature lowered the bound). ``"split"``: how many rounds chose
        the feature. ``"alpha"``: ``sum |alpha_t|``.
        """
        feats = self.rounds.feature
        if importance_type == "gain":
            w = -np.log(self._stats["z"])
        elif importance_type == "split":
            w = np.ones(feats.shape[0])
        elif importance_type == "alpha":
            w = np.abs(self.rounds.alpha)
        else:
            raise ValueError(
                f"importance_type must be 'gain', 'split' or 'alpha'; got {importance_type!r}."
            )
        imp = np.bincount(feats, np.maximum(w, 0.0), minlength=self.n_features)
        total = imp.sum()
        out: NDArray[np.float64] = imp / total if total > 0 else imp.astype(np.float64)
        return out

    @property
    def feature_importances_(self) -> NDArray[np.float64]:
        """``feature_importances("gain")``: share of ``-sum ln Z_t`` per feature."""
        return self.feature_importances("gain")

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (format name and version included).

        Version 2 layout: ``"rounds"`` holds one list per field (``feature``, ``kind`` as
        ``"threshold"`` / ``"feature"``, ``threshold``, ``default``, ``alpha``, and ``cuts``,
        one list per round, empty for a threshold round) and ``"history"`` the lists ``r``,
        ``z``, ``rloss`` and ``bound``. Floats are exact (``repr``); NaN and infinities are the
        strings ``"nan"``, ``"inf"`` and ``"-inf"``.
        """
        return model_to_dict(self)

    @classmethod
    def from_dict(cls, data: Any) -> RankBoostModel:
        """Rebuild a model from :meth:`to_dict` output (format version 1 or 2).

        Raises
        ------
        ValueError
            If ``data`` is not a rankboost model, is malformed, or has a newer format version.
        """
        model: RankBoostModel = model_from_dict(cls, data)
        return model

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model as versioned JSON, atomically (temp file + rename)."""
        model_files.save(self, path)

    def describe(self, path: str | os.PathLike[str] = "MODEL") -> Description:
        """What the model is and the formats it exports to (:mod:`rankboost.description`).

        ``path`` is the model file the export commands name; ``describe(path).lines(...)``
        is ``rankboost info``'s text.
        """
        from .description import describe_ranking
        from .export import export_targets

        return describe_ranking(self, str(path), export_targets(self, str(path)))

    def __repr__(self) -> str:
        return f"RankBoostModel(n_rounds={self.n_rounds}, n_features={self.n_features})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RankBoostModel):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def export(self, path: str | os.PathLike[str], format: str, **options: Any) -> None:
        """Write the model for another consumer: XGBoost, LightGBM, ONNX, RankLib, LTR plugins.

        See :func:`rankboost.export.export_model` for the formats and ``options``
        (``n_rounds``, ``trees``, ``feature_names``, ...) and docs/serving.md for what each
        consumer computes. The file is written atomically.

        Examples
        --------
        >>> import rankboost as rb
        >>> from rankboost.datasets import make_ranking
        >>> X, y, _ = make_ranking(100)
        >>> model = rb.train(X, rb.BipartiteFeedback(y), 10)
        >>> model.export("model.lgb.txt", format="lightgbm")  # lightgbm.Booster(model_file=...)
        """
        from .export import export_model

        export_model(self, path, format, **options)


def load_model(path: str | os.PathLike[str]) -> RankBoostModel:
    """Load a model saved by :meth:`RankBoostModel.save` (format version 1 or 2).

    Every field is checked: types, lengths, ranges (finite weights, ``q_def`` in [0, 1],
    ``r`` in [-1, 1], ...), and the rounds against the history.

    Raises
    ------
    FileNotFoundError, IsADirectoryError
        If ``path`` does not exist or is a folder.
    ValueError
        If the file is not valid JSON, not a rankboost model (a model of another kind: the
        message says what reads it), malformed, or of a newer format version.
    """
    model: RankBoostModel = model_files.load(path, expect=FORMAT_NAME)
    return model
