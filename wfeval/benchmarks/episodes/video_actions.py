"""``benchmark=video_actions``: a folder of episode videos, each beside its actions file, no manifest.

::

    my_episodes/
      run-001.mp4   run-001.npy      frames (any video wfeval reads) + actions (T−1 or T rows)
      day2/run-002.mkv   day2/run-002.npy

Every video file under ``dataset_root`` (searched recursively; ``.mp4``, ``.mkv``, ``.avi``, ``.mov``,
``.webm``) is an episode named by its path without the suffix; its actions are the ``.npy`` of the
same name (``actions_suffix``): one row per step, action ``t`` leading from frame ``t`` to ``t+1``
(``T − 1`` rows for ``T`` frames; a last extra row is ignored; more rows than frames: a truncated
video, every window of the actions' length unreadable). Rows of floats are continuous
actions (``T×D``); a 1-D integer array holds discrete ids. The frame rate is the video's (else
``benchmark.fps``). A video without an actions file, or an actions file without a video, is
reported before generation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from wfeval.api import ActionSpace
from wfeval.benchmarks.episodes.base import Episode, EpisodeBenchmark, Problem, continuous_space
from wfeval.benchmarks.episodes.decoder import options_for
from wfeval.config.errors import ConfigError

VIDEO_SUFFIXES = (".mp4", ".mkv", ".avi", ".mov", ".webm", ".m4v")


class VideoActionsBenchmark(EpisodeBenchmark):
    family = "video_actions"

    def __init__(self, dataset_root: str, actions_suffix: str = ".npy", **options: Any):
        self.actions_suffix = actions_suffix if actions_suffix.startswith(".") else f".{actions_suffix}"
        super().__init__(dataset_root, **options)

    def read_episodes(self) -> tuple[list[Episode], ActionSpace | None]:
        from wfeval.io import VideoReadError, count_frames, load_array

        if not self.root.is_dir():
            raise ConfigError(f"benchmark.dataset_root: {self.root} is not a folder")
        videos = sorted(p for p in self.root.rglob("*") if p.suffix.lower() in VIDEO_SUFFIXES and p.is_file())
        stems = {p.with_suffix("") for p in videos}
        for path in sorted(self.root.rglob(f"*{self.actions_suffix}")):
            if path.with_suffix("") not in stems:
                self.problems.append(Problem(str(path.relative_to(self.root)), "actions without a video of the same "
                                             f"name ({', '.join(VIDEO_SUFFIXES)}): not an episode"))
        if not videos:
            raise ConfigError(f"benchmark.dataset_root: no video file ({', '.join(VIDEO_SUFFIXES)}) under {self.root}")
        seen: dict[Path, Path] = {}
        episodes, rates = [], set()
        for video in videos:
            stem = video.with_suffix("")
            name = str(stem.relative_to(self.root)).replace("\\", "/")
            if stem in seen:
                self.problems.append(Problem(str(video.relative_to(self.root)), f"a second video for episode {name!r} "
                                             f"(first: {seen[stem].name}); ignored"))
                continue
            seen[stem] = video
            actions_path = stem.with_suffix(self.actions_suffix)
            rel_video, rel_actions = str(video.relative_to(self.root)), str(actions_path.relative_to(self.root))
            episode = Episode(name=name, split="default", length=0, frames=None, actions=None,
                              actions_where=rel_actions, files={"video": rel_video, "actions": rel_actions})
            escaping = [self.outside(p, r) for p, r in ((video, rel_video), (actions_path, rel_actions))]
            episode.errors += [e for e in escaping if e]  # neither is read
            try:
                if not episode.errors:
                    episode.length, fps = count_frames(video, limits=self.limits)
                    if fps:
                        rates.add(round(fps, 6))
            except VideoReadError as exc:
                episode.errors.append(f"{rel_video}: {exc.reason}")
            if not escaping[1] and not actions_path.is_file():
                episode.errors.append(f"{rel_actions}: file not found (the actions of {rel_video})")
            elif not escaping[1]:
                try:
                    array = load_array(actions_path, self.limits)[0]
                except ValueError as exc:
                    episode.errors.append(f"{rel_actions}: {getattr(exc, 'reason', exc)}")
                else:
                    if array.ndim < 1 or (episode.length and len(array) < episode.length - 1):
                        episode.errors.append(f"{rel_actions}: shape {tuple(array.shape)}; {rel_video} has "
                                              f"{episode.length} frames, so it needs {episode.length - 1} actions "
                                              "(one per step)")
                    else:
                        episode.actions = array[:, None] if array.ndim == 1 and np.issubdtype(
                            array.dtype, np.floating) else array
                        if episode.length and len(array) > episode.length:
                            episode.errors.append(f"{rel_video}: {episode.length} frames, shorter than its "
                                                  f"{len(array)} actions in {rel_actions} (a truncated video?)")
                        if episode.errors and (not episode.length or len(array) > episode.length):
                            episode.length = len(array)  # the windows the actions say it has: coverage counts them
            if not episode.errors:
                limits = self.limits

                def located(first: int, stop: int, image: bool, _video: Path = video) -> tuple[Path, dict[str, Any]]:
                    return _video, options_for("frames", limits=limits, image=image, start=first, stop=stop)

                episode.frames = located
            episodes.append(episode)
        if self.fps is None and len(rates) == 1:
            self.fps = float(rates.pop())
        elif self.fps is None and len(rates) > 1:
            raise ConfigError(f"benchmark.fps: the videos under {self.root} have different frame rates "
                              f"({', '.join(f'{r:g}' for r in sorted(rates))}); give one (benchmark.fps=...)")
        shapes = {tuple(e.actions.shape[1:]) for e in episodes if e.actions is not None}
        if len(shapes) > 1:
            raise ConfigError(f"{self.root}: the actions files hold actions of different shapes "
                              f"({sorted(shapes)}); one dataset has one action space")
        actions = next((e.actions for e in episodes if e.actions is not None), None)
        space = continuous_space(actions, where=f"{self.root}/*{self.actions_suffix}") if actions is not None else None
        return episodes, space

    def fingerprint(self) -> dict[str, Any]:
        from wfeval.benchmarks.episodes.decoder import digest

        files = {}
        for e in self.episodes:
            for rel in e.files.values():
                path = self.root / rel
                if path.is_file():
                    files[rel] = digest(path)
        return {**super().fingerprint(), "format": "video_actions", "actions_suffix": self.actions_suffix,
                "files_sha256": files}
