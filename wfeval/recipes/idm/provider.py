"""Which inverse-dynamics model reads a sample's frames: what the metric ``idm_accuracy`` calls.

``IDMProvider.for_request(request)`` returns ``(idm, None)`` or ``(None, reason)``:

- with ``checkpoint`` (an IDM the user trained, e.g. on a dataset split with
  ``python -m wfeval.recipes.train_idm``): that IDM, after checking the request's actions fit it
  (the same action names, or the same continuous shape) and that the sample is not one it was
  trained or validated on (its reference video's sha256);
- else the shipped IDM whose ``applies_to`` is the request's benchmark configuration (gridworld's
  world spec and actions; a game's pinned env, resize and actions), after checking the sample's
  episode seed is not one of the IDM's training or validation seeds.

A sample no IDM can serve gets the reason (the metric skips it: coverage shows the loss).
"""

from __future__ import annotations

import collections
import json
from typing import Any, Mapping

import numpy as np

from wfeval.recipes.idm import files
from wfeval.utils.hashing import sha256_json


def _plain(value: Any) -> Any:
    """As JSON holds it (tuples become lists): a live request and a sidecar read back compare equal."""
    return json.loads(json.dumps(value, sort_keys=True))


def applies_to(request: Any) -> dict[str, Any] | None:
    """The benchmark configuration whose frames an IDM must have been trained on, from a request."""
    names = [str(n) for n in (request.controls.get("action_names") or ())]
    world = request.metadata.get("world")
    if isinstance(world, Mapping) and isinstance(world.get("spec"), Mapping):
        return _plain({"family": "gridworld", "world": dict(world["spec"]), "action_names": names})
    sim = request.metadata.get("simulator")
    if isinstance(sim, Mapping) and "family" in sim:
        return _plain({"family": str(sim["family"]), "env": dict(sim.get("config") or {}),
                       "resize": sim.get("resize"), "action_names": names})
    return None


def applies_to_benchmark(bench: Any) -> dict[str, Any] | None:
    """:func:`applies_to` of the samples of an instantiated benchmark (what training records)."""
    family = (bench.spec.metadata or {}).get("family")
    if family == "gridworld":
        from wfeval.benchmarks.gridworld import world

        return _plain({"family": "gridworld", "world": bench.world_spec.to_dict(), "action_names": list(world.ACTIONS)})
    if hasattr(bench, "env") and hasattr(bench, "action_names"):
        return _plain({"family": str(bench.family), "env": dict(bench.env), "resize": bench.resize,
                       "action_names": list(bench.action_names)})
    return None


def _episode_seed(request: Any) -> int | None:
    for key in ("episode_seed", "trajectory_seed"):
        if isinstance(request.metadata.get(key), int):
            return int(request.metadata[key])
    return None


_STORED: "collections.OrderedDict[tuple[str, str], np.ndarray]" = collections.OrderedDict()  # predict_stored's


