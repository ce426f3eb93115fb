"""What an artifact store holds and what kept runs reference; pruning (``python -m wfeval.store``).

``du`` sizes the store (objects by codec, on disk and decoded, and the record folders of
:mod:`wfeval.storage.layout`); ``prune`` removes objects by age or down to a size, never one a kept
run references, and the records that name a removed object.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from wfeval.storage import layout
from wfeval.storage.rundir import FILES

DEFAULT_RUNS = ("outputs/runs", "outputs/multirun")
_SHA = re.compile(r"^[0-9a-f]{64}")
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_AGE = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_size(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text, re.IGNORECASE)
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 500M, 20G, 1.5T)")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def parse_age(text: str) -> float:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"not an age: {text!r} (e.g. 12h, 30d, 2w; a bare number is days)")
    return float(match.group(1)) * _AGE[match.group(2) or "d"]


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


@dataclass
class StoredObject:
    sha256: str
    path: Path
    size: int
    mtime: float

    def decoded_size(self) -> int | None:
        """The size of the canonical .npy bytes (from the zstd frame header; the file itself if plain)."""
        if not self.path.name.endswith(".zst"):
            return self.size
        import zstandard

        try:
            with open(self.path, "rb") as handle:
                size = zstandard.frame_content_size(handle.read(18))
        except (OSError, zstandard.ZstdError):
            return None
        return size if size >= 0 else None


def objects(store: Path) -> Iterator[StoredObject]:
    for path in sorted((store / layout.OBJECTS).glob("??/*")):
        if path.is_file() and _SHA.match(path.name) and not path.name.startswith("."):
            stat = path.stat()
            yield StoredObject(path.name[:64], path, stat.st_size, stat.st_mtime)


def _refs(node) -> Iterator[dict]:
    """Every artifact ref (a mapping with ``uri`` and a ``sha256``) inside a JSON document."""
    if isinstance(node, dict):
        sha = node.get("sha256")
        if isinstance(sha, str) and "uri" in node and _SHA.match(sha):
            yield node
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _shas(node) -> Iterator[str]:
    """The sha256 of every ref to a store object inside a JSON document; a dataset file read in place
    (media type ``application/x-wfeval-file``) is no object of the store and keeps nothing."""
    from wfeval.storage.artifacts import FILE_MEDIA_TYPE

    for ref in _refs(node):
        if ref.get("media_type") != FILE_MEDIA_TYPE:
            yield ref["sha256"]


@dataclass
class Kept:
    runs: list[Path] = field(default_factory=list)
    shas: set[str] = field(default_factory=set)
    unreadable: list[str] = field(default_factory=list)
    files: set[str] = field(default_factory=set)  # dataset files read in place (their paths)
    file_contents: dict[str, int] = field(default_factory=dict)  # their decoded contents: sha256 -> bytes


def _decoded_bytes(ref: dict) -> int:
    size = 1
    for dim in ref.get("shape") or ():
        size *= int(dim)
    try:
        import numpy as np

        return size * np.dtype(ref.get("dtype") or "uint8").itemsize
    except TypeError:
        return size


#: the files of a run folder that name objects: its generations (also while a run is still writing
#: them), and its metric rows (FVD's feature files; any object a metric stored)
REFERENCING_FILES = (FILES.generations, FILES.partial(FILES.generations), FILES.metrics)


def kept_references(run_roots: Iterable[Path]) -> Kept:
    """The objects kept runs reference (their generations.jsonl -- or the one a running run is still
    writing -- and metrics.jsonl: inputs, references, outputs, metric artifacts), and the dataset files
    they read in place (which the store does not hold)."""
    from wfeval.storage.artifacts import FILE_MEDIA_TYPE

    kept = Kept()
    for root in run_roots:
        if not root.is_dir():
            continue
        records = sorted({path for name in REFERENCING_FILES for path in root.rglob(name)})
        kept.runs.extend(sorted({path.parent for path in records}))
        for record in records:
            try:
                lines = [line for line in record.read_text(encoding="utf-8").splitlines() if line.strip()]
                for number, line in enumerate(lines, 1):
                    try:
                        row = json.loads(line)
                    except ValueError:
                        if number == len(lines):
                            continue  # a torn last line (a writer killed, or still writing) names nothing whole
                        raise
                    for ref in _refs(row):
                        if ref.get("media_type") == FILE_MEDIA_TYPE:
                            kept.files.add(ref["uri"])
                            kept.file_contents[ref["sha256"]] = _decoded_bytes(ref)
                        else:
                            kept.shas.add(ref["sha256"])
            except (OSError, ValueError) as exc:
                kept.unreadable.append(f"{record}: {exc}")
    return kept


def _records(folder: Path) -> Iterator[tuple[Path, set[str]]]:
    """JSON records (generation cache, metric-result cache) and the objects each names."""
    if not folder.is_dir():
        return
    for path in folder.rglob("*.json"):
        try:
            yield path, set(_shas(json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError):
            yield path, set()


def _tree_size(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()] if folder.is_dir() else []
    return len(files), sum(p.stat().st_size for p in files)


def du(store: Path, run_roots: list[Path], out=None) -> dict:
    out = out or sys.stdout  # the stdout of the call, not of the import (a test runner swaps it)
    objs = list(objects(store))
    by_codec: dict[str, list[StoredObject]] = {}
    for obj in objs:
        by_codec.setdefault("zstd" if obj.path.name.endswith(".zst") else "npy", []).append(obj)
    decoded = [obj.decoded_size() for obj in objs]
    kept = kept_references(run_roots)
    referenced = [o for o in objs if o.sha256 in kept.shas]
    stored = {o.sha256 for o in objs}
    report = {
        "store": str(store), "objects": len(objs), "bytes": sum(o.size for o in objs),
        "decoded_bytes": sum(d for d in decoded if d is not None),
        "by_codec": {k: {"objects": len(v), "bytes": sum(o.size for o in v)} for k, v in sorted(by_codec.items())},
        "kept_runs": len(kept.runs), "referenced_objects": len(referenced),
        "referenced_bytes": sum(o.size for o in referenced),
        "dataset_files": len(kept.files),  # read in place; their distinct decoded contents not in objects:
        "dataset_files_decoded_bytes": sum(n for sha, n in kept.file_contents.items() if sha not in stored),
    }
    for name in layout.RECORD_FOLDERS:
        count, size = _tree_size(store / name)
        report[name] = {"files": count, "bytes": size}
    print(f"store {store}", file=out)
    ratio = report["decoded_bytes"] / report["bytes"] if report["bytes"] else 0.0
    print(f"  objects      {len(objs):8d}  {human(report['bytes']):>10} on disk, {human(report['decoded_bytes'])} "
          f"decoded ({ratio:.1f}x)", file=out)
    for codec, info in report["by_codec"].items():
        print(f"    {codec:10s} {info['objects']:8d}  {human(info['bytes']):>10}", file=out)
    for name in layout.RECORD_FOLDERS:
        print(f"  {name:12s} {report[name]['files']:8d}  {human(report[name]['bytes']):>10}", file=out)
    print(f"  kept runs    {len(kept.runs):8d}  reference {len(referenced)} object(s), "
          f"{human(report['referenced_bytes'])} (searched {', '.join(map(str, run_roots))})", file=out)
    if kept.files:
        print(f"               and read {len(kept.files)} dataset file(s) in place, not copied "
              f"({human(report['dataset_files_decoded_bytes'])} decoded)", file=out)
    for problem in kept.unreadable:
        print(f"  warning: unreadable {problem}: its objects are not protected", file=out)
    return report


def prune(store: Path, run_roots: list[Path], *, older_than: float | None, max_size: int | None,
          dry_run: bool = False, now: float | None = None, out=None) -> dict:
    out = out or sys.stdout  # the stdout of the call, not of the import
    if older_than is None and max_size is None:
        raise ValueError("prune needs --older-than and/or --max-size")
    now = time.time() if now is None else now
    kept = kept_references(run_roots)
    if kept.unreadable:
        raise ValueError("cannot tell what these runs reference, nothing pruned: " + "; ".join(kept.unreadable))
    objs = sorted(objects(store), key=lambda o: o.mtime)  # oldest first
    total = sum(o.size for o in objs)
    doomed: list[StoredObject] = []
    for obj in objs:
        if obj.sha256 in kept.shas:
            continue
        if (older_than is not None and now - obj.mtime > older_than) or (max_size is not None and total > max_size):
            doomed.append(obj)
            total -= obj.size
    gone = {o.sha256 for o in doomed}
    stale = [path for folder in (layout.GENERATIONS, layout.METRIC_ROWS) for path, shas in _records(store / folder) if shas & gone]
    freed = sum(o.size for o in doomed)
    verb = "would remove" if dry_run else "removed"
    if not dry_run:
        for obj in doomed:
            obj.path.unlink(missing_ok=True)
        for path in stale:
            path.unlink(missing_ok=True)
    print(f"{verb} {len(doomed)} object(s), {human(freed)}, and {len(stale)} record(s) naming them; "
          f"kept {len(objs) - len(doomed)} object(s), {human(total)} "
          f"({len(kept.shas & {o.sha256 for o in objs})} referenced by {len(kept.runs)} kept run(s))", file=out)
    if max_size is not None and total > max_size:
        print(f"note: still above {human(max_size)}: the rest is referenced by kept runs "
              f"(delete run folders under {', '.join(map(str, run_roots))} to release it)", file=out)
    return {"removed": len(doomed), "freed_bytes": freed, "records_removed": len(stale), "left_bytes": total,
            "dry_run": dry_run}
