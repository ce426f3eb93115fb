"""Baseline world models for the built-in gridworld: an upper bound and graded broken models.

They bracket what a metric must rank: ``oracle`` is exact, ``static`` ignores time and actions,
``random_actions`` has the right dynamics but ignores the given actions; ``noisy`` (Gaussian
pixel noise of σ levels) and ``blur`` degrade the oracle's pixels but not its control, and
``lagged`` renders sharp frames that follow the actions one step late (also on a recorded game:
the real game continued with the actions one step late), ``forgetful`` is exact for ``horizon``
steps and then redraws the scene's static content (its memory is that short; ``task=memory``).
``random_actions`` also runs on a recorded game (the game continued with its own random actions).
On a recorded game the simulator-backed baselines' steps carry the reward of the game they play
(``StepOutput.reward``: exact for the oracle, its own actions' for ``random_actions``, one step late
for ``lagged``): what ``task=reward_prediction`` scores.

Every baseline also implements the step interface (``start``/``step``, wfeval.models.protocol):
its state is an immutable value (a :class:`world.WorldState`, plus the step count, the pending
actions of ``lagged`` or the noise generator's state of ``noisy``; off the gridworld, the oracle's
game snapshot or reference video), so stepping never changes a state another branch holds, and
``[initial frame] + step(start(r), actions).frames`` equals ``generate([r])`` byte for byte.
Frame 0 is always the given initial frame (the context).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

import numpy as np

from wfeval.api import GenerationRequest, draw_of
from wfeval.benchmarks.gridworld import world
from wfeval.benchmarks.gridworld.blur import gaussian_blur
from wfeval.benchmarks.recorded.simulator import plain_action
from wfeval.models.base import actions_of, initial_frame
from wfeval.models.protocol import StepOutput


def _world_state(request: GenerationRequest) -> world.WorldState:
    try:
        return world.WorldState.from_dict(request.metadata["world"])
    except KeyError:
        raise ValueError(
            f"sample {request.sample_id!r}: no 'world' state in the request metadata; "
            "the simulator baselines only run on the gridworld benchmark"
        ) from None


def _needs_world(request: GenerationRequest) -> str | None:
    if "world" in request.metadata:
        return None
    return ("needs the gridworld simulator state (metadata['world']), which only the gridworld "
            "benchmark provides")


def _on_recorded_game(request: GenerationRequest) -> bool:
    """A simulator-recorded sample (atari_*, crafter, memory_maze): continued through its saved state."""
    return "world" not in request.metadata and "simulator" in request.metadata


def _needs_simulator(request: GenerationRequest) -> str | None:
    if "world" in request.metadata or "simulator" in request.metadata:
        return None
    return ("needs a simulator state: the gridworld's world (metadata['world']) or a recorded game's "
            "snapshot (metadata['simulator'])")


def _noop_of(request: GenerationRequest) -> Any:
    """What a late action is replaced by: the action named noop (else id 0); for continuous actions
    (Push-T's target positions) the command in force before the sample, its last context action
    (else its first action: holding still; a goal sample: its snapshot's last action, else the placed
    agent's position)."""
    from wfeval.api import has_continuous_actions

    if has_continuous_actions(request):
        before = list(request.controls.get("context_actions") or ()) or list(request.controls.get("actions") or ())[:1]
        if not before:  # a goal sample (pusht): its snapshot's last command, else holding still where it was placed
            state = request.metadata.get("simulator", {}).get("state", {})
            before = list(state.get("actions") or ()) or [list(state.get("start") or ())[:2]]
        return [float(v) for v in before[-1]]
    names = [str(n).lower() for n in (request.controls.get("action_names") or ())]
    return names.index("noop") if "noop" in names else 0


class _GameSimulators:
    """The recorded games' simulators a baseline keeps (one per game config), closed with it."""

    def _sims(self) -> dict:
        return self.__dict__.setdefault("_simulators", {})

    def close(self) -> None:
        for sim in self._sims().values():
            close = getattr(sim, "close", None)
            if callable(close):
                close()
        self._sims().clear()


@dataclass(frozen=True)
class SimState:
    """Step state of the simulator baselines (immutable: ``step`` returns a new one)."""

    world: world.WorldState
    t: int = 0  # actions applied so far
    pending: tuple[int, ...] = ()  # lagged: actions not applied yet (oldest first)
    extra: Any = None  # per-model data (noisy: the noise generator's state; random_actions: its seed)


@dataclass(frozen=True)
class SourceState:
    """The oracle's step state off the gridworld: a recorded game's snapshot
    (:class:`~wfeval.benchmarks.recorded.baselines.GameState`) or the read-only reference video."""

    inner: Any
    t: int = 0
    extra: Any = None


def _frames(states: Sequence[world.WorldState]) -> np.ndarray:
    return np.stack([world.render(s) for s in states])


def _known(w: world.WorldState) -> tuple:
    """A world state's key within one ``step_many`` call: equal keys, equal states."""
    return id(w.spec), id(w.walls), w.seed, w.agent, w.objects


class _Memo:
    """World steps and frames within one ``step_many`` call. A state is known by the object (a
    planner's candidates pass the same objects on: a dictionary lookup) and, the first time an
    object is met, by its layout objects (spec and walls, which stepping passes on) and its values
    (seed, agent, objects): equal states reached by different paths are stepped and rendered once.
    Every object known by its id is kept alive by the memo, so an id is never reused within it."""

    def __init__(self) -> None:
        self.steps: tuple[dict, dict] = ({}, {})  # next state by (id(state), action), by (_known(state), action)
        self.frames: tuple[dict, dict] = ({}, {})  # frame by (id(state), None), by (_known(state), None)
        self.alive: list[world.WorldState] = []

    def step(self, w: world.WorldState, action: int) -> world.WorldState:
        return self._get(self.steps, w, action, world.step)

    def render(self, w: world.WorldState) -> np.ndarray:
        return self._get(self.frames, w, None, world.render)

    def _get(self, table: tuple[dict, dict], w: world.WorldState, arg: Any, make: Any) -> Any:
        by_id, by_value = table
        hit = by_id.get((id(w), arg))
        if hit is None:
            key = (_known(w), arg)
            hit = by_value.get(key)
            if hit is None:
                hit = by_value[key] = make(w) if arg is None else make(w, arg)
            by_id[(id(w), arg)] = hit
            self.alive.append(w)
        return hit


class _Baseline:
    """The gridworld baselines' common ground. Their step interface advances the true world (a
    :class:`SimState`) by the actions each model really applies (``_actions``) and alters the frames
    (``_post``); a model that steps other states too (a recorded game, the reference video) adds
    ``_step_other``; one whose ``step`` is its own (``forgetful``, ``static``) overrides ``step``,
    and ``step_many`` then calls it for each state."""

    name = "baseline"
    version = "1.0"

    def __init__(self, name: str | None = None):
        if name:
            self.name = name

    @classmethod
    def cannot_serve(cls, request: GenerationRequest) -> str | None:
        """Why this baseline cannot produce an output for ``request`` (checked before generation)."""
        return _needs_world(request)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Mapping[str, np.ndarray]]:
        return [{"generated_video": self.generate_one(r)} for r in requests]

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        raise NotImplementedError

    # -- step interface: the true world advanced by (possibly altered) actions ----------------------

    def start(self, request: GenerationRequest) -> Any:
        return SimState(_world_state(request))

    def _actions(self, state: SimState, actions: Sequence[int]) -> tuple[list[int], SimState]:
        """The actions the world really applies for this chunk, and the state's bookkeeping after it."""
        if type(state) is SimState:
            return [int(a) for a in actions], SimState(state.world, state.t + len(actions), state.pending, state.extra)
        return [int(a) for a in actions], replace(state, t=state.t + len(actions))

    def _post(self, state: Any, frames: np.ndarray) -> tuple[np.ndarray, Any]:
        return frames, state

    def step(self, state: Any, actions: Sequence[int]) -> StepOutput:
        return self._advance(state, actions, None) if isinstance(state, SimState) else self._step_other(state, actions)

    def _step_other(self, state: Any, actions: Sequence[int]) -> StepOutput:
        raise TypeError(f"{type(self).__name__}: cannot step a {type(state).__name__} (start() makes the states)")

    def step_many(self, states: Sequence[Any], actions: Sequence[Sequence[int]]) -> list[StepOutput]:
        """``step`` for each state; a world state reached again (a planner's candidates share their state
        and first actions; a blocked move repeats a state) is simulated and rendered once: the same
        frames (:class:`_Memo`)."""
        if type(self).step is not _Baseline.step:
            return [self.step(s, a) for s, a in zip(states, actions)]  # a step of its own (forgetful)
        memo = _Memo()
        return [self._advance(s, a, memo) if isinstance(s, SimState) else self._step_other(s, a)
                for s, a in zip(states, actions)]

    def _advance(self, state: Any, actions: Sequence[int], memo: _Memo | None) -> StepOutput:
        applied, after = self._actions(state, actions)
        w, worlds = state.world, []
        for a in applied:
            w = world.step(w, a) if memo is None else memo.step(w, a)
            worlds.append(w)
        spec = w.spec
        if not worlds:
            frames = np.empty((0, spec.height, spec.width, 3), np.uint8)
        elif memo is None:
            frames = _frames(worlds)
        else:
            frames = np.stack([memo.render(s) for s in worlds])
        frames, after = self._post(after, frames)
        if type(after) is SimState:
            return StepOutput(SimState(w, after.t, after.pending, after.extra), frames)
        return StepOutput(replace(after, world=w), frames)


class OracleModel(_Baseline):
    """The ground truth of any benchmark that has one (the upper bound): the gridworld simulator
    replaying the given actions from the true state; on a simulator-recorded benchmark (atari_*,
    crafter) the real game continued from its saved state; elsewhere the reference video itself."""

    name = "oracle"

    def __init__(self, name: str | None = None):
        super().__init__(name)
        self._simulators: dict = {}

    @classmethod
    def cannot_serve(cls, request: GenerationRequest) -> str | None:
        if "world" in request.metadata or "simulator" in request.metadata or "video" in request.references:
            return None
        return "no ground truth: neither a simulator state nor a reference video"

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        if "world" in request.metadata:
            video, _ = world.rollout(_world_state(request), actions_of(request))
            return video
        if "simulator" in request.metadata:
            from wfeval.benchmarks.recorded.baselines import continue_game

            return continue_game(request, actions_of(request), self.__dict__.setdefault("_simulators", {}))
        if "video" in request.references:
            from wfeval.storage.artifacts import read_array

            return read_array(request.references["video"])
        return _world_state(request)  # raises: names the sample and what is missing

    def start(self, request: GenerationRequest) -> Any:
        if "world" in request.metadata:
            return SimState(_world_state(request))
        if "simulator" in request.metadata:
            from wfeval.benchmarks.recorded.baselines import start_game

            return SourceState(start_game(request))
        if "video" in request.references:
            from wfeval.storage.artifacts import read_array

            video = read_array(request.references["video"])
            video.flags.writeable = False
            return SourceState(video)
        return SimState(_world_state(request))  # raises: names the sample and what is missing

    def _step_other(self, state: SourceState, actions: Sequence[int]) -> StepOutput:
        n = len(actions)
        if isinstance(state.inner, np.ndarray):  # the reference video: its next frames, whatever the actions
            frames, inner = state.inner[state.t + 1:state.t + 1 + n], state.inner
            if len(frames) < n:
                raise ValueError(f"the reference video has {len(state.inner)} frames; step {state.t + n} is past it")
        else:
            from wfeval.benchmarks.recorded.baselines import step_game

            frames, inner = step_game(state.inner, actions, self.__dict__.setdefault("_simulators", {}))
            frames, after = self._post(SourceState(inner, state.t + n, state.extra), frames)
            return StepOutput(after, frames, reward=list(inner.rewards))  # the game's own: exact
        frames, after = self._post(SourceState(inner, state.t + n, state.extra), frames)
        return StepOutput(after, frames)

    def close(self) -> None:
        simulators = getattr(self, "_simulators", {})  # a subclass may not have called __init__
        for sim in simulators.values():
            close = getattr(sim, "close", None)
            if callable(close):
                close()
        simulators.clear()


class StaticModel(_Baseline):
    """Repeats the initial frame once per action (plus the initial frame itself)."""

    name = "static"

    @classmethod
    def cannot_serve(cls, request: GenerationRequest) -> str | None:
        return None if "image" in request.inputs else "needs an initial frame (inputs['image'])"

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        frame = initial_frame(request)
        return np.repeat(frame[None], len(actions_of(request)) + 1, axis=0)

    def start(self, request: GenerationRequest) -> np.ndarray:
        frame = initial_frame(request).copy()
        frame.flags.writeable = False
        return frame

    def step(self, state: np.ndarray, actions: Sequence[Any]) -> StepOutput:
        return StepOutput(state, np.repeat(state[None], len(actions), axis=0))


class RandomActionsModel(_GameSimulators, _Baseline):
    """The true simulator driven by seeded random actions of the same length (on a recorded game,
    sticky random actions seeded by (``seed``, sample id), as ``game_random_actions`` draws them)."""

    name = "random_actions"

    def __init__(self, name: str | None = None, seed: int = 0, p_repeat: float = 0.5):
        super().__init__(name)
        self.seed = seed
        self.p_repeat = p_repeat

    @classmethod
    def cannot_serve(cls, request: GenerationRequest) -> str | None:
        return _needs_simulator(request)

    def _rng_seed(self, request: GenerationRequest) -> int:
        return (self.seed * 1_000_003 + int(request.metadata.get("episode_seed", 0))) % (2**32)

    def _game_seed(self, request: GenerationRequest) -> tuple[int, Any]:
        from wfeval.benchmarks.recorded.baselines import own_seed

        return own_seed(self.seed, request)

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        n = len(actions_of(request))
        if _on_recorded_game(request):
            from wfeval.benchmarks.recorded.baselines import continue_game, own_actions

            return continue_game(request, own_actions(self._game_seed(request), n, self.p_repeat), self._sims())
        video, _ = world.rollout(_world_state(request),
                                 world.sample_actions(self._rng_seed(request), n, p_repeat=self.p_repeat))
        return video

    def start(self, request: GenerationRequest) -> Any:
        if _on_recorded_game(request):
            from wfeval.benchmarks.recorded.baselines import start_game

            return SourceState(start_game(request), extra=self._game_seed(request))
        return SimState(_world_state(request), extra=self._rng_seed(request))

    def _step_other(self, state: SourceState, actions: Sequence[int]) -> StepOutput:
        from wfeval.benchmarks.recorded.baselines import own_actions, step_game

        end = state.t + len(actions)  # its own actions: a prefix-stable sequence
        own = own_actions(state.extra, end, self.p_repeat)[state.t:]
        frames, inner = step_game(state.inner, own, self._sims())
        return StepOutput(SourceState(inner, end, state.extra), frames, reward=list(inner.rewards))  # its game's

    def _actions(self, state: SimState, actions: Sequence[int]) -> tuple[list[int], SimState]:
        # its own actions, a prefix-stable sequence: the same as generate's for the same step count
        end = state.t + len(actions)
        own = world.sample_actions(state.extra, end, p_repeat=self.p_repeat)[state.t:end]
        return list(own), replace(state, t=end)


def _sample_rng(seed: int, sample_id: str) -> np.random.Generator:
    """A generator seeded from (model seed, sample id): the same noise for a sample in any batch."""
    digest = hashlib.sha256(f"{seed}/{sample_id}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _draw_rng(seed: int, request: GenerationRequest) -> np.random.Generator:
    """The noise generator of one draw of a request: draw 0 (a single-sample request) is seeded from
    (model seed, sample id) as it always was; draw i > 0 adds the draw to the key."""
    draw = draw_of(request)
    return _sample_rng(seed, request.sample_id if not draw else f"{request.sample_id}/draw{draw}")


class NoisyModel(OracleModel):
    """The oracle plus i.i.d. Gaussian noise of ``sigma`` uint8 levels on every pixel of every frame,
    seeded per sample from (``seed``, sample id), rounded and clipped to [0, 255]. Stochastic: each
    draw of a multi-sample request (``generation["draw"]``) has noise of its own."""

    name = "noisy"
    stochastic = True

    def __init__(self, name: str | None = None, sigma: float = 10.0, seed: int = 0):
        super().__init__(name)
        if not sigma >= 0:
            raise ValueError(f"model.sigma must be >= 0, got {sigma}")
        self.sigma, self.seed = float(sigma), int(seed)

    version = "1.1"  # 1.1: frame 0 is the given initial frame (no noise), as for every model

    def _noise(self, frames: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        noisy = frames.astype(np.float64) + rng.normal(0.0, self.sigma, frames.shape)
        return np.clip(np.rint(noisy), 0, 255).astype(np.uint8)

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        video = super().generate_one(request)
        return np.concatenate([video[:1], self._noise(video[1:], _draw_rng(self.seed, request))])

    def start(self, request: GenerationRequest) -> Any:
        return replace(super().start(request), extra=_draw_rng(self.seed, request).bit_generator.state)

    def _post(self, state: Any, frames: np.ndarray) -> tuple[np.ndarray, Any]:
        # the noise stream continues where the last step left it: the same noise as one long draw
        rng = np.random.Generator(np.random.PCG64())
        rng.bit_generator.state = state.extra
        noisy = self._noise(frames, rng)
        return noisy, replace(state, extra=rng.bit_generator.state)


class BlurModel(OracleModel):
    """The oracle with every frame blurred by a ``kernel_size``×``kernel_size`` Gaussian of std ``sigma``."""

    name = "blur"

    def __init__(self, name: str | None = None, kernel_size: int = 5, sigma: float = 1.0):
        super().__init__(name)
        if kernel_size < 1 or kernel_size % 2 == 0:
            raise ValueError(f"model.kernel_size must be an odd integer >= 1, got {kernel_size}")
        if not sigma > 0:
            raise ValueError(f"model.sigma must be > 0, got {sigma}")
        self.kernel_size, self.sigma = int(kernel_size), float(sigma)

    version = "1.1"  # 1.1: frame 0 is the given initial frame (not blurred), as for every model

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        video = super().generate_one(request)
        return np.concatenate([video[:1], gaussian_blur(video[1:], self.kernel_size, self.sigma)])

    def _post(self, state: Any, frames: np.ndarray) -> tuple[np.ndarray, Any]:
        return (gaussian_blur(frames, self.kernel_size, self.sigma) if len(frames) else frames), state


class LaggedModel(_GameSimulators, _Baseline):
    """The true simulator with every action applied ``lag`` steps late (``noop`` first; on a
    recorded game the action named noop, else action 0)."""

    name = "lagged"

    def __init__(self, name: str | None = None, lag: int = 1):
        super().__init__(name)
        if lag < 0:
            raise ValueError(f"model.lag must be >= 0, got {lag}")
        self.lag = int(lag)

    @classmethod
    def cannot_serve(cls, request: GenerationRequest) -> str | None:
        return _needs_simulator(request)

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        actions = actions_of(request)
        if _on_recorded_game(request):
            from wfeval.benchmarks.recorded.baselines import continue_game

            late = ((_noop_of(request),) * self.lag + tuple(plain_action(a) for a in actions))[: len(actions)]
            return continue_game(request, list(late), self._sims())
        noop = world.ACTIONS.index("noop")
        late = ((noop,) * self.lag + actions)[: len(actions)]
        video, _ = world.rollout(_world_state(request), late)
        return video

    def start(self, request: GenerationRequest) -> Any:
        if _on_recorded_game(request):
            from wfeval.benchmarks.recorded.baselines import start_game

            return SourceState(start_game(request), extra=(_noop_of(request),) * self.lag)
        return SimState(_world_state(request), pending=(world.ACTIONS.index("noop"),) * self.lag)

    def _step_other(self, state: SourceState, actions: Sequence[int]) -> StepOutput:
        from wfeval.benchmarks.recorded.baselines import step_game

        queue = tuple(state.extra) + tuple(plain_action(a) for a in actions)
        n = len(actions)
        frames, inner = step_game(state.inner, list(queue[:n]), self._sims())
        return StepOutput(SourceState(inner, state.t + n, queue[n:]), frames, reward=list(inner.rewards))  # its game's

    def _actions(self, state: SimState, actions: Sequence[int]) -> tuple[list[int], SimState]:
        queue = state.pending + tuple(int(a) for a in actions)
        n = len(actions)
        return list(queue[:n]), replace(state, t=state.t + n, pending=queue[n:])
