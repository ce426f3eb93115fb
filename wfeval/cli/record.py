"""``python -m wfeval.recipes.record``: record episodes from a benchmark's simulator and write them as a dataset.

    python -m wfeval.recipes.record benchmark=pusht out=outputs/recordings/pusht      # a LeRobot v3.0 dataset
    python -m wfeval.recipes.record benchmark=gridworld format=hdf5 episodes=8 steps=32

The episodes are :func:`wfeval.recipes.data.record`'s (the recipe's seeds, never an evaluation
episode; the benchmark's behaviour policy; pusht's float32 target positions and exact state), written
by :mod:`wfeval.recipes.data_files`; ``<out>/recording.json`` keeps what was recorded (the benchmark,
the seeds, the policy, the data's sha256). Config errors exit 2 without a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Mapping

import hydra
from omegaconf import DictConfig, OmegaConf

from wfeval.cli.command import command
from wfeval.cli.train import RECIPE_CONF, run_recipe
from wfeval.config import ConfigError, register_schemas

FORMATS = ("lerobot", "hdf5", "npz")

register_schemas()


def _options(cfg: Mapping[str, Any], bench: Any) -> tuple[str, Path, bool | None, float]:
    """format, out, state and fps, checked before anything is recorded."""
    fmt, out, state, fps = cfg.get("format"), Path(str(cfg.get("out"))), cfg.get("state"), cfg.get("fps")
    if fmt not in FORMATS:
        raise ConfigError(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")
    if state is not None and not isinstance(state, bool):
        raise ConfigError(f"state: true, false or null (where actions are continuous), got {state!r}")
    fps = getattr(bench, "fps", None) if fps is None else fps
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not fps > 0:
        raise ConfigError(f"fps: a positive frame rate, got {fps!r}")
    for key in ("episodes", "steps"):
        value = cfg.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ConfigError(f"{key}: a positive number, or null for the recipe's default; got {value!r}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"out: {out} already exists and is not an empty folder; record into a new one")
    return str(fmt), out, state, float(fps)


def run(cfg: Mapping[str, Any], bench: Any, log: Any = print) -> Path:
    """Record, write, say how to read it back; returns the folder written."""
    from wfeval.recipes import data_files
    from wfeval.recipes.data import data_size, record
    from wfeval.storage.safe_io import atomic_write_bytes

    fmt, out, state, fps = _options(cfg, bench)
    try:
        episodes, steps = data_size(bench.spec.metadata.get("family"), cfg.get("episodes"), cfg.get("steps"))
        rec = record(bench, episodes=episodes, steps=steps, seed=int(cfg.get("seed") or 0), state=state)
    except ValueError as exc:  # a benchmark without a simulator, bad sizes, no state to record
        raise ConfigError(str(exc)) from exc
    digest = rec.data_hash()
    log(f"recorded {episodes} episodes x {steps} steps of {bench.spec.name} in {rec.info['seconds']:.1f} s "
        f"(actions {'continuous' if rec.is_continuous else 'ids'}, state: {', '.join(rec.state_names) or 'none'}); "
        f"data sha256 {digest[:16]}")
    if fmt == "lerobot":
        data_files.save_lerobot(rec, out, fps=fps, task=cfg.get("task"))
        read = f"python -m wfeval benchmark=lerobot benchmark.dataset_root={out}"
    elif fmt == "hdf5":
        data_files.save_hdf5(rec, out / "recording.hdf5")
        read = f"python -m wfeval benchmark=hdf5 benchmark.dataset_root={out / 'recording.hdf5'} benchmark.fps={fps:g}"
    else:
        data_files.save_arrays(rec, out / "recording.npz")
        read = f"wfeval.recipes.data_files.load_arrays('{out / 'recording.npz'}')"
    sidecar = {"recorded_by": "wfeval.recipes.record", "format": fmt, "data_sha256": digest, "fps": fps,
               "action_space": rec.action_space, "action_names": list(rec.action_names),
               "state_names": list(rec.state_names), "seeds": rec.seeds, **rec.info}
    atomic_write_bytes(out / "recording.json", (json.dumps(sidecar, indent=2, default=str) + "\n").encode())
    log(f"wrote {out} ({fmt}); read it back: {read}")
    return out


@hydra.main(version_base="1.3", config_path=str(RECIPE_CONF), config_name="record")
def _main(cfg: DictConfig) -> None:
    from wfeval.pipeline.build import build_benchmark

    run(OmegaConf.to_container(cfg, resolve=True), build_benchmark(cfg))


@command("wfeval.recipes.record")
def main(argv: list[str]) -> None:
    """Config errors exit 2 without a traceback (the table of :mod:`wfeval.cli.exits`)."""
    run_recipe(argv, "record", _main)


if __name__ == "__main__":
    sys.exit(main())
