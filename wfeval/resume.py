"""``python -m wfeval.resume RUN_DIR``: the command lives in :mod:`wfeval.cli.resume`."""

import sys

from wfeval.cli.resume import main

if __name__ == "__main__":
    sys.exit(main())
