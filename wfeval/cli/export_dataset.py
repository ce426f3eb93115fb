"""``python -m wfeval.export_dataset OUT [overrides...]``: a benchmark's samples as a dataset folder
(format ``wfeval.dataset/1``).

The requests come from the same code path as a run (:func:`wfeval.pipeline.select.select_requests`), so evaluating
the exported folder with ``benchmark=folder`` evaluates the same data as the benchmark itself.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

from wfeval.cli.command import command


def export_dataset(out: str | Path, overrides: Sequence[str] = (), *, name: str | None = None,
                   video_suffix: str = ".mkv", overwrite: bool = False) -> dict[str, Any]:
    """Compose the config (``overrides`` as on the wfeval command line), build the benchmark and
    write its selected samples (``run.limit``, ``benchmark.split``, ...) into ``out``."""
    from wfeval.benchmarks.folder.writer import write_dataset
    from wfeval.cli.boundary import compose_checked
    from wfeval.config import trust
    from wfeval.pipeline import build
    from wfeval.pipeline.select import select_requests
    from wfeval.storage.artifacts import ArtifactStore

    # the overrides are this command's command line: the config is checked like a run's (docs/trust.md)
    policy = trust.TrustPolicy.from_overrides(list(overrides))
    with trust.in_force(policy):
        cfg = compose_checked(list(overrides), policy)  # the boundary: composed once, checked (docs/trust.md)
        task, protocol = build.build_task(cfg), build.build_protocol(cfg)
        bench = build.build_benchmark(cfg)
        with tempfile.TemporaryDirectory(prefix="wfeval-export-") as tmp:
            store = ArtifactStore(tmp)
            requests = select_requests(bench, store=store, task=task, protocol=protocol,
                                       limit=cfg.run.limit, shard=None)
            return write_dataset(
                requests, out, store=store, name=name or bench.spec.name, version=bench.spec.version,
                description=bench.spec.description, video_suffix=video_suffix, overwrite=overwrite,
                source={"benchmark": bench.spec.benchmark_id, "fingerprint": bench.fingerprint(),
                        "overrides": list(overrides)},
            )


@command("wfeval.export_dataset")
def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m wfeval.export_dataset",
        description="Write a benchmark's samples as a dataset folder (manifest.jsonl + files).",
        epilog="example: python -m wfeval.export_dataset data/gw4 benchmark=gridworld run.limit=4",
    )
    parser.add_argument("out", type=Path, help="the folder to write (must be empty unless --force)")
    parser.add_argument("overrides", nargs="*", help="config overrides, as for python -m wfeval")
    parser.add_argument("--name", default=None, help="dataset name (default: the benchmark's name)")
    parser.add_argument("--video-format", default="mkv", choices=["mkv", "avi", "mov", "npz", "npy", "mp4"],
                        help="reference videos: mkv/avi (ffv1), mov (png), npz, npy are lossless; mp4 is not")
    parser.add_argument("--force", action="store_true", help="replace a non-empty output folder")
    args = parser.parse_args(argv)
    from wfeval.config.errors import friendly_message

    from wfeval.storage.outputs import OutputRefused, refuse_run_files

    try:
        refuse_run_files(args.out, folder=True)  # --force would delete a run's files
    except OutputRefused as exc:
        print(f"wfeval.export_dataset: {exc}", file=sys.stderr)
        return 2
    try:
        summary = export_dataset(args.out, args.overrides, name=args.name, video_suffix=f".{args.video_format}",
                                 overwrite=args.force)
    except FileExistsError as exc:
        message = str(exc)
        if "overwrite=True" in message:  # the library's wording names its argument; this is the command line
            message = f"{args.out} is not empty; add --force to replace its contents, or choose an empty folder"
        print(f"wfeval.export_dataset: {message}", file=sys.stderr)
        return 2
    except Exception as exc:
        message = friendly_message(exc)
        if message is None:
            raise
        print(message, file=sys.stderr)
        return 2
    skipped = summary["skipped_unreadable"]
    for item in skipped:
        print(f"left out {item['sample_id']!r}: {item['reason']}", file=sys.stderr)
    print(f"wrote {summary['samples']} sample(s) to {summary['root']}"
          + (f" ({len(skipped)} unreadable left out)" if skipped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
