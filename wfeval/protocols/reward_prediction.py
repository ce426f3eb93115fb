"""``protocol=reward_prediction`` (``task=reward_prediction`` selects it): the reward a model predicts for
each of a sample's actions, against the reward the simulator recorded for them.

Runs on the families whose samples record the true reward of every future action
(``request.metadata["rewards"]``: the recorded games — atari_*, crafter, orby). The model is stepped
one action at a time from the sample's start, open loop (its frames are the ``generated_video``, so
the reference metrics apply as under ``protocol=open_loop``); its predicted reward per action is:

- its own, when its ``StepOutput`` carries one (``reward``; the game oracle: the game's own reward);
- else, for a latent model with ``reward(z, actions)`` (docs/latent-models.md), ``reward`` of the latent
  before each action along its own imagined latents (``encode`` the start, ``predict`` the actions);
- else none: the reward measures skip the sample, saying the model predicts no reward.

``result.metadata["reward_prediction"]``: ``true``, ``predicted``, ``source``, ``discount`` (1: the
recorded rewards are summed undiscounted, as the recordings' ``return``).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from wfeval.models import latent
from wfeval.models.base import actions_of, initial_frame
from wfeval.models.protocol import Generated, check_step_output, has_generate, has_step_interface, step_rewards
from wfeval.protocols.base import Protocol, ProtocolRun, need_steps
from wfeval.protocols.drivers import Driver

NO_TRUTH = ("the sample records no true rewards (metadata['rewards']): task=reward_prediction runs on the recorded "
            "games (atari_*, crafter, orby); on the gridworld use task=behavioural_fidelity")


class RewardPrediction(Protocol):
    driver = "reward_prediction"
    task_kinds = ("reward_prediction",)
    needs_steps = False  # a latent model with reward() runs without the step interface

    def check(self, model: Any, benchmark: Any) -> None:
        if not latent.has_latent_interface(model):
            need_steps(model, self.driver)

    def drive(self, model: Any, benchmark: Any, store: Any, run: ProtocolRun, policy: Any = None) -> Any:
        return RewardPredictionDriver(model)

    def output_keys(self, model: Any, keys: tuple[str, ...]) -> tuple[str, ...]:
        """A latent model that neither steps nor generates frames predicts rewards only: no video."""
        return tuple(keys) if has_step_interface(model) or has_generate(model) else ()


def latent_rewards(model: Any, request: Any, actions: Sequence[Any]) -> list[float] | None:
    """A latent model's ``reward`` of each action, at the latent before it along its own imagination
    from the encoded start; None when the model has no ``reward``."""
    if not (latent.has_latent_interface(model) and callable(getattr(model, "reward", None))):
        return None
    z0 = latent.encode(model, initial_frame(request)[None])
    future = latent.predict(model, z0, np.asarray([list(actions)]))[0]
    before = np.concatenate([z0, future[:-1]])
    rewards = latent.real_values(model.reward(before, np.asarray(list(actions))), f"{type(model).__name__}.reward")
    if rewards.shape != (len(actions),) or not np.isfinite(rewards).all():
        raise ValueError(f"{type(model).__name__}.reward returned shape {rewards.shape} (or non-finite values) for "
                         f"{len(actions)} latents; expected {len(actions)} finite rewards")
    return rewards.tolist()


class RewardPredictionDriver(Driver):
    protocol = "reward_prediction"

    def _steps(self, request: Any, actions: Sequence[Any]) -> tuple[np.ndarray, list[float] | None]:
        """[initial frame] + one frame per action, stepped one at a time, and the model's own rewards."""
        state, frames, own = self.model.start(request), [initial_frame(request)[None]], []
        for action in actions:
            out = self.model.step(state, [action])
            state = out.state
            frames.append(check_step_output(out, 1, self.name))
            rewards = step_rewards(out, 1, self.name)
            own = None if rewards is None or own is None else [*own, float(rewards[0][-1])]
        return np.concatenate(frames), own

    def run_one(self, request: Any) -> Generated:
        true = request.metadata.get("rewards")
        if true is None:
            raise ValueError(NO_TRUTH)
        actions = list(actions_of(request))
        if len(true) != len(actions):
            raise ValueError(f"{len(true)} recorded rewards for {len(actions)} actions")
        if has_step_interface(self.model):
            video, predicted = self._steps(request, actions)
        elif has_generate(self.model):
            video, predicted = np.asarray(self.model.generate([request])[0]["generated_video"]), None
        else:
            video, predicted = None, None
        source = "model" if predicted is not None else None
        if predicted is None:
            predicted = latent_rewards(self.model, request, actions)
            source = "latent reward" if predicted is not None else None
        outputs = {} if video is None else {"generated_video": video}
        return Generated(outputs, {"protocol": self.protocol, "reward_prediction": {
            "true": [float(r) for r in true], "predicted": predicted, "source": source, "discount": 1.0}})
