"""A plain run of ``python -m wfeval`` (no ``-m``, ``--cfg``, ...) run on the composition its boundary made
and checked (:mod:`wfeval.cli.boundary`), through Hydra's own job machinery (``hydra.core.utils``, the
API Hydra's launchers use: the run folder, ``.hydra/*.yaml``, logging, ``hydra.job.env_set``, the
callbacks), the steps ``hydra.main`` takes for a run: the config is composed once, not again by Hydra.
A config whose ``hydra.mode`` asks for a sweep is left to ``hydra.main``.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence


def plain_run(overrides: Sequence[str], task: Callable[[Any], Any], check: Callable[[Any], None],
              keep: dict) -> Callable[[], None] | None:
    """Compose and check the run of ``overrides`` (:func:`~wfeval.pipeline.compose.compose_run`, Hydra's
    compose API initialized by the caller), keep its run config in ``keep`` by the job's overrides, and
    return the function running ``task`` on it; None when the config's ``hydra.mode`` asks for a sweep."""
    from hydra.types import RunMode
    from omegaconf import OmegaConf, open_dict, read_write

    from wfeval.pipeline.compose import compose_run

    config = compose_run(overrides, check=check, cached=True)
    if config.hydra.mode == RunMode.MULTIRUN:
        return None
    keep[tuple(config.job.overrides)] = config
    node = copy_with_hydra(config.cfg, config.hydra)
    with read_write(node.hydra), open_dict(node.hydra):
        if node.hydra.mode is None:  # as hydra.main records a run whose mode no config sets
            node.hydra.mode = RunMode.RUN
            node.hydra.overrides.hydra.append("hydra.mode=RUN")
    OmegaConf.set_readonly(node.hydra, True)
    return functools.partial(run_composed, node, task)


def copy_with_hydra(cfg: Any, hydra: Any) -> Any:
    """A copy of the job config ``cfg`` with Hydra's node ``hydra`` put back (what Hydra's job runner reads)."""
    import copy

    from omegaconf import OmegaConf, open_dict

    node = copy.deepcopy(cfg)
    OmegaConf.set_readonly(node, False)
    with open_dict(node):
        node.hydra = copy.deepcopy(hydra)
    return node


class _Callbacks:
    """``hydra.callbacks``, each made (through wfeval's door for code, Hydra's ``instantiate`` once
    trusted) and told of the run and its job in
    the order ``hydra.main`` tells them: starts in their order, ends in reverse; a callback that raises is
    reported as a warning, as Hydra reports it."""

    def __init__(self, node: Any) -> None:
        from wfeval.config.code import instantiate  # the one door for code (docs/trust.md)

        self.callbacks = [instantiate(params, f"hydra.callbacks.{name}")
                          for name, params in (node.hydra.get("callbacks") or {}).items()]

    def _notify(self, name: str, reverse: bool = False, **kwargs: Any) -> None:
        import warnings

        for callback in reversed(self.callbacks) if reverse else self.callbacks:
            try:
                getattr(callback, name)(**kwargs)
            except Exception as exc:  # noqa: BLE001 - as Hydra: a callback's failure does not fail the run
                warnings.warn(f"Callback {type(callback).__name__}.{name} raised {type(exc).__name__}: {exc}")

    def on_run_start(self, **kwargs: Any) -> None:
        self._notify("on_run_start", **kwargs)

    def on_run_end(self, **kwargs: Any) -> None:
        self._notify("on_run_end", reverse=True, **kwargs)

    def on_job_start(self, **kwargs: Any) -> None:
        self._notify("on_job_start", **kwargs)

    def on_job_end(self, **kwargs: Any) -> None:
        self._notify("on_job_end", reverse=True, **kwargs)


def run_composed(node: Any, task: Callable[[Any], Any], config_name: str = "config") -> None:
    """``hydra.main``'s run of one job on ``node`` (composed, checked): Hydra's logging configured, its
    callbacks made, the job run in its run folder (``hydra.run.dir``); a failed job raises its error."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.utils import configure_log, run_job
    from hydra.types import HydraContext

    configure_log(node.hydra.hydra_logging, node.hydra.verbose)
    callbacks = _Callbacks(node)
    callbacks.on_run_start(config=node, config_name=config_name)
    loader = GlobalHydra.instance().config_loader()
    context = HydraContext(config_loader=loader, callbacks=callbacks)  # type: ignore[arg-type]
    ret = run_job(hydra_context=context, task_function=task, config=node, job_dir_key="hydra.run.dir",
                  job_subdir_key=None)
    callbacks.on_run_end(config=node, config_name=config_name, job_return=ret)
    _ = ret.return_value  # a failed job raises its error here
