"""``protocol=open_loop``: the model receives the initial frame and the whole action sequence at once."""

from __future__ import annotations

from typing import Any

from wfeval.models.protocol import has_generate
from wfeval.protocols.base import Protocol, ProtocolRun, need_steps


class OpenLoop(Protocol):
    """The model's own ``generate``; a model with only the step interface is stepped through the actions."""

    driver = "open_loop"
    needs_steps = False

    def identity(self, run: ProtocolRun) -> None:
        return None  # the model's own key: open-loop outputs are what the model generates

    def drive(self, model: Any, benchmark: Any, store: Any, run: ProtocolRun, policy: Any = None) -> Any:
        if has_generate(model):
            return model
        from wfeval.models.stepping import StepLoop

        need_steps(model, self.driver)
        return StepLoop(model)
