#!/usr/bin/env python3
"""A stand-alone program serving wfeval's step interface over JSON lines (needs only numpy).

wfeval starts it once (``model.step_argv=[python,examples/command_model/step_model.py]``) and
writes one JSON message per line to its stdin; it answers each with one JSON line on stdout
(protocol: wfeval/models/command_steps.py, docs/protocols.md):

    {"op": "start", "state": "s1", "request": {...}}             -> {"ok": true}
    {"op": "step", "state": "s1", "new_state": "s2", "actions": [...], "frames_path": "..."}
                                                                  -> {"ok": true}  (+ frames_path.npy)
    {"op": "close"}                                               -> exits

The toy "world model" is the same as model.py's: every action shifts the picture ``--shift``
pixels the way the action's name says. Its state is the last frame; stepping never changes a
state it was given, so wfeval can branch several futures from one state (planning).
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

MOVES = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shift", type=int, default=1)
    args = parser.parse_args()
    states: dict[str, tuple[np.ndarray, list]] = {}  # name -> (last frame, action names)
    for line in sys.stdin:
        message = json.loads(line)
        try:
            if message["op"] == "close":
                return 0
            if message["op"] == "start":
                states.clear()  # wfeval never steps a state from before the latest start again
                request = message["request"]
                image = np.load(request["inputs"]["image"], allow_pickle=False)
                states[message["state"]] = (image, request["controls"].get("action_names") or [])
            elif message["op"] == "step":
                frame, names = states[message["state"]]
                frames = []
                for action in message["actions"]:
                    name = names[action] if isinstance(action, int) and action < len(names) else str(action)
                    dy, dx = MOVES.get(name, (0, 0))
                    frame = np.roll(frame, (dy * args.shift, dx * args.shift), axis=(0, 1))
                    frames.append(frame)
                np.save(message["frames_path"], np.stack(frames).astype(np.uint8))
                states[message["new_state"]] = (frame, names)
            else:
                raise ValueError(f"unknown op {message['op']!r}")
            reply = {"ok": True}
        except Exception as exc:  # noqa: BLE001 - reported to wfeval for this sample
            print(f"step_model: {type(exc).__name__}: {exc}", file=sys.stderr)
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
