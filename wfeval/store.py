"""``python -m wfeval.store {du,prune}``: the command lives in :mod:`wfeval.cli.store`."""

import sys

from wfeval.cli.store import main

if __name__ == "__main__":
    sys.exit(main())
