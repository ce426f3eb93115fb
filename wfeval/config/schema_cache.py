"""The derived fields of the built-in options' schemas, cached by the content of wfeval's sources.

Deriving a schema imports the option's class, and with it numpy and the plugin's code: most of a
``python -m wfeval --help`` otherwise. The fields (:func:`wfeval.config.derive.schema_fields`)
are a function of wfeval's own source code, so they
are kept in ``<cache>/schemas/options-<key>.json`` (``<cache>``: ``$WFEVAL_CACHE``, default
``~/.cache/wfeval``) under a key that is the sha256 of every ``*.py`` file of the wfeval package
(path and bytes) and the Python version: any edit, added or removed module gives another key, so
a cached entry never outlives the code it was derived from. An entry is used only for the same
group, option and class path, and only fields of the plain types (or nested schemas of them) and
JSON defaults a schema holds are
cached (anything else is derived again every time). An unreadable, foreign or corrupt file is
ignored; a cache that cannot be written costs only the time. The 16 most recently written files
are kept.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional



@dataclass(frozen=True)
class Nested:
    """The kind of a field checked against a nested schema (``fields``: its own fields); the
    option always holds the whole nested mapping, defaults filled in."""

    name: str
    fields: tuple

FORMAT = 1
KEEP = 16
_SCALARS = (int, float, bool, str)


@functools.lru_cache(maxsize=None)
def _types() -> dict[str, Any]:
    """Every type :func:`wfeval.config.derive.field_type` produces, by its ``repr``."""
    bases: list[Any] = [*_SCALARS, *(List[t] for t in (*_SCALARS, Any)), Dict[str, Any]]  # type: ignore[misc,valid-type]
    every = [Any, *bases, *(Optional[t] for t in bases)]
    return {repr(t): t for t in every}


def source_key(roots: Optional[list[str]] = None) -> Optional[str]:
    """sha256 of every ``*.py`` under ``roots`` (default: the wfeval package), with the format and
    Python version; None when no source file is found (then nothing is cached)."""
    if roots is None:
        import wfeval

        roots = list(wfeval.__path__)
    digest = hashlib.sha256(f"wfeval option schemas {FORMAT} {sys.version}\0".encode())
    found = False
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    with open(path, "rb") as handle:
                        data = handle.read()
                    digest.update(f"{os.path.relpath(path, root)}\0{len(data)}\0".encode() + data)
                    found = True
    return digest.hexdigest() if found else None


@functools.lru_cache(maxsize=None)
def this_key() -> Optional[str]:
    """:func:`source_key` of the wfeval package, hashed once per process (None: its sources cannot be read)."""
    try:
        return source_key()
    except OSError:
        return None


def _file(key: str) -> Path:
    from wfeval.utils.paths import cache_dir

    return cache_dir() / "schemas" / f"options-{key}.json"


def _read(key: str) -> dict:
    try:
        data = json.loads(_file(key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("options"), dict):
        return {}
    return data["options"]


def _plain(value: Any) -> bool:
    """A default that JSON gives back exactly (same types, lists not tuples)."""
    if value is None or type(value) in _SCALARS:
        return True
    if type(value) is list:
        return all(_plain(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    return False


def _decode(rows: Any) -> Optional[list[tuple[str, Any, Any]]]:
    from omegaconf import MISSING

    types = _types()
    if not isinstance(rows, list):
        return None
    fields = []
    for item in rows:
        if not (isinstance(item, list) and len(item) == 4 and isinstance(item[0], str)):
            return None
        name, kind, missing, default = item
        if isinstance(kind, dict) and isinstance(kind.get("nested"), str):
            inner = _decode(kind.get("fields"))
            if inner is None:
                return None
            fields.append((name, Nested(kind["nested"], tuple(inner)), MISSING))
            continue
        if kind not in types:
            return None
        fields.append((name, types[kind], MISSING if missing is True else default))
    return fields


def _encode(fields: Any) -> Optional[list]:
    """The rows of ``fields``, or None when a type or default cannot be written and read back exactly."""
    from omegaconf import MISSING

    types = _types()
    rows = []
    for name, kind, default in fields:
        if isinstance(kind, Nested):
            inner = _encode(kind.fields)
            if inner is None:
                return None
            rows.append([name, {"nested": kind.name, "fields": inner}, True, None])
            continue
        if not (repr(kind) in types and types[repr(kind)] == kind and _plain(default)):
            return None
        # MISSING is the string "???": the flag tells it from a default of that string
        rows.append([name, repr(kind), default is MISSING, None if default is MISSING else default])
    return rows


def load(group: str, option: str, target: str) -> Optional[list[tuple[str, Any, Any]]]:
    """The cached fields of ``<group>/<option>`` (class ``target``), or None."""
    key = this_key()
    entry = _read(key).get(f"{group}/{option}") if key else None
    if not isinstance(entry, dict) or entry.get("target") != target:
        return None
    return _decode(entry.get("fields"))


def save(group: str, option: str, target: str, fields: list[tuple[str, Any, Any]]) -> None:
    """Cache ``fields`` of ``<group>/<option>`` when every type and default can be read back exactly."""
    save_many({(group, option, target): fields})


def save_many(entries: dict[tuple[str, str, str], list[tuple[str, Any, Any]]]) -> None:
    """Cache the fields of several options at once: ``(group, option, target) -> fields`` (an option
    whose types or defaults cannot be read back exactly is left out)."""
    key = this_key()
    encoded = {f"{group}/{option}": {"target": target, "fields": rows}
               for (group, option, target), fields in entries.items() if (rows := _encode(fields)) is not None}
    if key is None or not encoded:
        return
    import tempfile

    path = _file(key)
    known = _read(key)
    options = {**known, **encoded}
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".tmp-", suffix=".json", delete=False,
                                         encoding="utf-8") as handle:
            temporary = handle.name
            json.dump({"key": key, "options": options}, handle)
        os.replace(temporary, path)  # readers see the old file or the new one, never a part
        temporary = None
        if not known:  # a new file: drop the oldest
            _prune(path.parent)
    except OSError:
        pass
    finally:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)


def _prune(folder: Path) -> None:
    """Keep the ``KEEP`` most recently written cache files (other checkouts share the folder)."""
    try:
        files = sorted(folder.glob("options-*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in files[KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass
