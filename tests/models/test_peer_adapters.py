"""torch-world's world models through wfeval's latent interface (wfeval/models/peers/torch_world.py):
untrained networks of its LeWM and DINO-WM (their weights live on a hub this machine cannot reach)
run task=probing from model=python, and the adapter hands wfeval exactly what the library computes."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from tests.conftest import compose
from wfeval.models import interfaces
from wfeval.models.peers.torch_world import TorchWorldLatent
from wfeval.pipeline.runner import run_from_config

ACTIONS = 5  # gridworld: noop, up, down, left, right


def tiny_lewm() -> TorchWorldLatent:
    from torch_world.models import LeWM
    from torch_world.nn import CLSEncoder

    torch.manual_seed(0)
    encoder = CLSEncoder(img_size=32, patch_size=8, embed_dim=32, depth=1, num_heads=2)
    model = LeWM(encoder, action_dim=ACTIONS, embed_dim=32, history=3, depth=1, num_heads=2, head_dim=16,
                 mlp_dim=64, proj_dim=64)
    return TorchWorldLatent(model, image_size=32)


def tiny_dinowm() -> TorchWorldLatent:
    from torch_world.models import DINOWM
    from torch_world.nn import PixelPatches

    torch.manual_seed(0)  # raw 8×8 pixel patches stand in for DINOv2 (torch-world's own stand-in)
    model = DINOWM(PixelPatches(8), num_patches=16, embed_dim=3 * 8 * 8, action_dim=ACTIONS, depth=1, num_heads=2,
                   head_dim=16, mlp_dim=64)
    return TorchWorldLatent(model, image_size=32)


def _probing(tmp_path, target, monkeypatch):
    monkeypatch.setenv("WFEVAL_TRUST", target)  # in-process: no command line, trusted explicitly
    cfg = compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false", "task=probing",
                   "benchmark.num_samples=2", "protocol.train_episodes=2", "task.data.probing.num_frames=5",
                   "protocol.horizons=[1]", "model=python", f"model.object._target_={target}"])
    summary = run_from_config(cfg, output_dir=tmp_path / "run")
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    return summary, rows


@pytest.mark.parametrize("factory, width", [("tiny_lewm", 32), ("tiny_dinowm", 16 * 3 * 8 * 8)])
def test_an_untrained_torch_world_model_runs_probing_through_the_adapter(tmp_path, monkeypatch, factory, width):
    summary, rows = _probing(tmp_path, f"tests.models.test_peer_adapters.{factory}", monkeypatch)
    assert summary.results["gridworld.probe_r2"].to_dict()["n_valid"] == 2
    observed = [r for r in rows if r["metric_id"] == "probe_r2"]
    imagined = [r for r in rows if r["metric_id"] == "imagined_probe_r2_k1"]
    assert len(observed) == 2 and len(imagined) == 2
    for row in observed + imagined:  # a probe score per state variable, a real number for each
        assert {"agent_row", "agent_col"} <= set(row["components"])
        assert all(np.isfinite(v) for v in row["components"].values() if isinstance(v, float))
    assert tiny_lewm().name == "torch_world_lewm" and interfaces.problems(tiny_lewm(), interfaces.LATENT) == []
    generations = [json.loads(line) for line in (tmp_path / "run" / "generations.jsonl").read_text().splitlines()]
    assert [g["result"]["metadata"]["probing"]["latent_dim"] for g in generations] == [width, width]  # one frame's


def test_the_adapter_gives_wfeval_the_librarys_own_latents_and_rollout():
    adapter = tiny_lewm()
    model = adapter.model
    frames = np.random.default_rng(0).integers(0, 256, (4, 64, 64, 3), dtype=np.uint8)
    actions = np.array([[0, 1, 2], [3, 4, 0], [1, 1, 1], [4, 3, 2]])
    pixels = torch.nn.functional.interpolate(torch.tensor(frames).permute(0, 3, 1, 2).float() / 255, size=(32, 32),
                                             mode="bilinear", align_corners=False)
    with torch.no_grad():  # the library, called as its own docs say: (B, T, C, H, W) and one-hot actions
        z = model.encode(pixels[:, None])
        rolled = model.rollout(z, torch.eye(ACTIONS)[torch.tensor(actions)])
    latents = adapter.encode(frames)
    np.testing.assert_allclose(latents, z[:, 0].double().numpy(), rtol=0, atol=1e-6)
    imagined = adapter.predict(latents, actions)
    assert imagined.shape == (4, 3, 32)
    np.testing.assert_allclose(imagined, rolled[:, 1:].double().numpy(), rtol=0, atol=1e-5)
    assert not np.allclose(imagined[:, 0], imagined[:, 1])  # each step is its own latent


def test_a_discrete_action_outside_the_models_action_width_is_refused():
    adapter = tiny_lewm()
    z = adapter.encode(np.zeros((1, 64, 64, 3), np.uint8))
    with pytest.raises(ValueError, match="do not fit a one-hot of width 5"):
        adapter.predict(z, np.array([[5]]))
