"""Identity by content (issue 25, item 6): any model option that names an existing file or folder -- a
checkpoint -- enters the model's identity by content hash, as the model's code already does: retrain
in place and the next run regenerates every sample. ``model=python`` defaults to ``device: auto``."""

from __future__ import annotations

import sys

import pytest

from tests.robustness._run import wfeval
from wfeval.models._files import option_files

MODEL = "tests.robustness._models.CheckpointModel"


def _run(monkeypatch, capsys, tmp_path, name, checkpoint):
    return wfeval(monkeypatch, capsys, tmp_path, "model=python", f"model.object._target_={MODEL}",
                  f"+model.object.checkpoint={checkpoint}", "metric=[generated_rate]", name=name, samples=3)


def test_overwriting_a_checkpoint_in_place_regenerates_every_sample(monkeypatch, capsys, tmp_path):
    checkpoint = tmp_path / "ckpt.pt"
    checkpoint.write_text("0\n")
    assert _run(monkeypatch, capsys, tmp_path, "first", checkpoint).counts() == (3, 0)
    assert _run(monkeypatch, capsys, tmp_path, "same", checkpoint).counts() == (0, 3)  # unchanged: cached
    checkpoint.write_text("7\n")  # retrained, saved to the same path
    retrained = _run(monkeypatch, capsys, tmp_path, "retrained", checkpoint)
    assert retrained.counts() == (3, 0)
    files = retrained.manifest["model"]["fingerprint"]["option_files"]
    assert list(files) == ["object.checkpoint"] and len(files["object.checkpoint"]) == 64


def test_a_weights_folder_is_identified_by_every_file_in_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "weights"
    folder.mkdir()
    (folder / "a.bin").write_bytes(b"1")
    before = option_files({"object": {"weights_dir": str(folder)}})
    (folder / "a.bin").write_bytes(b"2")
    assert option_files({"object": {"weights_dir": str(folder)}}) != before


def test_options_naming_no_existing_file_leave_the_identity_as_it_was(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "auto").mkdir()  # a folder that happens to share the name of a device setting
    cfg = {"_target_": "x.Y", "name": "oracle", "device": "auto", "object": {"checkpoint": str(tmp_path / "nope.pt"),
                                                                            "scale": 2, "mode": "fast"},
           "cwd": str(tmp_path), "work_dir": str(tmp_path)}
    assert option_files(cfg) == {}


def test_the_built_in_baselines_keep_their_keys(monkeypatch, capsys, tmp_path):
    """No option of a built-in baseline names a file: their identities (and cached generations) stay."""
    ran = wfeval(monkeypatch, capsys, tmp_path, "metric=[generated_rate]", samples=1)
    model = ran.manifest["model"]
    assert "option_files" not in model["fingerprint"] and model["key"] == "f57a60d0549a100fb4894075cd64d641"


@pytest.mark.subprocess  # an import-laziness probe
def test_model_python_defaults_to_device_auto_without_importing_torch(tmp_path):
    import subprocess

    from tests.conftest import ROOT, cli_env, compose

    assert compose(["model=python", "model.object._target_=x.Y"]).model.device == "auto"
    probe = ("import sys; from wfeval.models.python import resolve_device; "
             "print(resolve_device('auto'), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=cli_env(), cwd=ROOT,
                         check=True).stdout.split()
    assert out == ["cpu", "False"]  # a model that does not use torch never pays for importing it
