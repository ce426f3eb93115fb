"""The end of a multirun: one summary of every job, failures included, and shard merging.

Registered as a Hydra callback in ``conf/config.yaml`` (``hydra.callbacks.wfeval_sweep``), so
it runs with any launcher (basic, joblib, submitit) once all jobs have returned. It writes
``<sweep>/sweep_summary.md`` (+ ``leaderboard.md`` / ``.csv``) and prints the summary; when the
jobs are the shards of one run it first merges them into ``<sweep>/merged``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hydra.experimental.callback import Callback

from wfeval.storage.rundir import FILES
from wfeval.storage.safe_io import atomic_write_bytes

if TYPE_CHECKING:
    from wfeval.results.record import RunManifest


class SweepFailed(SystemExit):
    """Ends a sweep with failed jobs with status 1. A ``SystemExit``: Hydra turns an exception of a
    callback into a warning, a ``SystemExit`` passes through it."""

    def __init__(self, failed: list[str]):
        super().__init__(1)
        self.failed = failed


def _jobs(sweep_dir: Path) -> list[tuple[Path, RunManifest]]:
    from wfeval.results.record import read_manifest

    jobs = []
    for manifest in sorted(sweep_dir.glob(f"*/{FILES.manifest}")):
        if manifest.parent.name != FILES.merged:
            jobs.append((manifest.parent, read_manifest(manifest.parent)))
    return jobs


def summarize_sweep(sweep_dir: Path) -> tuple[str, list[str]]:
    """The summary text (also written to ``sweep_summary.md``) and the names of the failed jobs."""
    from wfeval.pipeline.merge_shards import merge_shards
    from wfeval.pipeline.stored import StoredRunError
    from wfeval.report.leaderboard import leaderboard, render_text, write_leaderboard
    from wfeval.report.runs import load_entries
    from wfeval.results.record import RunManifest

    jobs = _jobs(sweep_dir)
    done = [(d, m) for d, m in jobs if m.status == "completed"]
    failed = [(d, m) for d, m in jobs if m.status != "completed"]
    lines = [f"# Sweep {sweep_dir.name}", "", f"{len(jobs)} jobs: {len(done)} completed, {len(failed)} failed", ""]
    if done and not failed and all(m.shard for _, m in done):
        try:
            merge_shards([d for d, _ in done], sweep_dir / FILES.merged)
            done = [(sweep_dir / FILES.merged, RunManifest())]
            lines += [f"shards merged into {sweep_dir / FILES.merged}", ""]
        except StoredRunError as exc:
            lines += [f"shards not merged: {exc}", ""]
    if done:
        board = leaderboard(load_entries([d for d, _ in done]))
        lines += ["```", render_text(board), "```", ""]
        write_leaderboard(board, sweep_dir)
    for job_dir, manifest in failed:
        error = manifest.error if manifest.error is not None else "no error recorded"
        lines.append(f"- FAILED {job_dir.name}: {manifest.status}: {error}")
    text = "\n".join(lines).rstrip() + "\n"
    atomic_write_bytes(sweep_dir / FILES.sweep_summary, text.encode("utf-8"), durable=False)  # never via a link
    return text, [d.name for d, _ in failed]


class SweepSummary(Callback):
    def on_multirun_end(self, config: Any, **kwargs: Any) -> None:
        sweep_dir = Path(str(config.hydra.sweep.dir))
        if not sweep_dir.is_dir():
            return
        text, failed = summarize_sweep(sweep_dir)
        print("\n" + text)
        if failed:
            print(f"{len(failed)} sweep job(s) failed: {', '.join(failed)}", file=sys.stderr)
            raise SweepFailed(failed)
