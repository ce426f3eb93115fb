"""Atari 2600 games through the Arcade Learning Environment (``ale-py``, ROMs included).

The simulator drives ``ale_py.ALEInterface`` the way gymnasium's ``ALE/<Game>-v5`` does
(``ale_py.env.AtariEnv``): the seed goes through ``numpy.random.SeedSequence`` to the ALE's
``random_seed`` before the ROM is loaded, an agent step repeats its action ``frameskip`` times
and sums the rewards, and the frame is the RGB screen after the last repeat (no max-pooling).
With ``repeat_action_probability=0`` (no sticky actions) a trajectory is a pure function of the
seed and the actions. ``tests/benchmarks/test_atari_recording.py`` checks the frames against
gymnasium's environment.

``snapshot()`` is the ALE's own saved state (``cloneState(include_rng=True)``, zlib, base64);
``restore`` continues the game exactly from it.
"""

from __future__ import annotations

import base64
import difflib
import functools
import hashlib
import zlib
from importlib import metadata as importlib_metadata
from typing import Any, Mapping

import numpy as np

from wfeval.benchmarks.recorded.simulator import Step, require
from wfeval.config.errors import ConfigError

DEFAULTS = {
    "game": "pong",
    "frameskip": 4,
    "repeat_action_probability": 0.0,
    "full_action_space": False,
    "mode": None,
    "difficulty": None,
    "max_num_frames_per_episode": 108000,
}
PACKAGES = ("ale-py", "numpy")


def _ale() -> Any:
    require("ale_py", "ale-py", "The atari benchmark family")
    import ale_py

    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
    return ale_py


def check_config(env: Mapping[str, Any]) -> dict[str, Any]:
    """The full pinned config (defaults filled in); unknown games and bad values are refused."""
    unknown = sorted(set(env) - set(DEFAULTS))
    if unknown:
        raise ConfigError(f"benchmark.env: unknown key(s) {unknown}; known: {', '.join(DEFAULTS)}")
    config = {**DEFAULTS, **dict(env)}
    games = _ale().roms.get_all_rom_ids()
    if config["game"] not in games:
        close = difflib.get_close_matches(str(config["game"]), games, n=3)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        raise ConfigError(f"benchmark.env.game: {config['game']!r} is not a ROM shipped with ale-py.{hint}")
    if not isinstance(config["frameskip"], int) or config["frameskip"] < 1:
        raise ConfigError(f"benchmark.env.frameskip must be an integer >= 1, got {config['frameskip']!r}")
    if not 0.0 <= float(config["repeat_action_probability"]) <= 1.0:
        raise ConfigError("benchmark.env.repeat_action_probability must be in [0, 1]")
    return config


@functools.lru_cache(maxsize=None)
def rom_identity(game: str) -> dict[str, Any]:
    path = _ale().roms.get_rom_path(game)
    data = open(path, "rb").read()
    return {"id": game, "file": str(path).rsplit("/", 1)[-1], "bytes": len(data),
            "md5": hashlib.md5(data).hexdigest(), "sha256": hashlib.sha256(data).hexdigest()}


def identity(config: Mapping[str, Any]) -> dict[str, Any]:
    """Package versions and the ROM: with the config, what the frames depend on."""
    return {"packages": {p: importlib_metadata.version(p) for p in PACKAGES}, "rom": rom_identity(config["game"])}


def action_names(config: Mapping[str, Any]) -> tuple[str, ...]:
    c = {**DEFAULTS, **dict(config)}
    return _action_names(c["game"], bool(c["full_action_space"]), c["mode"], c["difficulty"])


@functools.lru_cache(maxsize=None)
def _action_names(game: str, full_action_space: bool, mode: Any, difficulty: Any) -> tuple[str, ...]:
    config = {**DEFAULTS, "game": game, "full_action_space": full_action_space, "mode": mode, "difficulty": difficulty}
    return AtariSimulator(config).action_names


def make(config: Mapping[str, Any]) -> "AtariSimulator":
    return AtariSimulator(config)


class AtariSimulator:
    def __init__(self, config: Mapping[str, Any]):
        ale_py = _ale()
        self.config = {**DEFAULTS, **dict(config)}
        self._ale = ale_py.ALEInterface()
        self._ale.setFloat("repeat_action_probability", float(self.config["repeat_action_probability"]))
        self._ale.setInt("max_num_frames_per_episode", int(self.config["max_num_frames_per_episode"]))
        self._load(0)
        actions = self._ale.getLegalActionSet() if self.config["full_action_space"] else self._ale.getMinimalActionSet()
        self._actions = list(actions)
        self.action_names = tuple(a.name for a in actions)
        self._ended = False

    def _load(self, seed: int) -> None:
        ale_py = _ale()
        ale_seed = np.random.SeedSequence(seed).generate_state(n_words=2)[1]  # as AtariEnv.seed_game
        self._ale.setInt("random_seed", int(np.array(ale_seed, dtype=np.uint32).astype(np.int32)))
        self._ale.loadROM(ale_py.roms.get_rom_path(self.config["game"]))
        if self.config["mode"] is not None:
            self._ale.setMode(int(self.config["mode"]))
        if self.config["difficulty"] is not None:
            self._ale.setDifficulty(int(self.config["difficulty"]))

    def reset(self, seed: int) -> np.ndarray:
        self._load(seed)
        self._ale.reset_game()
        self._ended = False
        return self._ale.getScreenRGB()

    def step(self, action: int) -> Step:
        if self._ended:  # the previous step ended the episode: start the next one first
            self._ale.reset_game()
        ale_action = self._actions[int(action)]
        reward = 0.0
        for _ in range(int(self.config["frameskip"])):
            reward += self._ale.act(ale_action)
        terminated = bool(self._ale.game_over(with_truncation=False))
        truncated = bool(self._ale.game_truncated())
        self._ended = terminated or truncated
        return Step(self._ale.getScreenRGB(), float(reward), terminated, truncated, {"lives": int(self._ale.lives())})

    def frame(self) -> np.ndarray:
        return self._ale.getScreenRGB()

    def state(self) -> list[float]:
        """The AtariARI variables of the game, read from the RAM now (wfeval/benchmarks/atari/ram.py)."""
        from wfeval.benchmarks.atari import ram

        return ram.read(self.config["game"], self._ale.getRAM())

    def snapshot(self) -> dict[str, Any]:
        state = self._ale.cloneState(include_rng=True).serialize()
        return {"ale_state": base64.b64encode(zlib.compress(state, 9)).decode("ascii"), "ended": self._ended}

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        ale_py = _ale()
        state = zlib.decompress(base64.b64decode(snapshot["ale_state"]))
        self._ale.restoreState(ale_py.ALEState(state))
        self._ended = bool(snapshot["ended"])
