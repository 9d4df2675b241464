"""Every docstring example of the ``rankboost`` package runs (one test per docstring).

The examples are collected with :class:`doctest.DocTestFinder` over every module of the
installed package (``pkgutil.walk_packages``; an import error fails the collection, it is not
skipped). ``rankboost.__main__`` is left out: it only starts the command line, whose examples
live in :mod:`rankboost.cli`. An example that needs a missing optional package (matplotlib,
pandas, tqdm, dask) is skipped with the package named; anything else that goes wrong fails.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

import rankboost

OPTIONFLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
OPTIONAL = ("matplotlib", "pandas", "tqdm", "dask", "distributed")
#: Modules whose examples need an optional package even when they do not import it.
MODULE_NEEDS = {"rankboost.plotting": "matplotlib"}
#: Never imported here: ``python -m rankboost`` is the command line.
EXCLUDED = {"rankboost.__main__"}
#: The package has ~300 examples; far fewer means the collection broke.
MIN_EXAMPLES = 200


def _raise(name: str) -> None:
    # walk_packages ignores ImportErrors of subpackages unless told otherwise
    raise ImportError(f"cannot import {name} to collect its doctests") from sys.exc_info()[1]


def _module_names() -> list[str]:
    names = {"rankboost"}
    for info in pkgutil.walk_packages(rankboost.__path__, "rankboost.", onerror=_raise):
        names.add(info.name)
    return sorted(names - EXCLUDED)


def _collect() -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests: list[doctest.DocTest] = []
    for name in _module_names():
        module = importlib.import_module(name)
        tests.extend(t for t in finder.find(module, name) if t.examples)
    return sorted(tests, key=lambda t: t.name)


DOCTESTS = _collect()


def _needs(test: doctest.DocTest) -> list[str]:
    """Optional packages the examples of ``test`` use."""
    source = "\n".join(ex.source for ex in test.examples)
    needs = [m for m in OPTIONAL if re.search(rf"\b{m}\b", source)]
    for module, package in MODULE_NEEDS.items():
        in_module = test.name == module or test.name.startswith(module + ".")
        if in_module and package not in needs:
            needs.append(package)
    return needs


def _missing_optional(exc: BaseException | None) -> str | None:
    """The optional package whose absence caused ``exc`` (through its causes), if any."""
    while exc is not None:
        if isinstance(exc, ModuleNotFoundError) and exc.name:
            top = exc.name.split(".")[0]
            if top in OPTIONAL:
                return top
        exc = exc.__cause__ or exc.__context__
    return None


class _Runner(doctest.DocTestRunner):
    missing: str | None = None

    def report_unexpected_exception(self, out, test, example, exc_info):
        self.missing = self.missing or _missing_optional(exc_info[1])
        super().report_unexpected_exception(out, test, example, exc_info)


# numpy's default print options, so that an earlier test that changes them does not matter
_NUMPY_PRINT = {
    "precision": 8,
    "threshold": 1000,
    "edgeitems": 3,
    "linewidth": 75,
    "suppress": False,
    "nanstr": "nan",
    "infstr": "inf",
    "sign": "-",
    "floatmode": "maxprec",
    "legacy": False,
}


# the examples train on toy data that one weak ranker orders: they stop early, by design
@pytest.mark.filterwarnings("ignore::rankboost.TrainingStoppedWarning")
@pytest.mark.parametrize("test", DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_docstring_examples(test: doctest.DocTest, tmp_path: Path, monkeypatch) -> None:
    for module in _needs(test):
        pytest.importorskip(module, reason=f"{test.name} needs the optional package {module}")
    # files an example writes (tempfile.mkdtemp, relative paths) land in pytest's tmp_path
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    runner = _Runner(optionflags=OPTIONFLAGS, verbose=False)
    report: list[str] = []
    globs = dict(test.globs)
    try:
        with np.printoptions(**_NUMPY_PRINT):
            result = runner.run(test, out=report.append, clear_globs=False)
    finally:
        test.globs = globs  # a rerun starts from the module's namespace again
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")
    if result.failed and runner.missing:
        pytest.skip(f"{test.name} needs the optional package {runner.missing}")
    if result.failed:
        pytest.fail(
            f"{result.failed} of {result.attempted} examples of {test.name} failed:\n"
            + "".join(report),
            pytrace=False,
        )


def test_doctests_are_collected() -> None:
    """The collection finds the package's examples, not silently none of them."""
    n_examples = sum(len(t.examples) for t in DOCTESTS)
    assert n_examples >= MIN_EXAMPLES, f"only {n_examples} docstring examples were found"
    modules = {t.name for t in DOCTESTS}
    for name in ("rankboost.engine.train", "rankboost.callback.early_stopping"):
        assert name in modules, f"no doctest collected for {name}"
    assert not any(t.name.startswith("rankboost.__main__") for t in DOCTESTS)
