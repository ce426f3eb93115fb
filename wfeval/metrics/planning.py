"""Planning metrics (``task=goal_reaching``): did acting on the model's imagination reach the goal?

They read the episode summary the planning driver records in the result
(``result.metadata["planning"]``: ``success``, ``steps``, ``optimal_steps``, ``max_steps``).

- ``goal_success``: 1 when the agent reached the goal cell within ``max_steps`` real steps, else
  0 (ratio, Wilson interval);
- ``steps_to_goal``: real steps taken, over the successful episodes only (a failure is skipped
  with the reason: its count is in ``goal_success``);
- ``spl``: success weighted by path length, ``success × optimal / max(optimal, steps)``
  (Anderson et al. 2018), mean with a normal interval.
"""

from __future__ import annotations

from typing import Any, Mapping

from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.outcomes import scored, skipped
from wfeval.metrics.registry import DescribedMetric

NO_EPISODE = "no planning episode in the result (run with task=goal_reaching)"


def episode(result: GenerationResult) -> dict[str, Any] | None:
    info = result.metadata.get("planning") if result.status == "ok" else None
    return dict(info) if isinstance(info, Mapping) and "success" in info else None


def _skip(request: GenerationRequest, result: GenerationResult, name: str) -> MetricResult:
    why = NO_EPISODE if result.status == "ok" else f"generation {result.status}: {result.error or ''}".strip()
    return skipped(request.sample_id, name, why)


class GoalSuccess(DescribedMetric):
    name = "goal_success"
    groups = ("planning",)
    aliases = ("success_rate",)
    version = "1.0"
    higher_is_better = True
    aggregator = "ratio"
    statistics = ("ratio",)
    family = "planning"
    capability = "planning"
    output_unit = "fraction of episodes"
    display_name = "Goal success"
    description = "Share of episodes whose agent reached the goal in the true simulator within max_steps."
    variant = "agent cell == goal cell at any real step <= max_steps"
    bounds = (0.0, 1.0)

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        info = episode(result)
        if info is None:
            return _skip(request, result, self.name)
        ok = bool(info["success"])
        return scored(request.sample_id, self.name, 1 if ok else 0, passed=ok,
                      components={k: info.get(k) for k in ("steps", "optimal_steps", "max_steps", "final_distance")})


class StepsToGoal(DescribedMetric):
    name = "steps_to_goal"
    groups = ("planning",)
    version = "1.0"
    higher_is_better = False
    family = "planning"
    capability = "planning"
    output_unit = "real steps"
    display_name = "Steps to goal"
    description = "Real steps the planner took to reach the goal, over successful episodes."
    variant = "successful episodes only; failures skipped (counted by goal_success)"
    statistics = ("mean", "median", "min", "max")
    bounds = (0.0, None)  # at most the task's max_steps, which depends on the sample

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        info = episode(result)
        if info is None:
            return _skip(request, result, self.name)
        if not info["success"]:
            return skipped(request.sample_id, self.name, "goal not reached")
        return scored(request.sample_id, self.name, int(info["steps"]),
                      components={"optimal_steps": info.get("optimal_steps")})


class SPL(DescribedMetric):
    name = "spl"
    groups = ("planning",)
    aliases = ("success_weighted_path_length",)
    version = "1.0"
    higher_is_better = True
    family = "planning"
    capability = "planning"
    output_unit = "fraction"
    display_name = "Success weighted by path length"
    description = "success × optimal steps / max(optimal steps, steps taken), per episode."
    variant = "Anderson et al. 2018; optimal = shortest path with walls"
    bounds = (0.0, 1.0)

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        info = episode(result)
        if info is None:
            return _skip(request, result, self.name)
        optimal, steps = int(info["optimal_steps"]), int(info["steps"])
        value = float(optimal / max(optimal, steps, 1)) if info["success"] else 0.0
        return scored(request.sample_id, self.name, value, components={"steps": steps, "optimal_steps": optimal})
