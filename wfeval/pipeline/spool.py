"""A run's samples on disk, read back a chunk at a time: what a run holds is one chunk, not all.

The requests of a benchmark are prepared once, before any generation (so that every check of
the plan still sees all of them), and spooled into an unlinked temporary file in the run folder
(:class:`Spool`: nothing remains after a kill); generation reads them back in chunks of
:data:`CHUNK`. Scoring reads the (request, result) pairs from the run's own ``generations.jsonl``
(:func:`stored_pairs`), as a re-score (``run.from_run``) and a replay read another run's: one
record format for all of them.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from array import array
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from wfeval.api import GenerationRequest, GenerationResult
from wfeval.storage.rundir import JsonlRows, line_offsets

CHUNK = 256  # samples per chunk: what a run holds of its samples at once (tests set it to 1, 7, ...)

Pair = tuple[GenerationRequest, GenerationResult]


class Spool(Sequence):
    """Items appended once, then read back by index, in order or in chunks. Each item is stored as
    the pickle of its plain form (``encode``: a request's or a pair's ``to_dict()``; pickle, unlike
    JSON, keeps every value's type, so what is read back equals what was written); an item that
    cannot be pickled stays in memory as it is. ``apply`` is applied to each item as it is read.
    Reads are positioned (``os.pread``): generation and the overlapped scoring thread read at once."""

    def __init__(self, folder: str | Path | None, encode: Callable[[Any], Any], decode: Callable[[Any], Any]):
        self._file = tempfile.TemporaryFile(dir=folder, prefix=".wfeval.", suffix=".spool")
        self._offsets = array("q", [0])
        self._held: dict[int, Any] = {}
        self.encode, self.decode = encode, decode
        self.apply: Callable[[Any], Any] = lambda item: item

    def append(self, item: Any) -> None:
        try:
            data = pickle.dumps(self.encode(item), protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            self._held[len(self)] = item
            data = b""
        self._file.seek(self._offsets[-1])
        self._file.write(data)
        self._offsets.append(self._offsets[-1] + len(data))

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def _read(self, start: int, stop: int) -> list[Any]:
        offsets = self._offsets
        self._file.flush()  # positioned reads (no shared seek): two threads may read at once
        data = memoryview(_pread(self._file.fileno(), offsets[stop] - offsets[start], offsets[start]))
        base = offsets[start]
        return [self.apply(self._held[i] if i in self._held else
                           self.decode(pickle.loads(data[offsets[i] - base:offsets[i + 1] - base])))
                for i in range(start, stop)]

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._read(index, index + 1)[0]

    def chunks(self, size: int | None = None) -> Iterator[list[Any]]:
        size = max(1, size or CHUNK)
        for start in range(0, len(self), size):
            yield self._read(start, min(start + size, len(self)))

    def __iter__(self) -> Iterator[Any]:
        for chunk in self.chunks():
            yield from chunk

    def close(self) -> None:
        self._file.close()


def _pread(fd: int, size: int, offset: int) -> bytes:
    parts = []
    while size > 0:
        part = os.pread(fd, size, offset)
        if not part:
            raise EOFError(f"spool file ends {size} bytes early")
        parts.append(part)
        size, offset = size - len(part), offset + len(part)
    return b"".join(parts)


def request_spool(folder: str | Path | None = None) -> Spool:
    """A spool of :class:`~wfeval.api.GenerationRequest` objects."""
    return Spool(folder, GenerationRequest.to_dict, GenerationRequest.from_dict)


def chunked(items: Iterable[Any], size: int | None = None) -> Iterator[list[Any]]:
    """``items`` in lists of ``size`` (default :data:`CHUNK`)."""
    size, chunk = max(1, size or CHUNK), []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def pair_of(row: dict) -> Pair:
    return GenerationRequest.from_dict(row["request"]), GenerationResult.from_dict(row["result"])


def stored_pairs(path: Path, offsets: Sequence[int] | None = None) -> JsonlRows:
    """The (request, result) pairs of a ``generations.jsonl``, read lazily: the records at
    ``offsets`` (what a run wrote itself), else every readable record (torn lines skipped)."""
    if offsets is None:
        offsets = [offset for offset, row in line_offsets(path) if isinstance(row, dict)]
    return JsonlRows(path, offsets, pair_of)
