"""The Python examples of docs/serving.md run as doctests, against the real consumers."""

from __future__ import annotations

import doctest
import warnings
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_serving_examples(tmp_path, monkeypatch) -> None:
    for module in ("xgboost", "lightgbm", "onnx", "onnxruntime"):
        pytest.importorskip(module, reason=f"docs/serving.md loads the exports into {module}")
    monkeypatch.chdir(tmp_path)  # the examples write their files here
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an example must not warn (e.g. ExportWarning)
        result = doctest.testfile(
            str(DOCS / "serving.md"),
            module_relative=False,
            optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
            raise_on_error=False,
            verbose=False,
        )
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"
    assert result.attempted >= 30


CONSUMERS = ("xgboost", "lightgbm", "onnx", "onnxruntime")  # what the examples above load


def test_export_extra_installs_every_consumer() -> None:
    """``pip install 'rankboost[export]'`` brings every consumer the serving docs load into.

    The extra's requirements (their markers evaluated here) name the distribution that
    provides each consumer module installed here (xgboost from xgboost-cpu on Linux), and
    docs/serving.md names the extra.
    """
    from importlib.metadata import packages_distributions

    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    requirements = pytest.importorskip("packaging.requirements")
    extras = tomllib.loads((DOCS.parent / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert "export" in extras, "pyproject.toml has no 'export' extra"
    wanted = set()
    for text in extras["export"]:
        req = requirements.Requirement(text)
        if req.marker is None or req.marker.evaluate():
            wanted.add(req.name.lower())
    provided = packages_distributions()
    for module in CONSUMERS:
        pytest.importorskip(module)
        dists = {d.lower() for d in provided.get(module, [])}
        assert dists & wanted, f"the export extra installs none of {dists} (module {module})"
    assert "pip install 'rankboost[export]'" in (DOCS / "serving.md").read_text()
