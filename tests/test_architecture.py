"""The engine's seams, read from the code's own imports (issue 21).

* the block contract is one ``typing.Protocol`` that every block state satisfies;
* no two engine modules import each other, RankBoost+ never imports the booster;
* the bottom of the engine imports nothing of the package above it;
* over the whole package: only the two convenience pairs import each other, no private name
  crosses a module boundary, and no module is over 600 lines;
* no import circle of any length but those two pairs (issue 37: ``floor32`` moved to the
  ground floor, ``_float32``, which closed ``_rounds -> weak_rankers -> binning -> _rounds``);
* CONTRIBUTING.md's "Where things live" table is read: every module has a row and every
  import is in its row (issue 45);
* fitted attributes (``name_``) are written by their own class only (issue 45).
"""

from __future__ import annotations

import ast
import re
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
    assert long == set(), f"over 600 lines (split by concept): {sorted(long)}"


# ------------------------------------------------ CONTRIBUTING.md's map, read (issue 45 item 7)

CONTRIBUTING = Path(__file__).resolve().parents[1] / "CONTRIBUTING.md"
_TABLE_HEAD = "| module | holds | may import |"


def _map_rows() -> list[tuple[tuple[str, ...], dict[str, str]]]:
    """The rows of CONTRIBUTING.md's "Where things live" table, in order.

    Each row: the top-level modules or packages it names (first column, ``fusion/`` ->
    ``fusion``) and what they may import (last column): ``{module: mark}``, mark ``""``
    (anywhere), ``"lazy"`` (inside a function, or for type checkers only) or ``"types"``
    (under ``if TYPE_CHECKING:`` only). The last column reads: backticked names, each
    optionally followed by ``(lazy)``, ``(types)`` or ``only``; ``nothing``; ``the above``
    (every module of the rows above); ``everything above, lazily`` (the same, lazy) after
    which names given explicitly in the cell keep their own mark.
    """
    lines = CONTRIBUTING.read_text().splitlines()
    heads = [i for i, line in enumerate(lines) if line.strip() == _TABLE_HEAD]
    assert len(heads) == 1, f"CONTRIBUTING.md has {len(heads)} tables headed {_TABLE_HEAD!r}"
    rows: list[tuple[tuple[str, ...], dict[str, str]]] = []
    for line in lines[heads[0] + 2 :]:
        if not line.strip().startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 3, (
            f"CONTRIBUTING.md: a row of 'Where things live' has {len(cells)} columns, not 3: "
            f"{line.strip()[:80]!r}"
        )
        names = tuple(n.rstrip("/") for n in re.findall(r"`([^`]+)`", cells[0]))
        above = [n for row_names, _ in rows for n in row_names]
        allowed: dict[str, str] = {}
        cell = cells[2]
        if re.search(r"everything above,? lazily", cell):
            allowed |= dict.fromkeys(above, "lazy")
            cell = re.sub(r"everything above,? lazily", "", cell)
        elif "the above" in cell:
            allowed |= dict.fromkeys(above, "")
            cell = cell.replace("the above", "")
        for name, note in re.findall(r"`([^`]+)`(?:\s*\(([^)]*)\))?", cell):
            mark = note.split()[0].strip(":,;") if note else ""
            allowed[name.rstrip("/")] = mark if mark in ("lazy", "types") else ""
        rows.append((names, allowed))
    return rows


