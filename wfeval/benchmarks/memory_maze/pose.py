"""``pose_error``: which pose does a generated frame show? Recovered by rendering, no learned network.

The simulator can draw the view from any pose (:meth:`~.simulator.MemoryMazeSimulator.render_pose`).
For a generated frame, :func:`recover_pose` searches the pose whose render is closest to it
(mean squared error over the frame without its target-colour border), starting from the
commanded pose — the true pose after the sample's actions:

1. *coarse*: the commanded pose turned in steps of 30 degrees and moved by ±0.5 cell along x and
   y (``COARSE``: 15 renders), plus the poses of the sample's true path (its start and every step:
   a frozen or late model shows one of them), ranked by their error. The path's views are the
   reference video's frames (no render), and a frame equal to one of them is that pose at once
   (the oracle's and a frozen model's frames cost no render at all);
2. *refine*: pattern search from the two best coarse poses — the six neighbours (±position step
   along x and y, ±heading step), or if none is better the eight that move and turn at once; move
   to the best that lowers the error, else halve both steps — from 0.25 cell and 16 degrees down
   to ``min_position_step`` (1/64 cell) and ``min_heading_step`` (0.5 degree).

An exact frame (the oracle's) matches the commanded pose with error 0 before any move, so its
pose error is exactly 0. A frame whose best render is further than ``max_match_mse`` shows no pose
of the maze (noise, a black or flat frame) and scores the maximum, the maze's diagonal. Resolution (tests/benchmarks/test_memory_maze_pose.py,
docs/memory-maze.md): known offsets from 0.05 cell and 3 degrees up to 0.25 cell and 60 degrees
are recovered to within 0.03 cell and 2 degrees. It measures geometry, not pixel quality: a noisy
or blurred frame of the right pose scores about 0, a frozen or late one the distance it lags by;
a frame that shows no pose of the maze lands wherever its error is smallest.

:class:`PoseError` (``metric=pose_error``) reports, per sample, the mean position error in cells
over the evaluated frames (every ``stride``-th, and the last) and, in its components, the mean
and per-frame heading error in degrees, the recovered and commanded poses and the renders spent.
On a ``task=memory`` sample (``at_revisits``, the default) the evaluated frames are the revisits
(``metadata["memory"]["revisits"]``: frames that should show a place seen before), each with its
gap in ``components["gaps"]``: beside ``revisit_error``, does the model show the right place?
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.base import DescribedMetric
from wfeval.metrics.outcomes import scored, skipped
from wfeval.storage.artifacts import read_array

Pose = tuple[float, float, float]  # x, y (cells), heading (radians)
COARSE: tuple[tuple[float, float, float], ...] = tuple(
    [(0.0, 0.0, math.radians(d)) for d in range(0, 360, 30)]
    + [(dx, dy, 0.0) for dx, dy in ((0.5, 0), (-0.5, 0), (0, 0.5), (0, -0.5))]
)


#: A frame whose best render is further than this (mean squared error in uint8 levels², without the
#: border; 650.25 is PSNR 20 dB) shows no pose of the maze: noise (MSE ≈ 7,000), a black (≈ 3,300) or
#: flat grey frame (≥ the render's own variance, ≥ 950 on the recorded frames) are refused, while a
#: right-pose frame with noise of σ = 10 (≈ 100) or a blur, and any real view of the maze that the
#: search finds (≈ 0–1), are matched. An unmatched frame scores the maximum (see :class:`PoseError`).
MAX_MATCH_MSE = 650.25


def wrap(angle: float) -> float:
    """An angle in radians, wrapped to [-pi, pi)."""
    return (angle + math.pi) % (2 * math.pi) - math.pi


@dataclass(frozen=True)
class Recovered:
    pose: Pose
    error: float  # MSE of the best render (uint8 levels squared)
    renders: int


def recover_pose(render: Callable[[Pose], np.ndarray], frame: np.ndarray, start: Pose, *,
                 candidates: Sequence[Pose] = (), views: np.ndarray | None = None, border: int = 2,
                 position_step: float = 0.25, heading_step: float = math.radians(16),
                 min_position_step: float = 1 / 64, min_heading_step: float = math.radians(0.5),
                 coarse: bool = True, starts: int = 2) -> Recovered:
    """The pose whose render is closest to ``frame`` (search from ``start``; see the module doc).

    ``candidates``: more poses the coarse stage tries (the metric passes the true path's poses).
    ``views``: renders of ``candidates`` already at hand (``N×H×W×3``; the metric passes the
    reference video, whose frames are the renders of the path's poses): they cost no render, and a
    frame equal to one of them (without the border) is that pose at once — the commanded pose if its
    view is among the equal ones, else the equal view's pose nearest to it. Every pose rendered is
    kept for the rest of the search (a pattern search comes back to the poses it left).
    The refinement runs from the ``starts`` best coarse poses; the best result wins (ties: the
    earlier start)."""
    target = np.asarray(frame, dtype=np.float64)
    if border:
        target = target[border:-border, border:-border]
    renders = 0
    memo: dict[Pose, float] = {}

    def cost(pose: Pose) -> float:
        nonlocal renders
        key = (round(pose[0], 12), round(pose[1], 12), round(pose[2], 12))
        if key not in memo:
            renders += 1
            image = np.asarray(render(pose), dtype=np.float64)
            if border:
                image = image[border:-border, border:-border]
            memo[key] = float(np.mean((image - target) ** 2))
        return memo[key]

    first = (float(start[0]), float(start[1]), wrap(float(start[2])))
    poses = [(float(p[0]), float(p[1]), wrap(float(p[2]))) for p in candidates]
    known: list[float] = []
    if views is not None and len(views) == len(poses) and len(poses):
        shown = np.asarray(views, dtype=np.float64)
        if border:
            shown = shown[:, border:-border, border:-border]
        known = [float(v) for v in np.mean((shown - target) ** 2, axis=(1, 2, 3))]
        exact = [i for i, c in enumerate(known) if c == 0.0]
        if exact:
            pose = min((poses[i] for i in exact), key=lambda p: (p != first, pose_offsets(p, first)))
            return Recovered(pose, 0.0, 0)
    first_cost = cost(first)
    if first_cost == 0.0:
        return Recovered(first, 0.0, renders)
    scored_poses = [(first_cost, 0, first)]
    if coarse:
        around = [(first[0] + dx, first[1] + dy, wrap(first[2] + dh)) for dx, dy, dh in COARSE[1:]]
        scored_poses += [(cost(p), i + 1, p) for i, p in enumerate(around)]
        scored_poses += [(known[i] if known else cost(p), len(around) + i + 1, p) for i, p in enumerate(poses)]
    scored_poses.sort(key=lambda item: (item[0], item[1]))
    best, best_cost = scored_poses[0][2], scored_poses[0][0]
    for c0, _, pose0 in scored_poses[:max(1, int(starts))]:
        pose, c = _refine(cost, pose0, c0, position_step, heading_step, min_position_step, min_heading_step)
        if c < best_cost:
            best, best_cost = pose, c
        if best_cost == 0.0:
            break
    return Recovered(best, best_cost, renders)


def _refine(cost: Callable[[Pose], float], best: Pose, best_cost: float, ds: float, dh: float,
            min_ds: float, min_dh: float) -> tuple[Pose, float]:
    """Pattern search: move to the best of the six axis neighbours that lowers the error, else of
    the eight that move and turn at once (a step back and a turn can look alike), else halve the steps."""
    while best_cost > 0.0 and (ds >= min_ds or dh >= min_dh):
        step_best, step_cost = None, best_cost
        axis = ((ds, 0, 0), (-ds, 0, 0), (0, ds, 0), (0, -ds, 0), (0, 0, dh), (0, 0, -dh))
        coupled = tuple((mx, my, s * dh) for mx, my, _ in axis[:4] for s in (1, -1))
        for moves in (axis, coupled):
            for mx, my, mh in moves:
                pose = (best[0] + mx, best[1] + my, wrap(best[2] + mh))
                c = cost(pose)
                if c < step_cost:
                    step_best, step_cost = pose, c
            if step_best is not None:
                break
        if step_best is None:
            ds, dh = ds / 2, dh / 2
        else:
            best, best_cost = step_best, step_cost
    return best, best_cost


def pose_offsets(recovered: Pose, commanded: Pose) -> tuple[float, float]:
    """(position error in cells, absolute heading error in degrees)."""
    return (math.hypot(recovered[0] - commanded[0], recovered[1] - commanded[1]),
            abs(math.degrees(wrap(recovered[2] - commanded[2]))))


def commanded_poses(request: GenerationRequest) -> list[tuple[Pose, int | None, Any]] | None:
    """The true pose, current target and walker joints after each future step
    (``metadata['step_info']``), or None."""
    info = request.metadata.get("step_info") or {}
    if not all(k in info for k in ("x", "y", "heading")):
        return None
    n = len(info["x"])
    targets = info.get("target_index") or [None] * n
    joints = info.get("qpos") or [None] * n
    return [((float(x), float(y), float(h)), t, q)
            for x, y, h, t, q in zip(info["x"], info["y"], info["heading"], targets, joints)]


class PoseRenderer:
    """Renders poses in a sample's maze (its saved simulator state); simulators kept per config."""

    def __init__(self) -> None:
        self._simulators: dict[str, Any] = {}

    def simulator(self, request: GenerationRequest) -> Any:
        from wfeval.benchmarks.recorded.baselines import _simulator, simulator_info

        info = simulator_info(request)
        sim = _simulator(info, self._simulators)
        sim.restore(info["state"])
        return sim

    def lazy(self, request: GenerationRequest) -> Callable[[], Any]:
        """The sample's simulator, restored on the first call only."""
        held: list[Any] = []

        def get() -> Any:
            if not held:
                held.append(self.simulator(request))
            return held[0]
        return get

    def release(self) -> None:
        """Leave every simulator's GL context current on no thread (call from the thread that rendered)."""
        for sim in self._simulators.values():
            sim.release_context()

    def close(self) -> None:
        for sim in self._simulators.values():
            sim.close()
        self._simulators.clear()


def _pose_renderer(sim: Callable[[], Any], joints: Any, target: int | None) -> Callable[[Pose], np.ndarray]:
    """Renders poses with a step's joints and current target (the simulator fetched on the first render)."""
    def render(pose: Pose) -> np.ndarray:
        s = sim()
        if target is not None:
            s.set_target(int(target))
        return s.render_pose(*pose, qpos=joints)
    return render


def max_position_error(maze: Mapping[str, Any]) -> float | None:
    """The largest distance between two points of the maze (its diagonal, cells): an unmatched frame's error."""
    layout = maze.get("maze_layout") or []
    rows = len(layout)
    cols = len(layout[0]) if rows else 0
    return float(math.hypot(rows, cols)) if rows and cols else None


def render_poses(request: GenerationRequest, poses: Sequence[Pose], renderer: PoseRenderer | None = None,
                 target_index: int | None = None) -> np.ndarray:
    """The frames seen from ``poses`` in the sample's maze (``N×H×W×3`` uint8): what the family
    offers a memory measure that needs the view of a place (issue 23's revisits)."""
    own = renderer is None
    renderer = renderer or PoseRenderer()
    try:
        sim = renderer.simulator(request)
        if target_index is not None:
            sim.set_target(int(target_index))
        return np.stack([sim.render_pose(*p) for p in poses]) if poses else np.empty((0, 0, 0, 3), np.uint8)
    finally:
        if own:
            renderer.close()


class PoseError(DescribedMetric):
    """Mean distance (cells) between the pose each generated frame shows and the commanded pose."""

    name = "pose_error"
    aliases = ("position_heading_error",)
    version = "1.2"  # 1.1: frames that match no render score the maximum; 1.2: on task=memory, the revisit frames
    higher_is_better = False
    family = "control"
    capability = "action_control"
    output_unit = "cells"
    display_name = "Pose error"
    description = ("Distance between the pose a generated frame shows (recovered by matching renders of "
                   "the maze) and the pose the actions lead to; heading error in the components.")
    variant = ("render matching: coarse poses + true path, pattern search to 1/64 cell, 0.5 deg; MSE without border; "
               "a frame whose best render is above max_match_mse scores the maze's diagonal")
    required_artifacts = ("generated_video",)
    bounds = (0.0, None)

    def __init__(self, stride: int = 4, coarse: bool = True, max_match_mse: float = 650.25,
                 at_revisits: bool = True, confidence: float = 0.95, seed: int = 0):
        super().__init__(confidence, seed)
        if isinstance(stride, bool) or not isinstance(stride, int) or stride < 1:
            raise ValueError(f"metric.pose_error.stride must be an integer >= 1, got {stride!r}")
        if isinstance(max_match_mse, bool) or not isinstance(max_match_mse, (int, float)) \
                or not 0 < float(max_match_mse) < 255.0 ** 2:
            raise ValueError(f"metric.pose_error.max_match_mse must be a number in (0, 65025), got {max_match_mse!r}")
        self.stride, self.coarse, self.max_match_mse = int(stride), bool(coarse), float(max_match_mse)
        self.at_revisits = bool(at_revisits)
        self._renderer: PoseRenderer | None = None

    def frames(self, n: int) -> list[int]:
        """Indices (1-based into the video) of the evaluated frames: every ``stride``-th and the last."""
        picked = list(range(self.stride, n + 1, self.stride))
        return picked if picked and picked[-1] == n else picked + [n]

    def revisit_frames(self, request: GenerationRequest) -> dict[int, int] | None:
        """On a ``task=memory`` sample (``at_revisits``): revisit frame → its gap (frames since the
        first visit); None elsewhere (every ``stride``-th frame is evaluated)."""
        memory = request.metadata.get("memory")
        if not self.at_revisits or not isinstance(memory, Mapping) or not memory.get("revisits"):
            return None
        return {int(j): int(j) - int(i) for i, j in sorted(memory["revisits"], key=lambda p: p[1])}

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        sim_info = request.metadata.get("simulator")
        if not isinstance(sim_info, Mapping) or sim_info.get("family") != "memory_maze":
            return skipped(request.sample_id, self.name, "needs a Memory Maze sample (a pose the benchmark can render)")
        poses = commanded_poses(request)
        if not poses:
            return skipped(request.sample_id, self.name, "no true poses in the request (metadata['step_info'])")
        video = read_array(result.artifacts["generated_video"])
        if video.ndim != 4 or video.shape[0] != len(poses) + 1:
            return skipped(request.sample_id, self.name,
                           f"generated video shape {video.shape}: {len(poses)} steps need {len(poses) + 1} frames")
        self._renderer = self._renderer or PoseRenderer()
        maze = request.metadata.get("maze") or {}
        start = maze.get("start_pose")
        path = ([(start["x"], start["y"], start["heading"])] if start else []) + [p for p, _, _ in poses]
        worst = max_position_error(maze)
        reference = request.references.get("video")
        views = read_array(reference) if reference is not None and start else None  # the renders of the path's poses
        if views is not None and (views.shape[0] != len(path) or views.shape[1:] != video.shape[1:]
                                  or sim_info.get("resize")):
            views = None  # not the renders of the path as the simulator draws them: searched by rendering
        if worst is None:
            return skipped(request.sample_id, self.name, "no maze layout in the request (metadata['maze'])")
        rows = []
        revisits = self.revisit_frames(request)
        try:
            sim = self._renderer.lazy(request)  # built only when a frame is not one of the reference's
            for k in self.frames(len(poses)) if revisits is None else sorted(revisits):
                commanded, target, joints = poses[k - 1]
                found = recover_pose(_pose_renderer(sim, joints, target), video[k], commanded, candidates=path,
                                     views=views, coarse=self.coarse)
                position, heading = pose_offsets(found.pose, commanded)
                if not found.error <= self.max_match_mse:  # shows no pose of the maze: the maximum
                    position, heading = worst, 180.0
                rows.append((k, position, heading, found))
        finally:
            self._renderer.release()  # the GL context is left current on no thread (issue 32, item 8)
        position_errors = [r[1] for r in rows]
        heading_errors = [r[2] for r in rows]
        unmatched = [r[0] for r in rows if not r[3].error <= self.max_match_mse]
        components = {
            "unmatched_frames": unmatched,
            "max_match_mse": self.max_match_mse,
            "frames": [r[0] for r in rows],
            "per_frame": position_errors,
            "heading_error_deg": float(np.mean(heading_errors)),
            "per_frame_heading_error_deg": heading_errors,
            "recovered": [list(r[3].pose) for r in rows],
            "commanded": [list(poses[r[0] - 1][0]) for r in rows],
            "match_mse": [r[3].error for r in rows],
            "renders": int(sum(r[3].renders for r in rows)),
        }
        diagnostics = {"variant": self.variant, "stride": self.stride}
        if revisits is not None:  # task=memory: does the frame at each revisit show the place seen before?
            components["gaps"] = [revisits[r[0]] for r in rows]
            diagnostics.update(frames="the revisit frames (task=memory)", stride=None)
        if unmatched:
            diagnostics["note"] = (f"{len(unmatched)} of {len(rows)} evaluated frames match no render of the maze "
                                   f"(best MSE above {self.max_match_mse:g}): each scores the maximum, {worst:.3f} cells")
        return scored(request.sample_id, self.name, float(np.mean(position_errors)), components=components,
                      diagnostics=diagnostics)

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
