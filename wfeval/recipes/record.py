"""``python -m wfeval.recipes.record benchmark=...``: the command lives in :mod:`wfeval.cli.record`."""

import sys

from wfeval.cli.record import main

if __name__ == "__main__":
    sys.exit(main())
