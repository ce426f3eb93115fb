"""``task=probing``: how much of the exact state a latent world model's encoding holds
(``protocol=probing``; docs/latent-models.md).

A family serves it by declaring its per-frame state (:class:`ProbingFamily`, with
:class:`StateVariable` and :class:`ProbeEpisode`) in its own package (gridworld, orby, the Atari
games); a benchmark without it is refused before any generation (:data:`NEED`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence, runtime_checkable

from wfeval.api import GenerationRequest, WorldTaskConfig
from wfeval.tasks.family import FamilyNeed


@dataclass(frozen=True)
class StateVariable:
    """One per-frame state variable a family declares for ``task=probing``: ``continuous`` (scored by
    R²) or ``discrete`` (integer classes, scored by accuracy)."""

    name: str
    kind: str = "continuous"
    description: str = ""


@dataclass(frozen=True)
class ProbeEpisode:
    """One episode as probing reads it: ``frames`` T×H×W×3 uint8, the T−1 ``actions`` between them
    and the exact ``states`` T×V (one column per :class:`StateVariable`, in the declared order)."""

    frames: Any
    actions: Sequence[Any]
    states: Any


@runtime_checkable
class ProbingFamily(Protocol):
    """A family that knows its exact state per frame (``task=probing``; docs/latent-models.md):
    its variables, the episode of an evaluation request, and training episodes whose seeds are
    disjoint from every evaluation sample's."""

    def state_variables(self) -> tuple[StateVariable, ...]: ...

    def probe_episode(self, request: GenerationRequest) -> ProbeEpisode: ...

    def probe_training(self, count: int, num_frames: int) -> list[ProbeEpisode]: ...


def probe_frames(task: WorldTaskConfig, default: int) -> int:
    """Frames per episode: ``task.data.probing.num_frames`` under ``task=probing``, else the benchmark's."""
    probing = (task.data or {}).get("probing") or {}
    return int(probing.get("num_frames") or default)


#: what ``protocol=probing`` needs of a benchmark, and the measure its evidence rests on (the
#: observed probes; imagined ones need ``predict``, accuracy a discrete variable)
NEED = FamilyNeed(
    task="probing", interfaces=(ProbingFamily,), evidence=("probe_r2",),
    refusal="task=probing: benchmark {name!r} declares no state variables "
            "(task=probing runs on gridworld, orby, atari_pong, atari_breakout and atari_boxing)")
