"""``python -m wfeval.merge SHARD_RUN... --out DIR``: the command lives in :mod:`wfeval.cli.merge`."""

import sys

from wfeval.cli.merge import main

if __name__ == "__main__":
    sys.exit(main())
