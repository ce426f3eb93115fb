"""LPIPS weights: staged with one command (heads by pip, backbone by URL / local file / torch's hub
cache), checked, refused when wrong, and never fetched by a run.

The official backbones cannot be downloaded here, so the staging paths are exercised on test files
whose names carry their own sha256 prefix (the rule torchvision and wfeval apply to the real
``alexnet-owt-7be5be79.pth``); the heads are the real ones, fetched through pip.
"""

from __future__ import annotations

import dataclasses
import functools
import http.server
import os
import pickle
import subprocess
import threading

import pytest
import torch

from tests.conftest import ROOT, cli_env, run_python
from tests.features._lpips import write_test_weights
from wfeval.features import lpips_weights as lw
from wfeval.features.lpips import load_lpips
from wfeval.features.lpips_weights import (
    HEADS_WHEEL_SHA256,
    NETS,
    resolve_lpips_weights,
    stage_backbone,
    stage_heads,
    stage_lpips_weights,
)
from wfeval.features.weights import WeightsUnavailable
from wfeval.utils.hashing import file_sha256


@pytest.fixture
def test_net(tmp_path, monkeypatch):
    """NETS["alex"] pointing at test files: a backbone named by its own sha256 prefix, test heads pinned."""
    backbone, heads = write_test_weights(tmp_path / "made")
    prefix = file_sha256(backbone)[:8]
    named = tmp_path / "downloads" / f"alexnet-test-{prefix}.pth"
    named.parent.mkdir()
    named.write_bytes(backbone.read_bytes())
    files = dataclasses.replace(NETS["alex"], backbone_file=named.name, heads_sha256=file_sha256(heads),
                                backbone_url=f"http://127.0.0.1:1/{named.name}")
    monkeypatch.setitem(NETS, "alex", files)
    return named, heads


def fetch_cli(*args: str, cache) -> subprocess.CompletedProcess:
    return run_python(["-m", "wfeval.features.fetch", *args, "--cache-dir", str(cache)],
                      cwd=ROOT, env=cli_env(), timeout=300)


def test_the_heads_come_from_the_pinned_lpips_wheel_through_pip(tmp_path):
    try:
        path = stage_heads("alex", tmp_path)
    except WeightsUnavailable as exc:
        if os.environ.get("WFEVAL_TESTS_OFFLINE") == "1":
            pytest.skip(f"PyPI unavailable: {exc}")
        raise
    assert file_sha256(path) == NETS["alex"].heads_sha256 and path.parent == tmp_path / "weights" / "lpips"
    state = torch.load(path, map_location="cpu", weights_only=True)
    assert [tuple(v.shape) for v in state.values()] == [(1, c, 1, 1) for c in (64, 192, 384, 256, 256)]


def test_a_local_backbone_is_checked_by_its_sha256_prefix_copied_and_recorded(tmp_path, test_net):
    named, heads = test_net
    weights = stage_lpips_weights("alex", tmp_path / "cache", source=named, heads_source=heads)
    assert weights.official and weights.backbone_sha256 == file_sha256(named)
    assert weights.backbone_path == str(tmp_path / "cache" / "weights" / "lpips" / named.name)
    assert weights.backbone_check.startswith(f"sha256 prefix {named.name[-12:-4]}")
    assert resolve_lpips_weights("alex", root=tmp_path / "cache") == weights  # a run finds it, nothing fetched
    assert load_lpips(weights, "cpu").net == "alex"


def test_a_backbone_whose_sha256_has_another_prefix_is_refused_and_nothing_is_staged(tmp_path, test_net):
    wrong = tmp_path / "wrong.pth"
    torch.save({"features.0.weight": torch.zeros(1)}, wrong)
    with pytest.raises(WeightsUnavailable, match=r"does not start with .* not torchvision's alexnet-test-.*refusing it"):
        stage_backbone("alex", tmp_path / "cache", source=wrong)
    assert not (tmp_path / "cache" / "weights" / "lpips").exists()


