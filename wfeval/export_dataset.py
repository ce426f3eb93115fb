"""``python -m wfeval.export_dataset OUT_DIR [overrides]``: the command lives in :mod:`wfeval.cli.export_dataset`."""

import sys

from wfeval.cli.export_dataset import main

if __name__ == "__main__":
    sys.exit(main())
