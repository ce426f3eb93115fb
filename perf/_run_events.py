"""The first event of each kind in a run folder's ``events.jsonl``, for the benchmark scripts."""

from __future__ import annotations

import json
from pathlib import Path


def first_events(run_dir: Path) -> dict[str, dict]:
    """``event`` (or ``event:phase``) → the first such event."""
    out: dict[str, dict] = {}
    for line in (Path(run_dir) / "events.jsonl").read_text().splitlines():
        if line.strip():
            event = json.loads(line)
            out.setdefault(event["event"] + (":" + event["phase"] if "phase" in event else ""), event)
    return out
