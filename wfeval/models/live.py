"""A model object given in Python (``wfeval.evaluate(model=...)``): its identity covers its state.

The generation cache serves a stored output only to the same model identity. For a model built
from a config, the config, the version and the code are that identity. An object handed over in
Python may have changed since the last call -- a training loop updates its weights in place --
so its identity also covers **its state**, computed at every call:

* everything reachable from the object, arrays by content (torch tensors -- parameters, buffers
  persistent or not, plain tensor attributes --, numpy and JAX arrays, however deeply they are
  held: lists, dicts, attributes of attributes): :func:`wfeval.utils.state_identity.state_digest`,
  the one home of this rule;
* what the object's own ``fingerprint()`` returns, when it has one (a dict, bytes or a str);
* the ``model_version`` the caller names (e.g. the training step), when given.

A numpy, JAX or torch object needs neither of the last two. When part of the state cannot be
seen (an extension object whose contents Python cannot read, more than
:data:`~wfeval.utils.state_identity.MAX_OBJECTS` objects), the object is refused with that
reason unless it has a ``fingerprint()`` or a ``model_version`` is given -- then those are its
identity, and the manifest says the state was not hashed and why. A stale generation must never
be served (docs/python-api.md). Hashing costs one pass over the arrays' bytes (docs/performance.md).
"""

from __future__ import annotations

import copy
from typing import Any

from wfeval.config.errors import ConfigError
from wfeval.models.python import PythonModel
from wfeval.utils.state_identity import StateUnseen, fingerprint_value, state_digest


class StateUnknown(ValueError):
    """The object's state cannot be seen: give a ``model_version`` or a ``fingerprint()``."""


def state_identity(obj: Any, model_version: Any = None) -> dict[str, Any]:
    """What tells this object's state apart (see the module doc); :class:`StateUnknown` when nothing does."""
    identity: dict[str, Any] = {}
    unseen = None
    try:
        identity["state"] = state_digest(obj)
    except StateUnseen as exc:
        unseen = str(exc)
    fingerprint = getattr(obj, "fingerprint", None)
    if callable(fingerprint):
        identity["fingerprint"] = fingerprint_value(fingerprint(), obj)
    if model_version is not None:
        identity["model_version"] = str(model_version)
    if unseen is not None:
        if not identity:
            cls = type(obj)
            raise StateUnknown(
                f"wfeval.evaluate: cannot tell whether model {cls.__module__}.{cls.__qualname__} changed since it was "
                f"last evaluated: part of its state cannot be hashed ({unseen}). Pass model_version=... that changes "
                "whenever its weights do (e.g. the training step; a constant such as 'fixed' for a model that never "
                "changes), or give the class a fingerprint() returning what identifies its state (a dict, bytes or "
                "a str); otherwise the generation cache could serve outputs of an older model (docs/python-api.md)")
        identity["state_not_hashed"] = unseen
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
        code = {k: v for k, v in _CODE[key].items() if k != "object"}  # its fingerprint(): in the state, now
        return {**copy.deepcopy(code), "state": self.state}


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
