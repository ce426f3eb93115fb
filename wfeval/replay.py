"""``python -m wfeval.replay RUN_DIR``: the command lives in :mod:`wfeval.cli.replay`."""

import sys

from wfeval.cli.replay import main

if __name__ == "__main__":
    sys.exit(main())
