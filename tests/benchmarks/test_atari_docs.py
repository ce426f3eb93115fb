"""docs/games.md runs as written: the quick oracle/static check and the precomputed-videos flow."""

from __future__ import annotations

import json

import pytest

from tests.benchmarks._doc_runner import run_doc

pytest.importorskip("ale_py")


def _values(run) -> dict:
    results = json.loads((run / "results.json").read_text())["results"]
    return {k.split(".", 1)[1]: v["diagnostics"].get("value") for k, v in results.items()}


def test_games_page(tmp_path, monkeypatch):
    oracle, static, precomputed = run_doc("games.md", tmp_path, monkeypatch)
    assert _values(oracle) == {"psnr": 100.0, "ssim": 1.0}
    assert _values(static)["psnr"] < 40
    mine = _values(precomputed)
    assert mine["generated_rate"] == 1.0
    assert mine["psnr"] == pytest.approx(_values(static)["psnr"]) and mine["ssim"] == pytest.approx(_values(static)["ssim"])
    assert len(list((tmp_path / "my_videos").glob("atari_pong-test-000[01]-0[0-3].npy"))) == 8
