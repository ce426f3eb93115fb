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


def record_config(config: RunConfig, run_dir: Any) -> None:
    """Write ``.hydra/config.yaml``: exactly the config this run runs (:meth:`RunConfig.recorded`:
    every metric node included), atomically, in place of what Hydra wrote before the metrics were
    selected. Replay and resume read it back."""
    from pathlib import Path

    import yaml

    from wfeval.storage.rundir import FILES
    from wfeval.storage.safe_io import atomic_write_bytes

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text = yaml.dump(config.recorded(), Dumper=dumper, sort_keys=False, allow_unicode=True)
    atomic_write_bytes(Path(run_dir) / FILES.config, text.encode("utf-8"), durable=False)
