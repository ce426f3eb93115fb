"""``python -m wfeval.recipes.latency CHECKPOINT``: per-step latency of a recipe checkpoint.

    python -m wfeval.recipes.latency outputs/recipes/gridworld/model.pt --device auto --batch 1 8 32

Times ``step_many`` (one batched forward pass per action, the prediction rounded and fed back,
frames copied to the host) from states built on the frames of a short recorded-free start
(a mid-grey frame: latency does not depend on pixel values), after ``--warmup`` untimed steps.
Prints milliseconds per step and frames per second per batch size, and the game's frame rate
for comparison when the checkpoint's benchmark declares one.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time


def _action(config, k: int):
    """The ``k``-th action of a timing run: ids in turn, or points inside a continuous space's bounds."""
    if config.action_kind != "continuous":
        return k % config.n_actions
    share = (k % 8 + 0.5) / 8
    return [lo + share * (hi - lo) for lo, hi in zip(config.action_low, config.action_high)]


def measure(model, batch: int, steps: int, warmup: int = 3, repeats: int = 5) -> dict:
    import numpy as np

    from wfeval.recipes.learned import LearnedState

    net = model._ready()
    frame = np.full((net.config.height, net.config.width, 3), 128, np.uint8)
    frame.flags.writeable = False
    states = [LearnedState(f"latency-{i}", frame, frame) for i in range(batch)]
    model.step_many(states, [[_action(net.config, 0)] * warmup] * batch)
    times = []
    for r in range(repeats):
        actions = [[_action(net.config, r + k) for k in range(steps)]] * batch
        started = time.perf_counter()
        model.step_many(states, actions)
        times.append((time.perf_counter() - started) / steps)
    per_step = statistics.median(times)
    return {"batch": batch, "ms_per_step": 1000 * per_step, "frames_per_s": batch / per_step}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wfeval.recipes.latency", description=__doc__.split("\n")[0])
    parser.add_argument("checkpoint")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--steps", type=int, default=16)
    args = parser.parse_args(argv)
    from wfeval.config.errors import ConfigError
    from wfeval.recipes.learned import LearnedModel

    model = LearnedModel(args.checkpoint, device=args.device)
    try:
        model.setup()
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    import torch

    print(f"{args.checkpoint} on {model.device} (torch {torch.__version__}, {torch.get_num_threads()} CPU threads)")
    print(f"{'batch':>5}  {'ms/step':>8}  {'frames/s':>9}")
    for batch in args.batch:
        row = measure(model, batch, args.steps)
        print(f"{row['batch']:>5}  {row['ms_per_step']:>8.2f}  {row['frames_per_s']:>9.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
