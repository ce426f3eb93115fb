"""The run directory: every file a run writes, appended or replaced atomically as it goes.

:data:`FILES` names every file of a run folder (format version :data:`RUN_FORMAT_VERSION`,
documented in docs/run-directory.md) and of a sweep folder; no other module spells a name
(``manifest.json`` and ``results.json`` are read and written as typed records by
:mod:`wfeval.results.record`). A run
folder is data anyone could have written: no file of it is written through a symbolic link
(:mod:`wfeval.storage.safe_io`; :func:`check_no_links` before anything is written).
"""

from __future__ import annotations

import json
import os
import time
from array import array
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from wfeval.storage.safe_io import atomic_write_bytes, open_nofollow

RUN_FORMAT_VERSION = "wfeval.run/1"


@dataclass(frozen=True)
class RunFiles:
    """The files of a run folder (and of a sweep folder), by what each holds."""

    manifest: str = "manifest.json"  # what the run is and where it stands
    events: str = "events.jsonl"  # what happened, appended as it happens
    steps: str = "steps.jsonl"  # one row per generated sample and per model call
    generations: str = "generations.jsonl"  # one (request, result) record per sample
    samples: str = "samples.jsonl"  # one standard public row per sample
    metrics: str = "metrics.jsonl"  # one row per (metric, sample)
    results: str = "results.json"  # the aggregates, slices, scorecard, evidence
    results_md: str = "results.md"
    report: str = "report.html"
    lock: str = ".wfeval.lock"  # which process holds the folder (pipeline/lock.py)
    hydra: str = ".hydra"  # Hydra's record of the config: config.yaml, overrides.yaml, hydra.yaml
    config: str = ".hydra/config.yaml"
    overrides: str = ".hydra/overrides.yaml"
    hydra_config: str = ".hydra/hydra.yaml"
    replay: str = "replay"  # python -m wfeval.replay's default output folder
    # a sweep folder (python -m wfeval -m ...)
    sweep_summary: str = "sweep_summary.md"
    leaderboard_md: str = "leaderboard.md"
    leaderboard_csv: str = "leaderboard.csv"
    usefulness_md: str = "usefulness.md"  # which measure predicts usefulness (wfeval/report/usefulness.py)
    usefulness_csv: str = "usefulness.csv"
    merged: str = "merged"  # the merged run of a sweep over shards
    arena: str = "arena.sqlite"  # people's blind pairwise votes on the sweep's runs (python -m wfeval.arena)

    @staticmethod
    def partial(name: str) -> str:
        """The temporary name a file is written under until it is complete (renamed atomically)."""
        return f".{name}.partial"


FILES = RunFiles()


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _plain_value(value: Any) -> Any:
    """What a JSON row holds for a value JSON does not know: a numpy number as the number, an array as
    its list (so a record reads back with the values it was written with), anything else as text."""
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy scalars and arrays
        return value.tolist()
    return str(value)


def _dumps(row: Any) -> str:
    return json.dumps(row, ensure_ascii=False, allow_nan=True, default=_plain_value)


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


