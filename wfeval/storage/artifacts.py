"""Content-addressed storage of arrays (videos, frames) shared by benchmarks, models and metrics.

Arrays are stored once, losslessly, named by the sha256 of their canonical ``.npy`` bytes (the
address), under ``<store>/objects/ab/<sha256>.npy.zst`` (zstd level 3, media type
``application/x-npy+zstd``; chosen by measurement, docs/performance.md). Objects of older stores,
plain ``<sha256>.npy`` (``application/x-npy``), stay readable. An :class:`~wfeval.api.ArtifactRef`
points at the file and carries the address, so any holder of a ref can read the array back
without knowing the store; reading verifies the decoded bytes against the address and removes a
corrupt object from the store (:class:`ArtifactCorrupt`). ``python -m wfeval.store`` shows the
store's size and prunes it.

A dataset file is not copied: its ref (:func:`file_ref`, media type ``application/x-wfeval-file``)
names the file, how to decode it (a :class:`FileDecoder` by name, and its options), the sha256 of
the file's bytes, and the address of the decoded array. Reading it decodes the file and checks
the decoded content against that address. Decoders are registered by the layer that can decode
(``wfeval.io`` registers ``"wfeval.io"`` when imported; a process that has not imported it finds
it through the ``wfeval.decoders`` entry points), so this module never imports a higher layer.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from wfeval.api import ArtifactRef
from wfeval.storage import layout
from wfeval.storage.safe_io import atomic_write_bytes  # noqa: F401 - the name other modules import
from wfeval.storage.seal import Sealer
from wfeval.utils.hashing import is_sha256

NPY_MEDIA_TYPE = "application/x-npy"
ZSTD_MEDIA_TYPE = "application/x-npy+zstd"  # the canonical .npy bytes, one zstd frame (content checksum on)
MEDIA_SUFFIX = {NPY_MEDIA_TYPE: ".npy", ZSTD_MEDIA_TYPE: ".npy.zst"}
CODECS = {"zstd": ZSTD_MEDIA_TYPE, "npy": NPY_MEDIA_TYPE}
ZSTD_LEVEL = 3  # chosen by measurement (docs/performance.md): level 9 saves little more, costs 5x the time
FILE_MEDIA_TYPE = "application/x-wfeval-file"  # a dataset file read in place, decoded on read (file_ref)


_PRELOADED: dict[str, np.ndarray] = {}  # sha256 → verified array (wfeval.storage.metric_rows's reader thread)


@contextlib.contextmanager
def preloaded(arrays: Mapping[str, np.ndarray]) -> Iterator[None]:
    """Within the block, :func:`read_array` of a ref whose sha256 is a key returns that array (read-only,
    already verified: nothing user code does to it reaches the next reader) instead of reading again."""
    for array in arrays.values():
        array.flags.writeable = False
    _PRELOADED.update(arrays)
    try:
        yield
    finally:
        for sha in arrays:
            _PRELOADED.pop(sha, None)


class ArtifactError(RuntimeError):
    """An artifact cannot be read: missing file, bad checksum, or unreadable content.

    ``path``: the file, when known; ``store_object``: whether it is an object of a content-addressed
    store (wfeval wrote it: a problem with it is a storage fault, never the model's or the data's)."""

    def __init__(self, message: str, path: Path | None = None, store_object: bool = False):
        super().__init__(message)
        self.path, self.store_object = path, store_object


class ArtifactCorrupt(ArtifactError):
    """A stored object whose content does not match its address (flipped bytes, truncated file).

    ``path`` is the object's file; ``discarded`` says whether it was removed from the store (an
    object of the store is, so the next ``put_array`` of the same content writes it again)."""

    def __init__(self, message: str, path: Path, discarded: bool, store_object: bool | None = None):
        super().__init__(message, path, discarded if store_object is None else store_object)
        self.discarded = discarded


def array_bytes(array: np.ndarray) -> bytes:
    """The canonical ``.npy`` encoding of an array (C order, no pickle)."""
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


def media_type_of(path: Path) -> str:
    """The media type of a file by its name: ``.npy.zst`` (zstd) or anything else (plain ``.npy``)."""
    return ZSTD_MEDIA_TYPE if path.name.endswith(".zst") else NPY_MEDIA_TYPE


def _zstd():
    import zstandard  # noqa: PLC0415 - lazy: a process that stores nothing never loads it
    return zstandard


def encode(data: bytes, media_type: str) -> bytes:
    """The file bytes of canonical ``.npy`` bytes in a media type."""
    if media_type == ZSTD_MEDIA_TYPE:
        return _zstd().ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True, write_content_size=True).compress(data)
    return data


class ArtifactStore:
    """A folder of content-addressed arrays; it outlives any one run directory.

    An object's address is the sha256 of its canonical ``.npy`` bytes, whatever the codec of the
    file (``codec="zstd"``, the default: ``<sha>.npy.zst``; ``"npy"``: uncompressed ``<sha>.npy``,
    the format of older stores, which stays readable).
    """

    def __init__(self, root: str | os.PathLike[str], *, durable: bool = False, codec: str = "zstd"):
        if codec not in CODECS:
            raise ValueError(f"artifact store codec must be one of {', '.join(CODECS)}, got {codec!r}")
        self.root = Path(root).expanduser().resolve()
        self.durable = durable  # fsync every object (survives power loss; slower)
        self.media_type = CODECS[codec]
        # the store's records (decoded files, recordings) are sealed with its key (storage/seal.py); a run
        # sets ``seal.on_refused`` so that a refused record is an event of the run
        self.seal = Sealer(self.root)

    def object_path(self, sha256: str, media_type: str | None = None) -> Path:
        """The file of an object: the existing one in any codec, else where this store writes it. A name
        that is not a sha256 digest (from an index or a run folder someone else wrote) is refused: it
        could name a file outside the store."""
        if not is_sha256(sha256):
            raise ValueError(f"{sha256!r} is not the name of a stored object (a sha256 digest)")
        folder = self.root / layout.OBJECTS / sha256[:2]
        if media_type is None:
            for kind in (self.media_type, *(m for m in MEDIA_SUFFIX if m != self.media_type)):
                path = folder / f"{sha256}{MEDIA_SUFFIX[kind]}"
                if path.exists():
                    return path
            media_type = self.media_type
        return folder / f"{sha256}{MEDIA_SUFFIX[media_type]}"

    def ref_of(self, sha256: str, *, kind: str, shape: tuple[int, ...], dtype: str,
               metadata: Mapping[str, Any] | None = None) -> ArtifactRef:
        """A ref to an object already in the store (its file in whichever codec it was written)."""
        path = self.object_path(sha256)
        return ArtifactRef(kind=kind, uri=str(path), sha256=sha256, media_type=media_type_of(path),
                           shape=tuple(int(n) for n in shape), dtype=str(dtype), metadata=dict(metadata or {}))

    def put_array(
        self, array: np.ndarray, *, kind: str, metadata: Mapping[str, Any] | None = None
    ) -> ArtifactRef:
        """Store ``array`` (once) and return a ref to it. An object already there is checked against
        the array in hand and rewritten when it differs (a corrupt object is rebuilt from its source:
        the benchmark that puts its inputs and references again on every run, the model's output)."""
        array = np.asarray(array)
        data = array_bytes(array)
        sha256 = hashlib.sha256(data).hexdigest()
        path = self.object_path(sha256)
        if not path.exists() or not _holds(path, data):
            path = self.object_path(sha256, self.media_type) if not path.exists() else path
            atomic_write_bytes(path, encode(data, media_type_of(path)), durable=self.durable)
        else:  # its age is its last use: `python -m wfeval.store prune --older-than` keeps it
            try:
                os.utime(path)
            except OSError:
                pass
        return ArtifactRef(
            kind=kind,
            uri=str(path),
            sha256=sha256,
            media_type=media_type_of(path),
            shape=tuple(int(n) for n in array.shape),
            dtype=str(array.dtype),
            metadata=dict(metadata or {}),
        )

    def resolve(self, ref: ArtifactRef) -> Path:
        """The local file of ``ref``: its uri, or this store's copy of the same content (any codec)."""
        path = Path(ref.uri.removeprefix("file://"))
        if not path.exists() and is_sha256(ref.sha256) and ref.media_type != FILE_MEDIA_TYPE:
            local = self.object_path(ref.sha256)
            if local.exists():
                return local
        return path


def _holds(path: Path, data: bytes) -> bool:
    """Whether the object file at ``path`` decodes to exactly ``data`` (False: corrupt, unreadable)."""
    try:
        stored = path.read_bytes()
        if media_type_of(path) == ZSTD_MEDIA_TYPE:
            stored = _zstd().ZstdDecompressor().decompress(stored)
    except Exception:  # noqa: BLE001 - an unreadable or broken zstd frame is a corrupt object
        return False
    return stored == data


def _is_store_object(path: Path, sha256: str) -> bool:
    """A file of a content-addressed store (``objects/ab/<sha>.npy[.zst]``): safe to discard."""
    return (path.parent.parent.name == layout.OBJECTS and path.parent.name == sha256[:2]
            and path.name in (f"{sha256}{suffix}" for suffix in MEDIA_SUFFIX.values()))


def _corrupt(ref: ArtifactRef, path: Path, why: str) -> ArtifactCorrupt:
    discarded = False
    if ref.sha256 and _is_store_object(path, ref.sha256):
        try:
            path.unlink()
            discarded = True
        except OSError:
            pass
    note = "; discarded from the store" if discarded else ""
    return ArtifactCorrupt(f"artifact {ref.kind!r} at {path}: {why} (file changed or corrupt){note}", path, discarded,
                           store_object=bool(ref.sha256 and _is_store_object(path, ref.sha256)))


def _path_of(ref: ArtifactRef, store: ArtifactStore | None) -> Path:
    return store.resolve(ref) if store is not None else Path(ref.uri.removeprefix("file://"))


def _npy_bytes(ref: ArtifactRef, path: Path, *, verify: bool) -> bytes:
    """The ``.npy`` bytes of the object at ``path`` (decompressed), checked against the ref's
    address when ``verify``: a mismatch or an unreadable zstd frame raises :class:`ArtifactCorrupt`."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ArtifactError(f"artifact {ref.kind!r}: cannot read {path}: {exc.strerror or exc}", path,
                            bool(ref.sha256 and _is_store_object(path, ref.sha256))) from exc
    if media_type_of(path) == ZSTD_MEDIA_TYPE:
        zstandard = _zstd()
        try:
            data = zstandard.ZstdDecompressor().decompress(data)
        except zstandard.ZstdError as exc:
            raise _corrupt(ref, path, f"not a readable zstd object ({exc})") from exc
    if verify and ref.sha256 and hashlib.sha256(data).hexdigest() != ref.sha256:
        raise _corrupt(ref, path, "sha256 mismatch")
    return data


def read_array(ref: ArtifactRef, *, store: ArtifactStore | None = None, verify: bool = True) -> np.ndarray:
    """Load the array behind ``ref``; raise :class:`ArtifactError` naming the file on failure.

    With ``verify`` (the default) the sha256 of the decoded ``.npy`` bytes must equal the ref's
    (its address): a flipped byte or a truncated file raises :class:`ArtifactCorrupt`, and a store
    object found corrupt is removed so that it can be written again (docs/performance.md gives
    the cost per object).
    """
    if ref.sha256 and (hit := _PRELOADED.get(ref.sha256)) is not None:
        return hit
    if ref.media_type == FILE_MEDIA_TYPE:
        return _decode_file(ref, verify=verify)
    path = _path_of(ref, store)
    if ref.media_type not in ("", *MEDIA_SUFFIX):
        raise ArtifactError(f"artifact {ref.kind!r} at {path}: unsupported media type {ref.media_type!r}")
    data = _npy_bytes(ref, path, verify=verify)
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise ArtifactError(f"artifact {ref.kind!r} at {path}: not a readable .npy array ({exc})") from exc


def check_object(ref: ArtifactRef, *, store: ArtifactStore | None = None) -> None:
    """Raise :class:`ArtifactError` unless the object behind ``ref`` reads back to its address
    (:class:`ArtifactCorrupt` — and the object is discarded — when its content does not match).

    A dataset file (:func:`file_ref`) passes when its bytes and the decoder versions are the ones
    recorded — the identity the decoded-file cache trusts — and is decoded and checked only when
    either differs; every :func:`read_array` of it checks the decoded content anyway."""
    if ref.media_type == FILE_MEDIA_TYPE:
        source, decoder, path = _source(ref)
        try:
            same = (decoder.digest(path) == source.get("file_sha256") and decoder.version == source.get("version")
                    and _plain(decoder.versions()) == source.get("versions"))
        except (OSError, ValueError) as exc:
            raise ArtifactError(_missing_or_unreadable(ref, path, exc)) from exc
        if not same:
            _decode_file(ref, verify=True)
        return
    _npy_bytes(ref, _path_of(ref, store), verify=True)


# -- dataset files read in place ------------------------------------------------------------------

ADVICE = ("restore the original file at that path, or evaluate again on the dataset as it is now (a new run "
          "records the new content); until then this sample is left out of every metric that reads it")


@dataclass(frozen=True)
class FileDecoder:
    """How files of a kind are decoded into arrays, registered under ``name`` by the layer that can
    decode them (:func:`register_decoder`).

    ``decode(path, options)`` returns the array; ``digest(path)`` the sha256 of everything
    ``decode`` reads (a file's bytes; a frame folder's frames); ``versions()`` what else decides
    the pixels (library versions). ``version`` changes when the decoding code does.
    """

    name: str
    version: str
    decode: Callable[[Path, Mapping[str, Any]], np.ndarray]
    digest: Callable[[Path], str]
    versions: Callable[[], Mapping[str, str | None]]


_DECODERS: dict[str, FileDecoder] = {}
ENTRY_POINT_GROUP = "wfeval.decoders"


def register_decoder(decoder: FileDecoder) -> None:
    _DECODERS[decoder.name] = decoder


def file_decoder(name: str) -> FileDecoder:
    """The registered decoder ``name``, else the installed entry point of that name (group
    ``wfeval.decoders``); :class:`ArtifactError` when there is none."""
    if name not in _DECODERS:
        from wfeval.config.plugins import entry_points

        entry = entry_points(ENTRY_POINT_GROUP).get(name)
        if entry is not None:
            found = entry.load()
            if isinstance(found, FileDecoder) and found.name == name:
                register_decoder(found)
    if name not in _DECODERS:
        raise ArtifactError(f"no decoder {name!r} for dataset files is registered (import the package that "
                            f"provides it, or reinstall wfeval so that its {ENTRY_POINT_GROUP!r} entry points exist)")
    return _DECODERS[name]


def content_sha256(array: np.ndarray) -> str:
    """The address of an array: the sha256 of its canonical ``.npy`` bytes (as :meth:`ArtifactStore.put_array`)."""
    return hashlib.sha256(array_bytes(np.asarray(array))).hexdigest()


def _plain(versions: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k): versions[k] for k in sorted(versions)}


def file_ref(path: str | os.PathLike[str], *, kind: str, decoder: FileDecoder, options: Mapping[str, Any],
             file_sha256: str, sha256: str, shape: tuple[int, ...], dtype: str) -> ArtifactRef:
    """A ref to the array that ``decoder`` makes of the file at ``path`` with ``options`` (nothing is
    stored): ``file_sha256`` is ``decoder.digest(path)``, ``sha256`` the decoded array's address."""
    source = {"decoder": decoder.name, "version": decoder.version, "options": dict(options),
              "file_sha256": file_sha256, "versions": _plain(decoder.versions())}
    return ArtifactRef(kind=kind, uri=str(Path(path).absolute()), sha256=sha256, media_type=FILE_MEDIA_TYPE,
                       shape=tuple(int(n) for n in shape), dtype=str(dtype), metadata={"source": source})


def _source(ref: ArtifactRef) -> tuple[Mapping[str, Any], FileDecoder, Path]:
    source = ref.metadata.get("source")
    path = Path(ref.uri.removeprefix("file://"))
    if not isinstance(source, Mapping) or not isinstance(source.get("decoder"), str):
        raise ArtifactError(f"{ref.kind} read from {path}: the ref records no decoder (metadata.source)")
    return source, file_decoder(source["decoder"]), path


def _missing_or_unreadable(ref: ArtifactRef, path: Path, exc: BaseException) -> str:
    if not path.exists():
        return (f"{ref.kind} read from the dataset file {path}: the file is gone (moved or deleted since the "
                f"run recorded it); {ADVICE}")
    reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or exc
    return f"{ref.kind} read from the dataset file {path}: cannot be read any more ({reason}); {ADVICE}"


def _decode_file(ref: ArtifactRef, *, verify: bool) -> np.ndarray:
    """The array of a dataset file, checked against the ref's address when ``verify`` (and its shape
    always): the file missing, unreadable or decoding to other content raises :class:`ArtifactError`
    (:class:`ArtifactCorrupt` for other content; the dataset file is never touched)."""
    source, decoder, path = _source(ref)
    try:
        array = decoder.decode(path, source.get("options") or {})
    except (OSError, ValueError) as exc:  # wfeval.io's errors are ValueErrors
        raise ArtifactError(_missing_or_unreadable(ref, path, exc)) from exc
    if tuple(array.shape) != tuple(ref.shape) or str(array.dtype) != ref.dtype or (
            verify and ref.sha256 and content_sha256(array) != ref.sha256):
        raise ArtifactCorrupt(f"{ref.kind} read from the dataset file {path}: {_why_different(source, decoder, path)}"
                              f"; {ADVICE}", path, discarded=False)
    return array


def _why_different(source: Mapping[str, Any], decoder: FileDecoder, path: Path) -> str:
    try:
        now = decoder.digest(path)
    except (OSError, ValueError):
        now = None
    recorded = str(source.get("file_sha256", ""))
    if now != recorded:
        return (f"the file changed since the run read it (sha256 of its bytes {str(now)[:12]}…, recorded "
                f"{recorded[:12]}…), so it no longer decodes to the recorded content")
    versions = _plain(decoder.versions())
    if versions != source.get("versions") or decoder.version != source.get("version"):
        return (f"the file is unchanged but decodes to other content with this decoder ({decoder.name} "
                f"{decoder.version}, {versions}; the run used {source.get('version')}, {source.get('versions')})")
    return "the file is unchanged yet decodes to other content than recorded (a nondeterministic decoder?)"
