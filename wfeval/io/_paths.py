"""Names that come from data (sample ids, relative paths) must stay inside their folder."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath, PureWindowsPath

MAX_ID_LENGTH = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def unsafe_id_reason(sample_id: object) -> str | None:
    """Why ``sample_id`` cannot name files inside an output folder, or None when it can.

    Allowed: a non-empty relative path of ``/``-separated parts, none of them ``.``, ``..`` or
    empty, without backslashes, control characters or surrounding spaces, at most 200 characters.
    """
    if not isinstance(sample_id, str):
        return f"must be a string, got {type(sample_id).__name__}"
    if not sample_id:
        return "must not be empty"
    if len(sample_id) > MAX_ID_LENGTH:
        return f"is longer than {MAX_ID_LENGTH} characters"
    if _CONTROL.search(sample_id) or "\\" in sample_id:
        return "contains a control character or a backslash"
    if sample_id != sample_id.strip():
        return "has leading or trailing spaces"
    if sample_id.startswith("/") or PureWindowsPath(sample_id).drive:
        return "is an absolute path (it would escape the output folder)"
    parts = sample_id.split("/")
    if any(p in ("..", ".") for p in parts):
        return "contains a '.' or '..' part (it would escape the output folder)"
    if any(p == "" for p in parts):
        return "contains an empty path part ('//' or a trailing '/')"
    return None


def unsafe_path_reason(text: object) -> str | None:
    """Why ``text`` is not a relative path that stays inside its root, or None when it is."""
    if not isinstance(text, str) or not text:
        return f"must be a non-empty string (a path relative to the dataset root), got {text!r}"
    if text.startswith(("/", "\\")) or PureWindowsPath(text).drive or PurePosixPath(text).is_absolute():
        return f"{text!r} is absolute; paths must be relative to the dataset root"
    if ".." in re.split(r"[\\/]", text):
        return f"{text!r} contains '..' and would escape the dataset root"
    return None


def inside(root: Path, text: str) -> Path:
    """``root / text`` after :func:`unsafe_path_reason` accepted ``text``."""
    reason = unsafe_path_reason(text)
    if reason:
        raise ValueError(reason)
    return root / text
