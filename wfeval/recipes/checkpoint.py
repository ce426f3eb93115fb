"""Checkpoints of the recipe: ``model.pt`` (a plain ``state_dict``) beside ``model.json``.

``model.json`` holds the network config, the action names, the frame size, the training config,
the data hash and the figures of the training run, and the sha256 of ``model.pt``. Loading reads
the weights with ``torch.load(weights_only=True)`` (tensors only, no code runs) and refuses a
pair whose hashes disagree: the sidecar then describes other weights (a copy of one file without
the other). The sidecar's hash pairs the two files; it does not vouch for where they came from.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any, Mapping

from wfeval.config.errors import ConfigError
from wfeval.storage.safe_io import atomic_write_bytes
from wfeval.utils.hashing import file_sha256

FORMAT = "wfeval.recipes.checkpoint/1"
WEIGHTS, SIDECAR = "model.pt", "model.json"
TRAIN_HINT = "train one with: python -m wfeval.recipes.train benchmark=<name>"


def paths(checkpoint: str | os.PathLike) -> tuple[Path, Path]:
    """(weights, sidecar) for a checkpoint folder or its ``.pt`` file."""
    path = Path(checkpoint).expanduser()
    weights = path / WEIGHTS if path.is_dir() or not path.suffix else path
    return weights, weights.with_suffix(".json")


def save(folder: str | os.PathLike, state_dict: Mapping[str, Any], meta: Mapping[str, Any]) -> tuple[Path, Path]:
    """Write ``model.pt`` then ``model.json`` (each atomically: a half-written file is never read)."""
    import torch

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    weights, sidecar = folder / WEIGHTS, folder / SIDECAR
    # saved through a buffer: a file name would enter the archive's record names, and the same
    # weights would get another sha256
    buffer = io.BytesIO()
    torch.save({k: v.detach().cpu() for k, v in state_dict.items()}, buffer)
    data = buffer.getvalue()
    sha = hashlib.sha256(data).hexdigest()
    atomic_write_bytes(weights, data)
    doc = {"format": FORMAT, **dict(meta), "weights_sha256": sha}
    atomic_write_bytes(sidecar, (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    return weights, sidecar


def read_meta(checkpoint: str | os.PathLike) -> tuple[Path, dict[str, Any]]:
    """(weights path, sidecar dict), with clear errors for missing or mismatched files."""
    weights, sidecar = paths(checkpoint)
    for path, what in ((weights, "weights"), (sidecar, "sidecar")):
        if not path.is_file():
            raise ConfigError(f"model.checkpoint: no {what} file {path}; {TRAIN_HINT}")
    try:
        meta = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"model.checkpoint: cannot read {sidecar}: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ConfigError(f"model.checkpoint: {sidecar} is not a recipe checkpoint sidecar (format {FORMAT})")
    return weights, meta


def load(checkpoint: str | os.PathLike, device: str = "cpu") -> tuple[Any, dict[str, Any], str]:
    """(network in eval mode on ``device``, sidecar dict, sha256 of the weights file)."""
    import torch

    from wfeval.recipes.net import FramePredictor, NetConfig

    weights, meta = read_meta(checkpoint)
    sha = file_sha256(weights)
    if sha != meta.get("weights_sha256"):
        raise ConfigError(f"model.checkpoint: {weights} has sha256 {sha[:12]}… but {weights.with_suffix('.json')} "
                          f"describes weights {str(meta.get('weights_sha256'))[:12]}…; the two files come from "
                          f"different training runs. Keep them together or retrain.")
    net = FramePredictor(NetConfig.from_dict(meta["net"]))
    state = torch.load(weights, map_location="cpu", weights_only=True)
    net.load_state_dict(state)
    return net.to(device).eval(), meta, sha
