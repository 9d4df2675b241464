"""Cold numba compile of a first training, A/B in one process: CPU seconds per source tree.

Each repeat imports a fresh copy of every given ``src`` folder's ``rankboost`` (copied to a new
temporary path, with a new empty ``NUMBA_CACHE_DIR``, so nothing is cached) and runs the tiny
training of ``bench_startup.py`` (40 rows, 3 features, 5 rounds), summing the CPU time of
numba's top-level ``numba:compile`` events. The trees take turns, one repeat each, so they
see the same machine load; the first round of turns is dropped (numba's own one-time set-up
and the first use of its typing templates land there). On a shared machine this is steadier
than comparing cold processes (issue 36, item 3: the levers were chosen with it).

Run::

    python benchmarks/cold_compile_ab.py src /path/to/other/checkout/src --repeats 4
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    """Print min and median compile CPU seconds of each source tree."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("src", nargs="+", type=Path, help="folders holding a rankboost package")
    p.add_argument("--repeats", type=int, default=4, help="measured turns (default 4)")
    args = p.parse_args(argv)
    import numba.core.config
    import numpy as np
    from numba.core import event

    stack: list[float] = []
    total = [0.0]

    class Listener(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            stack.append(time.process_time())

        def on_end(self, ev: event.Event) -> None:
            start = stack.pop()
            if not stack:
                total[0] += time.process_time() - start

    event.register("numba:compile", Listener())
    warnings.simplefilter("ignore")
    seconds: dict[Path, list[float]] = {src: [] for src in args.src}
    for _ in range(args.repeats + 1):
        for src in args.src:
            with tempfile.TemporaryDirectory(prefix="rb-cold-ab-") as tmp:
                shutil.copytree(
                    src / "rankboost",
                    Path(tmp) / "rankboost",
                    ignore=shutil.ignore_patterns("__pycache__"),
                )
                os.environ["NUMBA_CACHE_DIR"] = str(Path(tmp) / "cache")
                numba.core.config.reload_config()
                for name in [m for m in sys.modules if m.split(".")[0] == "rankboost"]:
                    del sys.modules[name]
                sys.path.insert(0, tmp)
                try:
                    import rankboost as rb

                    rng = np.random.default_rng(0)
                    X = rng.normal(size=(40, 3))
                    y = (X[:, 0] + rng.normal(size=40) > 0).astype(int)
                    total[0] = 0.0
                    rb.train(X, rb.LayeredFeedback(y, np.repeat(np.arange(4), 10)), n_rounds=5)
                    seconds[src].append(total[0])
                finally:
                    sys.path.remove(tmp)
    for src, values in seconds.items():
        kept = values[1:]
        print(
            f"{src}: compile CPU min {min(kept):.2f} s, median {statistics.median(kept):.2f} s "
            f"({' '.join(f'{v:.2f}' for v in kept)})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