class LoadedIDM:
    def __init__(self, net: Any, meta: dict[str, Any], name: str, pinned: bool,
                 cross_fitting: dict[str, Any] | None = None):
        self.net, self.meta, self.name, self.pinned = net, meta, name, pinned
        self.cross_fitting = cross_fitting  # the fold this IDM scores (on_dataset.Plan.cross_fitting)
        self.kind = str(meta["net"]["kind"])
        self.sources = {str(s) for s in meta.get("data", {}).get("sources", [])}
        self._meta_sha256 = sha256_json(meta)  # the sidecar's identity (predict_stored)

    @property
    def variance(self) -> list[float] | None:
        scale = self.meta.get("standardiser")
        return [s * s for s in scale["std"]] if scale else None

    def problem(self, request: Any) -> str | None:
        """Why this IDM must not score ``request`` (None: it may)."""
        if self.kind == "discrete":
            names = [str(n) for n in (request.controls.get("action_names") or ())]
            trained = [str(n) for n in self.meta.get("action_names", [])]
            if names and names != trained:
                return f"the IDM {self.name!r} reads actions {trained}, this sample's are {names}"
        else:
            space = request.controls.get("action_space")
            shape = list((space or {}).get("shape") or []) if isinstance(space, Mapping) else []
            trained = list((self.meta.get("action_space") or {}).get("shape") or [])
            if shape != trained:
                return f"the IDM {self.name!r} reads continuous actions of shape {trained}, this sample's are {shape}"
        seed = _episode_seed(request)
        if seed is not None and str(seed) in self.sources:
            return f"the IDM {self.name!r} was trained or validated on this sample's episode (seed {seed})"
        trained = (self.meta.get("data") or {}).get("episode_names")
        if trained and request.metadata.get("episode") in trained:
            return (f"the IDM {self.name!r} was trained on this sample's episode {request.metadata['episode']!r} "
                    f"({self.meta['data'].get('chosen')}); score another split (benchmark.split=<split>)")
        reference = request.references.get("video")
        if reference is not None and reference.sha256 and reference.sha256 in self.sources:
            return f"the IDM {self.name!r} was trained or validated on this sample (its reference video)"
        return None

    def predict(self, video: np.ndarray) -> np.ndarray:
        from wfeval.recipes.idm.fit import predict

        return predict(self.net, video, self.meta.get("standardiser"))

    def predict_stored(self, video: np.ndarray, sha256: str | None) -> np.ndarray:
        """:meth:`predict` of a stored video of content ``sha256`` (verified when read; the ceiling), once per
        sidecar and content; only for an IDM whose weights the sidecar names by sha256 (checked at load)."""
        if not sha256 or not self.meta.get("weights_sha256"):
            return self.predict(video)
        key = (self._meta_sha256, str(sha256))
        if key not in _STORED:
            _STORED[key] = self.predict(video)
            while len(_STORED) > 4096:
                _STORED.popitem(last=False)
        _STORED.move_to_end(key)
        return _STORED[key].copy()

    def describe(self) -> dict[str, Any]:
        data = self.meta.get("data", {})
        out = {"name": self.name, "weights_sha256": self.meta.get("weights_sha256"), "pinned": self.pinned,
               "kind": self.kind,
               "heldout": {k: v for k, v in (self.meta.get("heldout") or {}).items() if k != "confusion"},
               "trained_on": {k: data.get(k) for k in ("benchmark", "split", "episodes", "samples", "transitions",
                                                       "seed_namespace", "sha256") if k in data}}
        if self.cross_fitting:
            out["cross_fitting"] = dict(self.cross_fitting)
        return out


