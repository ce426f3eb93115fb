"""The recording cache: one JSON index per recorded trajectory, named by its content key.

The key is the sha256 of everything the recorded frames depend on (family, environment config,
package versions and ROM identity, resize, policy, seeds, split, trajectory index, window
layout). The index holds, per window, the checksums of the frames (stored once in the artifact
store), the actions, rewards, episode ends and the simulator snapshot. A run whose trajectory
is in the cache (and whose frames are still in the store) does not simulate anything.

The key names what was recorded, not what the file holds, so the index also carries its own
content hash (``content_sha256``: the sha256 of its canonical JSON without that field), checked
on every load: an index edited or damaged in the store (a snapshot, an action, a frame's
checksum — each decides a number) is refused, with the reason in :attr:`RecordingCache.refused`,
and the caller records the trajectory again (issue 32, item 4). An index without the hash (written
before it existed) is recorded again once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping

from wfeval.utils.hashing import sha256_json

from wfeval.storage.artifacts import atomic_write_bytes
from wfeval.utils.hashing import canonical_json

FORMAT = "wfeval.recording/1"
CHECK = "content_sha256"


def artifact_entry(ref: Any) -> dict[str, Any]:
    """What an index keeps of a stored object's ref: its kind, checksum, shape and dtype."""
    return {"kind": ref.kind, "sha256": ref.sha256, "shape": list(ref.shape), "dtype": ref.dtype}


def artifact_ref(entry: Mapping[str, Any], store: Any) -> Any:
    """The ref ``store.put_array`` returned when the object was stored (the same fields), from its entry."""
    return store.ref_of(entry["sha256"], kind=entry["kind"], shape=tuple(entry["shape"]), dtype=entry["dtype"])


def content_sha256(index: Mapping[str, Any]) -> str:
    """The index's own content hash (every field but :data:`CHECK`)."""
    return sha256_json({k: v for k, v in index.items() if k != CHECK})


class RecordingCache:
    """``fmt``: the format its indexes declare (a recording, or another sealed index kept the same way:
    :data:`wfeval.tasks.memory.MEMORY_SAMPLE_FORMAT`)."""

    def __init__(self, root: str | Path, fmt: str = FORMAT, what: str = "recording index"):
        self.root = Path(root).expanduser().resolve()
        self.format = fmt
        self.what = what  # what an index is, in a refusal
        self.refused: dict[str, str] = {}  # key -> why its index was not trusted

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def load(self, key: str, read: Callable[[dict[str, Any]], Any] | None = None) -> Any:
        """The index recorded under ``key`` (or ``read(index)``), or None: absent, unreadable, of another
        format, whose content does not match its hash, or sealed but not what ``read`` takes (a field
        missing or of another type, an object name that is not a sha256): then :attr:`refused` says why.
        ``read`` returning None (its objects pruned from the store) is a miss, not a refusal."""
        path = self.path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            self.refused[key] = f"{path}: unreadable ({type(exc).__name__})"
            return None
        if not (isinstance(data, dict) and data.get("format") == self.format and data.get("key") == key):
            self.refused[key] = f"{path}: not a {self.format} index for this key"
            return None
        if data.get(CHECK) != content_sha256(data):
            self.refused[key] = (f"{path}: its content does not match its hash (edited or damaged)" if CHECK in data
                                 else f"{path}: written without a content hash")
            return None
        index = {k: v for k, v in data.items() if k != CHECK}  # as recorded: the hash is the file's, not the index's
        if read is None:
            return index
        try:
            return read(index)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            self.refused[key] = f"{path}: not a {self.what} ({type(exc).__name__}: {exc})"
            return None

    def save(self, key: str, index: Mapping[str, Any]) -> Path:
        """Write ``index`` atomically as canonical JSON (equal content gives equal bytes)."""
        path = self.path(key)
        sealed = {**{k: v for k, v in index.items() if k != CHECK}, CHECK: content_sha256(index)}
        atomic_write_bytes(path, (canonical_json(sealed) + "\n").encode("utf-8"), durable=False)
        return path
