"""LPIPS equals the reference implementation, the ``lpips`` package (0.1.4), given identical weights.

``lpips`` imports torchvision, which cannot import beside this torch; it is installed with
``--no-deps`` (test-only, ``.ci/run``) and given, inside these tests only, a minimal stand-in
``torchvision.models`` whose ``alexnet`` / ``vgg16`` build torchvision's feature layers (written
out here from torchvision's definitions, not taken from wfeval) loaded with one randomly
initialised state dict. wfeval reads the same state dict from a file, and both use the real v0.1
heads shipped in the ``lpips`` package. Then per-frame distances agree within
:data:`TOLERANCE` = 2e-7 absolute (float32; measured max |Δ| 2.3e-8, relative 1e-6) on random frames and on real-looking ones (the
gridworld's rendered episodes, degraded; smooth textures with noise and a shift).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from tests.metrics.test_torch_path_matches_numpy_reference import _natural_pair
from wfeval.benchmarks.gridworld import world
from wfeval.benchmarks.gridworld.blur import gaussian_blur
from wfeval.features.lpips_weights import NETS, resolve_lpips_weights
from wfeval.functional import lpips as wfeval_lpips

TOLERANCE = 2e-7  # absolute, per frame (measured max 2.3e-8); LPIPS values here are 0.006–0.13


def _torchvision_alexnet_features() -> nn.Sequential:  # torchvision.models.alexnet().features
    return nn.Sequential(
        nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(kernel_size=3, stride=2),
        nn.Conv2d(64, 192, kernel_size=5, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(kernel_size=3, stride=2),
        nn.Conv2d(192, 384, kernel_size=3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(384, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(256, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(kernel_size=3, stride=2))


def _torchvision_vgg16_features() -> nn.Sequential:  # torchvision.models.vgg16().features (config "D")
    layers, channels = [], 3
    for v in [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            layers += [nn.Conv2d(channels, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
            channels = v
    return nn.Sequential(*layers)


BUILDERS = {"alex": _torchvision_alexnet_features, "vgg": _torchvision_vgg16_features}


class _Classifier(nn.Module):
    def __init__(self, features: nn.Sequential):
        super().__init__()
        self.features = features


@pytest.fixture(scope="module")
def backbones(tmp_path_factory) -> dict[str, Path]:
    """One randomly initialised torchvision-layout state dict per net, saved as a file."""
    folder = tmp_path_factory.mktemp("lpips-backbones")
    paths = {}
    for seed, (net, build) in enumerate(BUILDERS.items(), start=1):
        torch.manual_seed(seed)
        paths[net] = folder / f"random-{net}.pth"
        torch.save(_Classifier(build()).state_dict(), paths[net])
    return paths


@pytest.fixture
def lpips_package(backbones, monkeypatch):
    """The real ``lpips`` package, imported over the stand-in ``torchvision.models``; removed after."""
    if importlib.util.find_spec("lpips") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("the lpips package is missing: .ci/run installs it (pip install --no-deps lpips==0.1.4)")
        pytest.skip("the lpips package is not installed: pip install --no-deps lpips==0.1.4")

    def factory(net: str):
        def build(pretrained: bool = True, **_: object) -> _Classifier:
            model = _Classifier(BUILDERS[net]())
            model.load_state_dict(torch.load(backbones[net], map_location="cpu", weights_only=True))
            return model
        return build

    models = types.ModuleType("torchvision.models")
    models.alexnet, models.vgg16 = factory("alex"), factory("vgg")
    package = types.ModuleType("torchvision")
    package.models = models
    monkeypatch.setitem(sys.modules, "torchvision", package)
    monkeypatch.setitem(sys.modules, "torchvision.models", models)
    ours = [m for m in sys.modules if m == "lpips" or m.startswith("lpips.")]
    for name in ours:
        monkeypatch.delitem(sys.modules, name)
    import lpips

    yield lpips
    for name in [m for m in sys.modules if m == "lpips" or m.startswith("lpips.")]:
        del sys.modules[name]


def _reference(lpips, net: str, preds: np.ndarray, target: np.ndarray) -> np.ndarray:
    model = lpips.LPIPS(net=net, version="0.1", verbose=False)
    with torch.no_grad():
        a = torch.cat([lpips.im2tensor(f) for f in preds])  # f / 127.5 - 1, N×3×H×W
        b = torch.cat([lpips.im2tensor(f) for f in target])
        return model(a, b).reshape(-1).double().numpy()


def _weights(lpips, backbones, net: str):
    heads = Path(lpips.__file__).parent / "weights" / "v0.1" / f"{net}.pth"
    weights = resolve_lpips_weights(net, backbone=str(backbones[net]), heads=str(heads))
    assert weights.heads_sha256 == NETS[net].heads_sha256  # the package's heads are the ones wfeval pins
    assert not weights.official  # a random backbone is never passed off as LPIPS
    return weights


def _gridworld_pair(seed: int = 3, frames: int = 5) -> tuple[np.ndarray, np.ndarray]:
    video, _ = world.rollout(world.initial_state(seed), world.sample_actions(seed, frames - 1))
    noisy = np.clip(video + np.random.default_rng(seed).normal(0, 12, video.shape), 0, 255).astype(np.uint8)
    return np.concatenate([gaussian_blur(video, 5, 1.5), noisy]), np.concatenate([video, video])


def _random_pair(seed: int = 0, shape=(4, 64, 72, 3)) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, shape, dtype=np.uint8), rng.integers(0, 256, shape, dtype=np.uint8)


PAIRS = {"random": _random_pair, "gridworld": _gridworld_pair,
         "natural": lambda: _natural_pair(1, (4, 80, 96, 3))}


@pytest.mark.parametrize("net", ["alex", "vgg"])
@pytest.mark.parametrize("frames", PAIRS)
def test_per_frame_lpips_equals_the_lpips_package_given_identical_weights(lpips_package, backbones, net, frames):
    preds, target = PAIRS[frames]()
    expected = _reference(lpips_package, net, preds, target)
    got = wfeval_lpips(preds, target, per_frame=True, weights=_weights(lpips_package, backbones, net))
    assert got.shape == expected.shape and np.all(expected > 0.005)  # real distances, not a trivial 0 == 0
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOLERANCE)
    if net == "alex":  # the per-video value is the mean of the curve
        mean = wfeval_lpips(preds, target, weights=_weights(lpips_package, backbones, net))
        assert float(mean) == pytest.approx(expected.mean(), abs=TOLERANCE)


def test_a_torch_input_gives_the_same_values_as_numpy_and_batches_keep_their_shape(lpips_package, backbones):
    preds, target = _gridworld_pair()
    weights = _weights(lpips_package, backbones, "alex")
    on_numpy = wfeval_lpips(preds, target, per_frame=True, weights=weights)
    batch = wfeval_lpips(torch.from_numpy(np.stack([preds, target])), torch.from_numpy(np.stack([target, preds])),
                         per_frame=True, weights=weights)
    assert tuple(batch.shape) == (2, len(preds))
    np.testing.assert_allclose(batch[0].double().numpy(), on_numpy, atol=TOLERANCE)
    np.testing.assert_allclose(batch[1].double().numpy(), on_numpy, atol=TOLERANCE)  # symmetric


def test_identical_frames_are_at_distance_zero_exactly(lpips_package, backbones):
    video, _ = _gridworld_pair()
    for net in ("alex", "vgg"):
        assert np.all(wfeval_lpips(video, video.copy(), per_frame=True, weights=_weights(lpips_package, backbones, net)) == 0)


def test_identical_frames_among_different_ones_are_at_distance_zero_exactly(lpips_package, backbones):
    """A frame equal to its reference is 0 wherever it falls in the batch (a batch's tail takes other
    kernels: the oracle's LPIPS was once 1.4e-9), and the other frames keep their distances."""
    video, other = _gridworld_pair()
    mixed = video.copy()
    mixed[1::2] = other[1::2]  # odd frames differ, even frames identical
    weights = _weights(lpips_package, backbones, "alex")
    curve = wfeval_lpips(mixed, video, per_frame=True, weights=weights)
    assert np.all(curve[0::2] == 0)
    changed = [i for i in range(1, len(video), 2) if not np.array_equal(other[i], video[i])]
    assert changed and np.all(curve[changed] > 0)
