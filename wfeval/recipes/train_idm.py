"""``python -m wfeval.recipes.train_idm benchmark=...``: the command lives in :mod:`wfeval.cli.train_idm`."""

import sys

from wfeval.cli.train_idm import main

if __name__ == "__main__":
    sys.exit(main())
