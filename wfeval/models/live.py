"""A model's live state as part of its identity, for every door: ``wfeval.evaluate(model=...)``,
``model=python`` on the command line, plugin models and latent models alike.

The generation cache serves a stored output only to the same model identity. The config, the
version and the code are part of it; but an object may hold state no config names -- a training
loop updates its weights in place, an ``__init__`` or ``setup()`` loads a checkpoint from a fixed
path -- so the identity also covers **the object's state**, hashed when the model is built and
again after its ``setup()`` (:class:`wfeval.pipeline.model.ModelHandle`):

* everything reachable from the object, arrays by content (torch tensors -- parameters, buffers
  persistent or not, plain tensor attributes --, numpy and JAX arrays, however deeply they are
  held: lists, dicts, attributes of attributes): :func:`wfeval.utils.state_identity.state_digest`,
  the one home of this rule;
* what the object's own ``fingerprint()`` returns, when it has one (a dict, bytes or a str);
* the model version the user names (``model.version=...``; from Python ``model_version=...``,
  e.g. the training step), when given.

A numpy, JAX or torch object needs neither of the last two. When part of the state cannot be
seen (an extension object whose contents Python cannot read, more than
:data:`~wfeval.utils.state_identity.MAX_OBJECTS` objects), the object is refused with that
reason unless it has a ``fingerprint()`` or a model version is given -- then those are its
identity, and the manifest says the state was not hashed and why. A stale generation must never
be served (docs/adding-a-model.md). Hashing costs one pass over the arrays' bytes (docs/performance.md).
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
                f"cannot tell whether model {cls.__module__}.{cls.__qualname__} changed since it was last "
                f"evaluated: part of its state cannot be hashed ({unseen}). Pass model_version=... that changes "
                "whenever its weights do (from wfeval.evaluate; on the command line model.version=...; e.g. the "
                "training step, a constant such as 'fixed' for a model that never changes), or give the class a "
                "fingerprint() returning what identifies its state (a dict, bytes or a str); otherwise the "
                "generation cache could serve outputs of an older model (docs/adding-a-model.md)")
        identity["state_not_hashed"] = unseen
    return identity


class LiveModel(PythonModel):
    """``model=python`` with the object itself instead of ``model.object._target_``: its code
    identity computed once per class and process (a training loop evaluates the same class again and
    again); its state, like every model's, is hashed by :class:`~wfeval.pipeline.model.ModelHandle`."""

    def fingerprint(self) -> dict[str, Any]:
        """The class and its code (computed once per class and process: the code that runs is the
        code imported, whatever its files hold later)."""
        key = (type(self.object), self.fingerprint_source)
        if key not in _CODE:
            _CODE[key] = super().fingerprint()
        return copy.deepcopy({k: v for k, v in _CODE[key].items() if k != "object"})  # its fingerprint(): in the state


_CODE: dict[tuple[type, bool], dict[str, Any]] = {}


def live_model(obj: Any, options: dict[str, Any]) -> LiveModel:
    """The object served like ``model=python`` with the config section's ``options`` (name, version,
    device, batch size; ``_target_`` and ``object`` left out)."""
    options = {k: v for k, v in options.items() if k not in ("_target_", "object")}
    try:
        return LiveModel(obj, **options)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"model: {exc}") from exc
