"""An inverse-dynamics model for a dataset benchmark, trained on first use (``idm_accuracy`` on datasets).

Which episodes it learns from (never a sample it scores), :func:`plans`:

- the dataset declares a split named ``train`` and at least one other (LeRobot ``meta/info.json``
  ``splits``, HDF5 ``mask/<split>``): one IDM, on the episodes of ``train``. A scored sample of one of
  them is refused (skipped, with ``benchmark.split=<another split>`` named), so with the default
  ``benchmark.split=null`` the other splits are scored;
- otherwise (one split, or none named ``train``), when the run leaves episodes out (``benchmark.split``
  / ``benchmark.episodes``): one IDM, on those episodes;
- otherwise (every episode is evaluated, as on a LeRobot dataset with its one ``train`` split):
  **cross-fitting over episodes**. The evaluated episodes are dealt into ``folds`` folds (at most one
  per episode, at least 2) in an order drawn with ``seed``; fold k's samples are scored by an IDM
  trained on the episodes of the other folds, so every sample is scored and none by an IDM that saw
  its episode. The ceiling (each IDM on its own fold's reference videos) is computed the same way.
  The folds, the seed and each fold's episodes are recorded with each IDM (``results.json``:
  ``idm_accuracy``'s ``cross_fitting`` and ``idm``). A dataset of one usable episode cannot be
  cross-fitted: its samples are skipped naming what to give.

The training clips are the benchmark's own windows of those episodes (same camera, horizon, action
key); a deterministic fifth of them is held out for the IDM's own figures. Training is seeded, one
CPU thread, with a progress bar; each IDM is cached in the artifact store under ``idm/<key>`` where
the key is the sha256 of the decoded training clips (the dataset's content) and of the training
config, so a second run on the same data loads it.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

TRAIN = "train"
#: small and quick: a few seconds on a CPU for a dataset of a few thousand transitions
DEFAULTS: dict[str, Any] = {"steps": 300, "batch_size": 32, "lr": 0.002, "seed": 0, "validation_fraction": 0.2,
                            "channels": 16, "patch": 8, "folds": 5}
OPTIONS = ("+metric.idm_accuracy.idm.checkpoint=<an IDM folder> (python -m wfeval.recipes.train_idm)")


@dataclass(frozen=True)
class Plan:
    """One IDM to train: its episodes, how they were chosen and, when cross-fitting, the fold it scores."""

    episodes: list[Any]
    how: str
    scores: tuple[str, ...] | None = None  # cross-fitting: the episodes of its fold (None: any it did not see)
    fold: int | None = None  # 0-based
    folds: int | None = None
    seed: int | None = None

    def cross_fitting(self) -> dict[str, Any] | None:
        if self.fold is None:
            return None
        return {"fold": self.fold + 1, "folds": self.folds, "seed": self.seed, "scores": list(self.scores or ())}


def training_episodes(bench: Any) -> tuple[list[Any], str]:
    """(episodes to train one IDM on, how they were chosen); no episodes: the second item says why
    (every episode is evaluated: :func:`plans` cross-fits)."""
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
    declared = f"one split ({', '.join(splits)})" if len(splits) == 1 else "no split named train"
    return [], (f"{bench.root} declares {declared} "
                "whose episodes are all evaluated")


def plans(bench: Any, folds: int = DEFAULTS["folds"], seed: int = DEFAULTS["seed"]) -> list[Plan]:
    """The IDMs to train for ``bench`` (see the module doc); ValueError naming what to give when none can be."""
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise ValueError(f"metric.idm_accuracy.idm.training.folds must be an integer >= 2, got {folds!r}")
    episodes, how = training_episodes(bench)
    if episodes:
        return [Plan(episodes, how)]
    usable = sorted((e for e in bench.episodes if not e.errors), key=lambda e: e.name)
    if len(usable) < 2:
        raise ValueError(  # what to do first: the table shows the first 200 characters
            f"{len(usable)} readable episode(s): an IDM scores only episodes it was not trained on (cross-fitting "
            f"needs 2); give more episodes, a 'train' split beside the evaluated one (LeRobot meta/info.json "
            f"\"splits\", HDF5 mask/<split>) or {OPTIONS}; {how}")
    k = min(folds, len(usable))
    order = np.random.default_rng(seed).permutation(len(usable))
    dealt = [[usable[i] for j, i in enumerate(order) if j % k == fold] for fold in range(k)]
    return [Plan([e for other, part in enumerate(dealt) if other != fold for e in part],
                 f"cross-fitting fold {fold + 1} of {k}: the {len(usable) - len(dealt[fold])} evaluated episodes "
                 "of the other folds", tuple(sorted(e.name for e in dealt[fold])), fold, k, seed)
            for fold in range(k)]


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


def train_all(bench: Any, store: Any, options: Mapping[str, Any] | None = None,
              progress: str = "auto") -> list[tuple[Plan, Any]]:
    """(plan, IDM folder) of every IDM ``bench`` needs (trained now, or found in the store); ValueError
    with the reason when no episodes may train one."""
    opts = {**DEFAULTS, **dict(options or {})}
    unknown = sorted(set(opts) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"metric.idm_accuracy.idm.training: unknown key(s) {unknown}; known: {sorted(DEFAULTS)}")
    return [(plan, _train(bench, store, plan, opts, progress)) for plan in plans(bench, opts["folds"], opts["seed"])]


def _train(bench: Any, store: Any, plan: Plan, opts: Mapping[str, Any], progress: str) -> Any:
    from wfeval.recipes.idm import files
    from wfeval.recipes.idm.data import split_validation
    from wfeval.recipes.idm.fit import FitConfig, evaluate, fit
    from wfeval.recipes.idm.net import IDMConfig
    from wfeval.utils.progress import Progress

    episodes, how = plan.episodes, plan.how
    clips = _clips(bench, episodes, store)
    config = FitConfig(steps=int(opts["steps"]), batch_size=int(opts["batch_size"]), lr=float(opts["lr"]),
                       seed=int(opts["seed"]), log_every=max(1, int(opts["steps"]) // 4))
    trained_with = {k: v for k, v in opts.items() if k != "folds"}  # the folds choose the clips, hashed already
    key = hashlib.sha256(json.dumps([files.FORMAT, clips.data_hash(), trained_with],
                                    sort_keys=True).encode()).hexdigest()
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
