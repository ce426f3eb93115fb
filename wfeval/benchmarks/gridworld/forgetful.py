"""The ``forgetful`` baseline: the true world whose memory lasts ``horizon`` steps (gridworld; on a
simulator-recorded game such as Memory Maze, the real game whose colours are redrawn)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any, Sequence

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.benchmarks.gridworld import world
from wfeval.benchmarks.gridworld.baselines import _Baseline, _world_state
from wfeval.models.base import actions_of, initial_frame
from wfeval.models.protocol import StepOutput


class ForgetfulModel(_Baseline):
    """The true simulator whose memory lasts ``horizon`` steps: every ``horizon`` steps it redraws the
    scene's static content (the background and wall textures, drawn from another seed), keeping the
    layout, the agent and the objects exact. A clip shorter than the horizon is the oracle's, frame
    for frame; a return to a place after the horizon finds it drawn differently (``task=memory``).

    On a simulator-recorded game (Memory Maze: every pixel of the first-person view is scenery) it
    is the real game continued from the sample's snapshot, with the colours redrawn every
    ``horizon`` steps: frame ``t`` of epoch ``t // horizon ≥ 1`` has each channel scaled by a gain in
    [0.55, 1.45] drawn for that epoch (:meth:`_gains`). Elsewhere (a dataset: no simulator) it is the
    reference video with the colours redrawn the same way, as ``oracle`` is the reference itself.
    Generation only (no step interface on either)."""

    name = "forgetful"

    def __init__(self, name: str | None = None, horizon: int = 16, seed: int = 0):
        super().__init__(name)
        if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 1:
            raise ValueError(f"model.horizon must be an integer >= 1 (steps remembered), got {horizon!r}")
        self.horizon, self.seed = int(horizon), int(seed)

    @classmethod
    def cannot_serve(cls, request: GenerationRequest) -> str | None:
        if "world" in request.metadata or "simulator" in request.metadata or "video" in request.references:
            return None
        return ("needs a simulator (the gridworld's state: metadata['world']; a recorded game's snapshot: "
                "metadata['simulator']) or a reference video")

    def _gains(self, epoch: int) -> np.ndarray:
        digest = hashlib.sha256(f"wfeval.forgetful.colours/{self.seed}/{epoch}".encode()).digest()
        return np.random.default_rng(int.from_bytes(digest[:8], "little")).uniform(0.55, 1.45, 3)

    def _recorded(self, request: GenerationRequest) -> np.ndarray:
        if "simulator" in request.metadata:
            from wfeval.benchmarks.recorded.baselines import continue_game

            video = continue_game(request, actions_of(request), self.__dict__.setdefault("_simulators", {}))
        else:  # a dataset: the reference video, as the oracle's
            from wfeval.storage.artifacts import read_array

            video = read_array(request.references["video"])
        out = video.copy()
        for t in range(self.horizon, len(video)):
            out[t] = np.clip(np.rint(video[t].astype(np.float64) * self._gains(t // self.horizon)), 0, 255)
        return out

    def _texture_seed(self, state: world.WorldState, t: int) -> int:
        epoch = t // self.horizon
        if not epoch:
            return state.seed
        digest = hashlib.sha256(f"wfeval.forgetful/{self.seed}/{state.seed}/{epoch}".encode()).digest()
        return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF

    def _render(self, states: Sequence[world.WorldState], first_t: int) -> np.ndarray:
        return np.stack([world.render(replace(s, seed=self._texture_seed(s, first_t + i)))
                         for i, s in enumerate(states)])

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        if "world" not in request.metadata and ("simulator" in request.metadata or "video" in request.references):
            return self._recorded(request)
        state = _world_state(request)
        states = [state]
        for a in actions_of(request):
            states.append(world.step(states[-1], int(a)))
        return np.concatenate([initial_frame(request)[None], self._render(states[1:], 1)]) if len(states) > 1 \
            else initial_frame(request)[None]

    def step(self, state: Any, actions: Sequence[int]) -> StepOutput:
        w, worlds = state.world, []
        for a in actions:
            w = world.step(w, int(a))
            worlds.append(w)
        if not worlds:
            return StepOutput(state, np.empty((0, w.spec.height, w.spec.width, 3), np.uint8))
        return StepOutput(replace(state, world=w, t=state.t + len(actions)), self._render(worlds, state.t + 1))
