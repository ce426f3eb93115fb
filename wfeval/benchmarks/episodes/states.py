"""``task=probing`` on a dataset: the state its files record becomes probing's state variables
(docs/dataset-readers.md#probing-the-recorded-state).

``benchmark.state_keys`` chooses the recorded states (default: every numeric state the reader finds —
LeRobot's numeric ``observation.*`` features, HDF5's ``obs/<key>`` and Minari's dict observation entries
beside the camera); each element of a ``T×D`` state is one variable, named ``key[name]`` after the
element names the files record (LeRobot ``info.json`` ``names``), else ``key[i]``; a ``T`` state is
one variable ``key``. Floating-point states are continuous (R²), integer and boolean ones discrete
(accuracy).

Training and evaluation are whole episodes, as on the simulators: a share ``benchmark.probe_train_share``
(default 0.5) of the selected episodes, spread evenly over their order, trains the probes (their
windows, cut as the samples are, at most ``protocol.train_episodes`` of them, dealt round-robin over
the episodes); the samples of the others are scored. Every episode's states are read and checked
before generation: a state that cannot be read, has another length than the episode's frames, another
width than the first episode's, or holds NaN or infinite values makes that episode's samples
unreadable (listed before generation, naming the file and the key) and keeps it out of training.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from wfeval.config.errors import ConfigError
from wfeval.tasks.probing import StateVariable

DEFAULT_TRAIN_SHARE = 0.5


@dataclass
class Layout:
    """Which recorded state each variable reads: ``keys`` in order, each with its width (0: a ``T`` state)."""

    keys: list[str]
    widths: list[int]
    variables: tuple[StateVariable, ...]


@dataclass
class Plan:
    layout: Layout
    states: dict[int, np.ndarray] = field(default_factory=dict)  # episode index -> T×V (readable episodes)
    train: list[int] = field(default_factory=list)  # episode indices whose windows train the probes
    evaluate: set[int] = field(default_factory=set)  # episode indices whose samples are scored


def check_share(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < float(value) < 1:
        raise ConfigError(f"benchmark.probe_train_share must be a number between 0 and 1 (the share of the episodes "
                          f"that trains the probes), got {value!r}")
    return float(value)


def check_keys(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not all(isinstance(k, str) and k for k in value) or not list(value):
        raise ConfigError(f"benchmark.state_keys must be a non-empty list of recorded state names or null (every "
                          f"numeric state), got {value!r}")
    return tuple(value)


def chosen_keys(bench: Any) -> list[str]:
    """``benchmark.state_keys``, or the reader's default; ConfigError naming what the dataset records."""
    where, numeric, default = bench.state_features()
    keys = list(bench.state_keys) if bench.state_keys is not None else default
    if not keys:
        head = f"task=probing: benchmark {bench.spec.name!r} declares no state variables: {where}"
        if numeric:
            raise ConfigError(f"{head} records no numeric observation state by default; its numeric states: "
                              f"{', '.join(numeric)} (choose: benchmark.state_keys=[<key>, ...])")
        raise ConfigError(f"{head} records no numeric state beside its frames (LeRobot's observation.state, HDF5's "
                          "obs/<key>, a Minari dict observation entry), so there is nothing to probe for")
    unknown = [k for k in keys if k not in numeric]
    if unknown:
        raise ConfigError(f"benchmark.state_keys: {', '.join(map(repr, unknown))} is not a numeric state of {where}; "
                          f"its numeric states: {', '.join(numeric) or 'none'}")
    return keys


def _shape(values: np.ndarray) -> str:
    return f"{values.dtype} {tuple(values.shape)}"


def layout(bench: Any) -> Layout:
    """The variables of the chosen states, their widths read off the first episode that has them."""
    keys = chosen_keys(bench)
    widths, variables = [], []
    for key in keys:
        values, why = None, ""
        for episode in bench.episodes:
            try:
                values = np.asarray(bench.read_states(episode, key))
                break
            except ValueError as exc:
                why = str(exc)
        if values is None:
            raise ConfigError(f"task=probing: the state {key!r} of {bench.root} cannot be read in any episode ({why})")
        if values.ndim not in (1, 2) or values.dtype.kind not in "biuf":
            raise ConfigError(f"task=probing: {bench.state_where(episode, key)} holds {_shape(values)}; a state is "
                              "T or T×D numbers (one row per frame)")
        width = 0 if values.ndim == 1 else int(values.shape[1])
        kind = "continuous" if values.dtype.kind == "f" else "discrete"
        if width == 0:
            variables.append(StateVariable(key, kind, f"recorded state {key}"))
        else:
            names = bench.state_element_names(key, width) or [str(i) for i in range(width)]
            variables += [StateVariable(f"{key}[{n}]", kind, f"element {i} of the recorded state {key}")
                          for i, n in enumerate(names)]
        widths.append(width)
    return Layout(keys, widths, tuple(variables))


def episode_states(bench: Any, episode: Any, found: Layout) -> np.ndarray:
    """The episode's T×V states; ValueError naming the file, the key and what is wrong."""
    columns = []
    for key, width in zip(found.keys, found.widths):
        where = bench.state_where(episode, key)
        try:
            values = np.asarray(bench.read_states(episode, key))
        except ValueError as exc:  # the reader's own message may name the place already
            raise ValueError(str(exc) if str(exc).startswith(where) else f"{where}: {exc}") from None
        if values.dtype.kind not in "biuf" or values.ndim != (1 if width == 0 else 2) or \
                (width and values.shape[1] != width):
            want = "T numbers" if width == 0 else f"T×{width} numbers (as the first episode's)"
            raise ValueError(f"{where}: the state holds {_shape(values)}; expected {want}")
        if len(values) != episode.length:
            raise ValueError(f"{where}: {len(values)} state row(s) for {episode.length} frame(s); probing needs one "
                             "state per frame")
        values = values.astype(np.float64).reshape(len(values), -1)
        bad = ~np.isfinite(values)
        if bad.any():
            rows = np.nonzero(bad.any(axis=1))[0]
            raise ValueError(f"{where}: NaN or infinite state at {len(rows)} frame(s) (first: frame {int(rows[0])})")
        columns.append(values)
    return np.concatenate(columns, axis=1)


