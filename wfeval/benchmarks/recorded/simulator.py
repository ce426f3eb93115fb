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

import importlib
import importlib.util
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

from wfeval.config.errors import ConfigError

INSTALL_HINT = "pip install 'wfeval[games]'"
_FAMILY = re.compile(r"[a-z][a-z0-9_]*")


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
    """Refuse, with the install command, a family whose package is not installed."""
    if importlib.util.find_spec(module) is None:
        raise ConfigError(f"{what} needs the '{package}' package, which is not installed: {INSTALL_HINT}")


def family_module(family: str) -> Any:
    """``wfeval.benchmarks.<family>.simulator`` (only wfeval's own families are importable here)."""
    if not isinstance(family, str) or not _FAMILY.fullmatch(family):
        raise ValueError(f"simulator family {family!r} is not a family name")
    try:
        return importlib.import_module(f"wfeval.benchmarks.{family}.simulator")
    except ModuleNotFoundError as exc:
        raise ValueError(f"no simulator for family {family!r} ({exc}); {INSTALL_HINT} if it is a game") from exc
