"""Episodes cut into samples: what ``benchmark=lerobot``, ``hdf5`` and ``video_actions`` share.

A reader lists its :class:`Episode` s (frames located in a file, the episode's actions, where they
came from); this base cuts each episode into windows and builds one request per window, reading
every file in place (refs to the file and the part of it, decoded and content-checked on each
read; :mod:`.decoder`). With ``C = context_frames`` and ``H = horizon``, a window starting at
frame ``s`` has its last context frame at ``b = s + C - 1`` and gives

- ``inputs["image"]``: frame ``b``; ``inputs["context"]`` (when ``C > 1``): frames ``s … b``;
- ``controls["actions"]``: actions ``b … b+H-1`` (action ``t`` leads from frame ``t`` to ``t+1``),
  ``controls["action_space"]``: the dataset's (continuous; its shape, dtype, names and the bounds
  given by ``benchmark.action_low/high``), ``controls["context_actions"]`` (when ``C > 1``);
- ``references["video"]``: frames ``b … b+H`` (``H + 1`` frames, starting with the initial frame);
- ``generation``: ``fps``, ``num_frames = H + 1``, ``context_frames``.

Windows start at ``s = 0, stride, 2·stride, …`` while they fit (``stride`` defaults to ``C + H``:
windows do not overlap). A problem with an episode (a missing file, a wrong shape, a non-finite or
out-of-bounds action) makes its samples unreadable, with the reason naming the file and the key,
reported before generation (coverage < 1); a problem with the dataset as a whole is a config error.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from wfeval.api import (
    ActionSpace,
    BenchmarkSpec,
    ContractError,
    EvaluationProtocolSpec,
    GenerationRequest,
    GenerationResult,
    WorldTaskConfig,
)
from wfeval.benchmarks.base import INPUT_ERROR, RunContext, input_error, metric_specs
from wfeval.config.errors import ConfigError
from wfeval.io import Limits
from wfeval.storage.artifacts import ArtifactStore
from wfeval.storage.decoded import file_ref

#: (file, decoding options) of frames ``start … stop-1`` of an episode (``image``: the one frame)
FrameSource = Callable[[int, int, bool], tuple[Path, dict[str, Any]]]


@dataclass
class Episode:
    """One episode as a reader found it."""

    name: str  # stable and unique: the samples are ``<name>-t<start>``
    split: str
    length: int  # frames
    frames: FrameSource | None  # None when the frames cannot be located (see errors)
    actions: np.ndarray | None  # length(-1) × action shape; None when unreadable (see errors)
    actions_where: str = ""  # "file[key]" for messages
    files: dict[str, str] = field(default_factory=dict)  # label -> path relative to the dataset root
    prompt: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # why the episode's samples are unreadable


@dataclass(frozen=True)
class Window:
    """A cheap record: one sample's place (nothing decoded)."""

    episode: int  # index into the reader's episodes
    start: int  # first context frame
    sample_id: str
    split: str


@dataclass(frozen=True)
class Problem:
    where: str  # the file (and key)
    message: str
    sample_id: str | None = None

    def __str__(self) -> str:
        who = f" sample {self.sample_id!r}:" if self.sample_id else ""
        return f"{self.where}:{who} {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"where": self.where, "sample_id": self.sample_id, "message": self.message}


def _by_index(item: str, names: Sequence[str]) -> list[str]:
    """``benchmark.episodes`` items as episode names: a name or pattern as given; an index (``0``, ``"12"``)
    that is no episode's name is the episode whose name ends in that number (``episode_000000``, ``demo_0``),
    kept as given when none does (the caller names it); ConfigError when several do."""
    if not item.isdigit() or item in names:
        return [item]
    found = [n for n in names if (tail := re.search(r"(\d+)$", n)) and int(tail.group(1)) == int(item)]
    if len(found) > 1:
        raise ConfigError(f"benchmark.episodes: index {item} is ambiguous: {found} all end in it; give the name")
    return found or [item]


def _positive(name: str, value: Any, minimum: int = 1, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"benchmark.{name} must be an integer >= {minimum}, got {value!r}")
    return value


