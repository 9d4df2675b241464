"""Optional dependencies, imported in one place (the shape of ``lightgbm/compat.py``).

Each optional package has an ``*_INSTALLED`` flag; a missing one raises an ``ImportError``
naming the install line (:func:`install_hint`, the one every message uses) only when a
feature that needs it is used.
"""

from __future__ import annotations

import warnings
from typing import Any

try:  # tqdm: progress bars (extra "progress")
    from tqdm.auto import tqdm as _tqdm

    TQDM_INSTALLED = True
except ImportError:  # pragma: no cover - exercised only without tqdm
    _tqdm = None
    TQDM_INSTALLED = False

__all__ = [
    "TQDM_INSTALLED",
    "ProgressBarWarning",
    "Steps",
    "install_hint",
    "progress_bar",
    "require",
    "restart_clock",
]


class ProgressBarWarning(UserWarning):
    """``verbose=True`` asked for a progress bar but tqdm is not installed."""


_warned: set[str] = set()  # what has been warned about in this process

_EXTRAS = {
    "matplotlib": "plot",
    "tqdm": "progress",
    "pandas": "pandas",
    "dask": "dask",
    "distributed": "dask",
    "qdrant_client": "engines",
    "pymilvus": "engines",
    "milvus_lite": "engines",
    "lancedb": "engines",
    "onnx": "onnx",
    "onnxruntime": "onnx",
}


def install_hint(module: str) -> str:
    """The install line of the extra that brings the optional package ``module``.

    One for an installed package and one for a clone of the repository (whose ``.venv``,
    made by ``make``, has pip): every message about a missing optional package uses it.

    Examples
    --------
    >>> print(install_hint("matplotlib.pyplot"))
    pip install 'rankboost[plot]' (in a clone of the repository: .venv/bin/pip install -e '.[plot]')
    """
    extra = _EXTRAS.get(module.split(".")[0], module.split(".")[0])
    return (
        f"pip install 'rankboost[{extra}]' (in a clone of the repository: "
        f".venv/bin/pip install -e '.[{extra}]')"
    )


def require(module: str, feature: str) -> Any:
    """Import an optional ``module`` or raise an ImportError with the install line."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{feature} needs the optional package '{module.split('.')[0]}': {install_hint(module)}"
        ) from exc


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        pass

    def set_description_str(self, desc: str = "", refresh: bool = True) -> None:
        pass


def progress_bar(total: int, disable: bool, desc: str, stacklevel: int = 2) -> Any:
    """A tqdm bar, or a silent stand-in when disabled or tqdm is not installed.

    Asking for a bar (``disable=False``) without tqdm warns once per process
    (:class:`ProgressBarWarning`, with the ``pip install`` line), ``stacklevel`` as in
    :func:`warnings.warn` counted from the caller of this function.
    """
    if disable:
        return _NoBar()
    if _tqdm is None:
        if "tqdm" not in _warned:
            _warned.add("tqdm")
            warnings.warn(
                "verbose=True shows a progress bar only with the optional package 'tqdm': "
                + install_hint("tqdm"),
                ProgressBarWarning,
                stacklevel=stacklevel + 1,
            )
        return _NoBar()
    return _tqdm(total=total, desc=desc, leave=False)


def restart_clock(bar: Any, desc: str) -> None:
    """Leave the steps done so far out of ``bar``'s rate and time left; describe it ``desc``.

    After a first training round that is not like the others (numba compiles the kernels
    on their first call, or loads them from its cache), tqdm would take that round's time
    as the rate and show an ETA of many minutes: the clock restarts at the current count
    (tqdm's ``initial``), so the rate and ETA come from the next rounds. A bar without
    ``reset`` (no tqdm, disabled) is left alone.
    """
    reset = getattr(bar, "reset", None)
    if reset is None:
        return
    done = bar.n
    bar.set_description_str(desc, refresh=False)
    reset(total=bar.total)  # the clock, tqdm's smoothed rate, the count (0)
    bar.n = bar.initial = bar.last_print_n = done
    bar.refresh()


class Steps:
    """A progress bar over the named steps of a long computation (a fit's stages).

    ``start(what)`` names the step that begins (``"desc: what"`` on the bar), ``done()``
    counts it; ``close()`` fills the bar (steps estimated but not needed) and closes it.
    A silent stand-in when disabled or without tqdm (:func:`progress_bar`).

    Examples
    --------
    >>> steps = Steps(2, disable=True, desc="fit")
    >>> steps.start("loading"); steps.done(); steps.start("training"); steps.done()
    >>> steps.close()
    """

    def __init__(self, total: int, disable: bool, desc: str, stacklevel: int = 2) -> None:
        self.desc, self.count = desc, 0
        self.bar = progress_bar(total, disable, desc, stacklevel=stacklevel + 1)

    def start(self, what: str) -> None:
        """Name the step that begins."""
        self.bar.set_description_str(f"{self.desc}: {what}")

    def done(self, n: int = 1) -> None:
        """Count ``n`` steps as done."""
        self.count += n
        self.bar.update(n)

    def close(self) -> None:
        """Fill the bar to its total and close it."""
        total = getattr(self.bar, "total", None)
        if total is not None and total > self.count:
            self.bar.update(total - self.count)
        self.bar.close()
