"""``python -m rankboost``: the ``rankboost`` command line (see :mod:`rankboost.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
