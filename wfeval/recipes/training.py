"""Training loop of the recipe: teacher-forced steps plus short autoregressive unrolls.

Each step draws ``batch_size`` windows (episode, start) of ``unroll`` actions from the recording,
predicts the frames one after another, feeding each prediction back as the next input (as the
model runs at evaluation time), and minimises the mean squared error against the recorded
frames, plus ``gate_weight`` × the binary cross-entropy of the gate against the pixels that
really change between the recorded frames (more than ``CHANGE_LEVELS`` uint8 levels in some channel): a gate that is shut
where nothing moves keeps the background exact over a long rollout, which a squared error alone
teaches slowly. At a window's first step of an episode the previous frame is the current one, as when
the model starts from a single context frame. Everything is seeded: the same config and data
give the same weights (``torch.use_deterministic_algorithms``), up to the thread count.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from wfeval.recipes.data import Recording
from wfeval.recipes.net import FramePredictor, NetConfig, to_input

CHANGE_LEVELS = 2.0  # a pixel "changes" when some channel moves by more than this many uint8 levels


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 1000
    batch_size: int = 16
    lr: float = 2e-3
    weight_decay: float = 0.0
    unroll: int = 2
    gate_weight: float = 0.1
    seed: int = 0
    log_every: int = 100


@dataclass
class TrainResult:
    net: FramePredictor
    losses: list[float] = field(default_factory=list)  # mean loss per log_every steps
    final_loss: float = math.nan  # mean over the last log_every steps
    seconds: float = 0.0  # wall-clock
    cpu_seconds: float = 0.0  # CPU time of this process (all threads): comparable on a shared machine
    threads: int = 1


def train(data: Recording, net_config: NetConfig, config: TrainConfig, *, device: str = "cpu",
          log: Any = None) -> TrainResult:
    if config.steps < 1 or config.batch_size < 1:
        raise ValueError(f"train.steps and train.batch_size must be >= 1, got {config.steps} and {config.batch_size}")
    torch.manual_seed(config.seed)
    torch.use_deterministic_algorithms(True, warn_only=True)
    rng = np.random.default_rng(config.seed)
    net = FramePredictor(net_config).to(device)
    opt = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    warmup = max(1, config.steps // 10)  # linear warm-up, then a cosine decay to zero

    def schedule(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, config.steps - warmup)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule)
    episodes, length = data.actions.shape[:2]
    unroll = max(1, min(config.unroll, length))
    frames = torch.from_numpy(data.frames)
    actions = torch.from_numpy(np.ascontiguousarray(data.actions))
    if net_config.action_kind == "continuous":  # episodes × steps × elements, in the action space's units
        actions = actions.reshape(episodes, length, -1).float()
    started, cpu_started = time.perf_counter(), time.process_time()
    losses, window = [], []
    net.train()
    for step in range(config.steps):
        ep = torch.from_numpy(rng.integers(0, episodes, config.batch_size))
        t0 = torch.from_numpy(rng.integers(0, length - unroll + 1, config.batch_size))
        previous = to_input(frames[ep, (t0 - 1).clamp(min=0)], device)
        current = to_input(frames[ep, t0], device)
        loss = torch.zeros((), device=device)
        for k in range(unroll):
            target = to_input(frames[ep, t0 + k + 1], device)
            pred, logits = net(previous, current, actions[ep, t0 + k].to(device), with_gate=True)
            loss = loss + torch.mean((pred - target) ** 2)
            if config.gate_weight:  # the true change (recorded frames), not the drift of a fed-back prediction
                truth = to_input(frames[ep, t0 + k], device)
                changed = ((target - truth).abs().amax(dim=1, keepdim=True) > CHANGE_LEVELS / 127.5).float()
                loss = loss + config.gate_weight * F.binary_cross_entropy_with_logits(logits, changed)
            previous, current = current, pred
        loss = loss / unroll
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        window.append(float(loss.detach()))
        if len(window) == config.log_every or step == config.steps - 1:
            losses.append(float(np.mean(window)))
            if log:
                log(f"step {step + 1}/{config.steps}  loss {losses[-1]:.5f}  {time.perf_counter() - started:.1f} s")
            window = []
    net.eval()
    return TrainResult(net=net, losses=losses, final_loss=losses[-1], seconds=time.perf_counter() - started,
                       cpu_seconds=time.process_time() - cpu_started, threads=torch.get_num_threads())
