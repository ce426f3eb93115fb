"""The learner of ``protocol=policy_optimization``: tabular Q-learning on a family's compact observation,
the same for every model, and the two worlds it acts in (the model's imagination, the true simulator).

:class:`TabularQ` keeps one row of action values per observation key; it explores epsilon-greedily
while it trains and acts greedily when deployed, ties broken at random either way (by a generator of
its own when deployed): a learner that learnt nothing acts as the random policy does. The same seeds
and the same observations and rewards give the same table and the same actions (the oracle's learner
is the simulator-trained one, bit for bit).

A world is ``begin() -> frame`` and ``advance(action) -> (frame, reward, done)``: :class:`ModelWorld`
steps the model from the sample's start (its own ``reward`` when its step output carries one, else the
family's reward read off the predicted frames); :class:`SimWorld` steps the family's true simulator
from a start (the same reward function, on the real frames). A family whose actions are not the
learner's ids (Push-T's target positions) gives both worlds a ``command(frame, action) -> action``:
the learner's action made the world's from the frame the agent sees (the model's, inside the model);
a rollout's ``actions`` are the commands the world ran (``sent``; a world without one: the ids).
"""

from __future__ import annotations

from typing import Any, Callable, Hashable

import numpy as np

from wfeval.models.base import initial_frame
from wfeval.models.protocol import check_step_output, step_rewards

Observe = Callable[[Any, Any], Hashable]  # (the previous frame or None, the frame) -> observation
Policy = Callable[[Hashable, int], int]  # (observation, step) -> action
Command = Callable[[Any, int], Any]  # (the frame the agent sees, the learner's action) -> the world's action


def _as_is(frame: Any, action: int) -> int:
    return action


class TabularQ:
    def __init__(self, n_actions: int, alpha: float, discount: float, epsilon: float, rng: np.random.Generator):
        self.n, self.alpha, self.discount, self.epsilon, self.rng = n_actions, alpha, discount, epsilon, rng
        self.q: dict[Hashable, np.ndarray] = {}

    def _row(self, key: Hashable) -> np.ndarray:
        return self.q.setdefault(key, np.zeros(self.n))

    def explore(self, key: Hashable) -> int:
        if self.rng.random() < self.epsilon:
            return int(self.rng.integers(self.n))
        row = self._row(key)
        return int(self.rng.choice(np.flatnonzero(row == row.max())))

    def greedy(self, rng: np.random.Generator) -> Policy:
        """The deployed policy: the best action, ties (and an observation never met) broken by ``rng``."""
        def act(key: Hashable, step: int) -> int:
            row = self.q.get(key)
            return int(rng.integers(self.n)) if row is None else int(rng.choice(np.flatnonzero(row == row.max())))

        return act

    def update(self, key: Hashable, action: int, reward: float, after: Hashable, done: bool) -> None:
        target = reward + (0.0 if done else self.discount * float(self._row(after).max()))
        row = self._row(key)
        row[action] += self.alpha * (target - row[action])


def train(world: Any, learner: TabularQ, observe: Observe, episodes: int, max_steps: int) -> int:
    """``episodes`` epsilon-greedy episodes of at most ``max_steps`` steps; the steps taken (the budget spent)."""
    spent = 0
    for _ in range(episodes):
        frame = world.begin()
        key = observe(None, frame)
        for _ in range(max_steps):
            action = learner.explore(key)
            previous, (frame, reward, done) = frame, world.advance(action)
            after = observe(previous, frame)
            learner.update(key, action, reward, after, done)
            key, spent = after, spent + 1
            if done:
                break
    return spent


def rollout(world: Any, policy: Policy, observe: Observe, max_steps: int, discount: float) -> dict[str, Any]:
    """One episode of ``policy``: its discounted return, actions and frames (the start frame first)."""
    frame, previous = world.begin(), None
    frames, actions, total = [frame], [], 0.0
    for t in range(max_steps):
        action = int(policy(observe(previous, frame), t))
        previous, (frame, reward, done) = frame, world.advance(action)
        frames.append(frame)
        actions.append(getattr(world, "sent", action))  # the action the world ran (its command)
        total += discount ** t * float(reward)
        if done:
            break
    return {"return": total, "actions": actions, "frames": frames}


def random_policy(n_actions: int, rng: np.random.Generator, max_steps: int) -> Policy:
    """Uniform actions drawn up front: the same sequence whatever the policy sees (inside the model or not)."""
    drawn = rng.integers(0, n_actions, size=max_steps)
    return lambda key, step: int(drawn[step])


class ModelWorld:
    def __init__(self, model: Any, request: Any, reward: Callable[[Any, Any, Any], tuple[float, bool]], who: str,
                 own_reward: bool = True, command: Command | None = None):
        """``own_reward``: the model's own reward counts when it reports one (False: the family's objective
        is read off the frames, whatever the model reports)."""
        self.model, self.request, self.reward, self.who, self.own_reward = model, request, reward, who, own_reward
        self.command, self.sources = command or _as_is, set()

    def begin(self) -> np.ndarray:
        self.state, self.frame = self.model.start(self.request), initial_frame(self.request)
        return self.frame

    def advance(self, action: int) -> tuple[np.ndarray, float, bool]:
        self.sent = self.command(self.frame, action)  # read off the frame the model predicted
        out = self.model.step(self.state, [self.sent])
        previous, self.state = self.frame, out.state
        self.frame = check_step_output(out, 1, self.who)[-1]
        own = step_rewards(out, 1, self.who)
        if own is not None and self.own_reward:
            self.sources.add("model")
            return self.frame, float(own[0][-1]), bool(own[1][-1])
        self.sources.add("frames")
        reward, done = self.reward(self.request, previous, self.frame)
        return self.frame, float(reward), bool(done)


class SimWorld:
    def __init__(self, env: Any, request: Any, reward: Callable[[Any, Any, Any], tuple[float, bool]],
                 episode: int = 0, seed: Any = 0, warmup: int = 0, command: Command | None = None):
        self.env, self.request, self.reward, self.episode, self.seed = env, request, reward, episode, seed
        self.warmup, self.command = warmup, command or _as_is

    def begin(self) -> np.ndarray:
        self.frame = self.env.reset(self.episode, self.seed, self.warmup)
        return self.frame

    def advance(self, action: int) -> tuple[np.ndarray, float, bool]:
        self.sent = self.command(self.frame, action)
        previous, self.frame = self.frame, self.env.step(self.sent)
        reward, done = self.reward(self.request, previous, self.frame)
        return self.frame, float(reward), bool(done)