def test_the_backbone_is_downloaded_from_its_url_and_checked(tmp_path, test_net, monkeypatch):
    named, _ = test_net
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(named.parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{named.name}"
        monkeypatch.setitem(NETS, "alex", dataclasses.replace(NETS["alex"], backbone_url=url))
        monkeypatch.setenv("TORCH_HOME", str(tmp_path / "no-torch-home"))
        path = stage_backbone("alex", tmp_path / "cache")
        assert file_sha256(path) == file_sha256(named)
        named.write_bytes(b"the server now serves something else")  # a wrong download is refused, not kept
        path.unlink()
        with pytest.raises(WeightsUnavailable, match="does not start with"):
            stage_backbone("alex", tmp_path / "cache")
        assert not path.exists()
    finally:
        server.shutdown()
        server.server_close()


def test_an_unreachable_url_says_how_to_stage_the_file_offline(tmp_path, test_net, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "no-torch-home"))
    with pytest.raises(WeightsUnavailable, match=r"failed .*download it where that server is reachable and stage it: "
                                                 r"`python -m wfeval.features.fetch lpips --net alex --from alexnet-test-"):
        stage_backbone("alex", tmp_path / "cache")


def test_torchvisions_own_download_is_taken_from_the_torch_hub_cache(tmp_path, test_net, monkeypatch):
    named, _ = test_net
    hub = tmp_path / "torch" / "hub" / "checkpoints"
    hub.mkdir(parents=True)
    (hub / named.name).write_bytes(named.read_bytes())
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    assert file_sha256(stage_backbone("alex", tmp_path / "cache")) == file_sha256(named)


def test_missing_weights_name_the_command_and_a_run_never_fetches(tmp_path, monkeypatch):
    monkeypatch.setattr(lw, "download", lambda *a, **k: pytest.fail("a run must not download"))
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("a run must not call pip"))
    for net, name in (("alex", "alexnet-owt-7be5be79.pth"), ("vgg", "vgg16-397923af.pth")):
        with pytest.raises(WeightsUnavailable) as err:
            resolve_lpips_weights(net, root=tmp_path)
        assert f"`python -m wfeval.features.fetch lpips --net {net}`" in str(err.value)
        assert f"--from {name}" in str(err.value) and f"https://download.pytorch.org/models/{name}" in str(err.value)


def test_a_changed_staged_backbone_is_not_used(tmp_path, test_net):
    named, heads = test_net
    weights = stage_lpips_weights("alex", tmp_path, source=named, heads_source=heads)
    with open(weights.backbone_path, "r+b") as handle:
        handle.seek(2000)
        handle.write(b"\x00\x01\x02\x03")
    with pytest.raises(WeightsUnavailable, match="changed since it was checked"):
        load_lpips.__wrapped__(weights, "cpu")
    with pytest.raises(WeightsUnavailable, match="does not start with .*stage them once"):
        resolve_lpips_weights("alex", root=tmp_path)


class _Boom:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_files_that_are_not_lpips_state_dicts_are_refused_before_use(tmp_path):
    backbone, heads = write_test_weights(tmp_path)
    code = tmp_path / "code.pth"
    code.write_bytes(pickle.dumps({"features.0.weight": _Boom()}))
    negative = tmp_path / "negative.pth"
    torch.save({k: -v for k, v in torch.load(heads, weights_only=True).items()}, negative)
    layout = tmp_path / "layout.pth"
    torch.save({"features.0.weight": torch.zeros(3)}, layout)
    for b, h, message in ((code, heads, "not a loadable state dict"), (layout, heads, "not the expected layout"),
                          (backbone, negative, "negative head weights"), (backbone, layout, "not the expected layout")):
        with pytest.raises(WeightsUnavailable, match=message):
            load_lpips(resolve_lpips_weights("alex", backbone=str(b), heads=str(h)), "cpu")


def test_the_fetch_command_checks_reports_and_exits_1_without_weights(tmp_path):
    proc = fetch_cli("lpips", "--check", cache=tmp_path)
    assert proc.returncode == 1 and "is not staged" in proc.stderr and "fetch lpips --net alex" in proc.stderr
    wrong = tmp_path / "alexnet-owt-7be5be79.pth"
    wrong.write_bytes(b"not the alexnet")
    proc = fetch_cli("lpips", "--check", "--from", str(wrong), cache=tmp_path)
    assert proc.returncode == 1 and "does not start with 7be5be79" in proc.stderr and "refusing it" in proc.stderr
    proc = fetch_cli("--net", "vgg", cache=tmp_path)  # i3d takes no --net
    assert proc.returncode == 2 and "--net and --heads-from are options of `lpips`" in proc.stderr


def test_the_heads_wheel_hash_is_pinned_in_the_code():
    assert len(HEADS_WHEEL_SHA256) == 64 and lw.HEADS_REQUIREMENT == "lpips==0.1.4"
    assert {n: f.backbone_prefix for n, f in NETS.items()} == {"alex": "7be5be79", "vgg": "397923af"}
