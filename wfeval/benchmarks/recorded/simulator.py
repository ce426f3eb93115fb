"""What a simulator-backed family provides: a deterministic, restorable game.

A family module ``wfeval.benchmarks.<family>.simulator`` exposes ``make(config) -> Simulator``
(``config`` is the JSON-able environment config the benchmark pins) and ``identity(config)``
(package versions, ROM identity: everything the recorded frames depend on besides the config).
The simulator:

- ``reset(seed)`` starts a trajectory and returns its first frame (H×W×3 uint8);
- ``step(action)`` applies one agent action (an index into ``action_names``) and returns a
  :class:`Step`; after a step that ended the episode the next ``step`` first starts a new episode
  (deterministically), so a trajectory is one unbroken stream of frames;
- ``snapshot()`` returns JSON-able data from which ``restore`` continues exactly as the original
  would: the saved emulator state (Atari) or the seed plus the actions so far (Crafter).

Heavy imports (ale_py, crafter) happen only inside the family modules, when a simulator is made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

from wfeval.config.errors import ConfigError
from wfeval.config.extras import install_command, install_hint, not_importable

#: how to install the game families (atari, crafter): from the one table of extras
INSTALL_HINT = install_command("games")


@dataclass(frozen=True)
class Step:
    frame: Any  # H×W×3 uint8
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    info: Mapping[str, Any] = field(default_factory=dict)


class Simulator(Protocol):
    action_names: tuple[str, ...]

    def reset(self, seed: int) -> Any: ...

    def step(self, action: int) -> Step: ...

    def snapshot(self) -> dict[str, Any]: ...

    def restore(self, snapshot: Mapping[str, Any]) -> None: ...


def require(module: str, package: str, what: str) -> None:
    """Refuse, with the install command of the extra that installs ``package`` (the one table of
    extras, :mod:`wfeval.config.extras`), a family or model whose package is not installed."""
    if not_importable([module]):
        raise ConfigError(f"{what} needs the '{package}' package, which is not installed: {install_hint(package)}")


#: family -> its simulator module, registered by the family's benchmark class (``simulator_module``)
_SIMULATORS: dict[str, Any] = {}


def register_simulator(family: str, module: Any) -> None:
    """Called for each benchmark class that names a family and its simulator module."""
    _SIMULATORS.setdefault(family, module)


def simulator_module(family: str) -> Any:
    """The simulator module of ``family``: the one its benchmark class names (``simulator_module``). A
    process that has not imported that class finds it through the benchmark registry: the classes of
    the benchmark options (``conf/benchmark/*.yaml``, installed plugins' ``wfeval.benchmarks`` entry
    points), imported in turn until one records the family; a class that cannot import is passed over."""
    if family in _SIMULATORS:
        return _SIMULATORS[family]
    from wfeval.config.code import import_target
    from wfeval.config.plugins import benchmark_targets

    for target in benchmark_targets():
        try:
            import_target(target)
        except Exception:  # noqa: BLE001 - a family whose package is not installed, a broken plugin
            continue
        if family in _SIMULATORS:
            return _SIMULATORS[family]
    raise ValueError(f"no simulator for family {family!r} (no installed benchmark records it); "
                     f"{INSTALL_HINT} if it is a game")
