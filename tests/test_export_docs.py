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
