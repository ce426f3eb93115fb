"""``python -m wfeval.export_dataset OUT [overrides...]``: a benchmark's samples as a dataset folder."""

from __future__ import annotations

import sys

from wfeval.benchmarks.export import main

if __name__ == "__main__":
    sys.exit(main())
