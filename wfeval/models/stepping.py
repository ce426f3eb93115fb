"""Rolling a step model through a request's actions, chunk by chunk, with one row per step."""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.models.base import actions_of, initial_frame
from wfeval.models.protocol import Generated, check_step_output


def model_name(model: Any) -> str:
    return str(getattr(model, "name", "") or type(model).__name__)


def chunks(actions: Sequence[Any], size: int | None) -> list[list[Any]]:
    """``actions`` cut into consecutive chunks of ``size`` (the last may be shorter); None: one chunk."""
    actions = list(actions)
    if not actions:
        return []
    size = len(actions) if not size else int(size)
    return [actions[i:i + size] for i in range(0, len(actions), size)]


def timed_step(model: Any, state: Any, actions: Sequence[Any]) -> tuple[Any, np.ndarray, float]:
    """(new state, checked frames, seconds) of one ``model.step``."""
    started = time.perf_counter()
    out = model.step(state, list(actions))
    seconds = time.perf_counter() - started
    return out.state, check_step_output(out, len(actions), model_name(model)), seconds


def rollout(model: Any, request: GenerationRequest, chunk: int | None) -> tuple[np.ndarray, list[dict]]:
    """[initial frame] + every frame the model steps through the request's actions, and one row
    per ``step`` call (``step``, ``actions``, ``frames``, ``latency_seconds``)."""
    first = initial_frame(request)
    started = time.perf_counter()
    state = model.start(request)
    rows: list[dict] = [{"step": 0, "call": "start", "actions": [], "frames": 0,
                         "latency_seconds": time.perf_counter() - started}]
    frames = [first[None]]
    for i, part in enumerate(chunks(actions_of(request), chunk), 1):
        state, out, seconds = timed_step(model, state, part)
        frames.append(out)
        rows.append({"step": i, "call": "step", "actions": [_plain(a) for a in part], "frames": int(out.shape[0]),
                     "latency_seconds": seconds})
    return np.concatenate(frames), rows


def per_sample(one: Any, requests: Sequence[GenerationRequest]) -> list[Any]:
    """``one(request)`` per request; an exception becomes that sample's failure outcome (returned),
    except a time limit (``TimeoutError``: the pipeline's deadline), which stops the batch."""
    out: list[Any] = []
    for request in requests:
        try:
            out.append(one(request))
        except TimeoutError:
            raise
        except Exception as exc:
            out.append(exc)
    return out


def _plain(action: Any) -> Any:
    """A JSON-ready action: a numpy scalar as a number, a continuous action (array) as a list."""
    if isinstance(action, np.ndarray):
        return action.tolist()
    return action.item() if isinstance(action, np.generic) else action


class ModelWrapper:
    """A wrapper that runs the wrapped model its own way and forwards identity, setup and close."""

    def __init__(self, model: Any):
        self.model = model
        self.name = model_name(model)
        self.version = str(getattr(model, "version", "") or "0")
        self.batch_size = getattr(model, "batch_size", None)

    def setup(self) -> None:
        setup = getattr(self.model, "setup", None)
        if callable(setup):
            setup()

    def close(self) -> None:
        close = getattr(self.model, "close", None)
        if callable(close):
            close()


class StepLoop(ModelWrapper):
    """Open loop for a model that only has the step interface: one ``step`` with every action."""

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        return per_sample(lambda r: {"generated_video": rollout(self.model, r, None)[0]}, requests)


__all__ = ["Generated", "ModelWrapper", "StepLoop", "chunks", "per_sample", "rollout", "timed_step", "model_name"]
