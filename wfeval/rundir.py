"""The run directory: every file a run writes, appended or replaced atomically as it goes.

Files (format version :data:`RUN_FORMAT_VERSION`, documented in docs/run-directory.md):
``manifest.json``, ``events.jsonl``, ``steps.jsonl``, ``generations.jsonl``, ``samples.jsonl``,
``metrics.jsonl``, ``results.json``.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from wfeval.artifacts import atomic_write_bytes

RUN_FORMAT_VERSION = "wfeval.run/1"


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _dumps(row: Any) -> str:
    return json.dumps(row, ensure_ascii=False, allow_nan=True, default=str)


def read_jsonl(path: Path) -> Iterator[dict]:
    """Rows of a JSONL file; a torn last line (a killed writer) is ignored."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue


class RunDirectory:
    def __init__(self, path: str | Path, *, create: bool = True):
        self.path = Path(path)
        if create:
            self.path.mkdir(parents=True, exist_ok=True)

    def file(self, name: str) -> Path:
        return self.path / name

    def write_json(self, name: str, data: Mapping[str, Any]) -> None:
        text = json.dumps(data, ensure_ascii=False, indent=2, allow_nan=True, default=str) + "\n"
        atomic_write_bytes(self.file(name), text.encode("utf-8"))

    def write_text(self, name: str, text: str) -> None:
        atomic_write_bytes(self.file(name), text.encode("utf-8"))

    def read_json(self, name: str) -> dict | None:
        path = self.file(name)
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None

    def append(self, name: str, row: Mapping[str, Any]) -> None:
        """Append one JSON line and flush it, so a kill loses at most the line being written."""
        with self.file(name).open("a", encoding="utf-8") as handle:
            handle.write(_dumps(row) + "\n")
            handle.flush()

    def write_jsonl(self, name: str, rows: Iterable[Mapping[str, Any]]) -> None:
        text = "".join(_dumps(r) + "\n" for r in rows)
        atomic_write_bytes(self.file(name), text.encode("utf-8"))

    def event(self, kind: str, **fields: Any) -> None:
        self.append("events.jsonl", {"time": utc_now(), "t": round(time.time(), 3), "event": kind, **fields})
