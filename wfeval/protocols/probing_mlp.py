"""``protocol.probe=mlp``: small-MLP probes in place of the ridge ones (Memory Maze's probing is by an MLP;
docs/latent-models.md#small-mlp-probes-protocolprobemlp).

The ``protocol.train_episodes`` training episodes are dealt 7 : 1 into the episodes the probes fit on and
the validation episodes their early stopping reads (:func:`~wfeval.protocols.probing_atariari.split_counts`);
one batched module holds every variable's probe (:func:`wfeval.functional.mlp_probes.fit_mlp_probes`:
``protocol.mlp_hidden`` ReLU units, at most ``protocol.mlp_epochs`` epochs, seeded by
``protocol.mlp_seed``). Everything else is the ridge path's (:class:`ProbingDriver`): the held-out
episodes, observed and imagined, scored by R² (continuous) and accuracy / F1 (discrete), chance and
ceiling beside them, both against the statistics of all the training episodes (validation included, as
the ridge probes' are), so a ridge run and an MLP run of the same size share their chance levels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from wfeval.functional.mlp_probes import fit_mlp_probes
from wfeval.functional.rank import effective_rank
from wfeval.protocols.probing_atariari import split_counts
from wfeval.protocols.probing_driver import ProbingDriver


class MLPProbingDriver(ProbingDriver):
    protocol = "probing"

    def _fit(self) -> None:
        episodes = self.bench.probe_training(self.options.train_episodes, self.num_frames)
        n_train, n_val = split_counts(len(episodes))
        fit = getattr(self.model, "fit", None)
        if callable(fit):  # an unsupervised calibration encoder (pixels_pca): fit on the probes' training pixels
            fit(np.concatenate([e.frames for e in episodes[:n_train]]))
        z = self._encode_episodes(episodes)
        states = [np.asarray(e.states, dtype=np.float64) for e in episodes]
        self.train = np.concatenate(states)
        every = np.concatenate(z)
        self.rank = effective_rank(every) if np.isfinite(every).all() else None
        self.alphas = [None] * len(self.variables)
        self.probes = fit_mlp_probes(np.concatenate(z[:n_train]), np.concatenate(states[:n_train]),
                                     np.concatenate(z[n_train:]), np.concatenate(states[n_train:]), self.discrete,
                                     hidden=self.options.mlp_hidden, epochs=self.options.mlp_epochs,
                                     seed=self.options.mlp_seed)
        self.split = {"train": n_train, "validation": n_val}

    def _predict(self, z: np.ndarray) -> list[np.ndarray]:
        return self.probes.predict_all(z)

    def _fit_details(self) -> dict[str, Any]:
        probes = self.probes
        return {"mlp": {"hidden": self.options.mlp_hidden, "epochs": self.options.mlp_epochs,
                        "seed": self.options.mlp_seed, "split": self.split, "epochs_run": probes.epochs_run,
                        "best_epoch": dict(zip([v.name for v in self.variables], probes.best_epochs))}}
