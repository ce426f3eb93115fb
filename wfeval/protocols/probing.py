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

from wfeval.config.errors import ConfigError
from wfeval.functional import mlp_probes
from wfeval.models import interfaces
from wfeval.protocols.base import Protocol, ProtocolRun
from wfeval.protocols.probing_atariari import AtariAriDriver
from wfeval.protocols.probing_driver import ProbingDriver
from wfeval.protocols.probing_mlp import MLPProbingDriver
from wfeval.tasks import probing

#: ``protocol.probe``: ridge probes (continuous variables by R², discrete ones by a ridge classifier), small-MLP
#: probes scored the same way (wfeval/protocols/probing_mlp.py), or AtariARI's protocol (probing_atariari.py)
PROBES = ("ridge", "mlp", "atariari")


class Probing(Protocol):
    """``protocol=probing``: ridge probes from the model's latents to the benchmark's exact state."""

    driver = "probing"
    task_kinds = ("probing",)
    needs_steps = False
    family_need = probing.NEED

    def __init__(self, alpha: Any = "auto", train_episodes: int = 32, horizons: Sequence[int] = (1, 2, 4, 8, 16),
                 encode_frames: int = 512, probe: str = "ridge", mlp_hidden: int = 256, mlp_epochs: int = 200,
                 mlp_seed: int = 0):
        if probe not in PROBES:
            raise ConfigError(f"protocol.probe must be one of {', '.join(PROBES)}, got {probe!r}")
        self.probe = probe
        if int(mlp_hidden) < 1 or int(mlp_epochs) < 1:
            raise ConfigError(f"protocol.mlp_hidden and protocol.mlp_epochs must be >= 1, "
                              f"got {mlp_hidden} and {mlp_epochs}")
        self.mlp_hidden, self.mlp_epochs, self.mlp_seed = int(mlp_hidden), int(mlp_epochs), int(mlp_seed)
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
                "benchmark": self._benchmark, **({"probe": self.probe} if self.probe != "ridge" else {}),
                **({"mlp": [self.mlp_hidden, self.mlp_epochs, self.mlp_seed, *mlp_probes.TRAINING]}
                   if self.probe == "mlp" else {})}

    def check(self, model: Any, benchmark: Any) -> None:
        interfaces.require(model, interfaces.LATENT, "task=probing",
                           more=". The calibration encoders are model=state_oracle, model=random_projection and "
                                "model=pixels_pca")
        super().check(model, benchmark)
        benchmark.state_variables()  # a benchmark that cannot name them (a dataset without state) says so now
        self._benchmark = dict(benchmark.fingerprint())

    def drive(self, model: Any, benchmark: Any, store: Any, run: ProtocolRun, policy: Any = None) -> Any:
        driver = {"atariari": AtariAriDriver, "mlp": MLPProbingDriver}.get(self.probe, ProbingDriver)
        return driver(model, benchmark, self, probing.probe_frames(run.task, 17))
