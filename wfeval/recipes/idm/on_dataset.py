"""An inverse-dynamics model for a dataset benchmark, trained on first use (``idm_accuracy`` on datasets).

Which episodes it learns from (never a sample it scores):

- the dataset declares a split named ``train`` and at least one other (LeRobot ``meta/info.json``
  ``splits``, HDF5 ``mask/<split>``): the episodes of ``train``. A scored sample of one of them is
  refused (skipped, with ``benchmark.split=<another split>`` named), so with the default
  ``benchmark.split=null`` the other splits are scored;
- otherwise (one split, or none named ``train``): the episodes this run does not evaluate (those left
  out by ``benchmark.split`` / ``benchmark.episodes``); when every episode is evaluated there is
  nothing to learn from and every sample is skipped with the options to set.

The training clips are the benchmark's own windows of those episodes (same camera, horizon, action
key); a deterministic fifth of them is held out for the IDM's own figures. Training is seeded, one
CPU thread, with a progress bar; the IDM is cached in the artifact store under ``idm/<key>`` where
the key is the sha256 of the decoded training clips (the dataset's content) and of the training
config, so a second run on the same data loads it.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any, Mapping

TRAIN = "train"
#: small and quick: a few seconds on a CPU for a dataset of a few thousand transitions
DEFAULTS: dict[str, Any] = {"steps": 300, "batch_size": 32, "lr": 0.002, "seed": 0, "validation_fraction": 0.2,
                            "channels": 16, "patch": 8}
OPTIONS = ("+metric.idm_accuracy.idm.checkpoint=<an IDM folder> (python -m wfeval.recipes.train_idm)")


def training_episodes(bench: Any) -> tuple[list[Any], str]:
    """(episodes to train on, how they were chosen); no episodes: the second item says why and what to set."""
    clone = copy.copy(bench)
    clone.problems = []
    everything, _ = clone.read_episodes()
    splits = sorted({e.split for e in everything})
    if TRAIN in splits and len(splits) > 1:
        return [e for e in everything if e.split == TRAIN and not e.errors], f"the dataset's split {TRAIN!r}"
    evaluated = {e.name for e in bench.episodes}
    rest = [e for e in everything if e.name not in evaluated and not e.errors]
    if rest:
        return rest, "the episodes this run does not evaluate"
    return [], (f"an inverse-dynamics model is trained on episodes the run does not score, and {bench.root} declares "
                f"{'one split (' + ', '.join(splits) + ')' if len(splits) == 1 else 'no split named train'} whose "
                "episodes are all evaluated: declare a 'train' split beside the evaluated one (LeRobot meta/info.json "
                "\"splits\", HDF5 mask/<split>), or evaluate part of the dataset (benchmark.episodes=[...]: the rest "
                f"trains the IDM), or pass {OPTIONS}")


def _clips(bench: Any, episodes: list[Any], store: Any) -> Any:
    from wfeval.api import EvaluationProtocolSpec, WorldTaskConfig
    from wfeval.recipes.idm.data import from_requests

    clone = copy.copy(bench)
    clone.problems, clone.strict, clone.episodes = [], False, list(episodes)
    clone._windows = clone._cut()
    requests = clone.requests(store=store, task=WorldTaskConfig(name="action_video"),
                              protocol=EvaluationProtocolSpec(name="open_loop"))
    return from_requests([r for r in requests if "input_error" not in r.metadata],
                         f"{bench.family} training episodes")


def train_for(bench: Any, store: Any, options: Mapping[str, Any] | None = None, progress: str = "auto") -> Any:
    """The IDM folder for ``bench`` (trained now, or found in the store); ValueError with the reason when
    no episodes may train it."""
    from wfeval.recipes.idm import files
    from wfeval.recipes.idm.data import split_validation
    from wfeval.recipes.idm.fit import FitConfig, evaluate, fit
    from wfeval.recipes.idm.net import IDMConfig
    from wfeval.utils.progress import Progress

    opts = {**DEFAULTS, **dict(options or {})}
    unknown = sorted(set(opts) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"metric.idm_accuracy.idm.training: unknown key(s) {unknown}; known: {sorted(DEFAULTS)}")
    episodes, how = training_episodes(bench)
    if not episodes:
        raise ValueError(how)
    clips = _clips(bench, episodes, store)
    config = FitConfig(steps=int(opts["steps"]), batch_size=int(opts["batch_size"]), lr=float(opts["lr"]),
                       seed=int(opts["seed"]), log_every=max(1, int(opts["steps"]) // 4))
    key = hashlib.sha256(json.dumps([files.FORMAT, clips.data_hash(), opts], sort_keys=True).encode()).hexdigest()
    folder = store.root / "idm" / key[:32]
    try:
        files.read_sidecar(folder)
        return folder  # trained before on the same data with the same options
    except files.CheckpointError:
        pass
    train, held = split_validation(clips, float(opts["validation_fraction"]))
    net_config = IDMConfig(n_out=train.n_out, kind=train.kind, channels=int(opts["channels"]), patch=int(opts["patch"]))
    bar = Progress(f"idm_accuracy: training an inverse-dynamics model on {how}", config.steps, progress, unit="steps")
    try:
        net, result = fit(train, net_config, config, step=bar.update)
    finally:
        bar.close()
    heldout = evaluate(net, held, result["standardiser"])
    meta = {"benchmark": bench.spec.name, "applies_to": None, "action_names": list(train.action_names),
            "action_space": train.action_space, "net": net_config.to_dict(), "standardiser": result["standardiser"],
            "train": config.to_dict(),
            "data": {**clips.info, "benchmark": bench.spec.name, "chosen": how, "dataset_root": str(bench.root),
                     "episodes": len(episodes), "episode_names": [e.name for e in episodes],
                     "transitions": train.transitions, "sha256": clips.data_hash(), "cache_key": key,
                     "sources": [str(s) for s in clips.sources]},
            "heldout": heldout, "result": {k: result[k] for k in ("losses", "final_loss", "seconds")}}
    files.save(folder, net.state_dict(), meta)
    return folder
