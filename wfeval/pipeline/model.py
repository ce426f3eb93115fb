"""The model as the pipeline drives it: one wrapper, built once, supplies the optional parts.

A world model only has to implement ``generate(requests)`` (see :mod:`wfeval.models.protocol`);
``name``, ``version``, ``batch_size``, ``fingerprint()``, ``setup()`` and ``close()`` are
optional. :class:`ModelHandle` reads them once, so nothing downstream probes the model, and
computes the model's identity (the key of its cached generations), which covers the code the
model runs (:mod:`wfeval.models.identity`) unless its ``fingerprint()`` gives ``code`` itself, and
the content of every existing file or folder an option names (``option_files``: a checkpoint
overwritten in place is another model, :func:`wfeval.models._files.option_files`), and the live
state of the user's object (:func:`state_source`), hashed when the model is built and again after
its ``setup()`` (:meth:`ModelHandle.settled`): one identity, whichever door the model came in by
(the command line, ``wfeval.evaluate``, a plugin, a latent model).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from wfeval.api import GenerationRequest
from wfeval.models._files import option_files
from wfeval.models.identity import code_identity
from wfeval.models.live import state_identity
from wfeval.utils.hashing import sha256_json
from wfeval.utils.state_identity import fingerprint_value


def model_key(model_cfg: Mapping[str, Any], version: str, fingerprint: Mapping[str, Any] | None = None) -> str:
    """Identity of a model: its resolved config plus the version its class declares, plus what its
    optional ``fingerprint()`` says (content hashes of a precomputed folder, of a script, ...)."""
    identity: dict[str, Any] = {"config": dict(model_cfg), "version": version}
    if fingerprint:
        identity["fingerprint"] = dict(fingerprint)
    return sha256_json(identity)[:32]


def driven_key(key: str, protocol: Any) -> str:
    """The key of a model's generations under a protocol that adds an identity (protocols never share
    generations); the model's own key when it adds none."""
    return key if protocol is None else sha256_json({"model": key, "protocol": protocol})[:32]


def state_source(model: Any) -> Any:
    """The live object whose state is part of the model's identity: an adapter's user object
    (``model=python``, ``wfeval.evaluate(model=...)``: its ``state_object``), or the model itself when
    its class is not wfeval's own (a plugin's or a package's model); None for wfeval's built-in
    models, which are what their config, version, code and option files say."""
    held = getattr(model, "state_object", None)
    if held is not None:
        return held
    module = type(model).__module__ or ""
    return None if module == "wfeval" or module.startswith("wfeval.") else model


def _model_version(model: Any) -> Any:
    """The version the user gave (``model.version``), which may stand for a state that cannot be seen."""
    return getattr(model, "version_given", None) if hasattr(model, "state_object") else None


def _optional(model: Any, name: str) -> Callable[[], Any] | None:
    method = getattr(model, name, None)
    return method if callable(method) else None


@dataclass(frozen=True)
class ModelHandle:
    """A built model plus what the pipeline needs to know about it."""

    model: Any
    name: str
    version: str
    key: str
    target: str | None
    batch_size: int | None = None
    fingerprint: Mapping[str, Any] = field(default_factory=dict)
    _setup: Callable[[], Any] | None = None
    _close: Callable[[], Any] | None = None
    identity_config: Mapping[str, Any] = field(default_factory=dict)  # the config part of the key
    state_of: Any = None  # the object whose state is hashed (state_source), again after setup()
    protocol_identity: Any = None  # what the protocol's driver adds to the key (with_protocol)

    @classmethod
    def wrap(cls, model: Any, model_cfg: Mapping[str, Any]) -> "ModelHandle":
        version = str(getattr(model, "version", ""))
        fingerprint_method = _optional(model, "fingerprint")
        own = fingerprint_value(fingerprint_method(), model) if fingerprint_method else {}  # dict, bytes or str
        fingerprint = {"code": code_identity(model), **own}
        # a checkpoint named by an option: retrained in place = another model (unless fingerprint() covers it)
        files = option_files(dict(model_cfg), skip=frozenset(getattr(model, "fingerprinted_options", ()) or ()))
        if files:
            fingerprint["option_files"] = files
        state_of = state_source(model)
        if state_of is not None:  # StateUnknown when nothing tells its state apart
            fingerprint["state"] = state_identity(state_of, _model_version(model))
        return cls(
            model=model, name=str(getattr(model, "name", type(model).__name__)), version=version,
            key=model_key(model_cfg, version, fingerprint), target=model_cfg.get("_target_"),
            batch_size=getattr(model, "batch_size", None) or None, fingerprint=fingerprint,
            _setup=_optional(model, "setup"), _close=_optional(model, "close"),
            identity_config=dict(model_cfg), state_of=state_of,
        )

    def with_protocol(self, driven: Any, identity: Any) -> "ModelHandle":
        """What a protocol drives (the model, or its driver around it), under a key that adds the
        protocol's identity (protocols never share generations)."""
        if driven is self.model and identity is None:
            return self
        key = driven_key(self.key, identity)
        return replace(self, model=driven, key=key, protocol_identity=identity)

    def settled(self) -> "ModelHandle":
        """The handle after ``setup()``: the object's state hashed again, since ``setup()`` may load
        weights (from a fixed path, a hub cache); a state that changed gives another key."""
        if self.state_of is None or self._setup is None:
            return self
        state = state_identity(self.state_of, self.fingerprint.get("state", {}).get("model_version"))
        if state == self.fingerprint.get("state"):
            return self
        fingerprint = {**self.fingerprint, "state": state}
        key = driven_key(model_key(self.identity_config, self.version, fingerprint), self.protocol_identity)
        return replace(self, key=key, fingerprint=fingerprint)

    def setup(self) -> None:
        if self._setup is not None:
            self._setup()

    def close(self) -> None:
        if self._close is not None:
            self._close()

    def generate(self, requests: Sequence[GenerationRequest]) -> Sequence[Any]:
        return self.model.generate(requests)

    def manifest_entry(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "key": self.key, "target": self.target,
                "fingerprint": dict(self.fingerprint)}
