"""Small-MLP probes (``protocol.probe=mlp``; docs/latent-models.md#small-mlp-probes-protocolprobemlp).

One probe per state variable, each a one-hidden-layer MLP (``hidden`` ReLU units) on the latents
standardised by the training statistics (as the ridge probes', :func:`wfeval.functional.probing.standardise`):
a continuous variable is regressed (mean squared error on the variable standardised by its training
mean and deviation, read back in its own units); a discrete one is classified (cross-entropy over the
classes seen in training; the argmax names the class). Every variable's probe lives in one batched
module — the weights stacked ``variables × …``, one forward (two batched products) for all of them —
so a wide latent costs one pass, not one per variable.

Training: Adam, minibatches of :data:`BATCH` frames, at most ``epochs`` epochs, every random draw
(initialisation, shuffling) from one ``torch.Generator`` seeded with ``seed``. Early stopping per
variable on the validation frames (episodes of the training set the probes do not fit on): each
variable keeps the weights of its epoch with the lowest validation loss, and training ends when no
variable has improved for :data:`PATIENCE` epochs. The probes predict in float64 from those weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from wfeval.functional.probing import _features
from wfeval.utils.parallel import one_torch_thread

BATCH = 64
PATIENCE = 20
LEARNING_RATE = 1e-3
#: what else decides the probes' numbers (in the run's identity: a change is a new result, never a cached one)
TRAINING = ("adam", LEARNING_RATE, BATCH, PATIENCE)


@dataclass(frozen=True)
class MLPProbes:
    """Every variable's fitted MLP probe: ``predict_all(z)`` → one array per variable (values or class labels)."""

    mean: np.ndarray
    scale: np.ndarray
    w1: np.ndarray  # variables × D × hidden
    b1: np.ndarray  # variables × hidden
    w2: np.ndarray  # variables × hidden × outputs (the most classes of any variable; 1 for a continuous one)
    b2: np.ndarray  # variables × outputs
    centre: np.ndarray  # per variable: the continuous target's training mean (0 for a discrete one)
    spread: np.ndarray  # per variable: its training deviation (1 for a discrete one)
    classes: tuple  # per variable: the class labels (None for a continuous one)
    best_epochs: tuple  # per variable: the epoch whose weights it keeps (1-based)
    epochs_run: int

    def outputs(self, z: np.ndarray) -> np.ndarray:
        """variables × N × outputs: every probe's raw outputs, one batched forward."""
        x = (np.asarray(z, dtype=np.float64) - self.mean) / self.scale
        hidden = np.maximum(np.einsum("nd,vdh->vnh", x, self.w1) + self.b1[:, None, :], 0.0)
        return np.einsum("vnh,vho->vno", hidden, self.w2) + self.b2[:, None, :]

    def predict_all(self, z: np.ndarray) -> list[np.ndarray]:
        out = self.outputs(z)
        return [out[v, :, 0] * self.spread[v] + self.centre[v] if c is None
                else c[np.argmax(out[v, :, :len(c)], axis=1)] for v, c in enumerate(self.classes)]


def _encode_targets(ys_train: np.ndarray, ys_val: np.ndarray, discrete: Sequence[bool]):
    """Per variable the training targets, validation targets (class indices, −1 for a class never seen in
    training: not in its loss) and the way back: centre, spread, classes."""
    train_t, val_t, centre, spread, classes = [], [], [], [], []
    for j, is_discrete in enumerate(discrete):
        y, yv = ys_train[:, j], ys_val[:, j]
        if is_discrete:
            labels = np.unique(y)
            where = np.searchsorted(labels, yv).clip(0, len(labels) - 1)
            train_t.append(np.searchsorted(labels, y).astype(np.float64))
            val_t.append(np.where(labels[where] == yv, where, -1).astype(np.float64))
            centre.append(0.0), spread.append(1.0), classes.append(labels)
        else:
            mu, sd = float(y.mean()), float(y.std())
            sd = sd if sd > 0 else 1.0
            train_t.append((y - mu) / sd), val_t.append((yv - mu) / sd)
            centre.append(mu), spread.append(sd), classes.append(None)
    return np.stack(train_t, 1), np.stack(val_t, 1), np.array(centre), np.array(spread), tuple(classes)


def fit_mlp_probes(z_train: np.ndarray, ys_train: np.ndarray, z_val: np.ndarray, ys_val: np.ndarray,
                   discrete: Sequence[bool], *, hidden: int = 256, epochs: int = 200, seed: int = 0) -> MLPProbes:
    """One small-MLP probe per column of ``ys_train`` (N × variables) from latents ``z_train`` (N × D),
    trained together in one batched module and each stopped early on ``(z_val, ys_val)``. On one torch
    thread (restored after): the products are small, and torch's own threads only wait on each other
    (10× slower per step on a loaded 2-core machine; the numbers are the same)."""
    with one_torch_thread():
        return _fit(z_train, ys_train, z_val, ys_val, discrete, hidden, epochs, seed)