class EpisodeBenchmark:
    """Base of the episode readers; a reader sets :attr:`family` and implements :meth:`read_episodes`
    (and may extend :meth:`fingerprint`)."""

    option_schemas = {"limits": Limits}  # benchmark.limits: what one sample's files may make wfeval decode

    family = ""

    def __init__(self, dataset_root: str, *, name: str | None = None, version: str | None = None,
                 description: str = "", split: str | None = None, episodes: Sequence[Any] = (),
                 context_frames: int = 1, horizon: int = 16, stride: int | None = None,
                 max_windows_per_episode: int | None = None, fps: float | None = None,
                 action_low: Sequence[float] | None = None, action_high: Sequence[float] | None = None,
                 strict: bool = False, metrics: Sequence[str] = (), tags: Sequence[str] = (),
                 limits: Mapping[str, Any] | None = None, allow_outside_root: bool = False):
        try:
            self.limits = Limits.from_mapping(limits, "benchmark.limits")
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        self.context_frames = _positive("context_frames", context_frames)
        self.horizon = _positive("horizon", horizon)
        self.stride = _positive("stride", stride, allow_none=True) or self.context_frames + self.horizon
        self.max_windows = _positive("max_windows_per_episode", max_windows_per_episode, allow_none=True)
        if fps is not None and not (isinstance(fps, (int, float)) and not isinstance(fps, bool) and fps > 0):
            raise ConfigError(f"benchmark.fps must be a positive number or null, got {fps!r}")
        self.root = Path(dataset_root).expanduser().resolve()
        if not self.root.exists():
            raise ConfigError(f"benchmark.dataset_root: {self.root} does not exist")
        if not isinstance(allow_outside_root, bool):
            raise ConfigError(f"benchmark.allow_outside_root must be true or false, got {allow_outside_root!r}")
        self.allow_outside_root = allow_outside_root
        self.split, self.episode_filter = split, tuple(str(e) for e in episodes)
        self.strict = bool(strict)
        self.problems: list[Problem] = []
        self.fps = float(fps) if fps is not None else None
        self.episodes, space = self.read_episodes()  # subclasses set self.fps when the data says
        if self.fps is None:
            raise ConfigError(f"benchmark.fps: {self.root} records no frame rate; give one (benchmark.fps=10)")
        self.episodes = self._select(self.episodes)
        self.action_space = self._with_bounds(space, action_low, action_high)
        self._windows = self._cut()
        if strict and self.problems:
            raise ConfigError(self.report(header="benchmark.strict: the dataset has problems; nothing was generated"))
        self.spec = BenchmarkSpec(
            name=name or self.default_name(), version=str(version or "1.0"), description=description,
            splits=tuple(sorted({e.split for e in self.episodes})) or ("default",),
            metrics=metric_specs(metrics), tags=tuple(tags or (self.family,)),
            dataset_root=str(self.root), action_space=self.action_space,
            metadata={"family": self.family, "split": split, "episodes": list(self.episode_filter),
                      "context_frames": self.context_frames, "horizon": self.horizon, "stride": self.stride},
        )
        self.runtime = EpisodeRuntime(self)
        self.scorer = EpisodeScorer(self)

    # -- what a reader provides ----------------------------------------------------------------------

    def read_episodes(self) -> tuple[list[Episode], ActionSpace | None]:
        """The episodes (in a stable order) and the action space their actions belong to (bounds
        are added from the config); ConfigError when the dataset as a whole cannot be read."""
        raise NotImplementedError

    def default_name(self) -> str:
        """The benchmark id without ``benchmark.name``: the reader's name (``lerobot``, ``hdf5``, ...),
        stable wherever the dataset lies (the folder's name changed with every copy or move)."""
        return self.family

    def fingerprint(self) -> dict[str, Any]:
        return {"family": self.family, "root": str(self.root), "split": self.split,
                "allow_outside_root": self.allow_outside_root,
                "episodes": list(self.episode_filter), "context_frames": self.context_frames,
                "horizon": self.horizon, "stride": self.stride, "max_windows_per_episode": self.max_windows,
                "n_episodes": len(self.episodes), "n_selected": len(self._windows)}

    # -- selection and windows ------------------------------------------------------------------------

    def _select(self, episodes: list[Episode]) -> list[Episode]:
        chosen = [e for e in episodes if self.split is None or e.split == self.split]
        if self.split is not None and not chosen:
            splits = sorted({e.split for e in episodes})
            raise ConfigError(f"benchmark.split: {self.split!r} selects no episode of {self.root}; its splits: "
                              f"{', '.join(splits) or '(none)'}")
        if self.episode_filter:
            names = {e.name for e in chosen}
            patterns = [p for item in self.episode_filter for p in _by_index(item, sorted(names))]
            unmatched = [p for p in patterns if not any(c in p for c in "*?[") and p not in names]
            if unmatched:
                raise ConfigError(f"benchmark.episodes: no episode {', '.join(map(repr, unmatched))} in the selected "
                                  f"split(s) of {self.root}; episodes are named like {sorted(names)[:3]} (an index "
                                  "such as 0 selects the episode whose name ends in that number)")
            chosen = [e for e in chosen if any(fnmatch.fnmatchcase(e.name, p) for p in patterns)]
        if not chosen:
            raise ConfigError(f"benchmark: no episode in {self.root} after the split/episodes filters\n" + self.report())
        return chosen

    def _with_bounds(self, space: ActionSpace | None, low: Any, high: Any) -> ActionSpace | None:
        if low is None and high is None:
            return space
        if space is None or not space.is_continuous:
            raise ConfigError("benchmark.action_low/action_high: bounds apply to continuous actions; this dataset's "
                              "actions are not continuous vectors")
        if (low is None) != (high is None):
            raise ConfigError("benchmark.action_low/action_high: give both bounds, or neither")
        try:
            return ActionSpace.continuous(space.shape, low=list(low), high=list(high), dtype=space.dtype,
                                          names=space.names, metadata=space.metadata)
        except ContractError as exc:
            raise ConfigError(f"benchmark.action_low/action_high: {exc}") from exc

    def _cut(self) -> list[Window]:
        """The windows; an unreadable episode gives the windows its length would give (each an
        unreadable sample, so that coverage counts what is missing), at least one."""
        need = self.context_frames + self.horizon
        out = []
        for index, episode in enumerate(self.episodes):
            if episode.length < need and not episode.errors:
                self.problems.append(Problem(self.where(episode), f"{episode.length} frame(s); a sample needs "
                                             f"context_frames + horizon = {need}: the episode gives no sample"))
                continue
            starts = range(0, max(episode.length - need, 0) + 1, self.stride)
            if episode.errors and episode.length > self.limits.max_frames:
                starts = range(0, 1)  # a length past the limit is not believed: one sample stands for it
            for k, start in enumerate(starts):
                if self.max_windows is not None and k >= self.max_windows:
                    break
                out.append(Window(index, start, f"{episode.name}-t{start:05d}", episode.split))
        if not out:
            raise ConfigError(f"benchmark: no sample in {self.root} (context_frames={self.context_frames}, "
                              f"horizon={self.horizon})\n" + self.report())
        return out

    def problem(self, episode: Episode, message: str, sample_id: str | None = None) -> None:
        """Note a problem of ``episode`` (listed before generation)."""
        self.problems.append(Problem(self.where(episode), message, sample_id))

    def where(self, episode: Episode) -> str:
        return f"{self.family} episode {episode.name!r}"

    def outside(self, path: Path, what: str, folder: Path | None = None) -> str | None:
        """Why ``path`` (named ``what``) may not be read: it resolves outside the dataset's folder
        (``folder``, default the root), unless ``benchmark.allow_outside_root``."""
        folder = folder or self.root
        target = Path(path).resolve()
        if self.allow_outside_root or target == folder or folder in target.parents:
            return None
        return (f"{what} resolves to {target}, outside the dataset's folder {folder}; set "
                "benchmark.allow_outside_root=true to read it")

    def records(self) -> list[Window]:
        return list(self._windows)

    # -- task=memory: revisits where the recorded state returns (:mod:`.revisits`) --------------------

    def state_column(self, key: str | None) -> str:
        """The state the revisits are found in (``key``, or the reader's default); ConfigError when the
        dataset records no such state, naming the ones it has."""
        raise ConfigError(f"task=memory: benchmark={self.family} records no state beside its frames and actions (a "
                          "pose or state column: LeRobot's observation.state, HDF5's obs/<key>), so its revisits "
                          "cannot be found; use task=memory on a dataset that records one, or on gridworld / "
                          "memory_maze")

    def read_states(self, episode: Episode, key: str) -> np.ndarray:
        """The episode's states (one row per frame); ValueError naming what is wrong."""
        raise NotImplementedError

    def task_records(self, task: WorldTaskConfig) -> list[Window]:
        """The samples of ``task``: under ``task.data.memory`` only the windows that hold a revisit."""
        memory = (task.data or {}).get("memory")
        if memory is None:
            return self.records()
        plan = self.revisit_plan(memory)
        return [w for w in self._windows if w.sample_id in plan.samples]

    def revisit_plan(self, memory: Mapping[str, Any]) -> Any:
        from wfeval.benchmarks.episodes import revisits

        key = repr(sorted(dict(memory).items()))
        if getattr(self, "_revisits", (None,))[0] != key:
            self._revisits = (key, revisits.find(self, memory))
        return self._revisits[1]

    # -- requests -------------------------------------------------------------------------------------

    def materialize(self, record: Window, *, store: ArtifactStore, task: WorldTaskConfig,
                    protocol: EvaluationProtocolSpec) -> GenerationRequest:
        """One window's request; a file or an action that cannot be used marks it unreadable (never raises)."""
        from wfeval.benchmarks.episodes.decoder import DECODER

        episode = self.episodes[record.episode]
        C, H = self.context_frames, self.horizon
        s, b = record.start, record.start + C - 1
        errors = list(episode.errors)
        inputs: dict[str, Any] = {}
        references: dict[str, Any] = {}
        controls: dict[str, Any] = {}
        if not errors and episode.frames is not None:
            parts = [("image", inputs, "image", b, b + 1, True), ("video", references, "video", b, b + H + 1, False)]
            if C > 1:
                parts.insert(1, ("context", inputs, "video", s, b + 1, False))
            for key, target, kind, start, stop, image in parts:
                path, options = episode.frames(start, stop, image)
                try:
                    target[key] = file_ref(store, path, kind=kind, decoder=DECODER, options=options)
                except ValueError as exc:  # wfeval.io's errors name the file
                    errors.append(f"{_rel(self.root, path)}: frames {start}..{stop - 1}: "
                                  f"{getattr(exc, 'reason', exc)}")
                    break
        if not errors and episode.actions is not None:
            window = episode.actions[b:b + H]
            problem = None
            if len(window) < H:
                problem = f"{len(episode.actions)} action(s); the sample needs actions {b}..{b + H - 1}"
            elif self.action_space is not None:
                problem = self.action_space.problem(window, first=b)
                if problem:
                    problem += f" ({self.action_space.describe()})"
            if problem:
                errors.append(f"{episode.actions_where}: {problem}")
            else:
                controls["actions"] = _plain(window)
                if C > 1:
                    controls["context_actions"] = _plain(episode.actions[s:b])
        if self.action_space is not None:
            controls["action_space"] = self.action_space.to_dict()
        metadata = {"family": self.family, "episode": episode.name, "window_start": s, "start_frame": b,
                    "files": dict(episode.files), **episode.metadata}
        if errors:
            metadata[INPUT_ERROR] = "; ".join(errors)
            known = {(p.where, p.message) for p in self.problems}
            self.problems += [Problem(self.where(episode), e, record.sample_id) for e in errors
                              if (self.where(episode), e) not in known]
            if self.strict:
                raise ConfigError(self.report(header="benchmark.strict: the dataset has problems; nothing was "
                                                     "generated"))
        generation = {**dict(task.generation_defaults or {}), "fps": self.fps, "num_frames": H + 1,
                      "context_frames": C}
        memory = (task.data or {}).get("memory")
        if memory is not None:  # task=memory: the sample's revisits, found in the recorded state
            from wfeval.benchmarks.episodes.revisits import memory_metadata

            metadata["memory"] = memory_metadata(self.revisit_plan(memory), record.sample_id)
        return GenerationRequest(
            sample_id=record.sample_id, task_id=task.task_id or "", benchmark_id=self.spec.benchmark_id,
            split=record.split, protocol=protocol.name, inputs=inputs, controls=controls, references=references,
            generation=generation, prompt=episode.prompt, metadata=metadata,
        )

    def requests(self, *, store: ArtifactStore, task: WorldTaskConfig,
                 protocol: EvaluationProtocolSpec) -> list[GenerationRequest]:
        return [self.materialize(r, store=store, task=task, protocol=protocol) for r in self.task_records(task)]

    def report(self, header: str | None = None) -> str:
        lines = [header or f"{self.family} dataset {self.root}: {len(self.problems)} problem(s)"]
        lines += [f"  {p}" for p in self.problems]
        return "\n".join(lines)


