"""Planning inside the world model, acting in the true simulator (``task=goal_reaching``).

At every real step the planner (:mod:`wfeval.protocols.planner`) proposes candidate action plans,
*imagines* each with the model's step interface from the model's state re-grounded on the true
current frame, scores the imagined frames with the benchmark's locator (distance of the agent to
the goal), and executes the best plan's first action in the true world (model-predictive
control, as in World-in-World). The episode ends at the goal or after ``max_steps``. Planning
methods: ``random_shooting`` (sticky random plans) and ``cem`` (cross-entropy method over
per-step action distributions).

The episodes of a generation batch (``run.batch_size`` samples) advance in lockstep: at each real
step the candidates of every sample still running are imagined in one ``step_many`` call (the
model's batched forward pass), each sample planning with its own generator, so its plans, actions
and outcome are those of the sample planned alone (for a model whose outputs do not depend on
the batch). A sample whose environment, ``start`` or imagination fails fails alone.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.config.errors import ConfigError
from wfeval.models.base import initial_frame
from wfeval.models.protocol import Generated, one_sample_at_a_time
from wfeval.protocols.base import Protocol, ProtocolRun
from wfeval.protocols.drivers import Driver, replay_references
from wfeval.protocols.planner import METHODS, TIME_PENALTY_PX, Planner  # noqa: F401 - the planner's names, here too


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

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        """The samples planned side by side (one batched imagination per real step), or one after the
        other for a model that keeps one sample's states at a time (a step program)."""
        if len(requests) > 1 and one_sample_at_a_time(self.model):
            return [out for request in requests for out in self._episodes([request])]
        return self._episodes(requests)

    def _episodes(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        episodes: list[Any] = []
        for request in requests:
            try:
                episodes.append(_Episode(request, self.environment(request), self.planner.seed))
            except TimeoutError:
                raise
            except Exception as exc:  # this sample's environment cannot be built: its failure
                episodes.append(exc)
        t = 0
        running = [e for e in episodes if isinstance(e, _Episode) and e.env.max_steps > t and not e.env.at_goal]
        while running:
            began = time.perf_counter()
            planning = []  # (episode, its model state re-grounded on the true present)
            for episode in running:
                try:
                    grounded = episode.request if t == 0 else episode.env.request(self.store)
                    planning.append((episode, self.model.start(grounded)))
                except TimeoutError:
                    raise
                except Exception as exc:
                    episode.failure = exc
            bests = self.planner.plan_many(self.model, [s for _, s in planning], [e.env.n_actions for e, _ in planning],
                                           [e.env.distances for e, _ in planning], [e.rng for e, _ in planning],
                                           [e.env.max_steps - t for e, _ in planning])
            seconds = (time.perf_counter() - began) / max(1, len(running))  # each sample's share of the batch
            for (episode, _), best in zip(planning, bests):
                episode.act(t, best, seconds, len(running))
            t += 1
            running = [e for e in running if e.failure is None and e.env.max_steps > t and not e.env.at_goal]
        return [e if not isinstance(e, _Episode) else e.outcome(self.planner.method, self.protocol) for e in episodes]

    def finalize(self, pairs, store):
        return replay_references(pairs, store, self.simulate, "planning")


class _Episode:
    """One sample's episode in the true world: the executed actions, the model's predicted frames,
    one row per real step."""

    def __init__(self, request: GenerationRequest, env: Any, planner_seed: int):
        self.request, self.env = request, env
        self.rng = np.random.default_rng((planner_seed, int(request.generation.get("seed") or 0)))
        self.frames, self.executed, self.rows = [initial_frame(request)[None]], [], []
        self.failure: BaseException | None = None

    def act(self, t: int, best: Any, seconds: float, batch: int) -> None:
        try:
            if isinstance(best, BaseException):
                raise best
            action = best["actions"][0]
            self.env.step(action)
        except TimeoutError:
            raise
        except Exception as exc:
            self.failure = exc
            return
        self.executed.append(action)
        self.frames.append(best["first_frame"][None])  # the model's prediction of the executed step
        self.rows.append({"step": t + 1, "call": "plan", "actions": [action], "frames": 1, "latency_seconds": seconds,
                          "imagined_steps": best["imagined"], "best_score_px": best["score"],
                          "distance_after": self.env.distance, "batch": batch})

    def outcome(self, method: str, protocol: str) -> Any:
        if self.failure is not None:
            return self.failure
        env = self.env
        info = {"success": env.at_goal, "steps": len(self.executed), "optimal_steps": env.optimal_steps,
                "max_steps": env.max_steps, "final_distance": env.distance, "goal": list(env.goal_cell),
                "actions": self.executed, "method": method}
        return Generated({"generated_video": np.concatenate(self.frames)},
                         {"steps": self.rows, "protocol": protocol, "planning": info})