def _top(module: str) -> str:
    """``rankboost.fusion.linear`` -> ``fusion``; the package's ``__init__`` -> ``rankboost``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _import_sites() -> list[tuple[str, str, int, str]]:
    """Every package import: ``(module, imported module, line, kind)``.

    Resolved as :func:`_package_graph` resolves them; kind ``"top"`` (at import time),
    ``"lazy"`` (inside a function) or ``"types"`` (under ``if TYPE_CHECKING:``).
    """
    files = {_module_name(p): p for p in SRC.rglob("*.py")}
    sites = []
    for mod, path in files.items():
        package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]

        def visit(node: ast.AST, kind: str, mod: str = mod, package: str = package) -> None:
            for child in ast.iter_child_nodes(node):
                inner = kind
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    inner = "lazy" if kind == "top" else kind
                if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    for branch, k in ((child.body, "types"), (child.orelse, kind)):
                        for stmt in branch:
                            visit(ast.Module(body=[stmt], type_ignores=[]), k)
                    continue
                targets = []
                if isinstance(child, ast.ImportFrom):
                    if child.level:
                        base = package.split(".")
                        base = base[: len(base) - (child.level - 1)]
                        target = ".".join(base + ([child.module] if child.module else []))
                    else:
                        target = child.module or ""
                    targets = [(target, a.name) for a in child.names]
                elif isinstance(child, ast.Import):
                    targets = [(a.name, "") for a in child.names]
                for target, name in targets:
                    full = f"{target}.{name}"
                    dep = full if full in files else target
                    if dep in files and dep != mod:
                        sites.append((mod, dep, child.lineno, kind))
                visit(child, inner)

        visit(ast.parse(path.read_text()), "top")
    return sites


def test_issue45_every_import_is_in_its_row_of_the_map():
    """CONTRIBUTING.md's "Where things live" table is the map: every module of the package
    has a row (a subpackage's modules share its row), each row names modules that exist,
    and every import between two rows is listed in the importer's "may import" column, an
    import marked lazy inside a function and one marked (types) under ``TYPE_CHECKING``.
    Imports within one row (a package, or the modules one row names) are free."""
    rows = _map_rows()
    row_of = {name: i for i, (names, _) in enumerate(rows) for name in names}
    tops = {_top(_module_name(p)) for p in SRC.rglob("*.py")}
    problems = [
        f"{name!r} is named by a row of CONTRIBUTING.md's 'Where things live' table but is "
        "no module or package of src/rankboost (renamed? update the row)"
        for name in sorted(row_of.keys() - tops)
    ]
    problems += [
        f"`{name}` is listed in the 'may import' column of the row of "
        f"{', '.join(rows[i][0])} but is no module or package of src/rankboost"
        for i, (_, allowed) in enumerate(rows)
        for name in sorted(allowed.keys() - tops)
    ]
    problems += [
        f"rankboost{'' if name == 'rankboost' else '.' + name} has no row in CONTRIBUTING.md's "
        "'Where things live' table (add one: what it holds, what it may import)"
        for name in sorted(tops - row_of.keys())
    ]
    seen = set()
    for mod, dep, line, kind in sorted(_import_sites(), key=lambda s: (s[0], s[2])):
        a, b = _top(mod), _top(dep)
        if a not in row_of or b not in row_of or row_of[a] == row_of[b]:
            continue
        key = (mod, b, kind if b in rows[row_of[a]][1] else "")
        if key in seen:  # one line per module, imported row (and kind of import)
            continue
        seen.add(key)
        names, allowed = rows[row_of[a]]
        where = f"{mod} imports {dep} (line {line}"
        row = f"the row of `{'`, `'.join(names)}` in CONTRIBUTING.md"
        if b not in allowed:
            problems.append(f"{where}), but {row} does not list `{b}` under 'may import'")
        elif allowed[b] == "lazy" and kind == "top":
            problems.append(f"{where}, at import time), but {row} lists `{b}` as lazy")
        elif allowed[b] == "types" and kind != "types":
            problems.append(f"{where}, not under TYPE_CHECKING), but {row} lists `{b}` (types)")
    assert not problems, "\n".join(problems)


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


# ------------------------------------------ fitted attributes: the class writes its own (45)


def _is_fitted(name: str) -> bool:
    return name.endswith("_") and not (name.startswith("__") and name.endswith("__"))


def _built_by_the_class(func: ast.FunctionDef | ast.AsyncFunctionDef, cls: str) -> set[str]:
    """Locals of a classmethod bound to a new object of its class: ``cls(...)``,
    ``Class(...)``, ``cls.__new__(cls)``, ``object.__new__(cls)``."""
    makers = {"cls", cls}
    out = set()
    for node in ast.walk(func):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        f = node.value.func
        new = isinstance(f, ast.Name) and f.id in makers
        if isinstance(f, ast.Attribute) and f.attr == "__new__":
            args = node.value.args
            new = (isinstance(f.value, ast.Name) and f.value.id in makers) or bool(
                args and isinstance(args[0], ast.Name) and args[0].id in makers
            )
        if new:
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def _fitted_writes(path: Path) -> list[tuple[int, str, str]]:
    """``(line, function, target)`` of each write of a fitted attribute not of the writer's
    own object: ``X.name_ = ...`` (also augmented, annotated, unpacked), ``setattr(X,
    "name_", ...)``, ``object.__setattr__(X, "name_", ...)``; own = the method's ``self``,
    or in a classmethod a local built by the class (:func:`_built_by_the_class`)."""
    found = []

    def targets(node: ast.AST) -> list[tuple[ast.expr, str]]:
        """The (object, attribute name) pairs ``node`` writes."""
        if isinstance(node, ast.Assign):
            flat, todo = [], list(node.targets)
            while todo:
                t = todo.pop()
                if isinstance(t, (ast.Tuple, ast.List)):
                    todo += t.elts
                elif isinstance(t, ast.Starred):
                    todo.append(t.value)
                else:
                    flat.append(t)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            flat = [node.target]
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in (
            "setattr", "object.__setattr__"
        ):  # fmt: skip
            args = node.args
            if len(args) >= 2 and isinstance(args[1], ast.Constant):
                return [(args[0], str(args[1].value))]
            return []
        else:
            return []
        return [(t.value, t.attr) for t in flat if isinstance(t, ast.Attribute)]

    def visit(node: ast.AST, cls: str | None, func: str | None, own: frozenset[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, child.name, None, frozenset())
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                mine = own
                if cls is not None and func is None:  # a method of cls
                    decorators = {ast.unparse(d) for d in child.decorator_list}
                    if "classmethod" in decorators:
                        mine = frozenset(_built_by_the_class(child, cls))
                    elif "staticmethod" not in decorators and child.args.args:
                        mine = frozenset({child.args.args[0].arg})
                    name = f"{cls}.{child.name}"
                else:
                    name = child.name if func is None else f"{func}.{child.name}"
                visit(child, cls, name, mine)
                continue
            for obj, attr in targets(child):
                if _is_fitted(attr) and not (isinstance(obj, ast.Name) and obj.id in own):
                    found.append((child.lineno, func or "<module>", f"{ast.unparse(obj)}.{attr}"))
            visit(child, cls, func, own)

    visit(ast.parse(path.read_text()), None, None, frozenset())
    return found


def test_issue45_no_fitted_attribute_written_outside_its_class():
    """A fitted attribute (``name_``) is written by its own class only: in a method, on
    ``self``, or in a classmethod on an object the class built (a loader). A fit helper
    returns what it learned and the estimator assigns it (scikit-learn's HGBT,
    ``_fit.fit_ranker``). Issue 45 moved the last 42 such writes (fusion's loaders and
    fits, the recommender's fit helpers) into their classes: there is no exception."""
    writes = {
        (path.relative_to(SRC).as_posix(), line, func, target)
        for path in SRC.rglob("*.py")
        for line, func, target in _fitted_writes(path)
    }
    assert not writes, "fitted attributes written outside their class:\n" + "\n".join(
        f"{file}:{line}: {target} = ... (in {func})" for file, line, func, target in sorted(writes)
    )
