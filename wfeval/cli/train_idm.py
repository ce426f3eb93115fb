"""``python -m wfeval.recipes.train_idm``: train an inverse-dynamics model for ``idm_accuracy``.

    python -m wfeval.recipes.train_idm benchmark=gridworld
    python -m wfeval.recipes.train_idm benchmark=atari_pong train.steps=3000
    python -m wfeval.recipes.train_idm benchmark=folder benchmark.dataset_root=DIR benchmark.split=train

A benchmark with a simulator (gridworld, atari_*, crafter) records ``data.episodes`` episodes to
train on and ``data.validation_episodes`` to hold out, from the recipe's seed namespace with every
evaluation seed excluded; a dataset benchmark reads the samples of its ``benchmark.split`` and holds
out ``data.validation_fraction`` of them. Writes ``<out>/idm.pt`` and ``<out>/idm.json`` (held-out
accuracy or R², chance, training seeds or reference hashes, the weights' sha256) and prints how to use
it: ``+metric.idm_accuracy.idm.checkpoint=<out>``. Config errors exit 2 without a traceback.
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

RECIPE_CONF = Path(__file__).resolve().parents[1] / "recipes" / "conf"

register_schemas()


def clips_of(cfg: Mapping[str, Any], bench: Any, log: Any = print) -> tuple[Any, Any, dict[str, Any]]:
    """(training clips, held-out clips, what the sidecar says of the data)."""
    from wfeval.recipes.idm import data

    d = cfg["data"]
    if (bench.spec.metadata or {}).get("family") == "gridworld" or hasattr(bench, "trajectory_seed"):
        seed = int(d["seed"])
        train = data.from_simulator(bench, episodes=int(d["episodes"]), steps=int(d["steps"]), seed=seed)
        held = data.from_simulator(bench, episodes=int(d["validation_episodes"]), steps=int(d["steps"]),
                                   seed=seed + 1)
        info = {k: v for k, v in train.info.items() if k not in ("seed", "seconds")}
        info.update(episodes=len(train.videos), validation_episodes=len(held.videos), seeds=[seed, seed + 1],
                    seconds=round(train.info["seconds"] + held.info["seconds"], 2))
        log(f"recorded {len(train.videos)} + {len(held.videos)} episodes x {d['steps']} steps of {bench.spec.name} "
            f"in {info['seconds']:.1f} s; evaluation seeds excluded: {info['evaluation_seeds_excluded']}")
        return train, held, info
    from wfeval.api import EvaluationProtocolSpec, WorldTaskConfig
    from wfeval.pipeline.select import iter_requests
    from wfeval.storage.artifacts import ArtifactStore

    store = ArtifactStore(str(cfg["store_dir"]))
    split = getattr(bench, "split", None) or (bench.spec.metadata or {}).get("split")
    requests = list(iter_requests(bench, store=store, task=WorldTaskConfig(name="action_video"),
                                  protocol=EvaluationProtocolSpec(name="open_loop"), limit=None, shard=None))
    everything = data.from_requests(requests, f"benchmark {bench.spec.name!r} split {split!r}")
    train, held = data.split_validation(everything, float(d["validation_fraction"]))
    info = {**everything.info, "benchmark": bench.spec.name, "split": split, "samples": len(everything.videos),
            "validation_samples": len(held.videos)}
    log(f"read {len(everything.videos)} samples of split {split!r} of {bench.spec.name}: {len(train.videos)} to "
        f"train on, {len(held.videos)} held out")
    return train, held, info


def run(cfg: Mapping[str, Any], bench: Any, log: Any = print) -> dict[str, Any]:
    """Record or read the clips, train, evaluate on the held-out clips, save; returns the sidecar."""
    import platform

    import torch

    from wfeval.recipes.idm import files
    from wfeval.recipes.idm.fit import FitConfig, evaluate, fit
    from wfeval.recipes.idm.net import IDMConfig
    from wfeval.recipes.idm.provider import applies_to_benchmark

    net = dict(cfg["net"])
    coords = net.pop("coords", None)  # null: on for continuous actions (a target position is a place)
    try:
        fit_config = FitConfig(**dict(cfg["train"]))
        IDMConfig(n_out=1, coords=bool(coords), **net)  # validated before recording
        train, held, info = clips_of(cfg, bench, log)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"train_idm: {exc}") from exc
    coords = train.kind == "continuous" if coords is None else coords
    net_config = IDMConfig(n_out=train.n_out, kind=train.kind, coords=coords, **net)
    net, result = fit(train, net_config, fit_config, log=log)
    heldout = evaluate(net, held, result["standardiser"])
    log(f"held out: {heldout['metric']} {heldout['value']:.4f} on {heldout['transitions']} transitions "
        f"(always the most frequent action: {heldout['majority']:.4f})")
    meta = {
        "benchmark": bench.spec.name, "applies_to": applies_to_benchmark(bench),
        "action_names": list(train.action_names), "action_space": train.action_space,
        "net": net_config.to_dict(), "standardiser": result["standardiser"], "train": fit_config.to_dict(),
        "data": {**info, "transitions": train.transitions, "sha256": train.data_hash(),
                 "sources": [str(s) for s in [*train.sources, *held.sources]]},
        "heldout": heldout,
        "result": {k: result[k] for k in ("losses", "final_loss", "seconds")},
        "versions": {"torch": torch.__version__, "python": platform.python_version()},
    }
    weights, sidecar = files.save(cfg["out"], net.state_dict(), meta)
    meta = files.read_sidecar(weights)[1]
    log(f"trained {fit_config.steps} steps in {result['seconds']:.1f} s; {weights} (sha256 "
        f"{meta['weights_sha256'][:16]}) + {sidecar.name}")
    log(f"use it: {use_command(bench.spec.name, cfg['out'])}")
    return meta


def use_command(benchmark: str, out: Any) -> str:
    """The command that scores with the IDM just trained (``+``: the task's metrics are chosen after
    composition, so the metric's node is added; tests/robustness runs it)."""
    return (f"python -m wfeval task=controllability benchmark={benchmark} "
            f"+metric.idm_accuracy.idm.checkpoint={Path(out)}")


@hydra.main(version_base="1.3", config_path=str(RECIPE_CONF), config_name="train_idm")
def _main(cfg: DictConfig) -> None:
    from wfeval.pipeline.build import build_benchmark

    run(OmegaConf.to_container(cfg, resolve=True), build_benchmark(cfg))


@command("wfeval.recipes.train_idm")
def main(argv: list[str]) -> None:
    """Config errors exit 2 without a traceback (the table of :mod:`wfeval.cli.exits`)."""
    from wfeval.cli.boundary import checked

    with hydra_raises(), checked(argv, str(RECIPE_CONF), "train_idm"):
        _main()  # reads sys.argv: the command's own while it runs


if __name__ == "__main__":
    sys.exit(main())
