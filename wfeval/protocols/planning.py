"""Planning inside the world model, acting in the true simulator (``task=goal_reaching``).

At every real step the planner proposes candidate action plans, *imagines* each with the
model's step interface from the model's state re-grounded on the true current frame (one
``step_many`` call for all candidates when the model has it), scores the imagined frames with
the benchmark's locator (distance of the agent to the goal), and executes the best plan's first
action in the true world (model-predictive control, as in World-in-World). The episode ends at
the goal or after ``max_steps``. Planning methods: ``random_shooting`` (sticky random plans) and
``cem`` (cross-entropy method over per-step action distributions).
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.config.errors import ConfigError
from wfeval.models.base import initial_frame
from wfeval.models.protocol import Generated, check_step_output, step_many
from wfeval.protocols.base import Protocol, ProtocolRun
from wfeval.protocols.drivers import Driver, replay_references

METHODS = ("random_shooting", "cem")
TIME_PENALTY_PX = 0.5  # per imagined step: among plans that get as close, the earlier one wins


class Planner:
    def __init__(self, method: str = "random_shooting", candidates: int = 64, horizon: int = 6,
                 iterations: int = 3, elites: int = 8, p_repeat: float = 0.6, seed: int = 0):
        if method not in METHODS:
            raise ValueError(f"method {method!r} is not one of {', '.join(METHODS)}")
        if candidates < 1 or horizon < 1 or iterations < 1 or not 1 <= elites <= candidates:
            raise ValueError("need candidates >= 1, horizon >= 1, iterations >= 1 and 1 <= elites <= candidates")
        if not 0.0 <= p_repeat <= 1.0:
            raise ValueError(f"p_repeat must be in [0, 1], got {p_repeat}")
        self.method, self.candidates, self.horizon = method, int(candidates), int(horizon)
        self.iterations, self.elites, self.p_repeat, self.seed = int(iterations), int(elites), float(p_repeat), int(seed)

    def _sticky(self, rng: np.random.Generator, n_actions: int, horizon: int) -> np.ndarray:
        plans = rng.integers(0, n_actions, size=(self.candidates, horizon))
        keep = rng.random((self.candidates, horizon)) < self.p_repeat
        for t in range(1, horizon):
            plans[:, t] = np.where(keep[:, t], plans[:, t - 1], plans[:, t])
        return plans

    def _imagine(self, model: Any, state: Any, plans: np.ndarray,
                 score: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        outs = step_many(model, [state] * len(plans), [[int(a) for a in p] for p in plans])
        who = str(getattr(model, "name", "") or type(model).__name__)
        frames = np.stack([check_step_output(o, plans.shape[1], who, copy=False) for o in outs])  # a copy: N×H×h×w×3
        dist = score(frames)  # N×H pixels to the goal
        scores = (dist + TIME_PENALTY_PX * np.arange(1, plans.shape[1] + 1)).min(axis=1)
        return scores, frames[:, 0]

    def plan(self, model: Any, state: Any, n_actions: int, score: Callable[[np.ndarray], np.ndarray],
             rng: np.random.Generator, horizon: int | None = None) -> dict[str, Any]:
        """The best plan found: ``actions``, ``score``, ``first_frame`` (its imagined next frame), ``imagined``."""
        horizon = min(self.horizon, horizon or self.horizon)
        best: dict[str, Any] = {"score": np.inf}
        imagined = 0
        probs = np.full((horizon, n_actions), 1.0 / n_actions)
        for it in range(self.iterations if self.method == "cem" else 1):
            if self.method == "cem" and it:
                plans = np.stack([rng.choice(n_actions, size=self.candidates, p=probs[t]) for t in range(horizon)], 1)
            else:
                plans = self._sticky(rng, n_actions, horizon)
            scores, firsts = self._imagine(model, state, plans, score)
            imagined += plans.size
            i = int(np.argmin(scores))
            if scores[i] < best["score"]:
                best = {"actions": [int(a) for a in plans[i]], "score": float(scores[i]), "first_frame": firsts[i]}
            if self.method == "cem":
                elite = plans[np.argsort(scores, kind="stable")[:self.elites]]
                counts = np.stack([np.bincount(elite[:, t], minlength=n_actions) for t in range(horizon)])
                probs = 0.1 / n_actions + 0.9 * counts / self.elites
        return {**best, "imagined": imagined}


class Planning(Protocol):
    """``protocol=planning`` (``task=goal_reaching`` selects it); ``planner``: the :class:`Planner`'s options."""

    driver = "planning"
    task_kinds = ("planning",)
    needs_simulator = True
    option_schemas = {"planner": Planner}

    def __init__(self, planner: Any = None):
        self.planner_options = dict(planner or {})
        try:
            self.planner = Planner(**self.planner_options)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"protocol.planner: {exc}") from exc

    def identity(self, run: ProtocolRun) -> dict[str, Any]:
        return {**super().identity(run), "planner": self.planner_options, "task_data": run.task.to_dict()["data"]}

    def check(self, model: Any, benchmark: Any) -> None:
        super().check(model, benchmark)
        if not callable(getattr(benchmark, "environment", None)):
            raise ConfigError(f"protocol=planning: benchmark {benchmark.spec.name!r} offers no goal environment "
                              "(only gridworld does: task=goal_reaching benchmark=gridworld)")

    def drive(self, model: Any, benchmark: Any, store: Any, run: ProtocolRun, policy: Any = None) -> Any:
        return PlanningDriver(model, self.planner, benchmark.environment, benchmark.simulate, store)


class PlanningDriver(Driver):
    """``protocol=planning``: model-predictive control in the true simulator, imagining with the model."""

    protocol = "planning"

    def __init__(self, model: Any, planner: Planner, environment: Callable[[GenerationRequest], Any],
                 simulate: Any, store: Any):
        super().__init__(model)
        self.planner, self.environment, self.simulate, self.store = planner, environment, simulate, store

    def run_one(self, request: GenerationRequest) -> Generated:
        env = self.environment(request)
        seed = int(request.generation.get("seed") or 0)
        rng = np.random.default_rng((self.planner.seed, seed))
        frames, executed, rows = [initial_frame(request)[None]], [], []  # each a copy of its own
        for t in range(env.max_steps):
            if env.at_goal:
                break
            began = time.perf_counter()
            grounded = request if t == 0 else env.request(self.store)
            state = self.model.start(grounded)
            best = self.planner.plan(self.model, state, env.n_actions, env.distances, rng,
                                     horizon=env.max_steps - t)
            seconds = time.perf_counter() - began
            action = best["actions"][0]
            env.step(action)
            executed.append(action)
            frames.append(best["first_frame"][None])  # the model's prediction of the executed step
            rows.append({"step": t + 1, "call": "plan", "actions": [action], "frames": 1, "latency_seconds": seconds,
                         "imagined_steps": best["imagined"], "best_score_px": best["score"],
                         "distance_after": env.distance})
        info = {"success": env.at_goal, "steps": len(executed), "optimal_steps": env.optimal_steps,
                "max_steps": env.max_steps, "final_distance": env.distance, "goal": list(env.goal_cell),
                "actions": executed, "method": self.planner.method}
        return Generated({"generated_video": np.concatenate(frames)},
                         {"steps": rows, "protocol": self.protocol, "planning": info})

    def finalize(self, pairs, store):
        return replay_references(pairs, store, self.simulate, "planning")
