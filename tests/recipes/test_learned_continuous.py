"""The recipe's learned model on continuous actions (target positions, as Push-T's): trained in seconds on a
small synthetic world whose square glides halfway to the commanded target each step, it beats the frozen
frame, follows its actions (the true targets beat mirrored ones), keeps the declared bounds in its
checkpoint, and refuses actions of another kind, shape or bounds, naming the sample."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from wfeval.api import ActionSpace, GenerationRequest
from wfeval.storage.artifacts import ArtifactStore

torch = pytest.importorskip("torch")

SIZE, ARENA = 32, 512.0
SPACE = ActionSpace.continuous((2,), low=0.0, high=ARENA, names=("target_x", "target_y"))
TINY = {"data": {"episodes": 64, "steps": 12, "seed": 0},
        "net": {"channels": 32, "patch": 4, "blocks": 2},
        "train": {"steps": 400, "batch_size": 16, "lr": 0.005, "weight_decay": 0.0, "unroll": 1,
                  "gate_weight": 0.1, "seed": 0, "log_every": 100},
        "device": "cpu", "threads": 1}


def glide(episodes: int, steps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A 4-px square gliding halfway to its target each step (targets sticky, uniform in [0, 512]²)."""
    rng = np.random.default_rng(seed)
    frames = np.zeros((episodes, steps + 1, SIZE, SIZE, 3), np.uint8)
    frames[..., 2] = 40
    actions = np.zeros((episodes, steps, 2), np.float32)
    for e in range(episodes):
        position, target = rng.uniform(64, 448, 2), rng.uniform(0, ARENA, 2)
        for t in range(steps + 1):
            x, y = np.clip((position * SIZE / ARENA).astype(int), 0, SIZE - 4)
            frames[e, t, y:y + 4, x:x + 4] = (250, 200, 60)
            if t == steps:
                break
            if rng.random() < 0.4:
                target = rng.uniform(0, ARENA, 2).astype(np.float32)
            actions[e, t] = target
            position = position + 0.5 * (actions[e, t] - position)
    return frames, actions


def recording(episodes: int, steps: int, seed: int):
    from wfeval.recipes.data import Recording

    frames, actions = glide(episodes, steps, seed)
    return Recording(frames, actions, SPACE.names, list(range(episodes)), {"evaluation_seeds_excluded": 0,
                     "dropped_seeds": 0, "seconds": 0.0}, action_space=SPACE.to_dict())


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from wfeval.cli.train import run

    out = tmp_path_factory.mktemp("continuous") / "ckpt"
    bench = SimpleNamespace(spec=SimpleNamespace(name="glide", metadata={"family": "glide"}))
    cfg = {**json.loads(json.dumps(TINY)), "out": str(out)}
    patch = pytest.MonkeyPatch()
    patch.setattr("wfeval.recipes.data.record", lambda bench, episodes, steps, seed: recording(episodes, steps, seed))
    threads = torch.get_num_threads()
    try:
        meta = run(cfg, bench, log=lambda line: None)
    finally:
        patch.undo()
        torch.set_num_threads(threads)
    return out, meta


def _request(store: ArtifactStore, frame: np.ndarray, actions, space=SPACE, sample_id="s0") -> GenerationRequest:
    controls = {"actions": [list(map(float, a)) for a in actions], "action_names": list(space.names)}
    if space is not None:
        controls["action_space"] = space.to_dict()
    return GenerationRequest(sample_id=sample_id, benchmark_id="glide@1", inputs={"image": store.put_array(
        frame, kind="image")}, controls=controls)


def _psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float(10 * np.log10(255.0**2 / max(mse, 1e-10)))


