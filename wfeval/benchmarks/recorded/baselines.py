"""Simulator baselines for recorded families (``model=game_oracle``, ``model=game_random_actions``).

Both continue the real game from the snapshot saved at the sample's last context frame
(``request.metadata["simulator"]``): ``game_oracle`` with the sample's true actions, which gives
exactly the recorded frames (the upper bound), ``game_random_actions`` with seeded random actions
of the same length (right dynamics, ignores the control). ``static`` (``model=static``) needs no
simulator and works on every benchmark as is.

:func:`continue_game` is the family-independent hook: any model (e.g. the gridworld ``oracle``)
can call it for a request that carries ``metadata["simulator"]``.

Both implement the step interface (wfeval.models.protocol): the state is the simulator's own
snapshot (the ALE's saved emulator state with its RNG for Atari, seed plus actions for
Crafter) plus the step count; ``step`` restores it, plays the chunk and snapshots again, so
states never change under a planner's branches and the frames equal ``generate``'s byte for byte.
"""

from __future__ import annotations

import dataclasses

import hashlib
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from wfeval.api import GenerationRequest, action_space_of
from wfeval.benchmarks.recorded.policy import own_actions, sticky_actions
from wfeval.benchmarks.recorded.resize import area_resize
from wfeval.benchmarks.recorded.simulator import plain_action, simulator_module
from wfeval.models.base import actions_of, initial_frame
from wfeval.models.protocol import StepOutput
from wfeval.utils.hashing import canonical_json


def simulator_info(request: GenerationRequest) -> Mapping[str, Any]:
    info = request.metadata.get("simulator")
    if not isinstance(info, Mapping) or "family" not in info:
        raise ValueError(
            f"sample {request.sample_id!r}: no 'simulator' snapshot in the request metadata; the game "
            "baselines run on simulator-recorded benchmarks (atari_*, crafter); on gridworld use model=oracle"
        )
    return info


def _simulator(info: Mapping[str, Any], simulators: dict | None) -> Any:
    key = canonical_json([info["family"], info["config"]])
    sims = simulators if simulators is not None else {}
    if key not in sims:
        sims[key] = simulator_module(info["family"]).make(dict(info["config"]))
    return sims[key]


