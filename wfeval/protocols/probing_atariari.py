"""``protocol.probe=atariari``: probes as AtariARI (Anand et al. 2019) fits and scores them, so that a
probe table can be set beside the paper's (docs/latent-models.md#the-atariari-protocol).

- **Splits**: the ``protocol.train_episodes`` training episodes are dealt 7 : 1 into training and
  validation (AtariARI's 70 % and 10 %); the evaluation samples are the test episodes (its 20 %:
  ``benchmark.num_samples`` of a quarter of ``train_episodes``'s count for the paper's proportions).
- **Near-constant variables dropped**: a variable whose values over the training and validation
  frames have an entropy below :data:`ENTROPY_THRESHOLD` nats is not probed (named, with its
  entropy, in ``metadata["probing"]["atariari"]["dropped"]``).
- **Duplicate frames removed**: an evaluation frame equal (byte for byte) to a training or
  validation frame is not scored (counted in ``duplicates_removed``).
- **Probes**: every kept variable is read as classes (its values: a RAM byte, up to 256 classes) by
  a multinomial logistic regression on the standardised latents
  (:func:`wfeval.functional.probe_classifiers.fit_logistic`), its L2 penalty chosen by the
  validation frames' weighted F1; scored by weighted F1 (``probe_f1``) and accuracy
  (``probe_accuracy``), chance beside each. Observed frames only: AtariARI imagines nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from wfeval.functional.probe_classifiers import choose_penalty, entropy_nats, frame_digests
from wfeval.models import latent
from wfeval.models.protocol import Generated
from wfeval.protocols.probing_driver import ProbingDriver, class_scores
from wfeval.utils.parallel import map_blas

#: AtariARI's ``get_episodes`` default (``entropy_threshold=0.6``, in nats: a categorical's entropy)
ENTROPY_THRESHOLD = 0.6
VALIDATION_SHARE = 1 / 8  # 10 of the 80 % that are not test
NOT_IMAGINED = "protocol.probe=atariari scores observed frames only (AtariARI imagines nothing)"


def split_counts(count: int) -> tuple[int, int]:
    """(training, validation) episodes of ``count``: at least one validation episode, at least one training one."""
    validation = min(max(1, round(count * VALIDATION_SHARE)), count - 1)
    return count - validation, validation


class AtariAriDriver(ProbingDriver):
    protocol = "probing"

    def _encode(self, frames: Any, states: Any) -> np.ndarray:  # every variable is read as classes
        return latent.encode(self.model, frames, np.asarray(states, dtype=np.float64), [True] * len(self.variables))

    def _fit(self) -> None:
        episodes = self.bench.probe_training(self.options.train_episodes, self.num_frames)
        fit = getattr(self.model, "fit", None)
        n_train, n_val = split_counts(len(episodes))
        if callable(fit):  # an unsupervised calibration encoder (pixels_pca): fit on the training pixels only
            fit(np.concatenate([e.frames for e in episodes[:n_train]]))
        z = self._encode_episodes(episodes)
        states = [np.asarray(e.states, dtype=np.float64) for e in episodes]
        seen = np.concatenate(states)
        fractional = [v.name for j, v in enumerate(self.variables) if not np.all(seen[:, j] == np.round(seen[:, j]))]
        if fractional:
            raise ValueError(f"protocol.probe=atariari reads every variable as classes (RAM bytes); "
                             f"{', '.join(fractional)} take non-integer values: use the ridge probes "
                             "(protocol.probe=ridge)")
        z_train, z_val = np.concatenate(z[:n_train]), np.concatenate(z[n_train:])
        y_train, y_val = np.concatenate(states[:n_train]), np.concatenate(states[n_train:])
        self.train = y_train
        self.seen = set(d for e in episodes for d in frame_digests(np.asarray(e.frames)))
        self.entropies = {v.name: entropy_nats(seen[:, j]) for j, v in enumerate(self.variables)}
        self.kept = [j for j, v in enumerate(self.variables) if self.entropies[v.name] >= ENTROPY_THRESHOLD]
        # one variable per worker, one BLAS thread each: small solves, where BLAS's own threads only wait
        # (scipy's own BLAS is loaded first, or the limit would not reach it: 30× slower on a busy machine)
        import scipy.optimize  # noqa: F401

        fits = map_blas(lambda j: choose_penalty(z_train, y_train[:, j], z_val, y_val[:, j]), self.kept)
        self.penalties = {self.variables[j].name: penalty for j, (penalty, _) in zip(self.kept, fits)}
        self.probes = [probe for _, probe in fits]
        self.alphas = [self.penalties.get(v.name) for v in self.variables]
        self.split = {"train": n_train, "validation": n_val, "train_frames": len(y_train),
                      "validation_frames": len(y_val)}

    def _run_episode(self, episode: Any, z: np.ndarray | None = None) -> Any:
        states = np.asarray(episode.states, dtype=np.float64)
        frames = np.asarray(episode.frames)
        z = self._encode(frames, states) if z is None else z
        fresh = np.array([d not in self.seen for d in frame_digests(frames)], dtype=bool)
        observed: dict[str, Any] = {}
        for j, probe in zip(self.kept, self.probes or []):
            name = self.variables[j].name
            observed[name] = class_scores(probe.predict(z[fresh]), states[fresh, j], self.train[:, j]) \
                if fresh.any() else {"kind": "discrete", "frames": 0}
        readout = np.stack([p.predict(z) for p in self.probes or []], axis=1).astype(np.float64) if self.probes \
            else np.zeros((len(z), 0))
        dropped = {v.name: self.entropies[v.name] for j, v in enumerate(self.variables) if j not in self.kept}
        info = {"variables": [{"name": v.name, "kind": "discrete"} for v in self.variables],
                "observed": observed, "imagined": {}, "imagined_skipped": NOT_IMAGINED, "frames": len(z),
                "latent_dim": int(z.shape[1]), "train_episodes": self.options.train_episodes,
                "alphas": {n: p for n, p in self.penalties.items()},
                "atariari": {"split": self.split, "dropped": dropped, "entropy_threshold": ENTROPY_THRESHOLD,
                             "duplicates_removed": int((~fresh).sum()), "frames_scored": int(fresh.sum()),
                             "penalties": self.penalties}}
        return Generated({"probe_readout": readout}, {"probing": info, "protocol": self.protocol})
