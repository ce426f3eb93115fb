"""A model object given in Python (``wfeval.evaluate(model=...)``): its identity covers its state.

The generation cache serves a stored output only to the same model identity. For a model built
from a config, the config, the version and the code are that identity. An object handed over in
Python may have changed since the last call -- a training loop updates its weights in place --
so its identity also covers **its state**, computed at every call:

* the torch ``state_dict`` of the object itself when it is a module (or has a ``state_dict()``),
  and of every torch module held in one of its attributes (one level deep: a wrapper holding its
  network): sha256 over each entry's name, dtype, shape and bytes, plus the module's
  ``training`` flag (dropout and batch norm behave differently in train mode);
* what the object's own ``fingerprint()`` returns, when it has one;
* the ``model_version`` the caller names (e.g. the training step), when given.

An object where none of these is found (no torch module, no ``fingerprint()``) and no
``model_version`` is refused: nothing would tell a changed object from an unchanged one, and a
stale generation must never be served (docs/python-api.md). Hashing costs one pass over the
weights (measured in docs/performance.md); torch is only touched when it is already imported.
"""

from __future__ import annotations

import copy
import hashlib
import sys
from typing import Any

from wfeval.config.errors import ConfigError
from wfeval.models.python import PythonModel


class StateUnknown(ValueError):
    """The object's state cannot be seen: give a ``model_version`` or a ``fingerprint()``."""


def _torch_modules(obj: Any) -> dict[str, Any]:
    """The object itself (``""``) when it is a torch module, and the torch modules among its attributes."""
    module_type = getattr(getattr(sys.modules.get("torch"), "nn", None), "Module", None)  # torch imported by someone
    if module_type is None:
        return {}
    found: dict[str, Any] = {}
    if isinstance(obj, module_type):
        found[""] = obj
        return found  # its attributes' modules are its submodules: already in its state_dict
    for name, value in sorted(getattr(obj, "__dict__", {}).items()):
        if isinstance(value, module_type):
            found[name] = value
    return found


def _tensor_bytes(value: Any) -> tuple[str, tuple[int, ...], memoryview | bytes]:
    torch = sys.modules["torch"]
    tensor = value.detach()
    if tensor.device.type != "cpu":
        tensor = tensor.cpu()
    flat = tensor.contiguous().reshape(-1)
    raw = flat.view(torch.uint8) if flat.numel() else flat.to(torch.uint8)
    return str(tensor.dtype), tuple(tensor.shape), memoryview(raw.numpy()).cast("B")


def state_dict_sha256(state: Any) -> str:
    """sha256 of a state dict: every entry by name (sorted) with its dtype, shape and bytes."""
    tensor_type = getattr(sys.modules.get("torch"), "Tensor", None)
    digest = hashlib.sha256()
    for name in sorted(state):
        value = state[name]
        digest.update(f"{name}\0".encode())
        if tensor_type is not None and isinstance(value, tensor_type):
            dtype, shape, data = _tensor_bytes(value)
            digest.update(f"{dtype}{shape}\0".encode())
            digest.update(data)
        else:
            digest.update(repr(value).encode())
        digest.update(b"\1")
    return digest.hexdigest()


def state_identity(obj: Any, model_version: Any = None) -> dict[str, Any]:
    """What tells this object's state apart (see the module doc); :class:`StateUnknown` when nothing does."""
    identity: dict[str, Any] = {}
    modules = _torch_modules(obj)
    if not modules and callable(getattr(obj, "state_dict", None)) and "torch" in sys.modules:
        identity["state_dict_sha256"] = state_dict_sha256(obj.state_dict())
    for name, module in modules.items():
        identity[f"{name or 'self'}.state_dict_sha256"] = state_dict_sha256(module.state_dict())
        identity[f"{name or 'self'}.training"] = bool(module.training)
    fingerprint = getattr(obj, "fingerprint", None)
    if callable(fingerprint):
        identity["fingerprint"] = dict(fingerprint() or {})
    if model_version is not None:
        identity["model_version"] = str(model_version)
    if not identity:
        cls = type(obj)
        raise StateUnknown(
            f"wfeval.evaluate: cannot tell whether model {cls.__module__}.{cls.__qualname__} changed since it was "
            "last evaluated: it holds no torch module (nor is one) and has no fingerprint() method. Pass "
            "model_version=... that changes whenever its weights do (e.g. the training step; a constant such as "
            "'fixed' for a model that never changes), or give the class a fingerprint() returning what identifies "
            "its state; otherwise the generation cache could serve outputs of an older model (docs/python-api.md)")
    return identity


class LiveModel(PythonModel):
    """``model=python`` with the object itself instead of ``model.object._target_``; its
    fingerprint adds the object's :func:`state_identity` (computed when the run is planned)."""

    def __init__(self, object: Any, state: dict[str, Any], **options: Any):  # noqa: A002 - as PythonModel
        super().__init__(object, **options)
        self.state = dict(state)

    def fingerprint(self) -> dict[str, Any]:
        """The class and its code (computed once per class and process: the code that runs is the
        code imported, whatever its files hold later) plus the object's state."""
        key = (type(self.object), self.fingerprint_source)
        if key not in _CODE:
            _CODE[key] = super().fingerprint()
        return {**copy.deepcopy(_CODE[key]), "state": self.state}


_CODE: dict[tuple[type, bool], dict[str, Any]] = {}


def live_model(obj: Any, options: dict[str, Any]) -> LiveModel:
    """The object served like ``model=python`` with the config section's ``options`` (name, version,
    device, batch size; ``_target_`` and ``object`` left out), its state identified now."""
    options = {k: v for k, v in options.items() if k not in ("_target_", "object")}
    try:
        return LiveModel(obj, state_identity(obj, options.get("version")), **options)
    except StateUnknown as exc:
        raise ConfigError(str(exc)) from None
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"model: {exc}") from exc
