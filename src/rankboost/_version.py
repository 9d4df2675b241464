"""The installed version of rankboost, read from the package metadata.

``rankboost.__version__`` imports this module on first use (:mod:`rankboost._lazy`):
``importlib.metadata`` costs about 40 ms, a seventh of ``rankboost predict``'s whole process
(``benchmarks/bench_startup.py --predict``), and only ``--version`` and the ONNX
export need it.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]

try:
    __version__ = version("rankboost")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"
