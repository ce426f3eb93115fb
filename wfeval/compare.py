"""``python -m wfeval.compare PATH...``: the command lives in :mod:`wfeval.cli.compare`."""

import sys

from wfeval.cli.compare import main

if __name__ == "__main__":
    sys.exit(main())
