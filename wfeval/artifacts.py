"""Content-addressed storage of arrays (videos, frames) shared by benchmarks, models and metrics.

Arrays are stored once, as lossless ``.npy`` files named by the sha256 of their bytes, under
``<store>/objects/ab/<sha256>.npy``. An :class:`~wfeval.api.ArtifactRef` points at the file and
carries its checksum, so any holder of a ref can read the array back without knowing the store.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from wfeval.api import ArtifactRef

NPY_MEDIA_TYPE = "application/x-npy"


class ArtifactError(RuntimeError):
    """An artifact cannot be read: missing file, bad checksum, or unreadable content."""


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` so that readers see either nothing or the whole file.

    The rename is atomic, which protects against a killed or crashed process. ``durable``
    also flushes the file to disk first (fsync), which protects against a power loss too.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def array_bytes(array: np.ndarray) -> bytes:
    """The canonical ``.npy`` encoding of an array (C order, no pickle)."""
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


class ArtifactStore:
    """A folder of content-addressed arrays; it outlives any one run directory."""

    def __init__(self, root: str | os.PathLike[str], *, durable: bool = False):
        self.root = Path(root).expanduser().resolve()
        self.durable = durable  # fsync every object (survives power loss; slower)

    def object_path(self, sha256: str) -> Path:
        return self.root / "objects" / sha256[:2] / f"{sha256}.npy"

    def put_array(
        self, array: np.ndarray, *, kind: str, metadata: Mapping[str, Any] | None = None
    ) -> ArtifactRef:
        """Store ``array`` (once) and return a ref to it."""
        array = np.asarray(array)
        data = array_bytes(array)
        sha256 = hashlib.sha256(data).hexdigest()
        path = self.object_path(sha256)
        if not path.exists():
            atomic_write_bytes(path, data, durable=self.durable)
        return ArtifactRef(
            kind=kind,
            uri=str(path),
            sha256=sha256,
            media_type=NPY_MEDIA_TYPE,
            shape=tuple(int(n) for n in array.shape),
            dtype=str(array.dtype),
            metadata=dict(metadata or {}),
        )

    def resolve(self, ref: ArtifactRef) -> Path:
        """The local file of ``ref``: its uri, or this store's copy of the same content."""
        path = Path(ref.uri.removeprefix("file://"))
        if not path.exists() and ref.sha256:
            local = self.object_path(ref.sha256)
            if local.exists():
                return local
        return path


def read_array(ref: ArtifactRef, *, store: ArtifactStore | None = None, verify: bool = False) -> np.ndarray:
    """Load the array behind ``ref``; raise :class:`ArtifactError` naming the file on failure."""
    path = store.resolve(ref) if store is not None else Path(ref.uri.removeprefix("file://"))
    if ref.media_type not in ("", NPY_MEDIA_TYPE):
        raise ArtifactError(f"artifact {ref.kind!r} at {path}: unsupported media type {ref.media_type!r}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ArtifactError(f"artifact {ref.kind!r}: cannot read {path}: {exc.strerror or exc}") from exc
    if verify and ref.sha256 and hashlib.sha256(data).hexdigest() != ref.sha256:
        raise ArtifactError(f"artifact {ref.kind!r} at {path}: sha256 mismatch (file changed or corrupt)")
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise ArtifactError(f"artifact {ref.kind!r} at {path}: not a readable .npy array ({exc})") from exc
