"""``task=goal_reaching`` on pusht: the block's pose some steps later on the recorded trajectory, as
the goal, and the true world to plan in (the protocol of DINO-WM and stable-worldmodel).

A sample starts at a recorded window's last context frame: the world placed exactly at its pose
(agent, block position and angle), at rest (:meth:`PushTSimulator.place`; the frame is the recorded
one, pixel for pixel). Its goal is the recorded state ``k`` steps later: the first ``k >=
min_distance`` (``task.data.goal``) at which the block has moved out of the start's reach (the start
covers the goal pose less than :data:`REACH_COVERAGE`), searched up to ``max_distance`` and, for a
window whose block had not moved by then, on to the window's last recorded step
(``goal.beyond_max_distance``); ``optimal_steps`` is that ``k``: the demonstrator's steps. A goal
taken from the recording is in the recorded distribution (``goal.in_distribution``); a window whose
block never moves that far has its last state as the goal, marked ``reached_at_start`` (its
episode succeeds with 0 steps, for every model).

Success is gym-pusht's own coverage criterion with the goal's block pose as the target: the share
of the goal pose the block covers (shapely polygons of the tee, as the environment computes its
reward) at least :data:`REACH_COVERAGE`, at any real step within ``max_steps``. The environment
asks 0.95 of its fixed target; a goal reached within a few steps of pushing is held to 0.9 (a
shift of about 4 px or 3° leaves 0.9; 0.95 is within about 2 px, finer than a 96 px frame shows).
``distance`` is the block's distance to the goal position in px (512 px arena).

Pixel planning scores imagined frames with :meth:`PushTGoalEnvironment.distances`: the block and
the agent located by their colours (gym-pusht's palette) and compared with the goal frame's: block
centroid distance + half the agent's + :data:`IOU_WEIGHT` × (1 − IoU of the block masks), in
frame px. The plan audit (:mod:`wfeval.protocols.plan_audit`) counts a frame scored at most
:data:`REACH_SCORE_PX` as the goal reached (``reach_px``), imagined or real: the coverage criterion
as far as a 96 px frame shows it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.benchmarks.pusht.simulator import PushTSimulator, action_space, overlap, to_state

REACH_COVERAGE = 0.9
IOU_WEIGHT = 20.0
#: the plan audit's success read off a frame (``reach_px``): a pixel score (:meth:`PushTGoalEnvironment.distances`)
#: at most this. On 4608 real frames of the 32 default goal samples (each window's recorded targets, with Gaussian
#: noise of 0 to 64 px) it agrees with the coverage criterion on 98.1% (43 false successes, 44 missed of 399)
REACH_SCORE_PX = 6.0
#: the colours gym-pusht draws the block (LightSlateGray outline, a lighter fill) and the agent (RoyalBlue)
#: with, each as the middle of its two shades
BLOCK_RGB, AGENT_RGB = np.array([131, 150, 168], np.int16), np.array([72, 116, 240], np.int16)
TOLERANCE = 28  # per channel: nothing else gym-pusht draws (LightGreen, white, LightGray) comes this close
#: recorded-window fields that describe the recorded actions, not a goal episode (the replay adds its own)
_RECORDED_ONLY = ("rewards", "return", "terminated", "truncated", "episode_ends", "context_rewards", "step_info")


def goal_for(sim: PushTSimulator, request: GenerationRequest, min_distance: int = 3, max_distance: int = 6,
             max_steps: int = 16) -> dict[str, Any]:
    """The goal of a recorded window: its start pose, and the pose ``k`` recorded steps later where
    the block moved most (``k`` in [min_distance, max_distance], within the window's horizon)."""
    horizon = len(request.controls["actions"])
    if not 1 <= min_distance <= max_distance or max_steps < 1:
        raise ValueError(f"task.data.goal: need 1 <= min_distance <= max_distance and max_steps >= 1, got "
                         f"{min_distance}, {max_distance}, {max_steps}")
    if min_distance > horizon:
        raise ValueError(f"task.data.goal.min_distance={min_distance}: the window has {horizon} recorded steps")
    sim.restore(request.metadata["simulator"]["state"])
    start, poses = sim.pose(), []
    for action in request.controls["actions"]:
        sim.step(action)
        poses.append(sim.pose())
    k = next((t for t in range(min_distance, horizon + 1)
              if overlap(sim.env, start[2:], poses[t - 1][2:]) < REACH_COVERAGE), min(max_distance, horizon))
    goal = poses[k - 1]
    return {"start_pose": start, "pose": goal, "block_pose": goal[2:], "distance": k, "max_steps": int(max_steps),
            "reach_coverage": REACH_COVERAGE, "in_distribution": True, "beyond_max_distance": k > max_distance,
            "reached_at_start": overlap(sim.env, start[2:], goal[2:]) >= REACH_COVERAGE}


def goal_request(request: GenerationRequest, goal: Mapping[str, Any], store: Any, size: int) -> GenerationRequest:
    """The recorded window's request made a goal-reaching sample: its start frame (the world placed at
    the window's pose) and the goal observation; no script and no reference (the planner's actions,
    replayed, give both)."""
    info = goal_for(PushTSimulator(size), request, **dict(goal))
    env = PushTGoalEnvironment(request, info, size)
    generation = {k: v for k, v in request.generation.items() if k != "num_frames"}
    metadata = {k: v for k, v in request.metadata.items() if k not in _RECORDED_ONLY}
    metadata.update(goal=info, simulator={**metadata["simulator"], "state": {"start": info["start_pose"], "actions": []}})
    return dataclasses.replace(
        request, inputs={"image": store.put_array(env.frame(), kind="image"),
                         "goal_image": store.put_array(env.goal_frame(), kind="image")},
        controls={k: v for k, v in request.controls.items() if k in ("action_names", "action_space")},
        references={}, generation=generation, metadata=metadata)


def _palette_table() -> np.ndarray:
    """Class (0 other, 1 block, 2 agent) of every colour at 5 bits a channel."""
    levels = (np.arange(32, dtype=np.int16) << 3) + 4
    rgb = np.stack(np.meshgrid(levels, levels, levels, indexing="ij"), axis=-1).reshape(-1, 3)
    table = np.zeros(len(rgb), np.uint8)
    table[(np.abs(rgb - BLOCK_RGB) <= TOLERANCE).all(axis=-1)] = 1
    table[(np.abs(rgb - AGENT_RGB) <= TOLERANCE).all(axis=-1)] = 2
    return table


_TABLE = _palette_table()


def locate(frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per frame (…×H×W×3), the block's and the agent's masks: pixels within :data:`TOLERANCE` of their
    colour on every channel, at 5 bits a channel (edges blended with the background fall out)."""
    x = np.asarray(frames, dtype=np.uint8) >> 3
    code = (x[..., 0].astype(np.int32) << 10) | (x[..., 1].astype(np.int32) << 5) | x[..., 2]
    cls = _TABLE[code]
    return cls == 1, cls == 2


class PushTGoalEnvironment:
    """The true Push-T world of one goal-reaching sample: step it, observe it, re-ground a model on it."""

    action_space = action_space({})
    reach_px = REACH_SCORE_PX  # the plan audit: a frame scored this close to the goal frame shows the goal reached

    def __init__(self, request: GenerationRequest, goal: Mapping[str, Any] | None = None, size: int | None = None):
        goal = goal if goal is not None else request.metadata["goal"]
        self.base, self.size = request, int(size or request.metadata["simulator"]["config"]["observation_size"])
        self.sim = PushTSimulator(self.size)
        self.sim.place(goal["start_pose"])
        self.goal_pose = [float(v) for v in goal["pose"]]
        self.goal_cell = [round(v, 3) for v in self.goal_pose[2:]]  # the block's goal pose, in the episode summary
        self.max_steps, self.optimal_steps = int(goal["max_steps"]), int(goal["distance"])
        self.reach = float(goal.get("reach_coverage", REACH_COVERAGE))
        self._goal_frame: np.ndarray | None = None
        self._goal_masks: Any = None

    @property
    def at_goal(self) -> bool:
        return overlap(self.sim.env, self.sim.pose()[2:], self.goal_pose[2:]) >= self.reach

    @property
    def distance(self) -> float:
        """The block's distance to its goal position (px of the 512 px arena, 0.1 px)."""
        here = np.asarray(self.sim.pose()[2:4])
        return round(float(np.linalg.norm(here - np.asarray(self.goal_pose[2:4]))), 1)

    def hold_action(self) -> list[float]:
        """The target that keeps the agent where it is: its position (the planner's starting mean)."""
        return self.sim.pose()[:2]

    def step(self, action: Any) -> np.ndarray:
        return self.sim.step(action).frame

    def request(self, store: Any) -> GenerationRequest:
        """The sample re-grounded on the true present: its image and simulator snapshot are now's."""
        meta = self.base.metadata
        return dataclasses.replace(self.base, inputs={**self.base.inputs, "image": store.put_array(self.frame(), kind="image")},
                                   metadata={**meta, "simulator": {**meta["simulator"], "state": self.sim.snapshot()}})

    def frame(self) -> np.ndarray:
        return self.sim.frame()

    def goal_frame(self) -> np.ndarray:
        if self._goal_frame is None:
            self._goal_frame = PushTSimulator(self.size).place(self.goal_pose)
        return self._goal_frame

    def exact_state(self) -> list[float]:
        return self.sim.state()

    def goal_state(self) -> list[float]:
        return to_state(self.goal_pose)

    def true_futures(self, plans: Any) -> tuple[np.ndarray, np.ndarray]:
        """Each plan run from the true present: frames N×H×h×w×3 and exact states N×H×6."""
        plans = np.asarray(plans, dtype=np.float64)
        snapshot, sim = self.sim.snapshot(), PushTSimulator(self.size)
        frames = np.empty((*plans.shape[:2], self.size, self.size, 3), np.uint8)
        states = np.empty((*plans.shape[:2], 6), np.float64)
        for n, plan in enumerate(plans):
            sim.restore(snapshot)
            for t, action in enumerate(plan):
                frames[n, t] = sim.step(action).frame
                states[n, t] = sim.state()
        return frames, states

    def distances(self, frames: np.ndarray) -> np.ndarray:
        """Per imagined frame, its cost to the goal frame in frame px: block centroid distance + half the
        agent's + IOU_WEIGHT × (1 − IoU of the block masks); a block or agent not found costs the diagonal."""
        if self._goal_masks is None:
            block, agent = locate(self.goal_frame())
            self._goal_masks = (block, _centroid(block), _centroid(agent))
        goal_block, goal_c, goal_a = self._goal_masks
        flat = frames.reshape(-1, *frames.shape[-3:])
        blocks, agents = locate(flat)
        miss = float(np.hypot(*flat.shape[1:3]))
        out = np.empty(len(flat))
        for i, (block, agent) in enumerate(zip(blocks, agents)):
            c, a = _centroid(block), _centroid(agent)
            union = np.logical_or(block, goal_block).sum()
            iou = np.logical_and(block, goal_block).sum() / union if union else 0.0
            out[i] = (miss if c is None or goal_c is None else float(np.linalg.norm(c - goal_c))) \
                + 0.5 * (miss if a is None or goal_a is None else float(np.linalg.norm(a - goal_a))) \
                + IOU_WEIGHT * (1.0 - iou)
        return out.reshape(frames.shape[:-3])


def _centroid(mask: np.ndarray) -> np.ndarray | None:
    ys, xs = np.nonzero(mask)
    return np.array([xs.mean(), ys.mean()]) if len(xs) else None
