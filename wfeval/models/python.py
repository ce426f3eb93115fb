"""``model=python``: any object implementing the world-model protocol, built from its ``_target_``.

    model=python model.object._target_=my_pkg.MyModel +model.object.checkpoint=/path/ckpt

The object gets batches of requests (``batch_size``, else ``run.batch_size``); its optional
``setup`` is called once with the resolved ``device`` when it accepts one, its optional ``close``
at the end. ``device``: ``auto`` (the default: cuda when available to a model that uses torch, else
cpu), ``cpu``, ``cuda``, ``cuda:N`` or ``mps``;
a declared accelerator that is not there stops the run before any generation. The identity
(generation cache key) includes the code the object's class runs -- its module and the modules
of your own it imports (wfeval/models/identity.py) -- and the content of every file or folder an
option names (``+model.object.checkpoint=ckpt.pt``), and the object's live state after it is built
and after ``setup()`` (its arrays by content: wfeval/models/live.py): editing your model's code,
retraining its checkpoint in place or loading other weights from a fixed path does not serve stale
generations.

The object may have ``generate``, the step interface (``start``/``step``, optional ``step_many``;
wfeval/models/protocol.py) or both: the adapter exposes exactly what the object has, so the step
protocols (autoregressive, closed_loop, planning) drive a stepping object, and an object with only
the step interface also runs open loop (one ``step`` with every action).
"""

from __future__ import annotations

import inspect
from typing import Any, Mapping, Sequence

from wfeval.api import GenerationRequest
from wfeval.config.code import ImportPath, resolve
from wfeval.config.errors import ConfigError
from wfeval.models.identity import code_identity
from wfeval.models.latent import has_latent_interface
from wfeval.models.protocol import Generated, has_generate, has_step_interface, lacks_every_interface
from wfeval.utils.state_identity import fingerprint_value


def _build(obj: Any) -> Any:
    """The object itself, or (for an import path or an un-instantiated node) what it names, through
    the door (:func:`wfeval.config.code.resolve`: trust checked before anything is imported)."""
    if isinstance(obj, str) or (isinstance(obj, Mapping) and "_target_" in obj):
        return resolve(obj, "model.object")
    return obj


def resolve_device(device: str) -> str:
    """``cpu``, ``cuda[:N]``, ``mps`` (checked to be there) or ``auto``: cuda when torch is loaded (the
    model's code imported it) and a CUDA device is available, else cpu -- a model that does not use
    torch never pays for importing it."""
    device = str(device or "cpu")
    if device == "cpu":
        return device
    if device == "auto":
        import sys

        torch = sys.modules.get("torch")
        return "cuda" if torch is not None and torch.cuda.is_available() else "cpu"
    import torch

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"model.device={device!r} but no CUDA device is available (torch.cuda.is_available() "
                           "is False); use device=cpu or auto")
    if device == "mps" and not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
        raise ConfigError("model.device='mps' but MPS is not available")
    return device


class PythonModel:
    def __init__(
        self,
        object: ImportPath,  # noqa: A002 - the config key users write
        name: str | None = None,
        version: str | None = None,
        device: str = "auto",
        batch_size: int | None = None,
        fingerprint_source: bool = True,
    ):
        self.object = _build(object)
        if (why := lacks_every_interface(self.object)) is not None:
            raise ValueError(f"model.object: {why}")
        for method in ("encode", "predict", "decode", "reward"):  # the latent interface, exposed as the object has it
            if has_latent_interface(self.object) and callable(getattr(self.object, method, None)):
                setattr(self, method, getattr(self.object, method))
        if has_step_interface(self.object):  # exposed only when the object steps (drivers check for it)
            self.start, self.step = self.object.start, self.object.step
            if callable(getattr(self.object, "step_many", None)):
                self.step_many = self.object.step_many
        self.name = name or str(getattr(self.object, "name", "") or type(self.object).__name__)
        self.version = str(version or getattr(self.object, "version", "") or "0")
        self.version_given = version  # model.version / model_version=: what the user says identifies the state
        self.device_request = device
        self.device: str | None = None
        self.batch_size = batch_size or getattr(self.object, "batch_size", None)
        self.fingerprint_source = fingerprint_source

    @property
    def state_object(self) -> Any:
        """The object whose live state is part of the model's identity (wfeval/pipeline/model.py)."""
        return self.object

    @property
    def fingerprinted_options(self) -> tuple[str, ...]:
        """The object's options its own ``fingerprint()`` identifies (``object.<name>``)."""
        return tuple(f"object.{k}" for k in getattr(self.object, "fingerprinted_options", ()) or ())

    def fingerprint(self) -> dict[str, Any]:
        """The object's class and the code it runs: its module and the user modules it imports
        (wfeval/models/identity.py; ``fingerprint_source: false`` keeps only the class name), and
        what the object's own optional ``fingerprint()`` says."""
        cls = type(self.object)
        out: dict[str, Any] = {"class": f"{cls.__module__}.{cls.__qualname__}"}
        own = getattr(self.object, "fingerprint", None)
        if callable(own):
            out["object"] = fingerprint_value(own(), self.object)
        if self.fingerprint_source:
            out["code"] = code_identity(cls)
            if cls.__module__ in out["code"]["files"]:
                out["source_sha256"] = out["code"]["files"][cls.__module__]
        else:
            out["code"] = {"class": out["class"], "fingerprint_source": False}
        return out

    def cannot_serve(self, request: GenerationRequest) -> str | None:
        method = getattr(self.object, "cannot_serve", None)
        return method(request) if callable(method) else None

    def setup(self) -> None:
        self.device = resolve_device(self.device_request)
        setup = getattr(self.object, "setup", None)
        if callable(setup):
            params = inspect.signature(setup).parameters
            takes_device = "device" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
            if takes_device:
                setup(device=self.device)
            else:
                setup()

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        if not has_generate(self.object):  # a stepping object runs open loop through one step call
            from wfeval.models.stepping import StepLoop

            outcomes = StepLoop(self.object).generate(list(requests))
        else:
            outcomes = list(self.object.generate(list(requests)))
        return [Generated(o, {"device": self.device}) if isinstance(o, Mapping) else o for o in outcomes]

    def close(self) -> None:
        close = getattr(self.object, "close", None)
        if callable(close):
            close()
