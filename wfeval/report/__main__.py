"""``python -m wfeval.report PATH...``: the command lives in :mod:`wfeval.cli.report`."""

import sys

from wfeval.cli.report import main

if __name__ == "__main__":
    sys.exit(main())
