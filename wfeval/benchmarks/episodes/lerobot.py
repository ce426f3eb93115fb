"""``benchmark=lerobot``: a LeRobot dataset (format v3.0) read in place.

The layout (LeRobot's ``lerobot/datasets/utils.py``, ``CODEBASE_VERSION = "v3.0"``)::

    meta/info.json                      codebase_version, fps, features, data_path, video_path, splits
    meta/episodes/chunk-000/file-000.parquet   one row per episode: episode_index, tasks, length,
                                        dataset_from_index, dataset_to_index, data/chunk_index,
                                        data/file_index, videos/<camera>/{chunk_index, file_index,
                                        from_timestamp, to_timestamp}
    data/chunk-000/file-000.parquet     one row per frame: the features (action, observation.state, ...)
                                        plus timestamp, frame_index, episode_index, index, task_index
    videos/<camera>/chunk-000/file-000.mp4   the frames of one camera, episodes one after another

Frame ``k`` of an episode is the frame of its camera's file shown at ``from_timestamp +
timestamp[k]`` (within ``tolerance_s``), as LeRobot decodes it. ``camera`` chooses the video feature
(default: the only one), ``action_key`` the action feature (default ``action``); its ``names`` name
the action space's elements. An episode's ``tasks`` (its language instruction) becomes the prompt.
An image feature (``use_videos=False``) is read from the data files instead: frame ``k`` is the PNG
of the episode's ``k``-th row (a ``{bytes, path}`` struct; a ``path`` to another file is never
followed). ``info.json``'s path templates are filled field by field (no attributes or indexes) and
the files they name must stay inside the dataset (``benchmark.allow_outside_root``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from wfeval.api import ActionSpace
from wfeval.benchmarks.episodes.base import Episode, EpisodeBenchmark, continuous_space, json_object
from wfeval.benchmarks.episodes.decoder import options_for
from wfeval.config.errors import ConfigError
from wfeval.config.extras import require

INFO = "meta/info.json"
STATE = "observation.state"  # task=memory's default state column
INDEX_COLUMNS = ("timestamp", "frame_index", "episode_index", "index", "task_index")
EPISODES_DIR = "meta/episodes"
SUPPORTED = "v3"


def _table(path: Path, columns: Sequence[str] | None = None) -> Any:
    import pyarrow.parquet as pq

    return pq.read_table(path, columns=list(columns) if columns else None)


def _table_columns(path: Path) -> list[str]:
    import pyarrow.parquet as pq

    return list(pq.ParquetFile(path).schema_arrow.names)


def column_array(table: Any, key: str) -> np.ndarray:
    """A parquet column as a numpy array: scalars → ``(n,)``, (fixed-size) lists → ``(n, k)``."""
    import pyarrow as pa

    column = table.column(key).combine_chunks()
    kind = column.type
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        lengths = set(column.value_lengths().to_pylist()) if not pa.types.is_fixed_size_list(kind) else {kind.list_size}
        if len(lengths) > 1:
            raise ValueError(f"rows of {key!r} have different lengths {sorted(lengths)}")
        width = lengths.pop() if lengths else 0
        return column.flatten().to_numpy(zero_copy_only=False).reshape(len(column), width)
    return column.to_numpy(zero_copy_only=False)


class LeRobotBenchmark(EpisodeBenchmark):
    """A LeRobot v3 dataset folder: ``camera``, ``action_key``, ``context_frames``, ``horizon`` and the
    options of :class:`~wfeval.benchmarks.episodes.base.EpisodeBenchmark`."""

    family = "lerobot"

    def __init__(self, dataset_root: str, camera: str | None = None, action_key: str = "action",
                 tolerance_s: float = 1e-4, **options: Any):
        require(f"benchmark={self.family}", "pyarrow")  # the datasets extra: said before anything is read
        self.camera, self.action_key, self.tolerance_s = camera, str(action_key), float(tolerance_s)
        super().__init__(dataset_root, **options)

    # -- the dataset's metadata ------------------------------------------------------------------------

    def _info(self) -> dict[str, Any]:
        path = self.root / INFO
        if not self.root.is_dir():
            raise ConfigError(f"benchmark.dataset_root: {self.root} is not a folder (a LeRobot dataset is a folder "
                              f"with {INFO})")
        if not path.is_file():
            raise ConfigError(f"benchmark.dataset_root: {self.root} has no {INFO}; not a LeRobot dataset "
                              "(docs/dataset-readers.md)")
        escaping = self.outside(path, INFO)  # never read through a link out of the dataset
        if escaping:
            raise ConfigError(f"benchmark.dataset_root: {escaping}")
        info = json_object(path)
        missing = [k for k in ("codebase_version", "fps", "features", "data_path", "video_path") if k not in info]
        if missing:
            raise ConfigError(f"{path}: missing key(s) {', '.join(missing)} (LeRobot v3.0 info.json)")
        version = str(info["codebase_version"])
        if not version.startswith(SUPPORTED):
            raise ConfigError(f"{path}: codebase_version {version!r}; benchmark=lerobot reads LeRobot v3.x datasets "
                              "(convert older ones with LeRobot's v2.1 -> v3.0 converter)")
        if not isinstance(info["features"], dict):
            raise ConfigError(f"{path}: features must be an object")
        return info

    def _feature_keys(self, info: dict[str, Any]) -> tuple[str, str]:
        features, path = info["features"], self.root / INFO
        videos = [k for k, f in features.items() if isinstance(f, dict) and f.get("dtype") == "video"]
        images = [k for k, f in features.items() if isinstance(f, dict) and f.get("dtype") == "image"]
        camera = self.camera
        holds = (f"{len(videos)} video feature(s) ({', '.join(videos) or 'none'}) and {len(images)} image "
                 f"feature(s) ({', '.join(images) or 'none'})")
        if camera is None:
            if len(videos) + len(images) != 1:
                raise ConfigError(f"benchmark.camera: {path} has {holds}; "
                                  + ("choose one (benchmark.camera=<key>)" if videos or images else
                                     "benchmark=lerobot needs frames (a video or image feature)"))
            camera = (videos or images)[0]
        elif camera not in videos and camera not in images:
            raise ConfigError(f"benchmark.camera: {camera!r} is neither a video nor an image feature of {path}; it "
                              f"has {holds}")
        self.is_video = camera in videos
        feature = features.get(self.action_key)
        if not isinstance(feature, dict):
            numeric = [k for k, f in features.items() if isinstance(f, dict) and f.get("dtype") not in
                       ("video", "image", "string")]
            raise ConfigError(f"benchmark.action_key: {self.action_key!r} is not a feature of {path}; its features: "
                              f"{', '.join(numeric)}")
        return camera, self.action_key

    # -- episodes ------------------------------------------------------------------------------------

    def read_episodes(self) -> tuple[list[Episode], ActionSpace | None]:
        info = self._info()
        self.features = info["features"]
        camera, action_key = self._feature_keys(info)
        self.camera = camera
        if self.fps is None:
            self.fps = float(info["fps"])
        files = sorted((self.root / EPISODES_DIR).glob("chunk-*/file-*.parquet"))
        if not files:
            raise ConfigError(f"benchmark.dataset_root: {self.root} has no {EPISODES_DIR}/chunk-*/file-*.parquet "
                              "(LeRobot v3.0 episode metadata)")
        columns = ["episode_index", "length", "data/chunk_index", "data/file_index", "dataset_from_index",
                   "dataset_to_index"]
        if self.is_video:
            columns += [f"videos/{camera}/chunk_index", f"videos/{camera}/file_index",
                        f"videos/{camera}/from_timestamp", f"videos/{camera}/to_timestamp"]
        rows: list[dict[str, Any]] = []
        for path in [self.root / INFO, *files]:
            escaping = self.outside(path, str(path.relative_to(self.root)))
            if escaping:
                raise ConfigError(f"benchmark.dataset_root: {escaping}")
        for path in files:
            try:
                self._within_limits(path, _table_columns(path))
            except ValueError as exc:
                raise ConfigError(f"{path.relative_to(self.root)}: {exc}") from None
            except Exception:  # a corrupt file: reported by reading it below
                pass
            try:
                table = _table(path)
            except Exception as exc:  # pyarrow raises its own error types for corrupt files
                raise ConfigError(f"{path.relative_to(self.root)}: not a readable parquet file ({exc})") from exc
            absent = [c for c in columns if c not in table.column_names]
            if absent:
                raise ConfigError(f"{path.relative_to(self.root)}: missing column(s) {', '.join(absent)} (LeRobot v3.0 "
                                  f"episode metadata for the {'video' if self.is_video else 'image'} feature "
                                  f"{camera!r})")
            data = {c: table.column(c).to_pylist() for c in columns}
            tasks = table.column("tasks").to_pylist() if "tasks" in table.column_names else [None] * table.num_rows
            rows += [{**{c: data[c][i] for c in columns}, "tasks": tasks[i]} for i in range(table.num_rows)]
        rows.sort(key=lambda r: int(r["episode_index"]))
        splits = _splits(info.get("splits"), self.root / INFO)
        names = info["features"][action_key].get("names")
        names = names if isinstance(names, list) and all(isinstance(n, str) for n in names) else ()
        self._data_cache: dict[Path, Any] = {}
        episodes = [self._episode(info, row, camera, action_key, splits) for row in rows]
        actions = next((e.actions for e in episodes if e.actions is not None), None)
        space = continuous_space(actions, names, where=f"{INFO} features[{action_key!r}]") if actions is not None \
            else None
        self._data_cache.clear()
        return episodes, space

    def _episode(self, info: dict[str, Any], row: dict[str, Any], camera: str, action_key: str,
                 splits: list[tuple[str, int, int]]) -> Episode:
        index = int(row["episode_index"])
        name = f"episode_{index:06d}"
        split = next((s for s, lo, hi in splits if lo <= index < hi), "train")
        length = int(row["length"])
        data_rel = fill_template(info["data_path"], "data_path", chunk_index=int(row["data/chunk_index"]),
                                 file_index=int(row["data/file_index"]))
        video_rel = fill_template(info["video_path"], "video_path", video_key=camera,
                                  chunk_index=int(row[f"videos/{camera}/chunk_index"]),
                                  file_index=int(row[f"videos/{camera}/file_index"])) if self.is_video else ""
        tasks = row.get("tasks")
        prompt = tasks[0] if isinstance(tasks, list) and tasks and isinstance(tasks[0], str) else None
        episode = Episode(name=name, split=split, length=length, frames=None, actions=None,
                          actions_where=f"{data_rel}[{action_key!r}] (episode_index {index})",
                          files={"data": data_rel, **({"video": video_rel} if video_rel else {})}, prompt=prompt,
                          metadata={"episode_index": index, "camera": camera})
        if length > self.limits.max_frames:  # nothing of it is read: one unreadable sample stands for it
            episode.length = 0
            episode.errors.append(f"{EPISODES_DIR}: episode_index {index} has length {length:,}, over the limit of "
                                  f"{self.limits.max_frames:,} frames (raise it with benchmark.limits.max_frames="
                                  f"{length} if it is right)")
            return episode
        video = self.root / video_rel
        escaping = [self._escapes(rel, key) for rel, key in ((data_rel, "data_path"), (video_rel, "video_path"))
                    if rel]
        episode.errors += [e for e in escaping if e]
        if episode.errors:
            return episode  # a file outside the dataset is never opened
        if self.is_video and not video.is_file():
            episode.errors.append(f"{video_rel}: file not found (camera {camera!r})")
        try:
            table = self._data(self.root / data_rel)
            for key in (action_key, "episode_index", "timestamp"):
                if key not in table.column_names:
                    raise ValueError(f"no column {key!r}")
            mine = np.nonzero(column_array(table, "episode_index") == index)[0]
            if len(mine) != length:
                raise ValueError(f"{len(mine)} row(s) of episode_index {index}; meta/episodes says length {length}")
            actions = column_array(table, action_key)[mine]
            timestamps = column_array(table, "timestamp")[mine].astype(np.float64)
        except ValueError as exc:
            episode.errors.append(f"{data_rel}: {exc}")
            return episode
        except Exception as exc:  # a corrupt parquet file: pyarrow's own error types
            episode.errors.append(f"{data_rel}: not a readable parquet file ({type(exc).__name__}: {exc})")
            return episode
        if len(actions) and actions.ndim == 1 and np.issubdtype(actions.dtype, np.floating):
            actions = actions[:, None]  # a 1-D control stored as scalars: vectors of one element
        episode.actions = actions
        tolerance, limits = self.tolerance_s, self.limits
        if self.is_video:
            start = float(row[f"videos/{camera}/from_timestamp"])
            times = [round(start + float(t), 9) for t in timestamps]

            def frames(first: int, stop: int, image: bool) -> tuple[Path, dict[str, Any]]:
                return video, options_for("times", limits=limits, image=image, times=times[first:stop],
                                          tolerance_s=tolerance)
        else:  # image feature: the frames are the episode's rows of the data file (PNG bytes in a struct)
            data, rows = self.root / data_rel, [int(r) for r in mine]

            def frames(first: int, stop: int, image: bool) -> tuple[Path, dict[str, Any]]:
                return data, options_for("parquet_images", limits=limits, image=image, column=camera,
                                         rows=rows[first:stop])

        if not episode.errors:
            episode.frames = frames
        return episode

    # -- task=memory: the state column (wfeval.benchmarks.episodes.revisits) ---------------------------

    def state_column(self, key: str | None) -> str:
        """``key``, default ``observation.state``: a numeric feature of ``info.json`` (ConfigError naming them)."""
        numeric = [k for k, f in self.features.items() if isinstance(f, dict) and f.get("dtype") not in
                   ("video", "image", "string") and k not in INDEX_COLUMNS]
        chosen = STATE if key is None else key
        if chosen in numeric:
            return chosen
        feature = self.features.get(chosen)
        kind = f" is a {feature.get('dtype')} feature, not a state;" if isinstance(feature, dict) else \
            " is not a feature of it;"
        head = (f"task.data.memory.state_key: {INFO} of {self.root} has no {STATE!r} feature;" if key is None else
                f"task.data.memory.state_key: {chosen!r}{kind} {INFO} of {self.root}")
        raise ConfigError(f"{head} its numeric features: {', '.join(numeric) or 'none'} (give one: "
                       "task.data.memory.state_key=<feature>)")

    def read_states(self, episode: Episode, key: str) -> np.ndarray:
        path = self.root / episode.files["data"]
        cache = self.__dict__.setdefault("_states", {})
        if (path, key) not in cache:
            try:
                if key not in _table_columns(path):
                    raise ValueError(f"{episode.files['data']} has no column {key!r}")
                self._within_limits(path, [key, "episode_index"])
                table = _table(path, [key, "episode_index"])
            except ValueError:
                raise
            except Exception as exc:  # a corrupt parquet file: pyarrow's own error types
                raise ValueError(f"{episode.files['data']}: not a readable parquet file ({type(exc).__name__}: "
                                 f"{exc})") from None
            cache.clear()  # one data file at a time (episodes are read in order)
            cache[path, key] = (column_array(table, key), column_array(table, "episode_index"))
        values, owners = cache[path, key]
        return values[owners == int(episode.metadata["episode_index"])]

    def _escapes(self, rel: str, key: str) -> str | None:
        """Why the filled ``key`` template ``rel`` may not be read: absolute, ``..`` or a symlink that
        leaves the dataset folder (unless ``benchmark.allow_outside_root``)."""
        from wfeval.io import unsafe_path_reason

        reason = None if self.allow_outside_root else unsafe_path_reason(rel)
        if reason:
            return f"{INFO} {key} gives {reason}; set benchmark.allow_outside_root=true to read it"
        return self.outside(self.root / rel, f"{INFO} {key} {rel!r}")

    def _within_limits(self, path: Path, columns: list[str]) -> None:
        """ValueError when ``columns`` of a parquet file are over ``limits.max_array_bytes`` uncompressed
        (the file's footer says; nothing is read)."""
        from wfeval.benchmarks.episodes.images import parquet_column_bytes

        size = sum(parquet_column_bytes(path, c) for c in columns)
        if size > self.limits.max_array_bytes:
            raise ValueError(f"its columns are {size:,} bytes uncompressed, over the limit of "
                             f"{self.limits.max_array_bytes:,} (raise it with benchmark.limits.max_array_bytes="
                             f"{size} if it is right)")

    def _data(self, path: Path) -> Any:
        if path not in self._data_cache:
            if not path.is_file():
                raise ValueError("file not found")
            columns = [c for c in _table_columns(path) if c != self.camera]  # the images are read per window
            self._within_limits(path, columns)
            self._data_cache[path] = _table(path, columns)
        return self._data_cache[path]

    def fingerprint(self) -> dict[str, Any]:
        from wfeval.benchmarks.episodes.decoder import digest

        meta = sorted([self.root / INFO, *(self.root / EPISODES_DIR).glob("chunk-*/file-*.parquet")])
        data = sorted({self.root / rel for e in self.episodes if not e.errors for rel in e.files.values()
                       if (self.root / rel).is_file()})
        return {**super().fingerprint(), "format": "lerobot/v3", "camera": self.camera, "action_key": self.action_key,
                "tolerance_s": self.tolerance_s,
                "files_sha256": {str(p.relative_to(self.root)): digest(p) for p in [*meta, *data]}}


def fill_template(template: Any, key: str, **values: Any) -> str:
    """``template`` (``info.json``'s ``data_path``/``video_path``) with its ``{name}`` / ``{name:03d}``
    fields filled from ``values``; anything else (``{x.attr}``, ``{x[0]}``, ``{x!r}``, an unknown
    name, a format other than a zero-padded width below 100) is a ConfigError: the template is data
    and cannot reach the values' attributes or ask for a gigabyte of padding."""
    import string

    if not isinstance(template, str) or not template:
        raise ConfigError(f"{INFO}: {key} must be a non-empty string, got {template!r}")
    out = []
    try:
        for text, name, spec, conversion in string.Formatter().parse(template):
            out.append(text)
            if name is None:
                continue
            if name not in values or conversion is not None or not re.fullmatch(r"0?\d{0,2}d?", spec or ""):
                shown = f"{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}"
                raise ValueError(f"the field {{{shown}}} (known fields: {', '.join('{' + v + '}' for v in values)}, "
                                 "with at most a zero-padded width ({chunk_index:03d}); no attributes, indexes or "
                                 "conversions)")
            out.append(format(values[name], spec or ""))
    except ValueError as exc:
        raise ConfigError(f"{INFO}: {key} {template!r}: {exc}") from None
    return "".join(out)


def _splits(value: Any, where: Path) -> list[tuple[str, int, int]]:
    """info.json ``splits``: ``{"train": "0:40", "test": "40:50"}`` → [(name, first, stop)]."""
    if not value:
        return []
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: splits must be an object of name -> 'first:stop'")
    out = []
    for name, text in value.items():
        try:
            lo, hi = (int(x) for x in str(text).split(":"))
        except ValueError:
            raise ConfigError(f"{where}: splits.{name} = {text!r}; expected 'first:stop' episode indices") from None
        out.append((str(name), lo, hi))
    return out
