"""Writes ``tests/support/data/minari_carracing_tiny.tar.gz``: a Minari dataset made by Minari's own
``DataCollector`` (2 episodes of 12 random steps of CarRacing-v3, JPEG-encoded 96×96 frames), with
``minari_decoded.json``: the sha256 of the frames Minari's own ``iterate_episodes`` decodes, and the actions.

wfeval and its tests never import minari; this script needs it, in an environment of its own::

    python3.11 -m venv /tmp/minari-venv
    /tmp/minari-venv/bin/pip install 'minari[create]==0.5.4' 'gymnasium[box2d]' pillow
    /tmp/minari-venv/bin/python tests/support/make_minari_fixture.py tests/support/data
"""

from __future__ import annotations

import os
import sys
import tarfile
import tempfile
from pathlib import Path

DATASET_ID = "wfeval/carracing-tiny-v0"
STEPS = 12


def main(out: Path) -> Path:
    scratch = Path(tempfile.mkdtemp())
    os.environ["MINARI_DATASETS_PATH"] = str(scratch)
    import gymnasium as gym
    import numpy as np
    from minari import DataCollector

    env = DataCollector(gym.make("CarRacing-v3", continuous=True, max_episode_steps=STEPS))
    for seed in (0, 1):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        done = False
        while not done:
            action = rng.uniform([-1, 0, 0], [1, 1, 1]).astype(np.float32)
            _, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
    env.create_dataset(dataset_id=DATASET_ID, algorithm_name="random", author="wfeval tests",
                       author_email="none@example.com", code_permalink="https://example.com",
                       description=f"2 episodes of {STEPS} random CarRacing-v3 steps (wfeval's test data)")
    folder = scratch / DATASET_ID
    import hashlib
    import json

    import minari

    decoded = {}  # what Minari itself reads back: the tests compare wfeval's frames with it
    for episode in minari.load_dataset(DATASET_ID).iterate_episodes():
        frames = np.ascontiguousarray(episode.observations)
        decoded[f"episode_{episode.id}"] = {"shape": list(frames.shape), "dtype": str(frames.dtype),
                                            "sha256": hashlib.sha256(frames.tobytes()).hexdigest(),
                                            "actions": np.asarray(episode.actions).tolist()}
    (folder / "minari_decoded.json").write_text(json.dumps(decoded, indent=1))
    out.mkdir(parents=True, exist_ok=True)
    archive = out / "minari_carracing_tiny.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name in ("data/main_data.hdf5", "data/metadata.json", "minari_decoded.json"):
            tar.add(folder / name, arcname=f"carracing-tiny-v0/{name}")
    return archive


if __name__ == "__main__":
    print(main(Path(sys.argv[1] if len(sys.argv) > 1 else "tests/support/data")))
