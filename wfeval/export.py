"""``python -m wfeval.export PATH... --format csv|json|md``: the command lives in :mod:`wfeval.cli.export`."""

import sys

from wfeval.cli.export import main

if __name__ == "__main__":
    sys.exit(main())
