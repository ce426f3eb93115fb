"""Continuous actions through the contract, the model helpers, the policies, the closed-loop driver and
the control metrics: vectors within declared bounds, bad actions fail their own sample with the
reason, metrics that only know discrete moves skip saying why."""

from __future__ import annotations

import numpy as np
import pytest

from wfeval.api import ActionSpace, ContractError, GenerationRequest, GenerationResult, action_space_of
from wfeval.metrics.control import ActionFollowing, AgentPositionError
from wfeval.models.base import actions_of
from wfeval.models.protocol import Generated, StepOutput
from wfeval.protocols.autoregressive import AutoregressiveDriver
from wfeval.protocols.closed_loop import ClosedLoopDriver
from wfeval.protocols.policies import NoopPolicy, PolicyContext, RandomPolicy, ScriptedPolicy
from wfeval.storage.artifacts import ArtifactStore, read_array

SPACE = ActionSpace.continuous((2,), low=-1, high=1, names=("vx", "vy"))
SIZE = 24


def render(pos) -> np.ndarray:
    frame = np.full((SIZE, SIZE, 3), 60, np.uint8)
    y, x = np.clip(np.rint(pos), 0, SIZE - 4).astype(int)
    frame[y:y + 4, x:x + 4] = 220
    return frame


def move(pos, action) -> np.ndarray:
    return np.clip(np.asarray(pos, float) + 3 * np.asarray(action, float), 0, SIZE - 4)


def simulate(request, actions):
    """The toy world's replay of ``actions`` from the sample's start (what a simulator benchmark gives)."""
    pos, frames = np.asarray(request.metadata["start"], float), []
    frames.append(render(pos))
    for a in actions:
        pos = move(pos, a)
        frames.append(render(pos))
    return np.stack(frames), {}


class ToyOracle:
    """Steps the toy world exactly; checks it is given float vectors."""

    name = "toy_oracle"

    def start(self, request):
        return np.asarray(request.metadata["start"], float)

    def step(self, state, actions):
        frames = []
        for a in actions:
            assert isinstance(a, np.ndarray) and a.shape == (2,) and a.dtype == np.float32, a
            state = move(state, a)
            frames.append(render(state))
        return StepOutput(state, np.stack(frames))


def request(store, actions=None, space=SPACE) -> GenerationRequest:
    actions = actions if actions is not None else np.random.default_rng(0).uniform(-1, 1, (8, 2)).tolist()
    start = [10.0, 10.0]
    controls = {"actions": actions}
    if space is not None:
        controls["action_space"] = space.to_dict()
    return GenerationRequest("s0", inputs={"image": store.put_array(render(start), kind="image")}, controls=controls,
                             generation={"seed": 7, "num_frames": len(actions) + 1}, metadata={"start": start})


# -- the contract and the model helper ------------------------------------------------------------


def test_action_space_round_trips_and_describes_itself():
    assert ActionSpace.from_dict(SPACE.to_dict()) == SPACE
    assert SPACE.describe() == "continuous (2,) float32 in [-1, 1]"
    assert SPACE.bounds() == ((-1.0, -1.0), (1.0, 1.0))
    with pytest.raises(ContractError, match="low > high"):
        ActionSpace.continuous((2,), low=[0, 1], high=[1, 0])
    with pytest.raises(ContractError, match="bounds must be finite"):
        ActionSpace.continuous((2,), low=float("-inf"), high=1)
    with pytest.raises(ContractError, match="a continuous space holds floats"):
        ActionSpace(kind="continuous", shape=(2,), dtype="int64")


def test_actions_of_gives_a_read_only_float_array_for_continuous_actions(tmp_path):
    r = request(ArtifactStore(tmp_path))
    actions = actions_of(r)
    assert actions.shape == (8, 2) and actions.dtype == np.float32 and not actions.flags.writeable
    undeclared = actions_of(request(ArtifactStore(tmp_path), space=None))
    assert undeclared.dtype == np.float64 and undeclared.shape == (8, 2)


def test_actions_of_refuses_bad_actions_naming_the_sample_and_the_action(tmp_path):
    store = ArtifactStore(tmp_path)
    with pytest.raises(ValueError, match=r"sample 's0': action 1 element 0 \(vx\) = 3 is outside the declared bounds"):
        actions_of(request(store, [[0, 0], [3, 0]]))
    with pytest.raises(ValueError, match=r"action 0 element 1 \(vy\) is nan"):
        actions_of(request(store, [[0, float("nan")]]))
    with pytest.raises(ValueError, match=r"action 0 has shape \(3,\); the action space is \(2,\)"):
        actions_of(request(store, [[0, 0, 0]]))


def test_discrete_ids_stay_ints_and_a_fraction_is_never_truncated():
    names = {"action_names": ["noop", "left"]}
    assert actions_of(GenerationRequest("d", controls={"actions": [1, 0, 1.0], **names})) == (1, 0, 1)
    with pytest.raises(ValueError, match=r"action 2 is 2; a discrete action is an id in \[0, 2\)"):
        actions_of(GenerationRequest("d", controls={"actions": [1, 0, 2], **names}))
    # a fractional scalar is a continuous 1-D control, not id 0
    assert action_space_of(GenerationRequest("c", controls={"actions": [0, 0.5]})).is_continuous


