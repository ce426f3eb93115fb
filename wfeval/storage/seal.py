"""Sealed store records: every JSON record wfeval reads back from a store carries a keyed seal.

A record (a finished generation, a metric row, a decoded-file record, a recording or memory-sample
index) is written as canonical JSON with one more field, first, :data:`SEAL`: ``hmac-sha256:<hex>``,
the HMAC-SHA256 of the record's name (what it is the record *of*: its kind and key, so a sealed record
copied under another key does not pass) and of its canonical JSON without the seal, keyed by the
store's secret ``<store>/seal.key`` (32 random bytes, created with the store's first record, mode
0600, never written anywhere else). Every read checks the seal (:meth:`Sealer.loads`); a record that
fails is refused with a :class:`RecordRefused` naming the file and why, and the caller recomputes
what it held (the model generates again, the metric scores again, the file is decoded again, the
trajectory is recorded again) -- the record is never served and its refusal is never a failure of
the model.

A read checks the file's bytes as written (the seal first, then the canonical JSON it covers), so it
costs one JSON parse and one HMAC, not a second serialization.

What the seal protects against: accidental edits, partial or torn writes, a bad disk, a tool that
rewrites the JSON (even with equal values: the bytes are checked), a hand edit (a reference's
checksum pasted in as a generated video's) -- without the key nobody can compute the seal of an
edited record. What it does not: a person who can read ``seal.key`` (its owner, root) can seal
anything, as they can change wfeval itself; and deleting a record only costs a recomputation. Records written before seals existed
(no :data:`SEAL` field) are refused as ``unsealed`` once and written again, sealed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any, Callable, Mapping

from wfeval.utils.hashing import canonical_json

SEAL = "seal"
KEY_FILE = "seal.key"
SCHEME = "hmac-sha256:"

#: why a record was refused (:attr:`RecordRefused.why`)
UNREADABLE, UNSEALED, MISMATCH, NOT_A_RECORD = "unreadable", "unsealed", "seal_mismatch", "not_a_record"


class RecordRefused(ValueError):
    """A store record that is not served: ``path`` (the file), ``why`` (one of :data:`UNREADABLE`,
    :data:`UNSEALED`, :data:`MISMATCH`, :data:`NOT_A_RECORD`) and ``reason`` (a sentence)."""

    def __init__(self, path: Path, why: str, reason: str):
        super().__init__(path, why, reason)
        self.path, self.why, self.reason = Path(path), why, reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"

    def event(self, record: str, action: str) -> dict[str, Any]:
        """The fields of the run's ``record_refused`` event."""
        return {"record": record, "path": str(self.path), "why": self.why, "reason": self.reason, "action": action}


def _key_of(root: Path) -> bytes:
    """The store's secret, created (0600, atomically: the first writer's stays) when the store has none."""
    path = root / KEY_FILE
    try:
        key = bytes.fromhex(path.read_text(encoding="ascii").strip())
        if len(key) != 32:
            raise ValueError(f"{len(key)} bytes")
        return key
    except FileNotFoundError:
        pass
    except ValueError:
        raise OSError(f"{path}: not a store key (64 hex digits); move it away to start the store's records "
                      "again (every record is then recomputed once)") from None
    root.mkdir(parents=True, exist_ok=True)
    temporary = root / f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(secrets.token_hex(32) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temporary, path)  # never replaces a key another process created meanwhile
        except FileExistsError:
            pass
    finally:
        temporary.unlink(missing_ok=True)
    return _key_of(root)


_UNSEALED = "written without a content hash (no seal: by a wfeval from before records were sealed, or edited)"
_MISMATCH = "its content does not match its hash (the seal of this store's key): edited or damaged"


def _head(seal: str) -> bytes:
    """How a sealed record's file begins (:meth:`Sealer.dumps`)."""
    return b'{"' + SEAL.encode() + b'":"' + seal.encode("utf-8", "replace") + b'"'


def _body(data: bytes, head: int) -> bytes:
    """The canonical JSON the seal covers: the file without its first field (the seal) and newline."""
    rest = data[head:].rstrip(b"\n")
    return b"{" + (rest[1:] if rest.startswith(b",") else rest)


def unsealed_bytes(data: bytes) -> bytes:
    """A sealed record's bytes without its seal (the seal is per store: two stores' records of the same
    content differ only there)."""
    try:
        seal = json.loads(data).get(SEAL)
    except (ValueError, AttributeError):
        return data
    return _body(data, len(_head(seal))) if isinstance(seal, str) and data.startswith(_head(seal)) else data


