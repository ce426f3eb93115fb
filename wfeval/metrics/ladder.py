"""The decision ladder: which rung (L0–L7) a measure is evidence for.

A metric class declares its rung (``rung = "L3"``, :class:`wfeval.metrics.base.BaseMetric`); the
built-in metrics written before the ladder get theirs from :data:`DEFAULT_RUNGS`, by id. A measure
that is evidence for no rung (timings: ``step_latency``, ``real_time_factor``) has none. The rungs
and the commands that measure each are explained in docs/decision-ladder.md.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

RUNGS: dict[str, str] = {
    "L0": "visual plausibility",
    "L1": "fidelity to the reference",
    "L2": "temporal consistency",
    "L3": "physical and state consistency",
    "L4": "counterfactual actions",
    "L5": "policy ranking",
    "L6": "planning success",
    "L7": "policy optimisation lift",
}
"""Rung id → what it shows, bottom to top."""

DEFAULT_RUNGS: dict[str, str] = {
    # L0: the artifact exists, decodes and looks like video of the domain
    "generated_rate": "L0", "artifact_count": "L0", "fvd": "L0",
    # L1: the frames match the reference (dynamic-pixel variants and the break-even horizon too)
    "psnr": "L1", "ssim": "L1", "lpips": "L1", "mse": "L1", "mae": "L1",
    "dynamic_psnr": "L1", "dynamic_ssim": "L1", "break_even_horizon": "L1",
    # L2: over time (flicker, motion, frozen frames)
    "flicker": "L2", "motion_magnitude": "L2", "motion_error": "L2", "frame_repeat_rate": "L2",
    # L3: the state shown is the simulator's (positions, poses, probes, what is seen again)
    "action_following": "L3", "agent_position_error": "L3", "pose_error": "L3", "probe_r2": "L3",
    "probe_accuracy": "L3", "imagined_probe_r2": "L3", "revisit_error": "L3", "reversibility_error": "L3",
    # L4: an intervention on the actions changes the prediction as it changes the world
    "action_sensitivity": "L4", "idm_accuracy": "L4",
    # L5: the model orders policies as the simulator does
    "policy_rank_correlation": "L5", "return_error": "L5",
    # L6: plans made in the model succeed in the simulator
    "goal_success": "L6", "spl": "L6", "steps_to_goal": "L6",
}
"""Built-in metric id → rung, for the metrics that do not declare one on their class."""


def check_rung(rung: Any) -> str | None:
    """``rung`` as a rung id (None for none); anything else is refused."""
    if rung is None or rung == "":
        return None
    if rung not in RUNGS:
        raise ValueError(f"rung {rung!r} is not one of {', '.join(RUNGS)}")
    return str(rung)


def rung_of(measurement: str, metric: Any = None) -> str | None:
    """The rung of ``measurement`` (an id, with or without its ``<benchmark>.`` prefix): the one
    its metric class declares, else :data:`DEFAULT_RUNGS`'s for the measurement id or the
    metric's ``name`` (``imagined_probe_r2_k4`` is ``imagined_probe_r2``'s); None when neither
    says."""
    declared = check_rung(getattr(metric, "rung", None))
    if declared is not None:
        return declared
    for name in (measurement, measurement.rsplit(".", 1)[-1], getattr(metric, "name", None)):
        if isinstance(name, str) and name in DEFAULT_RUNGS:
            return DEFAULT_RUNGS[name]
    return None


def rung_index(rung: str | None) -> int:
    """0 … 7 for L0 … L7; -1 for no rung."""
    return list(RUNGS).index(rung) if rung in RUNGS else -1


def label(rung: str) -> str:
    """``L3 physical and state consistency``."""
    return f"{rung} {RUNGS[rung]}"


def highest(rungs: Mapping[str, str | None], valid: Iterable[str] | None = None) -> tuple[str | None, list[str]]:
    """The highest rung among ``rungs`` (measurement → rung) and the measurements that are its
    evidence, in their order; only those in ``valid`` when given (a measurement without a value
    is no evidence). ``(None, [])`` when no measurement has a rung."""
    keep = set(valid) if valid is not None else None
    held = {m: r for m, r in rungs.items() if r in RUNGS and (keep is None or m in keep)}
    if not held:
        return None, []
    top = max(held.values(), key=rung_index)
    return top, [m for m, r in held.items() if r == top]
