"""The model as the pipeline drives it: one wrapper, built once, supplies the optional parts.

A world model only has to implement ``generate(requests)`` (see :mod:`wfeval.models.protocol`);
``name``, ``version``, ``batch_size``, ``fingerprint()``, ``setup()`` and ``close()`` are
optional. :class:`ModelHandle` reads them once, so nothing downstream probes the model, and
computes the model's identity (the key of its cached generations), which covers the code the
model runs (:mod:`wfeval.models.identity`) unless its ``fingerprint()`` gives ``code`` itself, and
the content of every existing file or folder an option names (``option_files``: a checkpoint
overwritten in place is another model, :func:`wfeval.models._files.option_files`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from wfeval.api import GenerationRequest
from wfeval.models._files import option_files
from wfeval.models.identity import code_identity
from wfeval.utils.hashing import sha256_json
from wfeval.utils.state_identity import fingerprint_value


def model_key(model_cfg: Mapping[str, Any], version: str, fingerprint: Mapping[str, Any] | None = None) -> str:
    """Identity of a model: its resolved config plus the version its class declares, plus what its
    optional ``fingerprint()`` says (content hashes of a precomputed folder, of a script, ...)."""
    identity: dict[str, Any] = {"config": dict(model_cfg), "version": version}
    if fingerprint:
        identity["fingerprint"] = dict(fingerprint)
    return sha256_json(identity)[:32]


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
        return cls(
            model=model, name=str(getattr(model, "name", type(model).__name__)), version=version,
            key=model_key(model_cfg, version, fingerprint), target=model_cfg.get("_target_"),
            batch_size=getattr(model, "batch_size", None) or None, fingerprint=fingerprint,
            _setup=_optional(model, "setup"), _close=_optional(model, "close"),
        )

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