# -- policies ---------------------------------------------------------------------------------------


def _context(store, step=0, chosen=(), space=SPACE):
    return PolicyContext(request(store), step, tuple(chosen), ("vx", "vy"), 8, 7, space)


def test_random_policy_samples_within_bounds_reproducibly(tmp_path):
    store = ArtifactStore(tmp_path)
    policy = RandomPolicy(seed=3, p_repeat=0.0)
    draws = np.stack([policy.act(None, _context(store, t)) for t in range(200)])
    assert draws.shape == (200, 2) and draws.dtype == np.float32
    assert (draws >= -1).all() and (draws <= 1).all() and draws.std() > 0.4  # spread over [-1, 1]
    again = np.stack([RandomPolicy(seed=3, p_repeat=0.0).act(None, _context(store, t)) for t in range(200)])
    assert np.array_equal(draws, again)
    narrow = ActionSpace.continuous((2,), low=[0, -0.1], high=[0.5, 0.1])
    got = np.stack([policy.act(None, _context(store, t, space=narrow)) for t in range(50)])
    assert (got[:, 0] >= 0).all() and (got[:, 0] <= 0.5).all() and (np.abs(got[:, 1]) <= 0.1).all()


def test_random_policy_refuses_an_unbounded_space_and_noop_is_zero(tmp_path):
    store = ArtifactStore(tmp_path)
    with pytest.raises(ValueError, match="declares none"):
        RandomPolicy().act(None, _context(store, space=ActionSpace.continuous((2,))))
    assert NoopPolicy().act(None, _context(store)).tolist() == [0.0, 0.0]
    shifted = ActionSpace.continuous((2,), low=[0.2, -1], high=[1, 1])
    assert NoopPolicy().act(None, _context(store, space=shifted)).tolist() == pytest.approx([0.2, 0.0])


# -- drivers ----------------------------------------------------------------------------------------


def test_closed_loop_on_a_continuous_world_replays_the_chosen_vectors(tmp_path):
    store = ArtifactStore(tmp_path)
    r = request(store)
    driver = ClosedLoopDriver(ToyOracle(), RandomPolicy(seed=1), simulate)
    (out,) = driver.generate([r])
    assert isinstance(out, Generated)
    chosen = out.metadata["closed_loop"]["actions"]
    assert len(chosen) == 8 and all(len(a) == 2 and all(-1 <= v <= 1 for v in a) for a in chosen)
    assert chosen != [list(a) for a in r.controls["actions"]]  # the policy's, not the script
    result = GenerationResult("s0", artifacts={"generated_video": store.put_array(out.outputs["generated_video"],
                                                                                   kind="video")},
                              metadata=dict(out.metadata))
    ((replayed, _),) = driver.finalize([(r, result)], store)
    assert np.array_equal(read_array(replayed.references["video"]), out.outputs["generated_video"])
    assert replayed.controls["actions"] == tuple(tuple(a) for a in chosen)
    assert all(isinstance(row["actions"][0], list) for row in out.metadata["steps"][1:])  # JSON-ready


class OutOfBounds:
    name = "wild"

    def act(self, frame, context):
        return [0.0, 2.0] if context.step == 3 else [0.0, 0.0]


def test_a_policy_action_outside_the_space_fails_the_sample_naming_the_step(tmp_path):
    (out,) = ClosedLoopDriver(ToyOracle(), OutOfBounds(), simulate).generate([request(ArtifactStore(tmp_path))])
    assert isinstance(out, ValueError)
    assert "policy 'wild' at step 3: action 0 element 1 (vy) = 2 is outside the declared bounds [-1, 1]" in str(out)


def test_scripted_closed_loop_equals_autoregressive_on_vectors(tmp_path):
    store = ArtifactStore(tmp_path)
    r = request(store)
    (closed,) = ClosedLoopDriver(ToyOracle(), ScriptedPolicy(), simulate).generate([r])
    (stepped,) = AutoregressiveDriver(ToyOracle(), chunk=3).generate([r])
    assert np.array_equal(closed.outputs["generated_video"], stepped.outputs["generated_video"])
    assert np.array_equal(stepped.outputs["generated_video"], simulate(r, actions_of(r))[0])


# -- control metrics ---------------------------------------------------------------------------------


@pytest.mark.parametrize("metric", [ActionFollowing(), AgentPositionError()], ids=lambda m: m.name)
def test_discrete_move_metrics_skip_continuous_actions_saying_why(tmp_path, metric):
    store = ArtifactStore(tmp_path)
    r = GenerationRequest("s0", controls={"actions": [[0.1, 0.2]] * 4}, metadata={"agent_positions": [[0, 0]] * 5})
    video = store.put_array(np.zeros((5, 8, 8, 3), np.uint8), kind="video")
    row = metric.compute_sample(r, GenerationResult("s0", artifacts={"generated_video": video}))
    assert row.status == "skip" and "continuous actions" in row.skip_reason and "does not apply" in row.skip_reason
    assert row.diagnostics["skip_category"] == "continuous actions: not applicable"