def _fit(z_train, ys_train, z_val, ys_val, discrete, hidden, epochs, seed) -> MLPProbes:
    import torch

    x, mean, scale = _features(z_train)
    x = x[:, :-1]
    xv = (np.asarray(z_val, dtype=np.float64) - mean) / scale
    if xv.ndim != 2 or len(xv) == 0 or not np.isfinite(xv).all():
        raise ValueError(f"probe: validation latents must be finite M×D with M >= 1, got shape {xv.shape}")
    ys_train = np.asarray(ys_train, dtype=np.float64).reshape(len(x), -1)
    ys_val = np.asarray(ys_val, dtype=np.float64).reshape(len(xv), -1)
    t_train, t_val, centre, spread, classes = _encode_targets(ys_train, ys_val, discrete)
    n_var, width = t_train.shape[1], x.shape[1]
    outputs = max([1] + [len(c) for c in classes if c is not None])
    g = torch.Generator().manual_seed(int(seed))

    def uniform(*shape: int, fan_in: int) -> torch.Tensor:  # torch.nn.Linear's default initialisation
        bound = 1.0 / np.sqrt(fan_in)
        return ((torch.rand(*shape, generator=g, dtype=torch.float32) * 2 - 1) * bound).requires_grad_()

    params = [uniform(n_var, width, hidden, fan_in=width), uniform(n_var, 1, hidden, fan_in=width),
              uniform(n_var, hidden, outputs, fan_in=hidden), uniform(n_var, 1, outputs, fan_in=hidden)]
    is_discrete = torch.tensor(list(discrete), dtype=torch.bool)
    mask = torch.zeros(n_var, 1, outputs)  # a discrete variable's logits beyond its own classes: never chosen
    for v, c in enumerate(classes):
        if c is not None:
            mask[v, 0, len(c):] = -1e9
    x_t, xv_t = torch.tensor(x, dtype=torch.float32), torch.tensor(xv, dtype=torch.float32)
    y_t, yv_t = torch.tensor(t_train, dtype=torch.float32), torch.tensor(t_val, dtype=torch.float32)

    def forward(inputs: torch.Tensor) -> torch.Tensor:  # variables × N × outputs
        h = torch.relu(torch.einsum("nd,vdh->vnh", inputs, params[0]) + params[1])
        return torch.bmm(h, params[2]) + params[3]

    def losses(out: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:  # per variable
        squared = ((out[:, :, 0] - targets.T) ** 2).mean(dim=1)
        index = torch.where(is_discrete[:, None], targets.T, torch.zeros(())).long()  # continuous: unused
        seen = index >= 0
        picked = torch.log_softmax(out + mask, dim=-1).gather(2, index.clamp(min=0)[:, :, None])[:, :, 0]
        entropy = -(picked * seen).sum(dim=1) / seen.sum(dim=1).clamp(min=1)
        return torch.where(is_discrete, entropy, squared)

    optimiser = torch.optim.Adam(params, lr=LEARNING_RATE)
    best = torch.full((n_var,), float("inf"))
    kept = [p.detach().clone() for p in params]
    best_epochs, since, epoch = [0] * n_var, np.zeros(n_var, dtype=int), 0
    has_val = torch.tensor([bool((t_val[:, v] >= 0).any()) or not discrete[v] for v in range(n_var)])
    for epoch in range(1, int(epochs) + 1):
        for batch in torch.randperm(len(x_t), generator=g).split(BATCH):
            optimiser.zero_grad()
            losses(forward(x_t[batch]), y_t[batch]).sum().backward()  # the variables' losses: separate weights
            optimiser.step()
        with torch.no_grad():  # a variable without a scorable validation frame stops on its training loss
            val = torch.where(has_val, losses(forward(xv_t), yv_t), losses(forward(x_t), y_t))
            better = val < best
            best = torch.where(better, val, best)
            for v in torch.nonzero(better).flatten().tolist():
                for k, p in zip(kept, params):
                    k[v] = p.detach()[v]
                best_epochs[v] = epoch
        since = np.where(better.numpy(), 0, since + 1)
        if (since >= PATIENCE).all():
            break
    w1, b1, w2, b2 = (k.double().numpy() for k in kept)
    return MLPProbes(mean=mean, scale=scale, w1=w1, b1=b1[:, 0], w2=w2, b2=b2[:, 0], centre=centre, spread=spread,
                     classes=classes, best_epochs=tuple(best_epochs), epochs_run=epoch)
