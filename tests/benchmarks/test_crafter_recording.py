"""Crafter recording: identical across processes (crafter alone is not), cached by content key,
the oracle exact and static clearly worse, through the CLI as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import ROOT, cli_env, compose, run_cli
from wfeval.pipeline import build
from wfeval.results import dataset_hash
from wfeval.storage.artifacts import ArtifactStore, read_array
from wfeval.storage.seal import unsealed_bytes

pytest.importorskip("crafter")

# 60 warm-up steps: two processes running crafter 1.8.3 as is usually drift apart before then
SMALL = ["benchmark=crafter", "benchmark.num_trajectories=1", "benchmark.windows_per_trajectory=2",
         "benchmark.warmup_steps=60", "benchmark.horizon=8"]
PROBE = """
import sys
sys.path[:0] = [{root!r}, {tests!r}]
from conftest import compose
from wfeval.storage.artifacts import ArtifactStore
from wfeval.pipeline import build
from wfeval.results import dataset_hash
cfg = compose({overrides!r})
bench = build.build_benchmark(cfg)
requests = bench.requests(store=ArtifactStore(sys.argv[1]), task=build.build_task(cfg),
                          protocol=build.build_protocol(cfg))
print("HASH", dataset_hash(requests))
"""


def _requests(store_dir, *overrides):
    cfg = compose([*SMALL, *overrides])
    bench = build.build_benchmark(cfg)
    return bench, bench.requests(store=ArtifactStore(store_dir), task=build.build_task(cfg),
                                 protocol=build.build_protocol(cfg))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    store = tmp_path_factory.mktemp("crafter") / "store"
    return store, *_requests(store)


@pytest.mark.subprocess  # another process's recording
def test_a_recording_is_byte_identical_in_another_process(recorded, tmp_path):
    store, _, requests = recorded
    code = PROBE.format(root=str(ROOT), tests=str(ROOT / "tests"), overrides=SMALL)
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "other")], env=cli_env(), cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"HASH {dataset_hash(requests)}" in proc.stdout
    [mine] = (store / "recordings" / "crafter").rglob("*.json")
    [theirs] = (tmp_path / "other" / "recordings" / "crafter").rglob("*.json")
    assert unsealed_bytes(mine.read_bytes()) == unsealed_bytes(theirs.read_bytes())  # seals: per store


def test_samples_oracle_exact_and_static_worse(recorded):
    from wfeval.benchmarks.recorded.baselines import SimulatorOracle, SimulatorRandomActions
    from wfeval.functional.reference import psnr

    _, _, requests = recorded
    first = requests[0]
    context, reference = read_array(first.inputs["context"]), read_array(first.references["video"])
    assert context.shape == (4, 64, 64, 3) and reference.shape == (9, 64, 64, 3)
    np.testing.assert_array_equal(reference[0], context[-1])
    assert len(first.controls["action_names"]) == 17 and len(first.controls["actions"]) == 8
    oracle, rand = SimulatorOracle(), SimulatorRandomActions()
    for request in requests:
        reference = read_array(request.references["video"])
        np.testing.assert_array_equal(oracle.generate([request])[0]["generated_video"], reference)
        static = np.repeat(reference[:1], len(reference), axis=0)
        per_frame = psnr(static[1:], reference[1:], data_range=255, per_frame=True)
        assert np.minimum(per_frame, 100).mean() < 60  # identical frames are inf, capped as metric.psnr does
        assert rand.generate([request])[0]["generated_video"].shape == reference.shape


def test_a_second_run_reads_the_cache_and_builds_no_world(recorded, monkeypatch):
    from wfeval.benchmarks.crafter import simulator

    store, _, first = recorded
    monkeypatch.setattr(simulator.CrafterSimulator, "reset", lambda *a: pytest.fail("re-simulated"))
    bench, second = _requests(store)
    assert [r.to_dict() for r in second] == [r.to_dict() for r in first] and bench.stats["cached"] == 1


def test_cli_oracle_exact_static_clearly_worse(tmp_path):
    sweep = tmp_path / "sweep"
    proc = run_cli(["-m", "benchmark=crafter", "model=game_oracle,static", "metric=[psnr,ssim]",
                    "benchmark.num_trajectories=1", "benchmark.windows_per_trajectory=2",
                    f"run.store_dir={tmp_path / 'store'}", "run.progress=off", f"hydra.sweep.dir={sweep}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    value = {}
    for name in ("0_game_oracle", "1_static"):
        results = json.loads((sweep / name / "results.json").read_text())["results"]
        value[name] = {k.split(".")[1]: v["diagnostics"]["value"] for k, v in results.items()}
    assert value["0_game_oracle"] == {"psnr": 100.0, "ssim": 1.0}
    assert value["1_static"]["psnr"] < 35 and value["1_static"]["ssim"] < 0.9


def test_the_pinned_dataset_hash_of_the_crafter_yaml(tmp_path):  # records 8 Crafter worlds (~15 s)
    cfg = compose(["benchmark=crafter"])
    bench = build.build_benchmark(cfg)
    requests = bench.requests(store=ArtifactStore(tmp_path), task=build.build_task(cfg),
                              protocol=build.build_protocol(cfg))
    assert dataset_hash(requests) == cfg.benchmark.evidence.dataset_hash


def test_a_restore_from_the_cache_continues_exactly_as_a_replay_from_the_reset():
    """A game restored one action longer each time (a game oracle's way) takes the longest cached prefix;
    every step after it equals the same actions replayed on a fresh world with the cache empty."""
    from wfeval.benchmarks.crafter import simulator

    actions = [int(a) for a in np.random.default_rng(5).integers(0, 17, 24)]
    cached, fresh = simulator.make({}), simulator.make({})
    simulator._RESTORE_CACHE.clear()
    from_cache = []
    for k in range(len(actions)):
        cached.restore({"seed": 2, "actions": actions[:k]})
        from_cache.append(cached.step(actions[k]))
    assert len(simulator._RESTORE_CACHE) == len(actions) - 1  # every non-empty prefix kept (32 at most)
    assert cached.snapshot() == {"seed": 2, "actions": actions}
    simulator._RESTORE_CACHE.clear()
    fresh.reset(2)
    for k, action in enumerate(actions):
        step = fresh.step(action)
        assert np.array_equal(step.frame, from_cache[k].frame), k
        assert (step.reward, step.terminated, step.truncated, step.info) == (
            from_cache[k].reward, from_cache[k].terminated, from_cache[k].truncated, from_cache[k].info), k
