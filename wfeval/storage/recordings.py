"""The recording cache: one JSON index per recorded trajectory, named by its content key.

The key is the sha256 of everything the recorded frames depend on (family, environment config,
package versions and ROM identity, resize, policy, seeds, split, trajectory index, window
layout). The index holds, per window, the checksums of the frames (stored once in the artifact
store), the actions, rewards, episode ends and the simulator snapshot. A run whose trajectory
is in the cache (and whose frames are still in the store) does not simulate anything.

The key names what was recorded, not what the file holds, so the index is sealed as every store
record is (:mod:`wfeval.storage.seal`: keyed by the store's secret, as the index of its format and
key), and checked on every load: an index edited or damaged in the store (a snapshot, an action, a
frame's checksum — each decides a number) is refused, with the reason in :attr:`RecordingCache.refused`
and a ``record_refused`` event, and the caller records the trajectory again (issue 32, item 4). An
index without a seal (written before seals existed) is recorded again once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from wfeval.storage.artifacts import atomic_write_bytes
from wfeval.storage.seal import NOT_A_RECORD, RecordRefused, Sealer

FORMAT = "wfeval.recording/1"


def artifact_entry(ref: Any) -> dict[str, Any]:
    """What an index keeps of a stored object's ref: its kind, checksum, shape and dtype."""
    return {"kind": ref.kind, "sha256": ref.sha256, "shape": list(ref.shape), "dtype": ref.dtype}


def artifact_ref(entry: Mapping[str, Any], store: Any) -> Any:
    """The ref ``store.put_array`` returned when the object was stored (the same fields), from its entry."""
    return store.ref_of(entry["sha256"], kind=entry["kind"], shape=tuple(entry["shape"]), dtype=entry["dtype"])


class RecordingCache:
    """``fmt``: the format its indexes declare (a recording, or another sealed index kept the same way:
    :data:`wfeval.tasks.memory.MEMORY_SAMPLE_FORMAT`). ``store``: the artifact store whose key
    seals the indexes (and whose ``seal.on_refused`` hears of refusals); without it, a key kept in
    ``root`` itself."""

    def __init__(self, root: str | Path, fmt: str = FORMAT, what: str = "recording index", store: Any = None):
        self.root = Path(root).expanduser().resolve()
        self.format = fmt
        self.what = what  # what an index is, in a refusal
        self.seal = store.seal if store is not None else Sealer(self.root)
        self.refused: dict[str, str] = {}  # key -> why its index was not trusted

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def _name(self, key: str) -> str:
        return f"{self.format}/{key}"

    def load(self, key: str, read: Callable[[dict[str, Any]], Any] | None = None) -> Any:
        """The index recorded under ``key`` (or ``read(index)``), or None: absent, unreadable, of another
        format, whose content does not match its seal, or sealed but not what ``read`` takes (a field
        missing or of another type, an object name that is not a sha256): then :attr:`refused` says why.
        ``read`` returning None (its objects pruned from the store) is a miss, not a refusal."""
        path = self.path(key)
        try:
            try:
                index = self.seal.read(self._name(key), path)
            except OSError as exc:
                raise RecordRefused(path, "unreadable", f"unreadable ({type(exc).__name__})") from None
            if index is None:
                return None
            if not (index.get("format") == self.format and index.get("key") == key):
                raise RecordRefused(path, NOT_A_RECORD, f"not a {self.format} index for this key")
            if read is None:
                return index
            try:
                return read(index)
            except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
                raise RecordRefused(path, NOT_A_RECORD, f"not a {self.what} ({type(exc).__name__}: {exc})") from None
        except RecordRefused as refusal:
            self.refused[key] = str(refusal)
            self.seal.refused(refusal, self.what, "record again" if self.format == FORMAT else "plan again")
            return None

    def save(self, key: str, index: Mapping[str, Any]) -> Path:
        """Write ``index`` atomically as sealed canonical JSON (equal content gives equal bytes)."""
        path = self.path(key)
        atomic_write_bytes(path, self.seal.dumps(self._name(key), index), durable=False)
        return path
