"""Crafter (Hafner 2021) worlds through the ``crafter`` package, made deterministic.

crafter 1.8.3 is not reproducible across processes: each world chunk keeps its creatures in a
``set``, which iterates in memory-address order, and that order decides which creature the
balancing step despawns (``Env._balance_object``). Two processes with the same seed and actions
drift apart after a few dozen steps. The simulator swaps the world's class for a subclass whose
chunks are insertion-ordered sets; nothing else of the game changes (same world generation,
dynamics and renderer), and trajectories become a pure function of seed and actions.

``snapshot()`` is the seed plus the actions since ``reset``; ``restore`` replays them. World
generation (pure-Python simplex noise, about 1.5 s per episode) is the expensive part, so the
state right after each reset is kept in memory (bounded) and copied instead of regenerated (a new
``Env``, 50 ms, is made only on a miss); so is the state a restore reaches (a counterfactual or a
policy's episode restores the same snapshot again and again), copied instead of replayed.
"""

from __future__ import annotations

import collections
import copy
import functools
from importlib import metadata as importlib_metadata
from typing import Any, Mapping

import numpy as np

from wfeval.benchmarks.recorded.simulator import Step, require
from wfeval.config.errors import ConfigError
from wfeval.utils.hashing import canonical_json

DEFAULTS = {"area": [64, 64], "view": [9, 9], "size": [64, 64], "length": 10000, "reward": True}
PACKAGES = ("crafter", "numpy", "pillow", "opensimplex", "imageio")
_RESET_CACHE: "collections.OrderedDict[str, Any]" = collections.OrderedDict()
_RESET_CACHE_SIZE = 32
_RESTORE_CACHE: "collections.OrderedDict[tuple[str, int, tuple[int, ...]], Any]" = collections.OrderedDict()
_RESTORE_CACHE_SIZE = 32


def _crafter() -> Any:
    require("crafter", "crafter", "The crafter benchmark family")
    import crafter

    return crafter


class _OrderedSet(dict):
    """The part of ``set`` a crafter chunk uses, iterating in insertion order."""

    def add(self, item: Any) -> None:
        self[item] = None

    def remove(self, item: Any) -> None:
        del self[item]


@functools.lru_cache(maxsize=None)
def _ordered_world_class() -> type:
    from crafter import engine

    class OrderedWorld(engine.World):
        def reset(self, seed: Any = None) -> None:
            super().reset(seed)
            self._chunks = collections.defaultdict(_OrderedSet)

    OrderedWorld.__qualname__ = OrderedWorld.__name__ = "OrderedWorld"
    return OrderedWorld


def check_config(env: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(env) - set(DEFAULTS))
    if unknown:
        raise ConfigError(f"benchmark.env: unknown key(s) {unknown}; known: {', '.join(DEFAULTS)}")
    config = {**DEFAULTS, **dict(env)}
    for key in ("area", "view", "size"):
        value = config[key]
        if len(value) != 2 or not all(isinstance(n, int) and n > 0 for n in value):
            raise ConfigError(f"benchmark.env.{key} must be two positive integers, got {value!r}")
        config[key] = [int(n) for n in value]
    _crafter()
    return config


def identity(config: Mapping[str, Any]) -> dict[str, Any]:
    return {"packages": {p: importlib_metadata.version(p) for p in PACKAGES}}


def action_names(config: Mapping[str, Any]) -> tuple[str, ...]:
    from crafter import constants

    return tuple(constants.actions)


def make(config: Mapping[str, Any]) -> "CrafterSimulator":
    return CrafterSimulator(config)


class CrafterSimulator:
    def __init__(self, config: Mapping[str, Any]):
        _crafter()
        self.config = {**DEFAULTS, **dict(config)}
        self.action_names = action_names(self.config)
        self._world_class = _ordered_world_class()
        self._env: Any = None
        self._textures: Any = None
        self._seed = 0
        self._actions: list[int] = []
        self._ended = False

    def _new_env(self, seed: int) -> Any:
        crafter = _crafter()
        c = self.config
        env = crafter.Env(area=tuple(c["area"]), view=tuple(c["view"]), size=tuple(c["size"]),
                          reward=bool(c["reward"]), length=int(c["length"]), seed=int(seed))
        env._world.__class__ = self._world_class
        if self._textures is None:
            self._textures = env._textures
        return env

    def _copy(self, env: Any) -> Any:
        """A deep copy sharing the (read-only) texture cache."""
        return copy.deepcopy(env, {id(env._textures): env._textures})

    def _reset_key(self, seed: int, episode: int) -> str:
        return canonical_json([self.config, int(seed), int(episode)])

    def _cached_reset(self, key: str) -> np.ndarray | None:
        """The episode of ``key`` (:meth:`_reset_key`) from the in-memory cache (a copy), else None."""
        if key not in _RESET_CACHE:
            return None
        _RESET_CACHE.move_to_end(key)
        saved, obs = _RESET_CACHE[key]
        self._env = self._copy(saved)
        return obs.copy()

    def _reset_env(self) -> np.ndarray:
        """``env.reset()`` (next episode), from the in-memory cache when this world was made before."""
        env = self._env
        key = self._reset_key(env._seed, env._episode + 1)
        cached = self._cached_reset(key)
        if cached is not None:
            return cached
        obs = env.reset()
        _RESET_CACHE[key] = (self._copy(env), obs.copy())
        while len(_RESET_CACHE) > _RESET_CACHE_SIZE:
            _RESET_CACHE.popitem(last=False)
        return obs

    def reset(self, seed: int) -> np.ndarray:
        self._seed, self._actions, self._ended = int(seed), [], False
        # a new Env's first episode: no Env made for a cached world
        cached = self._cached_reset(self._reset_key(seed, 1))
        if cached is not None:
            return cached
        self._env = self._new_env(seed)
        return self._reset_env()

    def step(self, action: int) -> Step:
        if self._ended:  # dead or out of time: the next episode starts first
            self._reset_env()
        obs, reward, done, info = self._env.step(int(action))
        self._actions.append(int(action))
        terminated = bool(done and info["discount"] == 0)
        self._ended = bool(done)
        return Step(obs, float(reward), terminated, bool(done) and not terminated,
                    {"health": int(info["inventory"]["health"])})

    def snapshot(self) -> dict[str, Any]:
        return {"seed": self._seed, "actions": list(self._actions)}

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        """Replay the snapshot's actions from its reset, or from a copy of the state an earlier restore of the
        longest prefix of them reached (a game played step by step restores one action more each time)."""
        seed, actions = int(snapshot["seed"]), tuple(int(a) for a in snapshot["actions"])
        world = (canonical_json(self.config), seed)
        # the longest cached prefix: one pass over the (at most 32) entries, not a key per prefix length
        prefix = max((key for key in _RESTORE_CACHE if key[:2] == world and actions[:len(key[2])] == key[2]),
                     key=lambda key: len(key[2]), default=None)
        if prefix is None:
            self.reset(seed)
        else:
            _RESTORE_CACHE.move_to_end(prefix)
            saved, ended = _RESTORE_CACHE[prefix]
            self._env, self._seed, self._actions, self._ended = self._copy(saved), seed, list(prefix[2]), ended
        done = len(prefix[2]) if prefix else 0
        for action in actions[done:]:
            self.step(action)
        if done == len(actions):
            return
        _RESTORE_CACHE[(*world, actions)] = (self._copy(self._env), self._ended)
        while len(_RESTORE_CACHE) > _RESTORE_CACHE_SIZE:
            _RESTORE_CACHE.popitem(last=False)