def json_object(path: Path) -> dict:
    """A dataset's JSON metadata file as an object, or a ConfigError naming the file."""
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not readable JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    return data


def _rel(root: Path, path: Path) -> str:
    try:
        return str(Path(path).relative_to(root)) if Path(path) != root else Path(path).name
    except ValueError:
        return str(path)


def _plain(actions: np.ndarray) -> list:
    """Actions as JSON numbers (a float32 value becomes the float64 of the same value)."""
    array = np.asarray(actions)
    if np.issubdtype(array.dtype, np.integer):
        return [int(a) for a in array.tolist()] if array.ndim == 1 else array.tolist()
    return array.astype(np.float64).tolist()


def continuous_space(actions: np.ndarray, names: Sequence[str] = (), where: str = "actions") -> ActionSpace | None:
    """The space of an episode's action array: rows of floats → continuous of the row shape (float32
    data stays float32); integer ids (1-D) → None (discrete ids, as the built-in games have)."""
    array = np.asarray(actions)
    if np.issubdtype(array.dtype, np.integer) and array.ndim == 1:
        return None
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise ConfigError(f"{where}: actions must be numbers, found dtype {array.dtype}")
    shape = tuple(array.shape[1:]) or ()
    dtype = str(array.dtype) if str(array.dtype) in ("float16", "float32", "float64") else "float64"
    names = tuple(str(n) for n in names) if names and len(shape) == 1 and len(names) == shape[0] else ()
    try:
        return ActionSpace.continuous(shape, dtype=dtype, names=names)
    except ContractError as exc:
        raise ConfigError(f"{where}: {exc}") from exc


