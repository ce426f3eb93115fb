"""``python -m wfeval.features.fetch``: the command lives in :mod:`wfeval.cli.fetch`."""

import sys

from wfeval.cli.fetch import main

if __name__ == "__main__":
    sys.exit(main())
