"""``protocol=autoregressive``: start from the initial frame, then step through the actions, ``chunk``
actions per model call; one ``steps.jsonl`` row per call."""

from __future__ import annotations

from typing import Any

from wfeval.config.errors import ConfigError
from wfeval.models.protocol import Generated
from wfeval.models.stepping import rollout
from wfeval.protocols.base import Protocol, ProtocolRun
from wfeval.protocols.drivers import Driver


class Autoregressive(Protocol):
    driver = "autoregressive"

    def __init__(self, chunk: int = 1):
        if not isinstance(chunk, int) or isinstance(chunk, bool) or chunk < 1:
            raise ConfigError(f"protocol.chunk must be an integer >= 1, got {chunk!r}")
        self.chunk = chunk

    def drive(self, model: Any, benchmark: Any, store: Any, run: ProtocolRun, policy: Any = None) -> Any:
        return AutoregressiveDriver(model, chunk=self.chunk)


class AutoregressiveDriver(Driver):
    """The video is [initial frame] + every frame produced."""

    protocol = "autoregressive"

    def __init__(self, model: Any, chunk: int = 1):
        super().__init__(model)
        if chunk < 1:
            raise ValueError(f"protocol.chunk must be >= 1, got {chunk}")
        self.chunk = int(chunk)

    def run_one(self, request: Any) -> Generated:
        video, rows = rollout(self.model, request, self.chunk)
        return Generated({"generated_video": video}, {"steps": rows, "protocol": self.protocol, "chunk": self.chunk})
