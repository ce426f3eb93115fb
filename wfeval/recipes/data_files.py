"""A :class:`~wfeval.recipes.data.Recording` written to disk, in the formats wfeval reads back.

- :func:`save_arrays` / :func:`load_arrays` — one ``.npz`` (``frames``, ``actions``, ``action_names``,
  ``seeds``, ``info`` as JSON; ``action_space`` as JSON, ``state`` and ``state_names`` when the
  recording has them): the recording as it was, for your own training loop;
- :func:`save_hdf5` — robomimic's layout (``data/demo_<k>/obs/<camera>``, ``data/demo_<k>/actions``:
  integer action ids, or float32 vectors of a continuous recording; one ``obs/<name>`` of ``T``
  numbers per state variable; the ``h5py`` of the ``datasets`` extra), which ``benchmark=hdf5`` reads
  (HDF5 records no frame rate: give ``benchmark.fps``);
- :func:`save_lerobot` — a LeRobot v3.0 dataset (``meta/info.json``, ``meta/stats.json``,
  ``meta/episodes/chunk-000/file-000.parquet``, ``meta/tasks.parquet``, ``data/chunk-000/file-000.parquet``;
  the frames as an image feature, one PNG per row: lossless; ``action`` an int64 id, or a float32
  vector named by the action names; ``observation.state`` a float32 vector named by the state
  variables when the recording has state; the ``datasets`` extra's pyarrow and Pillow), which
  ``benchmark=lerobot`` reads with the same frames, actions and state.

A recording has ``steps + 1`` frames and ``steps`` actions per episode (action t leads from frame t to
t+1); the per-frame formats give the last frame the action ``pad_action`` (0) — a continuous recording
its last action again — which no window reads.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from wfeval.recipes.data import Recording

CAMERA = "observation.image"
STATE = "observation.state"
LEROBOT_VERSION = "v3.0"


def save_arrays(rec: Recording, path: str | Path) -> Path:
    """The recording as one compressed ``.npz`` file."""
    from wfeval.storage.safe_io import atomic_write_bytes

    path, buffer = Path(path), io.BytesIO()
    extra: dict[str, Any] = {}
    if rec.action_space is not None:
        extra["action_space"] = np.array(json.dumps(rec.action_space, sort_keys=True))
    if rec.state is not None:
        extra.update(state=np.asarray(rec.state), state_names=np.array(rec.state_names, dtype=str))
    np.savez_compressed(buffer, frames=rec.frames, actions=rec.actions, action_names=np.array(rec.action_names),
                        seeds=np.asarray(rec.seeds, np.int64), info=np.array(json.dumps(rec.info, sort_keys=True)),
                        **extra)
    atomic_write_bytes(path, buffer.getvalue())
    return path


def load_arrays(path: str | Path) -> Recording:
    """A recording saved by :func:`save_arrays` (no pickled object is loaded)."""
    with np.load(Path(path), allow_pickle=False) as data:
        space = json.loads(str(data["action_space"])) if "action_space" in data.files else None
        state = data["state"] if "state" in data.files else None
        names = tuple(str(n) for n in data["state_names"]) if "state_names" in data.files else ()
        return Recording(frames=data["frames"], actions=data["actions"],
                         action_names=tuple(str(n) for n in data["action_names"]),
                         seeds=[int(s) for s in data["seeds"]], info=json.loads(str(data["info"])),
                         action_space=space, state=state, state_names=names)


def _padded(rec: Recording, actions: np.ndarray, pad_action: int) -> np.ndarray:
    """One action per frame: the episode's ``steps`` actions and, for its last frame, ``pad_action``
    (a continuous recording: its last action again)."""
    if rec.is_continuous:
        actions = np.asarray(actions, np.float32)
        return np.concatenate([actions, actions[-1:]])
    return np.concatenate([np.asarray(actions, np.int64), np.array([pad_action], np.int64)])


def save_hdf5(rec: Recording, path: str | Path, camera: str = "agentview_image", pad_action: int = 0) -> Path:
    """The recording in robomimic's HDF5 layout (one ``demo_<k>`` group per episode)."""
    import h5py

    from wfeval.storage.safe_io import atomic_target

    path = Path(path)
    if camera in rec.state_names:
        raise ValueError(f"save_hdf5: the camera key {camera!r} is also a state variable's name")
    with atomic_target(path) as tmp, h5py.File(tmp, "w") as handle:
        data = handle.create_group("data")
        data.attrs["env_args"] = json.dumps({"recorded_by": "wfeval.recipes.data", **rec.info}, sort_keys=True,
                                            default=str)
        for k, (frames, actions) in enumerate(zip(rec.frames, rec.actions)):
            demo = data.create_group(f"demo_{k}")
            demo.create_dataset(f"obs/{camera}", data=np.asarray(frames, np.uint8), compression="gzip")
            for i, name in enumerate(rec.state_names if rec.state is not None else ()):
                demo.create_dataset(f"obs/{name}", data=np.asarray(rec.state[k, :, i]))
            demo.create_dataset("actions", data=_padded(rec, actions, pad_action))
            demo.attrs["num_samples"] = len(frames)
    return path


