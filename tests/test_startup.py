"""Light start-up (issue 16, item 10): ``import rankboost`` and ``rankboost --help`` import
neither numba nor scipy nor scikit-learn; every public name still resolves on first use.

Timings are in ``benchmarks/bench_startup.py`` (targets there, not here: the machine is shared).
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import rankboost as rb

HEAVY = ("numba", "scipy", "sklearn", "pandas")


def _imported_after(code: str) -> list[str]:
    """The HEAVY modules in ``sys.modules`` after running ``code`` in a fresh interpreter."""
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout
    return out.split()


@pytest.mark.parametrize(
    "code",
    [
        "import rankboost",
        "import rankboost.cli",
        "from rankboost.cli import _build_parser; _build_parser()",
        "import rankboost; rankboost.params; rankboost.TrainParams; rankboost.__version__",
    ],
)
def test_light_imports_issue16(code: str) -> None:
    assert _imported_after(code) == []


def test_help_and_version_import_no_numba_issue16() -> None:
    code = (
        "import contextlib, io\n"
        "from rankboost.cli import main\n"
        "for argv in (['--help'], ['--version'], ['fuse', '--help'], ['export', '--help']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "        main(argv)"
    )
    assert _imported_after(code) == []


def test_every_public_name_resolves() -> None:
    for name in rb.__all__:
        assert getattr(rb, name) is not None, name
    assert set(rb.__all__) <= set(dir(rb))
    assert rb.recommend.RankBoostRecommender is rb.RankBoostRecommender
    assert rb.fusion.RankFusion is rb.RankFusion
    from rankboost import RankBoostRanker, train  # from-import goes through __getattr__

    assert train is importlib.import_module("rankboost.booster").train
    assert RankBoostRanker is importlib.import_module("rankboost.sklearn").RankBoostRanker


def test_fusion_public_names_resolve() -> None:
    for name in rb.fusion.__all__:
        assert getattr(rb.fusion, name) is not None, name
    assert set(rb.fusion.__all__) <= set(dir(rb.fusion))


@pytest.mark.parametrize("module", [rb, rb.fusion])
def test_unknown_attribute_raises_attribute_error(module: object) -> None:
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        getattr(module, "no_such_name")  # noqa: B009


def test_first_use_imports_the_engine() -> None:
    assert "numba" in _imported_after("import rankboost as rb; rb.train")
