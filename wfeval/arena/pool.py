"""What can be shown: the runs given, read as data, and every pair of runs on one sample.

Runs are grouped by leaderboard column (benchmark, task, protocol). Two runs of a column make a
pair on a sample when both generated a video for it and the sample is the same in both (the same
id and content: :func:`wfeval.report.paired.samples.sample_contents`). Videos are found only
through the given runs' ``generations.jsonl`` records and read from the artifact store the run
names: nothing a browser asks for is ever a path. What is shown is only a store object named by a
sha256 digest (a record's ``uri`` is never opened) whose content is checked against that digest
when read: a record with no digest, or one naming anything else, shows nothing.

Refused (ValueError, the command's exit 2): two run folders with one run id (a copied run: votes
name runs by id), and runs none of which generated a video (a probing sweep scores latents).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from wfeval.report.escape import plain
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


def _object(ref: object) -> dict[str, Any] | None:
    """A record's ref when it names a store object by its sha256 digest, else None."""
    from wfeval.utils.hashing import is_sha256

    return ref if isinstance(ref, dict) and is_sha256(ref.get("sha256")) else None


def _records(run_dir: Path) -> dict[str, Shown]:
    from wfeval.storage.rundir import read_jsonl, request_sample_id

    out: dict[str, Shown] = {}
    for record in read_jsonl(run_dir / FILES.generations):
        sample = request_sample_id(record)
        if not isinstance(sample, str) or not isinstance(record, dict):
            continue
        request, result = record.get("request") or {}, record.get("result") or {}
        artifacts = result.get("artifacts") if isinstance(result.get("artifacts"), dict) else {}
        ref = _object(artifacts.get("generated_video"))  # a video, never another output (a probe's readout)
        if result.get("status", "ok") != "ok" or ref is None:
            out.pop(sample, None)
            continue
        reference = _object((request.get("references") or {}).get("video"))
        fps = (request.get("generation") or {}).get("fps")
        out[sample] = Shown(ref, reference,
                            float(fps) if isinstance(fps, (int, float)) and 0 < fps < 1000 else 8.0)
    return out


class Pool:
    """The runs under ``paths`` and their pairs on shared samples."""

    def __init__(self, paths: Iterable[str | Path]):
        from wfeval.report.paired.samples import sample_contents

        self.paths = [Path(p) for p in paths]
        entries = _one_folder_per_run(e for e in load_entries(self.paths)
                                      if e.document is not None and e.run_dir is not None)
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

    @property
    def videos(self) -> int:
        """How many generated videos the runs recorded (0: nothing the arena can show)."""
        return sum(len(s) for s in self.shown.values())

    def describe(self) -> str:
        models = sorted({e.model_name for e in self.entries.values()})
        samples = {(c.column, c.sample_id) for c in self.candidates}
        return plain(f"{len(self.entries)} runs ({', '.join(models)}), {len(samples)} samples, "
                     f"{len(self.candidates)} pairs to judge")  # a run folder's text: one inert line

    def video(self, run_id: str, sample_id: str, which: str = "generated") -> np.ndarray | None:
        """The T×H×W×3 uint8 frames of a run's generated (or reference) video for a sample; None if unreadable."""
        from wfeval.report.html.media import load_video

        shown = self.shown[run_id][sample_id]
        data = shown.generated if which == "generated" else shown.reference
        run = self.entries[run_id]
        manifest = _manifest(run.run_dir)  # type: ignore[arg-type]
        store = Path(manifest.store_dir) if manifest is not None and manifest.store_dir else None
        ref = _stored(data, store)
        if ref is None:
            return None
        array, _why = load_video(ref, store, which)
        return array


def _manifest(run_dir: Path) -> RunManifest | None:
    try:
        return read_manifest(run_dir)
    except (OSError, ValueError):
        return None


def _stored(data: dict[str, Any] | None, store: Path | None):
    """The ref of the store object ``data`` names by its digest, in the run's store (its ``uri``
    ignored); None without a digest or a store. Reading it checks its content against the digest."""
    from wfeval.storage.artifacts import ArtifactStore

    data = _object(data)
    if data is None or store is None:
        return None
    try:
        found = ArtifactStore(store).ref_of(data["sha256"], kind="video", shape=(), dtype="uint8")
    except (ValueError, OSError):
        return None
    return found if found.uri and Path(found.uri).is_file() else None


def _one_folder_per_run(entries: Iterable[Entry]) -> list[Entry]:
    """The entries, one per run folder; two folders with one run id are refused, naming both."""
    by_id: dict[str, Entry] = {}
    out = []
    for e in entries:
        seen = by_id.get(e.run_id)
        if seen is not None:
            if seen.run_dir.resolve() == e.run_dir.resolve():  # type: ignore[union-attr]
                continue  # one folder reached twice (a sweep and a run of it)
            raise ValueError(f"two run folders have the run id {e.run_id!r}: {seen.run_dir} and {e.run_dir} (a "
                             "copied run?); votes name runs by id: give the arena one of them")
        by_id[e.run_id] = e
        out.append(e)
    return out
