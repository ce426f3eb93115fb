"""Compare two results.json files leaf by leaf: ``python perf/results_diff.py A B [--tol 1e-5]``.

Prints every numeric leaf that differs (absolute and relative difference) and every non-numeric
leaf that differs, ignoring run-specific keys (paths, times, run ids). Exit 1 when a numeric
difference exceeds ``--tol`` (absolute) or a non-numeric leaf differs.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

IGNORED = {"run_id", "started_at", "finished_at", "output_dir", "trace_run_dir", "store_dir", "cwd", "argv",
           "host", "pid", "uri", "source_run", "run_dir", "created_at", "seconds", "versions"}


def leaves(node, path=""):
    if isinstance(node, dict):
        for key, value in node.items():
            if key not in IGNORED:
                yield from leaves(value, f"{path}.{key}" if path else key)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from leaves(value, f"{path}[{i}]")
    else:
        yield path, node


def diff(a: dict, b: dict) -> list[tuple[str, object, object, float | None]]:
    left, right = dict(leaves(a)), dict(leaves(b))
    out = []
    for key in sorted(set(left) | set(right)):
        x, y = left.get(key, "<absent>"), right.get(key, "<absent>")
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (x, y))
        if numeric:
            if x != y and not (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y)):
                out.append((key, x, y, abs(x - y)))
        elif x != y:
            out.append((key, x, y, None))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--tol", type=float, default=1e-5)
    args = parser.parse_args()
    with open(args.a) as fa, open(args.b) as fb:
        rows = diff(json.load(fa), json.load(fb))
    worst = 0.0
    bad = False
    for key, x, y, delta in rows:
        if delta is None:
            print(f"DIFF  {key}: {x!r} -> {y!r}")
            bad = True
        else:
            rel = delta / max(abs(x), abs(y), 1e-300)
            worst = max(worst, delta)
            print(f"{'OVER' if delta > args.tol else 'ok  '}  {key}: {x!r} -> {y!r}  (abs {delta:.3g}, rel {rel:.3g})")
            bad |= delta > args.tol
    print(f"{len(rows)} differing leaves; largest numeric |diff| {worst:.3g} (tolerance {args.tol:g})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
