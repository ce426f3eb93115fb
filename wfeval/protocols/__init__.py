"""Protocols beyond open loop (docs/protocols.md): step-by-step rollouts, closed-loop control
and planning, each a *driver* that wraps the model into an object with ``generate(requests)``.

:func:`build_driver` is the pipeline's one hook: it picks the driver from ``protocol.driver``
and refuses, before any generation, a combination that cannot run (a model without the step
interface, a benchmark without a simulator). :func:`protocol_identity` is what the generation
cache key adds, so outputs of different protocols or settings are never confused.
"""

from __future__ import annotations

from typing import Any, Mapping

from wfeval.config.errors import ConfigError
from wfeval.models.protocol import has_generate, has_step_interface

DRIVERS = ("open_loop", "autoregressive", "closed_loop", "planning")


def protocol_identity(plain_cfg: Mapping[str, Any]) -> dict[str, Any] | None:
    """What a protocol adds to the generation identity; None for open loop (keys unchanged)."""
    protocol = dict(plain_cfg.get("protocol") or {})
    driver = protocol.get("driver", "open_loop")
    if driver == "open_loop":
        return None
    keep = {"driver": driver, "name": protocol.get("name"), "chunk": protocol.get("chunk", 1)}
    if driver == "closed_loop":
        keep["policy"] = plain_cfg.get("policy")
    if driver == "planning":
        keep["planner"] = protocol.get("planner")
        keep["task_data"] = (plain_cfg.get("task") or {}).get("data")
    return keep


def protocol_record(plain_cfg: Mapping[str, Any]) -> dict[str, Any]:
    """What manifest.json and results.json say about the protocol (leaderboards keep them apart)."""
    protocol = dict(plain_cfg.get("protocol") or {})
    out = {"name": protocol.get("name"), "driver": protocol.get("driver", "open_loop")}
    ident = protocol_identity(plain_cfg) or {}
    for key in ("chunk", "policy", "planner"):
        if key in ident:
            out[key] = ident[key]
    return out


def _need_steps(model: Any, driver: str) -> None:
    if not has_step_interface(model):
        name = getattr(model, "name", type(model).__name__)
        raise ConfigError(f"protocol.driver={driver}: model {name!r} has no step interface (start(request) and "
                          "step(state, actions), see docs/protocols.md); it can only run protocol=open_loop")


def _need_simulator(bench: Any, driver: str) -> Any:
    simulate = getattr(bench, "simulate", None)
    if not callable(simulate):
        name = getattr(getattr(bench, "spec", None), "name", type(bench).__name__)
        raise ConfigError(
            f"protocol={driver} needs a simulator to replay the chosen actions into a reference video, and "
            f"benchmark {name!r} has none (a dataset holds only its recorded actions and videos); use "
            "protocol=open_loop or protocol=autoregressive on it, or a simulator benchmark (gridworld, atari_*, crafter)")
    return simulate


def build_driver(plain_cfg: Mapping[str, Any], protocol: Any, model: Any, bench: Any, store: Any,
                 policy: Any = None) -> Any:
    """The object generation calls: the model itself (open loop, a model with ``generate``) or a
    driver. ``plain_cfg``: the resolved config; ``policy``: the built ``policy`` (closed loop)."""
    driver = str(protocol.metadata.get("driver", "open_loop"))
    settings = dict(plain_cfg.get("protocol") or {})
    chunk = settings.get("chunk", 1) or 1
    if driver == "open_loop":
        if has_generate(model):
            return model
        from wfeval.models.stepping import StepLoop

        _need_steps(model, driver)
        return StepLoop(model)
    if driver == "autoregressive":
        from wfeval.protocols.drivers import AutoregressiveDriver

        _need_steps(model, driver)
        if not isinstance(chunk, int) or chunk < 1:
            raise ConfigError(f"protocol.chunk must be an integer >= 1, got {chunk!r}")
        return AutoregressiveDriver(model, chunk=chunk)
    if driver == "closed_loop":
        from wfeval.protocols.drivers import ClosedLoopDriver
        from wfeval.protocols.policies import check_policy

        _need_steps(model, driver)
        simulate = _need_simulator(bench, driver)
        if policy is None:
            raise ConfigError("protocol=closed_loop needs a policy: policy=random, scripted, noop or your own "
                              "(policy=user policy._target_=my_pkg.MyPolicy)")
        try:
            check_policy(policy)
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        return ClosedLoopDriver(model, policy, simulate)
    if driver == "planning":
        from wfeval.protocols.planning import PlanningDriver, Planner

        _need_steps(model, driver)
        simulate = _need_simulator(bench, driver)
        environment = getattr(bench, "environment", None)
        if not callable(environment):
            raise ConfigError(f"protocol=planning: benchmark {bench.spec.name!r} offers no goal environment "
                              "(only gridworld does: task=goal_reaching benchmark=gridworld)")
        try:
            planner = Planner(**dict(settings.get("planner") or {}))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"protocol.planner: {exc}") from exc
        return PlanningDriver(model, planner, environment, simulate, store)
    raise ConfigError(f"protocol.driver: {driver!r} is not supported; supported: {', '.join(DRIVERS)}")
