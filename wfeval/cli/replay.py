"""``python -m wfeval.replay RUN_DIR [--out DIR]``: rebuild a run's results from its files alone.

Nothing is generated and no metric scores a sample again: the per-sample rows of
``metrics.jsonl`` are aggregated by the same metric classes (built from ``.hydra/config.yaml``)
with the benchmark rules recorded in ``manifest.json``, a chunk of samples at a time into the
runner's result table (memory does not grow with the samples). The rebuilt ``results.json`` equals the
original byte for byte; ``results.md`` and the printed table come with it, then where it wrote and
whether the result matches the run's own ``results.json`` (``--check``: exit 1 when it does not).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from wfeval.cli.command import command
from wfeval.pipeline.stored import StoredRunError, rebuild_results
from wfeval.storage.outputs import OutputRefused, refuse_run_files
from wfeval.results.record import RunResults, read_manifest, read_results, write_results
from wfeval.storage.rundir import FILES, RunDirectory
from wfeval.storage.safe_io import refuse_link


def replay(run_dir: Path, out_dir: Path) -> RunResults:
    from wfeval.report.markdown import results_markdown
    from wfeval.report.table import results_table
    from wfeval.report.units import unit_of

    manifest, metrics, results, document = rebuild_results(run_dir)
    for metric_id, options in metrics.code_left_out.items():
        print(f"metric {metric_id!r}: rebuilt as the registered {type(metrics[metric_id]).__name__} "
              f"{(manifest.metrics or {})[metric_id].version} it records, without its option "
              f"{'; '.join(options)} (a run folder's code is never run): its stored rows are aggregated, "
              "not scored again")
    out = RunDirectory(out_dir)
    write_results(out, document)
    out.write_text(FILES.results_md, results_markdown(document))
    units = {m: unit_of(document, m) for m in results}
    title = f"{manifest.model_info.name} on {manifest.benchmark_info.id}  (replayed {run_dir})"
    print(results_table(results, title=title, units=units))
    print(f"wrote {out.path / FILES.results} and {out.path / FILES.results_md}")
    return document


def differences(original: Any, rebuilt: Any, path: str = "") -> list[str]:
    """Where two results.json documents differ (key paths), at most a few; [] when equal."""
    if isinstance(original, dict) and isinstance(rebuilt, dict):
        out = []
        for key in list(original) + [k for k in rebuilt if k not in original]:
            where = f"{path}.{key}" if path else str(key)
            if key not in rebuilt:
                out.append(f"{where} only in the run's results.json")
            elif key not in original:
                out.append(f"{where} only in the replay")
            else:
                out += differences(original[key], rebuilt[key], where)
        return out
    if original != rebuilt:
        return [f"{path}: {_short(original)} in the run, {_short(rebuilt)} replayed"]
    return []


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:59] + "…"


ADDED = tuple(f".{field} only in the replay" for field in ("unit", "bounds", "family", "rung"))  # display_fields


def verdict(run_dir: Path, out_dir: Path) -> tuple[bool | None, str]:
    """Whether the replayed results.json equals the run's byte for byte, said in one paragraph."""
    original, rebuilt = run_dir / FILES.results, out_dir / FILES.results
    if not original.is_file():
        return None, f"the run has no results.json to compare with (status: {_status(run_dir)})"
    if original.read_bytes() == rebuilt.read_bytes():
        return True, f"matches the run's results.json byte for byte ({original})"
    try:
        found = differences(read_results(original).to_dict(), read_results(rebuilt).to_dict())  # type: ignore[union-attr]
    except (ValueError, UnicodeDecodeError):
        found = ["the run's results.json is not readable JSON"]
    added = [d for d in found if d.startswith("metrics.") and d.endswith(ADDED)]
    if found and len(added) == len(found):
        return True, (f"matches the run's results.json ({original}) in every value; the replay adds the fields "
                      "this wfeval writes beside each metric (unit, bounds, family, rung)")
    shown = "; ".join(found[:5]) + (f"; … {len(found) - 5} more" if len(found) > 5 else "")
    return False, (f"DIFFERS from the run's results.json ({original}): {shown or 'same content, other bytes'} "
                   "(another wfeval or metric version, or files changed since the run)")


def _status(run_dir: Path) -> str:
    try:
        manifest = read_manifest(run_dir)
    except (OSError, ValueError):
        return "unknown"
    return str(manifest.status) if manifest is not None else "unknown"


@command("wfeval.replay")
def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m wfeval.replay", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--out", type=Path, default=None, help="where to write (default: RUN_DIR/replay)")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when the replayed results.json differs from the run's")
    args = parser.parse_args(argv)
    run_dir = args.run_dir.expanduser().resolve()
    out_dir = args.out or run_dir / FILES.replay
    try:
        refuse_link(out_dir)  # a run folder is data: its `replay` may be a link to someone else's folder
        refuse_run_files(out_dir, folder=True)  # --out another run: its results.json stays its own
        replay(run_dir, out_dir)
    except (StoredRunError, OutputRefused) as exc:
        print(f"wfeval.replay: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        from wfeval.pipeline.failure import describe_os_error

        print(f"wfeval.replay: cannot write the results: {describe_os_error(exc)}", file=sys.stderr)
        return 1
    same, text = verdict(run_dir, out_dir)
    print(text)
    return 1 if args.check and same is False else 0


if __name__ == "__main__":
    sys.exit(main())