class IDMProvider:
    """``checkpoint``: an IDM folder or ``idm.pt`` (null: the shipped IDM of the sample's benchmark);
    ``sha256``: the pinned sha256 of that checkpoint's ``idm.pt`` (null: not pinned; the results say so);
    ``training``: options of the IDM trained on first use on a dataset benchmark (:mod:`.on_dataset`)."""

    def __init__(self, checkpoint: str | None = None, sha256: str | None = None,
                 training: Mapping[str, Any] | None = None):
        self.checkpoint, self.sha256 = checkpoint, sha256
        self.training = dict(training or {})
        self._dataset: tuple[Any, Any] | None = None  # (benchmark, store) of a dataset run (bind_benchmark)
        self._dataset_idms: tuple[list[tuple[Any, str]], str | None] | None = None  # ([(plan, folder)], why)
        self._loaded: dict[str, LoadedIDM] = {}
        self._keys: dict[str, Any] | None = None
        self._broken: dict[str, str] = {}
        if checkpoint:  # a missing or mismatched file is a config error, found before anything runs
            files.read_sidecar(checkpoint, {"weights": sha256} if sha256 else None)

    def identity(self) -> dict[str, Any]:
        """What the scores depend on beyond the options: the pinned shipped IDMs, the user's weights."""
        out: dict[str, Any] = {"shipped": files.SHIPPED}
        if self.training:
            out["training"] = self.training
        if self._dataset is not None:  # the IDM trained on the dataset: cached rows are tied to its weights
            trained, why = self._dataset_folders()
            shas = [files.file_sha256(files.paths(folder)[0]) for _, folder in trained]
            out["dataset_idm"] = (shas[0] if len(shas) == 1 else shas) if trained else why
        if self.checkpoint:
            weights, _ = files.paths(self.checkpoint)
            out["checkpoint_sha256"] = files.file_sha256(weights) if weights.is_file() else None
        return out

    def _load(self, key: str, folder: Any, pins: Mapping[str, str] | None, name: str, pinned: bool,
              cross_fitting: dict[str, Any] | None = None) -> LoadedIDM:
        if key not in self._loaded:
            net, meta = files.load(folder, pins)
            self._loaded[key] = LoadedIDM(net, meta, name, pinned, cross_fitting)
        return self._loaded[key]

    def _shipped_keys(self) -> dict[str, Any]:
        """What each intact shipped IDM applies to; a shipped IDM whose files fail their checks is kept
        in ``self._broken`` with the reason (never a silent gap that later reads "no shipped IDM")."""
        if self._keys is None:
            keys, broken = {}, {}
            for name, folder in files.shipped().items():
                try:
                    _, meta = files.read_sidecar(folder, files.SHIPPED[name])
                except files.CheckpointError as exc:
                    broken[name] = str(exc)
                    continue
                keys[name] = _plain(meta.get("applies_to"))
            self._keys, self._broken = keys, broken
        return self._keys

    def bind_benchmark(self, bench: Any, store: Any) -> None:
        """A dataset benchmark (an episode reader) and the run's store: an IDM is trained on first use."""
        if not self.checkpoint and hasattr(bench, "read_episodes") and store is not None:
            self._dataset = (bench, store)

    def _dataset_folders(self) -> tuple[list[tuple[Any, str]], str | None]:
        """([(plan, folder)] of the IDMs trained on the bound dataset, None) or ([], why none); trained once."""
        if self._dataset_idms is None:
            from wfeval.recipes.idm import on_dataset

            try:
                trained = on_dataset.train_all(*self._dataset, self.training)
                self._dataset_idms = ([(plan, str(folder)) for plan, folder in trained], None)
            except ValueError as exc:
                self._dataset_idms = ([], str(exc))
        return self._dataset_idms

    def _trained_on_dataset(self, request: Any) -> tuple[LoadedIDM | None, str | None]:
        """The dataset's IDM for ``request``: the one IDM, or (cross-fitting) the one of the sample's fold."""
        trained, why = self._dataset_folders()
        episode = request.metadata.get("episode")
        for plan, folder in trained:
            if plan.scores is None or episode in plan.scores:
                name = f"trained on {self._dataset[0].spec.name}"
                if plan.fold is not None:
                    name += f" (cross-fitting fold {plan.fold + 1}/{plan.folds})"
                return self._load(f"dataset:{folder}", folder, None, name, False, plan.cross_fitting()), None
        return None, why or (f"episode {episode!r} is in no cross-fitting fold (it was not readable when the "
                             "folds were dealt)")

    def for_request(self, request: Any) -> tuple[LoadedIDM | None, str | None]:
        """(the IDM, None) or (None, why no IDM may score this sample); a shipped or given checkpoint whose
        files fail their checks raises :class:`~.files.CheckpointError` (the metric's error, never a skip)."""
        if self.checkpoint:
            pins = {"weights": self.sha256} if self.sha256 else None
            idm = self._load("checkpoint", self.checkpoint, pins, str(self.checkpoint), bool(self.sha256))
        else:
            wanted = applies_to(request)
            if wanted is None and self._dataset is not None:
                idm, why = self._trained_on_dataset(request)
                if idm is None:
                    return None, why
            elif wanted is None:
                return None, ("no inverse-dynamics model for a benchmark without a simulator: train one on a "
                              f"split of it ({files.TRAIN_HINT} benchmark.split=<split>) and pass "
                              "+metric.idm_accuracy.idm.checkpoint=<its folder>")
            else:
                name = next((n for n, key in self._shipped_keys().items() if key == wanted), None)
                if name is None and self._broken:  # the one that applies may be among them: say so, on every sample
                    raise files.CheckpointError(
                        "shipped inverse-dynamics model(s) failed their checks and are never used: "
                        + "; ".join(f"{n}: {why}" for n, why in self._broken.items())
                        + " (reinstall wfeval to restore them)")
                if name is None:
                    return None, (f"no shipped inverse-dynamics model for this {wanted['family']} configuration "
                                  f"(shipped: {', '.join(files.SHIPPED) or 'none'}); train one with "
                                  f"{files.TRAIN_HINT} and pass +metric.idm_accuracy.idm.checkpoint=<its folder>")
                idm = self._load(name, files.SHIPPED_DIR / name, files.SHIPPED[name], name, True)
        problem = idm.problem(request)
        return (None, problem) if problem else (idm, None)
