"""``python -m wfeval.arena RUNS_OR_SWEEP``: the command lives in :mod:`wfeval.cli.arena`."""

import sys

from wfeval.cli.arena import main

if __name__ == "__main__":
    sys.exit(main())