def play(info: Mapping[str, Any], snapshot: Mapping[str, Any], actions: Sequence[int],
         simulators: dict | None = None, rewards: list | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """One (resized) frame per action played from ``snapshot``, and the snapshot after them; the game's
    reward of each action is appended to ``rewards`` when given."""
    sim = _simulator(info, simulators)
    sim.restore(snapshot)
    steps = [sim.step(plain_action(a)) for a in actions]
    after = sim.snapshot()
    if rewards is not None:
        rewards.extend(float(st.reward) for st in steps)
    if not steps:
        return np.empty((0, 0, 0, 3), np.uint8), after
    return area_resize(np.stack([st.frame for st in steps]), info.get("resize")), after


def continue_game(request: GenerationRequest, actions: Sequence[int], simulators: dict | None = None) -> np.ndarray:
    """The initial frame, then one frame per action, simulated from the sample's saved snapshot."""
    info = simulator_info(request)
    first = initial_frame(request)
    if not len(actions):
        return first[None]
    frames, _ = play(info, info["state"], actions, simulators)
    return np.concatenate([first[None], frames])


@dataclass(frozen=True)
class GameState:
    """Step state of the game baselines: the simulator snapshot after ``t`` actions (never mutated)."""

    info: Mapping[str, Any]  # family, config, resize (the request's metadata["simulator"])
    snapshot: Mapping[str, Any]
    t: int = 0
    shape: tuple[int, ...] = ()  # H×W×3 of the frames (for an empty chunk)
    extra: Any = None  # game_random_actions: (seed, number of actions)
    rewards: tuple[float, ...] = ()  # the game's reward of each action of the chunk that led here


def start_game(request: GenerationRequest) -> GameState:
    """The step state at the sample's last context frame (its saved snapshot)."""
    info = simulator_info(request)
    return GameState(info=info, snapshot=info["state"], shape=tuple(initial_frame(request).shape))


def step_game(state: GameState, actions: Sequence[int], simulators: dict | None = None) -> tuple[np.ndarray, GameState]:
    """One frame per action played from ``state`` (which is left as it was), and the state after them."""
    if not len(actions):
        return np.empty((0, *state.shape), np.uint8), dataclasses.replace(state, rewards=())
    rewards: list[float] = []
    frames, after = play(state.info, state.snapshot, [plain_action(a) for a in actions], simulators, rewards)
    return frames, GameState(state.info, after, state.t + len(actions), state.shape, state.extra, tuple(rewards))


def own_seed(seed: int, request: GenerationRequest) -> tuple[int, Any]:
    """What a random-actions baseline draws its own actions from for ``request``
    (:func:`~wfeval.benchmarks.recorded.policy.own_actions`): a seed from (``seed``, sample id) and
    the number of action ids, or, for a continuous space, its bounds."""
    digest = hashlib.sha256(f"{seed}/{request.sample_id}".encode()).digest()
    space = action_space_of(request)
    if space is not None and space.is_continuous:
        found = space.bounds()
        if found is None:
            raise ValueError(f"sample {request.sample_id!r}: random actions are drawn within the action space's "
                             f"bounds, and it declares none ({space.describe()})")
        return int.from_bytes(digest[:4], "little"), found
    n_actions = len(request.controls.get("action_names") or ()) or max(actions_of(request), default=0) + 1
    return int.from_bytes(digest[:4], "little"), n_actions


class _GameBaseline:
    name = "baseline"
    version = "1.0"

    def __init__(self, name: str | None = None):
        if name:
            self.name = name
        self._simulators: dict[str, Any] = {}

    @classmethod
    def cannot_serve(cls, request: GenerationRequest) -> str | None:
        """Why this baseline cannot produce an output for ``request`` (checked before generation)."""
        info = request.metadata.get("simulator")
        if isinstance(info, Mapping) and "family" in info:
            return None
        return "needs a saved game state (metadata['simulator']), which only atari_* and crafter provide"

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        out: list[Any] = []
        for request in requests:
            try:
                out.append({"generated_video": self.generate_one(request)})
            except ValueError as exc:  # this sample cannot be simulated: a per-sample failure
                out.append(exc)
        return out

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        raise NotImplementedError

    def start(self, request: GenerationRequest) -> GameState:
        return start_game(request)

    def _actions(self, state: GameState, actions: Sequence[int]) -> list[int]:
        return [plain_action(a) for a in actions]

    def step(self, state: GameState, actions: Sequence[int]) -> StepOutput:
        frames, after = step_game(state, self._actions(state, actions), self._simulators)
        return StepOutput(after, frames, reward=list(after.rewards))  # the reward of the game it plays

    def close(self) -> None:
        for sim in self._simulators.values():
            close = getattr(sim, "close", None)
            if callable(close):
                close()
        self._simulators.clear()


class SimulatorOracle(_GameBaseline):
    """The real game continued from the saved state with the true actions: exact frames and rewards."""

    name = "game_oracle"

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        return continue_game(request, actions_of(request), self._simulators)


class SimulatorRandomActions(_GameBaseline):
    """The real game continued from the saved state with seeded random actions of the same length."""

    name = "game_random_actions"

    def __init__(self, name: str | None = None, seed: int = 0, p_repeat: float = 0.5):
        super().__init__(name)
        if not 0.0 <= p_repeat <= 1.0:
            raise ValueError(f"model.p_repeat must be in [0, 1], got {p_repeat}")
        self.seed, self.p_repeat = int(seed), float(p_repeat)

    def _own(self, request: GenerationRequest) -> tuple[int, Any]:
        return own_seed(self.seed, request)

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        actions = own_actions(self._own(request), len(actions_of(request)), self.p_repeat)
        return continue_game(request, actions, self._simulators)

    def start(self, request: GenerationRequest) -> GameState:
        state = super().start(request)
        return GameState(state.info, state.snapshot, 0, state.shape, self._own(request))

    def _actions(self, state: GameState, actions: Sequence[int]) -> list[int]:
        # its own actions: sticky_actions and sticky_vectors are prefix-stable
        return own_actions(state.extra, state.t + len(actions), self.p_repeat)[state.t:]
