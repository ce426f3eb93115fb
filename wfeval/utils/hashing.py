"""Stable hashes of JSON-like data (configs, requests, model identities) and of files.

:func:`file_sha256` is the one file hash of wfeval; ``cached=True`` remembers it for this process
in the one digest cache, by (resolved path, size, modification and change time, inode): a file
rewritten in place is hashed again."""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from typing import Any

_DIGESTS: dict[tuple, str] = {}  # (resolved path, size, mtime, inode, ctime) -> sha256, for this process
_LOCK = threading.Lock()
MAX_CACHED = 4096
_HEX_DIGEST = re.compile(r"[0-9a-f]{64}")


def canonical_json(data: Any) -> str:
    """JSON with sorted keys and no whitespace: equal data gives equal text."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_json(data: Any) -> str:
    return hashlib.sha256(canonical_json(data).encode("utf-8")).hexdigest()


def is_sha256(name: Any) -> bool:
    """Whether ``name`` is a sha256 hex digest as wfeval writes them (64 lowercase hex digits): the name
    of a stored object; a name read from a file someone else wrote is checked with this first."""
    return isinstance(name, str) and _HEX_DIGEST.fullmatch(name) is not None


def file_sha256(path: str | os.PathLike[str], *, cached: bool = False, chunk: int = 1 << 20) -> str:
    """sha256 of a file, read in chunks (OSError when it cannot be read); ``cached``: remembered by
    the file's (resolved path, size, times, inode) for this process."""
    if not cached:
        return _sha256(path, chunk)
    st = os.stat(path)
    key = (os.path.realpath(path), st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
    with _LOCK:
        if key in _DIGESTS:
            return _DIGESTS[key]
    value = _sha256(path, chunk)
    with _LOCK:
        if len(_DIGESTS) >= MAX_CACHED:
            _DIGESTS.clear()
        _DIGESTS[key] = value
    return value


def _sha256(path: str | os.PathLike[str], chunk: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()
