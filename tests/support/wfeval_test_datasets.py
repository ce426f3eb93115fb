"""One small continuous-control dataset written in four formats: LeRobot v3, HDF5 (robomimic), video +
npy pairs and a wfeval dataset folder; plus a model that returns the reference shifted by a constant.

The episodes: a square on a gradient moved by 2-D velocity actions in [-1, 1] (action t moves frame t
to t+1), 48×64, 10 fps, every pixel value within [40, 215] so that a shift of up to 40 levels (and a
lossy codec's error) never clips.

LeRobot: written by this script, following the published v3.0 layout (LeRobot 0.4.4,
``lerobot/datasets/utils.py`` and ``lerobot_dataset.py``: ``meta/info.json`` fields, ``data/`` and
``meta/episodes/`` parquet columns, episode index ranges, ``videos/<key>/chunk-XXX/file-XXX.mp4`` holding
episodes one after another located by ``from_timestamp``/``to_timestamp``), because ``lerobot`` itself
pulls torchvision, which cannot be installed here. Its video is AV1 (``libsvtav1``, LeRobot's default;
PyAV's wheel encodes it and decodes it with libdav1d). HDF5: written with the real h5py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

H, W, FPS, LENGTH, EPISODES = 48, 64, 10, 40, 2
CAMERA = "observation.images.front"
TASKS = ("push the square right", "push the square left")
ACTION_SPACE = {"shape": [2], "dtype": "float32", "low": -1.0, "high": 1.0, "names": ["vx", "vy"]}


def episode(index: int, length: int = LENGTH) -> tuple[np.ndarray, np.ndarray]:
    """(frames T×H×W×3 uint8, actions T×2 float32): the last action is taken after the last frame."""
    frames, actions, _ = square_episode(index, length)
    return frames, actions


def square_states(index: int, length: int = LENGTH) -> np.ndarray:
    """The square's exact position ``[y, x]`` (pixels, its top-left corner before rounding) in every frame
    of :func:`episode`: T×2 float32, what the datasets record as ``observation.state``."""
    return square_episode(index, length)[2]


def square_episode(index: int, length: int = LENGTH) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(frames, actions, states) of episode ``index``: :func:`episode` and :func:`square_states`."""
    rng = np.random.default_rng(100 + index)
    actions = rng.uniform(-1, 1, (length, 2)).astype(np.float32)
    yy, xx = np.mgrid[0:H, 0:W]
    background = np.stack([40 + 120 * xx / W, 40 + 120 * yy / H, np.full((H, W), 90.0 + 20 * index)], -1)
    pos = np.array([H / 2 - 4, W / 2 - 4])
    frames, states = [], []
    for t in range(length):
        frame = background.copy()
        y, x = np.clip(np.rint(pos), 0, [H - 8, W - 8]).astype(int)
        frame[y:y + 8, x:x + 8] = (215, 60, 60)
        frames.append(np.clip(np.rint(frame), 40, 215).astype(np.uint8))
        states.append(pos.copy())
        pos = np.clip(pos + 3 * actions[t][::-1], 0, [H - 8, W - 8])
    return np.stack(frames), actions, np.asarray(states, dtype=np.float32)


def episodes(n: int = EPISODES) -> list[tuple[np.ndarray, np.ndarray]]:
    return [episode(i) for i in range(n)]


# -- LeRobot v3.0 ----------------------------------------------------------------------------------


def encode(path: Path, frames: np.ndarray, fps: int = FPS, codec: str = "libsvtav1") -> None:
    """Frames into an mp4 the way LeRobot's ``encode_video_frames`` does (yuv420p, g=2, crf=30).

    SVT-AV1 runs on one thread (``lp=1``): with its default thread pool on a loaded machine it once
    handed the muxer a packet whose timestamp did not increase, and the mux failed with EINVAL (a CI
    run; the class of failure HandBrake#5075 reports for SVT-AV1). If the muxer still refuses a packet,
    the file is encoded again from scratch, twice at most; the third failure is raised."""
    import av

    os.environ.setdefault("SVT_LOG", "1")  # SVT-AV1 prints its banner on stderr otherwise
    path.parent.mkdir(parents=True, exist_ok=True)
    options = {"g": "2", "crf": "30"} if codec in ("libsvtav1", "libx264") else {}
    if codec == "libsvtav1":
        options.update({"preset": "12", "svtav1-params": "lp=1"})
    for attempt in range(3):
        try:
            return _encode_once(av, path, frames, fps, codec, options)
        except av.error.ArgumentError:
            path.unlink(missing_ok=True)
            if attempt == 2:
                raise


