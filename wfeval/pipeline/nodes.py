"""The run config as the pipeline reads it: a section as plain, resolved data, or the composed
node Hydra instantiates; either from the run's :class:`~wfeval.config.run_config.RunConfig` (its
one resolution) or from a composed config (tests, commands that compose without running)."""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, OmegaConf

from wfeval.config.run_config import RunConfig


def to_plain(node: Any) -> Any:
    return OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig) else node


def section(cfg: DictConfig | RunConfig, key: str) -> Any:
    """The plain, resolved section ``key``: a copy of the run config's one resolution, or converted
    from a composed node (tests, commands that compose without running)."""
    return cfg.section(key) if isinstance(cfg, RunConfig) else to_plain(cfg.get(key))


def node(cfg: DictConfig | RunConfig, key: str) -> Any:
    """The composed node ``key`` (what Hydra instantiates)."""
    return (cfg.cfg if isinstance(cfg, RunConfig) else cfg).get(key)
