"""What can be shown: the runs given, read as data, and every pair of runs on one sample.

Runs are grouped by leaderboard column (benchmark, task, protocol). Two runs of a column make a
pair on a sample when both generated a video for it and the sample is the same in both (the same
id and content: :func:`wfeval.report.paired.samples.sample_contents`). Videos are found only
through the given runs' ``generations.jsonl`` records and read from the artifact store the run
names: nothing a browser asks for is ever a path.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from wfeval.report.runs import Entry, column_key, load_entries
from wfeval.report.votes import model_id
from wfeval.results.record import OPEN_LOOP, RunManifest, read_manifest
from wfeval.storage.rundir import FILES


@dataclass(frozen=True)
class Candidate:
    """A pair of runs (ids in sorted order) of one column on one sample."""

    column: str
    sample_id: str
    run_a: str
    run_b: str


@dataclass
class Shown:
    """One run's output for one sample: the generated video's ref, the reference's, the frame rate."""

    generated: dict[str, Any]
    reference: dict[str, Any] | None
    fps: float


def _records(run_dir: Path) -> dict[str, Shown]:
    from wfeval.storage.rundir import read_jsonl, request_sample_id

    out: dict[str, Shown] = {}
    for record in read_jsonl(run_dir / FILES.generations):
        sample = request_sample_id(record)
        if not isinstance(sample, str) or not isinstance(record, dict):
            continue
        request, result = record.get("request") or {}, record.get("result") or {}
        artifacts = result.get("artifacts") or {}
        key = "generated_video" if "generated_video" in artifacts else next(iter(artifacts), None)
        ref = artifacts.get(key) if key else None
        if result.get("status", "ok") != "ok" or not isinstance(ref, dict) or not isinstance(ref.get("sha256"), str):
            out.pop(sample, None)
            continue
        reference = (request.get("references") or {}).get("video")
        fps = (request.get("generation") or {}).get("fps")
        out[sample] = Shown(ref, reference if isinstance(reference, dict) else None,
                            float(fps) if isinstance(fps, (int, float)) and fps > 0 else 8.0)
    return out


class Pool:
    """The runs under ``paths`` and their pairs on shared samples."""

    def __init__(self, paths: Iterable[str | Path]):
        from wfeval.report.paired.samples import sample_contents

        self.paths = [Path(p) for p in paths]
        entries = [e for e in load_entries(self.paths) if e.document is not None and e.run_dir is not None]
        self.entries: dict[str, Entry] = {e.run_id: e for e in entries}
        self.shown: dict[str, dict[str, Shown]] = {e.run_id: _records(e.run_dir) for e in entries}  # type: ignore
        self.candidates: list[Candidate] = []
        columns: dict[str, list[Entry]] = {}
        for e in entries:
            columns.setdefault(column_key(e), []).append(e)
        for column, runs in sorted(columns.items()):
            contents = {e.run_id: sample_contents(e.run_dir, e.protocol == OPEN_LOOP) for e in runs}  # type: ignore
            for a, b in itertools.combinations(sorted(runs, key=lambda e: e.run_id), 2):
                if model_id(a) == model_id(b):
                    continue  # the same model twice: nothing for people to tell apart
                both = self.shown[a.run_id].keys() & self.shown[b.run_id].keys()
                for sample in sorted(both):
                    ca, cb = contents[a.run_id].get(sample), contents[b.run_id].get(sample)
                    if ca is not None and ca == cb:
                        self.candidates.append(Candidate(column, sample, a.run_id, b.run_id))

    def describe(self) -> str:
        models = sorted({e.model_name for e in self.entries.values()})
        samples = {(c.column, c.sample_id) for c in self.candidates}
        return (f"{len(self.entries)} runs ({', '.join(models)}), {len(samples)} samples, "
                f"{len(self.candidates)} pairs to judge")

    def video(self, run_id: str, sample_id: str, which: str = "generated") -> np.ndarray | None:
        """The T×H×W×3 uint8 frames of a run's generated (or reference) video for a sample; None if unreadable."""
        from wfeval.report.html.media import load_video

        shown = self.shown[run_id][sample_id]
        data = shown.generated if which == "generated" else shown.reference
        run = self.entries[run_id]
        manifest = _manifest(run.run_dir)  # type: ignore[arg-type]
        store = Path(manifest.store_dir) if manifest is not None and manifest.store_dir else None
        ref = _ref(data)
        array, _why = load_video(ref, store, which)
        return array


def _manifest(run_dir: Path) -> RunManifest | None:
    try:
        return read_manifest(run_dir)
    except (OSError, ValueError):
        return None


def _ref(data: dict[str, Any] | None):
    from wfeval.api import ArtifactRef

    if not isinstance(data, dict):
        return None
    try:
        return ArtifactRef.from_dict(data)
    except Exception:  # noqa: BLE001 - a malformed ref: no video
        return None
