"""A :class:`~wfeval.recipes.data.Recording` written to disk, in the formats wfeval reads back.

- :func:`save_arrays` / :func:`load_arrays` — one ``.npz`` (``frames``, ``actions``, ``action_names``,
  ``seeds``, ``info`` as JSON): the recording as it was, for your own training loop;
- :func:`save_hdf5` — robomimic's layout (``data/demo_<k>/obs/<camera>``, ``data/demo_<k>/actions``,
  integer action ids; the ``h5py`` of the ``datasets`` extra), which ``benchmark=hdf5`` reads
  (HDF5 records no frame rate: give ``benchmark.fps``);
- :func:`save_lerobot` — a LeRobot v3.0 dataset (``meta/info.json``, ``meta/episodes/chunk-000/
  file-000.parquet``, ``meta/tasks.parquet``, ``data/chunk-000/file-000.parquet``; the frames as an
  image feature, one PNG per row: lossless; the ``datasets`` extra's pyarrow and Pillow), which
  ``benchmark=lerobot`` reads with the same frames and actions.

A recording has ``steps + 1`` frames and ``steps`` actions per episode (action t leads from frame t to
t+1); the per-frame formats give the last frame the action ``pad_action`` (0), which no window reads.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from wfeval.recipes.data import Recording

CAMERA = "observation.image"
LEROBOT_VERSION = "v3.0"


def save_arrays(rec: Recording, path: str | Path) -> Path:
    """The recording as one compressed ``.npz`` file."""
    from wfeval.storage.safe_io import atomic_write_bytes

    path, buffer = Path(path), io.BytesIO()
    np.savez_compressed(buffer, frames=rec.frames, actions=rec.actions, action_names=np.array(rec.action_names),
                        seeds=np.asarray(rec.seeds, np.int64), info=np.array(json.dumps(rec.info, sort_keys=True)))
    atomic_write_bytes(path, buffer.getvalue())
    return path


def load_arrays(path: str | Path) -> Recording:
    """A recording saved by :func:`save_arrays` (no pickled object is loaded)."""
    with np.load(Path(path), allow_pickle=False) as data:
        return Recording(frames=data["frames"], actions=data["actions"],
                         action_names=tuple(str(n) for n in data["action_names"]),
                         seeds=[int(s) for s in data["seeds"]], info=json.loads(str(data["info"])))


def _padded(actions: np.ndarray, pad_action: int) -> np.ndarray:
    """One action per frame: the episode's ``steps`` actions and ``pad_action`` for its last frame."""
    return np.concatenate([np.asarray(actions, np.int64), np.array([pad_action], np.int64)])


def save_hdf5(rec: Recording, path: str | Path, camera: str = "agentview_image", pad_action: int = 0) -> Path:
    """The recording in robomimic's HDF5 layout (one ``demo_<k>`` group per episode)."""
    import h5py

    from wfeval.storage.safe_io import atomic_target

    path = Path(path)
    with atomic_target(path) as tmp, h5py.File(tmp, "w") as handle:
        data = handle.create_group("data")
        data.attrs["env_args"] = json.dumps({"recorded_by": "wfeval.recipes.data", **rec.info}, sort_keys=True,
                                            default=str)
        for k, (frames, actions) in enumerate(zip(rec.frames, rec.actions)):
            demo = data.create_group(f"demo_{k}")
            demo.create_dataset(f"obs/{camera}", data=np.asarray(frames, np.uint8), compression="gzip")
            demo.create_dataset("actions", data=_padded(actions, pad_action))
            demo.attrs["num_samples"] = len(frames)
    return path


def _png(frame: np.ndarray) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.asarray(frame, np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()


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
    info = {"codebase_version": LEROBOT_VERSION, "robot_type": str(rec.info.get("family") or "simulator"),
            "total_episodes": n_episodes, "total_frames": n_episodes * length, "total_tasks": 1, "chunks_size": 1000,
            "fps": fps, "splits": {"train": f"0:{n_episodes}"}, "data_path": data_path, "video_path": None,
            "features": {CAMERA: {"dtype": "image", "shape": [height, width, 3],
                                  "names": ["height", "width", "channels"]},
                         "action": {"dtype": "int64", "shape": [1], "names": list(rec.action_names)},
                         "timestamp": {"dtype": "float32", **scalar},
                         **{k: {"dtype": "int64", **scalar}
                            for k in ("frame_index", "episode_index", "index", "task_index")}}}
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    columns: dict[str, list[Any]] = {k: [] for k in (CAMERA, "action", "timestamp", "frame_index", "episode_index",
                                                     "index", "task_index")}
    episodes = []
    for k, (frames, actions) in enumerate(zip(rec.frames, rec.actions)):
        first = k * length
        columns[CAMERA] += [{"bytes": _png(f), "path": None} for f in frames]
        columns["action"] += _padded(actions, pad_action).tolist()
        columns["timestamp"] += [t / fps for t in range(length)]
        columns["frame_index"] += list(range(length))
        columns["episode_index"] += [k] * length
        columns["index"] += list(range(first, first + length))
        columns["task_index"] += [0] * length
        episodes.append({"episode_index": k, "tasks": [task], "length": length, "data/chunk_index": 0,
                         "data/file_index": 0, "dataset_from_index": first, "dataset_to_index": first + length,
                         "meta/episodes/chunk_index": 0, "meta/episodes/file_index": 0})
    table = pa.table({CAMERA: pa.array(columns[CAMERA], type=image),
                      "action": pa.array(columns["action"], type=pa.int64()),
                      "timestamp": pa.array(columns["timestamp"], type=pa.float32()),
                      **{key: pa.array(columns[key], type=pa.int64())
                         for key in ("frame_index", "episode_index", "index", "task_index")}})
    parquet(table, data_path.format(chunk_index=0, file_index=0))
    parquet(pa.Table.from_pylist(episodes), "meta/episodes/chunk-000/file-000.parquet")
    parquet(pa.table({"task_index": [0], "task": [task]}), "meta/tasks.parquet")
    # info.json last: the folder is a dataset once it is there
    atomic_write_bytes(root / "meta/info.json", (json.dumps(info, indent=4) + "\n").encode())
    return root
