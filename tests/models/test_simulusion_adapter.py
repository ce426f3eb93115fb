"""simulusion's world models through wfeval (wfeval/models/peers/simulusion.py): untrained networks of
its Dreamer, IRIS and DIAMOND (their weights live on a hub this machine cannot reach) run
task=probing (Dreamer, latent interface) and pixel runs (IRIS open loop, DIAMOND autoregressive,
step interface) from model=python, and the adapter's frames are the library's own rollout.

simulusion declares torchvision, which must not come in (it drags another torch), and uses none of
it on these paths: it is installed with ``--no-deps`` beside einops (.ci/run, docs/peer-models.md)."""

from __future__ import annotations

import json
import types

import numpy as np
import torch

from tests.conftest import compose
from wfeval.models import interfaces
from wfeval.models.peers.simulusion import SimState, SimulusionLatent, SimulusionSteps
from wfeval.pipeline.runner import run_from_config

ACTIONS = 5  # gridworld: noop, up, down, left, right


def tiny_dreamer() -> SimulusionLatent:
    from simulusion.configs.dreamer_config import DreamerConfig
    from simulusion.models.dreamer import Dreamer

    config = DreamerConfig()
    for key, value in dict(buffer_size=10, deter_size=32, stoch_size=8, num_units=32, perf_defaults=False).items():
        setattr(config, key, value)
    torch.manual_seed(0)
    return SimulusionLatent(Dreamer(config, obs_shape=(3, 64, 64), action_size=ACTIONS, device="cpu"))


def _iris_agent():
    from simulusion.configs.iris_config import IRISConfig
    from simulusion.models.iris_agent import IRISAgent

    config = IRISConfig(vocab_size=16, tokens_per_frame=16, token_embedding_dim=16, encoder_channels=8,
                        encoder_layers=4, encoder_residual_blocks=1, decoder_depth=8, transformer_timesteps=4,
                        transformer_embed_dim=32, transformer_layers=1, transformer_heads=2, actor_hidden_size=16,
                        perceptual_weight=0.0)
    torch.manual_seed(0)
    return IRISAgent(config, action_size=ACTIONS, device=torch.device("cpu"))


def tiny_iris() -> SimulusionSteps:
    from simulusion.world_model import as_world_model

    return SimulusionSteps(as_world_model(_iris_agent(), sample=False))  # the most likely tokens: deterministic


def tiny_diamond() -> SimulusionSteps:
    from simulusion.configs.diamond_config import DiamondConfig
    from simulusion.world_model.diamond import DiamondWorldModel, build_diamond_networks

    config = DiamondConfig()
    for key, value in dict(diffusion_channels=[32, 32], diffusion_res_blocks=1, diffusion_cond_dim=16,
                           reward_channels=[4, 4], reward_lstm_dim=8, num_conditioning_frames=2, obs_size=32,
                           num_sampling_steps=1).items():
        setattr(config, key, value)
    torch.manual_seed(0)
    diffusion, sampler, reward = build_diamond_networks(config, ACTIONS, "cpu")
    return SimulusionSteps(DiamondWorldModel(types.SimpleNamespace(config=config, diffusion_model=diffusion,
                                                                   sampler=sampler, reward_model=reward)))


def _run(tmp_path, factory, monkeypatch, *overrides):
    target = f"tests.models.test_simulusion_adapter.{factory}"
    monkeypatch.setenv("WFEVAL_TRUST", target)  # in-process: no command line, trusted explicitly
    cfg = compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false",
                   "benchmark.num_samples=2", "model=python", f"model.object._target_={target}", *overrides])
    summary = run_from_config(cfg, output_dir=tmp_path / "run")
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    return summary, rows


def test_an_untrained_dreamer_runs_probing_through_its_flattened_rssm_state(tmp_path, monkeypatch):
    summary, rows = _run(tmp_path, "tiny_dreamer", monkeypatch, "task=probing", "protocol.train_episodes=2",
                         "task.data.probing.num_frames=5", "protocol.horizons=[1]")
    assert summary.results["gridworld.probe_r2"].to_dict()["n_valid"] == 2
    imagined = [r for r in rows if r["metric_id"] == "imagined_probe_r2_k1"]
    assert len(imagined) == 2 and all(r["valid"] for r in imagined)
    generations = [json.loads(line) for line in (tmp_path / "run" / "generations.jsonl").read_text().splitlines()]
    assert [g["result"]["metadata"]["probing"]["latent_dim"] for g in generations] == [32 + 3 * 8] * 2  # deter, mean/std/stoch


def test_untrained_iris_and_diamond_run_pixel_protocols_through_the_step_interface(tmp_path, monkeypatch):
    for factory, protocol in (("tiny_iris", "open_loop"), ("tiny_diamond", "autoregressive")):
        summary, rows = _run(tmp_path / factory, factory, monkeypatch, f"protocol={protocol}", "metric=[psnr]",
                             "benchmark.num_frames=5")
        psnr = [r for r in rows if r["metric_id"] == "psnr"]
        assert len(psnr) == 2 and all(r["valid"] and np.isfinite(r["raw_value"]) for r in psnr), factory


def test_the_step_frames_are_the_librarys_own_rollout_and_a_state_is_never_mutated():
    adapter = tiny_iris()
    assert interfaces.problems(adapter, interfaces.STEP) == []
    frame = np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    start = SimState(adapter.world.encode(frame[None, None]), 0, 0, (64, 64))
    out = adapter.step(start, [1, 3, 0])
    rollout = adapter.world.rollout(adapter.world.encode(frame[None, None]), torch.tensor([[1, 3, 0]]))
    library = (rollout.frames[0].clamp(0, 1) * 255).round().byte().permute(0, 2, 3, 1).numpy()
    np.testing.assert_array_equal(out.frames, library)
    assert len(out.reward) == 3 and len(out.done) == 3  # IRIS's own reward and termination heads
    again = adapter.step(start, [1, 3, 0])  # the same state, branched twice: the same future
    np.testing.assert_array_equal(again.frames, out.frames)


def test_the_latent_round_trip_and_the_callers_random_state():
    adapter = tiny_dreamer()
    assert interfaces.problems(adapter, interfaces.LATENT) == []
    frames = np.random.default_rng(1).integers(0, 256, (3, 64, 64, 3), dtype=np.uint8)
    torch.manual_seed(123)
    before = torch.get_rng_state()
    z = adapter.encode(frames)
    imagined = adapter.predict(z, np.array([[0, 1], [2, 3], [4, 0]]))
    assert torch.equal(torch.get_rng_state(), before)  # simulusion samples inside a forked random state
    np.testing.assert_array_equal(adapter._flatten(adapter._state(z)), z)  # the flattened state rebuilds exactly
    assert imagined.shape == (3, 2, z.shape[1])
    np.testing.assert_array_equal(adapter.predict(z, np.array([[0, 1], [2, 3], [4, 0]])), imagined)  # repeatable
    assert adapter.reward(z, np.array([0, 1, 2])).shape == (3,)
