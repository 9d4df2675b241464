"""The engine's seams, read from the code's own imports (issue 21).

* the block contract is one ``typing.Protocol`` that every block state satisfies;
* no two engine modules import each other, RankBoost+ never imports the booster;
* the bottom of the engine imports nothing of the package above it;
* over the whole package: only the two convenience pairs import each other, no private name
  crosses a module boundary, and no module is over 600 lines;
* no import circle of any length but those two pairs (issue 37: ``floor32`` moved to the
  ground floor, ``_float32``, which closed ``_rounds -> weak_rankers -> binning -> _rounds``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

import rankboost as rb
from rankboost._blocks import Block, LayeredState, PairState

SRC = Path(rb.__file__).parent
ENGINE = [
    "_blocks", "alpha_rules", "booster", "engine", "feedback", "rbplus", "weak_rankers",
    "params", "_validation", "binning", "callback", "model",
]  # fmt: skip


def _imports(module: str) -> set[str]:
    """Top-level package modules imported by ``rankboost.<module>`` (also lazily)."""
    tree = ast.parse((SRC / f"{module}.py").read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            out.add(node.module.split(".")[0])
    return out


def test_every_block_state_satisfies_the_contract():
    X = np.random.default_rng(0).normal(size=(12, 2))
    y = np.tile([0, 1, 2], 4)
    lay = rb.LayeredFeedback(y, np.repeat([0, 1], 6))
    pairs = rb.PairFeedback([[0, 1], [2, 1]], n_samples=12)
    states = [*lay._blocks(2), *pairs._blocks(1)]
    assert {type(s) for s in states} == {LayeredState, PairState}
    for s in states:
        assert isinstance(s, Block)
    bst = rb.Booster(X, pairs, {"alpha": "rbplus"})
    assert all(isinstance(b, Block) for b in bst._blocks)


def test_no_circle_between_engine_modules():
    deps = {m: _imports(m) for m in ENGINE}
    circles = {tuple(sorted((a, b))) for a in ENGINE for b in deps[a] if b in deps and a in deps[b]}
    assert circles == set()
    assert "booster" not in _imports("rbplus")


def test_the_bottom_of_the_engine_imports_nothing_above_it():
    assert _imports("alpha_rules") == set()
    assert _imports("params") == set()
    assert _imports("_blocks") == {"_kernels"}
    assert _imports("feedback") <= {"_blocks", "_kernels", "_validation", "params"}


# --------------------------------------------------------- the whole package (issue 21's counts)


def _module_name(path: Path) -> str:
    parts = ["rankboost", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_graph() -> tuple[dict[str, set[str]], list[tuple[str, str, str]]]:
    """Module -> modules it imports (lazily too), and every private name imported across."""
    files = {_module_name(p): p for p in SRC.rglob("*.py")}
    edges: dict[str, set[str]] = {m: set() for m in files}
    private = []
    for mod, path in files.items():
        package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or node.level == 0:
                continue
            base = package.split(".")
            base = base[: len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                full = f"{target}.{alias.name}"
                dep = full if full in files else target
                if dep in files and dep != mod:
                    edges[mod].add(dep)
                private_name = alias.name.startswith("_") and not alias.name.startswith("__")
                if private_name and full not in files:
                    private.append((mod, target, alias.name))
    return edges, private


def test_issue21_two_convenience_circles_no_private_import_one_long_module():
    """The counts issue 21 set, kept: only the two convenience pairs import each other (lazy
    methods: ``model.export``, ``RankBoostRanker.plot_*``), no private name crosses a module
    boundary (the last one, ``sklearn._warn_one_query``, is ``_fit.warn_one_query``), and no
    module is over 600 lines (issue 45: ``cli.py``, the last, is the ``cli/`` package, one
    module per command; CONTRIBUTING.md)."""
    edges, private = _package_graph()
    pairs = {tuple(sorted((a, b))) for a, deps in edges.items() for b in deps if a in edges[b]}
    assert pairs == {
        ("rankboost.export", "rankboost.model"),
        ("rankboost.plotting", "rankboost.sklearn"),
    }
    assert private == []
    long = {p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py")
            if len(p.read_text().splitlines()) > 600}  # fmt: skip
    assert long == set()


def test_issue37_no_import_circle_but_the_two_lazy_convenience_pairs():
    """Issue 37: no circle of any length (``_rounds -> weak_rankers -> binning -> _rounds``
    was one, through ``floor32``; it now lives on the ground floor, ``_float32``). The two
    convenience pairs close only through a lazy import (``model.export``,
    ``RankBoostRanker.plot_*``): without those two edges the graph has no strongly connected
    component of more than one module."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    edges, _ = _package_graph()
    lazy = {("rankboost.model", "rankboost.export"), ("rankboost.sklearn", "rankboost.plotting")}
    assert all(b in edges[a] for a, b in lazy)
    names = sorted(edges)
    index = {name: i for i, name in enumerate(names)}
    arcs = [(index[a], index[b]) for a, deps in edges.items() for b in deps if (a, b) not in lazy]
    rows, cols = np.array(arcs).T
    graph = csr_matrix((np.ones(len(arcs)), (rows, cols)), shape=(len(names), len(names)))
    _, label = connected_components(graph, connection="strong")
    circles = [
        sorted(names[i] for i in np.flatnonzero(label == k))
        for k in np.unique(label)
        if np.count_nonzero(label == k) > 1
    ]
    assert circles == []
    assert _imports("_float32") == set()
    assert "_rounds" not in _imports("binning")
