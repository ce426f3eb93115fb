"""Probes against the exact state (``task=probing``; docs/latent-models.md).

Before the first sample, the driver records ``train_episodes`` training episodes from the
benchmark (seeds disjoint from every evaluation sample's), encodes every frame with the model's
``encode`` (a calibration encoder with ``fit`` is fit on their pixels first) and fits one ridge
probe per state variable the benchmark declares (wfeval/functional/probing.py). Each evaluation
sample is a held-out episode: its frames are encoded and read by the probes (observed), and from
every frame ``t`` the model's ``predict`` imagines ``k`` steps ahead with the true actions
``t..t+k-1``; the probes read the imagined latent against the true state at ``t + k`` (for each
``k`` of ``horizons`` shorter than the episode). The scores per variable, and the effective rank
of the training latents (RankMe, wfeval/functional/rank.py: a collapse check), go to
``result.metadata["probing"]``; the probe metrics (wfeval/metrics/probing.py) read them.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.config.errors import ConfigError
from wfeval.functional.probing import accuracy, choose_alphas, fit_ridges, majority_share, predict_all, r2_term
from wfeval.functional.rank import effective_rank
from wfeval.models import latent
from wfeval.models.protocol import Generated
from wfeval.models.stepping import per_sample
from wfeval.protocols.base import Protocol, ProtocolRun
from wfeval.protocols.drivers import Driver
from wfeval.tasks import probing


class Probing(Protocol):
    """``protocol=probing``: ridge probes from the model's latents to the benchmark's exact state."""

    driver = "probing"
    task_kinds = ("probing",)
    needs_steps = False
    family_need = probing.NEED

    def __init__(self, alpha: Any = "auto", train_episodes: int = 32, horizons: Sequence[int] = (1, 2, 4, 8, 16),
                 encode_frames: int = 512):
        if alpha != "auto" and not (isinstance(alpha, (int, float)) and float(alpha) >= 0):
            raise ConfigError(f"protocol.alpha must be 'auto' or a number >= 0, got {alpha!r}")
        if int(train_episodes) < 2:
            raise ConfigError(f"protocol.train_episodes must be >= 2, got {train_episodes}")
        if not horizons or any(int(k) < 1 for k in horizons):
            raise ConfigError(f"protocol.horizons must be positive step counts, got {list(horizons or [])}")
        if int(encode_frames) < 1:
            raise ConfigError(f"protocol.encode_frames must be >= 1, got {encode_frames}")
        self.alpha, self.train_episodes = alpha if alpha == "auto" else float(alpha), int(train_episodes)
        self.encode_frames = int(encode_frames)
        self.horizons = tuple(sorted({int(k) for k in horizons}))
        self._benchmark: dict[str, Any] = {}

    def identity(self, run: ProtocolRun) -> dict[str, Any]:
        # the training episodes come from the benchmark's seeds: its fingerprint joins the key
        return {**super().identity(run), "alpha": self.alpha, "train_episodes": self.train_episodes,
                "horizons": list(self.horizons), "task_data": run.task.to_dict()["data"],
                "benchmark": self._benchmark}

    def check(self, model: Any, benchmark: Any) -> None:
        if not latent.has_latent_interface(model):
            name = getattr(model, "name", type(model).__name__)
            raise ConfigError(f"task=probing reads a model's latents: model {name!r} has no latent interface "
                              "(encode(frames), predict(z, actions); docs/latent-models.md). The calibration "
                              "encoders are model=state_oracle, model=random_projection and model=pixels_pca")
        super().check(model, benchmark)
        self._benchmark = dict(benchmark.fingerprint())

    def drive(self, model: Any, benchmark: Any, store: Any, run: ProtocolRun, policy: Any = None) -> Any:
        return ProbingDriver(model, benchmark, self, probing.probe_frames(run.task, 17))


class ProbingDriver(Driver):
    protocol = "probing"

    def __init__(self, model: Any, benchmark: Any, options: Probing, num_frames: int):
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
        for j, (variable, predicted) in enumerate(zip(self.variables, predict_all(self.probes or [], z))):
            truth = states[:, j]
            if variable.kind == "discrete":
                out[variable.name] = {"kind": "discrete", "accuracy": accuracy(predicted, truth),
                                      "chance": majority_share(self.train[:, j], truth), "frames": len(truth)}
            else:
                variance = float(np.var(self.train[:, j]))
                out[variable.name] = {"kind": "continuous", "r2": r2_term(predicted, truth, variance),
                                      "train_variance": variance, "frames": len(truth)}
        return out

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
        readout = np.stack(predict_all(self.probes or [], z), axis=1).astype(np.float64)
        info = {"variables": [{"name": v.name, "kind": v.kind} for v in self.variables],
                "observed": self._scores(z, states), "imagined": imagined, "frames": steps,
                "latent_dim": int(z.shape[1]), "effective_rank": self.rank,
                "train_episodes": self.options.train_episodes,
                "alphas": dict(zip([v.name for v in self.variables], self.alphas))}
        return Generated({"probe_readout": readout}, {"probing": info, "protocol": self.protocol})
