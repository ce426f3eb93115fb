"""Training an inverse-dynamics model, deterministically, and its held-out figures.

Each step draws ``batch_size`` transitions (clip, t) uniformly from the training clips; a discrete
IDM minimises the cross-entropy of the action, a continuous one the squared error of the action
standardised by the training actions' mean and spread (kept in the sidecar). AdamW, linear warm-up,
cosine decay; everything seeded and ``torch.use_deterministic_algorithms``; one CPU thread by default
(the same weights on every run of the same torch build). The weights are stored as float16 (a small
file to ship) and the held-out figures are measured with those rounded weights.

Held-out figures: discrete — accuracy, ``majority`` (the share of the most frequent action: the best
constant guess) and the confusion matrix; continuous — R² = 1 − MSE / Var per action element (the
variance of the training actions), averaged over the elements; ``majority`` 0 (the mean's R²).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from wfeval.recipes.idm.data import Clips


@dataclass(frozen=True)
class FitConfig:
    steps: int = 1500
    batch_size: int = 64
    lr: float = 0.001
    weight_decay: float = 0.0001
    seed: int = 0
    threads: int = 1
    log_every: int = 250

    def __post_init__(self) -> None:
        if self.steps < 1 or self.batch_size < 1 or self.threads < 1:
            raise ValueError(f"train.steps, train.batch_size and train.threads must be >= 1, got {self.steps}, "
                             f"{self.batch_size}, {self.threads}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def standardiser(clips: Clips) -> dict[str, list[float]] | None:
    """Mean and spread of each continuous action element (None for discrete actions)."""
    if clips.kind != "continuous":
        return None
    values = np.concatenate([np.asarray(a, np.float64).reshape(len(a), -1) for a in clips.actions])
    std = values.std(axis=0)
    return {"mean": values.mean(axis=0).tolist(), "std": np.where(std > 1e-12, std, 1.0).tolist()}


def _index(clips: Clips) -> np.ndarray:
    return np.array([(c, t) for c, a in enumerate(clips.actions) for t in range(len(a))], dtype=np.int64)


def _batch(clips: Clips, picks: np.ndarray) -> tuple[Any, Any, Any]:
    from wfeval.recipes.idm.net import to_input

    prev = np.stack([clips.videos[c][max(t - 1, 0)] for c, t in picks])
    cur = np.stack([clips.videos[c][t] for c, t in picks])
    nxt = np.stack([clips.videos[c][t + 1] for c, t in picks])
    return to_input(prev), to_input(cur), to_input(nxt)


def fit(clips: Clips, net_config: Any, config: FitConfig, log: Any = None,
        step: Any = None) -> tuple[Any, dict[str, Any]]:
    """(the network with its float16-rounded weights, in eval mode; training figures); ``step()`` is called
    after each training step (a progress bar)."""
    import torch
    import torch.nn.functional as F

    from wfeval.recipes.idm.net import InverseDynamics

    threads = torch.get_num_threads()
    torch.set_num_threads(config.threads)
    try:
        torch.manual_seed(config.seed)
        torch.use_deterministic_algorithms(True, warn_only=True)
        rng = np.random.default_rng(config.seed)
        net = InverseDynamics(net_config)
        opt = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
        warmup = max(1, config.steps // 10)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: (s + 1) / warmup if s < warmup else 0.5 * (
            1 + math.cos(math.pi * (s - warmup) / max(1, config.steps - warmup))))
        index = _index(clips)
        scale = standardiser(clips)
        started, losses, window = time.perf_counter(), [], []
        net.train()
        for k in range(config.steps):
            picks = index[rng.integers(0, len(index), config.batch_size)]
            out = net(*_batch(clips, picks))
            if clips.kind == "discrete":
                target = torch.as_tensor(np.array([clips.actions[c][t] for c, t in picks]), dtype=torch.long)
                loss = F.cross_entropy(out, target)
            else:
                raw = np.stack([np.asarray(clips.actions[c][t], np.float64).reshape(-1) for c, t in picks])
                target = torch.as_tensor((raw - scale["mean"]) / scale["std"], dtype=torch.float32)
                loss = F.mse_loss(out, target)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            window.append(float(loss.detach()))
            if step is not None:
                step()
            if len(window) == config.log_every or k == config.steps - 1:
                losses.append(float(np.mean(window)))
                window = []
                if log:
                    log(f"step {k + 1}/{config.steps}  loss {losses[-1]:.4f}  {time.perf_counter() - started:.1f} s")
        with torch.no_grad():  # the weights as they are shipped: float16
            for p in net.parameters():
                p.copy_(p.half().float())
        net.eval()
        return net, {"losses": losses, "final_loss": losses[-1], "seconds": round(time.perf_counter() - started, 2),
                     "transitions": len(index), "standardiser": scale}
    finally:
        torch.set_num_threads(threads)


def predict(net: Any, video: np.ndarray, standardiser: dict[str, list[float]] | None = None,
            batch: int = 256) -> np.ndarray:
    """The action of every transition of ``video``: ids (discrete) or vectors (continuous, unstandardised)."""
    import torch

    from wfeval.recipes.idm.net import to_input, windows

    prev, cur, nxt = windows(np.asarray(video))
    outs = []
    with torch.inference_mode():
        for i in range(0, len(cur), batch):
            outs.append(net(to_input(prev[i:i + batch]), to_input(cur[i:i + batch]), to_input(nxt[i:i + batch])))
    out = torch.cat(outs).double().numpy() if outs else np.zeros((0, net.config.n_out))
    if net.config.kind == "discrete":
        return out.argmax(axis=1).astype(np.int64)
    return out * np.asarray(standardiser["std"]) + np.asarray(standardiser["mean"])


def evaluate(net: Any, clips: Clips, standardiser: dict[str, list[float]] | None = None) -> dict[str, Any]:
    """Held-out figures of ``net`` on ``clips`` (see the module doc)."""
    from wfeval.functional.controllability import action_r2, majority_rate

    predicted = [predict(net, v, standardiser) for v in clips.videos]
    if clips.kind == "discrete":
        truth = np.concatenate(clips.actions)
        guess = np.concatenate(predicted)
        n = len(clips.action_names)
        confusion = np.zeros((n, n), np.int64)
        np.add.at(confusion, (truth, guess), 1)
        return {"metric": "accuracy", "value": float((truth == guess).mean()), "majority": majority_rate(truth),
                "transitions": int(len(truth)), "confusion": confusion.tolist(),
                "action_names": list(clips.action_names)}
    truth = np.concatenate([np.asarray(a, np.float64).reshape(len(a), -1) for a in clips.actions])
    guess = np.concatenate(predicted)
    return {"metric": "r2", "value": action_r2(guess, truth, np.square(standardiser["std"])), "majority": 0.0,
            "transitions": int(len(truth))}