class Sealer:
    """Seals and opens the records of one store (the key ``<root>/seal.key``, read once, on first use).

    ``on_refused(refusal, record, action)``: told of every refusal (the run writes a
    ``record_refused`` event); without it a refusal is logged as a warning."""

    def __init__(self, root: str | os.PathLike[str],
                 on_refused: Callable[[RecordRefused, str, str], None] | None = None):
        self.root = Path(root).expanduser().resolve()
        self.on_refused = on_refused
        self._key: bytes | None = None

    @property
    def key(self) -> bytes:
        if self._key is None:
            self._key = _key_of(self.root)
        return self._key

    def _mac(self, name: str, body: bytes) -> str:
        return SCHEME + hmac.new(self.key, name.encode("utf-8") + b"\n" + body, hashlib.sha256).hexdigest()

    def seal_of(self, name: str, record: Mapping[str, Any]) -> str:
        """The seal of ``record`` (every field but :data:`SEAL`) stored as the record of ``name``."""
        return self._mac(name, canonical_json({k: v for k, v in record.items() if k != SEAL}).encode("utf-8"))

    def verify(self, name: str, record: Mapping[str, Any], seal: Any, path: Path) -> None:
        """:class:`RecordRefused` unless ``seal`` (kept beside ``record``, e.g. in an ``.npz``) is the seal of
        ``record`` as the record of ``name``."""
        if seal is None:
            raise RecordRefused(path, UNSEALED, _UNSEALED)
        if not (isinstance(seal, str) and hmac.compare_digest(seal, self.seal_of(name, record))):
            raise RecordRefused(path, MISMATCH, _MISMATCH)

    def dumps(self, name: str, record: Mapping[str, Any]) -> bytes:
        """The file bytes of ``record`` sealed as the record of ``name``: its canonical JSON (one line),
        the seal as its first field (so that a read checks the bytes as written, without writing the
        record again)."""
        body = canonical_json({k: v for k, v in record.items() if k != SEAL}).encode("utf-8")
        head = b'{"' + SEAL.encode() + b'":"' + self._mac(name, body).encode() + b'"'
        return head + (b"," + body[1:] if body != b"{}" else b"}") + b"\n"

    def loads(self, name: str, data: bytes | str, path: Path) -> dict[str, Any]:
        """The record in ``data`` (read from ``path``) without its seal; :class:`RecordRefused` unless
        it is a JSON object sealed by this store as the record of ``name``, byte for byte as written
        (a file rewritten by a JSON tool, even with equal values, is refused)."""
        data = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        try:
            record = json.loads(data)
        except ValueError as exc:
            raise RecordRefused(path, UNREADABLE, f"unreadable ({type(exc).__name__}: truncated or not JSON)") from None
        if not isinstance(record, dict):
            raise RecordRefused(path, UNREADABLE, f"unreadable (a JSON {type(record).__name__}, not a record)")
        seal = record.pop(SEAL, None)
        if seal is None:
            raise RecordRefused(path, UNSEALED, _UNSEALED)
        if not (isinstance(seal, str) and hmac.compare_digest(_head(seal), data[:len(_head(seal))])
                and hmac.compare_digest(seal, self._mac(name, _body(data, len(_head(seal)))))):
            raise RecordRefused(path, MISMATCH, _MISMATCH)
        return record

    def read(self, name: str, path: Path, data: bytes | None = None) -> dict[str, Any] | None:
        """:meth:`loads` of the file at ``path`` (or of ``data`` already in hand); None when there is no
        file. OSError (the file cannot be read, the key cannot be made) is the caller's to handle."""
        if data is None:
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                return None
        return self.loads(name, data, path)

    def served(self, name: str, path: Path, parse: Callable[[dict[str, Any]], Any], record: str, action: str,
               data: bytes | None = None) -> Any:
        """``parse`` of the sealed record at ``path`` (:meth:`read`), or None: no file, or the record refused
        and reported (:meth:`refused`; ``record``: what kind, ``action``: what is done instead). A record
        whose seal holds but that ``parse`` cannot take (KeyError, ValueError, TypeError, AttributeError)
        is refused as not a record. OSError is the caller's to handle."""
        try:
            found = self.read(name, path, data)
            if found is None:
                return None
            try:
                return parse(found)
            except (KeyError, ValueError, TypeError, AttributeError) as exc:
                raise RecordRefused(path, NOT_A_RECORD, f"sealed but not a {record} ({type(exc).__name__}: {exc})"
                                    ) from None
        except RecordRefused as refusal:
            self.refused(refusal, record, action)
            return None

    def refused(self, refusal: RecordRefused, record: str, action: str) -> None:
        """Report a refusal (``record``: what kind of record; ``action``: what is done instead)."""
        if self.on_refused is not None:
            self.on_refused(refusal, record, action)
        else:
            import logging

            logging.getLogger(__name__).warning("%s refused, %s: %s", record, action, refusal)


def event_sink(on_event: Callable[..., None] | None) -> Callable[[RecordRefused, str, str], None] | None:
    """``on_refused`` writing a ``record_refused`` event through a run's ``on_event(kind, **fields)``."""
    if on_event is None:
        return None
    return lambda refusal, record, action: on_event("record_refused", **refusal.event(record, action))
