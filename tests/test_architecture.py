"""The engine's seams, read from the code's own imports (issue 21).

* the block contract is one ``typing.Protocol`` that every block state satisfies;
* no two engine modules import each other, RankBoost+ never imports the booster;
* the bottom of the engine imports nothing of the package above it.
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
    # booster -> engine only through the thin _train/_run_loop aliases kept for other
    # branches (lazy, inside the functions); the lead removes them at merge
    assert circles <= {("booster", "engine")}
    assert "booster" not in _imports("rbplus")


def test_the_bottom_of_the_engine_imports_nothing_above_it():
    assert _imports("alpha_rules") == set()
    assert _imports("params") == set()
    assert _imports("_blocks") == {"_kernels"}
    assert _imports("feedback") <= {"_blocks", "_kernels", "_validation", "params"}
