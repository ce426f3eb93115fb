"""What the table scripts share (perf/pusht_table.py, latent_table.py, latent_figures.py,
maze_memory_table.py): one real run in this process, and one table cell of its results."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def run_results(overrides: list[str], folder: Path) -> dict[str, Any]:
    """The run of ``overrides`` (as on the command line) into ``folder``: each measurement's aggregate
    (``results.json``'s form) by its name without the benchmark's prefix."""
    from hydra import compose, initialize_config_module

    from wfeval.config import register_schemas
    from wfeval.pipeline.runner import run_from_config

    register_schemas()
    with initialize_config_module("wfeval.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    summary = run_from_config(cfg, output_dir=folder)
    return {key.split(".", 1)[1]: agg.to_dict() for key, agg in summary.results.items()}


def cell(results: dict[str, Any] | None, metric: str, digits: int = 2, interval: bool = True) -> str:
    """``value [low, high]`` of ``metric`` in ``results`` (``—``: not measured, no valid sample)."""
    agg = (results or {}).get(metric)
    if not agg or agg["diagnostics"].get("value") is None:
        return "—"
    value, ci = agg["diagnostics"]["value"], agg.get("confidence_interval") or {}
    if not interval or ci.get("low") is None:
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} [{ci['low']:.{digits}f}, {ci['high']:.{digits}f}]"
