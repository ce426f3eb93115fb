"""``protocol=policy_optimization`` (``task=policy_optimization`` selects it): a policy trained inside the
world model, deployed in the true simulator (decision-ladder rung L7, docs/protocols.md).

Per sample and per training seed (``task.data.optimization``, :mod:`wfeval.tasks.policy_optimization`):

1. the learner (:class:`~wfeval.protocols.learner.TabularQ`, the same for every model) trains for a
   fixed budget of epsilon-greedy episodes **inside the model**, each from the sample's real start
   (``model.start``), its reward the family's reward function applied to the predicted frames (or the
   model's own ``reward``);
2. the same learner, same seed and budget, trains **in the simulator** from the same start: the ceiling;
3. both greedy policies and a **random** policy (the floor) are deployed in the simulator for
   ``eval_episodes`` held-out episodes (starts reached by seeded random warm-up steps of the simulator,
   seeded apart from training);
4. the model-trained policy and the random one are also rolled out inside the model from the sample's
   start, and their predicted returns compared with the real ones from that start: the plan audit
   (``result.metadata["plan_audit"]``, gaps as a fraction of the family's ``max_return``).

Outputs: ``generated_video``, the first seed's trained policy imagined inside the model (its actions
replayed in the simulator are the reference, so the reference metrics apply);
``result.metadata["policy_optimization"]``: the returns per seed and episode, the budget spent, the
settings. The oracle trains the simulator's learner exactly: its lift is 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from wfeval.config.errors import ConfigError
from wfeval.models.protocol import Generated
from wfeval.protocols import learner as L
from wfeval.protocols.base import Protocol, ProtocolRun
from wfeval.protocols.drivers import Driver, replay_references
from wfeval.tasks import policy_optimization
from wfeval.tasks.family import objective_from_frames

SIDES = ("model", "simulator", "random")


class PolicyOptimization(Protocol):
    driver = "policy_optimization"
    task_kinds = ("policy_optimization",)
    needs_simulator = True
    family_need = policy_optimization.NEED

    def identity(self, run: ProtocolRun) -> dict[str, Any]:
        return {**super().identity(run), "task_data": run.task.to_dict()["data"]}

    def check(self, model: Any, benchmark: Any) -> None:
        """The family's interface, and its own word on this benchmark (``optimization_refusal``: a family
        that serves only some of its games says why not before any generation)."""
        super().check(model, benchmark)
        refusal = getattr(benchmark, "optimization_refusal", None)
        why = refusal() if callable(refusal) else None
        if why:
            raise ConfigError(f"protocol=policy_optimization: benchmark {benchmark.spec.name!r} {why}")

    def drive(self, model: Any, benchmark: Any, store: Any, run: ProtocolRun, policy: Any = None) -> Any:
        data = run.task.to_dict()["data"]
        policy_optimization.settings(data, {k: 1 for k in policy_optimization.FAMILY_KEYS})  # the keys, before any run
        return PolicyOptimizationDriver(model, benchmark, data)


class PolicyOptimizationDriver(Driver):
    protocol = "policy_optimization"

    def __init__(self, model: Any, benchmark: Any, task_data: Any):
        super().__init__(model)
        self.bench, self.task_data = benchmark, task_data
        self.own_reward = not objective_from_frames(benchmark)  # the model's reward counts, when it has one

    def run_one(self, request: Any) -> Generated:
        fam, who = self.bench, self.name
        opts = policy_optimization.settings(self.task_data, fam.optimization_defaults(request))
        observe, reward, env = fam.optimization_observer(request), fam.optimization_reward, fam.optimization_environment(request)
        command = fam.optimization_command(request) if callable(getattr(fam, "optimization_command", None)) else None
        steps, discount, n = opts["max_steps"], opts["discount"], opts["n_actions"]
        base = (opts["seed"], int(request.generation.get("seed") or 0))
        returns: dict[str, list[list[float]]] = {side: [] for side in SIDES}
        spent, gaps, shown, sources = {"model": 0, "simulator": 0}, [], None, set()
        worlds: list[L.ModelWorld] = []

        def imagined() -> L.ModelWorld:
            world = L.ModelWorld(self.model, request, reward, who, own_reward=self.own_reward, command=command)
            worlds.append(world)
            return world

        def real(episode: int = 0, seed: Any = 0) -> L.SimWorld:
            return L.SimWorld(env, request, reward, episode, seed, opts["warmup"], command=command)

        for s in range(opts["seeds"]):
            learners = {}
            for side in ("model", "simulator"):
                q = L.TabularQ(n, opts["alpha"], discount, opts["epsilon"], np.random.default_rng((*base, s)))
                world = imagined() if side == "model" else real()
                spent[side] += L.train(world, q, observe, opts["train_episodes"], steps)
                learners[side] = q
            row: dict[str, list[float]] = {side: [] for side in SIDES}
            for e in range(1, opts["eval_episodes"] + 1):  # held-out starts: warm-up steps seeded apart from training
                chosen = {**{side: q.greedy(np.random.default_rng((*base, s, e, 2))) for side, q in learners.items()},
                          "random": L.random_policy(n, np.random.default_rng((*base, s, e, 1)), steps)}
                for side, act in chosen.items():
                    row[side].append(L.rollout(real(e, (*base, s, e)), act, observe, steps, discount)["return"])
            for side in SIDES:
                returns[side].append(row[side])
            # the plan audit at the sample's start: what the model promised its trained and a random policy
            drawn = L.random_policy(n, np.random.default_rng((*base, s, 0, 1)), steps)
            gap = []
            trained = lambda: learners["model"].greedy(np.random.default_rng((*base, s, 0, 2)))  # noqa: E731
            for act in (trained, lambda: drawn):  # each rollout from the same seeds: the same policy twice
                inside = L.rollout(imagined(), act(), observe, steps, discount)
                truth = L.rollout(real(), act(), observe, steps, discount)
                gap.append((inside["return"] - truth["return"]) / float(opts["max_return"]))
                shown = inside if shown is None else shown  # the first seed's trained policy, imagined
            gaps.append(gap)
        for world in worlds:
            sources |= world.sources
        video = np.stack([np.asarray(f) for f in shown["frames"]]).astype(np.uint8, copy=False)
        audit = {"steps": len(gaps), "unit": "fraction of the maximal return", "chosen_gap": float(np.mean([g[0] for g in gaps])),
                 "random_gap": float(np.mean([g[1] for g in gaps]))}
        info = {"returns": returns, "actions": shown["actions"], "budget_steps": spent, "reward_source": "+".join(sorted(sources)),
                "learner": "tabular Q-learning", **{k: opts[k] for k in sorted(opts)}}
        rows = [{"step": 0, "call": "train", "actions": [], "frames": 0, "latency_seconds": 0.0, "budget_steps": spent}]
        return Generated({"generated_video": video}, {"steps": rows, "protocol": self.protocol,
                                                      "policy_optimization": info, "plan_audit": audit})

    def finalize(self, pairs: list, store: Any) -> list:
        return replay_references(pairs, store, self.bench.simulate, "policy_optimization")