class EpisodeRuntime:
    """Reports the dataset's problems before generation; records what was read."""

    def __init__(self, benchmark: EpisodeBenchmark):
        self.benchmark = benchmark

    def summary(self, context: RunContext) -> dict[str, Any]:
        bench = self.benchmark
        unreadable = [r.sample_id for r in context.requests if input_error(r)]
        total = len(context.requests)
        return {"root": str(bench.root), "family": bench.family, "episodes": len(bench.episodes),
                "samples": total, "usable": total - len(unreadable), "unreadable": len(unreadable),
                "coverage": (total - len(unreadable)) / total if total else 0.0,
                "action_space": bench.action_space.describe() if bench.action_space else "discrete ids",
                **({"memory": _memory_summary(bench._revisits[1])} if getattr(bench, "_revisits", None) else {}),
                "problems": [p.to_dict() for p in bench.problems]}

    def prepare(self, context: RunContext) -> Mapping[str, Any]:
        bench = self.benchmark
        summary = self.summary(context)
        context.event("dataset_checked", **{k: v for k, v in summary.items() if k != "problems"},
                      problems=[str(p) for p in bench.problems])
        if "memory" in summary:
            memory = summary["memory"]
            print(f"task=memory: {memory['samples']} of the {memory['samples_read']} sample(s) of {bench.root} hold a "
                  f"revisit ({memory['pairs']} pair(s): state {memory['state_key']!r} back within "
                  f"{memory['tolerance']:g}); only those are evaluated", file=sys.stderr, flush=True)
        if bench.problems:
            header = (f"{bench.family} dataset {bench.root}: {summary['usable']} of {summary['samples']} sample(s) "
                      f"usable (coverage {summary['coverage']:.3f}); {summary['unreadable']} unreadable and skipped "
                      "by every metric:")
            print(bench.report(header=header), file=sys.stderr, flush=True)
        return {"dataset": summary}

    def finalize(self, context: RunContext, *, status: str) -> Mapping[str, Any]:
        return {}


def _memory_summary(plan: Any) -> dict[str, Any]:
    return {"state_key": plan.key, "tolerance": plan.settings.tolerance, "samples_read": plan.candidates,
            "samples": len(plan.samples), "pairs": sum(len(r.pairs) for r in plan.samples.values())}


class EpisodeScorer:
    """The standard row, plus where the sample came from (episode, frame, files)."""

    def __init__(self, benchmark: EpisodeBenchmark):
        self.benchmark = benchmark

    def to_row(self, request: GenerationRequest, result: GenerationResult, row: dict[str, Any]) -> dict[str, Any]:
        row["metadata"].update(episode=request.metadata.get("episode"),
                               start_frame=request.metadata.get("start_frame"),
                               dataset_files=request.metadata.get("files"))
        if input_error(request):
            row["metadata"]["input_error"] = input_error(request)
        return row

