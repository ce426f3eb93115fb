"""The recording cache: one JSON index per recorded trajectory, named by its content key.

The key is the sha256 of everything the recorded frames depend on (family, environment config,
package versions and ROM identity, resize, policy, seeds, split, trajectory index, window
layout). The index holds, per window, the checksums of the frames (stored once in the artifact
store), the actions, rewards, episode ends and the simulator snapshot. A run whose trajectory
is in the cache (and whose frames are still in the store) does not simulate anything.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from wfeval.storage.artifacts import atomic_write_bytes
from wfeval.utils.hashing import canonical_json

FORMAT = "wfeval.recording/1"


class RecordingCache:
    def __init__(self, root: str | Path):
        self.root = Path(root).expanduser().resolve()

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def load(self, key: str) -> dict[str, Any] | None:
        """The index recorded under ``key``, or None (absent, unreadable or of another format)."""
        try:
            data = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and data.get("format") == FORMAT and data.get("key") == key else None

    def save(self, key: str, index: Mapping[str, Any]) -> Path:
        """Write ``index`` atomically as canonical JSON (equal content gives equal bytes)."""
        path = self.path(key)
        atomic_write_bytes(path, (canonical_json(dict(index)) + "\n").encode("utf-8"), durable=False)
        return path
