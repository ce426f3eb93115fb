#!/usr/bin/env python3
"""A stand-alone inference program for wfeval's ``command`` model adapter (needs only numpy).

wfeval runs it once per batch, without a shell:

    python examples/command_model/model.py REQUESTS_JSONL [--shift N] [--noise SIGMA]

Each line of REQUESTS_JSONL is one sample (see wfeval/models/command.py). For each, this toy
"world model" starts from the initial frame and, for every action, shifts the picture N pixels
the way the action names say (up/down/left/right; anything else keeps it still), adding seeded
Gaussian noise if asked. It writes the video (T×H×W×3 uint8) to ``outputs["generated_video"]`` +
``.npy``. Replace the body of ``predict`` with your model; keep the reading and writing.

Flags for testing failure handling: --fail-on ID (report an error for that sample),
--crash (exit 1 without output), --sleep S (take S seconds first).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

MOVES = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}


def predict(image: np.ndarray, actions: list, action_names: list, seed: int, shift: int, noise: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    frames = [image]
    for action in actions:
        name = action_names[action] if isinstance(action, int) and action < len(action_names) else str(action)
        dy, dx = MOVES.get(name, (0, 0))
        frame = np.roll(frames[-1], (dy * shift, dx * shift), axis=(0, 1))
        frames.append(frame)
    video = np.stack(frames).astype(np.float32)
    if noise > 0:
        video += rng.normal(0.0, noise, size=video.shape)
    return np.clip(np.rint(video), 0, 255).astype(np.uint8)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("requests", nargs="?", default=os.environ.get("WFEVAL_REQUESTS"))
    parser.add_argument("--shift", type=int, default=1)
    parser.add_argument("--noise", type=float, default=0.0)
    parser.add_argument("--fail-on", action="append", default=[])
    parser.add_argument("--crash", action="store_true")
    parser.add_argument("--sleep", type=float, default=0.0)
    args = parser.parse_args()
    if not args.requests:
        parser.error("give the requests file (or set WFEVAL_REQUESTS)")
    time.sleep(args.sleep)
    if args.crash:
        print("simulated crash", file=sys.stderr)
        return 1
    with open(args.requests, encoding="utf-8") as handle:
        samples = [json.loads(line) for line in handle if line.strip()]
    for sample in samples:
        print(f"generating {sample['sample_id']}", file=sys.stderr)
        if sample["sample_id"] in args.fail_on:
            with open(sample["error_path"], "w", encoding="utf-8") as handle:
                handle.write("simulated failure on this sample")
            continue
        image = np.load(sample["inputs"]["image"])
        controls = sample["controls"]
        video = predict(image, controls.get("actions", []), controls.get("action_names", []),
                        sample["generation"].get("seed", 0), args.shift, args.noise)
        np.save(sample["outputs"]["generated_video"] + ".npy", video)
    return 0


if __name__ == "__main__":
    sys.exit(main())
