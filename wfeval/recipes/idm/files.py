"""IDM checkpoints: ``idm.pt`` (float16 state dict) beside ``idm.json`` (what it is and how it was made).

``idm.json`` holds the network config, the action names (discrete) or action space (continuous),
the standardiser of continuous actions, ``applies_to`` (the benchmark configuration whose frames
it reads: gridworld's world spec, a game's pinned env and resize), the training data (namespace,
seeds or reference hashes, hash of the data), the held-out figures and the sha256 of ``idm.pt``.

The IDMs shipped with wfeval (``weights/<name>/``) are pinned here by the sha256 of both files:
loading refuses any other content (a hash written beside a file proves nothing about it; the one
in this module is the pin). A checkpoint the user trained (``metric.idm_accuracy.idm.checkpoint``)
is checked against its sidecar, and against ``metric.idm_accuracy.idm.sha256`` when given.
Weights are read with ``torch.load(weights_only=True)``: tensors only, no code runs.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any, Mapping

from wfeval.storage.safe_io import atomic_write_bytes
from wfeval.utils.hashing import file_sha256

FORMAT = "wfeval.recipes.idm/1"
WEIGHTS, SIDECAR = "idm.pt", "idm.json"
SHIPPED_DIR = Path(__file__).resolve().parent / "weights"
TRAIN_HINT = "python -m wfeval.recipes.train_idm benchmark=<name>"

#: the IDMs shipped with wfeval: name -> sha256 of idm.pt and idm.json (regenerate with
#: python -m wfeval.recipes.train_idm benchmark=<name> out=wfeval/recipes/idm/weights/<name>)
SHIPPED: dict[str, dict[str, str]] = {
    "atari_boxing": {"weights": "5e8cb4e8ba41685dea6c55f2e19a5e0da5d593eeedcc33c961a7ac0139c25ac6",
                      "sidecar": "2670c2d12dccbfeed011431111b144fa4a8d51f8380887526ef5ac73e95a6226"},
    "atari_breakout": {"weights": "90e454400048a8c659c7e1b77eafd0d1299878642286ae225ac992e8ea2f833f",
                        "sidecar": "e39e134988987ae4eaacdd678ec01cff01d87694c8cc80956bb37d01e478bddb"},
    "atari_pong": {"weights": "592235d64f5ae1166903f05db0ec9fe5d5b6b1a58194c14118c2fbed3e68e73d",
                    "sidecar": "8d88176a837b66428191f7759dfd8aa94f0c0c85bbce2b3744d45e2fc88bbc0d"},
    "crafter": {"weights": "b21c79aae4ad0163c879f95a596dc8a186611e63fd97b9a5fd0a2278a60e2cd6",
                 "sidecar": "1ff2c7698dcea4530707e1eada276d00be9ae3b9cdcd7a3a332b990328d836b0"},
    "gridworld": {"weights": "1e2dfb1925356bd994fb6d601cb967cae875c2c6c3539995dba468a62063cbfc",
                   "sidecar": "4868a623a225d19642a295112ffa86ea6dacc4421b7908320fe4649d50a2342f"},
    # continuous target positions: R² 0.990 held out (coords on; 1500 steps, ~3 min of one CPU core)
    "pusht": {"weights": "64b253b98facf8a991e3087b052660844e373bf6765ad4c110813f372aef911b",
               "sidecar": "19e7d68a249bcdd1b76f1012b0b11d53b911a821af9205589b2fceb5a2edbd58"},
}


class CheckpointError(ValueError):
    """An IDM checkpoint that cannot be used (missing, unreadable, or not the content pinned)."""


def paths(checkpoint: str | os.PathLike) -> tuple[Path, Path]:
    """(weights, sidecar) of a checkpoint folder or its ``.pt`` file."""
    path = Path(checkpoint).expanduser()
    weights = path if path.suffix == ".pt" else path / WEIGHTS
    return weights, weights.with_suffix(".json")


def save(folder: str | os.PathLike, state_dict: Mapping[str, Any], meta: Mapping[str, Any]) -> tuple[Path, Path]:
    """Write ``idm.pt`` (float16 tensors) then ``idm.json``, each atomically."""
    import torch

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()  # through a buffer: a file name would enter the archive and change its hash
    torch.save({k: v.detach().cpu().half() for k, v in state_dict.items()}, buffer)
    data = buffer.getvalue()
    weights, sidecar = folder / WEIGHTS, folder / SIDECAR
    atomic_write_bytes(weights, data)
    doc = {"format": FORMAT, **dict(meta), "weights_sha256": hashlib.sha256(data).hexdigest()}
    atomic_write_bytes(sidecar, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode("utf-8"))
    return weights, sidecar


def read_sidecar(checkpoint: str | os.PathLike, pins: Mapping[str, str] | None = None) -> tuple[Path, dict]:
    """(weights path, sidecar) with every check but loading the tensors: both files present, the sidecar
    an IDM sidecar, the weights' sha256 the one the sidecar names, and the ``pins`` (``weights``,
    ``sidecar``: sha256) when given."""
    weights, sidecar = paths(checkpoint)
    for path, what in ((weights, "weights"), (sidecar, "sidecar")):
        if not path.is_file():
            raise CheckpointError(f"IDM checkpoint: no {what} file {path}; train one with {TRAIN_HINT}")
    pins = dict(pins or {})
    if pins.get("sidecar") and file_sha256(sidecar) != pins["sidecar"]:
        raise CheckpointError(f"IDM checkpoint: {sidecar} has sha256 {file_sha256(sidecar)[:16]}…, the pinned one "
                              f"is {pins['sidecar'][:16]}… (a changed file is never used)")
    try:
        meta = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"IDM checkpoint: cannot read {sidecar}: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"IDM checkpoint: {sidecar} is not an IDM sidecar (format {FORMAT})")
    sha = file_sha256(weights)
    for expected, what in ((meta.get("weights_sha256"), f"{sidecar.name} names"), (pins.get("weights"), "is pinned")):
        if expected and sha != expected:
            raise CheckpointError(f"IDM checkpoint: {weights} has sha256 {sha[:16]}… but {expected[:16]}… {what}; "
                                  "the file changed or the two files come from different trainings")
    return weights, meta


def load(checkpoint: str | os.PathLike, pins: Mapping[str, str] | None = None) -> tuple[Any, dict]:
    """(network in eval mode, float32, on the CPU; sidecar), every check of :func:`read_sidecar` passed."""
    import torch

    from wfeval.recipes.idm.net import IDMConfig, InverseDynamics

    weights, meta = read_sidecar(checkpoint, pins)
    net = InverseDynamics(IDMConfig.from_dict(meta["net"]))
    state = torch.load(weights, map_location="cpu", weights_only=True)
    net.load_state_dict({k: v.float() for k, v in state.items()})
    return net.eval(), meta


def shipped() -> dict[str, Path]:
    """Name -> folder of every shipped IDM."""
    return {name: SHIPPED_DIR / name for name in SHIPPED}
