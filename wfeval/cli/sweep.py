"""The end of a multirun: one summary of every job, failures included, and shard merging.

Registered as a Hydra callback in ``conf/config.yaml`` (``hydra.callbacks.wfeval_sweep``), so
it runs with any launcher (basic, joblib, submitit) once all jobs have returned. It writes
``<sweep>/sweep_summary.md`` (+ ``leaderboard.md`` / ``.csv``) and prints the summary; when the
jobs are the shards of one run it first merges them into ``<sweep>/merged``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback

FAILED_JOBS: list[str] = []  # read by wfeval.cli.run to exit non-zero after a sweep with failures


def _jobs(sweep_dir: Path) -> list[tuple[Path, dict]]:
    jobs = []
    for manifest in sorted(sweep_dir.glob("*/manifest.json")):
        if manifest.parent.name != "merged":
            jobs.append((manifest.parent, json.loads(manifest.read_text(encoding="utf-8"))))
    return jobs


def summarize_sweep(sweep_dir: Path) -> str:
    from wfeval.pipeline.merge import merge_shards
    from wfeval.pipeline.stored import StoredRunError
    from wfeval.report.leaderboard import leaderboard, render_csv, render_markdown, render_text
    from wfeval.report.runs import load_entries

    jobs = _jobs(sweep_dir)
    done = [(d, m) for d, m in jobs if m.get("status") == "completed"]
    failed = [(d, m) for d, m in jobs if m.get("status") != "completed"]
    lines = [f"# Sweep {sweep_dir.name}", "", f"{len(jobs)} jobs: {len(done)} completed, {len(failed)} failed", ""]
    if done and not failed and all(m.get("shard") for _, m in done):
        try:
            merge_shards([d for d, _ in done], sweep_dir / "merged")
            done = [(sweep_dir / "merged", {})]
            lines += [f"shards merged into {sweep_dir / 'merged'}", ""]
        except StoredRunError as exc:
            lines += [f"shards not merged: {exc}", ""]
    if done:
        board = leaderboard(load_entries([d for d, _ in done]))
        lines += ["```", render_text(board), "```", ""]
        (sweep_dir / "leaderboard.md").write_text(render_markdown(board), encoding="utf-8")
        (sweep_dir / "leaderboard.csv").write_text(render_csv(board), encoding="utf-8")
    for job_dir, manifest in failed:
        lines.append(f"- FAILED {job_dir.name}: {manifest.get('status')}: {manifest.get('error', 'no error recorded')}")
    text = "\n".join(lines).rstrip() + "\n"
    (sweep_dir / "sweep_summary.md").write_text(text, encoding="utf-8")
    FAILED_JOBS[:] = [d.name for d, _ in failed]
    return text


class SweepSummary(Callback):
    def on_multirun_end(self, config: Any, **kwargs: Any) -> None:
        sweep_dir = Path(str(config.hydra.sweep.dir))
        if sweep_dir.is_dir():
            print("\n" + summarize_sweep(sweep_dir))