def test_the_checkpoint_keeps_the_declared_bounds_and_the_space(checkpoint):
    from wfeval.recipes.net import NetConfig

    _, meta = checkpoint
    assert meta["net"]["action_kind"] == "continuous" and meta["net"]["n_actions"] == 2
    assert meta["net"]["action_low"] == [0.0, 0.0] and meta["net"]["action_high"] == [512.0, 512.0]
    assert ActionSpace.from_dict(meta["action_space"]) == SPACE
    assert meta["result"]["final_loss"] < meta["result"]["losses"][0]
    config = NetConfig.from_dict(meta["net"])
    assert config.action_low == (0.0, 0.0) and NetConfig.from_dict(config.to_dict()) == config
    # a discrete config's sidecar is as before: no continuous keys
    assert set(NetConfig(n_actions=5).to_dict()) == {"n_actions", "height", "width", "channels", "patch", "blocks"}
    with pytest.raises(ValueError, match="one bound per action element"):
        NetConfig(n_actions=2, action_kind="continuous", action_low=(0.0,), action_high=(1.0,))
    with pytest.raises(ValueError, match="low < high"):
        NetConfig(n_actions=1, action_kind="continuous", action_low=(1.0,), action_high=(1.0,))


def test_a_model_trained_on_target_positions_beats_the_frozen_frame_and_follows_its_actions(checkpoint, tmp_path):
    from wfeval.recipes.learned import LearnedModel

    out, _ = checkpoint
    model = LearnedModel(str(out), device="cpu")
    store = ArtifactStore(tmp_path / "store")
    frames, actions = glide(16, 12, seed=1)  # other episodes than the training ones
    learned, static, true_first, mirrored_first = [], [], [], []
    for e in range(16):
        request = _request(store, frames[e, 0], actions[e], sample_id=f"s{e}")
        video = model.generate([request])[0].outputs["generated_video"]
        assert video.shape == (13, SIZE, SIZE, 3) and np.array_equal(video[0], frames[e, 0])
        learned.append(_psnr(video[1:], frames[e, 1:]))
        static.append(_psnr(np.repeat(frames[e, :1], 12, axis=0), frames[e, 1:]))
        state = model.start(request)
        true_first.append(_psnr(model.step(state, actions[e, :1]).frames[0], frames[e, 1]))
        mirrored_first.append(_psnr(model.step(state, ARENA - actions[e, :1]).frames[0], frames[e, 1]))
    # measured: learned 21.6 dB, static 17.9 dB; first step 24.2 dB with the true target, 19.1 mirrored
    assert np.mean(learned) > np.mean(static) + 1.0, (np.mean(learned), np.mean(static))
    assert np.mean(true_first) > np.mean(mirrored_first) + 1.0, (np.mean(true_first), np.mean(mirrored_first))
    # numpy vectors, lists and tuples are the same action
    state = model.start(_request(store, frames[0, 0], actions[0]))
    as_arrays = model.step(state, list(actions[0, :3])).frames
    assert np.array_equal(as_arrays, model.step(state, [tuple(map(float, a)) for a in actions[0, :3]]).frames)


def test_actions_of_another_kind_shape_or_bounds_are_refused_naming_the_sample(checkpoint, tmp_path):
    from wfeval.recipes.learned import LearnedModel

    out, _ = checkpoint
    model = LearnedModel(str(out), device="cpu")
    store = ArtifactStore(tmp_path / "store")
    frame = glide(1, 1, 0)[0][0, 0]
    state = model.start(_request(store, frame, [[10.0, 20.0]]))
    with pytest.raises(ValueError, match=r"sample 's0': action 1 element 0 \(target_x\) = 600 is outside the declared"):
        model.step(state, [[1.0, 2.0], [600.0, 2.0]])
    with pytest.raises(ValueError, match=r"action 0 has shape \(3,\)"):
        model.step(state, [[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="action 0 element 1 .* is nan"):
        model.step(state, [[1.0, float("nan")]])
    other = ActionSpace.continuous((2,), low=-1.0, high=1.0, names=SPACE.names)
    [outcome] = model.generate([_request(store, frame, [[0.5, 0.5]], space=other, sample_id="s1")])
    assert isinstance(outcome, ValueError) and "trained on actions continuous (2,) float32 in [0, 512]" in str(outcome)
    discrete = GenerationRequest(sample_id="s2", benchmark_id="gridworld@1", inputs={"image": store.put_array(
        frame, kind="image")}, controls={"actions": [0, 1], "action_names": ["left", "right"]})
    [outcome] = model.generate([discrete])
    assert isinstance(outcome, ValueError) and "reads continuous actions" in str(outcome)
    assert "python -m wfeval.recipes.train benchmark=gridworld" in str(outcome)