def _encode_once(av, path: Path, frames: np.ndarray, fps: int, codec: str, options: dict) -> None:
    with av.open(str(path), "w") as container:
        stream = container.add_stream(codec, rate=fps, options=options)
        stream.width, stream.height, stream.pix_fmt = frames.shape[2], frames.shape[1], "yuv420p"
        for frame in frames:
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def write_lerobot(root: Path, data: list[tuple[np.ndarray, np.ndarray]] | None = None, *,
                  codec: str = "libsvtav1", images: bool = False, splits: dict[str, str] | None = None,
                  states: list[np.ndarray] | None = None) -> Path:
    """A LeRobot v3.0 dataset: every episode in one data file and one video file (as LeRobot writes
    small datasets), located by index ranges and timestamps. ``images``: the camera is an image
    feature instead (``LeRobotDataset.create(use_videos=False)``): no video, ``video_path`` null, each
    data row holds the frame as HF datasets' ``Image`` struct ``{bytes, path}`` of PNG bytes
    (LeRobot 0.4.4: ``image_writer.write_image`` saves PNGs with Pillow, ``embed_images`` embeds them)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = data or episodes()
    root = Path(root)
    data_path = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
    video_path = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
    total = sum(len(f) for f, _ in data)
    info = {
        "codebase_version": "v3.0", "robot_type": "square_pusher", "total_episodes": len(data),
        "total_frames": total, "total_tasks": len(data), "chunks_size": 1000, "data_files_size_in_mb": 100,
        "video_files_size_in_mb": 200, "fps": FPS, "splits": splits or {"train": f"0:{len(data)}"},
        "data_path": data_path, "video_path": video_path,
        "features": {
            CAMERA: {"dtype": "video", "shape": [H, W, 3], "names": ["height", "width", "channels"],
                     "info": {"video.height": H, "video.width": W, "video.codec": "av1" if codec == "libsvtav1"
                              else codec, "video.pix_fmt": "yuv420p", "video.is_depth_map": False, "video.fps": FPS,
                              "video.channels": 3, "has_audio": False}},
            "observation.state": {"dtype": "float32", "shape": [2], "names": ["y", "x"]},
            "action": {"dtype": "float32", "shape": [2], "names": ["vx", "vy"]},
            "timestamp": {"dtype": "float32", "shape": [1], "names": None},
            "frame_index": {"dtype": "int64", "shape": [1], "names": None},
            "episode_index": {"dtype": "int64", "shape": [1], "names": None},
            "index": {"dtype": "int64", "shape": [1], "names": None},
            "task_index": {"dtype": "int64", "shape": [1], "names": None},
        },
    }
    if images:
        info["features"][CAMERA] = {"dtype": "image", "shape": [H, W, 3], "names": ["height", "width", "channels"]}
        info["video_path"], info["total_videos"] = None, 0
    (root / "meta").mkdir(parents=True, exist_ok=True)
    (root / "meta" / "info.json").write_text(json.dumps(info, indent=4))
    columns: dict[str, list] = {k: [] for k in ("action", "observation.state", "timestamp", "frame_index",
                                                "episode_index", "index", "task_index")}
    rows, start, offset = [], 0, 0.0
    for i, (frames, actions) in enumerate(data):
        n = len(frames)
        columns["action"] += actions.tolist()
        columns["observation.state"] += states[i].tolist() if states is not None else [[0.0, 0.0]] * n
        columns["timestamp"] += [k / FPS for k in range(n)]
        columns["frame_index"] += list(range(n))
        columns["episode_index"] += [i] * n
        columns["index"] += list(range(start, start + n))
        columns["task_index"] += [i] * n
        duration = n / FPS
        rows.append({"episode_index": i, "tasks": [TASKS[i % len(TASKS)]], "length": n,
                     "data/chunk_index": 0, "data/file_index": 0, "dataset_from_index": start,
                     "dataset_to_index": start + n, f"videos/{CAMERA}/chunk_index": 0,
                     f"videos/{CAMERA}/file_index": 0, f"videos/{CAMERA}/from_timestamp": offset,
                     f"videos/{CAMERA}/to_timestamp": offset + duration, "meta/episodes/chunk_index": 0,
                     "meta/episodes/file_index": 0,
                     "stats/action/min": actions.min(0).tolist(), "stats/action/max": actions.max(0).tolist()})
        if images:
            rows[-1] = {k: v for k, v in rows[-1].items() if not k.startswith("videos/")}
        start, offset = start + n, offset + duration
    vec = pa.list_(pa.float32(), 2)
    width = len(columns["action"][0])
    table = pa.table({
        "action": pa.array(columns["action"], type=pa.list_(pa.float32(), width)),
        "observation.state": pa.array(columns["observation.state"], type=vec),
        "timestamp": pa.array(columns["timestamp"], type=pa.float32()),
        **{k: pa.array(columns[k], type=pa.int64()) for k in ("frame_index", "episode_index", "index", "task_index")},
    })
    if images:
        table = table.append_column(CAMERA, pa.array(
            [{"bytes": _png(frame), "path": f"frame_{k:06d}.png"} for frames, _ in data for k, frame in
             enumerate(frames)], type=pa.struct([("bytes", pa.binary()), ("path", pa.string())])))
    (root / "data" / "chunk-000").mkdir(parents=True, exist_ok=True)
    pq.write_table(table, root / data_path.format(chunk_index=0, file_index=0), compression="snappy")
    (root / "meta" / "episodes" / "chunk-000").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), root / "meta" / "episodes" / "chunk-000" / "file-000.parquet")
    pq.write_table(pa.table({"task_index": list(range(len(data))),
                             "task": [TASKS[i % len(TASKS)] for i in range(len(data))]}), root / "meta" / "tasks.parquet")
    every = np.concatenate([a for _, a in data])
    (root / "meta" / "stats.json").write_text(json.dumps({"action": {
        "min": every.min(0).tolist(), "max": every.max(0).tolist(), "mean": every.mean(0).tolist(),
        "std": every.std(0).tolist(), "count": [len(every)]}}))
    if not images:
        encode(root / video_path.format(video_key=CAMERA, chunk_index=0, file_index=0),
               np.concatenate([f for f, _ in data]), codec=codec)
    return root


def _png(frame: np.ndarray) -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(frame).save(buffer, format="PNG")
    return buffer.getvalue()


# -- episodes whose state returns (task=memory on datasets) ------------------------------------------

REVISIT_PERIODS = (8, 16)  # frames of one out-and-back pan per episode


def revisit_episode(index: int, length: int = LENGTH, drift: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(frames T×H×W×3, actions T×2, states T×2): a camera panning over a fixed scene of 8×8 blocks of
    random colours, out and back along x (a triangle wave of period ``REVISIT_PERIODS[index]``, 1 or 2
    pixels a frame), so its state (``[x, y]`` in metres, one pixel = 0.02) returns exactly and the
    frames there are the same, but for a square sliding down the screen whatever the camera does
    (where it is, the two visits' frames disagree). Actions: the pan's velocity in pixels per frame.
    ``drift``: the state's second element grows by it every frame (the pose never returns exactly)."""
    rng = np.random.default_rng(200 + index)
    period = REVISIT_PERIODS[index % len(REVISIT_PERIODS)]
    speed = 16 // period
    scene = np.repeat(np.repeat(rng.integers(40, 216, (H // 8, W // 8 + 2, 3)), 8, 0), 8, 1).astype(np.uint8)
    phase = np.arange(length) % period
    x = speed * np.minimum(phase, period - phase)  # 0 … 8 … 0 pixels
    frames = []
    for t in range(length):
        frame = scene[:, x[t]:x[t] + W].copy()
        top = (3 * t) % (H - 8)
        frame[top:top + 8, 4:12] = (230, 230, 40)
        frames.append(frame)
    states = np.stack([x * 0.02, drift * np.arange(length)], 1).astype(np.float32)
    moves = np.append(np.diff(x), 0).astype(np.float32)
    return np.stack(frames), np.stack([moves, np.zeros(length, np.float32)], 1), states


def write_revisits_hdf5(path: Path, n: int = 2, state_key: str = "pose", drift: float = 0.0) -> Path:
    """:func:`revisit_episode` s in a robomimic-style HDF5 file, the state under ``obs/<state_key>``."""
    import h5py

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(path, "w") as handle:
        for i in range(n):
            frames, actions, states = revisit_episode(i, drift=drift)
            demo = handle.create_group(f"data/demo_{i}")
            demo.create_dataset("obs/agentview_image", data=frames, compression="gzip")
            demo.create_dataset(f"obs/{state_key}", data=states)
            demo.create_dataset("actions", data=actions)
    return path


def write_revisits_lerobot(root: Path, n: int = 2) -> Path:
    """:func:`revisit_episode` s as a LeRobot image-feature dataset, the state in ``observation.state``."""
    made = [revisit_episode(i) for i in range(n)]
    return write_lerobot(root, [(f, a) for f, a, _ in made], images=True, states=[s for _, _, s in made])


# -- HDF5, robomimic style --------------------------------------------------------------------------


def write_hdf5(path: Path, data: list[tuple[np.ndarray, np.ndarray]] | None = None) -> Path:
    import h5py

    data = data or episodes()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(path, "w") as handle:
        group = handle.create_group("data")
        group.attrs["total"] = sum(len(f) for f, _ in data)
        group.attrs["env_args"] = json.dumps({"env_name": "SquarePusher", "type": 0, "env_kwargs": {}})
        for i, (frames, actions) in enumerate(data):
            demo = group.create_group(f"demo_{i}")
            demo.attrs["num_samples"] = len(frames)
            demo.create_dataset("obs/agentview_image", data=frames, compression="gzip")
            demo.create_dataset("actions", data=actions)
        handle.create_dataset("mask/train", data=np.array([f"demo_{i}".encode() for i in range(len(data) - 1)]))
        handle.create_dataset("mask/valid", data=np.array([f"demo_{len(data) - 1}".encode()]))
    return path


# -- video + npy pairs ------------------------------------------------------------------------------


def write_video_actions(root: Path, data: list[tuple[np.ndarray, np.ndarray]] | None = None,
                        suffix: str = ".mp4") -> Path:
    from wfeval.io import write_video

    data = data or episodes()
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    for i, (frames, actions) in enumerate(data):
        write_video(root / f"episode_{i:06d}{suffix}", frames, fps=FPS)
        np.save(root / f"episode_{i:06d}.npy", actions[:-1])  # T-1 actions: one per step
    return root


# -- a wfeval dataset folder with the same windows --------------------------------------------------


def windows(length: int = LENGTH, context: int = 1, horizon: int = 16) -> list[int]:
    return list(range(0, length - context - horizon + 1, context + horizon))


def write_folder(root: Path, data: list[tuple[np.ndarray, np.ndarray]] | None = None, horizon: int = 16) -> Path:
    """The readers' samples (one context frame, ``horizon`` actions) as a dataset folder: ffv1 .mkv
    references, .png initial frames, the actions inline, the action space in dataset.json."""
    from wfeval.io import write_image, write_video

    data = data or episodes()
    root = Path(root)
    lines = []
    for i, (frames, actions) in enumerate(data):
        for s in windows(len(frames), 1, horizon):
            sample_id = f"episode_{i:06d}-t{s:05d}"
            write_image(root / "frames" / f"{sample_id}.png", frames[s])
            write_video(root / "videos" / f"{sample_id}.mkv", frames[s:s + horizon + 1], fps=FPS)
            lines.append({"sample_id": sample_id, "initial_frame": f"frames/{sample_id}.png",
                          "reference_video": f"videos/{sample_id}.mkv",
                          "actions": actions[s:s + horizon].astype(np.float64).tolist()})
    (root / "manifest.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (root / "dataset.json").write_text(json.dumps({"name": root.name, "fps": FPS, "action_space": ACTION_SPACE}))
    return root


# -- a model: the reference shifted by a constant --------------------------------------------------


class ShiftedReference:
    """The reference video with ``shift`` added to every frame after the first (frame 0 is the given
    initial frame), through ``generate`` and the step interface; PSNR of frames 1.. is
    ``20·log10(255/shift)`` exactly while nothing clips. Checks that its actions are continuous."""

    name = "shifted_reference"
    version = "1.0"

    def __init__(self, shift: int = 8):
        self.shift = int(shift)

    def _reference(self, request: Any) -> np.ndarray:
        from wfeval.models.base import actions_of
        from wfeval.storage.artifacts import read_array

        actions = actions_of(request)
        assert isinstance(actions, np.ndarray) and actions.ndim == 2, type(actions)
        return read_array(request.references["video"])

    def _shifted(self, frames: np.ndarray) -> np.ndarray:
        return (frames.astype(np.int16) + self.shift).clip(0, 255).astype(np.uint8)

    def generate(self, requests):
        out = []
        for request in requests:
            video = self._reference(request)
            out.append({"generated_video": np.concatenate([video[:1], self._shifted(video[1:])])})
        return out

    def start(self, request):
        return (self._shifted(self._reference(request)), 0)

    def step(self, state, actions):
        from wfeval.models.protocol import StepOutput

        video, t = state
        for a in actions:
            assert isinstance(a, np.ndarray) and a.shape == (2,), a
        return StepOutput((video, t + len(actions)), video[t + 1:t + 1 + len(actions)])


def write_minari(root: Path, data: list[tuple[np.ndarray, np.ndarray]] | None = None,
                 states: list[np.ndarray] | None = None) -> Path:
    """A Minari dataset as Minari 0.5.4's ``DataCollector`` lays it out (``hdf5_storage.py``): episodes
    ``episode_k/`` at the file's root, ``observations`` one JPEG per step (Pillow's default quality,
    variable-length uint8: ``encode_frame``), ``actions``, ``rewards``, ``terminations``,
    ``truncations``; ``data/metadata.json`` with the spaces as JSON. (The real library's output is
    ``tests/support/data/minari_carracing_tiny.tar.gz``.) ``states``: a Dict observation space instead,
    ``observations/image`` (the JPEGs) beside ``observations/state`` (T×2 float32)."""
    import io

    import h5py
    from PIL import Image

    data = data or episodes()
    path = Path(root) / "data" / "main_data.hdf5"
    path.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(path, "w") as handle:
        for k, (frames, actions) in enumerate(data):
            group = handle.create_group(f"episode_{k}")
            jpegs = []
            for frame in frames:
                buffer = io.BytesIO()
                Image.fromarray(frame).save(buffer, format="JPEG")
                jpegs.append(np.frombuffer(buffer.getvalue(), dtype=np.uint8))
            where = "observations" if states is None else "observations/image"
            rows = group.create_dataset(where, shape=(len(jpegs),), dtype=h5py.vlen_dtype(np.uint8))
            if states is not None:
                group["observations/state"] = np.asarray(states[k], dtype=np.float32)
            for i, jpeg in enumerate(jpegs):
                rows[i] = jpeg
            group["actions"] = actions
            group["rewards"] = np.zeros(len(actions))
            group["terminations"] = np.zeros(len(actions), bool)
            group["truncations"] = np.arange(len(actions)) == len(actions) - 1
            group.attrs.update({"id": k, "total_steps": len(actions), "seed": k})
    box = {"type": "Box", "dtype": "float32", "shape": [2], "low": [-1.0, -1.0], "high": [1.0, 1.0]}
    image_space = {"type": "Box", "dtype": "uint8", "shape": [H, W, 3]}
    (path.parent / "metadata.json").write_text(json.dumps({
        "dataset_id": "wfeval/square-v0", "total_episodes": len(data), "total_steps": sum(len(a) for _, a in data),
        "data_format": "hdf5", "jpeg_encoding": True, "minari_version": "0.5.4",
        "observation_space": json.dumps(image_space if states is None else {"type": "Dict", "subspaces": {
            "image": image_space, "state": {"type": "Box", "dtype": "float32", "shape": [2], "low": [0.0, 0.0],
                                            "high": [H - 8.0, W - 8.0]}}}),
        "action_space": json.dumps(box),
        "env_spec": json.dumps({"id": "SquarePusher-v0", "entry_point": None, "max_episode_steps": LENGTH - 1,
                                "kwargs": {}}),
    }, indent=1))
    return Path(root)


def write_all(out: Path) -> dict[str, Path]:
    """The five formats under ``out``: ``square_lerobot/``, ``square.hdf5``, ``square_episodes/``,
    ``square_folder/``, ``square_minari/`` (LeRobot's ``observation.state`` and Minari's ``observations/state``
    record the square's position: :func:`square_states`); and ``pan.hdf5`` (:func:`revisit_episode`: a
    state that returns)."""
    out = Path(out)
    data = episodes()
    states = [square_states(i) for i in range(len(data))]
    return {"lerobot": write_lerobot(out / "square_lerobot", data, states=states),
            "hdf5": write_hdf5(out / "square.hdf5", data),
            "video_actions": write_video_actions(out / "square_episodes", data),
            "folder": write_folder(out / "square_folder", data),
            "minari": write_minari(out / "square_minari", data, states=states),
            "revisits": write_revisits_hdf5(out / "pan.hdf5")}


if __name__ == "__main__":  # python tests/support/wfeval_test_datasets.py examples/datasets
    import sys

    for fmt, path in write_all(Path(sys.argv[1] if len(sys.argv) > 1 else "data")).items():
        print(f"{fmt:14s} {path}")
