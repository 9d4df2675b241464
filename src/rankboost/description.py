"""What a model says about itself: :class:`Description`, and ``rankboost info``'s text of it.

Every model class has a ``describe(path)`` method (:meth:`rankboost.RankBoostModel.describe`,
``RankFusion``, ``LinearFusion``, ``AutoFusion``) that returns a :class:`Description`: how
it scores (``formula``; a linear model's ``normalizer`` and its definition, from the one
table of normalisers, :data:`rankboost.fusion.features.NORMALIZERS`), what it is made of
(``facts``, ``params``, :class:`Table` rows) and where it can be served (:class:`Target`: the
engines of :data:`rankboost.fusion.engines.ENGINES` for a linear model, the ``rankboost
export`` formats for a boosted one; ``advice`` when nothing serves it). :meth:`Description.
lines` is the text ``rankboost info`` prints: built from the description only, so a model
cannot be printed otherwise than it describes itself.

Only the standard library is imported here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Description", "Table", "Target", "describe_ranking"]


@dataclass(frozen=True)
class Table:
    """A table of a description.

    Attributes
    ----------
    caption : str
        The line above the table ("" for none); ``{shown}`` is replaced by the number of
        rows shown.
    headers : tuple of str
    rows : tuple of tuple
    top_by : int, default=None
        ``top=N`` shows the ``N`` rows largest in this column (None: ``top`` does not
        apply).
    head : bool, default=False
        ``head=N`` shows the first ``N`` rows.
    """

    caption: str
    headers: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    top_by: int | None = None
    head: bool = False

    def shown(self, top: int = 0, head: int = 0) -> list[tuple[Any, ...]]:
        """The rows ``top`` and ``head`` keep (0: every row)."""
        rows = list(self.rows)
        col = self.top_by
        if col is not None and top:
            rows = sorted(rows, key=lambda r: -r[col])[:top]
        if self.head and head:
            rows = rows[:head]
        return rows


@dataclass(frozen=True)
class Target:
    """Where a model can be served: a search engine's hybrid request or an export format.

    Attributes
    ----------
    name : str
        The engine (``--engine``) or the format (``--format``).
    kind : {"engine", "format"}
    how : {"exact", "approximate", "no"}
        ``"exact"``: it ranks as the model does (an engine: as ``fuse apply``; a format: as
        ``predict``, up to float32 rounding); ``"approximate"``: only when asked for
        (``option``); ``"no"``: it cannot.
    note : str, default=""
        What it writes, or why not.
    command : str, default=""
        The command that writes it ("" when none does).
    option : str, default=""
        The option an approximate target needs (``--approximate``, ``--missing-as-zero``).
    """

    name: str
    kind: str
    how: str
    note: str = ""
    command: str = ""
    option: str = ""


@dataclass(frozen=True)
class Description:
    """A model's description of itself (see :mod:`rankboost.description`).

    Attributes
    ----------
    kind : str
        The model file's format (a key of :data:`rankboost.model_files.FORMATS`).
    family : {"ranking", "boost", "linear", "auto"}
    formula : str
        How the model scores, in one line.
    path : str
        The file the commands name.
    title : str
        What ``rankboost info``'s first line calls it.
    facts : tuple of str
        Summary lines (sizes, rounds).
    params : mapping or None
        The constructor's parameters, as printed (None: no ``params:`` line).
    notes : tuple of str
        Lines after the parameters.
    normalizer, normalizer_definition : str or None
        A linear model's normaliser and its one-line definition.
    tables : tuple of Table
    targets : tuple of Target
    advice : str
        What to train where nothing serves the model ("" otherwise).
    selection : mapping or None
        An auto model's selection (``AutoFusion.selection_``).
    chosen : Description or None
        An auto model's chosen model.
    """

    kind: str
    family: str
    formula: str
    path: str = "MODEL"
    title: str = ""
    facts: tuple[str, ...] = ()
    params: Mapping[str, Any] | None = None
    notes: tuple[str, ...] = ()
    normalizer: str | None = None
    normalizer_definition: str | None = None
    tables: tuple[Table, ...] = ()
    targets: tuple[Target, ...] = ()
    advice: str = ""
    selection: Mapping[str, Any] | None = None
    chosen: Description | None = None

    def engines(self, how: str = "exact") -> list[str]:
        """The engines that serve the model ``how`` ("exact", "approximate" or "no")."""
        return [t.name for t in self.targets if t.kind == "engine" and t.how == how]

    def lines(
        self, table: Callable[[list[str], list[list[Any]]], str], top: int = 0, head: int = 0
    ) -> list[str]:
        """The text ``rankboost info`` prints, one string per line.

        ``table(headers, rows)`` formats a table; ``top`` and ``head`` limit the rows of the
        tables they apply to (:attr:`Table.top_by`, :attr:`Table.head`; 0 = all).
        """
        out = [f"{self.title}: {self.path}", *self.facts]
        if self.params is not None:
            out.append(f"params: {' '.join(f'{k}={v}' for k, v in self.params.items()) or '-'}")
        out += self.notes
        out += self._target_lines() if self.chosen is None else []  # auto: the chosen's
        for t in self.tables:
            rows = t.shown(top, head)
            caption = t.caption.replace("{shown}", str(len(rows)))
            text = table(list(t.headers), [list(r) for r in rows])
            out += ["", *([caption] if caption else []), text]
        if self.chosen is not None:
            family = (self.selection or {}).get("family")
            out += ["", f"the chosen model ({family}):", *self.chosen.lines(table, top, head)]
        return out

    def _target_lines(self) -> list[str]:
        out = []
        engines = [t for t in self.targets if t.kind == "engine"]
        first = next((t for t in engines if t.how == "exact"), None)
        first = first or next((t for t in engines if t.how == "approximate"), None)
        if first is not None:
            how = "" if first.how == "exact" else " (approximately)"
            out.append(f"export it{how}: {first.command}")
            parts = [
                f"{', '.join(names)} {label}"
                for label, names in (
                    ("exactly", self.engines("exact")),
                    ("approximately (--approximate)", self.engines("approximate")),
                )
                if names
            ]
            no = [t for t in engines if t.how == "no"]
            if no:
                parts.append("not " + ", ".join(f"{t.name}{_why(t)}" for t in no))
            out.append(f"engines: {'; '.join(parts)}")
        formats = [t for t in self.targets if t.kind == "format"]
        if formats:
            exact = [t.name for t in formats if t.how == "exact"]
            approx = [t for t in formats if t.how == "approximate"]
            line = f"FORMAT: {', '.join(exact)}"
            if approx:
                line += (
                    f"; {', '.join(t.name for t in approx)} only with {approx[0].option}: "
                    f"{approx[0].note}"
                )
            out.append(f"export it: rankboost export {self.path} --format FORMAT -o OUT ({line})")
        if self.advice:
            out.append(self.advice)
        return out


def _why(target: Target) -> str:
    return f" ({target.note})" if target.note else ""


def describe_ranking(model: Any, path: str, targets: tuple[Target, ...]) -> Description:
    """:meth:`rankboost.RankBoostModel.describe`: its rounds, importances and export formats."""
    import numpy as np

    from ._conventions import FEATURE_NUMBERING
    from ._rounds import KINDS

    names = model.feature_labels  # as the plots and model.history["feature_label"] show them
    rounds = model.rounds
    best = "-" if model.best_iteration is None else str(model.best_iteration)
    notes = []
    if model.params.get("feedback"):
        notes.append(f"feedback: {model.params['feedback']}")
    if "push_auto" in model.params:  # push="auto" (rankboost._auto_push): what it chose on
        notes.append(_push_auto(model.params["push_auto"]))
    if model.stop_reason:
        notes.append(f"stopped: {model.stop_reason}")
    tables: tuple[Table, ...] = ()
    if model.n_rounds:
        gain = model.feature_importances("gain")
        split = np.bincount(rounds.feature, minlength=model.n_features)
        order = [int(i) for i in np.argsort(-gain, kind="stable") if split[i] > 0]
        h = model.history  # the training records r, Z, rloss and bound, and the feature labels
        steps = [
            (
                t + 1,
                int(rounds.feature[t]) + 1,
                h["feature_label"][t],
                KINDS[int(rounds.kind[t])],  # threshold: [f > theta]; feature: real-valued rank
                float(rounds.threshold[t]),
                float(rounds.default[t]),
                float(rounds.alpha[t]),
                float(h["r"][t]),
                float(h["z"][t]),
                float(h["rloss"][t]),
                float(h["bound"][t]),
            )
            for t in range(model.n_rounds)
        ]
        tables = (
            Table(
                f"feature importances ({len(order)} features used; gain = share of -sum ln Z_t)",
                ("feature", "name", "gain", "rounds"),
                tuple((i + 1, names[i], float(gain[i]), int(split[i])) for i in order),
                top_by=2,
            ),
            Table(
                f"rounds (first {{shown}} of {model.n_rounds}; feature = 1-based id, as above)",
                (
                    "t",
                    "feature",
                    "name",
                    "kind",
                    "threshold",
                    "q_def",
                    "alpha",
                    "r",
                    "Z",
                    "rloss",
                    "bound",
                ),
                tuple(steps),
                head=True,
            ),  # fmt: skip
        )
    return Description(
        kind="rankboost-model",
        family="ranking",
        formula="score = sum over rounds t of alpha_t h_t(x), each h_t a one-feature weak "
        "ranker ([x_f > theta], or x_f itself; q_def where x_f is missing)",
        path=path,
        title="model",
        facts=(
            f"rounds: {model.n_rounds} (best iteration: {best}), features: {model.n_features}",
            FEATURE_NUMBERING,
        ),
        params={k: v for k, v in model.params.items() if k not in ("feedback", "push_auto")},
        notes=tuple(notes),
        tables=tables,
        targets=targets,
    )


def _push_auto(stored: Any) -> str:
    """The note of a model trained with ``push="auto"``: the chosen ``p`` and the means."""
    if not isinstance(stored, dict):
        return f"push: auto ({stored!r})"
    means = stored.get("ndcg@10")
    means = means if isinstance(means, dict) else {}
    shown = ", ".join(f"p={k} {v:.4f}" for k, v in means.items() if isinstance(v, float))
    p = stored.get("chosen")
    p = f"{p:g}" if isinstance(p, float) else p
    return (
        f"push: auto chose p = {p} by held-out NDCG@10 on the "
        f"{stored.get('held_out')} ({stored.get('n_queries')} queries: {shown}); "
        f"{stored.get('rule')}"
    )