class JsonlWriter:
    """One JSONL file appended row by row through one open handle (opened at the first row: no row,
    no file), flushed when asked (after each chunk of samples): a kill loses at most the rows
    written since the last flush. A file left with a torn last line (a killed writer) gets a
    newline first, so that the torn fragment stays one unreadable line instead of swallowing the
    next row. :meth:`write` returns the row's byte offset (for :class:`JsonlRows`)."""

    def __init__(self, path: Path, *, truncate: bool = False):
        self.path, self.truncate = Path(path), truncate
        self._handle: Any = None
        self.offset = 0
        if truncate:
            self._open()

    def _open(self) -> None:
        self._handle = open_nofollow(self.path, "wb" if self.truncate else "ab")  # never through a link
        self.offset = self._handle.tell()
        if self.offset:
            with self.path.open("rb") as check:
                check.seek(self.offset - 1)
                torn = check.read(1) != b"\n"
            if torn:
                self._handle.write(b"\n")
                self.offset += 1

    def write(self, row: Mapping[str, Any]) -> int:
        if self._handle is None:
            self._open()
        data = (_dumps(row) + "\n").encode("utf-8")
        at = self.offset
        self._handle.write(data)
        self.offset += len(data)
        return at

    def flush(self) -> None:
        if self._handle is not None:
            self._handle.flush()

    def close(self) -> None:
        if self._handle is not None and not self._handle.closed:
            self._handle.close()

    def __enter__(self) -> "JsonlWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class JsonlRows(Sequence):
    """Rows of a JSONL file read back lazily by their byte offsets (nothing is held but the
    offsets), each parsed by ``parse``; iterating reads the file once, in offset order given."""

    def __init__(self, path: Path, offsets: Sequence[int], parse: Callable[[dict], Any] = lambda row: row):
        self.path, self.offsets, self.parse = Path(path), array("q", offsets), parse

    def __len__(self) -> int:
        return len(self.offsets)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return JsonlRows(self.path, self.offsets[index], self.parse)
        with self.path.open("rb") as handle:
            handle.seek(self.offsets[index])
            return self.parse(json.loads(handle.readline()))

    def __iter__(self) -> Iterator[Any]:
        with self.path.open("rb") as handle:
            for offset in self.offsets:
                handle.seek(offset)
                yield self.parse(json.loads(handle.readline()))

    def chunks(self, size: int) -> Iterator[list[Any]]:
        """The rows in lists of ``size`` (offset order given), the file opened once."""
        with self.path.open("rb") as handle:
            for start in range(0, len(self.offsets), max(1, size)):
                chunk = []
                for offset in self.offsets[start:start + size]:
                    handle.seek(offset)
                    chunk.append(self.parse(json.loads(handle.readline())))
                yield chunk

    def take(self, indices: Iterable[int]) -> "JsonlRows":
        return JsonlRows(self.path, [self.offsets[i] for i in indices], self.parse)


def request_sample_id(record: Any) -> Any:
    """The ``request.sample_id`` of a ``generations.jsonl`` record, or None when the record does not
    have that shape (a run folder is data: someone else may have written the line)."""
    request = record.get("request") if isinstance(record, dict) else None
    return request.get("sample_id") if isinstance(request, dict) else None


def line_offsets(path: Path) -> Iterator[tuple[int, dict]]:
    """``(byte offset, row)`` of each readable row of a JSONL file (as :func:`read_jsonl` reads them)."""
    if not path.exists():
        return
    with path.open("rb") as handle:
        offset = 0
        for line in handle:
            at, offset = offset, offset + len(line)
            if not line.strip():
                continue
            try:
                yield at, json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue


def check_no_links(run_dir: Path) -> None:
    """Raise ``OSError(ELOOP)`` naming the first symbolic link among the files a run, a resume or
    Hydra writes in ``run_dir`` (and its ``.hydra`` folder), before any of them is written."""
    from wfeval.storage.safe_io import refuse_link

    run_dir = Path(run_dir)
    names = [getattr(FILES, f) for f in FILES.__dataclass_fields__]
    names += [FILES.partial(n) for n in (FILES.generations, FILES.samples)] + [f".{FILES.metrics}.compact"]
    for name in names:
        refuse_link(run_dir / name)


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

    def append(self, name: str, row: Mapping[str, Any]) -> None:
        """Append one JSON line and flush it, so a kill loses at most the line being written."""
        with open_nofollow(self.file(name), "a") as handle:  # a link at events.jsonl: refused (ELOOP)
            handle.write(_dumps(row) + "\n")
            handle.flush()

    def writer(self, name: str, *, truncate: bool = False) -> JsonlWriter:
        return JsonlWriter(self.file(name), truncate=truncate)

    def replace(self, partial: str, name: str) -> None:
        """Give a file written under a temporary name its final name, atomically."""
        os.replace(self.file(partial), self.file(name))

    def event(self, kind: str, **fields: Any) -> None:
        self.append(FILES.events, {"time": utc_now(), "t": round(time.time(), 3), "event": kind, **fields})
