"""``python -m wfeval.recipes.train benchmark=...``: the command lives in :mod:`wfeval.cli.train`."""

import sys

from wfeval.cli.train import main

if __name__ == "__main__":
    sys.exit(main())
