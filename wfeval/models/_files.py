"""Content fingerprints of files and folders, for model identities (what the cache keys on)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

#: files larger than this are identified by size and modification time instead of content
MAX_HASH_BYTES = 64 * 1024 * 1024


def file_digest(path: Path, mode: str = "content") -> str:
    stat = path.stat()
    if mode == "stat" or stat.st_size > MAX_HASH_BYTES:
        return f"stat:{stat.st_size}:{stat.st_mtime_ns}"
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def tree_digest(root: Path, mode: str = "content") -> dict[str, Any]:
    """One digest over every (relative path, file digest) below ``root``, hidden entries skipped."""
    if root.is_file():
        return {"sha256": file_digest(root, mode), "files": 1}
    total = hashlib.sha256()
    count = 0
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        total.update(f"{rel.as_posix()}\0{file_digest(path, mode)}\n".encode())
        count += 1
    return {"sha256": total.hexdigest(), "files": count}


def read_output(path: Path, *, check_complete: bool = True) -> tuple[Any, float | None]:
    """(frames, fps) of a model's output file. A float ``.npy``/``.npz`` array is passed on as it
    is, so that the pipeline's output contract converts it with the declared ``model.output_range``
    (or refuses it, saying so); everything else is read into uint8 RGB by :func:`wfeval.io.read_video`."""
    import numpy as np

    from wfeval.io import load_array, media_kind, read_video

    if media_kind(path) == "array":
        array, fps = load_array(path)
        if np.issubdtype(array.dtype, np.floating):
            return array, fps
    video = read_video(path, check_complete=check_complete)
    return video.frames, video.fps
