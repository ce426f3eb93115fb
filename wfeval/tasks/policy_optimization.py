"""``task=policy_optimization``: a policy trained inside the world model, deployed in the true simulator
(``protocol=policy_optimization``; decision-ladder rung L7, docs/protocols.md).

A family serves it by offering :class:`PolicyOptimizationFamily` in its own package (gridworld,
Atari Pong, Push-T): what the learner observes of a frame, the task's reward read off frames, the true
simulator at the sample's start and at held-out starts, and the episode settings. A benchmark without
it is refused before any generation (:data:`NEED`). What this module owns beside that is the task's
own data, ``task.data.optimization`` (:func:`settings`): every key null takes the family's default.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Mapping, Protocol, Sequence, runtime_checkable

from wfeval.api import GenerationRequest
from wfeval.config.errors import ConfigError
from wfeval.tasks.family import FamilyNeed


@runtime_checkable
class PolicyOptimizationFamily(Protocol):
    """What a family offers for ``task=policy_optimization``:

    - ``optimization_observer(request)``: ``observe(previous, frame) -> key``, the learner's compact
      observation of a frame after the previous one (None at a start): hashable; gridworld: the agent's
      cell as the locator finds it; Pong: where the ball is against the player's paddle and where it is
      going; read the same way off the model's frames and the simulator's;
    - ``optimization_reward(request, previous, frame)``: ``(reward, done)`` read off two consecutive
      frames: the task's reward function, applied to the model's predicted frames inside the model and
      to the real frames in the simulator (the simulator's returns are the truth);
    - ``optimization_environment(request)``: the true simulator of the sample: ``reset(episode, seed,
      warmup)`` returns the start frame (episode 0: the sample's own start; a later one: a held-out real
      start, reached by ``warmup`` random steps of the simulator drawn from ``numpy.random.default_rng(seed)``),
      ``step(action)`` the next frame (the action a world action: ``optimization_command``'s, when offered);
    - optionally ``optimization_command(request)``: ``command(frame, action) -> world action``, the learner's
      action id (of ``n_actions``) made the world's from the frame the agent sees (pusht: a move relative to
      the agent it locates, a target position); without it the id is the world's action;
    - optionally ``optimization_refusal()``: why this benchmark of the family cannot serve the task (a
      family that serves some of its games: Atari serves Pong), None when it can;
    - ``optimization_defaults(request)``: ``max_steps``, ``discount``, ``max_return`` (the largest
      return an episode can have), ``n_actions`` and the family's budget defaults (``train_episodes``,
      ``eval_episodes``, ``warmup``);
    - ``simulate(request, actions)``: the true video of given actions (the reference of the trained
      policy's rollout inside the model, so the reference metrics apply);
    - optionally ``objective_from_frames`` (a bool, default False): True when ``optimization_reward`` is
      the objective even for a model that reports a reward of its own (as for ``task=policy_evaluation``:
      :func:`wfeval.tasks.family.objective_from_frames`)."""

    def optimization_observer(self, request: GenerationRequest) -> Callable[[Any, Any], Hashable]: ...

    def optimization_reward(self, request: GenerationRequest, previous: Any, frame: Any) -> tuple[float, bool]: ...

    def optimization_environment(self, request: GenerationRequest) -> Any: ...

    def optimization_defaults(self, request: GenerationRequest) -> Mapping[str, Any]: ...

    def simulate(self, request: GenerationRequest, actions: Sequence[Any]) -> tuple[Any, Mapping[str, Any]]: ...


#: what ``protocol=policy_optimization`` needs of a benchmark
NEED = FamilyNeed(
    task="policy_optimization", interfaces=(PolicyOptimizationFamily,),
    refusal="protocol=policy_optimization: benchmark {name!r} declares no observation, reward and true "
            "simulator for a learner (wfeval.tasks.policy_optimization.PolicyOptimizationFamily); "
            "task=policy_optimization runs on gridworld, atari_pong and pusht")

#: ``task.data.optimization``: the learner's budget and options (null: the family's default)
KEYS = {"train_episodes": None, "eval_episodes": None, "warmup": None, "seeds": 2, "epsilon": 0.2,
        "alpha": 0.5, "seed": 0}
FAMILY_KEYS = ("max_steps", "discount", "max_return", "n_actions", "train_episodes", "eval_episodes", "warmup")


def settings(task_data: Mapping[str, Any] | None, family: Mapping[str, Any]) -> dict[str, Any]:
    """``task.data.optimization`` over the family's defaults, checked (ConfigError naming the key)."""
    given = dict((task_data or {}).get("optimization") or {})
    unknown = sorted(set(given) - set(KEYS))
    if unknown:
        raise ConfigError(f"task.data.optimization: unknown key(s) {unknown}; known: {', '.join(KEYS)}")
    missing = [k for k in FAMILY_KEYS if k not in family]
    if missing:
        raise ConfigError(f"task=policy_optimization: the family's optimization_defaults lack {missing}")
    out = {**{k: family[k] for k in FAMILY_KEYS}, **{k: v for k, v in KEYS.items() if v is not None}}
    out.update({k: v for k, v in given.items() if v is not None})
    for key in ("train_episodes", "eval_episodes", "seeds", "max_steps", "n_actions"):
        if isinstance(out[key], bool) or not isinstance(out[key], int) or out[key] < 1:
            raise ConfigError(f"task.data.optimization.{key} must be an integer >= 1, got {out[key]!r}")
    if isinstance(out["warmup"], bool) or not isinstance(out["warmup"], int) or out["warmup"] < 0:
        raise ConfigError(f"task.data.optimization.warmup must be an integer >= 0, got {out['warmup']!r}")
    for key in ("epsilon", "alpha", "discount"):
        value = out[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
            raise ConfigError(f"task.data.optimization.{key} must be in [0, 1], got {value!r}")
        out[key] = float(value)
    if isinstance(out["seed"], bool) or not isinstance(out["seed"], int):
        raise ConfigError(f"task.data.optimization.seed must be an integer, got {out['seed']!r}")
    if not float(out["max_return"]) > 0:
        raise ConfigError(f"task=policy_optimization: the family's max_return must be > 0, got {out['max_return']!r}")
    return out
