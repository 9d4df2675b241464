"""The variants study's statistics, tables, figure and docs blocks (experiments/variants.py).

Paired tests (t-test and sign-flip randomisation) of every variant against Rb-c, the
markdown tables and the RankBoost+ claim, the training-loss figure
(``docs/img/variants_rloss.png``) and the writer of the ``<!-- tag:begin/end -->`` blocks of
the docs. No training here: ``experiments/variants.py`` runs the variants and calls these.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

#: the reference of every paired test
REFERENCE = "Rb-c"
COMMAND = "PYTHONPATH=src .venv/bin/python experiments/variants.py --write-docs"


# ----------------------------------------------------------------------------- statistics


def paired(a: np.ndarray, b: np.ndarray, n_perm: int, seed: int) -> tuple[float, float, float]:
    """Mean of ``a - b`` over queries, paired t-test p, sign-flip randomisation p."""
    ok = ~(np.isnan(a) | np.isnan(b))
    d = a[ok] - b[ok]
    mean = float(d.mean())
    if not np.any(d != 0):
        return mean, 1.0, 1.0
    p_t = float(stats.ttest_rel(a[ok], b[ok]).pvalue)
    rng = np.random.default_rng(seed)
    hits, done = 0, 0
    while done < n_perm:  # chunks keep the sign matrix small
        k = min(2000, n_perm - done)
        signs = rng.integers(0, 2, size=(k, d.shape[0])) * 2 - 1
        hits += int(np.sum(np.abs(signs @ d) >= abs(d.sum()) - 1e-12))
        done += k
    return mean, p_t, (hits + 1) / (n_perm + 1)


def _mean_curve(curves: list[np.ndarray], length: int) -> np.ndarray:
    """Mean over runs of the rloss curve, a run stopped early keeping its last value."""
    out = np.zeros(length)
    for c in curves:
        c = np.asarray(c, dtype=float)
        if c.shape[0] == 0:
            continue
        out += np.concatenate([c, np.full(length - c.shape[0], c[-1])])[:length]
    return out / max(len(curves), 1)


def table(
    title: str, res: dict[str, Any], metrics: tuple[str, ...], args: Any, unit: str = "queries"
) -> str:
    ref = res.get(REFERENCE, {})
    head = ["variant", *metrics, "rounds chosen", "ms/round"]
    for m in metrics:
        head += [f"Δ{m} vs Rb-c", "p (t)", "p (rand)"]
    lines = [f"#### {title}", "", f"Made by `{COMMAND}`.", "", "| " + " | ".join(head) + " |",
             "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]  # fmt: skip
    for name, r in res.items():
        if "missing" in r:
            lines.append(f"| {name} | " + " | ".join(["n/a"] * (len(head) - 1)) + " |")
            continue
        cells = [name] + [f"{np.nanmean(r['test'][m]):.4f}" for m in metrics]
        rounds = r["rounds"]
        cells.append(str(rounds[0]) if len(set(rounds)) == 1 and len(rounds) == 1 else
                     f"{np.mean(rounds):.0f} ({', '.join(map(str, rounds))})")  # fmt: skip
        cells.append(f"{1e3 * np.median(r['per_round']):.2f}")
        for m in metrics:
            if name == REFERENCE or "test" not in ref:
                cells += ["", "", ""]
                continue
            mean, p_t, p_r = paired(r["test"][m], ref["test"][m], args.n_perm, args.seed)
            cells += [f"{mean:+.4f}", f"{p_t:.3g}", f"{p_r:.3g}"]
        lines.append("| " + " | ".join(cells) + " |")
    missing = {n: r["missing"] for n, r in res.items() if "missing" in r}
    if missing:
        lines += ["", "n/a = not run: " + "; ".join(f"{n}: {why}" for n, why in missing.items())]
    n_q = len(next(iter(ref["test"].values()))) if "test" in ref else 0
    stopped = {n: r["stopped"] for n, r in res.items() if r.get("stopped")}
    rounds_note = "rounds: fixed" if unit == "users" else "rounds chosen: mean (per fold)"
    lines += ["", f"{n_q} test {unit} pooled over the folds ({rounds_note})."
              + (f" Runs stopped before the last round (no weak ranker left): {stopped}."
                 if stopped else "")]  # fmt: skip
    return "\n".join(lines)


def claim(res_all: dict[str, dict[str, Any]], args: Any) -> str:
    """Connamacher et al.: RankBoost+ beats Rb-c and Rb-d. The numbers, per data set."""
    lines = []
    for ds, res in res_all.items():
        plus = res.get("RankBoost+", {})
        if "test" not in plus:
            lines.append(f"* {ds}: RankBoost+ not run ({plus.get('missing', 'absent')}).")
            continue
        for metric in plus["test"]:
            parts = []
            for other in ("Rb-c", "Rb-d"):
                o = res.get(other, {})
                if "test" not in o:
                    continue
                mean, p_t, p_r = paired(plus["test"][metric], o["test"][metric], args.n_perm,
                                        args.seed)  # fmt: skip
                parts.append(f"vs {other} ({np.nanmean(o['test'][metric]):.4f}) "
                             f"Δ = {mean:+.4f} (t-test p = {p_t:.3g}, randomisation p = "
                             f"{p_r:.3g})")  # fmt: skip
            lines.append(f"* {ds}, {metric}: RankBoost+ {np.nanmean(plus['test'][metric]):.4f};"
                         " " + "; ".join(parts) + ".")  # fmt: skip
    return "\n".join(lines)


# ----------------------------------------------------------------------------- figures


def plot_curves(res_all: dict[str, dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(res_all), figsize=(4.2 * len(res_all), 4.2),
                             layout="constrained", squeeze=False)  # fmt: skip
    for ax, (ds, res) in zip(axes[0], res_all.items(), strict=True):
        for name, r in res.items():
            if "curves" not in r:
                continue
            length = max(len(c) for c in r["curves"])
            # one colour per rule, dashed = WeakLearn.cum; line search dotted on top of Rb-d
            # (for binary rankers they are the same models, so the two curves coincide)
            family = name.replace(" cum", "")
            families = list(dict.fromkeys(n.replace(" cum", "") for n in res))
            color = f"C{families.index(family)}"
            style = ":" if family == "line search" else ("--" if "cum" in name else "-")
            ax.plot(np.arange(1, length + 1), _mean_curve(r["curves"], length),
                    linestyle=style, color=color, label=name,
                    linewidth=2.2 if family == "line search" else 1.4,
                    alpha=0.6 if "cum" in name else 1.0)  # fmt: skip
        ax.set_yscale("log")
        ax.set_xlabel("round t")
        ax.set_title(ds)
    axes[0][0].set_ylabel("training rloss (mean over folds / users)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=6, fontsize="small")
    fig.suptitle(f"made by: {COMMAND}", fontsize="small")
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ----------------------------------------------------------------------------- docs


def replace_block(path: Path, tag: str, body: str) -> None:
    text = path.read_text()
    begin, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
    if begin not in text or end not in text:
        raise SystemExit(f"{path}: markers {begin} ... {end} not found")
    new = re.sub(re.escape(begin) + ".*?" + re.escape(end),
                 lambda _: f"{begin}\n{body}\n{end}", text, flags=re.S)  # fmt: skip
    path.write_text(new)
