"""ranx as a reference, run in a child process by the Python interpreter (NUMBA_DISABLE_JIT=1).

ranx computes with numba functions (typed dicts, parallel metric loops) that took about 80 s of
CPU to compile on a cold cache: most of what a fresh ``make test`` spent on ranx (issue 26).
The interpreter runs the same ranx source, the same algorithm: on the runs of
``tests/test_metrics_reference.py`` its per-query values differed from the compiled ranx's by
at most 2.3e-16 (the tests compare to 1e-12), and it read the same TREC run files, checked
once by running both (2026-12-02). The switch is set in the child only, which imports ranx and
not rankboost: the kernels under test stay compiled.

The parent sends one request as JSON on standard input and reads the answer as JSON (floats
round-trip exactly through Python's ``json``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from typing import Any

HAVE_RANX = importlib.util.find_spec("ranx") is not None


def _ask(request: dict[str, Any]) -> Any:
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run(
        [sys.executable, __file__],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def evaluate(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], metrics: list[str]
) -> dict[str, list[float]]:
    """``ranx.evaluate(Qrels(qrels), Run(run), metrics, return_mean=False)``: per query, in
    ranx's order of queries (sorted string ids)."""
    return _ask({"op": "evaluate", "qrels": qrels, "run": run, "metrics": metrics})


def read_run(path: str) -> dict[str, dict[str, float]]:
    """``ranx.Run.from_file(path, kind="trec").to_dict()``."""
    return _ask({"op": "read_run", "path": path})


def _serve() -> None:
    import warnings

    import ranx

    request = json.load(sys.stdin)
    if request["op"] == "evaluate":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ranx warns about queries without relevant docs
            got = ranx.evaluate(
                ranx.Qrels(request["qrels"]),
                ranx.Run(request["run"]),
                request["metrics"],
                return_mean=False,
            )
        answer: Any = {name: [float(v) for v in values] for name, values in got.items()}
    else:
        answer = ranx.Run.from_file(request["path"], kind="trec").to_dict()
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    _serve()