def training_flags(count: int, share: float) -> list[bool]:
    """Which of ``count`` episodes train the probes: a share spread evenly over their order (episode ``i``
    when ``floor((i + 1)·share) > floor(i·share)``), at least one of each side."""
    if count < 2:
        raise ConfigError(f"task=probing on a dataset fits its probes on some episodes and scores the others: the "
                          f"selection holds {count} episode(s), at least 2 are needed")
    flags = [int((i + 1) * share) > int(i * share) for i in range(count)]
    if not any(flags):
        flags[-1] = True
    if all(flags):
        flags[0] = False
    return flags


def plan(bench: Any) -> Plan:
    """Read and check every selected episode's state; deal the episodes into training and evaluation."""
    found = layout(bench)
    out = Plan(found)
    for index, (episode, trains) in enumerate(zip(bench.episodes, training_flags(len(bench.episodes),
                                                                                 bench.probe_train_share))):
        if trains:
            out.train.append(index)
        else:
            out.evaluate.add(index)
        if episode.errors:
            continue
        try:
            out.states[index] = episode_states(bench, episode, found)
        except ValueError as exc:
            episode.errors.append(str(exc))  # its samples are unreadable, reported before generation
            bench.problem(episode, str(exc))
    return out


def training_windows(bench: Any, chosen: Plan, count: int) -> list[Any]:
    """At most ``count`` windows of the readable training episodes, dealt round-robin over them."""
    per_episode = [[w for w in bench.records() if w.episode == i] for i in chosen.train if i in chosen.states]
    out: list[Any] = []
    for depth in range(max((len(w) for w in per_episode), default=0)):
        out += [w[depth] for w in per_episode if depth < len(w)]
    return out[:count]


def window_frames(bench: Any, episode: Any, first: int, stop: int) -> np.ndarray:
    from wfeval.benchmarks.episodes.decoder import decode

    path, options = episode.frames(first, stop, False)
    return decode(path, options)


def probe_window(bench: Any, chosen: Plan, window: Any) -> Any:
    """The ProbeEpisode of one window: frames, actions and states ``b … b+H``."""
    from wfeval.tasks.probing import ProbeEpisode

    episode = bench.episodes[window.episode]
    b = window.start + bench.context_frames - 1
    stop = b + bench.horizon + 1
    actions = np.asarray(episode.actions[b:stop - 1])
    return ProbeEpisode(frames=window_frames(bench, episode, b, stop), actions=tuple(actions),
                        states=chosen.states[window.episode][b:stop])


class RecordedStates:
    """What a dataset reader offers ``task=probing`` (:class:`~wfeval.tasks.probing.ProbingFamily`): a
    reader names the states its files hold (:meth:`state_features`, :meth:`state_element_names`,
    :meth:`state_where`) and reads them (``read_states``); this mixin makes the variables, the
    training windows and each sample's episode of them."""

    def state_features(self) -> tuple[str, list[str], list[str]]:
        """(where the states were looked for, the numeric states recorded, the default choice)."""
        return f"{self.root}", [], []  # type: ignore[attr-defined]

    def state_element_names(self, key: str, width: int) -> list[str] | None:
        return None

    def state_where(self, episode: Any, key: str) -> str:
        return f"{self.where(episode)} state {key!r}"  # type: ignore[attr-defined]

    def probing_identity(self) -> dict[str, Any]:
        """The probing options that join the fingerprint when set (the defaults keep earlier keys)."""
        return {**({"state_keys": list(self.state_keys)} if self.state_keys is not None else {}),  # type: ignore
                **({"probe_train_share": self.probe_train_share}  # type: ignore[attr-defined]
                   if self.probe_train_share != DEFAULT_TRAIN_SHARE else {})}  # type: ignore[attr-defined]

    def probe_plan(self) -> Plan:
        """The chosen states read and checked for every episode, and the training/evaluation episodes."""
        if getattr(self, "_probe_plan", None) is None:
            self._probe_plan = plan(self)
        return self._probe_plan

    def probe_records(self) -> list[Any]:
        """The samples under ``task=probing``: the windows of the episodes that do not train the probes."""
        held_out = self.probe_plan().evaluate
        return [w for w in self._windows if w.episode in held_out]  # type: ignore[attr-defined]

    def state_variables(self) -> tuple[StateVariable, ...]:
        return self.probe_plan().layout.variables

    def probe_episode(self, request: Any) -> Any:
        window = next(w for w in self._windows if w.sample_id == request.sample_id)  # type: ignore[attr-defined]
        return probe_window(self, self.probe_plan(), window)

    def probe_training(self, count: int, num_frames: int) -> list[Any]:
        """Windows of the training episodes (``num_frames`` is the benchmark's own: ``horizon + 1``)."""
        chosen = self.probe_plan()
        windows = training_windows(self, chosen, count)
        if len(windows) < 2:
            bench: Any = self
            raise ConfigError(f"task=probing: the training episodes of {bench.root} "
                              f"({', '.join(bench.episodes[i].name for i in chosen.train)}) give {len(windows)} "
                              f"readable window(s) of {bench.horizon + 1} frames; the probes need at least 2 (more "
                              "episodes, benchmark.probe_train_share, or a shorter benchmark.horizon)\n"
                              + bench.report())
        return [probe_window(self, chosen, w) for w in windows]
