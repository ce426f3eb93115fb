"""Control metrics for action-conditioned models: action_following and agent_position_error.

Both run :func:`wfeval.functional.control.action_following` on ``generated_video`` with the
request's ``controls["actions"]`` (ids into ``controls["action_names"]``, or names) and, when
present, the true track ``metadata["agent_positions"]`` (``T×2`` top-left pixels ``(y, x)``).

The agent is found by ``locator`` (default: :class:`~wfeval.functional.control.ColorLocator` of
the built-in world's agent) or the moves are read by ``inverse_dynamics``; each may be a
callable, a ``{_target_: ...}`` mapping (Hydra builds it from the metric's config) or an import
path ``pkg.module:name`` (a class is instantiated without arguments). That is how a benchmark
family supplies its own locator, or an inverse dynamics model for real footage. Both are typed
:data:`~wfeval.config.code.ImportPath`: an import path is code, checked by the trust rule before
it is imported (docs/trust.md).
"""

from __future__ import annotations

from typing import Any, Sequence

import wfeval.functional.control as F
from wfeval.api import GenerationRequest, GenerationResult, MetricResult, has_continuous_actions
from wfeval.config.code import ImportPath, resolve
from wfeval.metrics.base import DescribedMetric
from wfeval.metrics.outcomes import scored, skipped
from wfeval.storage.artifacts import read_array


def resolve_callable(value: Any, key: str) -> Any:
    """A callable from a callable, a ``_target_`` mapping or an import path (through the door,
    :func:`wfeval.config.code.resolve`: trust checked before anything is imported); ``None`` stays ``None``."""
    return resolve(value, key)


class ActionFollowing(DescribedMetric):
    """Per-step action accuracy in [0, 1]: the move implied by the generated video equals the
    commanded one (a move the true track shows blocked counts as noop; a step where the agent
    is not found in either frame counts as wrong). Position errors go to the components."""

    name = "action_following"
    groups = ("control",)
    aliases = ("action_accuracy",)
    version = "1.0"
    higher_is_better = True
    family = "control"
    capability = "action_control"
    output_unit = "fraction of steps"
    display_name = "Action following"
    description = "Share of steps whose generated move matches the commanded action."
    variant = "colour locator + nearest-move classification; blocked = noop; not found = wrong"
    required_artifacts = ("generated_video",)
    value_key = "accuracy"
    bounds = (0.0, 1.0)

    def __init__(self, locator: ImportPath = None, inverse_dynamics: ImportPath = None, size: int = 8,
                 action_names: Sequence[str] | None = None, confidence: float = 0.95, seed: int = 0):
        super().__init__(confidence, seed)
        if size < 1:
            raise ValueError(f"metric.{self.name}.size must be >= 1, got {size}")
        self.size = int(size)
        self.locator = resolve_callable(locator, f"metric.{self.name}.locator") or F.ColorLocator(size=self.size)
        self.inverse_dynamics = resolve_callable(inverse_dynamics, f"metric.{self.name}.inverse_dynamics")
        self.action_names = tuple(action_names) if action_names else None

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        actions = request.controls.get("actions")
        if actions is None:
            return skipped(request.sample_id, self.name, "no actions in the request (controls['actions'])")
        if has_continuous_actions(request):
            return skipped(request.sample_id, self.name,
                           f"continuous actions: {self.name} classifies each step's move into one of the discrete "
                           "actions (controls['action_names']); it does not apply to action vectors",
                           category="continuous actions: not applicable")
        track = request.metadata.get("agent_positions")
        if track is None and self.value_key != "accuracy":
            return skipped(request.sample_id, self.name, "no true agent track (metadata['agent_positions'])")
        video = read_array(result.artifacts["generated_video"])
        if video.ndim != 4 or video.shape[0] != len(actions) + 1:
            need = len(actions) + 1
            return skipped(request.sample_id, self.name,
                           f"generated video shape {video.shape}: {len(actions)} actions need {need} frames")
        names = self.action_names or tuple(request.controls.get("action_names") or F.GRIDWORLD_ACTIONS)
        out = F.action_following(video, list(actions), track, locator=self.locator,
                                 inverse_dynamics=self.inverse_dynamics, action_names=names, size=self.size)
        components = {
            "accuracy": out.accuracy, "steps": out.steps, "steps_correct": out.steps_correct,
            "position_error_px": out.position_error_px, "position_error_found_px": out.position_error_found_px,
            "frames_not_found": out.frames_not_found, "expected": list(out.expected), "implied": list(out.implied),
            "per_frame_error_px": list(out.per_frame_error_px),
        }
        value = getattr(out, self.value_key)
        if value is None:
            return skipped(request.sample_id, self.name, f"{self.value_key} not measured (no located positions)")
        return scored(request.sample_id, self.name, float(value), components=components,
                      diagnostics={"variant": self.variant, "locator": type(self.locator).__name__,
                                   "inverse_dynamics": type(self.inverse_dynamics).__name__
                                   if self.inverse_dynamics else None})


class AgentPositionError(ActionFollowing):
    """Mean distance in pixels between the located and the true agent position per frame; a
    frame where the agent is not found counts as the frame diagonal (the largest error)."""

    name = "agent_position_error"
    groups = ("control",)
    aliases = ("position_error",)
    higher_is_better = False
    output_unit = "px"
    display_name = "Agent position error"
    description = "Mean distance between the located and the true agent position, in pixels."
    variant = "colour locator; euclidean px per frame; not found = frame diagonal"
    value_key = "position_error_px"
    bounds = (0.0, None)  # at most the frame diagonal, which depends on the sample
