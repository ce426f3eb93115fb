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

The planning **space** (``protocol.space``): ``pixels`` imagines frames with the step interface and
scores them with the benchmark's locator, as above; ``latent`` (:mod:`wfeval.protocols.latent_planning`)
imagines with a latent model's ``predict`` and scores the distance to the encoded goal observation;
``auto`` (the default) plans in latent space for a model with the latent interface (``encode`` and
``predict``), else in pixels. Either way the actions run in the true simulator; success is its state.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.config.errors import ConfigError
from wfeval.models import latent
from wfeval.models.base import initial_frame
from wfeval.models.protocol import Generated, one_sample_at_a_time
from wfeval.protocols import plan_audit
from wfeval.protocols.base import Protocol, ProtocolRun, need_steps
from wfeval.protocols.drivers import Driver, replay_references
from wfeval.protocols.latent_planning import LatentSpace, check_latent
from wfeval.protocols.planner import METHODS, TIME_PENALTY_PX, PixelSpace, Planner  # noqa: F401 - the planner's names, here too
from wfeval.tasks import goal_reaching

SPACES = ("auto", "pixels", "latent")


class Planning(Protocol):
    """``protocol=planning`` (``task=goal_reaching`` selects it); ``planner``: the :class:`Planner`'s
    options; ``space``: where candidate plans are imagined and scored (see the module doc)."""

    driver = "planning"
    task_kinds = ("planning",)
    needs_steps = False  # the pixel space needs them, the latent space does not (check)
    needs_simulator = True
    family_need = goal_reaching.NEED
    option_schemas = {"planner": Planner}

    def __init__(self, planner: Any = None, space: str = "auto"):
        self.planner_options = dict(planner or {})
        if space not in SPACES:
            raise ConfigError(f"protocol.space: {space!r} is not one of {', '.join(SPACES)}")
        self.space = space
        try:
            self.planner = Planner(**self.planner_options)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"protocol.planner: {exc}") from exc

    def identity(self, run: ProtocolRun) -> dict[str, Any]:
        return {**super().identity(run), "planner": self.planner_options, "space": self.space,
                "task_data": run.task.to_dict()["data"]}

    def resolve(self, model: Any) -> str:
        """``pixels`` or ``latent`` for this model (``auto``: latent for a model with the latent interface)."""
        if self.space != "auto":
            return self.space
        return "latent" if latent.has_latent_interface(model) else "pixels"

    def check(self, model: Any, benchmark: Any) -> None:
        super().check(model, benchmark)
        name = benchmark.spec.name
        space, offered = self.resolve(model), goal_reaching.goal_spaces(benchmark)
        if space not in offered:
            raise ConfigError(f"protocol=planning: benchmark {name!r} plans in {' and '.join(offered)} space only, "
                              f"and model {getattr(model, 'name', type(model).__name__)!r} would plan in {space} "
                              f"space (protocol.space={self.space}; docs/latent-models.md)")
        need_steps(model, self.driver) if space == "pixels" else check_latent(model)

    def output_keys(self, model: Any, keys: Sequence[str]) -> tuple[str, ...]:
        """The outputs a result must hold: a latent model that does not decode returns its predicted
        latents instead of a video (the pixel measures then skip it, saying why)."""
        if self.resolve(model) == "latent" and not callable(getattr(model, "decode", None)):
            return (*[k for k in keys if k != "generated_video"], "predicted_latents")
        return tuple(keys)

    def drive(self, model: Any, benchmark: Any, store: Any, run: ProtocolRun, policy: Any = None) -> Any:
        if self.resolve(model) == "latent":
            variables = getattr(benchmark, "state_variables", None)
            discrete = [v.kind == "discrete" for v in variables()] if callable(variables) else []
            space: Any = LatentSpace(model, self.planner, discrete)
        else:
            space = PixelSpace(model, self.planner, store)
        return PlanningDriver(model, self.planner, benchmark.environment, benchmark.simulate, store, space)


class PlanningDriver(Driver):
    """``protocol=planning``: model-predictive control in the true simulator, imagining with the model."""

    protocol = "planning"

    def __init__(self, model: Any, planner: Planner, environment: Callable[[GenerationRequest], Any],
                 simulate: Any, store: Any, space: Any = None):
        super().__init__(model)
        self.planner, self.environment, self.simulate, self.store = planner, environment, simulate, store
        self.space = space if space is not None else PixelSpace(model, planner, store)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        """The samples planned side by side (one batched imagination per real step), or one after the
        other for a model that keeps one sample's states at a time (a step program)."""
        if len(requests) > 1 and self.space.name == "pixels" and one_sample_at_a_time(self.model):
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
        started = [e for e in episodes if isinstance(e, _Episode)]
        self.space.begin(started)
        t = 0
        running = [e for e in started if e.failure is None and e.env.max_steps > t and not e.env.at_goal]
        while running:
            began = time.perf_counter()
            planned = self.space.plan(t, running)
            seconds = (time.perf_counter() - began) / max(1, len(running))  # each sample's share of the batch
            for episode, best in planned:
                episode.audit.step(best, self.space.name)  # before the real step: from the same present
                episode.act(t, best, seconds, len(running), self.space.score_key)
            t += 1
            running = [e for e in running if e.failure is None and e.env.max_steps > t and not e.env.at_goal]
        return [e if not isinstance(e, _Episode) else e.outcome(self.planner.method, self.protocol, self.space)
                for e in episodes]

    def finalize(self, pairs, store):
        return replay_references(pairs, store, self.simulate, "planning")


class _Episode:
    """One sample's episode in the true world: the executed actions, the model's prediction of each
    executed step (a frame, or a latent), one row per real step."""

    def __init__(self, request: GenerationRequest, env: Any, planner_seed: int):
        self.request, self.env = request, env
        self.rng = np.random.default_rng((planner_seed, int(request.generation.get("seed") or 0)))
        self.initial = initial_frame(request)[None]
        self.predicted: list[Any] = []
        self.executed: list[int] = []
        self.rows: list[dict[str, Any]] = []
        self.failure: BaseException | None = None
        self.goal_z: Any = None
        self.audit = plan_audit.EpisodeAudit(env)  # the candidates against the truth, step by step

    def act(self, t: int, best: Any, seconds: float, batch: int, score_key: str) -> None:
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
        self.predicted.append(best["first"])  # the model's prediction of the executed step
        self.rows.append({"step": t + 1, "call": "plan", "actions": [action], "frames": 1, "latency_seconds": seconds,
                          "imagined_steps": best["imagined"], score_key: best["score"],
                          "distance_after": self.env.distance, "batch": batch})

    def outcome(self, method: str, protocol: str, space: Any) -> Any:
        if self.failure is not None:
            return self.failure
        env = self.env
        try:
            outputs = space.outputs(self)
        except TimeoutError:
            raise
        except Exception as exc:  # a decoder that fails: this sample's failure
            return exc
        info = {"success": env.at_goal, "steps": len(self.executed), "optimal_steps": env.optimal_steps,
                "max_steps": env.max_steps, "final_distance": env.distance, "goal": list(env.goal_cell),
                "actions": self.executed, "method": method, "space": space.name}
        required = {"required_outputs": sorted(outputs)} if space.name == "latent" else {}  # generated_rate reads it
        return Generated(outputs, {"steps": self.rows, "protocol": protocol, "planning": info,
                                   "plan_audit": self.audit.summary(), **required})
