"""``python -m wfeval.recipes.train``: record data from a benchmark's simulator, train, save a checkpoint.

    python -m wfeval.recipes.train benchmark=gridworld                # ~2 min on 2 CPU cores
    python -m wfeval.recipes.train benchmark=atari_pong train.steps=3000
    python -m wfeval.recipes.train benchmark=gridworld train.steps=300 out=outputs/recipes/tiny

Writes ``<out>/model.pt`` (state_dict) and ``<out>/model.json`` (network and training config, data
hash, final loss, training time, weights sha256). Config errors exit 2 without a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Mapping

import hydra
from omegaconf import DictConfig, OmegaConf

from wfeval.cli.command import command
from wfeval.cli.exits import hydra_raises
from wfeval.config import ConfigError, register_schemas

RECIPE_CONF = Path(__file__).resolve().parents[1] / "recipes" / "conf"  # the training app's config (wfeval.recipes)

register_schemas()


def run(cfg: Mapping[str, Any], bench: Any, log: Any = print) -> dict[str, Any]:
    """Record, train, save; returns the sidecar written beside the weights."""
    import platform

    import torch

    from wfeval.api import ActionSpace
    from wfeval.recipes import checkpoint
    from wfeval.recipes.data import data_size, record
    from wfeval.recipes.net import NetConfig
    from wfeval.recipes.training import TrainConfig, train

    if cfg.get("threads"):
        torch.set_num_threads(int(cfg["threads"]))
    try:
        net_config = NetConfig(n_actions=1, **dict(cfg["net"]))  # validated before recording
        train_config = TrainConfig(**dict(cfg["train"]))
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(exc)) from exc
    try:
        episodes, steps = data_size(bench.spec.metadata.get("family"), cfg["data"].get("episodes"),
                                    cfg["data"].get("steps"))
        data = record(bench, episodes=episodes, steps=steps, seed=int(cfg["data"]["seed"]))
    except ValueError as exc:  # a benchmark without a simulator, bad sizes
        raise ConfigError(str(exc)) from exc
    data_hash = data.data_hash()
    _, n, h, w, _ = data.frames.shape
    log(f"recorded {data.frames.shape[0]} episodes x {n - 1} steps of {bench.spec.name} ({h}x{w}) in "
        f"{data.info['seconds']:.1f} s; data sha256 {data_hash[:16]}; evaluation seeds excluded: "
        f"{data.info['evaluation_seeds_excluded']} (dropped {data.info['dropped_seeds']})")
    # continuous actions (benchmark=pusht): vectors scaled by the declared bounds; else action ids
    space = ActionSpace.from_dict(data.action_space) if data.is_continuous else None
    net_config = NetConfig.for_actions(space, len(data.action_names), data.actions, height=h, width=w,
                                       **dict(cfg["net"]))
    from wfeval.models.python import resolve_device

    device = resolve_device(str(cfg.get("device") or "cpu"))
    result = train(data, net_config, train_config, device=device, log=log)
    meta = {
        "benchmark": bench.spec.name,
        "action_names": list(data.action_names),
        **({"action_space": data.action_space} if space is not None else {}),
        "net": net_config.to_dict(),
        "train": {**dict(cfg["train"]), "device": device, "threads": result.threads},
        "data": {"sha256": data_hash, **data.info},
        "result": {"final_loss": result.final_loss, "losses": result.losses, "seconds": round(result.seconds, 2),
                   "cpu_seconds": round(result.cpu_seconds, 2),
                   "parameters": sum(p.numel() for p in result.net.parameters())},
        "versions": {"torch": torch.__version__, "python": platform.python_version()},
    }
    weights, sidecar = checkpoint.save(cfg["out"], result.net.state_dict(), meta)
    meta = checkpoint.read_meta(weights)[1]
    log(f"trained {train_config.steps} steps in {result.seconds:.1f} s ({result.cpu_seconds:.1f} s CPU time) on "
        f"{device} ({result.threads} threads): "
        f"final loss {result.final_loss:.5f}; {meta['result']['parameters']} parameters")
    log(f"checkpoint: {weights} (sha256 {meta['weights_sha256'][:16]}) + {sidecar.name}")
    log(f"evaluate it: python -m wfeval benchmark={bench.spec.name} model=learned model.checkpoint={weights}")
    return meta


@hydra.main(version_base="1.3", config_path=str(RECIPE_CONF), config_name="train")
def _main(cfg: DictConfig) -> None:
    from wfeval.pipeline.build import build_benchmark

    run(OmegaConf.to_container(cfg, resolve=True), build_benchmark(cfg))


BUILTIN_CONF = "pkg://wfeval.conf"  # the main app's groups (benchmark=...), which the training app composes


def with_builtin_searchpath(argv: list[str]) -> list[str]:
    """``hydra.searchpath=[file:///my/conf]`` replaces the training app's search path, which holds the main
    app's configs (``benchmark=gridworld``): keep them on it, after the user's own folders."""
    out = []
    for arg in argv:
        key, sep, value = arg.partition("=")
        if sep and key.lstrip("+") == "hydra.searchpath" and BUILTIN_CONF not in value:
            inner = value.strip()
            if inner.startswith("[") and inner.endswith("]"):
                items = inner[1:-1].strip()
                arg = f"{key}=[{items + ',' if items else ''}{BUILTIN_CONF}]"
        out.append(arg)
    return out


def run_recipe(argv: list[str], config_name: str, app: Any) -> None:
    """A recipe command that reads the built-in benchmark configs (``python -m wfeval.recipes.train`` and
    ``.record``): ``app`` (its ``hydra.main``) on ``argv`` with the built-in search path added, the main
    app's ``_target_`` allowlist (docs/trust.md) checked before Hydra builds anything."""
    from wfeval.cli.boundary import checked

    argv = with_builtin_searchpath(argv)
    sys.argv = [sys.argv[0], *argv]  # what hydra.main reads (the caller's again after the command)
    with hydra_raises(), checked(argv, str(RECIPE_CONF), config_name):
        app()


@command("wfeval.recipes.train")
def main(argv: list[str]) -> None:
    """Config errors exit 2 without a traceback (the table of :mod:`wfeval.cli.exits`)."""
    run_recipe(argv, "train", _main)


if __name__ == "__main__":
    sys.exit(main())