def _png(frame: np.ndarray) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.asarray(frame, np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()


def _stats(values: np.ndarray) -> dict[str, list]:
    """LeRobot's statistics (``meta/stats.json``) of a vector feature: per element, over every frame."""
    values = np.asarray(values, np.float64).reshape(-1, np.shape(values)[-1])
    return {"min": values.min(axis=0).tolist(), "max": values.max(axis=0).tolist(),
            "mean": values.mean(axis=0).tolist(), "std": values.std(axis=0).tolist(), "count": [len(values)]}


def _image_stats(frames: np.ndarray) -> dict[str, list]:
    """An image feature's statistics as LeRobot keeps them: per channel (3×1×1), pixels in [0, 1]."""
    total, squares, n = np.zeros(3), np.zeros(3), 0
    for clip in frames:  # one episode at a time: a float copy of every frame at once would be large
        pixels = clip.reshape(-1, 3).astype(np.float64) / 255.0
        total, squares, n = total + pixels.sum(axis=0), squares + (pixels ** 2).sum(axis=0), n + len(pixels)
    mean = total / n
    rows = {"min": frames.min(axis=(0, 1, 2, 3)) / 255.0, "max": frames.max(axis=(0, 1, 2, 3)) / 255.0, "mean": mean,
            "std": np.sqrt(np.maximum(squares / n - mean ** 2, 0.0))}
    return {**{k: [[[float(x)]] for x in v] for k, v in rows.items()}, "count": [int(frames.shape[0] * frames.shape[1])]}


def save_lerobot(rec: Recording, root: str | Path, fps: float, task: str | None = None,
                 pad_action: int = 0) -> Path:
    """The recording as a LeRobot v3.0 dataset folder (one data file, the frames as PNG images)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from wfeval.storage.safe_io import atomic_target, atomic_write_bytes

    def parquet(table: Any, rel: str) -> None:
        with atomic_target(root / rel) as tmp:
            pq.write_table(table, tmp)

    root = Path(root)
    n_episodes, length = int(rec.frames.shape[0]), int(rec.frames.shape[1])
    height, width = int(rec.frames.shape[2]), int(rec.frames.shape[3])
    task = task or f"{rec.info.get('benchmark', 'recorded')} episodes recorded by wfeval.recipes.data"
    data_path = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
    scalar = {"shape": [1], "names": None}
    actions = np.stack([_padded(rec, a, pad_action) for a in rec.actions])  # episodes × length (× D)
    vectors = {"action": actions} if rec.is_continuous else {}
    if rec.state is not None:
        vectors[STATE] = np.asarray(rec.state, np.float32)
    names = {"action": list(rec.action_names), STATE: list(rec.state_names)}
    ids = {} if rec.is_continuous else {"action": actions.reshape(-1)}  # a discrete recording's int64 ids
    features = {CAMERA: {"dtype": "image", "shape": [height, width, 3], "names": ["height", "width", "channels"]},
                **{k: {"dtype": "int64", "shape": [1], "names": list(rec.action_names)} for k in ids},
                **{k: {"dtype": "float32", "shape": [int(v.shape[-1])], "names": names[k]} for k, v in vectors.items()},
                "timestamp": {"dtype": "float32", **scalar},
                **{k: {"dtype": "int64", **scalar} for k in ("frame_index", "episode_index", "index", "task_index")}}
    info = {"codebase_version": LEROBOT_VERSION, "robot_type": str(rec.info.get("family") or "simulator"),
            "total_episodes": n_episodes, "total_frames": n_episodes * length, "total_tasks": 1, "chunks_size": 1000,
            "fps": fps, "splits": {"train": f"0:{n_episodes}"}, "data_path": data_path, "video_path": None,
            "features": features}
    rows = np.arange(n_episodes * length)
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    columns = {CAMERA: pa.array([{"bytes": _png(f), "path": None} for f in rec.frames.reshape(-1, height, width, 3)],
                                type=image),
               **{k: pa.array(v, type=pa.int64()) for k, v in ids.items()},
               **{k: pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1), type=pa.float32()), int(v.shape[-1]))
                  for k, v in vectors.items()},
               "timestamp": pa.array((rows % length) / fps, type=pa.float32()),
               "frame_index": pa.array(rows % length, type=pa.int64()),
               "episode_index": pa.array(rows // length, type=pa.int64()),
               "index": pa.array(rows, type=pa.int64()), "task_index": pa.array(np.zeros_like(rows), type=pa.int64())}
    episodes = [{"episode_index": k, "tasks": [task], "length": length, "data/chunk_index": 0,
                 "data/file_index": 0, "dataset_from_index": k * length, "dataset_to_index": (k + 1) * length,
                 "meta/episodes/chunk_index": 0, "meta/episodes/file_index": 0} for k in range(n_episodes)]
    parquet(pa.table(columns), data_path.format(chunk_index=0, file_index=0))
    parquet(pa.Table.from_pylist(episodes), "meta/episodes/chunk-000/file-000.parquet")
    parquet(pa.table({"task_index": [0], "task": [task]}), "meta/tasks.parquet")
    stats = {CAMERA: _image_stats(rec.frames), **{k: _stats(v) for k, v in vectors.items()}}
    atomic_write_bytes(root / "meta/stats.json", (json.dumps(stats, indent=4) + "\n").encode())
    # info.json last: the folder is a dataset once it is there
    atomic_write_bytes(root / "meta/info.json", (json.dumps(info, indent=4) + "\n").encode())
    return root
