"""Stable hashes of JSON-like data (configs, requests, model identities)."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any


def canonical_json(data: Any) -> str:
    """JSON with sorted keys and no whitespace: equal data gives equal text."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_json(data: Any) -> str:
    return hashlib.sha256(canonical_json(data).encode("utf-8")).hexdigest()


def file_sha256(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    """sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()
