"""The shared data files of the experiments (issue 40): a missing one stops the script with one
line saying which file, which data set and where it comes from, not a traceback later.

The helper is ``benchmarks/_common.data_file``, imported from there so that the data folder
(``../shared/data`` beside the repository, or ``$RANKBOOST_DATA``) and the provenance text
are defined once. Scripts run as ``python experiments/<name>.py`` import it as
``from _data import data_file``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _common import PROVENANCE, SHARED_DATA, data_file  # noqa: E402

__all__ = ["PROVENANCE", "SHARED_DATA", "data_file"]
