"""The ridge probes' driver of ``protocol=probing`` (wfeval/protocols/probing.py): fits one ridge probe per
state variable on the training episodes' latents and reads every held-out episode, observed and imagined
``k`` steps ahead; :func:`class_scores` scores a discrete variable (also for ``probe=atariari``)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.functional.probe_classifiers import f1_counts, weighted_f1
from wfeval.functional.probing import accuracy, choose_alphas, fit_ridges, majority_share, predict_all, r2_term
from wfeval.functional.rank import effective_rank
from wfeval.models import latent
from wfeval.models.protocol import Generated
from wfeval.models.stepping import per_sample
from wfeval.protocols.drivers import Driver


def class_scores(predicted: np.ndarray, truth: np.ndarray, train_values: np.ndarray) -> dict[str, Any]:
    """A discrete variable's scores on one episode: accuracy and weighted F1, each with its chance (the
    training majority class named for every frame), and the per-class counts that pool F1 over episodes."""
    majority = np.full(len(truth), majority_class(train_values))
    return {"kind": "discrete", "accuracy": accuracy(predicted, truth), "chance": majority_share(train_values, truth),
            "f1": weighted_f1(truth, predicted), "f1_chance": weighted_f1(truth, majority),
            "counts": {str(label): c for label, c in f1_counts(truth, predicted).items()}, "frames": len(truth)}


def majority_class(values: np.ndarray) -> float:
    labels, counts = np.unique(np.asarray(values), return_counts=True)
    return float(labels[np.argmax(counts)])


class ProbingDriver(Driver):
    protocol = "probing"

    def __init__(self, model: Any, benchmark: Any, options: Any, num_frames: int):
        super().__init__(model)
        self.bench, self.options, self.num_frames = benchmark, options, num_frames
        self.variables = tuple(benchmark.state_variables())
        self.discrete = [v.kind == "discrete" for v in self.variables]
        self.probes: list[Any] | None = None

    def _encode(self, frames: Any, states: Any) -> np.ndarray:
        return latent.encode(self.model, frames, np.asarray(states, dtype=np.float64), self.discrete)

    def _encode_episodes(self, episodes: Sequence[Any]) -> list[np.ndarray]:
        """Every episode's latents, the frames of several episodes joined into one ``encode`` call of up
        to ``protocol.encode_frames`` frames (a model reads a batch far faster than many small ones: a
        4096-wide random projection 5× faster), split back per episode."""
        out: list[np.ndarray] = []
        chunk: list[Any] = []
        for episode in [*episodes, None]:
            if episode is not None and (not chunk or sum(len(e.frames) for e in chunk) + len(episode.frames)
                                        <= self.options.encode_frames):
                chunk.append(episode)
                continue
            if chunk:
                z = self._encode(np.concatenate([np.asarray(e.frames) for e in chunk]),
                                 np.concatenate([np.asarray(e.states, dtype=np.float64) for e in chunk]))
                out.extend(np.split(z, np.cumsum([len(e.frames) for e in chunk])[:-1]))
            chunk = [episode] if episode is not None else []
        return out

    def _fit(self) -> None:
        episodes = self.bench.probe_training(self.options.train_episodes, self.num_frames)
        fit = getattr(self.model, "fit", None)
        if callable(fit):  # an unsupervised calibration encoder (pixels_pca): fit on the training pixels
            fit(np.concatenate([e.frames for e in episodes]))
        z = np.concatenate(self._encode_episodes(episodes))
        states = np.concatenate([np.asarray(e.states, dtype=np.float64) for e in episodes])
        groups = np.concatenate([np.full(len(e.frames), i) for i, e in enumerate(episodes)])
        self.train = states
        # RankMe of every training latent (episodes × frames, diverse scenes): a collapse check
        self.rank = effective_rank(z) if np.isfinite(z).all() else None
        alpha = self.options.alpha  # auto: each penalty by cross-validation over training episodes
        self.alphas = choose_alphas(z, states, groups, self.discrete) if alpha == "auto" else \
            [alpha] * len(self.discrete)
        self.probes = fit_ridges(z, states, self.alphas, self.discrete)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        if self.probes is None:
            self._fit()
        episodes = per_sample(self.bench.probe_episode, requests)
        loaded = [e for e in episodes if not isinstance(e, Exception)]
        try:  # one batched encode for the whole batch; a failure is found again per episode below
            latents = dict(zip(map(id, loaded), self._encode_episodes(loaded)))
        except TimeoutError:
            raise
        except Exception:
            latents = {}
        return per_sample(lambda pair: pair[1] if isinstance(pair[1], Exception) else
                          self._run_episode(pair[1], latents.get(id(pair[1]))), list(zip(requests, episodes)))

    def _scores(self, z: np.ndarray, states: np.ndarray) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for j, (variable, predicted) in enumerate(zip(self.variables, self._predict(z))):
            truth = states[:, j]
            if variable.kind == "discrete":
                out[variable.name] = class_scores(predicted, truth, self.train[:, j])
            else:
                variance = float(np.var(self.train[:, j]))
                out[variable.name] = {"kind": "continuous", "r2": r2_term(predicted, truth, variance),
                                      "train_variance": variance, "frames": len(truth)}
        return out

    def _predict(self, z: np.ndarray) -> list[np.ndarray]:
        """Every variable's probe read on latents ``z`` (N×D): values, or class labels."""
        return predict_all(self.probes or [], z)

    def _fit_details(self) -> dict[str, Any]:
        """What the fit chose, into each episode's ``metadata["probing"]``: the ridge penalties."""
        return {"alphas": dict(zip([v.name for v in self.variables], self.alphas))}

    def run_one(self, request: GenerationRequest) -> Any:
        return self._run_episode(self.bench.probe_episode(request))

    def _run_episode(self, episode: Any, z: np.ndarray | None = None) -> Any:
        states = np.asarray(episode.states, dtype=np.float64)
        z = self._encode(episode.frames, states) if z is None else z
        steps = len(z)
        imagined: dict[str, Any] = {}
        for k in self.options.horizons:
            if k >= steps:
                continue
            starts = np.arange(steps - k)
            if getattr(self.model, "imagines_truth", False):  # the oracle predictor: the true future, encoded
                ahead = z[starts + k]
            else:
                actions = np.asarray([list(episode.actions[t:t + k]) for t in starts])
                ahead = latent.predict(self.model, z[starts], actions)[:, -1]
            imagined[str(k)] = self._scores(ahead, states[starts + k])
        readout = np.stack(self._predict(z), axis=1).astype(np.float64)
        info = {"variables": [{"name": v.name, "kind": v.kind} for v in self.variables],
                "observed": self._scores(z, states), "imagined": imagined, "frames": steps,
                "latent_dim": int(z.shape[1]), "effective_rank": self.rank,
                "train_episodes": self.options.train_episodes, **self._fit_details()}
        return Generated({"probe_readout": readout}, {"probing": info, "protocol": self.protocol})
