"""Atari benchmarks (``benchmark=atari_pong``, ``atari_breakout``, ``atari_boxing``, ...): real
ALE frames recorded offline under a pinned environment, resolution and behaviour policy."""

from __future__ import annotations

from typing import Any, Mapping

from wfeval.benchmarks.atari import simulator
from wfeval.benchmarks.recorded.adapter import RecordedBenchmark
from wfeval.config.errors import ConfigError


class AtariBenchmark(RecordedBenchmark):
    """See :class:`~wfeval.benchmarks.recorded.adapter.RecordedBenchmark` for the sample layout.

    ``env`` pins the game and the ALE options (frameskip, sticky actions, action space, mode,
    difficulty); ``rom_md5``, when set, refuses any other ROM dump than the one the benchmark
    was recorded from.
    """

    family = "atari"
    simulator_module = simulator
    option_schemas = {"env": simulator.DEFAULTS}  # benchmark.env: the ALE options, with their defaults

    def __init__(self, env: Mapping[str, Any] | None = None, rom_md5: str | None = None, **options: Any):
        config = simulator.check_config(env or {})
        rom = simulator.rom_identity(config["game"])
        if rom_md5 and rom["md5"] != rom_md5:
            raise ConfigError(f"benchmark.rom_md5: the installed {rom['file']} has md5 {rom['md5']}, the benchmark "
                              f"pins {rom_md5} (another ale-py ROM dump); its results would not be comparable. "
                              "Install the ale-py version the benchmark names, or set benchmark.rom_md5=null")
        self.game = config["game"]
        super().__init__(env=config, **options)

    def sample_metadata(self) -> dict[str, Any]:
        return {"game": self.game}

    def state_variables(self) -> tuple:
        """task=probing: the AtariARI RAM variables of the game (wfeval/benchmarks/atari/ram.py)."""
        from wfeval.benchmarks.atari import ram

        found = ram.variables(self.game)
        if not found:
            raise ConfigError(f"task=probing: game {self.game!r} has no RAM annotation here "
                              f"(annotated: {', '.join(ram.ADDRESSES)})")
        return found

    # -- task=policy_optimization (wfeval.tasks.policy_optimization.PolicyOptimizationFamily): Pong ----------

    def optimization_refusal(self) -> str | None:
        if self.game == "pong":
            return None
        return (f"plays {self.game!r}, which has no reward for a learner here (task=policy_optimization runs on "
                "gridworld, atari_pong and pusht)")

    def optimization_observer(self, request: Any) -> Any:
        from wfeval.benchmarks.atari import optimization

        return optimization.observe

    def optimization_reward(self, request: Any, previous: Any, frame: Any) -> tuple[float, bool]:
        from wfeval.benchmarks.atari import optimization

        return optimization.reward(previous, frame)

    def optimization_environment(self, request: Any) -> Any:
        from wfeval.benchmarks.atari import optimization
        from wfeval.benchmarks.recorded.adapter import initial_frame_of

        return optimization.Environment(request, self.simulator(), initial_frame_of(request))

    def optimization_defaults(self, request: Any) -> Mapping[str, Any]:
        from wfeval.benchmarks.atari import optimization

        return optimization.defaults(request, len(self.action_names))
