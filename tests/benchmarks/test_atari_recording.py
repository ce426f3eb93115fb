"""Atari recording: sample layout, byte-identical recordings, the content-keyed cache, frames equal
to gymnasium's ALE environment, episode ends, the resize filter and the behaviour policies."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import compose
from wfeval.pipeline import build
from wfeval.results import dataset_hash
from wfeval.storage.artifacts import ArtifactStore, read_array
from wfeval.storage.seal import unsealed_bytes

pytest.importorskip("ale_py")

SMALL = ["benchmark.num_trajectories=1", "benchmark.windows_per_trajectory=2", "benchmark.warmup_steps=5",
         "benchmark.horizon=8"]


def _bench(*overrides):
    cfg = compose(["benchmark=atari_pong", *SMALL, *overrides])
    return cfg, build.build_benchmark(cfg)


def _requests(store_dir, *overrides):
    cfg, bench = _bench(*overrides)
    requests = bench.requests(store=ArtifactStore(store_dir), task=build.build_task(cfg),
                              protocol=build.build_protocol(cfg))
    return bench, requests


def test_a_sample_holds_context_frames_future_actions_and_the_true_future(tmp_path):
    bench, requests = _requests(tmp_path)
    assert [r.sample_id for r in requests] == ["atari_pong-test-0000-00", "atari_pong-test-0000-01"]
    first = requests[0]
    context, image = read_array(first.inputs["context"]), read_array(first.inputs["image"])
    reference = read_array(first.references["video"])
    assert context.shape == (4, 64, 64, 3) and reference.shape == (9, 64, 64, 3) and reference.dtype == np.uint8
    np.testing.assert_array_equal(image, context[-1])
    np.testing.assert_array_equal(reference[0], context[-1])  # the reference starts at the last context frame
    assert len(first.controls["actions"]) == 8 and len(first.controls["context_actions"]) == 3
    assert list(first.controls["action_names"]) == ["NOOP", "FIRE", "RIGHT", "LEFT", "RIGHTFIRE", "LEFTFIRE"]
    assert first.generation["num_frames"] == 9 and first.generation["fps"] == 15
    meta = first.metadata
    assert (meta["game"], meta["trajectory"], meta["window"], meta["start_step"]) == ("pong", 0, 0, 5)
    assert len(meta["rewards"]) == len(meta["terminated"]) == 8 and list(meta["episode_ends"]) == []
    assert meta["simulator"]["family"] == "atari" and meta["simulator"]["config"]["repeat_action_probability"] == 0.0
    assert requests[1].metadata["start_step"] == 5 + 4 + 8
    assert bench.fingerprint()["identity"]["rom"]["md5"] == "60e0ea3cbe0913d39803477945e9e5ec"


def test_two_recordings_with_the_same_config_are_byte_identical(tmp_path):
    hashes, indexes = [], []
    for name in ("a", "b"):
        bench, requests = _requests(tmp_path / name)
        hashes.append(dataset_hash(requests))
        [path] = (tmp_path / name / "recordings" / "atari").rglob("*.json")
        indexes.append(unsealed_bytes(path.read_bytes()))  # each store seals with its own key
        objects = sorted((tmp_path / name / "objects").rglob("*.npy.zst"))
        assert objects and all(p.read_bytes() == (tmp_path / "a" / p.relative_to(tmp_path / name)).read_bytes()
                               for p in objects)
    assert indexes[0] == indexes[1] and hashes[0] == hashes[1]
    _, other = _requests(tmp_path / "c", "benchmark.seed=1")
    assert dataset_hash(other) != hashes[0]


def test_a_second_run_reads_the_cache_and_simulates_nothing(tmp_path, monkeypatch):
    from wfeval.benchmarks.atari import simulator

    _, first = _requests(tmp_path)
    monkeypatch.setattr(simulator.AtariSimulator, "reset", lambda *a: pytest.fail("re-simulated"))
    bench, second = _requests(tmp_path)
    assert [r.to_dict() for r in second] == [r.to_dict() for r in first]
    assert bench.stats["cached"] == 1 and bench.stats["recorded"] == 0
    # frames gone from the store: recorded again, identically
    monkeypatch.undo()
    for path in (tmp_path / "objects").rglob("*.npy.zst"):
        path.unlink()
    bench, third = _requests(tmp_path)
    assert bench.stats["recorded"] == 1 and [r.to_dict() for r in third] == [r.to_dict() for r in first]


def test_the_cache_key_covers_the_recording_config_but_not_the_number_of_trajectories():
    _, bench = _bench()
    assert _bench("benchmark.num_trajectories=3")[1].recording_key(0) == bench.recording_key(0)
    for override in ("benchmark.env.frameskip=2", "benchmark.resize=null", "benchmark.policy.kind=uniform",
                     "benchmark.split=val"):
        assert _bench(override)[1].recording_key(0) != bench.recording_key(0), override


def test_frames_and_rewards_equal_gymnasiums_ale_environment():
    gymnasium = pytest.importorskip("gymnasium")
    import ale_py

    from wfeval.benchmarks.atari.simulator import DEFAULTS, AtariSimulator

    gymnasium.register_envs(ale_py)
    env = gymnasium.make("ALE/Breakout-v5", frameskip=4, repeat_action_probability=0.0, full_action_space=False)
    sim = AtariSimulator({**DEFAULTS, "game": "breakout"})
    obs, _ = env.reset(seed=12345)
    np.testing.assert_array_equal(sim.reset(12345), obs)
    for action in np.random.default_rng(0).integers(0, 4, size=150):
        obs, reward, terminated, truncated, info = env.step(int(action))
        step = sim.step(int(action))
        np.testing.assert_array_equal(step.frame, obs)
        assert (step.reward, step.terminated, step.info["lives"]) == (reward, terminated, info["lives"])
    env.close()


def test_an_episode_end_inside_the_horizon_is_recorded_and_the_oracle_follows_it(tmp_path):
    from wfeval.benchmarks.atari.simulator import DEFAULTS, AtariSimulator
    from wfeval.benchmarks.recorded.baselines import SimulatorOracle
    from wfeval.benchmarks.recorded.policy import sticky_actions

    cfg, bench = _bench("benchmark=atari_breakout", "benchmark.policy.kind=uniform")
    seed = bench.trajectory_seed(0)
    sim = AtariSimulator({**DEFAULTS, "game": "breakout"})
    sim.reset(seed)
    actions = sticky_actions(seed, 3000, 4, 0.0)
    end = next(t for t, a in enumerate(actions) if sim.step(a).terminated)  # game over at step `end`
    _, requests = _requests(tmp_path, "benchmark=atari_breakout", "benchmark.policy.kind=uniform",
                            f"benchmark.warmup_steps={end - 5}", "benchmark.windows_per_trajectory=1")
    [request] = requests
    assert list(request.metadata["episode_ends"]) == [3] and request.metadata["terminated"][2] is True
    video = SimulatorOracle().generate([request])[0]["generated_video"]
    reference = read_array(request.references["video"])
    np.testing.assert_array_equal(video, reference)
    assert request.metadata["step_info"]["lives"][3] == 5  # a new game started after the end


def test_native_resolution_and_the_area_resize_filter(tmp_path):
    from wfeval.benchmarks.recorded.resize import area_resize

    _, [native, *_] = _requests(tmp_path, "benchmark.resize=null")
    _, [small, *_] = _requests(tmp_path, "benchmark.resize=[64,64]")
    full = read_array(native.references["video"])
    assert full.shape == (9, 210, 160, 3)
    np.testing.assert_array_equal(area_resize(full, (64, 64)), read_array(small.references["video"]))
    x = np.random.default_rng(0).integers(0, 256, (2, 20, 16, 3), dtype=np.uint8)
    blocks = x.reshape(2, 10, 2, 8, 2, 3).astype(np.int64).sum(axis=(2, 4))
    np.testing.assert_array_equal(area_resize(x, (10, 8)), (2 * blocks + 4) // 8)  # 2x2 mean, half up
    flat = np.full((210, 160, 3), 77, np.uint8)
    assert (area_resize(flat, (64, 64)) == 77).all()


def test_the_area_resize_is_the_integer_area_mean_rounded_half_up_at_any_size():
    """Its float matrix products give the integer sums exactly: against int64 sums of the overlaps."""
    from wfeval.benchmarks.recorded.resize import area_resize, area_weights

    rng = np.random.default_rng(1)
    for shape, (h, w) in [((3, 210, 160, 3), (64, 64)), ((2, 37, 23, 3), (64, 50)), ((1, 600, 400, 3), (97, 53))]:
        x = rng.integers(0, 256, shape, dtype=np.uint8)
        x[0, : shape[1] // 2] = 255  # the largest sums too
        num = np.einsum("oh,nhwc,pw->nopc", area_weights(shape[1], h), x.astype(np.int64), area_weights(shape[2], w),
                        optimize=True)  # pairwise contractions: exact in int64 whatever the order
        den = shape[1] * shape[2]
        np.testing.assert_array_equal(area_resize(x, (h, w)), (2 * num + den) // (2 * den))
    with pytest.raises(ValueError, match="uint8 levels 0-255"):
        area_resize(np.full((1, 20, 16, 3), 300, np.int64), (10, 8))


def test_the_behaviour_policies_and_a_recorded_action_file(tmp_path):
    from wfeval.benchmarks.recorded.policy import Policy, sticky_actions
    from wfeval.config.errors import ConfigError

    assert sticky_actions(7, 50, 6, 0.5)[:20] == sticky_actions(7, 20, 6, 0.5)  # prefix-stable
    runs = sum(a == b for a, b in zip(sticky_actions(7, 400, 6, 0.9), sticky_actions(7, 400, 6, 0.9)[1:]))
    assert runs > 300 and sum(a == b for a, b in zip(Policy("uniform").actions(7, 0, 400, 6)[1:],
                                                        Policy("uniform").actions(7, 0, 400, 6))) < 120
    rows = [[i % 6 for i in range(40)], [5 - i % 6 for i in range(40)]]
    path = tmp_path / "actions.json"
    path.write_text(json.dumps(rows))
    _, requests = _requests(tmp_path / "store", "benchmark.policy.kind=file", f"benchmark.policy.path={path}",
                            "benchmark.num_trajectories=2")
    assert list(requests[0].controls["actions"]) == rows[0][8:16]
    assert list(requests[2].controls["actions"]) == rows[1][8:16]
    path.write_text(json.dumps([rows[0][:10]]))
    with pytest.raises(ConfigError, match="row 0 has 10 actions"):
        _bench("benchmark.policy.kind=file", f"benchmark.policy.path={path}")
