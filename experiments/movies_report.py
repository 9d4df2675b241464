"""The movie experiment's tables and figures (experiments/movies.py's output).

Markdown tables of a study (one per metric), of a study over seeds with paired Wilcoxon
tests, of the losses by training-set size, and the ``docs/img/movies_*.png`` figures.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from movies_protocol import METRICS

ROOT = Path(__file__).resolve().parents[1]


def seeds_table(
    seeded, n_targets, best="RankBoost (best)", peers=("VSIM", "KNN (surprise)"),
    title="Study 1", column="F", others=(),
):  # fmt: skip
    """A study over seeds: means, and a paired Wilcoxon test over (seed, target) pairs."""
    from scipy.stats import wilcoxon

    seeds = sorted(seeded)
    labels = list(seeded[seeds[0]][0])
    peers = [m for m in peers if m in seeded[seeds[0]][0][labels[0]]]
    first = seeded[seeds[0]][0][labels[0]]
    methods = [m for m in ("RankBoost (paper)", "RankBoost (users + crowd)", "RankBoost (best)",
                           "RankBoost (pooled, ratings)", *others)
                if m in first and m != best]  # fmt: skip
    methods += [best, *peers]
    head = [column] + [f"{m} dis." for m in methods]
    for m in peers:
        head.append(f"pooled - {m}: mean diff (p)")
    head += [f"{m} E[AP] / E[PROT]" for m in (best, *peers)]
    lines = [
        f"#### {title} over seeds {seeds} ({len(seeds)} x {n_targets} targets)",
        "",
        "Means over seeds of each seed's mean over targets; the paired test compares the "
        f"RankBoost row {best!r} with each peer target by target (Wilcoxon "
        "signed-rank, two-sided, over every (seed, target) with a crucial test pair; "
        "negative difference = RankBoost better).",
        "",
        "| " + " | ".join(head) + " |",
        "|---|" + "---:|" * (len(head) - 1),
    ]
    for lab in labels:
        cells = [lab]
        for m in methods:
            cells.append(f"{np.mean([seeded[sd][0][lab][m]['disagreement'] for sd in seeds]):.4f}")
        for m in peers:
            d = np.concatenate(
                [seeded[sd][1][lab][best]["disagreement"] - seeded[sd][1][lab][m]["disagreement"]
                 for sd in seeds]
            )  # fmt: skip
            d = d[np.isfinite(d)]
            p = wilcoxon(d).pvalue if np.any(d != 0) else 1.0
            cells.append(f"{d.mean():+.4f} ({p:.2g})")
        for m in (best, *peers):
            ap_ = np.mean([seeded[sd][0][lab][m]["AP"] for sd in seeds])
            pr = np.mean([seeded[sd][0][lab][m]["PROT"] for sd in seeds])
            cells.append(f"{ap_:.3f} / {pr:.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def per_seed_table(
    seeded, n_targets, best, peers=("VSIM", "KNN (surprise)"), title="Study 1", column="F"
):  # fmt: skip
    """A study seed by seed: one row per (configuration, seed), paired tests within the seed.

    For each peer: the seed's mean difference (default minus peer, over its targets with a
    crucial test pair), the two-sided Wilcoxon signed-rank p over those targets, and the
    difference detectable with 80% power at the 5% level by a paired test on that seed,
    ``(z_0.975 + z_0.8) * sd(d) / sqrt(n)`` = 2.80 sd / sqrt(n). The closing lines count the
    (configuration, seed) cells where the default's mean is below each peer's.
    """
    from scipy.stats import wilcoxon

    seeds = sorted(seeded)
    labels = list(seeded[seeds[0]][0])
    peers = [m for m in peers if m in seeded[seeds[0]][0][labels[0]]]
    head = [column, "seed", f"{best} dis.", *(f"{m} dis." for m in peers)]
    for m in peers:
        head += [f"default - {m} (p)", f"detectable vs {m}"]
    lines = [
        f"#### {title} per seed {seeds} ({n_targets} targets per seed)",
        "",
        "Each seed's mean over targets; the paired test and the detectable difference (80% "
        "power, 5% two-sided, 2.80 sd/sqrt(n)) are over that seed's targets only; negative "
        "difference = the default better.",
        "",
        "| " + " | ".join(head) + " |",
        "|---|---:|" + "---:|" * (len(head) - 2),
    ]
    below = dict.fromkeys(peers, 0)
    n_cells = 0
    for lab in labels:
        for sd in seeds:
            rows, per = seeded[sd]
            cells = [lab, str(sd), f"{rows[lab][best]['disagreement']:.4f}"]
            cells += [f"{rows[lab][m]['disagreement']:.4f}" for m in peers]
            n_cells += 1
            for m in peers:
                d = per[lab][best]["disagreement"] - per[lab][m]["disagreement"]
                d = d[np.isfinite(d)]
                p = wilcoxon(d).pvalue if np.any(d != 0) else 1.0
                mde = 2.80 * d.std(ddof=1) / np.sqrt(d.shape[0])
                below[m] += int(rows[lab][best]["disagreement"] < rows[lab][m]["disagreement"])
                cells += [f"{d.mean():+.4f} ({p:.2g})", f"{mde:.4f}"]
            lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for m in peers:
        lines.append(f"Default below {m} in {below[m]} of {n_cells} (configuration, seed) cells.")
    return "\n".join(lines) + "\n"


def size_table(per, seed):
    """Where RankBoost loses: mean disagreement by the target's number of training ratings."""
    lab = list(per)[-1]
    n = per[lab]["_n_train"]
    methods = [m for m in ("RankBoost (paper)", "RankBoost (users + crowd)", "RankBoost (best)",
                           "RankBoost (pooled, both)", "VSIM", "KNN (surprise)")
               if m in per[lab]]  # fmt: skip
    edges = [(0, 34), (35, 62), (63, 119), (120, 10**6)]
    lines = [
        f"#### Where RankBoost loses: study 1, {lab}, seed {seed}, by training ratings",
        "",
        "| training ratings | targets | " + " | ".join(methods) + " |",
        "|---|---:|" + "---:|" * len(methods),
    ]
    for lo, hi in edges:
        m_ = (n >= lo) & (n <= hi)
        cells = [f"{np.nanmean(per[lab][m]['disagreement'][m_]):.4f}" for m in methods]
        span = f"{lo}-{hi}" if hi < 10**6 else f"{lo}+"
        lines.append(f"| {span} | {int(m_.sum())} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def table(title, rows):
    methods = list(next(iter(rows.values())))
    lines = [f"#### {title}", ""]
    for metric in METRICS:
        lines.append(
            f"**{metric}** ({'lower' if metric == 'disagreement' else 'higher'} is better)"
        )
        lines.append("")
        lines.append("| | " + " | ".join(methods) + " |")
        lines.append("|---|" + "---:|" * len(methods))
        for label, res in rows.items():
            vals = [res[m][metric] for m in methods if m != "random"]
            best = min(vals) if metric == "disagreement" else max(vals)
            cells = []
            for m in methods:
                v = res[m][metric]
                cells.append(f"**{v:.3f}**" if m != "random" and v == best else f"{v:.3f}")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def plot(name, title, xlabel, rows, xs=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(rows)
    x = np.arange(len(labels)) if xs is None else np.asarray(xs)
    methods = [m for m in next(iter(rows.values())) if m != "random"]
    fig, axes = plt.subplots(2, 3, figsize=(14, 7))
    axes = axes.ravel()
    for ax, metric in zip(axes, METRICS, strict=True):
        for m in methods:
            ax.plot(x, [rows[lab][m][metric] for lab in labels], marker="o", label=m)
        ax.plot(x, [rows[lab]["random"][metric] for lab in labels], "k--", label="random")
        ax.set_title(metric)
        ax.set_xlabel(xlabel)
        if xs is None:
            ax.set_xticks(x, labels, rotation=30)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    out = ROOT / "docs" / "img" / f"movies_{name}.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def write_atomic(path, text):
    tmp = Path(str(path) + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
