"""``python -m wfeval``: the Hydra entry (:mod:`wfeval.cli.run`)."""

import sys

from wfeval.cli.run import main

if __name__ == "__main__":
    sys.exit(main())
