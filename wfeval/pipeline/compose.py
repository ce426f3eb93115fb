"""One composition per command: :func:`compose_run` turns a command line's overrides into the run config.

The CLI's boundary (:mod:`wfeval.cli.boundary`, which trust-checks what it composes), ``wfeval.evaluate``
(:mod:`wfeval.pipeline.evaluate`) and ``--help`` (:mod:`wfeval.cli.help`) all call it. Hydra composes the
config once, the metric nodes the run may add included: the protocol's and the task's (their
``metric_ids`` and ``metric_groups``, through ``conf/config.yaml``'s ``added_metrics`` defaults) and those
``extra_metrics=`` names on the command line (composed through an override), all under ``metric._added_``;
the rules of :mod:`wfeval.metrics.selection` then pick from what was composed
(:func:`wfeval.pipeline.metric_nodes.with_metric_nodes`). Hydra's compose API must be initialized by the
caller (process-wide state belongs to it); nothing here reads Hydra's job state.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Sequence

from wfeval.config.errors import ConfigError, yaml_error_message
from wfeval.config.run_config import ADDED, JobChoices, RunConfig


def composition_overrides(overrides: Sequence[str], config_name: str = "config") -> list[str]:
    """``overrides`` and, for each metric an ``extra_metrics=`` override names that is an option of the
    metric group (on the run's search path), one override composing it under ``metric._added_``."""
    from hydra.core.global_hydra import GlobalHydra

    from wfeval.metrics.selection import extra_metric_overrides

    overrides = [str(o) for o in overrides]
    if not any(o.lstrip("+~").startswith("extra_metrics=") for o in overrides):
        return overrides
    searchpath = [o for o in overrides if o.split("=", 1)[0].lstrip("+~") == "hydra.searchpath"]
    options = GlobalHydra.instance().config_loader().get_group_options("metric", config_name=config_name,
                                                                        overrides=searchpath)
    return [*overrides, *extra_metric_overrides(overrides, options)]


def compose_node(overrides: Sequence[str], config_name: str = "config") -> Any:
    """The composed config of ``overrides`` with its ``hydra`` node (Hydra's compose API, initialized by
    the caller), the metrics a run may add composed under ``metric._added_``; ``hydra.overrides.task``
    keeps the command line's own overrides."""
    from hydra import compose
    from omegaconf import OmegaConf, open_dict, read_write

    from wfeval.pipeline.compose_values import override_dirname

    given = [str(o) for o in overrides]
    extra = composition_overrides(given, config_name)[len(given):]
    try:
        node = compose(config_name=config_name, overrides=[*given, *extra], return_hydra_config=True)
    except Exception as exc:  # an extra metric's own file that does not parse: named as extra_metrics'
        message = yaml_error_message(exc) if extra else None
        if message and any(f"/metric/{o.rsplit('=', 1)[1]}.yaml" in message for o in extra):
            raise ConfigError(f"extra_metrics: {message}") from None
        raise
    if extra:  # Hydra's record of the job as if the command line alone had composed it
        with read_write(node.hydra), open_dict(node.hydra):
            task = [o for o in OmegaConf.to_container(node.hydra.overrides.task) if o not in extra]  # unresolved
            node.hydra.overrides.task = task
            for key in [k for k in node.hydra.runtime.choices if str(k).startswith(f"metric@metric.{ADDED}.")]:
                del node.hydra.runtime.choices[key]
            node.hydra.job.override_dirname = override_dirname(task, node.hydra.job.config)
    return node


def run_config_of(node: Any) -> RunConfig:
    """The run config of a node :func:`compose_node` composed: what Hydra knows of the job kept (the
    choices, the job's overrides, the search path; its ``hydra`` node aside), its metrics selected."""
    import dataclasses

    from omegaconf import OmegaConf, open_dict

    from wfeval.pipeline.metric_nodes import with_metric_nodes

    job = JobChoices(choices=OmegaConf.to_container(node.hydra.runtime.choices, resolve=False),
                     overrides=tuple(str(o) for o in node.hydra.overrides.task),
                     searchpath=tuple(str(p) for p in node.hydra.searchpath), known=True)
    hydra, node = node.hydra, copy.deepcopy(node)
    with open_dict(node):
        del node["hydra"]
    return with_metric_nodes(dataclasses.replace(RunConfig.resolve(node, job=job), hydra=hydra))


def compose_run(overrides: Sequence[str], config_name: str = "config",
                check: Callable[[Any], None] | None = None, cached: bool = False) -> RunConfig:
    """The run config of a command line's ``overrides``, composed once (Hydra's compose API, initialized by
    the caller), its ``hydra`` node kept (:attr:`RunConfig.hydra`): ``check`` sees the whole composed node
    before anything else is done with it (the CLI's trust check). ``cached``: the node of an identical
    earlier composition when one is kept (:mod:`wfeval.pipeline.compose_cache`; a command's process, whose
    config store and plugins are the installed ones)."""
    if cached:
        from wfeval.pipeline.compose_cache import composed

        node = composed(overrides, config_name, lambda given: compose_node(given, config_name))
    else:
        node = compose_node(overrides, config_name)
    if check is not None:
        check(node)
    return run_config_of(node)
