"""Content fingerprints of files and folders, for model identities (what the cache keys on)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Mapping

from wfeval.utils.hashing import file_sha256

#: files larger than this are identified by size and modification time instead of content
MAX_HASH_BYTES = 64 * 1024 * 1024
#: a folder named by a model option is hashed by content up to this many bytes (else by size and time)
MAX_FOLDER_BYTES = 1 << 30
#: model options that never name what the model computes with (scratch folders, names, devices)
NOT_IDENTITY_KEYS = frozenset({"_target_", "name", "version", "device", "cwd", "work_dir", "env", "output_keys",
                               "batch_size", "path_template", "formats", "output_key", "fingerprint_mode"})

def file_identity(path: Path, mode: str = "content") -> str:
    """What a model's identity holds for a file it names: its sha256 (:func:`~wfeval.utils.hashing.file_sha256`,
    the process's one digest cache), or ``stat:<size>:<mtime>`` above :data:`MAX_HASH_BYTES` or in ``stat`` mode."""
    stat = path.stat()
    if mode == "stat" or stat.st_size > MAX_HASH_BYTES:
        return f"stat:{stat.st_size}:{stat.st_mtime_ns}"
    return file_sha256(path, cached=True)


def tree_digest(root: Path, mode: str = "content") -> dict[str, Any]:
    """One digest over every (relative path, file digest) below ``root``, hidden entries skipped."""
    if root.is_file():
        return {"sha256": file_identity(root, mode), "files": 1}
    total = hashlib.sha256()
    count = 0
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        total.update(f"{rel.as_posix()}\0{file_identity(path, mode)}\n".encode())
        count += 1
    return {"sha256": total.hexdigest(), "files": count}


def _named_path(value: str) -> Path | None:
    """The existing file or folder a config string names (relative to the working directory), or None;
    never the working directory itself, one of its parents or the home folder (not a model's file)."""
    text = value.strip()
    if not text or len(text) > 4096 or "\n" in text or text.startswith("-") or "{" in text or "://" in text:
        return None
    try:
        path = Path(text).expanduser()
        if not path.exists():
            return None
        real, here = path.resolve(), Path.cwd().resolve()
    except (OSError, ValueError, RuntimeError):
        return None
    if real == here or real in here.parents or real == Path.home().resolve():
        return None
    return path


def _folder_mode(root: Path, mode: str) -> str:
    if mode == "stat":
        return mode
    total = 0
    for folder, _, names in os.walk(root):
        for name in names:
            try:
                total += os.stat(os.path.join(folder, name)).st_size
            except OSError:
                continue
            if total > MAX_FOLDER_BYTES:
                return "stat"
    return mode


def option_files(cfg: Any, prefix: str = "", mode: str = "content", skip: frozenset[str] = frozenset()
                 ) -> dict[str, str]:
    """The content digests of every existing file or folder a model's options name (a checkpoint, a
    weights folder, a script): ``{option key: sha256}``. They join the model's identity, so retraining
    a checkpoint in place is a new model. A folder over :data:`MAX_FOLDER_BYTES` (or a sibling
    ``fingerprint_mode: stat``) is identified by its files' sizes and times; a file over
    :data:`MAX_HASH_BYTES` by its size and time. A model names the options its own ``fingerprint()``
    already identifies in ``fingerprinted_options`` (the learned recipe's checkpoint: by its weights'
    sha256, not its sidecar's timings): ``skip`` (dotted keys) leaves them out."""
    out: dict[str, str] = {}
    if isinstance(cfg, Mapping):
        mode = "stat" if cfg.get("fingerprint_mode") == "stat" else mode
        for key, value in cfg.items():
            if str(key) not in NOT_IDENTITY_KEYS and f"{prefix}{key}" not in skip:
                out.update(option_files(value, f"{prefix}{key}.", mode, skip))
    elif isinstance(cfg, (list, tuple)):
        for i, value in enumerate(cfg):
            out.update(option_files(value, f"{prefix[:-1]}[{i}].", mode, skip))
    elif isinstance(cfg, str) and (path := _named_path(cfg)) is not None:
        try:
            if path.is_file():
                out[prefix[:-1]] = file_identity(path, mode)
            else:
                out[prefix[:-1]] = tree_digest(path, _folder_mode(path, mode))["sha256"]
        except OSError:
            pass
    return out


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
