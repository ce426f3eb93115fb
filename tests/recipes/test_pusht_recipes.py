"""The training recipes on benchmark=pusht (issue 48): the shipped inverse-dynamics model is pinned and never
saw an evaluation episode (what it scores, between its chance and its ceiling, is tested with the family's
controllability runs in tests/benchmarks/test_pusht.py); the world-model recipe trains on Push-T's
continuous actions and model=learned serves the checkpoint."""

from __future__ import annotations

import json

import pytest

from tests.conftest import compose
from wfeval.pipeline import build
from wfeval.pipeline.runner import run_from_config
from wfeval.recipes.idm import files
from wfeval.recipes.idm.provider import applies_to_benchmark

pytest.importorskip("gym_pusht")
pytest.importorskip("torch")

SMALL = ["benchmark=pusht", "benchmark.num_trajectories=2", "benchmark.windows_per_trajectory=2"]


def test_the_shipped_pusht_idm_reads_target_positions_and_never_saw_an_evaluation_episode():
    _, meta = files.read_sidecar(files.SHIPPED_DIR / "pusht", files.SHIPPED["pusht"])
    assert meta["net"] == {"n_out": 2, "kind": "continuous", "channels": 32, "patch": 8, "coords": True}
    assert meta["heldout"]["metric"] == "r2" and meta["heldout"]["value"] > 0.95, meta["heldout"]
    assert meta["action_space"]["shape"] == [2] and meta["action_space"]["high"] == [512.0]
    bench = build.build_benchmark(compose(["benchmark=pusht"]))
    assert meta["applies_to"] == applies_to_benchmark(bench)
    evaluation = set()
    for split in ("test", "val"):
        other = build.build_benchmark(compose(["benchmark=pusht", f"benchmark.split={split}"]))
        evaluation |= {str(other.trajectory_seed(i)) for i in range(other.num_trajectories)}
    assert meta["data"]["evaluation_seeds_excluded"] > 0 and not evaluation & set(meta["data"]["sources"])


def test_the_world_model_recipe_trains_on_pusht_and_model_learned_serves_it(tmp_path):
    import torch

    from wfeval.cli.train import run

    bench = build.build_benchmark(compose(SMALL))
    cfg = {"data": {"episodes": 4, "steps": 4, "seed": 0}, "net": {"channels": 8, "patch": 8, "blocks": 1},
           "train": {"steps": 3, "batch_size": 4, "unroll": 2, "log_every": 3, "seed": 0}, "device": "cpu",
           "threads": 1, "out": str(tmp_path / "ckpt")}
    threads = torch.get_num_threads()
    try:
        meta = run(cfg, bench, log=lambda line: None)
    finally:
        torch.set_num_threads(threads)
    assert meta["net"]["action_kind"] == "continuous" and meta["net"]["n_actions"] == 2
    assert meta["net"]["action_low"] == [0.0, 0.0] and meta["net"]["action_high"] == [512.0, 512.0]
    assert meta["action_space"] == bench.spec.action_space.to_dict() and meta["data"]["family"] == "pusht"
    assert meta["net"]["height"] == meta["net"]["width"] == 96
    cfg = compose([*SMALL, "model=learned", f"model.checkpoint={tmp_path / 'ckpt'}", "metric=[psnr]",
                   f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false"])
    agg = run_from_config(cfg, output_dir=tmp_path / "run").results["pusht.psnr"]
    assert agg.valid and agg.n_valid == 4 and agg.diagnostics["value"] < 40.0, agg.diagnostics
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["model"]["fingerprint"]["net"]["action_kind"] == "continuous"
